#include "pricing/estimate/training.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "pricing/estimate/collectives.hpp"

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
// Adam step: reads fp32 master, m, v and the gradient, writes the three and the 16-bit weight.
constexpr double kOptimizerBytesPerParam = 28.0;
// Adam state: fp32 master copy + two fp32 moments (mixed precision); 8 when training in fp32.
constexpr double kAdamBytesPerParamMixed = 12.0;
constexpr double kAdamBytesPerParamFp32 = 8.0;
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
constexpr double kGb = 1e9;

struct Ctx {
    ResolvedModel m;
    DeviceModel dev;
    ClusterLinks links;
    int count = 1;
    double capacity_gb = 0;
    double gemm_bpe = 2;        // operand bytes of GEMMs at the compute precision
    double act_bpe = 2;         // stored activations, communication
    double weight_bpe = 2;      // weights and gradients
    double adam_bytes = 12;
    double goodput = kDefaultGoodput;
    double overlap = kDefaultCommOverlapFraction;
    double tp_overlap = kDefaultTpOverlapFraction;
    double overhead_gb = kDefaultMemoryOverheadGb;
    bool flash = true;
    double global_batch_seqs = 0;
    double tokens = 0;
};

// Per layer, per micro-batch, forward pass on one tensor-parallel rank.
struct LayerCost {
    double gemm_compute_s = 0;  // compute-bound GEMM time
    double gemm_memory_s = 0;   // memory-bound GEMM time
    double attention_s = 0;
    double elementwise_s = 0;
    double gemm_flops = 0;
    double attention_flops = 0;  // non-causal count (MFU convention)
    double tp_comm_s = 0;        // two collectives of one forward pass
    double expert_comm_s = 0;    // two all-to-alls of one forward pass
    // Logits, loss and embedding of one micro-batch (last/first stage), forward + backward.
    double head_compute_s = 0;
    double head_memory_s = 0;
    double head_flops = 0;  // forward + backward
};

void AddGemm(const Ctx& c, LayerCost& lc, double m, double n, double k) {
    OpTime t = GemmTime(c.dev, m, n, k, c.gemm_bpe);
    (t.bound == Bound::kCompute ? lc.gemm_compute_s : lc.gemm_memory_s) += t.seconds;
    lc.gemm_flops += t.flops;
}

