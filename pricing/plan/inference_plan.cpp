#include "pricing/plan/inference_plan.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "pricing/calendar.hpp"
#include "pricing/estimate/collectives.hpp"
#include "pricing/field_checker.hpp"
#include "pricing/money.hpp"
#include "pricing/plan/budget.hpp"
#include "pricing/plan/catalog_lookup.hpp"
#include "pricing/plan/forecast.hpp"
#include "pricing/plan/price_trust.hpp"
#include "pricing/plan/spot.hpp"
#include "pricing/plan/training_plan.hpp"

namespace gpucost::pricing::plan {
namespace {

constexpr double kMaxRequestsPerSecond = 1e6;
constexpr double kMaxTokensPerDay = 1e13;
// Traffic floors: one request in about 11.6 days, one token a day. Below them a denormal rate
// made cost per token infinite (written as null); no service is sized for less.
constexpr double kMinRequestsPerSecond = 1e-6;
constexpr double kMinTokensPerDay = 1.0;
constexpr double kMaxInstances = 1e6;

// The best way to serve on one instance shape (accelerator, accelerators per instance).
struct ShapeChoice {
    bool ok = false;
    std::string reason;   // skip reason when !ok
    std::string example;  // estimator message for it
    int tensor_parallel = 1;
    int pipeline_parallel = 1;
    int expert_parallel = 1;        // routed experts over this many ranks (attention DP)
    int instances_per_replica = 1;  // pipeline stages or the instances of the EP ranks
    std::string span_reason;        // why a replica spans instances
    int batch_size = 1;
    estimate::InferenceEstimate estimate;
    double replicas_per_instance = 1;  // 1 / instances_per_replica for a spanning replica
    double instances = 0;              // fractional before rounding up, for comparing degrees
};

// How the plan sizes every option, worked out once: the planned utilisation, and the capacity
// rented over the traffic at the estimate's throughput, as a multiple (1 / utilisation, or the
// traffic_confidence's headroom where that is larger).
struct Sizing {
    double utilization = kDefaultServingUtilization;
    double headroom = 1.0 / kDefaultServingUtilization;
    double spread = kServingThroughputSpreadFraction;  // ServingSpread of the plan's class
};

// Which measured serving error a plan's estimates carry (the spread constants'
// classes): weight-only serving first, whatever the model, then mixture of experts.
enum class ServingErrorClass { kDense, kMoe, kWeightOnly };

}  // namespace

Status InferencePlanRequest::Validate() const {
    FieldChecker check;
    if (traffic.requests_per_second.has_value() == traffic.tokens_per_day.has_value()) {
        check.Fail("/traffic", "give exactly one of requests_per_second and tokens_per_day");
    }
    check.Range(traffic.requests_per_second, "/traffic/requests_per_second", kMinRequestsPerSecond,
                kMaxRequestsPerSecond);
    check.Range(traffic.tokens_per_day, "/traffic/tokens_per_day", kMinTokensPerDay,
                kMaxTokensPerDay);
    check.Range(max_time_to_first_token_ms, "/latency/max_time_to_first_token_ms", 0, 1e7, true);
    check.Range(max_inter_token_latency_ms, "/latency/max_inter_token_latency_ms", 0, 1e7, true);
    check.Range(utilization, "/utilization", 0, 1, true);
    check.Range(throughput_spread_fraction, "/uncertainty/throughput_spread_fraction", 0, 10);
    check.Range(traffic_confidence, "/uncertainty/traffic_confidence", kMinTrafficConfidence,
                kMaxTrafficConfidence);
    check.Range(max_price_age_days, "/constraints/max_price_age_days", 0, 36500);
    check.Range(api_usd_per_million_input_tokens, "/api_price/usd_per_million_input_tokens", 0,
                1e6);
    check.Range(api_usd_per_million_output_tokens, "/api_price/usd_per_million_output_tokens", 0,
                1e6);
    for (std::size_t i = 0; i < providers.size(); ++i) {
        if (FindProvider(providers[i]) == nullptr) {
            check.Fail("/constraints/providers/" + std::to_string(i),
                       "unknown provider '" + providers[i].substr(0, 64) + "'");
        }
    }
    if (auto problem = estimate::WeightPrecisionProblem(workload)) {
        check.Fail("/weight_precision", *problem);
    }
    check.IntRange(workload.input_tokens, "/input_tokens", 1, estimate::kMaxInferenceTokens);
    check.IntRange(workload.output_tokens, "/output_tokens", 1, estimate::kMaxInferenceTokens);
    if (limit < 1 || limit > 500) {
        check.Fail("/limit", "must be between 1 and 500");
    }
    if (start_date && !DaysFromIsoDate(*start_date)) {
        check.Fail("/start_date", "must be a date written YYYY-MM-DD");
    }
    if (budget_months) {
        check.IntRange(*budget_months, "/budget_months", 1, kMaxServingBudgetMonths);
    }
    return check.Done();
}

namespace {

bool MeetsLatency(const InferencePlanRequest& request, const estimate::ServingPoint& p) {
    return (!request.max_time_to_first_token_ms ||
            p.time_to_first_token_ms <= *request.max_time_to_first_token_ms) &&
           (!request.max_inter_token_latency_ms ||
            p.inter_token_latency_ms <= *request.max_inter_token_latency_ms);
}

// How one replica is laid out over its accelerators: tensor parallel x pipeline stages, or
// (ep > 1) expert parallel over ep accelerators with attention data parallel.
struct ReplicaLayout {
    int tp = 1;
    int pp = 1;
    int ep = 1;
};

std::string LayoutText(const ReplicaLayout& l) {
    if (l.ep > 1) return "expert parallel " + std::to_string(l.ep);
    return "tensor parallel " + std::to_string(l.tp) +
           (l.pp > 1 ? " over " + std::to_string(l.pp) + " pipeline stages" : "");
}

// One tensor-parallel degree on one shape: of the power-of-two concurrencies per replica (up
// to the engine's running limit, which the KV cache and max_num_seqs set) whose
// continuous-batching TTFT and ITL meet the targets, the one giving the most output tokens/s
// (the smallest on a tie). Sets `reason`/`example` on the choice when the degree cannot serve.
std::optional<ShapeChoice> ChooseConcurrency(const InferencePlanRequest& request,
                                             const estimate::ClusterSpec& cluster,
                                             const ReplicaLayout& layout, ShapeChoice& best,
                                             std::size_t& estimates, Status& failure) {
    auto run = [&](int concurrency) {
        estimate::InferenceRequest r = request.workload;
        r.batch_size = 1;
        if (layout.ep > 1) {
            r.expert_parallel = layout.ep;
        } else {
            r.tensor_parallel = layout.tp;
        }
        if (layout.pp > 1) r.pipeline_parallel = layout.pp;
        r.concurrency = concurrency;
        r.requests_per_second.reset();
        ++estimates;
        return estimate::EstimateInference(r, cluster);
    };
    auto first = run(1);
    if (!first.ok()) {
        const std::string& f = first.error().field;
        if (f == "/precision") {
            best.reason = "precision_unsupported";
            best.example = first.error().message;
        } else if (f == "/hardware/total_accelerators" || f == "/tensor_parallel" ||
                   f == "/expert_parallel") {
            // The degree does not fit the model's attention or KV heads (the estimator says
            // which); the next degree may.
            best.example = first.error().message;
        } else {
            failure = first.error();
        }
        return std::nullopt;
    }
    const estimate::InferenceEstimate& one = first.value();
    if (!one.fits_in_memory || !one.serving || !one.serving->point) {
        best.example = "weights and KV cache need " + Fixed(one.memory_per_accelerator_gb, 1) +
                       " GB per accelerator at " + LayoutText(layout) + "; " +
                       cluster.accelerator.id + " has " + Fixed(one.memory_capacity_gb, 1) +
                       " GB (the engine uses " +
                       Fixed(estimate::kServingGpuMemoryUtilization * 100, 0) + " %)";
        return std::nullopt;
    }
    if (!MeetsLatency(request, *one.serving->point)) {
        if (best.reason == "does_not_fit") {
            best.reason = "latency_target_unmet";
            best.example =
                "one request at " + LayoutText(layout) + " gives " +
                Fixed(one.serving->point->time_to_first_token_ms, 1) + " ms to first token and " +
                Fixed(one.serving->point->inter_token_latency_ms, 2) + " ms between tokens";
        }
        return std::nullopt;
    }
    ShapeChoice choice;
    choice.ok = true;
    choice.tensor_parallel = layout.tp;
    choice.pipeline_parallel = layout.pp;
    choice.expert_parallel = layout.ep;
    choice.instances_per_replica = layout.pp;
    choice.batch_size = 1;
    choice.estimate = one;
    // The first estimate's curve holds every level: concurrency 1, 2, 4, ... up to the
    // engine's running limit (the KV cache and max_num_seqs), each with nothing queued.
    // Latency grows with concurrency, so the levels meeting the targets are a prefix; the
    // throughput need not (an MoE's step reads more experts as sequences join), so each level
    // of that prefix is compared by output tokens/s, and the best one estimated in full.
    int best_level = 1;
    double best_tokens_per_second = one.serving->point->output_tokens_per_second;
    // The bound is per engine: each expert-parallel rank schedules its own sequences.
    const double most_sequences = static_cast<double>(kMaxPlanBatchSize) * layout.ep;
    for (const estimate::ServingPoint& p : one.serving->curve) {
        if (p.running_sequences > most_sequences || !MeetsLatency(request, p)) {
            break;
        }
        if (p.output_tokens_per_second > best_tokens_per_second) {
            best_tokens_per_second = p.output_tokens_per_second;
            best_level = static_cast<int>(p.running_sequences);
        }
    }
    if (best_level > 1) {
        auto e = run(best_level);
        if (e.ok() && e.value().serving && e.value().serving->point) {
            choice.estimate = std::move(e).value();
            choice.batch_size = best_level;
        }
    }
    return choice;
}

// A plan's error class: weight-only where its estimates read weights narrower than their math
// (the request's weight_precision, or the checkpoint's width read as stored), else by model.
ServingErrorClass ErrorClassOf(const InferencePlanRequest& request,
                               const estimate::ResolvedModel& m) {
    if (request.workload.weight_precision || estimate::StoredWeightPrecision(request.workload, m)) {
        return ServingErrorClass::kWeightOnly;
    }
    return m.IsMoe() ? ServingErrorClass::kMoe : ServingErrorClass::kDense;
}

// The serving throughput spread: the request's, else its error class's.
double ServingSpread(const InferencePlanRequest& request, ServingErrorClass error_class) {
    if (request.throughput_spread_fraction) return *request.throughput_spread_fraction;
    switch (error_class) {
        case ServingErrorClass::kWeightOnly:
            return kWeightOnlyServingThroughputSpreadFraction;
        case ServingErrorClass::kMoe:
            return kMoeServingThroughputSpreadFraction;
        case ServingErrorClass::kDense:
            break;
    }
    return kServingThroughputSpreadFraction;
}

// What traffic_confidence added to a choice's `needed` replicas, where it added any.
std::optional<std::string> ConfidenceSizingText(const InferencePlanRequest& request,
                                                const InferencePlan& plan, const ShapeChoice& s,
                                                int needed, const Sizing& sizing) {
    if (!request.traffic_confidence) return std::nullopt;
    const double utilization = sizing.utilization;
    const double per_replica = s.estimate.serving->point->output_tokens_per_second;
    const int by_utilization = std::max(
        1, static_cast<int>(
               std::ceil(plan.output_tokens_per_second / (per_replica * utilization) - 1e-9)));
    if (needed <= by_utilization) return std::nullopt;
    return "sized to carry the traffic with probability " + Fixed(*request.traffic_confidence, 3) +
           " (traffic_confidence): " + std::to_string(needed) + " replica(s), " +
           Fixed(sizing.headroom, 2) + "x the estimate's capacity, where utilisation " +
           Fixed(utilization, 2) + " alone needs " + std::to_string(by_utilization);
}

// The option for offering `o` on its shape's choice: whole instances for the replicas the
// traffic needs, plus spare instances on spot (kSpotServingSpareInstanceFraction, at least
// one), so that the fleet still carries the traffic when that many instances are reclaimed.
InferencePlanOption BuildOption(const InferencePlanRequest& request, const InferencePlan& plan,
                                const Offering& o, const ShapeChoice& s, const Sizing& sizing) {
    const double utilization = sizing.utilization;
    const double in = request.workload.input_tokens;
    const double out = request.workload.output_tokens;
    const estimate::ServingPoint& point = *s.estimate.serving->point;
    InferencePlanOption opt;
    opt.offering = &o;
    opt.tensor_parallel = s.tensor_parallel;
    opt.pipeline_parallel = s.pipeline_parallel;
    opt.expert_parallel = s.expert_parallel;
    opt.instances_per_replica = s.instances_per_replica;
    opt.batch_size = s.batch_size;
    const int needed =
        std::max(1, static_cast<int>(std::ceil(s.instances * s.replicas_per_instance - 1e-9)));
    const int needed_nodes =
        std::max(1, static_cast<int>(std::ceil(needed / s.replicas_per_instance - 1e-9)));
    opt.nodes = needed_nodes;
    opt.replicas = needed;
    if (o.price_type == PriceType::kSpot) {
        // Spares are whole replicas: a replica over several instances needs all of them.
        const int spare_replica_groups = static_cast<int>(std::ceil(
            std::max(1.0, std::ceil(needed_nodes * kSpotServingSpareInstanceFraction - 1e-9)) /
                opt.instances_per_replica -
            1e-9));
        const int spare_nodes = spare_replica_groups * opt.instances_per_replica;
        opt.nodes = needed_nodes + spare_nodes;
        // Every instance runs its full share of replicas: with any spare_nodes reclaimed, the
        // rest still hold the replicas the traffic needs.
        opt.replicas = static_cast<int>(std::lround(opt.nodes * s.replicas_per_instance));
        opt.spare_replicas = opt.replicas - needed;
        opt.reasoning =
            "spot: " + std::to_string(spare_nodes) + " spare instance(s) added to the " +
            std::to_string(needed_nodes) + " the traffic needs (" +
            Fixed(kSpotServingSpareInstanceFraction * 100, 0) + " %, at least one), " +
            std::to_string(opt.spare_replicas) + " replica(s) beyond the " +
            std::to_string(needed) +
            " needed: a reclaim takes a whole instance with its replicas and gives about 2 "
            "minutes' notice, while a replacement needs a new instance, the container and the "
            "weights loaded (about " +
            Fixed(kDefaultRestartMinutes, 0) +
            " minutes), and reclaims often take several instances of a pool at once" +
            (o.spot_interruption ? "; interruption bucket " + o.spot_interruption->label : "");
    }
    if (!s.span_reason.empty()) {
        opt.reasoning = s.span_reason + (opt.reasoning ? "; " + *opt.reasoning : "");
    }
    if (auto sized = ConfidenceSizingText(request, plan, s, needed, sizing)) {
        opt.reasoning = *sized + (opt.reasoning ? "; " + *opt.reasoning : "");
    }
    opt.total_accelerators = opt.nodes * o.accelerator_count;
    opt.time_to_first_token_ms = point.time_to_first_token_ms;
    opt.inter_token_latency_ms = point.inter_token_latency_ms;
    opt.output_tokens_per_second_per_replica = point.output_tokens_per_second;
    opt.capacity_requests_per_second = needed * point.output_tokens_per_second * utilization / out;
    // The needed replicas serve one second of the traffic in 1 / headroom seconds at the
    // estimate's pace, a log-normal time with the serving spread (the training plans' run-time
    // model): the traffic is carried unless that time runs past the second.
    const double headroom = needed * point.output_tokens_per_second / plan.output_tokens_per_second;
    opt.traffic_met_probability = 1.0 - RunTimeLateFraction(1.0 / headroom, 1.0, sizing.spread);
    opt.monthly_cost_usd = opt.nodes * o.price.usd_per_hour * kHoursPerMonth;
    const double requests_per_month = plan.requests_per_second * kSecondsPerMonth;
    const double usd_per_request = opt.monthly_cost_usd / requests_per_month;
    // Every engine step runs decode tokens and prompt chunks together (continuous batching),
    // so a step's cost is split by the FLOPs each kind carries in it; over a request's life
    // that is the request's prefill and decode FLOPs. (Splitting by time gave the prompt only
    // its TTFT: 8000 prompt tokens at $0.005/M against 100 output tokens at $17/M.)
    const estimate::RequestFlops flops = estimate::ServedRequestFlops(s.estimate.model, in, out);
    const double prefill_share = flops.prefill / (flops.prefill + flops.decode);
    opt.usd_per_million_input_tokens = usd_per_request * prefill_share / in * 1e6;
    opt.usd_per_million_output_tokens = usd_per_request * (1.0 - prefill_share) / out * 1e6;
    opt.usd_per_million_tokens = usd_per_request / (in + out) * 1e6;
    if (request.api_usd_per_million_input_tokens || request.api_usd_per_million_output_tokens) {
        const double api = requests_per_month *
                           (in * request.api_usd_per_million_input_tokens.value_or(0) +
                            out * request.api_usd_per_million_output_tokens.value_or(0)) /
                           1e6;
        opt.api_monthly_cost_usd = api;
        if (api > 0) {
            opt.savings_vs_api_fraction = 1.0 - opt.monthly_cost_usd / api;
        }
    }
    return opt;
}

// Whole instances a choice rents for the traffic (before spot spares), as BuildOption
// rounds: whole replicas, then whole instances for them.
double WholeInstances(const ShapeChoice& c) {
    const double replicas = std::max(1.0, std::ceil(c.instances * c.replicas_per_instance - 1e-9));
    return std::max(1.0, std::ceil(replicas / c.replicas_per_instance - 1e-9));
}

// The least capacity over the estimate, as a multiple, at which the replicas carry the traffic
// with probability `confidence` under the serving spread (BuildOption's
// traffic_met_probability, solved for the headroom by bisection on its logarithm: it rises
// with the headroom). 1 at confidence 0.5 or below, or without a spread.
double ConfidenceHeadroom(double confidence, double spread) {
    auto met = [&](double headroom) {
        return 1.0 - RunTimeLateFraction(1.0 / headroom, 1.0, spread);
    };
    if (met(1.0) >= confidence) return 1.0;
    double lo = 0.0, hi = 1.0;  // ln of the headroom
    while (met(std::exp(hi)) < confidence && hi < kMaxConfidenceHeadroomLog) hi *= 2.0;
    for (int i = 0; i < 100 && hi - lo > 1e-12; ++i) {
        const double mid = 0.5 * (lo + hi);
        (met(std::exp(mid)) >= confidence ? hi : lo) = mid;
    }
    return std::exp(hi);
}

// The plan's sizing: the capacity the utilisation asks, or the request's traffic_confidence
// where that asks more (under the spread of the plan's error class).
Sizing SizingOf(const InferencePlanRequest& request, double utilization,
                ServingErrorClass error_class) {
    Sizing sizing{utilization, 1.0 / utilization, ServingSpread(request, error_class)};
    if (request.traffic_confidence) {
        sizing.headroom = std::max(sizing.headroom,
                                   ConfidenceHeadroom(*request.traffic_confidence, sizing.spread));
    }
    return sizing;
}

// Sizes a choice for the plan's output tokens per second at the plan's headroom.
void SizeChoice(const InferencePlan& plan, const Sizing& sizing, ShapeChoice& c) {
    const estimate::ServingPoint& point = *c.estimate.serving->point;
    const double replicas =
        plan.output_tokens_per_second / point.output_tokens_per_second * sizing.headroom;
    c.instances = replicas / c.replicas_per_instance;
}

// The instance shape an option is sized on: the offering's accelerator, accelerators per
// instance and network (the hops of a replica spanning instances cross it).
struct InstanceShape {
    const Accelerator& accelerator;
    int per_node = 1;
    std::optional<double> scale_out_gbit_per_s;
};

// Why a spanning replica was taken: what to rent together, and what it beats.
std::string SpanReason(const ShapeChoice& chosen, const ShapeChoice& best, bool fits_one,
                       const std::string& one_instance_example, int per_node) {
    const int n = chosen.instances_per_replica;
    const std::string layout =
        chosen.expert_parallel > 1
            ? "expert parallel " + std::to_string(chosen.expert_parallel) +
                  " over all their accelerators, attention data parallel on each"
            : "pipeline parallel " + std::to_string(n) + ", tensor parallel " +
                  std::to_string(per_node) + " within each";
    const std::string why =
        chosen.expert_parallel > 1
            ? " (each accelerator holds 1/" + std::to_string(chosen.expert_parallel) +
                  " of the routed experts, leaving more memory for running sequences, and every "
                  "MoE layer runs the sequences of all ranks)"
            : " (the weights split over the stages leave more memory for running sequences)";
    std::string text = "each replica spans " + std::to_string(n) + " instances (" + layout +
                       "; rent them together, on one network): ";
    if (best.ok) {
        // Something before served too: say what this layout saves against it.
        text += Fixed(WholeInstances(chosen), 0) + " instances against " +
                Fixed(WholeInstances(best), 0) +
                (best.instances_per_replica > 1
                     ? " for replicas over " + std::to_string(best.instances_per_replica) +
                           " instances (" + (best.expert_parallel > 1 ? "expert" : "pipeline") +
                           " parallel)"
                     : std::string(" for replicas within one instance")) +
                why;
    }
    if (!fits_one) {
        text += std::string(best.ok ? "; " : "") + "one instance cannot hold the model (" +
                one_instance_example + ")";
    }
    return text;
}

// Replicas of 2, 4 ... kMaxInstancesPerReplica instances: pipeline stages (tensor parallel over
// each whole instance) and, for MoE models, expert parallel over all their accelerators; each
// takes `best`'s place when nothing before could hold the model or when it needs strictly
// fewer whole instances than the best so far; the reason goes into the option. `experts`: the
// model's routed experts (0 for a dense model), which bound the expert-parallel degrees.
Status ChooseSpanning(const InferencePlanRequest& request, const InferencePlan& plan,
                      const InstanceShape& shape, const Sizing& sizing, int experts,
                      ShapeChoice& best, std::size_t& estimates) {
    const bool fits_one = best.ok;
    const std::string one_instance_example = best.example;
    std::vector<ReplicaLayout> layouts;
    for (int n = 2; n <= kMaxInstancesPerReplica; n *= 2) {
        layouts.push_back({shape.per_node, n, 1});
        if (shape.per_node * n <= experts) {
            layouts.push_back({1, 1, shape.per_node * n});
        }
    }
    for (const ReplicaLayout& layout : layouts) {
        const int instances = layout.ep > 1 ? layout.ep / shape.per_node : layout.pp;
        estimate::ClusterSpec cluster;
        cluster.accelerator = shape.accelerator;
        cluster.accelerator_count = shape.per_node * instances;
        cluster.accelerators_per_node = shape.per_node;
        cluster.scale_out_gbit_per_s_per_node = shape.scale_out_gbit_per_s;
        ShapeChoice probe = best;  // a failed layout's reason counts only when nothing serves
        Status failure = Ok{};
        auto chosen = ChooseConcurrency(request, cluster, layout, probe, estimates, failure);
        if (!failure.ok()) {
            return failure;
        }
        if (!best.ok) {
            best.reason = probe.reason;
            best.example = probe.example;
        }
        if (!chosen) {
            continue;
        }
        chosen->instances_per_replica = instances;
        chosen->replicas_per_instance = 1.0 / instances;
        SizeChoice(plan, sizing, *chosen);
        if (best.ok && !(WholeInstances(*chosen) < WholeInstances(best))) {
            continue;
        }
        chosen->span_reason =
            SpanReason(*chosen, best, fits_one, one_instance_example, shape.per_node);
        best = *chosen;
    }
    return Ok{};
}

// Why an expert-parallel replica within one instance beats the best layout before it.
std::string WithinInstanceExpertReason(const ShapeChoice& chosen, const ShapeChoice& best) {
    std::string text = "each replica is expert parallel " + std::to_string(chosen.expert_parallel) +
                       " within one instance (attention data parallel: each accelerator holds "
                       "1/" +
                       std::to_string(chosen.expert_parallel) +
                       " of the routed experts and its own sequences' KV cache, which tensor "
                       "parallel would split or copy)";
    if (best.ok) {
        // Instances before rounding up: equal whole instances still differ in headroom.
        text += ": the traffic needs " + Fixed(chosen.instances, 2) +
                " instances' capacity against " + Fixed(best.instances, 2) + " at " +
                LayoutText({best.tensor_parallel, best.pipeline_parallel, best.expert_parallel});
    }
    return text;
}

// One layout of whole replicas within one instance (tensor parallel tp, or expert parallel ep
// with attention data parallel), sized for the plan; nullopt when it cannot serve. `best`
// collects why a layout cannot serve, as ChooseConcurrency says.
Result<std::optional<ShapeChoice>> WithinInstance(const InferencePlanRequest& request,
                                                  const InferencePlan& plan,
                                                  const InstanceShape& shape, const Sizing& sizing,
                                                  const ReplicaLayout& layout, ShapeChoice& best,
                                                  std::size_t& estimates) {
    const int degree = layout.ep > 1 ? layout.ep : layout.tp;
    estimate::ClusterSpec cluster;
    cluster.accelerator = shape.accelerator;
    cluster.accelerator_count = degree;
    cluster.accelerators_per_node = degree;
    Status failure = Ok{};
    auto chosen = ChooseConcurrency(request, cluster, layout, best, estimates, failure);
    if (!failure.ok()) {
        return failure.error();
    }
    if (!chosen) {
        return std::optional<ShapeChoice>();
    }
    const int whole_replicas_per_instance = shape.per_node / degree;  // a replica never straddles
    chosen->replicas_per_instance = static_cast<double>(whole_replicas_per_instance);
    SizeChoice(plan, sizing, *chosen);
    return chosen;
}

// The best layout on one instance shape: the tensor-parallel degree, or for a mixture-of-experts
// model the expert-parallel degree within the instance (as TensorRT-LLM's DEP layouts and
// SGLang serve DeepSeek and Qwen3 MoE models), needing the fewest instances for the plan's
// output tokens per second; then, on full nodes, replicas spanning instances (ChooseSpanning).
Result<ShapeChoice> ChooseShape(const InferencePlanRequest& request, const InferencePlan& plan,
                                const InstanceShape& shape, const Sizing& sizing,
                                std::size_t& estimates) {
    ShapeChoice best;
    best.reason = "does_not_fit";
    const int per_node = shape.per_node;
    const auto model = estimate::DeriveModel(request.workload.model);
    const int experts = model.ok() && model.value().IsMoe() ? model.value().experts : 0;
    std::vector<ReplicaLayout> layouts;
    for (int tp = 1; tp <= per_node; tp *= 2) layouts.push_back({tp, 1, 1});
    for (int ep = 2; ep <= per_node && ep <= experts; ep *= 2) layouts.push_back({1, 1, ep});
    for (const ReplicaLayout& layout : layouts) {
        if (per_node % std::max(layout.tp, layout.ep) != 0) {
            continue;
        }
        auto chosen = WithinInstance(request, plan, shape, sizing, layout, best, estimates);
        if (!chosen.ok()) {
            return chosen.error();
        }
        if (best.reason == "precision_unsupported") {
            return best;
        }
        if (!chosen.value()) {
            continue;
        }
        ShapeChoice& c = *chosen.value();
        if (!best.ok || c.instances < best.instances) {
            if (layout.ep > 1) c.span_reason = WithinInstanceExpertReason(c, best);
            best = c;
        }
    }
    // Only full nodes (HGX/DGX-class instances, on the provider's cluster network) are joined
    // into a replica: a 1- or 2-GPU VM sits on the data-centre network (cluster.hpp,
    // kPartialNodeScaleOutGbitPerS), and no engine pipelines a model over such hosts.
    if (per_node < estimate::DefaultAcceleratorsPerNode(shape.accelerator)) {
        return best;
    }
    if (auto spanning = ChooseSpanning(request, plan, shape, sizing, experts, best, estimates);
        !spanning.ok()) {
        return spanning.error();
    }
    return best;
}

// Why offerings were left out: counts and one example per reason.
struct SkipTally {
    std::size_t filtered = 0;
    std::map<std::string, std::size_t> counts;
    std::map<std::string, std::string> examples;

