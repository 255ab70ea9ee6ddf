#include "pricing/estimate/training_internal.hpp"

namespace gpucost::pricing::estimate::detail {

// The ranks that hold the same replicated weights: data x context (context ranks join the
// gradient reduction and the distributed optimizer's sharding: "we piggyback GPUs of context
// parallelism on data parallel group for weight gradient all-reduce", Megatron-Core
// parallel_state.py).
int ReplicaGroup(const ParallelLayout& l) {
    return l.data * l.context;
}

// What one accelerator holds of a parameter split: the replicated part over tensor x
// pipeline, the routed part over expert-tensor x expert x pipeline; with `sharded` (a ZeRO
// stage that covers this state) each part is further split across its own replica group:
// the whole data-parallel degree for replicated parameters, the expert-data degree for routed
// ones.
double PerAccelerator(const ParamSplit& p, const ParallelLayout& l, bool sharded) {
    const double model_shards = static_cast<double>(l.tensor) * l.pipeline;
    const double repl_group = sharded ? ReplicaGroup(l) : 1.0;
    if (p.routed <= 0) {
        return p.replicated / (model_shards * repl_group);  // dense: one division per layout
    }
    const double expert_shards = static_cast<double>(ExpertModelShards(l)) * l.pipeline;
    const double routed_group = sharded ? ExpertDataDegree(l) : 1.0;
    return p.replicated / model_shards / repl_group + p.routed / expert_shards / routed_group;
}

// Bytes of the weights one accelerator holds per parameter it holds (frozen NF4 blocks with
// 16-bit embeddings under QLoRA).
double WeightBytes(const Ctx& c, const ParallelLayout& l, bool sharded) {
    double params = PerAccelerator(c.split, l, sharded);
    double adapter = c.frozen_base ? PerAccelerator(c.adapters.params, l, sharded) : 0.0;
    if (!c.frozen_base) {
        return params * c.weight_bpe;
    }
    double embedding_share = c.m.params > 0 ? std::min(1.0, c.m.embedding_params / c.m.params) : 0;
    double base = params * ((1.0 - embedding_share) * c.frozen_weight_bpe + embedding_share * 2.0);
    return base + adapter * c.weight_bpe;
}

const ParamSplit& Trainable(const Ctx& c) {
    return c.frozen_base ? c.adapters.params : c.split;
}

// Weights, gradients and optimizer state one accelerator holds, in GB, with or without the
// ZeRO sharding that covers each.
double WeightsGb(const Ctx& c, const ParallelLayout& l, bool sharded) {
    return WeightBytes(c, l, sharded) / kGb;
}

double GradientsGb(const Ctx& c, const ParallelLayout& l, bool sharded) {
    return PerAccelerator(Trainable(c), l, sharded) * c.weight_bpe / kGb;
}

double OptimizerGb(const Ctx& c, const ParallelLayout& l, bool sharded) {
    return PerAccelerator(Trainable(c), l, sharded) * c.adam_bytes / kGb;
}

// Layers per full stage, ceil(layers / pipeline), and on the head's stage (SplitShape).
int LayersPerStage(int layers, int pipeline) {
    return (layers + pipeline - 1) / pipeline;
}

// Layers the first and last stages share when every middle stage is full; under 2 the split
// cannot leave each of them a layer (the search skips such degrees).
int EndStagesLayers(int layers, int pipeline) {
    return layers - (pipeline - 2) * LayersPerStage(layers, pipeline);
}

int HeadStageLayers(int layers, int pipeline) {
    if (pipeline <= 1) return layers;
    const int ends = EndStagesLayers(layers, pipeline);
    // A degree the caller fixed whose ends cannot share: stages of floor and ceil layers.
    if (ends < 2) return layers / pipeline;
    return ends / 2;  // the first stage takes the odd layer
}

// Micro-batches per step on each of `data` replicas at `micro_batch` sequences each.
int MicroBatchesPerStep(const Ctx& c, int data, int micro_batch) {
    const double d = data;
    const double b = micro_batch;
    return std::max(static_cast<int>(std::ceil(c.global_batch_seqs / (d * b))), 1);
}

SplitShape SplitShapeOf(const Ctx& c, const ParallelLayout& l) {
    const double d = l.data;
    const double b = l.micro_batch_size;
    SplitShape out;
    out.micro_batches = MicroBatchesPerStep(c, l.data, l.micro_batch_size);
    out.tokens_per_step = static_cast<double>(out.micro_batches) * d * b * c.m.seq_len;
    out.layers_per_stage = std::ceil(static_cast<double>(c.m.layers) / l.pipeline);
    out.head_stage_layers = HeadStageLayers(c.m.layers, l.pipeline);
    return out;
}

// Layers of one pipeline chunk on a full stage: ceil(layers per stage / virtual stages).
int LayersPerChunk(const ParallelLayout& l, const SplitShape& shape) {
    const int per_stage = static_cast<int>(shape.layers_per_stage);
    const int v = std::max(1, l.virtual_stages);
    return std::max(1, (per_stage + v - 1) / v);
}

// The layers of each chunk that full recompute runs again: all of them unless the layout
// names fewer (block recompute); none without full recompute.
int RecomputedLayersPerChunk(const ParallelLayout& l, const SplitShape& shape) {
    if (l.recompute != Recompute::kFull) return 0;
    const int chunk = LayersPerChunk(l, shape);
    return l.recompute_layers > 0 ? std::min(l.recompute_layers, chunk) : chunk;
}

// The share of a stage's layers whose activations are recomputed rather than kept: 1 under
// full recompute of every layer, N / (layers per chunk) under block recompute of N layers per
// chunk ("recompute_num_layers specifies the number of layers per virtual pipeline stage",
// NeMo activation_recomputation.rst), 0 otherwise.
double RecomputedShare(const ParallelLayout& l, const SplitShape& shape) {
    if (l.recompute != Recompute::kFull) return 0.0;
    const int n = RecomputedLayersPerChunk(l, shape);
    const int chunk = LayersPerChunk(l, shape);
    return n >= chunk ? 1.0 : static_cast<double>(n) / chunk;
}

// Full recompute of only some of each chunk's layers (the search's caches key on the
// recompute mode alone, so such layouts are worked out without them).
bool BlockRecompute(const ParallelLayout& l, const SplitShape& shape) {
    return RecomputedShare(l, shape) < 1.0 && l.recompute == Recompute::kFull;
}

RowActivations RowActivationsOf(const Ctx& c, int micro_batch, int tensor, int context,
                                bool sequence_parallel) {
    const ResolvedModel& m = c.m;
    RowActivations a;
    for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
        const ActivationLayout layout{micro_batch,         tensor, context,
                                      sequence_parallel,   r,      c.flash,
                                      c.recompute_modules, 1,      c.linear_input_bpe};
        const LayerActivationParts parts = LayerActivations(m, layout);
        a.per_layer[static_cast<std::size_t>(r)] = parts.Total() * c.act_bpe / 2.0;
        a.expert_inputs[static_cast<std::size_t>(r)] = parts.expert_inputs * c.act_bpe / 2.0;
    }
    const double tp = tensor;
    a.logits =
        static_cast<double>(micro_batch) * m.seq_len / context * m.vocab_size / tp * kLogitBytes;
    return a;
}

