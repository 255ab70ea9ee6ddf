#include <doctest/doctest.h>

#include <string>

#include "pricing/estimate/inference.hpp"
#include "tests/pricing/estimate/estimate_test_support.hpp"
#include "tests/support/published_models.hpp"

using namespace gpucost::pricing;
using namespace gpucost::pricing::estimate;
using gpucost::testing::AssumptionSource;
using gpucost::testing::AssumptionValue;

namespace {

// MI300X figures of schema/seed/accelerators.csv (dense peaks; xGMI 7 x 64 GB/s per direction).
Accelerator Mi300x() {
    Accelerator a;
    a.id = "mi300x";
    a.name = "MI300X";
    a.vendor = "AMD";
    a.form_factor = "OAM";
    a.peak_tflops[static_cast<std::size_t>(Precision::kBf16)] = 1307.4;
    a.peak_tflops[static_cast<std::size_t>(Precision::kFp16)] = 1307.4;
    a.peak_tflops[static_cast<std::size_t>(Precision::kFp8)] = 2614.9;
    a.memory_gb = 192;
    a.memory_gb_per_s = 5300;
    a.scale_up_gb_per_s = 896;
    a.host_pcie_gen = "Gen5";
    return a;
}

ClusterSpec Box(const Accelerator& accelerator, int count) {
    ClusterSpec c;
    c.accelerator = accelerator;
    c.accelerator_count = count;
    c.accelerators_per_node = count;
    return c;
}

// MLPerf Inference's Llama 2 70B offline load (see inference_layout_test.cpp).
InferenceRequest Llama2Offline() {
    InferenceRequest r;
    r.model.params_b = 69.0;
    r.model.layers = 80;
    r.model.hidden_size = 8192;
    r.model.attention_heads = 64;
    r.model.kv_heads = 8;
    r.model.ffn_hidden_size = 28672;
    r.model.gated_mlp = true;
    r.model.vocab_size = 32000;
    r.precision = Precision::kFp8;
    r.input_tokens = 294;
    r.output_tokens = 294;
    r.concurrency = 4096;
    return r;
}

// AMD's ROCm vLLM 0.10.2 throughput table on 8 x MI300X (frontier row S19): Llama 3.1 405B
// (amd/Llama-3.1-405B-Instruct-FP8-KV), TP 8, input 128 / output 2048, 1,500 prompts at once.
InferenceRequest Llama405RocmTable() {
    InferenceRequest r;
    r.model = gpucost::testing::Llama405();
    r.precision = Precision::kFp8;
    r.kv_cache_precision = Precision::kFp8;
    r.tensor_parallel = 8;
    r.input_tokens = 128;
    r.output_tokens = 2048;
    r.concurrency = 1500;
    return r;
}

double ClusterTokens(const InferenceRequest& r, const ClusterSpec& c) {
    auto e = EstimateInference(r, c);
    REQUIRE(e.ok());
    return e.value().cluster.output_tokens_per_second;
}

}  // namespace

