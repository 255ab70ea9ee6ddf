// What the files of the training estimate share: the constants of the model, the run's
// context, the cost and memory records, the layout search's types and the steps' functions.
// Internal to pricing/estimate (training.hpp is the interface); one file per step:
// training_context.cpp (constants of the run, layer costs), training_memory.cpp (memory of a
// layout), training_step.cpp (timing a layout), training_search.cpp (fixed fields and the
// layout search), training.cpp (the request, the answer and the public entry points).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pricing/catalog.hpp"
#include "pricing/estimate/activation_memory.hpp"
#include "pricing/estimate/collectives.hpp"
#include "pricing/estimate/context_parallel.hpp"
#include "pricing/estimate/moe.hpp"
#include "pricing/estimate/training.hpp"

namespace gpucost::pricing::estimate::detail {
// Megatron-Core's recompute modules (RecomputeModule), as they run again before the backward
// pass (docs/estimator.md, "Megatron's recompute modules"): layernorm runs the layer's two
// norms again, each reading and writing the hidden state at 16 bits (4 bytes per element, a
// memory-bound pass); moe_act reads the routed experts' up-projection output(s) and writes the
// activation output, 16-bit GEMM outputs (Megatron-Core MoE README "Fine-grained
// Recomputation"; transformer_config.py `recompute_modules`).
constexpr double kNormsPerLayer = 2.0;
constexpr double kNormPassBytesPerElement = 4.0;
constexpr double kMoeActBytesPerElement = 2.0;

// The forward work selective recompute adds to a micro-batch's backward pass on one (average)
// layer and rank; the MoE layer's routing, tile padding and all-to-all again under `moe` are
// MicroBatchStage's (moe_layer_again).
struct RecomputeWork {
    double compute_s = 0;
    double memory_s = 0;
    double flops = 0;
    bool moe_layer_again = false;
};
// Causal masking: FlashAttention skips the upper triangle, so half the score/context work runs.
constexpr double kCausalWorkFraction = 0.5;
// FlashAttention backward runs 5 GEMM-like products against 2 forward (recomputes S = QK^T):
// FLOP ratio 2.5 (Dao 2023, arXiv 2307.08691 Sec. 3.1).
constexpr double kAttentionBackwardRatio = 2.5;
// Element-wise traffic per token and layer, in elements: 2 norms (read + write h), 2 residual
// adds (2 reads + 1 write of h), bias/dropout fused into those; the MLP activation reads the
// up (and gate) projection and writes ffn.
constexpr double kElementwiseHiddenElements = 10.0;
// Backward element-wise traffic relative to forward.
constexpr double kBackwardElementwiseRatio = 2.0;
// GEMMs below 16 bits (FP8 training as Transformer Engine runs it): each operand that arrives
// in 16 bits is quantised by a pass that reads it and writes two low-precision copies, the
// row-wise one and its transpose, because Hopper's FP8 tensor cores take only the TN layout and
// the backward GEMMs need the other orientation (Transformer Engine docs, "Performance
// considerations: handling transposes"; nvte_cast_transpose writes both). The per-tensor amax
// that scaling needs is reduced inside that pass. Forward: the input of every such GEMM;
// backward: the output gradient. The weights are cast once per step (FP8 weight caching
// across micro-batches).
constexpr double kLowPrecisionCopiesPerOperand = 2.0;
// Adam step: reads fp32 master, m, v and the gradient, writes the three and the 16-bit weight.
constexpr double kOptimizerBytesPerParam = 28.0;
// Adam state: fp32 master copy + two fp32 moments (mixed precision); 8 when training in fp32.
constexpr double kAdamBytesPerParamMixed = 12.0;
constexpr double kAdamBytesPerParamFp32 = 8.0;
// Two fp32 moments without a master copy (adapters trained in 16-bit, QLoRA).
constexpr double kAdamMomentsBytesPerParam = 8.0;
// Logits are kept in fp32 for the loss.
constexpr double kLogitBytes = 4.0;
// Memory traffic of an unfused fp32 softmax cross-entropy per logit element, forward and
// backward: cast bf16 -> fp32 (read 2, write 4), max (read 4), exp and sum (read 4, write 4),
// log-softmax gather (read 4); gradient softmax - one-hot (read 4, write 4), cast back to
// 16-bit (read 4, write 2): 36 bytes.
constexpr double kCrossEntropyBytesPerLogit = 36.0;
// Unfused attention: bytes moved per attention-score element in the forward pass (score GEMM
// writes 2, scale-mask-softmax reads 2 and writes 2, dropout reads 2, writes 2 and a 1-byte
// mask, the context GEMM reads 2): 13; backward moves twice as much.
constexpr double kScoreBytesPerElementForward = 13.0;
constexpr std::array<int, 4> kMicroBatchCandidates = {1, 2, 4, 8};
constexpr double kMaxMicroBatchTokens = 16384;
constexpr int kMaxPipelineCandidates = 128;
// Interleaving degrees tried per split: 1 and divisors of the layers per stage (at most 16
// for any count up to 128, e.g. 120), so the list stays on the stack.
constexpr std::size_t kMaxVirtualStageChoices = 16;
constexpr double kGb = 1e9;
constexpr std::size_t kMaxLoraTargetEntries = 32;

// Weight-gradient GEMMs: a trainable linear layer runs two backward GEMMs per forward one
// (input gradient and weight gradient); a frozen one only the input gradient.
constexpr double kBackwardGemmsTrainable = 2.0;
constexpr double kBackwardGemmsFrozen = 1.0;

// Every figure of the device models the roofline functions read (the run's and its BF16
// side, Ctx::bf16_dev); contexts with the same figures give the same layer costs.
using RooflineFigures = std::array<double, 16>;

struct Adapters;
struct Ctx;
struct LayerCost;
struct MlpShape;
struct Eval;
struct ExpertChoices;
struct SplitShape;
struct RowActivations;
struct StageTimes;
struct StepTiming;
struct DataParallelTraffic;
struct RowCosts;
class SplitCosts;
class Degrees;
struct SearchResult;
struct TensorContextChoices;
struct InnerChoices;
struct KeptLayerCost;
class LayerCosts;

// training_context.cpp
LayerCost Blend(const LayerCost& a, double wa, const LayerCost& b, double wb);
double MlpMatrices(const ResolvedModel& m);
double ExpertWidth(const ResolvedModel& m);
double DenseWidth(const ResolvedModel& m);
int MoeLayers(const ResolvedModel& m);
double QueryWidth(const ResolvedModel& m);
double KvWidth(const ResolvedModel& m);
double ScoreWidth(const ResolvedModel& m);
double ValueWidth(const ResolvedModel& m);
double AttentionFlopsPerToken(const ResolvedModel& m);
std::pair<double, double> ModuleShape(const ResolvedModel& m, std::string_view name, double width);
bool IsMlpModule(std::string_view name);
Adapters MakeAdapters(const ResolvedModel& m, int rank, std::vector<std::string> targets);
double QuantizeBytes(const Ctx& c, double elements);
void AddGemm(const Ctx& c, LayerCost& lc, double m, double n, double k);
void AddAdapter(const Ctx& c, LayerCost& lc, double tokens, double in, double out, double tp);
Link TensorLink(const Ctx& c, int tp);
LayerCost ComputeLayer(const Ctx& c, int tp, int cp, int b, bool sp, const MlpShape& mlp);
LayerCost ComputeAverageLayer(const Ctx& c, int tp, int cp, int b, bool sp);
ExpertChoices ExpertParallelCandidates(const ResolvedModel& m, const ParallelismRequest& pr, int t,
                                       int d);
// The selective recompute modules the run names: the request's parallelism's, or else
// those its recipe filled into the published layout (nullptr: none named).
const RecomputeModules* NamedRecomputeModules(const TrainingRequest& req);
Result<Ctx> MakeContext(const TrainingRequest& req, const ClusterSpec& cluster,
                        const ResolvedModel& model);

// training_memory.cpp
int ReplicaGroup(const ParallelLayout& l);
double PerAccelerator(const ParamSplit& p, const ParallelLayout& l, bool sharded);
double WeightBytes(const Ctx& c, const ParallelLayout& l, bool sharded);
const ParamSplit& Trainable(const Ctx& c);
double WeightsGb(const Ctx& c, const ParallelLayout& l, bool sharded);
double GradientsGb(const Ctx& c, const ParallelLayout& l, bool sharded);
double OptimizerGb(const Ctx& c, const ParallelLayout& l, bool sharded);
int LayersPerStage(int layers, int pipeline);
int EndStagesLayers(int layers, int pipeline);
int HeadStageLayers(int layers, int pipeline);
int MicroBatchesPerStep(const Ctx& c, int data, int micro_batch);
SplitShape SplitShapeOf(const Ctx& c, const ParallelLayout& l);
int LayersPerChunk(const ParallelLayout& l, const SplitShape& shape);
int RecomputedLayersPerChunk(const ParallelLayout& l, const SplitShape& shape);
double RecomputedShare(const ParallelLayout& l, const SplitShape& shape);
bool BlockRecompute(const ParallelLayout& l, const SplitShape& shape);
RowActivations RowActivationsOf(const Ctx& c, int micro_batch, int tensor, int context,
                                bool sequence_parallel);
double InFlightLayerBytes(const ParallelLayout& l, const SplitShape& shape,
                          const RowActivations& row);
double InterleavedExtraBytes(const ParallelLayout& l, const SplitShape& shape,
                             const RowActivations& row);
double StoredActivationBytes1F1B(const ParallelLayout& l, const SplitShape& shape,
                                 const RowActivations& row);
double StoredActivationBytes(const ParallelLayout& l, const SplitShape& shape,
                             const RowActivations& row);
double Zero3PrefetchBytes(const Ctx& c, const ParallelLayout& l);
MemoryBreakdown Memory(const Ctx& c, const ParallelLayout& l, const SplitShape& shape);

// training_step.cpp
const Link& LinkFor(const Ctx& c, int span);
std::pair<double, double> DataParallelSeconds(const Ctx& c, const ParallelLayout& l,
                                              double micro_batches, double t_mb, double backward_s);
void AddDataParallelAssumptions(const Ctx& c, const ParallelLayout& l, Assumptions& as);
MoeLayerShape MoeShapeOf(const Ctx& c, const ParallelLayout& l);
double RoutedGemmSeconds(const Ctx& c, const ParallelLayout& l, const LayerCost& lc);
double ExpertOverlap(const Ctx& c, const ParallelLayout& l);
bool MegatronDispatcher(const Ctx& c, const ParallelLayout& l);
double MoeHostExposedSeconds(const Ctx& c, const ParallelLayout& l);
RecomputeWork ModuleRecomputeWork(const Ctx& c, const ParallelLayout& l, const LayerCost& lc,
                                  RecomputeModules modules);
StageTimes MicroBatchStage(const Ctx& c, const ParallelLayout& l, const LayerCost& lc,
                           const SplitShape& shape);
bool ReachesBound(const ParallelLayout& l, const StageTimes& st, int micro_batches,
                  double cannot_win_at);
DataParallelTraffic DataParallelTrafficOf(const Ctx& c, const ParallelLayout& l,
                                          const StageTimes& st, int micro_batches);
double OptimizerSeconds(const Ctx& c, const ParallelLayout& l);
StepTiming TimeStep(const Ctx& c, const ParallelLayout& l, const LayerCost& lc,
                    const StageTimes& st, int micro_batches, const DataParallelTraffic& dp,
                    double opt_s);
Eval MakeEval(const Ctx& c, const ParallelLayout& l, const SplitShape& shape, bool fits,
              const StepTiming& timing);
std::string Describe(const ParallelLayout& l);
Status CheckFraction(const std::optional<double>& v, const char* field, double lo);

// training_search.cpp
Status CheckExpertGrid(const ParallelismRequest& pr, const Ctx& c);
Status CheckLayoutProduct(const ParallelismRequest& pr, int n);
Status ValidateParallelism(const ParallelismRequest& pr, const Ctx& c);
Degrees TensorCandidates(const Ctx& c, const ParallelismRequest& pr);
TensorContextChoices TensorContextCandidates(const Ctx& c, const ParallelismRequest& pr);
Degrees MicroBatchCandidates(const Ctx& c, const ParallelismRequest& pr);
bool DeepPipelineSearch(const Ctx& c);
Degrees PipelineDegrees(const Ctx& c);
Degrees PipelineCandidates(const ParallelismRequest& pr, const Degrees& pipeline_degrees, int rest);
void AddVirtualStageChoices(const Ctx& c, int p, int micro_batches, InnerChoices& ch);
InnerChoices InnerChoicesFor(const Ctx& c, const ParallelismRequest& pr, int p, int d, int b,
                             bool fully_given, int max_zero_stage);
void SearchSplit(const Ctx& c, ParallelLayout base, const RowCosts& row, const InnerChoices& ch,
                 SearchResult& r);
RooflineFigures RooflineFiguresOf(const DeviceModel& d, const DeviceModel& bf16);
// `max_zero_stage`: the highest ZeRO stage tried where the request names none
// (SearchZeroCap).
SearchResult SearchLayouts(const Ctx& c, const ParallelismRequest& pr, LayerCosts& layers,
                           const Deadline& deadline, int max_zero_stage);
// The highest ZeRO stage the first search tries: kMoeSearchMaxZeroStage for a mixture-of-
// experts model whose request names no stage, else 3 (every stage).
int SearchZeroCap(const Ctx& c, const ParallelismRequest& pr);

// training.cpp
Status ValidateRequest(const TrainingRequest& req);
Result<std::vector<std::string>> ResolveLoraTargets(const TrainingRequest& req);
bool IsBelow16Bits(Precision p);
Error NoLayoutError(const Ctx& c, const ParallelismRequest& pr, const SearchResult& r,
                    const ClusterSpec& cluster);
void WarnOnBatchChange(const TrainingRequest& req, TrainingEstimate& out);
void WarnOnCountedAttention(const Ctx& c, TrainingEstimate& out);
TrainingEstimate Summarize(const Ctx& c, const SearchResult& r);
void AddPipelineAssumptions(const Ctx& c, const Eval& e, Assumptions& as);
AssumptionText FieldSource(const TrainingRequest& req, bool given, bool by_recipe,
                           AssumptionText default_source);
void AddRecipeAssumptions(const TrainingRequest& req, Assumptions& as);
void AddLowPrecisionAssumptions(const Ctx& c, Assumptions& as);
Assumptions TrainingAssumptions(const TrainingRequest& req, const Ctx& c, const Eval& e);

// LoRA adapters as the estimate sees them.
struct Adapters {
    int rank = 0;
    std::vector<std::string> targets;
    ParamSplit params;            // all adapter parameters, sharded like their base layer
    double active_per_token = 0;  // adapter parameters one token passes through
};

struct Ctx {
    // The caller's derived model, which outlives the estimate (the planner estimates one
    // model on hundreds of clusters and does not copy it for each).
    explicit Ctx(const ResolvedModel& model) : m(model) {}
    const ResolvedModel& m;
    ParamSplit split;
    DeviceModel dev;
    ClusterLinks links;
    int count = 1;
    double capacity_gb = 0;
    double gemm_bpe = 2;          // operand bytes of GEMMs at the compute precision
    double linear_input_bpe = 2;  // saved linear-layer inputs (LinearInputBytes)
    // GEMMs below 16 bits (fp8, int8, fp4): their operands are quantised by extra passes, and
    // the attention core stays in BF16 on `bf16_dev` (FP8 recipes keep it there: Transformer
    // Engine's FP8 attention is opt-in). Otherwise `bf16_dev` is `dev`.
    bool low_precision_gemms = false;
    DeviceModel bf16_dev;
    double act_bpe = 2;     // stored activations, communication
    double weight_bpe = 2;  // trainable weights and gradients
    // The distributed optimizer's all-gather of the updated block weights (the embedding and
    // output projection are gathered at `weight_bpe`): kFp8ParamGatherBytesPerParam in an FP8
    // run that trains every weight, else `weight_bpe`.
    double param_gather_bpe = 2;
    double adam_bytes = 12;
    double goodput = kDefaultGoodput;
    double overlap = kDefaultCommOverlapFraction;
    double tp_overlap = kDefaultTpOverlapFraction;
    double expert_overlap = kDefaultExpertOverlapFraction;
    // The overlap came from a recipe's DualPipe schedule, which hides the all-to-all by
    // pairing forward and backward chunks of different micro-batches across pipeline stages:
    // without pipeline parallelism there is no such schedule and the default holds.
    bool expert_overlap_needs_pipeline = false;
    // The request's MoE switches, Megatron-Core's defaults where unset (MoeOptions).
    MoeCudaGraphs moe_cuda_graphs = MoeCudaGraphs::kNone;
    bool moe_a2a_overlap = false;
    double overhead_gb = kDefaultMemoryOverheadGb;
    bool flash = true;
    // What selective recompute recomputes: the request's modules, else the attention core.
    RecomputeModules recompute_modules = kSelectiveDefaultModules;
    double global_batch_seqs = 0;
    double tokens = 0;
    TrainingMode mode = TrainingMode::kPretrain;
    bool frozen_base = false;      // adapter modes
    bool quantized_base = false;   // QLoRA
    double frozen_weight_bpe = 2;  // bytes per frozen block weight (16-bit or NF4)
    double backward_gemms = kBackwardGemmsTrainable;
    Adapters adapters;
};

// Per layer, per micro-batch, forward pass on one tensor-parallel rank.
struct LayerCost {
    double gemm_compute_s = 0;  // compute-bound GEMM time
    double gemm_memory_s = 0;   // memory-bound GEMM time
    double attention_s = 0;
    double elementwise_s = 0;
    double adapter_compute_s = 0;  // LoRA down/up projections
    double adapter_memory_s = 0;
    double gemm_flops = 0;
    double attention_flops = 0;  // non-causal count (MFU convention)
    double adapter_flops = 0;
    double tp_comm_s = 0;  // two collectives of one forward pass
    // Exposed context-parallel key/value ring of the forward and the backward pass.
    double cp_forward_s = 0;
    double cp_backward_s = 0;
    // Quantising the operands of GEMMs below 16 bits: the inputs in the forward pass, the
    // output gradients in the backward pass (0 at 16 bits and above).
    double quantize_forward_s = 0;
    double quantize_backward_s = 0;
    // Logits, loss and embedding of one micro-batch (last/first stage), forward + backward.
    double head_compute_s = 0;
    double head_memory_s = 0;
    double head_flops = 0;  // forward + backward
};

// The MLP of one kind of layer: width of one MLP and how many of them a token passes.
struct MlpShape {
    double width = 0;
    double per_token = 1;       // routed top-k plus shared experts, 1 for a dense MLP
    double router_outputs = 0;  // experts the router scores per token; 0 for a dense MLP
};

struct Eval {
    ParallelLayout layout;
    bool valid = false;
    double step_time_s = 0;
    int micro_batches = 0;
    double tokens_per_step = 0;
    StepBreakdown breakdown;
    MemoryBreakdown memory;
    double hw_flops_per_step = 0;  // per replica set (all accelerators)
    bool fits = false;
};

// Expert-parallel degrees to try, each with its expert-tensor degree: the request's, or
// powers of two that divide the expert count and whose expert grid tiles the tensor x data
// ranks (1 for dense models). A fixed-size list: the search asks for it in its innermost loops.
struct ExpertChoices {
    std::array<int, 16> degrees{1};
    std::array<int, 16> expert_tensor{0};
    std::size_t n = 1;
};

// The shape of a split that its settings share: gradient accumulation (micro-batches per
// step on each replica, tokens per step) and the layers each pipeline stage holds.
struct SplitShape {
    int micro_batches = 1;
    double tokens_per_step = 0;
    double layers_per_stage = 0;
    // Layers on the stage that also runs the output head and loss. When the pipeline degree
    // does not divide the layers, the first and last stages share what the full middle stages
    // leave, the last (head) stage the smaller half: the Llama 3 405B run took one layer each
    // off its first and last stages for the embedding and the head (126 layers on 16 stages:
    // 7, 14 x 8, 7; arXiv 2407.21783 Sec. 3.3.2); Megatron-Core sets the two with
    // --decoder-first/last-pipeline-num-layers. Equal to layers_per_stage for an even split.
    double head_stage_layers = 0;
};

// The activation figures of one tensor degree and micro-batch size (a row of the search),
// which every pipeline split of the row shares, in bytes at the run's activation precision.
struct RowActivations {
    // Stored per layer, by recompute mode. Adapters on the linear layers keep those layers'
    // inputs for their own gradients, so the stored activations are those of full training
    // (the rank-r intermediates are negligible).
    // At expert-tensor degree 1; expert_inputs: the MoE layers' routed token copies in it,
    // which each expert-tensor rank holds for its whole group.
    std::array<double, 3> per_layer{};
    std::array<double, 3> expert_inputs{};
    double logits = 0;  // fp32 logits of one micro-batch
    double PerLayer(Recompute r, int expert_tensor) const {
        const auto i = static_cast<std::size_t>(r);
        if (expert_tensor <= 1) return per_layer[i];
        return per_layer[i] + (expert_tensor - 1.0) * expert_inputs[i];
    }
};

// One micro-batch on one pipeline stage: forward, backward and recompute passes over the
// stage's layers plus the head, split by bound, with the exposed tensor-parallel and expert
// traffic.
struct StageTimes {
    double compute_s = 0;
    double memory_s = 0;
    double tp_comm_s = 0;
    double expert_comm_s = 0;
    double context_comm_s = 0;
    double backward_s = 0;          // the stage's backward pass (the gradient-reduction window)
    double hw_flops_per_layer = 0;  // forward + backward + recompute, one tensor rank
    double Total() const {
        return compute_s + memory_s + tp_comm_s + expert_comm_s + context_comm_s;
    }
};

// A timed layout: its step by cause and the hardware FLOPs it runs.
struct StepTiming {
    StepBreakdown breakdown;
    double step_time_s = 0;
    double hw_flops_per_step = 0;  // per replica set (all accelerators)
};

// Data-parallel traffic of a step and the compute window it can hide behind
// (DataParallelSeconds).
struct DataParallelTraffic {
    double comm_s = 0;
    double window_s = 0;
};

// What every split of one tensor degree and micro-batch size (a row of the search) shares.
struct RowCosts {
    LayerCost layer;
    RowActivations activations;
};

// What the settings tried on one split (tensor x pipeline x data x expert at one micro-batch
// size) share, each worked out when first asked for: the weights, gradients and optimizer
// state with and without sharding, the stored activations and micro-batch stage of each
// recompute mode, and the memory need of each (recompute, ZeRO stage) pair. The micro-batch
// stage does not depend on the virtual stages, memory only through the interleaving extra,
// and the stage not on the ZeRO stage, so the search works each out once per split instead
// of once per layout. The sums
// are those of Memory(), in its order, so the figures are the same to the bit.
class SplitCosts {
public:
    SplitCosts(const Ctx& c, const ParallelLayout& base, const RowCosts& row)
        : c_(c), row_(row), shape_(SplitShapeOf(c, base)) {}

