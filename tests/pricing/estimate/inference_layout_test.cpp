#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "pricing/estimate/inference.hpp"
#include "tests/pricing/estimate/estimate_test_support.hpp"
#include "tests/support/published_models.hpp"

using namespace gpucost::pricing;
using namespace gpucost::pricing::estimate;
using gpucost::testing::AssumptionValue;

namespace {

ClusterSpec Box(const Accelerator& accelerator, int count) {
    ClusterSpec c;
    c.accelerator = accelerator;
    c.accelerator_count = count;
    c.accelerators_per_node = 8;
    return c;
}

// Llama 2 70B as published (config.json): 80 x 8192, 64 heads, 8 KV heads, SwiGLU 28672,
// vocabulary 32,000.
ModelSpec Llama2_70B() {
    ModelSpec m;
    m.params_b = 69.0;
    m.layers = 80;
    m.hidden_size = 8192;
    m.attention_heads = 64;
    m.kv_heads = 8;
    m.ffn_hidden_size = 28672;
    m.gated_mlp = true;
    m.vocab_size = 32000;
    return m;
}

// MLPerf Inference's Llama 2 70B offline scenario as the issue reproduces it: FP8, every
// query queued at once (concurrency 4,096 on the box), OpenOrca-length prompts and answers.
InferenceRequest MlperfOffline() {
    InferenceRequest r;
    r.model = Llama2_70B();
    r.precision = Precision::kFp8;
    r.input_tokens = 294;
    r.output_tokens = 294;
    r.concurrency = 4096;
    return r;
}

InferenceEstimate Estimate(const InferenceRequest& r, const ClusterSpec& c) {
    auto e = EstimateInference(r, c);
    REQUIRE(e.ok());
    return e.value();
}

}  // namespace

