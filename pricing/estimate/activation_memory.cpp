#include "pricing/estimate/activation_memory.hpp"

#include <algorithm>

#include "pricing/estimate/moe.hpp"
#include "pricing/estimate/training_internal.hpp"

namespace gpucost::pricing::estimate {
namespace {

// Bytes per element of the stored activations the parts count (16-bit); dropout masks are
// one byte per element and the softmax statistics fp32.
constexpr double kActivationBytes = 2.0;
constexpr double kMaskBytes = 1.0;
constexpr double kSoftmaxStatBytes = 4.0;

// Per-token widths of the attention core's saved inputs: queries, keys, values. Multi-head
// latent attention (DeepSeek-V2/V3) saves its up-projected heads (nope + rope dimensions for
// queries and keys, v_head_dim for values); otherwise heads x head_dim and kv_heads x
// head_dim.
struct AttentionWidths {
    double query = 0;
    double key = 0;
    double value = 0;
};

AttentionWidths WidthsOf(const ResolvedModel& m) {
    const double heads = m.attention_heads;
    if (m.kv_lora_rank > 0 && m.qk_nope_head_dim + m.qk_rope_head_dim > 0) {
        const double qk = heads * (m.qk_nope_head_dim + m.qk_rope_head_dim);
        const double v = heads * (m.v_head_dim > 0 ? m.v_head_dim : m.head_dim);
        return {qk, qk, v};
    }
    const double kv = static_cast<double>(m.kv_heads) * m.head_dim;
    return {heads * m.head_dim, kv, kv};
}

// The expert-tensor degree of a layout (1 where unset).
int ExpertTensor(const ActivationLayout& l) {
    return std::max(1, l.expert_tensor);
}

// Elements (16-bit) per token that one layer's MLP stores, averaged over the model's layers
// (an MoE model's leading dense layers and its MoE layers by their shares), per tensor rank.
// A routed expert stores, for each of a token's k copies, the permuted copy itself (its fc1
// input, at full width: the expert-tensor all-gather gives each expert-tensor rank the tokens
// of its group, counted per expert-tensor degree 1 here), the up-projection output(s) and the
// activation output, and one fp32 router probability; EP does not divide them (each rank
// receives T_r k slots on average). Megatron-Core multiplies the probabilities in the
// activation function, so the fc2 output is not kept (frontier-estimator-references 1b.9).
struct MlpStoredElements {
    double dense_up = 0;       // dense MLPs' up-projection output(s)
    double dense_down = 0;     // dense MLPs' activation output (the down projection's input)
    double routed_inputs = 0;  // the routed copies of each token (the experts' fc1 inputs)
    double routed_up = 0;      // routed experts' up-projection output(s)
    double routed_down = 0;    // routed experts' activation output (fc2 input)
    double router_probs = 0;   // fp32 probability per routed slot, in 16-bit elements
    double shared_up = 0;      // shared experts' up-projection output(s)
    double shared_down = 0;    // shared experts' activation output
    // Saved by the activation functions and the router, at 16 bits.
    double Up() const { return dense_up + routed_up + shared_up + router_probs; }
    // Saved by the down projections as their inputs (a linear layer's input).
    double Down() const { return dense_down + routed_down + shared_down; }
};

MlpStoredElements MlpStoredOf(const ResolvedModel& m) {
    const double up = m.gated_mlp ? 2.0 : 1.0;
    MlpStoredElements e;
    if (!m.IsMoe()) {
        e.dense_up = up * m.ffn_hidden_size;
        e.dense_down = m.ffn_hidden_size;
        return e;
    }
    const double moe = static_cast<double>(m.MoeLayers()) / m.layers;
    const double k = m.experts_per_token, width = m.expert_ffn_hidden_size;
    e.dense_up = (1.0 - moe) * up * m.dense_ffn_hidden_size;
    e.dense_down = (1.0 - moe) * m.dense_ffn_hidden_size;
    e.routed_inputs = moe * k * m.hidden_size;
    e.routed_up = moe * k * up * width;
    e.routed_down = moe * k * width;
    e.router_probs = moe * k * kRouterProbBytesPerSlot / kActivationBytes;
    e.shared_up = moe * m.shared_experts * up * width;
    e.shared_down = moe * m.shared_experts * width;
    return e;
}

// The elements of MlpStoredOf a set of recompute modules frees: mlp the dense MLPs' internals
// (every layer of a dense model, the leading dense layers of an MoE one), moe the whole MoE
// layer's (routed copies, outputs and probabilities, shared experts), moe_act the routed
// experts' activation output, shared_experts the shared experts' internals.
MlpStoredElements MlpFreed(const MlpStoredElements& e, const RecomputeModules& modules) {
    MlpStoredElements freed;
    if (modules.Has(RecomputeModule::kMlp)) {
        freed.dense_up = e.dense_up;
        freed.dense_down = e.dense_down;
    }
    if (modules.Has(RecomputeModule::kMoe)) {
        MlpStoredElements moe = e;
        moe.dense_up = freed.dense_up;
        moe.dense_down = freed.dense_down;
        return moe;
    }
    if (modules.Has(RecomputeModule::kMoeAct)) freed.routed_down = e.routed_down;
    if (modules.Has(RecomputeModule::kSharedExperts)) {
        freed.shared_up = e.shared_up;
        freed.shared_down = e.shared_down;
    }
    return freed;
}

// The MLP's stored bytes of `e` for `tokens` on a rank of tensor degree `t`: the up side at
// 16 bits, the down projections' inputs and the routed copies as linear-layer inputs.
void SetMlpParts(const MlpStoredElements& e, const ActivationLayout& l, double tokens, double t,
                 LayerActivationParts& p) {
    p.mlp_hidden = kActivationBytes * tokens * e.Up() / t;
    p.mlp_down_inputs = l.linear_input_bytes * tokens * e.Down() / t;
    p.expert_inputs = l.linear_input_bytes * tokens * e.routed_inputs * ExpertTensor(l) / t;
}

// Module recompute other than the attention core's: each module drops what the layer's count
// holds for it (RecomputeModuleFreedBytes).
LayerActivationParts ModuleRecomputeLayer(const ResolvedModel& m, const ActivationLayout& l,
                                          double tokens, double t) {
    ActivationLayout base = l;
    base.recompute =
        l.modules.Has(RecomputeModule::kCoreAttn) ? Recompute::kSelective : Recompute::kNone;
    base.modules = kSelectiveDefaultModules;
    LayerActivationParts p = LayerActivations(m, base);
    if (l.modules.Has(RecomputeModule::kLayernorm)) p.block_inputs = 0;
    if (l.modules.Has(RecomputeModule::kMlaUpProj) && m.IsMla()) p.attention_qkv = 0;
    LayerActivationParts freed;
    SetMlpParts(MlpFreed(MlpStoredOf(m), l.modules), l, tokens, t, freed);
    p.mlp_hidden -= freed.mlp_hidden;
    p.mlp_down_inputs -= freed.mlp_down_inputs;
    p.expert_inputs -= freed.expert_inputs;
    return p;
}

}  // namespace

double LinearInputBytes(Precision precision) {
    if (!detail::IsBelow16Bits(precision)) return kActivationBytes;
    const double scales = precision == Precision::kFp8 ? kFp8ActivationScaleBytesPerElement : 0.0;
    return BytesPerElement(precision) + scales;
}

bool TrainedWithDropout(const ResolvedModel& model) {
    return !model.gated_mlp;
}

LayerActivationParts LayerActivations(const ResolvedModel& m, const ActivationLayout& l) {
    const double tokens =
        static_cast<double>(l.micro_batch) * m.seq_len / std::max(1, l.context);  // on this rank
    const double h = m.hidden_size;
    const double t = std::max(1, l.tensor);
    // Outside the tensor-parallel regions only sequence parallelism splits the tokens.
    const double outside = l.sequence_parallel ? t : 1.0;
    LayerActivationParts p;
    if (l.recompute == Recompute::kFull) {
        p.layer_input = kActivationBytes * tokens * h / outside;
        return p;
    }
    if (l.recompute == Recompute::kSelective && l.modules != kSelectiveDefaultModules) {
        return ModuleRecomputeLayer(m, l, tokens, t);
    }
    const AttentionWidths w = WidthsOf(m);
    // The MLP saves its up-projection output(s) for the activation function and the
    // activation's output for the down projection; routed experts also their token copies.
    SetMlpParts(MlpStoredOf(m), l, tokens, t, p);
    p.norm_inputs = 2.0 * kActivationBytes * tokens * h / outside;
    // The norms' outputs are the QKV and first MLP GEMMs' inputs.
    p.block_inputs = 2.0 * l.linear_input_bytes * tokens * h / outside;
    p.attention_qkv = kActivationBytes * tokens * (w.query + w.key + w.value) / t;
    // The attention core keeps its output for its backward; the output projection shares it,
    // or below 16 bits saves its own quantised copy beside it.
    const double output_bytes =
        kActivationBytes + (l.linear_input_bytes < kActivationBytes ? l.linear_input_bytes : 0.0);
    p.attention_output = output_bytes * tokens * w.query / t;
    const bool dropout = TrainedWithDropout(m);
    if (dropout) {
        p.dropout_masks = 2.0 * kMaskBytes * tokens * h / outside;
    }
    const double heads = static_cast<double>(m.attention_heads) / t;
    if (l.flash_attention) {
        // Selective recompute of the attention core drops what the kernel saved beyond its
        // inputs and output: the statistics only.
        if (l.recompute == Recompute::kNone) {
            p.softmax_stats = kSoftmaxStatBytes * heads * tokens;
        }
    } else if (l.recompute == Recompute::kNone) {
        // Each query of this rank against every key of the sequence: the softmax output, and
        // with dropout its mask and output (Korthikanti et al.'s 5as/h term).
        const double per_score = kActivationBytes + (dropout ? kMaskBytes + kActivationBytes : 0);
        p.scores = per_score * heads * tokens * m.seq_len;
    }
    return p;
}

double RecomputeModuleFreedBytes(const ResolvedModel& m, const ActivationLayout& l,
                                 RecomputeModule module) {
    ActivationLayout kept = l;
    kept.recompute = Recompute::kNone;
    ActivationLayout recomputed = l;
    recomputed.recompute = Recompute::kSelective;
    recomputed.modules = {};
    recomputed.modules.Add(module);
    return LayerActivations(m, kept).Total() - LayerActivations(m, recomputed).Total();
}

void AddActivationAssumption(const ResolvedModel& m, const ActivationLayout& l,
                             double recomputed_share, Assumptions& out) {
    double bytes = LayerActivations(m, l).Total();
    if (l.recompute == Recompute::kFull && recomputed_share < 1.0) {
        ActivationLayout kept = l;
        kept.recompute = Recompute::kNone;
        const double share = std::clamp(recomputed_share, 0.0, 1.0);
        bytes = share * bytes + (1.0 - share) * LayerActivations(m, kept).Total();
    }
    out.push_back(
        {"activation_bytes_per_layer_gb", bytes / 1e9, "GB",
         "activations one rank stores per layer and micro-batch for the chosen layout, by "
         "component: norm and block inputs, Q/K/V and the attention output, the MLP's "
         "up-projection output(s) and activation output, dropout masks for models trained with "
         "dropout (not gated-MLP ones), FlashAttention's softmax statistics or the unfused "
         "scores; MoE layers also each token's routed copies (the experts' fc1 inputs, times "
         "the expert-tensor degree) and fp32 router probabilities, with the routed experts' "
         "outputs per copy; split by tensor (outside its regions only "
         "with sequence parallelism) and context degrees; under block recompute the mean over "
         "the layers (recomputed ones keep their input only)",
         "Korthikanti et al. 2022 (arXiv 2205.05198) Sec. 4.1 and Table 2, components "
         "generalised; MoE layers from Megatron-Core's dispatcher dataflow (docs/estimator.md, "
         "\"Context parallelism, selective recompute and activation memory\")"});
}

}  // namespace gpucost::pricing::estimate