    const SplitShape& shape() const { return shape_; }

    // Memory().total_gb of `l`, the split with recompute choice `ri` and ZeRO choice `zi`.
    double NeedGb(const ParallelLayout& l, std::size_t ri, std::size_t zi) {
        if (l.virtual_stages > 1 || BlockRecompute(l, shape_)) return NeedGbUncached(l, ri);
        return need_gb_[ri][zi].Get([&] { return NeedGbUncached(l, ri); });
    }

    // The step of `l` (choices `ri`, `zi`); a layout that ReachesBound(cannot_win_at) gets an
    // infinite step time. The data-parallel traffic and optimizer time do not depend on the
    // virtual stages either, and are kept for the next layout that shares them.
    StepTiming Time(const ParallelLayout& l, std::size_t ri, std::size_t zi, double cannot_win_at) {
        if (BlockRecompute(l, shape_)) return TimeUncached(l, cannot_win_at);
        const StageTimes& st =
            stage_[ri].Get([&] { return MicroBatchStage(c_, l, row_.layer, shape_); });
        const int mbs = shape_.micro_batches;
        if (ReachesBound(l, st, mbs, cannot_win_at)) {
            StepTiming never;
            never.step_time_s = std::numeric_limits<double>::infinity();
            return never;
        }
        const DataParallelTraffic& dp =
            dp_[ri][zi].Get([&] { return DataParallelTrafficOf(c_, l, st, mbs); });
        const double opt_s =
            optimizer_s_[l.zero_stage >= 1].Get([&] { return OptimizerSeconds(c_, l); });
        return TimeStep(c_, l, row_.layer, st, mbs, dp, opt_s);
    }

private:
    // Time without the per-recompute-mode memos: block recompute's share of recomputed
    // layers varies with the virtual stages and the count, which the memos do not key on.
    StepTiming TimeUncached(const ParallelLayout& l, double cannot_win_at) {
        const StageTimes st = MicroBatchStage(c_, l, row_.layer, shape_);
        const int mbs = shape_.micro_batches;
        if (ReachesBound(l, st, mbs, cannot_win_at)) {
            StepTiming never;
            never.step_time_s = std::numeric_limits<double>::infinity();
            return never;
        }
        const DataParallelTraffic dp = DataParallelTrafficOf(c_, l, st, mbs);
        const double opt_s =
            optimizer_s_[l.zero_stage >= 1].Get([&] { return OptimizerSeconds(c_, l); });
        return TimeStep(c_, l, row_.layer, st, mbs, dp, opt_s);
    }

