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

// DeepSeek-V3 as published (MLA, 1 shared and 8 of 256 routed experts, 3 dense layers of 61).
ResolvedModel ResolvedDeepSeekV3() {
    auto m = DeriveModel(gpucost::testing::DeepSeekV3Published());
    REQUIRE(m.ok());
    return m.value();
}

RecomputeModules Modules(std::initializer_list<RecomputeModule> list) {
    RecomputeModules out;
    for (RecomputeModule m : list) out.Add(m);
    return out;
}

// Selective recompute of `modules` on one rank of tensor degree 2 with sequence parallelism.
ActivationLayout ModuleLayout(RecomputeModules modules) {
    return {1, 2, 1, true, Recompute::kSelective, true, modules};
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

    TEST_CASE("each recompute module frees what the layer's count holds for it") {
        const ResolvedModel v3 = ResolvedDeepSeekV3();
        REQUIRE(v3.IsMla());
        const double t = 2, sbh = 4096.0 * 7168;
        auto freed = [&](const ResolvedModel& m, RecomputeModule module) {
            return RecomputeModuleFreedBytes(m, ModuleLayout({}), module);
        };
        // DeepSeek-V3's MoE layers are Korthikanti's 34 sbh: mla_up_proj drops its Q, K and V
        // (6 sbh), layernorm the QKV and fc1 inputs (4 sbh), moe_act half the MLP's 16 sbh in
        // the routed experts' share (8 of 9 experts a token passes) of the 58 MoE layers.
        CHECK(freed(v3, RecomputeModule::kMlaUpProj) == doctest::Approx(6 * sbh / t));
        CHECK(freed(v3, RecomputeModule::kLayernorm) == doctest::Approx(4 * sbh / t));
        CHECK(freed(v3, RecomputeModule::kMoeAct) ==
              doctest::Approx(8 * sbh / t * 8.0 / 9 * 58.0 / 61));
        CHECK(freed(v3, RecomputeModule::kMoe) == doctest::Approx(16 * sbh / t * 58.0 / 61));
        CHECK(freed(v3, RecomputeModule::kMlp) == doctest::Approx(16 * sbh / t * 3.0 / 61));
        // Together they add up, and the stored layer keeps the rest of its 34 sbh.
        const auto both = LayerActivations(
            v3, ModuleLayout(Modules({RecomputeModule::kMlaUpProj, RecomputeModule::kLayernorm})));
        CHECK(both.Total() == doctest::Approx(34 * sbh / t - 10 * sbh / t));
        // core_attn alone is selective recompute as it has always been counted.
        CHECK(LayerActivations(v3, ModuleLayout(Modules({RecomputeModule::kCoreAttn}))).Total() ==
              LayerActivations(v3, Layout(2, 1, true, Recompute::kSelective, true)).Total());

        // A dense Llama layer: mla_up_proj frees nothing, mlp its SwiGLU internals
        // (gate and up outputs and the activation output, 3 x 53248 wide at 2 bytes).
        const ResolvedModel llama = ResolvedLlama405();
        const double s = 8192;
        CHECK(freed(llama, RecomputeModule::kMlaUpProj) == 0);
        CHECK(freed(llama, RecomputeModule::kMoeAct) == 0);
        CHECK(freed(llama, RecomputeModule::kMlp) == doctest::Approx(2 * s * 3 * 53248 / t));
        CHECK(freed(llama, RecomputeModule::kLayernorm) == doctest::Approx(4 * s * 16384 / t));
    }
}
