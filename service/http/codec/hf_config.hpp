#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "pricing/error.hpp"
#include "pricing/estimate/model.hpp"

namespace gpucost::http {

// Reads a Hugging Face `config.json` object, as published, into a ModelSpec: the key names of
// Llama, Mistral, Mixtral, Qwen2/Qwen3 (and their MoE variants), DeepSeek-V2/V3, Gemma 1/2/3
// (a multimodal config's `text_config` is read), Phi-3/4, gpt-oss, Falcon, BLOOM and GPT-2.
// Keys it does not use are ignored (configs carry dozens); a key it uses with the wrong type is
// kMalformed (400) naming `pointer` + "/" + key. params_b is left unset: the structure is
// counted. The gated MLP follows the architecture (model_type) and, for unknown types,
// hidden_act (SiLU/SwiGLU are gated MLPs); tied embeddings follow tie_word_embeddings, or the
// architecture's default when the key is absent.
[[nodiscard]] pricing::Result<pricing::estimate::ModelSpec> ModelSpecFromHfConfig(
    const nlohmann::json& config, const std::string& pointer);

}  // namespace gpucost::http
