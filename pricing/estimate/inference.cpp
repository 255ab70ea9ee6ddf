#include "pricing/estimate/inference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "pricing/estimate/collectives.hpp"

namespace gpucost::pricing::estimate {
namespace {

constexpr double kGb = 1e9;
constexpr double kGib = 1024.0 * 1024.0 * 1024.0;
constexpr double kCausalWorkFraction = 0.5;
constexpr double kDefaultInferenceOverheadGb = 2.0;
constexpr double kElementwiseHiddenElements = 10.0;
// What a serving step below 16 bits keeps at 16 bits. Quantised checkpoints quantise the
// linear layers of the blocks and leave the output head out (ModelOpt, whose checkpoints
// TensorRT-LLM's tables serve, disables "*lm_head*" in _default_disabled_quantizer_cfg;
// vLLM's ParallelLMHead takes no fp8 method); the embedding table is looked up, not
// multiplied; norms and residual adds read and write the 16-bit hidden state; attention's
// math is timed at the 16-bit peak, as the training estimate times it (FlashAttention-2
// takes fp16/bf16).
constexpr double kUnquantisedBytesPerElement = 2.0;
constexpr Precision kUnquantisedPrecision = Precision::kBf16;
// Bisection steps when solving for the running batch that serves an offered request rate.
constexpr int kRateSolveSteps = 60;
constexpr double kMaxLatencyBoundMs = 3.6e6;  // an hour: past any serving target

// A figure with one decimal for messages (0.9, 71.5).
std::string Fixed1(double v) {
    const double rounded = std::round(v * 10.0) / 10.0;
    std::string text = std::to_string(rounded);
    return text.substr(0, text.find('.') + 2);
}

struct PassCost {
    double seconds = 0;
    double compute_s = 0;
    double memory_s = 0;
};

void Add(PassCost& p, const OpTime& t) {
    p.seconds += t.seconds;
    (t.bound == Bound::kCompute ? p.compute_s : p.memory_s) += t.seconds;
}

void Add(PassCost& p, const PassCost& q, double times = 1.0) {
    p.seconds += q.seconds * times;
    p.compute_s += q.compute_s * times;
    p.memory_s += q.memory_s * times;
}

// Everything a forward pass needs besides the token counts.
struct PassContext {
    const ResolvedModel& m;
    const DeviceModel& dev;
    const ClusterLinks& links;
    int tp = 1;
    double bpe = 2;     // weights and activations
    double kv_bpe = 2;  // KV cache
    bool fp8 = false;   // FP8 GEMMs: each input quantised by its own kernel
    int pp = 1;         // pipeline stages, each of tp accelerators
    int ep = 1;         // expert-parallel ranks, each with its own sequences (tp = pp = 1)
    bool rccl_all_reduce = false;  // TP all-reduces on RCCL's measured curve (ROCm CDNA3)
    // The device and width of the work a low-precision checkpoint leaves at 16 bits (head,
    // embeddings, norms and residuals, attention math); `dev` and `bpe` at 16 bits and above.
    const DeviceModel* wide = nullptr;
    double wide_bpe = 2;
    // The device and width of the linear layers outside the routed experts (attention
    // projections, dense MLPs, shared experts): `wide` where the model's checkpoint quantises
    // only its routed experts (LowPrecisionScope), else `dev` and `bpe`.
    const DeviceModel* dense_linear = nullptr;
    double dense_linear_bpe = 2;
    // Stored widths of the routed (or only) linear weights and of the other linear layers'
    // weights: `bpe` and `dense_linear_bpe` unless weight-only quantisation stores them
    // narrower than their GEMMs' inputs (InferenceRequest::weight_precision).
    double weight_bpe = 2;
    double dense_linear_weight_bpe = 2;
};

// Ranks a replica's sequences are spread over: each expert-parallel rank runs its own
// (data-parallel attention); 1 otherwise.
double SequenceRanks(const PassContext& c) {
    return std::max(1, c.ep);
}

// Sequences one rank holds when a replica runs `sequences`: an even share, and never less
// than one sequence while there is any (the busiest rank sets the step).
double PerRank(const PassContext& c, double sequences) {
    return std::max(sequences / SequenceRanks(c), std::min(sequences, 1.0));
}

// Weight bytes one accelerator holds, each part at its width (embeddings and head at 16 bits,
// the other dense weights at the checkpoint's or 16 bits by its scope, routed experts at the
// request's): under expert parallel the non-expert weights whole and 1/ep of the routed
// experts; otherwise 1/(tp pp) of everything.
double WeightBytesPerAccelerator(const PassContext& c) {
    const double embeddings = c.m.embedding_params * c.wide_bpe;
    const double routed = c.m.RoutedExpertParams() * c.weight_bpe;
    const double dense = (c.m.NonExpertParams() - c.m.embedding_params) * c.dense_linear_weight_bpe;
    if (c.ep > 1) {
        return dense + embeddings + routed / c.ep;
    }
    return (dense + embeddings + routed) / c.tp / c.pp;
}

// Micro-batches `running` sequences are split in across the pipeline: one per stage, never
// less than one sequence each (one sequence is one micro-batch on every stage in turn).
double MicroBatches(const PassContext& c, double running) {
    return std::max(1.0, std::min(static_cast<double>(c.pp), running));
}

// The pp - 1 handoffs of `tokens` tokens' hidden states from stage to stage, one after the
// other on a micro-batch's way through the layers; each of a stage's tp ranks sends its
// 1/tp share over its share of the link (the network when the stages are on other nodes).
double PipelineHopSeconds(const PassContext& c, double tokens) {
    if (c.pp <= 1) return 0;
    const Link& link = c.links.GroupLink(c.tp * c.pp);
    const double bytes = tokens * c.m.hidden_size * kPipelineActivationBytesPerElement *
                         kPipelineTensorsPerHop / c.tp;
    return (c.pp - 1) * (bytes / link.bytes_per_s + link.hop_latency_s + kPipelineStageHandoffS);
}

bool IsMla(const ResolvedModel& m) {
    return m.kv_lora_rank > 0;
}

// KV-cache bytes one token adds to one layer on one accelerator. MLA caches the compressed
// latent plus the decoupled RoPE key, (kv_lora_rank + qk_rope_head_dim) elements (DeepSeek-V2,
// section 2.1), shared by all heads and so held whole by every tensor-parallel rank (vLLM's
// MLA backends replicate it). Otherwise K and V of the rank's KV heads, at least one head per
// rank (engines replicate KV heads when tensor parallel exceeds their count).
double KvBytesPerTokenPerLayer(const ResolvedModel& m, int tp, double kv_bpe) {
    if (IsMla(m)) {
        return (static_cast<double>(m.kv_lora_rank) + m.qk_rope_head_dim) * kv_bpe;
    }
    const double heads_per_rank = std::max(1.0, static_cast<double>(m.kv_heads) / tp);
    return 2.0 * heads_per_rank * m.head_dim * kv_bpe;
}

// KV-cache bytes of one sequence holding `tokens` tokens, all layers, one accelerator:
// sliding-window layers keep at most the window.
double KvBytesPerSequence(const ResolvedModel& m, int tp, double kv_bpe, double tokens) {
    const double window_layers = m.WindowLayers();
    const double full_layers = m.layers - window_layers;
    const double per_layer = KvBytesPerTokenPerLayer(m, tp, kv_bpe);
    return per_layer * (full_layers * tokens +
                        window_layers * std::min(tokens, static_cast<double>(m.sliding_window)));
}

// Width of one head's query/key and value (MLA: nope + rope and v_head_dim).
double QkHeadDim(const ResolvedModel& m) {
    return IsMla(m) && m.qk_nope_head_dim + m.qk_rope_head_dim > 0
               ? m.qk_nope_head_dim + m.qk_rope_head_dim
               : m.head_dim;
}
double VHeadDim(const ResolvedModel& m) {
    return IsMla(m) && m.v_head_dim > 0 ? m.v_head_dim : m.head_dim;
}

// Expected number of distinct routed experts that `tokens` tokens touch when each picks k of E
// uniformly: E (1 - (1 - k/E)^tokens). A decode step at small batch reads only these.
double TouchedExperts(double experts, double top_k, double tokens) {
    if (top_k >= experts) {
        return experts;
    }
    return experts * -std::expm1(tokens * std::log1p(-top_k / experts));
}

// MLP of one layer for M tokens: `ffn` wide, `routed` experts of which each token uses
// `top_k`, plus `shared` experts every token uses (dense: 1 routed, top-1, none shared).
PassCost MlpTime(const PassContext& c, double M, double ffn, double routed, double top_k,
                 double shared) {
    const double h = c.m.hidden_size;
    const double t = c.tp;
    const double mult = c.m.gated_mlp ? 3.0 : 2.0;
    const double per_expert = mult * h * ffn / t;
    const double io_per_expert = h + mult * ffn / t;  // activations in and out, per token
    // `experts` of them read whole (weights at `weight_bpe`), `per_token` of them used by each
    // of the M tokens (activations at `bpe`).
    auto experts_time = [&](const DeviceModel& dev, double bpe, double weight_bpe, double experts,
                            double per_token) {
        return CustomTime(dev, 2.0 * M * per_token * per_expert,
                          experts * per_expert * weight_bpe + M * per_token * io_per_expert * bpe);
    };
    PassCost cost;
    if (routed <= 1) {
        Add(cost,
            experts_time(*c.dense_linear, c.dense_linear_bpe, c.dense_linear_weight_bpe, 1, 1));
        return cost;
    }
    // Under expert parallel a rank holds 1/ep of the routed experts and receives its share of
    // the tokens of every rank (M top_k routed tokens when balanced): it reads the experts of
    // its own that the replica's ep M tokens touch.
    const double ranks = c.ep > 1 ? c.ep : 1.0;
    const double touched = TouchedExperts(routed, top_k, M * ranks) / ranks;
    if (c.dense_linear == &c.dev && c.dense_linear_weight_bpe == c.weight_bpe) {
        // One checkpoint precision: routed and shared experts timed as one grouped op.
        Add(cost, experts_time(c.dev, c.bpe, c.weight_bpe, touched + shared, top_k + shared));
        return cost;
    }
    Add(cost, experts_time(c.dev, c.bpe, c.weight_bpe, touched, top_k));
    if (shared > 0) {
        Add(cost, experts_time(*c.dense_linear, c.dense_linear_bpe, c.dense_linear_weight_bpe,
                               shared, shared));
    }
    return cost;
}

// Kernels one forward pass launches beyond the ops LinearCost and AttentionCost time: what
// MLA and MoE routing add to a dense GQA layer (kMlaExtraKernelsPerLayer and the MoE
// constants). 0 for dense GQA models.
double ExtraKernelsPerPass(const ResolvedModel& m, bool fp8) {
    const double quant = fp8 ? 1.0 : 0.0;
    double kernels =
        IsMla(m) ? (kMlaExtraKernelsPerLayer + quant * kFp8MlaExtraGemmsPerLayer) * m.layers : 0.0;
    if (m.IsMoe()) {
        const double shared = m.shared_experts > 0 ? kSharedExpertKernelsPerLayer +
                                                         quant * kFp8SharedExpertGemmsPerLayer
                                                   : 0.0;
        kernels += (kMoeRoutingExtraKernelsPerLayer + shared) * m.MoeLayers();
    }
    return kernels;
}

// An attention projection of M tokens, k inputs to n outputs per rank: a GEMM on the other
// linear layers' device, its weights at their stored width (GemmTime itself where that is the
// inputs' width, so that such answers are GemmTime's to the last bit).
OpTime ProjectionTime(const PassContext& c, double M, double n, double k) {
    if (c.dense_linear_weight_bpe == c.dense_linear_bpe) {
        return GemmTime(*c.dense_linear, M, n, k, c.dense_linear_bpe);
    }
    return CustomTime(*c.dense_linear, 2.0 * M * n * k,
                      (M * k + M * n) * c.dense_linear_bpe + k * n * c.dense_linear_weight_bpe);
}

// Projections, MLP, elementwise work and TP all-reduces of every layer for M tokens, and the
// logits of `sampled` sequences, with the per-layer fixed costs of MLA and MoE routing.
// Attention over the context is AttentionCost.
PassCost LinearCost(const PassContext& c, double M, double sampled) {
    const ResolvedModel& m = c.m;
    const double h = m.hidden_size;
    const double t = c.tp;
    // Output projection: heads x v width -> hidden; Q, K and V (or MLA's down/up projections)
    // are the rest of the layer's attention parameters.
    const double out_params = static_cast<double>(m.attention_heads) * VHeadDim(m) * h;
    const double in_params = m.attention_params_per_layer > out_params
                                 ? m.attention_params_per_layer - out_params
                                 : h * (h + 2.0 * m.kv_heads * static_cast<double>(m.head_dim));
    PassCost layer;
    Add(layer, ProjectionTime(c, M, in_params / h / t, h));
    Add(layer, ProjectionTime(c, M, h, out_params / h / t));
    Add(layer, MemoryTime(c.dev, M * kElementwiseHiddenElements * h * c.wide_bpe));
    if (c.tp > 1) {
        // As in training: within a bridged pair the bridge, within the scale-up domain (an
        // NVL72 rack spans 18 trays of 4) the scale-up link, beyond it the network.
        const Link& link = c.links.GroupLink(c.tp);
        const double ar = 2.0 * (c.rccl_all_reduce ? RcclAllReduceSeconds(M * h * 2.0, c.tp)
                                                   : RingAllReduceSeconds(M * h * 2.0, c.tp, link));
        layer.seconds += ar;
        layer.memory_s += ar;
    }
    PassCost total;
    Add(total, layer, m.layers);
    const double dense_layers = m.IsMoe() ? std::min(m.dense_layers, m.layers) : m.layers;
    const double moe_layers = m.layers - dense_layers;
    if (dense_layers > 0) {
        const double ffn =
            m.IsMoe() && m.dense_ffn_hidden_size > 0 ? m.dense_ffn_hidden_size : m.ffn_hidden_size;
        PassCost one;
        Add(one, MlpTime(c, M, ffn, 1, 1, 0));
        Add(total, one, dense_layers);
    }
    if (moe_layers > 0) {
        const double ffn =
            m.expert_ffn_hidden_size > 0 ? m.expert_ffn_hidden_size : m.ffn_hidden_size;
        PassCost one;
        Add(one, MlpTime(c, M, ffn, m.experts, m.experts_per_token, m.shared_experts));
        // Dispatch and combine are communication: counted with the memory side, as TP's
        // all-reduce is.
        const double a2a = ExpertDispatchCombineSeconds(m, c.links, c.ep, M, c.fp8);
        one.seconds += a2a;
        one.memory_s += a2a;
        Add(total, one, moe_layers);
    }
    if (sampled > 0) {
        Add(total, GemmTime(*c.wide, sampled, m.vocab_size / t, h, c.wide_bpe));
    }
    // Launch-bound, not compute: counted with the memory side, as the roofline's own
    // per-kernel overhead is counted with each op's bound.
    const double fixed_s = ExtraKernelsPerPass(m, c.fp8) * c.dev.kernel_overhead_s;
    total.seconds += fixed_s;
    total.memory_s += fixed_s;
    return total;
}

// Attention of `batch` sequences adding `tokens` tokens each over `context` tokens (causal:
// a prompt attending to itself), every layer; sliding-window layers see at most the window.
PassCost AttentionCost(const PassContext& c, double batch, double tokens, double context,
                       bool causal) {
    const ResolvedModel& m = c.m;
    const double M = batch * tokens;
    const double heads = static_cast<double>(m.attention_heads) / c.tp;
    const double kv_token = KvBytesPerTokenPerLayer(m, c.tp, c.kv_bpe);
    auto layer = [&](double window) {
        double ctx = context;
        double fraction = causal ? kCausalWorkFraction : 1.0;
        if (window > 0 && window < context) {
            ctx = window;
            // Causal prompt of length L with window W: sum of min(i, W) = L W (1 - W / 2L).
            fraction = causal ? 1.0 - window / (2.0 * tokens) : 1.0;
        }
        const double flops = 2.0 * M * ctx * heads * (QkHeadDim(m) + VHeadDim(m));
        const double q_and_out = M * heads * (QkHeadDim(m) + VHeadDim(m)) * c.wide_bpe;
        const double bytes = batch * ctx * kv_token + q_and_out;
        PassCost one;
        Add(one, AttentionTime(*c.wide, flops, fraction, bytes));
        return one;
    };
    const double window_layers = m.WindowLayers();
    PassCost total;
    Add(total, layer(0), m.layers - window_layers);
    if (window_layers > 0) {
        Add(total, layer(m.sliding_window), window_layers);
    }
    return total;
}

// One forward pass of `batch` sequences adding `tokens` tokens each over `context` tokens.
PassCost ForwardPass(const PassContext& c, double batch, double tokens, double context,
                     bool causal) {
    PassCost p = LinearCost(c, batch * tokens, batch);
    Add(p, AttentionCost(c, batch, tokens, context, causal));
    return p;
}

// Static-batch request checks (the estimate's own fields).
Status ValidateInferenceRequest(const InferenceRequest& req) {
    if (req.batch_size < 1 || req.batch_size > kMaxBatchSize) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "batch_size must be between 1 and " + std::to_string(kMaxBatchSize),
                         "/batch_size");
    }
    if (req.input_tokens < 1 || req.input_tokens > kMaxInferenceTokens) {
        return MakeError(
            ErrorCode::kInvalidArgument,
            "input_tokens must be between 1 and " + std::to_string(kMaxInferenceTokens),
            "/input_tokens");
    }
    if (req.output_tokens < 1 || req.output_tokens > kMaxInferenceTokens) {
        return MakeError(
            ErrorCode::kInvalidArgument,
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
    if (req.concurrency && req.requests_per_second) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "give at most one of concurrency and requests_per_second",
                         "/requests_per_second");
    }
    if (auto problem = WeightPrecisionProblem(req)) {
        return MakeError(ErrorCode::kInvalidArgument, *problem, "/weight_precision");
    }
    if (req.concurrency && (*req.concurrency < 1 || *req.concurrency > kMaxBatchSize)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "concurrency must be between 1 and " + std::to_string(kMaxBatchSize),
                         "/concurrency");
    }
    for (const auto& [bound, field] :
         {std::pair{req.max_inter_token_latency_ms, "/max_inter_token_latency_ms"},
          std::pair{req.max_time_to_first_token_ms, "/max_time_to_first_token_ms"}}) {
        if (bound && !(std::isfinite(*bound) && *bound > 0 && *bound <= kMaxLatencyBoundMs)) {
            return MakeError(ErrorCode::kInvalidArgument,
                             std::string(field + 1) + " must be above 0 and at most 3600000",
                             field);
        }
    }
    if (req.requests_per_second &&
        !(std::isfinite(*req.requests_per_second) && *req.requests_per_second > 0 &&
          *req.requests_per_second <= kMaxServingRequestsPerSecond)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "requests_per_second must be above 0 and at most 1000000",
                         "/requests_per_second");
    }
    return Ok{};
}

