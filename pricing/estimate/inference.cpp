#include "pricing/estimate/inference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "pricing/estimate/collectives.hpp"

namespace gpucost::pricing::estimate {
namespace {

constexpr double kGb = 1e9;
constexpr double kCausalWorkFraction = 0.5;
constexpr double kDefaultInferenceOverheadGb = 2.0;
constexpr double kElementwiseHiddenElements = 10.0;

struct PassCost {
    double seconds = 0;
    double compute_s = 0;
    double memory_s = 0;
};

void Add(PassCost& p, const OpTime& t) {
    p.seconds += t.seconds;
    (t.bound == Bound::kCompute ? p.compute_s : p.memory_s) += t.seconds;
}

// One forward pass over all layers for `tokens` new tokens per sequence of `batch`
// sequences, each attending to `context` tokens (prefill: context = tokens, causal).
PassCost ForwardPass(const ResolvedModel& m, const DeviceModel& dev, const ClusterLinks& links,
                     int tp, double batch, double tokens, double context, bool causal,
                     double bpe, double kv_bpe) {
    PassCost layer;
    const double M = batch * tokens;
    const double h = m.hidden_size;
    const double t = tp;
    const double kv_width = static_cast<double>(m.kv_heads) * m.head_dim;
    Add(layer, GemmTime(dev, M, (h + 2 * kv_width) / t, h, bpe));
    Add(layer, GemmTime(dev, M, h, h / t, bpe));
    // MLP: tokens * top-k rows against the weights of the experts those tokens touch.
    const double k = m.experts_per_token;
    const double touched = std::min<double>(m.experts, std::max(1.0, M * k));
    const double mult = m.gated_mlp ? 3.0 : 2.0;
    const double per_expert = mult * h * m.ffn_hidden_size / t;
    double mlp_flops = 2.0 * M * k * per_expert;
    double mlp_bytes = (touched * per_expert + M * k * (h + mult * m.ffn_hidden_size / t)) * bpe;
    Add(layer, CustomTime(dev, mlp_flops, mlp_bytes));
    // Attention: each new token against `context` keys; KV cache read once per step.
    double attn_flops = 4.0 * M * context * h / t;
    double kv_bytes = batch * context * 2.0 * kv_width / t * kv_bpe;
    double attn_bytes = kv_bytes + M * 2.0 * h / t * bpe;
    Add(layer, AttentionTime(dev, attn_flops, causal ? kCausalWorkFraction : 1.0, attn_bytes));
    Add(layer, MemoryTime(dev, M * kElementwiseHiddenElements * h * bpe));
    if (tp > 1) {
        const Link& link = tp <= links.accelerators_per_node ? links.scale_up : links.scale_out;
        double ar = 2.0 * RingAllReduceSeconds(M * h * 2.0, tp, link);
        layer.seconds += ar;
        layer.memory_s += ar;
    }
    PassCost total;
    total.seconds = layer.seconds * m.layers;
    total.compute_s = layer.compute_s * m.layers;
    total.memory_s = layer.memory_s * m.layers;
    // Logits for the last position of each sequence only.
    Add(total, GemmTime(dev, batch, m.vocab_size / t, h, bpe));
    return total;
}

}  // namespace

Result<InferenceEstimate> EstimateInference(const InferenceRequest& req, const ClusterSpec& cluster) {
    if (auto s = ValidateCluster(cluster); !s.ok()) {
        return s.error();
    }
    if (req.batch_size < 1 || req.batch_size > kMaxBatchSize) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "batch_size must be between 1 and " + std::to_string(kMaxBatchSize),
                         "/batch_size");
    }
    if (req.input_tokens < 1 || req.input_tokens > kMaxInferenceTokens) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "input_tokens must be between 1 and " + std::to_string(kMaxInferenceTokens),
                         "/input_tokens");
    }
    if (req.output_tokens < 1 || req.output_tokens > kMaxInferenceTokens) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "output_tokens must be between 1 and " + std::to_string(kMaxInferenceTokens),
                         "/output_tokens");
    }
    if (req.step_overhead_s && !(std::isfinite(*req.step_overhead_s) && *req.step_overhead_s >= 0 &&
                                 *req.step_overhead_s <= 1)) {
        return MakeError(ErrorCode::kInvalidArgument, "step_overhead_s must be between 0 and 1",
                         "/step_overhead_s");
    }
    if (req.memory_overhead_gb &&
        !(std::isfinite(*req.memory_overhead_gb) && *req.memory_overhead_gb >= 0 &&
          *req.memory_overhead_gb <= 1e4)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "memory_overhead_gb must be between 0 and 10000", "/memory_overhead_gb");
    }
    auto model = DeriveModel(req.model);
    if (!model.ok()) {
        return model.error();
    }
    const ResolvedModel& m = model.value();
    const int n = cluster.accelerator_count;
    int tp = req.tensor_parallel.value_or(n);
    if (tp < 1 || tp > n || n % tp != 0) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "tensor_parallel must divide the hardware count (" + std::to_string(n) + ")",
                         req.tensor_parallel ? "/tensor_parallel" : "/hardware/count");
    }
    if (m.attention_heads % tp != 0) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "tensor parallel degree " + std::to_string(tp) +
                             " must divide attention_heads (" + std::to_string(m.attention_heads) +
                             "); set tensor_parallel",
                         req.tensor_parallel ? "/tensor_parallel" : "/hardware/count");
    }
    auto device = MakeDeviceModel(cluster.accelerator, req.precision, req.efficiency);
    if (!device.ok()) {
        return device.error();
    }
    DeviceModel dev = device.value();
    if (!req.efficiency.memory_bandwidth_efficiency) {
        dev.memory_max_efficiency = kServingBandwidthEfficiency;
        for (Assumption& a : dev.assumptions) {
            if (a.name == "memory_bandwidth_efficiency") {
                a.value = kServingBandwidthEfficiency;
                a.description = "HBM bandwidth reached by a serving engine streaming weights and "
                                "KV cache, fraction of peak";
                a.source = "NIM 70B FP8 decode 0.55 of peak; LLM-Viewer ideal roofline 1.5-1.9x "
                           "optimistic vs TensorRT-LLM (estimator-references section 3.5)";
            }
        }
    }
    ClusterLinks links = MakeClusterLinks(cluster, dev);
    const double bpe = BytesPerElement(req.precision);
    const Precision kv_precision = req.kv_cache_precision.value_or(req.precision);
    const double kv_bpe = BytesPerElement(kv_precision);
    const double step_overhead = req.step_overhead_s.value_or(0.0);
    const double overhead_gb = req.memory_overhead_gb.value_or(kDefaultInferenceOverheadGb);
    const double batch = req.batch_size;
    const double in = req.input_tokens, out_tokens = req.output_tokens;

    PassCost prefill = ForwardPass(m, dev, links, tp, batch, in, in, true, bpe, kv_bpe);
    double mean_context = in + out_tokens / 2.0;
    PassCost decode = ForwardPass(m, dev, links, tp, batch, 1, mean_context, false, bpe, kv_bpe);
    decode.seconds += step_overhead;

    InferenceEstimate e;
    e.model = m;
    e.tensor_parallel = tp;
    e.replicas = n / tp;
    e.time_to_first_token_ms = prefill.seconds * 1e3;
    e.inter_token_latency_ms = decode.seconds * 1e3;
    double total_s = prefill.seconds + (out_tokens - 1.0) * decode.seconds;
    e.request_latency_ms = total_s * 1e3;
    e.output_tokens_per_second = batch * out_tokens / total_s;
    e.output_tokens_per_second_per_accelerator = e.output_tokens_per_second / tp;
    e.prefill_tokens_per_second = batch * in / prefill.seconds;
    e.prefill_bound = prefill.compute_s >= prefill.memory_s ? "compute" : "memory";
    e.decode_bound = decode.compute_s >= decode.memory_s ? "compute" : "memory";

    const double kv_per_token = 2.0 * m.layers * static_cast<double>(m.kv_heads) * m.head_dim * kv_bpe / tp;
    const double kv_per_seq = kv_per_token * (in + out_tokens);
    const double act_per_seq = in * (4.0 * m.hidden_size + 3.0 * m.ffn_hidden_size / tp) * bpe;
    e.weights_gb_per_accelerator = m.params * bpe / tp / kGb;
    e.kv_cache_gb_per_accelerator = kv_per_seq * batch / kGb;
    e.memory_per_accelerator_gb = e.weights_gb_per_accelerator + e.kv_cache_gb_per_accelerator +
                                  act_per_seq * batch / kGb + overhead_gb;
    e.memory_capacity_gb = cluster.accelerator.memory_gb;
    e.fits_in_memory = e.memory_per_accelerator_gb <= e.memory_capacity_gb;
    double free_gb = e.memory_capacity_gb - e.weights_gb_per_accelerator - overhead_gb;
    double per_seq_gb = (kv_per_seq + act_per_seq) / kGb;
    e.max_batch_size = free_gb > 0 ? static_cast<int>(std::min(std::floor(free_gb / per_seq_gb),
                                                               static_cast<double>(kMaxBatchSize)))
                                   : 0;

    e.assumptions = dev.assumptions;
    e.assumptions.insert(e.assumptions.end(), links.assumptions.begin(), links.assumptions.end());
    e.assumptions.push_back({"step_overhead_s", step_overhead, "s",
                             "fixed cost per decode step (sampling, scheduling)",
                             req.step_overhead_s ? "request" : "default 0"});
    e.assumptions.push_back({"memory_overhead_gb", overhead_gb, "GB",
                             "framework, CUDA context and workspace per accelerator",
                             req.memory_overhead_gb ? "request" : "estimator-references §3.4"});
    e.assumptions.push_back({"mean_decode_context_tokens", mean_context, "tokens",
                             "decode step evaluated at input + output / 2 (KV traffic is linear in "
                             "context)", "derived"});
    e.assumptions.push_back({"kv_cache_bytes_per_element", kv_bpe, "bytes",
                             "KV cache precision " + std::string(PrecisionName(kv_precision)),
                             req.kv_cache_precision ? "request" : "same as precision"});
    Assumptions derivation = ModelDerivationAssumptions();
    e.assumptions.insert(e.assumptions.end(), derivation.begin(), derivation.end());
    return e;
}

}  // namespace gpucost::pricing::estimate
