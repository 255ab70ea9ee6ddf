#include "pricing/estimate/training_internal.hpp"

namespace gpucost::pricing::estimate::detail {

// ---- Step 3: the fixed parallelism fields ----
// The expert degrees against the model and, where the request fixes the tensor and data
// degrees (data given, or implied by tensor x context x pipeline), against Megatron-Core's expert
// grid (pricing/estimate/moe.hpp).
Status CheckExpertGrid(const ParallelismRequest& pr, const Ctx& c) {
    const bool moe = c.m.IsMoe();
    if (pr.expert && *pr.expert > 1 && (!moe || c.m.experts % *pr.expert != 0)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "expert parallel degree must divide the expert count (" +
                             std::to_string(c.m.experts) + ")",
                         "/parallelism/expert");
    }
    if (pr.expert_tensor && *pr.expert_tensor > 1 && !moe) {
        return MakeError(ErrorCode::kInvalidArgument, "expert_tensor applies to MoE models only",
                         "/parallelism/expert_tensor");
    }
    if (!moe || !pr.tensor) return Ok{};
    std::optional<int> data = pr.data;
    const int context = pr.context.value_or(1);
    if (!data && pr.pipeline && c.count % (*pr.tensor * *pr.pipeline * context) == 0) {
        data = c.count / (*pr.tensor * *pr.pipeline * context);
    }
    if (!data) return Ok{};
    const int ep = pr.expert.value_or(1);
    // Context ranks join the expert grid (MoE Parallel Folding: tensor x context x data).
    const int grid_data = *data * context;
    const int etp = pr.expert_tensor.value_or(DefaultExpertTensorDegree(*pr.tensor, grid_data, ep));
    if (etp < 1 || !ExpertGridDivides(*pr.tensor, grid_data, ep, etp)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "expert x expert_tensor (" + std::to_string(ep) + " x " +
                             std::to_string(pr.expert_tensor.value_or(1)) +
                             ") must divide tensor x context x data (" +
                             std::to_string(*pr.tensor) + " x " + std::to_string(context) + " x " +
                             std::to_string(*data) +
                             "): Megatron-Core forms expert groups over tensor x context x "
                             "data ranks",
                         pr.expert_tensor ? "/parallelism/expert_tensor" : "/parallelism/expert");
    }
    return Ok{};
}

// tensor x context x pipeline x data is the accelerator count; a context degree left open
// takes what the other three leave.
Status CheckLayoutProduct(const ParallelismRequest& pr, int n) {
    if (!(pr.tensor && pr.pipeline && pr.data)) return Ok{};
    const long long product =
        static_cast<long long>(*pr.tensor) * *pr.pipeline * *pr.data * pr.context.value_or(1);
    if (product == n || (!pr.context && n % product == 0)) return Ok{};
    return MakeError(ErrorCode::kInvalidArgument,
                     std::string(pr.context ? "tensor x context x pipeline x data = "
                                            : "tensor x pipeline x data = ") +
                         std::to_string(product) + " but hardware count is " + std::to_string(n) +
                         "; the product must equal the count",
                     "/parallelism");
}

