#!/usr/bin/env python3
"""A month's FOCUS export at its real size into the database (a benchmark, not a ctest).

Writes one export of --bytes (default 1 GiB) deterministically: the rows of tests/data/focus/
(AWS FOCUS 1.0, Azure FOCUS 1.2, GCP FOCUS 1.0) under the union of their headers, in the same
cycle as tests/bench/actuals_bench.py (accelerator usage three times as often as the other
rows), each row made distinct by its ResourceId, until the file reaches the size: the same
binary and size always write the same bytes. Then, in a fresh migrated and seeded database
(DATABASE_URL, e.g. from tests/pg/with_pg.sh), runs

    /usr/bin/time -v gpucost actuals import focus EXPORT      (DATABASE_URL set)

twice (first import, then the same file again: every row already imported) and prints GNU
time's wall clock and maximum resident set size for each, the import's report and the
charges the database then holds.

    tests/pg/with_pg.sh python3 tests/bench/focus_import_gb.py \
        --bin build/release/service/gpucost [--bytes 1073741824] [--cpus 0,1]
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import actuals_bench  # noqa: E402

GIB = 1024**3


def write_export_of_size(path, target_bytes, header, templates, kept):
    """Rows in actuals_bench's cycle until the file holds target_bytes; the rows written."""
    cycle = []
    for i, row in enumerate(templates):
        cycle.extend([row] * (actuals_bench.KEPT_WEIGHT if kept[i] else 1))
    rows = 0
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header, restval="", lineterminator="\n")
        w.writeheader()
        while f.tell() < target_bytes:
            row = dict(cycle[rows % len(cycle)])
            row["ResourceId"] = f"{row.get('ResourceId') or 'res'}-{rows}"
            w.writerow(row)
            rows += 1
    return rows


def time_v(argv, env):
    """(wall seconds, peak RSS MiB, stdout, GNU time's report) of one command."""
    proc = subprocess.run(actuals_bench.pinned(["/usr/bin/time", "-v", *argv]),
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"{argv} failed ({proc.returncode}): {proc.stderr[-3000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", proc.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    hours, minutes, seconds = wall.groups()
    wall_s = int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)
    return wall_s, int(rss.group(1)) / 1024, proc.stdout, proc.stderr


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", default=os.path.join(actuals_bench.ROOT,
                                                 "build/release/service/gpucost"))
    p.add_argument("--bytes", type=int, default=GIB, help="the export's size (default 1 GiB)")
    p.add_argument("--cpus", default="", help="pin the import to these CPUs (e.g. 0,1)")
    p.add_argument("--keep-export", default="", help="write the export here and keep it")
    args = p.parse_args()
    actuals_bench.CPUS.extend(c for c in args.cpus.split(",") if c)
    url = os.environ.get("DATABASE_URL")
    if not url:
        raise SystemExit("run under tests/pg/with_pg.sh (DATABASE_URL)")
    with tempfile.TemporaryDirectory() as workdir:
        header, templates = actuals_bench.fixture_rows()
        kept = actuals_bench.kept_flags(args.bin, header, templates, workdir)
        path = args.keep_export or os.path.join(workdir, "export.csv")
        start = time.perf_counter()
        rows = write_export_of_size(path, args.bytes, header, templates, kept)
        size = os.path.getsize(path)
        print(f"binary {args.bin}\nexport {size} bytes ({size / 2**20:.1f} MiB), {rows} rows, "
              f"written in {time.perf_counter() - start:.1f} s", flush=True)
        dburl, env = actuals_bench.fresh_database(args.bin, url, "focus_import_gb")
        for label in ("first", "again"):
            wall_s, rss_mib, out, report = time_v(
                [args.bin, "actuals", "import", "focus", path], env)
            answer = json.loads(out)
            print(f"{label}: {wall_s:.2f} s wall, peak RSS {rss_mib:.1f} MiB; rows_read "
                  f"{answer['rows_read']}, kept {answer['kept']}, added {answer['added']}, "
                  f"already_imported {answer['already_imported']}", flush=True)
            for line in report.splitlines():
                if re.search(r"Elapsed|Maximum resident|User time|System time|Percent of CPU",
                             line):
                    print("   " + line.strip(), flush=True)
        stored = actuals_bench.psql(dburl, "SELECT count(*) FROM actual_charges")
        print(f"charges in the database: {stored}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
