#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pricing/accelerator.hpp"
#include "pricing/assumption.hpp"
#include "pricing/error.hpp"

namespace gpucost::pricing::estimate {

// Which weights the model's checkpoints below 16 bits quantise, for serving: every linear
// layer of the blocks (ModelOpt's fp8 and NVFP4 checkpoints, the default) or only the routed
// experts, the rest kept at 16 bits (GPT-OSS's release: "MoE weights quantized with mxfp4.
// All the other weights are in bf16", TensorRT-LLM examples/models/core/gpt_oss/README.md).
enum class LowPrecisionScope { kLinearLayers, kRoutedExperts };
// "linear_layers", "routed_experts".
const char* LowPrecisionScopeName(LowPrecisionScope scope);
std::optional<LowPrecisionScope> ParseLowPrecisionScope(std::string_view name);

// A transformer as the caller describes it. Only params_b, or layers + hidden_size, is
// required; DeriveModel fills the rest with the documented rules (docs/estimator.md).
struct ModelSpec {
    std::optional<double> params_b;         // total parameters, billions
    std::optional<double> active_params_b;  // MoE: parameters used per token, billions
    std::optional<int> layers;
    std::optional<int> hidden_size;
    std::optional<int> attention_heads;
    std::optional<int> kv_heads;  // < attention_heads for GQA/MQA
    std::optional<int> ffn_hidden_size;
    std::optional<int> vocab_size;
    std::optional<int> seq_len;
    std::optional<bool> gated_mlp;         // SwiGLU-style (3 MLP matrices instead of 2)
    std::optional<int> experts;            // MoE experts per layer (1 = dense)
    std::optional<int> experts_per_token;  // MoE top-k
    // Fields of current architectures (read from the model library and Hugging Face configs;
    // unset means the classic GPT/LLaMA reading).
    std::optional<int> head_dim;                // when not hidden_size / attention_heads (Gemma)
    std::optional<bool> tied_embeddings;        // output projection shares the input embedding
    std::optional<int> shared_experts;          // MoE: experts every token uses (DeepSeek)
    std::optional<int> expert_ffn_hidden_size;  // MoE: width of one expert's MLP
    std::optional<int> dense_layers;            // MoE: leading layers with a dense MLP
    std::optional<int> dense_ffn_hidden_size;   // MoE: MLP width of those dense layers
    std::optional<int> q_lora_rank;             // MLA (DeepSeek-V2/V3): query compression rank
    std::optional<int> kv_lora_rank;            // MLA: compressed KV width cached per token
    std::optional<int> qk_rope_head_dim;        // MLA: decoupled RoPE key width per head
    std::optional<int> qk_nope_head_dim;        // MLA: non-RoPE query/key width per head
    std::optional<int> v_head_dim;              // MLA: value width per head
    std::optional<int> sliding_window;          // tokens a local-attention layer attends to
    std::optional<int> sliding_window_layers;   // layers that use the window (default: all)
    // Multi-token-prediction modules trained with the model (DeepSeek-V3: 1, its config's
    // num_nextn_predict_layers): each runs one more block and one more output-head pass per
    // token on the pipeline's last stage. Not part of the inference model.
    std::optional<int> mtp_modules;
    // Serving below 16 bits: which weights take the request's precision (unset: every linear
    // layer of the blocks). Routed experts only needs experts > 1.
    std::optional<LowPrecisionScope> low_precision_scope;
    // The width the released checkpoint stores those weights at (below 16 bits), and where
    // that is read (a Hugging Face config's quantization_config, the model library). A serving
    // request at a wider precision reads them weight-only, as engines load such a checkpoint
    // (InferenceRequest::weight_precision); training ignores it.
    std::optional<Precision> checkpoint_precision;
    std::string checkpoint_precision_source;
    // A quantization_config whose method gives no width here (named in a warning, so that
    // weights counted at the request's precision are not a silent choice).
    std::optional<std::string> unread_quantisation;
    // The longest context the released model accepts and where that figure comes from (the
    // model library's max_context and source). Not part of the structure: nothing derives
    // from it; estimates warn when a request runs past it.
    std::optional<int> max_context;
    std::string max_context_source;
};

// Every field resolved. Parameter counts are absolute (not billions).
struct ResolvedModel {
    double params = 0;         // total, used for memory
    double active_params = 0;  // per token, used for FLOPs
    int layers = 0;
    int hidden_size = 0;
    int attention_heads = 0;
    int kv_heads = 0;  // MLA: equal to attention_heads (keys and values are decompressed per head)
    int head_dim = 0;  // query/key width per head (MLA: qk_nope_head_dim + qk_rope_head_dim)
    // MLP width a token passes through in one expert: for MoE models the routed expert's width
    // (= expert_ffn_hidden_size), for dense models the MLP width (= dense_ffn_hidden_size).
    int ffn_hidden_size = 0;
    int vocab_size = 0;
    int seq_len = 0;
    bool gated_mlp = false;
    int experts = 1;            // routed experts per MoE layer (1 = dense)
    int experts_per_token = 1;  // routed experts a token uses (top-k)
    bool tied_embeddings = false;
    int shared_experts = 0;          // experts every token uses, each expert_ffn_hidden_size wide
    int expert_ffn_hidden_size = 0;  // always set (dense models: ffn_hidden_size)
    int dense_layers = 0;            // MoE: leading layers with a dense MLP (dense models: 0)
    int dense_ffn_hidden_size = 0;   // always set: MLP width of dense layers
    int q_lora_rank = 0;             // 0: not MLA (or no query compression)
    int kv_lora_rank = 0;            // 0: not MLA
    int qk_rope_head_dim = 0;
    int qk_nope_head_dim = 0;
    int v_head_dim = 0;
    int sliding_window = 0;         // 0: every layer attends to the whole context
    int sliding_window_layers = 0;  // layers that use the window (0 when sliding_window is 0)
    int mtp_modules = 0;            // multi-token-prediction modules (training only)
    LowPrecisionScope low_precision_scope = LowPrecisionScope::kLinearLayers;  // serving
    std::optional<Precision> checkpoint_precision;  // the spec's, for serving
    std::string checkpoint_precision_source;
    int max_context = 0;  // the spec's max_context (0: unknown)
    std::string max_context_source;
    // Per layer: Q, K, V and output projections (MLA: the down- and up-projections and the
    // decoupled RoPE key).
    double attention_params_per_layer = 0;
    // Per-layer averages over all layers of the MLP (dense first layers, shared experts,
    // routed experts and the router): all experts (memory) and the ones a token uses (FLOPs),
    // so that layers * (attention + mlp) is the whole model without embeddings.
    double mlp_params_per_layer = 0;
    double mlp_active_params_per_layer = 0;
    // Input embedding and output projection: 2 * V * h, or V * h when tied.
    double embedding_params = 0;
    // Fields that were derived rather than given, with the rule used, e.g.
    // {"/model/layers", "from params_b with hidden = 128 * layers"}.
    std::vector<FieldError> derived;
    // Inputs that disagree and could not be reconciled (e.g. params_b against a structure
    // that counts 30 % more); the structure was used for both FLOPs and memory.
    std::vector<FieldError> warnings;