// True for the CDNA3 parts whose ROCm serving GEMMs are measured (kRocmCdna3ServingIds).
bool ServesOnRocmCdna3(const Accelerator& accelerator) {
    return accelerator.vendor == "AMD" &&
           std::any_of(kRocmCdna3ServingIds.begin(), kRocmCdna3ServingIds.end(),
                       [&](std::string_view id) { return accelerator.id.rfind(id, 0) == 0; });
}

// The GEMMs of a tensor-parallel ROCm vLLM replica on CDNA3 reach
// kRocmCdna3TensorParallelGemmFraction of the in-step asymptote; the answer says which stack was
// applied and why.
void ApplyRocmServingGemm(DeviceModel& dev, const Accelerator& accelerator) {
    dev.gemm_max_efficiency *= kRocmCdna3TensorParallelGemmFraction;
    for (Assumption& a : dev.assumptions) {
        if (a.name == "gemm_max_efficiency") {
            a.value = dev.gemm_max_efficiency;
            a.description = a.description.str() +
                            ", times rocm_tensor_parallel_gemm_fraction (ROCm vLLM stack)";
        }
    }
    dev.assumptions.push_back(
        {"rocm_tensor_parallel_gemm_fraction", kRocmCdna3TensorParallelGemmFraction, "fraction",
         "share of the in-step GEMM asymptote that the GEMMs of a tensor-parallel ROCm vLLM "
         "replica reach; applied because " +
             accelerator.name +
             " is an AMD CDNA3 part served under ROCm with tensor parallel over 1 (CUDA "
             "engines and single-GPU replicas are timed without it)",
         "fitted to AMD's published ROCm vLLM throughput on 8 x MI300X, TP 8 (AMD ROCm hub "
         "performance results, vLLM 0.10.2, Llama 3.1 70B/405B FP8; Oracle OCI's 2024 vLLM "
         "table): mean log error 0 on those rows (docs/estimator.md, vendor serving stacks)"});
}

