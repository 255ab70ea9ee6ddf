#include <doctest/doctest.h>

#include "pricing/estimate/model.hpp"

using namespace gpucost::pricing::estimate;

TEST_SUITE("estimate_model") {
    TEST_CASE("GPT-3 175B is derived from params_b alone with 96-ish layers of 12288") {
        ModelSpec s;
        s.params_b = 175;
        auto m = DeriveModel(s);
        REQUIRE(m.ok());
        CHECK(m.value().hidden_size == 12288);
        CHECK(m.value().layers == doctest::Approx(96).epsilon(0.05));
        CHECK(m.value().attention_heads == 96);
        CHECK(m.value().params == doctest::Approx(175e9).epsilon(0.01));
        CHECK(!m.value().derived.empty());
    }

    TEST_CASE("LLaMA-65B with a given ffn keeps the architecture and the stated parameter count") {
        ModelSpec s;
        s.params_b = 65.2;
        s.layers = 80;
        s.hidden_size = 8192;
        s.attention_heads = 64;
        s.ffn_hidden_size = 22016;
        s.gated_mlp = true;
        auto m = DeriveModel(s);
        REQUIRE(m.ok());
        // 80 * (4 h^2 + 3 h ffn) + 2 V h = 65.2 B
        double arch = 80.0 * (4.0 * 8192 * 8192 + 3.0 * 8192 * 22016) + 2.0 * 32000 * 8192;
        CHECK(arch / 1e9 == doctest::Approx(65.2).epsilon(0.01));
        CHECK(m.value().ActiveNonEmbeddingParams() ==
              doctest::Approx(80.0 * (4.0 * 8192 * 8192 + 3.0 * 8192 * 22016)));
    }

    TEST_CASE("a missing ffn width is solved from params_b when layers and hidden are given") {
        ModelSpec s;
        s.params_b = 6.7;
        s.layers = 32;
        s.hidden_size = 4096;
        auto m = DeriveModel(s);
        REQUIRE(m.ok());
        CHECK(m.value().ffn_hidden_size == doctest::Approx(16384).epsilon(0.03));
    }

    TEST_CASE("GQA shrinks K and V projections") {
        ModelSpec s;
        s.layers = 80;
        s.hidden_size = 8192;
        s.attention_heads = 64;
        s.kv_heads = 8;
        auto m = DeriveModel(s);
        REQUIRE(m.ok());
        CHECK(m.value().head_dim == 128);
        CHECK(m.value().attention_params_per_layer ==
              doctest::Approx(2.0 * 8192 * 8192 + 2.0 * 8192 * 1024));
    }

    TEST_CASE("MoE: active parameters drive FLOPs, total parameters drive memory") {
        ModelSpec s;
        s.params_b = 46.7;
        s.active_params_b = 12.9;
        s.layers = 32;
        s.hidden_size = 4096;
        s.kv_heads = 8;
        s.gated_mlp = true;
        auto m = DeriveModel(s);
        REQUIRE(m.ok());
        CHECK(m.value().IsMoe());
        CHECK(m.value().experts == 8);
        CHECK(m.value().experts_per_token == 2);
        CHECK(m.value().ffn_hidden_size == doctest::Approx(14336).epsilon(0.03));
        CHECK(m.value().mlp_params_per_layer > 3.5 * m.value().mlp_active_params_per_layer);
    }

    TEST_CASE("bad inputs are 422 naming the field") {
        ModelSpec none;
        auto r = DeriveModel(none);
        REQUIRE(!r.ok());
        CHECK(r.error().field == "/model/params_b");
        ModelSpec heads;
        heads.layers = 2;
        heads.hidden_size = 1000;
        heads.attention_heads = 7;
        CHECK(DeriveModel(heads).error().field == "/model/attention_heads");
        ModelSpec neg;
        neg.params_b = -1;
        CHECK(DeriveModel(neg).error().field == "/model/params_b");
        ModelSpec huge;
        huge.layers = 1 << 30;
        huge.hidden_size = 64;
        CHECK(DeriveModel(huge).error().field == "/model/layers");
        ModelSpec active;
        active.params_b = 7;
        active.active_params_b = 8;
        CHECK(DeriveModel(active).error().field == "/model/active_params_b");
        ModelSpec tiny;
        tiny.params_b = 0.001;
        tiny.layers = 80;
        tiny.hidden_size = 8192;
        CHECK(DeriveModel(tiny).error().field == "/model/params_b");
    }

    TEST_CASE("Llama-2-7B as params_b plus a structure without gated_mlp is read as gated") {
        ModelSpec s;
        s.params_b = 6.7;
        s.layers = 32;
        s.hidden_size = 4096;
        s.attention_heads = 32;
        s.ffn_hidden_size = 11008;
        s.vocab_size = 32000;
        auto m = DeriveModel(s);
        REQUIRE(m.ok());
        CHECK(m.value().gated_mlp);
        CHECK(m.value().warnings.empty());
        // The structure's count is used for both FLOPs and memory: 6.74 B.
        CHECK(m.value().params / 1e9 == doctest::Approx(6.738).epsilon(0.002));
        bool recorded = false;
        for (const auto& d : m.value().derived) {
            if (d.field == "/model/gated_mlp") recorded = d.detail.find("true") == 0;
        }
        CHECK(recorded);
    }

    TEST_CASE("Llama-2-70B without kv_heads is read with 8 key/value heads") {
        ModelSpec s;
        s.params_b = 69;
        s.layers = 80;
        s.hidden_size = 8192;
        s.attention_heads = 64;
        s.ffn_hidden_size = 28672;
        s.gated_mlp = true;
        auto m = DeriveModel(s);
        REQUIRE(m.ok());
        CHECK(m.value().kv_heads == 8);
        CHECK(m.value().params / 1e9 == doctest::Approx(69).epsilon(0.01));
    }

    TEST_CASE("a missing vocabulary is solved from params_b when the residual asks for it") {
        ModelSpec s;  // Llama 3.1 8B without vocab_size
        s.params_b = 8.03;
        s.layers = 32;
        s.hidden_size = 4096;
        s.attention_heads = 32;
        s.kv_heads = 8;
        s.ffn_hidden_size = 14336;
        s.gated_mlp = true;
        auto m = DeriveModel(s);
        REQUIRE(m.ok());
        CHECK(m.value().vocab_size == doctest::Approx(128256).epsilon(0.01));
    }

    TEST_CASE("a given params_b a few percent off the structure's count is noted, not used") {
        ModelSpec s;
        s.params_b = 7;
        s.layers = 32;
        s.hidden_size = 4096;
        s.attention_heads = 32;
        s.kv_heads = 32;
        s.ffn_hidden_size = 11008;
        s.vocab_size = 32000;
        s.gated_mlp = true;
        s.tied_embeddings = false;
        auto m = DeriveModel(s);
        REQUIRE(m.ok());
        CHECK(m.value().params / 1e9 == doctest::Approx(6.738).epsilon(0.002));
        bool noted = false;
        for (const auto& d : m.value().derived) {
            if (d.field == "/model/params_b")
                noted = d.detail.find("counted from the structure") == 0;
        }
        CHECK(noted);
    }

    TEST_CASE("params_b far from every reading of the structure warns and uses the structure") {
        ModelSpec s;
        s.params_b = 20;
        s.layers = 32;
        s.hidden_size = 4096;
        s.ffn_hidden_size = 11008;
        s.gated_mlp = true;
        auto m = DeriveModel(s);
        REQUIRE(m.ok());
        REQUIRE(m.value().warnings.size() == 1);
        CHECK(m.value().warnings[0].field == "/model/params_b");
        CHECK(m.value().params / 1e9 == doctest::Approx(6.74).epsilon(0.01));
        CHECK(m.value().params == doctest::Approx(m.value().active_params));
    }

    TEST_CASE("params_b alone derives heads in multiples of 8 with GQA, so TP 8 divides them") {
        for (double b : {7.0, 13.0, 34.0, 70.0, 175.0, 405.0}) {
            CAPTURE(b);
            ModelSpec s;
            s.params_b = b;
            auto m = DeriveModel(s);
            REQUIRE(m.ok());
            const auto& v = m.value();
            CHECK(v.head_dim == 128);
            CHECK(v.attention_heads % 8 == 0);
            CHECK(v.kv_heads == 8);
            CHECK(v.gated_mlp);
            CHECK(v.ffn_hidden_size % 128 == 0);
            CHECK(v.params / 1e9 == doctest::Approx(b).epsilon(0.02));
        }
        ModelSpec s70;
        s70.params_b = 70;
        auto m = DeriveModel(s70);
        REQUIRE(m.ok());
        CHECK(m.value().attention_heads == 72);
    }

    TEST_CASE("params_b with layers alone derives a hidden size whose heads TP 8 divides") {
        ModelSpec s;
        s.params_b = 7;
        s.layers = 40;
        auto m = DeriveModel(s);
        REQUIRE(m.ok());
        CHECK(m.value().hidden_size % 1024 == 0);
        CHECK(m.value().attention_heads % 8 == 0);
        CHECK(m.value().params / 1e9 == doctest::Approx(7).epsilon(0.01));
    }

    TEST_CASE("tied embeddings count the vocabulary once") {
        ModelSpec s;
        s.layers = 42;
        s.hidden_size = 3584;
        s.attention_heads = 16;
        s.kv_heads = 8;
        s.head_dim = 256;
        s.ffn_hidden_size = 14336;
        s.vocab_size = 256000;
        s.gated_mlp = true;
        s.tied_embeddings = true;
        auto m = DeriveModel(s);
        REQUIRE(m.ok());
        CHECK(m.value().embedding_params == doctest::Approx(256000.0 * 3584));
        // Gemma 2 9B: the query width is 16 x 256 = 4096, not the hidden size.
        CHECK(m.value().attention_params_per_layer ==
              doctest::Approx(2.0 * 3584 * 16 * 256 + 2.0 * 3584 * 8 * 256));
        CHECK(m.value().params / 1e9 == doctest::Approx(9.24).epsilon(0.01));
    }

    TEST_CASE("shared experts and dense first layers enter the per-layer MLP averages") {
        ModelSpec s;
        s.layers = 4;
        s.hidden_size = 100;
        s.attention_heads = 1;
        s.ffn_hidden_size = 1000;       // dense layers
        s.expert_ffn_hidden_size = 10;  // each expert
        s.experts = 8;
        s.experts_per_token = 2;
        s.shared_experts = 1;
        s.dense_layers = 1;
        s.gated_mlp = true;
        s.vocab_size = 10;
        auto m = DeriveModel(s);
        REQUIRE(m.ok());
        const auto& v = m.value();
        const double dense = 3.0 * 100 * 1000, expert = 3.0 * 100 * 10, router = 100.0 * 8;
        CHECK(v.dense_ffn_hidden_size == 1000);
        CHECK(v.ffn_hidden_size == 10);
        CHECK(v.mlp_params_per_layer * 4 == doctest::Approx(dense + 3 * (9 * expert + router)));
        CHECK(v.mlp_active_params_per_layer * 4 ==
              doctest::Approx(dense + 3 * (3 * expert + router)));
        CHECK(v.RoutedExpertParams() == doctest::Approx(3 * 8 * expert));
    }

    TEST_CASE("sliding windows apply to every layer unless a count is given") {
        ModelSpec s;
        s.layers = 32;
        s.hidden_size = 4096;
        s.sliding_window = 4096;
        auto m = DeriveModel(s);
        REQUIRE(m.ok());
        CHECK(m.value().sliding_window == 4096);
        CHECK(m.value().sliding_window_layers == 32);
        s.sliding_window_layers = 40;
        CHECK(DeriveModel(s).error().field == "/model/sliding_window_layers");
    }
}
