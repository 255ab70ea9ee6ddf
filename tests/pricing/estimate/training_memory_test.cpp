#include <doctest/doctest.h>

#include "pricing/estimate/activation_memory.hpp"
#include "pricing/estimate/training.hpp"
#include "tests/pricing/estimate/estimate_test_support.hpp"
#include "tests/support/published_models.hpp"

using namespace gpucost::pricing::estimate;
using gpucost::pricing::ErrorCode;
using gpucost::pricing::Precision;
using gpucost::testing::AssumptionValue;
using gpucost::testing::Llama405;

namespace {

// NVIDIA's published Llama 3.1 405B run on 256 GB200 (Megatron-Bridge performance summary,
// 25.11 container; scripts/performance llama31_workload_base_configs.py GB200 FP8_CS_V2):
// FP8, TP 4, PP 16, CP 1, VP 4, micro-batch 1, global batch 1536 x 8192; 813 tokens/s per GPU.
TrainingRequest Llama405OnGb200(std::optional<Recompute> recompute,
                                std::optional<int> recompute_layers) {
    TrainingRequest r;
    r.model = Llama405();
    r.tokens_b = 1000;
    r.precision = Precision::kFp8;
    r.global_batch_tokens = 1536.0 * 8192;
    r.tp_overlap_fraction = kTpOverlapFractionWhenEnabled;
    ParallelismRequest pr;
    pr.tensor = 4;
    pr.pipeline = 16;
    pr.context = 1;
    pr.virtual_stages = 4;
    pr.micro_batch_size = 1;
    pr.recompute = recompute;
    pr.recompute_layers = recompute_layers;
    r.parallelism = pr;
    return r;
}

ClusterSpec Gb200s(int count) {
    ClusterSpec c;
    c.accelerator = gpucost::testing::Gb200();
    // Dense FP8 peak (schema/seed/accelerators.csv gb200: 5,000 TFLOP/s).
    c.accelerator.peak_tflops[static_cast<std::size_t>(Precision::kFp8)] = 5000;
    c.accelerator_count = count;
    return c;
}

// DeepSeek-V3 on 256 GB200 in NVIDIA's published layout (Megatron-Bridge performance
// summary, 25.11 container, BF16: TP 1, PP 4, VP 4, EP 64, global batch 2048 x 4096), with
// the recompute modules given.
TrainingRequest DeepSeekV3OnGb200(std::optional<RecomputeModules> modules) {
    TrainingRequest r;
    r.model = gpucost::testing::DeepSeekV3Published();
    r.tokens_b = 1000;
    r.precision = Precision::kBf16;
    r.global_batch_tokens = 2048.0 * 4096;
    ParallelismRequest pr;
    pr.tensor = 1;
    pr.pipeline = 4;
    pr.virtual_stages = 4;
    pr.expert = 64;
    pr.micro_batch_size = 1;
    pr.recompute = Recompute::kSelective;
    pr.recompute_modules = modules;
    r.parallelism = pr;
    return r;
}

RecomputeModules Modules(std::initializer_list<RecomputeModule> list) {
    RecomputeModules out;
    for (RecomputeModule m : list) out.Add(m);
    return out;
}

}  // namespace

