#!/usr/bin/env python3
"""Puts measured prefill and decode times (tests/validation/gpu_decode_sweep.py's CSVs) beside
gpucost's /v1/estimates/inference for the same model, batch and lengths, and prints a markdown
table: time to first token against the measured prefill, inter-token latency against the
measured decode step.

  python3 tests/validation/compare_decode.py BINARY ACCELERATOR DECODE_CSV...

Exits 0: this is a report, not a gate (the estimator's bounds are gpucost_validate's).
"""
import csv
import json
import os
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "contract"))
import serve  # noqa: E402

BINARY, ACCELERATOR = sys.argv[1:3]
CSVS = sys.argv[3:]
# The sweep's models as gpucost takes them: a library id, or the structure written out.
MODELS = {
    "llama-3.1-8b": "llama-3.1-8b",
    "llama-3.1-70b-layers8": {"layers": 8, "hidden_size": 8192, "attention_heads": 64,
                              "kv_heads": 8, "ffn_hidden_size": 28672, "vocab_size": 128256,
                              "gated_mlp": True},
}


def estimate(port, row):
    body = json.dumps({"model": MODELS[row["model"]],
                       "hardware": {"accelerator": ACCELERATOR, "total_accelerators": 1},
                       "precision": "bf16", "batch_size": int(row["batch"]),
                       "input_tokens": int(row["input_tokens"]),
                       "output_tokens": int(row["output_tokens"])}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/estimates/inference", data=body,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        answer = json.load(r)
    return answer["time_to_first_token_ms"] / 1e3, answer["inter_token_latency_ms"] / 1e3


def main():
    rows = [r for path in CSVS for r in csv.DictReader(open(path))]
    proc, port = serve.start(BINARY, stdout=subprocess.DEVNULL)
    try:
        estimates = [estimate(port, r) for r in rows]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print("| model | batch | prefill measured (ms) | TTFT gpucost (ms) | ratio "
          "| decode step measured (ms) | ITL gpucost (ms) | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for r, (ttft, itl) in zip(rows, estimates):
        prefill, decode = float(r["prefill_seconds"]), float(r["decode_step_seconds"])
        print(f"| {r['model']} | {r['batch']} | {prefill * 1e3:.1f} | {ttft * 1e3:.1f} | "
              f"{ttft / prefill:.2f} | {decode * 1e3:.2f} | {itl * 1e3:.2f} | {itl / decode:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
