#include "pricing/estimate/training.hpp"

#include <new>
#include <string>

#include "pricing/estimate/training_internal.hpp"

namespace gpucost::pricing::estimate {
namespace detail {

// ---- Step 1: the request's own fields ----
Status ValidateRequest(const TrainingRequest& req) {
    if (!(std::isfinite(req.tokens_b) && req.tokens_b > 0 && req.tokens_b <= kMaxTokensB)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "tokens_b must be a positive number of billions (at most 1e7)",
                         "/tokens_b");
    }
    if (req.global_batch_tokens &&
        !(std::isfinite(*req.global_batch_tokens) && *req.global_batch_tokens >= 1 &&
          *req.global_batch_tokens <= kMaxGlobalBatchTokens)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "global_batch_tokens must be between 1 and 1e10", "/global_batch_tokens");
    }
    if (auto s = CheckFraction(req.goodput, "/goodput", 0.01); !s.ok()) return s.error();
    if (auto s = CheckFraction(req.comm_overlap_fraction, "/comm_overlap_fraction", 0); !s.ok())
        return s.error();
    if (auto s = CheckFraction(req.tp_overlap_fraction, "/tp_overlap_fraction", 0); !s.ok())
        return s.error();
    if (auto s = CheckFraction(req.expert_overlap_fraction, "/expert_overlap_fraction", 0); !s.ok())
        return s.error();
    if (req.memory_overhead_gb &&
        !(std::isfinite(*req.memory_overhead_gb) && *req.memory_overhead_gb >= 0 &&
          *req.memory_overhead_gb <= 1e4)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "memory_overhead_gb must be between 0 and 10000", "/memory_overhead_gb");
    }
    if (!IsAdapterMode(req.mode)) {
        if (req.lora_rank) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "lora_rank applies only to mode lora or qlora", "/lora_rank");
        }
        if (req.lora_target_modules) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "lora_target_modules applies only to mode lora or qlora",
                             "/lora_target_modules");
        }
    }
    return Ok{};
}

// The adapter targets named by the request, resolved ("all-linear" expands); errors name
// the offending list entry.
Result<std::vector<std::string>> ResolveLoraTargets(const TrainingRequest& req) {
    std::vector<std::string> all(kLoraTargetModules.begin(), kLoraTargetModules.end());
    if (!req.lora_target_modules) {
        return all;
    }
    const auto& given = *req.lora_target_modules;
    if (given.empty() || given.size() > kMaxLoraTargetEntries) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "lora_target_modules must name between 1 and " +
                             std::to_string(kMaxLoraTargetEntries) + " modules",
                         "/lora_target_modules");
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < given.size(); ++i) {
        if (given[i] == kLoraAllLinear) {
            return all;
        }
        if (std::find(all.begin(), all.end(), given[i]) == all.end()) {
            return MakeError(ErrorCode::kInvalidArgument,
                             "unknown LoRA target module '" + given[i].substr(0, 32) +
                                 "'; use all-linear or any of q_proj, k_proj, v_proj, o_proj, "
                                 "gate_proj, up_proj, down_proj",
                             "/lora_target_modules/" + std::to_string(i));
        }
        if (std::find(out.begin(), out.end(), given[i]) == out.end()) out.push_back(given[i]);
    }
    return out;
}

// GEMM precisions below 16 bits, whose operands a training step quantises from 16 bits.
bool IsBelow16Bits(Precision p) {
    return p == Precision::kFp8 || p == Precision::kInt8 || p == Precision::kFp4;
}

// ---- Step 5: why nothing was found ----
Error NoLayoutError(const Ctx& c, const ParallelismRequest& pr, const SearchResult& r,
                    const ClusterSpec& cluster) {
    const int n = c.count;
    if (r.batch_too_small && !std::isfinite(r.best_need_gb)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "the global batch of " +
                             std::to_string(static_cast<long long>(c.global_batch_seqs)) +
                             " sequences is smaller than the data-parallel degree of every "
                             "layout on " +
                             std::to_string(n) +
                             " accelerators; raise global_batch_tokens or use fewer accelerators",
                         "/global_batch_tokens");
    }
    if (!std::isfinite(r.best_need_gb)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "no parallel layout matches the fixed parallelism fields on " +
                             std::to_string(n) + " accelerators",
                         "/parallelism");
    }
    const ParamSplit& train = Trainable(c);
    double trainable = train.replicated + train.routed;
    double frozen_gb = c.frozen_base ? c.m.params * c.frozen_weight_bpe : 0.0;
    double states_gb = (frozen_gb + trainable * (2.0 * c.weight_bpe + c.adam_bytes)) / kGb;
    double usable = c.capacity_gb - c.overhead_gb;
    double min_count = usable > 0 ? std::ceil(states_gb / (0.8 * usable)) : 0;
    std::string hint =
        usable > 0 ? "; weights, gradients and optimizer state alone need about " +
                         std::to_string(static_cast<long long>(std::ceil(states_gb))) +
                         " GB, so at least ~" + std::to_string(static_cast<long long>(min_count)) +
                         " accelerators of this kind (fully sharded) or more memory per accelerator"
                   : "";
    return MakeError(
        ErrorCode::kInvalidArgument,
        "the model does not fit: the smallest layout (" + Describe(r.best_need_layout) +
            ") needs " + std::to_string(r.best_need_gb) + " GB per accelerator but " +
            cluster.accelerator.id + " has " + std::to_string(c.capacity_gb) + " GB" + hint,
        pr.tensor || pr.context || pr.pipeline || pr.data || pr.zero_stage || pr.recompute ||
                pr.recompute_layers || pr.expert
            ? "/parallelism"
            : "/hardware/total_accelerators");
}