    void Add(const std::string& reason, std::string example = "") {
        ++counts[reason];
        if (!example.empty()) examples.emplace(reason, std::move(example));
    }
};

// Sizes every offering the request allows for the traffic; the options that can serve it
// within the latency targets and the provider's capacity, the rest tallied.
Result<std::vector<InferencePlanOption>> SizeOfferings(const InferencePlanRequest& request,
                                                       const Catalog& catalog,
                                                       const PlanReference& reference,
                                                       const Sizing& sizing, InferencePlan& plan,
                                                       SkipTally& tally) {
    AcceleratorLookup accelerators(catalog, reference);
    // Keyed by accelerator, accelerators per instance and network Gbit/s (-1: the default).
    std::map<std::tuple<std::string, int, double>, ShapeChoice> shapes;
    std::vector<InferencePlanOption> all;
    const PriceTrust trust{request.verified_only, request.max_price_age_days,
                           DaysFromIsoDate(request.today)};
    for (const Offering& o : catalog.Offerings()) {
        if (!Allowed(request.providers, o.provider) ||
            !Allowed(request.price_types, o.price_type) || !Allowed(request.regions, o.region) ||
            !Allowed(request.accelerators, o.accelerator) || o.accelerator_count < 1) {
            ++tally.filtered;
            continue;
        }
        if (request.price_types.empty() && o.price_type == PriceType::kSpot) {
            // A service must stay up: spot is planned only when price_types names it.
            tally.Add("spot_not_requested");
            continue;
        }
        if (auto distrust = DistrustedPrice(o, trust)) {
            tally.Add(distrust->reason, std::move(distrust->example));
            continue;
        }
        const AcceleratorInfo& info = accelerators.Of(o.accelerator);
        if (!info.accelerator.ok()) {
            ++tally.filtered;
            continue;
        }
        if (!info.workloads.inference) {
            tally.Add("not_for_inference", info.accelerator.value().name + " is offered for " +
                                               WorkloadsText(info.workloads) + " only (" +
                                               info.workloads.source + ")");
            continue;
        }
        const std::tuple<std::string, int, double> key{o.accelerator, o.accelerator_count,
                                                       o.scale_out_gbit_per_s.value_or(-1)};
        auto it = shapes.find(key);
        if (it == shapes.end()) {
            if (auto time_left = request.deadline.Check(); !time_left.ok()) {
                return time_left.error();
            }
            const InstanceShape shape{info.accelerator.value(), o.accelerator_count,
                                      o.scale_out_gbit_per_s};
            auto chosen = ChooseShape(request, plan, shape, sizing, plan.estimates);
            if (!chosen.ok()) {
                return chosen.error();
            }
            it = shapes.emplace(key, std::move(chosen).value()).first;
        }
        const ShapeChoice& s = it->second;
        if (!s.ok) {
            tally.Add(s.reason, s.example);
            continue;
        }
        if (!(s.instances < kMaxInstances)) {
            tally.Add("traffic_too_large");
            continue;
        }
        InferencePlanOption option = BuildOption(request, plan, o, s, sizing);
        const OfferingCapacity capacity = reference.CapacityOf(o);
        if (option.nodes > capacity.max_instances) {
            tally.Add("over_capacity", o.id + ": " + std::to_string(option.nodes) +
                                           " instances needed, one customer can get " +
                                           std::to_string(capacity.max_instances) + " (" +
                                           capacity.source + ")");
            continue;
        }
        // Replicas are independent purchases, but one tensor-parallel group is one: where only
        // some counts are sold (TPU slices), the instances of a group must be one of them.
        const int group_instances =
            std::max(option.instances_per_replica,
                     option.tensor_parallel / std::max(1, o.accelerator_count));
        if (!capacity.SoldAsOne(group_instances)) {
            tally.Add("size_not_sold", o.id + ": tensor parallel " +
                                           std::to_string(option.tensor_parallel) + " x pipeline " +
                                           std::to_string(option.pipeline_parallel) + " needs " +
                                           std::to_string(group_instances) +
                                           " instances as one slice; " + capacity.source);
            continue;
        }
        option.max_instances = capacity.max_instances;
        all.push_back(std::move(option));
    }
    return all;
}

// The first `limit` options, cheapest first; equal costs break by the other criterion
// (latency: ITL, then TTFT), then by offering id so the order never depends on the catalog's.
void KeepCheapest(std::vector<InferencePlanOption>& all, std::size_t limit) {
    auto cheaper = [](const InferencePlanOption& a, const InferencePlanOption& b) {
        if (a.monthly_cost_usd != b.monthly_cost_usd) {
            return a.monthly_cost_usd < b.monthly_cost_usd;
        }
        if (a.inter_token_latency_ms != b.inter_token_latency_ms) {
            return a.inter_token_latency_ms < b.inter_token_latency_ms;
        }
        if (a.time_to_first_token_ms != b.time_to_first_token_ms) {
            return a.time_to_first_token_ms < b.time_to_first_token_ms;
        }
        return a.offering->id < b.offering->id;
    };
    const std::size_t keep = std::min(all.size(), limit);
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end(),
                      cheaper);
    all.resize(keep);
}

// The budget window every option runs in (ServingBudget's): [start day, start day +
// budget_months calendar months), in days since 1970-01-01 UTC.
struct ServingWindow {
    long long start_day = 0;
    long long end_day = 0;
    const char* start_source = "";
};
std::optional<ServingWindow> WindowOf(const InferencePlanRequest& request) {
    const std::optional<BudgetStart> start = StartOfBudget(request.start_date, request.today);
    if (!start) return std::nullopt;
    const int months = request.budget_months.value_or(kDefaultServingBudgetMonths);
    return ServingWindow{start->day, AddCalendarMonths(start->day, months), start->source};
}

// Owned capacity covering some of the option's window: those instance-hours are paid whether
// used or not (sunk), so the option pays only for the rest at its price. Its monthly and
// per-token figures become the uncovered share of them (the marginal month, averaged over the
// window), and the saving against the API is taken on that.
void ApplyOwnedCapacity(const std::vector<OwnedCapacity>& owned, const ServingWindow& window,
                        InferencePlanOption& o) {
    const double start_hour = static_cast<double>(window.start_day) * kHoursPerDay;
    const double window_hours =
        static_cast<double>(window.end_day - window.start_day) * kServingHoursPerDay;
    const OwnedCover cover =
        CoverRun(owned, o.offering->id, o.nodes, start_hour, start_hour + window_hours);
    if (cover.instance_hours <= 0 || window_hours <= 0) return;
    ServingOwnedUse use;
    use.instance_hours = cover.instance_hours;
    use.window_instance_hours = o.nodes * window_hours;
    use.sunk_usd = cover.sunk_usd;
    double uncovered_hours = use.window_instance_hours - cover.instance_hours;
    if (uncovered_hours < kOwnedHoursResidue) uncovered_hours = 0;
    const double share = uncovered_hours / use.window_instance_hours;
    use.without_owned_cost_usd = o.nodes * o.offering->price.usd_per_hour * window_hours;
    use.marginal_cost_usd = o.offering->price.usd_per_hour * uncovered_hours;
    use.without_owned_monthly_cost_usd = o.monthly_cost_usd;
    use.without_owned_usd_per_million_tokens = o.usd_per_million_tokens;
    o.monthly_cost_usd *= share;
    o.usd_per_million_input_tokens *= share;
    o.usd_per_million_output_tokens *= share;
    o.usd_per_million_tokens *= share;
    if (o.api_monthly_cost_usd && *o.api_monthly_cost_usd > 0) {
        o.savings_vs_api_fraction = 1.0 - o.monthly_cost_usd / *o.api_monthly_cost_usd;
    }
    o.owned = use;
}

// Every option's figures net of the owned capacity covering its window; when the book owns
// capacity yet none of it covers an option, a warning says so (the plan is then priced as if
// nothing were owned).
void UseOwnedCapacity(const InferencePlanRequest& request, std::vector<InferencePlanOption>& all,
                      InferencePlan& plan) {
    if (request.owned_capacity.empty()) return;
    const std::optional<ServingWindow> window = WindowOf(request);
    bool covered = false;
    for (InferencePlanOption& o : all) {
        if (window) ApplyOwnedCapacity(request.owned_capacity, *window, o);
        covered = covered || o.owned.has_value();
    }
    if (covered) return;
    plan.warnings.push_back(OwnedCoversNothing(
        request.owned_capacity,
        "the options planned" + (window ? " from " + IsoDateFromDays(window->start_day) + " to " +
                                              IsoDateFromDays(window->end_day)
                                        : std::string())));
}

// The spread traffic_met_probability uses: the request's, or the default of the plan's error
// class (dense, mixture of experts, weight-only).
void EchoServingSpread(const InferencePlanRequest& request, ServingErrorClass error_class,
                       Assumptions& echo) {
    const std::string what =
        "p90 / p50 - 1 of a replica's real throughput against the estimate (a log-normal, the "
        "estimate its median), for traffic_met_probability";
    if (request.throughput_spread_fraction) {
        echo.push_back({"throughput_spread_fraction", *request.throughput_spread_fraction,
                        "fraction", what, "request"});
        return;
    }
    const std::string overrides = " (uncertainty.throughput_spread_fraction overrides)";
    if (error_class == ServingErrorClass::kWeightOnly) {
        echo.push_back(
            {"weight_only_serving_throughput_spread_fraction",
             kWeightOnlyServingThroughputSpreadFraction, "fraction",
             what +
                 "; weight-only serving (weights narrower than the math: weight_precision, or "
                 "a quantised checkpoint read as stored), whose estimates read 1.18-2.18x too "
                 "fast on the published tables" +
                 overrides,
             "measured: 80th percentile of |ln(estimated / published)| over the 16 weight-only "
             "serving rows of tests/data/frontier (NVIDIA Model Optimizer's INT4 and W4A8 AWQ "
             "on H200, TensorRT-LLM 0.15; gpt-oss on H200, TensorRT-LLM 1.2)"});
        return;
    }
    if (error_class == ServingErrorClass::kDense) {
        echo.push_back({"serving_throughput_spread_fraction", kServingThroughputSpreadFraction,
                        "fraction", what + "; dense models" + overrides,
                        "measured: 80th percentile of |ln(estimated / published)| over the 50 "
                        "dense serving rows of tests/data/frontier (docs/estimator.md)"});
        return;
    }
    echo.push_back({"moe_serving_throughput_spread_fraction", kMoeServingThroughputSpreadFraction,
                    "fraction",
                    what +
                        "; mixture-of-experts models, whose serving estimates read up to 2.2x too "
                        "fast on the published tables" +
                        overrides,
                    "measured: 80th percentile of |ln(estimated / published)| over the 44 MoE "
                    "serving rows of tests/data/frontier not served weight-only (TensorRT-LLM "
                    "1.2 tables)"});
}

// The confidence the options were sized to, where the request gave one.
void EchoTrafficConfidence(const InferencePlanRequest& request, Assumptions& echo) {
    if (!request.traffic_confidence) return;
    echo.push_back({"traffic_confidence", *request.traffic_confidence, "probability",
                    "each option rents the replicas that carry the traffic with at least this "
                    "probability under the serving spread (traffic_met_probability), where "
                    "that asks more than the utilisation does",
                    "request"});
}

void EchoPlanConstants(const InferencePlanRequest& request, double utilization,
                       ServingErrorClass error_class, Assumptions& echo) {
    echo.push_back(Echo("utilization", utilization, "fraction",
                        "average load as a share of a replica's maximum throughput",
                        request.utilization.has_value(),
                        "default: judgement (serving fleets target 60-80%)"));
    echo.push_back({"spot_spare_instance_fraction", kSpotServingSpareInstanceFraction, "fraction",
                    "spare instances added on spot, of the instances the traffic needs (at "
                    "least one); a reclaim takes a whole instance with its replicas",
                    "judgement: 2-minute reclaim notice (AWS) against ~10 minutes to start a "
                    "replacement replica; reclaims hit several instances of a pool together"});
    EchoServingSpread(request, error_class, echo);
    EchoTrafficConfidence(request, echo);
    echo.push_back({"max_batch_size_considered", kMaxPlanBatchSize, "sequences",
                    "most concurrent requests per replica the planner tries (also capped by "
                    "the engine's max_num_seqs and the KV cache)",
                    "default: planner bound"});
    echo.push_back({"max_instances_per_replica", kMaxInstancesPerReplica, "instances",
                    "most instances one replica may span (pipeline stages, tensor parallel over "
                    "each instance; or, for MoE models, expert parallel over all their "
                    "accelerators), tried at 2, 4 and 8",
                    "judgement: DeepSeek-V3 BF16 needs 4 instances of 8 x 80 GB; vLLM serves "
                    "multi-node replicas as TP within a node and PP across nodes"});
    echo.push_back({"scale_out_hop_latency_s", estimate::kScaleOutHopLatencyS, "s",
                    "network latency of one pipeline-stage hop of a replica spanning instances "
                    "(expert-parallel all-to-alls use expert_all_to_all_fixed_s instead)",
                    "as the estimator's scale_out_hop_latency_s"});
    estimate::EchoPipelineConstants(echo);
    estimate::EchoExpertParallelConstants(echo);
    echo.push_back({"hours_per_month", kHoursPerMonth, "h", "8760 / 12", "definition"});
    echo.push_back(
        Echo("budget_months",
             static_cast<double>(request.budget_months.value_or(kDefaultServingBudgetMonths)),
             "months", "calendar months the budget view covers from its start date",
             request.budget_months.has_value(), "default: judgement (a budget year)"));
    echo.push_back({"serving_hours_per_day", kServingHoursPerDay, "h",
                    "hours a day the budget view pays for each instance",
                    "definition: a service is up around the clock"});
}

}  // namespace

