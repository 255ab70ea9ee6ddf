#include "pricing/estimate/training_internal.hpp"

namespace gpucost::pricing::estimate::detail {

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

// ---- Step 2: model, device, links and the constants of this run ----
const RecomputeModules* NamedRecomputeModules(const TrainingRequest& req) {
    if (req.parallelism) {
        return req.parallelism->recompute_modules ? &*req.parallelism->recompute_modules : nullptr;
    }
    if (req.recipe && req.recipe->layout && req.recipe->layout->recompute_modules) {
        return &*req.recipe->layout->recompute_modules;
    }
    return nullptr;
}

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
    c.linear_input_bpe = LinearInputBytes(req.precision);
    c.act_bpe = fp32 ? 4.0 : 2.0;
    c.weight_bpe = fp32 ? 4.0 : 2.0;
    c.param_gather_bpe = req.precision == Precision::kFp8 && !IsAdapterMode(req.mode)
                             ? kFp8ParamGatherBytesPerParam
                             : c.weight_bpe;
    c.adam_bytes = fp32 ? kAdamBytesPerParamFp32 : kAdamBytesPerParamMixed;
    c.goodput = req.goodput.value_or(kDefaultGoodput);
    c.overlap = req.comm_overlap_fraction.value_or(kDefaultCommOverlapFraction);
    c.tp_overlap = req.tp_overlap_fraction.value_or(kDefaultTpOverlapFraction);
    c.expert_overlap = req.expert_overlap_fraction.value_or(kDefaultExpertOverlapFraction);
    c.expert_overlap_needs_pipeline = req.recipe && req.recipe->expert_overlap_fraction &&
                                      req.recipe->expert_overlap_schedule == "dualpipe";
    if ((req.moe.cuda_graphs || req.moe.a2a_overlap) && !c.m.IsMoe()) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "moe applies only to mixture-of-experts models; this model is dense",
                         "/moe");
    }
    c.moe_cuda_graphs = req.moe.cuda_graphs.value_or(MoeCudaGraphs::kNone);
    c.moe_a2a_overlap = req.moe.a2a_overlap.value_or(false);
    c.overhead_gb = req.memory_overhead_gb.value_or(kDefaultMemoryOverheadGb);
    c.tokens = req.tokens_b * 1e9;
    c.flash = req.flash_attention.value_or(true);
    if (const RecomputeModules* named = NamedRecomputeModules(req)) {
        c.recompute_modules = *named;
    }
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

}  // namespace gpucost::pricing::estimate::detail
