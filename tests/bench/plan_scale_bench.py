#!/usr/bin/env python3
"""The full-catalog training plan at the catalog's shipped size and at 20,000 offerings.

One command, printing figures for both sizes in the same run: builds the synthetic catalogs
with make_scale_catalog.py (the seed as shipped, and the seed's offerings copied into more
regions up to 20,000), serves each with every binary given (--catalog-dir, embedded mode),
and times the plan of concurrency_bench.sh (7B, 1T tokens, deadline 720 h, budget $150K, on
demand and spot) from one keep-alive client: the p50 of the wall-clock latency, and the
server's own CPU time per plan (utime + stime from /proc, which a loaded machine disturbs
less than the latency). With two binaries (before, after) the rounds alternate between them
and the sizes, so that the load of a shared machine falls on both; every answer of the
second binary is checked to be byte-identical to the first's (request ids aside), unless
--answers-may-differ (a change meant to alter answers, checked with same_answers.sh).

    usage: tests/bench/plan_scale_bench.py [--before BIN] [--after BIN] [--rounds 3]
                                           [--requests 100] [--sizes shipped,20000]
                                           [--answers-may-differ]
"""
import argparse
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = HERE.parent.parent / "schema" / "seed"
PLAN = json.dumps({
    "model": {"params_b": 7}, "tokens_b": 1000, "precision": "bf16",
    "constraints": {"deadline_hours": 720, "budget_usd": 150000,
                    "price_types": ["on_demand", "spot"]},
    "sort": "expected_cost", "limit": 3})
TICKS = os.sysconf("SC_CLK_TCK")


def seed_size() -> int:
    with open(SEED / "offerings.csv") as f:
        return sum(1 for _ in f) - 1


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


class Server:
    def __init__(self, binary: str, catalog: Path, log: Path):
        self.log = open(log, "w")
        self.proc = subprocess.Popen(
            [binary, "--port", "0", "--catalog-dir", str(catalog), "--access-log", "false"],
            stdout=subprocess.DEVNULL, stderr=self.log)
        for _ in range(1500):
            m = re.search(r'"port":(\d+)', log.read_text())
            if m:
                self.port = int(m.group(1))
                break
            if self.proc.poll() is not None:
                sys.exit(f"{binary} did not start on {catalog}: {log.read_text()[-500:]}")
            time.sleep(0.02)
        else:
            sys.exit(f"{binary} did not log its port")
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)

    def plan(self) -> bytes:
        self.conn.request("POST", "/v1/plans/training", PLAN,
                          {"Content-Type": "application/json"})
        answer = self.conn.getresponse()
        body = answer.read()
        if answer.status != 200:
            sys.exit(f"plan answered {answer.status}: {body[:300]!r}")
        return body

    def stop(self):
        self.conn.close()
        self.proc.terminate()
        self.proc.wait()
        self.log.close()


def without_request_id(body: bytes) -> bytes:
    return re.sub(rb'"request_id":"[^"]*"', b"", body)


def measure(binary: str, catalog: Path, log: Path, requests: int):
    """-> (latencies in ms, CPU ms per plan, the answer)"""
    server = Server(binary, catalog, log)
    try:
        for _ in range(5):  # first uses: caches, the catalog summary, page faults
            answer = server.plan()
        cpu_before = cpu_seconds(server.proc.pid)
        latencies = []
        for _ in range(requests):
            start = time.perf_counter()
            server.plan()
            latencies.append((time.perf_counter() - start) * 1000)
        cpu_ms = (cpu_seconds(server.proc.pid) - cpu_before) * 1000 / requests
        return latencies, cpu_ms, without_request_id(answer)
    finally:
        server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", help="the binary before the change (optional)")
    parser.add_argument("--after", default="build/release/service/gpucost")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=100, help="plans per size and round")
    parser.add_argument("--sizes", default="shipped,20000")
    parser.add_argument("--answers-may-differ", action="store_true",
                        help="time binaries whose answers differ on purpose (an answer change "
                             "checked with same_answers.sh); counted, not fatal")
    args = parser.parse_args()
    binaries = [("before", args.before)] if args.before else []
    binaries.append(("after", args.after))
    shipped = seed_size()
    sizes = [shipped if s == "shipped" else int(s) for s in args.sizes.split(",")]
    print(f"{os.cpu_count()} cores, load before: {open('/proc/loadavg').read().split()[:3]}; "
          f"{args.rounds} rounds x {args.requests} plans per binary and size, one keep-alive "
          f"client; the shipped catalog has {shipped} offerings")
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        catalogs = {}
        for n in sizes:
            catalogs[n] = work / f"catalog-{n}"
            subprocess.run([sys.executable, str(HERE / "make_scale_catalog.py"), str(SEED),
                            str(catalogs[n]), str(n)], check=True)
        latencies = {(b, n): [] for b, _ in binaries for n in sizes}
        cpu = {(b, n): [] for b, _ in binaries for n in sizes}
        answers = {}
        differing = set()
        for r in range(args.rounds):
            # Alternate which binary goes first, so neither always runs into the same load.
            order = binaries if r % 2 == 0 else list(reversed(binaries))
            for name, binary in order:
                for n in sizes:
                    lat, cpu_ms, answer = measure(binary, catalogs[n], work / "server.log",
                                                  args.requests)
                    latencies[(name, n)] += lat
                    cpu[(name, n)].append(cpu_ms)
                    if answers.setdefault((name, n), answer) != answers.setdefault(n, answer):
                        if not args.answers_may_differ:
                            sys.exit(f"DIFFERENT ANSWERS at {n} offerings ({name}, round {r + 1})")
                        differing.add(n)
    print(f"load after: {open('/proc/loadavg').read().split()[:3]}")
    print()
    print("| binary | offerings | plan p50 (min) | server CPU per plan (median of rounds) |")
    print("|---|---|---|---|")
    for name, _ in binaries:
        for n in sizes:
            lat = latencies[(name, n)]
            print(f"| {name} | {n} | {statistics.median(lat):.2f} ms ({min(lat):.2f}) | "
                  f"{statistics.median(cpu[(name, n)]):.2f} ms |")
    if len(sizes) >= 2:
        small, large = sizes[0], sizes[-1]
        print()
        for name, _ in binaries:
            p50 = statistics.median(latencies[(name, large)]) / statistics.median(
                latencies[(name, small)])
            low = min(latencies[(name, large)]) / min(latencies[(name, small)])
            cpu_ratio = statistics.median(cpu[(name, large)]) / statistics.median(
                cpu[(name, small)])
            print(f"{name}: {large} / {small} offerings: p50 {p50:.2f}x, min {low:.2f}x, "
                  f"server CPU {cpu_ratio:.2f}x (target: p50 <= 2x)")
    if len(binaries) == 1:
        verdict = "not compared"
    elif differing:
        verdict = (f"DIFFERENT between the binaries at {sorted(differing)} of these "
                   "(--answers-may-differ):")
    else:
        verdict = "identical between the binaries at"
    print(f"answers: {verdict} {', '.join(str(n) for n in sizes)} offerings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
