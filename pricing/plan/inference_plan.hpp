#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "pricing/assumption.hpp"
#include "pricing/catalog.hpp"
#include "pricing/deadline.hpp"
#include "pricing/error.hpp"
#include "pricing/estimate/inference.hpp"
#include "pricing/offering.hpp"
#include "pricing/plan/budget.hpp"
#include "pricing/plan_reference.hpp"
#include "pricing/price_age.hpp"
#include "pricing/price_book.hpp"

namespace gpucost::pricing::plan {

// Share of a replica's measured throughput planned for, leaving headroom for bursts and
// uneven load: capacity is sized so that average load is this fraction of the maximum.
// Judgement (serving teams commonly target 60-80 % average utilisation).
inline constexpr double kDefaultServingUtilization = 0.7;
// Most concurrent requests per replica the planner considers (the engine's max_num_seqs and
// the KV cache may cap lower).
inline constexpr int kMaxPlanBatchSize = 1024;
// Spare instances added when serving on spot, as a fraction of the instances the traffic needs
// (at least one). Counted in instances, not replicas: a reclaim takes a whole instance with
// every replica on it, so spares on the instances already there protect nothing. Judgement: a
// reclaim gives about 2 minutes' notice (AWS) while starting a replacement (instance,
// container, weights) takes about kDefaultRestartMinutes, and reclaims often take several
// instances of one pool together.
inline constexpr double kSpotServingSpareInstanceFraction = 0.25;
inline constexpr double kSecondsPerMonth = 730.0 * 3600.0;
// How far a replica's real throughput may stray from the estimate, measured as the training
// plans' kMoeEfficiencySpreadFraction is: the 80th percentile of |ln(estimated / published)|
// (the two-sided p10..p90) over the serving rows of the frontier validation set (each row's
// published layout; tests/data/frontier/serving.jsonl, docs/estimator.md), as exp(.) - 1, the
// p90/p50 - 1 of a log-normal, one figure per class a plan falls in (ServingErrorClass).
// Dense models: 50 rows of all three splits (Hopper, MI300X and Blackwell; most within 15 %).
// Mixture-of-experts models: the 44 fresh rows not served weight-only (TensorRT-LLM's
// Blackwell and H200 tables), which the estimator reads up to 2.2x too fast: the spread is
// that wide because the estimate is that far off there. Weight-only serving (4-bit weights,
// wider math: a request's weight_precision or a quantised checkpoint read as stored): the 16
// fresh rows served so (NVIDIA Model Optimizer's INT4 and W4A8 AWQ table on H200, gpt-oss on
// H200), every one 1.18-2.18x too fast: the ideal dequantising GEMM is not what those
// kernels reach at batch 8 and above.
inline constexpr double kServingThroughputSpreadFraction = 0.21;
inline constexpr double kMoeServingThroughputSpreadFraction = 0.51;
inline constexpr double kWeightOnlyServingThroughputSpreadFraction = 0.86;
// The traffic_confidence a request may ask: from the median (the estimate itself) to 0.999.
inline constexpr double kMinTrafficConfidence = 0.5;
inline constexpr double kMaxTrafficConfidence = 0.999;
// Bound of the confidence headroom's search, as its natural logarithm (a headroom of e^64,
// far beyond what the request's bounds can ask: spread 10 at confidence 0.999 asks e^5.8).
inline constexpr double kMaxConfidenceHeadroomLog = 64;
// Calendar months a serving budget view covers from its start date unless the request says
// (budget_months): a budget year; judgement. The FOCUS forecast covers as many (forecast.hpp).
inline constexpr int kDefaultServingBudgetMonths = 12;
// Most months a serving budget view covers: five years, the rent-vs-buy planner's default
// depreciation life (kDefaultDepreciationYears), past which a price today says little.
inline constexpr int kMaxServingBudgetMonths = 60;
// Hours a day a serving option is paid for: a service is up around the clock.
inline constexpr double kServingHoursPerDay = 24.0;
// Pipeline stages one replica may span, one whole instance each (tensor parallel over the
// instance): tried when one instance cannot hold the model, or when fewer instances serve the
// traffic that way (the KV cache freed by splitting the weights runs more sequences).
// DeepSeek-V3 (671B) in FP8 needs 2 instances of 8 x 80 GB, in BF16 4; 8 covers BF16 on
// 8 x 40 GB. vLLM serves multi-node replicas as tensor parallel within a node and pipeline
// parallel across nodes (docs.vllm.ai, "Distributed inference and serving").
inline constexpr int kMaxInstancesPerReplica = 8;
// MoE models may instead spread a replica's routed experts over 2, 4 ... kMaxInstancesPerReplica
// whole instances (expert parallel over all their accelerators, attention data parallel on each:
// estimate::InferenceRequest::expert_parallel), as DeepSeek serves V3 (prefill EP32 over 4
// nodes, decode EP144 over 18: "DeepSeek-V3/R1 Inference System Overview", 2025) and SGLang on
// 96 H100 (LMSYS blog, May 2025). Tried on the same full-node offerings and taken on the same
// rule as pipeline stages.

// Traffic to serve: requests per second, or total (input + output) tokens per day, which
// becomes requests/s = tokens_per_day / 86400 / (input_tokens + output_tokens).
struct InferenceTraffic {
    std::optional<double> requests_per_second;
    std::optional<double> tokens_per_day;
};

struct InferencePlanRequest {
    // Model, precision, input/output tokens per request, estimator overrides. batch_size and
    // tensor_parallel are chosen by the planner.
    estimate::InferenceRequest workload;
    InferenceTraffic traffic;
    std::optional<double> max_time_to_first_token_ms;
    std::optional<double> max_inter_token_latency_ms;
    std::optional<double> utilization;
    // p90 / p50 - 1 of a replica's real throughput against the estimate, for
    // traffic_met_probability (a team that measured its own replica knows it better); default
    // kServingThroughputSpreadFraction, kMoeServingThroughputSpreadFraction for a MoE model.
    std::optional<double> throughput_spread_fraction;
    // Size each option so that the replicas the traffic needs carry it with at least this
    // probability under that spread (its traffic_met_probability), where utilisation alone
    // would rent fewer; unset: sized by utilisation only.
    std::optional<double> traffic_confidence;
    std::vector<std::string> providers;
    std::vector<PriceType> price_types;
    std::vector<std::string> regions;
    std::vector<std::string> accelerators;
    // Prices to trust, as training plans take them: leave out offerings whose current price is
    // unverified (skipped.unverified_price), or older than max_price_age_days on `today`
    // (skipped.price_too_old; needs `today`, YYYY-MM-DD, which the caller sets).
    bool verified_only = false;
    std::optional<double> max_price_age_days;
    // Let a stale price be the recommendation (RecommendInference).
    bool include_stale = false;
    std::string today;
    // Optional API price to compare with, USD per million tokens.
    std::optional<double> api_usd_per_million_input_tokens;
    std::optional<double> api_usd_per_million_output_tokens;
    std::size_t limit = 20;
    // The budget view (ServingBudget): its first day (YYYY-MM-DD; default `today`) and the
    // calendar months it covers (default kDefaultServingBudgetMonths).
    std::optional<std::string> start_date;
    std::optional<int> budget_months;
    // Capacity already owned (a price book's owned_capacity, set by the caller from the book,
    // validated there): each option runs its nodes around the clock over the budget window,
    // and the hours owned entries of its offering cover are paid already (ServingOwnedUse).
    std::vector<OwnedCapacity> owned_capacity;
    // When the caller stops waiting: checked before each hardware shape is sized (the plan's
    // costly step) and before the options are ranked; past it the plan is kBudgetExceeded.
    // Default: never.
    Deadline deadline;

