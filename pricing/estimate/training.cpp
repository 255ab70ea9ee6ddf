#include "pricing/estimate/training.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <new>
#include <string>

#include "pricing/catalog.hpp"
#include "pricing/estimate/activation_memory.hpp"
#include "pricing/estimate/collectives.hpp"
#include "pricing/estimate/context_parallel.hpp"
#include "pricing/estimate/moe.hpp"

namespace gpucost::pricing::estimate {
namespace {

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
    double gemm_bpe = 2;  // operand bytes of GEMMs at the compute precision
    // GEMMs below 16 bits (fp8, int8, fp4): their operands are quantised by extra passes, and
    // the attention core stays in BF16 on `bf16_dev` (FP8 recipes keep it there: Transformer
    // Engine's FP8 attention is opt-in). Otherwise `bf16_dev` is `dev`.
    bool low_precision_gemms = false;
    DeviceModel bf16_dev;
    double act_bpe = 2;     // stored activations, communication
    double weight_bpe = 2;  // trainable weights and gradients
    double adam_bytes = 12;
    double goodput = kDefaultGoodput;
    double overlap = kDefaultCommOverlapFraction;
    double tp_overlap = kDefaultTpOverlapFraction;
    double expert_overlap = kDefaultExpertOverlapFraction;
    // The overlap came from a recipe's DualPipe schedule, which hides the all-to-all by
    // pairing forward and backward chunks of different micro-batches across pipeline stages:
    // without pipeline parallelism there is no such schedule and the default holds.
    bool expert_overlap_needs_pipeline = false;
    double overhead_gb = kDefaultMemoryOverheadGb;
    bool flash = true;
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

LayerCost Blend(const LayerCost& a, double wa, const LayerCost& b, double wb) {
    LayerCost r = a;
    auto mix = [&](double LayerCost::*f) { r.*f = a.*f * wa + b.*f * wb; };
    for (double LayerCost::*f :
         {&LayerCost::gemm_compute_s, &LayerCost::gemm_memory_s, &LayerCost::attention_s,
          &LayerCost::elementwise_s, &LayerCost::adapter_compute_s, &LayerCost::adapter_memory_s,
          &LayerCost::gemm_flops, &LayerCost::attention_flops, &LayerCost::adapter_flops,
          &LayerCost::tp_comm_s, &LayerCost::quantize_forward_s, &LayerCost::quantize_backward_s,
          &LayerCost::cp_forward_s, &LayerCost::cp_backward_s}) {
        mix(f);
    }
    return r;  // the head is the same in both
}

// The MLP of one kind of layer: width of one MLP and how many of them a token passes.
struct MlpShape {
    double width = 0;
    double per_token = 1;       // routed top-k plus shared experts, 1 for a dense MLP
    double router_outputs = 0;  // experts the router scores per token; 0 for a dense MLP
};

double MlpMatrices(const ResolvedModel& m) {
    return m.gated_mlp ? 3.0 : 2.0;
}
double ExpertWidth(const ResolvedModel& m) {
    return m.expert_ffn_hidden_size > 0 ? m.expert_ffn_hidden_size : m.ffn_hidden_size;
}
double DenseWidth(const ResolvedModel& m) {
    return m.IsMoe() && m.dense_ffn_hidden_size > 0 ? m.dense_ffn_hidden_size : m.ffn_hidden_size;
}
int MoeLayers(const ResolvedModel& m) {
    return m.IsMoe() ? std::clamp(m.layers - m.dense_layers, 0, m.layers) : 0;
}
double QueryWidth(const ResolvedModel& m) {
    return static_cast<double>(m.attention_heads) * m.head_dim;
}
double KvWidth(const ResolvedModel& m) {
    return static_cast<double>(m.kv_heads) * m.head_dim;
}
// Widths the attention core multiplies over: MLA scores use nope + rope dimensions per head
// and values v_head_dim; otherwise head_dim for both.
double ScoreWidth(const ResolvedModel& m) {
    if (m.kv_lora_rank > 0 && m.qk_nope_head_dim + m.qk_rope_head_dim > 0) {
        return static_cast<double>(m.attention_heads) * (m.qk_nope_head_dim + m.qk_rope_head_dim);
    }
    return QueryWidth(m);
}
double ValueWidth(const ResolvedModel& m) {
    if (m.kv_lora_rank > 0 && m.v_head_dim > 0) {
        return static_cast<double>(m.attention_heads) * m.v_head_dim;
    }
    return QueryWidth(m);
}

// Attention's scores and context, forward and backward, per token, as model FLOPs count them
// (causal attention whole, sliding-window layers at their window).
double AttentionFlopsPerToken(const ResolvedModel& m) {
    return 6.0 * static_cast<double>(m.layers) * m.AttentionContextTokens() *
           (ScoreWidth(m) + ValueWidth(m));
}

// (input, output) width of each adapter target, for one layer with an MLP of `width`.
std::pair<double, double> ModuleShape(const ResolvedModel& m, std::string_view name, double width) {
    const double h = m.hidden_size;
    if (name == "q_proj") return {h, QueryWidth(m)};
    if (name == "k_proj" || name == "v_proj") return {h, KvWidth(m)};
    if (name == "o_proj") return {QueryWidth(m), h};
    if (name == "gate_proj") return m.gated_mlp ? std::pair{h, width} : std::pair{0.0, 0.0};
    if (name == "up_proj") return {h, width};
    return {width, h};  // down_proj
}
bool IsMlpModule(std::string_view name) {
    return name == "gate_proj" || name == "up_proj" || name == "down_proj";
}

Adapters MakeAdapters(const ResolvedModel& m, int rank, std::vector<std::string> targets) {
    Adapters a;
    a.rank = rank;
    a.targets = std::move(targets);
    const double r = rank;
    const double moe_layers = MoeLayers(m);
    const double dense_layers = m.layers - moe_layers;
    for (const std::string& t : a.targets) {
        if (!IsMlpModule(t)) {
            auto [in, out] = ModuleShape(m, t, 0);
            a.params.replicated += m.layers * r * (in + out);
            a.active_per_token += m.layers * r * (in + out);
            continue;
        }
        auto [din, dout] = ModuleShape(m, t, DenseWidth(m));
        auto [ein, eout] = ModuleShape(m, t, ExpertWidth(m));
        const double dense = r * (din + dout), expert = r * (ein + eout);
        a.params.replicated += dense_layers * dense + moe_layers * m.shared_experts * expert;
        a.params.routed += moe_layers * m.experts * expert;
        a.active_per_token +=
            dense_layers * dense + moe_layers * (m.experts_per_token + m.shared_experts) * expert;
    }
    return a;
}

// Bytes of one quantisation pass over `elements` 16-bit elements: read them, write the
// low-precision copy and its transpose.
double QuantizeBytes(const Ctx& c, double elements) {
    return elements * (c.act_bpe + kLowPrecisionCopiesPerOperand * c.gemm_bpe);
}

// A GEMM of a block weight: `m` tokens by `n` outputs over `k` inputs.
void AddGemm(const Ctx& c, LayerCost& lc, double m, double n, double k) {
    OpTime t = GemmTime(c.dev, m, n, k, c.gemm_bpe);
    (t.bound == Bound::kCompute ? lc.gemm_compute_s : lc.gemm_memory_s) += t.seconds;
    lc.gemm_flops += t.flops;
    if (c.low_precision_gemms) {
        // One kernel each: the input (m x k) before the forward GEMM, the output gradient
        // (m x n) before the backward ones.
        lc.quantize_forward_s += MemoryTime(c.dev, QuantizeBytes(c, m * k)).seconds;
        lc.quantize_backward_s += MemoryTime(c.dev, QuantizeBytes(c, m * n)).seconds;
    }
}

void AddAdapter(const Ctx& c, LayerCost& lc, double tokens, double in, double out, double tp) {
    if (!(in > 0 && out > 0)) return;
    const double r = c.adapters.rank;
    // The adapter of a tensor-parallel layer is split along the same dimension as its base.
    for (OpTime t : {GemmTime(c.dev, tokens, r, in / tp, c.gemm_bpe),
                     GemmTime(c.dev, tokens, out / tp, r, c.gemm_bpe)}) {
        (t.bound == Bound::kCompute ? lc.adapter_compute_s : lc.adapter_memory_s) += t.seconds;
        lc.adapter_flops += t.flops;
    }
}

// The link the tensor-parallel collectives of a layer use (none at degree 1).
Link TensorLink(const Ctx& c, int tp) {
    if (tp <= 1) return Link{};
    return c.links.GroupLink(tp);
}

// `cp`: the context degree; this rank holds 1/cp of each sequence's tokens, whose queries
// attend to the whole sequence (TE's load-balanced chunks: 1/cp of the attention work).
LayerCost ComputeLayer(const Ctx& c, int tp, int cp, int b, bool sp, const MlpShape& mlp) {
    const ResolvedModel& m = c.m;
    LayerCost lc;
    const double T = static_cast<double>(b) * m.seq_len / cp;
    const double h = m.hidden_size;
    const double t = tp;
    const double q_width = QueryWidth(m);
    const double kv_width = KvWidth(m);
    if (m.kv_lora_rank > 0 && m.attention_params_per_layer > 0) {
        // MLA: the down/up projections of queries, keys and values, counted as one GEMM of
        // the layer's attention parameters (FLOPs exact, shapes approximate).
        AddGemm(c, lc, T, m.attention_params_per_layer / h / t, h);
    } else {
        AddGemm(c, lc, T, (q_width + 2 * kv_width) / t, h);  // QKV
        AddGemm(c, lc, T, h, q_width / t);                   // output projection
    }
    // MLP: the up (+gate) and down projections of every MLP a token passes.
    const double mult_up = m.gated_mlp ? 2.0 : 1.0;
    const double tokens_mlp = T * mlp.per_token;
    AddGemm(c, lc, tokens_mlp, mult_up * mlp.width / t, h);
    AddGemm(c, lc, tokens_mlp, h, mlp.width / t);
    // The router's logits (h x experts per token): its weights are in the active parameters
    // that model FLOPs count, so the hardware count has them too.
    if (mlp.router_outputs > 0) {
        AddGemm(c, lc, T, mlp.router_outputs / t, h);
    }
    for (const std::string& name : c.adapters.targets) {
        auto [in, out] = ModuleShape(m, name, mlp.width);
        AddAdapter(c, lc, IsMlpModule(name) ? tokens_mlp : T, in, out, t);
    }
    // Attention core: scores and context, 2 * s * (score + value width) FLOPs per token (not
    // halved); FlashAttention reads Q, K, V and writes O once.
    const double score_w = ScoreWidth(m), value_w = ValueWidth(m);
    // Sliding-window layers attend to at most their window (averaged over the layers).
    double attn_flops = 2.0 * T * m.AttentionContextTokens() * (score_w + value_w) / t;
    double attn_bytes = T * (2 * q_width + 2 * kv_width) / t * c.act_bpe;
    if (c.flash) {
        OpTime a = AttentionTime(c.bf16_dev, attn_flops, kCausalWorkFraction, attn_bytes);
        lc.attention_s = a.seconds;
    } else {
        // Two batched GEMMs over all scores, then memory-bound softmax, mask and dropout.
        const double heads = static_cast<double>(m.attention_heads) / t;
        const double scores = T * heads * m.seq_len;
        OpTime qk = CustomTime(c.bf16_dev, attn_flops / 2.0, attn_bytes / 2.0 + scores * c.act_bpe);
        OpTime av = CustomTime(c.bf16_dev, attn_flops / 2.0, attn_bytes / 2.0 + scores * c.act_bpe);
        OpTime sm = MemoryTime(c.dev, scores * (kScoreBytesPerElementForward - 2.0 * c.act_bpe));
        lc.attention_s = qk.seconds + av.seconds + sm.seconds;
    }
    lc.attention_flops = attn_flops;
    // Element-wise ops; with sequence parallelism they run on 1/t of the tokens.
    double ew_tokens = sp ? T / t : T;
    double ffn_elems = (m.gated_mlp ? 3.0 : 2.0) * mlp.width * mlp.per_token / t;
    double ew_bytes = (ew_tokens * kElementwiseHiddenElements * h + T * ffn_elems) * c.act_bpe;
    lc.elementwise_s = MemoryTime(c.dev, ew_bytes).seconds + 3.0 * c.dev.kernel_overhead_s;
    // Tensor parallel: 2 all-reduces (or reduce-scatter + all-gather) of T x h per pass.
    if (tp > 1) {
        lc.tp_comm_s = 2.0 * RingAllReduceSeconds(T * h * c.act_bpe, tp, TensorLink(c, tp));
    }
    // The context ring spans tensor x context consecutive ranks (Megatron-Core's rank order
    // puts the context group next to the tensor group).
    const ContextRingSeconds ring = ContextRingExposedSeconds(
        ContextChunkBytes(m, b, tp, cp, c.act_bpe), cp, c.links.GroupLink(tp * cp), lc.attention_s,
        kAttentionBackwardRatio);
    lc.cp_forward_s = ring.forward_s;
    lc.cp_backward_s = ring.backward_s;
    // Output head (logits) + loss + embedding: forward and the backward GEMMs.
    // Timed at the run's GEMM precision although FP8 recipes keep the head in BF16
    // (Megatron-Core's output layer is no Transformer Engine module; DeepSeek-V3, arXiv
    // 2412.19437 Sec. 3.3.1): on a pipeline the head's stage would then outweigh the others
    // under the fixed end-stage split (SplitShape::head_stage_layers), which published runs
    // balance; docs/estimator.md (FP8) gives the figures.
    OpTime logits = GemmTime(c.dev, T, m.vocab_size / t, h, c.gemm_bpe);
    double head_mem = MemoryTime(c.dev, T * m.vocab_size / t * kCrossEntropyBytesPerLogit).seconds +
                      MemoryTime(c.dev, 2.0 * T * h * c.act_bpe).seconds;
    const double head_passes = 1.0 + c.backward_gemms;
    (logits.bound == Bound::kCompute ? lc.head_compute_s : lc.head_memory_s) +=
        head_passes * logits.seconds;
    lc.head_memory_s += head_mem;
    lc.head_flops = head_passes * logits.flops;
    return lc;
}

// The average layer of the model: MoE models blend their dense first layers with the
// expert layers (shared experts run for every token).
LayerCost ComputeAverageLayer(const Ctx& c, int tp, int cp, int b, bool sp) {
    const ResolvedModel& m = c.m;
    if (!m.IsMoe()) {
        return ComputeLayer(c, tp, cp, b, sp,
                            MlpShape{static_cast<double>(m.ffn_hidden_size), 1.0});
    }
    const double moe = MoeLayers(m), L = m.layers;
    LayerCost expert = ComputeLayer(
        c, tp, cp, b, sp,
        MlpShape{ExpertWidth(m), static_cast<double>(m.experts_per_token + m.shared_experts),
                 static_cast<double>(m.experts)});
    if (moe >= L) {
        return expert;
    }
    LayerCost dense = ComputeLayer(c, tp, cp, b, sp, MlpShape{DenseWidth(m), 1.0});
    return Blend(expert, moe / L, dense, (L - moe) / L);
}

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

ExpertChoices ExpertParallelCandidates(const ResolvedModel& m, const ParallelismRequest& pr, int t,
                                       int d) {
    ExpertChoices ch;
    auto grid = [&](int ep) {
        return pr.expert_tensor ? *pr.expert_tensor : DefaultExpertTensorDegree(t, d, ep);
    };
    if (pr.expert || !m.IsMoe()) {
        ch.degrees[0] = pr.expert.value_or(1);
        ch.expert_tensor[0] = m.IsMoe() ? grid(ch.degrees[0]) : 1;
        return ch;
    }
    ch.expert_tensor[0] = grid(1);
    for (int ep = 2; ep <= m.experts && m.experts % ep == 0 && ch.n < ch.degrees.size(); ep *= 2) {
        const int etp = grid(ep);
        if (etp < 1 || !ExpertGridDivides(t, d, ep, etp)) continue;
        ch.degrees[ch.n] = ep;
        ch.expert_tensor[ch.n++] = etp;
    }
    return ch;
}

// The ranks that hold the same replicated weights: data x context (context ranks join the
// gradient reduction and the distributed optimizer's sharding: "we piggyback GPUs of context
// parallelism on data parallel group for weight gradient all-reduce", Megatron-Core
// parallel_state.py).
int ReplicaGroup(const ParallelLayout& l) {
    return l.data * l.context;
}

// What one accelerator holds of a parameter split: the replicated part over tensor x
// pipeline, the routed part over expert-tensor x expert x pipeline; with `sharded` (a ZeRO
// stage that covers this state) each part is further split across its own replica group:
// the whole data-parallel degree for replicated parameters, the expert-data degree for routed
// ones.
double PerAccelerator(const ParamSplit& p, const ParallelLayout& l, bool sharded) {
    const double model_shards = static_cast<double>(l.tensor) * l.pipeline;
    const double repl_group = sharded ? ReplicaGroup(l) : 1.0;
    if (p.routed <= 0) {
        return p.replicated / (model_shards * repl_group);  // dense: one division per layout
    }
    const double expert_shards = static_cast<double>(ExpertModelShards(l)) * l.pipeline;
    const double routed_group = sharded ? ExpertDataDegree(l) : 1.0;
    return p.replicated / model_shards / repl_group + p.routed / expert_shards / routed_group;
}

// Bytes of the weights one accelerator holds per parameter it holds (frozen NF4 blocks with
// 16-bit embeddings under QLoRA).
double WeightBytes(const Ctx& c, const ParallelLayout& l, bool sharded) {
    double params = PerAccelerator(c.split, l, sharded);
    double adapter = c.frozen_base ? PerAccelerator(c.adapters.params, l, sharded) : 0.0;
    if (!c.frozen_base) {
        return params * c.weight_bpe;
    }
    double embedding_share = c.m.params > 0 ? std::min(1.0, c.m.embedding_params / c.m.params) : 0;
    double base = params * ((1.0 - embedding_share) * c.frozen_weight_bpe + embedding_share * 2.0);
    return base + adapter * c.weight_bpe;
}

const ParamSplit& Trainable(const Ctx& c) {
    return c.frozen_base ? c.adapters.params : c.split;
}

// Weights, gradients and optimizer state one accelerator holds, in GB, with or without the
// ZeRO sharding that covers each.
double WeightsGb(const Ctx& c, const ParallelLayout& l, bool sharded) {
    return WeightBytes(c, l, sharded) / kGb;
}
double GradientsGb(const Ctx& c, const ParallelLayout& l, bool sharded) {
    return PerAccelerator(Trainable(c), l, sharded) * c.weight_bpe / kGb;
}
double OptimizerGb(const Ctx& c, const ParallelLayout& l, bool sharded) {
    return PerAccelerator(Trainable(c), l, sharded) * c.adam_bytes / kGb;
}

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

// Layers per full stage, ceil(layers / pipeline), and on the head's stage (SplitShape).
int LayersPerStage(int layers, int pipeline) {
    return (layers + pipeline - 1) / pipeline;
}
// Layers the first and last stages share when every middle stage is full; under 2 the split
// cannot leave each of them a layer (the search skips such degrees).
int EndStagesLayers(int layers, int pipeline) {
    return layers - (pipeline - 2) * LayersPerStage(layers, pipeline);
}
int HeadStageLayers(int layers, int pipeline) {
    if (pipeline <= 1) return layers;
    const int ends = EndStagesLayers(layers, pipeline);
    // A degree the caller fixed whose ends cannot share: stages of floor and ceil layers.
    if (ends < 2) return layers / pipeline;
    return ends / 2;  // the first stage takes the odd layer
}

// Micro-batches per step on each of `data` replicas at `micro_batch` sequences each.
int MicroBatchesPerStep(const Ctx& c, int data, int micro_batch) {
    const double d = data;
    const double b = micro_batch;
    return std::max(static_cast<int>(std::ceil(c.global_batch_seqs / (d * b))), 1);
}

SplitShape SplitShapeOf(const Ctx& c, const ParallelLayout& l) {
    const double d = l.data;
    const double b = l.micro_batch_size;
    SplitShape out;
    out.micro_batches = MicroBatchesPerStep(c, l.data, l.micro_batch_size);
    out.tokens_per_step = static_cast<double>(out.micro_batches) * d * b * c.m.seq_len;
    out.layers_per_stage = std::ceil(static_cast<double>(c.m.layers) / l.pipeline);
    out.head_stage_layers = HeadStageLayers(c.m.layers, l.pipeline);
    return out;
}

// The activation figures of one tensor degree and micro-batch size (a row of the search),
// which every pipeline split of the row shares, in bytes at the run's activation precision.
struct RowActivations {
    // Stored per layer, by recompute mode. Adapters on the linear layers keep those layers'
    // inputs for their own gradients, so the stored activations are those of full training
    // (the rank-r intermediates are negligible).
    std::array<double, 3> per_layer{};
    double logits = 0;  // fp32 logits of one micro-batch
};

RowActivations RowActivationsOf(const Ctx& c, int micro_batch, int tensor, int context,
                                bool sequence_parallel) {
    const ResolvedModel& m = c.m;
    RowActivations a;
    for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
        const ActivationLayout layout{micro_batch, tensor, context, sequence_parallel, r, c.flash};
        a.per_layer[static_cast<std::size_t>(r)] =
            LayerActivations(m, layout).Total() * c.act_bpe / 2.0;
    }
    const double tp = tensor;
    a.logits =
        static_cast<double>(micro_batch) * m.seq_len / context * m.vocab_size / tp * kLogitBytes;
    return a;
}

// The activations of the first pipeline stage's layers while its micro-batches are in
// flight, in bytes: min(p, m) micro-batches under 1F1B.
double InFlightLayerBytes(const ParallelLayout& l, const SplitShape& shape,
                          const RowActivations& row) {
    const double pp = l.pipeline;
    double in_flight = l.pipeline > 1 ? std::min<double>(pp, shape.micro_batches) : 1.0;
    return row.per_layer[static_cast<std::size_t>(l.recompute)] * shape.layers_per_stage *
           in_flight;
}

// What interleaving adds to the first stage's activations, in bytes: its warm-up runs
// further ahead, so it holds L(1 + (p - 1)/(p v)) layers' worth where 1F1B holds L
// (Korthikanti et al. 2022, arXiv 2205.05198 Sec. 4.2.3).
double InterleavedExtraBytes(const ParallelLayout& l, const SplitShape& shape,
                             const RowActivations& row) {
    if (l.virtual_stages <= 1 || l.pipeline <= 1) return 0.0;
    const double pp = l.pipeline;
    return InFlightLayerBytes(l, shape, row) * (pp - 1.0) / (pp * l.virtual_stages);
}

// Activations stored on the first pipeline stage (with the logits), in bytes, before the
// ZeRO-3 prefetch buffers and the interleaving extra. `row`: RowActivationsOf the layout's
// tensor degree and micro-batch.
double StoredActivationBytes1F1B(const ParallelLayout& l, const SplitShape& shape,
                                 const RowActivations& row) {
    double act = InFlightLayerBytes(l, shape, row);
    if (l.recompute == Recompute::kFull) {
        // The layer being recomputed holds its full activations once.
        act += row.per_layer[static_cast<std::size_t>(Recompute::kNone)];
    }
    act += row.logits;
    return act;
}

// StoredActivationBytes1F1B plus the interleaving extra, in that order (the search adds the
// extra to its kept 1F1B figure, so both give the same bits).
double StoredActivationBytes(const ParallelLayout& l, const SplitShape& shape,
                             const RowActivations& row) {
    return StoredActivationBytes1F1B(l, shape, row) + InterleavedExtraBytes(l, shape, row);
}

// ZeRO 3: two gathered layers in flight (prefetch), in their stored format, in bytes.
double Zero3PrefetchBytes(const Ctx& c, const ParallelLayout& l) {
    const ResolvedModel& m = c.m;
    double held = PerAccelerator(c.split, l, false);
    double bytes_per_param = held > 0 ? WeightBytes(c, l, false) / held : c.weight_bpe;
    double routed_per_layer = c.split.routed / m.layers;
    double replicated = m.attention_params_per_layer + m.mlp_params_per_layer - routed_per_layer;
    return 2.0 * (replicated / l.tensor + routed_per_layer / ExpertModelShards(l)) *
           bytes_per_param;
}

MemoryBreakdown Memory(const Ctx& c, const ParallelLayout& l, const SplitShape& shape) {
    MemoryBreakdown mem;
    mem.weights_gb = WeightsGb(c, l, l.zero_stage >= 3);
    mem.gradients_gb = GradientsGb(c, l, l.zero_stage >= 2);
    mem.optimizer_gb = OptimizerGb(c, l, l.zero_stage >= 1);
    double act = StoredActivationBytes(
        l, shape,
        RowActivationsOf(c, l.micro_batch_size, l.tensor, l.context, l.sequence_parallel));
    if (l.zero_stage >= 3) {
        act += Zero3PrefetchBytes(c, l);
    }
    mem.activations_gb = act / kGb;
    mem.overhead_gb = c.overhead_gb;
    mem.total_gb =
        mem.weights_gb + mem.gradients_gb + mem.optimizer_gb + mem.activations_gb + mem.overhead_gb;
    return mem;
}

const Link& LinkFor(const Ctx& c, int span) {
    return c.links.GroupLink(span);
}

// Data-parallel traffic of one step: gradient all-reduce (ZeRO 0/1), reduce-scatter per
// micro-batch (ZeRO 2), or gathers and reduce-scatters per micro-batch (ZeRO 3), each for
// the replicated parameters over the data-parallel group and for the routed experts over
// their data / expert replica group. Returns the communication and the compute window it
// can hide behind.
std::pair<double, double> DataParallelSeconds(const Ctx& c, const ParallelLayout& l,
                                              double micro_batches, double t_mb,
                                              double backward_s) {
    if (ReplicaGroup(l) <= 1) return {0.0, 0.0};
    const int model_span = l.tensor * l.pipeline;
    const int per_domain = std::max(1, c.links.scale_up_domain / model_span);
    const ParamSplit& train = Trainable(c);
    double grad_repl = train.replicated / model_span * c.weight_bpe;
    const double expert_span = static_cast<double>(ExpertModelShards(l)) * l.pipeline;
    double grad_routed = train.routed / expert_span * c.weight_bpe;
    const int routed_group = ExpertDataDegree(l);
    const int routed_per_domain =
        std::max(1, c.links.scale_up_domain / static_cast<int>(expert_span));
    auto gather = [&](double repl, double routed) {
        double t = HierarchicalAllGatherSeconds(repl, ReplicaGroup(l), per_domain, c.links.scale_up,
                                                c.links.scale_out);
        if (routed > 0) {
            t += HierarchicalAllGatherSeconds(routed, routed_group, routed_per_domain,
                                              c.links.scale_up, c.links.scale_out);
        }
        return t;
    };
    if (l.zero_stage >= 3) {
        // Weights are gathered in their stored format (NF4 under QLoRA).
        double weight_bytes = WeightBytes(c, l, false);
        double total_local = PerAccelerator(c.split, l, false);
        double routed_share = total_local > 0 ? c.split.routed / expert_span / total_local : 0;
        double gathers =
            2.0 * gather(weight_bytes * (1 - routed_share), weight_bytes * routed_share);
        return {micro_batches * (gathers + gather(grad_repl, grad_routed)), micro_batches * t_mb};
    }
    if (l.zero_stage == 2 && micro_batches > 1) {
        return {(micro_batches + 1.0) * gather(grad_repl, grad_routed), micro_batches * backward_s};
    }
    double all_reduce = HierarchicalAllReduceSeconds(grad_repl, ReplicaGroup(l), per_domain,
                                                     c.links.scale_up, c.links.scale_out);
    if (grad_routed > 0) {
        all_reduce += HierarchicalAllReduceSeconds(grad_routed, routed_group, routed_per_domain,
                                                   c.links.scale_up, c.links.scale_out);
    }
    return {all_reduce, backward_s};  // backward of the last micro-batch
}

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

// The MoE layer of layout `l` for one micro-batch (pricing/estimate/moe.hpp).
MoeLayerShape MoeShapeOf(const Ctx& c, const ParallelLayout& l) {
    const double tokens = static_cast<double>(l.micro_batch_size) * c.m.seq_len;
    return MoeLayerShapeOf(l, tokens, c.m.experts, c.m.experts_per_token, c.m.hidden_size,
                           c.act_bpe);
}

// The compute-bound forward GEMM time of the average layer's routed experts in layout `l`:
// their share of the layer's forward GEMM FLOPs (up, gate and down of the top-k experts per
// token, split over the tensor ranks like the layer's own count).
double RoutedGemmSeconds(const Ctx& c, const ParallelLayout& l, const LayerCost& lc) {
    const ResolvedModel& m = c.m;
    if (!(lc.gemm_flops > 0)) return 0;
    const double tokens = static_cast<double>(l.micro_batch_size) * m.seq_len;
    const double routed_flops = 2.0 * tokens * MlpMatrices(m) * m.hidden_size * ExpertWidth(m) *
                                m.experts_per_token * MoeLayers(m) / m.layers / l.tensor;
    return lc.gemm_compute_s * std::min(1.0, routed_flops / lc.gemm_flops);
}

// The share of the expert all-to-all hidden in layout `l` (see
// Ctx::expert_overlap_needs_pipeline).
double ExpertOverlap(const Ctx& c, const ParallelLayout& l) {
    return c.expert_overlap_needs_pipeline && l.pipeline < 2 ? kDefaultExpertOverlapFraction
                                                             : c.expert_overlap;
}

// Whether layout `l` runs Megatron-Core's alltoall dispatcher as published (unfused router,
// permute and unpermute passes, a host synchronisation per layer): not where the all-to-all
// is overlapped, as DualPipe with DeepEP does, whose dispatch kernels write the tokens in
// expert order and whose framework fuses the router (DeepSeek-V3, arXiv 2412.19437 §3.2).
bool MegatronDispatcher(const Ctx& c, const ParallelLayout& l) {
    return !(ExpertOverlap(c, l) > 0);
}

// The host time an MoE layer exposes per pass in layout `l` (pricing/estimate/moe.hpp).
double MoeHostExposedSeconds(const Ctx& c, const ParallelLayout& l) {
    return MegatronDispatcher(c, l) ? kMoeLayerHostExposedSecondsPerPass : 0.0;
}

StageTimes MicroBatchStage(const Ctx& c, const ParallelLayout& l, const LayerCost& lc,
                           const SplitShape& shape) {
    const ResolvedModel& m = c.m;
    const double layers_stage = shape.layers_per_stage;
    const double gb = c.backward_gemms;
    // QLoRA: every pass that uses a layer's weights first dequantises them (read NF4, write
    // 16-bit); the GEMM's own read of the 16-bit copy is in its time already.
    double dequant_s = 0;
    if (c.quantized_base) {
        double block_params = PerAccelerator(c.split, l, false) * l.pipeline / m.layers;
        dequant_s = MemoryTime(c.dev, block_params * (c.frozen_weight_bpe + c.weight_bpe)).seconds;
    }
    double fwd_c = lc.gemm_compute_s + lc.attention_s + lc.adapter_compute_s;
    double fwd_m = lc.gemm_memory_s + lc.elementwise_s + lc.adapter_memory_s + dequant_s +
                   lc.quantize_forward_s;
    double bwd_c = gb * lc.gemm_compute_s + kAttentionBackwardRatio * lc.attention_s +
                   2.0 * lc.adapter_compute_s;
    double bwd_m = gb * lc.gemm_memory_s + kBackwardElementwiseRatio * lc.elementwise_s +
                   2.0 * lc.adapter_memory_s + dequant_s + lc.quantize_backward_s;
    double rc_c = 0, rc_m = 0, rc_flops = 0;
    double comm_passes = 2.0;  // forward and backward
    double cp_layer = lc.cp_forward_s + lc.cp_backward_s;
    if (l.recompute == Recompute::kFull) {
        cp_layer += lc.cp_forward_s;
        rc_c = fwd_c;
        rc_m = fwd_m;
        rc_flops = lc.gemm_flops + lc.attention_flops + lc.adapter_flops;
        comm_passes = 3.0;
    } else if (l.recompute == Recompute::kSelective) {
        rc_c = lc.attention_s;
        rc_flops = lc.attention_flops;
    }
    // MoE dispatch and combine: two all-to-alls per expert layer and pass, over the expert
    // group (expert-tensor x expert consecutive ranks).
    // Megatron-Core's routing around them (permute, unpermute, router kernels) and the
    // grouped GEMMs' unfilled tile rows at k-of-N routing, per pass (pricing/estimate/moe.hpp).
    double comm_ep = 0;
    if (m.IsMoe()) {
        const MoeLayerShape ms = MoeShapeOf(c, l);
        const double moe_share = static_cast<double>(MoeLayers(m)) / m.layers;
        const double a2a = 2.0 * ExpertAllToAllSeconds(ms, c.links);
        comm_ep = comm_passes * a2a * (1.0 - ExpertOverlap(c, l)) * moe_share;
        const double routing_s =
            MegatronDispatcher(c, l)
                ? (RoutingSecondsPerPass(c.dev, ms) + MoeHostExposedSeconds(c, l)) * moe_share
                : 0.0;
        fwd_m += routing_s;
        bwd_m += routing_s;
        rc_m += l.recompute == Recompute::kFull ? routing_s : 0.0;
        const double padding_s =
            RoutedGemmSeconds(c, l, lc) * (1.0 / GroupedGemmTileFill(ms) - 1.0);
        fwd_c += padding_s;
        bwd_c += gb * padding_s;
        rc_c += l.recompute == Recompute::kFull ? padding_s : 0.0;
    }
    // The slowest stage sets the pipeline's pace: a full stage, or the head's stage with its
    // fewer layers plus the head (the same stage for an even split).
    const double tp_layer = comm_passes * lc.tp_comm_s * (1.0 - c.tp_overlap);
    const double per_layer =
        fwd_c + bwd_c + rc_c + fwd_m + bwd_m + rc_m + tp_layer + comm_ep + cp_layer;
    // A multi-token-prediction module (DeepSeek-V3) adds one block and one head pass to the
    // head's stage (arXiv 2412.19437 Sec. 2.2: it shares the output head, on the last stage).
    const double mtp = m.mtp_modules;
    const double head = lc.head_compute_s + lc.head_memory_s;
    const bool head_stage_slowest =
        (shape.head_stage_layers + mtp) * per_layer + (1.0 + mtp) * head >=
        layers_stage * per_layer;
    const double n = head_stage_slowest ? shape.head_stage_layers + mtp : layers_stage;
    const double with_head = head_stage_slowest ? 1.0 + mtp : 0.0;
    StageTimes st;
    st.compute_s = n * (fwd_c + bwd_c + rc_c) + with_head * lc.head_compute_s;
    st.memory_s = n * (fwd_m + bwd_m + rc_m) + with_head * lc.head_memory_s;
    st.tp_comm_s = n * tp_layer;
    st.expert_comm_s = n * comm_ep;
    st.context_comm_s = n * cp_layer;
    st.backward_s = n * (bwd_c + bwd_m);
    st.hw_flops_per_layer =
        (1.0 + gb) * lc.gemm_flops + 3.0 * lc.attention_flops + 3.0 * lc.adapter_flops + rc_flops;
    return st;
}

// A timed layout: its step by cause and the hardware FLOPs it runs.
struct StepTiming {
    StepBreakdown breakdown;
    double step_time_s = 0;
    double hw_flops_per_step = 0;  // per replica set (all accelerators)
};

// `cannot_win_at`: a step time at which a layout changes nothing in the search (the
// runner-up's). The step time adds non-negative terms to the compute and memory time of its
// micro-batches, among them the bubble, (p - 1)/v of a micro-batch's stage time, which is at
// least its compute and memory time (in this order, so also in floating point the step is
// never smaller): a layout already at the bound cannot win and is not timed further. The
// bubble term prunes the shallow interleavings of a split whose deep ones win.
bool ReachesBound(const ParallelLayout& l, const StageTimes& st, int micro_batches,
                  double cannot_win_at) {
    const double mbs = micro_batches;
    const double bubble_at_least =
        (l.pipeline - 1.0) / l.virtual_stages * (st.compute_s + st.memory_s);
    return mbs * st.compute_s + mbs * st.memory_s + bubble_at_least >= cannot_win_at;
}

// Data-parallel traffic of a step and the compute window it can hide behind
// (DataParallelSeconds).
struct DataParallelTraffic {
    double comm_s = 0;
    double window_s = 0;
};

DataParallelTraffic DataParallelTrafficOf(const Ctx& c, const ParallelLayout& l,
                                          const StageTimes& st, int micro_batches) {
    auto [comm, window] =
        DataParallelSeconds(c, l, static_cast<double>(micro_batches), st.Total(), st.backward_s);
    return {comm, window};
}

// The optimizer step's own time (Adam over the local trainable parameters), with GEMMs below
// 16 bits the once-per-step quantisation of the weights this accelerator's layers use (kept
// across the step's micro-batches: Transformer Engine's FP8 weight caching).
double OptimizerSeconds(const Ctx& c, const ParallelLayout& l) {
    double opt_params = PerAccelerator(Trainable(c), l, l.zero_stage >= 1);
    double seconds = MemoryTime(c.dev, opt_params * kOptimizerBytesPerParam).seconds;
    if (c.low_precision_gemms) {
        seconds += MemoryTime(c.dev, QuantizeBytes(c, PerAccelerator(c.split, l, false))).seconds;
    }
    return seconds;
}

// The step of layout `l` from its micro-batch stage `st`, its data-parallel traffic and its
// optimizer time.
StepTiming TimeStep(const Ctx& c, const ParallelLayout& l, const LayerCost& lc,
                    const StageTimes& st, int micro_batches, const DataParallelTraffic& dp,
                    double opt_s) {
    const ResolvedModel& m = c.m;
    const double b = l.micro_batch_size;
    const double t_mb = st.Total();
    const double mbs = micro_batches;
    StepTiming out;
    StepBreakdown& br = out.breakdown;
    br.compute_s = mbs * st.compute_s;
    br.memory_bound_s = mbs * st.memory_s;

    // Pipeline point-to-point: activations forward, gradients backward, at each of the v chunk
    // boundaries a micro-batch crosses (Narayanan et al. 2021 Sec. 2.2.2: the interleaved
    // schedule's communication grows by v). Hidden behind compute like the other traffic
    // (comm_overlap_fraction): with the published interleaving of the validation set's
    // Megatron runs (T60-T63) the iteration times agree better so than with the extra
    // transfers fully exposed (docs/estimator.md).
    double pp_comm = 0;
    if (l.pipeline > 1) {
        double bytes = b * m.seq_len / l.context * m.hidden_size * c.act_bpe /
                       (l.sequence_parallel ? l.tensor : 1);
        pp_comm = 2.0 * l.virtual_stages *
                  PointToPointSeconds(bytes, LinkFor(c, l.tensor * l.pipeline)) * micro_batches;
    }
    double bubble = (l.pipeline - 1.0) / l.virtual_stages * t_mb;

    auto exposed = [&](double comm, double win) {
        return std::max(comm * (1.0 - c.overlap), comm - win);
    };
    double dp_exposed = dp.comm_s > 0 ? exposed(dp.comm_s, dp.window_s) : 0.0;
    double pp_exposed = pp_comm > 0 ? exposed(pp_comm, mbs * t_mb) : 0.0;

    br.tp_comm_s = mbs * st.tp_comm_s;
    br.expert_comm_s = mbs * st.expert_comm_s;
    br.context_comm_s = mbs * st.context_comm_s;
    br.dp_comm_s = dp_exposed;
    br.pp_comm_s = pp_exposed;
    br.communication_s =
        br.tp_comm_s + br.expert_comm_s + br.context_comm_s + br.dp_comm_s + br.pp_comm_s;
    br.bubble_s = bubble;
    br.optimizer_s = opt_s + kStepFixedOverheadS;
    out.step_time_s =
        br.compute_s + br.memory_bound_s + br.communication_s + br.bubble_s + br.optimizer_s;
    const double mtp = m.mtp_modules;
    double hw_per_mb = ((m.layers + mtp) * st.hw_flops_per_layer + (1.0 + mtp) * lc.head_flops) *
                       l.tensor * l.context;
    out.hw_flops_per_step = hw_per_mb * mbs * l.data;
    return out;
}

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
        if (l.virtual_stages > 1) return NeedGbUncached(l, ri);
        return need_gb_[ri][zi].Get([&] { return NeedGbUncached(l, ri); });
    }

    // The step of `l` (choices `ri`, `zi`); a layout that ReachesBound(cannot_win_at) gets an
    // infinite step time. The data-parallel traffic and optimizer time do not depend on the
    // virtual stages either, and are kept for the next layout that shares them.
    StepTiming Time(const ParallelLayout& l, std::size_t ri, std::size_t zi, double cannot_win_at) {
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
    // NeedGb without the (recompute, ZeRO) memo: interleaved layouts differ by their virtual
    // stages, which the memo does not key on.
    double NeedGbUncached(const ParallelLayout& l, std::size_t ri) {
        double act = activation_bytes_[ri].Get(
            [&] { return StoredActivationBytes1F1B(l, shape_, row_.activations); });
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

Eval MakeEval(const Ctx& c, const ParallelLayout& l, const SplitShape& shape, bool fits,
              const StepTiming& timing) {
    Eval e;
    e.layout = l;
    e.valid = true;
    e.step_time_s = timing.step_time_s;
    e.micro_batches = shape.micro_batches;
    e.tokens_per_step = shape.tokens_per_step;
    e.breakdown = timing.breakdown;
    e.memory = Memory(c, l, shape);
    e.hw_flops_per_step = timing.hw_flops_per_step;
    e.fits = fits;
    return e;
}

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

std::string Describe(const ParallelLayout& l) {
    return "tensor " + std::to_string(l.tensor) + ", context " + std::to_string(l.context) +
           ", pipeline " + std::to_string(l.pipeline) + ", data " + std::to_string(l.data) +
           ", ZeRO " + std::to_string(l.zero_stage) + ", recompute " + RecomputeName(l.recompute) +
           ", micro-batch " + std::to_string(l.micro_batch_size);
}

Status CheckFraction(const std::optional<double>& v, const char* field, double lo) {
    if (v && !(std::isfinite(*v) && *v >= lo && *v <= 1.0)) {
        return MakeError(
            ErrorCode::kInvalidArgument,
            std::string(field + 1) + " must be between " + std::to_string(lo) + " and 1", field);
    }
    return Ok{};
}

// ---- Step 1: the request's own fields ----
Status ValidateRequest(const TrainingRequest& req) {
    if (!(std::isfinite(req.tokens_b) && req.tokens_b > 0 && req.tokens_b <= kMaxTokensB)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "tokens_b must be a positive number of billions (at most 1e7)",
                         "/tokens_b");
    }
    if (req.global_batch_tokens &&
        !(std::isfinite(*req.global_batch_tokens) && *req.global_batch_tokens >= 1 &&
          *req.global_batch_tokens <= kMaxGlobalBatchTokens)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "global_batch_tokens must be between 1 and 1e10", "/global_batch_tokens");
    }
    if (auto s = CheckFraction(req.goodput, "/goodput", 0.01); !s.ok()) return s.error();
    if (auto s = CheckFraction(req.comm_overlap_fraction, "/comm_overlap_fraction", 0); !s.ok())
        return s.error();
    if (auto s = CheckFraction(req.tp_overlap_fraction, "/tp_overlap_fraction", 0); !s.ok())
        return s.error();
    if (auto s = CheckFraction(req.expert_overlap_fraction, "/expert_overlap_fraction", 0); !s.ok())
        return s.error();
    if (req.memory_overhead_gb &&
        !(std::isfinite(*req.memory_overhead_gb) && *req.memory_overhead_gb >= 0 &&
          *req.memory_overhead_gb <= 1e4)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "memory_overhead_gb must be between 0 and 10000", "/memory_overhead_gb");
    }
    if (!IsAdapterMode(req.mode)) {
        if (req.lora_rank) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "lora_rank applies only to mode lora or qlora", "/lora_rank");
        }
        if (req.lora_target_modules) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "lora_target_modules applies only to mode lora or qlora",
                             "/lora_target_modules");
        }
    }
    return Ok{};
}

