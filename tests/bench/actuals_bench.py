#!/usr/bin/env python3
"""Actual-spend import speed and memory at size (not a ctest).

Generates FOCUS exports of --rows rows (default 10000, 55000, 250000, 1000000) in the shape of the test
exports: the rows of tests/data/focus/ (AWS FOCUS 1.0, Azure FOCUS 1.2, GCP FOCUS 1.0: usage,
spot, credits, taxes, commitment purchases, an adjustment, untagged, non-GPU and unknown-GPU
rows) under the union of their headers, the accelerator usage rows three times as often as the
others, each row made distinct by its ResourceId. Then, for each size:

- `gpucost actuals import focus FILE --into STORE.csv` into an empty store, and again (every
  row already imported): wall time, rows read per second and the command's peak RSS (wait4);
- in database mode (a migrated database, an admin key, `gpucost serve` with
  `--max-actuals-body-bytes` 256 MiB, the largest it takes, so one body holds the largest
  export), `POST /v1/actuals` with the export as the body, and again: wall time, rows per
  second and the server's peak RSS (VmHWM) after the request. The server is started afresh
  for each size, so its VmHWM is that size's. An export over 256 MiB (1M rows: 390 MiB) is
  imported by the CLI only;
- in database mode, `gpucost actuals import focus FILE` with DATABASE_URL set (a fresh
  migrated and seeded database; the kept rows streamed into it, one transaction per file), and
  again: wall time, rows per second and the command's peak RSS (path `clidb`). `--cpus 0,1`
  pins every command (and the server) to those CPUs, as a 2-core machine would run them.

    tests/pg/with_pg.sh python3 tests/bench/actuals_bench.py [--bin BINARY] [--rows 10000 ...]
    # default binary: build/release/service/gpucost
"""
import argparse
import csv
import gzip
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = ["aws-focus-1.0.csv", "azure-focus-1.2.csv", "gcp-focus-1.0.csv.gz"]
KEPT_WEIGHT = 3  # accelerator usage rows per cycle, against 1 of every other row
MAX_BODY_BYTES = 256 * 1024 * 1024  # the largest --max-actuals-body-bytes takes

sys.path.insert(0, os.path.join(ROOT, "tests", "contract"))
import serve  # noqa: E402


def fixture_rows():
    """(union header, template rows as dicts with a `kept` flag)."""
    header, rows = [], []
    for name in FIXTURES:
        path = os.path.join(ROOT, "tests", "data", "focus", name)
        opener = gzip.open if name.endswith(".gz") else open
        with opener(path, "rt", newline="") as f:
            reader = csv.DictReader(f)
            for column in reader.fieldnames:
                if column not in header:
                    header.append(column)
            rows.extend(reader)
    if "ResourceId" not in header:
        header.append("ResourceId")
    return header, rows


def write_export(path, n_rows, header, templates, kept):
    cycle = []
    for i, row in enumerate(templates):
        cycle.extend([row] * (KEPT_WEIGHT if kept[i] else 1))
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header, restval="", lineterminator="\n")
        w.writeheader()
        for i in range(n_rows):
            row = dict(cycle[i % len(cycle)])
            row["ResourceId"] = f"{row.get('ResourceId') or 'res'}-{i}"
            w.writerow(row)


def kept_flags(binary, header, templates, workdir):
    """Which template rows the importer keeps: each imported alone."""
    flags = []
    for row in templates:
        path = os.path.join(workdir, "one.csv")
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=header, restval="", lineterminator="\n")
            w.writeheader()
            w.writerow(row)
        # Without DATABASE_URL: with it, the command would store the row in the database.
        env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
        out = subprocess.run([binary, "actuals", "import", "focus", path], capture_output=True,
                             text=True, check=True, env=env)
        flags.append(json.loads(out.stdout)["kept"] == 1)
    return flags


CPUS = []  # --cpus: every measured command pinned to these (taskset)


def pinned(argv):
    return ["taskset", "-c", ",".join(CPUS), *argv] if CPUS else list(argv)


def run_measured(argv, workdir, env=None):
    """(seconds, peak RSS MiB, stdout) of one command. The peak is GNU time's: the wait4 of a
    child of this script would count this script's own RSS, which a forked child starts with."""
    rss_file = os.path.join(workdir, "rss")
    start = time.perf_counter()
    proc = subprocess.run(pinned(["/usr/bin/time", "-f", "%M", "-o", rss_file, *argv]),
                          capture_output=True, env=env)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{argv} failed: {proc.stderr.decode()[-2000:]}")
    with open(rss_file) as f:
        return seconds, int(f.read().split()[-1]) / 1024, proc.stdout.decode()


class Server:
    def __init__(self, binary, url, logdir):
        self.log = open(os.path.join(logdir, "serve.log"), "w+")
        self.proc, self.port = serve.start(
            binary, ["--threads", "2", "--max-actuals-body-bytes", str(MAX_BODY_BYTES),
                     "--request-timeout-s", "300", "--database-url", url],
            embedded=False, timeout_s=120, stdout=subprocess.DEVNULL, log=self.log)
        if self.port is None:
            raise SystemExit(f"serve did not start: {open(self.log.name).read()[-2000:]}")

    def peak_rss_mb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def post(self, body, key):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=900)
        start = time.perf_counter()
        conn.request("POST", "/v1/actuals", body=body,
                     headers={"Authorization": "Bearer " + key, "Content-Type": "text/csv"})
        r = conn.getresponse()
        answer = r.read()
        seconds = time.perf_counter() - start
        if r.status != 201:
            raise SystemExit(f"POST /v1/actuals: {r.status} {answer[:2000]!r}")
        return seconds, json.loads(answer)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def psql(url, sql):
    return subprocess.run(["psql", url, "-Atqc", sql], capture_output=True, text=True,
                          check=True).stdout.strip()


