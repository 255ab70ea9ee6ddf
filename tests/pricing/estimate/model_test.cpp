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
        CHECK(m.value().attention_params_per_layer == doctest::Approx(2.0 * 8192 * 8192 + 2.0 * 8192 * 1024));
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
}
