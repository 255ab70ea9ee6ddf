#!/usr/bin/env python3
"""A price refresh at the catalog's real size (not a ctest): time and peak RSS of
`gpucost import` merging a new price for each of N offerings it already has, at a few N, so
that the figures show whether the merge is linear in the input.

    tests/bench/refresh_import_bench.py [BINARY] [SIZES]
    # defaults: build/release/service/gpucost 8000,16000,31000

Per N: a generated AWS Price List file of N GPU offerings (the mapped instance types in
synthetic regions; scale_pg_bench.aws_price_file) imported into a catalog directory from the
embedded catalog ("create"), then a second file with a new price for each of them imported on
top of that directory ("refresh": --catalog-dir the first result, --out another). Wall time
and the importer's peak RSS (wait4's rusage of that child alone). Target: the
refresh of 31k offerings linear in time and under 200 MB.
"""
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from scale_pg_bench import aws_price_file  # noqa: E402

BINARY = sys.argv[1] if len(sys.argv) > 1 else "build/release/service/gpucost"
SIZES = [int(s) for s in (sys.argv[2] if len(sys.argv) > 2 else "8000,16000,31000").split(",")]


def run(args):
    """(seconds, peak RSS in MB) of one child; exits on failure."""
    start = time.monotonic()
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.monotonic() - start
    if status != 0:
        raise SystemExit(f"{' '.join(args)} failed: {child.stderr.read().decode()[-2000:]}")
    return seconds, usage.ru_maxrss / 1024


def main():
    print(f"binary {BINARY}, load average {os.getloadavg()[0]:.1f}", flush=True)
    print("| offerings | create s | create peak MB | refresh s | refresh peak MB "
          "| refresh us per offering |")
    print("|---|---|---|---|---|---|")
    for n in SIZES:
        with tempfile.TemporaryDirectory() as tmp:
            first, second = os.path.join(tmp, "aws-1.json"), os.path.join(tmp, "aws-2.json")
            aws_price_file(first, n, "2026-11-01", lambda i: 10 + i % 97)
            aws_price_file(second, n, "2026-11-15", lambda i: 9 + i % 89)
            created, refreshed = os.path.join(tmp, "created"), os.path.join(tmp, "refreshed")
            c_s, c_mb = run([BINARY, "import", "aws-price-list", first, "--out", created])
            r_s, r_mb = run([BINARY, "import", "aws-price-list", second, "--catalog-dir",
                             created, "--out", refreshed])
            print(f"| {n} | {c_s:.2f} | {c_mb:.0f} | {r_s:.2f} | {r_mb:.0f} "
                  f"| {r_s / n * 1e6:.0f} |", flush=True)


if __name__ == "__main__":
    main()
