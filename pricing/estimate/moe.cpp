#include "pricing/estimate/moe.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace gpucost::pricing::estimate {

int ExpertModelShards(const ParallelLayout& l) {
    return ExpertTensorDegree(l) * l.expert;
}

int ExpertDataDegree(const ParallelLayout& l) {
    const long long ranks = static_cast<long long>(l.tensor) * std::max(1, l.context) * l.data;
    return static_cast<int>(std::max(1LL, ranks / ExpertModelShards(l)));
}

bool ExpertGridDivides(int tensor, int data, int expert, int expert_tensor) {
    if (tensor < 1 || data < 1 || expert < 1 || expert_tensor < 1) return false;
    const long long ranks = static_cast<long long>(tensor) * data;
    return ranks % (static_cast<long long>(expert) * expert_tensor) == 0;
}

int DefaultExpertTensorDegree(int tensor, int data, int expert) {
    if (expert >= 1 && data % expert == 0) return tensor;
    return ExpertGridDivides(tensor, data, expert, 1) ? 1 : 0;
}

MoeLayerShape MoeLayerShapeOf(const ParallelLayout& l, double tokens, int experts, int top_k,
                              double hidden, double act_bpe, bool low_precision_gemms) {
    MoeLayerShape s;
    s.tokens = tokens;
    s.tensor = std::max(1, l.tensor);
    s.expert = std::max(1, l.expert);
    s.expert_tensor = std::max(1, ExpertTensorDegree(l));
    s.experts = std::max(1, experts);
    s.top_k = std::max(1, top_k);
    s.hidden = hidden;
    s.act_bpe = act_bpe;
    s.dispatch_bpe = low_precision_gemms ? std::min(act_bpe, kFp8DispatchBytesPerElement) : act_bpe;
    s.context = std::max(1, l.context);
    return s;
}

double MoeTokensPerRank(const MoeLayerShape& s) {
    return s.tokens / (static_cast<double>(s.tensor) * s.context);
}

double TokensPerLocalExpert(const MoeLayerShape& s) {
    return MoeTokensPerRank(s) * s.top_k * s.expert * s.expert_tensor / s.experts;
}

double GroupedGemmTileFill(const MoeLayerShape& s) {
    const double rows = TokensPerLocalExpert(s);
    if (!(rows > 0)) return 1.0;
    return rows / (kGroupedGemmTileRows * std::ceil(rows / kGroupedGemmTileRows));
}

double PermuteBytesPerPass(const MoeLayerShape& s) {
    const double slots = MoeTokensPerRank(s) * s.top_k;
    return slots * (kPermuteUnpermuteSlotPasses * s.hidden * s.act_bpe + kRouterProbBytesPerSlot);
}

double RoutingSecondsPerPass(const DeviceModel& dev, const MoeLayerShape& s) {
    return MemoryTime(dev, PermuteBytesPerPass(s)).seconds +
           kRouterKernelsPerPass * dev.kernel_overhead_s;
}

double ExpertScaleOutShare(const MoeLayerShape& s, const ClusterLinks& links) {
    if (s.expert * s.expert_tensor <= links.scale_up_domain) return 0;
    const double local = std::max(1, links.scale_up_domain / s.expert_tensor);
    return (s.expert - local) / s.expert;
}

int ExpertGroupDomains(const MoeLayerShape& s, const ClusterLinks& links) {
    const int per_domain = std::max(1, links.scale_up_domain / s.expert_tensor);
    return std::max(1, (s.expert + per_domain - 1) / per_domain);
}

double RemoteDomainsPerToken(const MoeLayerShape& s, const ClusterLinks& links) {
    const double domains = ExpertGroupDomains(s, links);
    if (domains <= 1) return 0;
    return (domains - 1.0) * (1.0 - std::pow(1.0 - 1.0 / domains, s.top_k));
}

double ScaleOutCopiesPerToken(const MoeLayerShape& s, const ClusterLinks& links) {
    const double slots = s.top_k * ExpertScaleOutShare(s, links);
    if (!kFlexDispatcherDeduplicatesScaleOut) return slots;
    return std::min(slots, RemoteDomainsPerToken(s, links));
}

double ExpertAllToAllSeconds(const MoeLayerShape& s, const ClusterLinks& links,
                             double bytes_per_element) {
    if (s.expert <= 1) return 0;
    const double token_bytes = s.hidden * bytes_per_element * kForceBalancedLoadImbalance;
    const double bytes = MoeTokensPerRank(s) * s.top_k * token_bytes;
    const double out_share = ExpertScaleOutShare(s, links);
    if (out_share <= 0) {
        const double up_share = (s.expert - 1.0) / s.expert;
        const Link& up = links.GroupLink(s.expert * s.expert_tensor);
        return up_share * bytes / up.bytes_per_s + (s.expert - 1.0) * up.hop_latency_s;
    }
    // Every slot not bound for the rank itself crosses the scale-up links once: directly, or
    // forwarded inside the remote domain after the network.
    const double up_s = (s.expert - 1.0) / s.expert * bytes / links.scale_up.bytes_per_s;
    const double out_bytes = MoeTokensPerRank(s) * ScaleOutCopiesPerToken(s, links) * token_bytes;
    const double out_s = out_bytes / links.scale_out.bytes_per_s;
    return std::max(up_s, out_s) + (s.expert - 1.0) * links.scale_out.hop_latency_s;
}