    // NeedGb without the (recompute, ZeRO) memo: interleaved layouts differ by their virtual
    // stages, which the memo does not key on (nor on block recompute's count).
    double NeedGbUncached(const ParallelLayout& l, std::size_t ri) {
        double act = BlockRecompute(l, shape_)
                         ? StoredActivationBytes1F1B(l, shape_, row_.activations)
                         : activation_bytes_[ri].Get([&] {
                               return StoredActivationBytes1F1B(l, shape_, row_.activations);
                           });
        act += InterleavedExtraBytes(l, shape_, row_.activations);
        if (l.zero_stage >= 3) {
            act += Zero3PrefetchBytes(c_, l);
        }
        const bool z1 = l.zero_stage >= 1, z2 = l.zero_stage >= 2, z3 = l.zero_stage >= 3;
        return weights_gb_[z3].Get([&] { return WeightsGb(c_, l, z3); }) +
               gradients_gb_[z2].Get([&] { return GradientsGb(c_, l, z2); }) +
               optimizer_gb_[z1].Get([&] { return OptimizerGb(c_, l, z1); }) + act / kGb +
               c_.overhead_gb;
    }

    // A figure worked out at most once. Its storage starts uninitialised and the figure is
    // built in place: a split is set up hundreds of times per estimate and most of its
    // figures are never asked for.
    template <typename T>
    class Once {
    public:
        Once() {}  // NOLINT(modernize-use-equals-default): leaves value_ uninitialised
        template <typename Work>
        const T& Get(Work&& work) {
            if (!known_) {
                ::new (static_cast<void*>(&value_)) T(work());
                known_ = true;
            }
            return value_;
        }

