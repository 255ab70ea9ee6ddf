#include <doctest/doctest.h>

#include "pricing/estimate/cluster.hpp"
#include "pricing/estimate/inference.hpp"
#include "pricing/estimate/training.hpp"
#include "tests/pricing/estimate/estimate_test_support.hpp"

using namespace gpucost::pricing::estimate;
using gpucost::pricing::Precision;

namespace {

ModelSpec Llama65() {
    ModelSpec s;
    s.params_b = 65.2;
    s.layers = 80;
    s.hidden_size = 8192;
    s.attention_heads = 64;
    s.ffn_hidden_size = 22016;
    s.gated_mlp = true;
    s.vocab_size = 32000;
    s.seq_len = 2048;
    return s;
}

ClusterSpec Cluster(int count, gpucost::pricing::Accelerator a = gpucost::testing::A100Sxm80()) {
    ClusterSpec c;
    c.accelerator = std::move(a);
    c.accelerator_count = count;
    return c;
}

}  // namespace

TEST_SUITE("estimate_training") {
    TEST_CASE("model FLOPs per token are 6N plus the 12*L*h*s attention term (PaLM)") {
        auto m = DeriveModel(Llama65());
        REQUIRE(m.ok());
        double n = m.value().ActiveNonEmbeddingParams() + 32000.0 * 8192;
        double expected = 6.0 * n + 12.0 * 80 * 8192 * 2048;
        CHECK(ModelFlopsPerToken(m.value()) == doctest::Approx(expected));
        // Within a few percent of 6ND with the full parameter count at s = 2048.
        CHECK(ModelFlopsPerToken(m.value()) / (6.0 * 65.2e9) == doctest::Approx(1.05).epsilon(0.03));
    }

    TEST_CASE("op-level FLOPs add up to 6N + 12Lhs per token; full recompute adds one forward") {
        TrainingRequest r;
        r.model = Llama65();
        r.tokens_b = 1400;
        ParallelismRequest p;
        p.tensor = 8;
        p.pipeline = 4;
        p.data = 64;
        p.zero_stage = 1;
        p.micro_batch_size = 1;
        p.recompute = Recompute::kNone;
        r.parallelism = p;
        auto none = EstimateTraining(r, Cluster(2048));
        REQUIRE(none.ok());
        // The step's FLOPs, summed op by op (GEMMs, attention, logits), equal the model FLOPs
        // of the analytic 6N + 12 L h s count: hardware and model utilisation coincide.
        CHECK(none.value().hfu == doctest::Approx(none.value().mfu).epsilon(1e-9));
        p.recompute = Recompute::kFull;
        r.parallelism = p;
        auto full = EstimateTraining(r, Cluster(2048));
        REQUIRE(full.ok());
        // One extra forward of every layer: 4/3 of the layers' FLOPs, the logits not repeated.
        double ratio = full.value().hfu / full.value().mfu;
        CHECK(ratio > 1.30);
        CHECK(ratio < 4.0 / 3.0);
    }

    TEST_CASE("Korthikanti activation formulas per layer") {
        ModelSpec s;
        s.layers = 96;
        s.hidden_size = 12288;
        s.attention_heads = 96;
        s.seq_len = 2048;
        auto m = DeriveModel(s);
        REQUIRE(m.ok());
        const double sbh = 2048.0 * 1 * 12288;
        const double as_h = 96.0 * 2048 / 12288;
        CHECK(ActivationBytesPerLayer(m.value(), 1, 1, false, Recompute::kNone, false) ==
              doctest::Approx(sbh * (34 + 5 * as_h)));
        CHECK(ActivationBytesPerLayer(m.value(), 1, 8, false, Recompute::kNone, false) ==
              doctest::Approx(sbh * (10 + 24.0 / 8 + 5 * as_h / 8)));
        CHECK(ActivationBytesPerLayer(m.value(), 1, 8, true, Recompute::kSelective, false) ==
              doctest::Approx(34 * sbh / 8));
        CHECK(ActivationBytesPerLayer(m.value(), 1, 8, true, Recompute::kNone, true) ==
              doctest::Approx(34 * sbh / 8));
        CHECK(ActivationBytesPerLayer(m.value(), 1, 8, false, Recompute::kFull, false) ==
              doctest::Approx(2 * sbh));
    }

    TEST_CASE("pipeline bubble is (p-1)/(m*v)") {
        CHECK(PipelineBubbleFraction(1, 8, 1) == 0);
        CHECK(PipelineBubbleFraction(8, 64, 1) == doctest::Approx(7.0 / 64));
        CHECK(PipelineBubbleFraction(8, 64, 2) == doctest::Approx(7.0 / 128));
    }

    TEST_CASE("the issue's LLaMA-65B example on 2048 A100s lands near the published 21 days") {
        TrainingRequest r;
        r.model = Llama65();
        r.tokens_b = 1400;
        r.global_batch_tokens = 4194304;
        ParallelismRequest p;
        p.tensor = 8;
        p.pipeline = 4;
        p.data = 64;
        p.zero_stage = 1;
        p.recompute = Recompute::kSelective;
        r.parallelism = p;
        auto e = EstimateTraining(r, Cluster(2048));
        REQUIRE(e.ok());
        const auto& v = e.value();
        CHECK(v.parallelism.tensor == 8);
        CHECK(v.parallelism.pipeline == 4);
        CHECK(v.fits_in_memory);
        // LLaMA paper: ~21 days at 380 tokens/s/GPU; the ideal estimate is within 20 %
        // (17.9 days at this commit, 442 tokens/s/GPU).
        CHECK(v.ideal_wall_clock_hours / 24 == doctest::Approx(21).epsilon(0.2));
        CHECK(v.wall_clock_hours == doctest::Approx(v.ideal_wall_clock_hours / kDefaultGoodput));
        CHECK(v.accelerator_hours == doctest::Approx(v.wall_clock_hours * 2048));
        CHECK(v.mfu > 0.2);
        CHECK(v.mfu < 0.8);
        CHECK(v.hfu >= v.mfu);
        const auto& b = v.breakdown;
        CHECK(b.compute_s + b.memory_bound_s + b.communication_s + b.bubble_s + b.optimizer_s ==
              doctest::Approx(v.step_time_s));
        CHECK(b.bubble_s > 0);
        CHECK(v.memory.total_gb == doctest::Approx(v.memory_per_accelerator_gb));
        CHECK(!v.assumptions.empty());
    }

    TEST_CASE("without a layout the search picks one that fits and names a runner-up") {
        TrainingRequest r;
        r.model = Llama65();
        r.tokens_b = 100;
        auto e = EstimateTraining(r, Cluster(256));
        REQUIRE(e.ok());
        const auto& v = e.value();
        CHECK(v.layout_searched);
        CHECK(v.fits_in_memory);
        CHECK(v.parallelism.tensor * v.parallelism.pipeline * v.parallelism.data == 256);
        REQUIRE(v.runner_up.has_value());
        CHECK(v.runner_up->step_time_s >= v.step_time_s);
        CHECK(v.layouts_considered > 10);
    }

    TEST_CASE("skipping the assumptions list changes no figure of the estimate") {
        TrainingRequest r;
        r.model = Llama65();
        r.tokens_b = 1400;
        auto full = EstimateTraining(r, Cluster(256));
        r.with_assumptions = false;
        auto lean = EstimateTraining(r, Cluster(256));
        REQUIRE(full.ok());
        REQUIRE(lean.ok());
        CHECK_FALSE(full.value().assumptions.empty());
        CHECK(lean.value().assumptions.empty());
        CHECK(lean.value().step_time_s == full.value().step_time_s);
        CHECK(lean.value().memory_per_accelerator_gb == full.value().memory_per_accelerator_gb);
        CHECK(lean.value().parallelism.tensor == full.value().parallelism.tensor);
        CHECK(lean.value().parallelism.pipeline == full.value().parallelism.pipeline);
        CHECK(lean.value().parallelism.micro_batch_size == full.value().parallelism.micro_batch_size);
        CHECK(lean.value().layouts_considered == full.value().layouts_considered);
    }

    TEST_CASE("a single-GPU VM without a published network is not treated as a fabric node") {
        auto h100 = gpucost::testing::H100Sxm();
        CHECK(DefaultScaleOutGbitPerSPerNode(h100, 8) == 3200);
        CHECK(DefaultScaleOutGbitPerSPerNode(h100, 1) == kPartialNodeScaleOutGbitPerS);
        TrainingRequest r;
        r.model = Llama65();
        r.model.params_b = 7;
        r.model.layers = 32;
        r.model.hidden_size = 4096;
        r.model.ffn_hidden_size.reset();
        r.model.attention_heads = 32;
        r.tokens_b = 100;
        ClusterSpec hgx = Cluster(64, h100);
        hgx.accelerators_per_node = 8;
        ClusterSpec vms = Cluster(64, h100);
        vms.accelerators_per_node = 1;
        auto fabric = EstimateTraining(r, hgx);
        auto ethernet = EstimateTraining(r, vms);
        REQUIRE(fabric.ok());
        REQUIRE(ethernet.ok());
        CHECK(ethernet.value().step_time_s > fabric.value().step_time_s);
    }

    TEST_CASE("more accelerators finish sooner; a slower interconnect never speeds things up") {
        TrainingRequest r;
        r.model = Llama65();
        r.tokens_b = 100;
        auto a = EstimateTraining(r, Cluster(256));
        auto b = EstimateTraining(r, Cluster(1024));
        REQUIRE(a.ok());
        REQUIRE(b.ok());
        CHECK(b.value().wall_clock_hours < a.value().wall_clock_hours);
        ClusterSpec slow = Cluster(256);
        slow.scale_out_gbit_per_s_per_node = 100;
        auto c = EstimateTraining(r, slow);
        REQUIRE(c.ok());
        CHECK(c.value().step_time_s >= a.value().step_time_s * 0.999);
    }

    TEST_CASE("impossible requests are errors that name the field") {
        TrainingRequest r;
        r.model = Llama65();
        r.tokens_b = 0;
        CHECK(EstimateTraining(r, Cluster(64)).error().field == "/tokens_b");
        r.tokens_b = 10;
        ParallelismRequest p;
        p.tensor = 8;
        p.pipeline = 2;
        p.data = 2;
        r.parallelism = p;
        auto mismatch = EstimateTraining(r, Cluster(64));
        REQUIRE(!mismatch.ok());
        CHECK(mismatch.error().field == "/parallelism");
        CHECK(mismatch.error().message.find("64") != std::string::npos);
        r.parallelism.reset();
        auto no_fit = EstimateTraining(r, Cluster(1));
        REQUIRE(!no_fit.ok());
        CHECK(no_fit.error().field == "/hardware/count");
        CHECK(no_fit.error().message.find("accelerators") != std::string::npos);
        r.precision = Precision::kFp8;
        auto fp8 = EstimateTraining(r, Cluster(64));
        REQUIRE(!fp8.ok());
        CHECK(fp8.error().field == "/precision");
    }

    TEST_CASE("a fixed layout that does not fit is returned with its shortfall") {
        TrainingRequest r;
        r.model = Llama65();
        r.tokens_b = 10;
        ParallelismRequest p;
        p.tensor = 1;
        p.pipeline = 1;
        p.data = 8;
        p.zero_stage = 0;
        p.recompute = Recompute::kNone;
        p.micro_batch_size = 1;
        r.parallelism = p;
        auto e = EstimateTraining(r, Cluster(8));
        REQUIRE(e.ok());
        CHECK(!e.value().fits_in_memory);
        CHECK(e.value().memory_headroom_gb < -500);
        // 65.2 B params x (2 + 2 + 12) bytes, unsharded.
        CHECK(e.value().memory.weights_gb + e.value().memory.gradients_gb + e.value().memory.optimizer_gb ==
              doctest::Approx(65.2 * 16).epsilon(0.01));
    }

    TEST_CASE("ZeRO stages shard optimizer, then gradients, then weights") {
        TrainingRequest r;
        r.model = Llama65();
        r.tokens_b = 10;
        ParallelismRequest p;
        p.tensor = 8;
        p.pipeline = 1;
        p.data = 8;
        p.recompute = Recompute::kFull;
        p.micro_batch_size = 1;
        double prev = 1e18;
        for (int z = 0; z <= 3; ++z) {
            p.zero_stage = z;
            r.parallelism = p;
            auto e = EstimateTraining(r, Cluster(64));
            REQUIRE(e.ok());
            double states = e.value().memory.weights_gb + e.value().memory.gradients_gb +
                            e.value().memory.optimizer_gb;
            CHECK(states < prev);
            prev = states;
        }
    }

    TEST_CASE("inference: decode is bandwidth bound and TP shortens it") {
        InferenceRequest r;
        r.model.params_b = 13;
        r.model.layers = 40;
        r.model.hidden_size = 5120;
        r.precision = Precision::kFp16;
        r.batch_size = 1;
        r.input_tokens = 512;
        r.output_tokens = 128;
        r.tensor_parallel = 1;
        auto one = EstimateInference(r, Cluster(1));
        REQUIRE(one.ok());
        CHECK(one.value().decode_bound == "memory");
        CHECK(one.value().prefill_bound == "compute");
        // Weights (26 GB) over 2039 GB/s is the floor of one decode step; a serving engine
        // streams them at kServingBandwidthEfficiency of that, plus per-kernel overheads.
        const double floor_ms = 26e9 / 2039e9 * 1e3;
        CHECK(one.value().inter_token_latency_ms > floor_ms / kServingBandwidthEfficiency);
        CHECK(one.value().inter_token_latency_ms < floor_ms / kServingBandwidthEfficiency * 1.2);
        r.tensor_parallel = 2;
        auto two = EstimateInference(r, Cluster(2));
        REQUIRE(two.ok());
        CHECK(two.value().inter_token_latency_ms < one.value().inter_token_latency_ms);
        CHECK(one.value().fits_in_memory);
        CHECK(one.value().max_batch_size > 1);
        r.batch_size = one.value().max_batch_size + 1;
        r.tensor_parallel = 1;
        auto over = EstimateInference(r, Cluster(1));
        REQUIRE(over.ok());
        CHECK(!over.value().fits_in_memory);
        r.input_tokens = 0;
        CHECK(EstimateInference(r, Cluster(1)).error().field == "/input_tokens");
    }
}