Status ValidateParallelism(const ParallelismRequest& pr, const Ctx& c) {
    const int n = c.count;
    struct IntCheck {
        const std::optional<int>* v;
        const char* field;
        int lo, hi;
    };
    const IntCheck checks[] = {
        {&pr.tensor, "/parallelism/tensor", 1, n},
        {&pr.context, "/parallelism/context", 1, n},
        {&pr.pipeline, "/parallelism/pipeline", 1, n},
        {&pr.data, "/parallelism/data", 1, n},
        {&pr.zero_stage, "/parallelism/zero_stage", 0, 3},
        {&pr.micro_batch_size, "/parallelism/micro_batch_size", 1, 65536},
        {&pr.virtual_stages, "/parallelism/virtual_stages", 1, 64},
        {&pr.expert, "/parallelism/expert", 1, n},
        {&pr.expert_tensor, "/parallelism/expert_tensor", 1, n},
    };
    for (const IntCheck& ch : checks) {
        if (*ch.v && (**ch.v < ch.lo || **ch.v > ch.hi)) {
            return MakeError(ErrorCode::kInvalidArgument,
                             std::string(ch.field).substr(13) + " must be between " +
                                 std::to_string(ch.lo) + " and " + std::to_string(ch.hi) +
                                 " (hardware count " + std::to_string(n) + ")",
                             ch.field);
        }
    }
    if (pr.recompute_layers && (*pr.recompute_layers < 1 || *pr.recompute_layers > c.m.layers)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "recompute_layers must be between 1 and the model's layers (" +
                             std::to_string(c.m.layers) + ")",
                         "/parallelism/recompute_layers");
    }
    if (pr.recompute_layers && pr.recompute && *pr.recompute != Recompute::kFull) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "recompute_layers applies to full recompute only (Megatron-Core "
                         "--recompute-granularity full --recompute-method block "
                         "--recompute-num-layers); give recompute full or leave it out",
                         "/parallelism/recompute_layers");
    }
    if (auto s = CheckLayoutProduct(pr, n); !s.ok()) return s.error();
    if (pr.context && !ContextSplitsSequence(c.m.seq_len, *pr.context)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "context parallel degree must split seq_len (" +
                             std::to_string(c.m.seq_len) +
                             ") into 2 x context equal chunks (Transformer Engine's "
                             "load-balanced context parallelism)",
                         "/parallelism/context");
    }
    if (pr.tensor && c.m.attention_heads % *pr.tensor != 0) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "tensor parallel degree must divide attention_heads (" +
                             std::to_string(c.m.attention_heads) + ")",
                         "/parallelism/tensor");
    }
    if (pr.pipeline && *pr.pipeline > c.m.layers) {
        return MakeError(
            ErrorCode::kInvalidArgument,
            "pipeline degree must not exceed layers (" + std::to_string(c.m.layers) + ")",
            "/parallelism/pipeline");
    }
    return CheckExpertGrid(pr, c);
}

// ---- Step 4: the layout search ----
Degrees TensorCandidates(const Ctx& c, const ParallelismRequest& pr) {
    if (pr.tensor) return {*pr.tensor};
    Degrees tps;
    const int limit = std::min(c.links.scale_up_domain, c.count);
    for (int t = 1; t <= limit && t > 0; t *= 2) {
        if (c.count % t == 0 && c.m.attention_heads % t == 0) tps.Add(t);
    }
    return tps;
}

TensorContextChoices TensorContextCandidates(const Ctx& c, const ParallelismRequest& pr) {
    TensorContextChoices out;
    for (int t : TensorCandidates(c, pr)) {
        if (t < 1 || c.count % t != 0) continue;
        for (int cp : ContextParallelCandidates(c.m.seq_len, c.count / t, pr.context)) {
            if (out.n < out.pairs.size()) out.pairs[out.n++] = {t, cp};
        }
    }
    return out;
}

Degrees MicroBatchCandidates(const Ctx& c, const ParallelismRequest& pr) {
    if (pr.micro_batch_size) return {*pr.micro_batch_size};
    Degrees mbs;
    for (int b : kMicroBatchCandidates) {
        if (b == 1 || static_cast<double>(b) * c.m.seq_len <= kMaxMicroBatchTokens) mbs.Add(b);
    }
    return mbs;
}

// Whether the search goes past even stages and two chunks per stage on this cluster
// (kDeepPipelineSearchMinAccelerators).
bool DeepPipelineSearch(const Ctx& c) {
    return c.count >= kDeepPipelineSearchMinAccelerators;
}