    bool IsMoe() const { return experts > 1; }
    bool IsMla() const { return kv_lora_rank > 0; }
    // Layers whose MLP is a mixture of experts (layers - dense_layers; 0 for dense models).
    int MoeLayers() const { return IsMoe() ? layers - dense_layers : 0; }
    // Parameters of the routed experts over all layers (what expert parallelism shards).
    double RoutedExpertParams() const;
    // Dense parameters (attention, embeddings, dense MLPs, shared experts, routers), i.e.
    // params minus the routed experts.
    double NonExpertParams() const;
    // Parameters the FLOPs count uses: active params without the input embedding.
    double ActiveNonEmbeddingParams() const;
    // Layers that attend to a sliding window: sliding_window_layers (which resolution sets to
    // every layer when the spec gives a window but no count), 0 without a window.
    double WindowLayers() const;
    // The context a training sequence's attention counts per query, averaged over layers, in
    // the PaLM convention that counts a causal layer's whole seq_len (its executed work being
    // half of that). A sliding-window layer of w < seq_len tokens attends to min(i, w) keys at
    // position i, on average w - w^2 / (2 seq_len), so it counts twice that.
    double AttentionContextTokens() const;
};

// Limits every field is validated against (absurd sizes are 422, never a hang).
inline constexpr double kMaxParamsB = 100000;  // 100 T
inline constexpr int kMaxLayers = 2048;
inline constexpr int kMaxHiddenSize = 1 << 18;
inline constexpr int kMaxHeads = 1 << 14;
inline constexpr int kMaxFfnHiddenSize = 1 << 21;
inline constexpr int kMaxVocabSize = 1 << 24;
inline constexpr int kMaxSeqLen = 1 << 24;
inline constexpr int kMaxExperts = 4096;

// Defaults of the derivation rules (echoed under assumptions by the estimators).
inline constexpr int kDefaultHeadDim = 128;
// With params_b alone: heads in multiples of 8 so that tensor parallel 8 divides them, and
// 8 key/value heads (GQA) once there are more than 8 heads (Llama 3, Mistral, Qwen2.5).
inline constexpr int kDerivedHeadMultiple = 8;
inline constexpr int kDerivedKvHeads = 8;
// params_b and a structure "match" when they differ by at most this fraction.
inline constexpr double kParamsMatchTolerance = 0.10;
inline constexpr int kDefaultVocabSize = 32000;
inline constexpr int kDefaultSeqLen = 2048;
inline constexpr double kAspectRatioHiddenPerLayer = 128.0;

// Fills missing fields and validates. Errors are kInvalidArgument with JSON pointers under
// `pointer_prefix` (e.g. "/model/layers"). Pure.
[[nodiscard]] Result<ResolvedModel> DeriveModel(const ModelSpec& spec,
                                                std::string_view pointer_prefix = "/model");

// A warning on `field` when `tokens` (a request's context: prompt + output, or a training
// sequence) exceed the model's published max_context, naming it and its source; nullopt
// when within it or unknown. Not an error: long-context variants (RoPE scaling) exist.
[[nodiscard]] std::optional<FieldError> ContextWarning(const ResolvedModel& model, double tokens,
                                                       std::string_view field,
                                                       std::string_view what);

// The derivation constants as assumptions.
const Assumptions& ModelDerivationAssumptions();

}  // namespace gpucost::pricing::estimate