double ExpertTensorGatherSeconds(const MoeLayerShape& s, const ClusterLinks& links) {
    if (s.expert_tensor <= 1) return 0;
    const double block = MoeTokensPerRank(s) * s.top_k * s.hidden * s.act_bpe;
    const Link& link = links.GroupLink(s.expert_tensor);
    return (s.expert_tensor - 1.0) * (block / link.bytes_per_s + link.hop_latency_s);
}

double ExpertDispatchCombineSeconds(const MoeLayerShape& s, const ClusterLinks& links) {
    return ExpertAllToAllSeconds(s, links, s.dispatch_bpe) +
           ExpertAllToAllSeconds(s, links, s.act_bpe) + 2.0 * ExpertTensorGatherSeconds(s, links);
}

namespace {

// The request's names of the CUDA-graph modes, in MoeCudaGraphs order.
constexpr std::array<const char*, 3> kMoeCudaGraphsNames = {"none", "router", "full_iteration"};

}  // namespace

const char* MoeCudaGraphsName(MoeCudaGraphs g) {
    return kMoeCudaGraphsNames.at(static_cast<std::size_t>(g));
}

std::optional<MoeCudaGraphs> ParseMoeCudaGraphs(std::string_view name) {
    for (std::size_t i = 0; i < kMoeCudaGraphsNames.size(); ++i) {
        if (name == kMoeCudaGraphsNames[i]) return static_cast<MoeCudaGraphs>(i);
    }
    return std::nullopt;
}

double MoeLayerHostSecondsPerPass(MoeCudaGraphs graphs) {
    switch (graphs) {
        case MoeCudaGraphs::kRouter:
            return kMoeLayerHostExposedSecondsPerPassRouterGraphs;
        case MoeCudaGraphs::kFullIteration:
            return kMoeLayerHostExposedSecondsPerPassFullIteration;
        case MoeCudaGraphs::kNone:
            break;
    }
    return kMoeLayerHostExposedSecondsPerPass;
}

bool MoeA2aOverlapAllowed(const ParallelLayout& l) {
    return l.expert > 1 && l.recompute != Recompute::kFull &&
           (l.pipeline <= 1 || l.virtual_stages > 1);
}

double ExposedExpertAllToAllSeconds(double a2a_s, double paired_compute_s, bool overlapped) {
    return overlapped ? std::max(0.0, a2a_s - paired_compute_s) : a2a_s;
}