// Pipeline degrees the search tries, up to kMaxPipelineCandidates, ascending. Below the deep
// search's scale, those that divide the layers (every stage the same whole layers). At it,
// every degree whose split leaves each stage at least one layer: the middle stages hold
// ceil(layers / p) layers and the first and last share the rest (SplitShape), as
// Megatron-Core's uneven first/last stages and the Llama 3 405B run (126 layers on 16 stages,
// arXiv 2407.21783 Table 4). Worked out once per search; the search then tests only these
// against each tensor degree's remaining accelerators.
Degrees PipelineDegrees(const Ctx& c) {
    const ResolvedModel& m = c.m;
    const bool uneven = DeepPipelineSearch(c);
    Degrees out;
    const int limit = std::min(m.layers, kMaxPipelineCandidates);
    for (int p = 1; p <= limit; ++p) {
        const bool splits =
            uneven ? p == 1 || EndStagesLayers(m.layers, p) >= 2 : m.layers % p == 0;
        if (splits) out.Add(p);
    }
    return out;
}

Degrees PipelineCandidates(const ParallelismRequest& pr, const Degrees& pipeline_degrees,
                           int rest) {
    if (pr.pipeline) {
        return rest % *pr.pipeline == 0 ? Degrees{*pr.pipeline} : Degrees{};
    }
    Degrees pps;
    for (int p : pipeline_degrees) {
        if (p > rest) break;
        if (rest % p == 0) pps.Add(p);
    }
    return pps;
}

// The interleaving depths searched beyond 1 for a split of p stages and `micro_batches` per
// step. Below the deep search's scale: 2 when the even stages split in two (the search's
// earlier depth). At it: every divisor of the layers per stage that leaves chunks of
// at least kMinSearchedLayersPerChunk whole layers (Narayanan et al. 2021 Sec. 2.2), when
// every stage has a micro-batch in flight (Megatron-LM's interleaved schedule refuses fewer
// micro-batches than stages; with fewer the (p - 1)/(m v) bubble does not hold).
void AddVirtualStageChoices(const Ctx& c, int p, int micro_batches, InnerChoices& ch) {
    if (!DeepPipelineSearch(c)) {
        if ((c.m.layers / p) % 2 == 0) ch.virtual_stages[ch.virtual_n++] = 2;
        return;
    }
    if (micro_batches < p) return;
    const int per_stage = LayersPerStage(c.m.layers, p);
    const int deepest = per_stage / kMinSearchedLayersPerChunk;
    for (int v = 2; v <= deepest && ch.virtual_n < ch.virtual_stages.size(); ++v) {
        if (per_stage % v == 0) ch.virtual_stages[ch.virtual_n++] = v;
    }
}

InnerChoices InnerChoicesFor(const Ctx& c, const ParallelismRequest& pr, int p, int d, int b,
                             bool fully_given, int max_zero_stage) {
    InnerChoices ch;
    if (pr.virtual_stages) {
        ch.virtual_stages[0] = *pr.virtual_stages;
    } else if (!fully_given && p > 1) {
        AddVirtualStageChoices(c, p, MicroBatchesPerStep(c, d, b), ch);
    }
    if (pr.recompute || pr.recompute_layers) {
        ch.recompute[0] = pr.recompute.value_or(Recompute::kFull);
        ch.recompute_n = 1;
        ch.recompute_layers = pr.recompute_layers.value_or(0);
        ch.block = false;
    } else if (!c.flash) {
        // Selective recompute of the attention core frees the score matrices of unfused
        // attention; with FlashAttention it frees only the softmax statistics and costs an
        // attention forward, so it is tried only without it. Tried between none and full.
        ch.recompute = {Recompute::kNone, Recompute::kSelective, Recompute::kFull};
        ch.recompute_n = 3;
    }
    if (pr.zero_stage) {
        ch.zero[0] = *pr.zero_stage;
        ch.zero_n = 1;
    } else if (d == 1) {
        ch.zero[0] = 0;
        ch.zero_n = 1;
    } else {
        while (ch.zero_n > 1 && ch.zero[ch.zero_n - 1] > max_zero_stage) --ch.zero_n;
    }
    return ch;
}

// The index of full recompute among the choices (its memo slot), or recompute_n.
std::size_t FullRecomputeIndex(const InnerChoices& ch) {
    for (std::size_t ri = 0; ri < ch.recompute_n; ++ri) {
        if (ch.recompute[ri] == Recompute::kFull) return ri;
    }
    return ch.recompute_n;
}

