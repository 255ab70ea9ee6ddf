#pragma once

#include "pricing/assumption.hpp"
#include "pricing/estimate/cluster.hpp"
#include "pricing/estimate/roofline.hpp"

namespace gpucost::pricing::estimate {

// One accelerator's effective path to its peers for a collective: bus bandwidth in bytes/s
// (link bandwidth in one direction times the collective efficiency) and latency per ring step.
struct Link {
    double bytes_per_s = 0;
    double hop_latency_s = 0;
};

// Ring all-reduce of `bytes` (the buffer size on each rank) over `ranks` ranks:
//   2 (n - 1) / n * bytes / bw + 2 (n - 1) * latency.  0 for n <= 1.
double RingAllReduceSeconds(double bytes, int ranks, const Link& link);
// Ring all-gather / reduce-scatter of a `bytes` buffer (the full, unsharded size):
//   (n - 1) / n * bytes / bw + (n - 1) * latency.
double RingAllGatherSeconds(double bytes, int ranks, const Link& link);
double RingReduceScatterSeconds(double bytes, int ranks, const Link& link);
// All-to-all where each rank holds `bytes` and keeps 1/n of it: (n - 1) / n * bytes / bw +
// (n - 1) * latency.
double AllToAllSeconds(double bytes, int ranks, const Link& link);
// Point-to-point send of `bytes`.
double PointToPointSeconds(double bytes, const Link& link);
// Two-level all-reduce: reduce-scatter and all-gather among `ranks_per_node` ranks over
// `intra`, and a ring all-reduce of bytes / ranks_per_node across the nodes over `inter`
// (one NIC share per rank). Equals RingAllReduceSeconds when everything is in one node.
double HierarchicalAllReduceSeconds(double bytes, int ranks, int ranks_per_node, const Link& intra,
                                    const Link& inter);
// Same decomposition for all-gather (reduce-scatter costs the same).
double HierarchicalAllGatherSeconds(double bytes, int ranks, int ranks_per_node, const Link& intra,
                                    const Link& inter);

// Per-step latency of a collective over the scale-up link and over the network.
inline constexpr double kScaleUpHopLatencyS = 1e-6;
inline constexpr double kScaleOutHopLatencyS = 5e-6;
// A scale-up link at or below this bidirectional bandwidth is PCIe-class and gets the
// network latency.
inline constexpr double kPcieClassGbPerS = 128;
// Host PCIe x16 bidirectional GB/s by generation, for accelerators without a scale-up link.
double PcieBidirectionalGbPerS(const Accelerator& accelerator);

// The links of a cluster as collectives see them, and the assumptions behind them.
struct ClusterLinks {
    int accelerators_per_node = 1;
    // Accelerators that reach each other over `scale_up` (>= accelerators_per_node): a group
    // of up to this many ranks (tensor, expert, a data-parallel subgroup) communicates over
    // the scale-up link; larger groups cross the scale-out network.
    int scale_up_domain = 1;
    Link scale_up;
    Link scale_out;  // one accelerator's share of its node's network bandwidth
    // Accelerators joined in pairs by an NVLink bridge (PCIe A100/H100, H100 NVL, RTX 3090):
    // a group of up to `bridge_domain` ranks uses `bridge`; larger groups in the node cross
    // PCIe (`scale_up` is then the host PCIe link). 0 without a bridge, or when the request
    // gives the scale-up link or domain itself.
    int bridge_domain = 0;
    Link bridge;
    double scale_up_gb_per_s_bidirectional = 0;
    double scale_out_gbit_per_s_per_node = 0;
    Assumptions assumptions;

    // The link a group of `ranks` ranks (tensor, expert or pipeline span) communicates over:
    // the bridge within a bridged pair, the scale-up link within the domain, else the network.
    const Link& GroupLink(int ranks) const {
        if (ranks <= bridge_domain) return bridge;
        return ranks <= scale_up_domain ? scale_up : scale_out;
    }
};
ClusterLinks MakeClusterLinks(const ClusterSpec& cluster, const DeviceModel& device,
                              bool with_assumptions = true);

}  // namespace gpucost::pricing::estimate
