#include "service/app/cpus.hpp"

#include <doctest/doctest.h>

#include <thread>

using gpucost::app::CgroupV1CpuLimit;
using gpucost::app::CgroupV2CpuLimit;
using gpucost::app::UsableCpus;

TEST_SUITE("cpus") {
    TEST_CASE("a cgroup v2 cpu.max gives quota / period, and no limit for max") {
        CHECK(CgroupV2CpuLimit("200000 100000\n") == doctest::Approx(2.0));
        CHECK(CgroupV2CpuLimit("150000 100000") == doctest::Approx(1.5));
        CHECK_FALSE(CgroupV2CpuLimit("max 100000\n").has_value());
        CHECK_FALSE(CgroupV2CpuLimit("").has_value());
        CHECK_FALSE(CgroupV2CpuLimit("200000").has_value());
        CHECK_FALSE(CgroupV2CpuLimit("0 100000").has_value());
        CHECK_FALSE(CgroupV2CpuLimit("200000 x").has_value());
    }

    TEST_CASE("cgroup v1 quota and period give the limit, and -1 none") {
        CHECK(CgroupV1CpuLimit("50000\n", "100000\n") == doctest::Approx(0.5));
        CHECK_FALSE(CgroupV1CpuLimit("-1\n", "100000\n").has_value());
        CHECK_FALSE(CgroupV1CpuLimit("", "100000").has_value());
    }

    TEST_CASE("the usable CPUs are at least one and at most the machine's") {
        const unsigned cpus = UsableCpus();
        CHECK(cpus >= 1);
        if (std::thread::hardware_concurrency() > 0) {
            CHECK(cpus <= std::thread::hardware_concurrency());
        }
    }
}