void AddMoeLayerAssumptions(const MoeLayerShape& s, const ClusterLinks& links,
                            double host_exposed_s, Assumptions& as) {
    constexpr const char* kDispatcher =
        "Megatron-Core MoEAlltoAllTokenDispatcher (token_dispatcher.py): router, permute, "
        "dispatch, grouped GEMMs, combine, unpermute";
    as.push_back({"moe_tokens_per_local_expert", TokensPerLocalExpert(s), "tokens",
                  "mean tokens each local expert's GEMM receives per micro-batch: T_r k EP ETP / E "
                  "(T_r: tokens per rank at the MoE input)",
                  "token_dispatcher.py num_global_tokens = num_local_tokens x TP x EP; "
                  "frontier-estimator-references 1b.1"});
    as.push_back({"grouped_gemm_tile_fill", GroupedGemmTileFill(s), "fraction",
                  "share of the grouped expert GEMM's 128-row tiles that carry tokens; the "
                  "routed GEMMs take 1 / fill of their dense time (Transformer Engine "
                  "GroupedLinear, --moe-grouped-gemm)",
                  "DeepGEMM README (contiguous layout: expert segments aligned to the M block); "
                  "efficiency on the grouped kernel's total FLOPs: TransformerEngine PR #2045 "
                  "(H100 BF16 grouped GEMMs 554-651 TFLOP/s)"});
    as.push_back({"moe_permute_bytes_per_layer_pass", PermuteBytesPerPass(s), "bytes",
                  "HBM traffic of the permute and unpermute around the dispatch (each reads "
                  "and writes every routed slot at full width) and the fp32 router "
                  "probabilities, per MoE layer, micro-batch and pass",
                  kDispatcher});
    as.push_back({"moe_router_kernels_per_pass", kRouterKernelsPerPass, "kernels",
                  "unfused top-k router kernels per MoE layer and pass, each at "
                  "kernel_overhead_s",
                  "NVIDIA/TensorRT-LLM tech blog 3 (DeepSeek R1 on Blackwell): unfused "
                  "group-limited top-k is 18 PyTorch ops"});
    as.push_back({"moe_load_imbalance", kForceBalancedLoadImbalance, "ratio",
                  "busiest expert rank's tokens over the mean: 1, routing force-balanced as in "
                  "the published Megatron-Bridge benchmarks (unbalanced routing runs slower)",
                  "NVIDIA-NeMo/Megatron-Bridge performance summary (--moe-router-force-load-"
                  "balancing); TensorRT-LLM EP load-balancer statistics give 2.6 unbalanced"});
    as.push_back({"moe_layer_host_exposed_s_per_pass", host_exposed_s, "s",
                  "host time each MoE layer and pass leaves the GPU waiting after the dropless "
                  "dispatcher's device-to-host synchronisation (0 where the all-to-all is "
                  "overlapped)",
                  "fitted on the fit rows of the MoE frontier set (docs/estimator.md); sync: "
                  "Megatron-LM token_dispatcher.py MoEAlltoAllTokenDispatcher cuda_sync_point"});
    as.push_back({"moe_dispatch_bytes_per_element", s.dispatch_bpe, "bytes",
                  "width of the dispatched tokens (1 where the expert GEMMs run below 16 bits: "
                  "FP8 dispatch halves the dispatch volume; the combine stays at the "
                  "activation width)",
                  "Megatron-LM megatron/core/transformer/moe/README.md, FP8 Training: \"50% EP "
                  "dispatch volume\"; DeepEP: FP8 dispatching and BF16 combining"});
    as.push_back({"expert_a2a_scale_out_copies_per_token", ScaleOutCopiesPerToken(s, links),
                  "copies",
                  "copies of each token that cross the scale-out network per all-to-all: the "
                  "flex dispatcher sends a token once per remote scale-up domain holding one of "
                  "its experts ((D - 1)(1 - (1 - 1/D)^k) for D domains, uniform routing) and "
                  "forwards it over the scale-up links",
                  "Megatron-LM MoE README, Token Dispatching (DeepEP: \"Removes redundant tokens "
                  "during cross-node communication\"); Megatron-Bridge performance recipes "
                  "(moe_flex_dispatcher_backend deepep / hybridep)"});
    as.push_back({"expert_tensor_gather_s_per_pass", ExpertTensorGatherSeconds(s, links), "s",
                  "all-gather of the dispatched tokens over the expert-tensor ranks before the "
                  "experts (and the reduce-scatter after), each per MoE layer and pass; 0 at "
                  "expert_tensor 1",
                  "Megatron-LM token_dispatcher.py MoEAlltoAllTokenDispatcher: dispatch "
                  "postprocess AG(TP), combine preprocess RS(TP)"});
    as.push_back({"expert_a2a_scale_out_share", ExpertScaleOutShare(s, links), "fraction",
                  "share of each rank's dispatched token-slots that cross the scale-out "
                  "network (the rest of the expert group shares its scale-up domain); the two "
                  "tiers run at once and the slower sets the all-to-all's time",
                  "frontier-estimator-references 1b.6 (DeepEP docs: NVLink and RDMA shares of "
                  "one dispatch)"});
}

void AddMoeSwitchAssumptions(const MoeOptions& given, MoeCudaGraphs graphs, bool a2a_overlap,
                             const ParallelLayout& l, Assumptions& as) {
    as.push_back({"moe_cuda_graphs", static_cast<double>(graphs), "mode",
                  std::string("how the MoE layers are launched (0 none: eager; 1 router: CUDA "
                              "graphs over the router and dispatch preprocessing; 2 "
                              "full_iteration): ") +
                      MoeCudaGraphsName(graphs) + ", which sets moe_layer_host_exposed_s_per_pass",
                  given.cuda_graphs ? AssumptionText("request (moe.cuda_graphs)")
                                    : AssumptionText("default: Megatron-Core --cuda-graph-impl "
                                                     "none; Megatron-Bridge recipes set "
                                                     "cuda_graph_impl / cuda_graph_scope")});
    const bool applied = a2a_overlap && MoeA2aOverlapAllowed(l);
    std::string what = applied ? "1: the EP all-to-all hides behind the paired micro-batch's "
                                 "layer compute; only what exceeds it is exposed"
                               : "0: the EP all-to-all is on the critical path";
    if (a2a_overlap && !applied) {
        what +=
            " (asked for, but Megatron-Core allows it only with expert parallelism, without "
            "full recompute and with virtual pipeline stages where the pipeline has more "
            "than one stage: the chosen layout is not such)";
    }
    as.push_back({"moe_a2a_overlap", applied ? 1.0 : 0.0, "bool", what,
                  given.a2a_overlap
                      ? AssumptionText("request (moe.a2a_overlap); Megatron-LM MoE README, EP "
                                       "communication overlap; transformer_config.py "
                                       "preconditions")
                      : AssumptionText("default: Megatron-Core --overlap-moe-expert-parallel-"
                                       "comm off; Megatron-Bridge recipes set moe_a2a_overlap")});
}

}  // namespace gpucost::pricing::estimate
