#!/usr/bin/env python3
"""Database mode at the catalog's real size: prints the database rows of
docs/performance.md's table and its target figures, for synthetic catalogs of 187, 5k and 20k offerings with 5
price observations each (the seed's offerings copied into more regions).

    tests/bench/scale_pg_bench.py --bin build/release/service/gpucost [--sizes 187,5000,20000]
                                  [--seconds 10]

Starts its own PostgreSQL 15 through tests/pg/with_pg.sh (one database per size). Per size:
seeding time, PUT price round trip and the time until a second replica serves the write
(median of --puts sequential writes), one offering read current and `?as_of=` (median of 20),
a training plan current and with `as_of` (median of 5), replica RSS at start and at the end.
At the largest size also: 8 writers for --seconds (writes/s, count of non-2xx), then 16 `as_of`
readers for --seconds on the other replica (req/s, p99, RSS after); seeding that size is the
"seeding 100k prices" figure.
Bounded: the load phases last --seconds, a write not seen by the other replica within 5 s counts
as inf, seeding gives up after 600 s. About 1.5 min on the current code, 9.5 min on the code
before bulk seeding (100k prices row by row), 2 cores shared. Then, in a database of its own,
`gpucost import` of a generated AWS Price List file of --import-prices GPU offerings (the mapped
instance types in synthetic regions): once to create them, then a second file with new prices
for all of them, timed ("importing 10k prices into the database"; given up after
--import-cap-s, reported as "> cap"). --import-prices 0 skips it.
The clients are Python threads: above a few thousand requests per second they, not the server,
are the limit (the figures say what one run saw on this machine, 2 cores shared).
"""
import argparse
import csv
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
WITH_PG = os.path.join(ROOT, "tests", "pg", "with_pg.sh")
PSQL = "/usr/lib/postgresql/15/bin/psql"
AS_OF = "2025-03-15T00:00:00Z"
PLAN = {"model": {"params_b": 7}, "tokens_b": 1000, "precision": "bf16", "limit": 3}
PRICE_DATES = ["2025-01-01", "2025-02-01", "2025-03-01", "2025-04-01", "2025-05-01"]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", required=True, help="gpucost binary (release build)")
    p.add_argument("--sizes", default="187,5000,20000", help="offering counts, comma-separated")
    p.add_argument("--seed-bin", help="binary that seeds the databases (default --bin): a build"
                   " whose seed outlasts its 5 s statement timeout on a loaded machine (before"
                   " 2026-11-27) can be measured on data seeded by a newer one")
    p.add_argument("--seconds", type=float, default=10.0, help="length of each load phase")
    p.add_argument("--puts", type=int, default=7, help="sequential PUTs per size")
    p.add_argument("--writers", type=int, default=8)
    p.add_argument("--readers", type=int, default=16)
    p.add_argument("--import-prices", type=int, default=10000, help="0: skip the import phase")
    p.add_argument("--import-cap-s", type=float, default=300.0)
    return p.parse_args()