// A step holds whole micro-batches of whole sequences on every data-parallel replica, so the
// batch the optimizer sees can differ from the one asked for (or the default); it changes the
// step count and, for the run's convergence, the batch size itself, so the answer says so.
void WarnOnBatchChange(const TrainingRequest& req, TrainingEstimate& out) {
    const double asked = req.global_batch_tokens.value_or(kDefaultGlobalBatchTokens);
    if (std::abs(out.tokens_per_step - asked) <= kBatchChangeWarnFraction * asked) {
        return;
    }
    const ParallelLayout& l = out.parallelism;
    out.model.warnings.push_back(
        {"/global_batch_tokens",
         std::string(req.global_batch_tokens ? "global_batch_tokens "
                                             : "the default global batch of ") +
             std::to_string(static_cast<long long>(asked)) + " tokens became " +
             std::to_string(static_cast<long long>(out.tokens_per_step)) + " tokens per step (" +
             std::to_string(out.global_batch_sequences) + " sequences = data-parallel " +
             std::to_string(l.data) + " x micro-batch " + std::to_string(l.micro_batch_size) +
             " x " + std::to_string(out.micro_batches_per_step) +
             " micro-batches): every replica takes whole sequences; steps and the optimizer's "
             "batch follow tokens_per_step"});
}

// MFU and HFU count causal attention whole (PaLM, Megatron), twice what FlashAttention runs
// under the mask. Where attention dominates (very long sequences) they can pass what the GEMMs
// or even the peak allow; the answer then gives the utilisation of the work actually run.
void WarnOnCountedAttention(const Ctx& c, TrainingEstimate& out) {
    if (!c.flash || out.hfu <= c.dev.gemm_max_efficiency) {
        return;
    }
    const double share = AttentionFlopsPerToken(c.m) / out.model_flops_per_token;
    const double executed_mfu = out.mfu * (1.0 - (1.0 - kCausalWorkFraction) * share);
    out.model.warnings.push_back(
        {"/model/seq_len",
         "mfu " + std::to_string(out.mfu).substr(0, 5) + " and hfu " +
             std::to_string(out.hfu).substr(0, 5) +
             " count causal attention whole (PaLM convention), twice what FlashAttention runs "
             "under the mask; at this sequence length attention is " +
             std::to_string(static_cast<int>(std::lround(share * 100))) +
             "% of the counted FLOPs, so the work actually run uses " +
             std::to_string(executed_mfu).substr(0, 5) + " of peak"});
}

// ---- Step 6: the headline figures of the chosen layout ----
TrainingEstimate Summarize(const Ctx& c, const SearchResult& r) {
    TrainingEstimate out;
    const Eval& e = r.best;
    const int n = c.count;
    const double peak_total = c.dev.peak_flops * n;
    out.parallelism = e.layout;
    out.layout_searched = !r.fully_given;
    out.layouts_considered = r.considered;
    out.step_time_s = e.step_time_s;
    out.tokens_per_step = e.tokens_per_step;
    out.global_batch_sequences = static_cast<int>(std::min(
        e.tokens_per_step / c.m.seq_len, static_cast<double>(std::numeric_limits<int>::max())));
    out.micro_batches_per_step = e.micro_batches;
    out.steps = c.tokens / e.tokens_per_step;
    out.tokens_per_second = e.tokens_per_step / e.step_time_s;
    out.model_flops_per_token = ModelFlopsPerToken(c.m, c.mode, c.adapters.active_per_token);
    out.total_model_flops = out.model_flops_per_token * c.tokens;
    double model_flops_per_s = out.model_flops_per_token * out.tokens_per_second;
    out.mfu = model_flops_per_s / peak_total;
    out.hfu = e.hw_flops_per_step / e.step_time_s / peak_total;
    out.achieved_tflops_per_accelerator = model_flops_per_s / n / 1e12;
    out.hardware_tflops_per_accelerator = e.hw_flops_per_step / e.step_time_s / n / 1e12;
    double ideal_s = out.steps * e.step_time_s;
    out.ideal_wall_clock_hours = ideal_s / 3600.0;
    out.ideal_accelerator_hours = out.ideal_wall_clock_hours * n;
    out.wall_clock_hours = out.ideal_wall_clock_hours / c.goodput;
    const double spread = RunTimeSpreadFraction(c.m);
    out.wall_clock_hours_p10 = out.wall_clock_hours / (1.0 + spread);
    out.wall_clock_hours_p90 = out.wall_clock_hours * (1.0 + spread);
    out.accelerator_hours = out.wall_clock_hours * n;
    out.memory = e.memory;
    out.memory_per_accelerator_gb = e.memory.total_gb;
    out.memory_capacity_gb = c.capacity_gb;
    out.fits_in_memory = e.fits;
    out.memory_headroom_gb = c.capacity_gb - e.memory.total_gb;
    out.breakdown = e.breakdown;
    const StepBreakdown& br = e.breakdown;
    std::pair<double, const char*> shares[] = {
        {br.compute_s, "compute"},
        {br.memory_bound_s + br.optimizer_s, "memory_bandwidth"},
        {br.communication_s, "communication"},
        {br.bubble_s, "pipeline_bubble"}};
    out.bottleneck =
        std::max_element(std::begin(shares), std::end(shares), [](const auto& x, const auto& y) {
            return x.first < y.first;
        })->second;
    if (r.second.valid) {
        LayoutSummary rs;
        rs.layout = r.second.layout;
        rs.step_time_s = r.second.step_time_s;
        rs.memory_per_accelerator_gb = r.second.memory.total_gb;
        rs.mfu = out.model_flops_per_token * r.second.tokens_per_step / r.second.step_time_s /
                 peak_total;
        out.runner_up = rs;
    }
    out.model = c.m;
    FineTuning& ft = out.fine_tuning;
    ft.mode = c.mode;
    ft.lora_rank = c.adapters.rank;
    ft.lora_target_modules = c.adapters.targets;
    const ParamSplit& train = Trainable(c);
    ft.trainable_params = train.replicated + train.routed;
    ft.frozen_weight_bytes_per_param = c.frozen_base ? c.frozen_weight_bpe : 0.0;
    return out;
}

