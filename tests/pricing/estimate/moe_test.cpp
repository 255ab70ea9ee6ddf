#include "pricing/estimate/moe.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <string>

#include "pricing/estimate/training.hpp"
#include "tests/pricing/estimate/estimate_test_support.hpp"

using namespace gpucost::pricing::estimate;
using gpucost::pricing::Precision;
using gpucost::testing::AssumptionValue;

namespace {

// DeepSeek-V3's MoE layer (h 7168, 256 routed experts, top-8) at T_r 4096 tokens per rank.
MoeLayerShape DeepSeekLayer(int expert, int expert_tensor) {
    ParallelLayout l;
    l.expert = expert;
    l.expert_tensor = expert_tensor;
    return MoeLayerShapeOf(l, 4096, 256, 8, 7168, 2, false);
}

// 8-GPU nodes: 400 GB/s NVLink inside, 50 GB/s per GPU across, no hop latency (so the byte
// terms compare exactly).
ClusterLinks EightGpuNodes() {
    ClusterLinks links;
    links.scale_up_domain = 8;
    links.scale_up.bytes_per_s = 400e9;
    links.scale_up.hop_latency_s = 0;
    links.scale_out.bytes_per_s = 50e9;
    links.scale_out.hop_latency_s = 0;
    return links;
}

// A Mixtral-like MoE (8 experts, top-2) small enough to lay out on 8 GPUs.
ModelSpec SmallMoe() {
    ModelSpec s;
    s.layers = 4;
    s.hidden_size = 4096;
    s.attention_heads = 32;
    s.kv_heads = 8;
    s.ffn_hidden_size = 14336;
    s.gated_mlp = true;
    s.experts = 8;
    s.experts_per_token = 2;
    s.vocab_size = 32000;
    s.seq_len = 8192;
    return s;
}

ClusterSpec Cluster(int count, gpucost::pricing::Accelerator a) {
    ClusterSpec c;
    c.accelerator = std::move(a);
    c.accelerator_count = count;
    return c;
}

TrainingRequest SmallMoeRequest(Precision precision) {
    TrainingRequest r;
    r.model = SmallMoe();
    r.tokens_b = 10;
    r.precision = precision;
    r.global_batch_tokens = 64.0 * 8192;
    return r;
}

}  // namespace

