#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pricing/accelerator.hpp"
#include "pricing/assumption.hpp"
#include "pricing/deadline.hpp"
#include "pricing/error.hpp"
#include "pricing/estimate/cluster.hpp"
#include "pricing/estimate/model.hpp"
#include "pricing/estimate/roofline.hpp"

namespace gpucost::pricing::estimate {

enum class Recompute { kNone, kSelective, kFull };
const char* RecomputeName(Recompute r);
std::optional<Recompute> ParseRecompute(std::string_view name);

// Megatron-Core's selective recompute modules (--recompute-granularity selective
// --recompute-modules ...; transformer_config.py `recompute_modules`, whose default is
// core_attn). moe_act, layernorm and mla_up_proj are output-discarding checkpoints, the others
// standard checkpoints that keep the module's input and run its forward again (Megatron-Core
// MoE README, "Fine-grained Recomputation"). pricing/estimate/activation_memory.hpp has what
// each frees, training_step.cpp what each adds to the backward pass.
enum class RecomputeModule {
    kCoreAttn,
    kMoeAct,
    kLayernorm,
    kMlaUpProj,
    kMlp,
    kMoe,
    kSharedExperts
};
inline constexpr std::array<std::string_view, 7> kRecomputeModuleNames = {
    "core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts"};
std::optional<RecomputeModule> ParseRecomputeModule(std::string_view name);

// A set of recompute modules, one bit per RecomputeModule.
struct RecomputeModules {
    unsigned bits = 0;
    bool Has(RecomputeModule m) const { return (bits & Bit(m)) != 0; }
    void Add(RecomputeModule m) { bits |= Bit(m); }
    bool Empty() const { return bits == 0; }
    bool operator==(const RecomputeModules&) const = default;
    // The modules in Megatron-Core's spelling, in kRecomputeModuleNames's order.
    std::vector<std::string> Names() const;
    static unsigned Bit(RecomputeModule m) { return 1U << static_cast<unsigned>(m); }
};
// What `recompute: selective` recomputes when the request names no modules: the attention
// core, Megatron-Core's default.
inline constexpr RecomputeModules kSelectiveDefaultModules{1U};

// What is trained. kPretrain and kFullFinetune update every weight (the same physics; the
// name is echoed). kLora freezes the base weights in 16-bit and trains low-rank adapters
// (Hu et al. 2021, arXiv 2106.09685); kQlora stores the frozen base in 4-bit NF4 with double
// quantisation (Dettmers et al. 2023, arXiv 2305.14314) and dequantises it for every GEMM.
enum class TrainingMode { kPretrain, kFullFinetune, kLora, kQlora };
const char* TrainingModeName(TrainingMode mode);
std::optional<TrainingMode> ParseTrainingMode(std::string_view name);
inline bool IsAdapterMode(TrainingMode mode) {
    return mode == TrainingMode::kLora || mode == TrainingMode::kQlora;
}
// Linear layers a LoRA adapter can attach to, by their Hugging Face names (LLaMA family).
// "all-linear" (PEFT's shorthand) selects every one of them.
inline constexpr std::array<std::string_view, 7> kLoraTargetModules = {
    "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
inline constexpr std::string_view kLoraAllLinear = "all-linear";

// A complete parallel layout. tensor * context * pipeline * data == accelerator count.
struct ParallelLayout {
    int tensor = 1;
    int context = 1;  // context-parallel degree: each sequence split over this many ranks
    int pipeline = 1;
    int data = 1;
    int zero_stage = 0;  // 0..3 (3 = FSDP FULL_SHARD)
    Recompute recompute = Recompute::kNone;
    // Full recompute only: how many layers of each pipeline chunk (virtual stage; the stage
    // without interleaving) are recomputed, the chunk's first ones, while the rest keep every
    // activation (Megatron-Core --recompute-method block --recompute-num-layers N); 0 (and a
    // count at or above the chunk's layers): every layer. The chosen layout echoes the count.
    int recompute_layers = 0;
    // Selective recompute only: the modules recomputed (the echo; the estimate reads the
    // request's list, which the search does not vary).
    RecomputeModules recompute_modules;
    int micro_batch_size = 1;  // sequences per micro-batch
    int virtual_stages = 1;    // interleaved pipeline chunks per device
    bool sequence_parallel = false;
    // MoE: expert-parallel degree, and the expert-tensor-parallel degree (0: the tensor
    // degree); expert x expert_tensor divides tensor x data (pricing/estimate/moe.hpp).
    int expert = 1;
    int expert_tensor = 0;
};

// What the caller fixes; unset fields are searched.
struct ParallelismRequest {
    std::optional<int> tensor;
    std::optional<int> context;  // divides seq_len into 2 x context equal chunks
    std::optional<int> pipeline;
    std::optional<int> data;
    std::optional<int> zero_stage;
    std::optional<Recompute> recompute;
    // Block recompute of this many layers per pipeline chunk; implies recompute full.
    std::optional<int> recompute_layers;
    // Megatron-Core's selective recompute modules; implies recompute selective (unset with
    // selective: kSelectiveDefaultModules).
    std::optional<RecomputeModules> recompute_modules;
    std::optional<int> micro_batch_size;
    std::optional<int> virtual_stages;
    std::optional<bool> sequence_parallel;
    // MoE: divides the expert count; expert x expert_tensor divides tensor x context x data.
    std::optional<int> expert;
    std::optional<int> expert_tensor;
};

// How Megatron-Core runs the MoE layers, as a Megatron-Bridge recipe sets it (the request's
// `moe`; pricing/estimate/moe.hpp has the terms each switch changes). Unset: Megatron-Core's
// defaults (no CUDA graphs, --cuda-graph-impl none; no EP all-to-all overlap).
enum class MoeCudaGraphs {
    kNone,           // eager launches (--cuda-graph-impl none)
    kRouter,         // Transformer Engine graphs over the router and dispatch preprocessing
                     // (cuda_graph_scope moe_router, moe_preprocess; attn optional)
    kFullIteration,  // the whole iteration captured (cuda_graph_impl full_iteration)
};
const char* MoeCudaGraphsName(MoeCudaGraphs g);
std::optional<MoeCudaGraphs> ParseMoeCudaGraphs(std::string_view name);

struct MoeOptions {
    std::optional<MoeCudaGraphs> cuda_graphs;
    // --overlap-moe-expert-parallel-comm (Megatron-Bridge moe_a2a_overlap).
    std::optional<bool> a2a_overlap;
};

// What became of the model library's published training recipe (pricing/training_recipe.hpp)
// for a request: applied only where the request is consistent with it (it sets none of the
// recipe's fields to other values) or names it with `recipe`; then the fields the request
// left unset are filled from it, each echoed with the recipe's source instead of a default's.
struct AppliedRecipe {
    std::string model_id;
    std::string source;
    bool named = false;    // the request named it with `recipe`
    bool applied = false;  // false: nothing below was filled; `why` says why not
    std::string why;
    bool precision = false;
    bool global_batch_tokens = false;
    bool expert_overlap_fraction = false;
    std::string expert_overlap_schedule;  // "dualpipe"
    // The published layout (tensor, pipeline, expert, ZeRO stage), set only when the request
    // gave no `parallelism`. The estimate uses it on a cluster it divides and fits, the rest
    // of the layout searched; elsewhere the whole layout is searched (echoed either way).
    std::optional<ParallelismRequest> layout;
    // The published selective recompute filled in (into the request's parallelism, or the
    // published layout's when the request gave none).
    bool recompute_modules = false;
};

// The recipe value that turns recipes off for a request (`"recipe": "none"`).
inline constexpr std::string_view kNoRecipe = "none";

struct TrainingRequest {
    ModelSpec model;
    double tokens_b = 0;  // training tokens, billions
    Precision precision = Precision::kBf16;
    // Tokens per optimizer step; default kDefaultGlobalBatchTokens (rounded to whole
    // sequences).
    std::optional<double> global_batch_tokens;
    std::optional<ParallelismRequest> parallelism;
    EfficiencyOverrides efficiency;
    // Fraction of wall-clock time that is productive training (restarts, checkpoints,
    // evaluation excluded). Default kDefaultGoodput.
    std::optional<double> goodput;
    // Fraction of data-parallel / ZeRO / pipeline traffic that can hide behind compute.
    std::optional<double> comm_overlap_fraction;
    // Fraction of tensor-parallel traffic that can hide behind compute (default 0).
    std::optional<double> tp_overlap_fraction;
    // Memory reserved per accelerator for the framework, CUDA context and fragmentation.
    std::optional<double> memory_overhead_gb;
    // FlashAttention-style fused attention (default true). false models the pre-2022
    // Megatron attention: score GEMMs plus memory-bound softmax/mask/dropout over b*a*s^2
    // scores, and the 5as/h activation term.
    std::optional<bool> flash_attention;
    // What is trained (default pretrain). lora_rank and lora_target_modules apply to the
    // adapter modes only (422 naming the field otherwise).
    TrainingMode mode = TrainingMode::kPretrain;
    std::optional<int> lora_rank;                                 // default kDefaultLoraRank
    std::optional<std::vector<std::string>> lora_target_modules;  // default all-linear
    // Fraction of the MoE expert all-to-all hidden behind compute (default
    // kDefaultExpertOverlapFraction).
    std::optional<double> expert_overlap_fraction;
    // MoE execution switches (CUDA graphs, EP all-to-all overlap); 422 for a dense model.
    MoeOptions moe;
    // What decoding saw, for pricing::ResolveTrainingRecipe after it: the library id the model
    // was named by (empty for a spec), the request's `recipe` (a recipe's model id, or
    // kNoRecipe), and whether the request set `precision`.
    std::string library_model_id;
    std::optional<std::string> recipe_name;
    bool precision_given = false;
    // Set by pricing::ResolveTrainingRecipe when the model has a recipe or the request names
    // one: what it filled, or why nothing (not a request field itself).
    std::optional<AppliedRecipe> recipe;
    // false: leave TrainingEstimate::assumptions empty. For callers that evaluate many
    // estimates (the planner) and echo the constants once; every figure is the same.
    bool with_assumptions = true;
    // When the caller stops waiting: the layout search checks it between tensor-parallel
    // degrees and the estimate after the search; past it the estimate is kBudgetExceeded
    // (not a request field). Default: never.
    Deadline deadline;
};

// Seconds per optimizer step, by cause. compute + memory_bound + communication + bubble +
// optimizer == step_time_s.
struct StepBreakdown {
    double compute_s = 0;        // compute-bound ops (GEMMs, attention)
    double memory_bound_s = 0;   // bandwidth-bound ops (norms, element-wise, small GEMMs)
    double communication_s = 0;  // exposed: tp + dp + pp + expert
    double bubble_s = 0;         // pipeline fill and drain
    double optimizer_s = 0;      // optimizer step
    double tp_comm_s = 0;        // exposed tensor-parallel
    double dp_comm_s = 0;        // exposed data-parallel / ZeRO
    double pp_comm_s = 0;        // exposed pipeline point-to-point
    double expert_comm_s = 0;    // exposed MoE all-to-all
    double context_comm_s = 0;   // exposed context-parallel key/value ring (in communication_s)
};

// Bytes per accelerator on the most loaded (first) pipeline stage, in GB (1e9).
struct MemoryBreakdown {
    double weights_gb = 0;  // adapter modes: frozen base (16-bit or NF4) plus adapter weights
    double gradients_gb = 0;
    double optimizer_gb = 0;
    double activations_gb = 0;
    double overhead_gb = 0;
    double total_gb = 0;
};

// A layout with its headline figures (the chosen one and the runner-up).
struct LayoutSummary {
    ParallelLayout layout;
    double step_time_s = 0;
    double memory_per_accelerator_gb = 0;
    double mfu = 0;
};

// What the adapter modes train, echoed with the estimate.
struct FineTuning {
    TrainingMode mode = TrainingMode::kPretrain;
    int lora_rank = 0;                             // 0 outside the adapter modes
    std::vector<std::string> lora_target_modules;  // resolved list
    double trainable_params = 0;                   // adapters, or every parameter
    double frozen_weight_bytes_per_param = 0;      // base weights of the transformer blocks
};

// How far a run's real time may stray from the estimate: p90/p50 - 1 of a log-normal run time
// with the estimate as its median (wall_clock_hours_p10/p90; the plans' efficiency_spread_fraction
// default, which widens their cost p10-p90 and their deadline and budget probabilities).
// Published MFUs for the same model on the same hardware differ by about +-20 % between
// frameworks and tuning (see ../shared/docs/estimator-references.md); judgement.
inline constexpr double kDefaultEfficiencySpreadFraction = 0.20;
// For a mixture-of-experts model the estimator's own measured error is wider than that: over the
// 40 MoE training rows of the frontier validation set (tests/data/frontier/moe.jsonl, fit and
// held out, each row's published layout; docs/estimator.md), exp(80th percentile of
// |ln(predicted / published)|) - 1, the p90/p50 - 1 of a log-normal with that spread (the
// 80th percentile of |ln| is the two-sided p10..p90). `gpucost_validate --frontier` prints it
// per class; the dense rows measure 0.10, inside the default above.
inline constexpr double kMoeEfficiencySpreadFraction = 0.40;
// The run-time spread of model `m`'s class: kMoeEfficiencySpreadFraction for a
// mixture-of-experts model, else kDefaultEfficiencySpreadFraction.
double RunTimeSpreadFraction(const ResolvedModel& m);
// The source an efficiency_spread_fraction echo names for the spread of its class (the
// estimate's, and the plans' when the request gives none).
AssumptionText EfficiencySpreadDefaultSource(bool mixture_of_experts);

struct TrainingEstimate {
    // Expected (with goodput) and ideal (goodput 1) figures for the whole run.
    double wall_clock_hours = 0;
    // The run-time spread's p10 and p90 around wall_clock_hours: / and x (1 + the spread of the
    // model's class, kDefaultEfficiencySpreadFraction or kMoeEfficiencySpreadFraction).
    double wall_clock_hours_p10 = 0;
    double wall_clock_hours_p90 = 0;
    double accelerator_hours = 0;
    double ideal_wall_clock_hours = 0;
    double ideal_accelerator_hours = 0;
    // PaLM-style model FLOPs utilisation: model FLOPs (no recompute, attention not halved
    // for causal masks) per second over dense peak.
    double mfu = 0;
    // Hardware FLOPs utilisation: counts recompute FLOPs too.
    double hfu = 0;
    // Model TFLOP/s per accelerator (the MFU definition) and hardware TFLOP/s (HFU).
    double achieved_tflops_per_accelerator = 0;
    double hardware_tflops_per_accelerator = 0;
    double tokens_per_second = 0;  // whole cluster, ideal (no goodput)
    double step_time_s = 0;
    double steps = 0;
    double tokens_per_step = 0;
    int global_batch_sequences = 0;
    int micro_batches_per_step = 0;  // per data-parallel replica (gradient accumulation)
    double model_flops_per_token = 0;
    double total_model_flops = 0;
    double memory_per_accelerator_gb = 0;
    double memory_capacity_gb = 0;
    bool fits_in_memory = false;
    double memory_headroom_gb = 0;  // capacity - need; negative = short by that much
    MemoryBreakdown memory;
    StepBreakdown breakdown;
    // "compute", "memory_bandwidth", "communication" or "pipeline_bubble": the largest share.
    std::string bottleneck;
    ParallelLayout parallelism;
    bool layout_searched = false;
    std::optional<LayoutSummary> runner_up;
    int layouts_considered = 0;
    ResolvedModel model;
    FineTuning fine_tuning;
    Assumptions assumptions;
};

inline constexpr double kDefaultGlobalBatchTokens = 4194304;  // 4M tokens (LLaMA, GPT-3)
// A step's tokens further than this from the global batch asked for draw a warning; below it
// the difference is rounding to whole sequences (judgement).
inline constexpr double kBatchChangeWarnFraction = 0.01;
inline constexpr double kDefaultGoodput = 0.85;
inline constexpr double kDefaultCommOverlapFraction = 0.8;
// Bytes per parameter of the distributed optimizer's (ZeRO 1) all-gather of the updated
// parameters in an FP8 run: Megatron-Core gathers them in FP8 with fp8_param_gather, which
// the FP8 mixed-precision presets set (NeMo 2 nemo/collections/llm/recipes/precision/
// mixed_precision.py bf16_with_fp8_mixed and bf16_with_fp8_current_scaling_mixed; Megatron-
// Bridge src/megatron/bridge/training/mixed_precision.py, the same presets); the embedding and
// output projection stay 16-bit. The gradients are reduce-scattered at the weight width: the
// presets' grad_reduce_in_fp32 is turned off by the published runs' performance recipes
// (docs/estimator.md, "Data-parallel traffic").
inline constexpr double kFp8ParamGatherBytesPerParam = 1;
inline constexpr double kDefaultTpOverlapFraction = 0.0;
// Share of tensor-parallel traffic hidden behind GEMMs when a framework overlaps it
// (Megatron-Core --tp-comm-overlap, TransformerEngine userbuffers). Assumed; pass it as
// tp_overlap_fraction for runs that enable the overlap (the validation does so for the rows
// that document it).
inline constexpr double kTpOverlapFractionWhenEnabled = 0.6;
// Fixed cost per optimizer step outside the per-layer work: the optimizer's kernel launches
// over every parameter tensor, gradient-norm clipping, loss reduction, host synchronisation
// and logging. Assumed; it matters only for short steps (the 0.3 s steps of the small
// Megatron-Core rows of the validation set are where it was chosen).
inline constexpr double kStepFixedOverheadS = 0.04;
inline constexpr double kDefaultMemoryOverheadGb = 2.0;
// The search tries pipeline degrees that do not divide the layers (uneven first and last
// stages) and interleaving deeper than two chunks per stage only from this many accelerators
// up. That is the scale of the published runs that used them (Llama 3 405B on 8,192 and
// 16,384 H100, arXiv 2407.21783 Table 4): there the global batch leaves each replica few
// micro-batches per pipeline stage, so the bubble is what deep interleaving buys back. Below
// it the validation set's published runs (Megatron 2021 and Megatron-Core r0.8 up to 6,144
// GPUs) agree better with even stages and at most two chunks (docs/estimator.md, Estimator
// accuracy): searched deeper, they come out 3-13 % faster than published.
inline constexpr int kDeepPipelineSearchMinAccelerators = 8192;
// The fewest layers per interleaved chunk the search tries (a request may set any
// parallelism.virtual_stages), which caps the searched interleaving at half the layers per
// stage. Each chunk boundary adds a send and a receive per micro-batch in each direction
// (Narayanan et al. 2021 Sec. 2.2.2: the interleaved schedule's communication grows by v;
// counted in the step) and activations on the first stage (Korthikanti et al. 2022); the
// estimate counts no other per-chunk cost, so the search stops at the depth of NVIDIA's tuned
// H100 recipe for the same model: Llama 3.1 405B at TP 8, PP 8, VP 8, 126 layers in 64
// chunks, about 2 each (NVIDIA/dgxc-benchmarking llama3.1). Its 70B recipe runs 4 layers per
// chunk (PP 4, VP 5) and its Nemotron-4 340B recipe 1 (PP 8, VP 12).
inline constexpr int kMinSearchedLayersPerChunk = 2;
// The highest ZeRO stage the layout search tries for a mixture-of-experts model when the
// request names none: Megatron-Core's distributed optimizer (ZeRO 1), which every published
// MoE run of the frontier validation set used (NVIDIA-NeMo/Megatron-Bridge performance
// recipes, NVIDIA/dgxc-benchmarking deepseek_v3) and which the MoE layer's timing (dispatcher,
// host synchronisation, all-to-all) was checked against. Sharded weights with expert
// parallelism (Megatron-Core "FSDP with EP", MCore v0.15, 2025-11, Megatron-LM
// megatron/core/transformer/moe/README.md) have no published throughput here: searched, they
// won by per-micro-batch weight gathers the estimate hides behind compute, answering 1.14 M
// tokens/s for DeepSeek-V3 on 1,024 H100 against NVIDIA's published 645 k. ZeRO 2 and 3 are
// still searched when no ZeRO 1 layout fits, and used as given when the request names them.
inline constexpr int kMoeSearchMaxZeroStage = 1;
// Expert all-to-all (MoE dispatch and combine) hidden behind compute. Default none: the
// common frameworks run it on the critical path unless an overlapping schedule is enabled.
inline constexpr double kDefaultExpertOverlapFraction = 0.0;
// With a DualPipe-style schedule, which pairs the forward and backward chunks of different
// micro-batches so that one's all-to-all runs under the other's compute: DeepSeek-V3
// (arXiv 2412.19437 Sec. 3.2.1) reports the all-to-all and pipeline traffic "fully hidden";
// 0.9 keeps a tenth exposed for the chunks at the pipeline's edges (assumed).
inline constexpr double kExpertOverlapFractionDualPipe = 0.9;
// LoRA rank and targets when not given: the QLoRA paper's setting for all its models
// (r = 64 on every linear layer of the blocks; Dettmers et al. 2023, Sec. 4).
inline constexpr int kDefaultLoraRank = 64;
inline constexpr int kMaxLoraRank = 65536;
// NF4 with double quantisation: 4 bits per weight plus 8/64 + 32/(64*256) = 0.127 bits of
// quantisation constants (Dettmers et al. 2023, Sec. 3 "Double Quantization").
inline constexpr double kNf4BytesPerParam = (4.0 + 8.0 / 64.0 + 32.0 / (64.0 * 256.0)) / 8.0;
// Vendors whose accelerators run QLoRA's NF4 kernels: bitsandbytes, which the recipe needs,
// supports NVIDIA, AMD and Intel (Gaudi) devices (bitsandbytes installation guide, v0.50);
// it has no TPU (XLA) or AWS Neuron backend.
inline constexpr std::array<std::string_view, 3> kQloraVendors = {"nvidia", "amd", "intel"};
// True when `vendor` (any case) is one of kQloraVendors.
bool RunsQlora(std::string_view vendor);

// What a user must know when training at `precision`: int8 and fp4 have accelerator peaks but
// no established LLM training recipe, so an estimate at their peak is a bound, not a plan.
// nullopt for the precisions runs are trained in (fp32, tf32, fp16, bf16, fp8).
std::optional<std::string> TrainingPrecisionCaveat(Precision precision);
inline constexpr double kMaxTokensB = 1e7;
inline constexpr double kMaxGlobalBatchTokens = 1e10;

// Estimates one training run. Pure and thread-safe. When the request fixes the whole layout
// the estimate is returned even if it does not fit (fits_in_memory false, headroom
// negative). When the layout is searched and nothing fits, kInvalidArgument naming
// `/hardware/count` (or `/parallelism`) says how much memory the smallest layout needs and
// how many accelerators would fit. Other errors name the offending field.
[[nodiscard]] Result<TrainingEstimate> EstimateTraining(const TrainingRequest& request,
                                                        const ClusterSpec& cluster);
// The same with `model` = DeriveModel(request.model) already derived, for a caller that
// estimates one workload on many clusters (the planner): the answer is identical, the
// derivation is not repeated per cluster.
[[nodiscard]] Result<TrainingEstimate> EstimateTraining(const TrainingRequest& request,
                                                        const ClusterSpec& cluster,
                                                        const ResolvedModel& model);

// One workload estimated on many clusters, as the planner does (each hardware shape at
// several node counts). Estimate(cluster) answers exactly as EstimateTraining(request,
// cluster, model); what the layout search works out per layer (the roofline costs of one
// average layer at each tensor degree and micro-batch size) depends on the accelerator's
// efficiency model and the tensor-parallel link but not on the node count, so it is kept
// and reused by later clusters that share them. `request` and `model` (=
// DeriveModel(request.model)) must outlive the estimator unchanged. Not for concurrent use:
// one per thread (the planner makes one per plan).
class TrainingEstimator {
public:
    TrainingEstimator(const TrainingRequest& request, const ResolvedModel& model);
    ~TrainingEstimator();
    TrainingEstimator(const TrainingEstimator&) = delete;
    TrainingEstimator& operator=(const TrainingEstimator&) = delete;

    [[nodiscard]] Result<TrainingEstimate> Estimate(const ClusterSpec& cluster);

    // Layer costs worked out so far (one per device model, link, tensor degree and
    // micro-batch size); for tests.
    std::size_t LayerCostsKept() const;

    struct LayerCostMemo;  // defined in training.cpp

private:
    const TrainingRequest& request_;
    const ResolvedModel& model_;
    std::unique_ptr<LayerCostMemo> memo_;
};

// Pieces exposed for tests and for the README formulas.
// Model FLOPs per token (PaLM): 6 * (active non-embedding params + output projection) +
// 6 * layers * seq_len * (query-key width + value width), i.e. 12 * layers * hidden *
// seq_len when heads * head_dim = hidden.
double ModelFlopsPerToken(const ResolvedModel& model);
// The same count for a training mode: the adapter modes skip the weight-gradient GEMMs of
// the frozen weights (4 instead of 6 FLOPs per frozen parameter) and add 6 per active
// adapter parameter.
double ModelFlopsPerToken(const ResolvedModel& model, TrainingMode mode,
                          double active_adapter_params);
// Parameters by how they are sharded: `replicated` (attention, embeddings, dense MLPs,
// shared experts) is split by tensor x pipeline; `routed` (routed experts) additionally by
// the expert-parallel degree. replicated + routed == params.
struct ParamSplit {
    double replicated = 0;
    double routed = 0;
};
ParamSplit SplitParams(const ResolvedModel& model);
// Activation bytes per layer for one micro-batch of `micro_batch` sequences (16-bit
// activations), by component (pricing/estimate/activation_memory.hpp: Korthikanti et al.
// 2022 generalised to grouped-query attention, gated MLPs and no dropout); `flash_attention`
// keeps the softmax statistics in place of the score matrices.
double ActivationBytesPerLayer(const ResolvedModel& model, int micro_batch, int tensor,
                               bool sequence_parallel, Recompute recompute, bool flash_attention);
// Pipeline bubble fraction (p - 1) / (m * v).
double PipelineBubbleFraction(int pipeline, int micro_batches, int virtual_stages);

}  // namespace gpucost::pricing::estimate