// ---- Step 7: the constants behind the figures ----
// The pipeline split, interleaving and MTP figures of the chosen layout, for the echo.
void AddPipelineAssumptions(const Ctx& c, const Eval& e, Assumptions& as) {
    auto add = [&](AssumptionText name, double v, AssumptionText unit, AssumptionText desc,
                   AssumptionText source) {
        as.push_back({std::move(name), v, std::move(unit), std::move(desc), std::move(source)});
    };
    if (e.layout.pipeline > 1) {
        add("head_stage_layers", HeadStageLayers(c.m.layers, e.layout.pipeline), "layers",
            "layers on the last pipeline stage, which also runs the output head (middle stages "
            "hold ceil(layers / pipeline); first and last share the rest, the last the smaller "
            "half)",
            "Llama 3 405B split, arXiv 2407.21783 Sec. 3.3.2");
        add("interleaved_activation_factor",
            1.0 + (e.layout.virtual_stages > 1
                       ? (e.layout.pipeline - 1.0) / (e.layout.pipeline * e.layout.virtual_stages)
                       : 0.0),
            "ratio",
            "first stage's stored layer activations over 1F1B's: 1 + (p - 1)/(p v) "
            "when interleaved (v > 1); the pipeline transfers grow by v as well",
            "Korthikanti et al. 2022 Sec. 4.2.3; Narayanan et al. 2021 Sec. 2.2.2");
    }
    add("deep_pipeline_search_min_accelerators", kDeepPipelineSearchMinAccelerators, "accelerators",
        "from this count up the search also tries pipeline degrees that do not divide the "
        "layers (uneven first and last stages) and more than two interleaved chunks per stage; "
        "below it even stages and at most two chunks, where the validation set's published "
        "runs agree better",
        "Llama 3 405B on 8,192 and 16,384 H100 (arXiv 2407.21783 Table 4); docs/estimator.md");
    add("min_searched_layers_per_chunk", kMinSearchedLayersPerChunk, "layers",
        "fewest layers per interleaved chunk the search tries (at most half the layers per "
        "stage in chunks); parallelism.virtual_stages may ask for more",
        "NVIDIA/dgxc-benchmarking Llama 3.1 405B H100 recipe (PP 8, VP 8: about 2 layers per "
        "chunk)");
    if (c.m.mtp_modules > 0) {
        add("mtp_modules", c.m.mtp_modules, "modules",
            "multi-token-prediction modules: one more block and output-head pass each per "
            "micro-batch on the last pipeline stage",
            "DeepSeek-V3 (arXiv 2412.19437 Sec. 2.2); model library mtp_modules");
    }
}

// Where a field's value came from: the request, the model's published training recipe (when
// it filled the field), or the default's own source.
AssumptionText FieldSource(const TrainingRequest& req, bool given, bool by_recipe,
                           AssumptionText default_source) {
    if (by_recipe && req.recipe) {
        return "training recipe of " + req.recipe->model_id +
               " (schema/seed/training_recipes.csv; the request left it unset): " +
               req.recipe->source;
    }
    return SourceOf(given, std::move(default_source));
}

// The recipe's fields that have no other echo (the precision is a request field without a
// number of its own).
void AddRecipeAssumptions(const TrainingRequest& req, const ParallelLayout& layout,
                          Assumptions& as) {
    if (!req.recipe) return;
    as.push_back({"recipe_applied", req.recipe->applied ? 1.0 : 0.0, "bool",
                  std::string(req.recipe->applied ? "1: the model's published training recipe "
                                                    "filled the fields the request left unset, "
                                                    "as "
                                                  : "0: the model's published training recipe "
                                                    "was not applied, as ") +
                      req.recipe->why,
                  "training recipe of " + req.recipe->model_id +
                      " (schema/seed/training_recipes.csv): " + req.recipe->source});
    // Only where the layout runs them: a published layout that does not fit the cluster leaves
    // the search free to choose none or full recompute.
    if (req.recipe->recompute_modules && layout.recompute == Recompute::kSelective) {
        const RecomputeModules* modules = NamedRecomputeModules(req);
        std::string names;
        for (const std::string& n : modules->Names()) names += (names.empty() ? "" : ", ") + n;
        as.push_back({"recipe_recompute_modules", static_cast<double>(modules->Names().size()),
                      "modules",
                      "selective recompute of " + names +
                          " (Megatron-Core's module names for what the published run "
                          "recomputes), where the request chose no recompute of its own",
                      FieldSource(req, false, true, "")});
    }
    if (!req.recipe->precision) return;
    as.push_back({"recipe_precision_bytes_per_element", BytesPerElement(req.precision), "bytes",
                  "GEMM operand size at " + std::string(PrecisionName(req.precision)) +
                      ", the precision the model was published as trained in (pass precision "
                      "to choose another)",
                  FieldSource(req, false, true, "")});
}

