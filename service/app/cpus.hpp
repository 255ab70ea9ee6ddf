#pragma once

#include <optional>
#include <string_view>

namespace gpucost::app {

// CPUs this process may use: the machine's count, narrowed by the CPU affinity mask and by
// the cgroup CPU quota (a container's CPU limit, rounded up), at least 1. The default worker
// count and the threads a training plan may spread over follow it, so a pod limited to 2
// CPUs on a 64-core node does not start threads for 64.
[[nodiscard]] unsigned UsableCpus();

// The limit in a cgroup v2 `cpu.max` file ("150000 100000" -> 1.5 CPUs); nullopt for "max"
// (no limit) or text that is not a quota and period.
[[nodiscard]] std::optional<double> CgroupV2CpuLimit(std::string_view cpu_max);

// The limit from cgroup v1 `cpu.cfs_quota_us` and `cpu.cfs_period_us`; nullopt when the
// quota is -1 (no limit) or either text is not a number.
[[nodiscard]] std::optional<double> CgroupV1CpuLimit(std::string_view quota_us,
                                                     std::string_view period_us);

}  // namespace gpucost::app