LayerCost ComputeLayer(const Ctx& c, int tp, int b, bool sp, int ep) {
    const ResolvedModel& m = c.m;
    LayerCost lc;
    const double T = static_cast<double>(b) * m.seq_len;
    const double h = m.hidden_size;
    const double t = tp;
    const double kv_width = static_cast<double>(m.kv_heads) * m.head_dim;
    AddGemm(c, lc, T, (h + 2 * kv_width) / t, h);  // QKV
    AddGemm(c, lc, T, h, h / t);                    // output projection
    // MLP: the active experts' up (+gate) and down projections.
    const double mult_up = m.gated_mlp ? 2.0 : 1.0;
    const double k_exp = m.experts_per_token;
    const double tokens_mlp = T * k_exp;
    AddGemm(c, lc, tokens_mlp, mult_up * m.ffn_hidden_size / t, h);
    AddGemm(c, lc, tokens_mlp, h, m.ffn_hidden_size / t);
    // Attention core: QK^T and AV, 4 * s * h FLOPs per token (not halved), FlashAttention
    // reads Q, K, V and writes O once.
    double attn_flops = 4.0 * T * m.seq_len * h / t;
    double attn_bytes = T * (2 * h + 2 * kv_width) / t * c.act_bpe;
    if (c.flash) {
        OpTime a = AttentionTime(c.dev, attn_flops, kCausalWorkFraction, attn_bytes);
        lc.attention_s = a.seconds;
    } else {
        // Two batched GEMMs over all scores, then memory-bound softmax, mask and dropout.
        const double heads = static_cast<double>(m.attention_heads) / t;
        const double scores = static_cast<double>(b) * heads * m.seq_len * m.seq_len;
        OpTime qk = CustomTime(c.dev, attn_flops / 2.0, attn_bytes / 2.0 + scores * c.act_bpe);
        OpTime av = CustomTime(c.dev, attn_flops / 2.0, attn_bytes / 2.0 + scores * c.act_bpe);
        OpTime sm = MemoryTime(c.dev, scores * (kScoreBytesPerElementForward - 2.0 * c.act_bpe));
        lc.attention_s = qk.seconds + av.seconds + sm.seconds;
    }
    lc.attention_flops = attn_flops;
    // Element-wise ops; with sequence parallelism they run on 1/t of the tokens.
    double ew_tokens = sp ? T / t : T;
    double ffn_elems = (m.gated_mlp ? 3.0 : 2.0) * m.ffn_hidden_size * k_exp / t;
    double ew_bytes = (ew_tokens * kElementwiseHiddenElements * h + T * ffn_elems) * c.act_bpe;
    lc.elementwise_s = MemoryTime(c.dev, ew_bytes).seconds + 3.0 * c.dev.kernel_overhead_s;
    // Tensor parallel: 2 all-reduces (or reduce-scatter + all-gather) of T x h per pass.
    if (tp > 1) {
        const Link& link = tp <= c.links.accelerators_per_node ? c.links.scale_up : c.links.scale_out;
        lc.tp_comm_s = 2.0 * RingAllReduceSeconds(T * h * c.act_bpe, tp, link);
    }
    if (m.IsMoe() && ep > 1) {
        const Link& link = ep <= c.links.accelerators_per_node ? c.links.scale_up : c.links.scale_out;
        lc.expert_comm_s = 2.0 * AllToAllSeconds(T * k_exp * h * c.act_bpe / t, ep, link);
    }
    // Output head (logits) + loss + embedding, forward and backward.
    OpTime logits = GemmTime(c.dev, T, m.vocab_size / t, h, c.gemm_bpe);
    double head_mem = MemoryTime(c.dev, T * m.vocab_size / t * kCrossEntropyBytesPerLogit).seconds +
                      MemoryTime(c.dev, 2.0 * T * h * c.act_bpe).seconds;
    double logit_total = 3.0 * logits.seconds;
    (logits.bound == Bound::kCompute ? lc.head_compute_s : lc.head_memory_s) += logit_total;
    lc.head_memory_s += head_mem;
    lc.head_flops = 3.0 * logits.flops;
    return lc;
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

int ExpertParallel(const ResolvedModel& m, int d) {
    if (!m.IsMoe()) {
        return 1;
    }
    int ep = 1;
    while (ep * 2 <= m.experts && d % (ep * 2) == 0 && m.experts % (ep * 2) == 0) {
        ep *= 2;
    }
    return ep;
}

MemoryBreakdown Memory(const Ctx& c, const ParallelLayout& l, int micro_batches) {
    const ResolvedModel& m = c.m;
    MemoryBreakdown mem;
    const double tp = l.tensor, pp = l.pipeline, d = l.data;
    const int ep = l.expert;
    double expert_params = static_cast<double>(m.layers) * m.mlp_params_per_layer;
    double params_gpu = (m.params - expert_params * (m.IsMoe() ? 1.0 - 1.0 / ep : 0.0)) / (tp * pp);
    mem.weights_gb = params_gpu * c.weight_bpe / (l.zero_stage >= 3 ? d : 1.0) / kGb;
    mem.gradients_gb = params_gpu * c.weight_bpe / (l.zero_stage >= 2 ? d : 1.0) / kGb;
    mem.optimizer_gb = params_gpu * c.adam_bytes / (l.zero_stage >= 1 ? d : 1.0) / kGb;
    double layers_stage = std::ceil(static_cast<double>(m.layers) / pp);
    double in_flight = l.pipeline > 1 ? std::min<double>(pp, micro_batches) : 1.0;
    double per_layer = ActivationBytesPerLayer(m, l.micro_batch_size, l.tensor,
                                               l.sequence_parallel, l.recompute, c.flash) *
                       c.act_bpe / 2.0;
    double act = per_layer * layers_stage * in_flight;
    if (l.recompute == Recompute::kFull) {
        // The layer being recomputed holds its full activations once.
        act += ActivationBytesPerLayer(m, l.micro_batch_size, l.tensor, l.sequence_parallel,
                                       Recompute::kNone, c.flash) * c.act_bpe / 2.0;
    }
    act += static_cast<double>(l.micro_batch_size) * m.seq_len * m.vocab_size / tp * kLogitBytes;
    if (l.zero_stage >= 3) {
        // Two gathered layers in flight (prefetch).
        act += 2.0 * (m.attention_params_per_layer + m.mlp_params_per_layer) / tp * c.weight_bpe;
    }
    mem.activations_gb = act / kGb;
    mem.overhead_gb = c.overhead_gb;
    mem.total_gb = mem.weights_gb + mem.gradients_gb + mem.optimizer_gb + mem.activations_gb +
                   mem.overhead_gb;
    return mem;
}

// `time_unfitting`: also time a layout that does not fit (a fully specified layout is reported
// whether or not it fits).
Eval Evaluate(const Ctx& c, const ParallelLayout& l, const LayerCost& lc, bool time_unfitting) {
    Eval e;
    e.layout = l;
    const ResolvedModel& m = c.m;
    const double d = l.data;
    const double b = l.micro_batch_size;
    const int mb = static_cast<int>(std::ceil(c.global_batch_seqs / (d * b)));
    e.micro_batches = std::max(mb, 1);
    e.tokens_per_step = static_cast<double>(e.micro_batches) * d * b * m.seq_len;
    // Memory first: a layout that does not fit needs no timing (the search only compares the
    // memory it would need).
    e.memory = Memory(c, l, e.micro_batches);
    e.fits = e.memory.total_gb <= c.capacity_gb;
    e.valid = true;
    if (!e.fits && !time_unfitting) {
        return e;
    }
    const double layers_stage = std::ceil(static_cast<double>(m.layers) / l.pipeline);

    // Per micro-batch, one stage: forward + backward (+ recompute).
    double fwd_c = lc.gemm_compute_s + lc.attention_s;
    double fwd_m = lc.gemm_memory_s + lc.elementwise_s;
    double bwd_c = 2.0 * lc.gemm_compute_s + kAttentionBackwardRatio * lc.attention_s;
    double bwd_m = 2.0 * lc.gemm_memory_s + kBackwardElementwiseRatio * lc.elementwise_s;
    double rc_c = 0, rc_m = 0, rc_flops = 0;
    double comm_passes = 2.0;  // forward and backward
    if (l.recompute == Recompute::kFull) {
        rc_c = fwd_c;
        rc_m = fwd_m;
        rc_flops = lc.gemm_flops + lc.attention_flops;
        comm_passes = 3.0;
    } else if (l.recompute == Recompute::kSelective) {
        rc_c = lc.attention_s;
        rc_flops = lc.attention_flops;
    }
    double comm_tp = comm_passes * lc.tp_comm_s * (1.0 - c.tp_overlap);
    double comm_ep = comm_passes * lc.expert_comm_s;
    double stage_c = layers_stage * (fwd_c + bwd_c + rc_c) + lc.head_compute_s;
    double stage_m = layers_stage * (fwd_m + bwd_m + rc_m) + lc.head_memory_s;
    double stage_tp = layers_stage * comm_tp;
    double stage_ep = layers_stage * comm_ep;
    double t_mb = stage_c + stage_m + stage_tp + stage_ep;

    // Pipeline point-to-point: activations forward, gradients backward, per chunk boundary.
    double pp_comm = 0;
    if (l.pipeline > 1) {
        const Link& link = l.tensor * l.pipeline <= c.links.accelerators_per_node ? c.links.scale_up
                                                                                  : c.links.scale_out;
        double bytes = b * m.seq_len * m.hidden_size * c.act_bpe /
                       (l.sequence_parallel ? l.tensor : 1);
        pp_comm = 2.0 * l.virtual_stages * PointToPointSeconds(bytes, link) * e.micro_batches;
    }
    const double mbs = e.micro_batches;
    double bubble = (l.pipeline - 1.0) / l.virtual_stages * t_mb;

    // Data parallel gradients / ZeRO traffic for this stage's parameters.
    double expert_params = static_cast<double>(m.layers) * m.mlp_params_per_layer;
    double params_gpu = (m.params - expert_params * (m.IsMoe() ? 1.0 - 1.0 / l.expert : 0.0)) /
                        (static_cast<double>(l.tensor) * l.pipeline);
    double grad_bytes = params_gpu * c.weight_bpe;
    int per_node_dp = std::max(1, c.links.accelerators_per_node / (l.tensor * l.pipeline));
    double dp_comm = 0, window = 0;
    if (l.data > 1) {
        if (l.zero_stage >= 3) {
            double ag = HierarchicalAllGatherSeconds(grad_bytes, l.data, per_node_dp,
                                                     c.links.scale_up, c.links.scale_out);
            dp_comm = mbs * 3.0 * ag;  // gather (fwd), gather (bwd), reduce-scatter, per micro-batch
            window = mbs * t_mb;
        } else if (l.zero_stage == 2 && e.micro_batches > 1) {
            double ag = HierarchicalAllGatherSeconds(grad_bytes, l.data, per_node_dp,
                                                     c.links.scale_up, c.links.scale_out);
            dp_comm = (mbs + 1.0) * ag;  // reduce-scatter per micro-batch, one gather
            window = mbs * layers_stage * (bwd_c + bwd_m);
        } else {
            dp_comm = HierarchicalAllReduceSeconds(grad_bytes, l.data, per_node_dp,
                                                   c.links.scale_up, c.links.scale_out);
            window = layers_stage * (bwd_c + bwd_m);  // backward of the last micro-batch
        }
    }
    auto exposed = [&](double comm, double win) {
        return std::max(comm * (1.0 - c.overlap), comm - win);
    };
    double dp_exposed = dp_comm > 0 ? exposed(dp_comm, window) : 0.0;
    double pp_exposed = pp_comm > 0 ? exposed(pp_comm, mbs * t_mb) : 0.0;

    double opt_params = params_gpu / (l.zero_stage >= 1 ? d : 1.0);
    double opt_s = MemoryTime(c.dev, opt_params * kOptimizerBytesPerParam).seconds;

    StepBreakdown& br = e.breakdown;
    br.compute_s = mbs * stage_c;
    br.memory_bound_s = mbs * stage_m;
    br.tp_comm_s = mbs * stage_tp;
    br.expert_comm_s = mbs * stage_ep;
    br.dp_comm_s = dp_exposed;
    br.pp_comm_s = pp_exposed;
    br.communication_s = br.tp_comm_s + br.expert_comm_s + br.dp_comm_s + br.pp_comm_s;
    br.bubble_s = bubble;
    br.optimizer_s = opt_s + kStepFixedOverheadS;
    e.step_time_s = br.compute_s + br.memory_bound_s + br.communication_s + br.bubble_s +
                    br.optimizer_s;
    double layer_fwd_flops = lc.gemm_flops + lc.attention_flops;
    double hw_per_mb = static_cast<double>(m.layers) * (3.0 * layer_fwd_flops + rc_flops) *
                           l.tensor + lc.head_flops * l.tensor;
    e.hw_flops_per_step = hw_per_mb * mbs * d;
    return e;
}

std::vector<int> PowersOfTwoUpTo(int limit) {
    std::vector<int> v;
    for (int x = 1; x <= limit && x > 0; x *= 2) {
        v.push_back(x);
    }
    return v;
}

std::string Describe(const ParallelLayout& l) {
    return "tensor " + std::to_string(l.tensor) + ", pipeline " + std::to_string(l.pipeline) +
           ", data " + std::to_string(l.data) + ", ZeRO " + std::to_string(l.zero_stage) +
           ", recompute " + RecomputeName(l.recompute) + ", micro-batch " +
           std::to_string(l.micro_batch_size);
}

Status CheckFraction(const std::optional<double>& v, const char* field, double lo) {
    if (v && !(std::isfinite(*v) && *v >= lo && *v <= 1.0)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         std::string(field + 1) + " must be between " + std::to_string(lo) +
                             " and 1",
                         field);
    }
    return Ok{};
}

}  // namespace

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