// The plan in its steps: the traffic in output tokens per second, every allowed offering
// sized for it, the cheapest kept, why the others were left out, the constants used.
Result<InferencePlan> PlanInference(const InferencePlanRequest& request, const Catalog& catalog,
                                    const PlanReference& reference) {
    if (auto valid = request.Validate(); !valid.ok()) {
        return valid.error();
    }
    InferencePlan plan;
    const double in = request.workload.input_tokens;
    const double out = request.workload.output_tokens;
    plan.requests_per_second = request.traffic.requests_per_second.value_or(
        request.traffic.tokens_per_day.value_or(0) / 86400.0 / (in + out));
    plan.output_tokens_per_second = plan.requests_per_second * out;
    const double utilization = request.utilization.value_or(kDefaultServingUtilization);

    ServingErrorClass error_class = ServingErrorClass::kDense;
    if (auto model = estimate::DeriveModel(request.workload.model); model.ok()) {
        error_class = ErrorClassOf(request, model.value());
        if (auto w = estimate::ContextWarning(model.value(), in + out, "/input_tokens",
                                              "input_tokens + output_tokens")) {
            plan.warnings.push_back(std::move(*w));
        }
    }

    SkipTally tally;
    auto sized = SizeOfferings(request, catalog, reference,
                               SizingOf(request, utilization, error_class), plan, tally);
    if (!sized.ok()) {
        return sized.error();
    }
    if (auto time_left = request.deadline.Check(); !time_left.ok()) {
        return time_left.error();
    }
    std::vector<InferencePlanOption> all = std::move(sized).value();
    plan.total_count = all.size();
    UseOwnedCapacity(request, all, plan);
    KeepCheapest(all, request.limit);
    plan.options = std::move(all);
    plan.skipped.emplace_back("filtered", tally.filtered);
    for (const auto& [reason, count] : tally.counts) {
        plan.skipped.emplace_back(reason, count);
    }
    for (const auto& [reason, message] : tally.examples) {
        plan.skipped_examples.emplace_back(reason, message);
    }
    EchoPlanConstants(request, utilization, error_class, plan.assumptions);
    return plan;
}