TEST_SUITE("inference_layout") {
    TEST_CASE("a serving load on 8 H100 is laid out as replicas, not one TP-8 replica") {
        // MLPerf Inference v4.0 offline, 8 x H100 SXM, TensorRT-LLM FP8: 24,525 tokens/s. One
        // TP-8 replica capped at 1,024 running sequences answered 13k (-47 %).
        const InferenceEstimate e = Estimate(MlperfOffline(), Box(gpucost::testing::H100Sxm(), 8));
        REQUIRE(e.layout_search.has_value());
        const LayoutSearch& search = *e.layout_search;
        CHECK(search.objective == LayoutObjective::kThroughput);
        REQUIRE(search.candidates.size() == 4);    // TP 1, 2, 4, 8
        CHECK_FALSE(search.candidates[0].serves);  // 69 GB of FP8 weights leave no KV cache
        CHECK(e.tensor_parallel < 8);
        CHECK(e.replicas == 8 / e.tensor_parallel);
        CHECK(e.cluster.replicas == e.replicas);
        CHECK(e.cluster.accelerators == 8);
        CHECK(e.cluster.concurrency_per_replica == doctest::Approx(4096.0 / e.replicas));
        // The cluster figure is every replica's: the per-replica one side by side.
        REQUIRE(e.serving->point.has_value());
        CHECK(e.cluster.output_tokens_per_second ==
              doctest::Approx(e.serving->point->output_tokens_per_second * e.replicas));
        CHECK(e.cluster.output_tokens_per_second == doctest::Approx(24525).epsilon(0.15));
        CHECK_FALSE(search.chosen_because.empty());
        double tp8 = 0;
        for (const LayoutCandidate& c : search.candidates) {
            if (c.tensor_parallel == 8) tp8 = c.output_tokens_per_second;
            CHECK(c.output_tokens_per_second <= e.cluster.output_tokens_per_second);
        }
        CHECK(e.cluster.output_tokens_per_second > 1.5 * tp8);
        CHECK(AssumptionValue(e.assumptions, "serving_layout_tensor_parallel") ==
              e.tensor_parallel);
    }

    TEST_CASE("an MoE serving load is laid out expert parallel where that serves more") {
        // TensorRT-LLM 1.2 serves DeepSeek-R1 FP8 on 8 H200 as DEP8 (attention data parallel,
        // experts over the 8 GPUs) for throughput. Tensor parallel copies MLA's latent KV cache
        // onto every rank, so one TP-8 replica holds an eighth of the sequences DEP8 does.
        InferenceRequest r;
        r.model = gpucost::testing::DeepSeekV3Published();
        r.precision = Precision::kFp8;
        r.kv_cache_precision = Precision::kFp8;
        r.input_tokens = 1024;
        r.output_tokens = 8192;
        r.concurrency = 1500;
        const InferenceEstimate e = Estimate(r, Box(gpucost::testing::H200Sxm(), 8));
        REQUIRE(e.layout_search.has_value());
        const LayoutCandidate* tp8 = nullptr;
        const LayoutCandidate* ep8 = nullptr;
        for (const LayoutCandidate& c : e.layout_search->candidates) {
            if (c.expert_parallel == 1 && c.tensor_parallel == 8) tp8 = &c;
            if (c.expert_parallel == 8) ep8 = &c;
        }
        REQUIRE(tp8 != nullptr);
        REQUIRE(ep8 != nullptr);
        CHECK(ep8->tensor_parallel == 1);
        CHECK(ep8->serves);
        CHECK(ep8->output_tokens_per_second > tp8->output_tokens_per_second);
        CHECK(e.expert_parallel == 8);
        CHECK(e.tensor_parallel == 1);
        CHECK(e.cluster.accelerators_per_replica == 8);
        CHECK(e.layout_search->chosen_because.find("expert parallel 8") != std::string::npos);
        CHECK(AssumptionValue(e.assumptions, "serving_layout_expert_parallel") == 8);
        // A dense model is laid out tensor parallel only.
        const InferenceEstimate dense =
            Estimate(MlperfOffline(), Box(gpucost::testing::H100Sxm(), 8));
        for (const LayoutCandidate& c : dense.layout_search->candidates) {
            CHECK(c.expert_parallel == 1);
        }
    }

    TEST_CASE("H200 over H100 on the MLPerf offline load follows the published 1.29") {
        const double h100 = Estimate(MlperfOffline(), Box(gpucost::testing::H100Sxm(), 8))
                                .cluster.output_tokens_per_second;
        const double h200 = Estimate(MlperfOffline(), Box(gpucost::testing::H200Sxm(), 8))
                                .cluster.output_tokens_per_second;
        // MLPerf Inference v4.0 offline: 31,712 / 24,525 = 1.29; one TP-8 replica gave 1.06.
        CHECK(h200 / h100 > 1.15);
        CHECK(h200 / h100 < 1.45);
    }

    TEST_CASE("the latency objective and a latency bound choose other layouts") {
        InferenceRequest r = MlperfOffline();
        r.concurrency = 64;
        r.layout_objective = LayoutObjective::kLatency;
        const InferenceEstimate fastest = Estimate(r, Box(gpucost::testing::H100Sxm(), 8));
        for (const LayoutCandidate& c : fastest.layout_search->candidates) {
            if (!c.serves) continue;
            CHECK(fastest.serving->point->inter_token_latency_ms <= c.inter_token_latency_ms);
        }
        CHECK(fastest.tensor_parallel == 8);

        // Throughput under a bound: the best layout among those meeting it.
        r.layout_objective.reset();
        const InferenceEstimate open = Estimate(r, Box(gpucost::testing::H100Sxm(), 8));
        r.max_inter_token_latency_ms = fastest.serving->point->inter_token_latency_ms * 1.001;
        const InferenceEstimate bounded = Estimate(r, Box(gpucost::testing::H100Sxm(), 8));
        CHECK(bounded.serving->point->inter_token_latency_ms <= *r.max_inter_token_latency_ms);
        CHECK(bounded.cluster.output_tokens_per_second <= open.cluster.output_tokens_per_second);
        CHECK(bounded.warnings.empty());

        // A bound no layout meets: the closest layout, with a warning naming the bound.
        r.max_inter_token_latency_ms = 0.01;
        const InferenceEstimate missed = Estimate(r, Box(gpucost::testing::H100Sxm(), 8));
        REQUIRE_FALSE(missed.warnings.empty());
        CHECK(missed.warnings.back().field == "/max_inter_token_latency_ms");
        CHECK(missed.tensor_parallel == fastest.tensor_parallel);
    }

    TEST_CASE("a faster layout over a latency bound is passed over, and the answer says why") {
        // MLPerf's offline load on 8 H200: TP 1 x 8 serves the most tokens/s (S02) but each of
        // its replicas decodes 512 sequences, with longer steps than TP 4 x 2.
        InferenceRequest r = MlperfOffline();
        const InferenceEstimate open = Estimate(r, Box(gpucost::testing::H200Sxm(), 8));
        REQUIRE(open.tensor_parallel == 1);
        const double open_itl_ms = open.serving->point->inter_token_latency_ms;
        r.max_inter_token_latency_ms = 0.8 * open_itl_ms;
        const InferenceEstimate bounded = Estimate(r, Box(gpucost::testing::H200Sxm(), 8));
        CHECK(bounded.tensor_parallel > 1);
        CHECK(bounded.serving->point->inter_token_latency_ms <= *r.max_inter_token_latency_ms);
        CHECK(bounded.warnings.empty());
        const std::string& why = bounded.layout_search->chosen_because;
        CHECK(why.find("not chosen for missing a latency bound: tensor parallel 1 x 8 replicas") !=
              std::string::npos);
        CHECK(why.find("inter-token latency") != std::string::npos);
        // Without a bound nothing is passed over.
        CHECK(open.layout_search->chosen_because.find("not chosen") == std::string::npos);
    }

    TEST_CASE("the layout search stops at the request's computing budget") {
        // Each candidate is a whole serving estimate; a budget already spent is answered with
        // no figures (kBudgetExceeded), as the training layout search does.
        InferenceRequest r = MlperfOffline();
        r.deadline = Deadline::After(std::chrono::milliseconds(0));
        auto e = EstimateInference(r, Box(gpucost::testing::H100Sxm(), 8));
        REQUIRE_FALSE(e.ok());
        CHECK(e.error().code == ErrorCode::kBudgetExceeded);
        // A named degree is one estimate, checked by the route before it.
        r.tensor_parallel = 2;
        CHECK(EstimateInference(r, Box(gpucost::testing::H100Sxm(), 8)).ok());
    }

    TEST_CASE("a named tensor_parallel is kept and the load is spread over its replicas") {
        InferenceRequest r = MlperfOffline();
        r.tensor_parallel = 4;
        const InferenceEstimate e = Estimate(r, Box(gpucost::testing::H100Sxm(), 8));
        CHECK_FALSE(e.layout_search.has_value());
        CHECK(e.tensor_parallel == 4);
        CHECK(e.replicas == 2);
        CHECK(e.serving->point->concurrency == doctest::Approx(2048));

        // A static batch is one replica on every accelerator, as before.
        InferenceRequest batch = MlperfOffline();
        batch.concurrency.reset();
        batch.batch_size = 16;
        const InferenceEstimate one = Estimate(batch, Box(gpucost::testing::H100Sxm(), 8));
        CHECK_FALSE(one.layout_search.has_value());
        CHECK(one.tensor_parallel == 8);
        CHECK(one.cluster.output_tokens_per_second ==
              doctest::Approx(one.output_tokens_per_second));
    }

    TEST_CASE("latency bounds outside their range are refused naming the field") {
        InferenceRequest r = MlperfOffline();
        r.max_time_to_first_token_ms = -1;
        auto e = EstimateInference(r, Box(gpucost::testing::H100Sxm(), 8));
        REQUIRE_FALSE(e.ok());
        CHECK(e.error().field == "/max_time_to_first_token_ms");
    }
}
