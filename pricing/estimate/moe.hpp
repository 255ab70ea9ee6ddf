#pragma once

#include "pricing/estimate/collectives.hpp"
#include "pricing/estimate/roofline.hpp"
#include "pricing/estimate/training.hpp"

namespace gpucost::pricing::estimate {

// Megatron-Core's expert grid. Attention runs on tensor x data (x pipeline) ranks; the routed
// experts of one pipeline stage run on the same tensor x data ranks regrouped as
// expert-tensor x expert x expert-data, so the expert group may span tensor and data ranks
// ("MoE Parallel Folding": the EP x ETP group is "a sub-group of DP x CP x TP in Attention",
// Megatron-LM megatron/core/transformer/moe/README.md; arXiv 2504.14960;
// megatron/core/parallel_state.py initialize_model_parallel:
// expert_data_parallel_size = world / (expert_tensor x expert x pipeline)).

// The expert-tensor-parallel degree of `l`: its own, or the tensor degree (Megatron-Core's
// default, --expert-tensor-parallel-size unset).
// Inline: the layout search asks it for every memory check.
inline int ExpertTensorDegree(const ParallelLayout& l) {
    return l.expert_tensor > 0 ? l.expert_tensor : l.tensor;
}
// Ranks of one pipeline stage that split its routed experts: expert-tensor x expert.
int ExpertModelShards(const ParallelLayout& l);
// Replicas of each routed-expert shard, which reduce its gradients (and shard its optimizer
// state under ZeRO): tensor x context x data / (expert-tensor x expert).
int ExpertDataDegree(const ParallelLayout& l);
// Whether expert-tensor x expert ranks tile the tensor x data ranks of a stage. Context ranks
// join the grid (the folded EP group is "a sub-group of DP x CP x TP"): callers pass data x
// context as `data`.
bool ExpertGridDivides(int tensor, int data, int expert, int expert_tensor);
// The expert-tensor degree a layout gets when the request does not set it: the tensor degree
// where the expert degree divides the data degree (the classic layout, experts a sub-group of
// data-parallel ranks, and Megatron-Core's default), else 1 where expert ranks tile tensor x
// data (the folded layout the MoE README recommends for fine-grained MoE: "Recommended to set
// to 1 for fine-grained MoE models"), else 0: no grid.
int DefaultExpertTensorDegree(int tensor, int data, int expert);

// What one MoE layer costs under Megatron-Core's alltoall dispatcher beyond its GEMM FLOPs
// (router, permute, dispatch, grouped expert GEMMs, combine, unpermute: the stages of
// megatron/core/transformer/moe/token_dispatcher.py, MoEAlltoAllTokenDispatcher), for one
// micro-batch on one rank of layout `l`.
struct MoeLayerShape {
    double tokens = 0;  // tokens of one micro-batch (micro-batch size x sequence)
    int tensor = 1;
    int expert = 1;
    int expert_tensor = 1;
    int experts = 1;          // routed experts of the layer
    int top_k = 1;            // routed experts per token
    double hidden = 0;        // model width
    double act_bpe = 2;       // bytes per activation element (the combine's and gathers' width)
    double dispatch_bpe = 2;  // bytes per element of the dispatched tokens
    int context = 1;          // context-parallel degree: splits the sequence like tensor ranks
};
MoeLayerShape MoeLayerShapeOf(const ParallelLayout& l, double tokens, int experts, int top_k,
                              double hidden, double act_bpe, bool low_precision_gemms);

// Grouped-GEMM kernels tile each expert's rows in blocks of this many (DeepGEMM's contiguous
// layout aligns "each expert segment" to the GEMM M block, deepseek-ai/DeepGEMM README;
// Transformer Engine's grouped GEMMs use CUTLASS/cuBLAS tiles of 128 rows on Hopper/Blackwell).
inline constexpr double kGroupedGemmTileRows = 128;
// Memory passes of the permute and unpermute around the dispatch, each reading and writing
// every routed token-slot (frontier-estimator-references 1b.2: bytes ~ 2 x T_r k h B each).
inline constexpr double kPermuteUnpermuteSlotPasses = 4;
// The router's probabilities, fp32 per routed slot (Megatron recommends
// --moe-router-dtype fp32, megatron/core/transformer/moe/README.md).
inline constexpr double kRouterProbBytesPerSlot = 4;
// Kernels of an unfused top-k router per pass: "18 PyTorch ops" for DeepSeek-style group-
// limited top-k (NVIDIA/TensorRT-LLM tech blog 3, Optimizing DeepSeek R1 on Blackwell), each
// timed at the device's per-kernel overhead.
inline constexpr double kRouterKernelsPerPass = 18;
// Load imbalance (busiest expert rank over the mean) of the published Megatron-Bridge
// benchmarks, which force-balance routing (NVIDIA-NeMo/Megatron-Bridge
// docs/performance-summary: "routing force-balanced"; --moe-router-force-load-balancing).
inline constexpr double kForceBalancedLoadImbalance = 1.0;

// Host time a Megatron-Core MoE layer exposes per pass: the dropless alltoall dispatcher
// copies the tokens per expert to the host and synchronises ("A cuda stream synchronization is
// needed ... because there are several non-blocking DtoH data transfers", token_dispatcher.py
// MoEAlltoAllTokenDispatcher, cuda_sync_point), so the GPU's queue drains and waits while the
// host launches the rest of the layer. Two fitted lumps, one per way the layer is launched
// (the request's moe.cuda_graphs), fitted together: of 1-6 ms (eager) and 0-5 ms (router
// graphs) in 0.5 ms steps, the pair with the lowest mean |log(predicted / published)| over
// the 24 fit rows of tests/data/frontier/moe.jsonl, each row with its recipe's switches (the
// held-out rows not shown while fitting), after the sourced dispatch terms below; each also
// carries what else those runs spend beyond the modelled kernels (docs/estimator.md, MoE). A
// host time hidden behind the layer's expert GEMMs (max(0, host - GPU)) fitted worse and was
// left out. Not applied where the all-to-all is overlapped by DualPipe.
// Eager: every kernel of the layer launched from Python (--cuda-graph-impl none, Megatron-
// Core's default).
inline constexpr double kMoeLayerHostExposedSecondsPerPass = 5.5e-3;
// Transformer Engine CUDA graphs over the router and the dispatch preprocessing
// (cuda_graph_scope moe_router, moe_preprocess: the part before the synchronisation is
// replayed as one graph; the experts and the combine after it are launched eagerly).
inline constexpr double kMoeLayerHostExposedSecondsPerPassRouterGraphs = 2.5e-3;
// A captured iteration replays without host launches or synchronisation
// (cuda_graph_impl full_iteration, which Megatron-Bridge's MXFP8 DeepSeek-V3 recipes run).
inline constexpr double kMoeLayerHostExposedSecondsPerPassFullIteration = 0.0;
// The host time per MoE layer and pass of `graphs`.
double MoeLayerHostSecondsPerPass(MoeCudaGraphs graphs);

// Megatron-Core's EP all-to-all overlap (--overlap-moe-expert-parallel-comm with
// --delay-wgrad-compute; Megatron-Bridge moe_a2a_overlap) "overlaps All-to-All with
// computation by merging FWD-BWD passes of adjacent microbatches" (Megatron-LM MoE README):
// in steady state a layer's dispatch and combine run while the paired micro-batch's layer
// computes, so only what exceeds that compute stays exposed. Megatron-Core accepts it only
// with expert parallelism, without full recompute, and with virtual pipeline stages where
// there is pipeline parallelism (transformer_config.py __post_init__).
bool MoeA2aOverlapAllowed(const ParallelLayout& l);
// The layer's all-to-all seconds left exposed when `overlapped` behind `paired_compute_s`.
double ExposedExpertAllToAllSeconds(double a2a_s, double paired_compute_s, bool overlapped);
// Bytes per element of the dispatched tokens when the expert GEMMs run below 16 bits: "50% EP
// dispatch volume: Dispatches tokens in FP8 instead of BF16" (Megatron-LM
// megatron/core/transformer/moe/README.md, FP8 Training); the combine stays in BF16 (DeepEP's
// tests: "FP8 dispatching and BF16 combining").
inline constexpr double kFp8DispatchBytesPerElement = 1;
// Megatron-Bridge's MoE performance recipes run the flex dispatcher (DeepEP or HybridEP:
// moe_flex_dispatcher_backend "deepep" / "hybridep", scripts/performance/configs/deepseek/
// deepseek_workload_base_configs.py), which "Removes redundant tokens during cross-node
// communication" (Megatron-LM MoE README, Token Dispatching): a token crosses the network once
// per remote scale-up domain that holds one of its experts, then is forwarded over the
// scale-up links. Echoed as expert_a2a_scale_out_copies_per_token.
inline constexpr bool kFlexDispatcherDeduplicatesScaleOut = true;

// Tokens per rank at the MoE input (sequence parallel splits them over tensor ranks, context
// parallel over context ranks): T_r = b s / (t c).
double MoeTokensPerRank(const MoeLayerShape& s);
// Mean tokens each local expert receives after dispatch: T_r k EP ETP / E.
double TokensPerLocalExpert(const MoeLayerShape& s);
// Share of the grouped GEMM's tile rows that carry tokens: M_e / (128 ceil(M_e / 128)).
double GroupedGemmTileFill(const MoeLayerShape& s);
// Bytes the permute and unpermute (and the router's probabilities) move per pass.
double PermuteBytesPerPass(const MoeLayerShape& s);
// Seconds of one pass's permute, unpermute and router kernels on `dev`.
double RoutingSecondsPerPass(const DeviceModel& dev, const MoeLayerShape& s);
// Share of a rank's dispatched token-slots that cross the scale-out network: the expert
// group spans expert-tensor x expert consecutive ranks, of which a scale-up domain holds
// domain / expert-tensor expert ranks; a slot bound for the rank itself moves nothing.
double ExpertScaleOutShare(const MoeLayerShape& s, const ClusterLinks& links);
// Scale-up domains the expert group spans, and how many of the other ones a token's top-k
// experts reach on average under uniform routing: (D - 1)(1 - (1 - 1/D)^k).
int ExpertGroupDomains(const MoeLayerShape& s, const ClusterLinks& links);
double RemoteDomainsPerToken(const MoeLayerShape& s, const ClusterLinks& links);
// Copies of each token that cross the scale-out network in one all-to-all: its slots bound
// off the domain, or, deduplicated by the flex dispatcher, the remote domains it reaches.
double ScaleOutCopiesPerToken(const MoeLayerShape& s, const ClusterLinks& links);
// One all-to-all of a pass at `bytes_per_element`: the scale-up and scale-out shares run at
// once on their own links, the slower sets the time (frontier-estimator-references 1b.6).
double ExpertAllToAllSeconds(const MoeLayerShape& s, const ClusterLinks& links,
                             double bytes_per_element);
// With expert-tensor ranks (ETP > 1) the dispatcher all-gathers the received tokens over them
// before the experts and reduce-scatters after ("dispatch postprocess: AG(TP)->sort_chunk ...
// combine preprocess: sort_chunk->RS(TP)", token_dispatcher.py): each rank receives
// (ETP - 1) blocks of its T_r k slots. One of the two, per pass.
double ExpertTensorGatherSeconds(const MoeLayerShape& s, const ClusterLinks& links);
// Dispatch (at dispatch_bpe) and combine (at act_bpe) of one pass, with the expert-tensor
// gather and scatter around the experts.
double ExpertDispatchCombineSeconds(const MoeLayerShape& s, const ClusterLinks& links);

// Echoes the MoE layer's figures and constants above under `assumptions`, with the host time
// the layout exposes per layer and pass.
void AddMoeLayerAssumptions(const MoeLayerShape& s, const ClusterLinks& links,
                            double host_exposed_s, Assumptions& as);
// Echoes the request's MoE switches as used: the CUDA-graph mode and whether the EP
// all-to-all overlap was asked for and applies to the chosen layout `l`.
void AddMoeSwitchAssumptions(const MoeOptions& given, MoeCudaGraphs graphs, bool a2a_overlap,
                             const ParallelLayout& l, Assumptions& as);

}  // namespace gpucost::pricing::estimate
