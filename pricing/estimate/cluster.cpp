#include "pricing/estimate/cluster.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <string_view>

#include "pricing/accelerator_facts.hpp"

namespace gpucost::pricing::estimate {
namespace {

// The family's scale-up domain beyond one node (accelerator_facts.cpp), or nullptr.
const AcceleratorFacts* FindDomain(const Accelerator& a) {
    const AcceleratorFacts* f = FindAcceleratorFacts(a.id);
    return f != nullptr && f->scale_up_domain > 0 ? f : nullptr;
}

}  // namespace

int DefaultScaleUpDomain(const Accelerator& a, int accelerators_per_node) {
    const AcceleratorFacts* d = FindDomain(a);
    return std::max(d != nullptr ? d->scale_up_domain : 1, accelerators_per_node);
}

std::string ScaleUpDomainSource(const Accelerator& a) {
    const AcceleratorFacts* d = FindDomain(a);
    return d != nullptr ? std::string(d->scale_up_domain_source)
                        : "one node (no multi-node scale-up fabric)";
}

int BridgeDomain(const Accelerator& a) {
    const bool bridged = a.scale_up_interconnect.find("bridge") != std::string::npos &&
                         a.scale_up_gb_per_s.value_or(0) > 0;
    return bridged ? kNvlinkBridgeGpus : 0;
}

int DefaultAcceleratorsPerNode(const Accelerator& a) {
    if (a.id.starts_with("tpu-") || a.id.starts_with("tpu7x")) {
        return 4;  // one TPU VM host has 4 chips (v4, v5p, TPU7x); GCP TPU docs
    }
    if (a.id.starts_with("trainium")) {
        return 16;  // trn1.32xlarge / trn2.48xlarge
    }
    if (a.id.starts_with("gb200") || a.id.starts_with("gb300")) {
        return 4;  // one NVL72 compute tray: 2 GB200 superchips, 4 GPUs (NVIDIA DGX GB200 docs)
    }
    return 8;  // HGX/DGX boards, OAM platforms, and 8-GPU cloud instances
}

double DefaultScaleOutGbitPerSPerNode(const Accelerator& a, int accelerators_per_node) {
    std::string_view id = a.id;
    if (!id.starts_with("tpu-") && accelerators_per_node > 0 &&
        accelerators_per_node < DefaultAcceleratorsPerNode(a)) {
        return kPartialNodeScaleOutGbitPerS;
    }
    if (id.starts_with("a100")) {
        return 1600;  // DGX A100: 8 x 200 Gbit/s HDR InfiniBand
    }
    if (id.starts_with("gb200")) {
        // DGX GB200 rack: 72 single-port ConnectX-7 400 Gbit/s, one per GPU (datasheet).
        return 1600;
    }
    if (id.starts_with("v100")) {
        return 400;  // p3dn.24xlarge: 100 Gbit/s x 4 (DGX-2 class: 8 x 100)
    }
    if (id.starts_with("tpu-")) {
        // TPU slices talk over ICI across hosts; take 4 chips' ICI as the node's bandwidth.
        // (Between slices the data-centre network is far slower, 50 Gbit/s per chip on v5p; it
        // is not the default yet because the inference step still picks its tensor-parallel
        // link by node rather than by scale-up domain.)
        return a.scale_up_gb_per_s.value_or(400) * 8.0 * 4.0 / 2.0;
    }
    if (a.form_factor.find("PCIe") != std::string::npos ||
        a.form_factor.find("consumer") != std::string::npos) {
        return 100;  // typical single-NIC instance
    }
    return 3200;  // DGX H100/B200, AWS p5, MI300X platforms: 8 x 400 Gbit/s
}

namespace {
constexpr double kMinLinkBandwidth = 1;    // GB/s scale-up, Gbit/s scale-out
constexpr double kMaxLinkBandwidth = 1e7;  // far above any link
}  // namespace

Status ValidateCluster(const ClusterSpec& c) {
    if (c.accelerator_count < 1 || c.accelerator_count > kMaxAcceleratorCount) {
        return MakeError(
            ErrorCode::kInvalidArgument,
            "total_accelerators must be between 1 and " + std::to_string(kMaxAcceleratorCount),
            "/hardware/total_accelerators");
    }
    if (c.accelerators_per_node < 0 || c.accelerators_per_node > kMaxAcceleratorsPerNode) {
        return MakeError(
            ErrorCode::kInvalidArgument,
            "accelerator_count must be between 1 and " + std::to_string(kMaxAcceleratorsPerNode),
            "/hardware/accelerator_count");
    }
    // At least 1 GB/s (scale-up) or 1 Gbit/s (scale-out): below any link accelerators are
    // clustered over (the catalog's slowest NIC is 10 Gbit/s). A "> 0" rule let 5e-324 through
    // and the communication time became infinite, written as null.
    auto bad_bw = [](const std::optional<double>& v) {
        return v && !(std::isfinite(*v) && *v >= kMinLinkBandwidth && *v <= kMaxLinkBandwidth);
    };
    if (bad_bw(c.scale_out_gbit_per_s_per_node)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "scale_out_gbit_per_s_per_node must be between 1 and 1e7",
                         "/hardware/scale_out_gbit_per_s_per_node");
    }
    if (c.scale_up_domain &&
        (*c.scale_up_domain < 1 || *c.scale_up_domain > kMaxAcceleratorCount)) {
        return MakeError(
            ErrorCode::kInvalidArgument,
            "scale_up_domain must be between 1 and " + std::to_string(kMaxAcceleratorCount),
            "/hardware/scale_up_domain");
    }
    if (bad_bw(c.scale_up_gb_per_s)) {
        return MakeError(ErrorCode::kInvalidArgument, "scale_up_gb_per_s must be between 1 and 1e7",
                         "/hardware/scale_up_gb_per_s");
    }
    if (!(c.accelerator.memory_gb > 0) || !(c.accelerator.memory_gb_per_s > 0)) {
        return MakeError(
            ErrorCode::kInvalidArgument,
            "accelerator '" + c.accelerator.id + "' has no memory size or bandwidth in the catalog",
            "/hardware/accelerator");
    }
    return Ok{};
}

}  // namespace gpucost::pricing::estimate
