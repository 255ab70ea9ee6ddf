#include <doctest/doctest.h>

#include <chrono>
#include <utility>
#include <vector>

#include "pricing/estimate/cluster.hpp"
#include "pricing/estimate/inference.hpp"
#include "pricing/estimate/moe.hpp"
#include "pricing/estimate/training.hpp"
#include "tests/pricing/estimate/estimate_test_support.hpp"
#include "tests/support/published_models.hpp"

using namespace gpucost::pricing::estimate;
using gpucost::pricing::Precision;
using gpucost::testing::AssumptionSource;
using gpucost::testing::AssumptionValue;
using gpucost::testing::Llama405;

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

// Llama-2-7B (HF config: 32 x 4096, 32 heads, SwiGLU 11008, vocab 32000).
ModelSpec Llama7() {
    ModelSpec s;
    s.params_b = 6.74;
    s.layers = 32;
    s.hidden_size = 4096;
    s.attention_heads = 32;
    s.ffn_hidden_size = 11008;
    s.gated_mlp = true;
    s.vocab_size = 32000;
    s.seq_len = 512;
    return s;
}

// DeepSeek-V3 as far as the spec's classic fields go (61 x 7168, 128 heads, 256 experts of
// width 2048, top-8, vocab 129280).
ModelSpec DeepSeekV3() {
    ModelSpec s;
    s.params_b = 671;
    s.active_params_b = 37;
    s.layers = 61;
    s.hidden_size = 7168;
    s.attention_heads = 128;
    s.ffn_hidden_size = 2048;
    s.gated_mlp = true;
    s.experts = 256;
    s.experts_per_token = 8;
    s.vocab_size = 129280;
    s.seq_len = 4096;
    return s;
}

// DeepSeek-V3's pre-training run as its report gives it (arXiv 2412.19437: FP8, 15,360 x
// 4,096-token batches), with the report's layout (TP 1, PP 16, EP 64, ZeRO 1) as the model's
// recipe fills it in for a request without parallelism.
TrainingRequest DeepSeekReportRun(ModelSpec model) {
    TrainingRequest r;
    r.model = std::move(model);
    r.tokens_b = 14800;
    r.precision = Precision::kFp8;
    r.global_batch_tokens = 15360.0 * 4096;
    AppliedRecipe recipe;
    recipe.model_id = "deepseek-v3";
    recipe.source = "the report";
    ParallelismRequest layout;
    layout.tensor = 1;
    layout.pipeline = 16;
    layout.expert = 64;
    layout.zero_stage = 1;
    recipe.layout = layout;
    r.recipe = recipe;
    return r;
}

