#include "pricing/estimate/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
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
// Widths solved for a shape derived from params_b alone are rounded to this multiple, so
// that tensor parallel 8 divides them (Llama 3 widths are multiples of 1024).
constexpr int kDerivedFfnMultiple = 128;
// Hidden sizes derived from params_b alone: multiples of head dim * 8 heads.
constexpr int kDerivedHiddenMultiple = kDefaultHeadDim * kDerivedHeadMultiple;
// MLA head widths when only the ranks are given: DeepSeek-V2/V3 (arXiv 2412.19437, §2.1.1 and
// the published config.json: qk_rope_head_dim 64, qk_nope_head_dim 128, v_head_dim 128).
constexpr int kDefaultMlaRopeHeadDim = 64;
constexpr int kDefaultMlaNopeHeadDim = 128;
constexpr int kDefaultMlaValueHeadDim = 128;
// A vocabulary solved from the residual of params_b must be at least this many tokens to be
// plausible (byte-level tokenizers start at 256 + merges), and at most this many (the largest
// published vocabularies, Gemma 3 and gpt-oss, have 262k and 201k tokens).
constexpr int kMinSolvedVocabSize = 1000;
constexpr int kMaxSolvedVocabSize = 1 << 19;
// A given count that the structure's count differs from by more than this is noted under
// `derived` (the count is what FLOPs and memory use).
constexpr double kCountNoteThreshold = 0.005;
// The residual after the closest variant must exceed this before the vocabulary is solved.
constexpr double kVocabSolveThreshold = 0.02;

std::string Ptr(std::string_view prefix, const char* field) {
    return std::string(prefix) + "/" + field;
}

Error Invalid(std::string_view prefix, const char* field, const std::string& detail) {
    return MakeError(ErrorCode::kInvalidArgument, detail, Ptr(prefix, field));
}

std::string Billions(double params) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", params / kBillion);
    return std::string(buf) + " B";
}

std::string Percent(double fraction) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %%", fraction * 100);
    return buf;
}

int RoundToMultiple(double x, int multiple) {
    double r = std::round(x / multiple) * multiple;
    return static_cast<int>(std::clamp(r, static_cast<double>(multiple), 1e9));
}

