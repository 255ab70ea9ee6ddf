#include "pricing/estimate/activation_memory.hpp"

#include <algorithm>

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

// Korthikanti et al.'s dense GPT layer (34 sbh, 10 of them outside the tensor-parallel
// regions, plus 5as/h of scores), which MoE layers keep: their token copies per routed
// expert, permutation buffers and MLA up-projections are the MoE model's own terms.
LayerActivationParts KorthikantiLayer(const ResolvedModel& m, const ActivationLayout& l,
                                      double tokens, double outside, double t) {
    const double h = m.hidden_size;
    LayerActivationParts p;
    p.norm_inputs = 10.0 * tokens * h / outside;
    p.mlp_hidden = 24.0 * tokens * h / t;
    if (l.recompute == Recompute::kNone && !l.flash_attention) {
        p.scores = 5.0 * m.attention_heads / t * tokens * m.seq_len;
    }
    return p;
}

// Korthikanti et al.'s dense GPT layer by his components (Sec. 4.1; the same 34 sbh in total
// as KorthikantiLayer): outside the tensor-parallel regions the two norms' inputs (4 sbh),
// the QKV and fc1 inputs (4 sbh) and the two dropout masks (2 sbh); inside Q, K, V (6 sbh),
// the output projection's input (2 sbh) and the MLP's GeLU input and fc2 input (16 sbh). Only
// module recompute reads it, so the lump's answers stay as they were.
LayerActivationParts KorthikantiComponents(const ResolvedModel& m, const ActivationLayout& l,
                                           double tokens, double outside, double t) {
    const double sbh = tokens * m.hidden_size;
    LayerActivationParts p = KorthikantiLayer(m, l, tokens, outside, t);
    p.norm_inputs = 4.0 * sbh / outside;
    p.block_inputs = 4.0 * sbh / outside;
    p.dropout_masks = 2.0 * sbh / outside;
    p.attention_qkv = 6.0 * sbh / t;
    p.attention_output = 2.0 * sbh / t;
    p.mlp_hidden = 16.0 * sbh / t;
    return p;
}

// The share of an MoE model's MLP activations in the routed experts' MLPs of its MoE layers:
// the top-k routed experts against the shared ones a token also passes (same width).
double RoutedShare(const ResolvedModel& m) {
    const double k = m.experts_per_token;
    return k / (k + m.shared_experts);
}

// The share of the MLP activations a set of modules frees (mlp_hidden): dense MLPs for mlp
// (every layer of a dense model, the leading dense layers of an MoE one), the whole MoE
// layer for moe, its shared experts for shared_experts, and for moe_act the routed experts'
// activation output, half of what Korthikanti counts for an MLP (the fc2 input, of GeLU
// input and fc2 input).
double MlpShareFreed(const ResolvedModel& m, const RecomputeModules& modules) {
    if (!m.IsMoe()) return modules.Has(RecomputeModule::kMlp) ? 1.0 : 0.0;
    const double moe_layers = static_cast<double>(m.MoeLayers()) / m.layers;
    double dense = modules.Has(RecomputeModule::kMlp) ? 1.0 - moe_layers : 0.0;
    if (modules.Has(RecomputeModule::kMoe)) return dense + moe_layers;
    const double routed = RoutedShare(m);
    double moe = 0;
    if (modules.Has(RecomputeModule::kMoeAct)) moe += routed * 0.5;
    if (modules.Has(RecomputeModule::kSharedExperts)) moe += 1.0 - routed;
    return dense + moe_layers * moe;
}

// Module recompute other than the attention core's: each module drops what the layer's count
// holds for it (RecomputeModuleFreedBytes).
LayerActivationParts ModuleRecomputeLayer(const ResolvedModel& m, const ActivationLayout& l,
                                          double tokens, double outside, double t) {
    ActivationLayout base = l;
    base.recompute =
        l.modules.Has(RecomputeModule::kCoreAttn) ? Recompute::kSelective : Recompute::kNone;
    base.modules = kSelectiveDefaultModules;
    LayerActivationParts p =
        m.IsMoe() ? KorthikantiComponents(m, base, tokens, outside, t) : LayerActivations(m, base);
    if (l.modules.Has(RecomputeModule::kLayernorm)) p.block_inputs = 0;
    if (l.modules.Has(RecomputeModule::kMlaUpProj) && m.IsMla()) p.attention_qkv = 0;
    p.mlp_hidden *= 1.0 - MlpShareFreed(m, l.modules);
    return p;
}

}  // namespace

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
        return ModuleRecomputeLayer(m, l, tokens, outside, t);
    }
    if (m.IsMoe()) return KorthikantiLayer(m, l, tokens, outside, t);
    const AttentionWidths w = WidthsOf(m);
    // The MLP saves its up-projection output(s) for the activation function and the
    // activation's output for the down projection.
    const double mlp_hidden = (m.gated_mlp ? 3.0 : 2.0) * m.ffn_hidden_size;
    p.norm_inputs = 2.0 * kActivationBytes * tokens * h / outside;
    p.block_inputs = 2.0 * kActivationBytes * tokens * h / outside;
    p.attention_qkv = kActivationBytes * tokens * (w.query + w.key + w.value) / t;
    p.attention_output = kActivationBytes * tokens * w.query / t;
    p.mlp_hidden = kActivationBytes * tokens * mlp_hidden / t;
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
         "scores; MoE layers Korthikanti's 34 sbh; split by tensor (outside its regions only "
         "with sequence parallelism) and context degrees; under block recompute the mean over "
         "the layers (recomputed ones keep their input only)",
         "Korthikanti et al. 2022 (arXiv 2205.05198) Sec. 4.1 and Table 2, components "
         "generalised (docs/estimator.md, \"Context parallelism, selective recompute and "
         "activation memory\")"});
}

}  // namespace gpucost::pricing::estimate
