#pragma once

#include <optional>

#include "pricing/accelerator.hpp"
#include "pricing/assumption.hpp"
#include "pricing/error.hpp"
#include "pricing/estimate/cluster.hpp"
#include "pricing/estimate/model.hpp"
#include "pricing/estimate/roofline.hpp"

namespace gpucost::pricing::estimate {

// One model replica served by cluster.accelerator_count accelerators in tensor parallel
// (unless `tensor_parallel` says fewer, in which case the rest are further replicas).
struct InferenceRequest {
    ModelSpec model;
    Precision precision = Precision::kBf16;  // weights and compute
    std::optional<Precision> kv_cache_precision;  // default: same as weights
    int batch_size = 1;     // sequences decoded together
    int input_tokens = 0;   // prompt length per sequence
    int output_tokens = 0;  // generated tokens per sequence
    std::optional<int> tensor_parallel;
    EfficiencyOverrides efficiency;
    // Fixed cost per decode step (sampling, scheduling), seconds. Default 0.
    std::optional<double> step_overhead_s;
    std::optional<double> memory_overhead_gb;
};

struct InferenceEstimate {
    double time_to_first_token_ms = 0;  // prefill of the whole batch
    double inter_token_latency_ms = 0;  // mean decode step
    double output_tokens_per_second = 0;               // per replica, incl. prefill time
    double output_tokens_per_second_per_accelerator = 0;
    double request_latency_ms = 0;      // prefill + all decode steps
    double prefill_tokens_per_second = 0;
    std::string prefill_bound;  // "compute" | "memory"
    std::string decode_bound;
    double memory_per_accelerator_gb = 0;
    double weights_gb_per_accelerator = 0;
    double kv_cache_gb_per_accelerator = 0;
    double memory_capacity_gb = 0;
    bool fits_in_memory = false;
    int max_batch_size = 0;  // largest batch whose KV cache fits at input+output tokens
    int tensor_parallel = 1;
    int replicas = 1;
    ResolvedModel model;
    Assumptions assumptions;
};

inline constexpr int kMaxBatchSize = 1 << 20;
// HBM bandwidth reached by serving engines streaming weights and KV cache (prefill of short
// prompts and every decode step), fraction of peak. Training's large transfers reach 0.9
// (Calculon); serving's measured figures are lower: NIM 70B FP8 on 2x H100 decodes at 0.55 of
// peak, LLM-Viewer's ideal roofline over-predicts TensorRT-LLM by 1.5-1.9x (0.53-0.67);
// estimator-references.md section 3.5. Callers override with efficiency.memory_bandwidth_efficiency.
inline constexpr double kServingBandwidthEfficiency = 0.65;
inline constexpr int kMaxInferenceTokens = 1 << 24;

[[nodiscard]] Result<InferenceEstimate> EstimateInference(const InferenceRequest& request,
                                                          const ClusterSpec& cluster);

}  // namespace gpucost::pricing::estimate
