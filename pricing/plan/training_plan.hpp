#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "pricing/accelerator.hpp"
#include "pricing/assumption.hpp"
#include "pricing/catalog.hpp"
#include "pricing/error.hpp"
#include "pricing/estimate/training.hpp"
#include "pricing/offering.hpp"
#include "pricing/plan/spot.hpp"

namespace gpucost::pricing::plan {

// Uncertainty behind cost_usd_p10/p50/p90. The point estimate is taken as the median; time
// (through efficiency) and price are independent log-normals whose 90th percentile is
// (1 + spread) times the median, so with z = 1.2816 (standard normal 90 %),
// sigma = ln(1 + spread) / z per factor and cost quantiles are median * exp(+-z * sigma)
// with sigma = sqrt(sigma_time^2 + sigma_price^2).
//
// Efficiency: published MFUs for the same model on the same hardware differ by about +-20 %
// between frameworks and tuning (see ../shared/docs/estimator-references.md); judgement.
inline constexpr double kDefaultEfficiencySpreadFraction = 0.20;
// On-demand and committed list prices change rarely between catalog refreshes; judgement.
inline constexpr double kDefaultPriceSpreadFraction = 0.05;
// Spot prices move daily; AWS Spot Advisor savings for one instance type differ by tens of
// percentage points across regions (catalog-references §6); judgement.
inline constexpr double kDefaultSpotPriceSpreadFraction = 0.25;
// Spot offerings without a Spot Advisor bucket (GCP, Azure, marketplaces) are planned as if
// in the worst bucket (>20 %, 30 % a month; see RepresentativePercentPerMonth).
inline constexpr double kDefaultUnknownSpotPercentPerMonth = 30.0;
// Largest cluster searched when the caller sets no max_accelerators.
inline constexpr int kDefaultMaxPlanAccelerators = 4096;
inline constexpr int kMaxPlanAccelerators = 65536;
inline constexpr std::size_t kDefaultPlanLimit = 20;
inline constexpr std::size_t kMaxPlanLimit = 500;

enum class TrainingPlanSort { kCost, kTime, kExpectedCost };
const char* TrainingPlanSortName(TrainingPlanSort sort);  // "cost", "time", "expected_cost"
std::optional<TrainingPlanSort> ParseTrainingPlanSort(std::string_view name);

// Which offerings and cluster sizes to consider. Empty lists mean any; values in one list
// are alternatives. Accelerator counts are whole clusters (nodes x accelerators per node).
struct TrainingPlanConstraints {
    std::optional<double> deadline_hours;
    std::optional<double> budget_usd;
    std::vector<std::string> providers;
    std::vector<PriceType> price_types;
    std::vector<std::string> regions;
    std::vector<std::string> accelerators;
    std::optional<int> max_accelerators;
    std::optional<int> min_accelerators;
    // Node counts to try instead of the default ladder (see CandidateNodeCounts).
    std::vector<int> node_counts;
};

struct TrainingPlanRequest {
    estimate::TrainingRequest workload;  // model, tokens, precision, estimator overrides
    TrainingPlanConstraints constraints;
    TrainingPlanSort sort = TrainingPlanSort::kExpectedCost;
    std::size_t limit = kDefaultPlanLimit;
    std::size_t offset = 0;
    std::optional<double> efficiency_spread_fraction;
    std::optional<double> price_spread_fraction;
    std::optional<double> spot_price_spread_fraction;
    std::optional<double> checkpoint_minutes;  // spot overhead; defaults as in spot.hpp
    std::optional<double> restart_minutes;

    // Ranges of the plan's own fields (the workload is validated by the estimator);
    // kInvalidArgument naming `/constraints/...`, `/limit`, `/uncertainty/...`.
    [[nodiscard]] Status Validate() const;
};

// One (offering, node count). `offering` points into the catalog passed to PlanTraining and
// is valid as long as that catalog lives.
struct TrainingPlanOption {
    const Offering* offering = nullptr;
    int nodes = 0;
    int accelerators = 0;
    estimate::ParallelLayout parallelism;
    double mfu = 0;
    double wall_clock_hours = 0;           // estimator's expected time (with goodput)
    double expected_wall_clock_hours = 0;  // spot: with interruptions; else = wall_clock
    double usd_per_hour = 0;               // all nodes together
    double cost_usd = 0;                   // wall_clock_hours x usd_per_hour
    double expected_cost_usd = 0;          // expected_wall_clock_hours x usd_per_hour
    double cost_usd_p10 = 0;
    double cost_usd_p50 = 0;
    double cost_usd_p90 = 0;
    std::optional<double> interruptions_per_hour;  // whole cluster, spot only
    bool meets_deadline = true;  // expected wall clock <= deadline (true without one)
    bool within_budget = true;   // expected cost <= budget (true without one)
};

struct TrainingPlan {
    std::vector<TrainingPlanOption> options;  // this page, in `sort` order
    std::size_t total_options = 0;
    std::size_t feasible_options = 0;  // meeting deadline and budget
    // Cheapest by expected cost among options meeting the deadline; fastest by expected
    // time among options within budget; each nullopt when none qualifies.
    std::optional<TrainingPlanOption> cheapest;
    std::optional<TrainingPlanOption> fastest;
    // Options no other option beats on both expected cost and expected time, fastest first.
    std::vector<TrainingPlanOption> pareto_front;
    std::size_t offerings_considered = 0;
    std::size_t hardware_shapes = 0;  // distinct (accelerator, per node, scale-out)
    std::size_t estimates = 0;        // estimator calls made
    // Offerings left out, by reason: "filtered" (constraints), "precision_unsupported",
    // "does_not_fit" (at no searched node count); "spot_impractical" counts spot options
    // (offering x node count) whose expected time is over 1000x the failure-free time.
    std::vector<std::pair<std::string, std::size_t>> skipped;
    // One estimator message per skip reason, to say why (e.g. how much memory is missing).
    std::vector<std::pair<std::string, std::string>> skipped_examples;
    Assumptions assumptions;
};

// The default node-count ladder for nodes of `per_node` accelerators: powers of two (the
// counts the layout search divides into tensor x pipeline x data best) whose accelerator
// total lies in [min_accelerators, max_accelerators], ascending. PlanTraining stops a shape's
// ladder early when the batch cannot feed more replicas or when doubling the nodes gains
// less than 5 % speed.
std::vector<int> CandidateNodeCounts(int per_node, int min_accelerators, int max_accelerators);

// Plans a training run over every matching offering in `catalog`. Offerings that share a
// hardware shape are estimated once per node count (one-node estimates are shared by shapes
// that differ only in scale-out network), then priced, so the work is (shapes x node
// counts) estimates plus one pass over the offerings. A workload the
// estimator rejects for reasons other than fit or precision is returned as its error.
[[nodiscard]] Result<TrainingPlan> PlanTraining(const TrainingPlanRequest& request,
                                                const Catalog& catalog);

// A spot plan whose job length is a training run: job_hours is the estimator's wall-clock
// time for `workload` on `request.nodes` nodes of the spot offering's hardware. Needs
// spot_offering_id and no job_hours (kInvalidArgument otherwise). Estimator errors are
// re-rooted under /workload (hardware fit problems under /nodes).
[[nodiscard]] Result<SpotPlan> PlanSpotForTraining(SpotPlanRequest request,
                                                   const estimate::TrainingRequest& workload,
                                                   const Catalog& catalog);

// The quantile factor exp(z * sigma) for the 90th percentile given spreads as above.
double CostQuantileFactor(double time_spread_fraction, double price_spread_fraction);

}  // namespace gpucost::pricing::plan
