#!/usr/bin/env python3
"""Does the default worker count starve estimates while writes wait on PostgreSQL?

Runs under tests/pg/with_pg.sh (a throwaway PostgreSQL; DATABASE_URL set):
    tests/pg/with_pg.sh python3 tests/bench/pg_workers_bench.py BINARY [SECONDS] [THREADS...]

For each worker count (default 4 and 16) it starts `BINARY serve` on the database, then for
SECONDS (default 5) keeps WRITERS clients writing prices (PUT /v1/offerings/{id}/price,
through the database pool) while ESTIMATORS clients ask for training estimates (CPU only),
each client on its own keep-alive connection, and prints writes/s, estimates/s and the
estimates' p50/p99. Prints figures only; it judges nothing (the machine may be shared).
"""
import http.client
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "contract"))
import serve  # noqa: E402

WRITERS = 16
ESTIMATORS = 8
ESTIMATE = json.dumps({"model": {"params_b": 8}, "tokens_b": 1000,
                       "hardware": {"accelerator": "h100-sxm", "total_accelerators": 64}})


def run(binary, *args):
    p = subprocess.run([binary, *args], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise SystemExit(f"gpucost {' '.join(args)} failed: {p.stderr}")
    return p.stdout


def start(binary, threads, log):
    proc, port = serve.start(binary, ["--threads", str(threads)], embedded=False, timeout_s=60,
                             stdout=subprocess.DEVNULL, log=log)
    if port is None:
        raise SystemExit("gpucost did not start: " + open(log.name).read())
    return proc, port


def client(port, stop, results, make_request):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    n = 0
    while not stop.is_set():
        n += 1
        method, path, body, headers = make_request(n)
        t0 = time.monotonic()
        conn.request(method, path, body, headers)
        r = conn.getresponse()
        r.read()
        results.append((time.monotonic() - t0, r.status))


def measure(binary, threads, seconds, offerings, auth):
    with open(f"/tmp/pg_workers_bench_{os.getpid()}.log", "w+") as log:
        proc, port = start(binary, threads, log)
        if not offerings:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", "/v1/offerings?limit=50&sort=id")
            offerings.extend(o["id"] for o in json.loads(conn.getresponse().read())["items"])
        stop = threading.Event()
        writes, estimates = [], []
        workers = []
        for i in range(WRITERS):
            def write(n, i=i):
                body = json.dumps({"usd_per_hour": 50 + i + (n % 100) / 100, "source": "bench"})
                return "PUT", f"/v1/offerings/{offerings[(i + n) % len(offerings)]}/price", body, auth
            workers.append(threading.Thread(target=client, args=(port, stop, writes, write)))
        for _ in range(ESTIMATORS):
            def estimate(n):
                return "POST", "/v1/estimates/training", ESTIMATE, {"Content-Type": "application/json"}
            workers.append(threading.Thread(target=client, args=(port, stop, estimates, estimate)))
        for w in workers:
            w.start()
        time.sleep(seconds)
        stop.set()
        for w in workers:
            w.join()
        proc.terminate()
        proc.wait(timeout=30)
    lat = sorted(t for t, s in estimates if s == 200)
    bad = {}
    for _, s in writes + estimates:
        if s >= 300:
            bad[s] = bad.get(s, 0) + 1
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000 if lat else float("nan")
    print(f"--threads {threads:3}: writes {len(writes) / seconds:7.0f}/s, estimates "
          f"{len(lat) / seconds:7.0f}/s, estimate p50 {p(0.5):6.1f} ms p99 {p(0.99):6.1f} ms, "
          f"non-2xx {bad or 0}", flush=True)


def main():
    binary = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 5
    counts = [int(a) for a in sys.argv[3:]] or [4, 16]
    run(binary, "migrate")
    run(binary, "seed")
    key = run(binary, "apikey", "create", "--scope", "admin", "--name", "bench").strip()
    auth = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}
    ids = []  # filled from the first server's catalog
    print(f"{os.cpu_count()} CPUs; {WRITERS} writers, {ESTIMATORS} estimate clients, "
          f"{seconds:g} s per run", flush=True)
    for threads in counts:
        measure(binary, threads, seconds, ids, auth)


if __name__ == "__main__":
    main()
