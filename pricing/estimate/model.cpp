#include "pricing/estimate/model.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace gpucost::pricing::estimate {
namespace {

constexpr double kBillion = 1e9;
// Default MoE shape when only total and active parameter counts are known (Mixtral 8x7B:
// 8 experts, top-2; Jiang et al. 2024, arXiv 2401.04088).
constexpr int kDefaultMoeExperts = 8;
constexpr int kDefaultMoeTopK = 2;
// Gated (SwiGLU) MLP width rule of LLaMA: 2/3 * 4h, rounded up to a multiple of 256.
constexpr int kGatedFfnMultiple = 256;

std::string Ptr(std::string_view prefix, const char* field) {
    return std::string(prefix) + "/" + field;
}

Error Invalid(std::string_view prefix, const char* field, const std::string& detail) {
    return MakeError(ErrorCode::kInvalidArgument, detail, Ptr(prefix, field));
}

int RoundToMultiple(double x, int multiple) {
    double r = std::round(x / multiple) * multiple;
    return static_cast<int>(std::clamp(r, static_cast<double>(multiple), 1e9));
}

double AttentionParams(int hidden, int kv_heads, int head_dim) {
    double h = hidden;
    return 2.0 * h * h + 2.0 * h * static_cast<double>(kv_heads) * head_dim;
}

int DefaultHeads(int hidden) {
    if (hidden % kDefaultHeadDim == 0) {
        return hidden / kDefaultHeadDim;
    }
    if (hidden % 64 == 0) {
        return hidden / 64;
    }
    return 1;
}

}  // namespace

double ResolvedModel::NonExpertParams() const {
    return std::max(0.0, params - static_cast<double>(layers) * mlp_params_per_layer);
}

double ResolvedModel::ActiveNonEmbeddingParams() const {
    return static_cast<double>(layers) * (attention_params_per_layer + mlp_active_params_per_layer);
}

Assumptions ModelDerivationAssumptions() {
    return {
        {"default_head_dim", kDefaultHeadDim, "elements",
         "attention_heads = hidden_size / 128 when not given", "GPT-3, LLaMA, Megatron configs"},
        {"default_vocab_size", kDefaultVocabSize, "tokens", "vocab_size when not given",
         "LLaMA-1/2 tokenizer"},
        {"default_seq_len", kDefaultSeqLen, "tokens", "seq_len when not given", "GPT-3, LLaMA-1"},
        {"aspect_ratio_hidden_per_layer", kAspectRatioHiddenPerLayer, "ratio",
         "with only params_b: hidden_size = 128 * layers and params = 12 * layers * hidden^2 + "
         "2 * vocab * hidden",
         "GPT-3 (Brown et al. 2020, Table 2.1): 175B has 96 layers x 12288, 13B 40 x 5120"},
        {"default_moe_experts", kDefaultMoeExperts, "experts",
         "experts per layer when active_params_b < params_b and experts is not given",
         "Mixtral 8x7B (arXiv 2401.04088)"},
        {"default_moe_top_k", kDefaultMoeTopK, "experts",
         "experts per token when the model is MoE and experts_per_token is not given",
         "Mixtral 8x7B, GShard"},
    };
}