// TP all-reduces follow RCCL's measured curve on a CDNA3 box served under ROCm, unless the
// request sets scale_up_efficiency or the group is larger than the 8-GPU xGMI mesh (vLLM
// places a TP group of up to 8 in one node).
bool RcclAllReduces(const InferenceRequest& req, const Accelerator& accelerator, int tp) {
    return tp > 1 && ServesOnRocmCdna3(accelerator) && !req.efficiency.scale_up_efficiency &&
           tp <= kRcclMeshGpus;
}

// The serving engine's device model at `precision`: serving bandwidth unless the caller set
// one, and the vendor stack's GEMM share.
Result<DeviceModel> ServingDevice(const InferenceRequest& req, const Accelerator& accelerator,
                                  int tp, Precision precision, bool with_assumptions = true) {
    auto device =
        MakeDeviceModel(accelerator, precision, req.efficiency, "/precision", with_assumptions);
    if (!device.ok()) {
        return device.error();
    }
    DeviceModel dev = device.value();
    if (!req.efficiency.memory_bandwidth_efficiency) {
        // Each vendor's software stack streams HBM at its own measured fraction.
        const bool rocm = accelerator.vendor == "AMD";
        const double efficiency =
            rocm ? kRocmServingBandwidthEfficiency : kServingBandwidthEfficiency;
        dev.memory_max_efficiency = efficiency;
        for (Assumption& a : dev.assumptions) {
            if (a.name == "memory_bandwidth_efficiency") {
                a.value = efficiency;
                a.description =
                    rocm ? "HBM bandwidth reached by a ROCm serving engine (vLLM/SGLang on ROCm) "
                           "streaming weights and KV cache, fraction of peak"
                         : "HBM bandwidth reached by a serving engine on CUDA (vLLM, TensorRT-LLM, "
                           "SGLang) streaming weights and KV cache, fraction of peak";
                a.source =
                    rocm ? "the CUDA engines' 0.65 x the ROCm/CUDA ratio of BabelStream HBM "
                           "fractions (MI300X 0.775, H100 0.88; Azure AI-benchmarking-guide)"
                         : "NIM 70B FP8 decode 0.55 of peak; LLM-Viewer ideal roofline 1.5-1.9x "
                           "optimistic vs TensorRT-LLM (estimator-references section 3.5)";
            }
        }
    }
    if (!req.efficiency.gemm_max_efficiency && tp > 1 && ServesOnRocmCdna3(accelerator)) {
        ApplyRocmServingGemm(dev, accelerator);
    }
    if (RcclAllReduces(req, accelerator, tp)) {
        const double at_16mb = kRcclMi300xAllReduceBusBandwidth[3].gb_per_s;
        dev.assumptions.push_back(
            {"rccl_all_reduce_bus_gb_per_s_16mb", at_16mb, "GB/s",
             "tensor-parallel all-reduces timed on RCCL's measured bus bandwidth at their message "
             "size (1 MB 22.4, 4 MB 82.5, 16 MB 171.5, 134 MB 290.8, 8 GB 316.8 GB/s over 8 "
             "GPUs, (t - 1) / 7 of it for t < 8; 14 us up to 64 KB), not the link times "
             "scale_up_efficiency; applied because " +
                 accelerator.name + " is an AMD CDNA3 part served under ROCm",
             "RCCL 2.22.3 all_reduce_perf on 8 x MI300X (samuel-bohman/AI-benchmarking-guide "
             "ND_MI300X_v5_results.md @3de0c294); 13-14 us for 1-64 KB (hisohara/ai-scripts "
             "rccl-smoketest); ROCm/rccl PR #1270 for t < 8"});
    }
    return dev;
}

// The devices one serving layout runs on.
struct ServingDevices {
    DeviceModel at_precision;                  // the request's precision: its constants are echoed
    std::optional<DeviceModel> wide_below;     // 16 bits, for a precision below
    std::optional<DeviceModel> experts_below;  // a routed-experts checkpoint's GEMMs at fp4
    bool quantised = false;                    // below 16 bits
    bool experts_only = false;                 // below 16 bits with a routed-experts checkpoint

    // The work kept at 16 bits, and the routed experts' GEMMs.
    const DeviceModel& Wide() const { return wide_below ? *wide_below : at_precision; }
    const DeviceModel& Experts() const { return experts_below ? *experts_below : at_precision; }
};

// A routed-experts checkpoint at fp4 is GPT-OSS's MXFP4, whose weights Blackwell multiplies
// with 8-bit (MXFP8) activations (TensorRT-LLM's GPT-OSS support matrix, Blackwell: mxfp8
// activations, mxfp4 weights): the experts' GEMMs run at the fp8 peak.
Result<ServingDevices> MakeServingDevices(const InferenceRequest& req,
                                          const Accelerator& accelerator, int tp,
                                          const ResolvedModel& m) {
    auto device = ServingDevice(req, accelerator, tp, req.precision);
    if (!device.ok()) {
        const Error& e = device.error();
        if (e.field != "/precision" || !IsBelowSixteenBits(req.precision)) {
            return e;
        }
        // A narrow checkpoint still serves there with 16-bit math (weight-only).
        const std::string narrow(PrecisionName(req.precision));
        return MakeError(e.code,
                         e.message + "; a checkpoint stored at " + narrow +
                             " serves with 16-bit math as precision bf16, weight_precision " +
                             narrow,
                         e.field);
    }
    ServingDevices d;
    d.at_precision = std::move(device.value());
    d.quantised = IsBelowSixteenBits(req.precision);
    d.experts_only = d.quantised && m.low_precision_scope == LowPrecisionScope::kRoutedExperts;
    if (d.quantised) {
        auto wide = ServingDevice(req, accelerator, tp, kUnquantisedPrecision, false);
        if (wide.ok()) d.wide_below = std::move(wide.value());
    }
    if (d.experts_only && req.precision == Precision::kFp4) {
        auto experts = ServingDevice(req, accelerator, tp, Precision::kFp8, false);
        if (experts.ok()) d.experts_below = std::move(experts.value());
    }
    return d;
}

// The stored width of the routed (or only) linear weights: `weight_precision`'s where the
// request quantises weights only, else their GEMMs' `bpe`.
double StoredWeightBytesPerElement(const InferenceRequest& req, double bpe) {
    return req.weight_precision ? BytesPerElement(*req.weight_precision) : bpe;
}

// The stored width of the other linear layers' weights (attention projections, dense MLPs,
// shared experts): quantised with the rest where the checkpoint quantises every linear layer,
// left at their GEMMs' `dense_bpe` where it quantises only its routed experts.
double StoredDenseWeightBytesPerElement(const InferenceRequest& req, const ResolvedModel& m,
                                        double dense_bpe) {
    return req.weight_precision && m.low_precision_scope == LowPrecisionScope::kLinearLayers
               ? BytesPerElement(*req.weight_precision)
               : dense_bpe;
}

// KV cache of fp4 weights defaults to fp8: serving engines offer no fp4 KV cache (vLLM's
// --kv-cache-dtype is auto, fp8, fp8_e4m3 or fp8_e5m2).
Precision DefaultKvPrecision(Precision weights) {
    return weights == Precision::kFp4 ? Precision::kFp8 : weights;
}

