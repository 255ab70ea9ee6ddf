#pragma once

// Published model structures the tests share, each with its source.

#include "pricing/estimate/model.hpp"

namespace gpucost::testing {

// Llama 3.1 405B (HF config: 126 x 16384, 128 heads, 8 KV heads, SwiGLU 53248, vocab 128256;
// pre-trained at 8k sequences, arXiv 2407.21783 Table 3): the dense model the 80 GB parts'
// layouts (context parallel, recompute) are checked on.
inline pricing::estimate::ModelSpec Llama405() {
    pricing::estimate::ModelSpec s;
    s.layers = 126;
    s.hidden_size = 16384;
    s.attention_heads = 128;
    s.kv_heads = 8;
    s.ffn_hidden_size = 53248;
    s.gated_mlp = true;
    s.vocab_size = 128256;
    s.seq_len = 8192;
    return s;
}

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

// DeepSeek-V3 as published (huggingface.co/deepseek-ai/DeepSeek-V3 config.json, the
// schema/seed/models.csv row): 61 x 7168, 128 heads, MLA (q_lora 1536, kv_lora 512, rope 64,
// nope 128, v 128), 1 shared + 256 routed experts of 2048, top-8, the first 3 layers dense
// with 18432.
inline pricing::estimate::ModelSpec DeepSeekV3Published() {
    pricing::estimate::ModelSpec m;
    m.layers = 61;
    m.hidden_size = 7168;
    m.attention_heads = 128;
    m.ffn_hidden_size = 18432;
    m.expert_ffn_hidden_size = 2048;
    m.dense_ffn_hidden_size = 18432;
    m.vocab_size = 129280;
    m.seq_len = 4096;
    m.gated_mlp = true;
    m.tied_embeddings = false;
    m.experts = 256;
    m.experts_per_token = 8;
    m.shared_experts = 1;
    m.dense_layers = 3;
    m.q_lora_rank = 1536;
    m.kv_lora_rank = 512;
    m.qk_rope_head_dim = 64;
    m.qk_nope_head_dim = 128;
    m.v_head_dim = 128;
    return m;
}

}  // namespace gpucost::testing
