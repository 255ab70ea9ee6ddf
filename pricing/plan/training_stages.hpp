#pragma once

// The stages of a training plan, in order (training_plan.cpp runs them):
//   candidates (training_candidates.cpp)  which offerings, grouped by hardware shape
//   estimate   (training_candidates.cpp)  each shape once per node count
//   price      (training_pricing.cpp)     each offering x node count billed as sold
//   constrain  (training_pricing.cpp)     what each option violates
//   rank       (training_rank.cpp)        cheapest, fastest, Pareto front, page, per provider
//   explain    (training_explain.cpp)     recommendation, reasoning, warnings, budget, echo

#include <array>
#include <cstddef>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "pricing/catalog.hpp"
#include "pricing/estimate/cluster.hpp"
#include "pricing/plan/spot.hpp"
#include "pricing/plan/training_plan.hpp"
#include "pricing/plan_reference.hpp"

namespace gpucost::pricing::plan::training_stages {

// Counts of what was left out, by reason, in a fixed order, with one example message each.
class Tally {
public:
    Tally();
    void Add(const std::string& reason, std::size_t count = 1);
    void Example(const std::string& reason, const std::string& text);
    const std::vector<std::pair<std::string, std::size_t>>& counts() const { return counts_; }
    const std::vector<std::pair<std::string, std::string>>& examples() const { return examples_; }

private:
    std::vector<std::pair<std::string, std::size_t>> counts_;
    std::vector<std::pair<std::string, std::string>> examples_;
};

// Offerings estimated together: same accelerator, accelerators per node and network between
// nodes. Independent hosts get kIndependentHostsGbitPerS whatever their NIC says.
struct ShapeKey {
    std::string accelerator;
    int per_node = 1;
    double scale_out = -1;  // -1 = not published (estimator's family default)
    bool independent_hosts = false;
    bool operator<(const ShapeKey& o) const {
        return std::tie(accelerator, per_node, scale_out, independent_hosts) <
               std::tie(o.accelerator, o.per_node, o.scale_out, o.independent_hosts);
    }
};

// `capacity` points into Candidates::capacities: offerings of one provider, instance type
// and price type share one record, so selecting copies none per offering. The rest is what
// pricing reads of the offering, copied while it is selected: at 20,000 offerings walking
// the offerings' own memory is most of a plan's per-offering time, so it is walked once.
struct CandidateOffering {
    const Offering* offering = nullptr;
    const OfferingCapacity* capacity = nullptr;
    double usd_per_hour = 0;  // offering->price.usd_per_hour
    PriceType price_type = PriceType::kOnDemand;
    std::optional<double> spot_rate_per_instance;  // SpotRate
    std::optional<long long> price_age_days;       // from the request's today
    PriceState price_state = PriceState::kCurrent;
};

struct ShapeGroup {
    Accelerator accelerator;  // the catalog's record, looked up once when selecting
    std::vector<CandidateOffering> offerings;
    int max_instances = 1;  // largest capacity among them: the ladder's top
};

struct Candidates {
    std::map<ShapeKey, ShapeGroup> shapes;
    std::size_t offerings_considered = 0;
    // The capacity records the candidates point to (a deque: they never move).
    std::deque<OfferingCapacity> capacities;
};

// Stage 1: offerings the constraints allow, whose accelerator is offered for training, with
// their capacity; the rest counted under `filtered`, `price_type_not_requested`,
// `not_for_training`.
Candidates SelectCandidates(const TrainingPlanRequest& request, const Catalog& catalog,
                            const PlanReference& reference, Tally& tally);

struct ShapeRun {
    int nodes = 0;
    double wall_clock_hours = 0;
    double mfu = 0;
    estimate::ParallelLayout layout;
};

struct ShapeEstimates {
    std::map<ShapeKey, std::vector<ShapeRun>> runs;
    std::size_t estimates = 0;
    std::optional<estimate::ClusterSpec> first_cluster;  // for the workload-level echo
    bool mixture_of_experts = false;  // the workload's model, as derived for the estimates
};

// Stage 2: each shape over its node-count ladder (capped by the shape's capacity). A
// workload the estimator rejects for reasons other than fit or precision is the error.
[[nodiscard]] Result<ShapeEstimates> EstimateShapes(const TrainingPlanRequest& request,
                                                    const Candidates& candidates, Tally& tally);

// Constants of the pricing stage, resolved from the request and defaults.
struct PricingSettings {
    double checkpoint_hours = 0;
    double restart_hours = 0;
    double efficiency_spread = 0;
    // sigma of the run-time factor the deadline probabilities count (RunTimeSigma).
    double run_time_sigma = 0;
    bool moe_efficiency_spread = false;  // the default taken was kMoeEfficiencySpreadFraction
    double price_spread = 0;
    double spot_price_spread = 0;
    double factor_fixed = 1;
    double factor_spot = 1;
    double max_price_age_days = kDefaultMaxPriceAgeDays;
    double deadline_confidence = kDefaultDeadlineConfidence;
    double budget_confidence = kDefaultBudgetConfidence;
};
// `mixture_of_experts`: the workload's model is one (ShapeEstimates), which sets the default
// efficiency spread.
PricingSettings SettingsFor(const TrainingPlanRequest& request, bool mixture_of_experts);

// Interruptions per instance-hour of a spot offering: its Spot Advisor bucket, or the worst
// bucket when it has none; nullopt for other price types.
std::optional<double> SpotRate(const Offering& o);

// Commitments and capacity blocks: paid for up front, whatever the run's length.
bool IsCommitted(PriceType type);

// Hours one instance is billed for when the job takes `hours`: the hours themselves (on
// demand, spot), whole blocks (capacity block, at least min_block_hours) or whole terms.
double BilledHours(PriceType type, double hours, const OfferingCapacity& capacity);

// Storage kept for `expected_hours` (billed as GB-months) and egress once, at `price`: each
// nullopt when the request gives no such size. Options sum them (data_cost_usd); the budget
// view spreads them by month.
struct DataCosts {
    std::optional<double> storage_usd;
    std::optional<double> egress_usd;
    double TotalUsd() const { return storage_usd.value_or(0) + egress_usd.value_or(0); }
};
DataCosts DataCostsFor(const TrainingDataSizes& data, const DataPrice& price,
                       double expected_hours);

// The ceiling on expected wall-clock days: the request's max_wall_clock_days, else
// kDefaultMaxWallClockDays without a deadline, else none.
std::optional<double> WallClockCeilingDays(const TrainingPlanRequest& request);

// Between stages 3 and 4: options expected to run past the ceiling are removed and counted
// (over_max_wall_clock, with an example); returns the fastest removed option per
// provider, fastest first.
std::vector<TrainingPlanOption> ApplyWallClockCeiling(const TrainingPlanRequest& request,
                                                      std::vector<TrainingPlanOption>& options,
                                                      Tally& tally);

// ApplyWallClockCeiling one option at a time.
class WallClockCeiling {
public:
    WallClockCeiling(const TrainingPlanRequest& request, Tally& tally);
    // True (and counted) when `o` is expected to run past the ceiling.
    bool Over(const TrainingPlanOption& o);
    // The fastest option over it per provider, fastest first; writes the tally's example.
    std::vector<TrainingPlanOption> Finish();

private:
    std::optional<double> days_;
    Tally& tally_;
    std::vector<TrainingPlanOption> fastest_per_provider_;
    std::map<std::string, std::size_t> index_;  // provider -> position in fastest_per_provider_
};

// The interrupted run a spot option's expected time describes: its wall-clock hours of work,
// its cluster rate, Daly's interval and the settings' checkpoint and restart times (no
// interruptions for other price types).
InterruptedRun RunOf(const TrainingPlanOption& o, const PricingSettings& settings);

// Probabilities of finishing by the request's deadline (TrainingPlanOption::
// deadline_probability). One costs O(cells^2 log stretches) (SpotDeadlineProbability), so they
// are kept per (work hours, cluster rate), which offerings of one shape and bucket share, and
// computed only where a cheap lower bound cannot settle the deadline or an option is shown.
// REQUIRES: the request has a deadline (every member but the constructor).
class DeadlineProbabilities {
public:
    DeadlineProbabilities(const TrainingPlanRequest& request, const PricingSettings& settings);
    // The probability itself, counting the estimate's run-time factor (settings'
    // run_time_sigma): spot options from the distribution of RunOf(o) scaled by it
    // (SpotDeadlineProbability with sigma), others Phi(ln(deadline / expected) / sigma)
    // (RunTimeDeadlineProbability; 1 or 0 by the expected time at sigma 0).
    double Of(const TrainingPlanOption& o);
    // A lower bound on Of(o). Others than spot: Of(o) itself (O(1)). Spot, of the run alone
    // (InterruptedLowerBound): 0 when the failure-free run is late; else the largest of "no
    // interruption at all" (e^(-rate T0)), Markov's inequality on the lost time
    // (1 - (E[T] - T0) / (D - T0)), Cantelli's with its variance, and Chernoff's. The first
    // three are O(1) and tried first; Chernoff's (a search over theta) only when they fall
    // short of `target`, so the answer is at least `target` whenever the four together are.
    // With a run-time factor: the best over z in kRunTimeBoundSigmas of Phi(z) times the
    // run's O(1) bounds against deadline x e^(-sigma z) (Chernoff's is left to the
    // distribution, which costs about as much on the run-time grid).
    double LowerBound(const TrainingPlanOption& o, double target) const;
    // Sets o.deadline_probability where unset (a no-op without a deadline).
    void Fill(TrainingPlanOption& o);

private:
    // The bound above for `run` alone (laid out as `layout`, its hours taken as exact) against
    // `deadline_hours`; Chernoff's only with `chernoff`.
    static double InterruptedLowerBound(const InterruptedRun& run, const CheckpointLayout& layout,
                                        double expected_hours, double deadline_hours, double target,
                                        bool chernoff);
    std::optional<double> deadline_hours_;
    const PricingSettings& settings_;
    std::map<std::pair<double, double>, double> cache_;
};

// The probability that o's total cost (compute + data) stays within `budget_usd`
// (TrainingPlanOption::budget_probability): the compute cost is the log-normal its p10-p90
// show, median expected_cost_usd and 90th percentile cost_usd_p90 (the run-time spread and
// the spot or list price spread); commitments and capacity blocks, billed whole whatever the
// run's length, 1 when the expected total fits, else 0.
double BudgetProbability(const TrainingPlanOption& o, double budget_usd);

// Stage 4: whether each option meets the deadline and the budget (meets_deadline,
// within_budget, each judged by its probability against its confidence). An option meets the
// deadline with probability >= the confidence; its deadline_probability is set here when the lower
// bound falls short of the confidence (else left to Fill for shown options). The violations
// themselves are listed by ListViolations only where they are read (options shown, the binding
// constraints): most options miss a constraint and are only counted.
void Constrain(const TrainingPlanRequest& request, const PricingSettings& settings,
               DeadlineProbabilities& probabilities, std::vector<TrainingPlanOption>& options);

// Constrain one option at a time.
class ConstraintJudge {
public:
    ConstraintJudge(const TrainingPlanRequest& request, const PricingSettings& settings,
                    DeadlineProbabilities& probabilities);
    void Judge(TrainingPlanOption& o);
    // Judge in two steps: the deadline depends only on the run (hours and spot rate), which
    // the offerings of one price class share; the budget on the offering's own price.
    void JudgeDeadline(TrainingPlanOption& o);
    // With `probability_needed` false, a spot option's budget may be judged without its
    // budget_probability (left unset for FillBudget) when a ratio judged before settles it.
    void JudgeBudget(TrainingPlanOption& o, bool probability_needed = true);
    // Sets o.budget_probability where JudgeBudget left it unset (a no-op without a budget).
    void FillBudget(TrainingPlanOption& o) const;

private:
    bool Cleared(const TrainingPlanOption& o);
    std::optional<double> SpotBudgetRatio(const TrainingPlanOption& o) const;
    const TrainingPlanConstraints& constraints_;
    const PricingSettings& settings_;
    DeadlineProbabilities& probabilities_;
    double confidence_;
    double target_;
    std::map<std::pair<double, double>, bool> cleared_spot_runs_;
    // A spot option's budget probability rises with the ratio of its compute budget to its
    // expected compute cost (log-normal cost). Where one ratio's probability came out clearly
    // above (below) the confidence, every larger (smaller) ratio is judged the same without
    // the log and erfc: at 20,000 offerings most spot options are settled so.
    double spot_sigma_ = 0;
    double settled_within_ratio_ = std::numeric_limits<double>::infinity();
    double settled_outside_ratio_ = -std::numeric_limits<double>::infinity();
};

// Sets o.violations from its flags (deadline_hours or deadline_confidence, then budget_usd or
// budget_confidence).
// REQUIRES: Constrain has judged `o`.
void ListViolations(const TrainingPlanRequest& request, TrainingPlanOption& o);

// After stage 5: deadline_probability and budget_probability on every option the plan shows.
void FillShownProbabilities(DeadlineProbabilities& probabilities, const ConstraintJudge& judge,
                            TrainingPlan& plan);

// A price the recommendation can lean on: verified, with a known date, at most
// `max_price_age_days` old (an unknown age counts as fresh).
bool TrustedPrice(const TrainingPlanOption& o, double max_price_age_days);

// Order within one criterion; ties break by the other criterion, then id and nodes.
bool Before(const TrainingPlanOption& a, const TrainingPlanOption& b, TrainingPlanSort sort);

// Stage 5: summaries over the feasible options, the page, and when nothing is feasible,
// which constraints bind.
// When no option meets every constraint: for each violated constraint, how far relaxing it
// would have to go. Among options that break only this constraint, the best value: relaxed
// to it, that option becomes feasible. When no option breaks it alone, the best value of all
// options, including those that meet it. If some option meets it, it binds only together
// with another constraint and is not listed: "the fastest option takes 729 h" would be false
// when a 95 h option exists that is over the budget. Kept as a few running figures, so the
// options themselves need not be.
class BindingTally {
public:
    explicit BindingTally(const TrainingPlanRequest& request);
    // One option that misses a constraint (judged by stage 4).
    void Add(const TrainingPlanOption& o);
    // The binding constraints over every option added, by name.
    std::vector<BindingConstraint> Result() const;

private:
    static constexpr std::array<const char*, 4> kNames = {"budget_usd", "budget_confidence",
                                                          "deadline_confidence", "deadline_hours"};
    static constexpr std::size_t kBudgetSlot = 0;
    static constexpr std::size_t kBudgetConfidenceSlot = 1;
    static constexpr std::size_t kConfidenceSlot = 2;
    static constexpr std::size_t kHoursSlot = 3;
    struct Slot {
        bool violated = false;
        double limit = 0;
        bool others_met = false;
        double best_value = std::numeric_limits<double>::infinity();  // signed: lower is better
        double reached = std::numeric_limits<double>::infinity();     // ReachedValue, all options
    };
    void Note(std::size_t slot, double limit, double value, bool only_this);
    const TrainingPlanConstraints& constraints_;
    std::array<Slot, 4> slots_{};
};

// Stage 4 over the options stage 3 prices, one at a time: options expected to run past the
// ceiling are counted; the others are judged, and kept when feasible (or when the request
// lists the infeasible ones), else counted and their figures noted for the binding
// constraints. At 20,000 offerings that keeps thousands of options, not 60,000.
struct OptionJudging {
    OptionJudging(const TrainingPlanRequest& request, const PricingSettings& settings,
                  DeadlineProbabilities& probabilities, Tally& tally);
    // The whole of stage 4 for one option.
    void Take(TrainingPlanOption& o);
    // Take in two steps: the ceiling and the deadline (false when over the ceiling), then
    // the budget and what is kept. TakeBudgetOfJudged is the second step for an option whose
    // deadline fields were copied from another option of the same run and price class.
    bool TakeUntilBudget(TrainingPlanOption& o);
    void TakeBudget(TrainingPlanOption& o);
    void TakeBudgetOfJudged(TrainingPlanOption& o);

