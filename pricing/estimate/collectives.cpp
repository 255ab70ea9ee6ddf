#include "pricing/estimate/collectives.hpp"

#include <algorithm>
#include <string>
#include <string_view>

namespace gpucost::pricing::estimate {

double RingAllReduceSeconds(double bytes, int ranks, const Link& link) {
    if (ranks <= 1 || bytes <= 0) {
        return 0;
    }
    double n = ranks;
    return 2.0 * (n - 1) / n * bytes / link.bytes_per_s + 2.0 * (n - 1) * link.hop_latency_s;
}

double RingAllGatherSeconds(double bytes, int ranks, const Link& link) {
    if (ranks <= 1 || bytes <= 0) {
        return 0;
    }
    double n = ranks;
    return (n - 1) / n * bytes / link.bytes_per_s + (n - 1) * link.hop_latency_s;
}

double RingReduceScatterSeconds(double bytes, int ranks, const Link& link) {
    return RingAllGatherSeconds(bytes, ranks, link);
}

double AllToAllSeconds(double bytes, int ranks, const Link& link) {
    return RingAllGatherSeconds(bytes, ranks, link);
}

double PointToPointSeconds(double bytes, const Link& link) {
    if (bytes <= 0) {
        return 0;
    }
    return bytes / link.bytes_per_s + link.hop_latency_s;
}

double HierarchicalAllReduceSeconds(double bytes, int ranks, int ranks_per_node, const Link& intra,
                                    const Link& inter) {
    if (ranks <= 1) {
        return 0;
    }
    int local = std::clamp(ranks_per_node, 1, ranks);
    int nodes = (ranks + local - 1) / local;
    return RingAllReduceSeconds(bytes, local, intra) +
           RingAllReduceSeconds(bytes / local, nodes, inter);
}

double HierarchicalAllGatherSeconds(double bytes, int ranks, int ranks_per_node, const Link& intra,
                                    const Link& inter) {
    if (ranks <= 1) {
        return 0;
    }
    int local = std::clamp(ranks_per_node, 1, ranks);
    int nodes = (ranks + local - 1) / local;
    return RingAllGatherSeconds(bytes, local, intra) +
           RingAllGatherSeconds(bytes / local, nodes, inter);
}

double PcieBidirectionalGbPerS(const Accelerator& a) {
    if (a.host_pcie_gen.find('6') != std::string::npos) {
        return 256;
    }
    if (a.host_pcie_gen.find('5') != std::string::npos) {
        return 128;
    }
    if (a.host_pcie_gen.find('3') != std::string::npos) {
        return 32;
    }
    return 64;  // Gen4 x16: 32 GB/s per direction
}

ClusterLinks MakeClusterLinks(const ClusterSpec& cluster, const DeviceModel& device,
                              bool with_assumptions) {
    ClusterLinks l;
    l.accelerators_per_node = cluster.accelerators_per_node > 0
                                  ? cluster.accelerators_per_node
                                  : DefaultAcceleratorsPerNode(cluster.accelerator);
    l.scale_up_domain = cluster.scale_up_domain
                            ? std::max(*cluster.scale_up_domain, 1)
                            : DefaultScaleUpDomain(cluster.accelerator, l.accelerators_per_node);
    AssumptionText up_source = "catalog";
    double up = cluster.accelerator.scale_up_gb_per_s.value_or(0);
    if (cluster.scale_up_gb_per_s) {
        up = *cluster.scale_up_gb_per_s;
        up_source = "request";
    } else if (!(up > 0)) {
        up = PcieBidirectionalGbPerS(cluster.accelerator);
        up_source =
            "no scale-up link in the catalog: host PCIe x16 of the accelerator's generation";
    }
    // A bridge joins pairs only: the catalog's link serves groups of two, and the node's
    // scale-up fabric for wider groups is host PCIe. A request that gives the link or the
    // domain describes the fabric itself.
    const double bridge = up;
    if (up_source == "catalog" && !cluster.scale_up_domain &&
        BridgeDomain(cluster.accelerator) > 0) {
        l.bridge_domain = BridgeDomain(cluster.accelerator);
        l.bridge.bytes_per_s = bridge / 2.0 * 1e9 * device.scale_up_efficiency;
        l.bridge.hop_latency_s =
            bridge <= kPcieClassGbPerS ? kScaleOutHopLatencyS : kScaleUpHopLatencyS;
        up = PcieBidirectionalGbPerS(cluster.accelerator);
        up_source =
            "NVLink bridge joins pairs only: wider groups cross host PCIe x16 of the "
            "accelerator's generation";
    }
    l.scale_up_gb_per_s_bidirectional = up;
    l.scale_up.bytes_per_s = up / 2.0 * 1e9 * device.scale_up_efficiency;
    l.scale_up.hop_latency_s = up <= kPcieClassGbPerS ? kScaleOutHopLatencyS : kScaleUpHopLatencyS;
    double out = cluster.scale_out_gbit_per_s_per_node.value_or(
        DefaultScaleOutGbitPerSPerNode(cluster.accelerator, l.accelerators_per_node));
    l.scale_out_gbit_per_s_per_node = out;
    l.scale_out.bytes_per_s =
        out / 8.0 * 1e9 / l.accelerators_per_node * device.scale_out_efficiency;
    l.scale_out.hop_latency_s = kScaleOutHopLatencyS;
    if (!with_assumptions) {
        return l;
    }
    l.assumptions = {
        {"accelerators_per_node", static_cast<double>(l.accelerators_per_node), "accelerators",
         "accelerators sharing one scale-up domain and one node's network",
         SourceOf(cluster.accelerators_per_node > 0, "default for the accelerator family")},
        {"scale_up_domain", static_cast<double>(l.scale_up_domain), "accelerators",
         "accelerators joined by the scale-up link; collectives within it use that link",
         cluster.scale_up_domain ? "request" : ScaleUpDomainSource(cluster.accelerator)},
        {"scale_up_gb_per_s", up, "GB/s", "scale-up bandwidth per accelerator, bidirectional",
         up_source == "catalog" ? AssumptionText("catalog: " + cluster.accelerator.spec_source)
                                : up_source},
        {"scale_out_gbit_per_s_per_node", out, "Gbit/s", "network bandwidth of one node",
         SourceOf(cluster.scale_out_gbit_per_s_per_node.has_value(),
                  "default for the accelerator family (DGX/HGX reference designs: 8 x 200 "
                  "Gbit/s for A100, 8 x 400 Gbit/s for H100 and later, 4 x 400 per GB200 tray; "
                  "100 Gbit/s for an instance smaller than the family's full node)")},
        {"scale_up_hop_latency_s", l.scale_up.hop_latency_s, "s",
         "latency per ring step on the scale-up link", "assumed (NCCL small-message latency)"},
        {"scale_out_hop_latency_s", kScaleOutHopLatencyS, "s",
         "latency per ring step across the network", "assumed (NCCL small-message latency)"},
    };
    if (l.bridge_domain > 0) {
        l.assumptions.push_back({"nvlink_bridge_domain", static_cast<double>(l.bridge_domain),
                                 "accelerators",
                                 "accelerators one NVLink bridge joins; tensor-parallel (and "
                                 "other) groups this small use it, wider ones cross PCIe",
                                 kNvlinkBridgeSource});
        l.assumptions.push_back({"nvlink_bridge_gb_per_s", bridge, "GB/s",
                                 "NVLink bridge bandwidth per accelerator, bidirectional",
                                 AssumptionText("catalog: " + cluster.accelerator.spec_source)});
    }
    return l;
}

}  // namespace gpucost::pricing::estimate