def bench_cli(binary, path, workdir, n_rows):
    store = os.path.join(workdir, f"store-{n_rows}.csv")
    figures = {}
    for label in ("first", "again"):
        seconds, rss, out = run_measured(
            [binary, "actuals", "import", "focus", path, "--into", store], workdir)
        report = json.loads(out)
        figures[label] = (seconds, rss, report["added"], report["already_imported"])
    return report["rows_read"], report["kept"], figures


def fresh_database(binary, url, name):
    """(DATABASE_URL, its environment) of a new migrated and seeded database."""
    psql(url, f"DROP DATABASE IF EXISTS {name}")
    psql(url, f"CREATE DATABASE {name}")
    dburl = url.rsplit("/", 1)[0] + "/" + name
    env = dict(os.environ, DATABASE_URL=dburl)
    subprocess.run([binary, "migrate"], env=env, check=True, capture_output=True, timeout=120)
    subprocess.run([binary, "seed"], env=env, check=True, capture_output=True, timeout=600)
    return dburl, env


def bench_cli_db(binary, url, path, workdir, n_rows):
    """`gpucost actuals import focus FILE` into the database, then again."""
    dburl, env = fresh_database(binary, url, f"actuals_bench_cli_{n_rows}")
    figures = {}
    for label in ("first", "again"):
        seconds, rss, out = run_measured([binary, "actuals", "import", "focus", path], workdir,
                                         env=env)
        report = json.loads(out)
        figures[label] = (seconds, rss, report["added"], report["already_imported"])
    stored = int(psql(dburl, "SELECT count(*) FROM actual_charges"))
    return figures, stored


def bench_post(binary, url, path, workdir, n_rows):
    dburl, env = fresh_database(binary, url, f"actuals_bench_{n_rows}")
    key = subprocess.run([binary, "apikey", "create", "--scope", "admin", "--name", "bench"],
                         env=env, capture_output=True, text=True, check=True,
                         timeout=60).stdout.strip()
    with open(path, "rb") as f:
        body = f.read()
    server = Server(binary, dburl, workdir)
    try:
        figures = {}
        for label in ("first", "again"):
            seconds, answer = server.post(body, key)
            figures[label] = (seconds, server.peak_rss_mb(), answer["added"],
                              answer["already_imported"])
        stored = int(psql(dburl, "SELECT count(*) FROM actual_charges"))
    finally:
        server.stop()
    return figures, stored


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", default=os.path.join(ROOT, "build/release/service/gpucost"))
    p.add_argument("--rows", type=int, nargs="+", default=[10000, 55000, 250000, 1000000])
    p.add_argument("--no-post", action="store_true", help="the CLI only (no database)")
    p.add_argument("--paths", nargs="+", default=["cli", "post", "clidb"],
                   choices=["cli", "post", "clidb"], help="which imports to measure")
    p.add_argument("--cpus", default="", help="pin the commands to these CPUs (e.g. 0,1)")
    args = p.parse_args()
    CPUS.extend(c for c in args.cpus.split(",") if c)
    if args.no_post:
        args.paths = ["cli"]
    url = os.environ.get("DATABASE_URL")
    if not url and not args.no_post:
        raise SystemExit("run under tests/pg/with_pg.sh (DATABASE_URL), or pass --no-post")
    with tempfile.TemporaryDirectory() as workdir:
        header, templates = fixture_rows()
        kept = kept_flags(args.bin, header, templates, workdir)
        print(f"binary {args.bin}; {len(templates)} template rows, {sum(kept)} kept "
              f"(x{KEPT_WEIGHT})", flush=True)
        print("rows     MiB   path  run    seconds  rows/s    peak_RSS_MiB  added  already",
              flush=True)
        for n_rows in args.rows:
            path = os.path.join(workdir, f"export-{n_rows}.csv")
            write_export(path, n_rows, header, templates, kept)
            mib = os.path.getsize(path) / 2**20
            rows_read, n_kept, cli = bench_cli(args.bin, path, workdir, n_rows)
            results = [("cli", cli)] if "cli" in args.paths else []
            if "post" in args.paths and os.path.getsize(path) <= MAX_BODY_BYTES:
                post, stored = bench_post(args.bin, url, path, workdir, n_rows)
                results.append(("post", post))
                if stored != n_kept:
                    raise SystemExit(f"{stored} charges stored, {n_kept} kept")
            if "clidb" in args.paths:
                clidb, stored = bench_cli_db(args.bin, url, path, workdir, n_rows)
                results.append(("clidb", clidb))
                if stored != n_kept:
                    raise SystemExit(f"{stored} charges stored by the CLI, {n_kept} kept")
            for name, figures in results:
                for label, (seconds, rss, added, already) in figures.items():
                    print(f"{rows_read:<8d} {mib:5.1f} {name:5s} {label:6s} {seconds:8.2f} "
                          f"{rows_read / seconds:9.0f} {rss:10.1f} {added:8d} {already:8d}",
                          flush=True)
            os.remove(path)


if __name__ == "__main__":
    sys.exit(main())
