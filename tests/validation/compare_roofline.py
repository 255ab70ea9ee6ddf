#!/usr/bin/env python3
"""Puts measured GEMM and copy times (tests/validation/gpu_roofline_sweep.py's CSVs) beside
gpucost's /v1/estimates/roofline answers for the same ops, and prints a markdown table and a
summary per regime (decode: up to 64 tokens; mid: 512-2048; large: 8192 and more).

  python3 tests/validation/compare_roofline.py BINARY GEMM_CSV COPY_CSV [ACCELERATOR [PRECISION]]

COPY_CSV may be `-` (no copies: an FP8 sweep writes GEMMs only); PRECISION defaults to bf16.

The measured side is the CUDA-graph figure (an op inside a stream of kernels, as the step
models use it); the single-launch figure is shown beside it. Exits 0: this is a report, not a
gate (the estimator's bounds are gpucost_validate's).
"""
import csv
import json
import os
import statistics
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "contract"))
import serve  # noqa: E402

BINARY, GEMM_CSV, COPY_CSV = sys.argv[1:4]
ACCELERATOR = sys.argv[4] if len(sys.argv) > 4 else "h100-sxm"
PRECISION = sys.argv[5] if len(sys.argv) > 5 else "bf16"


def estimate(port, ops):
    body = json.dumps({"accelerator": ACCELERATOR, "precision": PRECISION, "ops": ops}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/estimates/roofline", data=body,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return [op["seconds"] for op in json.load(r)["ops"]]


def regime(m):
    return "decode (m <= 64)" if m <= 64 else "mid (512-2048)" if m <= 2048 else "large (>= 8192)"


def main():
    gemms = list(csv.DictReader(open(GEMM_CSV)))
    copies = [] if COPY_CSV == "-" else list(csv.DictReader(open(COPY_CSV)))
    proc, port = serve.start(BINARY, stdout=subprocess.DEVNULL)
    try:
        est_gemm = estimate(port, [{"kind": "gemm", "m": int(r["m"]), "n": int(r["n"]),
                                    "k": int(r["k"])} for r in gemms])
        half = [int(r["bytes_copied"]) for r in copies]
        est_copy = estimate(port, [{"kind": "memory", "bytes_read": b, "bytes_written": b}
                                   for b in half]) if half else []
    finally:
        proc.terminate()
        proc.wait(timeout=10)

    print("| m x n x k | measured, graph (us) | measured, one launch (us) | gpucost (us) | gpucost / graph |")
    print("|---|---|---|---|---|")
    ratios = {}
    for r, e in zip(gemms, est_gemm):
        g = float(r["graph_seconds"])
        ratio = e / g
        ratios.setdefault(regime(int(r["m"])), []).append(ratio)
        print(f"| {r['m']} x {r['n']} x {r['k']} | {g * 1e6:.1f} | {float(r['seconds']) * 1e6:.1f} "
              f"| {e * 1e6:.1f} | {ratio:.2f} |")
    print()
    print("| copy (bytes read = written) | measured, graph (us) | measured, one launch (us) | gpucost (us) | gpucost / graph |")
    print("|---|---|---|---|---|")
    for r, e in zip(copies, est_copy):
        g = float(r["graph_seconds"])
        print(f"| {int(r['bytes_copied']) / 2**20:.0f} MiB | {g * 1e6:.1f} | "
              f"{float(r['seconds']) * 1e6:.1f} | {e * 1e6:.1f} | {e / g:.2f} |")
    print()
    print("| GEMM regime | shapes | median gpucost / measured | range |")
    print("|---|---|---|---|")
    for name in ("decode (m <= 64)", "mid (512-2048)", "large (>= 8192)"):
        rs = ratios.get(name, [])
        if rs:
            print(f"| {name} | {len(rs)} | {statistics.median(rs):.2f} | {min(rs):.2f}-{max(rs):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