// Continuous batching on one replica (see ServingPoint).
class ServingModel {
public:
    ServingModel(const PassContext& c, const InferenceRequest& req, double capacity_gb,
                 double overhead_gb, const std::string& accelerator_id)
        : c_(c),
          in_(req.input_tokens),
          out_(req.output_tokens),
          step_overhead_s_(req.step_overhead_s.value_or(0.0)) {
        const bool large = capacity_gb * kGb >= kLargeDeviceMemoryGib * kGib &&
                           accelerator_id.find("a100") == std::string::npos;
        max_num_seqs_ = large ? kLargeDeviceMaxNumSeqs : kSmallDeviceMaxNumSeqs;
        max_num_batched_tokens_ =
            large ? kLargeDeviceMaxNumBatchedTokens : kSmallDeviceMaxNumBatchedTokens;
        const ResolvedModel& m = c.m;
        usable_gb_ = capacity_gb * kServingGpuMemoryUtilization;
        weights_gb_ = WeightBytesPerAccelerator(c) / kGb;
        overhead_gb_ = overhead_gb;
        const double act_per_token = (4.0 * m.hidden_size + 3.0 * m.ffn_hidden_size / c.tp) * c.bpe;
        step_activations_gb_ = max_num_batched_tokens_ * act_per_token / kGb;
        kv_budget_gb_ = usable_gb_ - weights_gb_ - overhead_gb_ - step_activations_gb_;
        kv_per_seq_gb_ = KvBytesPerSequence(m, c.tp, c.kv_bpe, in_ + out_ / 2.0) / c.pp / kGb;
        // Each expert-parallel rank is an engine of its own (its scheduler, KV cache and
        // step budget), decoding at most kExpertParallelMaxSequencesPerRank: the replica's
        // limits are a rank's times the ranks.
        ranks_ = static_cast<int>(SequenceRanks(c));
        if (ranks_ > 1) {
            max_num_seqs_ = std::min(max_num_seqs_, kExpertParallelMaxSequencesPerRank);
        }
        const double per_rank_limit = kv_budget_gb_ > 0
                                          ? std::min(std::floor(kv_budget_gb_ / kv_per_seq_gb_),
                                                     static_cast<double>(kMaxBatchSize) / ranks_)
                                          : 0;
        kv_limit_ = static_cast<int>(per_rank_limit) * ranks_;
        max_num_seqs_ *= ranks_;
        running_limit_ = std::min(kv_limit_, max_num_seqs_);
    }

    int RunningLimit() const { return running_limit_; }

    // Why no sequence can run (RunningLimit() < 1), in the engine's own memory terms.
    std::string NoRoomReason() const {
        return "the serving engine has no room for one sequence: of " + Fixed1(usable_gb_) +
               " GB per accelerator it may use (gpu_memory_utilization " +
               Fixed1(kServingGpuMemoryUtilization) + " of the capacity) the weights take " +
               Fixed1(weights_gb_) + " GB, the overhead " + Fixed1(overhead_gb_) +
               " GB and one step's activations (" + std::to_string(max_num_batched_tokens_) +
               " tokens) " + Fixed1(step_activations_gb_) + " GB, leaving " +
               Fixed1(kv_budget_gb_) + " GB for a KV cache that needs " + Fixed1(kv_per_seq_gb_) +
               " GB per sequence; no operating point (point: null). "
               "Use more accelerators per replica (tensor parallel), a lower precision, or an "
               "accelerator with more memory";
    }

    // Steady state with `running` sequences decoding and `queued` waiting.
    ServingPoint At(double running, double queued) const {
        ServingPoint p;
        p.running_sequences = running;
        p.queued_requests = queued;
        p.concurrency = running + queued;
        p.kv_cache_bound = queued > 0 && kv_limit_ <= max_num_seqs_;
        // A new prompt runs in chunks of the budget the running sequences leave; a sequence
        // holds its slot for those chunk steps and its output - 1 decode steps.
        // Prompt chunks are per rank (each rank's engine has its own step budget); `chunk` is
        // one rank's, `replica_chunk` the tokens of one chunk on every rank.
        const double chunk =
            std::max(1.0, std::min(in_, max_num_batched_tokens_ - running / ranks_));
        const double replica_chunk = chunk * ranks_;
        const double chunks = std::ceil(in_ / chunk);
        const double life_steps = chunks + out_ - 1.0;
        // The decode steps also carry the prompts of the other running sequences, spread
        // over their lives; a sequence's own prompt is in its chunk steps, counted once.
        p.prefill_tokens_per_step = std::max(0.0, running - 1.0) * in_ / life_steps;
        // Those prompts enter as whole chunks: a share of the steps carries a chunk and the
        // rest decode alone (all steps carry prompt tokens once they average a chunk or more).
        // The two kinds are timed apart, weighted by how often each occurs: a step's time is
        // not linear in its tokens (an MoE step reads the experts its tokens touch, nearly all
        // with a chunk in, a few without; a dense step turns compute bound).
        const double chunk_share = std::min(1.0, p.prefill_tokens_per_step / replica_chunk);
        const double step =
            chunk_share > 0
                ? chunk_share * StepSeconds(running, p.prefill_tokens_per_step / chunk_share) +
                      (1.0 - chunk_share) * StepSeconds(running, 0)
                : StepSeconds(running, 0);
        // It waits on average half a step before its first chunk.
        const double first_token = 0.5 * step + chunks * StepSeconds(running, replica_chunk);
        const double service = first_token + (out_ - 1.0) * step;
        p.inter_token_latency_ms = step * 1e3;
        // Little's law on the running slots: each is busy for one request's service time.
        p.requests_per_second = running / service;
        p.output_tokens_per_second = p.requests_per_second * out_;
        // Queued requests wait their turn: Little's law gives the time in the system.
        const double in_system = std::max(service, p.concurrency / p.requests_per_second);
        p.time_to_first_token_ms = (first_token + in_system - service) * 1e3;
        p.request_latency_ms = in_system * 1e3;
        return p;
    }

    ServingPoint AtConcurrency(double concurrency) const {
        const double running = std::min(concurrency, static_cast<double>(running_limit_));
        return At(running, concurrency - running);
    }

    // The running batch that serves `rate` requests/s (bisection: throughput grows with
    // batch); saturated when even the running limit serves less.
    ServingPoint AtRate(double rate, bool* saturated) const {
        const ServingPoint full = At(running_limit_, 0);
        *saturated = full.requests_per_second < rate;
        if (*saturated) {
            return full;
        }
        double lo = 0;
        double hi = running_limit_;
        for (int i = 0; i < kRateSolveSteps; ++i) {
            const double mid = 0.5 * (lo + hi);
            (At(mid, 0).requests_per_second < rate ? lo : hi) = mid;
        }
        return At(hi, 0);
    }

    std::vector<ServingPoint> Curve() const {
        std::vector<ServingPoint> curve;
        for (int n = 1; n < running_limit_; n *= 2) {
            curve.push_back(At(n, 0));
        }
        if (running_limit_ >= 1) {
            curve.push_back(At(running_limit_, 0));
        }
        return curve;
    }

    ServingEstimate Describe() const {
        ServingEstimate s;
        s.kv_cache_budget_gb_per_accelerator = kv_budget_gb_;
        s.kv_cache_limit_sequences = kv_limit_;
        s.max_num_seqs = max_num_seqs_;
        s.max_num_batched_tokens = max_num_batched_tokens_;
        s.curve = Curve();
        return s;
    }

private:
    // One engine step: `running` decode tokens at the mean context plus `prefill` prompt
    // tokens (their attention as that share of whole causal prompts); weights read once.
    // Over pipeline stages, each micro-batch's share passes all layers and the hops while the
    // other micro-batches keep the other stages busy: a sequence's step is its micro-batch's.
    // Under expert parallel each rank runs its share of both (PerRank).
    double StepSeconds(double running, double prefill) const {
        prefill /= SequenceRanks(c_);
        running = PerRank(c_, running);
        const double micro_batches = MicroBatches(c_, running);
        running /= micro_batches;
        prefill /= micro_batches;
        const double prompts = prefill / in_;
        PassCost step = LinearCost(c_, running + prefill, running + prompts);
        Add(step, AttentionCost(c_, running, 1, in_ + out_ / 2.0, false));
        if (prefill > 0) {
            Add(step, AttentionCost(c_, prompts, in_, in_, true));
        }
        return step.seconds + PipelineHopSeconds(c_, running + prefill) + step_overhead_s_;
    }

    const PassContext& c_;
    double in_;
    double out_;
    double step_overhead_s_;
    int ranks_ = 1;
    int max_num_seqs_ = 0;
    int max_num_batched_tokens_ = 0;
    double usable_gb_ = 0;
    double weights_gb_ = 0;
    double overhead_gb_ = 0;
    double step_activations_gb_ = 0;
    double kv_per_seq_gb_ = 0;
    double kv_budget_gb_ = 0;
    int kv_limit_ = 0;
    int running_limit_ = 0;
};

// The per-layer fixed costs of MLA and MoE routing, as used (nothing for dense GQA models).
void EchoLayerFixedCosts(const ResolvedModel& m, bool fp8, Assumptions& echo) {
    if (!IsMla(m) && !m.IsMoe()) return;
    if (IsMla(m)) {
        echo.push_back({"mla_extra_kernels_per_layer", kMlaExtraKernelsPerLayer, "kernels",
                        "launches of an MLA layer's decode beyond a GQA layer's, each costing "
                        "kernel_overhead_s",
                        "counted from vLLM's absorbed MLA decode (v0.7 MLACommonImpl): 15 "
                        "against GQA's 6"});
    }
    if (m.IsMoe()) {
        echo.push_back({"moe_routing_extra_kernels_per_layer", kMoeRoutingExtraKernelsPerLayer,
                        "kernels",
                        "launches of a routed MoE MLP beyond a dense MLP's (router GEMM, top-k, "
                        "align, activation, moe_sum, scaling), each costing kernel_overhead_s",
                        "counted from vLLM fused_moe.py fused_experts and deepseek_v2.py (v0.7): "
                        "10 against 4"});
        if (m.shared_experts > 0) {
            echo.push_back({"shared_expert_kernels_per_layer", kSharedExpertKernelsPerLayer,
                            "kernels", "gate-up GEMM, activation, down GEMM and the add",
                            "DeepSeekMoE (arXiv 2401.06066 §3.2); deepseek_v2.py"});
        }
    }
    if (fp8) {
        echo.push_back({"fp8_quantize_kernels_per_extra_gemm", 1.0, "kernels",
                        "one activation-quantisation launch per FP8 GEMM that MLA (q down, q up, "
                        "kv down against one QKV: 2) and shared experts (2) add",
                        "vLLM Fp8LinearMethod dynamic activation scales (scaled_fp8_quant, "
                        "per_token_group_quant_fp8)"});
    }
    echo.push_back({"layer_fixed_kernels_per_pass", ExtraKernelsPerPass(m, fp8), "kernels",
                    "all of the above over the model's layers: time per forward pass = this x "
                    "kernel_overhead_s",
                    "derived"});
}