    WallClockCeiling ceiling;
    ConstraintJudge judge;
    BindingTally binding;
    bool keep_infeasible = false;
    std::vector<TrainingPlanOption> kept;
    std::size_t within_ceiling = 0;
    std::size_t infeasible_not_kept = 0;
    bool owned_covers_some = false;
    bool any_feasible = false;
};

// Stage 3: every (offering, node count) within the offering's capacity, billed as sold, with
// the storage and egress of `data` at the provider's list prices, handed to `judging`;
// over-capacity, unsold sizes and impractical spot options counted. Offerings of one shape
// that share their capacity record, price type and spot rate (a price class: the same
// instance sold in more regions) differ only in their price, date, id and provider, so what
// does not depend on those (the skips, the hours, the deadline's verdict) is worked out once
// per class and node count and the rest per offering; every option is judged as if priced
// alone, in the same order.
void PriceOptions(const TrainingPlanRequest& request, const Candidates& candidates,
                  const ShapeEstimates& estimates, const PricingSettings& settings,
                  const PlanReference& reference, Tally& tally, OptionJudging& judging);

// `options` are those judged (stage 4) and kept: the feasible ones, and the rest when the
// request lists them (include_infeasible); `infeasible_not_kept` counts the others, and
// `binding` has seen every option that misses a constraint.
void Rank(const TrainingPlanRequest& request, const std::vector<TrainingPlanOption>& options,
          TrainingPlan& plan, std::size_t infeasible_not_kept, const BindingTally& binding);

// Stage 6: recommendation and reasoning, warnings, budget view and the assumptions echo.
void Explain(const TrainingPlanRequest& request, const Catalog& catalog,
             const PlanReference& reference, const PricingSettings& settings,
             const ShapeEstimates& estimates, TrainingPlan& plan);

}  // namespace gpucost::pricing::plan::training_stages