// The adapter targets named by the request, resolved ("all-linear" expands); errors name
// the offending list entry.
Result<std::vector<std::string>> ResolveLoraTargets(const TrainingRequest& req) {
    std::vector<std::string> all(kLoraTargetModules.begin(), kLoraTargetModules.end());
    if (!req.lora_target_modules) {
        return all;
    }
    const auto& given = *req.lora_target_modules;
    if (given.empty() || given.size() > kMaxLoraTargetEntries) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "lora_target_modules must name between 1 and " +
                             std::to_string(kMaxLoraTargetEntries) + " modules",
                         "/lora_target_modules");
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < given.size(); ++i) {
        if (given[i] == kLoraAllLinear) {
            return all;
        }
        if (std::find(all.begin(), all.end(), given[i]) == all.end()) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "unknown LoRA target module '" + given[i].substr(0, 32) +
                                 "'; use all-linear or any of q_proj, k_proj, v_proj, o_proj, "
                                 "gate_proj, up_proj, down_proj",
                             "/lora_target_modules/" + std::to_string(i));
        }
        if (std::find(out.begin(), out.end(), given[i]) == out.end()) out.push_back(given[i]);
    }
    return out;
}

// GEMM precisions below 16 bits, whose operands a training step quantises from 16 bits.
bool IsBelow16Bits(Precision p) {
    return p == Precision::kFp8 || p == Precision::kInt8 || p == Precision::kFp4;
}