void EchoServing(const InferenceRequest& req, const ServingEstimate& s, Assumptions& echo) {
    echo.push_back({"max_num_seqs", static_cast<double>(s.max_num_seqs), "sequences",
                    "most sequences one engine step decodes",
                    "vLLM EngineArgs.get_batch_defaults, OpenAI server: 1024 on devices of 70 GiB "
                    "or more other than A100, else 256"});
    echo.push_back({"max_num_batched_tokens", static_cast<double>(s.max_num_batched_tokens),
                    "tokens",
                    "token budget of one engine step (decode tokens first, then prompt "
                    "chunks)",
                    "vLLM EngineArgs.get_batch_defaults, OpenAI server: 8192 on devices of 70 "
                    "GiB or more other than A100, else 2048"});
    echo.push_back({"serving_mean_context_tokens", req.input_tokens + req.output_tokens / 2.0,
                    "tokens",
                    "context a running sequence holds on average (KV-cache limit and decode "
                    "attention)",
                    "derived: input + output / 2 (paged KV cache grows with the sequence)"});
}

}  // namespace

std::optional<std::string> WeightPrecisionProblem(const InferenceRequest& req) {
    if (!req.weight_precision) return std::nullopt;
    const double bytes = BytesPerElement(*req.weight_precision);
    if (const auto& stored = req.model.checkpoint_precision;
        stored && BytesPerElement(*stored) != bytes) {
        return "weight_precision " + std::string(PrecisionName(*req.weight_precision)) +
               " disagrees with the model's checkpoint, stored as " +
               std::string(PrecisionName(*stored)) + " (" + req.model.checkpoint_precision_source +
               "); leave weight_precision out to serve the checkpoint as stored";
    }
    if (IsBelowSixteenBits(*req.weight_precision) && bytes < BytesPerElement(req.precision)) {
        return std::nullopt;
    }
    return "weight_precision must be below 16 bits and narrower than precision '" +
           std::string(PrecisionName(req.precision)) +
           "' (weights the GEMMs read at their own width are precision alone)";
}

void EchoPipelineConstants(Assumptions& echo) {
    echo.push_back({"pipeline_activation_bytes_per_element", kPipelineActivationBytesPerElement,
                    "bytes",
                    "hidden states sent between pipeline stages per element (model dtype, also "
                    "for FP8 weights)",
                    "vLLM IntermediateTensors: hidden_states and residual in the model dtype"});
    echo.push_back({"pipeline_tensors_per_hop", kPipelineTensorsPerHop, "tensors",
                    "tensors of hidden_size per token sent at each stage boundary",
                    "vLLM IntermediateTensors: hidden_states and residual"});
    echo.push_back({"pipeline_stage_handoff_s", kPipelineStageHandoffS, "s",
                    "fixed cost of one stage handoff besides the link's hop latency (NCCL "
                    "send/recv and the next stage's launch), pp - 1 per decode step",
                    "judgement: nccl-tests sendrecv_perf small messages over InfiniBand/EFA "
                    "10-30 us end to end"});
}

void EchoExpertParallelConstants(Assumptions& echo) {
    echo.push_back({"expert_dispatch_fp8_bytes_per_element", kExpertDispatchFp8BytesPerElement,
                    "bytes",
                    "hidden-state bytes per element a token's dispatch to an expert's rank sends "
                    "when the model runs in FP8 (one FP32 scale per 128 channels); BF16 (" +
                        Fixed1(kExpertDispatchBytesPerElement) + ") otherwise",
                    "DeepEP README: FP8 dispatching, BF16 combining (DeepSeek-V3 setting)"});
    echo.push_back({"expert_combine_bytes_per_element", kExpertCombineBytesPerElement, "bytes",
                    "bytes per element of an expert's output sent back to the token's rank",
                    "DeepEP README: BF16 combining"});
    echo.push_back({"expert_all_to_all_fixed_s", kExpertAllToAllFixedS, "s",
                    "fixed cost of one dispatch or combine per MoE layer besides its bytes "
                    "(launch, RDMA round, synchronisation)",
                    "calibrated: DeepEP low-latency kernels on H800 + 400 Gb/s CX7 "
                    "(docs/legacy.md, 128 tokens/rank) leave 41-57 us beyond the bytes at "
                    "EP16-EP128"});
    echo.push_back({"expert_parallel_max_sequences_per_rank",
                    static_cast<double>(kExpertParallelMaxSequencesPerRank), "sequences",
                    "most sequences one expert-parallel rank decodes per step (each rank runs "
                    "attention data parallel on its own sequences)",
                    "DeepEP README: low-latency decode batch per rank under 256; SGLang EP "
                    "decode 128-256 tokens per rank"});
}

double ExpertDispatchCombineSeconds(const ResolvedModel& m, const ClusterLinks& links, int ep,
                                    double tokens_per_rank, bool fp8) {
    if (ep <= 1 || !m.IsMoe()) return 0;
    const int per_node = std::min(ep, std::max(1, links.accelerators_per_node));
    const Link& near = links.GroupLink(per_node);
    const Link& far = links.GroupLink(ep);
    // Destinations are spread evenly over the ranks: (ep - per_node) / ep of a rank's routed
    // copies leave its node, (per_node - 1) / ep stay in it, 1 / ep stay on it.
    const double far_share = static_cast<double>(ep - per_node) / ep;
    const double near_share = static_cast<double>(per_node - 1) / ep;
    const double copies = tokens_per_rank * m.experts_per_token * m.hidden_size;
    auto operation = [&](double bytes_per_element) {
        const double bytes = copies * bytes_per_element;
        const double seconds = &far == &near ? (far_share + near_share) * bytes / far.bytes_per_s
                                             : std::max(far_share * bytes / far.bytes_per_s,
                                                        near_share * bytes / near.bytes_per_s);
        return seconds + kExpertAllToAllFixedS;
    };
    return operation(fp8 ? kExpertDispatchFp8BytesPerElement : kExpertDispatchBytesPerElement) +
           operation(kExpertCombineBytesPerElement);
}

double ExpectedTouchedExperts(double experts, double top_k, double tokens) {
    return TouchedExperts(experts, top_k, tokens);
}

RequestFlops ServedRequestFlops(const ResolvedModel& m, double in, double out) {
    const double linear_per_token = 2.0 * m.ActiveNonEmbeddingParams();
    const double logits_per_token = 2.0 * m.vocab_size * static_cast<double>(m.hidden_size);
    const double heads = m.attention_heads;
    const double width = QkHeadDim(m) + VHeadDim(m);
    const double window_layers = m.WindowLayers();
    // Attention FLOPs of one token over `context` keys, every layer (window layers capped).
    auto attention = [&](double context) {
        const double windowed = std::min(context, static_cast<double>(m.sliding_window));
        return 2.0 * heads * width *
               ((m.layers - window_layers) * context + window_layers * windowed);
    };
    RequestFlops f;
    f.prefill = in * (linear_per_token + attention(kCausalWorkFraction * in));
    f.decode = out * (linear_per_token + logits_per_token + attention(in + out / 2.0));
    return f;
}

double KvCacheBytesPerSequence(const ResolvedModel& model, int tensor_parallel,
                               double kv_bytes_per_element, double tokens) {
    return KvBytesPerSequence(model, tensor_parallel, kv_bytes_per_element, tokens);
}

Result<InferenceEstimate> EstimateInference(const InferenceRequest& req,
                                            const ClusterSpec& cluster) {
    if (auto s = ValidateCluster(cluster); !s.ok()) {
        return s.error();
    }
    if (auto s = ValidateInferenceRequest(req); !s.ok()) {
        return s.error();
    }
    auto model = DeriveModel(req.model);
    if (!model.ok()) {
        return model.error();
    }
    return EstimateInference(req, cluster, model.value());
}

