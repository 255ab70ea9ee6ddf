#pragma once

#include "pricing/assumption.hpp"
#include "pricing/estimate/model.hpp"
#include "pricing/estimate/training.hpp"

namespace gpucost::pricing::estimate {

// Megatron-Core's FP8 training "Stores linear layer inputs in FP8 instead of BF16" ("50%
// activation reduction", megatron/core/transformer/moe/README.md, FP8 Training): Transformer
// Engine's linear layers save the quantised input their weight gradient reads. FP8 inputs
// carry block scales: one fp32 per 1x128 (blockwise) or one E8M0 per 32 (MXFP8), 1/32 byte per
// element either way (frontier-estimator-references 2b.7; per-tensor scaling would be less).
inline constexpr double kFp8ActivationScaleBytesPerElement = 1.0 / 32;

// Bytes per element of a saved linear-layer input at `precision`, on the 16-bit scale of
// LayerActivations (fp32 runs scale the whole count): 2 at 16 bits and above, FP8 with its
// block scales, NVFP4 with its own (kFp4BytesPerElement).
double LinearInputBytes(Precision precision);

// How one layer's activations are stored on one rank: the layout's tensor and context degrees,
// sequence parallelism, the recompute mode and the attention kernel.
struct ActivationLayout {
    int micro_batch = 1;  // sequences per micro-batch
    int tensor = 1;
    int context = 1;  // context-parallel degree: each rank holds 1/context of every sequence
    bool sequence_parallel = false;
    Recompute recompute = Recompute::kNone;
    bool flash_attention = true;
    // Selective recompute only: Megatron-Core's recompute modules (the attention core alone by
    // default, as the estimate has always counted selective recompute).
    RecomputeModules modules = kSelectiveDefaultModules;
    // MoE: the expert-tensor degree, over which each expert-tensor rank gathers the routed
    // token copies at full width.
    int expert_tensor = 1;
    // Bytes per element of what a linear layer saves as its input for its weight gradient:
    // 16-bit, or below 16 bits the quantised copy (LinearInputBytes).
    double linear_input_bytes = 2.0;
};

// The stored activations of one layer and micro-batch by component, in bytes on one rank at
// 16 bits per element (Korthikanti et al. 2022, arXiv 2205.05198 Sec. 4.1 and Table 2, with
// the component list generalised as docs/estimator.md gives it: query and key/value widths
// for grouped-query attention, the MLP's own width, two up-projections for a gated MLP,
// dropout masks only for models trained with dropout, FlashAttention's softmax statistics in
// place of the score matrices). Regions outside tensor parallelism (norms, the inputs of the
// first GEMMs of each block, dropout masks) are split by the tensor degree only with sequence
// parallelism; every component is split by the context degree (each rank keeps its share of
// the tokens).
struct LayerActivationParts {
    double norm_inputs = 0;       // two norms' inputs
    double block_inputs = 0;      // QKV and first MLP GEMM inputs (the norms' outputs)
    double attention_qkv = 0;     // Q, K and V, saved by the attention core
    double attention_output = 0;  // the core's output, the output projection's input
    double softmax_stats = 0;     // FlashAttention's log-sum-exp per query and head (fp32)
    double scores = 0;            // unfused attention: softmax output (+ dropout mask, output)
    double mlp_hidden = 0;        // the MLP's up-projection output(s) (and router probabilities)
    double mlp_down_inputs = 0;   // the activation output, the down projection's input
    double expert_inputs = 0;     // MoE: each token's routed copies at the experts' fc1 inputs
    double dropout_masks = 0;     // 1-byte masks after attention and MLP
    double layer_input = 0;       // full recompute keeps only this
    double Total() const {
        return norm_inputs + block_inputs + attention_qkv + attention_output + softmax_stats +
               scores + mlp_hidden + mlp_down_inputs + expert_inputs + dropout_masks + layer_input;
    }
};

// Models with a gated MLP (the Llama, Mistral and Qwen families) are trained without dropout
// (their configs set attention and hidden dropout to 0); the GPT-style ones with it
// (Korthikanti et al. 2022 count its masks).
bool TrainedWithDropout(const ResolvedModel& model);

LayerActivationParts LayerActivations(const ResolvedModel& model, const ActivationLayout& layout);

// The bytes one layer and micro-batch no longer stores when `module` alone is recomputed:
// what the layer's count above holds for it (the component list; for MoE models Korthikanti's
// 34 sbh split into his components, Sec. 4.1). layernorm drops the two norms' outputs,
// mla_up_proj the up-projected Q/K/V (MLA models only), moe_act the activation output of the
// routed experts' MLP, mlp / moe / shared_experts their module's internals (dense layers, MoE
// layers, the shared experts' share of them), core_attn what selective recompute has always
// dropped. 0 where the model has no such module.
double RecomputeModuleFreedBytes(const ResolvedModel& model, const ActivationLayout& layout,
                                 RecomputeModule module);

// The echo of the chosen layout's activations per layer (activation_bytes_per_layer_gb).
// Under full recompute `recomputed_share` of the layers keeps its input only and the rest
// everything (block recompute: the mean per layer, as the memory counts them).
void AddActivationAssumption(const ResolvedModel& model, const ActivationLayout& layout,
                             double recomputed_share, Assumptions& out);

}  // namespace gpucost::pricing::estimate