// ---- Step 2: model, device, links and the constants of this run ----
Result<Ctx> MakeContext(const TrainingRequest& req, const ClusterSpec& cluster,
                        const ResolvedModel& model) {
    auto device = MakeDeviceModel(cluster.accelerator, req.precision, req.efficiency, "/precision",
                                  req.with_assumptions);
    if (!device.ok()) {
        return device.error();
    }
    Ctx c(model);
    c.split = SplitParams(c.m);
    c.dev = device.value();
    c.bf16_dev = c.dev;
    c.low_precision_gemms = IsBelow16Bits(req.precision);
    if (c.low_precision_gemms) {
        // The BF16 side of an FP8 run; its own constants are those echoed for the run, only
        // its peak differs (echoed as attention_peak_tflops).
        auto bf16 = MakeDeviceModel(cluster.accelerator, Precision::kBf16, req.efficiency,
                                    "/precision", false);
        if (bf16.ok()) c.bf16_dev = bf16.value();
    }
    c.links = MakeClusterLinks(cluster, c.dev, req.with_assumptions);
    c.count = cluster.accelerator_count;
    c.capacity_gb = cluster.accelerator.memory_gb;
    bool fp32 = req.precision == Precision::kFp32 || req.precision == Precision::kTf32;
    c.gemm_bpe = BytesPerElement(req.precision);
    c.act_bpe = fp32 ? 4.0 : 2.0;
    c.weight_bpe = fp32 ? 4.0 : 2.0;
    c.adam_bytes = fp32 ? kAdamBytesPerParamFp32 : kAdamBytesPerParamMixed;
    c.goodput = req.goodput.value_or(kDefaultGoodput);
    c.overlap = req.comm_overlap_fraction.value_or(kDefaultCommOverlapFraction);
    c.tp_overlap = req.tp_overlap_fraction.value_or(kDefaultTpOverlapFraction);
    c.expert_overlap = req.expert_overlap_fraction.value_or(kDefaultExpertOverlapFraction);
    c.expert_overlap_needs_pipeline = req.recipe && req.recipe->expert_overlap_fraction &&
                                      req.recipe->expert_overlap_schedule == "dualpipe";
    c.overhead_gb = req.memory_overhead_gb.value_or(kDefaultMemoryOverheadGb);
    c.tokens = req.tokens_b * 1e9;
    c.flash = req.flash_attention.value_or(true);
    double gbt = req.global_batch_tokens.value_or(kDefaultGlobalBatchTokens);
    c.global_batch_seqs = std::max(1.0, std::round(gbt / c.m.seq_len));
    c.mode = req.mode;
    if (IsAdapterMode(req.mode)) {
        int rank = req.lora_rank.value_or(kDefaultLoraRank);
        if (rank < 1 || rank > std::min(kMaxLoraRank, c.m.hidden_size)) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "lora_rank must be between 1 and the hidden size (" +
                                 std::to_string(c.m.hidden_size) + ")",
                             "/lora_rank");
        }
        auto targets = ResolveLoraTargets(req);
        if (!targets.ok()) return targets.error();
        if (req.mode == TrainingMode::kQlora && !RunsQlora(cluster.accelerator.vendor)) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "mode qlora needs bitsandbytes' NF4 kernels, which run on NVIDIA, "
                             "AMD and Intel accelerators; " +
                                 cluster.accelerator.name + " (" + cluster.accelerator.vendor +
                                 ") has none: use mode lora, or one of those accelerators",
                             "/mode");
        }
        c.frozen_base = true;
        c.quantized_base = req.mode == TrainingMode::kQlora;
        c.frozen_weight_bpe = c.quantized_base ? kNf4BytesPerParam : c.weight_bpe;
        c.backward_gemms = kBackwardGemmsFrozen;
        if (c.quantized_base && !fp32) {
            // The QLoRA recipe trains 16-bit adapters with 32-bit Adam moments and no master
            // copy (qlora.py casts the LoRA modules to bf16; --optim paged_adamw_32bit).
            c.adam_bytes = kAdamMomentsBytesPerParam;
        }
        c.adapters = MakeAdapters(c.m, rank, std::move(targets).value());
    }
    return c;
}