namespace {

// Continuous batching of the request's concurrency or rate on one replica, into e.serving;
// a warning when the weights leave no room for one sequence.
// The box's load is spread evenly over its replicas (a router's round robin): each replica
// serves concurrency / replicas requests, or requests_per_second / replicas.
void AddServing(const PassContext& ctx, const InferenceRequest& req, double overhead_gb,
                const std::string& accelerator_id, InferenceEstimate& e) {
    const ServingModel serving(ctx, req, e.memory_capacity_gb, overhead_gb, accelerator_id);
    ServingEstimate s = serving.Describe();
    const double replicas = std::max(1, e.replicas);
    if (serving.RunningLimit() < 1) {
        // The weights leave no room for a single sequence's KV cache: no operating point.
        s.mode = req.concurrency ? "concurrency" : "request_rate";
        s.offered_requests_per_second = req.requests_per_second;
        s.saturated = true;
        e.warnings.push_back(
            {req.concurrency ? "/concurrency" : "/requests_per_second", serving.NoRoomReason()});
    } else if (req.concurrency) {
        s.mode = "concurrency";
        s.point = serving.AtConcurrency(*req.concurrency / replicas);
    } else {
        s.mode = "request_rate";
        s.offered_requests_per_second = *req.requests_per_second / replicas;
        s.point = serving.AtRate(*req.requests_per_second / replicas, &s.saturated);
    }
    EchoServing(req, s, e.assumptions);
    e.serving = std::move(s);
}

// The request-level constants of an inference estimate and the model derivation's rules.
void EchoRequestConstants(const InferenceRequest& req, const PassContext& ctx, double overhead_gb,
                          double mean_context, Precision kv_precision, Assumptions& echo) {
    echo.push_back({"step_overhead_s", req.step_overhead_s.value_or(0.0), "s",
                    "fixed cost per decode step (sampling, scheduling)",
                    SourceOf(req.step_overhead_s.has_value(), "default 0")});
    echo.push_back({"memory_overhead_gb", overhead_gb, "GB",
                    "framework, CUDA context and workspace per accelerator",
                    SourceOf(req.memory_overhead_gb.has_value(), "estimator-references §3.4")});
    echo.push_back({"mean_decode_context_tokens", mean_context, "tokens",
                    "decode step evaluated at input + output / 2 (KV traffic is linear in "
                    "context)",
                    "derived"});
    echo.push_back({"kv_cache_bytes_per_element", ctx.kv_bpe, "bytes",
                    "KV cache precision " + std::string(PrecisionName(kv_precision)),
                    req.kv_cache_precision ? "request"
                    : req.precision == Precision::kFp4
                        ? "fp8 for fp4 weights (vLLM --kv-cache-dtype has no fp4)"
                        : "same as precision"});
    if (req.weight_precision) {
        echo.push_back(
            {"weight_bytes_per_element", ctx.weight_bpe, "bytes",
             "weight-only quantisation: the checkpoint's " +
                 std::string(LowPrecisionScopeName(ctx.m.low_precision_scope)) +
                 " weights stored as " + std::string(PrecisionName(*req.weight_precision)) +
                 " (memory and weight reads at this width), dequantised inside GEMMs that run at " +
                 std::string(PrecisionName(req.precision)) + "'s peak",
             std::string(ctx.m.checkpoint_precision == req.weight_precision
                             ? "the model's checkpoint (" + ctx.m.checkpoint_precision_source + ")"
                             : "request") +
                 "; IST-DASLab/marlin README (FP16xINT4: 'close to ideal (4x) speedups up "
                 "to batchsizes of 16-32 tokens'; its ideal model reads the weights at 4 bits plus "
                 "group scales and times the math at the fp16 peak, as here); vLLM's Marlin "
                 "kernels serve AWQ/GPTQ and MXFP4 weights (MarlinMxFp4LinearKernel) on GPUs "
                 "without FP4 math"});
    }
    if (ctx.bpe < kUnquantisedBytesPerElement) {
        echo.push_back(
            {"unquantised_bytes_per_element", ctx.wide_bpe, "bytes",
             "below 16 bits only the linear layers of the blocks are quantised: the output head "
             "(its GEMM and weights), the embedding table, the norms' and residual adds' "
             "traffic and attention's math stay at 16 bits (bf16 peak)",
             "NVIDIA Model Optimizer modelopt/torch/quantization/config.py "
             "_default_disabled_quantizer_cfg ('*lm_head*': enable False), the quantiser of "
             "TensorRT-LLM's and NVIDIA's published fp8/fp4 checkpoints; vLLM ParallelLMHead "
             "(no fp8 method); FlashAttention-2 (fp16/bf16 only)"});
    }
    if (ctx.dense_linear != &ctx.dev) {
        echo.push_back(
            {"routed_expert_gemm_peak_tflops", ctx.dev.peak_flops / 1e12, "TFLOP/s",
             "the model's checkpoint quantises only its routed experts (low_precision_scope "
             "routed_experts): their GEMMs run at this peak (at fp4 the MXFP4 weights are "
             "multiplied with 8-bit MXFP8 activations, the fp8 peak) and every other linear "
             "layer (attention projections, shared experts, dense MLPs) at 16 bits",
             "TensorRT-LLM examples/models/core/gpt_oss/README.md: 'MoE weights quantized with "
             "mxfp4. All the other weights are in bf16'; MoE support matrix, Blackwell: mxfp8 "
             "activations x mxfp4 weights"});
    }
    const Assumptions& derivation = ModelDerivationAssumptions();
    echo.insert(echo.end(), derivation.begin(), derivation.end());
}

// The tensor-parallel degree of a replica of `pp` stages on `n` accelerators: the request's,
// else n / pp; it must divide the attention heads and divide or be a multiple of the KV heads.
Result<int> TensorParallelDegree(const InferenceRequest& req, const ResolvedModel& m, int n,
                                 int pp) {
    if (pp < 1 || pp > kMaxPipelineParallel || pp > m.layers || n % pp != 0) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "pipeline_parallel must be between 1 and " +
                             std::to_string(std::min(kMaxPipelineParallel, m.layers)) +
                             " (the model's layers) and divide hardware.total_accelerators (" +
                             std::to_string(n) + ")",
                         "/pipeline_parallel");
    }
    const int per_stage = n / pp;
    int tp = req.tensor_parallel.value_or(per_stage);
    if (tp < 1 || tp > per_stage || per_stage % tp != 0) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "tensor_parallel must divide hardware.total_accelerators (" +
                             std::to_string(n) + ") / pipeline_parallel",
                         req.tensor_parallel ? "/tensor_parallel" : "/hardware/total_accelerators");
    }
    if (m.attention_heads % tp != 0) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "tensor parallel degree " + std::to_string(tp) +
                             " must divide attention_heads (" + std::to_string(m.attention_heads) +
                             "); set tensor_parallel",
                         req.tensor_parallel ? "/tensor_parallel" : "/hardware/total_accelerators");
    }
    if (!m.IsMla() && m.kv_heads % tp != 0 && tp % m.kv_heads != 0) {
        // Each rank holds whole KV heads: kv_heads / tp of them, or one replicated head when
        // tp is a multiple of kv_heads. vLLM refuses any other degree (10 KV heads on 4 ranks
        // would be 2.5 heads each).
        return MakeError(ErrorCode::kInvalidArgument,
                         "tensor parallel degree " + std::to_string(tp) +
                             " must divide kv_heads (" + std::to_string(m.kv_heads) +
                             ") or be a multiple of it; set tensor_parallel",
                         req.tensor_parallel ? "/tensor_parallel" : "/hardware/total_accelerators");
    }
    return tp;
}

// The expert-parallel ranks of a replica: 1 without `expert_parallel`; else a degree of at
// least 2 dividing the accelerators, of a MoE model with at least as many routed experts,
// without tensor or pipeline parallel (attention runs data parallel on every rank).
Result<int> ExpertParallelDegree(const InferenceRequest& req, const ResolvedModel& m, int n) {
    if (!req.expert_parallel) return 1;
    const int ep = *req.expert_parallel;
    auto fail = [](const std::string& message) {
        return MakeError(ErrorCode::kInvalidArgument, message, "/expert_parallel");
    };
    if (!m.IsMoe()) {
        return fail("expert_parallel needs a mixture-of-experts model (experts > 1)");
    }
    if (ep < 2 || ep > m.experts || n % ep != 0) {
        return fail("expert_parallel must be between 2 and the model's experts (" +
                    std::to_string(m.experts) + ") and divide hardware.total_accelerators (" +
                    std::to_string(n) + ")");
    }
    if (req.tensor_parallel.value_or(1) != 1 || req.pipeline_parallel.value_or(1) != 1) {
        return fail(
            "expert_parallel runs attention data parallel on every rank: leave "
            "tensor_parallel and pipeline_parallel unset (or 1)");
    }
    return ep;
}

}  // namespace