// Block recompute (Megatron-Core --recompute-method block): of the layouts `l` with full
// recompute of N < all layers per chunk, the fewest N that fits is the fastest (each
// recomputed layer adds a forward), found by bisection; 0 when even all but one do not fit
// or none is needed. Stored activations grow as N falls, so the need is monotone in N.
int FewestRecomputedLayersThatFit(const Ctx& c, ParallelLayout l, std::size_t ri, std::size_t zi,
                                  SplitCosts& costs) {
    const int chunk = LayersPerChunk(l, costs.shape());
    if (chunk < 2) return 0;
    auto fits = [&](int n) {
        l.recompute_layers = n;
        return costs.NeedGb(l, ri, zi) <= c.capacity_gb;
    };
    if (!fits(chunk - 1)) return 0;
    int lo = 0, hi = chunk - 1;  // lo does not fit (0: none, known not to), hi fits
    while (hi - lo > 1) {
        const int mid = lo + (hi - lo) / 2;
        (fits(mid) ? hi : lo) = mid;
    }
    return hi;
}

// Tries block recompute at each ZeRO stage below the lowest at which keeping every
// activation fits (there keeping them is faster): the fewest recomputed layers that fit.
void SearchBlockRecompute(const Ctx& c, ParallelLayout l, const InnerChoices& ch,
                          std::size_t none_fits_zi, SplitCosts& costs, SearchResult& r) {
    const std::size_t ri = FullRecomputeIndex(ch);
    if (ri == ch.recompute_n) return;
    l.recompute = Recompute::kFull;
    for (std::size_t zi = 0; zi < std::min(none_fits_zi, ch.zero_n); ++zi) {
        l.zero_stage = ch.zero[zi];
        const int n = FewestRecomputedLayersThatFit(c, l, ri, zi, costs);
        if (n == 0) continue;
        l.recompute_layers = n;
        const StepTiming timing = costs.Time(l, ri, zi, r.CannotWinAt());
        r.ConsiderFitting(timing.step_time_s,
                          [&] { return MakeEval(c, l, costs.shape(), true, timing); });
        return;
    }
}

// Evaluates the settings of one split; for each recompute mode the lowest ZeRO stage that
// fits is the fastest, so the stages after it are skipped.
void SearchSplit(const Ctx& c, ParallelLayout base, const RowCosts& row, const InnerChoices& ch,
                 SearchResult& r) {
    SplitCosts costs(c, base, row);
    // Deepest interleaving first: it usually wins, and then the bubble bound of ReachesBound
    // spares timing the shallower ones.
    for (std::size_t vn = ch.virtual_n; vn > 0; --vn) {
        const std::size_t vi = vn - 1;
        std::size_t none_fits_zi = ch.zero_n;  // the lowest ZeRO choice keeping all fits at
        for (std::size_t ri = 0; ri < ch.recompute_n; ++ri) {
            for (std::size_t zi = 0; zi < ch.zero_n; ++zi) {
                ParallelLayout l = base;
                l.virtual_stages = ch.virtual_stages[vi];
                l.recompute = ch.recompute[ri];
                l.recompute_layers = l.recompute == Recompute::kFull ? ch.recompute_layers : 0;
                l.zero_stage = ch.zero[zi];
                const double need_gb = costs.NeedGb(l, ri, zi);
                const bool fits = need_gb <= c.capacity_gb;
                if (r.fully_given) {
                    // Reported whether or not it fits, so always timed.
                    const StepTiming timing =
                        costs.Time(l, ri, zi, std::numeric_limits<double>::infinity());
                    r.ConsiderFixed(MakeEval(c, l, costs.shape(), fits, timing));
                    break;
                }
                if (!fits) {
                    r.ConsiderUnfitting(need_gb, l);
                    continue;
                }
                if (l.recompute == Recompute::kNone) none_fits_zi = std::min(none_fits_zi, zi);
                const StepTiming timing = costs.Time(l, ri, zi, r.CannotWinAt());
                r.ConsiderFitting(timing.step_time_s,
                                  [&] { return MakeEval(c, l, costs.shape(), fits, timing); });
                break;
            }
        }
        if (ch.block && !r.fully_given) {
            ParallelLayout l = base;
            l.virtual_stages = ch.virtual_stages[vi];
            SearchBlockRecompute(c, l, ch, none_fits_zi, costs, r);
        }
    }
}