    // kInvalidArgument naming the field (`/traffic/...`, `/latency/...`, `/api_price/...`).
    [[nodiscard]] Status Validate() const;
};

// What owned capacity covers of an option run around the clock over the budget window
// ([start_date, start_date + budget_months), the ServingBudget view's): the covered
// instance-hours are paid whether used or not (sunk at the commitment's own rate), so the
// option's monthly_cost_usd and usd_per_million_* are the marginal figures (the uncovered share
// of the window), which is what ranks; as training's OwnedUse makes expected_cost_usd marginal.
struct ServingOwnedUse {
    double instance_hours = 0;          // of the window, covered by owned capacity
    double window_instance_hours = 0;   // nodes x the window's hours
    double sunk_usd = 0;                // the covered hours at the commitments' usd_per_hour
    double marginal_cost_usd = 0;       // the window's bill for the uncovered hours
    double without_owned_cost_usd = 0;  // the window's bill had nothing been owned
    double without_owned_monthly_cost_usd = 0;
    double without_owned_usd_per_million_tokens = 0;
    // The marginal bill plus the owned hours the option uses at the commitment's rate.
    double FullyLoadedCostUsd() const { return marginal_cost_usd + sunk_usd; }
};

// One offering sized for the traffic. Replicas of `tensor_parallel` x `pipeline_parallel`
// accelerators each run `batch_size` sequences; whole instances are rented.
struct InferencePlanOption {
    const Offering* offering = nullptr;  // into the catalog given to PlanInference
    int tensor_parallel = 1;
    // Pipeline stages per replica, one instance each (1: a replica within one instance).
    int pipeline_parallel = 1;
    // Ranks the routed experts of a MoE replica are spread over (all its accelerators, attention
    // data parallel on each; tensor_parallel and pipeline_parallel are then 1); 1 otherwise.
    int expert_parallel = 1;
    int instances_per_replica = 1;  // what to rent together for one replica
    int batch_size = 1;             // concurrent requests per replica (continuous batching)
    int replicas = 0;               // including spare_replicas
    int spare_replicas = 0;         // spot only
    // Why the spares (spot) and why a replica spans instances (instances_per_replica > 1).
    std::optional<std::string> reasoning;
    int nodes = 0;               // instances rented
    int max_instances = 0;       // most instances one customer can get (capacity rule)
    int total_accelerators = 0;  // nodes x accelerators per instance
    double time_to_first_token_ms = 0;
    double inter_token_latency_ms = 0;
    double output_tokens_per_second_per_replica = 0;
    double capacity_requests_per_second = 0;  // without spares, at the planned utilisation
    // Chance that the replicas the traffic needs (without spares) carry its average load at
    // full throughput, the estimate taken as the median of a log-normal with the serving
    // spread: Phi(ln(needed x per-replica throughput / traffic) / sigma).
    double traffic_met_probability = 0;
    // Nodes x the price x kHoursPerMonth; with owned capacity the marginal month: the
    // uncovered share of the budget window's hours (owned) at that rate.
    double monthly_cost_usd = 0;
    double usd_per_million_input_tokens = 0;
    double usd_per_million_output_tokens = 0;
    double usd_per_million_tokens = 0;  // blended: monthly cost / (input + output) tokens a month
    std::optional<double> api_monthly_cost_usd;
    std::optional<double> savings_vs_api_fraction;  // 1 - monthly / api monthly
    // Set when owned capacity covers some of the option's budget window; nullopt otherwise.
    std::optional<ServingOwnedUse> owned;
    // Whole days from the price's as_of to today (UTC), as training options give it; set by
    // the caller, which knows today (null when a date does not parse).
    std::optional<long long> price_age_days;
    PriceState price_state = PriceState::kCurrent;  // set with price_age_days
};

struct InferencePlan {
    double requests_per_second = 0;
    double output_tokens_per_second = 0;
    std::vector<InferencePlanOption> options;  // cheapest monthly first, `limit` of them
    std::size_t total_count = 0;
    std::vector<std::pair<std::string, std::size_t>> skipped;  // reason -> offerings
    std::vector<std::pair<std::string, std::string>> skipped_examples;
    std::size_t estimates = 0;
    // About the workload: a context (input + output tokens) past the model's max_context.
    std::vector<FieldError> warnings;
    Assumptions assumptions;
};

// An option's cash by calendar month, as a training plan's budget view states it (budget.hpp):
// the option runs every day of [start_date, end_date), budget_months calendar months, at its
// instances' price around the clock; each month is its days' share of the total, so a 31-day
// month costs more than a 28-day one (monthly_cost_usd is the 730-hour average month).
struct ServingBudgetView {
    std::string start_date;
    std::string start_date_source;      // "request" or "today"
    std::string end_date;               // the day after the last day paid for
    int months = 0;                     // budget_months
    double usd_per_day = 0;             // nodes x the instance's USD per hour x kServingHoursPerDay
    std::vector<MonthlySpend> monthly;  // to the cent, adding up to total_usd
    double total_usd = 0;               // days x usd_per_day, to the cent
    // With owned capacity covering the option: those hours at the commitment's rate, paid
    // whether used or not, so not in monthly or total_usd (the marginal cash: the uncovered
    // hours at usd_per_day's rate); to the cent.
    std::optional<double> owned_usd;
};

// The budget view of `option` (the recommendation) for `request`'s start date and months, the
// hours request.owned_capacity covers left out of its months (owned_usd instead);
// nullopt when neither start_date nor request.today is a date.
std::optional<ServingBudgetView> ServingBudget(const InferencePlanRequest& request,
                                               const InferencePlanOption& option);

// For each matching offering (spot only when `price_types` names it) whose accelerator is
// offered for inference (`reference` workloads; `not_for_inference` otherwise): every
// tensor-parallel degree (power of two within one instance) whose weights and KV cache fit,
// and, on instances of a full node (estimate::DefaultAcceleratorsPerNode), replicas of 2, 4 ...
// kMaxInstancesPerReplica instances (pipeline stages, tensor parallel over each whole
// instance; the instance's scale_out_gbit_per_s carries the hops), and for MoE models replicas
// expert parallel over 2, 4 ... kMaxInstancesPerReplica instances (the same network carries
// each MoE layer's dispatch and combine);
// for each, of the power-of-two concurrencies per replica (<= kMaxPlanBatchSize and the
// engine's running limit) whose continuous-batching TTFT and ITL meet the targets, the one
// with the most output tokens/s
// (EstimateInference's `serving`); the degree needing the fewest instances wins (a spanning
// replica only on strictly fewer whole instances, so models that fit one instance keep their
// answer unless spanning is cheaper; the option's reasoning says which). Spot spares are
// whole replicas. Options
// missing a target are skipped and counted (`latency_target_unmet`), as are options needing
// more instances than one customer can get (`reference` capacity; `over_capacity`): replicas
// are independent, so the hosts need not form a cluster, but the provider's limit holds. Spot
// options carry spare replicas. Ranked by monthly cost (with owned capacity the marginal one,
// which orders as the marginal cost over the budget window: the window is every option's),
// ties by ITL, TTFT, then offering id.
// Cost per million tokens splits each request's cost between prefill (input) and decode
// (output) by their share of the request's FLOPs (estimate::ServedRequestFlops), as every
// engine step runs both kinds together; the blended figure divides by input + output.
// Instances sharing (accelerator, count) are estimated once. With owned capacity
// (request.owned_capacity) each option's monthly and per-token figures are the marginal ones
// over the budget window (ServingOwnedUse), so a fleet on capacity already paid for ranks by
// what it adds to the bill; when owned entries cover none of the options planned, a warning
// on /price_book/owned_capacity says so.
[[nodiscard]] Result<InferencePlan> PlanInference(const InferencePlanRequest& request,
                                                  const Catalog& catalog,
                                                  const PlanReference& reference);

}  // namespace gpucost::pricing::plan
