#include "pricing/estimate/context_parallel.hpp"

#include <algorithm>

namespace gpucost::pricing::estimate {

bool ContextSplitsSequence(int seq_len, int context) {
    return context >= 1 && seq_len % (2 * context) == 0;
}

ContextChoices ContextParallelCandidates(int seq_len, int ranks, std::optional<int> requested) {
    ContextChoices ch;
    if (requested) {
        ch.degrees[0] = *requested;
        return ch;
    }
    if (seq_len < kContextParallelMinSeqLen) return ch;
    for (int c = 2; c <= kMaxSearchedContext && ch.n < ch.degrees.size(); c *= 2) {
        if (ranks % c != 0 || seq_len / c < kMinSearchedContextChunkTokens ||
            !ContextSplitsSequence(seq_len, c)) {
            continue;
        }
        ch.degrees[ch.n++] = c;
    }
    return ch;
}

double ContextChunkBytes(const ResolvedModel& m, int micro_batch, int tensor, int context,
                         double bytes_per_element) {
    const double kv_heads = std::max(1.0, static_cast<double>(m.kv_heads) / std::max(1, tensor));
    const double tokens = static_cast<double>(micro_batch) * m.seq_len / std::max(1, context);
    return 2.0 * tokens * kv_heads * m.head_dim * bytes_per_element;
}

ContextRingSeconds ContextRingExposedSeconds(double chunk_bytes, int context, const Link& link,
                                             double attention_forward_s,
                                             double attention_backward_ratio) {
    ContextRingSeconds out;
    if (context <= 1) return out;
    const double steps = context - 1.0;
    const double per_chunk_s = attention_forward_s / context;
    const double send_s = PointToPointSeconds(chunk_bytes, link);
    const double send_back_s =
        PointToPointSeconds(kContextBackwardTrafficRatio * chunk_bytes, link);
    out.forward_s = steps * std::max(0.0, send_s - per_chunk_s);
    out.backward_s = steps * std::max(0.0, send_back_s - attention_backward_ratio * per_chunk_s);
    return out;
}

void AddContextParallelAssumptions(const ResolvedModel& m, int tensor, int context, int micro_batch,
                                   double bytes_per_element, Assumptions& out) {
    out.push_back({"context_parallel_min_seq_len", kContextParallelMinSeqLen, "tokens",
                   "the search tries context parallelism (degrees 2 to 8, at least 4096 tokens "
                   "per rank, dividing the sequence into 2 x context chunks) from this sequence "
                   "length up; parallelism.context fixes any degree",
                   "Megatron-LM megatron/core/transformer/moe/README.md Guideline 5 (use CP "
                   "when sequence length >= 8K); Transformer Engine attn_forward_func_with_cp "
                   "(2 x context chunks)"});
    if (context <= 1) return;
    out.push_back({"context_ring_chunk_bytes",
                   ContextChunkBytes(m, micro_batch, tensor, context, bytes_per_element), "bytes",
                   "keys and values one context rank passes to the next at each of the context "
                   "- 1 ring steps of a layer's forward pass (twice that in the backward pass: "
                   "keys and values again, and their gradients); each step overlaps the "
                   "attention of the chunk in hand and only what that does not cover is exposed "
                   "(breakdown.context_comm_s)",
                   "Megatron-LM docs/user-guide/features/context_parallel.md (--cp-comm-type "
                   "p2p, the default: ring all-gather and reduce-scatter of KV as "
                   "point-to-point sends, overlapped with attention)"});
    out.push_back({"context_backward_traffic_ratio", kContextBackwardTrafficRatio, "ratio",
                   "backward ring traffic over forward (KV gathered again, dKV reduce-scattered)",
                   "Megatron-LM context_parallel.md"});
}

}  // namespace gpucost::pricing::estimate
