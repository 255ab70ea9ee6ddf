// Stage 6 of a training plan: the recommendation in sentences with numbers, warnings about
// the prices it rests on, the budget view and the assumptions echo.

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <string_view>

#include "pricing/calendar.hpp"
#include "pricing/estimate/training.hpp"
#include "pricing/field_checker.hpp"
#include "pricing/money.hpp"
#include "pricing/plan/budget.hpp"
#include "pricing/plan/forecast.hpp"
#include "pricing/plan/price_trust.hpp"
#include "pricing/plan/training_stages.hpp"

namespace gpucost::pricing::plan::training_stages {
namespace {

// Estimator echoes that describe one cluster's hardware or layout: the plan's options run on
// many, so these are never echoed as workload-level estimator.* figures from one stand-in.
const std::set<std::string, std::less<>>& HardwareSpecificEcho() {
    static const std::set<std::string, std::less<>> kNames = {"peak_tflops",
                                                              "memory_gb_per_s",
                                                              "accelerators_per_node",
                                                              "scale_up_gb_per_s",
                                                              "scale_out_gbit_per_s_per_node",
                                                              "gemm_max_efficiency",
                                                              "activation_bytes_per_layer_gb",
                                                              "pipeline_bubble_fraction",
                                                              "attention_efficiency",
                                                              "scale_up_domain",
                                                              "scale_up_hop_latency_s",
                                                              "nvlink_bridge_domain",
                                                              "nvlink_bridge_gb_per_s"};
    return kNames;
}

// Of those, the ones that follow from the accelerator (and the offering's node), echoed as
// hardware.<accelerator>.* from an estimate of a shown option on it. The catalog's peaks,
// memory and links are echoed from the catalog itself; the layout-dependent ones
// (activations, pipeline bubble) belong to each option's layout.
constexpr std::array<std::string_view, 6> kDeviceEstimatorEcho = {
    "gemm_max_efficiency",    "attention_efficiency", "scale_up_domain",
    "scale_up_hop_latency_s", "nvlink_bridge_domain", "nvlink_bridge_gb_per_s"};

// The cluster an option was estimated on, as the shape stage described it.
std::optional<estimate::ClusterSpec> ClusterOf(const TrainingPlanOption& o,
                                               const Catalog& catalog) {
    auto a = catalog.FindAccelerator(o.offering->accelerator);
    if (!a.ok()) {
        return std::nullopt;
    }
    estimate::ClusterSpec cluster;
    cluster.accelerator = a.value();
    cluster.accelerators_per_node = o.offering->accelerator_count;
    cluster.accelerator_count = o.total_accelerators;
    cluster.scale_out_gbit_per_s_per_node = o.scale_out_gbit_per_s;
    return cluster;
}

// A spot recommendation whose expected finish leaves less than this share of the deadline as
// slack gets a sentence on the risk of missing it; judgement (about one day in a week).
constexpr double kThinDeadlineSlackFraction = 0.15;

std::string Hours(double hours) {
    return Fixed(hours, hours < 10 ? 2 : 1) + " h";
}

std::string AcceleratorName(const Catalog& catalog, const std::string& id) {
    auto a = catalog.FindAccelerator(id);
    return a.ok() ? a.value().name : id;
}

std::string Describe(const TrainingPlanOption& o, const Catalog& catalog) {
    const Offering& f = *o.offering;
    return std::to_string(o.nodes) + " x " + f.instance_type + " (" +
           std::to_string(o.total_accelerators) + " x " + AcceleratorName(catalog, f.accelerator) +
           ", " + std::string(PriceTypeName(f.price_type)) + ", " + f.provider + " " + f.region +
           ")";
}

bool StalePrice(const TrainingPlanOption& o, const PricingSettings& s) {
    return o.price_age_days && static_cast<double>(*o.price_age_days) > s.max_price_age_days;
}

// Warnings about one shown option's price and hosts, filed under `field` (the recommendation
// or the fastest option) so a client reads each against the option it concerns.
void AddWarnings(const TrainingPlanOption& o, const PricingSettings& s, const std::string& field,
                 std::vector<FieldError>& warnings) {
    const Offering& f = *o.offering;
    std::vector<std::string> out = PriceWarnings(f, o.price_age_days, s.max_price_age_days);
    if (f.price_type == PriceType::kSpot && !f.spot_interruption) {
        out.push_back(f.id + ": no Spot Advisor interruption data; planned at the worst bucket (" +
                      Fixed(kDefaultUnknownSpotPercentPerMonth, 0) + "% a month)");
    }
    if (o.independent_hosts && o.nodes > 1) {
        out.push_back(f.id + ": " + std::to_string(o.nodes) +
                      " independent hosts joined by the public internet (planned at " +
                      Fixed(kIndependentHostsGbitPerS, 0) + " Gbit/s)");
    }
    for (std::string& text : out) {
        warnings.push_back({field, std::move(text)});
    }
}

std::string ConstraintsText(const TrainingPlanConstraints& c) {
    std::string out;
    if (c.deadline_hours) {
        out += "deadline " + Hours(*c.deadline_hours);
    }
    if (c.budget_usd) {
        out += (out.empty() ? "" : ", ") + std::string("budget ") + UsdText(*c.budget_usd);
    }
    return out.empty() ? "" : " (" + out + ")";
}

// An option's expected cost in words: the total the plan compares, and the storage and egress
// in it when the request gave `data`.
std::string CostText(const TrainingPlanOption& o) {
    if (!o.data_cost_usd) {
        return UsdText(o.expected_cost_usd);
    }
    return UsdText(o.ExpectedTotalUsd()) + " with " + UsdText(*o.data_cost_usd) +
           " of storage and egress";
}

// The cost's range in words. A commitment, or a capacity block whose p10 and p90 runs fit the
// same block, bills the same whatever the run's length; an hourly price with no spread asked
// for has a single figure; otherwise p10-p90.
std::string SpreadText(const TrainingPlanOption& r) {
    if (r.cost_usd_p10 == r.cost_usd_p90) {
        return IsCommitted(r.offering->price_type) ? "a fixed cost, whatever the run's length."
                                                   : "no spread at the uncertainty given.";
    }
    return std::string(r.data_cost_usd ? "compute " : "") + "p10-p90 " + UsdText(r.cost_usd_p10) +
           "-" + UsdText(r.cost_usd_p90) + ".";
}

bool SameOption(const TrainingPlanOption& a, const TrainingPlanOption& b) {
    return a.offering == b.offering && a.nodes == b.nodes;
}

// Why a price is not trusted, in words (TrustedPrice's conditions that fail).
std::string UntrustedText(const TrainingPlanOption& o, const PricingSettings& s) {
    std::string out;
    auto add = [&out](const std::string& text) { out += (out.empty() ? "" : ", ") + text; };
    if (!o.offering->price.verified) add("unverified");
    if (o.offering->price.as_of_estimated) add("dated by estimate");
    if (StalePrice(o, s)) add(std::to_string(*o.price_age_days) + " days old");
    return out;
}

std::string StaleText(const TrainingPlanOption& o) {
    return StalePriceText(*o.offering, o.price_age_days);
}

std::string Days(double hours) {
    const double days = hours / 24.0;
    std::string out = Fixed(days, days < 10 ? 1 : 0) + " days";
    if (days >= 365) out += " (" + Fixed(days / 365.0, 1) + " years)";
    return out;
}

// Nothing runs within the wall-clock ceiling: say so, and what each provider's fastest option
// (its largest cluster for this run) would take.
std::string BeyondCeilingText(const TrainingPlanRequest& request, const TrainingPlan& plan,
                              const Catalog& catalog) {
    const double days = plan.max_wall_clock_days.value_or(kDefaultMaxWallClockDays);
    std::string out =
        "No option finishes within " + Fixed(days, 0) + " days (max_wall_clock_days" +
        (request.constraints.max_wall_clock_days ? ")"
                                                 : ", the default when no deadline is given)") +
        ": nobody runs one job for longer on one rented cluster. The fastest each "
        "provider sells for this run:";
    for (std::size_t i = 0; i < plan.beyond_max_wall_clock.size(); ++i) {
        const TrainingPlanOption& o = plan.beyond_max_wall_clock[i];
        out += std::string(i > 0 ? ";" : "") + " " + Describe(o, catalog) + " would take " +
               Days(o.expected_wall_clock_hours) + " for " + UsdText(o.ExpectedTotalUsd());
    }
    return out +
           ". Each is as large as one customer can rent of that offering (capacity.csv); "
           "a bigger cluster needs a reservation or several providers at once, which this "
           "plan does not combine. Fewer tokens, a smaller model, or a larger "
           "max_wall_clock_days would list options.";
}

namespace {

// Why nothing is recommended, and what to change.
std::string NothingRecommendedText(const TrainingPlanRequest& request, const TrainingPlan& plan,
                                   const Catalog& catalog) {
    if (plan.binding_constraints.empty() && !plan.beyond_max_wall_clock.empty()) {
        return BeyondCeilingText(request, plan, catalog);
    }
    if (plan.binding_constraints.empty()) {
        return "No offering can run this workload within the constraints; see skipped "
               "and skipped_examples for why each was left out.";
    }
    std::string out = "No option meets every constraint. ";
    for (std::size_t i = 0; i < plan.binding_constraints.size(); ++i) {
        out += (i > 0 ? "; " : "") + plan.binding_constraints[i].message;
    }
    const bool one = plan.binding_constraints.size() == 1;
    return out + (one ? ". Relax it" : ". Relax the constraint with the smallest shortfall") +
           ", or allow more providers, price types or accelerators.";
}

// The recommendation in one sentence, and why the cheapest was passed over or kept.
std::string HeadlineText(const TrainingPlanRequest& request, const TrainingPlan& plan,
                         const Catalog& catalog, const PricingSettings& s) {
    const TrainingPlanOption& r = *plan.recommendation;
    // The cheapest of all, passed over for its stale price (`cheapest` is then the cheapest
    // that is not stale) or for an untrusted one.
    const bool stale_passed_over = plan.cheaper_stale.has_value();
    const TrainingPlanOption* passed_over = stale_passed_over ? &*plan.cheaper_stale
                                            : plan.cheapest && !SameOption(r, *plan.cheapest)
                                                ? &*plan.cheapest
                                                : nullptr;
    const bool cheapest_passed_over = passed_over != nullptr;
    std::string out =
        "Recommended: " + Describe(r, catalog) + " for an expected " +
        Hours(r.expected_wall_clock_hours) + " and " + CostText(r) + ", " +
        (plan.feasible_count == 1 ? std::string("the only option that meets every constraint")
         : cheapest_passed_over
             ? "the lowest expected cost with " +
                   std::string(stale_passed_over ? "a price that is not stale"
                                                 : "a trusted price") +
                   " among " + std::to_string(plan.feasible_count) +
                   " options that meet every constraint"
             : "the lowest expected cost of " + std::to_string(plan.feasible_count) +
                   " options that meet every constraint") +
        ConstraintsText(request.constraints) + "; " + SpreadText(r);
    if (stale_passed_over) {
        const TrainingPlanOption& c = *passed_over;
        out += " The cheapest, " + Describe(c, catalog) + " at " + CostText(c) + ", has a " +
               StaleText(c) + " (include_stale: true lets it rank first).";
    } else if (cheapest_passed_over) {
        const TrainingPlanOption& c = *passed_over;
        out += " The cheapest, " + Describe(c, catalog) + " at " + CostText(c) + " (" +
               Fixed(100.0 * (1.0 - c.ExpectedTotalUsd() / r.ExpectedTotalUsd()), 1) +
               "% less), has a price that is " + UntrustedText(c, s) +
               "; a verified, dated price within " +
               Fixed(100.0 * kTrustedPriceToleranceFraction, 0) +
               "% of it ranks first (trusted_price_tolerance_fraction).";
    } else if (plan.feasible_count > 1 && !TrustedPrice(r, s.max_price_age_days)) {
        out += " No option with a verified, dated price comes within " +
               Fixed(100.0 * kTrustedPriceToleranceFraction, 0) +
               "% of it (trusted_price_tolerance_fraction), so it stays first.";
    }
    if (r.price_state == PriceState::kStale && !request.include_stale) {
        out += " No option with a price that is not stale meets every constraint; it has a " +
               StaleText(r) + ": check the current price.";
    }
    return out;
}

// The cheapest option from another provider and the fastest, beside the recommendation.
std::string AlternativesText(const TrainingPlan& plan, const Catalog& catalog) {
    const TrainingPlanOption& r = *plan.recommendation;
    std::string out;
    for (const auto& other : plan.best_by_provider) {
        if (other.offering->provider != r.offering->provider) {
            out += " Cheapest from another provider: " + Describe(other, catalog) + ", " +
                   Hours(other.expected_wall_clock_hours) + " for " + CostText(other) + " (" +
                   SignedPercentText(other.ExpectedTotalUsd() / r.ExpectedTotalUsd() - 1.0) + ")";
            // Its provider may have no current price: the comparison says so (unless it is the
            // cheaper stale option the headline already named).
            const bool named = plan.cheaper_stale &&
                               plan.cheaper_stale->offering == other.offering &&
                               plan.cheaper_stale->nodes == other.nodes;
            out += other.price_state == PriceState::kStale && !named
                       ? "; it has a " + StaleText(other) + "."
                       : ".";
            break;
        }
    }
    if (plan.fastest && (plan.fastest->offering != r.offering || plan.fastest->nodes != r.nodes)) {
        const TrainingPlanOption& f = *plan.fastest;
        out += " Fastest: " + Describe(f, catalog) + ", " + Hours(f.expected_wall_clock_hours) +
               " for " + CostText(f) + ".";
    }
    return out;
}

// Spot capacity: how often it is interrupted, and what that adds to the expected time.
std::string SpotRiskText(const TrainingPlanOption& r) {
    std::string out;
    const Offering& o = *r.offering;
    if (r.interruptions_per_hour) {
        // As a mean interval: a rate printed to fixed decimals read 0.0000 for a rare one.
        out += " It runs on spot capacity: about one interruption every " +
               Hours(1.0 / *r.interruptions_per_hour) + " across the cluster" +
               (o.spot_interruption ? " (Spot Advisor bucket " + o.spot_interruption->label + ")"
                                    : " (no Spot Advisor data: the worst bucket assumed)") +
               "; interruptions add " +
               Fixed(100.0 * (r.expected_wall_clock_hours / r.wall_clock_hours - 1.0), 1) +
               "% expected time for checkpoints, lost work and restarts.";
    }
    return out;
}

// The risk against a deadline and a budget: the probabilities, the run-time spread they count,
// and a thin margin said out loud. deadline_probability counts the estimate's own error (the
// plan's efficiency_spread_fraction, as p90/p50 - 1 of a log-normal run time around the
// expected hours, the same log-normal that widens cost_usd_p10/p90) and, on spot, the
// interruption model; budget_probability the cost's log-normal (fixed for commitments).
std::string RunTimeRiskText(const TrainingPlanRequest& request, const TrainingPlanOption& r,
                            const PricingSettings& s) {
    std::string out;
    const bool spot = r.interruptions_per_hour.has_value();
    if (request.constraints.deadline_hours && r.deadline_probability) {
        const double deadline = *request.constraints.deadline_hours;
        const double slack = deadline - r.expected_wall_clock_hours;
        // What the probability counts: the run-time spread, the interruptions, or both.
        std::string counted = s.efficiency_spread > 0 ? "the run-time spread" : "";
        if (spot) {
            counted += (counted.empty() ? "" : " and ") +
                       std::string("the interruption model of POST /v1/plans/spot");
        }
        out += " It finishes by the deadline with probability " +
               Fixed(100.0 * *r.deadline_probability, 1) + "% (deadline_confidence " +
               Fixed(100.0 * s.deadline_confidence, 1) + "%" +
               (counted.empty() ? "" : "; " + counted) + ")";
        out += slack < kThinDeadlineSlackFraction * deadline
                   ? ", " + Hours(slack) + " before it in expectation."
                   : ".";
        const std::string late =
            RunTimeLateText(r.expected_wall_clock_hours, deadline, s.efficiency_spread, "runs");
        if (!late.empty()) {
            out += " Its run time is an estimate (efficiency_spread_fraction " +
                   Fixed(s.efficiency_spread, 2) + ", log-normal around the expected " +
                   Hours(r.expected_wall_clock_hours) + "): " + late +
                   (spot ? ", counted in that probability with the interruptions."
                         : ", counted in that probability.");
        }
    }
    if (request.constraints.budget_usd && r.budget_probability &&
        !IsCommitted(r.offering->price_type)) {
        out += " It stays within the budget with probability " +
               Fixed(100.0 * *r.budget_probability, 1) + "% (budget_confidence " +
               Fixed(100.0 * s.budget_confidence, 1) + "%; compute p90 " + UsdText(r.cost_usd_p90) +
               (spot ? ", judged with its spot price and efficiency spreads)."
                     : ", judged with its price and efficiency spreads).");
    }
    return out;
}

// Committed capacity and capacity blocks: the hours paid whether used or not.
std::string CommitmentText(const TrainingPlanOption& r, const PricingSettings& s) {
    if (!r.unused_committed_hours) {
        return "";
    }
    const Offering& o = *r.offering;
    std::string out;
    if (o.price_type == PriceType::kCapacityBlock) {
        out += " A capacity block of " + Hours(r.billed_hours) +
               " per instance is paid in full when reserved; " + Hours(*r.unused_committed_hours) +
               " of it go unused (" + Hours(kCapacityBlockEndLeadHours) +
               " of them while AWS terminates the instances before the block ends).";
        // A block cannot be cancelled: say when the p90 run would outlast it.
        const double p90_hours = r.expected_wall_clock_hours * (1.0 + s.efficiency_spread);
        if (p90_hours + kCapacityBlockEndLeadHours > r.billed_hours) {
            out += " At the p90 run time (" + Hours(p90_hours) +
                   ") the run would outlast the block: extend it while AWS has capacity, "
                   "or reserve a longer block (priced in cost_usd_p90).";
        }
    } else {
        out += " The commitment bills " + Hours(r.billed_hours) +
               " per instance whether used or not; this job uses " +
               Hours(r.expected_wall_clock_hours) + " and leaves " +
               Hours(*r.unused_committed_hours) + " to other work.";
    }
    return out;
}

// Owned capacity covering the recommendation: its hours are paid already, so the plan ranks
// by the marginal bill; the fully loaded cost says what the run uses of the commitment.
std::string OwnedText(const TrainingPlanOption& r) {
    if (!r.owned) {
        return "";
    }
    const double run_instance_hours = r.expected_wall_clock_hours * r.nodes;
    std::string out = " Owned capacity (the price book's owned_capacity) covers " +
                      Hours(r.owned->instance_hours) + " of its " + Hours(run_instance_hours) +
                      " instance-hours at no marginal cost: it is paid whether used or not.";
    out += r.owned->instance_hours < run_instance_hours
               ? " The rest is paid at the effective price: " + UsdText(r.expected_cost_usd) +
                     " marginal"
               : " Marginal cost: " + UsdText(r.expected_cost_usd);
    out += ", ranked as such (" + UsdText(r.owned->without_owned_cost_usd) +
           " without it); fully loaded with the owned hours at the commitment's rate, " +
           UsdText(r.FullyLoadedCostUsd()) + ".";
    return out;
}

}  // namespace

std::string Reasoning(const TrainingPlanRequest& request, const TrainingPlan& plan,
                      const Catalog& catalog, const PricingSettings& s) {
    if (!plan.recommendation) {
        return NothingRecommendedText(request, plan, catalog);
    }
    const TrainingPlanOption& r = *plan.recommendation;
    std::string out = HeadlineText(request, plan, catalog, s) + AlternativesText(plan, catalog) +
                      SpotRiskText(r) + RunTimeRiskText(request, r, s) + CommitmentText(r, s) +
                      OwnedText(r);
    const Offering& o = *r.offering;
    if (StalePrice(r, s) || o.price.as_of_estimated || !o.price.verified) {
        out += " Its price is dated " + o.price.as_of +
               (o.price.as_of_estimated ? " (estimated)" : "") +
               (r.price_age_days ? ", " + std::to_string(*r.price_age_days) + " days ago" : "") +
               (o.price.verified ? "" : ", unverified") +
               ": confirm it with the provider before committing budget.";
    }
    for (const auto& [reason, count] : plan.skipped) {
        if (reason == "over_max_wall_clock" && count > 0 && plan.max_wall_clock_days) {
            out += " " + std::to_string(count) + " option" + (count == 1 ? "" : "s") +
                   " expected to run longer than " + Fixed(*plan.max_wall_clock_days, 0) +
                   " days (max_wall_clock_days) " + (count == 1 ? "was" : "were") + " left out.";
        }
    }
    return out;
}

namespace {

// Money as answers state it (pricing/money.hpp): compute, storage and egress to the cent, the
// total their sum, and the months the total split by largest remainder (MonthsInCents), so that
// a budget tool adding either the parts or the months gets the total to the cent.
void StateBudgetInCents(BudgetView& view, const std::map<std::string, double>& monthly_usd) {
    const long long compute = ToCents(view.compute_usd);
    const long long storage = view.storage_usd ? ToCents(*view.storage_usd) : 0;
    const long long egress = view.egress_usd ? ToCents(*view.egress_usd) : 0;
    const long long total = compute + storage + egress;
    view.compute_usd = FromCents(compute);
    if (view.storage_usd) view.storage_usd = FromCents(storage);
    if (view.egress_usd) view.egress_usd = FromCents(egress);
    view.total_usd = FromCents(total);
    view.monthly = MonthsInCents(monthly_usd, total);
}

}  // namespace

std::optional<BudgetView> Budget(const TrainingPlanRequest& request, const TrainingPlanOption& r,
                                 const PlanReference& reference) {
    const std::optional<BudgetStart> begins = StartOfBudget(request.start_date, request.today);
    if (!begins) {
        return std::nullopt;
    }
    const long long start = begins->day;
    BudgetView view;
    view.start_date_source = begins->source;
    view.start_date = IsoDateFromDays(start);
    view.compute_usd = r.expected_cost_usd;
    if (r.owned) view.owned_usd = FromCents(ToCents(r.owned->sunk_usd));
    std::map<std::string, double> monthly;
    for (const ComputeMonth& m : ComputeByMonth(request.owned_capacity, r, start)) {
        monthly[m.month] += m.marginal_usd;
    }
    const TrainingDataSizes& data = request.data;
    if (data.stored_gb || data.egress_gb) {
        if (const DataPrice* price = reference.DataPriceOf(r.offering->provider)) {
            view.data_price = *price;
            const auto run = SplitHoursByMonth(start, r.expected_wall_clock_hours);
            const DataCosts costs = DataCostsFor(data, *price, r.expected_wall_clock_hours);
            if (costs.storage_usd) {
                // Kept for the run, billed as GB-months.
                view.storage_usd = costs.storage_usd;
                for (const MonthShare& m : run) {
                    monthly[m.month] += *view.storage_usd * m.hours / r.expected_wall_clock_hours;
                }
            }
            if (costs.egress_usd && !run.empty()) {
                // Sent out once, when the run ends.
                view.egress_usd = costs.egress_usd;
                monthly[run.back().month] += *view.egress_usd;
            }
        }
    }
    StateBudgetInCents(view, monthly);
    return view;
}

// The options shown (recommendation first), one per accelerator: the estimator's
// device-dependent figures are echoed from an estimate of that option's cluster.
std::map<std::string, const TrainingPlanOption*> ShownByAccelerator(const TrainingPlan& plan) {
    std::map<std::string, const TrainingPlanOption*> shown;
    auto note = [&](const TrainingPlanOption& o) { shown.emplace(o.offering->accelerator, &o); };
    for (const auto* one : {&plan.recommendation, &plan.fastest}) {
        if (*one) note(**one);
    }
    for (const auto* list : {&plan.options, &plan.pareto_front, &plan.best_by_provider}) {
        for (const auto& o : *list) note(o);
    }
    return shown;
}

// The hardware behind the options shown, each accelerator's figures as the estimator used
// them; and the workload-level estimator constants from the recommendation's own estimate
// (else the fastest's or another shown option's, else the first cluster that ran).
void EchoShownHardware(const TrainingPlanRequest& request, const Catalog& catalog,
                       const ShapeEstimates& estimates, TrainingPlan& plan) {
    Assumptions& echo = plan.assumptions;
    const auto shown = ShownByAccelerator(plan);
    const std::string precision_name(PrecisionName(request.workload.precision));
    std::optional<estimate::TrainingEstimate> workload_echo;
    for (const auto& [id, option] : shown) {
        auto a = catalog.FindAccelerator(id);
        if (!a.ok()) {
            continue;
        }
        const Accelerator& acc = a.value();
        const std::string source = "catalog: " + acc.spec_source;
        if (auto peak = acc.PeakTflops(request.workload.precision)) {
            echo.push_back({"hardware." + id + ".peak_tflops", *peak, "TFLOP/s",
                            "dense peak at " + precision_name + " of " + acc.name, source});
        }
        echo.push_back({"hardware." + id + ".memory_gb", acc.memory_gb, "GB",
                        "memory per accelerator of " + acc.name, source});
        echo.push_back({"hardware." + id + ".memory_gb_per_s", acc.memory_gb_per_s, "GB/s",
                        "memory bandwidth of " + acc.name, source});
        if (acc.scale_up_gb_per_s) {
            echo.push_back({"hardware." + id + ".scale_up_gb_per_s", *acc.scale_up_gb_per_s, "GB/s",
                            "scale-up bandwidth per chip (bidirectional) of " + acc.name, source});
        }
        const auto cluster = ClusterOf(*option, catalog);
        if (!cluster) {
            continue;
        }
        ++plan.estimates;
        auto e = estimate::EstimateTraining(request.workload, *cluster);
        if (!e.ok()) {
            continue;
        }
        for (const Assumption& used : e.value().assumptions) {
            const bool device_figure =
                std::find(kDeviceEstimatorEcho.begin(), kDeviceEstimatorEcho.end(),
                          used.name.view()) != kDeviceEstimatorEcho.end();
            // A link the catalog does not publish is the estimator's family default.
            const bool default_link =
                !acc.scale_up_gb_per_s && used.name.view() == "scale_up_gb_per_s";
            if (!device_figure && !default_link) {
                continue;
            }
            Assumption copy = used;
            copy.name = "hardware." + id + "." + used.name;
            copy.description =
                used.description.str() + " (" + option->offering->instance_type + ")";
            echo.push_back(std::move(copy));
        }
        // ShownByAccelerator takes the recommendation itself for its accelerator.
        const bool is_recommended = plan.recommendation && option == &*plan.recommendation;
        if (is_recommended || !workload_echo) {
            workload_echo = std::move(e.value());
        }
    }
    if (!workload_echo && estimates.first_cluster) {
        ++plan.estimates;
        auto e = estimate::EstimateTraining(request.workload, *estimates.first_cluster);
        if (e.ok()) workload_echo = std::move(e.value());
    }
    if (!workload_echo) {
        return;
    }
    for (const auto& a : workload_echo->assumptions) {
        if (HardwareSpecificEcho().count(a.name.view()) != 0) {
            continue;
        }
        Assumption copy = a;
        copy.name = "estimator." + a.name;
        echo.push_back(std::move(copy));
    }
}

void EchoAssumptions(const TrainingPlanRequest& request, const Catalog& catalog,
                     const PricingSettings& s, const ShapeEstimates& estimates,
                     TrainingPlan& plan) {
    const TrainingPlanConstraints& c = request.constraints;
    Assumptions& echo = plan.assumptions;
    echo.push_back(Echo("efficiency_spread_fraction", s.efficiency_spread, "fraction",
                        "p90/p50 - 1 of run time from efficiency uncertainty (log-normal, "
                        "independent of interruptions); counted in deadline_probability, "
                        "budget_probability and cost_usd_p10/p90",
                        request.efficiency_spread_fraction.has_value(),
                        EfficiencySpreadDefaultSource(s.moe_efficiency_spread)));
    echo.push_back(Echo("price_spread_fraction", s.price_spread, "fraction",
                        "p90/p50 - 1 of on-demand prices (log-normal); committed prices are "
                        "fixed once bought",
                        request.price_spread_fraction.has_value(), "default: judgement"));
    echo.push_back(Echo("spot_price_spread_fraction", s.spot_price_spread, "fraction",
                        "p90/p50 - 1 of spot prices (log-normal)",
                        request.spot_price_spread_fraction.has_value(),
                        "default: judgement (spot prices move daily)"));
    echo.push_back(Echo("checkpoint_minutes", s.checkpoint_hours * 60.0, "min",
                        "checkpoint write time used for spot options",
                        request.checkpoint_minutes.has_value(), "default: judgement (spot.hpp)"));
    echo.push_back(Echo("restart_minutes", s.restart_hours * 60.0, "min",
                        "restart time after a spot interruption",
                        request.restart_minutes.has_value(), "default: judgement (spot.hpp)"));
    echo.push_back({"unknown_spot_percent_per_month", kDefaultUnknownSpotPercentPerMonth, "percent",
                    "monthly interruption share assumed for spot offerings without a Spot "
                    "Advisor bucket",
                    "default: the worst bucket (>20%), conservative"});
    if (c.deadline_hours) {
        echo.push_back(Echo("deadline_confidence", s.deadline_confidence, "probability",
                            "an option meets deadline_hours when it finishes by it with at "
                            "least this probability: its run time log-normal around the "
                            "expected hours (efficiency_spread_fraction), on spot times the "
                            "interruption model of POST /v1/plans/spot",
                            c.deadline_confidence.has_value(),
                            "default: as the spot plan's required_deadline_probability "
                            "(judgement)"));
        echo.push_back({"deadline_bound_shown_tolerance", kDeadlineBoundShownTolerance,
                        "probability",
                        "a spot option whose Chernoff lower bound on deadline_probability is "
                        "within this of 1 shows the bound (within this of the distribution's "
                        "figure)",
                        "definition: the distribution costs milliseconds per option"});
    }
    if (c.budget_usd) {
        echo.push_back(Echo("budget_confidence", s.budget_confidence, "probability",
                            "an option is within budget_usd when its total cost stays within it "
                            "with at least this probability (log-normal compute cost, p50 "
                            "expected_cost_usd, p90 cost_usd_p90; commitments and capacity "
                            "blocks, billed whole: 1 when the expected total fits)",
                            c.budget_confidence.has_value(),
                            "default: as deadline_confidence (judgement)"));
    }
    if (plan.max_wall_clock_days) {
        echo.push_back(Echo("max_wall_clock_days", *plan.max_wall_clock_days, "days",
                            "options expected to run longer are left out "
                            "(skipped.over_max_wall_clock); applied by default only without a "
                            "deadline",
                            c.max_wall_clock_days.has_value(),
                            "default: judgement (half a year: the longest published frontier "
                            "pre-training programmes, e.g. Llama 3, arXiv 2407.21783; GPU list "
                            "prices moved up to 45% within 2025)"));
    }
    echo.push_back({"trusted_price_tolerance_fraction", kTrustedPriceToleranceFraction, "fraction",
                    "an option with a verified, dated price not older than max_price_age_days "
                    "is recommended over a cheaper one without, when it costs at most this "
                    "much more",
                    "judgement: twice the default p90 spread of list prices; unconfirmed list "
                    "prices moved up to 45% within 2025"});
    echo.push_back(Echo("max_total_accelerators",
                        c.max_total_accelerators.value_or(kDefaultMaxPlanAccelerators),
                        "accelerators",
                        "largest cluster searched (offering capacity caps "
                        "further)",
                        c.max_total_accelerators.has_value(), "default: 4096"));
    echo.push_back(Echo("max_price_age_days", s.max_price_age_days, "days",
                        "a chosen price older than this draws a warning",
                        request.max_price_age_days.has_value(),
                        "default: judgement (list prices moved up to 45% within 2025)"));
    echo.push_back({"independent_hosts_gbit_per_s", kIndependentHostsGbitPerS, "Gbit/s",
                    "network between nodes that are independent hosts (marketplaces, single "
                    "on-demand machines)",
                    "judgement: Vast.ai listings advertise 100-1,000 Mbit/s"});
    echo.push_back({"capacity_block_end_lead_hours", kCapacityBlockEndLeadHours, "h",
                    "time before a capacity block ends when AWS begins terminating its instances; "
                    "a run must fit the block less this",
                    "AWS EC2 user guide 'Monitor Capacity Blocks using EventBridge' (warning 40 "
                    "min before the end, termination 10 min later)"});
    echo.push_back({"commit_1y_hours", kCommit1yHours, "h",
                    "hours a 1-year commitment bills per instance, used or not", "365 x 24"});
    echo.push_back({"commit_3y_hours", kCommit3yHours, "h",
                    "hours a 3-year commitment bills per instance, used or not", "3 x 365 x 24"});
    EchoShownHardware(request, catalog, estimates, plan);
}
// A provider's best names a stale price only where none of its options with a price that is
// not stale meets every constraint (Rank): said here, one warning per such provider. (A
// stale `cheapest` is the recommendation, whose reasoning says so.)
void AddStaleWarnings(TrainingPlan& plan) {
    for (std::size_t i = 0; i < plan.best_by_provider.size(); ++i) {
        const TrainingPlanOption& o = plan.best_by_provider[i];
        if (o.price_state != PriceState::kStale) continue;
        plan.warnings.push_back(
            StaleBestWarning(i, *o.offering, o.price_age_days, "meets every constraint"));
    }
}
}  // namespace

void Explain(const TrainingPlanRequest& request, const Catalog& catalog,
             const PlanReference& reference, const PricingSettings& settings,
             const ShapeEstimates& estimates, TrainingPlan& plan) {
    plan.recommendation = plan.cheapest;  // not stale when any feasible option is not (Rank)
    if (plan.recommendation && plan.cheapest_trusted &&
        !TrustedPrice(*plan.recommendation, settings.max_price_age_days) &&
        plan.cheapest_trusted->ExpectedTotalUsd() <=
            plan.recommendation->ExpectedTotalUsd() * (1.0 + kTrustedPriceToleranceFraction)) {
        plan.recommendation = plan.cheapest_trusted;
    }
    plan.reasoning = Reasoning(request, plan, catalog, settings);
    if (plan.recommendation) {
        AddWarnings(*plan.recommendation, settings, "/recommendation/offering", plan.warnings);
    }
    if (plan.fastest &&
        (!plan.recommendation || plan.fastest->offering != plan.recommendation->offering ||
         plan.fastest->nodes != plan.recommendation->nodes)) {
        AddWarnings(*plan.fastest, settings, "/fastest/offering", plan.warnings);
    }
    if (!request.include_stale) AddStaleWarnings(plan);
    if (auto caveat = estimate::TrainingPrecisionCaveat(request.workload.precision)) {
        plan.warnings.push_back({"/precision", std::move(*caveat)});
    }
    if (plan.recommendation) {
        plan.budget = Budget(request, *plan.recommendation, reference);
        if ((request.data.stored_gb || request.data.egress_gb) && plan.budget &&
            !plan.budget->data_price) {
            plan.warnings.push_back({"/data", plan.recommendation->offering->provider +
                                                  ": no storage or egress list price on record; "
                                                  "the budget view counts compute only"});
        }
    }
    EchoAssumptions(request, catalog, settings, estimates, plan);
}

}  // namespace gpucost::pricing::plan::training_stages
