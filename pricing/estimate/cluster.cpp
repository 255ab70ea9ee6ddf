#include "pricing/estimate/cluster.hpp"

#include <cmath>
#include <string>
#include <string_view>

namespace gpucost::pricing::estimate {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

int DefaultAcceleratorsPerNode(const Accelerator& a) {
    if (StartsWith(a.id, "tpu-")) {
        return 4;  // one TPU VM host has 4 chips (v4, v5p); GCP TPU docs
    }
    if (StartsWith(a.id, "trainium")) {
        return 16;  // trn1.32xlarge / trn2.48xlarge
    }
    return 8;  // HGX/DGX boards, OAM platforms, and 8-GPU cloud instances
}

double DefaultScaleOutGbitPerSPerNode(const Accelerator& a, int accelerators_per_node) {
    std::string_view id = a.id;
    if (!StartsWith(id, "tpu-") && accelerators_per_node > 0 &&
        accelerators_per_node < DefaultAcceleratorsPerNode(a)) {
        return kPartialNodeScaleOutGbitPerS;
    }
    if (StartsWith(id, "a100")) {
        return 1600;  // DGX A100: 8 x 200 Gbit/s HDR InfiniBand
    }
    if (StartsWith(id, "v100")) {
        return 400;  // p3dn.24xlarge: 100 Gbit/s x 4 (DGX-2 class: 8 x 100)
    }
    if (StartsWith(id, "tpu-")) {
        // TPU slices talk over ICI across hosts; take 4 chips' ICI as the node's bandwidth.
        return a.scale_up_gb_per_s.value_or(400) * 8.0 * 4.0 / 2.0;
    }
    if (a.form_factor.find("PCIe") != std::string::npos ||
        a.form_factor.find("consumer") != std::string::npos) {
        return 100;  // typical single-NIC instance
    }
    return 3200;  // DGX H100/B200, AWS p5, MI300X platforms: 8 x 400 Gbit/s
}

Status ValidateCluster(const ClusterSpec& c) {
    if (c.accelerator_count < 1 || c.accelerator_count > kMaxAcceleratorCount) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "count must be between 1 and " + std::to_string(kMaxAcceleratorCount),
                         "/hardware/count");
    }
    if (c.accelerators_per_node < 0 || c.accelerators_per_node > kMaxAcceleratorsPerNode) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "accelerators_per_node must be between 1 and " +
                             std::to_string(kMaxAcceleratorsPerNode),
                         "/hardware/accelerators_per_node");
    }
    auto bad_bw = [](const std::optional<double>& v) {
        return v && !(std::isfinite(*v) && *v > 0 && *v <= 1e7);
    };
    if (bad_bw(c.scale_out_gbit_per_s_per_node)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "scale_out_gbit_per_s_per_node must be in (0, 1e7]",
                         "/hardware/scale_out_gbit_per_s_per_node");
    }
    if (bad_bw(c.scale_up_gb_per_s)) {
        return MakeError(ErrorCode::kInvalidArgument, "scale_up_gb_per_s must be in (0, 1e7]",
                         "/hardware/scale_up_gb_per_s");
    }
    if (!(c.accelerator.memory_gb > 0) || !(c.accelerator.memory_gb_per_s > 0)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "accelerator '" + c.accelerator.id +
                             "' has no memory size or bandwidth in the catalog",
                         "/hardware/accelerator");
    }
    return Ok{};
}

}  // namespace gpucost::pricing::estimate