// What a step with GEMMs below 16 bits adds (Ctx::low_precision_gemms), as used.
void AddLowPrecisionAssumptions(const Ctx& c, Assumptions& as) {
    if (!c.low_precision_gemms) return;
    as.push_back({"quantize_bytes_per_element",
                  c.act_bpe + kLowPrecisionCopiesPerOperand * c.gemm_bpe, "bytes",
                  "HBM traffic of quantising one 16-bit GEMM operand element: read it, write the "
                  "low-precision copy and its transpose (amax reduced in the same pass); once "
                  "per GEMM input in the forward pass, per output gradient in the backward pass "
                  "(each a kernel), and per local weight once a step",
                  "Transformer Engine docs, Performance considerations (handling transposes: "
                  "Hopper FP8 GEMMs take only the TN layout) and nvte_cast_transpose; FP8 "
                  "weight caching across micro-batches"});
    as.push_back({"linear_input_bytes_per_element", c.linear_input_bpe, "bytes",
                  "what a linear layer saves of its input for its weight gradient: the quantised "
                  "copy (the norms' outputs, the down projections' inputs, MoE layers' routed "
                  "token copies; activation_bytes_per_layer_gb counts them at this size), FP8 "
                  "with its block scales (kFp8ActivationScaleBytesPerElement per element)",
                  "Megatron-Core MoE README, FP8 Training: \"Stores linear layer inputs in FP8 "
                  "instead of BF16\"; Transformer Engine blockwise (1x128, fp32 scales) and MXFP8 "
                  "(1x32, E8M0) recipes"});
    as.push_back({"attention_peak_tflops", c.bf16_dev.peak_flops / 1e12, "TFLOP/s",
                  "peak the attention core (FlashAttention, at attention_efficiency) runs at: "
                  "FP8 recipes keep it in BF16 (the output head, also BF16 in them, is timed "
                  "at the GEMM precision: docs/estimator.md, FP8)",
                  "Transformer Engine: FP8 dot-product attention is opt-in (recipe fp8_dpa, "
                  "default False); DeepSeek-V3 keeps attention in BF16 (arXiv 2412.19437 "
                  "Sec. 3.3.1); catalog BF16 peak"});
}

// Each recompute module the request named, on the chosen layout: the activation bytes one
// layer and micro-batch no longer stores, and the forward seconds it adds to the backward pass.
void AddRecomputeModuleAssumptions(const TrainingRequest& req, const Ctx& c,
                                   const ParallelLayout& l, Assumptions& as) {
    if (NamedRecomputeModules(req) == nullptr || l.recompute != Recompute::kSelective) return;
    const ActivationLayout act{
        l.micro_batch_size,    l.tensor, l.context,           l.sequence_parallel,
        Recompute::kSelective, c.flash,  c.recompute_modules, std::max(1, ExpertTensorDegree(l)),
        c.linear_input_bpe};
    const LayerCost lc =
        ComputeAverageLayer(c, l.tensor, l.context, l.micro_batch_size, l.sequence_parallel);
    for (std::size_t i = 0; i < kRecomputeModuleNames.size(); ++i) {
        const auto module = static_cast<RecomputeModule>(i);
        if (!c.recompute_modules.Has(module)) continue;
        const std::string name(kRecomputeModuleNames[i]);
        RecomputeModules alone;
        alone.Add(module);
        const double freed = RecomputeModuleFreedBytes(c.m, act, module) * c.act_bpe / 2.0;
        const RecomputeWork w = ModuleRecomputeWork(c, l, lc, alone);
        as.push_back({"recompute_" + name + "_freed_gb_per_layer", freed / 1e9, "GB",
                      "activations one rank no longer stores per layer and micro-batch with " +
                          name + " recomputed (what the layer's activation count holds for it)",
                      "Megatron-Core transformer_config.py recompute_modules and MoE README "
                      "\"Fine-grained Recomputation\"; components per docs/estimator.md "
                      "\"Megatron's recompute modules\""});
        as.push_back({"recompute_" + name + "_forward_s_per_layer", w.compute_s + w.memory_s, "s",
                      "forward work " + name +
                          " adds to each micro-batch's backward pass per layer and rank (the "
                          "MoE layer's routing and all-to-all under moe not included)",
                      "Megatron-Core MoE README \"Fine-grained Recomputation\" (checkpoints "
                      "rerun their module's forward); docs/estimator.md \"Megatron's recompute "
                      "modules\""});
    }
}

// The adapters' figures of a LoRA or QLoRA run (none for full training).
void AddAdapterAssumptions(const TrainingRequest& req, const Ctx& c, Assumptions& as) {
    auto add = [&](AssumptionText name, double v, AssumptionText unit, AssumptionText desc,
                   AssumptionText source) {
        as.push_back({std::move(name), v, std::move(unit), std::move(desc), std::move(source)});
    };
    if (!c.frozen_base) {
        return;
    }
    add("lora_rank", c.adapters.rank, "1", "rank r of every adapter (r * (in + out) parameters)",
        SourceOf(req.lora_rank.has_value(),
                 "QLoRA paper setting (Dettmers et al. 2023 §4: r = 64 on all linear layers)"));
    add("frozen_weight_bytes_per_param", c.frozen_weight_bpe, "bytes",
        "storage of a frozen block weight (embeddings and output head stay 16-bit)",
        c.quantized_base ? "NF4 + double quantisation, 4.127 bits (Dettmers et al. 2023 §3)"
                         : "16-bit base (LoRA)");
    if (c.quantized_base) {
        add("dequantize_bytes_per_param", c.frozen_weight_bpe + c.weight_bpe, "bytes",
            "HBM traffic to dequantise one weight before each forward and backward GEMM "
            "(read NF4, write 16-bit)",
            "bitsandbytes 4-bit linear layers dequantise to the compute dtype per call");
    }
}