TEST_SUITE("inference_stack") {
    TEST_CASE("Llama 2 70B FP8 on one MI300X is timed with ROCm's measured efficiencies") {
        // MLPerf Inference v4.1 offline, 1 x MI300X under ROCm vLLM: 3,062 tokens/s. With the
        // NVIDIA engines' efficiencies the estimate was +54 %.
        const double one = ClusterTokens(Llama2Offline(), Box(Mi300x(), 1));
        CHECK(one == doctest::Approx(3062).epsilon(0.25));
    }

    TEST_CASE("8 MI300X serve the MLPerf load about as 8 H100 do, not 1.3x (the peak ratio)") {
        // MLPerf offline: 8 x MI300X 23,514 (v4.1) against 8 x H100 24,525 (v4.0): 0.96.
        const double amd = ClusterTokens(Llama2Offline(), Box(Mi300x(), 8));
        const double nvidia = ClusterTokens(Llama2Offline(), Box(gpucost::testing::H100Sxm(), 8));
        CHECK(amd / nvidia > 0.75);
        CHECK(amd / nvidia < 1.15);
    }

    TEST_CASE("the answer names the vendor stack whose efficiencies it used") {
        auto amd = EstimateInference(Llama2Offline(), Box(Mi300x(), 8));
        REQUIRE(amd.ok());
        const Assumptions& as = amd.value().assumptions;
        CHECK(AssumptionValue(as, "memory_bandwidth_efficiency") ==
              doctest::Approx(kRocmServingBandwidthEfficiency));
        CHECK(AssumptionSource(as, "memory_bandwidth_efficiency").find("ROCm") !=
              std::string::npos);
        CHECK(AssumptionSource(as, "gemm_half_efficiency_seconds_at_peak").find("hipBLASLt") !=
              std::string::npos);
        CHECK(AssumptionValue(as, "gemm_max_efficiency") < 0.5);  // MAF FP8 0.487 x 0.8

        auto nvidia = EstimateInference(Llama2Offline(), Box(gpucost::testing::H100Sxm(), 8));
        REQUIRE(nvidia.ok());
        CHECK(AssumptionValue(nvidia.value().assumptions, "memory_bandwidth_efficiency") ==
              doctest::Approx(kServingBandwidthEfficiency));
    }

    TEST_CASE("Llama 3.1 405B FP8 on 8 MI300X at TP 8 is timed as ROCm vLLM serves it") {
        // Published 4,201.7 output tokens/s; with the CUDA engines' GEMM and all-reduce terms
        // the estimate was 5,338 (+27 %), and +52 to +91 % on the table's other rows.
        const double tokens = ClusterTokens(Llama405RocmTable(), Box(Mi300x(), 8));
        CHECK(tokens / 4201.7 > 0.75);
        CHECK(tokens / 4201.7 < 1.2);
    }

    TEST_CASE("a tensor-parallel ROCm replica says which stack's terms it used, and why") {
        auto tp8 = EstimateInference(Llama405RocmTable(), Box(Mi300x(), 8));
        REQUIRE(tp8.ok());
        const Assumptions& as = tp8.value().assumptions;
        CHECK(AssumptionValue(as, "rocm_tensor_parallel_gemm_fraction") ==
              doctest::Approx(kRocmCdna3TensorParallelGemmFraction));
        CHECK(AssumptionValue(as, "gemm_max_efficiency") ==
              doctest::Approx(0.487 * 0.8 * kRocmCdna3TensorParallelGemmFraction));
        CHECK(AssumptionValue(as, "rccl_all_reduce_bus_gb_per_s_16mb") == doctest::Approx(171.5));
        CHECK(AssumptionSource(as, "rccl_all_reduce_bus_gb_per_s_16mb").find("RCCL") !=
              std::string::npos);

        // One GPU per replica (MLPerf's TP 1) and the CUDA engines keep the measured curve.
        auto one = EstimateInference(Llama2Offline(), Box(Mi300x(), 1));
        REQUIRE(one.ok());
        CHECK(AssumptionValue(one.value().assumptions, "rocm_tensor_parallel_gemm_fraction") == -1);
        auto nvidia = EstimateInference(Llama405RocmTable(), Box(gpucost::testing::H100Sxm(), 8));
        REQUIRE(nvidia.ok());
        CHECK(AssumptionValue(nvidia.value().assumptions, "rocm_tensor_parallel_gemm_fraction") ==
              -1);
        CHECK(AssumptionValue(nvidia.value().assumptions, "rccl_all_reduce_bus_gb_per_s_16mb") ==
              -1);
    }

    TEST_CASE("RCCL's measured all-reduce curve times a ROCm tensor-parallel all-reduce") {
        const double mib16 = 16.0 * 1024 * 1024;
        CHECK(RcclAllReduceSeconds(mib16, 8) == doctest::Approx(2.0 * 7 / 8 * mib16 / 171.5e9));
        CHECK(RcclAllReduceSeconds(32768, 8) == doctest::Approx(kRcclSmallAllReduceSeconds));
        CHECK(RcclAllReduceSeconds(mib16, 1) == 0);
        // Between two measured sizes the bandwidth is interpolated, never outside them.
        const double mib8 = 8.0 * 1024 * 1024;
        const double bw8 = 2.0 * 7 / 8 * mib8 / RcclAllReduceSeconds(mib8, 8) / 1e9;
        CHECK(bw8 > 82.5);
        CHECK(bw8 < 171.5);
        // A TP-4 group uses 3 of each GPU's 7 xGMI links.
        CHECK(RcclAllReduceSeconds(mib16, 4) ==
              doctest::Approx(1.5 * mib16 / (171.5e9 * 3.0 / 7.0)));
    }
}
