#include "service/app/cpus.hpp"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <string>
#include <thread>

namespace gpucost::app {
namespace {

std::optional<long long> Integer(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
    long long value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

std::optional<double> Limit(std::optional<long long> quota, std::optional<long long> period) {
    if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
    return static_cast<double>(*quota) / static_cast<double>(*period);
}

// The first line of a cgroup file (they hold one); empty when it cannot be read.
std::string ReadFile(const char* path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

// The cgroup quota of this process's cgroup, v2 first (the unified hierarchy mounted at
// /sys/fs/cgroup, as in containers), then v1's cpu controller.
std::optional<double> CgroupCpuLimit() {
    if (auto v2 = CgroupV2CpuLimit(ReadFile("/sys/fs/cgroup/cpu.max"))) return v2;
    return CgroupV1CpuLimit(ReadFile("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"),
                            ReadFile("/sys/fs/cgroup/cpu/cpu.cfs_period_us"));
}

}  // namespace

std::optional<double> CgroupV2CpuLimit(std::string_view cpu_max) {
    const std::size_t space = cpu_max.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    return Limit(Integer(cpu_max.substr(0, space)), Integer(cpu_max.substr(space + 1)));
}

std::optional<double> CgroupV1CpuLimit(std::string_view quota_us, std::string_view period_us) {
    return Limit(Integer(quota_us), Integer(period_us));
}

unsigned UsableCpus() {
    unsigned cpus = std::max(1U, std::thread::hardware_concurrency());
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (sched_getaffinity(0, sizeof mask, &mask) == 0 && CPU_COUNT(&mask) > 0) {
        cpus = std::min(cpus, static_cast<unsigned>(CPU_COUNT(&mask)));
    }
    if (auto limit = CgroupCpuLimit()) {
        cpus = std::min(cpus, static_cast<unsigned>(std::max(1.0, std::ceil(*limit))));
    }
    return cpus;
}

}  // namespace gpucost::app