double ModelFlopsPerToken(const ResolvedModel& m) {
    double non_embedding = m.ActiveNonEmbeddingParams();
    double output_head = static_cast<double>(m.vocab_size) * m.hidden_size;
    return 6.0 * (non_embedding + output_head) +
           12.0 * static_cast<double>(m.layers) * m.hidden_size * m.seq_len;
}

double ActivationBytesPerLayer(const ResolvedModel& m, int micro_batch, int tensor,
                               bool sequence_parallel, Recompute recompute, bool flash_attention) {
    const double s = m.seq_len, b = micro_batch, h = m.hidden_size, a = m.attention_heads;
    const double t = tensor;
    const double sbh = s * b * h;
    if (recompute == Recompute::kFull) {
        return 2.0 * sbh / (sequence_parallel ? t : 1.0);
    }
    double base = sequence_parallel ? 34.0 * sbh / t : sbh * (10.0 + 24.0 / t);
    bool keep_scores = recompute == Recompute::kNone && !flash_attention;
    double scores = keep_scores ? sbh * 5.0 * a * s / (h * t) : 0.0;
    return base + scores;
}

double PipelineBubbleFraction(int pipeline, int micro_batches, int virtual_stages) {
    if (pipeline <= 1 || micro_batches <= 0 || virtual_stages <= 0) {
        return 0;
    }
    return (pipeline - 1.0) / (static_cast<double>(micro_batches) * virtual_stages);
}

