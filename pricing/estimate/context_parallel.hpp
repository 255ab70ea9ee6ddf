#pragma once

#include <array>
#include <cstddef>
#include <optional>

#include "pricing/assumption.hpp"
#include "pricing/estimate/collectives.hpp"
#include "pricing/estimate/model.hpp"

namespace gpucost::pricing::estimate {

// Context parallelism (Megatron-Core --context-parallel-size, NeMo context_parallel_size):
// each sequence of a micro-batch is split over `context` ranks, every activation and all
// non-attention work with it; attention exchanges keys and values around a ring of the
// context ranks ("the all-gather and reduce-scatter are implemented as point-to-point
// communications in a ring topology", Megatron-LM docs/user-guide/features/context_parallel.md;
// --cp-comm-type p2p, the default), overlapped with the attention of the chunk in hand.
// Transformer Engine splits each sequence into 2 x context chunks so causal work is equal on
// every rank, and needs the sequence length divisible by 2 x context (TE
// attn_forward_func_with_cp).

// The search tries context parallelism from this sequence length up: "Empirically, use CP when
// sequence length >= 8K" (Megatron-LM megatron/core/transformer/moe/README.md, Guideline 5).
inline constexpr int kContextParallelMinSeqLen = 8192;
// ... and keeps at least this many tokens of each sequence on a rank (NVIDIA's published
// layouts split 8K sequences in two: Llama 3.1 405B at CP 2, NVIDIA/dgxc-benchmarking and
// Megatron-Bridge performance tables), up to kMaxSearchedContext ranks.
inline constexpr int kMinSearchedContextChunkTokens = 4096;
inline constexpr int kMaxSearchedContext = 8;
// Backward ring traffic over forward: keys and values are gathered again and their gradients
// reduce-scattered (context_parallel.md: "gathers KV again in backward").
inline constexpr double kContextBackwardTrafficRatio = 2.0;

// The context degree splits the sequence into 2 x context equal chunks.
bool ContextSplitsSequence(int seq_len, int context);

// The context degrees to try: the request's, or 1 and the powers of two up to
// kMaxSearchedContext that divide `ranks` and keep kMinSearchedContextChunkTokens per rank
// (for sequences of kContextParallelMinSeqLen or more).
struct ContextChoices {
    std::array<int, 8> degrees{1};
    std::size_t n = 1;
    const int* begin() const { return degrees.data(); }
    const int* end() const { return degrees.data() + n; }
};
ContextChoices ContextParallelCandidates(int seq_len, int ranks, std::optional<int> requested);

// Bytes of one ring step: the keys and values of one rank's share of a micro-batch, for the
// key/value heads of one tensor rank (replicated when the tensor degree exceeds them).
double ContextChunkBytes(const ResolvedModel& model, int micro_batch, int tensor, int context,
                         double bytes_per_element);

// The exposed ring time of one layer and micro-batch: each of the context - 1 transfers runs
// under the attention of one chunk (attention_s / context of the rank's attention time); what
// the chunk's attention does not cover is exposed.
struct ContextRingSeconds {
    double forward_s = 0;
    double backward_s = 0;
};
ContextRingSeconds ContextRingExposedSeconds(double chunk_bytes, int context, const Link& link,
                                             double attention_forward_s,
                                             double attention_backward_ratio);

// The echo of a layout's context parallelism: its ring and how it was sized (nothing at
// context 1 beyond the search's rule).
void AddContextParallelAssumptions(const ResolvedModel& model, int tensor, int context,
                                   int micro_batch, double bytes_per_element, Assumptions& out);

}  // namespace gpucost::pricing::estimate