TEST_SUITE("training_memory") {
    TEST_CASE("block recompute keeps the activations of the layers it does not recompute") {
        // Each of the 4 chunks of a stage holds 2 layers (126 layers, 8 per middle stage). The
        // layouts are fully given (data 4, ZeRO 1), so each is timed whether or not it fits.
        auto fixed = [](std::optional<Recompute> recompute, std::optional<int> layers) {
            TrainingRequest r = Llama405OnGb200(recompute, layers);
            r.parallelism->data = 4;
            r.parallelism->zero_stage = 1;
            return EstimateTraining(r, Gb200s(256));
        };
        auto full = fixed(Recompute::kFull, std::nullopt);
        auto one = fixed(Recompute::kFull, 1);
        auto none = fixed(Recompute::kNone, std::nullopt);
        REQUIRE(full.ok());
        REQUIRE(one.ok());
        REQUIRE(none.ok());
        CHECK(full.value().parallelism.recompute_layers == 2);  // every layer of the chunk
        CHECK(one.value().parallelism.recompute_layers == 1);
        CHECK(none.value().parallelism.recompute_layers == 0);
        // Half the layers keep everything, half their input only: the stored activations lie
        // halfway between the two modes (the layer being recomputed is held in both).
        const double a_full = full.value().memory.activations_gb;
        const double a_none = none.value().memory.activations_gb;
        const double a_one = one.value().memory.activations_gb;
        CHECK(a_one > a_full);
        CHECK(a_one < a_none);
        // A recomputed layer adds a forward: half the layers, about half of full's extra time.
        const double t_full = full.value().step_time_s;
        const double t_one = one.value().step_time_s;
        const double t_none = none.value().step_time_s;
        CHECK(t_one < t_full);
        CHECK(t_one > t_none);
        CHECK(t_full - t_one == doctest::Approx(t_one - t_none).epsilon(0.1));
        // The per-layer echo is the same mean, not the full-recompute figure.
        auto echo = [](const TrainingEstimate& e) {
            return gpucost::testing::AssumptionValue(e.assumptions,
                                                     "activation_bytes_per_layer_gb");
        };
        CHECK(echo(one.value()) == doctest::Approx((echo(full.value()) + echo(none.value())) / 2));
    }

    TEST_CASE("the search recomputes the fewest layers per chunk that make the layout fit") {
        // Keeping every activation does not fit 186 GB here; before, the search could only
        // recompute every layer (-21.8 % against the published 208,128 tokens/s).
        auto searched = EstimateTraining(Llama405OnGb200(std::nullopt, std::nullopt), Gb200s(256));
        auto full = EstimateTraining(Llama405OnGb200(Recompute::kFull, std::nullopt), Gb200s(256));
        REQUIRE(searched.ok());
        REQUIRE(full.ok());
        const TrainingEstimate& e = searched.value();
        CHECK(e.fits_in_memory);
        CHECK(e.parallelism.recompute == Recompute::kFull);
        CHECK(e.parallelism.recompute_layers == 1);
        CHECK(e.tokens_per_second > 1.05 * full.value().tokens_per_second);
    }

    TEST_CASE("recompute_layers is refused with a recompute mode other than full") {
        auto r = EstimateTraining(Llama405OnGb200(Recompute::kSelective, 1), Gb200s(256));
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().code == ErrorCode::kInvalidArgument);
        CHECK(r.error().field == "/parallelism/recompute_layers");
        auto zero = EstimateTraining(Llama405OnGb200(std::nullopt, 0), Gb200s(256));
        REQUIRE_FALSE(zero.ok());
        CHECK(zero.error().field == "/parallelism/recompute_layers");
    }

    TEST_CASE("an FP8 run stores its linear layers' inputs quantised") {
        TrainingRequest fp8 = Llama405OnGb200(Recompute::kSelective, std::nullopt);
        TrainingRequest bf16 = fp8;
        bf16.precision = Precision::kBf16;
        ClusterSpec roomy = Gb200s(256);
        roomy.accelerator.memory_gb = 1000;  // the same layout fits at both precisions
        const auto low = EstimateTraining(fp8, roomy);
        const auto high = EstimateTraining(bf16, roomy);
        REQUIRE(low.ok());
        REQUIRE(high.ok());
        // Of Llama 3.1 405B's 31.75 sbh per layer the QKV and fc1 inputs (4h) and the SwiGLU
        // output (6.5h) are linear inputs, stored at 1 + 1/32 bytes; the attention output
        // gains its quantised copy (2h -> 3.03h): 27.7 sbh, 0.87 of the BF16 count (with the
        // logits, which stay fp32, a little more).
        const double ratio = low.value().memory.activations_gb / high.value().memory.activations_gb;
        CHECK(ratio < 0.9);
        CHECK(ratio > 0.6);
        CHECK(AssumptionValue(low.value().assumptions, "linear_input_bytes_per_element") ==
              doctest::Approx(1 + kFp8ActivationScaleBytesPerElement));
    }

    TEST_CASE("NVIDIA's DeepSeek-V3 layout on GB200 fits with the recipe's mla_up_proj only") {
        // Each token's eight routed copies and their expert outputs are stored per MoE layer
        // (0.87 GB a micro-batch): with the attention core alone recomputed the layout needs
        // more than a GB200's 186 GB; the published recipe recomputes mla_up_proj.
        const auto core = EstimateTraining(DeepSeekV3OnGb200(std::nullopt), Gb200s(256));
        REQUIRE_FALSE(core.ok());
        CHECK(core.error().message.find("does not fit") != std::string::npos);
        const auto mla = EstimateTraining(DeepSeekV3OnGb200(Modules({RecomputeModule::kMlaUpProj})),
                                          Gb200s(256));
        REQUIRE(mla.ok());
        CHECK(mla.value().fits_in_memory);
        CHECK(mla.value().memory.total_gb > 150);
    }

    TEST_CASE("recompute modules free their activations and add their forward pass") {
        // GB300's 288 GB, so that every variant below fits the same layout.
        ClusterSpec gb300 = Gb200s(256);
        gb300.accelerator.memory_gb = 288;
        const auto core = EstimateTraining(DeepSeekV3OnGb200(std::nullopt), gb300);
        const auto listed =
            EstimateTraining(DeepSeekV3OnGb200(Modules({RecomputeModule::kCoreAttn})), gb300);
        const auto mla =
            EstimateTraining(DeepSeekV3OnGb200(Modules({RecomputeModule::kMlaUpProj})), gb300);
        const auto act = EstimateTraining(
            DeepSeekV3OnGb200(Modules({RecomputeModule::kCoreAttn, RecomputeModule::kMoeAct})),
            gb300);
        REQUIRE(core.ok());
        REQUIRE(listed.ok());
        REQUIRE(mla.ok());
        REQUIRE(act.ok());
        // Naming core_attn is today's selective recompute, bit for bit.
        CHECK(listed.value().step_time_s == core.value().step_time_s);
        CHECK(listed.value().memory.activations_gb == core.value().memory.activations_gb);
        CHECK(core.value().parallelism.recompute_modules.Names() ==
              std::vector<std::string>{"core_attn"});
        // mla_up_proj stores less and runs the up-projection GEMMs again.
        CHECK(mla.value().memory.activations_gb < core.value().memory.activations_gb);
        CHECK(mla.value().parallelism.recompute_modules.Names() ==
              std::vector<std::string>{"mla_up_proj"});
        const double up_s =
            AssumptionValue(mla.value().assumptions, "recompute_mla_up_proj_forward_s_per_layer");
        CHECK(up_s > 0);
        CHECK(AssumptionValue(mla.value().assumptions, "recompute_mla_up_proj_freed_gb_per_layer") >
              0);
        // moe_act adds its activation pass to core_attn's.
        CHECK(act.value().step_time_s > core.value().step_time_s);
        CHECK(act.value().memory.activations_gb < core.value().memory.activations_gb);
        CHECK(AssumptionValue(act.value().assumptions, "recompute_moe_act_forward_s_per_layer") >
              0);
    }
}