ParallelismRequest Fixed(int t, int p, int d, int z, int ep, Recompute rc = Recompute::kFull) {
    ParallelismRequest pr;
    pr.tensor = t;
    pr.pipeline = p;
    pr.data = d;
    pr.zero_stage = z;
    pr.expert = ep;
    pr.recompute = rc;
    pr.micro_batch_size = 1;
    return pr;
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
        CHECK(ModelFlopsPerToken(m.value()) / (6.0 * 65.2e9) ==
              doctest::Approx(1.05).epsilon(0.03));
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

    // A batch of 1,000 tokens on 8 data-parallel replicas cannot be: each takes at least one
    // 512-token sequence. The answer ran 8 x 512 tokens per step while echoing the 1,000
    // asked for, with no word of the change.
    TEST_CASE("a step whose tokens differ from the batch asked for says so") {
        TrainingRequest r;
        r.model = Llama7();
        r.tokens_b = 1;
        r.parallelism = Fixed(1, 1, 8, 1, 1);
        r.global_batch_tokens = 1000;
        auto changed = EstimateTraining(r, Cluster(8));
        REQUIRE(changed.ok());
        CHECK(changed.value().tokens_per_step == 8 * 512);
        REQUIRE(changed.value().model.warnings.size() == 1);
        CHECK(changed.value().model.warnings[0].field == "/global_batch_tokens");
        CHECK(changed.value().model.warnings[0].detail.find(
                  "global_batch_tokens 1000 tokens became 4096 tokens per step") !=
              std::string::npos);
        r.global_batch_tokens = 8 * 512;
        auto kept = EstimateTraining(r, Cluster(8));
        REQUIRE(kept.ok());
        CHECK(kept.value().model.warnings.empty());
        r.global_batch_tokens.reset();  // the default 4M tokens: 8192 sequences, 1024 per replica
        CHECK(EstimateTraining(r, Cluster(8)).value().model.warnings.empty());
    }

    TEST_CASE("a sequence longer than the model's published context is named, not refused") {
        TrainingRequest r;
        r.model = Llama7();
        r.model.max_context = 4096;
        r.model.max_context_source = "test library";
        r.model.seq_len = 8192;
        r.tokens_b = 1;
        r.parallelism = Fixed(1, 1, 8, 1, 1);
        auto e = EstimateTraining(r, Cluster(8));
        REQUIRE(e.ok());
        bool named = false;
        for (const auto& w : e.value().model.warnings) {
            named = named || (w.field == "/model/seq_len" &&
                              w.detail.find("4096 tokens (test library)") != std::string::npos);
        }
        CHECK(named);
        r.model.seq_len = 4096;
        auto within = EstimateTraining(r, Cluster(8));
        REQUIRE(within.ok());
        for (const auto& w : within.value().model.warnings) {
            CHECK(w.detail.find("context length") == std::string::npos);
        }
    }

    // The router's logits were missing from the op-level count while model FLOPs held its
    // weights: every MoE model showed HFU below MFU without recompute (0.3239 vs 0.3248).
    TEST_CASE("for an MoE model too, op-level FLOPs equal model FLOPs without recompute") {
        TrainingRequest r;
        r.model = DeepSeekV3();
        r.tokens_b = 100;
        ParallelismRequest p = Fixed(8, 8, 32, 1, 32, Recompute::kNone);
        r.parallelism = p;
        auto e = EstimateTraining(r, Cluster(2048, gpucost::testing::H100Sxm()));
        REQUIRE(e.ok());
        CHECK(e.value().hfu == doctest::Approx(e.value().mfu).epsilon(1e-9));
    }

    // Gemma 3, gpt-oss and Mistral attend to a short window in most layers; training counted
    // every layer at the whole context (Gemma 3 27B at 131k tokens: about 2.5x the FLOPs).
    TEST_CASE("sliding-window layers count their window in model and hardware FLOPs") {
        TrainingRequest r;
        r.model = Llama7();
        r.model.seq_len = 8192;
        r.tokens_b = 10;
        r.parallelism = Fixed(1, 1, 64, 1, 1, Recompute::kNone);
        auto full = EstimateTraining(r, Cluster(64, gpucost::testing::H100Sxm()));
        REQUIRE(full.ok());
        r.model.sliding_window = 1024;
        r.model.sliding_window_layers = 16;
        auto windowed = EstimateTraining(r, Cluster(64, gpucost::testing::H100Sxm()));
        REQUIRE(windowed.ok());
        // 16 layers attend to 2w - w^2/s = 1920 keys instead of 8192 (PaLM convention), over
        // score and value widths of 4096 each, forward and backward (x6).
        const double saved = 6.0 * 16 * (8192 - (2 * 1024 - 1024.0 * 1024 / 8192)) * 8192;
        CHECK(full.value().model_flops_per_token - windowed.value().model_flops_per_token ==
              doctest::Approx(saved));
        CHECK(windowed.value().hfu == doctest::Approx(windowed.value().mfu).epsilon(1e-9));
        CHECK(windowed.value().step_time_s < full.value().step_time_s);
        r.model.sliding_window_layers = 0;  // a window in no layer: none (not "every layer")
        auto none = EstimateTraining(r, Cluster(64, gpucost::testing::H100Sxm()));
        REQUIRE(none.ok());
        CHECK(none.value().model_flops_per_token == full.value().model_flops_per_token);
        r.model.sliding_window_layers.reset();  // given a window alone, every layer uses it
        auto every = EstimateTraining(r, Cluster(64, gpucost::testing::H100Sxm()));
        REQUIRE(every.ok());
        CHECK(every.value().model_flops_per_token ==
              doctest::Approx(full.value().model_flops_per_token - 2 * saved));
        r.model.sliding_window = 8192;  // a window as long as the sequence changes nothing
        auto whole = EstimateTraining(r, Cluster(64, gpucost::testing::H100Sxm()));
        REQUIRE(whole.ok());
        CHECK(whole.value().model_flops_per_token == full.value().model_flops_per_token);
    }

    // A small model at half a million tokens of context: attention is nearly all of the
    // counted FLOPs, and counted whole (PaLM) it read mfu 0.99 with nothing said.
    TEST_CASE(
        "utilisation past what the GEMMs allow, from counting causal attention whole, is "
        "explained") {
        TrainingRequest r;
        ModelSpec tiny;
        tiny.layers = 16;
        tiny.hidden_size = 1024;
        tiny.attention_heads = 8;
        tiny.seq_len = 524288;
        r.model = tiny;
        r.tokens_b = 10;
        auto e = EstimateTraining(r, Cluster(64));
        REQUIRE(e.ok());
        REQUIRE(e.value().hfu > 0.7);
        REQUIRE(e.value().model.warnings.size() == 1);
        const auto& w = e.value().model.warnings[0];
        CHECK(w.field == "/model/seq_len");
        CHECK(w.detail.find("count causal attention whole") != std::string::npos);
        const auto used = w.detail.substr(w.detail.rfind("uses ") + 5, 5);
        CHECK(std::stod(used) < 0.7);  // below the GEMM asymptote: work that can run
        TrainingRequest usual;
        usual.model = Llama7();
        usual.tokens_b = 10;
        CHECK(EstimateTraining(usual, Cluster(64)).value().model.warnings.empty());
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
        // FlashAttention keeps its fp32 softmax statistics (4 bytes per query and head).
        CHECK(ActivationBytesPerLayer(m.value(), 1, 8, true, Recompute::kNone, true) ==
              doctest::Approx(34 * sbh / 8 + 4.0 * 96 / 8 * 2048));
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
        CHECK(lean.value().parallelism.micro_batch_size ==
              full.value().parallelism.micro_batch_size);
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
        CHECK(no_fit.error().field == "/hardware/total_accelerators");
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
        CHECK(e.value().memory.weights_gb + e.value().memory.gradients_gb +
                  e.value().memory.optimizer_gb ==
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

    TEST_CASE(
        "MoE: Adam state summed over all accelerators is 12 bytes per parameter for any layout") {
        TrainingRequest r;
        r.model = DeepSeekV3();
        r.tokens_b = 100;
        r.global_batch_tokens = 4096.0 * 4096;
        struct L {
            int t, p, d, z, ep;
        };
        for (L l : {L{8, 1, 8, 1, 8}, L{1, 1, 64, 1, 64}, L{1, 16, 4, 2, 4}, L{2, 4, 8, 3, 2},
                    L{4, 2, 8, 1, 1}, L{1, 8, 8, 3, 8}}) {
            CAPTURE(l.t);
            CAPTURE(l.p);
            CAPTURE(l.ep);
            r.parallelism = Fixed(l.t, l.p, l.d, l.z, l.ep);
            auto e = EstimateTraining(r, Cluster(64, gpucost::testing::H100Sxm()));
            REQUIRE(e.ok());
            CHECK(e.value().parallelism.expert == l.ep);
            const double n = 64;
            const double params_b = e.value().model.params / 1e9;  // 671 as given
            CHECK(params_b == doctest::Approx(671).epsilon(0.1));
            CHECK(e.value().memory.optimizer_gb * n == doctest::Approx(12.0 * params_b));
            if (l.z >= 2)
                CHECK(e.value().memory.gradients_gb * n == doctest::Approx(2.0 * params_b));
            if (l.z >= 3) CHECK(e.value().memory.weights_gb * n == doctest::Approx(2.0 * params_b));
            // DeepSeek-V3 needs about 8 TB of Adam state: 64 H100s cannot hold it.
            CHECK_FALSE(e.value().fits_in_memory);
        }
    }

    TEST_CASE("DeepSeek-V3 (671B) does not fit on 64 H100 and the search says how many it needs") {
        TrainingRequest r;
        r.model = DeepSeekV3();
        r.tokens_b = 100;
        auto e = EstimateTraining(r, Cluster(64, gpucost::testing::H100Sxm()));
        REQUIRE_FALSE(e.ok());
        CHECK(e.error().field == "/hardware/total_accelerators");
        CHECK(e.error().message.find("does not fit") != std::string::npos);
    }

    TEST_CASE("the expert-parallel degree is searched and a fixed one is honoured") {
        TrainingRequest r;
        r.model = DeepSeekV3();
        r.tokens_b = 100;
        r.precision = Precision::kFp8;
        r.global_batch_tokens = 2048.0 * 4096;
        auto searched = EstimateTraining(r, Cluster(1024, gpucost::testing::H100Sxm()));
        REQUIRE(searched.ok());
        const auto& l = searched.value().parallelism;
        CHECK(l.expert > 1);
        CHECK(l.data % l.expert == 0);
        CHECK(256 % l.expert == 0);
        r.parallelism = Fixed(1, 16, 64, 1, 8);
        r.parallelism->expert = 6;
        auto bad = EstimateTraining(r, Cluster(1024, gpucost::testing::H100Sxm()));
        REQUIRE_FALSE(bad.ok());
        CHECK(bad.error().field == "/parallelism/expert");
    }

    TEST_CASE("Megatron-Core's expert layouts: expert groups over tensor x data ranks") {
        // NVIDIA's published DeepSeek-V3 layout on 1,024 H100: TP 2, PP 16, EP 64 (data 32),
        // expert-tensor 1 (Megatron-Core forms the 64 expert ranks from 2 tensor x 32 data).
        TrainingRequest r;
        r.model = DeepSeekV3();
        r.tokens_b = 1000;
        r.global_batch_tokens = 8192.0 * 4096;
        ParallelismRequest pr;
        pr.tensor = 2;
        pr.pipeline = 16;
        pr.expert = 64;
        pr.micro_batch_size = 1;
        r.parallelism = pr;
        auto folded = EstimateTraining(r, Cluster(1024, gpucost::testing::H100Sxm()));
        REQUIRE(folded.ok());
        const ParallelLayout& l = folded.value().parallelism;
        CHECK(l.data == 32);
        CHECK(l.expert == 64);
        CHECK(ExpertTensorDegree(l) == 1);
        CHECK(ExpertDataDegree(l) == 1);
        // The routed experts are split over expert x pipeline ranks only: 1/1024 of them each.
        CHECK(folded.value().memory.weights_gb > 0);
        // An expert-tensor degree that the tensor x data ranks cannot tile is refused.
        r.parallelism->expert_tensor = 2;
        auto bad = EstimateTraining(r, Cluster(1024, gpucost::testing::H100Sxm()));
        REQUIRE_FALSE(bad.ok());
        CHECK(bad.error().field == "/parallelism/expert_tensor");
        // The classic layout (expert divides data) keeps the tensor degree for the experts.
        r.parallelism->expert_tensor.reset();
        r.parallelism->expert = 8;
        auto classic = EstimateTraining(r, Cluster(1024, gpucost::testing::H100Sxm()));
        REQUIRE(classic.ok());
        CHECK(ExpertTensorDegree(classic.value().parallelism) == 2);
        // The search tries folded layouts too: on 64 accelerators at tensor 8 the expert degree
        // may exceed the data degree of 8.
        ParallelismRequest wide;
        wide.tensor = 8;
        wide.pipeline = 1;
        wide.zero_stage = 1;
        r.parallelism = wide;
        r.model.layers = 4;
        r.global_batch_tokens = 64.0 * 4096;
        auto searched = EstimateTraining(r, Cluster(64, gpucost::testing::H100Sxm()));
        r.parallelism->expert = 64;
        auto wide_ep = EstimateTraining(r, Cluster(64, gpucost::testing::H100Sxm()));
        REQUIRE(searched.ok());
        REQUIRE(wide_ep.ok());
        CHECK(wide_ep.value().parallelism.expert == 64);
        CHECK(ExpertTensorDegree(wide_ep.value().parallelism) == 1);
        CHECK(searched.value().step_time_s <= wide_ep.value().step_time_s * (1 + 1e-9));
    }

    TEST_CASE("an MoE layer as Megatron-Core runs it: routing, grouped GEMMs, host and links") {
        // NVIDIA's published DeepSeek-V3 run on 512 GB200 (dgxc-benchmarking, NeMo 25.04, BF16:
        // TP 2, PP 4, EP 64, ETP 1, 4096 x 4096 tokens a step): 248.5 model TFLOP/s per GPU.
        // Timing the expert layers as dense GEMMs gave 826; the permute, router, tile and host
        // costs of Megatron-Core's dispatcher bring it within the band below.
        TrainingRequest r;
        r.model = DeepSeekV3();
        r.tokens_b = 1000;
        r.global_batch_tokens = 4096.0 * 4096;
        ParallelismRequest pr;
        pr.tensor = 2;
        pr.pipeline = 4;
        pr.expert = 64;
        pr.expert_tensor = 1;
        pr.micro_batch_size = 1;
        r.parallelism = pr;
        auto gb200 = EstimateTraining(r, Cluster(512, gpucost::testing::Gb200()));
        REQUIRE(gb200.ok());
        const double published_tflops = 248.5;
        const double tflops = gb200.value().achieved_tflops_per_accelerator;
        CHECK(tflops > 0.8 * published_tflops);
        CHECK(tflops < 2.2 * published_tflops);
        const auto& as = gb200.value().assumptions;
        // T_r 2048 tokens per rank x top-8 x EP 64 / 256 experts.
        CHECK(AssumptionValue(as, "moe_tokens_per_local_expert") == doctest::Approx(4096));
        CHECK(AssumptionValue(as, "grouped_gemm_tile_fill") == doctest::Approx(1.0));
        CHECK(AssumptionValue(as, "moe_load_imbalance") == doctest::Approx(1.0));
        CHECK(AssumptionValue(as, "moe_permute_bytes_per_layer_pass") > 0);
        CHECK(AssumptionValue(as, "moe_layer_host_exposed_s_per_pass") ==
              doctest::Approx(kMoeLayerHostExposedSecondsPerPass));
        // 64 expert ranks inside one NVL72 domain: nothing crosses the network.
        CHECK(AssumptionValue(as, "expert_a2a_scale_out_share") == doctest::Approx(0.0));

        // On 8-GPU H100 nodes 56 of a rank's 64 destinations are off the node.
        MoeLayerShape ms;
        ms.tokens = 4096;
        ms.expert = 64;
        ms.experts = 256;
        ms.top_k = 8;
        ms.hidden = 7168;
        ClusterLinks links;
        links.scale_up_domain = 8;
        links.scale_up.bytes_per_s = 400e9;
        links.scale_out.bytes_per_s = 50e9;
        CHECK(ExpertScaleOutShare(ms, links) == doctest::Approx(56.0 / 64));
        // The slower tier sets the time: 56/64 of T_r k h B over 50 GB/s.
        const double bytes = 4096.0 * 8 * 7168 * 2;
        CHECK(ExpertAllToAllSeconds(ms, links, 2) >=
              ScaleOutCopiesPerToken(ms, links) / 8 * bytes / 50e9);
        // 8-of-256 routing at EP 1 leaves 128 tokens per expert at T_r 4096; at 100 tokens a
        // 128-row tile is 100/128 full and the routed GEMMs take 128/100 of their time.
        ms.expert = 1;
        CHECK(TokensPerLocalExpert(ms) == doctest::Approx(128));
        ms.tokens = 3200;
        CHECK(GroupedGemmTileFill(ms) == doctest::Approx(100.0 / 128));

        // DualPipe-style overlap (DeepSeek's own framework with DeepEP) is timed without the
        // Megatron dispatcher's host synchronisation.
        r.expert_overlap_fraction = 0.9;
        auto overlapped = EstimateTraining(r, Cluster(512, gpucost::testing::Gb200()));
        REQUIRE(overlapped.ok());
        CHECK(AssumptionValue(overlapped.value().assumptions,
                              "moe_layer_host_exposed_s_per_pass") == doctest::Approx(0.0));
    }

    TEST_CASE("expert all-to-all overlap hides the named fraction of it") {
        TrainingRequest r;
        r.model = DeepSeekV3();
        r.tokens_b = 100;
        r.precision = Precision::kFp8;
        r.global_batch_tokens = 2048.0 * 4096;
        r.parallelism = Fixed(1, 16, 64, 1, 64, Recompute::kNone);
        auto exposed = EstimateTraining(r, Cluster(1024, gpucost::testing::H100Sxm()));
        r.expert_overlap_fraction = kExpertOverlapFractionDualPipe;
        auto hidden = EstimateTraining(r, Cluster(1024, gpucost::testing::H100Sxm()));
        REQUIRE(exposed.ok());
        REQUIRE(hidden.ok());
        CHECK(exposed.value().breakdown.expert_comm_s > 0);
        CHECK(hidden.value().breakdown.expert_comm_s ==
              doctest::Approx(exposed.value().breakdown.expert_comm_s *
                              (1 - kExpertOverlapFractionDualPipe)));
        CHECK(hidden.value().step_time_s < exposed.value().step_time_s);
        r.expert_overlap_fraction = 1.5;
        auto bad = EstimateTraining(r, Cluster(1024, gpucost::testing::H100Sxm()));
        REQUIRE_FALSE(bad.ok());
        CHECK(bad.error().field == "/expert_overlap_fraction");
    }

    TEST_CASE("a recipe's DualPipe overlap needs pipeline parallelism, as the schedule does") {
        // DualPipe hides the all-to-all by pairing forward and backward chunks of different
        // micro-batches across pipeline stages (arXiv 2412.19437 §3.2.1); a layout without
        // pipeline stages has no such schedule.
        TrainingRequest r;
        r.model = DeepSeekV3();
        r.tokens_b = 100;
        r.precision = Precision::kFp8;
        r.global_batch_tokens = 2048.0 * 4096;
        r.parallelism = Fixed(1, 1, 1024, 1, 64, Recompute::kFull);
        auto exposed = EstimateTraining(r, Cluster(1024, gpucost::testing::H100Sxm()));
        AppliedRecipe recipe;
        recipe.model_id = "deepseek-v3";
        recipe.source = "the report";
        recipe.expert_overlap_fraction = true;
        recipe.expert_overlap_schedule = "dualpipe";
        r.recipe = recipe;
        r.expert_overlap_fraction = kExpertOverlapFractionDualPipe;
        auto no_pipeline = EstimateTraining(r, Cluster(1024, gpucost::testing::H100Sxm()));
        REQUIRE(exposed.ok());
        REQUIRE(no_pipeline.ok());
        CHECK(no_pipeline.value().breakdown.expert_comm_s ==
              doctest::Approx(exposed.value().breakdown.expert_comm_s));
        CHECK(AssumptionValue(no_pipeline.value().assumptions, "expert_overlap_fraction") == 0.0);
        // With pipeline stages the recipe's overlap holds, echoed with the recipe's source.
        r.parallelism = Fixed(1, 16, 64, 1, 64, Recompute::kNone);
        auto staged = EstimateTraining(r, Cluster(1024, gpucost::testing::H100Sxm()));
        r.recipe.reset();
        auto asked = EstimateTraining(r, Cluster(1024, gpucost::testing::H100Sxm()));
        REQUIRE(staged.ok());
        REQUIRE(asked.ok());
        CHECK(staged.value().breakdown.expert_comm_s ==
              doctest::Approx(asked.value().breakdown.expert_comm_s));
        CHECK(AssumptionValue(staged.value().assumptions, "expert_overlap_fraction") ==
              doctest::Approx(kExpertOverlapFractionDualPipe));
        CHECK(AssumptionSource(staged.value().assumptions, "expert_overlap_fraction")
                  .find("training recipe of deepseek-v3") != std::string::npos);
        CHECK(AssumptionSource(asked.value().assumptions, "expert_overlap_fraction") == "request");
    }

    TEST_CASE("a recipe's published layout is used where it divides the cluster, else searched") {
        TrainingRequest r = DeepSeekReportRun(DeepSeekV3());
        auto on_2048 = EstimateTraining(r, Cluster(2048, gpucost::testing::H100Sxm()));
        REQUIRE(on_2048.ok());
        const ParallelLayout& l = on_2048.value().parallelism;
        CHECK(l.tensor == 1);
        CHECK(l.pipeline == 16);
        CHECK(l.expert == 64);
        CHECK(l.zero_stage == 1);
        CHECK(AssumptionValue(on_2048.value().assumptions, "recipe_layout_applied") == 1.0);
        // 1,000 accelerators: 16 stages leave 62.5 data ranks, so every layout is searched.
        auto on_1000 = EstimateTraining(r, Cluster(1000, gpucost::testing::H100Sxm()));
        REQUIRE(on_1000.ok());
        CHECK(on_1000.value().parallelism.pipeline != 16);
        CHECK(AssumptionValue(on_1000.value().assumptions, "recipe_layout_applied") == 0.0);
        // A request's own parallelism, even partial, wins over the recipe's.
        ParallelismRequest own;
        own.pipeline = 8;
        r.parallelism = own;
        auto asked = EstimateTraining(r, Cluster(2048, gpucost::testing::H100Sxm()));
        REQUIRE(asked.ok());
        CHECK(asked.value().parallelism.pipeline == 8);
    }

    TEST_CASE("a recipe's recompute modules run in its published layout, and are echoed") {
        // DeepSeek-V3's report recomputes RMSNorm and the MLA up-projections and the SwiGLU
        // output: on 2,048 80 GB parts in its layout that is what fits without full recompute.
        TrainingRequest r = DeepSeekReportRun(gpucost::testing::DeepSeekV3Published());
        r.expert_overlap_fraction = kExpertOverlapFractionDualPipe;
        r.recipe->recompute_modules = true;
        ParallelismRequest& layout = *r.recipe->layout;
        layout.recompute = Recompute::kSelective;
        RecomputeModules modules;
        for (RecomputeModule m :
             {RecomputeModule::kLayernorm, RecomputeModule::kMlaUpProj, RecomputeModule::kMoeAct}) {
            modules.Add(m);
        }
        layout.recompute_modules = modules;
        auto e = EstimateTraining(r, Cluster(2048, gpucost::testing::H100Sxm()));
        REQUIRE(e.ok());
        CHECK(e.value().parallelism.recompute == Recompute::kSelective);
        CHECK(e.value().parallelism.recompute_modules.Names() ==
              std::vector<std::string>{"moe_act", "layernorm", "mla_up_proj"});
        CHECK(e.value().memory.total_gb <= 80);
        CHECK(AssumptionValue(e.value().assumptions, "recipe_recompute_modules") == 3.0);
        CHECK(AssumptionValue(e.value().assumptions, "recompute_mla_up_proj_freed_gb_per_layer") >
              0);
        // Without them the same layout needs full recompute to fit.
        r.recipe->recompute_modules = false;
        r.recipe->layout->recompute.reset();
        r.recipe->layout->recompute_modules.reset();
        auto plain = EstimateTraining(r, Cluster(2048, gpucost::testing::H100Sxm()));
        REQUIRE(plain.ok());
        CHECK(plain.value().parallelism.pipeline == 16);
        CHECK(plain.value().parallelism.recompute == Recompute::kFull);
        CHECK(plain.value().step_time_s > e.value().step_time_s);
    }

    TEST_CASE(
        "routed experts are what expert parallelism shards; dense first layers and shared experts "
        "are not") {
        ResolvedModel m;
        m.params = 671e9;
        m.layers = 61;
        m.hidden_size = 7168;
        m.attention_heads = 128;
        m.head_dim = 128;
        m.gated_mlp = true;
        m.experts = 256;
        m.experts_per_token = 8;
        m.shared_experts = 1;
        m.expert_ffn_hidden_size = 2048;
        m.dense_layers = 3;
        m.dense_ffn_hidden_size = 18432;
        m.ffn_hidden_size = 18432;
        m.vocab_size = 129280;
        m.embedding_params = 2.0 * 129280 * 7168;
        m.attention_params_per_layer = 187e6;
        ParamSplit split = SplitParams(m);
        double routed = 58.0 * 256 * 3 * 7168 * 2048;
        CHECK(split.routed == doctest::Approx(routed));
        CHECK(split.replicated + split.routed == doctest::Approx(m.params));
        // MLA: scores over nope + rope (192) and values over 128 per head.
        m.kv_lora_rank = 512;
        m.q_lora_rank = 1536;
        m.qk_nope_head_dim = 128;
        m.qk_rope_head_dim = 64;
        m.v_head_dim = 128;
        m.seq_len = 4096;
        double attention = 6.0 * 61 * 4096 * 128 * (192 + 128);
        double base = m.ActiveNonEmbeddingParams() + 129280.0 * 7168;
        CHECK(ModelFlopsPerToken(m) == doctest::Approx(6.0 * base + attention));
    }

    TEST_CASE(
        "LoRA trains only the adapters; the frozen base stays in 16-bit and skips weight "
        "gradients") {
        TrainingRequest r;
        r.model = Llama7();
        r.tokens_b = 0.1;
        r.global_batch_tokens = 16.0 * 512;
        r.parallelism = Fixed(1, 1, 1, 0, 1);
        auto full = EstimateTraining(r, Cluster(1));
        r.mode = TrainingMode::kLora;
        r.lora_rank = 64;
        auto lora = EstimateTraining(r, Cluster(1));
        REQUIRE(full.ok());
        REQUIRE(lora.ok());
        const auto& ft = lora.value().fine_tuning;
        // r * (in + out) on q, k, v, o (4096 -> 4096) and gate, up, down (4096 <-> 11008).
        double adapters = 32.0 * 64 * (4 * 8192 + 3 * (4096 + 11008));
        CHECK(ft.trainable_params == doctest::Approx(adapters));
        CHECK(ft.lora_target_modules.size() == 7);
        CHECK(lora.value().memory.weights_gb ==
              doctest::Approx((lora.value().model.params + adapters) * 2 / 1e9));
        CHECK(lora.value().memory.optimizer_gb == doctest::Approx(adapters * 12 / 1e9));
        CHECK(lora.value().memory.gradients_gb == doctest::Approx(adapters * 2 / 1e9));
        CHECK(full.value().fits_in_memory == false);  // 16 bytes x 6.74B > 80 GB
        CHECK(lora.value().fits_in_memory);
        // 4 FLOPs per frozen parameter instead of 6: about two thirds of the work.
        CHECK(lora.value().model_flops_per_token / full.value().model_flops_per_token ==
              doctest::Approx(0.69).epsilon(0.05));
        CHECK(lora.value().step_time_s < full.value().step_time_s);
    }

    TEST_CASE("QLoRA: a 7B model trains within 24 GB and a 65B model within 48 GB") {
        TrainingRequest r;
        r.model = Llama7();
        r.tokens_b = 0.01;
        r.global_batch_tokens = 16.0 * 512;
        r.mode = TrainingMode::kQlora;
        auto seven = EstimateTraining(r, Cluster(1, gpucost::testing::Rtx4090()));
        REQUIRE(seven.ok());
        CHECK(seven.value().fits_in_memory);
        CHECK(seven.value().fine_tuning.frozen_weight_bytes_per_param ==
              doctest::Approx(4.127 / 8).epsilon(0.001));
        r.model = Llama65();
        r.model.seq_len = 512;
        r.parallelism = Fixed(1, 1, 1, 0, 1);
        auto big = EstimateTraining(r, Cluster(1, gpucost::testing::L40s()));
        REQUIRE(big.ok());
        CAPTURE(big.value().memory_per_accelerator_gb);
        CHECK(big.value().fits_in_memory);
        CHECK(big.value().memory_per_accelerator_gb > 40);
        // LoRA on the same card does not fit: the 16-bit base alone is 130 GB.
        r.mode = TrainingMode::kLora;
        auto lora = EstimateTraining(r, Cluster(1, gpucost::testing::L40s()));
        REQUIRE(lora.ok());
        CHECK_FALSE(lora.value().fits_in_memory);
    }

    TEST_CASE("QLoRA pays for dequantising its 4-bit weights in every pass") {
        TrainingRequest r;
        r.model = Llama7();
        r.tokens_b = 0.01;
        r.global_batch_tokens = 16.0 * 512;
        r.parallelism = Fixed(1, 1, 1, 0, 1);
        r.mode = TrainingMode::kLora;
        auto lora = EstimateTraining(r, Cluster(1));
        r.mode = TrainingMode::kQlora;
        auto qlora = EstimateTraining(r, Cluster(1));
        REQUIRE(lora.ok());
        REQUIRE(qlora.ok());
        CHECK(qlora.value().breakdown.memory_bound_s > lora.value().breakdown.memory_bound_s);
        CHECK(qlora.value().breakdown.compute_s ==
              doctest::Approx(lora.value().breakdown.compute_s));
        // NF4 blocks (4.127 bits) with 16-bit embeddings: about a third of the 16-bit base.
        CHECK(qlora.value().memory.weights_gb < 0.35 * lora.value().memory.weights_gb);
        CHECK(qlora.value().memory.optimizer_gb ==
              doctest::Approx(lora.value().memory.optimizer_gb * 8.0 / 12.0));
    }

    TEST_CASE("fine-tuning fields are checked and name the field") {
        TrainingRequest r;
        r.model = Llama7();
        r.tokens_b = 0.01;
        r.lora_rank = 8;
        auto e = EstimateTraining(r, Cluster(1));
        REQUIRE_FALSE(e.ok());
        CHECK(e.error().field == "/lora_rank");
        r.mode = TrainingMode::kLora;
        r.lora_rank = 0;
        e = EstimateTraining(r, Cluster(1));
        REQUIRE_FALSE(e.ok());
        CHECK(e.error().field == "/lora_rank");
        r.lora_rank = 8;
        r.lora_target_modules = std::vector<std::string>{"q_proj", "query_key_value"};
        e = EstimateTraining(r, Cluster(1));
        REQUIRE_FALSE(e.ok());
        CHECK(e.error().field == "/lora_target_modules/1");
        r.lora_target_modules = std::vector<std::string>{"q_proj", "v_proj"};
        e = EstimateTraining(r, Cluster(1));
        REQUIRE(e.ok());
        CHECK(e.value().fine_tuning.trainable_params == doctest::Approx(32.0 * 8 * 2 * 8192));
        CHECK(ParseTrainingMode("qlora") == TrainingMode::kQlora);
        CHECK_FALSE(ParseTrainingMode("prefix"));
    }

    TEST_CASE("a scale-up domain beyond the node carries tensor-parallel traffic over its link") {
        TrainingRequest r;
        r.model = Llama65();
        r.tokens_b = 10;
        r.parallelism = Fixed(16, 1, 4, 1, 1);
        ClusterSpec c = Cluster(64, gpucost::testing::Gb200());
        c.accelerators_per_node = 4;
        auto nvl72 = EstimateTraining(r, c);
        c.scale_up_domain = 4;
        auto per_tray = EstimateTraining(r, c);
        REQUIRE(nvl72.ok());
        REQUIRE(per_tray.ok());
        CHECK(nvl72.value().breakdown.tp_comm_s < 0.5 * per_tray.value().breakdown.tp_comm_s);
        // The search considers tensor degrees up to the domain, beyond the 4-GPU tray.
        r.parallelism.reset();
        c.scale_up_domain.reset();
        auto searched = EstimateTraining(r, c);
        REQUIRE(searched.ok());
        c.scale_up_domain = 4;
        auto small = EstimateTraining(r, c);
        REQUIRE(small.ok());
        CHECK(searched.value().layouts_considered > small.value().layouts_considered);
        CHECK(searched.value().step_time_s <= small.value().step_time_s);
    }
}

TEST_SUITE("estimate_training_estimator") {
    // The kept layer costs must change no answer: every figure equals the one-off estimate's,
    // to the bit, whichever clusters came before.
    void CheckSame(const gpucost::pricing::Result<TrainingEstimate>& kept,
                   const gpucost::pricing::Result<TrainingEstimate>& fresh) {
        REQUIRE(kept.ok() == fresh.ok());
        if (!fresh.ok()) {
            CHECK(kept.error().field == fresh.error().field);
            CHECK(kept.error().message == fresh.error().message);
            return;
        }
        const TrainingEstimate& a = kept.value();
        const TrainingEstimate& b = fresh.value();
        CHECK(a.step_time_s == b.step_time_s);
        CHECK(a.wall_clock_hours == b.wall_clock_hours);
        CHECK(a.mfu == b.mfu);
        CHECK(a.hfu == b.hfu);
        CHECK(a.memory_per_accelerator_gb == b.memory_per_accelerator_gb);
        CHECK(a.breakdown.compute_s == b.breakdown.compute_s);
        CHECK(a.breakdown.communication_s == b.breakdown.communication_s);
        CHECK(a.layouts_considered == b.layouts_considered);
        CHECK(a.bottleneck == b.bottleneck);
        CHECK(a.parallelism.tensor == b.parallelism.tensor);
        CHECK(a.parallelism.pipeline == b.parallelism.pipeline);
        CHECK(a.parallelism.zero_stage == b.parallelism.zero_stage);
        CHECK(a.parallelism.micro_batch_size == b.parallelism.micro_batch_size);
        CHECK(a.parallelism.virtual_stages == b.parallelism.virtual_stages);
        REQUIRE(a.runner_up.has_value() == b.runner_up.has_value());
        if (a.runner_up) CHECK(a.runner_up->step_time_s == b.runner_up->step_time_s);
        CHECK(a.assumptions.size() == b.assumptions.size());
    }

    // Clusters in the order a plan meets them: node counts of one shape, another network,
    // another accelerator, a smaller scale-up domain (tensor traffic over the network), a
    // count that does not fit and one the batch cannot feed.
    std::vector<ClusterSpec> PlanLikeClusters() {
        std::vector<ClusterSpec> out;
        for (int count : {8, 64, 512}) out.push_back(Cluster(count, gpucost::testing::H100Sxm()));
        ClusterSpec slow_network = Cluster(64, gpucost::testing::H100Sxm());
        slow_network.scale_out_gbit_per_s_per_node = 100;
        out.push_back(slow_network);
        for (int count : {1, 8, 64}) out.push_back(Cluster(count));
        ClusterSpec small_domain = Cluster(16, gpucost::testing::H100Sxm());
        small_domain.scale_up_domain = 2;
        out.push_back(small_domain);
        out.push_back(Cluster(1 << 16, gpucost::testing::H100Sxm()));
        out.push_back(Cluster(8, gpucost::testing::Rtx4090()));
        return out;
    }

    TEST_CASE("an estimator answers as EstimateTraining on every cluster of a plan") {
        std::vector<TrainingRequest> requests(4);
        requests[0].model = Llama7();
        requests[0].tokens_b = 100;
        requests[1] = requests[0];
        requests[1].mode = TrainingMode::kQlora;
        requests[1].lora_rank = 16;
        requests[2].model = DeepSeekV3();
        requests[2].tokens_b = 100;
        requests[2].with_assumptions = false;
        requests[3] = requests[0];
        requests[3].flash_attention = false;
        ParallelismRequest wide_tensor;
        wide_tensor.tensor = 8;  // beyond the small scale-up domain: the network link
        requests[3].parallelism = wide_tensor;
        for (const TrainingRequest& request : requests) {
            auto model = DeriveModel(request.model);
            REQUIRE(model.ok());
            TrainingEstimator estimator(request, model.value());
            for (const ClusterSpec& cluster : PlanLikeClusters()) {
                CAPTURE(cluster.accelerator.id);
                CAPTURE(cluster.accelerator_count);
                CheckSame(estimator.Estimate(cluster), EstimateTraining(request, cluster));
            }
        }
    }

    TEST_CASE("an estimator keeps one set of layer costs per accelerator, not per node count") {
        TrainingRequest request;
        request.model = Llama7();
        request.tokens_b = 100;
        auto model = DeriveModel(request.model);
        REQUIRE(model.ok());
        TrainingEstimator estimator(request, model.value());
        CHECK(estimator.LayerCostsKept() == 0);
        REQUIRE(estimator.Estimate(Cluster(8, gpucost::testing::H100Sxm())).ok());
        const std::size_t one_shape = estimator.LayerCostsKept();
        CHECK(one_shape > 0);
        // More nodes of the same accelerator try the same tensor degrees and micro-batches.
        REQUIRE(estimator.Estimate(Cluster(64, gpucost::testing::H100Sxm())).ok());
        REQUIRE(estimator.Estimate(Cluster(512, gpucost::testing::H100Sxm())).ok());
        CHECK(estimator.LayerCostsKept() == one_shape);
        // Another accelerator has its own.
        REQUIRE(estimator.Estimate(Cluster(8)).ok());
        CHECK(estimator.LayerCostsKept() == 2 * one_shape);
    }

    TEST_CASE(
        "Llama 3.1 405B on 8,192 H100 searches uneven and interleaved pipelines to the published "
        "MFU") {
        // The Llama 3 paper (arXiv 2407.21783 Table 4): 8,192 H100, TP 8, PP 16, DP 64, 16M
        // tokens per batch, 430 TFLOP/s per GPU = 43 % BF16 MFU (38-43 % across its runs).
        // 16 does not divide the 126 layers, so the stages are uneven.
        TrainingRequest r;
        r.model = Llama405();
        r.tokens_b = 15600;
        r.global_batch_tokens = 16e6;
        auto e = EstimateTraining(r, Cluster(8192, gpucost::testing::H100Sxm()));
        REQUIRE(e.ok());
        const auto& v = e.value();
        CAPTURE(v.parallelism.tensor);
        CAPTURE(v.parallelism.pipeline);
        CAPTURE(v.parallelism.virtual_stages);
        CAPTURE(v.breakdown.bubble_s / v.step_time_s);
        // Within 15 % of the published 38-43 %.
        CHECK(v.mfu >= 0.38 * 0.85);
        CHECK(v.mfu <= 0.43 * 1.15);
        CHECK(v.breakdown.bubble_s / v.step_time_s < 0.15);
        // 16,384 GPUs with the same batch: 400 TFLOP/s (41 %) published, TP 8, PP 16, DP 128.
        auto wide = EstimateTraining(r, Cluster(16384, gpucost::testing::H100Sxm()));
        REQUIRE(wide.ok());
        CAPTURE(wide.value().parallelism.pipeline);
        CAPTURE(wide.value().parallelism.virtual_stages);
        CHECK(wide.value().mfu >= 0.38 * 0.85);
        CHECK(wide.value().mfu <= 0.43 * 1.15);

        // The published layout itself, with the interleaving searched: 126 layers on 16 stages
        // of 8 (the head's stage 6) and more than two chunks per stage.
        ParallelismRequest pr;
        pr.tensor = 8;
        pr.pipeline = 16;
        r.parallelism = pr;
        auto published = EstimateTraining(r, Cluster(8192, gpucost::testing::H100Sxm()));
        REQUIRE(published.ok());
        CAPTURE(published.value().parallelism.virtual_stages);
        CHECK(published.value().parallelism.virtual_stages > 2);
        CHECK(published.value().mfu >= 0.38 * 0.85);
        CHECK(published.value().mfu <= 0.43 * 1.15);
    }

    TEST_CASE(
        "an uneven split times its slowest stage: full stages, or the head's lighter one plus the "
        "head") {
        // 126 layers on 16 stages: 14 full stages of 8, first and last 7 (the Llama 3 split).
        // The head costs less than a layer, so a full stage sets the pace: the micro-batches
        // take the time of 8 layers, where 128 layers on 16 put 8 layers and the head on the
        // last stage.
        TrainingRequest r;
        r.model = Llama405();
        r.tokens_b = 1;
        r.global_batch_tokens = 16e6;
        r.parallelism = Fixed(8, 16, 64, 1, 1);
        r.parallelism->virtual_stages = 1;
        auto uneven = EstimateTraining(r, Cluster(8192, gpucost::testing::H100Sxm()));
        r.model.layers = 128;
        auto even = EstimateTraining(r, Cluster(8192, gpucost::testing::H100Sxm()));
        REQUIRE(uneven.ok());
        REQUIRE(even.ok());
        const auto& u = uneven.value().breakdown;
        const auto& e = even.value().breakdown;
        CHECK(u.compute_s + u.memory_bound_s < e.compute_s + e.memory_bound_s);
        CHECK(u.compute_s + u.memory_bound_s > 0.9 * (e.compute_s + e.memory_bound_s));
    }

    TEST_CASE(
        "below 8,192 accelerators the search keeps even stages and at most two chunks per "
        "stage: Llama 3.1 70B on 4,096 H100 stays near its model card") {
        // Searched as deep as at 16k GPUs, this estimate moved from 6.65 M to
        // 6.34 M GPU-hours (t8 p2 d256 v20), further from the model card's 7.0 M.
        TrainingRequest r;
        r.model = Llama405();
        r.model.layers = 80;
        r.model.hidden_size = 8192;
        r.model.attention_heads = 64;
        r.model.ffn_hidden_size = 28672;
        r.tokens_b = 15000;
        auto e = EstimateTraining(r, Cluster(4096, gpucost::testing::H100Sxm()));
        REQUIRE(e.ok());
        const auto& v = e.value();
        CAPTURE(v.parallelism.pipeline);
        CAPTURE(v.parallelism.virtual_stages);
        CHECK(80 % v.parallelism.pipeline == 0);
        CHECK(v.parallelism.virtual_stages <= 2);
        CHECK(v.accelerator_hours > 6.5e6);
        CHECK(v.accelerator_hours < 7.0e6);
        double gate = 0;
        for (const auto& a : v.assumptions) {
            if (a.name == std::string_view("deep_pipeline_search_min_accelerators")) gate = a.value;
        }
        CHECK(gate == kDeepPipelineSearchMinAccelerators);
        // A pipeline degree that does not divide the layers is not searched below the gate
        // (80 layers: 16 divides, 32 does not), but a request may still fix one.
        ParallelismRequest pr;
        pr.tensor = 8;
        r.parallelism = pr;
        auto searched = EstimateTraining(r, Cluster(256, gpucost::testing::H100Sxm()));
        REQUIRE(searched.ok());
        CHECK(80 % searched.value().parallelism.pipeline == 0);
        pr.pipeline = 32;
        r.parallelism = pr;
        auto fixed = EstimateTraining(r, Cluster(256, gpucost::testing::H100Sxm()));
        REQUIRE(fixed.ok());
        CHECK(fixed.value().parallelism.pipeline == 32);
    }

    TEST_CASE(
        "the searched interleaving leaves at least two layers per chunk; a request may go "
        "deeper") {
        // Llama 3.1 405B at TP 8, PP 16 on 8,192 H100: full stages of 8 layers, so the search
        // goes to 4 chunks of 2 (NVIDIA's 405B H100 recipe runs about 2 layers per chunk);
        // before the floor it picked 8 chunks of one layer.
        TrainingRequest r;
        r.model = Llama405();
        r.tokens_b = 15600;
        r.global_batch_tokens = 16e6;
        ParallelismRequest pr;
        pr.tensor = 8;
        pr.pipeline = 16;
        r.parallelism = pr;
        auto searched = EstimateTraining(r, Cluster(8192, gpucost::testing::H100Sxm()));
        REQUIRE(searched.ok());
        CHECK(searched.value().parallelism.virtual_stages == 8 / kMinSearchedLayersPerChunk);
        pr.virtual_stages = 8;
        r.parallelism = pr;
        auto asked = EstimateTraining(r, Cluster(8192, gpucost::testing::H100Sxm()));
        REQUIRE(asked.ok());
        CHECK(asked.value().parallelism.virtual_stages == 8);
    }

    TEST_CASE("a multi-token-prediction module loads the pipeline's last stage") {
        // A DeepSeek-V3-like model of 64 layers on 16 stages of 4: the head's stage is the
        // slowest already, and an MTP module (one more block and head pass) lengthens it.
        TrainingRequest r;
        r.model = DeepSeekV3();
        r.model.layers = 64;
        r.model.params_b.reset();
        r.model.active_params_b.reset();
        r.tokens_b = 1;
        r.precision = Precision::kFp8;
        r.global_batch_tokens = 15360.0 * 4096;
        r.parallelism = Fixed(1, 16, 128, 1, 64, Recompute::kNone);
        ClusterSpec c = Cluster(2048, gpucost::testing::H100Sxm());
        c.scale_up_gb_per_s = 400;  // H800
        auto plain = EstimateTraining(r, c);
        r.model.mtp_modules = 1;
        auto mtp = EstimateTraining(r, c);
        REQUIRE(plain.ok());
        REQUIRE(mtp.ok());
        CHECK(mtp.value().step_time_s > plain.value().step_time_s);
        // One module is at most one block and one head more per micro-batch on that stage.
        CHECK(mtp.value().step_time_s < 1.5 * plain.value().step_time_s);
    }
}

namespace {

// Llama 3.1 8B (HF config: 32 x 4096, 32 heads, 8 KV heads, SwiGLU 14336, vocab 128256) as
// NVIDIA's DGX Cloud recipe trains it on 8 H100: 128 sequences of 8192 tokens per step, data
// parallel 8 (the recipe's CP 2 x DP 4 runs the same tokens per GPU), micro-batch 1.
TrainingRequest Llama8bOn8H100(Precision precision) {
    TrainingRequest r;
    r.model.params_b = 8.03;
    r.model.layers = 32;
    r.model.hidden_size = 4096;
    r.model.attention_heads = 32;
    r.model.kv_heads = 8;
    r.model.ffn_hidden_size = 14336;
    r.model.gated_mlp = true;
    r.model.vocab_size = 128256;
    r.model.seq_len = 8192;
    r.tokens_b = 1000;
    r.global_batch_tokens = 128.0 * 8192;
    r.precision = precision;
    r.parallelism = Fixed(1, 1, 8, 2, 1, Recompute::kNone);
    return r;
}

}  // namespace

TEST_SUITE("estimate_training_fp8") {
    TEST_CASE(
        "FP8 over BF16 for Llama 3.1 8B on 8 H100 is NeMo's published speed-up, not 2x GEMMs") {
        // NVIDIA/dgxc-benchmarking llama3.1/README_8b.md (NeMo 24.09, 8 x H100): 81,222 tokens/s
        // in BF16, 108,436 in FP8, a speed-up of 1.335. FP8 GEMMs at twice the BF16 rate alone
        // gave 1.68; with the attention core in BF16 and the operand quantisation passes the
        // estimate must come within 10 % of the published ratio.
        auto bf16 = EstimateTraining(Llama8bOn8H100(Precision::kBf16),
                                     Cluster(8, gpucost::testing::H100Sxm()));
        auto fp8 = EstimateTraining(Llama8bOn8H100(Precision::kFp8),
                                    Cluster(8, gpucost::testing::H100Sxm()));
        REQUIRE(bf16.ok());
        REQUIRE(fp8.ok());
        const double published = 108436.0 / 81222.0;
        const double speedup = fp8.value().achieved_tflops_per_accelerator /
                               bf16.value().achieved_tflops_per_accelerator;
        CHECK(speedup > published * 0.9);
        CHECK(speedup < published * 1.1);
        // The quantisation passes are memory-bound time the BF16 step does not have (its
        // GEMMs here are compute-bound in both precisions).
        CHECK(fp8.value().breakdown.memory_bound_s > bf16.value().breakdown.memory_bound_s);
    }

    TEST_CASE(
        "an FP8 estimate echoes its quantisation traffic and the attention core's BF16 peak") {
        auto fp8 = EstimateTraining(Llama8bOn8H100(Precision::kFp8),
                                    Cluster(8, gpucost::testing::H100Sxm()));
        auto bf16 = EstimateTraining(Llama8bOn8H100(Precision::kBf16),
                                     Cluster(8, gpucost::testing::H100Sxm()));
        REQUIRE(fp8.ok());
        REQUIRE(bf16.ok());
        // Read 2 bytes, write the FP8 copy and its transpose (1 + 1).
        CHECK(AssumptionValue(fp8.value().assumptions, "quantize_bytes_per_element") == 4.0);
        CHECK(AssumptionValue(fp8.value().assumptions, "attention_peak_tflops") == 989.0);
        CHECK(AssumptionSource(fp8.value().assumptions, "quantize_bytes_per_element")
                  .find("Transformer Engine") != std::string::npos);
        CHECK(AssumptionValue(bf16.value().assumptions, "quantize_bytes_per_element") == -1);
        CHECK(AssumptionValue(bf16.value().assumptions, "attention_peak_tflops") == -1);
    }

    TEST_CASE("a planner's estimator keeps FP8 layer costs apart by their BF16 side too") {
        // Two accelerators with the same FP8 figures and different BF16 peaks: the second
        // must not reuse the first's layer costs (its attention core runs at its BF16 peak).
        TrainingRequest r = Llama8bOn8H100(Precision::kFp8);
        r.parallelism.reset();
        r.with_assumptions = false;
        gpucost::pricing::Accelerator slower_bf16 = gpucost::testing::H100Sxm();
        slower_bf16.peak_tflops[static_cast<std::size_t>(Precision::kBf16)] = 700;
        auto model = DeriveModel(r.model);
        REQUIRE(model.ok());
        TrainingEstimator estimator(r, model.value());
        for (const auto& a : {gpucost::testing::H100Sxm(), slower_bf16}) {
            auto kept = estimator.Estimate(Cluster(8, a));
            auto fresh = EstimateTraining(r, Cluster(8, a));
            REQUIRE(kept.ok());
            REQUIRE(fresh.ok());
            CHECK(kept.value().step_time_s == fresh.value().step_time_s);
        }
        CHECK(EstimateTraining(r, Cluster(8, slower_bf16)).value().step_time_s >
              EstimateTraining(r, Cluster(8, gpucost::testing::H100Sxm())).value().step_time_s);
    }
}

TEST_SUITE("estimate_training deadline") {
    TEST_CASE("an estimate whose deadline has passed is kBudgetExceeded, not the layout found") {
        TrainingRequest r = Llama8bOn8H100(Precision::kBf16);
        r.parallelism.reset();  // searched: the search checks the deadline too
        ClusterSpec cluster = Cluster(64, gpucost::testing::H100Sxm());
        REQUIRE(EstimateTraining(r, cluster).ok());
        r.deadline = gpucost::pricing::Deadline::After(std::chrono::milliseconds(0));
        auto late = EstimateTraining(r, cluster);
        REQUIRE_FALSE(late.ok());
        CHECK(late.error().code == gpucost::pricing::ErrorCode::kBudgetExceeded);
    }
}
