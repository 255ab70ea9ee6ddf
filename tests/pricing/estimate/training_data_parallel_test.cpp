#include <doctest/doctest.h>

#include <string_view>

#include "pricing/estimate/training.hpp"
#include "pricing/estimate/training_internal.hpp"
#include "tests/pricing/estimate/estimate_test_support.hpp"

using namespace gpucost::pricing::estimate;
using gpucost::pricing::Assumptions;
using gpucost::pricing::Precision;

namespace {

// Llama 3 70B's shape (80 x 8192, 64 heads, 8 KV heads, SwiGLU 28672, vocab 128256).
ModelSpec Llama70() {
    ModelSpec s;
    s.layers = 80;
    s.hidden_size = 8192;
    s.attention_heads = 64;
    s.kv_heads = 8;
    s.ffn_hidden_size = 28672;
    s.gated_mlp = true;
    s.vocab_size = 128256;
    s.seq_len = 8192;
    return s;
}

// Llama 3 70B derived once: a run's context refers to its model.
const ResolvedModel& Llama70Model() {
    static const ResolvedModel model = DeriveModel(Llama70()).value();
    return model;
}

// The run's context for Llama 3 70B on 128 H100, trained at `precision` in `mode`.
detail::Ctx Llama70Context(Precision precision, TrainingMode mode = TrainingMode::kPretrain) {
    TrainingRequest r;
    r.model = Llama70();
    r.tokens_b = 100;
    r.precision = precision;
    r.mode = mode;
    ClusterSpec cluster;
    cluster.accelerator = gpucost::testing::H100Sxm();
    cluster.accelerator_count = 128;
    auto c = detail::MakeContext(r, cluster, Llama70Model());
    REQUIRE(c.ok());
    return c.value();
}

// TP 8 x DP 16 at ZeRO `zero_stage`.
ParallelLayout Tp8Dp16(int zero_stage) {
    ParallelLayout l;
    l.tensor = 8;
    l.data = 16;
    l.zero_stage = zero_stage;
    return l;
}

// The data-parallel communication of Llama 3 70B on 128 H100 at TP 8, DP 16 and ZeRO
// `zero_stage`, trained at `precision` in `mode`.
double DataParallelComm(Precision precision, int zero_stage,
                        TrainingMode mode = TrainingMode::kPretrain) {
    return detail::DataParallelSeconds(Llama70Context(precision, mode), Tp8Dp16(zero_stage), 8, 1.0,
                                       1.0)
        .first;
}

}  // namespace

TEST_SUITE("estimate_training_data_parallel") {
    // Megatron-Core's distributed optimizer reduce-scatters the gradients and all-gathers the
    // updated weights; the FP8 presets of NeMo and Megatron-Bridge gather them in FP8
    // (fp8_param_gather). The estimator timed a 16-bit all-reduce for every FP8 run.
    TEST_CASE("an FP8 run's distributed optimizer gathers its block weights in FP8") {
        const double all_reduce = DataParallelComm(Precision::kFp8, 0);
        const double distributed = DataParallelComm(Precision::kFp8, 1);
        REQUIRE(all_reduce > 0);
        // Half the all-reduce at 2 bytes, half at 1 for the blocks and 2 for the embedding
        // and output projection (3 % of the weights): 0.76 with the collectives' latencies.
        CHECK(distributed / all_reduce > 0.74);
        CHECK(distributed / all_reduce < 0.80);
        // A BF16 run and an FP8 adapter run (16-bit adapters) gather at the weight width.
        CHECK(DataParallelComm(Precision::kBf16, 1) == doctest::Approx(all_reduce));
        CHECK(DataParallelComm(Precision::kFp8, 1, TrainingMode::kLora) ==
              doctest::Approx(DataParallelComm(Precision::kFp8, 0, TrainingMode::kLora)));
    }

    TEST_CASE("the FP8 weight gather is echoed where a layout uses it") {
        const detail::Ctx c = Llama70Context(Precision::kFp8);
        ParallelLayout l = Tp8Dp16(1);
        Assumptions as;
        detail::AddDataParallelAssumptions(c, l, as);
        REQUIRE(as.size() == 1);
        CHECK(std::string_view(as[0].name) == "dp_param_gather_bytes_per_param");
        CHECK(as[0].value == kFp8ParamGatherBytesPerParam);
        l.zero_stage = 0;  // no distributed optimizer: no weight gather, nothing said
        Assumptions none;
        detail::AddDataParallelAssumptions(c, l, none);
        CHECK(none.empty());
    }
}