Result<ResolvedModel> DeriveModel(const ModelSpec& spec, std::string_view prefix) {
    // ---- range checks on what was given ----
    auto check_int = [&](const std::optional<int>& v, const char* field, int max) -> Status {
        if (v && (*v < 1 || *v > max)) {
            return Invalid(prefix, field,
                           std::string(field) + " must be between 1 and " + std::to_string(max));
        }
        return Ok{};
    };
    struct IntField {
        const std::optional<int>* value;
        const char* name;
        int max;
    };
    const IntField int_fields[] = {
        {&spec.layers, "layers", kMaxLayers},
        {&spec.hidden_size, "hidden_size", kMaxHiddenSize},
        {&spec.attention_heads, "attention_heads", kMaxHeads},
        {&spec.kv_heads, "kv_heads", kMaxHeads},
        {&spec.ffn_hidden_size, "ffn_hidden_size", kMaxFfnHiddenSize},
        {&spec.vocab_size, "vocab_size", kMaxVocabSize},
        {&spec.seq_len, "seq_len", kMaxSeqLen},
        {&spec.experts, "experts", kMaxExperts},
        {&spec.experts_per_token, "experts_per_token", kMaxExperts},
    };
    for (const IntField& f : int_fields) {
        if (auto s = check_int(*f.value, f.name, f.max); !s.ok()) {
            return s.error();
        }
    }
    auto check_b = [&](const std::optional<double>& v, const char* field) -> Status {
        if (v && !(std::isfinite(*v) && *v > 0 && *v <= kMaxParamsB)) {
            return Invalid(prefix, field,
                           std::string(field) + " must be a number of billions in (0, " +
                               std::to_string(static_cast<int>(kMaxParamsB)) + "]");
        }
        return Ok{};
    };
    if (auto s = check_b(spec.params_b, "params_b"); !s.ok()) {
        return s.error();
    }
    if (auto s = check_b(spec.active_params_b, "active_params_b"); !s.ok()) {
        return s.error();
    }
    if (spec.params_b && spec.active_params_b && *spec.active_params_b > *spec.params_b * 1.0001) {
        return Invalid(prefix, "active_params_b",
                       "active_params_b must not exceed params_b (total parameters)");
    }
    if (!spec.params_b && !(spec.layers && spec.hidden_size)) {
        return Invalid(prefix, "params_b",
                       "give params_b, or layers and hidden_size, to describe the model");
    }
    if (spec.experts_per_token && spec.experts && *spec.experts_per_token > *spec.experts) {
        return Invalid(prefix, "experts_per_token", "experts_per_token must not exceed experts");
    }

    ResolvedModel m;
    auto note = [&](const char* field, std::string rule) {
        m.derived.push_back({Ptr(prefix, field), std::move(rule)});
    };
    m.seq_len = spec.seq_len.value_or(kDefaultSeqLen);
    if (!spec.seq_len) note("seq_len", "default 2048");
    m.vocab_size = spec.vocab_size.value_or(kDefaultVocabSize);
    if (!spec.vocab_size) note("vocab_size", "default 32000");
    m.gated_mlp = spec.gated_mlp.value_or(false);
    const double V = m.vocab_size;
    const double total_given = spec.params_b ? *spec.params_b * kBillion : 0.0;
    const double active_given = spec.active_params_b ? *spec.active_params_b * kBillion : 0.0;
    const double flops_params = spec.active_params_b ? active_given : total_given;
    const double mult = m.gated_mlp ? 3.0 : 2.0;

    // ---- layers and hidden size ----
    if (spec.layers && spec.hidden_size) {
        m.layers = *spec.layers;
        m.hidden_size = *spec.hidden_size;
    } else if (spec.hidden_size) {
        m.hidden_size = *spec.hidden_size;
        double h = m.hidden_size;
        double per_layer = 12.0 * h * h;
        m.layers = static_cast<int>(std::clamp(std::round((flops_params - 2 * V * h) / per_layer),
                                               1.0, static_cast<double>(kMaxLayers)));
        note("layers", "from params_b with 12 * hidden^2 parameters per layer");
    } else if (spec.layers) {
        m.layers = *spec.layers;
        double h = std::sqrt(std::max(flops_params / m.layers, 1.0) / 12.0);
        m.hidden_size = std::min(RoundToMultiple(h, 64), kMaxHiddenSize);
        note("hidden_size", "from params_b with 12 * hidden^2 parameters per layer, rounded to 64");
    } else {
        double a = kAspectRatioHiddenPerLayer;
        double layers_raw = std::cbrt(flops_params / (12.0 * a * a));
        m.hidden_size = std::min(RoundToMultiple(a * layers_raw, 128), kMaxHiddenSize);
        double h = m.hidden_size;
        m.layers = static_cast<int>(std::clamp(std::round((flops_params - 2 * V * h) / (12 * h * h)),
                                               1.0, static_cast<double>(kMaxLayers)));
        note("hidden_size", "from params_b: hidden = 128 * layers, rounded to 128");
        note("layers", "from params_b: params = 12 * layers * hidden^2 + 2 * vocab * hidden");
    }
    const double h = m.hidden_size;
    const double L = m.layers;

    // ---- heads ----
    if (spec.attention_heads) {
        if (m.hidden_size % *spec.attention_heads != 0) {
            return Invalid(prefix, "attention_heads",
                           "attention_heads must divide hidden_size (" +
                               std::to_string(m.hidden_size) + ")");
        }
        m.attention_heads = *spec.attention_heads;
    } else {
        m.attention_heads = DefaultHeads(m.hidden_size);
        note("attention_heads", "hidden_size / 128 (head dimension 128)");
    }
    m.head_dim = m.hidden_size / m.attention_heads;
    if (spec.kv_heads) {
        if (*spec.kv_heads > m.attention_heads || m.attention_heads % *spec.kv_heads != 0) {
            return Invalid(prefix, "kv_heads",
                           "kv_heads must divide attention_heads (" +
                               std::to_string(m.attention_heads) + ")");
        }
        m.kv_heads = *spec.kv_heads;
    } else {
        m.kv_heads = m.attention_heads;
        note("kv_heads", "equal to attention_heads (multi-head attention)");
    }
    m.attention_params_per_layer = AttentionParams(m.hidden_size, m.kv_heads, m.head_dim);
    m.embedding_params = 2.0 * V * h;

    // ---- MoE shape ----
    bool moe_by_counts = spec.params_b && spec.active_params_b && total_given > active_given * 1.05;
    m.experts = spec.experts.value_or(moe_by_counts ? kDefaultMoeExperts : 1);
    if (!spec.experts && moe_by_counts) note("experts", "default 8 (active_params_b < params_b)");
    m.experts_per_token = spec.experts_per_token.value_or(m.experts > 1 ? std::min(kDefaultMoeTopK, m.experts) : 1);
    if (!spec.experts_per_token && m.experts > 1) note("experts_per_token", "default 2");
    const double k_experts = m.experts_per_token;

    // ---- FFN width (per expert) ----
    if (spec.ffn_hidden_size) {
        m.ffn_hidden_size = *spec.ffn_hidden_size;
    } else if (spec.layers && spec.hidden_size && (spec.params_b || spec.active_params_b)) {
        // Solve from the parameter count the FLOPs use (active for MoE).
        double mlp = (flops_params - m.embedding_params) / L - m.attention_params_per_layer;
        double per_expert = spec.active_params_b ? mlp / k_experts : mlp / m.experts;
        double ffn = per_expert / (mult * h);
        if (ffn < 1.0) {
            return Invalid(prefix, "params_b",
                           "params_b is too small for " + std::to_string(m.layers) + " layers of " +
                               std::to_string(m.hidden_size) +
                               ": attention and embeddings alone need " +
                               std::to_string((L * m.attention_params_per_layer + m.embedding_params) /
                                              kBillion) +
                               " B parameters");
        }
        m.ffn_hidden_size = static_cast<int>(std::min(std::round(ffn), static_cast<double>(kMaxFfnHiddenSize)));
        note("ffn_hidden_size", "solved from the parameter count given the other dimensions");
    } else if (m.gated_mlp) {
        m.ffn_hidden_size = static_cast<int>(
            std::ceil(8.0 * h / 3.0 / kGatedFfnMultiple) * kGatedFfnMultiple);
        note("ffn_hidden_size", "8/3 * hidden rounded up to 256 (gated MLP)");
    } else {
        m.ffn_hidden_size = 4 * m.hidden_size;
        note("ffn_hidden_size", "4 * hidden");
    }
    const double per_expert_mlp = mult * h * m.ffn_hidden_size;
    m.mlp_active_params_per_layer = k_experts * per_expert_mlp;

    // ---- parameter counts ----
    double arch_total = L * (m.attention_params_per_layer + m.experts * per_expert_mlp) +
                        m.embedding_params;
    double arch_active = L * (m.attention_params_per_layer + m.mlp_active_params_per_layer) +
                         m.embedding_params;
    if (spec.params_b) {
        m.params = total_given;
    } else {
        m.params = arch_total;
        note("params_b", "12-style count from the architecture: layers * (attention + MLP) + 2 * vocab * hidden");
    }
    if (spec.active_params_b) {
        m.active_params = active_given;
    } else {
        m.active_params = m.IsMoe() ? std::min(arch_active, m.params) : m.params;
        if (m.IsMoe()) note("active_params_b", "attention + experts_per_token experts + embeddings");
    }
    // Memory uses the total given; spread what is not attention/embedding over the experts.
    double mlp_total = (m.params - m.embedding_params) / L - m.attention_params_per_layer;
    m.mlp_params_per_layer = std::max(mlp_total, m.mlp_active_params_per_layer);
    if (m.params < 0.5 * arch_active) {
        return Invalid(prefix, "params_b",
                       "params_b (" + std::to_string(m.params / kBillion) +
                           " B) is less than half of what the architecture implies (" +
                           std::to_string(arch_active / kBillion) + " B)");
    }
    return m;
}

}  // namespace gpucost::pricing::estimate