// ---- Step 3: the fixed parallelism fields ----
// The expert degrees against the model and, where the request fixes the tensor and data
// degrees (data given, or implied by tensor x context x pipeline), against Megatron-Core's expert
// grid (pricing/estimate/moe.hpp).
Status CheckExpertGrid(const ParallelismRequest& pr, const Ctx& c) {
    const bool moe = c.m.IsMoe();
    if (pr.expert && *pr.expert > 1 && (!moe || c.m.experts % *pr.expert != 0)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "expert parallel degree must divide the expert count (" +
                             std::to_string(c.m.experts) + ")",
                         "/parallelism/expert");
    }
    if (pr.expert_tensor && *pr.expert_tensor > 1 && !moe) {
        return MakeError(ErrorCode::kInvalidArgument, "expert_tensor applies to MoE models only",
                         "/parallelism/expert_tensor");
    }
    if (!moe || !pr.tensor) return Ok{};
    std::optional<int> data = pr.data;
    const int context = pr.context.value_or(1);
    if (!data && pr.pipeline && c.count % (*pr.tensor * *pr.pipeline * context) == 0) {
        data = c.count / (*pr.tensor * *pr.pipeline * context);
    }
    if (!data) return Ok{};
    const int ep = pr.expert.value_or(1);
    const int etp = pr.expert_tensor.value_or(DefaultExpertTensorDegree(*pr.tensor, *data, ep));
    if (etp < 1 || !ExpertGridDivides(*pr.tensor, *data, ep, etp)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "expert x expert_tensor (" + std::to_string(ep) + " x " +
                             std::to_string(pr.expert_tensor.value_or(1)) +
                             ") must divide tensor x data (" + std::to_string(*pr.tensor) + " x " +
                             std::to_string(*data) +
                             "): Megatron-Core forms expert groups over tensor x data "
                             "ranks",
                         pr.expert_tensor ? "/parallelism/expert_tensor" : "/parallelism/expert");
    }
    return Ok{};
}