// The run-time spread wall_clock_hours_p10 and _p90 take (RunTimeSpreadFraction), as echoed.
Assumption RunTimeSpreadEcho(const ResolvedModel& m) {
    return {"efficiency_spread_fraction", RunTimeSpreadFraction(m), "fraction",
            "p90/p50 - 1 of the run time from the estimate's own error (log-normal around "
            "wall_clock_hours): wall_clock_hours_p10 and _p90 are wall_clock_hours / and x (1 + "
            "this)",
            EfficiencySpreadDefaultSource(m.IsMoe())};
}

Assumptions TrainingAssumptions(const TrainingRequest& req, const Ctx& c, const Eval& e) {
    Assumptions as = c.dev.assumptions;
    as.insert(as.end(), c.links.assumptions.begin(), c.links.assumptions.end());
    auto add = [&](AssumptionText name, double v, AssumptionText unit, AssumptionText desc,
                   AssumptionText source) {
        as.push_back({std::move(name), v, std::move(unit), std::move(desc), std::move(source)});
    };
    as.push_back(RunTimeSpreadEcho(c.m));
    add("goodput", c.goodput, "fraction",
        "productive share of wall-clock time (restarts, checkpoints, evaluation excluded); "
        "expected hours = ideal hours / goodput",
        SourceOf(req.goodput.has_value(),
                 "estimator-references §3: model-card GPU-hours imply 0.8-0.9 of in-run "
                 "throughput (Llama-3.1-405B 0.35 vs 0.38-0.43 MFU)"));
    add("comm_overlap_fraction", c.overlap, "fraction",
        "share of data-parallel/ZeRO/pipeline traffic that can hide behind compute "
        "(exposed = max((1 - f) * comm, comm - compute window))",
        SourceOf(req.comm_overlap_fraction.has_value(),
                 "assumed (Megatron/FSDP overlap gradient reduction and prefetch)"));
    add("tp_overlap_fraction", c.tp_overlap, "fraction",
        "share of tensor-parallel traffic hidden behind compute",
        SourceOf(req.tp_overlap_fraction.has_value(),
                 "default: no overlap; frameworks that overlap it (Megatron-Core "
                 "--tp-comm-overlap) are modelled with 0.6, assumed"));
    if (c.m.IsMoe()) {
        add("expert_overlap_fraction", ExpertOverlap(c, e.layout), "fraction",
            ExpertOverlap(c, e.layout) == c.expert_overlap
                ? AssumptionText("share of the MoE dispatch/combine all-to-all hidden behind "
                                 "compute")
                : AssumptionText("share of the MoE dispatch/combine all-to-all hidden behind "
                                 "compute: the default, as the recipe's DualPipe overlap needs "
                                 "pipeline parallelism and the layout has none"),
            FieldSource(req, req.expert_overlap_fraction.has_value(),
                        req.recipe && req.recipe->expert_overlap_fraction,
                        "default: on the critical path; DualPipe-style schedules hide most of "
                        "it (DeepSeek-V3, arXiv 2412.19437 §3.2.1), pass 0.9 for them"));
        AddMoeLayerAssumptions(MoeShapeOf(c, e.layout), c.links, MoeHostExposedSeconds(c, e.layout),
                               as);
        AddMoeSwitchAssumptions(req.moe, c.moe_cuda_graphs, c.moe_a2a_overlap, e.layout, as);
    }
    AddRecipeAssumptions(req, e.layout, as);
    AddLowPrecisionAssumptions(c, as);
    AddDataParallelAssumptions(c, e.layout, as);
    add("cross_entropy_bytes_per_logit", kCrossEntropyBytesPerLogit, "bytes",
        "HBM traffic of the fp32 softmax cross-entropy per logit element, forward + backward",
        "counted: cast, max, exp-sum, gather; softmax gradient, cast back");
    add("step_fixed_overhead_s", kStepFixedOverheadS, "s",
        "fixed cost per optimizer step (optimizer launches, gradient clipping, loss reduction, "
        "host sync, logging); part of breakdown.optimizer_s",
        "assumed; visible only for short steps (chosen on the small Megatron-Core rows of "
        "tests/data/published-runs.csv)");
    add("memory_overhead_gb", c.overhead_gb, "GB",
        "framework, CUDA context and fragmentation per accelerator",
        SourceOf(req.memory_overhead_gb.has_value(),
                 "estimator-references §3.4 (0.5-2 GB per GPU)"));
    add("global_batch_tokens", req.global_batch_tokens.value_or(kDefaultGlobalBatchTokens),
        "tokens",
        "tokens per optimizer step requested (the step holds tokens_per_step: whole "
        "sequences on every data-parallel replica; a change over 1% is a warning)",
        FieldSource(req, req.global_batch_tokens.has_value(),
                    req.recipe && req.recipe->global_batch_tokens,
                    "default 4M tokens (LLaMA, GPT-3 175B 3.2M)"));
    add("flash_attention", c.flash ? 1.0 : 0.0, "bool",
        "1: fused FlashAttention-style attention; 0: unfused scores (softmax/mask/dropout over "
        "b*a*s^2 elements, 13 bytes per score forward, 26 backward)",
        SourceOf(req.flash_attention.has_value(), "default: FlashAttention (Dao et al. 2022)"));
    add("causal_attention_work_fraction", kCausalWorkFraction, "fraction",
        "share of attention FLOPs FlashAttention executes under a causal mask (time only; MFU "
        "counts the full 4*s*h per token, PaLM convention; a sliding-window layer of w < s "
        "tokens counts 2w - w^2/s in place of s)",
        "Dao 2023");
    add("attention_backward_ratio", kAttentionBackwardRatio, "ratio",
        "FlashAttention backward FLOPs over forward", "Dao 2023, arXiv 2307.08691 §3.1");
    add("adam_bytes_per_param", c.adam_bytes, "bytes",
        "optimizer state per trainable parameter: fp32 master + 2 moments (mixed precision), "
        "2 fp32 moments only for QLoRA's 16-bit adapters; sharded once per replica group "
        "(routed experts over data / expert ranks)",
        c.quantized_base ? "QLoRA recipe (artidoro/qlora qlora.py: bf16 LoRA modules, "
                           "paged_adamw_32bit)"
                         : "EleutherAI Transformer Math 101; ZeRO paper (Rajbhandari et al. 2020)");
    add("optimizer_bytes_moved_per_param", kOptimizerBytesPerParam, "bytes",
        "HBM traffic of one Adam step per local trainable parameter", "derived: read 14, write 14");
    add("backward_gemms_per_forward", c.backward_gemms, "GEMMs",
        "backward GEMMs per forward GEMM of a base weight: 2 when it trains (input and weight "
        "gradient), 1 when it is frozen (input gradient only)",
        "backpropagation through a linear layer");
    AddAdapterAssumptions(req, c, as);
    add("elementwise_hidden_elements_per_token", kElementwiseHiddenElements, "elements",
        "per layer forward: 2 norms and 2 residual adds, in units of the hidden size",
        "counted from the Megatron layer (Korthikanti et al. 2022 Fig. 2)");
    AddActivationAssumption(
        c.m,
        {e.layout.micro_batch_size, e.layout.tensor, e.layout.context, e.layout.sequence_parallel,
         e.layout.recompute, c.flash, c.recompute_modules,
         std::max(1, ExpertTensorDegree(e.layout)), c.linear_input_bpe},
        RecomputedShare(e.layout, SplitShapeOf(c, e.layout)), as);
    AddRecomputeModuleAssumptions(req, c, e.layout, as);
    AddContextParallelAssumptions(c.m, e.layout.tensor, e.layout.context, e.layout.micro_batch_size,
                                  c.act_bpe, as);
    add("pipeline_bubble_fraction",
        PipelineBubbleFraction(e.layout.pipeline, e.micro_batches, e.layout.virtual_stages),
        "fraction", "(p - 1) / (m * v)", "Narayanan et al. 2021");
    AddPipelineAssumptions(c, e, as);
    const Assumptions& derivation = ModelDerivationAssumptions();
    as.insert(as.end(), derivation.begin(), derivation.end());
    return as;
}

}  // namespace detail

