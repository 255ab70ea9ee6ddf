#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "pricing/accelerator.hpp"
#include "pricing/assumption.hpp"
#include "pricing/error.hpp"

namespace gpucost::pricing::estimate {

// The machines a workload runs on: `accelerator_count` accelerators of one kind, grouped in
// nodes of `accelerators_per_node` joined by the accelerator's scale-up link (NVLink, ICI,
// ...), nodes joined by a scale-out network of `scale_out_gbit_per_s_per_node`.
struct ClusterSpec {
    Accelerator accelerator;
    int accelerator_count = 1;
    // 0 = the family default (DefaultAcceleratorsPerNode).
    int accelerators_per_node = 0;
    // Scale-out bandwidth of one node in Gbit/s (e.g. 3200 for AWS p5); nullopt = family
    // default (DefaultScaleOutGbitPerSPerNode).
    std::optional<double> scale_out_gbit_per_s_per_node;
    // Overrides Accelerator::scale_up_gb_per_s (bidirectional per chip), e.g. 64 for PCIe only.
    std::optional<double> scale_up_gb_per_s;
    // Accelerators joined by the scale-up link, possibly spanning several nodes (a GB200
    // NVL72 rack, a TPU slice over ICI); nullopt = DefaultScaleUpDomain.
    std::optional<int> scale_up_domain;
};

// Maximum limits a request is validated against.
inline constexpr int kMaxAcceleratorCount = 1 << 20;
inline constexpr int kMaxAcceleratorsPerNode = 1024;

// Accelerators per node when the caller gives none: 4 for TPU hosts and GB200 compute trays,
// 16 for Trainium (trn1/trn2 instances), 8 otherwise (HGX/DGX boards, OAM platforms, 8-GPU
// cloud instances).
int DefaultAcceleratorsPerNode(const Accelerator& accelerator);
// Scale-out Gbit/s per node when the caller gives none (documented per family in
// docs/estimator.md). `accelerators_per_node` below the family's full node (a 1- or 2-GPU cloud VM)
// gets a single-NIC instance's kPartialNodeScaleOutGbitPerS instead: such VMs sit on the
// data-centre network, not on the training fabric of a full HGX/DGX node. TPU chips are exempt
// (ICI).
inline constexpr double kPartialNodeScaleOutGbitPerS = 100;
double DefaultScaleOutGbitPerSPerNode(const Accelerator& accelerator, int accelerators_per_node);

// Size of the scale-up domain when the caller gives none: a multi-node NVLink or ICI domain
// for the accelerators that have one (kScaleUpDomains, sources in cluster.cpp), else the
// node. Never smaller than `accelerators_per_node`.
int DefaultScaleUpDomain(const Accelerator& accelerator, int accelerators_per_node);
// Where the default domain comes from, for the assumptions echo.
std::string ScaleUpDomainSource(const Accelerator& accelerator);

// An NVLink bridge joins two GPUs (A100 PCIe, H100 PCIe and H100 NVL product briefs: "NVLink
// bridge connects two GPUs"; GeForce RTX 3090: 2-way NVLink bridge). Accelerators whose
// catalog scale_up_interconnect is a bridge reach only their pair over it; wider groups in the
// node cross host PCIe.
inline constexpr int kNvlinkBridgeGpus = 2;
// kNvlinkBridgeGpus when the accelerator's scale-up link is a bridge, else 0.
int BridgeDomain(const Accelerator& accelerator);
inline constexpr char kNvlinkBridgeSource[] =
    "NVIDIA A100 PCIe, H100 PCIe and H100 NVL product briefs (NVLink bridge joins 2 GPUs); "
    "RTX 3090: 2-way NVLink bridge; catalog scale_up_interconnect names the bridge";

// Validates counts and bandwidths; errors name `/hardware/...`.
[[nodiscard]] Status ValidateCluster(const ClusterSpec& cluster);

}  // namespace gpucost::pricing::estimate