// tensor x context x pipeline x data is the accelerator count; a context degree left open
// takes what the other three leave.
Status CheckLayoutProduct(const ParallelismRequest& pr, int n) {
    if (!(pr.tensor && pr.pipeline && pr.data)) return Ok{};
    const long long product =
        static_cast<long long>(*pr.tensor) * *pr.pipeline * *pr.data * pr.context.value_or(1);
    if (product == n || (!pr.context && n % product == 0)) return Ok{};
    return MakeError(ErrorCode::kInvalidArgument,
                     std::string(pr.context ? "tensor x context x pipeline x data = "
                                            : "tensor x pipeline x data = ") +
                         std::to_string(product) + " but hardware count is " + std::to_string(n) +
                         "; the product must equal the count",
                     "/parallelism");
}

Status ValidateParallelism(const ParallelismRequest& pr, const Ctx& c) {
    const int n = c.count;
    struct IntCheck {
        const std::optional<int>* v;
        const char* field;
        int lo, hi;
    };
    const IntCheck checks[] = {
        {&pr.tensor, "/parallelism/tensor", 1, n},
        {&pr.context, "/parallelism/context", 1, n},
        {&pr.pipeline, "/parallelism/pipeline", 1, n},
        {&pr.data, "/parallelism/data", 1, n},
        {&pr.zero_stage, "/parallelism/zero_stage", 0, 3},
        {&pr.micro_batch_size, "/parallelism/micro_batch_size", 1, 65536},
        {&pr.virtual_stages, "/parallelism/virtual_stages", 1, 64},
        {&pr.expert, "/parallelism/expert", 1, n},
        {&pr.expert_tensor, "/parallelism/expert_tensor", 1, n},
    };
    for (const IntCheck& ch : checks) {
        if (*ch.v && (**ch.v < ch.lo || **ch.v > ch.hi)) {
            return MakeError(ErrorCode::kInvalidArgument,
                             std::string(ch.field).substr(13) + " must be between " +
                                 std::to_string(ch.lo) + " and " + std::to_string(ch.hi) +
                                 " (hardware count " + std::to_string(n) + ")",
                             ch.field);
        }
    }
    if (auto s = CheckLayoutProduct(pr, n); !s.ok()) return s.error();
    if (pr.context && !ContextSplitsSequence(c.m.seq_len, *pr.context)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "context parallel degree must split seq_len (" +
                             std::to_string(c.m.seq_len) +
                             ") into 2 x context equal chunks (Transformer Engine's "
                             "load-balanced context parallelism)",
                         "/parallelism/context");
    }
    if (pr.tensor && c.m.attention_heads % *pr.tensor != 0) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "tensor parallel degree must divide attention_heads (" +
                             std::to_string(c.m.attention_heads) + ")",
                         "/parallelism/tensor");
    }
    if (pr.pipeline && *pr.pipeline > c.m.layers) {
        return MakeError(
            ErrorCode::kInvalidArgument,
            "pipeline degree must not exceed layers (" + std::to_string(c.m.layers) + ")",
            "/parallelism/pipeline");
    }
    return CheckExpertGrid(pr, c);
}

// ---- Step 4: the layout search ----
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

Degrees TensorCandidates(const Ctx& c, const ParallelismRequest& pr) {
    if (pr.tensor) return {*pr.tensor};
    Degrees tps;
    const int limit = std::min(c.links.scale_up_domain, c.count);
    for (int t = 1; t <= limit && t > 0; t *= 2) {
        if (c.count % t == 0 && c.m.attention_heads % t == 0) tps.Add(t);
    }
    return tps;
}

// Each tensor degree with the context degrees tried beside it (ContextParallelCandidates).
struct TensorContextChoices {
    std::array<std::pair<int, int>, 64> pairs{};
    std::size_t n = 0;
    const std::pair<int, int>* begin() const { return pairs.data(); }
    const std::pair<int, int>* end() const { return pairs.data() + n; }
};

TensorContextChoices TensorContextCandidates(const Ctx& c, const ParallelismRequest& pr) {
    TensorContextChoices out;
    for (int t : TensorCandidates(c, pr)) {
        if (t < 1 || c.count % t != 0) continue;
        for (int cp : ContextParallelCandidates(c.m.seq_len, c.count / t, pr.context)) {
            if (out.n < out.pairs.size()) out.pairs[out.n++] = {t, cp};
        }
    }
    return out;
}

Degrees MicroBatchCandidates(const Ctx& c, const ParallelismRequest& pr) {
    if (pr.micro_batch_size) return {*pr.micro_batch_size};
    Degrees mbs;
    for (int b : kMicroBatchCandidates) {
        if (b == 1 || static_cast<double>(b) * c.m.seq_len <= kMaxMicroBatchTokens) mbs.Add(b);
    }
    return mbs;
}

// Whether the search goes past even stages and two chunks per stage on this cluster
// (kDeepPipelineSearchMinAccelerators).
bool DeepPipelineSearch(const Ctx& c) {
    return c.count >= kDeepPipelineSearchMinAccelerators;
}

// Pipeline degrees the search tries, up to kMaxPipelineCandidates, ascending. Below the deep
// search's scale, those that divide the layers (every stage the same whole layers). At it,
// every degree whose split leaves each stage at least one layer: the middle stages hold
// ceil(layers / p) layers and the first and last share the rest (SplitShape), as
// Megatron-Core's uneven first/last stages and the Llama 3 405B run (126 layers on 16 stages,
// arXiv 2407.21783 Table 4). Worked out once per search; the search then tests only these
// against each tensor degree's remaining accelerators.
Degrees PipelineDegrees(const Ctx& c) {
    const ResolvedModel& m = c.m;
    const bool uneven = DeepPipelineSearch(c);
    Degrees out;
    const int limit = std::min(m.layers, kMaxPipelineCandidates);
    for (int p = 1; p <= limit; ++p) {
        const bool splits =
            uneven ? p == 1 || EndStagesLayers(m.layers, p) >= 2 : m.layers % p == 0;
        if (splits) out.Add(p);
    }
    return out;
}

Degrees PipelineCandidates(const ParallelismRequest& pr, const Degrees& pipeline_degrees,
                           int rest) {
    if (pr.pipeline) {
        return rest % *pr.pipeline == 0 ? Degrees{*pr.pipeline} : Degrees{};
    }
    Degrees pps;
    for (int p : pipeline_degrees) {
        if (p > rest) break;
        if (rest % p == 0) pps.Add(p);
    }
    return pps;
}

// The settings tried for one tensor x pipeline x data split. The lists live on the stack:
// this runs hundreds of times per estimate and the planner runs hundreds of estimates.
struct InnerChoices {
    std::array<int, kMaxVirtualStageChoices> virtual_stages{1};
    std::size_t virtual_n = 1;
    std::array<Recompute, 3> recompute{Recompute::kNone, Recompute::kFull, Recompute::kSelective};
    std::size_t recompute_n = 2;
    std::array<int, 3> zero{1, 2, 3};
    std::size_t zero_n = 3;
};

// The interleaving depths searched beyond 1 for a split of p stages and `micro_batches` per
// step. Below the deep search's scale: 2 when the even stages split in two (the search's
// earlier depth). At it: every divisor of the layers per stage that leaves chunks of
// at least kMinSearchedLayersPerChunk whole layers (Narayanan et al. 2021 Sec. 2.2), when
// every stage has a micro-batch in flight (Megatron-LM's interleaved schedule refuses fewer
// micro-batches than stages; with fewer the (p - 1)/(m v) bubble does not hold).
void AddVirtualStageChoices(const Ctx& c, int p, int micro_batches, InnerChoices& ch) {
    if (!DeepPipelineSearch(c)) {
        if ((c.m.layers / p) % 2 == 0) ch.virtual_stages[ch.virtual_n++] = 2;
        return;
    }
    if (micro_batches < p) return;
    const int per_stage = LayersPerStage(c.m.layers, p);
    const int deepest = per_stage / kMinSearchedLayersPerChunk;
    for (int v = 2; v <= deepest && ch.virtual_n < ch.virtual_stages.size(); ++v) {
        if (per_stage % v == 0) ch.virtual_stages[ch.virtual_n++] = v;
    }
}

InnerChoices InnerChoicesFor(const Ctx& c, const ParallelismRequest& pr, int p, int d, int b,
                             bool fully_given) {
    InnerChoices ch;
    if (pr.virtual_stages) {
        ch.virtual_stages[0] = *pr.virtual_stages;
    } else if (!fully_given && p > 1) {
        AddVirtualStageChoices(c, p, MicroBatchesPerStep(c, d, b), ch);
    }
    if (pr.recompute) {
        ch.recompute[0] = *pr.recompute;
        ch.recompute_n = 1;
    } else if (!c.flash) {
        // Selective recompute of the attention core frees the score matrices of unfused
        // attention; with FlashAttention it frees only the softmax statistics and costs an
        // attention forward, so it is tried only without it. Tried between none and full.
        ch.recompute = {Recompute::kNone, Recompute::kSelective, Recompute::kFull};
        ch.recompute_n = 3;
    }
    if (pr.zero_stage) {
        ch.zero[0] = *pr.zero_stage;
        ch.zero_n = 1;
    } else if (d == 1) {
        ch.zero[0] = 0;
        ch.zero_n = 1;
    }
    return ch;
}