namespace {

// The box's figures: every replica at the estimate's per-replica figures.
void SetClusterFigures(const InferenceRequest& req, int accelerators, InferenceEstimate& e) {
    ClusterServing& c = e.cluster;
    c.accelerators = accelerators;
    c.replicas = e.replicas;
    c.accelerators_per_replica = e.tensor_parallel * e.pipeline_parallel * e.expert_parallel;
    double replica_tokens = e.output_tokens_per_second;
    if (e.serving && e.serving->point) {
        replica_tokens = e.serving->point->output_tokens_per_second;
        c.requests_per_second = e.serving->point->requests_per_second * e.replicas;
        c.concurrency_per_replica = req.concurrency
                                        ? static_cast<double>(*req.concurrency) / e.replicas
                                        : e.serving->point->concurrency;
    } else if (e.serving) {
        replica_tokens = 0;  // no room for a sequence: the box serves nothing
    }
    c.output_tokens_per_second = replica_tokens * e.replicas;
    c.output_tokens_per_second_per_accelerator =
        accelerators > 0 ? c.output_tokens_per_second / accelerators : 0;
}

// One layout: the request's tensor/pipeline/expert degrees (or their defaults) on the box.
Result<InferenceEstimate> EstimateLayout(const InferenceRequest& req, const ClusterSpec& cluster,
                                         const ResolvedModel& m) {
    const int pp = req.pipeline_parallel.value_or(1);
    auto experts = ExpertParallelDegree(req, m, cluster.accelerator_count);
    if (!experts.ok()) {
        return experts.error();
    }
    const int ep = experts.value();
    auto degree =
        ep > 1 ? Result<int>(1) : TensorParallelDegree(req, m, cluster.accelerator_count, pp);
    if (!degree.ok()) {
        return degree.error();
    }
    const int tp = degree.value();
    auto device = MakeServingDevices(req, cluster.accelerator, tp, m);
    if (!device.ok()) {
        return device.error();
    }
    const ServingDevices& devices = device.value();
    const DeviceModel& dev = devices.at_precision;
    ClusterLinks links = MakeClusterLinks(cluster, dev);
    const Precision kv_precision =
        req.kv_cache_precision.value_or(DefaultKvPrecision(req.precision));
    const double bpe = BytesPerElement(req.precision);
    const double wide_bpe = devices.quantised ? kUnquantisedBytesPerElement : bpe;
    const double dense_bpe = devices.experts_only ? wide_bpe : bpe;
    const PassContext ctx{m,
                          devices.Experts(),
                          links,
                          tp,
                          bpe,
                          BytesPerElement(kv_precision),
                          req.precision == Precision::kFp8,
                          pp,
                          ep,
                          RcclAllReduces(req, cluster.accelerator, tp),
                          &devices.Wide(),
                          wide_bpe,
                          devices.experts_only ? &devices.Wide() : &devices.Experts(),
                          dense_bpe,
                          StoredWeightBytesPerElement(req, bpe),
                          StoredDenseWeightBytesPerElement(req, m, dense_bpe)};
    const double step_overhead = req.step_overhead_s.value_or(0.0);
    const double overhead_gb = req.memory_overhead_gb.value_or(kDefaultInferenceOverheadGb);
    const double batch = req.batch_size;
    const double in = req.input_tokens, out_tokens = req.output_tokens;

    // Over pipeline stages the prompts pass all layers and the hops; each decode step is one
    // micro-batch's pass (the others fill the other stages meanwhile). Expert-parallel ranks
    // each run their share of the batch.
    const double rank_batch = PerRank(ctx, batch);
    PassCost prefill = ForwardPass(ctx, rank_batch, in, in, true);
    prefill.seconds += PipelineHopSeconds(ctx, rank_batch * in);
    double mean_context = in + out_tokens / 2.0;
    const double micro_batch = rank_batch / MicroBatches(ctx, rank_batch);
    PassCost decode = ForwardPass(ctx, micro_batch, 1, mean_context, false);
    decode.seconds += PipelineHopSeconds(ctx, micro_batch) + step_overhead;

    InferenceEstimate e;
    e.model = m;
    e.tensor_parallel = tp;
    e.pipeline_parallel = pp;
    e.expert_parallel = ep;
    e.replicas = cluster.accelerator_count / (tp * pp * ep);
    e.time_to_first_token_ms = prefill.seconds * 1e3;
    e.inter_token_latency_ms = decode.seconds * 1e3;
    double total_s = prefill.seconds + (out_tokens - 1.0) * decode.seconds;
    e.request_latency_ms = total_s * 1e3;
    e.output_tokens_per_second = batch * out_tokens / total_s;
    e.output_tokens_per_second_per_accelerator = e.output_tokens_per_second / (tp * pp * ep);
    e.prefill_tokens_per_second = batch * in / prefill.seconds;
    e.prefill_bound = prefill.compute_s >= prefill.memory_s ? "compute" : "memory";
    e.decode_bound = decode.compute_s >= decode.memory_s ? "compute" : "memory";

    const double kv_per_seq = KvBytesPerSequence(m, tp, ctx.kv_bpe, in + out_tokens) / pp;
    const double act_per_seq = in * (4.0 * m.hidden_size + 3.0 * m.ffn_hidden_size / tp) * ctx.bpe;
    e.weights_gb_per_accelerator = WeightBytesPerAccelerator(ctx) / kGb;
    e.kv_cache_gb_per_accelerator = kv_per_seq * rank_batch / kGb;
    e.memory_per_accelerator_gb = e.weights_gb_per_accelerator + e.kv_cache_gb_per_accelerator +
                                  act_per_seq * rank_batch / kGb + overhead_gb;
    e.memory_capacity_gb = cluster.accelerator.memory_gb;
    // The share of memory a serving engine may use, as `serving` counts it: a model that fits
    // the whole device but not the engine's share does not serve.
    const double usable_gb = e.memory_capacity_gb * kServingGpuMemoryUtilization;
    e.fits_in_memory = e.memory_per_accelerator_gb <= usable_gb;
    double free_gb = usable_gb - e.weights_gb_per_accelerator - overhead_gb;
    double per_seq_gb = (kv_per_seq + act_per_seq) / kGb;
    e.max_batch_size = free_gb > 0
                           ? static_cast<int>(std::min(std::floor(free_gb / per_seq_gb) * ep,
                                                       static_cast<double>(kMaxBatchSize)))
                           : 0;

    if (auto w =
            ContextWarning(m, in + out_tokens, "/input_tokens", "input_tokens + output_tokens")) {
        e.warnings.push_back(std::move(*w));
    }

    e.assumptions = dev.assumptions;
    e.assumptions.insert(e.assumptions.end(), links.assumptions.begin(), links.assumptions.end());
    EchoLayerFixedCosts(m, ctx.fp8, e.assumptions);
    if (pp > 1) {
        EchoPipelineConstants(e.assumptions);
    }
    if (ep > 1) {
        EchoExpertParallelConstants(e.assumptions);
    }
    e.assumptions.push_back({"gpu_memory_utilization", kServingGpuMemoryUtilization, "fraction",
                             "share of device memory the engine may use for weights, activations "
                             "and KV cache (fits_in_memory, max_batch_size and serving)",
                             "vLLM --gpu-memory-utilization default"});
    if (req.concurrency || req.requests_per_second) {
        AddServing(ctx, req, overhead_gb, cluster.accelerator.id, e);
    }
    EchoRequestConstants(req, ctx, overhead_gb, mean_context, kv_precision, e.assumptions);
    SetClusterFigures(req, cluster.accelerator_count, e);
    return e;
}

// The layout is searched for a serving load on a box of several accelerators when the request
// names no degree of its own.
bool SearchesLayout(const InferenceRequest& req, const ClusterSpec& cluster) {
    return !req.tensor_parallel && !req.pipeline_parallel && !req.expert_parallel &&
           (req.concurrency || req.requests_per_second) && cluster.accelerator_count > 1;
}

LayoutCandidate CandidateOf(const InferenceRequest& req, const InferenceEstimate& e) {
    LayoutCandidate c;
    c.tensor_parallel = e.tensor_parallel;
    c.expert_parallel = e.expert_parallel;
    c.replicas = e.replicas;
    c.output_tokens_per_second = e.cluster.output_tokens_per_second;
    c.output_tokens_per_second_per_accelerator = e.cluster.output_tokens_per_second_per_accelerator;
    c.serves = e.serving && e.serving->point.has_value();
    if (c.serves) {
        c.inter_token_latency_ms = e.serving->point->inter_token_latency_ms;
        c.time_to_first_token_ms = e.serving->point->time_to_first_token_ms;
    }
    c.meets_latency_bounds =
        c.serves &&
        c.inter_token_latency_ms <=
            req.max_inter_token_latency_ms.value_or(std::numeric_limits<double>::infinity()) &&
        c.time_to_first_token_ms <=
            req.max_time_to_first_token_ms.value_or(std::numeric_limits<double>::infinity());
    return c;
}

std::string LayoutName(const LayoutCandidate& c) {
    const std::string degree =
        c.expert_parallel > 1
            ? "expert parallel " + std::to_string(c.expert_parallel) + " (attention data parallel)"
            : "tensor parallel " + std::to_string(c.tensor_parallel);
    return degree + " x " + std::to_string(c.replicas) +
           (c.replicas == 1 ? " replica" : " replicas");
}

std::string Tokens(double v) {
    return std::to_string(static_cast<long long>(std::llround(v)));
}

// Whether `a` beats `b` for the objective (both serve; under throughput both meet the bounds
// or neither does, the latter compared by latency).
bool Better(LayoutObjective objective, bool by_latency, const LayoutCandidate& a,
            const LayoutCandidate& b) {
    if (objective == LayoutObjective::kLatency || by_latency) {
        if (a.inter_token_latency_ms != b.inter_token_latency_ms) {
            return a.inter_token_latency_ms < b.inter_token_latency_ms;
        }
    }
    return a.output_tokens_per_second > b.output_tokens_per_second;
}

// The layouts that would have beaten `chosen` but miss a latency bound, each with the bound it
// misses, in words ("" when none).
std::string OverTheBounds(const LayoutSearch& search, const LayoutCandidate& chosen) {
    std::string out;
    for (const LayoutCandidate& c : search.candidates) {
        if (!c.serves || c.meets_latency_bounds || !Better(search.objective, false, c, chosen)) {
            continue;
        }
        std::string missed;
        if (search.max_inter_token_latency_ms &&
            c.inter_token_latency_ms > *search.max_inter_token_latency_ms) {
            missed = "inter-token latency " + Fixed1(c.inter_token_latency_ms) + " ms over " +
                     Fixed1(*search.max_inter_token_latency_ms);
        } else if (search.max_time_to_first_token_ms) {
            missed = "time to first token " + Fixed1(c.time_to_first_token_ms) + " ms over " +
                     Fixed1(*search.max_time_to_first_token_ms);
        }
        out += (out.empty() ? "; not chosen for missing a latency bound: " : ", ") + LayoutName(c) +
               " (" + Tokens(c.output_tokens_per_second) + " tokens/s, " + missed + ")";
    }
    return out;
}

// The candidate the objective picks (index into candidates) and why, in words.
std::pair<std::size_t, std::string> Choose(const LayoutSearch& search) {
    const auto& all = search.candidates;
    const bool bounded = search.max_inter_token_latency_ms || search.max_time_to_first_token_ms;
    bool any_meets = false;
    for (const auto& c : all) any_meets = any_meets || c.meets_latency_bounds;
    const bool by_latency = search.objective == LayoutObjective::kThroughput && !any_meets;
    std::optional<std::size_t> best;
    std::optional<std::size_t> runner_up;
    for (std::size_t i = 0; i < all.size(); ++i) {
        const bool eligible = any_meets ? all[i].meets_latency_bounds : all[i].serves;
        if (!eligible) continue;
        if (!best || Better(search.objective, by_latency, all[i], all[*best])) {
            runner_up = best;
            best = i;
        } else if (!runner_up || Better(search.objective, by_latency, all[i], all[*runner_up])) {
            runner_up = i;
        }
    }
    const LayoutCandidate& b = all[*best];
    std::string why;
    if (search.objective == LayoutObjective::kLatency) {
        why = "layout_objective latency: the shortest inter-token latency (" +
              Fixed1(b.inter_token_latency_ms) + " ms) of the layouts that hold the model";
    } else if (by_latency) {
        why =
            "no layout meets the latency bounds at this load; the one closest to them (inter-"
            "token latency " +
            Fixed1(b.inter_token_latency_ms) + " ms) is answered";
    } else {
        why = std::string("layout_objective throughput: the most output tokens/s of the box (") +
              Tokens(b.output_tokens_per_second) + ", so the least cost per token) of the layouts" +
              (bounded ? " meeting the latency bounds" : " that hold the model");
    }
    why += ": " + LayoutName(b);
    if (!by_latency) why += OverTheBounds(search, b);
    if (runner_up) {
        const LayoutCandidate& r = all[*runner_up];
        why += "; next best " + LayoutName(r) + " (" + Tokens(r.output_tokens_per_second) +
               " tokens/s, inter-token latency " + Fixed1(r.inter_token_latency_ms) + " ms)";
    }
    return {*best, why};
}

// The request with one layout of the search: `degree` accelerators per replica, tensor
// parallel, or expert parallel with attention data parallel on every rank.
InferenceRequest WithLayout(const InferenceRequest& req, int degree, bool expert) {
    InferenceRequest one = req;
    if (expert) {
        one.expert_parallel = degree;
    } else {
        one.tensor_parallel = degree;
    }
    return one;
}

// Every tensor-parallel degree dividing the box (one replica per tp accelerators) and, for a
// mixture-of-experts model, every expert-parallel degree dividing it (the experts spread over
// the replica's ranks, attention data parallel on each: how TensorRT-LLM's DEP layouts, SGLang
// and vLLM serve DeepSeek and Qwen3 MoE models for throughput), each estimated with the load
// spread over its replicas; the objective picks one. Degrees the model's heads or experts
// refuse are not candidates. When no replica has room for a sequence the default layout (one
// replica on every accelerator) is answered with its warning.
Result<InferenceEstimate> SearchServingLayout(const InferenceRequest& req,
                                              const ClusterSpec& cluster, const ResolvedModel& m) {
    LayoutSearch search;
    search.objective = req.layout_objective.value_or(LayoutObjective::kThroughput);
    search.max_inter_token_latency_ms = req.max_inter_token_latency_ms;
    search.max_time_to_first_token_ms = req.max_time_to_first_token_ms;
    std::vector<InferenceEstimate> estimates;
    const int n = cluster.accelerator_count;
    for (const bool expert : {false, true}) {
        if (expert && !m.IsMoe()) break;
        for (int degree = expert ? 2 : 1; degree <= n; ++degree) {
            if (n % degree != 0) continue;
            // Each candidate is a whole serving estimate: past the request's computing budget
            // the search gives up with no figures rather than answer from the candidates it has.
            if (auto time_left = req.deadline.Check(); !time_left.ok()) return time_left.error();
            auto e = EstimateLayout(WithLayout(req, degree, expert), cluster, m);
            if (!e.ok()) {
                // Heads or experts that do not split so.
                if (e.error().field == (expert ? "/expert_parallel" : "/tensor_parallel")) continue;
                return e.error();
            }
            search.candidates.push_back(CandidateOf(req, e.value()));
            estimates.push_back(std::move(e).value());
        }
    }
    bool any_serves = false;
    for (const auto& c : search.candidates) any_serves = any_serves || c.serves;
    if (!any_serves) {
        auto fallback = EstimateLayout(req, cluster, m);
        if (!fallback.ok()) return fallback.error();
        InferenceEstimate e = std::move(fallback).value();
        search.chosen_because =
            "no layout leaves a replica room for one sequence; one replica on every accelerator "
            "is answered (warnings say why)";
        e.layout_search = std::move(search);
        return e;
    }
    auto [index, why] = Choose(search);
    InferenceEstimate e = std::move(estimates[index]);
    search.chosen_because = why;
    if (!search.candidates[index].meets_latency_bounds &&
        (req.max_inter_token_latency_ms || req.max_time_to_first_token_ms)) {
        e.warnings.push_back({req.max_inter_token_latency_ms ? "/max_inter_token_latency_ms"
                                                             : "/max_time_to_first_token_ms",
                              "no layout meets the latency bounds at this load: " + why});
    }
    e.assumptions.push_back(
        {"serving_layout_tensor_parallel", static_cast<double>(e.tensor_parallel), "accelerators",
         "tensor parallel per replica chosen by the layout search (" + std::to_string(e.replicas) +
             " replicas on " + std::to_string(n) + " accelerators)",
         why});
    if (e.expert_parallel > 1) {
        e.assumptions.push_back(
            {"serving_layout_expert_parallel", static_cast<double>(e.expert_parallel),
             "accelerators",
             "expert-parallel ranks per replica chosen by the layout search, attention data "
             "parallel on each (" +
                 std::to_string(e.replicas) + " replicas on " + std::to_string(n) +
                 " accelerators)",
             why});
    }
    e.layout_search = std::move(search);
    return e;
}

}  // namespace

