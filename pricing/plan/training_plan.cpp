#include "pricing/plan/training_plan.hpp"

#include <algorithm>
#include <cmath>

#include "pricing/calendar.hpp"
#include "pricing/field_checker.hpp"
#include "pricing/plan/plan_ids.hpp"
#include "pricing/plan/spot.hpp"
#include "pricing/plan/training_stages.hpp"

namespace gpucost::pricing::plan {
namespace {

// Standard normal 90th percentile.
constexpr std::size_t kMaxPlanOffset = 1'000'000;

}  // namespace

const char* TrainingPlanSortName(TrainingPlanSort sort) {
    switch (sort) {
        case TrainingPlanSort::kCost:
            return "cost";
        case TrainingPlanSort::kTime:
            return "time";
        case TrainingPlanSort::kExpectedCost:
            return "expected_cost";
    }
    return "expected_cost";
}

std::optional<TrainingPlanSort> ParseTrainingPlanSort(std::string_view name) {
    for (auto s :
         {TrainingPlanSort::kCost, TrainingPlanSort::kTime, TrainingPlanSort::kExpectedCost}) {
        if (name == TrainingPlanSortName(s)) {
            return s;
        }
    }
    return std::nullopt;
}

double CostQuantileFactor(double time_spread_fraction, double price_spread_fraction) {
    const double s_time = std::log1p(time_spread_fraction) / kZ90;
    const double s_price = std::log1p(price_spread_fraction) / kZ90;
    return std::exp(kZ90 * std::sqrt(s_time * s_time + s_price * s_price));
}

double RunTimeLateFraction(double expected_hours, double deadline_hours,
                           double time_spread_fraction) {
    if (!(deadline_hours > 0)) {
        return expected_hours > deadline_hours ? 1.0 : 0.0;
    }
    return 1.0 - RunTimeDeadlineProbability(deadline_hours, expected_hours,
                                            RunTimeSigma(time_spread_fraction));
}

double RunTimeSigma(double time_spread_fraction) {
    return std::log1p(time_spread_fraction) / kZ90;
}

std::string RunTimeLateText(double expected_hours, double deadline_hours,
                            double time_spread_fraction, std::string_view runs) {
    if (!(time_spread_fraction > 0)) {
        return "";
    }
    const std::string late_percent =
        Fixed(100.0 * RunTimeLateFraction(expected_hours, deadline_hours, time_spread_fraction), 1);
    if (late_percent == "0.0") {
        return "";
    }
    return "that spread alone puts about " + late_percent + "% of " + std::string(runs) +
           " past the deadline";
}

std::vector<int> CandidateNodeCounts(int per_node, int min_total_accelerators,
                                     int max_total_accelerators) {
    std::vector<int> out;
    if (per_node < 1) {
        return out;
    }
    for (long long nodes = 1; nodes * per_node <= max_total_accelerators; nodes *= 2) {
        if (nodes * per_node >= min_total_accelerators) {
            out.push_back(static_cast<int>(nodes));
        }
    }
    return out;
}

Status TrainingPlanRequest::Validate() const {
    FieldChecker check;
    const TrainingPlanConstraints& c = constraints;
    check.Range(c.deadline_hours, "/constraints/deadline_hours", 0, 1e7, /*lo_open=*/true);
    check.Range(c.deadline_confidence, "/constraints/deadline_confidence", 0, 1,
                /*lo_open=*/true);
    check.Range(c.budget_usd, "/constraints/budget_usd", 0, 1e12);
    check.Range(c.budget_confidence, "/constraints/budget_confidence", 0, 1, /*lo_open=*/true);
    check.Range(c.max_price_age_days, "/constraints/max_price_age_days", 0, 36500);
    check.Range(c.max_wall_clock_days, "/constraints/max_wall_clock_days", 0,
                kMaxWallClockDaysLimit, /*lo_open=*/true);
    if (c.max_total_accelerators) {
        check.IntRange(*c.max_total_accelerators, "/constraints/max_total_accelerators", 1,
                       kMaxPlanAccelerators);
    }
    if (c.min_total_accelerators) {
        check.IntRange(*c.min_total_accelerators, "/constraints/min_total_accelerators", 1,
                       kMaxPlanAccelerators);
    }
    // Against the default maximum too: a minimum above it leaves nothing to plan.
    const int max_total = c.max_total_accelerators.value_or(kDefaultMaxPlanAccelerators);
    if (c.min_total_accelerators && *c.min_total_accelerators > max_total) {
        check.Fail("/constraints/min_total_accelerators",
                   "must not exceed max_total_accelerators (" + std::to_string(max_total) +
                       (c.max_total_accelerators ? ")" : ", the default; raise it as well)"));
    }
    if (c.node_counts.size() > kMaxExplicitNodeCounts) {
        check.Fail("/constraints/node_counts",
                   "at most " + std::to_string(kMaxExplicitNodeCounts) + " node counts");
    }
    for (std::size_t i = 0; i < c.node_counts.size(); ++i) {
        check.IntRange(c.node_counts[i], "/constraints/node_counts/" + std::to_string(i), 1,
                       kMaxPlanAccelerators);
    }
    if (limit < 1 || limit > kMaxPlanLimit) {
        check.Fail("/limit", "must be between 1 and " + std::to_string(kMaxPlanLimit));
    }
    if (offset > kMaxPlanOffset) {
        check.Fail("/offset", "must be between 0 and " + std::to_string(kMaxPlanOffset));
    }
    check.Range(efficiency_spread_fraction, "/uncertainty/efficiency_spread_fraction", 0, 10);
    check.Range(price_spread_fraction, "/uncertainty/price_spread_fraction", 0, 10);
    check.Range(spot_price_spread_fraction, "/uncertainty/spot_price_spread_fraction", 0, 10);
    check.Range(checkpoint_minutes, "/spot/checkpoint_minutes", 0, 1440, /*lo_open=*/true);
    check.Range(restart_minutes, "/spot/restart_minutes", 0, 1440);
    check.Range(max_price_age_days, "/max_price_age_days", 0, 36500);
    if (start_date && !DaysFromIsoDate(*start_date)) {
        check.Fail("/start_date", "must be a date written YYYY-MM-DD");
    }
    check.Range(data.stored_gb, "/data/stored_gb", 0, 1e9);
    check.Range(data.egress_gb, "/data/egress_gb", 0, 1e9);
    if (workload.global_batch_tokens) {
        check.Range(*workload.global_batch_tokens, "/global_batch_tokens", 1,
                    estimate::kMaxGlobalBatchTokens);
    }
    return check.Done();
}

Result<TrainingPlan> PlanTraining(const TrainingPlanRequest& request, const Catalog& catalog,
                                  const PlanReference& reference) {
    if (auto valid = request.Validate(); !valid.ok()) {
        return valid.error();
    }
    TrainingPlanRequest resolved = request;
    TrainingPlanConstraints& c = resolved.constraints;
    if (auto ids = ResolveConstraintIds({&c.providers, &c.regions, &c.accelerators}, catalog);
        !ids.ok()) {
        return ids.error();
    }
    if (auto families = CheckAcceleratorFamilies(c.accelerator_families, catalog.Accelerators(),
                                                 {"/constraints/accelerator_families", true});
        !families.ok()) {
        return families.error();
    }
    for (std::string& family : c.accelerator_families) {
        family = IdKey(family);  // ids compare case-insensitively
    }
    if (auto places =
            CheckGeography({c.countries, c.continents}, reference.regions,
                           {"/constraints/countries", true}, {"/constraints/continents", true});
        !places.ok()) {
        return places.error();
    }
    namespace stages = training_stages;
    stages::Tally tally;
    const stages::Candidates candidates =
        stages::SelectCandidates(resolved, catalog, reference, tally);
    if (auto time_left = request.deadline.Check(); !time_left.ok()) {
        return time_left.error();
    }
    auto estimates = stages::EstimateShapes(resolved, candidates, tally);
    if (!estimates.ok()) {
        return estimates.error();
    }
    const stages::PricingSettings settings =
        stages::SettingsFor(resolved, estimates.value().mixture_of_experts);
    stages::DeadlineProbabilities probabilities(resolved, settings);
    // Stages 3 and 4 one option at a time (OptionJudging).
    stages::OptionJudging judging(resolved, settings, probabilities, tally);
    stages::PriceOptions(resolved, candidates, estimates.value(), settings, reference, tally,
                         judging);
    std::vector<TrainingPlanOption> beyond = judging.ceiling.Finish();
    if (auto time_left = request.deadline.Check(); !time_left.ok()) {
        return time_left.error();
    }

    TrainingPlan plan;
    plan.catalog_version = catalog.Describe().version;
    plan.offerings_considered = candidates.offerings_considered;
    plan.hardware_shapes = candidates.shapes.size();
    plan.estimates = estimates.value().estimates;
    plan.max_wall_clock_days = stages::WallClockCeilingDays(resolved);
    if (judging.within_ceiling == 0) {
        plan.beyond_max_wall_clock = std::move(beyond);
    }
    stages::Rank(resolved, judging.kept, plan, judging.infeasible_not_kept, judging.binding);
    stages::FillShownProbabilities(probabilities, judging.judge, plan);
    plan.skipped = tally.counts();
    plan.skipped_examples = tally.examples();
    if (auto time_left = request.deadline.Check(); !time_left.ok()) {
        return time_left.error();
    }
    stages::Explain(resolved, catalog, reference, settings, estimates.value(), plan);
    if (!resolved.owned_capacity.empty() && !judging.owned_covers_some) {
        plan.warnings.push_back(OwnedCoversNothing(
            resolved.owned_capacity,
            "the options planned, runs starting " + resolved.start_date.value_or(resolved.today)));
    }
    return plan;
}

namespace {

// The run-time spread of a spot plan given a workload: the estimate's own error (the training
// plans' default efficiency spread, wider for a mixture-of-experts model) moves the job's hours.
// Echoes it, as both deadline probabilities count it, and says beside them what it alone costs
// the on-demand run.
void SayRunTimeRisk(const SpotPlanRequest& request, const estimate::TrainingEstimate& estimate,
                    SpotPlan& plan) {
    const bool mixture_of_experts = estimate.model.IsMoe();
    const double spread = estimate::RunTimeSpreadFraction(estimate.model);
    plan.assumptions.push_back(
        {"efficiency_spread_fraction", spread, "fraction",
         "p90/p50 - 1 of the job's run time from the estimate's own error (log-normal, "
         "independent of interruptions); counted in spot_deadline_probability and "
         "on_demand_deadline_probability",
         EfficiencySpreadDefaultSource(mixture_of_experts)});
    if (!request.deadline_hours) {
        return;
    }
    const std::string late = RunTimeLateText(estimate.wall_clock_hours, *request.deadline_hours,
                                             spread, "on-demand runs");
    if (late.empty()) {
        return;
    }
    plan.reasoning += " The job's " + Fixed(estimate.wall_clock_hours, 1) +
                      " h is an estimate (efficiency_spread_fraction " + Fixed(spread, 2) +
                      "): " + late + ", which both deadline probabilities count.";
}

}  // namespace

Result<SpotPlan> PlanSpotForTraining(SpotPlanRequest request,
                                     const estimate::TrainingRequest& workload,
                                     const Catalog& catalog) {
    if (request.job_hours) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "/job_hours: give either job_hours or a workload, not both", "/job_hours");
    }
    if (!request.spot_offering_id) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "/spot_offering_id: a workload needs the spot offering it runs on",
                         "/spot_offering_id");
    }
    if (request.nodes < 1 || request.nodes > 4096) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "/nodes: must be an integer between 1 and 4096", "/nodes");
    }
    auto offering = catalog.FindOffering(*request.spot_offering_id);
    if (!offering.ok()) {
        return MakeError(ErrorCode::kNotFound,
                         "no offering '" + request.spot_offering_id->substr(0, 200) + "'",
                         "/spot_offering_id");
    }
    auto accelerator = catalog.FindAccelerator(offering.value().accelerator);
    if (!accelerator.ok()) {
        return accelerator.error();
    }
    estimate::ClusterSpec cluster;
    cluster.accelerator = accelerator.value();
    cluster.accelerators_per_node = offering.value().accelerator_count;
    cluster.accelerator_count = offering.value().accelerator_count * request.nodes;
    cluster.scale_out_gbit_per_s_per_node = offering.value().scale_out_gbit_per_s;
    auto estimate = estimate::EstimateTraining(workload, cluster);
    if (!estimate.ok()) {
        Error e = estimate.error();
        auto reroot = [](std::string& field) {
            field = field.rfind("/hardware", 0) == 0 ? "/nodes" : "/workload" + field;
        };
        reroot(e.field);
        for (auto& fe : e.errors) {
            reroot(fe.field);
        }
        if (e.errors.empty()) {
            e.errors.push_back({e.field, e.message});
        }
        return e;
    }
    request.job_hours = estimate.value().wall_clock_hours;
    request.run_time_sigma = RunTimeSigma(estimate::RunTimeSpreadFraction(estimate.value().model));
    auto plan = PlanSpot(request, catalog);
    if (plan.ok()) {
        plan.value().assumptions.push_back({"job_hours", estimate.value().wall_clock_hours, "h",
                                            "failure-free wall-clock hours of the workload on " +
                                                std::to_string(cluster.accelerator_count) + " x " +
                                                cluster.accelerator.id,
                                            "estimator (POST /v1/estimates/training)"});
        SayRunTimeRisk(request, estimate.value(), plan.value());
    }
    return plan;
}

}  // namespace gpucost::pricing::plan