// Evaluates the settings of one split; for each recompute mode the lowest ZeRO stage that
// fits is the fastest, so the stages after it are skipped.
void SearchSplit(const Ctx& c, ParallelLayout base, const RowCosts& row, const InnerChoices& ch,
                 SearchResult& r) {
    SplitCosts costs(c, base, row);
    // Deepest interleaving first: it usually wins, and then the bubble bound of ReachesBound
    // spares timing the shallower ones.
    for (std::size_t vn = ch.virtual_n; vn > 0; --vn) {
        const std::size_t vi = vn - 1;
        for (std::size_t ri = 0; ri < ch.recompute_n; ++ri) {
            for (std::size_t zi = 0; zi < ch.zero_n; ++zi) {
                ParallelLayout l = base;
                l.virtual_stages = ch.virtual_stages[vi];
                l.recompute = ch.recompute[ri];
                l.zero_stage = ch.zero[zi];
                const double need_gb = costs.NeedGb(l, ri, zi);
                const bool fits = need_gb <= c.capacity_gb;
                if (r.fully_given) {
                    // Reported whether or not it fits, so always timed.
                    const StepTiming timing =
                        costs.Time(l, ri, zi, std::numeric_limits<double>::infinity());
                    r.ConsiderFixed(MakeEval(c, l, costs.shape(), fits, timing));
                    break;
                }
                if (!fits) {
                    r.ConsiderUnfitting(need_gb, l);
                    continue;
                }
                const StepTiming timing = costs.Time(l, ri, zi, r.CannotWinAt());
                r.ConsiderFitting(timing.step_time_s,
                                  [&] { return MakeEval(c, l, costs.shape(), fits, timing); });
                break;
            }
        }
    }
}

// Every figure of the device models the roofline functions read (the run's and its BF16
// side, Ctx::bf16_dev); contexts with the same figures give the same layer costs.
using RooflineFigures = std::array<double, 16>;
RooflineFigures RooflineFiguresOf(const DeviceModel& d, const DeviceModel& bf16) {
    return {d.peak_flops,
            d.memory_bytes_per_s,
            d.gemm_max_efficiency,
            d.gemm_half_flops,
            d.gemm_curve_exponent,
            d.memory_max_efficiency,
            d.attention_efficiency,
            d.kernel_overhead_s,
            bf16.peak_flops,
            bf16.memory_bytes_per_s,
            bf16.gemm_max_efficiency,
            bf16.gemm_half_flops,
            bf16.gemm_curve_exponent,
            bf16.memory_max_efficiency,
            bf16.attention_efficiency,
            bf16.kernel_overhead_s};
}

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

// Every candidate layout is timed when it fits and ranked by step time. A fully specified
// layout (all of tensor, pipeline, data, ZeRO, recompute and micro-batch) is timed whether
// or not it fits; among its expert-parallel choices the fastest that fits wins, else the one
// that needs the least memory.
SearchResult SearchLayouts(const Ctx& c, const ParallelismRequest& pr, LayerCosts& layers,
                           const Deadline& deadline) {
    SearchResult r;
    r.fully_given =
        pr.tensor && pr.pipeline && pr.data && pr.zero_stage && pr.recompute && pr.micro_batch_size;
    const Degrees mbs_list = MicroBatchCandidates(c, pr);
    const Degrees pipeline_degrees = PipelineDegrees(c);
    for (const auto& [t, cp] : TensorContextCandidates(c, pr)) {
        if (deadline.Passed()) break;  // the estimate refuses what was found (EstimateDerived)
        if (c.count % (t * cp) != 0) continue;
        const int rest = c.count / (t * cp);
        const Degrees pps = PipelineCandidates(pr, pipeline_degrees, rest);
        for (int b : mbs_list) {
            const bool sp = pr.sequence_parallel.value_or(t > 1);
            RowCosts row;
            bool row_ready = false;
            for (int p : pps) {
                const int d = rest / p;
                if (pr.data && *pr.data != d) continue;
                if (static_cast<double>(d) * b > c.global_batch_seqs) {
                    r.batch_too_small = true;
                    if (!r.fully_given) continue;
                }
                if (!row_ready) {
                    row.layer = layers.At(t, cp, b, sp);
                    row.activations = RowActivationsOf(c, b, t, cp, sp);
                    row_ready = true;
                }
                const InnerChoices ch = InnerChoicesFor(c, pr, p, d, b, r.fully_given);
                const ExpertChoices eps = ExpertParallelCandidates(c.m, pr, t, d);
                for (std::size_t ei = 0; ei < eps.n; ++ei) {
                    const int ep = eps.degrees[ei];
                    const int etp = eps.expert_tensor[ei];
                    if (c.m.IsMoe() && !ExpertGridDivides(t, d, ep, etp)) continue;
                    ParallelLayout base;
                    base.tensor = t;
                    base.context = cp;
                    base.pipeline = p;
                    base.data = d;
                    base.micro_batch_size = b;
                    base.sequence_parallel = sp;
                    base.expert = ep;
                    base.expert_tensor = etp;
                    SearchSplit(c, base, row, ch, r);
                }
            }
        }
    }
    if (r.fully_given && r.fixed.valid) {
        r.best = r.fixed;
        r.second = Eval{};
    }
    return r;
}

// ---- Step 5: why nothing was found ----
Error NoLayoutError(const Ctx& c, const ParallelismRequest& pr, const SearchResult& r,
                    const ClusterSpec& cluster) {
    const int n = c.count;
    if (r.batch_too_small && !std::isfinite(r.best_need_gb)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "the global batch of " +
                             std::to_string(static_cast<long long>(c.global_batch_seqs)) +
                             " sequences is smaller than the data-parallel degree of every "
                             "layout on " +
                             std::to_string(n) +
                             " accelerators; raise global_batch_tokens or use fewer accelerators",
                         "/global_batch_tokens");
    }
    if (!std::isfinite(r.best_need_gb)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "no parallel layout matches the fixed parallelism fields on " +
                             std::to_string(n) + " accelerators",
                         "/parallelism");
    }
    const ParamSplit& train = Trainable(c);
    double trainable = train.replicated + train.routed;
    double frozen_gb = c.frozen_base ? c.m.params * c.frozen_weight_bpe : 0.0;
    double states_gb = (frozen_gb + trainable * (2.0 * c.weight_bpe + c.adam_bytes)) / kGb;
    double usable = c.capacity_gb - c.overhead_gb;
    double min_count = usable > 0 ? std::ceil(states_gb / (0.8 * usable)) : 0;
    std::string hint =
        usable > 0 ? "; weights, gradients and optimizer state alone need about " +
                         std::to_string(static_cast<long long>(std::ceil(states_gb))) +
                         " GB, so at least ~" + std::to_string(static_cast<long long>(min_count)) +
                         " accelerators of this kind (fully sharded) or more memory per accelerator"
                   : "";
    return MakeError(
        ErrorCode::kInvalidArgument,
        "the model does not fit: the smallest layout (" + Describe(r.best_need_layout) +
            ") needs " + std::to_string(r.best_need_gb) + " GB per accelerator but " +
            cluster.accelerator.id + " has " + std::to_string(c.capacity_gb) + " GB" + hint,
        pr.tensor || pr.context || pr.pipeline || pr.data || pr.zero_stage || pr.recompute ||
                pr.expert
            ? "/parallelism"
            : "/hardware/total_accelerators");
}

// A step holds whole micro-batches of whole sequences on every data-parallel replica, so the
// batch the optimizer sees can differ from the one asked for (or the default); it changes the
// step count and, for the run's convergence, the batch size itself, so the answer says so.
void WarnOnBatchChange(const TrainingRequest& req, TrainingEstimate& out) {
    const double asked = req.global_batch_tokens.value_or(kDefaultGlobalBatchTokens);
    if (std::abs(out.tokens_per_step - asked) <= kBatchChangeWarnFraction * asked) {
        return;
    }
    const ParallelLayout& l = out.parallelism;
    out.model.warnings.push_back(
        {"/global_batch_tokens",
         std::string(req.global_batch_tokens ? "global_batch_tokens "
                                             : "the default global batch of ") +
             std::to_string(static_cast<long long>(asked)) + " tokens became " +
             std::to_string(static_cast<long long>(out.tokens_per_step)) + " tokens per step (" +
             std::to_string(out.global_batch_sequences) + " sequences = data-parallel " +
             std::to_string(l.data) + " x micro-batch " + std::to_string(l.micro_batch_size) +
             " x " + std::to_string(out.micro_batches_per_step) +
             " micro-batches): every replica takes whole sequences; steps and the optimizer's "
             "batch follow tokens_per_step"});
}

// MFU and HFU count causal attention whole (PaLM, Megatron), twice what FlashAttention runs
// under the mask. Where attention dominates (very long sequences) they can pass what the GEMMs
// or even the peak allow; the answer then gives the utilisation of the work actually run.
void WarnOnCountedAttention(const Ctx& c, TrainingEstimate& out) {
    if (!c.flash || out.hfu <= c.dev.gemm_max_efficiency) {
        return;
    }
    const double share = AttentionFlopsPerToken(c.m) / out.model_flops_per_token;
    const double executed_mfu = out.mfu * (1.0 - (1.0 - kCausalWorkFraction) * share);
    out.model.warnings.push_back(
        {"/model/seq_len",
         "mfu " + std::to_string(out.mfu).substr(0, 5) + " and hfu " +
             std::to_string(out.hfu).substr(0, 5) +
             " count causal attention whole (PaLM convention), twice what FlashAttention runs "
             "under the mask; at this sequence length attention is " +
             std::to_string(static_cast<int>(std::lround(share * 100))) +
             "% of the counted FLOPs, so the work actually run uses " +
             std::to_string(executed_mfu).substr(0, 5) + " of peak"});
}

// ---- Step 6: the headline figures of the chosen layout ----
TrainingEstimate Summarize(const Ctx& c, const SearchResult& r) {
    TrainingEstimate out;
    const Eval& e = r.best;
    const int n = c.count;
    const double peak_total = c.dev.peak_flops * n;
    out.parallelism = e.layout;
    out.layout_searched = !r.fully_given;
    out.layouts_considered = r.considered;
    out.step_time_s = e.step_time_s;
    out.tokens_per_step = e.tokens_per_step;
    out.global_batch_sequences = static_cast<int>(std::min(
        e.tokens_per_step / c.m.seq_len, static_cast<double>(std::numeric_limits<int>::max())));
    out.micro_batches_per_step = e.micro_batches;
    out.steps = c.tokens / e.tokens_per_step;
    out.tokens_per_second = e.tokens_per_step / e.step_time_s;
    out.model_flops_per_token = ModelFlopsPerToken(c.m, c.mode, c.adapters.active_per_token);
    out.total_model_flops = out.model_flops_per_token * c.tokens;
    double model_flops_per_s = out.model_flops_per_token * out.tokens_per_second;
    out.mfu = model_flops_per_s / peak_total;
    out.hfu = e.hw_flops_per_step / e.step_time_s / peak_total;
    out.achieved_tflops_per_accelerator = model_flops_per_s / n / 1e12;
    out.hardware_tflops_per_accelerator = e.hw_flops_per_step / e.step_time_s / n / 1e12;
    double ideal_s = out.steps * e.step_time_s;
    out.ideal_wall_clock_hours = ideal_s / 3600.0;
    out.ideal_accelerator_hours = out.ideal_wall_clock_hours * n;
    out.wall_clock_hours = out.ideal_wall_clock_hours / c.goodput;
    out.accelerator_hours = out.wall_clock_hours * n;
    out.memory = e.memory;
    out.memory_per_accelerator_gb = e.memory.total_gb;
    out.memory_capacity_gb = c.capacity_gb;
    out.fits_in_memory = e.fits;
    out.memory_headroom_gb = c.capacity_gb - e.memory.total_gb;
    out.breakdown = e.breakdown;
    const StepBreakdown& br = e.breakdown;
    std::pair<double, const char*> shares[] = {
        {br.compute_s, "compute"},
        {br.memory_bound_s + br.optimizer_s, "memory_bandwidth"},
        {br.communication_s, "communication"},
        {br.bubble_s, "pipeline_bubble"}};
    out.bottleneck =
        std::max_element(std::begin(shares), std::end(shares), [](const auto& x, const auto& y) {
            return x.first < y.first;
        })->second;
    if (r.second.valid) {
        LayoutSummary rs;
        rs.layout = r.second.layout;
        rs.step_time_s = r.second.step_time_s;
        rs.memory_per_accelerator_gb = r.second.memory.total_gb;
        rs.mfu = out.model_flops_per_token * r.second.tokens_per_step / r.second.step_time_s /
                 peak_total;
        out.runner_up = rs;
    }
    out.model = c.m;
    FineTuning& ft = out.fine_tuning;
    ft.mode = c.mode;
    ft.lora_rank = c.adapters.rank;
    ft.lora_target_modules = c.adapters.targets;
    const ParamSplit& train = Trainable(c);
    ft.trainable_params = train.replicated + train.routed;
    ft.frozen_weight_bytes_per_param = c.frozen_base ? c.frozen_weight_bpe : 0.0;
    return out;
}

