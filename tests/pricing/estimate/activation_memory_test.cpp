#include "pricing/estimate/activation_memory.hpp"

#include <doctest/doctest.h>

#include "tests/support/published_models.hpp"

using namespace gpucost::pricing::estimate;
using gpucost::pricing::Precision;

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
        CHECK(p.mlp_hidden == doctest::Approx(4 * s * f / t));
        CHECK(p.mlp_down_inputs == doctest::Approx(2 * s * f / t));
        CHECK(p.expert_inputs == 0);
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

    TEST_CASE("an MoE layer stores each token's routed copies and their expert outputs") {
        const ResolvedModel v3 = ResolvedDeepSeekV3();
        const double s = 4096, h = 7168, k = 8, f = 2048, moe = 58.0 / 61;
        // frontier-estimator-references 1b.9's DeepSeek-V3 example, T_r 4096, k 8: routed
        // copies 2 T_r k h and gate, up and SwiGLU outputs 6 T_r k F_e, 0.87 GB per MoE layer;
        // with the fp32 router probabilities (4 T_r k) and the shared expert's 6 T_r F_s.
        const double routed = 2 * s * k * h + 6 * s * k * f;
        CHECK(routed / 1e9 == doctest::Approx(0.87).epsilon(0.01));
        const auto one = LayerActivations(v3, Layout(1, 1, false, Recompute::kNone, true));
        CHECK(one.expert_inputs == doctest::Approx(moe * 2 * s * k * h));
        CHECK(RecomputeModuleFreedBytes(v3, Layout(1, 1, false, Recompute::kNone, true),
                                        RecomputeModule::kMoe) ==
              doctest::Approx(moe * (routed + 4 * s * k + 6 * s * f)));
        // Korthikanti's count, which MoE layers kept before, held 16 sbh for the whole MLP.
        CHECK(routed > 1.8 * 16 * s * h);
        // Each expert-tensor rank gathers its group's tokens at full width.
        ActivationLayout etp2 = Layout(2, 1, true, Recompute::kNone, true);
        const auto t2 = LayerActivations(v3, etp2);
        etp2.expert_tensor = 2;
        CHECK(LayerActivations(v3, etp2).expert_inputs == doctest::Approx(2 * t2.expert_inputs));
        CHECK(t2.expert_inputs == doctest::Approx(moe * 2 * s * k * h / 2));
    }

    TEST_CASE("below 16 bits the linear layers' saved inputs are the quantised copies") {
        const ResolvedModel v3 = ResolvedDeepSeekV3();
        const double fp8 = LinearInputBytes(Precision::kFp8);
        CHECK(fp8 == doctest::Approx(1 + 1.0 / 32));
        CHECK(LinearInputBytes(Precision::kBf16) == 2);
        CHECK(LinearInputBytes(Precision::kFp32) == 2);  // fp32 runs scale the whole count
        CHECK(LinearInputBytes(Precision::kFp4) == doctest::Approx(0.5625));
        ActivationLayout l = Layout(1, 1, false, Recompute::kNone, true);
        const auto bf16 = LayerActivations(v3, l);
        l.linear_input_bytes = fp8;
        const auto low = LayerActivations(v3, l);
        // The norms' outputs (QKV and fc1 inputs), the down projections' inputs and the
        // routed copies shrink to the quantised size; what non-linear ops keep (norm inputs,
        // Q/K/V, the up-projection outputs) stays 16-bit.
        CHECK(low.block_inputs == doctest::Approx(bf16.block_inputs * fp8 / 2));
        CHECK(low.mlp_down_inputs == doctest::Approx(bf16.mlp_down_inputs * fp8 / 2));
        CHECK(low.expert_inputs == doctest::Approx(bf16.expert_inputs * fp8 / 2));
        CHECK(low.norm_inputs == bf16.norm_inputs);
        CHECK(low.attention_qkv == bf16.attention_qkv);
        CHECK(low.mlp_hidden == bf16.mlp_hidden);
        // The attention output is kept by the attention core at 16 bits, and the output
        // projection saves its quantised copy beside it.
        CHECK(low.attention_output == doctest::Approx(bf16.attention_output * (2 + fp8) / 2));
    }

    TEST_CASE("each recompute module frees what the layer's count holds for it") {
        const ResolvedModel v3 = ResolvedDeepSeekV3();
        REQUIRE(v3.IsMla());
        const double t = 2, s = 4096, h = 7168, k = 8, f = 2048, moe = 58.0 / 61;
        auto freed = [&](const ResolvedModel& m, RecomputeModule module) {
            return RecomputeModuleFreedBytes(m, ModuleLayout({}), module);
        };
        // mla_up_proj drops the up-projected Q, K (128 heads x 192) and V (128 x 128), layernorm
        // the QKV and fc1 inputs (2 x 2h, / t with sequence parallelism), moe_act the routed
        // experts' SwiGLU outputs (k F_e) in the 58 MoE layers of 61, mlp the 3 dense layers'
        // gate, up and SwiGLU outputs (3 x 18432), moe the MoE layer's routed copies, outputs,
        // router probabilities and shared expert.
        CHECK(freed(v3, RecomputeModule::kMlaUpProj) ==
              doctest::Approx(2 * s * (2 * 128 * 192 + 128 * 128) / t));
        CHECK(freed(v3, RecomputeModule::kLayernorm) == doctest::Approx(4 * s * h / t));
        CHECK(freed(v3, RecomputeModule::kMoeAct) == doctest::Approx(2 * s * k * f * moe / t));
        CHECK(freed(v3, RecomputeModule::kMlp) ==
              doctest::Approx(2 * s * 3 * 18432 * (1 - moe) / t));
        CHECK(freed(v3, RecomputeModule::kMoe) ==
              doctest::Approx(moe * s * (2 * k * h + 6 * k * f + 4 * k + 6 * f) / t));
        // Together they add up.
        const double all = LayerActivations(v3, ModuleLayout({})).Total();
        const auto both = LayerActivations(
            v3, ModuleLayout(Modules({RecomputeModule::kMlaUpProj, RecomputeModule::kLayernorm})));
        CHECK(both.Total() == doctest::Approx(all - freed(v3, RecomputeModule::kMlaUpProj) -
                                              freed(v3, RecomputeModule::kLayernorm)));
        // core_attn alone is selective recompute as it has always been counted.
        CHECK(LayerActivations(v3, ModuleLayout(Modules({RecomputeModule::kCoreAttn}))).Total() ==
              LayerActivations(v3, Layout(2, 1, true, Recompute::kSelective, true)).Total());

        // A dense Llama layer: mla_up_proj frees nothing, mlp its SwiGLU internals
        // (gate and up outputs and the activation output, 3 x 53248 wide at 2 bytes).
        const ResolvedModel llama = ResolvedLlama405();
        const double s_llama = 8192;
        CHECK(freed(llama, RecomputeModule::kMlaUpProj) == 0);
        CHECK(freed(llama, RecomputeModule::kMoeAct) == 0);
        CHECK(freed(llama, RecomputeModule::kMlp) == doctest::Approx(2 * s_llama * 3 * 53248 / t));
        CHECK(freed(llama, RecomputeModule::kLayernorm) ==
              doctest::Approx(4 * s_llama * 16384 / t));
    }
}
