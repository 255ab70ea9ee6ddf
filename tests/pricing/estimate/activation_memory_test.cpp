#include "pricing/estimate/activation_memory.hpp"

#include <doctest/doctest.h>

#include "tests/support/published_models.hpp"

using namespace gpucost::pricing::estimate;

namespace {

// GPT-3 175B as Korthikanti et al. 2022 ran it: 96 x 12288, 96 heads, GeLU MLP of 4h,
// dropout, sequences of 2048.
ResolvedModel Gpt175() {
    ModelSpec s;
    s.layers = 96;
    s.hidden_size = 12288;
    s.attention_heads = 96;
    s.seq_len = 2048;
    auto m = DeriveModel(s);
    REQUIRE(m.ok());
    return m.value();
}

// Llama 3.1 405B, resolved.
ResolvedModel ResolvedLlama405() {
    auto m = DeriveModel(gpucost::testing::Llama405());
    REQUIRE(m.ok());
    return m.value();
}

ActivationLayout Layout(int tensor, int context, bool sp, Recompute rc, bool flash) {
    return {1, tensor, context, sp, rc, flash};
}

}  // namespace

TEST_SUITE("activation_memory") {
    TEST_CASE("a GPT-3-style layer is Korthikanti's 34 sbh plus 5as/h of scores") {
        const ResolvedModel m = Gpt175();
        const double sbh = 2048.0 * 12288;
        const double as_h = 96.0 * 2048 / 12288;
        CHECK(TrainedWithDropout(m));
        CHECK(LayerActivations(m, Layout(1, 1, false, Recompute::kNone, false)).Total() ==
              doctest::Approx(sbh * (34 + 5 * as_h)));
        // Without sequence parallelism 10 sbh stay whole outside the tensor-parallel regions.
        CHECK(LayerActivations(m, Layout(8, 1, false, Recompute::kNone, false)).Total() ==
              doctest::Approx(sbh * (10 + 24.0 / 8 + 5 * as_h / 8)));
        CHECK(LayerActivations(m, Layout(8, 1, true, Recompute::kSelective, false)).Total() ==
              doctest::Approx(34 * sbh / 8));
        CHECK(LayerActivations(m, Layout(8, 1, true, Recompute::kFull, false)).Total() ==
              doctest::Approx(2 * sbh / 8));
    }

    TEST_CASE("a Llama-class layer counts its KV heads, SwiGLU width and no dropout masks") {
        const ResolvedModel m = ResolvedLlama405();
        CHECK_FALSE(TrainedWithDropout(m));
        const double s = 8192, h = 16384, f = 53248, t = 8;
        const double sbh = s * h;
        const auto p = LayerActivations(m, Layout(8, 1, true, Recompute::kNone, true));
        // Norm inputs 4, QKV and MLP inputs 4, Q 2 and K, V 2 x 2/16 of h, output 2, gate and
        // up outputs 4F, SwiGLU output 2F (bytes per token, / t with sequence parallelism).
        CHECK(p.attention_qkv == doctest::Approx(sbh * (2 + 4.0 / 16) / t));
        CHECK(p.mlp_hidden == doctest::Approx(6 * s * f / t));
        CHECK(p.dropout_masks == 0);
        CHECK(p.scores == 0);
        CHECK(p.softmax_stats == doctest::Approx(4.0 * 128 / t * s));
        CHECK(p.Total() ==
              doctest::Approx((sbh * (4 + 4 + 2.25 + 2) + 6 * s * f) / t + 4.0 * 128 / t * s));
        // 31.75 sbh against Korthikanti's 34 for this model.
        CHECK(p.Total() < 34 * sbh / t * 0.94);
    }

    TEST_CASE("selective recompute frees the scores, and with FlashAttention only its statistics") {
        const ResolvedModel m = Gpt175();
        const auto none = LayerActivations(m, Layout(8, 1, true, Recompute::kNone, false));
        const auto selective =
            LayerActivations(m, Layout(8, 1, true, Recompute::kSelective, false));
        CHECK(none.scores > 0);
        CHECK(selective.scores == 0);
        CHECK(none.Total() - selective.Total() == doctest::Approx(none.scores));
        const auto flash_none = LayerActivations(m, Layout(8, 1, true, Recompute::kNone, true));
        const auto flash_sel = LayerActivations(m, Layout(8, 1, true, Recompute::kSelective, true));
        CHECK(flash_none.Total() - flash_sel.Total() == doctest::Approx(flash_none.softmax_stats));
        CHECK(flash_none.softmax_stats < 0.001 * flash_none.Total());
    }

    TEST_CASE("context parallelism splits every stored activation by its degree") {
        for (Recompute rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
            for (bool flash : {true, false}) {
                const ResolvedModel m = ResolvedLlama405();
                const double one = LayerActivations(m, Layout(8, 1, true, rc, flash)).Total();
                const double two = LayerActivations(m, Layout(8, 2, true, rc, flash)).Total();
                CAPTURE(RecomputeName(rc));
                CHECK(two == doctest::Approx(one / 2));
            }
        }
    }
}
