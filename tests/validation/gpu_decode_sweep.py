#!/usr/bin/env python3
"""Measures on a real GPU what the inference estimator models end to end: a dense decoder's
prefill (time to first token) and decode step (inter-token latency) at several batch sizes.
Needs PyTorch with CUDA (run it on a GPU machine; CI has none). Writes decode.csv into OUT_DIR
and prints it.

  python3 tests/validation/gpu_decode_sweep.py OUT_DIR [MODEL]

MODEL is llama-3.1-8b (default) or llama-3.1-70b-layers8 (the 70B's layer shapes, 8 of its 80
layers, for a single GPU). The model is the Llama architecture written out in plain PyTorch
with random bf16 weights (no download): RMSNorm, rotary-free attention through
scaled_dot_product_attention (flash kernels; grouped-query heads), a SwiGLU MLP and the output
head. What an engine adds (paged KV cache, fused norms, continuous batching) is left out, so the
figures are what plain kernels achieve, the floor an engine improves on:
  * prefill: one forward pass over batch x INPUT tokens (causal), CUDA events, median of 3
    after 1 warm-up: time to first token with every prompt of the batch arriving together;
  * decode: one step (a token per sequence) against a KV cache of INPUT + OUTPUT / 2 tokens,
    captured in a CUDA graph (launch gaps removed, as engines run decode), median of 20
    replays: the inter-token latency at the average context.
tests/validation/compare_decode.py puts the figures beside /v1/estimates/inference.
"""
import csv
import os
import statistics
import sys

import torch
import torch.nn.functional as F

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
MODEL = sys.argv[2] if len(sys.argv) > 2 else "llama-3.1-8b"
SHAPES = {
    # layers, hidden, heads, kv_heads, ffn, vocab
    "llama-3.1-8b": (32, 4096, 32, 8, 14336, 128256),
    "llama-3.1-70b-layers8": (8, 8192, 64, 8, 28672, 128256),
}
LAYERS, HIDDEN, HEADS, KV_HEADS, FFN, VOCAB = SHAPES[MODEL]
HEAD_DIM = HIDDEN // HEADS
INPUT, OUTPUT = 2048, 128
BATCHES = [1, 8, 32, 64]
dev = torch.device("cuda")
dt = torch.bfloat16
torch.manual_seed(0)


def weight(*shape):
    return torch.randn(*shape, device=dev, dtype=dt) * 0.02


layers = [{"qkv": weight(HIDDEN + 2 * KV_HEADS * HEAD_DIM, HIDDEN), "o": weight(HIDDEN, HIDDEN),
           "gate_up": weight(2 * FFN, HIDDEN), "down": weight(HIDDEN, FFN),
           "n1": torch.ones(HIDDEN, device=dev, dtype=dt),
           "n2": torch.ones(HIDDEN, device=dev, dtype=dt)} for _ in range(LAYERS)]
head = weight(VOCAB, HIDDEN)


def block(x, p, k_cache=None, v_cache=None):
    """One layer over x (batch, tokens, hidden); with caches, x is the new token and the
    caches hold the context (written in place at their last position)."""
    b, t, _ = x.shape
    h = F.rms_norm(x, (HIDDEN,), p["n1"])
    q, k, v = F.linear(h, p["qkv"]).split([HIDDEN, KV_HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM], -1)
    q = q.view(b, t, HEADS, HEAD_DIM).transpose(1, 2)
    k = k.view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2)
    v = v.view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2)
    if k_cache is None:
        # Prefill: each KV head repeated for its query heads, then the causal flash kernel.
        group = HEADS // KV_HEADS
        a = F.scaled_dot_product_attention(q, k.repeat_interleave(group, 1),
                                           v.repeat_interleave(group, 1), is_causal=True)
        a = a.transpose(1, 2).reshape(b, t, HIDDEN)
    else:
        # Decode: the new token's K and V go to the cache's last slot; a group's query heads
        # attend as that KV head's rows (no mask for one new token), so the cache is read once.
        k_cache[:, :, -1:].copy_(k)
        v_cache[:, :, -1:].copy_(v)
        qg = q.reshape(b, KV_HEADS, HEADS // KV_HEADS, HEAD_DIM)
        a = F.scaled_dot_product_attention(qg, k_cache, v_cache).reshape(b, 1, HIDDEN)
    x = x + F.linear(a, p["o"])
    g, u = F.linear(F.rms_norm(x, (HIDDEN,), p["n2"]), p["gate_up"]).chunk(2, -1)
    return x + F.linear(F.silu(g) * u, p["down"])


def forward(x, caches=None):
    for i, p in enumerate(layers):
        x = block(x, p, *(caches[i] if caches else (None, None)))
    return F.linear(x[:, -1:], head)


def events_median(fn, warmup, reps):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) / 1e3)
    return statistics.median(times)


rows = []
with torch.inference_mode():
    for batch in BATCHES:
        prompt = torch.randn(batch, INPUT, HIDDEN, device=dev, dtype=dt)
        prefill_s = events_median(lambda: forward(prompt), 1, 3)
        del prompt
        context = INPUT + OUTPUT // 2
        caches = [(torch.randn(batch, KV_HEADS, context, HEAD_DIM, device=dev, dtype=dt),
                   torch.randn(batch, KV_HEADS, context, HEAD_DIM, device=dev, dtype=dt))
                  for _ in range(LAYERS)]
        token = torch.randn(batch, 1, HIDDEN, device=dev, dtype=dt)
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                forward(token, caches)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            forward(token, caches)
        decode_s = events_median(graph.replay, 3, 20)
        rows.append({"model": MODEL, "batch": batch, "input_tokens": INPUT,
                     "output_tokens": OUTPUT, "context_tokens": context,
                     "prefill_seconds": f"{prefill_s:.6f}", "decode_step_seconds": f"{decode_s:.6f}",
                     "prefill_tokens_per_s": f"{batch * INPUT / prefill_s:.0f}",
                     "decode_tokens_per_s": f"{batch / decode_s:.0f}"})
        print(rows[-1], flush=True)
        del caches, graph
        torch.cuda.empty_cache()

os.makedirs(OUT, exist_ok=True)
with open(os.path.join(OUT, f"decode-{MODEL}.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)
