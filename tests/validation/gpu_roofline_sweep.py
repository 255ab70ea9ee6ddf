#!/usr/bin/env python3
"""Measures on a real GPU what the roofline estimator models: bf16 GEMM time by shape, and
device-memory copy bandwidth by size. Needs PyTorch with CUDA (run it on a GPU machine; CI has
none). Writes gemm.csv and copy.csv into OUT_DIR and prints them.

  python3 tests/validation/gpu_roofline_sweep.py OUT_DIR [fp8]

With `fp8` it times FP8 GEMMs instead (torch._scaled_mm, e4m3 operands with per-tensor scales,
bf16 output, as Transformer Engine's FP8 linear layers run them) and writes fp8-gemm.csv only;
token counts start at 16, the smallest m that FP8 GEMMs take.

Shapes are a transformer layer's GEMMs (tokens x out x in) for hidden sizes 2k-8k (Llama 3.2
1B/3B, 3.1 8B and 70B), from one token (decode) to 16k tokens (a training micro-batch), plus
the 8192^3 square. Each is timed two ways, rotating among enough input sets (over 256 MB) that
repeated runs do not find the operands in L2, on random normal inputs (never zeros):
  * `seconds`: one launch between two CUDA events (5 warm-ups, median of 30): what an op costs
    when it is launched alone, launch latency included;
  * `graph_seconds`: 20 ops captured in one CUDA graph, replayed (median of 10 replays) and
    divided by 20: an op's time inside a stream of kernels, as in a training step or a
    CUDA-graph decode loop. tests/validation/compare_roofline.py puts the
figures beside gpucost's /v1/estimates/roofline answers for the same ops.
"""
import csv
import os
import statistics
import sys

import torch

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
FP8 = len(sys.argv) > 2 and sys.argv[2] == "fp8"
assert torch.cuda.is_available(), "needs a CUDA GPU"
dev = torch.device("cuda")
props = torch.cuda.get_device_properties(dev)
print(f"device: {props.name}, {props.multi_processor_count} SMs, torch {torch.__version__}")

ROTATE_BYTES = 256 * 1024 * 1024


def timed(fn, sets, warmup=5, reps=30):
    for i in range(warmup):
        fn(*sets[i % len(sets)])
    torch.cuda.synchronize()
    times = []
    for i in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        args = sets[i % len(sets)]
        start.record()
        fn(*args)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def graph_timed(fn, sets, ops=20, reps=10):
    """Per-op seconds of `ops` back-to-back calls captured in one CUDA graph."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for i in range(3):
            fn(*sets[i % len(sets)])
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(ops):
            fn(*sets[i % len(sets)])
    for _ in range(3):
        graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / ops)
    return statistics.median(times)


def layer_shapes(tokens):
    layers = [(2048, 2048), (8192, 2048), (2048, 8192),      # 1B-class
              (3072, 3072), (8192, 3072), (3072, 8192),      # 3B-class
              (4096, 4096), (14336, 4096), (4096, 14336),    # 8B
              (8192, 8192), (28672, 8192), (8192, 28672)]    # 70B
    return [(m, n, k) for (n, k) in layers for m in tokens] + [(8192, 8192, 8192)]


def bf16_operands(m, n, k):
    a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
    b = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
    c = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
    return (a, b, c)


def bf16_gemm(a, b, c):
    torch.matmul(a, b, out=c)


def fp8_operands(m, n, k):
    # e4m3 operands (B column-major, as cuBLASLt's FP8 GEMM wants it) and unit scales.
    a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn).t()
    one = torch.ones((), device=dev, dtype=torch.float32)
    return (a, b, one)


def fp8_gemm(a, b, one):
    return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)


def gemm_rows():
    if FP8:
        shapes, element_bytes = layer_shapes([16, 64, 512, 2048, 8192, 16384]), 1
        operands, gemm = fp8_operands, fp8_gemm
    else:
        shapes, element_bytes = layer_shapes([1, 8, 64, 512, 2048, 8192, 16384]), 2
        operands, gemm = bf16_operands, bf16_gemm
    rows = []
    for m, n, k in shapes:
        # Inputs at the operand width, the output in bf16.
        per_set = element_bytes * (m * k + k * n) + 2 * m * n
        count = max(2, min(16, -(-ROTATE_BYTES // per_set)))
        sets = [operands(m, n, k) for _ in range(count)]
        s = timed(gemm, sets)
        g = graph_timed(gemm, sets)
        # Correctness spot check against float32 on the first set.
        a, b, _ = sets[0]
        out = gemm(*sets[0])
        if out is None:
            out = sets[0][2]
        ref = a.float() @ b.float()
        rel = ((out.float() - ref).norm() / ref.norm()).item()
        # FP8's error is recorded, not bounded: it depends on cuBLAS's accumulation mode.
        assert FP8 or rel < 2e-2, f"GEMM {m}x{n}x{k} off by {rel}"
        flops = 2 * m * n * k
        rows.append({"m": m, "n": n, "k": k, "seconds": f"{s:.9f}",
                     "graph_seconds": f"{g:.9f}", "tflops": f"{flops / s / 1e12:.1f}",
                     "graph_tflops": f"{flops / g / 1e12:.1f}",
                     "graph_gb_per_s": f"{per_set / g / 1e9:.0f}", "rel_error": f"{rel:.1e}"})
        del sets
        torch.cuda.empty_cache()
    return rows


def copy_rows():
    rows = []
    for size in [1 << 20, 10 << 20, 100 << 20, 1 << 30, 2 << 30]:
        count = max(2, min(8, -(-ROTATE_BYTES // size)))
        sets = [(torch.randn(size // 2, device=dev, dtype=torch.bfloat16),
                 torch.empty(size // 2, device=dev, dtype=torch.bfloat16)) for _ in range(count)]
        s = timed(lambda src, dst: dst.copy_(src), sets)
        g = graph_timed(lambda src, dst: dst.copy_(src), sets)
        moved = 2 * size  # read + written
        rows.append({"bytes_copied": size, "bytes_moved": moved, "seconds": f"{s:.9f}",
                     "graph_seconds": f"{g:.9f}", "gb_per_s": f"{moved / s / 1e9:.0f}",
                     "graph_gb_per_s": f"{moved / g / 1e9:.0f}"})
        del sets
        torch.cuda.empty_cache()
    return rows


def write(name, rows):
    path = os.path.join(OUT, name)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    print(f"--- {name}")
    print(",".join(rows[0].keys()))
    for r in rows:
        print(",".join(str(v) for v in r.values()))


os.makedirs(OUT, exist_ok=True)
if FP8:
    write("fp8-gemm.csv", gemm_rows())
else:
    write("copy.csv", copy_rows())
    write("gemm.csv", gemm_rows())
with open(os.path.join(OUT, "device.txt"), "w") as f:
    f.write(f"{props.name}, {props.multi_processor_count} SMs, torch {torch.__version__}\n")
