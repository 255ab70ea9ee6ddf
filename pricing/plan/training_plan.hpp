#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pricing/accelerator.hpp"
#include "pricing/assumption.hpp"
#include "pricing/catalog.hpp"
#include "pricing/deadline.hpp"
#include "pricing/error.hpp"
#include "pricing/estimate/training.hpp"
#include "pricing/offering.hpp"
#include "pricing/plan/budget.hpp"
#include "pricing/plan/spot.hpp"
#include "pricing/plan_reference.hpp"
#include "pricing/price_age.hpp"
#include "pricing/price_book.hpp"

namespace gpucost::pricing::plan {

// Uncertainty behind cost_usd_p10/p50/p90. The point estimate is taken as the median; time
// (through efficiency) and price are independent log-normals whose 90th percentile is
// (1 + spread) times the median, so with z = 1.2816 (standard normal 90 %),
// sigma = ln(1 + spread) / z per factor and cost quantiles are median * exp(+-z * sigma)
// with sigma = sqrt(sigma_time^2 + sigma_price^2).
//
// The run-time spreads are the estimator's (pricing/estimate/training.hpp, where training
// estimates answer wall_clock_hours_p10/p90 with them): 0.20 by judgement, 0.40 measured for a
// mixture-of-experts model.
using estimate::kDefaultEfficiencySpreadFraction;
using estimate::kMoeEfficiencySpreadFraction;
// z of the standard normal's 90th percentile.
inline constexpr double kZ90 = 1.2815515655446004;
// On-demand and committed list prices change rarely between catalog refreshes; judgement.
inline constexpr double kDefaultPriceSpreadFraction = 0.05;
// Spot prices move daily; AWS Spot Advisor savings for one instance type differ by tens of
// percentage points across regions (catalog-references §6); judgement.
inline constexpr double kDefaultSpotPriceSpreadFraction = 0.25;
// Spot offerings without a Spot Advisor bucket: kDefaultUnknownSpotPercentPerMonth (spot.hpp),
// shared with the spot plan.
// A deadline counts as met when the option finishes by it with at least this probability
// (request: `constraints.deadline_confidence`). The same default as the spot plan's
// required_deadline_probability (spot.hpp), so both planners judge a deadline alike.
inline constexpr double kDefaultDeadlineConfidence = kDefaultRequiredDeadlineProbability;
// A budget counts as met when the option's total cost stays within it with at least this
// probability (request: `constraints.budget_confidence`); at 0.9 a spot option's cost_usd_p90
// (plus data costs) must fit. Its own knob, not deadline_confidence's: a budget owner may
// hold money and time to different standards (0.5 judges spot at its expected cost), and
// deadline_confidence means nothing without a deadline. The same default, so a plan with
// both promises each at 90 %; judgement.
inline constexpr double kDefaultBudgetConfidence = kDefaultDeadlineConfidence;
// A shown spot option whose Chernoff lower bound on deadline_probability is above 1 - this
// shows the bound instead of the distribution's figure (within this of it): the distribution
// costs milliseconds per option (SpotDeadlineProbability), the bound microseconds.
// Definition; echoed.
inline constexpr double kDeadlineBoundShownTolerance = 1e-6;
// Longest run listed when the request gives no deadline (request:
// `constraints.max_wall_clock_days`, which also applies next to a deadline when given). Half
// a year: the length of the longest published frontier pre-training runs (Llama 3 405B: 54
// days of training, arXiv 2407.21783 section 3.3.4; the full programme about 6 months), the
// cadence of model generations, and a span over which GPU list prices moved up to 45 % in 2025
// (catalog-references), so a plan for one rented cluster stops being a plan; judgement.
inline constexpr double kDefaultMaxWallClockDays = 180;
inline constexpr double kMaxWallClockDaysLimit = 36500;
// The recommendation is the cheapest option meeting every constraint, unless its price is not
// trusted (unverified, an estimated date, or older than max_price_age_days) and an option with
// a trusted price costs at most this much more (expected cost with data costs): then that one,
// and the reasoning says so. A tenth: twice the default p90 spread of list prices
// (kDefaultPriceSpreadFraction), so within it the two costs are indistinguishable in the
// plan's own uncertainty, while a price nobody can confirm may be wrong by far more (AWS's
// June-2025 P4/P5 cut moved list prices by up to 45 %, catalog-references); judgement.
inline constexpr double kTrustedPriceToleranceFraction = 0.10;
// Largest cluster searched when the caller sets no max_total_accelerators.
inline constexpr int kDefaultMaxPlanAccelerators = 4096;
inline constexpr int kMaxPlanAccelerators = 65536;
inline constexpr std::size_t kDefaultPlanLimit = 20;
inline constexpr std::size_t kMaxPlanLimit = 500;
// Node counts a request may list (constraints.node_counts). Each is estimated for every
// hardware shape the constraints allow, so the list multiplies the plan's estimates: nearly twice
// the 17 rungs of the default ladder (1 to 65,536 nodes by powers of two) leaves room for any
// sweep between them.
inline constexpr std::size_t kMaxExplicitNodeCounts = 32;
// Most threads one plan's shape estimates run on (a plan has tens of shape groups).
inline constexpr int kMaxPlanEstimateThreads = 16;
// A chosen price older than this draws a warning (request: `max_price_age_days`). List
// prices of GPU instances moved by up to 45 % within 2025 (AWS's June-2025 P4/P5 cut,
// catalog-references); half a year is as old as a budget figure should be; judgement.
inline constexpr double kDefaultMaxPriceAgeDays = 180;
// Bandwidth between independent hosts (marketplaces, single on-demand machines): they share
// only the public internet. Vast.ai listings advertise 100-1,000 Mbit/s up and down; 1 Gbit/s
// is the upper end, so multi-node plans on such hosts are if anything optimistic; judgement.
inline constexpr double kIndependentHostsGbitPerS = 1.0;
// Commitment terms are billed in full whether used or not (8,760 h and 26,280 h per instance).
inline constexpr double kCommit1yHours = 8760;
inline constexpr double kCommit3yHours = 26280;
// AWS Capacity Blocks: sold in 1-day steps up to 14 days, then 7-day steps (AWS user guide
// "Capacity Blocks for ML"); the minimum and maximum come from schema/seed/capacity.csv.
inline constexpr double kCapacityBlockDayHours = 24;
inline constexpr double kCapacityBlockDailyStepsUpToHours = 336;
inline constexpr double kCapacityBlockWeekHours = 168;
// Instances in a Capacity Block begin to terminate 30 minutes before the block ends (AWS user
// guide "Monitor Capacity Blocks using EventBridge": the expiry warning comes 40 minutes before
// the end, termination 10 minutes later), so a run must fit the block less this lead.
inline constexpr double kCapacityBlockEndLeadHours = 0.5;

enum class TrainingPlanSort { kCost, kTime, kExpectedCost };
const char* TrainingPlanSortName(TrainingPlanSort sort);  // "cost", "time", "expected_cost"
std::optional<TrainingPlanSort> ParseTrainingPlanSort(std::string_view name);

// Which offerings and cluster sizes to consider. Empty lists mean any; values in one list
// are alternatives. Accelerator counts are whole clusters (nodes x accelerators per node).
// An empty price_types means on_demand, spot and capacity_block: commitments bill a whole
// term, so a job plan considers them only when named.
struct TrainingPlanConstraints {
    std::optional<double> deadline_hours;
    // Probability (0, 1] with which an option must finish by deadline_hours; default
    // kDefaultDeadlineConfidence. Ignored without a deadline.
    std::optional<double> deadline_confidence;
    std::optional<double> budget_usd;
    // Probability (0, 1] with which an option's total cost must stay within budget_usd;
    // default kDefaultBudgetConfidence. Ignored without a budget.
    std::optional<double> budget_confidence;
    std::vector<std::string> providers;
    std::vector<PriceType> price_types;
    std::vector<std::string> regions;
    std::vector<std::string> accelerators;
    // Accelerator families ("h100": every H100 variant; AcceleratorFamily) and the places an
    // offering's region must be in (the region table: PlanReference::regions).
    std::vector<std::string> accelerator_families;
    std::vector<std::string> countries;
    std::vector<std::string> continents;
    std::optional<int> max_total_accelerators;
    std::optional<int> min_total_accelerators;
    // Offerings whose current price is not verified are left out (skipped.unverified_price).
    bool verified_only = false;
    // Offerings whose price is older than this many days (by `today`) are left out
    // (skipped.price_too_old); no default. The plan's top-level max_price_age_days only warns.
    std::optional<double> max_price_age_days;
    // Options expected to take longer are left out (skipped.over_max_wall_clock). Default
    // kDefaultMaxWallClockDays when there is no deadline_hours; none with a deadline unless
    // given.
    std::optional<double> max_wall_clock_days;
    // Node counts to try instead of the default ladder (see CandidateNodeCounts).
    std::vector<int> node_counts;
};

// Data the run keeps in object storage (dataset, checkpoints) and sends out over the internet
// (the trained model); priced from the provider's list prices when given.
struct TrainingDataSizes {
    std::optional<double> stored_gb;
    std::optional<double> egress_gb;
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
    // Also list options that miss a constraint, each with what it violates.
    bool include_infeasible = false;
    std::optional<double> max_price_age_days;
    // Let a stale price (older than its provider's StaleAfterDays) be the recommendation. By
    // default the recommendation is the cheapest option with a price that is not stale
    // whenever one meets every constraint.
    bool include_stale = false;
    std::optional<std::string> start_date;  // YYYY-MM-DD; the budget view's first day
    TrainingDataSizes data;
    // `calibration` (docs/billing.md): the actual/estimated accelerator-hours ratio measured on
    // earlier runs (plan_vs_actual.hpp CombinedHoursRatio), multiplying every estimate's hours
    // where they enter the plan; 1 (the default): the estimate as it is.
    double calibration_hours_factor = 1.0;
    // Today's date (YYYY-MM-DD) as the caller's clock says; price ages and the default start
    // date need it. Empty: ages unknown.
    std::string today;
    // Capacity already owned (a price book's owned_capacity, set by the caller from the book,
    // validated there): runs on those offerings use its hours first, from the budget view's
    // start date, at no marginal cost.
    std::vector<OwnedCapacity> owned_capacity;
    // Threads the shape estimates may run on (1 to kMaxPlanEstimateThreads), the caller's
    // choice from the CPUs it has idle; the plan is the same for any number.
    int estimate_threads = 1;
    // When the caller stops waiting (its request's computing budget): checked between the
    // stages and, on every estimate thread, between node counts; past it the plan is
    // kBudgetExceeded, never the stages done so far. Default: never.
    Deadline deadline;