TEST_SUITE("moe layer") {
    TEST_CASE("FP8 dispatch halves the dispatched bytes, not the combine") {
        ParallelLayout l;
        l.expert = 8;
        const MoeLayerShape bf16 = MoeLayerShapeOf(l, 4096, 256, 8, 7168, 2, false);
        const MoeLayerShape fp8 = MoeLayerShapeOf(l, 4096, 256, 8, 7168, 2, true);
        CHECK(bf16.dispatch_bpe == doctest::Approx(2));
        CHECK(fp8.dispatch_bpe == doctest::Approx(kFp8DispatchBytesPerElement));
        CHECK(fp8.act_bpe == doctest::Approx(2));
        const ClusterLinks links = EightGpuNodes();
        // Dispatch at half width, combine at full: 3/4 of the BF16 pair.
        CHECK(ExpertDispatchCombineSeconds(fp8, links) ==
              doctest::Approx(0.75 * ExpertDispatchCombineSeconds(bf16, links)));

        // Through the estimate: echoed, and an FP8 run's expert traffic is the smaller.
        TrainingRequest r = SmallMoeRequest(Precision::kFp8);
        ParallelismRequest pr;
        pr.tensor = 1;
        pr.pipeline = 1;
        pr.expert = 8;
        r.parallelism = pr;
        auto fp8_run = EstimateTraining(r, Cluster(8, gpucost::testing::H100Sxm()));
        REQUIRE(fp8_run.ok());
        CHECK(AssumptionValue(fp8_run.value().assumptions, "moe_dispatch_bytes_per_element") ==
              doctest::Approx(1));
    }

    TEST_CASE("the flex dispatcher sends a token once per remote scale-up domain") {
        // EP 64 over eight 8-GPU nodes: 56 of a token's 64 destinations are off its node, so 7
        // of its 8 slots cross the network undeduplicated; DeepEP sends it once per remote node
        // holding one of its experts: 7 (1 - (7/8)^8) = 4.59 copies.
        const MoeLayerShape s = DeepSeekLayer(64, 1);
        const ClusterLinks links = EightGpuNodes();
        CHECK(ExpertGroupDomains(s, links) == 8);
        const double copies = 7.0 * (1.0 - std::pow(7.0 / 8.0, 8));
        CHECK(RemoteDomainsPerToken(s, links) == doctest::Approx(copies));
        CHECK(ScaleOutCopiesPerToken(s, links) == doctest::Approx(copies));
        CHECK(ScaleOutCopiesPerToken(s, links) < 8 * ExpertScaleOutShare(s, links));
        // The network tier sets the time: 4096 tokens x 4.59 copies x 7168 x 2 bytes at 50 GB/s.
        CHECK(ExpertAllToAllSeconds(s, links, 2) ==
              doctest::Approx(4096.0 * copies * 7168 * 2 / 50e9));
        // Inside one domain nothing crosses the network.
        CHECK(ScaleOutCopiesPerToken(DeepSeekLayer(8, 1), links) == doctest::Approx(0));
    }

    TEST_CASE("expert-tensor ranks gather the dispatched tokens and scatter them back") {
        const ClusterLinks links = EightGpuNodes();
        CHECK(ExpertTensorGatherSeconds(DeepSeekLayer(4, 1), links) == doctest::Approx(0));
        // ETP 2: each rank receives its partner's 4096 x 8 slots of 7168 x 2 bytes over NVLink.
        const MoeLayerShape s = DeepSeekLayer(4, 2);
        const double gather = 4096.0 * 8 * 7168 * 2 / 400e9;
        CHECK(ExpertTensorGatherSeconds(s, links) == doctest::Approx(gather));
        CHECK(ExpertDispatchCombineSeconds(s, links) ==
              doctest::Approx(2 * ExpertAllToAllSeconds(s, links, 2) + 2 * gather));
    }

    TEST_CASE("expert groups fold over context ranks") {
        // 8 GPUs at tensor 1, context 2: data 4. Megatron-Core's expert group of 8 spans
        // tensor x context x data ranks ("MoE Parallel Folding"), so EP 8 is a valid layout.
        TrainingRequest r = SmallMoeRequest(Precision::kBf16);
        ParallelismRequest pr;
        pr.tensor = 1;
        pr.context = 2;
        pr.pipeline = 1;
        pr.expert = 8;
        pr.micro_batch_size = 1;
        r.parallelism = pr;
        auto folded = EstimateTraining(r, Cluster(8, gpucost::testing::H100Sxm()));
        REQUIRE(folded.ok());
        CHECK(folded.value().parallelism.context == 2);
        CHECK(folded.value().parallelism.expert == 8);
        // The context ranks split the sequence at the MoE input too: T_r = 8192 / 2 tokens,
        // x top-2 x EP 8 / 8 experts per local expert.
        CHECK(AssumptionValue(folded.value().assumptions, "moe_tokens_per_local_expert") ==
              doctest::Approx(4096.0 * 2 * 8 / 8));
        // An expert degree above tensor x context x data is still refused.
        r.parallelism->expert = 16;
        CHECK_FALSE(EstimateTraining(r, Cluster(8, gpucost::testing::H100Sxm())).ok());
    }

    TEST_CASE("CUDA graphs shorten the MoE layer's host time; a captured iteration has none") {
        // One expert group on 8 GPUs, the layout fixed so only the launch mode differs.
        TrainingRequest r = SmallMoeRequest(Precision::kBf16);
        ParallelismRequest pr;
        pr.tensor = 1;
        pr.pipeline = 1;
        pr.expert = 8;
        pr.micro_batch_size = 1;
        r.parallelism = pr;
        auto run = [&](std::optional<MoeCudaGraphs> graphs) {
            r.moe.cuda_graphs = graphs;
            auto e = EstimateTraining(r, Cluster(8, gpucost::testing::H100Sxm()));
            REQUIRE(e.ok());
            return e.value();
        };
        const TrainingEstimate eager = run(std::nullopt);  // Megatron-Core's default
        const TrainingEstimate router = run(MoeCudaGraphs::kRouter);
        const TrainingEstimate full = run(MoeCudaGraphs::kFullIteration);
        CHECK(AssumptionValue(eager.assumptions, "moe_cuda_graphs") == doctest::Approx(0));
        CHECK(AssumptionValue(router.assumptions, "moe_cuda_graphs") == doctest::Approx(1));
        CHECK(AssumptionValue(full.assumptions, "moe_cuda_graphs") == doctest::Approx(2));
        CHECK(AssumptionValue(eager.assumptions, "moe_layer_host_exposed_s_per_pass") ==
              doctest::Approx(kMoeLayerHostExposedSecondsPerPass));
        CHECK(AssumptionValue(router.assumptions, "moe_layer_host_exposed_s_per_pass") ==
              doctest::Approx(kMoeLayerHostExposedSecondsPerPassRouterGraphs));
        CHECK(AssumptionValue(full.assumptions, "moe_layer_host_exposed_s_per_pass") ==
              doctest::Approx(0));
        CHECK(router.step_time_s < eager.step_time_s);
        CHECK(full.step_time_s < router.step_time_s);
        // Four MoE layers, forward and backward: the host time per pass, 8 micro-batches.
        const double per_step = 4 * 2 * 8.0;
        CHECK(eager.step_time_s - full.step_time_s ==
              doctest::Approx(per_step * kMoeLayerHostExposedSecondsPerPass).epsilon(1e-6));
    }

    TEST_CASE("the EP all-to-all overlap hides the dispatch behind the paired layer's compute") {
        // EP 16 over two 8-GPU nodes: the all-to-all crosses the network.
        TrainingRequest r = SmallMoeRequest(Precision::kBf16);
        r.model.experts = 16;
        r.global_batch_tokens = 128.0 * 8192;
        ParallelismRequest pr;
        pr.tensor = 1;
        pr.pipeline = 1;
        pr.expert = 16;
        pr.micro_batch_size = 1;
        pr.recompute = Recompute::kNone;
        r.parallelism = pr;
        auto run = [&](std::optional<bool> overlap) {
            r.moe.a2a_overlap = overlap;
            auto e = EstimateTraining(r, Cluster(16, gpucost::testing::H100Sxm()));
            REQUIRE(e.ok());
            return e.value();
        };
        const TrainingEstimate exposed = run(std::nullopt);  // Megatron-Core's default: off
        const TrainingEstimate hidden = run(true);
        CHECK(AssumptionValue(exposed.assumptions, "moe_a2a_overlap") == doctest::Approx(0));
        CHECK(AssumptionValue(hidden.assumptions, "moe_a2a_overlap") == doctest::Approx(1));
        REQUIRE(exposed.breakdown.expert_comm_s > 0);
        CHECK(hidden.breakdown.expert_comm_s < exposed.breakdown.expert_comm_s);
        CHECK(hidden.step_time_s < exposed.step_time_s);
        // Megatron-Core refuses the overlap with full recompute: asked for, it is not applied.
        r.parallelism->recompute = Recompute::kFull;
        const TrainingEstimate full_exposed = run(std::nullopt);
        const TrainingEstimate full_asked = run(true);
        CHECK(AssumptionValue(full_asked.assumptions, "moe_a2a_overlap") == doctest::Approx(0));
        CHECK(full_asked.step_time_s == doctest::Approx(full_exposed.step_time_s));
        CHECK(ExposedExpertAllToAllSeconds(3e-3, 1e-3, true) == doctest::Approx(2e-3));
        CHECK(ExposedExpertAllToAllSeconds(3e-3, 5e-3, true) == doctest::Approx(0));
        CHECK(ExposedExpertAllToAllSeconds(3e-3, 5e-3, false) == doctest::Approx(3e-3));
    }

    TEST_CASE("the moe switches are refused for a dense model, naming moe") {
        TrainingRequest r = SmallMoeRequest(Precision::kBf16);
        r.model.experts.reset();
        r.model.experts_per_token.reset();
        r.moe.a2a_overlap = true;
        auto e = EstimateTraining(r, Cluster(8, gpucost::testing::H100Sxm()));
        REQUIRE_FALSE(e.ok());
        CHECK(e.error().field == "/moe");
        CHECK(ParseMoeCudaGraphs("router") == MoeCudaGraphs::kRouter);
        CHECK_FALSE(ParseMoeCudaGraphs("eager").has_value());
        CHECK(std::string(MoeCudaGraphsName(MoeCudaGraphs::kFullIteration)) == "full_iteration");
    }
}