std::optional<std::string> TrainingPrecisionCaveat(Precision precision) {
    switch (precision) {
        case Precision::kInt8:
            return std::string(
                "int8 has no established LLM training recipe (mixed-precision training runs "
                "in bf16 or fp8); every GEMM is timed at the int8 peak, so the time is a "
                "lower bound, not a plan");
        case Precision::kFp4:
            return std::string(
                "fp4 training is research (NVFP4 pretraining recipes, not in mainstream "
                "frameworks); every GEMM is timed at the fp4 peak, so the time is a lower "
                "bound, not a plan");
        case Precision::kFp32:
        case Precision::kTf32:
        case Precision::kFp16:
        case Precision::kBf16:
        case Precision::kFp8:
            return std::nullopt;
    }
    return std::nullopt;
}

bool RunsQlora(std::string_view vendor) {
    const std::string key = IdKey(vendor);
    return std::find(kQloraVendors.begin(), kQloraVendors.end(), key) != kQloraVendors.end();
}

const char* RecomputeName(Recompute r) {
    switch (r) {
        case Recompute::kNone:
            return "none";
        case Recompute::kSelective:
            return "selective";
        case Recompute::kFull:
            return "full";
    }
    return "none";
}

std::optional<Recompute> ParseRecompute(std::string_view name) {
    for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
        if (name == RecomputeName(r)) {
            return r;
        }
    }
    return std::nullopt;
}

std::optional<RecomputeModule> ParseRecomputeModule(std::string_view name) {
    for (std::size_t i = 0; i < kRecomputeModuleNames.size(); ++i) {
        if (name == kRecomputeModuleNames[i]) return static_cast<RecomputeModule>(i);
    }
    return std::nullopt;
}

std::vector<std::string> RecomputeModules::Names() const {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < kRecomputeModuleNames.size(); ++i) {
        if (Has(static_cast<RecomputeModule>(i))) out.emplace_back(kRecomputeModuleNames[i]);
    }
    return out;
}

const char* TrainingModeName(TrainingMode mode) {
    switch (mode) {
        case TrainingMode::kPretrain:
            return "pretrain";
        case TrainingMode::kFullFinetune:
            return "full_finetune";
        case TrainingMode::kLora:
            return "lora";
        case TrainingMode::kQlora:
            return "qlora";
    }
    return "pretrain";
}