    // Ranges of the plan's own fields (the workload is validated by the estimator);
    // kInvalidArgument naming `/constraints/...`, `/limit`, `/uncertainty/...`.
    [[nodiscard]] Status Validate() const;
};

// A constraint an option misses: the constraint's name as in the request, its limit and the
// option's value ("deadline_hours", 168, 1556.9). An option expected to finish in time whose
// probability of doing so is below the confidence misses "deadline_confidence" (limit: the
// confidence, value: its probability; higher is better). Likewise an option whose expected
// cost fits the budget while its probability of staying within it is below budget_confidence
// misses "budget_confidence".
struct ConstraintViolation {
    std::string constraint;
    double limit = 0;
    double value = 0;
};

// What owned capacity covers of an option's expected run (from the budget's start date).
// The commitment is paid whether used or not, so its hours are sunk: the option's
// expected_cost_usd, cost_usd and p10/p50/p90 are the marginal bill for the rest, which is
// what ranks, budgets and is judged against `budget_usd`; the fully loaded cost adds the
// owned hours at the commitment's own rate.
struct OwnedUse {
    double instance_hours = 0;          // of the expected run, covered by owned capacity
    double sunk_usd = 0;                // those hours at the commitments' usd_per_hour
    double without_owned_cost_usd = 0;  // the expected bill had nothing been owned
};

// One (offering, node count). `offering` points into the catalog passed to PlanTraining and
// is valid as long as that catalog lives.
struct TrainingPlanOption {
    const Offering* offering = nullptr;
    int nodes = 0;
    int total_accelerators = 0;
    estimate::ParallelLayout parallelism;
    double mfu = 0;
    double wall_clock_hours = 0;           // estimator's expected time (with goodput)
    double expected_wall_clock_hours = 0;  // spot: with interruptions; else = wall_clock
    double cluster_usd_per_hour = 0;       // all nodes together
    // Hours paid per instance: the expected hours (on-demand, spot), the block length
    // (capacity block) or whole terms (commitments).
    double billed_hours = 0;
    // Paid but unused hours per instance (commitments and capacity blocks).
    std::optional<double> unused_committed_hours;
    double cost_usd = 0;           // bill for wall_clock_hours
    double expected_cost_usd = 0;  // bill for expected_wall_clock_hours (marginal: OwnedUse)
    // Set when owned capacity covers some of the expected run; nullopt otherwise.
    std::optional<OwnedUse> owned;
    // The marginal bill plus the owned hours this run uses at the commitment's rate.
    double FullyLoadedCostUsd() const { return expected_cost_usd + (owned ? owned->sunk_usd : 0); }
    // With `data` in the request: the provider's object storage for the expected run plus
    // egress once (data_prices.csv); nullopt without `data` or without a price on record.
    std::optional<double> data_cost_usd;
    // What the budget, the cost sorts, `cheapest` and the Pareto front compare: the expected
    // bill plus the data costs.
    double ExpectedTotalUsd() const { return expected_cost_usd + data_cost_usd.value_or(0); }
    double cost_usd_p10 = 0;
    double cost_usd_p50 = 0;
    double cost_usd_p90 = 0;
    std::optional<double> interruptions_per_hour;  // whole cluster, spot only
    // The network the estimate used between nodes and whether the nodes are independent
    // hosts (public internet between them) rather than one cluster.
    std::optional<double> scale_out_gbit_per_s;
    bool independent_hosts = false;
    int max_instances = 1;  // what one customer can get at once (capacity.csv)
    std::optional<long long> price_age_days;
    PriceState price_state = PriceState::kCurrent;  // by price_age_days (price_age.hpp)
    // With a deadline: the probability of finishing by it. Spot options: the distribution of
    // the interrupted run (SpotDeadlineProbability, the model of POST /v1/plans/spot, with
    // the rate, checkpoint interval, checkpoint and restart times the expected time used);
    // other price types have no interruptions: 1 when the expected time fits, else 0. Set on
    // every option the plan returns (options, summaries); nullopt without a deadline.
    std::optional<double> deadline_probability;
    // deadline_probability >= deadline_confidence (true without a deadline).
    bool meets_deadline = true;
    // With a budget: the probability that the total cost (compute + data) stays within it.
    // Spot options: the compute cost is log-normal with its median at expected_cost_usd and
    // its 90th percentile at cost_usd_p90 (the spot price and efficiency spreads); other price
    // types are billed at a fixed rate for hours the deadline check also takes as expected: 1
    // when the expected total fits, else 0. nullopt without a budget.
    std::optional<double> budget_probability;
    // budget_probability >= budget_confidence (true without a budget).
    bool within_budget = true;
    // What the option misses, listed on every option the plan returns (the planner judges
    // the others by the two flags only).
    std::vector<ConstraintViolation> violations;
    bool Feasible() const { return meets_deadline && within_budget; }
};

// When no option meets every constraint: one entry per violated constraint, with the best
// value any option reaches while meeting all the other constraints (or all options when
// none does) and by how much it misses.
struct BindingConstraint {
    std::string constraint;
    double limit = 0;
    double best_value = 0;
    // best_value - limit (> 0); for deadline_confidence limit - best_value (> 0).
    double shortfall = 0;
    bool others_met = false;  // best_value is among options meeting every other one
    std::string message;
};

// Spend of the recommended option per calendar month from the start date (budget.hpp), and
// its totals split into compute, storage and egress.
struct BudgetView {
    std::string start_date;
    std::string start_date_source;  // "request" or "today"
    std::vector<MonthlySpend> monthly;
    double compute_usd = 0;
    std::optional<double> storage_usd;
    std::optional<double> egress_usd;
    double total_usd = 0;
    // With owned capacity covering the recommendation: those hours at the commitment's rate,
    // paid whether used or not, so not in compute_usd, monthly or total_usd (the marginal
    // cash); to the cent.
    std::optional<double> owned_usd;
    std::optional<DataPrice> data_price;  // the provider's list prices used, with provenance
};

struct TrainingPlan {
    std::vector<TrainingPlanOption> options;  // this page, in `sort` order
    // Options listed: those meeting every constraint, plus the rest with include_infeasible.
    std::size_t total_count = 0;
    std::size_t feasible_count = 0;
    std::size_t infeasible_count = 0;
    // Among options meeting every constraint: cheapest by expected cost (ties: faster), of
    // those whose price is not stale when there are any (all of them with include_stale);
    // fastest by expected time (ties: cheaper); nullopt when none is feasible.
    std::optional<TrainingPlanOption> cheapest;
    std::optional<TrainingPlanOption> fastest;
    // Feasible options no other feasible option beats on both expected cost and expected
    // time, fastest first.
    std::vector<TrainingPlanOption> pareto_front;
    // The cheapest feasible option per provider, cheapest first: of the provider's options
    // whose price is not stale when it has any (as `cheapest`).
    std::vector<TrainingPlanOption> best_by_provider;
    // The cheapest feasible option whose price is trusted (verified, dated, not older than
    // max_price_age_days); nullopt when none is.
    std::optional<TrainingPlanOption> cheapest_trusted;
    // The cheapest feasible option of all when its price is stale and `cheapest` passed it
    // over for one that is not (the reasoning names it); nullopt otherwise.
    std::optional<TrainingPlanOption> cheaper_stale;
    // = cheapest, or cheapest_trusted when cheapest's price is not trusted and
    // cheapest_trusted costs at most kTrustedPriceToleranceFraction more.
    std::optional<TrainingPlanOption> recommendation;
    std::string reasoning;
    std::vector<BindingConstraint> binding_constraints;  // only when nothing is feasible
    // The wall-clock ceiling applied (max_wall_clock_days in days; nullopt: none) and, when it
    // left out every option, the fastest option each provider has (usually its largest
    // cluster), fastest first: what the reasoning offers in words.
    std::optional<double> max_wall_clock_days;
    std::vector<TrainingPlanOption> beyond_max_wall_clock;
    // Each names what it concerns: /recommendation/offering, /fastest/offering or /data.
    std::vector<FieldError> warnings;
    std::optional<BudgetView> budget;
    std::string catalog_version;
    std::size_t offerings_considered = 0;
    std::size_t hardware_shapes = 0;  // distinct (accelerator, per node, network)
    std::size_t estimates = 0;        // estimator calls made
    // Offerings (or options) left out, by reason: "filtered" (constraints),
    // "price_type_not_requested" (commitments not named in price_types),
    // "not_for_training" (accelerator offered for inference only), "precision_unsupported",
    // "does_not_fit" (at no searched node count), "over_capacity" (offerings none of whose
    // searched node counts one customer can get, options above that limit, capacity-block
    // runs longer than the longest block), "spot_impractical" (spot options over 1000x the
    // failure-free time), "over_max_wall_clock" (options expected to run longer than
    // max_wall_clock_days), "unverified_price" and "price_too_old" (constraints.verified_only,
    // constraints.max_price_age_days).
    std::vector<std::pair<std::string, std::size_t>> skipped;
    // One message per skip reason, to say why (e.g. how much memory is missing).
    std::vector<std::pair<std::string, std::string>> skipped_examples;
    Assumptions assumptions;
};

// The default node-count ladder for nodes of `per_node` accelerators: powers of two (the
// counts the layout search divides into tensor x pipeline x data best) whose accelerator
// total lies in [min_total_accelerators, max_total_accelerators], ascending. PlanTraining stops a
// shape's ladder early when the batch cannot feed more replicas or when doubling the nodes gains
// less than 5 % speed.
std::vector<int> CandidateNodeCounts(int per_node, int min_total_accelerators,
                                     int max_total_accelerators);

// Plans a training run over every matching offering in `catalog`. Offerings that share a
// hardware shape are estimated once per node count (one-node estimates are shared by shapes
// that differ only in scale-out network), then priced, so the work is (shapes x node
// counts) estimates plus one pass over the offerings. A workload the
// estimator rejects for reasons other than fit or precision is returned as its error.
// `reference` supplies capacity limits, storage/egress prices and accelerator workloads; an
// empty one leaves every offering at one independent instance (the conservative default).
// Unknown accelerator, provider or region ids in the constraints are kInvalidArgument with
// close matches.
[[nodiscard]] Result<TrainingPlan> PlanTraining(const TrainingPlanRequest& request,
                                                const Catalog& catalog,
                                                const PlanReference& reference = {});

// A spot plan whose job length is a training run: job_hours is the estimator's wall-clock
// time for `workload` on `request.nodes` nodes of the spot offering's hardware. Needs
// spot_offering_id and no job_hours (kInvalidArgument otherwise). Estimator errors are
// re-rooted under /workload (hardware fit problems under /nodes).
[[nodiscard]] Result<SpotPlan> PlanSpotForTraining(SpotPlanRequest request,
                                                   const estimate::TrainingRequest& workload,
                                                   const Catalog& catalog);

// The quantile factor exp(z * sigma) for the 90th percentile given spreads as above.
double CostQuantileFactor(double time_spread_fraction, double price_spread_fraction);

// The share of runs that a log-normal run time around `expected_hours` (p90/p50 - 1 of
// `time_spread_fraction`, as above) puts past `deadline_hours`: what the estimate's own error
// alone costs a deadline (1 - RunTimeDeadlineProbability), said beside the probabilities that
// count it.
double RunTimeLateFraction(double expected_hours, double deadline_hours,
                           double time_spread_fraction);
// The run-time factor's sigma for a spread fraction: ln(1 + spread) / z90 (p90/p50 - 1 of
// the log-normal is the spread).
double RunTimeSigma(double time_spread_fraction);

// "that spread alone puts about X% of <runs> past the deadline", X from RunTimeLateFraction to
// 0.1 %; empty without a spread or where X rounds to 0.0 (nothing worth a sentence).
std::string RunTimeLateText(double expected_hours, double deadline_hours,
                            double time_spread_fraction, std::string_view runs);

using estimate::EfficiencySpreadDefaultSource;

}  // namespace gpucost::pricing::plan