// ---- Step 7: the constants behind the figures ----
// The pipeline split, interleaving and MTP figures of the chosen layout, for the echo.
void AddPipelineAssumptions(const Ctx& c, const Eval& e, Assumptions& as) {
    auto add = [&](AssumptionText name, double v, AssumptionText unit, AssumptionText desc,
                   AssumptionText source) {
        as.push_back({std::move(name), v, std::move(unit), std::move(desc), std::move(source)});
    };
    if (e.layout.pipeline > 1) {
        add("head_stage_layers", HeadStageLayers(c.m.layers, e.layout.pipeline), "layers",
            "layers on the last pipeline stage, which also runs the output head (middle stages "
            "hold ceil(layers / pipeline); first and last share the rest, the last the smaller "
            "half)",
            "Llama 3 405B split, arXiv 2407.21783 Sec. 3.3.2");
        add("interleaved_activation_factor",
            1.0 + (e.layout.virtual_stages > 1
                       ? (e.layout.pipeline - 1.0) / (e.layout.pipeline * e.layout.virtual_stages)
                       : 0.0),
            "ratio",
            "first stage's stored layer activations over 1F1B's: 1 + (p - 1)/(p v) "
            "when interleaved (v > 1); the pipeline transfers grow by v as well",
            "Korthikanti et al. 2022 Sec. 4.2.3; Narayanan et al. 2021 Sec. 2.2.2");
    }
    add("deep_pipeline_search_min_accelerators", kDeepPipelineSearchMinAccelerators, "accelerators",
        "from this count up the search also tries pipeline degrees that do not divide the "
        "layers (uneven first and last stages) and more than two interleaved chunks per stage; "
        "below it even stages and at most two chunks, where the validation set's published "
        "runs agree better",
        "Llama 3 405B on 8,192 and 16,384 H100 (arXiv 2407.21783 Table 4); docs/estimator.md");
    add("min_searched_layers_per_chunk", kMinSearchedLayersPerChunk, "layers",
        "fewest layers per interleaved chunk the search tries (at most half the layers per "
        "stage in chunks); parallelism.virtual_stages may ask for more",
        "NVIDIA/dgxc-benchmarking Llama 3.1 405B H100 recipe (PP 8, VP 8: about 2 layers per "
        "chunk)");
    if (c.m.mtp_modules > 0) {
        add("mtp_modules", c.m.mtp_modules, "modules",
            "multi-token-prediction modules: one more block and output-head pass each per "
            "micro-batch on the last pipeline stage",
            "DeepSeek-V3 (arXiv 2412.19437 Sec. 2.2); model library mtp_modules");
    }
}

// Where a field's value came from: the request, the model's published training recipe (when
// it filled the field), or the default's own source.
AssumptionText FieldSource(const TrainingRequest& req, bool given, bool by_recipe,
                           AssumptionText default_source) {
    if (by_recipe && req.recipe) {
        return "training recipe of " + req.recipe->model_id +
               " (schema/seed/training_recipes.csv; the request left it unset): " +
               req.recipe->source;
    }
    return SourceOf(given, std::move(default_source));
}

// The recipe's fields that have no other echo (the precision is a request field without a
// number of its own).
void AddRecipeAssumptions(const TrainingRequest& req, Assumptions& as) {
    if (!req.recipe) return;
    as.push_back({"recipe_applied", req.recipe->applied ? 1.0 : 0.0, "bool",
                  std::string(req.recipe->applied ? "1: the model's published training recipe "
                                                    "filled the fields the request left unset, "
                                                    "as "
                                                  : "0: the model's published training recipe "
                                                    "was not applied, as ") +
                      req.recipe->why,
                  "training recipe of " + req.recipe->model_id +
                      " (schema/seed/training_recipes.csv): " + req.recipe->source});
    if (!req.recipe->precision) return;
    as.push_back({"recipe_precision_bytes_per_element", BytesPerElement(req.precision), "bytes",
                  "GEMM operand size at " + std::string(PrecisionName(req.precision)) +
                      ", the precision the model was published as trained in (pass precision "
                      "to choose another)",
                  FieldSource(req, false, true, "")});
}

// What a step with GEMMs below 16 bits adds (Ctx::low_precision_gemms), as used.
void AddLowPrecisionAssumptions(const Ctx& c, Assumptions& as) {
    if (!c.low_precision_gemms) return;
    as.push_back({"quantize_bytes_per_element",
                  c.act_bpe + kLowPrecisionCopiesPerOperand * c.gemm_bpe, "bytes",
                  "HBM traffic of quantising one 16-bit GEMM operand element: read it, write the "
                  "low-precision copy and its transpose (amax reduced in the same pass); once "
                  "per GEMM input in the forward pass, per output gradient in the backward pass "
                  "(each a kernel), and per local weight once a step",
                  "Transformer Engine docs, Performance considerations (handling transposes: "
                  "Hopper FP8 GEMMs take only the TN layout) and nvte_cast_transpose; FP8 "
                  "weight caching across micro-batches"});
    as.push_back({"attention_peak_tflops", c.bf16_dev.peak_flops / 1e12, "TFLOP/s",
                  "peak the attention core (FlashAttention, at attention_efficiency) runs at: "
                  "FP8 recipes keep it in BF16 (the output head, also BF16 in them, is timed "
                  "at the GEMM precision: docs/estimator.md, FP8)",
                  "Transformer Engine: FP8 dot-product attention is opt-in (recipe fp8_dpa, "
                  "default False); DeepSeek-V3 keeps attention in BF16 (arXiv 2412.19437 "
                  "Sec. 3.3.1); catalog BF16 peak"});
}

Assumptions TrainingAssumptions(const TrainingRequest& req, const Ctx& c, const Eval& e) {
    Assumptions as = c.dev.assumptions;
    as.insert(as.end(), c.links.assumptions.begin(), c.links.assumptions.end());
    auto add = [&](AssumptionText name, double v, AssumptionText unit, AssumptionText desc,
                   AssumptionText source) {
        as.push_back({std::move(name), v, std::move(unit), std::move(desc), std::move(source)});
    };
    add("goodput", c.goodput, "fraction",
        "productive share of wall-clock time (restarts, checkpoints, evaluation excluded); "
        "expected hours = ideal hours / goodput",
        SourceOf(req.goodput.has_value(),
                 "estimator-references §3: model-card GPU-hours imply 0.8-0.9 of in-run "
                 "throughput (Llama-3.1-405B 0.35 vs 0.38-0.43 MFU)"));
    add("comm_overlap_fraction", c.overlap, "fraction",
        "share of data-parallel/ZeRO/pipeline traffic that can hide behind compute "
        "(exposed = max((1 - f) * comm, comm - compute window))",
        SourceOf(req.comm_overlap_fraction.has_value(),
                 "assumed (Megatron/FSDP overlap gradient reduction and prefetch)"));
    add("tp_overlap_fraction", c.tp_overlap, "fraction",
        "share of tensor-parallel traffic hidden behind compute",
        SourceOf(req.tp_overlap_fraction.has_value(),
                 "default: no overlap; frameworks that overlap it (Megatron-Core "
                 "--tp-comm-overlap) are modelled with 0.6, assumed"));
    if (c.m.IsMoe()) {
        add("expert_overlap_fraction", ExpertOverlap(c, e.layout), "fraction",
            ExpertOverlap(c, e.layout) == c.expert_overlap
                ? AssumptionText("share of the MoE dispatch/combine all-to-all hidden behind "
                                 "compute")
                : AssumptionText("share of the MoE dispatch/combine all-to-all hidden behind "
                                 "compute: the default, as the recipe's DualPipe overlap needs "
                                 "pipeline parallelism and the layout has none"),
            FieldSource(req, req.expert_overlap_fraction.has_value(),
                        req.recipe && req.recipe->expert_overlap_fraction,
                        "default: on the critical path; DualPipe-style schedules hide most of "
                        "it (DeepSeek-V3, arXiv 2412.19437 §3.2.1), pass 0.9 for them"));
        AddMoeLayerAssumptions(MoeShapeOf(c, e.layout), c.links, MoeHostExposedSeconds(c, e.layout),
                               as);
    }
    AddRecipeAssumptions(req, as);
    AddLowPrecisionAssumptions(c, as);
    add("cross_entropy_bytes_per_logit", kCrossEntropyBytesPerLogit, "bytes",
        "HBM traffic of the fp32 softmax cross-entropy per logit element, forward + backward",
        "counted: cast, max, exp-sum, gather; softmax gradient, cast back");
    add("step_fixed_overhead_s", kStepFixedOverheadS, "s",
        "fixed cost per optimizer step (optimizer launches, gradient clipping, loss reduction, "
        "host sync, logging); part of breakdown.optimizer_s",
        "assumed; visible only for short steps (chosen on the small Megatron-Core rows of "
        "tests/data/published-runs.csv)");
    add("memory_overhead_gb", c.overhead_gb, "GB",
        "framework, CUDA context and fragmentation per accelerator",
        SourceOf(req.memory_overhead_gb.has_value(),
                 "estimator-references §3.4 (0.5-2 GB per GPU)"));
    add("global_batch_tokens", req.global_batch_tokens.value_or(kDefaultGlobalBatchTokens),
        "tokens",
        "tokens per optimizer step requested (the step holds tokens_per_step: whole "
        "sequences on every data-parallel replica; a change over 1% is a warning)",
        FieldSource(req, req.global_batch_tokens.has_value(),
                    req.recipe && req.recipe->global_batch_tokens,
                    "default 4M tokens (LLaMA, GPT-3 175B 3.2M)"));
    add("flash_attention", c.flash ? 1.0 : 0.0, "bool",
        "1: fused FlashAttention-style attention; 0: unfused scores (softmax/mask/dropout over "
        "b*a*s^2 elements, 13 bytes per score forward, 26 backward)",
        SourceOf(req.flash_attention.has_value(), "default: FlashAttention (Dao et al. 2022)"));
    add("causal_attention_work_fraction", kCausalWorkFraction, "fraction",
        "share of attention FLOPs FlashAttention executes under a causal mask (time only; MFU "
        "counts the full 4*s*h per token, PaLM convention; a sliding-window layer of w < s "
        "tokens counts 2w - w^2/s in place of s)",
        "Dao 2023");
    add("attention_backward_ratio", kAttentionBackwardRatio, "ratio",
        "FlashAttention backward FLOPs over forward", "Dao 2023, arXiv 2307.08691 §3.1");
    add("adam_bytes_per_param", c.adam_bytes, "bytes",
        "optimizer state per trainable parameter: fp32 master + 2 moments (mixed precision), "
        "2 fp32 moments only for QLoRA's 16-bit adapters; sharded once per replica group "
        "(routed experts over data / expert ranks)",
        c.quantized_base ? "QLoRA recipe (artidoro/qlora qlora.py: bf16 LoRA modules, "
                           "paged_adamw_32bit)"
                         : "EleutherAI Transformer Math 101; ZeRO paper (Rajbhandari et al. 2020)");
    add("optimizer_bytes_moved_per_param", kOptimizerBytesPerParam, "bytes",
        "HBM traffic of one Adam step per local trainable parameter", "derived: read 14, write 14");
    add("backward_gemms_per_forward", c.backward_gemms, "GEMMs",
        "backward GEMMs per forward GEMM of a base weight: 2 when it trains (input and weight "
        "gradient), 1 when it is frozen (input gradient only)",
        "backpropagation through a linear layer");
    if (c.frozen_base) {
        add("lora_rank", c.adapters.rank, "1",
            "rank r of every adapter (r * (in + out) parameters)",
            SourceOf(req.lora_rank.has_value(),
                     "QLoRA paper setting (Dettmers et al. 2023 §4: r = 64 on all linear layers)"));
        add("frozen_weight_bytes_per_param", c.frozen_weight_bpe, "bytes",
            "storage of a frozen block weight (embeddings and output head stay 16-bit)",
            c.quantized_base ? "NF4 + double quantisation, 4.127 bits (Dettmers et al. 2023 §3)"
                             : "16-bit base (LoRA)");
        if (c.quantized_base) {
            add("dequantize_bytes_per_param", c.frozen_weight_bpe + c.weight_bpe, "bytes",
                "HBM traffic to dequantise one weight before each forward and backward GEMM "
                "(read NF4, write 16-bit)",
                "bitsandbytes 4-bit linear layers dequantise to the compute dtype per call");
        }
    }
    add("elementwise_hidden_elements_per_token", kElementwiseHiddenElements, "elements",
        "per layer forward: 2 norms and 2 residual adds, in units of the hidden size",
        "counted from the Megatron layer (Korthikanti et al. 2022 Fig. 2)");
    AddActivationAssumption(c.m,
                            {e.layout.micro_batch_size, e.layout.tensor, e.layout.context,
                             e.layout.sequence_parallel, e.layout.recompute, c.flash},
                            as);
    AddContextParallelAssumptions(c.m, e.layout.tensor, e.layout.context, e.layout.micro_batch_size,
                                  c.act_bpe, as);
    add("pipeline_bubble_fraction",
        PipelineBubbleFraction(e.layout.pipeline, e.micro_batches, e.layout.virtual_stages),
        "fraction", "(p - 1) / (m * v)", "Narayanan et al. 2021");
    AddPipelineAssumptions(c, e, as);
    const Assumptions& derivation = ModelDerivationAssumptions();
    as.insert(as.end(), derivation.begin(), derivation.end());
    return as;
}

}  // namespace

