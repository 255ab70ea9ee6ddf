#include "service/http/codec/model_codec.hpp"

#include <memory>
#include <utility>
#include <vector>

#include "service/http/codec/hf_config.hpp"
#include "service/http/codec/json_codec.hpp"
#include "service/http/codec/json_reader.hpp"
#include "service/http/deps.hpp"
#include "service/http/embedded_models.hpp"

namespace gpucost::http {
namespace {

namespace est = pricing::estimate;
using pricing::ErrorCode;
using pricing::MakeError;
using pricing::Result;

// The explicit structure's keys (ModelSpec's fields), accepted alone or as overrides of a
// library id or a Hugging Face config.
const std::vector<std::string> kStructureKeys = {"params_b",
                                                 "active_params_b",
                                                 "layers",
                                                 "hidden_size",
                                                 "attention_heads",
                                                 "kv_heads",
                                                 "ffn_hidden_size",
                                                 "vocab_size",
                                                 "seq_len",
                                                 "gated_mlp",
                                                 "experts",
                                                 "experts_per_token",
                                                 "head_dim",
                                                 "tied_embeddings",
                                                 "shared_experts",
                                                 "expert_ffn_hidden_size",
                                                 "dense_layers",
                                                 "dense_ffn_hidden_size",
                                                 "q_lora_rank",
                                                 "kv_lora_rank",
                                                 "qk_rope_head_dim",
                                                 "qk_nope_head_dim",
                                                 "v_head_dim",
                                                 "sliding_window",
                                                 "sliding_window_layers",
                                                 "low_precision_scope",
                                                 "checkpoint_precision"};

template <typename T>
void Override(std::optional<T>& field, std::optional<T> value) {
    if (value) field = value;
}

// checkpoint_precision: fp8, int8 or fp4 for a quantised checkpoint; bf16 or fp16 names a 16-bit
// build of a library model whose release is quantised (a BF16 conversion of gpt-oss).
void ApplyCheckpointPrecision(JsonReader& r, est::ModelSpec& s) {
    const auto stored = r.String("checkpoint_precision");
    if (!stored) return;
    const auto width = pricing::ParsePrecision(*stored);
    if (width && pricing::IsBelowSixteenBits(*width)) {
        s.checkpoint_precision = width;
        s.checkpoint_precision_source = "request model checkpoint_precision";
    } else if (width == pricing::Precision::kBf16 || width == pricing::Precision::kFp16) {
        s.checkpoint_precision.reset();
        s.checkpoint_precision_source.clear();
    } else {
        r.Fail(ErrorCode::kInvalidArgument, "checkpoint_precision",
               "checkpoint_precision must be fp8, int8 or fp4, or bf16/fp16 for a 16-bit "
               "checkpoint");
    }
}

// Every structure key present in `r` replaces the field in `s`.
void ApplyStructure(JsonReader& r, est::ModelSpec& s) {
    Override(s.params_b, r.Number("params_b"));
    Override(s.active_params_b, r.Number("active_params_b"));
    Override(s.layers, r.Int("layers"));
    Override(s.hidden_size, r.Int("hidden_size"));
    Override(s.attention_heads, r.Int("attention_heads"));
    Override(s.kv_heads, r.Int("kv_heads"));
    Override(s.ffn_hidden_size, r.Int("ffn_hidden_size"));
    Override(s.vocab_size, r.Int("vocab_size"));
    Override(s.seq_len, r.Int("seq_len"));
    Override(s.gated_mlp, r.Bool("gated_mlp"));
    Override(s.experts, r.Int("experts"));
    Override(s.experts_per_token, r.Int("experts_per_token"));
    Override(s.head_dim, r.Int("head_dim"));
    Override(s.tied_embeddings, r.Bool("tied_embeddings"));
    Override(s.shared_experts, r.Int("shared_experts"));
    Override(s.expert_ffn_hidden_size, r.Int("expert_ffn_hidden_size"));
    Override(s.dense_layers, r.Int("dense_layers"));
    Override(s.dense_ffn_hidden_size, r.Int("dense_ffn_hidden_size"));
    Override(s.q_lora_rank, r.Int("q_lora_rank"));
    Override(s.kv_lora_rank, r.Int("kv_lora_rank"));
    Override(s.qk_rope_head_dim, r.Int("qk_rope_head_dim"));
    Override(s.qk_nope_head_dim, r.Int("qk_nope_head_dim"));
    Override(s.v_head_dim, r.Int("v_head_dim"));
    Override(s.sliding_window, r.Int("sliding_window"));
    Override(s.sliding_window_layers, r.Int("sliding_window_layers"));
    if (auto scope = r.String("low_precision_scope")) {
        s.low_precision_scope = est::ParseLowPrecisionScope(*scope);
        if (!s.low_precision_scope) {
            r.Fail(ErrorCode::kInvalidArgument, "low_precision_scope",
                   "low_precision_scope must be linear_layers or routed_experts");
        }
    }
    ApplyCheckpointPrecision(r, s);
}

Result<est::ModelSpec> FromLibrary(const std::string& id, const pricing::ModelLibrary& models,
                                   const std::string& pointer) {
    const pricing::LibraryModel* found = models.Find(id);
    if (found == nullptr) {
        std::string closest;
        for (const std::string& c : models.Closest(id, 5)) {
            closest += (closest.empty() ? "" : ", ") + c;
        }
        return MakeError(ErrorCode::kInvalidArgument,
                         "unknown model '" + id.substr(0, 64) +
                             "'; closest library ids: " + closest + " (GET /v1/models lists all)",
                         pointer);
    }
    return found->spec;
}

Result<est::ModelSpec> FromObject(const json& j, const pricing::ModelLibrary& models,
                                  const std::string& pointer) {
    static const std::vector<std::string> kKnown = [] {
        std::vector<std::string> known = kStructureKeys;
        known.push_back("id");
        known.push_back("hf_config");
        return known;
    }();
    JsonReader r(j, pointer);
    r.OnlyKnown(kKnown);
    auto id = r.String("id");
    const json* hf = r.Object("hf_config");
    if (!r.ok()) return r.error();
    est::ModelSpec spec;
    if (id && hf != nullptr) {
        return MakeError(ErrorCode::kInvalidArgument, "give a library id or an hf_config, not both",
                         pointer + "/hf_config");
    }
    if (id) {
        auto base = FromLibrary(*id, models, pointer + "/id");
        if (!base.ok()) return base.error();
        spec = base.value();
    } else if (hf != nullptr) {
        auto base = ModelSpecFromHfConfig(*hf, pointer + "/hf_config");
        if (!base.ok()) return base.error();
        spec = base.value();
    }
    ApplyStructure(r, spec);
    if (!r.ok()) return r.error();
    return spec;
}

}  // namespace

const pricing::ModelLibrary& CompiledInModels() {
    static const pricing::ModelLibrary library = [] {
        auto loaded = pricing::LoadModelLibrary(app::embedded::kModelsCsv,
                                                "schema/seed/models.csv (embedded)");
        // Invalid embedded data is ruled out for every build by a unit test; an empty
        // library then only makes every id unknown.
        return loaded.ok() ? loaded.value() : pricing::ModelLibrary();
    }();
    return library;
}

const pricing::ModelLibrary& ModelsOf(const Deps& deps) {
    return deps.models != nullptr ? *deps.models : CompiledInModels();
}

const pricing::TrainingRecipes& TrainingRecipesInUse() {
    static const pricing::TrainingRecipes recipes = [] {
        auto loaded = pricing::LoadTrainingRecipes(app::embedded::kTrainingRecipesCsv,
                                                   "schema/seed/training_recipes.csv (embedded)");
        // As for the models: a unit test rules out invalid embedded data for every build.
        return loaded.ok() ? loaded.value() : pricing::TrainingRecipes();
    }();
    return recipes;
}

std::optional<std::string> PlainLibraryId(const json& model) {
    if (model.is_string()) return model.get<std::string>();
    if (model.is_object() && model.size() == 1) {
        auto id = model.find("id");
        if (id != model.end() && id->is_string()) return id->get<std::string>();
    }
    return std::nullopt;
}

Result<est::ModelSpec> DecodeModel(const json& model, const pricing::ModelLibrary& models,
                                   const std::string& pointer) {
    if (model.is_string()) {
        return FromLibrary(model.get<std::string>(), models, pointer);
    }
    if (!model.is_object()) {
        return MakeError(ErrorCode::kMalformed,
                         pointer + ": must be a library id (string) or an object", pointer);
    }
    return FromObject(model, models, pointer);
}

void WriteModel(JsonWriter& w, const est::ResolvedModel& m) {
    w.BeginObject();
    w.Member("active_params_b", m.active_params / 1e9);
    w.Member("attention_heads", m.attention_heads);
    w.Member("attention_params_per_layer", m.attention_params_per_layer);
    if (m.checkpoint_precision) {
        w.Member("checkpoint_precision", pricing::PrecisionName(*m.checkpoint_precision));
    }
    w.Member("dense_ffn_hidden_size", m.dense_ffn_hidden_size);
    w.Member("dense_layers", m.dense_layers);
    w.Key("derived");
    w.BeginArray();
    for (const auto& d : m.derived) {
        w.BeginObject();
        w.Member("field", d.field);
        w.Member("rule", d.detail);
        w.EndObject();
    }
    w.EndArray();
    w.Member("embedding_params", m.embedding_params);
    w.Member("expert_ffn_hidden_size", m.expert_ffn_hidden_size);
    w.Member("experts", m.experts);
    w.Member("experts_per_token", m.experts_per_token);
    w.Member("ffn_hidden_size", m.ffn_hidden_size);
    w.Member("gated_mlp", m.gated_mlp);
    w.Member("head_dim", m.head_dim);
    w.Member("hidden_size", m.hidden_size);
    w.Member("kv_heads", m.kv_heads);
    w.Member("kv_lora_rank", m.kv_lora_rank);
    w.Member("layers", m.layers);
    w.Member("low_precision_scope", est::LowPrecisionScopeName(m.low_precision_scope));
    w.Member("mlp_active_params_per_layer", m.mlp_active_params_per_layer);
    w.Member("mlp_params_per_layer", m.mlp_params_per_layer);
    w.Member("params_b", m.params / 1e9);
    w.Member("q_lora_rank", m.q_lora_rank);
    w.Member("qk_nope_head_dim", m.qk_nope_head_dim);
    w.Member("qk_rope_head_dim", m.qk_rope_head_dim);
    w.Member("seq_len", m.seq_len);
    w.Member("shared_experts", m.shared_experts);
    w.Member("sliding_window", m.sliding_window);
    w.Member("sliding_window_layers", m.sliding_window_layers);
    w.Member("tied_embeddings", m.tied_embeddings);
    w.Member("v_head_dim", m.v_head_dim);
    w.Member("vocab_size", m.vocab_size);
    w.EndObject();
}

json ModelJson(const est::ResolvedModel& m) {
    // The library route is the only DOM user; reading the text back keeps one definition of
    // the echo (numbers read back to the same doubles, so a dump gives the same bytes).
    std::string text;
    JsonWriter w(text);
    WriteModel(w, m);
    return json::parse(text);
}

void WriteWarning(JsonWriter& w, std::string_view field, std::string_view detail) {
    w.BeginObject();
    w.Member("detail", detail);
    w.Member("field", field);
    w.EndObject();
}

void WriteWarnings(JsonWriter& w, const std::vector<pricing::FieldError>& warnings) {
    w.BeginArray();
    for (const auto& warning : warnings) WriteWarning(w, warning.field, warning.detail);
    w.EndArray();
}

void WriteModelWarnings(JsonWriter& w, const est::ResolvedModel& m) {
    WriteWarnings(w, m.warnings);
}

json LibraryModelJson(const pricing::LibraryModel& m, bool resolved) {
    const est::ModelSpec& s = m.spec;
    auto opt = [](const auto& v) { return v ? json(*v) : json(nullptr); };
    json structure = {
        {"layers", opt(s.layers)},
        {"hidden_size", opt(s.hidden_size)},
        {"attention_heads", opt(s.attention_heads)},
        {"kv_heads", opt(s.kv_heads)},
        {"head_dim", opt(s.head_dim)},
        {"ffn_hidden_size", opt(s.ffn_hidden_size)},
        {"expert_ffn_hidden_size", opt(s.expert_ffn_hidden_size)},
        {"dense_ffn_hidden_size", opt(s.dense_ffn_hidden_size)},
        {"vocab_size", opt(s.vocab_size)},
        {"seq_len", opt(s.seq_len)},
        {"gated_mlp", opt(s.gated_mlp)},
        {"tied_embeddings", opt(s.tied_embeddings)},
        {"experts", opt(s.experts)},
        {"experts_per_token", opt(s.experts_per_token)},
        {"shared_experts", opt(s.shared_experts)},
        {"dense_layers", opt(s.dense_layers)},
        {"q_lora_rank", opt(s.q_lora_rank)},
        {"kv_lora_rank", opt(s.kv_lora_rank)},
        {"qk_rope_head_dim", opt(s.qk_rope_head_dim)},
        {"qk_nope_head_dim", opt(s.qk_nope_head_dim)},
        {"v_head_dim", opt(s.v_head_dim)},
        {"sliding_window", opt(s.sliding_window)},
        {"sliding_window_layers", opt(s.sliding_window_layers)},
        {"low_precision_scope", s.low_precision_scope
                                    ? json(est::LowPrecisionScopeName(*s.low_precision_scope))
                                    : json(nullptr)},
        {"checkpoint_precision", s.checkpoint_precision
                                     ? json(pricing::PrecisionName(*s.checkpoint_precision))
                                     : json(nullptr)}};
    json out = {
        {"id", m.id},
        {"name", m.name},
        {"family", m.family},
        {"published_params_b", Num(m.published_params_b)},
        {"published_active_params_b",
         m.published_active_params_b > 0 ? Num(m.published_active_params_b) : json(nullptr)},
        {"max_context", m.max_context},
        {"source", m.source},
        {"structure", std::move(structure)}};
    if (resolved) {
        auto r = est::DeriveModel(m.spec);
        out["resolved"] = r.ok() ? ModelJson(r.value()) : json(nullptr);
    }
    return out;
}

}  // namespace gpucost::http
