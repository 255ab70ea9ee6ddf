#pragma once

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
int ExpertTensorDegree(const ParallelLayout& l);
// Ranks of one pipeline stage that split its routed experts: expert-tensor x expert.
int ExpertModelShards(const ParallelLayout& l);
// Replicas of each routed-expert shard, which reduce its gradients (and shard its optimizer
// state under ZeRO): tensor x data / (expert-tensor x expert).
int ExpertDataDegree(const ParallelLayout& l);
// Whether expert-tensor x expert ranks tile the tensor x data ranks of a stage.
bool ExpertGridDivides(int tensor, int data, int expert, int expert_tensor);
// The expert-tensor degree a layout gets when the request does not set it: the tensor degree
// where the expert degree divides the data degree (the classic layout, experts a sub-group of
// data-parallel ranks, and Megatron-Core's default), else 1 where expert ranks tile tensor x
// data (the folded layout the MoE README recommends for fine-grained MoE: "Recommended to set
// to 1 for fine-grained MoE models"), else 0: no grid.
int DefaultExpertTensorDegree(int tensor, int data, int expert);

}  // namespace gpucost::pricing::estimate
