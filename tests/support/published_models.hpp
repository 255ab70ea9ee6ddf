#pragma once

// Published model structures the tests share, each with its source.

#include "pricing/estimate/model.hpp"

namespace gpucost::testing {

// gpt-oss-120b as published (huggingface.co/openai/gpt-oss-120b config.json): 36 x 2880,
// 64 heads of 64, 8 KV heads, 128 experts of 2880, top-4, half the layers a 128-token window.
inline pricing::estimate::ModelSpec GptOss120b() {
    pricing::estimate::ModelSpec m;
    m.layers = 36;
    m.hidden_size = 2880;
    m.attention_heads = 64;
    m.kv_heads = 8;
    m.head_dim = 64;
    m.ffn_hidden_size = 2880;
    m.expert_ffn_hidden_size = 2880;
    m.vocab_size = 201088;
    m.gated_mlp = true;
    m.experts = 128;
    m.experts_per_token = 4;
    m.sliding_window = 128;
    m.sliding_window_layers = 18;
    return m;
}

}  // namespace gpucost::testing
