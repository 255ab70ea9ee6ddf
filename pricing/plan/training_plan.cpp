#include "pricing/plan/training_plan.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "pricing/plan/field_checker.hpp"
#include "pricing/plan/spot.hpp"

namespace gpucost::pricing::plan {
namespace {

// Standard normal 90th percentile.
constexpr double kZ90 = 1.2815515655446004;
// The default ladder stops once doubling the nodes speeds the run up by less than this:
// beyond that point every larger count costs about twice as much for (almost) nothing.
constexpr double kMinDoublingSpeedup = 1.05;
constexpr std::size_t kMaxExplicitNodeCounts = 64;
// Spot options whose expected time exceeds this multiple of the failure-free time are left
// out (counted as spot_impractical): checkpoints too slow for the interruption rate.
constexpr double kMaxSpotSlowdown = 1e3;
constexpr std::size_t kMaxPlanOffset = 1'000'000;

struct ShapeKey {
    std::string accelerator;
    int per_node = 1;
    double scale_out = -1;  // -1 = not published (estimator's family default)
    bool operator<(const ShapeKey& o) const {
        return std::tie(accelerator, per_node, scale_out) <
               std::tie(o.accelerator, o.per_node, o.scale_out);
    }
};

// One successful estimate of a shape at a node count.
struct ShapeRun {
    int nodes = 0;
    double wall_clock_hours = 0;
    double mfu = 0;
    estimate::ParallelLayout layout;
};

enum class Skip { kPrecision, kFit, kWorkload };

// Which estimator failures mean "this shape/count cannot run it" rather than "the workload
// is wrong": cluster size, layout and batch problems are per count; precision per shape.
Skip Classify(const Error& error) {
    const std::string& f = error.field;
    if (f == "/precision") {
        return Skip::kPrecision;
    }
    if (f.rfind("/hardware", 0) == 0 || f.rfind("/parallelism", 0) == 0 ||
        f == "/global_batch_tokens") {
        return Skip::kFit;
    }
    return Skip::kWorkload;
}

template <typename T>
bool Allowed(const std::vector<T>& list, const T& value) {
    return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
}

double SortKeyOf(const TrainingPlanOption& o, TrainingPlanSort sort) {
    switch (sort) {
        case TrainingPlanSort::kCost:
            return o.cost_usd;
        case TrainingPlanSort::kTime:
            return o.expected_wall_clock_hours;
        case TrainingPlanSort::kExpectedCost:
            return o.expected_cost_usd;
    }
    return o.expected_cost_usd;
}

bool Before(const TrainingPlanOption& a, const TrainingPlanOption& b, TrainingPlanSort sort) {
    const double ka = SortKeyOf(a, sort);
    const double kb = SortKeyOf(b, sort);
    if (ka != kb) {
        return ka < kb;
    }
    if (a.offering->id != b.offering->id) {
        return a.offering->id < b.offering->id;
    }
    return a.nodes < b.nodes;
}

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
    for (auto s : {TrainingPlanSort::kCost, TrainingPlanSort::kTime,
                   TrainingPlanSort::kExpectedCost}) {
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

std::vector<int> CandidateNodeCounts(int per_node, int min_accelerators, int max_accelerators) {
    std::vector<int> out;
    if (per_node < 1) {
        return out;
    }
    for (long long nodes = 1; nodes * per_node <= max_accelerators; nodes *= 2) {
        if (nodes * per_node >= min_accelerators) {
            out.push_back(static_cast<int>(nodes));
        }
    }
    return out;
}

Status TrainingPlanRequest::Validate() const {
    FieldChecker check;
    const TrainingPlanConstraints& c = constraints;
    check.Range(c.deadline_hours, "/constraints/deadline_hours", 0, 1e7, /*lo_open=*/true);
    check.Range(c.budget_usd, "/constraints/budget_usd", 0, 1e12);
    if (c.max_accelerators) {
        check.IntRange(*c.max_accelerators, "/constraints/max_accelerators", 1,
                       kMaxPlanAccelerators);
    }
    if (c.min_accelerators) {
        check.IntRange(*c.min_accelerators, "/constraints/min_accelerators", 1,
                       kMaxPlanAccelerators);
    }
    if (c.min_accelerators && c.max_accelerators && *c.min_accelerators > *c.max_accelerators) {
        check.Fail("/constraints/min_accelerators", "must not exceed max_accelerators");
    }
    for (std::size_t i = 0; i < c.providers.size(); ++i) {
        if (FindProvider(c.providers[i]) == nullptr) {
            check.Fail("/constraints/providers/" + std::to_string(i),
                       "unknown provider '" + c.providers[i].substr(0, 64) + "'");
        }
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
    if (workload.global_batch_tokens) {
        check.Range(*workload.global_batch_tokens, "/global_batch_tokens", 1,
                    estimate::kMaxGlobalBatchTokens);
    }
    return check.Done();
}

Result<TrainingPlan> PlanTraining(const TrainingPlanRequest& request, const Catalog& catalog) {
    if (auto valid = request.Validate(); !valid.ok()) {
        return valid.error();
    }
    const TrainingPlanConstraints& c = request.constraints;
    const int max_accelerators = c.max_accelerators.value_or(kDefaultMaxPlanAccelerators);
    const int min_accelerators = c.min_accelerators.value_or(1);
    TrainingPlan plan;
    std::size_t filtered = 0;
    std::size_t precision_unsupported = 0;
    std::size_t no_fit = 0;
    std::size_t spot_impractical = 0;
    std::string precision_example;
    std::string fit_example;

    // 1. Group matching offerings by hardware shape.
    std::map<ShapeKey, std::vector<const Offering*>> shapes;
    for (const Offering& o : catalog.Offerings()) {
        if (!Allowed(c.providers, o.provider) || !Allowed(c.price_types, o.price_type) ||
            !Allowed(c.regions, o.region) || !Allowed(c.accelerators, o.accelerator) ||
            o.accelerator_count < 1 || o.accelerator_count > max_accelerators) {
            ++filtered;
            continue;
        }
        ++plan.offerings_considered;
        shapes[{o.accelerator, o.accelerator_count, o.scale_out_gbit_per_s.value_or(-1.0)}]
            .push_back(&o);
    }
    plan.hardware_shapes = shapes.size();

    const double checkpoint_hours =
        request.checkpoint_minutes.value_or(kDefaultCheckpointMinutes) / 60.0;
    const double restart_hours = request.restart_minutes.value_or(kDefaultRestartMinutes) / 60.0;
    const double efficiency_spread =
        request.efficiency_spread_fraction.value_or(kDefaultEfficiencySpreadFraction);
    const double price_spread = request.price_spread_fraction.value_or(kDefaultPriceSpreadFraction);
    const double spot_price_spread =
        request.spot_price_spread_fraction.value_or(kDefaultSpotPriceSpreadFraction);
    const double factor_fixed = CostQuantileFactor(efficiency_spread, price_spread);
    const double factor_spot = CostQuantileFactor(efficiency_spread, spot_price_spread);
    const double unknown_spot_rate =
        InterruptionsPerHourFromMonthlyPercent(kDefaultUnknownSpotPercentPerMonth);

    std::vector<TrainingPlanOption> all;
    // The search runs without building assumption lists; the first successful cluster is
    // estimated once more with them, for the echo.
    estimate::TrainingRequest workload = request.workload;
    workload.with_assumptions = false;
    std::optional<estimate::ClusterSpec> first_cluster;

    // Node counts per shape: the caller's list, or the default ladder.
    std::vector<int> explicit_counts = c.node_counts;
    std::sort(explicit_counts.begin(), explicit_counts.end());
    explicit_counts.erase(std::unique(explicit_counts.begin(), explicit_counts.end()),
                          explicit_counts.end());
    auto counts_for = [&](int per_node) {
        if (explicit_counts.empty()) {
            return CandidateNodeCounts(per_node, min_accelerators, max_accelerators);
        }
        std::vector<int> out;
        for (int n : explicit_counts) {
            const long long accelerators = static_cast<long long>(n) * per_node;
            if (accelerators >= min_accelerators && accelerators <= max_accelerators) {
                out.push_back(n);
            }
        }
        return out;
    };

    // A single node never touches the scale-out network, so shapes differing only in it
    // share their one-node estimate.
    struct OneNode {
        Result<estimate::TrainingEstimate> estimate;
    };
    std::map<std::pair<std::string, int>, OneNode> one_node;

    // 2. Estimate each shape once per node count, then price its offerings.
    for (const auto& [key, offerings] : shapes) {
        auto accelerator = catalog.FindAccelerator(key.accelerator);
        if (!accelerator.ok()) {
            filtered += offerings.size();
            continue;
        }
        std::vector<ShapeRun> runs;
        bool shape_unsupported = false;
        std::string shape_fit_example;
        for (int nodes : counts_for(key.per_node)) {
            estimate::ClusterSpec cluster;
            cluster.accelerator = accelerator.value();
            cluster.accelerator_count = nodes * key.per_node;
            cluster.accelerators_per_node = key.per_node;
            if (key.scale_out >= 0) {
                cluster.scale_out_gbit_per_s_per_node = key.scale_out;
            }
            const std::pair<std::string, int> single{key.accelerator, key.per_node};
            auto cached = nodes == 1 ? one_node.find(single) : one_node.end();
            Result<estimate::TrainingEstimate> fresh = Error{};
            if (cached == one_node.end()) {
                ++plan.estimates;
                fresh = estimate::EstimateTraining(workload, cluster);
                if (nodes == 1) {
                    cached = one_node.emplace(single, OneNode{fresh}).first;
                }
            }
            const Result<estimate::TrainingEstimate>& e =
                cached != one_node.end() ? cached->second.estimate : fresh;
            if (!e.ok()) {
                const Skip skip = Classify(e.error());
                if (skip == Skip::kWorkload) {
                    return e.error();
                }
                if (skip == Skip::kPrecision) {
                    shape_unsupported = true;
                    precision_example = e.error().message;
                    break;
                }
                if (runs.empty()) {
                    shape_fit_example = e.error().message;
                }
                if (e.error().field == "/global_batch_tokens") {
                    break;  // the batch cannot feed this many replicas, nor any larger count
                }
                continue;
            }
            const double hours = e.value().wall_clock_hours;
            const bool slow_gain = explicit_counts.empty() && !runs.empty() &&
                                   runs.back().wall_clock_hours < hours * kMinDoublingSpeedup;
            runs.push_back({nodes, hours, e.value().mfu, e.value().parallelism});
            if (!first_cluster) {
                first_cluster = cluster;
            }
            if (slow_gain) {
                break;
            }
        }
        if (shape_unsupported) {
            precision_unsupported += offerings.size();
            continue;
        }
        if (runs.empty()) {
            no_fit += offerings.size();
            if (!shape_fit_example.empty()) {
                fit_example = shape_fit_example;
            }
            continue;
        }
        for (const Offering* o : offerings) {
            std::optional<double> rate_per_instance;
            if (o->price_type == PriceType::kSpot) {
                rate_per_instance = unknown_spot_rate;
                if (o->spot_interruption) {
                    if (auto p = RepresentativePercentPerMonth(*o->spot_interruption)) {
                        rate_per_instance = InterruptionsPerHourFromMonthlyPercent(*p);
                    }
                }
            }
            for (const ShapeRun& run : runs) {
                TrainingPlanOption opt;
                opt.offering = o;
                opt.nodes = run.nodes;
                opt.accelerators = run.nodes * key.per_node;
                opt.parallelism = run.layout;
                opt.mfu = run.mfu;
                opt.wall_clock_hours = run.wall_clock_hours;
                opt.usd_per_hour = o->price.usd_per_hour * run.nodes;
                opt.cost_usd = opt.wall_clock_hours * opt.usd_per_hour;
                opt.expected_wall_clock_hours = opt.wall_clock_hours;
                if (rate_per_instance) {
                    const double rate = *rate_per_instance * run.nodes;
                    opt.interruptions_per_hour = rate;
                    const double interval =
                        rate > 0 ? DalyCheckpointIntervalHours(checkpoint_hours, rate)
                                 : opt.wall_clock_hours;
                    opt.expected_wall_clock_hours = ExpectedHoursWithInterruptions(
                        opt.wall_clock_hours, rate, checkpoint_hours, restart_hours, interval);
                }
                if (!std::isfinite(opt.expected_wall_clock_hours) ||
                    opt.expected_wall_clock_hours > opt.wall_clock_hours * kMaxSpotSlowdown) {
                    ++spot_impractical;  // checkpoints too slow for the interruption rate
                    continue;
                }
                opt.expected_cost_usd = opt.expected_wall_clock_hours * opt.usd_per_hour;
                const double factor = rate_per_instance ? factor_spot : factor_fixed;
                opt.cost_usd_p50 = opt.expected_cost_usd;
                opt.cost_usd_p10 = opt.expected_cost_usd / factor;
                opt.cost_usd_p90 = opt.expected_cost_usd * factor;
                opt.meets_deadline =
                    !c.deadline_hours || opt.expected_wall_clock_hours <= *c.deadline_hours;
                opt.within_budget = !c.budget_usd || opt.expected_cost_usd <= *c.budget_usd;
                all.push_back(opt);
            }
        }
    }

    // 3. Summaries over every option.
    plan.total_options = all.size();
    for (const auto& o : all) {
        if (o.meets_deadline && o.within_budget) {
            ++plan.feasible_options;
        }
        if (o.meets_deadline &&
            (!plan.cheapest || Before(o, *plan.cheapest, TrainingPlanSort::kExpectedCost))) {
            plan.cheapest = o;
        }
        if (o.within_budget &&
            (!plan.fastest || Before(o, *plan.fastest, TrainingPlanSort::kTime))) {
            plan.fastest = o;
        }
    }
    std::vector<const TrainingPlanOption*> by_time;
    by_time.reserve(all.size());
    for (const auto& o : all) {
        by_time.push_back(&o);
    }
    std::sort(by_time.begin(), by_time.end(), [](const auto* a, const auto* b) {
        if (a->expected_wall_clock_hours != b->expected_wall_clock_hours) {
            return a->expected_wall_clock_hours < b->expected_wall_clock_hours;
        }
        return Before(*a, *b, TrainingPlanSort::kExpectedCost);
    });
    double cheapest_so_far = INFINITY;
    for (const auto* o : by_time) {
        if (o->expected_cost_usd < cheapest_so_far) {
            cheapest_so_far = o->expected_cost_usd;
            plan.pareto_front.push_back(*o);
        }
    }

    // 4. The requested page.
    const TrainingPlanSort sort = request.sort;
    const std::size_t end = std::min(all.size(), request.offset + request.limit);
    if (request.offset < end) {
        std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(end), all.end(),
                          [sort](const auto& a, const auto& b) { return Before(a, b, sort); });
        plan.options.assign(all.begin() + static_cast<std::ptrdiff_t>(request.offset),
                            all.begin() + static_cast<std::ptrdiff_t>(end));
    }

    plan.skipped = {{"filtered", filtered},
                    {"precision_unsupported", precision_unsupported},
                    {"does_not_fit", no_fit},
                    {"spot_impractical", spot_impractical}};
    if (!fit_example.empty()) {
        plan.skipped_examples.emplace_back("does_not_fit", fit_example);
    }
    if (!precision_example.empty()) {
        plan.skipped_examples.emplace_back("precision_unsupported", precision_example);
    }

    Assumptions& echo = plan.assumptions;
    echo.push_back(Echo("efficiency_spread_fraction", efficiency_spread, "fraction",
                        "p90/p50 - 1 of run time from efficiency uncertainty (log-normal)",
                        request.efficiency_spread_fraction.has_value(),
                        "default: judgement (published MFUs for one model and chip differ by "
                        "about +-20%)"));
    echo.push_back(Echo("price_spread_fraction", price_spread, "fraction",
                        "p90/p50 - 1 of on-demand and committed prices (log-normal)",
                        request.price_spread_fraction.has_value(), "default: judgement"));
    echo.push_back(Echo("spot_price_spread_fraction", spot_price_spread, "fraction",
                        "p90/p50 - 1 of spot prices (log-normal)",
                        request.spot_price_spread_fraction.has_value(),
                        "default: judgement (spot prices move daily)"));
    echo.push_back(Echo("checkpoint_minutes", checkpoint_hours * 60.0, "min",
                        "checkpoint write time used for spot options",
                        request.checkpoint_minutes.has_value(), "default: judgement (spot.hpp)"));
    echo.push_back(Echo("restart_minutes", restart_hours * 60.0, "min",
                        "restart time after a spot interruption",
                        request.restart_minutes.has_value(), "default: judgement (spot.hpp)"));
    echo.push_back({"unknown_spot_percent_per_month", kDefaultUnknownSpotPercentPerMonth,
                    "percent",
                    "monthly interruption share assumed for spot offerings without a Spot "
                    "Advisor bucket",
                    "default: the worst bucket (>20%), conservative"});
    echo.push_back(Echo("max_accelerators", max_accelerators, "accelerators",
                        "largest cluster searched", c.max_accelerators.has_value(),
                        "default: 4096"));
    std::optional<estimate::TrainingEstimate> first_estimate;
    if (first_cluster) {
        ++plan.estimates;
        auto echoed = estimate::EstimateTraining(request.workload, *first_cluster);
        if (echoed.ok()) {
            first_estimate = std::move(echoed).value();
        }
    }
    if (first_estimate) {
        for (const auto& a : first_estimate->assumptions) {
            Assumption copy = a;
            copy.name = "estimator." + a.name;
            echo.push_back(std::move(copy));
        }
    }
    return plan;
}

Result<SpotPlan> PlanSpotForTraining(SpotPlanRequest request,
                                     const estimate::TrainingRequest& workload,
                                     const Catalog& catalog) {
    if (request.job_hours) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "/job_hours: give either job_hours or a workload, not both",
                         "/job_hours");
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
    auto plan = PlanSpot(request, catalog);
    if (plan.ok()) {
        plan.value().assumptions.push_back(
            {"job_hours", estimate.value().wall_clock_hours, "h",
             "failure-free wall-clock hours of the workload on " +
                 std::to_string(cluster.accelerator_count) + " x " + cluster.accelerator.id,
             "estimator (POST /v1/estimates/training)"});
    }
    return plan;
}

}  // namespace gpucost::pricing::plan