    private:
        bool known_ = false;
        union {
            T value_;
        };
    };

    const Ctx& c_;
    const RowCosts& row_;
    SplitShape shape_;
    std::array<Once<double>, 2> weights_gb_;  // by sharded
    std::array<Once<double>, 2> gradients_gb_;
    std::array<Once<double>, 2> optimizer_gb_;
    std::array<Once<double>, 3> activation_bytes_;        // by recompute choice
    std::array<std::array<Once<double>, 3>, 3> need_gb_;  // by recompute and ZeRO choice
    std::array<Once<StageTimes>, 3> stage_;
    std::array<std::array<Once<DataParallelTraffic>, 3>, 3> dp_;
    std::array<Once<double>, 2> optimizer_s_;  // by sharded
};

// Candidate degrees of one kind, kept on the stack (the planner runs hundreds of searches).
// They are distinct integers in [1, kMaxDegrees] (pipeline) or distinct powers of two of an
// int (tensor) or at most the four micro-batch sizes, so they always fit.
class Degrees {
public:
    static constexpr std::size_t kMaxDegrees = 128;
    Degrees() = default;
    Degrees(std::initializer_list<int> values) {
        for (int v : values) Add(v);
    }
    void Add(int v) { values_[n_++] = v; }
    const int* begin() const { return values_.data(); }
    const int* end() const { return values_.data() + n_; }
    std::size_t size() const { return n_; }

private:
    std::array<int, kMaxDegrees> values_{};
    std::size_t n_ = 0;
};

struct SearchResult {
    Eval best, second;
    double best_need_gb = std::numeric_limits<double>::infinity();
    ParallelLayout best_need_layout;
    int considered = 0;
    bool batch_too_small = false;
    bool fully_given = false;
    Eval fixed;  // fully given: the best of its expert-parallel choices, fitting or not

