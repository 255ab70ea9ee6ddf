#include "service/http/codec/hf_config.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

namespace gpucost::http {
namespace {

using json = nlohmann::json;
using pricing::ErrorCode;
using pricing::MakeError;
namespace est = pricing::estimate;

// Architectures whose MLP is gated (gate, up and down projections): SwiGLU (Llama, Mistral,
// Qwen, DeepSeek, Phi-3, gpt-oss) or GeGLU (Gemma). From each model's modeling_*.py in
// Hugging Face transformers.
const std::set<std::string, std::less<>> kGatedTypes = {
    "llama",       "mistral",     "mixtral", "qwen2",  "qwen2_moe", "qwen3",       "qwen3_moe",
    "deepseek_v2", "deepseek_v3", "gemma",   "gemma2", "gemma3",    "gemma3_text", "phi3",
    "gpt_oss",     "olmo",        "olmo2",   "cohere", "granite",   "llama4_text", "minimax"};
// Architectures with a plain two-matrix MLP (GELU): GPT-2, GPT-NeoX, Falcon, BLOOM, OPT,
// Phi-1/2, MPT.
const std::set<std::string, std::less<>> kUngatedTypes = {
    "gpt2",  "gpt_neox", "gptj", "falcon", "RefinedWeb", "RefinedWebModel",
    "bloom", "opt",      "phi",  "mpt",    "starcoder2"};
// Architectures whose output projection shares the input embedding unless the config says
// otherwise (transformers' default tie_word_embeddings=True is kept by these classes).
const std::set<std::string, std::less<>> kTiedByDefault = {
    "gemma",      "gemma2",          "gemma3", "gemma3_text", "gpt2", "falcon",
    "RefinedWeb", "RefinedWebModel", "bloom",  "opt",         "mpt"};
// Gemma 3's published text_config leaves these at Gemma3TextConfig's defaults
// (transformers/models/gemma3/configuration_gemma3.py): vocabulary 262208, every 6th layer global.
constexpr int kGemma3DefaultVocabSize = 262208;
constexpr int kGemma3DefaultSlidingWindowPattern = 6;
// Activations only used in gated MLPs by current architectures.
const std::set<std::string, std::less<>> kGatedActivations = {"silu", "swiglu", "swish"};

// Larger than any size, count or length in a published config; read into an int.
constexpr double kMaxConfigInteger = 1e9;

// Typed reads of the config's keys; the first fault is kept (wrong type 400, out of range 422).
class ConfigReader {
public:
    ConfigReader(const json& config, std::string pointer)
        : config_(config), pointer_(std::move(pointer)) {}

    const json* Find(std::initializer_list<std::string_view> keys) const {
        for (std::string_view k : keys) {
            auto it = config_.find(std::string(k));
            if (it != config_.end() && !it->is_null()) return &*it;
        }
        return nullptr;
    }
    std::string KeyOf(std::initializer_list<std::string_view> keys) const {
        for (std::string_view k : keys) {
            if (config_.contains(std::string(k))) return std::string(k);
        }
        return std::string(*keys.begin());
    }

    std::optional<int> Int(std::initializer_list<std::string_view> keys) {
        const json* v = Find(keys);
        if (v == nullptr) return std::nullopt;
        if (!v->is_number() || !std::isfinite(v->get<double>()) ||
            std::floor(v->get<double>()) != v->get<double>()) {
            Fail(keys, "must be a non-negative integer");
            return std::nullopt;
        }
        // A well-formed integer out of range is an invalid value (422), as in the `model`
        // object; only a wrong type is 400.
        if (v->get<double>() < 0 || v->get<double>() > kMaxConfigInteger) {
            Fail(keys, "must be between 0 and 1e9", ErrorCode::kInvalidArgument);
            return std::nullopt;
        }
        return static_cast<int>(v->get<double>());
    }
    std::optional<bool> Bool(std::initializer_list<std::string_view> keys) {
        const json* v = Find(keys);
        if (v == nullptr) return std::nullopt;
        if (!v->is_boolean()) {
            Fail(keys, "must be true or false");
            return std::nullopt;
        }
        return v->get<bool>();
    }
    std::optional<std::string> String(std::initializer_list<std::string_view> keys) {
        const json* v = Find(keys);
        if (v == nullptr) return std::nullopt;
        if (!v->is_string()) {
            Fail(keys, "must be a string");
            return std::nullopt;
        }
        return v->get<std::string>();
    }
    // Array of strings (layer_types) or of integers (mlp_only_layers): its length and, for
    // strings, how many equal `value`.
    std::optional<std::pair<int, int>> ArrayCount(std::string_view key, std::string_view value) {
        const json* v = Find({key});
        if (v == nullptr) return std::nullopt;
        if (!v->is_array()) {
            Fail({key}, "must be an array");
            return std::nullopt;
        }
        int matches = 0;
        for (const json& e : *v) {
            if (e.is_string() && e.get<std::string>() == value) ++matches;
        }
        return std::pair{static_cast<int>(v->size()), matches};
    }