std::optional<TrainingMode> ParseTrainingMode(std::string_view name) {
    for (TrainingMode m : {TrainingMode::kPretrain, TrainingMode::kFullFinetune,
                           TrainingMode::kLora, TrainingMode::kQlora}) {
        if (name == TrainingModeName(m)) {
            return m;
        }
    }
    return std::nullopt;
}

ParamSplit SplitParams(const ResolvedModel& m) {
    if (!m.IsMoe()) {
        return {m.params, 0.0};
    }
    double per_expert = detail::MlpMatrices(m) * m.hidden_size * detail::ExpertWidth(m);
    double routed = static_cast<double>(detail::MoeLayers(m)) * m.experts * per_expert;
    // Never more than what the parameter count leaves after attention and embeddings.
    double room = m.params - m.embedding_params - m.layers * m.attention_params_per_layer;
    routed = std::clamp(routed, 0.0, std::max(0.0, room));
    return {m.params - routed, routed};
}

double RunTimeSpreadFraction(const ResolvedModel& m) {
    return m.IsMoe() ? kMoeEfficiencySpreadFraction : kDefaultEfficiencySpreadFraction;
}

AssumptionText EfficiencySpreadDefaultSource(bool mixture_of_experts) {
    if (mixture_of_experts) {
        return "default for a mixture-of-experts model: measured, the estimator's error on the 40 "
               "MoE rows of the frontier validation set (docs/estimator.md)";
    }
    return "default: judgement (published MFUs for one model and chip differ by about +-20%)";
}

double ModelFlopsPerToken(const ResolvedModel& m) {
    return ModelFlopsPerToken(m, TrainingMode::kPretrain, 0.0);
}

double ModelFlopsPerToken(const ResolvedModel& m, TrainingMode mode, double active_adapter_params) {
    double base = m.ActiveNonEmbeddingParams() + static_cast<double>(m.vocab_size) * m.hidden_size;
    const double attention = detail::AttentionFlopsPerToken(m);
    if (IsAdapterMode(mode)) {
        return 4.0 * base + 6.0 * active_adapter_params + attention;
    }
    return 6.0 * base + attention;
}

double ActivationBytesPerLayer(const ResolvedModel& m, int micro_batch, int tensor,
                               bool sequence_parallel, Recompute recompute, bool flash_attention) {
    return LayerActivations(m,
                            {micro_batch, tensor, 1, sequence_parallel, recompute, flash_attention})
        .Total();
}

double PipelineBubbleFraction(int pipeline, int micro_batches, int virtual_stages) {
    if (pipeline <= 1 || micro_batches <= 0 || virtual_stages <= 0) {
        return 0;
    }
    return (pipeline - 1.0) / (static_cast<double>(micro_batches) * virtual_stages);
}

// The layer costs a TrainingEstimator keeps, per device model (by its roofline figures).
struct TrainingEstimator::LayerCostMemo {
    struct Device {
        detail::RooflineFigures figures;
        std::vector<detail::KeptLayerCost> layers;
    };
    std::vector<Device> devices;
};

