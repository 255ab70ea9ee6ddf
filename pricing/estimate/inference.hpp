#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pricing/accelerator.hpp"
#include "pricing/assumption.hpp"
#include "pricing/deadline.hpp"
#include "pricing/error.hpp"
#include "pricing/estimate/cluster.hpp"
#include "pricing/estimate/collectives.hpp"
#include "pricing/estimate/model.hpp"
#include "pricing/estimate/roofline.hpp"

namespace gpucost::pricing::estimate {

// What a serving layout search maximises (InferenceRequest::layout_objective).
enum class LayoutObjective {
    // Most output tokens/s of the whole box (so the least cost per token), among the layouts
    // meeting the latency bounds the request gives.
    kThroughput,
    // The shortest inter-token latency (ties: more tokens/s).
    kLatency,
};
// "throughput" | "latency"; nullopt for anything else.
std::optional<LayoutObjective> ParseLayoutObjective(std::string_view name);
std::string_view LayoutObjectiveName(LayoutObjective objective);

// Replicas of a model on cluster.accelerator_count accelerators, each `tensor_parallel`
// accelerators (x `pipeline_parallel` stages): the layers split in that many stages (one per
// node when tensor_parallel fills the node). Without `tensor_parallel`, a serving load
// (`concurrency` or `requests_per_second`) has the layout searched (tensor parallel per
// replica x replicas, for `layout_objective`); a static batch is one replica on every
// accelerator. The load is the whole box's, spread evenly over its replicas as a router does.
struct InferenceRequest {
    ModelSpec model;
    Precision precision = Precision::kBf16;       // compute, and weights but for weight_precision
    std::optional<Precision> kv_cache_precision;  // default: same as weights
    // Weight-only quantisation: the checkpoint's linear-layer weights (its low_precision_scope)
    // stored below 16 bits and narrower than `precision`, dequantised inside the GEMMs, which
    // run at `precision` (AWQ/GPTQ 4-bit with 16-bit math, MXFP4 on parts without FP4 math).
    // Memory and weight reads at its width; default: `precision`.
    std::optional<Precision> weight_precision;
    int batch_size = 1;     // sequences decoded together
    int input_tokens = 0;   // prompt length per sequence
    int output_tokens = 0;  // generated tokens per sequence
    std::optional<int> tensor_parallel;
    // Pipeline stages of one replica, each of tensor_parallel accelerators (default 1). Each
    // accelerator holds 1/pp of the weights and of every sequence's KV cache; the running
    // batch is split in min(pp, running) micro-batches that follow each other through the
    // stages, so a decode step is one pass of a micro-batch over all layers plus pp - 1
    // activation hops between stages over cluster.scale_out (PipelineHopSeconds).
    std::optional<int> pipeline_parallel;
    // Expert-parallel ranks of one replica (MoE models only; without tensor or pipeline
    // parallel): the replica is `expert_parallel` accelerators, possibly over several nodes.
    // Attention, dense MLPs, shared experts and logits run data parallel, each accelerator on
    // its own sequences with the whole of those weights (SGLang's DP attention, vLLM's data
    // parallel deployment); the routed experts are spread over all ranks, and every MoE layer
    // dispatches each token to its top-k experts' ranks and combines their outputs back
    // (ExpertDispatchCombineSeconds), as DeepSeek's and SGLang's large-scale EP serving does.
    std::optional<int> expert_parallel;
    EfficiencyOverrides efficiency;
    // Fixed cost per decode step (sampling, scheduling), seconds. Default 0.
    std::optional<double> step_overhead_s;
    std::optional<double> memory_overhead_gb;
    // Continuous batching as vLLM/SGLang serve (at most one of the two): `concurrency`
    // requests kept in the system (closed loop: a finished request is replaced at once), or
    // requests arriving at `requests_per_second` (open loop). Either adds `serving`.
    std::optional<int> concurrency;
    std::optional<double> requests_per_second;
    // The serving layout search (see above): its objective (default throughput) and the
    // latency bounds a layout must meet at its operating point under the throughput
    // objective (cost under a latency bound).
    std::optional<LayoutObjective> layout_objective;
    std::optional<double> max_inter_token_latency_ms;
    std::optional<double> max_time_to_first_token_ms;
    // When the caller stops waiting: the serving layout search checks it before each
    // candidate layout it estimates; past it the estimate is kBudgetExceeded (not a request
    // field). Default: never.
    Deadline deadline;
};

// One operating point of a replica under continuous batching. Every engine step decodes one
// token of each running sequence and prefills prompt tokens in chunks within the step's
// token budget; in steady state the prompt tokens prefilled per step are running x input /
// output (a sequence finishes, and a new prompt enters, every `output` steps).
struct ServingPoint {
    double concurrency = 0;        // requests in the system (running + queued)
    double running_sequences = 0;  // decoded together in every step
    double queued_requests = 0;    // waiting for KV cache or a sequence slot
    double prefill_tokens_per_step = 0;
    double inter_token_latency_ms = 0;  // one engine step
    double time_to_first_token_ms = 0;  // wait + prompt chunks (+ queueing)
    double request_latency_ms = 0;      // arrival to last token (mean = median in this model)
    double requests_per_second = 0;
    double output_tokens_per_second = 0;
    bool kv_cache_bound = false;  // running sequences held down by the KV-cache limit
};

struct ServingEstimate {
    std::string mode;  // "concurrency" | "request_rate"
    std::optional<double> offered_requests_per_second;
    bool saturated = false;  // offered rate above what the replica can serve
    // The operating point; nullopt when the KV-cache budget holds no sequence (the weights,
    // overhead and one step's activations take the engine's share of memory).
    std::optional<ServingPoint> point;
    std::vector<ServingPoint> curve;  // concurrency 1, 2, 4, ... up to the running limit
    double kv_cache_budget_gb_per_accelerator = 0;
    int kv_cache_limit_sequences = 0;  // at the mean context input + output / 2
    int max_num_seqs = 0;
    int max_num_batched_tokens = 0;
};

// The whole box: every replica the request's accelerators hold, each serving its share of
// the load. Static batch: each replica runs batch_size sequences.
struct ClusterServing {
    int accelerators = 0;
    int replicas = 1;
    int accelerators_per_replica = 1;
    double output_tokens_per_second = 0;
    double output_tokens_per_second_per_accelerator = 0;
    double requests_per_second = 0;      // serving only (else 0)
    double concurrency_per_replica = 0;  // serving: the load's share of each replica
};

// One layout the serving search tried.
struct LayoutCandidate {
    int tensor_parallel = 1;
    // Expert-parallel ranks of a replica (MoE models; attention data parallel on each rank,
    // tensor_parallel then 1); 1 for a tensor-parallel replica.
    int expert_parallel = 1;
    int replicas = 1;
    bool serves = false;  // a replica has room for at least one sequence
    bool meets_latency_bounds = false;
    double output_tokens_per_second = 0;  // the box's
    double output_tokens_per_second_per_accelerator = 0;
    double inter_token_latency_ms = 0;
    double time_to_first_token_ms = 0;
};

struct LayoutSearch {
    LayoutObjective objective = LayoutObjective::kThroughput;
    std::optional<double> max_inter_token_latency_ms;
    std::optional<double> max_time_to_first_token_ms;
    // By tensor parallel, ascending; then, for MoE models, by expert parallel, ascending.
    std::vector<LayoutCandidate> candidates;
    std::string chosen_because;
};

struct InferenceEstimate {
    double time_to_first_token_ms = 0;    // prefill of the whole batch
    double inter_token_latency_ms = 0;    // mean decode step
    double output_tokens_per_second = 0;  // per replica, incl. prefill time
    double output_tokens_per_second_per_accelerator = 0;
    double request_latency_ms = 0;  // prefill + all decode steps
    double prefill_tokens_per_second = 0;
    std::string prefill_bound;  // "compute" | "memory"
    std::string decode_bound;
    double memory_per_accelerator_gb = 0;
    double weights_gb_per_accelerator = 0;
    double kv_cache_gb_per_accelerator = 0;
    double memory_capacity_gb = 0;
    // Both within the share of the capacity a serving engine may use
    // (kServingGpuMemoryUtilization), as the `serving` model counts it.
    bool fits_in_memory = false;
    int max_batch_size = 0;  // largest batch whose KV cache fits at input+output tokens
    int tensor_parallel = 1;
    int pipeline_parallel = 1;
    int expert_parallel = 1;  // ranks the routed experts are spread over (1: split by tp)
    int replicas = 1;
    std::optional<ServingEstimate> serving;
    ClusterServing cluster;
    std::optional<LayoutSearch> layout_search;  // when the layout was searched
    // About the request rather than the model's inputs (those are model.warnings): a context
    // past the model's max_context, a serving engine with no room for one sequence.
    std::vector<FieldError> warnings;
    ResolvedModel model;
    Assumptions assumptions;
};

inline constexpr int kMaxBatchSize = 1 << 20;
// HBM bandwidth reached by serving engines streaming weights and KV cache (prefill of short
// prompts and every decode step), fraction of peak. Training's large transfers reach 0.9
// (Calculon); serving's measured figures are lower: NIM 70B FP8 on 2x H100 decodes at 0.55 of
// peak, LLM-Viewer's ideal roofline over-predicts TensorRT-LLM by 1.5-1.9x (0.53-0.67);
// estimator-references.md section 3.5. Callers override with
// efficiency.memory_bandwidth_efficiency.
inline constexpr double kServingBandwidthEfficiency = 0.65;
// The same for AMD Instinct parts under ROCm engines (vLLM on ROCm, SGLang on ROCm): the NVIDIA
// figure above scaled by the HBM fraction each vendor's stack reaches on the same streaming
// kernels, MI300X 0.775 (BabelStream copy/triad 4.11/4.09 of 5.3 TB/s) against H100 0.88
// (2.90/2.97 of 3.35), Azure AI-benchmarking-guide (ND MI300X v5 and ND H100 v5 results):
// 0.65 x 0.775 / 0.88 = 0.57. The per-vendor GEMM curves are in accelerator_facts.cpp.
inline constexpr double kRocmServingBandwidthEfficiency = 0.57;
// The share of the in-step GEMM asymptote (AMD's Maximum Achievable FLOPS x
// kGemmSustainedFractionOfMamf, on the hipBLASLt size curve of accelerator_facts.cpp) that the
// GEMMs of a tensor-parallel ROCm vLLM replica reach on CDNA3 (MI300X, MI325X: one compute
// die). No kernel-level measurement of sharded serving GEMMs on ROCm is published, so it is
// fitted to AMD's own end-to-end figures: the value that leaves the fit rows of
// tests/data/frontier/serving.jsonl on MI300X (S19-S26, AMD's ROCm vLLM 0.10.2 table; S28,
// Oracle's 2024 vLLM table; all TP 8) with a mean log error of zero once the all-reduces are
// timed on RCCL's curve (median |error| 42.1 % before either, 23.7 % with RCCL's curve alone,
// 6.0-9.3 % with both). The held-out AMD rows were not consulted. A single-GPU replica keeps
// the curve as measured: MLPerf's TP 1 MI300X results (inference_stack_test) are met without
// it. The likely mechanism, not modelled: a shard's GEMMs are 1/t of the layer wide, too few
// output tiles to fill MI300X's 304 compute units (H100: 132 SMs).
inline constexpr double kRocmCdna3TensorParallelGemmFraction = 0.62;
// CDNA3 ids these ROCm serving terms apply to (the fit's part and the one sharing its die).
inline constexpr std::array<std::string_view, 2> kRocmCdna3ServingIds = {"mi300x", "mi325x"};
// Tensor-parallel all-reduces of a ROCm serving engine on CDNA3 are timed on RCCL's measured
// bus bandwidth at the message size, not on the link's bandwidth times the flat
// scale_up_efficiency the CUDA engines' rows were fitted with: all-reduce busbw on 8 MI300X
// in one node (RCCL 2.22.3, in place; samuel-bohman/AI-benchmarking-guide
// Azure_Results/ND_MI300X_v5_results.md @3de0c294), and 64 KB at the 13-14 us that RCCL takes
// for 1-64 KB messages on 8 MI300X (hisohara/ai-scripts training/01_rccl-smoketest). NCCL on 8
// H100 measures 43.7 / 128.7 / 234.5 / 400.6 GB/s at 1 / 4 / 16 / 134 MB (same guide): RCCL
// reaches 0.51-0.73 of it where decode steps all-reduce (0.1-64 MB).
struct AllReduceBusBandwidth {
    double bytes = 0;
    double gb_per_s = 0;
};
inline constexpr std::array<AllReduceBusBandwidth, 6> kRcclMi300xAllReduceBusBandwidth = {{
    {65536.0, 8.19},  // 2 x 7/8 x 64 KB in 14 us
    {1048576.0, 22.4},
    {4194304.0, 82.5},
    {16777216.0, 171.5},
    {134217728.0, 290.8},
    {8589934592.0, 316.8},
}};
// Below the table's first size a message costs what 64 KB does (latency-bound).
inline constexpr double kRcclSmallAllReduceSeconds = 14e-6;
// The table is measured over all 8 GPUs of the xGMI mesh; a group of t < 8 uses t - 1 of each
// GPU's 7 links ("When using less than 8 GPUs, one can only achieve a fraction of the potential
// bandwidth", ROCm/rccl PR #1270), so its bus bandwidth is (t - 1) / 7 of the table's.
inline constexpr int kRcclMeshGpus = 8;

// Seconds of one RCCL all-reduce of `bytes` per rank over `ranks` CDNA3 GPUs of one node:
// 2 (n - 1) / n x bytes / busbw(bytes), busbw interpolated log-log in
// kRcclMi300xAllReduceBusBandwidth. 0 for ranks <= 1.
double RcclAllReduceSeconds(double bytes, int ranks);

inline constexpr int kMaxInferenceTokens = 1 << 24;

// Why the request's weight_precision cannot be weight-only quantisation (not below 16 bits,
// not narrower than its precision, or another width than the model's checkpoint stores);
// nullopt when it can or is absent.
std::optional<std::string> WeightPrecisionProblem(const InferenceRequest& req);

// The weight-only width the engine serves the model's checkpoint at when the request names
// none: the checkpoint's own (ModelSpec::checkpoint_precision) where it is narrower than the
// request's precision (vLLM loads an AWQ/GPTQ checkpoint for 16-bit math with its Marlin
// kernels, GPT-OSS's MXFP4 on Hopper likewise); nullopt where the request is served as sent.
std::optional<Precision> StoredWeightPrecision(const InferenceRequest& req, const ResolvedModel& m);

// Per-layer fixed costs of a forward pass that the per-op roofline does not see: kernels a
// layer launches besides the ops it times, each costing the device's kernel_overhead_s
// (roofline.hpp). They matter where a step's data is small: decode at small batch. A dense
// GQA layer is the reference: its launches (norm, QKV, rotary, cache write, attention, output
// projection, norm, gate-up, activation, down: 10 against the 5 ops timed) are inside the
// calibration of kServingBandwidthEfficiency (NIM's 70B) and the inference rows of the
// validation set, so only what MLA and MoE routing launch beyond it is counted, and dense
// models are estimated as before.
//
// MLA (DeepSeek-V2, arXiv 2405.04434 §2.1), decoded with the up-projections absorbed as vLLM
// does it (vllm/attention/backends/mla/utils.py MLACommonImpl, v0.7: _q_proj_and_k_up_proj,
// _forward_decode, _v_up_proj_and_o_proj): norm, q down-projection GEMM, its RMSNorm, q
// up-projection GEMM, kv down-projection GEMM, its RMSNorm, rotary, W_UK batched GEMM, the
// query concatenation, latent cache write, decode attention, its split-KV reduce, W_UV batched
// GEMM, the copy of its transposed output, output projection: 15 launches against GQA's 6
// (norm, QKV, rotary, cache write, attention, output projection).
inline constexpr double kMlaExtraKernelsPerLayer = 9;
// A routed MoE MLP (vllm/model_executor/layers/fused_moe/fused_moe.py fused_experts, v0.7; the
// DeepSeek-V2/V3 layer in vllm/model_executor/models/deepseek_v2.py): norm, router GEMM, top-k
// selection (grouped top-k, compiled to 2 kernels), moe_align_block_size (tokens sorted into
// expert blocks), grouped gate-up GEMM, activation, grouped down GEMM, moe_sum (the top-k
// weighted combine), the routed scaling: 10 against a dense MLP's 4 (norm, gate-up GEMM,
// activation, down GEMM).
inline constexpr double kMoeRoutingExtraKernelsPerLayer = 6;
// Shared experts run as a dense MLP beside the routed ones (DeepSeekMoE, arXiv 2401.06066
// §3.2; deepseek_v2.py DeepseekV2MoE): their gate-up GEMM, activation, down GEMM and the add
// of the two outputs.
inline constexpr double kSharedExpertKernelsPerLayer = 4;
// In FP8 each GEMM's input is quantised by a kernel of its own (dynamic activation scales:
// vLLM Fp8LinearMethod, scaled_fp8_quant or per_token_group_quant_fp8 for block-scaled
// weights as DeepSeek-V3 publishes them). The dense reference's are in its calibration, so
// one is counted per FP8 GEMM that MLA and shared experts add: q down and up plus kv down
// against GQA's one QKV GEMM (2), the shared gate-up and down GEMMs (2); the grouped GEMMs
// replace the dense MLP's two.
inline constexpr double kFp8MlaExtraGemmsPerLayer = 2;
inline constexpr double kFp8SharedExpertGemmsPerLayer = 2;

// Pipeline parallel across instances (vLLM --pipeline-parallel-size, layers split in
// contiguous stages, docs.vllm.ai "Distributed inference and serving"): between two stages
// each decode step sends the micro-batch's hidden states, hidden_size elements per token in
// the model's activation dtype (BF16 also for FP8 weights: vLLM IntermediateTensors carry
// hidden_states and residual, both kept in the model dtype, so 2 tensors x 2 bytes).
inline constexpr double kPipelineActivationBytesPerElement = 2.0;
inline constexpr double kPipelineTensorsPerHop = 2.0;  // hidden_states and residual
// Fixed cost of one stage handoff besides the network hop's latency (the scale-out link's
// hop_latency_s): the sending stage's NCCL send and the receiving stage's recv and its
// launch, which the receiving stage waits for before its first kernel. Judgement: NCCL
// point-to-point over InfiniBand/EFA measures 10-30 us end to end for small messages
// (nccl-tests sendrecv_perf, 8-byte rows), and the engine adds its own launch.
inline constexpr double kPipelineStageHandoffS = 30e-6;
inline constexpr int kMaxPipelineParallel = 64;

// Expert parallel across instances (InferenceRequest::expert_parallel). Each MoE layer sends
// every token's hidden state to the ranks of its top-k experts (dispatch) and their outputs
// back (combine): DeepEP sends the dispatch in FP8 with one FP32 scale per 128 channels when
// the model runs in FP8 (1 + 4/128 bytes per element; else BF16) and the combine in BF16
// (DeepEP README: "FP8 dispatching and BF16 combining", as DeepSeek-V3 serves). Tokens are
// spread evenly over the experts (EPLB's goal; imbalance is not modelled), so a rank sends
// (ranks off its node) / ranks of its top-k copies over its share of the node's network and
// the rest over the scale-up link.
inline constexpr double kExpertDispatchFp8BytesPerElement = 1.0 + 4.0 / 128.0;
inline constexpr double kExpertDispatchBytesPerElement = 2.0;  // BF16 for other precisions
inline constexpr double kExpertCombineBytesPerElement = 2.0;
// Fixed cost of one dispatch or one combine besides its bytes: kernel launch, the RDMA
// round's latency and the receivers' synchronisation. Calibrated on DeepEP's low-latency
// kernels on H800 with one 400 Gb/s CX7 NIC per GPU (docs/legacy.md, 128 tokens per rank,
// hidden 7168, top-8): at EP16/32/64/128 the off-node bytes over 50 GB/s leave 41-57 us of
// each measured dispatch and combine (94 us of EP128's combine); e.g. EP128 dispatch: 192 us
// measured for 7.1 MB off-node, 142 us of transfer.
inline constexpr double kExpertAllToAllFixedS = 50e-6;
// Most sequences one expert-parallel rank decodes per step: DeepEP's low-latency buffer is
// sized for the decode batch per rank and its README recommends under 256 ("the actual batch
// size in the decoding engine should be less than 256"); SGLang's EP decode runs 128-256
// (SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK).
inline constexpr int kExpertParallelMaxSequencesPerRank = 256;

// Engine defaults of vLLM's OpenAI-compatible server (vllm/engine/arg_utils.py,
// EngineArgs.get_batch_defaults and --gpu-memory-utilization): devices with at least 70 GiB
// that are not A100 get a step budget of 8192 tokens and 1024 sequences, others 2048 and 256;
// the engine may use 0.9 of device memory for weights, activations and the KV cache.
inline constexpr double kServingGpuMemoryUtilization = 0.9;
inline constexpr int kLargeDeviceMaxNumBatchedTokens = 8192;
inline constexpr int kLargeDeviceMaxNumSeqs = 1024;
inline constexpr int kSmallDeviceMaxNumBatchedTokens = 2048;
inline constexpr int kSmallDeviceMaxNumSeqs = 256;
inline constexpr double kLargeDeviceMemoryGib = 70.0;
inline constexpr double kMaxServingRequestsPerSecond = 1e6;

// Static batch: prefill of batch x input tokens (TTFT), decode steps at the mean context
// (ITL), memory and the largest batch that fits. With `concurrency` or `requests_per_second`
// also `serving`: continuous batching under the KV-cache limit with vLLM's engine defaults.
// kInvalidArgument naming the field for bad input or a TP degree that does not divide the
// hardware or the attention heads, or that neither divides the KV heads nor is a multiple of
// them (engines shard whole KV heads or replicate them); the roofline's errors for an
// unsupported precision.
[[nodiscard]] Result<InferenceEstimate> EstimateInference(const InferenceRequest& request,
                                                          const ClusterSpec& cluster);
// The same for a model already derived (request.model is not read).
[[nodiscard]] Result<InferenceEstimate> EstimateInference(const InferenceRequest& request,
                                                          const ClusterSpec& cluster,
                                                          const ResolvedModel& model);

// The pipeline's constants (kPipeline*), for the assumptions of an estimate or plan that
// uses pipeline stages.
void EchoPipelineConstants(Assumptions& echo);
// The expert-parallel constants (kExpert*), likewise.
void EchoExpertParallelConstants(Assumptions& echo);

// Seconds of one MoE layer's dispatch and combine on one of `expert_parallel` ranks holding
// `tokens_per_rank` tokens (each sent to experts_per_token experts): the bytes leaving the node
// over its network share and those staying in it over the scale-up link, at the same time,
// plus kExpertAllToAllFixedS per operation. `fp8`: FP8 dispatch. 0 when expert_parallel <= 1.
double ExpertDispatchCombineSeconds(const ResolvedModel& model, const ClusterLinks& links,
                                    int expert_parallel, double tokens_per_rank, bool fp8);

// Expected number of distinct experts that `tokens` tokens touch when each picks `top_k` of
// `experts` uniformly: E (1 - (1 - k/E)^tokens) (E when k >= E). A decode step reads only
// these experts' weights, so small batches of a large MoE read a fraction of its weights.
double ExpectedTouchedExperts(double experts, double top_k, double tokens);

// FLOPs one served request carries in each phase (whole model, all ranks): every token
// passes the active weights (2 FLOPs per parameter); the prompt's tokens attend causally to
// input / 2 tokens on average and the output's to the mean context input + output / 2
// (sliding-window layers to at most the window); logits for the output tokens only (the
// prompt's last position gives the first of them). Serving plans split a replica's cost
// between input and output tokens by these shares.
struct RequestFlops {
    double prefill = 0;
    double decode = 0;
};
RequestFlops ServedRequestFlops(const ResolvedModel& model, double input_tokens,
                                double output_tokens);

// KV-cache bytes one sequence of `tokens` tokens holds on one of `tensor_parallel`
// accelerators: MLA caches kv_lora_rank + qk_rope_head_dim elements per layer, replicated on
// every rank; otherwise K and V of max(1, kv_heads / tp) heads; layers with a sliding window
// hold at most the window.
double KvCacheBytesPerSequence(const ResolvedModel& model, int tensor_parallel,
                               double kv_bytes_per_element, double tokens);

}  // namespace gpucost::pricing::estimate