    void Fail(std::initializer_list<std::string_view> keys, const std::string& what,
              ErrorCode code = ErrorCode::kMalformed) {
        if (error_) return;
        const std::string key = KeyOf(keys);
        error_ = MakeError(code, pointer_ + "/" + key + ": " + what, pointer_ + "/" + key);
    }
    const std::optional<pricing::Error>& error() const { return error_; }

private:
    const json& config_;
    std::string pointer_;
    std::optional<pricing::Error> error_;
};

void ReadAttention(ConfigReader& r, est::ModelSpec& s) {
    s.attention_heads = r.Int({"num_attention_heads", "n_head", "num_heads", "n_heads"});
    s.kv_heads = r.Int({"num_key_value_heads", "num_kv_heads", "n_head_kv"});
    if (!s.kv_heads && r.Bool({"multi_query"}).value_or(false) &&
        !r.Bool({"new_decoder_architecture"}).value_or(false)) {
        s.kv_heads = 1;  // Falcon-7B: one key/value head
    }
    s.head_dim = r.Int({"head_dim"});
    s.kv_lora_rank = r.Int({"kv_lora_rank"});
    if (s.kv_lora_rank) {
        s.q_lora_rank = r.Int({"q_lora_rank"});  // null in DeepSeek-V2-Lite: no compression
        s.qk_rope_head_dim = r.Int({"qk_rope_head_dim"});
        s.qk_nope_head_dim = r.Int({"qk_nope_head_dim"});
        s.v_head_dim = r.Int({"v_head_dim"});
        s.kv_heads.reset();
        s.head_dim.reset();
    }
}

void ReadSlidingWindow(ConfigReader& r, const std::string& type, est::ModelSpec& s) {
    auto window = r.Int({"sliding_window"});
    if (!window && type == "gemma3_text") window = 4096;  // Gemma3TextConfig default
    if (!window || *window == 0) return;
    // Qwen2/Qwen3 publish a window that is off unless use_sliding_window is true.
    if (auto use = r.Bool({"use_sliding_window"}); use && !*use) return;
    if (auto types = r.ArrayCount("layer_types", "sliding_attention")) {
        if (types->second == 0) return;
        s.sliding_window = window;
        s.sliding_window_layers = types->second;
        return;
    }
    s.sliding_window = window;
    const int layers = s.layers.value_or(0);
    auto pattern = r.Int({"sliding_window_pattern"});
    if (!pattern && type == "gemma3_text") pattern = kGemma3DefaultSlidingWindowPattern;
    if (pattern && *pattern > 0 && layers > 0) {
        // Gemma 3: every pattern-th layer is global, the others local.
        s.sliding_window_layers = layers - layers / *pattern;
    } else if (type == "gemma2" && layers > 0) {
        s.sliding_window_layers = layers / 2;  // Gemma 2 alternates local and global layers
    }
}

void ReadMlp(ConfigReader& r, const std::string& type, est::ModelSpec& s) {
    s.ffn_hidden_size = r.Int({"intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim"});
    if (kGatedTypes.count(type)) {
        s.gated_mlp = true;
    } else if (kUngatedTypes.count(type)) {
        s.gated_mlp = false;
    } else if (auto act = r.String({"hidden_act", "hidden_activation", "activation_function"})) {
        if (kGatedActivations.count(*act)) s.gated_mlp = true;
    }
    s.experts = r.Int({"num_local_experts", "n_routed_experts", "num_experts"});
    s.experts_per_token = r.Int({"num_experts_per_tok", "experts_per_token", "moe_topk"});
    if (s.experts && *s.experts <= 1) {
        s.experts.reset();
        s.experts_per_token.reset();
    }
    if (!s.experts) return;
    s.expert_ffn_hidden_size = r.Int({"moe_intermediate_size"});
    s.shared_experts = r.Int({"n_shared_experts"});
    if (auto shared_width = r.Int({"shared_expert_intermediate_size"});
        shared_width && *shared_width > 0 && s.expert_ffn_hidden_size) {
        // Qwen2-MoE: one shared expert as wide as several routed ones.
        s.shared_experts = static_cast<int>(
            std::lround(static_cast<double>(*shared_width) / *s.expert_ffn_hidden_size));
    }
    s.dense_layers = r.Int({"first_k_dense_replace"});
    if (auto only = r.ArrayCount("mlp_only_layers", ""); only && only->first > 0) {
        s.dense_layers = only->first;  // Qwen MoE: layers listed here keep a dense MLP
    }
    if (s.dense_layers && *s.dense_layers > 0 && !s.dense_ffn_hidden_size && s.ffn_hidden_size &&
        s.expert_ffn_hidden_size) {
        s.dense_ffn_hidden_size = s.ffn_hidden_size;
    }
}

// A bit count of a 4- or 8-bit integer weight format as the width it is counted at: 4-bit
// integers weigh as fp4 (4 bits plus group scales), 8-bit ones as int8.
std::optional<pricing::Precision> IntegerWidth(const json& bits) {
    if (!bits.is_number_integer()) return std::nullopt;
    if (bits.get<long long>() == 4) return pricing::Precision::kFp4;
    if (bits.get<long long>() == 8) return pricing::Precision::kInt8;
    return std::nullopt;
}

bool IsTrue(const json* value) {
    return value != nullptr && value->is_boolean() && value->get<bool>();
}

// compressed-tensors (llm-compressor's checkpoints): every config group's weights scheme
// gives num_bits and type ("int" or "float"); a width only when the groups agree.
std::optional<pricing::Precision> CompressedTensorsWidth(const ConfigReader& q) {
    const json* groups = q.Find({"config_groups"});
    if (groups == nullptr || !groups->is_object() || groups->empty()) return std::nullopt;
    std::optional<pricing::Precision> width;
    for (const auto& [name, group] : groups->items()) {
        const json* weights = ConfigReader(group, name).Find({"weights"});
        if (weights == nullptr || !weights->is_object()) return std::nullopt;
        const ConfigReader scheme(*weights, name);
        const json* bits = scheme.Find({"num_bits"});
        const json* type = scheme.Find({"type"});
        std::optional<pricing::Precision> w = bits != nullptr ? IntegerWidth(*bits) : std::nullopt;
        if (w == pricing::Precision::kInt8 && type != nullptr && *type == "float") {
            w = pricing::Precision::kFp8;
        }
        if (!w || (width && *width != *w)) return std::nullopt;
        width = w;
    }
    return width;
}

// The stored width a quantization_config gives, by its quant_method as Hugging Face
// transformers writes it (utils/quantization_config.py: AwqConfig and GPTQConfig "bits",
// BitsAndBytesConfig "load_in_4bit"/"load_in_8bit", FbgemmFp8Config, FineGrainedFP8Config
// "fp8" as DeepSeek-V3's release, Mxfp4Config) and NVIDIA Model Optimizer's "modelopt"
// (quant_algo FP8 or NVFP4).
std::optional<pricing::Precision> QuantisedWidth(const std::string& method, const ConfigReader& q) {
    using pricing::Precision;
    if (method == "awq" || method == "gptq" || method == "auto-round") {
        const json* bits = q.Find({"bits", "w_bit"});  // w_bit: AutoAWQ's own key
        return bits != nullptr ? IntegerWidth(*bits) : std::nullopt;
    }
    if (method == "fp8" || method == "fbgemm_fp8") return Precision::kFp8;
    if (method == "mxfp4") return Precision::kFp4;
    if (method == "bitsandbytes") {
        if (IsTrue(q.Find({"load_in_4bit"}))) return Precision::kFp4;
        if (IsTrue(q.Find({"load_in_8bit"}))) return Precision::kInt8;
        return std::nullopt;
    }
    if (method == "compressed-tensors") return CompressedTensorsWidth(q);
    if (method == "modelopt") {
        const json* algo = q.Find({"quant_algo"});
        if (algo != nullptr && *algo == "FP8") return Precision::kFp8;
        if (algo != nullptr && *algo == "NVFP4") return Precision::kFp4;
    }
    return std::nullopt;
}

// A quantised checkpoint's config.json says how its weights are stored; serving reads them
// at that width (ModelSpec::checkpoint_precision). An MXFP4 checkpoint (GPT-OSS's release)
// quantises only the MoE experts: its modules_to_not_convert keep attention, the router, the
// embeddings and the output head in bf16 (huggingface.co/openai/gpt-oss-20b config.json).
void ReadQuantisation(const ConfigReader& outer, est::ModelSpec& s) {
    const json* block = outer.Find({"quantization_config"});
    if (block == nullptr || !block->is_object()) return;
    const ConfigReader q(*block, "quantization_config");
    const json* method_value = q.Find({"quant_method"});
    const std::string method = method_value != nullptr && method_value->is_string()
                                   ? method_value->get<std::string>()
                                   : std::string("(none)");
    const std::optional<pricing::Precision> width = QuantisedWidth(method, q);
    if (!width) {
        s.unread_quantisation = method;
        return;
    }
    s.checkpoint_precision = width;
    s.checkpoint_precision_source =
        "hf_config quantization_config, quant_method " + method +
        (*width == pricing::Precision::kFp4 ? " (4-bit weights)" : " (8-bit weights)");
    if (method == "mxfp4" && s.experts) {
        s.low_precision_scope = est::LowPrecisionScope::kRoutedExperts;
    }
}

}  // namespace

pricing::Result<est::ModelSpec> ModelSpecFromHfConfig(const json& config,
                                                      const std::string& pointer) {
    if (!config.is_object()) {
        return MakeError(ErrorCode::kMalformed, pointer + ": must be a config.json object",
                         pointer);
    }
    // Multimodal configs (Gemma 3, Llama 4) keep the language model under text_config.
    const json* text = &config;
    std::string ptr = pointer;
    if (auto it = config.find("text_config"); it != config.end() && it->is_object()) {
        text = &*it;
        ptr += "/text_config";
    }
    ConfigReader r(*text, ptr);
    ConfigReader outer(config, pointer);
    std::string type = r.String({"model_type"}).value_or(outer.String({"model_type"}).value_or(""));
    est::ModelSpec s;
    s.layers = r.Int({"num_hidden_layers", "n_layer", "num_layers", "n_layers"});
    s.hidden_size = r.Int({"hidden_size", "n_embd", "d_model", "n_embed"});
    s.vocab_size = r.Int({"vocab_size", "padded_vocab_size"});
    if (!s.vocab_size && (type == "gemma3_text" || type == "gemma3")) {
        s.vocab_size = kGemma3DefaultVocabSize;
    }
    ReadAttention(r, s);
    ReadMlp(r, type, s);
    ReadQuantisation(outer, s);
    ReadSlidingWindow(r, type, s);
    s.tied_embeddings = r.Bool({"tie_word_embeddings"});
    if (!s.tied_embeddings) {
        s.tied_embeddings = outer.Bool({"tie_word_embeddings"});
    }
    if (!s.tied_embeddings && (kGatedTypes.count(type) || kTiedByDefault.count(type))) {
        s.tied_embeddings = kTiedByDefault.count(type) > 0;
    }
    if (r.error()) return *r.error();
    if (outer.error()) return *outer.error();
    if (!s.layers || !s.hidden_size) {
        return MakeError(ErrorCode::kInvalidArgument,
                         ptr +
                             ": a config.json needs num_hidden_layers and hidden_size (or "
                             "n_layer and n_embd)",
                         ptr + (s.layers ? "/hidden_size" : "/num_hidden_layers"));
    }
    return s;
}

}  // namespace gpucost::http