def psql(url, sql):
    out = subprocess.run([PSQL, url, "-tAc", sql], capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise SystemExit(f"psql failed: {out.stderr}")
    return out.stdout.strip()


def make_catalog(size, workdir):
    """A catalog directory: the seed's files with offerings.csv/prices.csv replaced by `size`
    offerings (copies of the seed's in new regions) with 5 observations each."""
    out = os.path.join(workdir, f"catalog-{size}")
    shutil.copytree(os.path.join(ROOT, "schema", "seed"), out)
    with open(os.path.join(out, "offerings.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
        header = list(rows[0].keys())
    offerings, prices = [], []
    for i in range(size):
        base, copy = dict(rows[i % len(rows)]), i // len(rows)
        if copy:
            base["id"] = f"{base['id']}-x{copy}"
            base["region"] = f"{base['region']}-x{copy}"
        offerings.append(base)
        for k, date in enumerate(PRICE_DATES):
            prices.append({"offering_id": base["id"], "usd_per_hour": f"{1 + (i % 97) * 0.25 + k * 0.01:.4f}",
                           "as_of": date, "as_of_estimated": "false", "source": "scale-bench synthetic",
                           "verified": "true", "notes": ""})
    with open(os.path.join(out, "offerings.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header)
        w.writeheader()
        w.writerows(offerings)
    with open(os.path.join(out, "prices.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(prices[0].keys()))
        w.writeheader()
        w.writerows(prices)
    return out, [o["id"] for o in offerings]


class Replica:
    def __init__(self, binary, url, logdir, name):
        self.log = open(os.path.join(logdir, f"{name}.log"), "w+")
        self.proc = subprocess.Popen(
            [binary, "serve", "--port", "0", "--threads", "8", "--access-log", "false",
             "--snapshot-refresh-ms", "1000", "--database-url", url],
            stdout=subprocess.DEVNULL, stderr=self.log)
        self.port = None
        deadline = time.time() + 120
        while time.time() < deadline and self.port is None:
            with open(self.log.name) as f:
                for line in f:
                    if '"msg":"listening"' in line:
                        self.port = json.loads(line)["port"]
            if self.proc.poll() is not None:
                raise SystemExit(f"{name} exited: {open(self.log.name).read()[-2000:]}")
            time.sleep(0.05)
        if self.port is None:
            raise SystemExit(f"{name} did not start")

    def rss_mb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Client:
    """One keep-alive connection; reconnects after an error."""

    def __init__(self, port):
        self.port = port
        self.conn = None

    def request(self, method, path, body=None, headers=None):
        for _ in range(2):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                self.conn.request(method, path, body=body, headers=headers or {})
                r = self.conn.getresponse()
                return r.status, r.read()
            except (OSError, http.client.HTTPException):
                self.conn = None
        return 599, b""


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return (time.perf_counter() - start) * 1000, out


def median_ms(fn, n):
    return statistics.median(timed(fn)[0] for _ in range(n))


def put_and_propagate(a, b, auth, offering, price, cap_s=5.0):
    """PUT through `a`; returns (round trip ms, ms from the PUT's start until `b` serves it)."""
    body = json.dumps({"usd_per_hour": price, "source": "scale-bench"})
    start = time.perf_counter()
    status, _ = a.request("PUT", f"/v1/offerings/{offering}/price", body, auth)
    rtt = (time.perf_counter() - start) * 1000
    if status != 200:
        return rtt, float("nan"), status
    while time.perf_counter() - start < cap_s:
        s, got = b.request("GET", f"/v1/offerings/{offering}")
        if s == 200 and abs(json.loads(got)["usd_per_hour"] - price) < 1e-9:
            return rtt, (time.perf_counter() - start) * 1000, status
    return rtt, float("inf"), status


def load(threads, seconds, work):
    """Runs work(i) in `threads` threads for `seconds`; returns [(latency ms, status)]."""
    results, lock = [], threading.Lock()
    stop_at = time.perf_counter() + seconds

    def loop(i):
        mine = []
        n = 0
        while time.perf_counter() < stop_at:
            ms, status = timed(lambda: work(i, n))
            mine.append((ms, status))
            n += 1
        with lock:
            results.extend(mine)

    ts = [threading.Thread(target=loop, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return results


def p99(values):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * 0.99))] if values else float("nan")


def bench_size(args, size, url, workdir, largest):
    fig = {"size": size}
    catalog_dir, ids = make_catalog(size, workdir)
    db = f"scale_{size}"
    psql(url, f"CREATE DATABASE {db}")
    dburl = url.rsplit("/", 1)[0] + "/" + db
    env = dict(os.environ, DATABASE_URL=dburl)
    subprocess.run([args.bin, "migrate"], env=env, check=True, capture_output=True, timeout=120)
    fig["seed_s"], seeded = timed(lambda: subprocess.run(
        [args.seed_bin or args.bin, "seed", "--catalog-dir", catalog_dir], env=env,
        capture_output=True, text=True,
        timeout=600))
    fig["seed_s"] /= 1000
    if seeded.returncode != 0:
        raise SystemExit(f"seed failed: {seeded.stderr[-2000:]}")
    fig["seeded_prices"] = int(psql(dburl, "SELECT count(*) FROM prices"))
    key = subprocess.run([args.bin, "apikey", "create", "--scope", "admin", "--name", "bench"],
                         env=env, capture_output=True, text=True, timeout=60).stdout.strip()
    auth = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}
    # Replicas read the catalog from the database only (the embedded seed gives the plan
    # reference data, as in production).
    ra = Replica(args.bin, dburl, workdir, f"a-{size}")
    rb = Replica(args.bin, dburl, workdir, f"b-{size}")
    try:
        fig["rss_start_mb"] = (ra.rss_mb(), rb.rss_mb())
        a, b = Client(ra.port), Client(rb.port)
        trips, seen = [], []
        for n in range(args.puts):
            rtt, lag, status = put_and_propagate(a, b, auth, ids[(n * 7919) % size], 50 + n + 0.123)
            trips.append(rtt)
            seen.append(lag)
        fig["put_ms"], fig["seen_ms"] = statistics.median(trips), statistics.median(seen)
        one = ids[size // 2]
        fig["read_ms"] = median_ms(lambda: b.request("GET", f"/v1/offerings/{one}"), 20)
        fig["as_of_ms"] = median_ms(lambda: b.request("GET", f"/v1/offerings/{one}?as_of={AS_OF}"), 20)
        plan = json.dumps(PLAN)
        hdr = {"Content-Type": "application/json"}
        at = f"/v1/plans/training?as_of={AS_OF}"
        fig["plan_status"] = (b.request("POST", "/v1/plans/training", plan, hdr)[0],
                              b.request("POST", at, plan, hdr)[0])
        fig["plan_ms"] = median_ms(lambda: b.request("POST", "/v1/plans/training", plan, hdr), 5)
        fig["plan_as_of_ms"] = median_ms(lambda: b.request("POST", at, plan, hdr), 5)
        if largest:
            writers = [Client(ra.port) for _ in range(args.writers)]

            def write(i, n):
                body = json.dumps({"usd_per_hour": 10 + i + n * 0.001, "source": "scale-bench"})
                return writers[i].request("PUT", f"/v1/offerings/{ids[(i * 1009 + n * 17) % size]}/price",
                                          body, auth)[0]

            res = load(args.writers, args.seconds, write)
            fig["writes_per_s"] = len(res) / args.seconds
            fig["writes"] = len(res)
            fig["writes_not_2xx"] = sum(1 for _, s in res if not 200 <= s < 300)
            fig["write_statuses"] = sorted({s for _, s in res})
            fig["rss_b_before_readers_mb"] = rb.rss_mb()
            readers = [Client(rb.port) for _ in range(args.readers)]

            def read(i, n):
                one = ids[(i * 131 + n * 7) % size]
                return readers[i].request("GET", f"/v1/offerings/{one}?as_of={AS_OF}")[0]

            res = load(args.readers, args.seconds, read)
            fig["as_of_req_s"] = len(res) / args.seconds
            fig["as_of_p99_ms"] = p99([ms for ms, _ in res])
            fig["as_of_not_2xx"] = sum(1 for _, s in res if not 200 <= s < 300)
        fig["rss_end_mb"] = (ra.rss_mb(), rb.rss_mb())
    finally:
        ra.stop()
        rb.stop()
    return fig


def aws_price_file(path, count, day, price_of):
    """An AWS Price List offer file (only the members the importer reads) with `count` GPU
    offerings: the mapped instance types in synthetic regions, on demand, published on `day`."""
    with open(os.path.join(ROOT, "schema", "seed", "mappings", "aws-instance-types.csv")) as f:
        types = [r["instance_type"] for r in csv.DictReader(f)]
    products, terms = {}, {}
    for n in range(count):
        sku = f"SCALE{n:08d}"
        itype, region = types[n % len(types)], f"syn-{n // len(types):04d}"
        products[sku] = {"sku": sku, "productFamily": "Compute Instance", "attributes": {
            "servicecode": "AmazonEC2", "location": region, "locationType": "AWS Region",
            "instanceType": itype, "tenancy": "Shared", "operatingSystem": "Linux",
            "licenseModel": "No License required", "usagetype": f"BoxUsage:{itype}",
            "operation": "RunInstances", "capacitystatus": "Used", "preInstalledSw": "NA",
            "marketoption": "OnDemand", "regionCode": region, "vcpu": "96", "memory": "384 GiB"}}
        code, rate = "JRTCKXETXF", "6YS6EN2CT7"
        terms[sku] = {f"{sku}.{code}": {
            "offerTermCode": code, "sku": sku, "effectiveDate": day + "T00:00:00Z",
            "priceDimensions": {f"{sku}.{code}.{rate}": {
                "rateCode": f"{sku}.{code}.{rate}", "description": "per On Demand Linux Hour",
                "beginRange": "0", "endRange": "Inf", "unit": "Hrs",
                "pricePerUnit": {"USD": f"{price_of(n):.4f}"}, "appliesTo": []}},
            "termAttributes": {}}}
    with open(path, "w") as f:
        json.dump({"formatVersion": "v1.0", "offerCode": "AmazonEC2", "version": day,
                   "publicationDate": day + "T00:00:00Z", "products": products,
                   "terms": {"OnDemand": terms}}, f)


def bench_import(args, url, workdir):
    """Seconds to import --import-prices new prices for existing offerings into the database."""
    db = "scale_import"
    psql(url, f"CREATE DATABASE {db}")
    env = dict(os.environ, DATABASE_URL=url.rsplit("/", 1)[0] + "/" + db)
    subprocess.run([args.bin, "migrate"], env=env, check=True, capture_output=True, timeout=120)
    subprocess.run([args.bin, "seed"], env=env, check=True, capture_output=True, timeout=600)
    first, second = os.path.join(workdir, "aws-1.json"), os.path.join(workdir, "aws-2.json")
    aws_price_file(first, args.import_prices, "2026-11-01", lambda n: 10 + n % 97)
    aws_price_file(second, args.import_prices, "2026-11-15", lambda n: 9 + n % 89)
    fig = {"import_prices": args.import_prices}
    for name, path in (("import_create_s", first), ("import_prices_s", second)):
        try:
            ms, done = timed(lambda: subprocess.run(
                [args.bin, "import", "aws-price-list", path], env=env, capture_output=True,
                text=True, timeout=args.import_cap_s))
        except subprocess.TimeoutExpired:
            fig[name] = f"> {args.import_cap_s:.0f}"
            break
        if done.returncode != 0:
            raise SystemExit(f"import failed: {done.stderr[-2000:]}")
        fig[name] = round(ms / 1000, 2)
        fig[name.replace("_s", "_summary")] = {k: v for k, v in json.loads(done.stdout).items()
                                               if k in ("offerings_added", "prices_added",
                                                        "prices_changed", "skipped")}
    return fig


def report(figs):
    def row(name, key, fmt="{:.1f}"):
        cells = []
        for f in figs:
            v = f.get(key)
            cells.append("-" if v is None else fmt.format(v) if not isinstance(v, tuple) else
                         " / ".join(fmt.format(x) for x in v))
        print(f"| {name} | " + " | ".join(cells) + " |")

    print("\n| | " + " | ".join(str(f["size"]) for f in figs) + " |")
    print("|---|" + "---|" * len(figs))
    row("seeding (s; prices)", "seed_s", "{:.2f}")
    row("prices seeded", "seeded_prices", "{}")
    row("PUT price round trip (ms, median)", "put_ms")
    row("another replica serves it (ms after the PUT started)", "seen_ms")
    row("one offering, current (ms)", "read_ms", "{:.2f}")
    row("one offering `?as_of=` (ms)", "as_of_ms", "{:.2f}")
    row("training plan, current (ms)", "plan_ms")
    row("training plan with `as_of` (ms)", "plan_as_of_ms")
    row("replica RSS at start, A / B (MB)", "rss_start_mb", "{:.0f}")
    row("replica RSS at the end, A / B (MB)", "rss_end_mb", "{:.0f}")
    big = figs[-1]
    if "writes" in big:
        print(f"\nAt {big['size']}: {len(big.get('write_statuses', []))} statuses {big['write_statuses']}")
        print(f"  writers: {big['writes_per_s']:.1f} writes/s, {big['writes_not_2xx']} of "
              f"{big['writes']} not 2xx")
        print(f"  as_of readers: {big['as_of_req_s']:.1f} req/s, p99 {big['as_of_p99_ms']:.1f} ms, "
              f"{big['as_of_not_2xx']} not 2xx, RSS of the read replica "
              f"{big['rss_b_before_readers_mb']:.0f} -> {big['rss_end_mb'][1]:.0f} MB")
        print(f"  seeding {big['seeded_prices']} prices: {big['seed_s']:.2f} s")
        print(f"  one offering as_of / current: {big['as_of_ms'] / big['read_ms']:.1f}x; "
              f"plan as_of / current: {big['plan_as_of_ms'] / big['plan_ms']:.2f}x")
    if len(figs) > 1:
        print(f"  PUT round trip {figs[-1]['size']} / {figs[0]['size']}: "
              f"{figs[-1]['put_ms'] / figs[0]['put_ms']:.1f}x")
    print("\nraw:", json.dumps(figs))


def main():
    args = parse_args()
    args.bin = os.path.abspath(args.bin)
    if "DATABASE_URL" not in os.environ:
        os.execv("/bin/bash", ["/bin/bash", WITH_PG, sys.executable, os.path.abspath(__file__),
                               *sys.argv[1:]])
    url = os.environ["DATABASE_URL"]
    sizes = [int(s) for s in args.sizes.split(",") if s]  # "": the import phase only
    workdir = tempfile.mkdtemp(prefix="gpucost-scale-pg-")
    figs = []
    try:
        for size in sizes:
            t0 = time.time()
            figs.append(bench_size(args, size, url, workdir, size == max(sizes)))
            print(f"size {size}: {time.time() - t0:.0f} s; {json.dumps(figs[-1])}", flush=True)
        if args.import_prices:
            imported = bench_import(args, url, workdir)
            print(f"import: {json.dumps(imported)}", flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if figs:
        report(figs)


if __name__ == "__main__":
    main()