Result<TrainingEstimate> EstimateTraining(const TrainingRequest& req, const ClusterSpec& cluster) {
    if (auto s = ValidateCluster(cluster); !s.ok()) {
        return s.error();
    }
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
    auto device = MakeDeviceModel(cluster.accelerator, req.precision, req.efficiency, "/precision",
                                  req.with_assumptions);
    if (!device.ok()) {
        return device.error();
    }
    Ctx c;
    c.m = model.value();
    c.dev = device.value();
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
    c.overhead_gb = req.memory_overhead_gb.value_or(kDefaultMemoryOverheadGb);
    c.tokens = req.tokens_b * 1e9;
    c.flash = req.flash_attention.value_or(true);
    double gbt = req.global_batch_tokens.value_or(kDefaultGlobalBatchTokens);
    c.global_batch_seqs = std::max(1.0, std::round(gbt / c.m.seq_len));

    // ---- candidate layouts ----
    const ParallelismRequest pr = req.parallelism.value_or(ParallelismRequest{});
    const int n = c.count;
    struct IntCheck {
        const std::optional<int>* v;
        const char* field;
        int lo, hi;
    };
    const IntCheck checks[] = {
        {&pr.tensor, "/parallelism/tensor", 1, n},
        {&pr.pipeline, "/parallelism/pipeline", 1, n},
        {&pr.data, "/parallelism/data", 1, n},
        {&pr.zero_stage, "/parallelism/zero_stage", 0, 3},
        {&pr.micro_batch_size, "/parallelism/micro_batch_size", 1, 65536},
        {&pr.virtual_stages, "/parallelism/virtual_stages", 1, 64},
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
    if (pr.tensor && pr.pipeline && pr.data &&
        static_cast<long long>(*pr.tensor) * *pr.pipeline * *pr.data != n) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "tensor x pipeline x data = " +
                             std::to_string(static_cast<long long>(*pr.tensor) * *pr.pipeline *
                                            *pr.data) +
                             " but hardware count is " + std::to_string(n) +
                             "; the product must equal the count",
                         "/parallelism");
    }
    if (pr.tensor && c.m.attention_heads % *pr.tensor != 0) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "tensor parallel degree must divide attention_heads (" +
                             std::to_string(c.m.attention_heads) + ")",
                         "/parallelism/tensor");
    }
    if (pr.pipeline && *pr.pipeline > c.m.layers) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "pipeline degree must not exceed layers (" + std::to_string(c.m.layers) + ")",
                         "/parallelism/pipeline");
    }
    const bool fully_given = pr.tensor && pr.pipeline && pr.data && pr.zero_stage &&
                             pr.recompute && pr.micro_batch_size;

    std::vector<int> tps;
    if (pr.tensor) {
        tps = {*pr.tensor};
    } else {
        for (int t : PowersOfTwoUpTo(std::min(c.links.accelerators_per_node, n))) {
            if (n % t == 0 && c.m.attention_heads % t == 0) tps.push_back(t);
        }
    }
    std::vector<int> mbs_list;
    if (pr.micro_batch_size) {
        mbs_list = {*pr.micro_batch_size};
    } else {
        for (int b : kMicroBatchCandidates) {
            if (b == 1 || static_cast<double>(b) * c.m.seq_len <= kMaxMicroBatchTokens) mbs_list.push_back(b);
        }
    }

    Eval best, second;
    double best_need_gb = std::numeric_limits<double>::infinity();
    ParallelLayout best_need_layout;
    int considered = 0;
    auto consider = [&](const Eval& e) {
        ++considered;
        if (!e.fits) {
            if (e.memory.total_gb < best_need_gb) {
                best_need_gb = e.memory.total_gb;
                best_need_layout = e.layout;
            }
            return;
        }
        if (!best.valid || e.step_time_s < best.step_time_s) {
            second = best;
            best = e;
        } else if (!second.valid || e.step_time_s < second.step_time_s) {
            second = e;
        }
    };

    bool batch_too_small = false;
    for (int t : tps) {
        int rest = n / t;
        if (n % t != 0) continue;
        std::vector<int> pps;
        if (pr.pipeline) {
            if (rest % *pr.pipeline == 0) pps = {*pr.pipeline};
        } else {
            for (int p = 1; p <= std::min({rest, c.m.layers, kMaxPipelineCandidates}); ++p) {
                if (rest % p == 0 && c.m.layers % p == 0) pps.push_back(p);
            }
        }
        for (int b : mbs_list) {
            bool sp = pr.sequence_parallel.value_or(t > 1);
            LayerCost lc;
            bool lc_ready = false;
            for (int p : pps) {
                int d = rest / p;
                if (pr.data && *pr.data != d) continue;
                if (static_cast<double>(d) * b > c.global_batch_seqs) {
                    batch_too_small = true;
                    if (!fully_given) continue;
                }
                int ep = ExpertParallel(c.m, d);
                if (!lc_ready) {
                    lc = ComputeLayer(c, t, b, sp, ep);
                    lc_ready = true;
                }
                // Candidate lists live on the stack: this loop runs hundreds of times per
                // estimate and the planner runs hundreds of estimates per request.
                std::array<int, 2> vs{1, 2};
                std::size_t vs_n = 1;
                if (pr.virtual_stages) {
                    vs[0] = *pr.virtual_stages;
                } else if (p > 1 && (c.m.layers / p) % 2 == 0) {
                    vs_n = 2;
                }
                std::array<Recompute, 2> rcs{Recompute::kNone, Recompute::kFull};
                std::size_t rcs_n = 2;
                if (pr.recompute) {
                    rcs[0] = *pr.recompute;
                    rcs_n = 1;
                }
                std::array<int, 3> zs{1, 2, 3};
                std::size_t zs_n = 3;
                if (pr.zero_stage) {
                    zs[0] = *pr.zero_stage;
                    zs_n = 1;
                } else if (d == 1) {
                    zs[0] = 0;
                    zs_n = 1;
                }
                for (std::size_t vi = 0; vi < vs_n; ++vi) {
                    const int v = vs[vi];
                    for (std::size_t ri = 0; ri < rcs_n; ++ri) {
                        const Recompute rc = rcs[ri];
                        // Lowest ZeRO stage that fits is the fastest for this recompute mode.
                        for (std::size_t zi = 0; zi < zs_n; ++zi) {
                            const int z = zs[zi];
                            ParallelLayout l;
                            l.tensor = t;
                            l.pipeline = p;
                            l.data = d;
                            l.zero_stage = z;
                            l.recompute = rc;
                            l.micro_batch_size = b;
                            l.virtual_stages = v;
                            l.sequence_parallel = sp;
                            l.expert = ep;
                            Eval e = Evaluate(c, l, lc, fully_given);
                            if (fully_given) {
                                best = e;
                                best.valid = true;
                                ++considered;
                                break;
                            }
                            consider(e);
                            if (e.fits) break;
                        }
                    }
                }
            }
        }
    }

    if (!best.valid) {
        if (batch_too_small && !std::isfinite(best_need_gb)) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "the global batch of " + std::to_string(static_cast<long long>(c.global_batch_seqs)) +
                                 " sequences is smaller than the data-parallel degree of every "
                                 "layout on " + std::to_string(n) +
                                 " accelerators; raise global_batch_tokens or use fewer accelerators",
                             "/global_batch_tokens");
        }
        if (!std::isfinite(best_need_gb)) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "no parallel layout matches the fixed parallelism fields on " +
                                 std::to_string(n) + " accelerators",
                             "/parallelism");
        }
        double states_gb = c.m.params * (2.0 * c.weight_bpe + c.adam_bytes) / kGb;
        double usable = c.capacity_gb - c.overhead_gb;
        double min_count = usable > 0 ? std::ceil(states_gb / (0.8 * usable)) : 0;
        std::string hint = usable > 0 ? "; weights, gradients and Adam state alone need about " +
                                            std::to_string(static_cast<long long>(std::ceil(states_gb))) +
                                            " GB, so at least ~" +
                                            std::to_string(static_cast<long long>(min_count)) +
                                            " accelerators of this kind (fully sharded) or more memory per accelerator"
                                      : "";
        return MakeError(ErrorCode::kInvalidArgument,
                         "the model does not fit: the smallest layout (" + Describe(best_need_layout) +
                             ") needs " + std::to_string(best_need_gb) + " GB per accelerator but " +
                             cluster.accelerator.id + " has " + std::to_string(c.capacity_gb) +
                             " GB" + hint,
                         pr.tensor || pr.pipeline || pr.data || pr.zero_stage || pr.recompute
                             ? "/parallelism"
                             : "/hardware/count");
    }

    // ---- assemble ----
    TrainingEstimate out;
    const Eval& e = best;
    const double peak_total = c.dev.peak_flops * n;
    out.parallelism = e.layout;
    out.layout_searched = !fully_given;
    out.layouts_considered = considered;
    out.step_time_s = e.step_time_s;
    out.tokens_per_step = e.tokens_per_step;
    out.global_batch_sequences = static_cast<int>(std::min(
        e.tokens_per_step / c.m.seq_len, static_cast<double>(std::numeric_limits<int>::max())));
    out.micro_batches_per_step = e.micro_batches;
    out.steps = c.tokens / e.tokens_per_step;
    out.tokens_per_second = e.tokens_per_step / e.step_time_s;
    out.model_flops_per_token = ModelFlopsPerToken(c.m);
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
    std::pair<double, const char*> shares[] = {{br.compute_s, "compute"},
                                               {br.memory_bound_s + br.optimizer_s, "memory_bandwidth"},
                                               {br.communication_s, "communication"},
                                               {br.bubble_s, "pipeline_bubble"}};
    out.bottleneck = std::max_element(std::begin(shares), std::end(shares),
                                      [](const auto& x, const auto& y) { return x.first < y.first; })
                         ->second;
    if (second.valid) {
        LayoutSummary rs;
        rs.layout = second.layout;
        rs.step_time_s = second.step_time_s;
        rs.memory_per_accelerator_gb = second.memory.total_gb;
        rs.mfu = out.model_flops_per_token * second.tokens_per_step / second.step_time_s / peak_total;
        out.runner_up = rs;
    }
    out.model = c.m;

    if (!req.with_assumptions) {
        return out;
    }
    Assumptions& as = out.assumptions;
    as = c.dev.assumptions;
    as.insert(as.end(), c.links.assumptions.begin(), c.links.assumptions.end());
    auto add = [&](std::string name, double v, std::string unit, std::string desc,
                   std::string source) {
        as.push_back({std::move(name), v, std::move(unit), std::move(desc), std::move(source)});
    };
    add("goodput", c.goodput, "fraction",
        "productive share of wall-clock time (restarts, checkpoints, evaluation excluded); "
        "expected hours = ideal hours / goodput",
        req.goodput ? "request"
                    : "estimator-references §3: model-card GPU-hours imply 0.8-0.9 of in-run "
                      "throughput (Llama-3.1-405B 0.35 vs 0.38-0.43 MFU)");
    add("comm_overlap_fraction", c.overlap, "fraction",
        "share of data-parallel/ZeRO/pipeline traffic that can hide behind compute "
        "(exposed = max((1 - f) * comm, comm - compute window))",
        req.comm_overlap_fraction ? "request" : "assumed (Megatron/FSDP overlap gradient reduction and prefetch)");
    add("tp_overlap_fraction", c.tp_overlap, "fraction",
        "share of tensor-parallel traffic hidden behind compute",
        req.tp_overlap_fraction ? "request"
                                : "default: no overlap; frameworks that overlap it (Megatron-Core "
                                  "--tp-comm-overlap) are modelled with 0.6, assumed");
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
        req.memory_overhead_gb ? "request" : "estimator-references §3.4 (0.5-2 GB per GPU)");
    add("global_batch_tokens", gbt, "tokens", "tokens per optimizer step requested",
        req.global_batch_tokens ? "request" : "default 4M tokens (LLaMA, GPT-3 175B 3.2M)");
    add("flash_attention", c.flash ? 1.0 : 0.0, "bool",
        "1: fused FlashAttention-style attention; 0: unfused scores (softmax/mask/dropout over "
        "b*a*s^2 elements, 13 bytes per score forward, 26 backward)",
        req.flash_attention ? "request" : "default: FlashAttention (Dao et al. 2022)");
    add("causal_attention_work_fraction", kCausalWorkFraction, "fraction",
        "share of attention FLOPs FlashAttention executes under a causal mask (time only; MFU "
        "counts the full 4*s*h per token, PaLM convention)",
        "Dao 2023");
    add("attention_backward_ratio", kAttentionBackwardRatio, "ratio",
        "FlashAttention backward FLOPs over forward", "Dao 2023, arXiv 2307.08691 §3.1");
    add("adam_bytes_per_param", c.adam_bytes, "bytes",
        "optimizer state: fp32 master + 2 moments (mixed precision)",
        "EleutherAI Transformer Math 101; ZeRO paper (Rajbhandari et al. 2020)");
    add("optimizer_bytes_moved_per_param", kOptimizerBytesPerParam, "bytes",
        "HBM traffic of one Adam step per local parameter", "derived: read 14, write 14");
    add("elementwise_hidden_elements_per_token", kElementwiseHiddenElements, "elements",
        "per layer forward: 2 norms and 2 residual adds, in units of the hidden size",
        "counted from the Megatron layer (Korthikanti et al. 2022 Fig. 2)");
    add("activation_bytes_per_layer_gb",
        ActivationBytesPerLayer(c.m, e.layout.micro_batch_size, e.layout.tensor,
                                e.layout.sequence_parallel, e.layout.recompute, c.flash) / kGb,
        "GB", "Korthikanti et al. 2022 activations per layer and micro-batch for the chosen layout "
        "(FlashAttention: no 5as/h term)", "arXiv 2205.05198 Table 2");
    add("pipeline_bubble_fraction",
        PipelineBubbleFraction(e.layout.pipeline, e.micro_batches, e.layout.virtual_stages),
        "fraction", "(p - 1) / (m * v)", "Narayanan et al. 2021");
    Assumptions derivation = ModelDerivationAssumptions();
    as.insert(as.end(), derivation.begin(), derivation.end());
    return out;
}

}  // namespace gpucost::pricing::estimate