std::optional<LayoutObjective> ParseLayoutObjective(std::string_view name) {
    if (name == "throughput") return LayoutObjective::kThroughput;
    if (name == "latency") return LayoutObjective::kLatency;
    return std::nullopt;
}

std::string_view LayoutObjectiveName(LayoutObjective objective) {
    return objective == LayoutObjective::kLatency ? "latency" : "throughput";
}

std::optional<Precision> StoredWeightPrecision(const InferenceRequest& req,
                                               const ResolvedModel& m) {
    if (!req.weight_precision && m.checkpoint_precision &&
        BytesPerElement(*m.checkpoint_precision) < BytesPerElement(req.precision)) {
        return m.checkpoint_precision;
    }
    return std::nullopt;
}

namespace {

Result<InferenceEstimate> EstimateServed(const InferenceRequest& req, const ClusterSpec& cluster,
                                         const ResolvedModel& m) {
    return SearchesLayout(req, cluster) ? SearchServingLayout(req, cluster, m)
                                        : EstimateLayout(req, cluster, m);
}

// The request with the checkpoint's stored width where it names none (StoredWeightPrecision);
// copied only then, the planners' many estimates of a 16-bit model take none.
Result<InferenceEstimate> EstimateAsServed(const InferenceRequest& req, const ClusterSpec& cluster,
                                           const ResolvedModel& m) {
    if (auto stored = StoredWeightPrecision(req, m)) {
        InferenceRequest served = req;
        served.weight_precision = stored;
        return EstimateServed(served, cluster, m);
    }
    return EstimateServed(req, cluster, m);
}

// A precision narrower than the checkpoint's stored width is a requantised checkpoint, not
// the one the model names: said, since the figures are not that checkpoint's.
std::optional<FieldError> RequantisedWarning(const InferenceRequest& req, const ResolvedModel& m) {
    if (!m.checkpoint_precision ||
        !(BytesPerElement(req.precision) < BytesPerElement(*m.checkpoint_precision))) {
        return std::nullopt;
    }
    return FieldError{"/precision", "precision " + std::string(PrecisionName(req.precision)) +
                                        " is narrower than the model's checkpoint, stored as " +
                                        std::string(PrecisionName(*m.checkpoint_precision)) + " (" +
                                        m.checkpoint_precision_source +
                                        "): the figures are for a checkpoint requantised to " +
                                        std::string(PrecisionName(req.precision))};
}

}  // namespace

Result<InferenceEstimate> EstimateInference(const InferenceRequest& req, const ClusterSpec& cluster,
                                            const ResolvedModel& m) {
    if (auto s = ValidateCluster(cluster); !s.ok()) {
        return s.error();
    }
    if (auto s = ValidateInferenceRequest(req); !s.ok()) {
        return s.error();
    }
    auto estimate = EstimateAsServed(req, cluster, m);
    if (estimate.ok()) {
        if (auto warning = RequantisedWarning(req, m)) {
            estimate.value().warnings.push_back(std::move(*warning));
        }
    }
    return estimate;
}

double RcclAllReduceSeconds(double bytes, int ranks) {
    if (ranks <= 1 || !(bytes > 0)) {
        return 0;
    }
    const auto& table = kRcclMi300xAllReduceBusBandwidth;
    const double share = 2.0 * (ranks - 1.0) / ranks;
    const double mesh = std::min(1.0, (ranks - 1.0) / (kRcclMeshGpus - 1.0));
    if (bytes <= table.front().bytes) {
        return kRcclSmallAllReduceSeconds / mesh;
    }
    double gb_per_s = table.back().gb_per_s;
    for (std::size_t i = 1; i < table.size(); ++i) {
        if (bytes <= table[i].bytes) {
            const AllReduceBusBandwidth& lo = table[i - 1];
            const AllReduceBusBandwidth& hi = table[i];
            const double x = std::log(bytes / lo.bytes) / std::log(hi.bytes / lo.bytes);
            gb_per_s = lo.gb_per_s * std::pow(hi.gb_per_s / lo.gb_per_s, x);
            break;
        }
    }
    return share * bytes / (gb_per_s * 1e9 * mesh);
}

}  // namespace gpucost::pricing::estimate