RooflineFigures RooflineFiguresOf(const DeviceModel& d, const DeviceModel& bf16) {
    return {d.peak_flops,
            d.memory_bytes_per_s,
            d.gemm_max_efficiency,
            d.gemm_half_flops,
            d.gemm_curve_exponent,
            d.memory_max_efficiency,
            d.attention_efficiency,
            d.kernel_overhead_s,
            bf16.peak_flops,
            bf16.memory_bytes_per_s,
            bf16.gemm_max_efficiency,
            bf16.gemm_half_flops,
            bf16.gemm_curve_exponent,
            bf16.memory_max_efficiency,
            bf16.attention_efficiency,
            bf16.kernel_overhead_s};
}

// Every candidate layout is timed when it fits and ranked by step time. A fully specified
// layout (all of tensor, pipeline, data, ZeRO, recompute and micro-batch) is timed whether
// or not it fits; among its expert-parallel choices the fastest that fits wins, else the one
// that needs the least memory.
int SearchZeroCap(const Ctx& c, const ParallelismRequest& pr) {
    return c.m.IsMoe() && !pr.zero_stage ? kMoeSearchMaxZeroStage : 3;
}

SearchResult SearchLayouts(const Ctx& c, const ParallelismRequest& pr, LayerCosts& layers,
                           const Deadline& deadline, int max_zero_stage) {
    SearchResult r;
    r.fully_given = pr.tensor && pr.pipeline && pr.data && pr.zero_stage &&
                    (pr.recompute || pr.recompute_layers) && pr.micro_batch_size;
    const Degrees mbs_list = MicroBatchCandidates(c, pr);
    const Degrees pipeline_degrees = PipelineDegrees(c);
    for (const auto& [t, cp] : TensorContextCandidates(c, pr)) {
        if (deadline.Passed()) break;  // the estimate refuses what was found (EstimateDerived)
        if (c.count % (t * cp) != 0) continue;
        const int rest = c.count / (t * cp);
        const Degrees pps = PipelineCandidates(pr, pipeline_degrees, rest);
        for (int b : mbs_list) {
            const bool sp = pr.sequence_parallel.value_or(t > 1);
            RowCosts row;
            bool row_ready = false;
            for (int p : pps) {
                const int d = rest / p;
                if (pr.data && *pr.data != d) continue;
                if (static_cast<double>(d) * b > c.global_batch_seqs) {
                    r.batch_too_small = true;
                    if (!r.fully_given) continue;
                }
                if (!row_ready) {
                    row.layer = layers.At(t, cp, b, sp);
                    row.activations = RowActivationsOf(c, b, t, cp, sp);
                    row_ready = true;
                }
                const InnerChoices ch =
                    InnerChoicesFor(c, pr, p, d, b, r.fully_given, max_zero_stage);
                const ExpertChoices eps = ExpertParallelCandidates(c.m, pr, t, d * cp);
                for (std::size_t ei = 0; ei < eps.n; ++ei) {
                    const int ep = eps.degrees[ei];
                    const int etp = eps.expert_tensor[ei];
                    if (c.m.IsMoe() && !ExpertGridDivides(t, d * cp, ep, etp)) continue;
                    ParallelLayout base;
                    base.tensor = t;
                    base.context = cp;
                    base.pipeline = p;
                    base.data = d;
                    base.micro_batch_size = b;
                    base.sequence_parallel = sp;
                    base.expert = ep;
                    base.expert_tensor = etp;
                    SearchSplit(c, base, row, ch, r);
                }
            }
        }
    }
    if (r.fully_given && r.fixed.valid) {
        r.best = r.fixed;
        r.second = Eval{};
    }
    return r;
}

}  // namespace gpucost::pricing::estimate::detail