    // The step time at or above which a searched layout changes neither the best nor the
    // runner-up (Consider keeps only strictly faster ones); a fully given layout is always
    // timed.
    double CannotWinAt() const {
        return !fully_given && second.valid ? second.step_time_s
                                            : std::numeric_limits<double>::infinity();
    }

    // A searched layout that does not fit: the smallest memory need is kept for the error.
    void ConsiderUnfitting(double need_gb, const ParallelLayout& l) {
        ++considered;
        if (need_gb < best_need_gb) {
            best_need_gb = need_gb;
            best_need_layout = l;
        }
    }
    // A searched layout that fits: the fastest wins, the next is the runner-up. `make` builds
    // its Eval, only when it takes one of those places (most layouts take none).
    template <typename MakeEval>
    void ConsiderFitting(double step_time_s, MakeEval&& make) {
        ++considered;
        if (!best.valid || step_time_s < best.step_time_s) {
            second = best;
            best = make();
        } else if (!second.valid || step_time_s < second.step_time_s) {
            second = make();
        }
    }
    // A fully given layout: the fastest that fits, else the one needing the least memory.
    void ConsiderFixed(const Eval& e) {
        ++considered;
        bool better = !fixed.valid ||
                      (e.fits && (!fixed.fits || e.step_time_s < fixed.step_time_s)) ||
                      (!e.fits && !fixed.fits && e.memory.total_gb < fixed.memory.total_gb);
        if (better) fixed = e;
    }
};

// Each tensor degree with the context degrees tried beside it (ContextParallelCandidates).
struct TensorContextChoices {
    std::array<std::pair<int, int>, 64> pairs{};
    std::size_t n = 0;
    const std::pair<int, int>* begin() const { return pairs.data(); }
    const std::pair<int, int>* end() const { return pairs.data() + n; }
};

// The settings tried for one tensor x pipeline x data split. The lists live on the stack:
// this runs hundreds of times per estimate and the planner runs hundreds of estimates.
struct InnerChoices {
    std::array<int, kMaxVirtualStageChoices> virtual_stages{1};
    std::size_t virtual_n = 1;
    std::array<Recompute, 3> recompute{Recompute::kNone, Recompute::kFull, Recompute::kSelective};
    std::size_t recompute_n = 2;
    int recompute_layers = 0;  // full recompute's layers per chunk (0: all)
    // Also try block recompute: the fewest layers per chunk that make the layout fit.
    bool block = true;
    std::array<int, 3> zero{1, 2, 3};
    std::size_t zero_n = 3;
};

// One average layer kept by a TrainingEstimator: ComputeAverageLayer(c, tp, b, sp) for a
// context with the device's figures and this tensor link (the workload's part of the
// context, the request and model, is the estimator's own).
struct KeptLayerCost {
    int tp = 1;
    int cp = 1;
    int micro_batch = 1;
    bool sequence_parallel = false;
    Link link;
    Link context_link;
    LayerCost cost;
};

// The average layer's costs as the search asks for them: worked out, or taken from (and
// added to) the layers a TrainingEstimator keeps for this device.
class LayerCosts {
public:
    LayerCosts(const Ctx& c, std::vector<KeptLayerCost>* kept) : c_(c), kept_(kept) {}

    LayerCost At(int tp, int cp, int b, bool sp) {
        if (kept_ == nullptr) return ComputeAverageLayer(c_, tp, cp, b, sp);
        const Link link = TensorLink(c_, tp);
        const Link context_link = cp > 1 ? c_.links.GroupLink(tp * cp) : Link{};
        auto same = [](const Link& x, const Link& y) {
            return x.bytes_per_s == y.bytes_per_s && x.hop_latency_s == y.hop_latency_s;
        };
        for (const KeptLayerCost& k : *kept_) {
            if (k.tp == tp && k.cp == cp && k.micro_batch == b && k.sequence_parallel == sp &&
                same(k.link, link) && same(k.context_link, context_link)) {
                return k.cost;
            }
        }
        kept_->push_back(
            {tp, cp, b, sp, link, context_link, ComputeAverageLayer(c_, tp, cp, b, sp)});
        return kept_->back().cost;
    }

private:
    const Ctx& c_;
    std::vector<KeptLayerCost>* kept_;
};

}  // namespace gpucost::pricing::estimate::detail