namespace detail {
namespace {

std::vector<KeptLayerCost>& KeptFor(TrainingEstimator::LayerCostMemo& memo, const Ctx& c) {
    const RooflineFigures figures = RooflineFiguresOf(c.dev, c.bf16_dev);
    for (auto& device : memo.devices) {
        if (device.figures == figures) return device.layers;
    }
    memo.devices.push_back({figures, {}});
    return memo.devices.back().layers;
}

// The published layout of the model's recipe (AppliedRecipe::layout) on this cluster: whether
// its degrees divide the accelerators (tensor x pipeline, then the expert grid) and the
// model, and then the search over the rest of the layout (micro-batch, recompute, virtual
// stages), `used` when a layout of it fits. Otherwise the caller searches every layout.
SearchResult SearchFromRecipeLayout(const TrainingRequest& req, const Ctx& c, LayerCosts& layers,
                                    bool& used) {
    used = false;
    if (req.parallelism || !req.recipe || !req.recipe->layout) return {};
    const ParallelismRequest& rl = *req.recipe->layout;
    const long long tp = static_cast<long long>(rl.tensor.value_or(1)) * rl.pipeline.value_or(1);
    if (tp < 1 || c.count % tp != 0 || !ValidateParallelism(rl, c).ok()) {
        return {};
    }
    SearchResult found = SearchLayouts(c, rl, layers, req.deadline, SearchZeroCap(c, rl));
    used = found.best.valid;
    return found;
}

void AddRecipeLayoutAssumption(const TrainingRequest& req, bool used, Assumptions& as) {
    if (req.parallelism || !req.recipe || !req.recipe->layout) return;
    as.push_back(
        {"recipe_layout_applied", used ? 1.0 : 0.0, "bool",
         used ? AssumptionText("1: the layout's tensor, pipeline, expert and ZeRO degrees are "
                               "the model's published ones (the rest searched); pass "
                               "parallelism to choose your own")
              : AssumptionText("0: the model's published layout does not divide or fit this "
                               "cluster, so every layout was searched"),
         "training recipe of " + req.recipe->model_id + ": " + req.recipe->source});
}

// The search in its two tries: a mixture-of-experts model is first searched at the ZeRO
// stages its published runs used (kMoeSearchMaxZeroStage), and at every stage only when no
// such layout fits; `widened` says whether the second try ran.
SearchResult SearchWithZeroCap(const Ctx& c, const ParallelismRequest& pr, LayerCosts& layers,
                               const Deadline& deadline, bool& widened) {
    widened = false;
    const int cap = SearchZeroCap(c, pr);
    SearchResult found = SearchLayouts(c, pr, layers, deadline, cap);
    if (found.best.valid || cap >= 3 || deadline.Passed()) return found;
    widened = true;
    return SearchLayouts(c, pr, layers, deadline, 3);
}

void AddZeroSearchAssumption(const Ctx& c, const ParallelismRequest& pr, bool widened,
                             Assumptions& as) {
    if (!c.m.IsMoe() || pr.zero_stage) return;
    as.push_back(
        {"moe_search_max_zero_stage", widened ? 3.0 : static_cast<double>(kMoeSearchMaxZeroStage),
         "stage",
         widened ? AssumptionText("3: no layout at ZeRO 1 or below fits, so ZeRO 2 and 3 (sharded "
                                  "gradients and weights with expert parallelism) were searched "
                                  "too; no published MoE run was checked at those stages")
                 : AssumptionText("1: the search tried Megatron-Core's distributed optimizer (ZeRO "
                                  "1), the stage of the published MoE runs the estimate was "
                                  "checked against; pass parallelism.zero_stage to time ZeRO 2 "
                                  "or 3"),
         "NVIDIA-NeMo/Megatron-Bridge performance recipes, NVIDIA/dgxc-benchmarking deepseek_v3 "
         "(distributed optimizer); FSDP with EP since MCore v0.15 (Megatron-LM "
         "megatron/core/transformer/moe/README.md), no published throughput"});
}

// The estimate after the request's checks and the model derivation: build the run's
// context, check the fixed parallelism, search the layouts, then summarise the best one with
// its assumptions.
Result<TrainingEstimate> EstimateDerived(const TrainingRequest& req, const ClusterSpec& cluster,
                                         const ResolvedModel& model,
                                         TrainingEstimator::LayerCostMemo* memo) {
    auto ctx = MakeContext(req, cluster, model);
    if (!ctx.ok()) return ctx.error();
    const Ctx& c = ctx.value();
    const ParallelismRequest pr = req.parallelism.value_or(ParallelismRequest{});
    if (auto s = ValidateParallelism(pr, c); !s.ok()) return s.error();
    LayerCosts layers(c, memo != nullptr ? &KeptFor(*memo, c) : nullptr);
    bool recipe_layout = false;
    bool zero_widened = false;
    SearchResult found = SearchFromRecipeLayout(req, c, layers, recipe_layout);
    if (!recipe_layout) found = SearchWithZeroCap(c, pr, layers, req.deadline, zero_widened);
    if (auto time_left = req.deadline.Check(); !time_left.ok()) return time_left.error();
    if (!found.best.valid) return NoLayoutError(c, pr, found, cluster);
    TrainingEstimate out = Summarize(c, found);
    WarnOnBatchChange(req, out);
    WarnOnCountedAttention(c, out);
    if (auto caveat = TrainingPrecisionCaveat(req.precision)) {
        out.model.warnings.push_back({"/precision", std::move(*caveat)});
    }
    if (auto w = ContextWarning(c.m, c.m.seq_len, "/model/seq_len", "seq_len")) {
        out.model.warnings.push_back(std::move(*w));
    }
    if (req.with_assumptions) {
        out.assumptions = TrainingAssumptions(req, c, found.best);
        AddRecipeLayoutAssumption(req, recipe_layout, out.assumptions);
        if (!recipe_layout) AddZeroSearchAssumption(c, pr, zero_widened, out.assumptions);
    }
    return out;
}

}  // namespace
}  // namespace detail

// The estimate in its steps: validate the request, derive the model, then estimate.
Result<TrainingEstimate> EstimateTraining(const TrainingRequest& req, const ClusterSpec& cluster) {
    if (auto s = ValidateCluster(cluster); !s.ok()) return s.error();
    if (auto s = detail::ValidateRequest(req); !s.ok()) return s.error();
    auto model = DeriveModel(req.model);
    if (!model.ok()) return model.error();
    return detail::EstimateDerived(req, cluster, model.value(), nullptr);
}

Result<TrainingEstimate> EstimateTraining(const TrainingRequest& req, const ClusterSpec& cluster,
                                          const ResolvedModel& model) {
    if (auto s = ValidateCluster(cluster); !s.ok()) return s.error();
    if (auto s = detail::ValidateRequest(req); !s.ok()) return s.error();
    return detail::EstimateDerived(req, cluster, model, nullptr);
}

TrainingEstimator::TrainingEstimator(const TrainingRequest& request, const ResolvedModel& model)
    : request_(request), model_(model), memo_(std::make_unique<LayerCostMemo>()) {}

TrainingEstimator::~TrainingEstimator() = default;

// The same steps as EstimateTraining(request, cluster, model), with the kept layer costs.
Result<TrainingEstimate> TrainingEstimator::Estimate(const ClusterSpec& cluster) {
    if (auto s = ValidateCluster(cluster); !s.ok()) return s.error();
    if (auto s = detail::ValidateRequest(request_); !s.ok()) return s.error();
    return detail::EstimateDerived(request_, cluster, model_, memo_.get());
}

std::size_t TrainingEstimator::LayerCostsKept() const {
    std::size_t n = 0;
    for (const auto& device : memo_->devices) n += device.layers.size();
    return n;
}

}  // namespace gpucost::pricing::estimate