std::optional<std::string> TrainingPrecisionCaveat(Precision precision) {
    switch (precision) {
        case Precision::kInt8:
            return std::string(
                "int8 has no established LLM training recipe (mixed-precision training runs "
                "in bf16 or fp8); every GEMM is timed at the int8 peak, so the time is a "
                "lower bound, not a plan");
        case Precision::kFp4:
            return std::string(
                "fp4 training is research (NVFP4 pretraining recipes, not in mainstream "
                "frameworks); every GEMM is timed at the fp4 peak, so the time is a lower "
                "bound, not a plan");
        case Precision::kFp32:
        case Precision::kTf32:
        case Precision::kFp16:
        case Precision::kBf16:
        case Precision::kFp8:
            return std::nullopt;
    }
    return std::nullopt;
}

bool RunsQlora(std::string_view vendor) {
    const std::string key = IdKey(vendor);
    return std::find(kQloraVendors.begin(), kQloraVendors.end(), key) != kQloraVendors.end();
}

const char* RecomputeName(Recompute r) {
    switch (r) {
        case Recompute::kNone:
            return "none";
        case Recompute::kSelective:
            return "selective";
        case Recompute::kFull:
            return "full";
    }
    return "none";
}

std::optional<Recompute> ParseRecompute(std::string_view name) {
    for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
        if (name == RecomputeName(r)) {
            return r;
        }
    }
    return std::nullopt;
}

const char* TrainingModeName(TrainingMode mode) {
    switch (mode) {
        case TrainingMode::kPretrain:
            return "pretrain";
        case TrainingMode::kFullFinetune:
            return "full_finetune";
        case TrainingMode::kLora:
            return "lora";
        case TrainingMode::kQlora:
            return "qlora";
    }
    return "pretrain";
}

std::optional<TrainingMode> ParseTrainingMode(std::string_view name) {
    for (TrainingMode m : {TrainingMode::kPretrain, TrainingMode::kFullFinetune,
                           TrainingMode::kLora, TrainingMode::kQlora}) {
        if (name == TrainingModeName(m)) {
            return m;
        }
    }
    return std::nullopt;
}

ParamSplit SplitParams(const ResolvedModel& m) {
    if (!m.IsMoe()) {
        return {m.params, 0.0};
    }
    double per_expert = MlpMatrices(m) * m.hidden_size * ExpertWidth(m);
    double routed = static_cast<double>(MoeLayers(m)) * m.experts * per_expert;
    // Never more than what the parameter count leaves after attention and embeddings.
    double room = m.params - m.embedding_params - m.layers * m.attention_params_per_layer;
    routed = std::clamp(routed, 0.0, std::max(0.0, room));
    return {m.params - routed, routed};
}

double ModelFlopsPerToken(const ResolvedModel& m) {
    return ModelFlopsPerToken(m, TrainingMode::kPretrain, 0.0);
}

double ModelFlopsPerToken(const ResolvedModel& m, TrainingMode mode, double active_adapter_params) {
    double base = m.ActiveNonEmbeddingParams() + static_cast<double>(m.vocab_size) * m.hidden_size;
    const double attention = AttentionFlopsPerToken(m);
    if (IsAdapterMode(mode)) {
        return 4.0 * base + 6.0 * active_adapter_params + attention;
    }
    return 6.0 * base + attention;
}

double ActivationBytesPerLayer(const ResolvedModel& m, int micro_batch, int tensor,
                               bool sequence_parallel, Recompute recompute, bool flash_attention) {
    return LayerActivations(m,
                            {micro_batch, tensor, 1, sequence_parallel, recompute, flash_attention})
        .Total();
}

double PipelineBubbleFraction(int pipeline, int micro_batches, int virtual_stages) {
    if (pipeline <= 1 || micro_batches <= 0 || virtual_stages <= 0) {
        return 0;
    }
    return (pipeline - 1.0) / (static_cast<double>(micro_batches) * virtual_stages);
}

// The layer costs a TrainingEstimator keeps, per device model (by its roofline figures).
struct TrainingEstimator::LayerCostMemo {
    struct Device {
        RooflineFigures figures;
        std::vector<KeptLayerCost> layers;
    };
    std::vector<Device> devices;
};

namespace {

std::vector<KeptLayerCost>& KeptFor(TrainingEstimator::LayerCostMemo& memo, const Ctx& c) {
    const RooflineFigures figures = RooflineFiguresOf(c.dev, c.bf16_dev);
    for (auto& device : memo.devices) {
        if (device.figures == figures) return device.layers;
    }
    memo.devices.push_back({figures, {}});
    return memo.devices.back().layers;
}

// The published layout of the model's recipe (AppliedRecipe::layout) on this cluster: whether
// its degrees divide the accelerators (tensor x pipeline, then the expert grid) and the
// model, and then the search over the rest of the layout (micro-batch, recompute, virtual
// stages), `used` when a layout of it fits. Otherwise the caller searches every layout.
SearchResult SearchFromRecipeLayout(const TrainingRequest& req, const Ctx& c, LayerCosts& layers,
                                    bool& used) {
    used = false;
    if (req.parallelism || !req.recipe || !req.recipe->layout) return {};
    const ParallelismRequest& rl = *req.recipe->layout;
    const long long tp = static_cast<long long>(rl.tensor.value_or(1)) * rl.pipeline.value_or(1);
    if (tp < 1 || c.count % tp != 0 || !ValidateParallelism(rl, c).ok()) {
        return {};
    }
    SearchResult found = SearchLayouts(c, rl, layers, req.deadline);
    used = found.best.valid;
    return found;
}

void AddRecipeLayoutAssumption(const TrainingRequest& req, bool used, Assumptions& as) {
    if (req.parallelism || !req.recipe || !req.recipe->layout) return;
    as.push_back(
        {"recipe_layout_applied", used ? 1.0 : 0.0, "bool",
         used ? AssumptionText("1: the layout's tensor, pipeline, expert and ZeRO degrees are "
                               "the model's published ones (the rest searched); pass "
                               "parallelism to choose your own")
              : AssumptionText("0: the model's published layout does not divide or fit this "
                               "cluster, so every layout was searched"),
         "training recipe of " + req.recipe->model_id + ": " + req.recipe->source});
}

// The estimate after the request's checks and the model derivation: build the run's
// context, check the fixed parallelism, search the layouts, then summarise the best one with
// its assumptions.
Result<TrainingEstimate> EstimateDerived(const TrainingRequest& req, const ClusterSpec& cluster,
                                         const ResolvedModel& model,
                                         TrainingEstimator::LayerCostMemo* memo) {
    auto ctx = MakeContext(req, cluster, model);
    if (!ctx.ok()) return ctx.error();
    const Ctx& c = ctx.value();
    const ParallelismRequest pr = req.parallelism.value_or(ParallelismRequest{});
    if (auto s = ValidateParallelism(pr, c); !s.ok()) return s.error();
    LayerCosts layers(c, memo != nullptr ? &KeptFor(*memo, c) : nullptr);
    bool recipe_layout = false;
    SearchResult found = SearchFromRecipeLayout(req, c, layers, recipe_layout);
    if (!recipe_layout) found = SearchLayouts(c, pr, layers, req.deadline);
    if (auto time_left = req.deadline.Check(); !time_left.ok()) return time_left.error();
    if (!found.best.valid) return NoLayoutError(c, pr, found, cluster);
    TrainingEstimate out = Summarize(c, found);
    WarnOnBatchChange(req, out);
    WarnOnCountedAttention(c, out);
    if (auto caveat = TrainingPrecisionCaveat(req.precision)) {
        out.model.warnings.push_back({"/precision", std::move(*caveat)});
    }
    if (auto w = ContextWarning(c.m, c.m.seq_len, "/model/seq_len", "seq_len")) {
        out.model.warnings.push_back(std::move(*w));
    }
    if (req.with_assumptions) {
        out.assumptions = TrainingAssumptions(req, c, found.best);
        AddRecipeLayoutAssumption(req, recipe_layout, out.assumptions);
    }
    return out;
}

}  // namespace

// The estimate in its steps: validate the request, derive the model, then estimate.
Result<TrainingEstimate> EstimateTraining(const TrainingRequest& req, const ClusterSpec& cluster) {
    if (auto s = ValidateCluster(cluster); !s.ok()) return s.error();
    if (auto s = ValidateRequest(req); !s.ok()) return s.error();
    auto model = DeriveModel(req.model);
    if (!model.ok()) return model.error();
    return EstimateDerived(req, cluster, model.value(), nullptr);
}

Result<TrainingEstimate> EstimateTraining(const TrainingRequest& req, const ClusterSpec& cluster,
                                          const ResolvedModel& model) {
    if (auto s = ValidateCluster(cluster); !s.ok()) return s.error();
    if (auto s = ValidateRequest(req); !s.ok()) return s.error();
    return EstimateDerived(req, cluster, model, nullptr);
}

TrainingEstimator::TrainingEstimator(const TrainingRequest& request, const ResolvedModel& model)
    : request_(request), model_(model), memo_(std::make_unique<LayerCostMemo>()) {}

TrainingEstimator::~TrainingEstimator() = default;

// The same steps as EstimateTraining(request, cluster, model), with the kept layer costs.
Result<TrainingEstimate> TrainingEstimator::Estimate(const ClusterSpec& cluster) {
    if (auto s = ValidateCluster(cluster); !s.ok()) return s.error();
    if (auto s = ValidateRequest(request_); !s.ok()) return s.error();
    return EstimateDerived(request_, cluster, model_, memo_.get());
}

std::size_t TrainingEstimator::LayerCostsKept() const {
    std::size_t n = 0;
    for (const auto& device : memo_->devices) n += device.layers.size();
    return n;
}

}  // namespace gpucost::pricing::estimate