std::optional<ServingBudgetView> ServingBudget(const InferencePlanRequest& request,
                                               const InferencePlanOption& option) {
    const std::optional<ServingWindow> window = WindowOf(request);
    if (!window || option.offering == nullptr) {
        return std::nullopt;
    }
    ServingBudgetView view;
    view.months = request.budget_months.value_or(kDefaultServingBudgetMonths);
    view.start_date = IsoDateFromDays(window->start_day);
    view.start_date_source = window->start_source;
    view.end_date = IsoDateFromDays(window->end_day);
    const double usd_per_hour = option.nodes * option.offering->price.usd_per_hour;
    view.usd_per_day = RoundToMicroUsd(usd_per_hour * kServingHoursPerDay);
    const double hours =
        static_cast<double>(window->end_day - window->start_day) * kServingHoursPerDay;
    std::map<std::string, double> monthly_usd;
    double owned_hours = 0;
    double owned_sunk_usd = 0;
    for (const ComputeMonth& m : ServingComputeByMonth(request.owned_capacity, option,
                                                       window->start_day, window->end_day)) {
        monthly_usd[m.month] += m.marginal_usd;
        owned_hours += m.owned_instance_hours;
        owned_sunk_usd += m.owned_sunk_usd;
    }
    // The owned hours are paid by the commitment: the cash is the uncovered hours' bill.
    const double cash_usd =
        owned_hours > 0 ? std::max(0.0, usd_per_hour * hours -
                                            option.offering->price.usd_per_hour * owned_hours)
                        : usd_per_hour * hours;
    const long long total_cents = ToCents(cash_usd);
    view.total_usd = FromCents(total_cents);
    view.monthly = MonthsInCents(monthly_usd, total_cents);
    if (owned_hours > 0) view.owned_usd = FromCents(ToCents(owned_sunk_usd));
    return view;
}

}  // namespace gpucost::pricing::plan