// The activations of the first pipeline stage's layers while its micro-batches are in
// flight, in bytes: min(p, m) micro-batches under 1F1B. Under block recompute the
// recomputed share of the layers keeps its input only and the rest everything.
double InFlightLayerBytes(const ParallelLayout& l, const SplitShape& shape,
                          const RowActivations& row) {
    const double pp = l.pipeline;
    double in_flight = l.pipeline > 1 ? std::min<double>(pp, shape.micro_batches) : 1.0;
    const int etp = std::max(1, ExpertTensorDegree(l));
    double per_layer = row.PerLayer(l.recompute, etp);
    if (BlockRecompute(l, shape)) {
        const double share = RecomputedShare(l, shape);
        per_layer = share * per_layer + (1.0 - share) * row.PerLayer(Recompute::kNone, etp);
    }
    return per_layer * shape.layers_per_stage * in_flight;
}

// What interleaving adds to the first stage's activations, in bytes: its warm-up runs
// further ahead, so it holds L(1 + (p - 1)/(p v)) layers' worth where 1F1B holds L
// (Korthikanti et al. 2022, arXiv 2205.05198 Sec. 4.2.3).
double InterleavedExtraBytes(const ParallelLayout& l, const SplitShape& shape,
                             const RowActivations& row) {
    if (l.virtual_stages <= 1 || l.pipeline <= 1) return 0.0;
    const double pp = l.pipeline;
    return InFlightLayerBytes(l, shape, row) * (pp - 1.0) / (pp * l.virtual_stages);
}

// Activations stored on the first pipeline stage (with the logits), in bytes, before the
// ZeRO-3 prefetch buffers and the interleaving extra. `row`: RowActivationsOf the layout's
// tensor degree and micro-batch.
double StoredActivationBytes1F1B(const ParallelLayout& l, const SplitShape& shape,
                                 const RowActivations& row) {
    double act = InFlightLayerBytes(l, shape, row);
    if (l.recompute == Recompute::kFull) {
        // The layer being recomputed holds its full activations once.
        act += row.PerLayer(Recompute::kNone, std::max(1, ExpertTensorDegree(l)));
    }
    act += row.logits;
    return act;
}

// StoredActivationBytes1F1B plus the interleaving extra, in that order (the search adds the
// extra to its kept 1F1B figure, so both give the same bits).
double StoredActivationBytes(const ParallelLayout& l, const SplitShape& shape,
                             const RowActivations& row) {
    return StoredActivationBytes1F1B(l, shape, row) + InterleavedExtraBytes(l, shape, row);
}

// ZeRO 3: two gathered layers in flight (prefetch), in their stored format, in bytes.
double Zero3PrefetchBytes(const Ctx& c, const ParallelLayout& l) {
    const ResolvedModel& m = c.m;
    double held = PerAccelerator(c.split, l, false);
    double bytes_per_param = held > 0 ? WeightBytes(c, l, false) / held : c.weight_bpe;
    double routed_per_layer = c.split.routed / m.layers;
    double replicated = m.attention_params_per_layer + m.mlp_params_per_layer - routed_per_layer;
    return 2.0 * (replicated / l.tensor + routed_per_layer / ExpertModelShards(l)) *
           bytes_per_param;
}

MemoryBreakdown Memory(const Ctx& c, const ParallelLayout& l, const SplitShape& shape) {
    MemoryBreakdown mem;
    mem.weights_gb = WeightsGb(c, l, l.zero_stage >= 3);
    mem.gradients_gb = GradientsGb(c, l, l.zero_stage >= 2);
    mem.optimizer_gb = OptimizerGb(c, l, l.zero_stage >= 1);
    double act = StoredActivationBytes(
        l, shape,
        RowActivationsOf(c, l.micro_batch_size, l.tensor, l.context, l.sequence_parallel));
    if (l.zero_stage >= 3) {
        act += Zero3PrefetchBytes(c, l);
    }
    mem.activations_gb = act / kGb;
    mem.overhead_gb = c.overhead_gb;
    mem.total_gb =
        mem.weights_gb + mem.gradients_gb + mem.optimizer_gb + mem.activations_gb + mem.overhead_gb;
    return mem;
}

}  // namespace gpucost::pricing::estimate::detail