double RelativeDifference(double a, double b) {
    return std::abs(a - b) / std::max(b, 1.0);
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

// Work state of one derivation: the request, what has been resolved so far, and how.
struct Derivation {
    const ModelSpec& spec;
    std::string_view prefix;
    ResolvedModel m;
    double total_given = 0;          // params_b in parameters (0 when not given)
    double active_given = 0;         // active_params_b in parameters (0 when not given)
    bool shape_from_params = false;  // layers and hidden both derived from params_b alone
    bool depth_derived = false;      // layers or hidden derived
    bool widths_solved = false;      // an MLP width solved from a parameter count
    bool kv_heads_free = false;      // kv_heads defaulted (a reconciliation variant)

    void Note(const char* field, std::string rule) {
        m.derived.push_back({Ptr(prefix, field), std::move(rule)});
    }
    // The count the FLOPs follow when solving a shape: active for MoE when given.
    double FlopsParams() const { return active_given > 0 ? active_given : total_given; }
    double MlpMultiplier() const { return m.gated_mlp ? 3.0 : 2.0; }
};

// ---- counting ----

double AttentionParamsPerLayer(const ResolvedModel& m) {
    const double h = m.hidden_size;
    const double a = m.attention_heads;
    if (m.IsMla()) {
        const double qk = static_cast<double>(m.qk_nope_head_dim) + m.qk_rope_head_dim;
        const double q =
            m.q_lora_rank > 0 ? h * m.q_lora_rank + m.q_lora_rank * a * qk : h * a * qk;
        const double kv =
            h * (static_cast<double>(m.kv_lora_rank) + m.qk_rope_head_dim) +
            m.kv_lora_rank * a * (static_cast<double>(m.qk_nope_head_dim) + m.v_head_dim);
        const double out = a * m.v_head_dim * h;
        return q + kv + out;
    }
    const double d = m.head_dim;
    return 2.0 * h * a * d + 2.0 * h * static_cast<double>(m.kv_heads) * d;
}

struct Counts {
    double total = 0;
    double active = 0;
};

// MLP parameters summed over all layers: dense first layers, then MoE layers with their
// routed experts, shared experts and router.
Counts MlpParamsAllLayers(const ResolvedModel& m) {
    const double mult = m.gated_mlp ? 3.0 : 2.0;
    const double h = m.hidden_size;
    const double dense_mlp = mult * h * m.dense_ffn_hidden_size;
    if (!m.IsMoe()) {
        return {m.layers * dense_mlp, m.layers * dense_mlp};
    }
    const double expert = mult * h * m.expert_ffn_hidden_size;
    const double router = h * m.experts;
    const double moe_layers = m.MoeLayers();
    const double dense = m.dense_layers * dense_mlp;
    return {dense + moe_layers * ((m.experts + m.shared_experts) * expert + router),
            dense + moe_layers * ((m.experts_per_token + m.shared_experts) * expert + router)};
}

// Fills the per-layer figures from the resolved dimensions; returns the structure's totals.
Counts CountParameters(ResolvedModel& m) {
    const double L = m.layers;
    m.attention_params_per_layer = AttentionParamsPerLayer(m);
    const Counts mlp = MlpParamsAllLayers(m);
    m.mlp_params_per_layer = mlp.total / L;
    m.mlp_active_params_per_layer = mlp.active / L;
    m.embedding_params =
        (m.tied_embeddings ? 1.0 : 2.0) * m.vocab_size * static_cast<double>(m.hidden_size);
    return {L * m.attention_params_per_layer + mlp.total + m.embedding_params,
            L * m.attention_params_per_layer + mlp.active + m.embedding_params};
}

// ---- stages ----

Status ValidateSpec(const ModelSpec& spec, std::string_view prefix) {
    struct IntField {
        const std::optional<int>* value;
        const char* name;
        int min;
        int max;
    };
    const IntField int_fields[] = {
        {&spec.layers, "layers", 1, kMaxLayers},
        {&spec.hidden_size, "hidden_size", 1, kMaxHiddenSize},
        {&spec.attention_heads, "attention_heads", 1, kMaxHeads},
        {&spec.kv_heads, "kv_heads", 1, kMaxHeads},
        {&spec.ffn_hidden_size, "ffn_hidden_size", 1, kMaxFfnHiddenSize},
        {&spec.vocab_size, "vocab_size", 1, kMaxVocabSize},
        {&spec.seq_len, "seq_len", 1, kMaxSeqLen},
        {&spec.experts, "experts", 1, kMaxExperts},
        {&spec.experts_per_token, "experts_per_token", 1, kMaxExperts},
        {&spec.head_dim, "head_dim", 1, kMaxHiddenSize},
        {&spec.shared_experts, "shared_experts", 0, kMaxExperts},
        {&spec.expert_ffn_hidden_size, "expert_ffn_hidden_size", 1, kMaxFfnHiddenSize},
        {&spec.dense_layers, "dense_layers", 0, kMaxLayers},
        {&spec.dense_ffn_hidden_size, "dense_ffn_hidden_size", 1, kMaxFfnHiddenSize},
        {&spec.q_lora_rank, "q_lora_rank", 0, kMaxHiddenSize},
        {&spec.kv_lora_rank, "kv_lora_rank", 0, kMaxHiddenSize},
        {&spec.qk_rope_head_dim, "qk_rope_head_dim", 1, kMaxHiddenSize},
        {&spec.qk_nope_head_dim, "qk_nope_head_dim", 1, kMaxHiddenSize},
        {&spec.v_head_dim, "v_head_dim", 1, kMaxHiddenSize},
        {&spec.sliding_window, "sliding_window", 1, kMaxSeqLen},
        {&spec.sliding_window_layers, "sliding_window_layers", 0, kMaxLayers},
        {&spec.mtp_modules, "mtp_modules", 0, kMaxLayers},
    };
    for (const IntField& f : int_fields) {
        if (*f.value && (**f.value < f.min || **f.value > f.max)) {
            return Invalid(prefix, f.name,
                           std::string(f.name) + " must be between " + std::to_string(f.min) +
                               " and " + std::to_string(f.max));
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
    if (auto s = check_b(spec.params_b, "params_b"); !s.ok()) return s;
    if (auto s = check_b(spec.active_params_b, "active_params_b"); !s.ok()) return s;
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
    if (spec.dense_layers && spec.layers && *spec.dense_layers >= *spec.layers &&
        spec.experts.value_or(1) > 1) {
        return Invalid(prefix, "dense_layers", "dense_layers must be fewer than layers");
    }
    if (spec.sliding_window_layers && spec.layers && *spec.sliding_window_layers > *spec.layers) {
        return Invalid(prefix, "sliding_window_layers",
                       "sliding_window_layers must not exceed layers");
    }
    return Ok{};
}

void ResolveContext(Derivation& d) {
    const ModelSpec& s = d.spec;
    d.m.seq_len = s.seq_len.value_or(kDefaultSeqLen);
    if (!s.seq_len) d.Note("seq_len", "default 2048");
    d.m.vocab_size = s.vocab_size.value_or(kDefaultVocabSize);
    if (!s.vocab_size) d.Note("vocab_size", "default 32000");
    d.total_given = s.params_b ? *s.params_b * kBillion : 0.0;
    d.active_given = s.active_params_b ? *s.active_params_b * kBillion : 0.0;
    d.m.tied_embeddings = s.tied_embeddings.value_or(false);
    d.m.gated_mlp = s.gated_mlp.value_or(false);
}

// layers and hidden_size: given, solved from params_b with the other, or (params_b alone) a
// modern shape: hidden = 128 * layers (GPT-3's aspect ratio) rounded so that the heads of
// width 128 come in multiples of 8, gated MLP.
void ResolveDepthAndWidth(Derivation& d) {
    const ModelSpec& s = d.spec;
    ResolvedModel& m = d.m;
    const double V = m.vocab_size;
    const double P = d.FlopsParams();
    if (s.layers && s.hidden_size) {
        m.layers = *s.layers;
        m.hidden_size = *s.hidden_size;
        return;
    }
    d.depth_derived = true;
    if (s.hidden_size) {
        m.hidden_size = *s.hidden_size;
        const double h = m.hidden_size;
        m.layers = static_cast<int>(std::clamp(std::round((P - 2 * V * h) / (12.0 * h * h)), 1.0,
                                               static_cast<double>(kMaxLayers)));
        d.Note("layers", "from params_b with 12 * hidden^2 parameters per layer");
        return;
    }
    if (s.layers) {
        m.layers = *s.layers;
        const double h = std::sqrt(std::max(P / m.layers, 1.0) / 12.0);
        const int multiple = h >= kDerivedHiddenMultiple ? kDerivedHiddenMultiple : kDefaultHeadDim;
        m.hidden_size = std::min(RoundToMultiple(h, multiple), kMaxHiddenSize);
        d.Note("hidden_size",
               "from params_b with 12 * hidden^2 parameters per layer, rounded to a multiple of "
               "1024 (8 heads of 128; 128 below 1024)");
        return;
    }
    d.shape_from_params = true;
    const double a = kAspectRatioHiddenPerLayer;
    const double hidden_raw = a * std::cbrt(P / (12.0 * a * a));
    const int multiple =
        hidden_raw >= kDerivedHiddenMultiple ? kDerivedHiddenMultiple : kDefaultHeadDim;
    m.hidden_size = std::min(RoundToMultiple(hidden_raw, multiple), kMaxHiddenSize);
    m.layers = std::clamp(static_cast<int>(std::lround(m.hidden_size / a)), 1, kMaxLayers);
    d.Note(
        "hidden_size",
        "from params_b: hidden = 128 * layers with params ~ 12 * layers * hidden^2, rounded to a "
        "multiple of 1024 (8 heads of 128)");
    d.Note("layers", "hidden_size / 128");
    if (!s.gated_mlp) {
        m.gated_mlp = true;
        d.Note("gated_mlp",
               "true: gated (SwiGLU) MLP of current models (Llama 2/3, Mistral, Qwen)");
    }
}

Status ResolveHeads(Derivation& d) {
    const ModelSpec& s = d.spec;
    ResolvedModel& m = d.m;
    if (s.head_dim) {
        m.head_dim = *s.head_dim;
        if (s.attention_heads) {
            m.attention_heads = *s.attention_heads;
        } else {
            m.attention_heads = std::max(1, m.hidden_size / m.head_dim);
            d.Note("attention_heads", "hidden_size / head_dim");
        }
    } else if (s.attention_heads) {
        if (m.hidden_size % *s.attention_heads != 0 && !s.kv_lora_rank) {
            return Invalid(d.prefix, "attention_heads",
                           "attention_heads must divide hidden_size (" +
                               std::to_string(m.hidden_size) + "), or give head_dim");
        }
        m.attention_heads = *s.attention_heads;
        m.head_dim = std::max(1, m.hidden_size / m.attention_heads);
    } else {
        m.attention_heads = DefaultHeads(m.hidden_size);
        m.head_dim = m.hidden_size / m.attention_heads;
        d.Note("attention_heads", "hidden_size / 128 (head dimension 128)");
    }
    if (s.kv_lora_rank && *s.kv_lora_rank > 0) {
        // MLA caches a compressed latent, but attention runs per head on decompressed keys
        // and values: as many key/value heads as query heads.
        m.kv_lora_rank = *s.kv_lora_rank;
        m.q_lora_rank = s.q_lora_rank.value_or(0);
        m.qk_rope_head_dim = s.qk_rope_head_dim.value_or(kDefaultMlaRopeHeadDim);
        m.qk_nope_head_dim = s.qk_nope_head_dim.value_or(kDefaultMlaNopeHeadDim);
        m.v_head_dim = s.v_head_dim.value_or(kDefaultMlaValueHeadDim);
        if (!s.qk_rope_head_dim) d.Note("qk_rope_head_dim", "default 64 (DeepSeek-V3)");
        if (!s.qk_nope_head_dim) d.Note("qk_nope_head_dim", "default 128 (DeepSeek-V3)");
        if (!s.v_head_dim) d.Note("v_head_dim", "default 128 (DeepSeek-V3)");
        m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
        m.kv_heads = m.attention_heads;
        return Ok{};
    }
    if (s.kv_heads) {
        if (*s.kv_heads > m.attention_heads || m.attention_heads % *s.kv_heads != 0) {
            return Invalid(
                d.prefix, "kv_heads",
                "kv_heads must divide attention_heads (" + std::to_string(m.attention_heads) + ")");
        }
        m.kv_heads = *s.kv_heads;
    } else if (d.shape_from_params && m.attention_heads > kDerivedKvHeads &&
               m.attention_heads % kDerivedKvHeads == 0) {
        m.kv_heads = kDerivedKvHeads;
        d.Note("kv_heads", "8 (grouped-query attention, as Llama 3, Mistral and Qwen2.5)");
    } else {
        m.kv_heads = m.attention_heads;
        d.kv_heads_free = true;
        d.Note("kv_heads", "equal to attention_heads (multi-head attention)");
    }
    return Ok{};
}

void ResolveSlidingWindow(Derivation& d) {
    const ModelSpec& s = d.spec;
    ResolvedModel& m = d.m;
    if (!s.sliding_window) return;
    m.sliding_window = *s.sliding_window;
    m.sliding_window_layers = std::min(s.sliding_window_layers.value_or(m.layers), m.layers);
    if (!s.sliding_window_layers) d.Note("sliding_window_layers", "every layer (as Mistral 7B)");
}

void ResolveMtp(Derivation& d) {
    d.m.mtp_modules = d.spec.mtp_modules.value_or(0);
}

void ResolveMoe(Derivation& d) {
    const ModelSpec& s = d.spec;
    ResolvedModel& m = d.m;
    const bool moe_by_counts =
        s.params_b && s.active_params_b && d.total_given > d.active_given * 1.05;
    m.experts = s.experts.value_or(moe_by_counts ? kDefaultMoeExperts : 1);
    if (!s.experts && moe_by_counts) d.Note("experts", "default 8 (active_params_b < params_b)");
    m.experts_per_token =
        s.experts_per_token.value_or(m.experts > 1 ? std::min(kDefaultMoeTopK, m.experts) : 1);
    if (!s.experts_per_token && m.experts > 1) d.Note("experts_per_token", "default 2");
    if (m.IsMoe()) {
        m.shared_experts = s.shared_experts.value_or(0);
        m.dense_layers = std::min(s.dense_layers.value_or(0), m.layers - 1);
    }
}

// The MLP width the FLOPs count leaves for `x` (one routed expert or the dense MLP), solved
// from the parameter count given the other dimensions.
Result<double> SolveMlpWidth(const Derivation& d, bool dense_width_known) {
    const ResolvedModel& m = d.m;
    const double L = m.layers;
    const double h = m.hidden_size;
    const double mult = d.MlpMultiplier();
    const double embedding = (m.tied_embeddings ? 1.0 : 2.0) * m.vocab_size * h;
    const double non_mlp = L * AttentionParamsPerLayer(m) + embedding;
    double width = 0;
    if (!m.IsMoe()) {
        width = (d.FlopsParams() - non_mlp) / (L * mult * h);
    } else {
        const bool from_active = d.active_given > 0;
        const double count = from_active ? d.active_given : d.total_given;
        const double experts_counted =
            (from_active ? m.experts_per_token : m.experts) + static_cast<double>(m.shared_experts);
        const double moe_layers = m.MoeLayers();
        double mlp = count - non_mlp - moe_layers * h * m.experts;  // less the routers
        double per_width = moe_layers * experts_counted * mult * h;
        if (dense_width_known) {
            mlp -= m.dense_layers * mult * h * m.dense_ffn_hidden_size;
        } else {
            per_width += m.dense_layers * mult * h;
        }
        width = mlp / per_width;
    }
    if (!(width >= 1.0)) {
        return Invalid(d.prefix, "params_b",
                       "params_b is too small for " + std::to_string(m.layers) + " layers of " +
                           std::to_string(m.hidden_size) +
                           ": attention and embeddings alone need " + Billions(non_mlp));
    }
    return std::min(width, static_cast<double>(kMaxFfnHiddenSize));
}

Status ResolveMlpWidths(Derivation& d) {
    const ModelSpec& s = d.spec;
    ResolvedModel& m = d.m;
    const double h = m.hidden_size;
    std::optional<int> width =
        m.IsMoe() && s.expert_ffn_hidden_size ? s.expert_ffn_hidden_size : s.ffn_hidden_size;
    if (!width && !m.IsMoe()) width = s.dense_ffn_hidden_size;
    std::optional<int> dense_width = s.dense_ffn_hidden_size;
    if (!dense_width && s.expert_ffn_hidden_size && s.ffn_hidden_size)
        dense_width = s.ffn_hidden_size;
    if (m.IsMoe() && dense_width) m.dense_ffn_hidden_size = *dense_width;
    if (width) {
        m.ffn_hidden_size = *width;
    } else if (s.params_b && (s.layers || s.hidden_size || d.shape_from_params)) {
        auto solved = SolveMlpWidth(d, m.IsMoe() && dense_width.has_value());
        if (!solved.ok()) return solved.error();
        m.ffn_hidden_size = d.shape_from_params
                                ? RoundToMultiple(solved.value(), kDerivedFfnMultiple)
                                : static_cast<int>(std::round(solved.value()));
        d.widths_solved = true;
        d.Note("ffn_hidden_size",
               d.shape_from_params
                   ? "solved from params_b given the other dimensions, rounded to 128"
                   : "solved from the parameter count given the other dimensions");
    } else if (m.gated_mlp) {
        m.ffn_hidden_size =
            static_cast<int>(std::ceil(8.0 * h / 3.0 / kGatedFfnMultiple) * kGatedFfnMultiple);
        d.Note("ffn_hidden_size", "8/3 * hidden rounded up to 256 (gated MLP)");
    } else {
        m.ffn_hidden_size = 4 * m.hidden_size;
        d.Note("ffn_hidden_size", "4 * hidden");
    }
    m.expert_ffn_hidden_size = m.ffn_hidden_size;
    if (!m.IsMoe() || !dense_width) m.dense_ffn_hidden_size = m.ffn_hidden_size;
    return Ok{};
}

// With total and active counts but no expert count, the experts are solved from the total
// once the expert width is known.
void SolveExpertCount(Derivation& d) {
    const ModelSpec& s = d.spec;
    ResolvedModel& m = d.m;
    if (s.experts || !m.IsMoe() || d.active_given <= 0) return;
    const double h = m.hidden_size;
    const double expert = d.MlpMultiplier() * h * m.expert_ffn_hidden_size;
    Counts base = CountParameters(m);
    const double moe_layers = m.MoeLayers();
    const double per_expert_all_layers = moe_layers * (expert + h);
    const double routed_now = m.experts * per_expert_all_layers;
    const double experts =
        std::round((d.total_given - (base.total - routed_now)) / per_expert_all_layers);
    if (experts >= m.experts_per_token && experts <= kMaxExperts && experts != m.experts) {
        m.experts = static_cast<int>(experts);
        d.m.derived.erase(std::remove_if(d.m.derived.begin(), d.m.derived.end(),
                                         [&](const FieldError& f) {
                                             return f.field == Ptr(d.prefix, "experts");
                                         }),
                          d.m.derived.end());
        d.Note("experts",
               "solved from params_b given the expert width solved from active_params_b");
    }
}

// A reading of the flags the caller left open: gated MLP, tied embeddings, key/value heads.
struct Variant {
    bool gated = false;
    bool tied = false;
    int kv_heads = 0;
    double params = 0;
};

std::vector<Variant> CountVariants(const Derivation& d) {
    const ModelSpec& s = d.spec;
    ResolvedModel probe = d.m;
    std::vector<bool> gated =
        s.gated_mlp ? std::vector<bool>{*s.gated_mlp} : std::vector<bool>{false, true};
    std::vector<bool> tied =
        s.tied_embeddings ? std::vector<bool>{*s.tied_embeddings} : std::vector<bool>{false, true};
    std::vector<int> kv = {d.m.kv_heads};
    if (d.kv_heads_free) {
        if (d.m.attention_heads > kDerivedKvHeads && d.m.attention_heads % kDerivedKvHeads == 0) {
            kv.push_back(kDerivedKvHeads);
        }
        if (d.m.attention_heads > 1) kv.push_back(1);
    }
    std::vector<Variant> out;
    for (int k : kv) {
        for (bool t : tied) {
            for (bool g : gated) {
                probe.gated_mlp = g;
                probe.tied_embeddings = t;
                probe.kv_heads = k;
                out.push_back({g, t, k, CountParameters(probe).total});
            }
        }
    }
    return out;
}

std::string VariantName(const Variant& v) {
    return std::string(v.gated ? "gated" : "ungated") + (v.tied ? ", tied" : ", untied") +
           ", kv_heads " + std::to_string(v.kv_heads);
}

// params_b given with a whole structure: adopt the reading of the open flags whose count
// matches params_b (within 10 %), solving the vocabulary from the residual when it was not
// given; otherwise warn and keep the structure as given. Either way the structure's count is
// used for both FLOPs and memory.
void ReconcileWithStructure(Derivation& d) {
    ResolvedModel& m = d.m;
    const double P = d.total_given;
    std::vector<Variant> variants = CountVariants(d);
    const Variant as_read = variants.front();
    Variant best = as_read;
    for (const Variant& v : variants) {
        if (RelativeDifference(v.params, P) < RelativeDifference(best.params, P) - 1e-9) best = v;
    }
    ResolvedModel adopted = m;
    adopted.gated_mlp = best.gated;
    adopted.tied_embeddings = best.tied;
    adopted.kv_heads = best.kv_heads;
    double adopted_params = best.params;
    bool vocab_solved = false;
    if (!d.spec.vocab_size && RelativeDifference(best.params, P) > kVocabSolveThreshold) {
        const double per_token = (best.tied ? 1.0 : 2.0) * m.hidden_size;
        const double vocab = std::round((P - best.params) / per_token + m.vocab_size);
        if (vocab >= kMinSolvedVocabSize && vocab <= kMaxSolvedVocabSize) {
            adopted.vocab_size = static_cast<int>(vocab);
            adopted_params = CountParameters(adopted).total;
            vocab_solved = true;
        }
    }
    if (RelativeDifference(adopted_params, P) > kParamsMatchTolerance) {
        m.warnings.push_back(
            {Ptr(d.prefix, "params_b"),
             "params_b (" + Billions(P) + ") does not match the structure given, which counts " +
                 Billions(as_read.params) + " (closest reading: " + VariantName(best) + ", " +
                 Billions(best.params) + "); the structure is used for both FLOPs and memory"});
        return;
    }
    auto alternatives = [&](auto differs) {
        std::string text;
        for (const Variant& v : variants) {
            if (differs(v))
                text += (text.empty() ? "" : "; ") + VariantName(v) + " " + Billions(v.params);
        }
        return text;
    };
    const std::string match = "the structure then counts " + Billions(adopted_params) +
                              ", within " + Percent(RelativeDifference(adopted_params, P)) +
                              " of params_b " + Billions(P);
    if (!d.spec.gated_mlp) {
        d.Note("gated_mlp", std::string(best.gated ? "true" : "false") + ": " + match + " (" +
                                alternatives([&](const Variant& v) {
                                    return v.gated != best.gated && v.tied == best.tied &&
                                           v.kv_heads == best.kv_heads;
                                }) +
                                ")");
    }
    if (!d.spec.tied_embeddings && best.tied) {
        d.Note("tied_embeddings", "true: " + match);
    }
    if (d.kv_heads_free && best.kv_heads != m.kv_heads) {
        std::erase_if(m.derived,
                      [&](const FieldError& f) { return f.field == Ptr(d.prefix, "kv_heads"); });
        d.Note("kv_heads", std::to_string(best.kv_heads) +
                               (best.kv_heads == 1 ? " (multi-query attention): "
                                                   : " (grouped-query attention): ") +
                               match);
    }
    if (vocab_solved) {
        std::erase_if(m.derived,
                      [&](const FieldError& f) { return f.field == Ptr(d.prefix, "vocab_size"); });
        d.Note("vocab_size", "solved from params_b: " + match);
    }
    std::vector<FieldError> derived = std::move(m.derived);
    std::vector<FieldError> warnings = std::move(m.warnings);
    m = adopted;
    m.derived = std::move(derived);
    m.warnings = std::move(warnings);
}

// Sets params and active_params from the resolved structure, reconciling them with the
// counts the caller gave.
Status ReconcileCounts(Derivation& d) {
    const ModelSpec& s = d.spec;
    ResolvedModel& m = d.m;
    const bool structure_complete =
        !d.depth_derived && !d.widths_solved && (s.ffn_hidden_size || s.expert_ffn_hidden_size);
    if (s.params_b && structure_complete) {
        ReconcileWithStructure(d);
    }
    SolveExpertCount(d);
    const Counts counts = CountParameters(m);
    m.params = counts.total;
    m.active_params = counts.active;
    if (!s.params_b) {
        d.Note("params_b", "counted from the structure: layers * (attention + MLP) + embeddings");
    } else if (structure_complete && m.warnings.empty() &&
               RelativeDifference(counts.total, d.total_given) > kCountNoteThreshold) {
        d.Note("params_b", "counted from the structure (" + Billions(counts.total) + ", " +
                               Percent(RelativeDifference(counts.total, d.total_given)) +
                               " from the " + Billions(d.total_given) +
                               " given); the count is used for FLOPs and memory");
    } else if (!structure_complete &&
               RelativeDifference(counts.total, d.total_given) > kParamsMatchTolerance) {
        m.warnings.push_back(
            {Ptr(d.prefix, "params_b"), "params_b (" + Billions(d.total_given) +
                                            ") does not match the structure, which counts " +
                                            Billions(counts.total) +
                                            "; the structure is used for both FLOPs and memory"});
    }
    if (s.active_params_b &&
        RelativeDifference(counts.active, d.active_given) > kParamsMatchTolerance) {
        m.warnings.push_back(
            {Ptr(d.prefix, "active_params_b"), "active_params_b (" + Billions(d.active_given) +
                                                   ") does not match the structure, which uses " +
                                                   Billions(counts.active) +
                                                   " per token; the structure is used for FLOPs"});
    }
    if (m.IsMoe() && !s.active_params_b) {
        d.Note("active_params_b",
               "attention + shared and top-k experts + dense layers + embeddings");
    } else if (s.active_params_b &&
               RelativeDifference(counts.active, d.active_given) > kCountNoteThreshold &&
               RelativeDifference(counts.active, d.active_given) <= kParamsMatchTolerance) {
        d.Note("active_params_b", "counted from the structure (" + Billions(counts.active) +
                                      " per token; " + Billions(d.active_given) +
                                      " given); the count is used for FLOPs");
    }
    return Ok{};
}

// The checkpoint's stored width, below 16 bits (a 16-bit checkpoint is every precision's
// default); a quantisation the reader could not size is a warning.
Status ResolveCheckpointPrecision(const ModelSpec& spec, std::string_view prefix,
                                  ResolvedModel& m) {
    if (spec.checkpoint_precision) {
        if (!IsBelowSixteenBits(*spec.checkpoint_precision)) {
            return Invalid(prefix, "checkpoint_precision",
                           "checkpoint_precision must be fp8, int8 or fp4 (a checkpoint stored "
                           "below 16 bits)");
        }
        m.checkpoint_precision = spec.checkpoint_precision;
        m.checkpoint_precision_source = spec.checkpoint_precision_source;
    }
    if (spec.unread_quantisation) {
        m.warnings.push_back(
            {std::string(prefix) + "/hf_config/quantization_config",
             "quantization_config quant_method '" + spec.unread_quantisation->substr(0, 64) +
                 "' gives no weight width here: a serving estimate counts the weights at "
                 "precision (send weight_precision for a weight-only checkpoint)"});
    }
    return Ok{};
}

}  // namespace

double ResolvedModel::RoutedExpertParams() const {
    if (!IsMoe()) return 0.0;
    const double mult = gated_mlp ? 3.0 : 2.0;
    return static_cast<double>(MoeLayers()) * experts * mult * hidden_size *
           static_cast<double>(expert_ffn_hidden_size);
}

double ResolvedModel::NonExpertParams() const {
    return std::max(0.0, params - RoutedExpertParams());
}

double ResolvedModel::WindowLayers() const {
    // Resolution fills an absent sliding_window_layers with every layer; 0 given is none.
    if (sliding_window <= 0) {
        return 0;
    }
    return std::min(sliding_window_layers, layers);
}

double ResolvedModel::AttentionContextTokens() const {
    const double s = seq_len;
    const double w = sliding_window;
    const double window_layers = WindowLayers();
    if (window_layers <= 0 || w >= s || layers <= 0) {
        return s;
    }
    const double windowed = 2.0 * w - w * w / s;
    return (window_layers * windowed + (layers - window_layers) * s) / layers;
}

double ResolvedModel::ActiveNonEmbeddingParams() const {
    return static_cast<double>(layers) * (attention_params_per_layer + mlp_active_params_per_layer);
}

const Assumptions& ModelDerivationAssumptions() {
    static const Assumptions kDerivation = {
        {"default_head_dim", kDefaultHeadDim, "elements",
         "attention_heads = hidden_size / 128 when not given", "GPT-3, LLaMA, Megatron configs"},
        {"default_vocab_size", kDefaultVocabSize, "tokens", "vocab_size when not given",
         "LLaMA-1/2 tokenizer"},
        {"default_seq_len", kDefaultSeqLen, "tokens", "seq_len when not given", "GPT-3, LLaMA-1"},
        {"aspect_ratio_hidden_per_layer", kAspectRatioHiddenPerLayer, "ratio",
         "with only params_b: hidden_size = 128 * layers (rounded to a multiple of 1024), gated "
         "MLP, 8 key/value heads, MLP width solved from params_b",
         "GPT-3 (Brown et al. 2020, Table 2.1): 175B has 96 layers x 12288; Llama 3 (8B: 32 x "
         "4096, 70B: 80 x 8192)"},
        {"derived_head_multiple", kDerivedHeadMultiple, "heads",
         "with only params_b, attention heads come in multiples of 8 so tensor parallel 8 divides "
         "them",
         "Llama 2/3, Mistral, Qwen2.5 configs (32, 64, 128 heads)"},
        {"derived_kv_heads", kDerivedKvHeads, "heads",
         "with only params_b, key/value heads when there are more than 8 attention heads (GQA)",
         "Llama 3 (Dubey et al. 2024, Table 3), Mistral 7B, Qwen2.5"},
        {"params_match_tolerance", kParamsMatchTolerance, "fraction",
         "params_b and a given structure match when within this fraction; the open flags "
         "(gated_mlp, tied_embeddings, kv_heads) are read the way that matches, else a warning",
         "default"},
        {"default_moe_experts", kDefaultMoeExperts, "experts",
         "experts per layer when active_params_b < params_b and experts is not given",
         "Mixtral 8x7B (arXiv 2401.04088)"},
        {"default_moe_top_k", kDefaultMoeTopK, "experts",
         "experts per token when the model is MoE and experts_per_token is not given",
         "Mixtral 8x7B, GShard"},
    };
    return kDerivation;
}

Result<ResolvedModel> DeriveModel(const ModelSpec& spec, std::string_view prefix) {
    if (auto s = ValidateSpec(spec, prefix); !s.ok()) return s.error();
    Derivation d{spec, prefix, {}};
    ResolveContext(d);
    d.m.max_context = spec.max_context.value_or(0);
    d.m.max_context_source = spec.max_context_source;
    d.m.low_precision_scope = spec.low_precision_scope.value_or(LowPrecisionScope::kLinearLayers);
    ResolveDepthAndWidth(d);
    if (auto s = ResolveHeads(d); !s.ok()) return s.error();
    ResolveSlidingWindow(d);
    ResolveMtp(d);
    ResolveMoe(d);
    if (auto s = ResolveMlpWidths(d); !s.ok()) return s.error();
    if (auto s = ReconcileCounts(d); !s.ok()) return s.error();
    if (auto s = ResolveCheckpointPrecision(spec, prefix, d.m); !s.ok()) return s.error();
    if (d.m.low_precision_scope == LowPrecisionScope::kRoutedExperts && !d.m.IsMoe()) {
        return Invalid(prefix, "low_precision_scope",
                       "low_precision_scope routed_experts needs a mixture of experts (experts "
                       "above 1)");
    }
    return std::move(d.m);
}

const char* LowPrecisionScopeName(LowPrecisionScope scope) {
    return scope == LowPrecisionScope::kRoutedExperts ? "routed_experts" : "linear_layers";
}

std::optional<LowPrecisionScope> ParseLowPrecisionScope(std::string_view name) {
    for (LowPrecisionScope s :
         {LowPrecisionScope::kLinearLayers, LowPrecisionScope::kRoutedExperts}) {
        if (name == LowPrecisionScopeName(s)) return s;
    }
    return std::nullopt;
}

std::optional<FieldError> ContextWarning(const ResolvedModel& m, double tokens,
                                         std::string_view field, std::string_view what) {
    if (m.max_context <= 0 || tokens <= m.max_context) {
        return std::nullopt;
    }
    return FieldError{std::string(field),
                      std::string(what) + " (" + std::to_string(std::llround(tokens)) +
                          " tokens) exceeds the model's context length of " +
                          std::to_string(m.max_context) + " tokens (" + m.max_context_source +
                          "); the figures assume a long-context variant (e.g. RoPE scaling) "
                          "that accepts it"};
}

}  // namespace gpucost::pricing::estimate
