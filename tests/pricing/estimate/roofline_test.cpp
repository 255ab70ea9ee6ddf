#include <doctest/doctest.h>

#include "pricing/estimate/collectives.hpp"
#include "pricing/estimate/roofline.hpp"
#include "tests/pricing/estimate/estimate_test_support.hpp"

using namespace gpucost::pricing::estimate;
using gpucost::pricing::Precision;

TEST_SUITE("estimate_roofline") {
    TEST_CASE("GEMM efficiency rises with size towards the sustained share of the MAMF figure") {
        auto d = MakeDeviceModel(gpucost::testing::A100Sxm80(), Precision::kBf16, {});
        REQUIRE(d.ok());
        CHECK(d.value().gemm_max_efficiency ==
              doctest::Approx(0.869 * kGemmSustainedFractionOfMamf));
        double small = GemmEfficiency(d.value(), 2.0 * 256 * 256 * 256);
        // LLMCompass A100 fp16: M=8192, N=K=1024 runs at 185.2 of 312 TFLOP/s (0.59) and
        // M=128, N=K=12288 at 193.0 (0.62).
        double mid = GemmEfficiency(d.value(), 2.0 * 8192 * 1024 * 1024);
        double skinny = GemmEfficiency(d.value(), 2.0 * 128 * 12288.0 * 12288);
        double big = GemmEfficiency(d.value(), 2.0 * 16384.0 * 16384 * 16384);
        CHECK(small < 0.15);
        CHECK(mid == doctest::Approx(0.59).epsilon(0.05));
        CHECK(skinny == doctest::Approx(0.62).epsilon(0.05));
        CHECK(big == doctest::Approx(d.value().gemm_max_efficiency).epsilon(0.01));
        CHECK(small < mid);
        CHECK(mid < big);
    }

    TEST_CASE(
        "an isolated 8192^3 bf16 GEMM on H100 SXM runs near the measured MAMF of ~790 TFLOP/s") {
        std::vector<RooflineOp> ops(2);
        ops[0].kind = OpKind::kGemm;
        ops[0].m = ops[0].n = ops[0].k = 8192;
        ops[1].kind = OpKind::kMemory;
        ops[1].bytes_read = ops[1].bytes_written = 1e9;
        auto r = EstimateRoofline(gpucost::testing::H100Sxm(), Precision::kBf16, ops);
        REQUIRE(r.ok());
        CHECK(r.value().ops[0].achieved_tflops == doctest::Approx(790).epsilon(0.10));
        // A large copy reaches ~90 % of HBM bandwidth.
        CHECK(r.value().ops[1].efficiency == doctest::Approx(0.90).epsilon(0.02));
        // The in-step fraction is not applied to isolated kernels, and is not echoed.
        for (const auto& a : r.value().assumptions) {
            CHECK(a.name != "gemm_sustained_fraction_of_mamf");
        }
    }

    TEST_CASE("GEMMs inside a step sustain the named fraction of the isolated figure") {
        auto in_step = MakeDeviceModel(gpucost::testing::H100Sxm(), Precision::kBf16, {});
        auto isolated = MakeDeviceModel(gpucost::testing::H100Sxm(), Precision::kBf16, {},
                                        "/precision", true, GemmSetting::kIsolated);
        REQUIRE(in_step.ok());
        REQUIRE(isolated.ok());
        CHECK(in_step.value().gemm_max_efficiency ==
              doctest::Approx(isolated.value().gemm_max_efficiency * kGemmSustainedFractionOfMamf));
        CHECK(isolated.value().gemm_max_efficiency == doctest::Approx(0.803));
    }

    TEST_CASE("a skinny GEMM is memory bound and a square one compute bound") {
        auto d = MakeDeviceModel(gpucost::testing::H100Sxm(), Precision::kBf16, {});
        REQUIRE(d.ok());
        OpTime gemv = GemmTime(d.value(), 1, 8192, 8192, 2);
        CHECK(gemv.bound == Bound::kMemory);
        // 8192 x 8192 x 2 bytes at 0.9 * 3350 GB/s plus the kernel overhead.
        CHECK(gemv.seconds ==
              doctest::Approx(8192.0 * 8192 * 2 / (0.9 * 3350e9) + 4e-6).epsilon(0.02));
        OpTime square = GemmTime(d.value(), 8192, 8192, 8192, 2);
        CHECK(square.bound == Bound::kCompute);
        CHECK(square.flops == doctest::Approx(2.0 * 8192 * 8192 * 8192));
    }

    TEST_CASE("the roofline call reports per-op and total figures and rejects bad ops") {
        std::vector<RooflineOp> ops(2);
        ops[0].kind = OpKind::kGemm;
        ops[0].m = ops[0].n = ops[0].k = 4096;
        ops[1].kind = OpKind::kMemory;
        ops[1].bytes_read = 1e9;
        ops[1].bytes_written = 1e9;
        auto r = EstimateRoofline(gpucost::testing::H100Sxm(), Precision::kBf16, ops);
        REQUIRE(r.ok());
        CHECK(r.value().ops[0].bound == Bound::kCompute);
        CHECK(r.value().ops[1].bound == Bound::kMemory);
        CHECK(r.value().ops[1].achieved_gb_per_s == doctest::Approx(0.9 * 3350).epsilon(0.01));
        CHECK(r.value().total.seconds ==
              doctest::Approx(r.value().ops[0].seconds + r.value().ops[1].seconds));
        CHECK(r.value().ridge_point_flops_per_byte == doctest::Approx(989e12 / 3350e9));
        ops[0].m = 0;
        auto bad = EstimateRoofline(gpucost::testing::H100Sxm(), Precision::kBf16, ops);
        REQUIRE(!bad.ok());
        CHECK(bad.error().field == "/ops/0/m");
        auto fp8 = EstimateRoofline(gpucost::testing::A100Sxm80(), Precision::kFp8, {ops[1]});
        REQUIRE(!fp8.ok());
        CHECK(fp8.error().field == "/precision");
        CHECK(fp8.error().message.find("bf16") != std::string::npos);
    }

    TEST_CASE("ring all-reduce moves 2(n-1)/n of the buffer plus 2(n-1) latencies") {
        Link link{100e9, 1e-6};
        CHECK(RingAllReduceSeconds(1e9, 1, link) == 0);
        CHECK(RingAllReduceSeconds(1e9, 8, link) ==
              doctest::Approx(2.0 * 7 / 8 * 1e9 / 100e9 + 14e-6));
        CHECK(RingAllGatherSeconds(1e9, 4, link) == doctest::Approx(0.75 * 1e9 / 100e9 + 3e-6));
        // Two levels inside one node equal a flat ring.
        CHECK(HierarchicalAllReduceSeconds(1e9, 8, 8, link, Link{1e9, 1e-5}) ==
              doctest::Approx(RingAllReduceSeconds(1e9, 8, link)));
        // Across nodes, only 1/ranks_per_node of the buffer crosses the network.
        Link nic{10e9, 5e-6};
        double two_level = HierarchicalAllReduceSeconds(1e9, 64, 8, link, nic);
        CHECK(two_level == doctest::Approx(RingAllReduceSeconds(1e9, 8, link) +
                                           RingAllReduceSeconds(1e9 / 8, 8, nic)));
    }

    TEST_CASE("an NVL72 rack and a TPU slice are scale-up domains beyond one node") {
        auto d = MakeDeviceModel(gpucost::testing::H100Sxm(), Precision::kBf16, {});
        REQUIRE(d.ok());
        ClusterSpec gb;
        gb.accelerator = gpucost::testing::Gb200();
        gb.accelerator_count = 72;
        gb.accelerators_per_node = 4;
        CHECK(MakeClusterLinks(gb, d.value()).scale_up_domain == 72);
        gb.accelerators_per_node = 0;  // the default: one compute tray of 4 GPUs, 4 x 400 Gbit/s
        CHECK(MakeClusterLinks(gb, d.value()).accelerators_per_node == 4);
        CHECK(MakeClusterLinks(gb, d.value()).scale_out_gbit_per_s_per_node == 1600);
        ClusterSpec tpu;
        tpu.accelerator = gpucost::testing::H100Sxm();
        tpu.accelerator.id = "tpu-v5p";
        CHECK(MakeClusterLinks(tpu, d.value()).scale_up_domain == 6144);
        ClusterSpec hgx;
        hgx.accelerator = gpucost::testing::H100Sxm();
        CHECK(MakeClusterLinks(hgx, d.value()).scale_up_domain == 8);
        hgx.scale_up_domain = 256;
        CHECK(MakeClusterLinks(hgx, d.value()).scale_up_domain == 256);
    }
}
