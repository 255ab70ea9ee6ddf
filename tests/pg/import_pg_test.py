"""Database-mode import: `gpucost import` with DATABASE_URL and no --out records through the
API's write path. A replica started before the import serves the new offerings without a
restart (NOTIFY), the repriced offering's ETag version moves on and its history keeps the
seed's price beside the imported one; importing the same file again adds nothing. `gpucost sync`
into the database (against tests/sync/fixture_server.py) records each provider's run in
sync_runs, read back by `gpucost sync --history`.

    tests/pg/with_pg.sh python3 tests/pg/import_pg_test.py BINARY FIXTURE_DIR
"""
import json
import os
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "contract"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sync"))
import fixture_server  # noqa: E402
import serve  # noqa: E402

BINARY, FIXTURES = sys.argv[1], sys.argv[2]
AWS = os.path.join(FIXTURES, "aws-price-list-us-east-1.json")
# Not in the seed (which carries p6-b200, P5 on demand and P5's 3-year Reserved rate): the
# file's 1-year P5 commitment.
NEW = "aws-p5.48xlarge-us-east-1-commit-1y"
KNOWN = "aws-p5.48xlarge-us-east-1-on-demand"
failures = []


def check(condition, what):
    print(("ok: " if condition else "FAIL: ") + what)
    if not condition:
        failures.append(what)


def run(*args):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=120)


def get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
            return r.status, json.loads(r.read()), r.headers.get("ETag")
    except urllib.error.HTTPError as e:
        return e.code, None, None


def main():
    for step in ("migrate", "seed"):
        done = run(step)
        check(done.returncode == 0, f"gpucost {step}: {done.stderr.strip()[-300:]}")
    proc, port = serve.start(BINARY, ["--snapshot-refresh-ms", "200"], embedded=False)
    check(port is not None, "a replica serves the database")
    if port is None:
        return 1
    try:
        status, _, _ = get(port, f"/v1/offerings/{NEW}")
        check(status == 404, f"{NEW} is not in the seed")
        _, _, etag_before = get(port, f"/v1/offerings/{KNOWN}/history")

        done = run("import", "aws-price-list", AWS, "--region", "us-east-1")
        check(done.returncode == 0, f"import into the database exits 0: {done.stderr.strip()}")
        summary = json.loads(done.stdout) if done.returncode == 0 else {}
        check(summary.get("offerings_added") == 1 and summary.get("out") == "database",
              f"summary: {summary.get('offerings_added')} offerings added")

        deadline = time.time() + 10
        status = 404
        while time.time() < deadline and status != 200:
            status, body, _ = get(port, f"/v1/offerings/{NEW}")
            time.sleep(0.1)
        check(status == 200, "the running replica serves the imported offering (NOTIFY)")
        if status == 200:
            price = body.get("price") if isinstance(body.get("price"), dict) else body
            check(abs(price["usd_per_hour"] - 37.534247) < 1e-6, "at the file's price")

        status, history, etag_after = get(port, f"/v1/offerings/{KNOWN}/history")
        check(status == 200 and etag_after != etag_before,
              f"the repriced offering's ETag moved on ({etag_before} -> {etag_after})")
        prices = (history or {}).get("prices", [])
        sources = json.dumps(prices)
        check("AmazonEC2 offer file version 20261120180531" in sources and
              "datareceipts" in sources, "its history keeps the seed's and the imported price")

        again = run("import", "aws-price-list", AWS, "--region", "us-east-1")
        repeat = json.loads(again.stdout) if again.returncode == 0 else {}
        check(again.returncode == 0 and repeat.get("prices_added") == 0 and
              repeat.get("skipped", {}).get("already_recorded") == 6,
              f"importing the same file again adds nothing: {repeat.get('skipped')}")
        check_sync(port)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    print(f"{len(failures)} failure(s)" if failures else "database import: all checks passed")
    return 1 if failures else 0


def check_sync(port):
    """Two providers synced, one down and one without its API key: each run recorded in the
    database (the skipped one too), what it changed."""
    server = fixture_server.start(FIXTURES)
    env = dict(os.environ)
    env.update(fixture_server.env_for("http://127.0.0.1:%d" % server.server_port, "ok",
                                      vastai="down"))
    env["GPUCOST_SYNC_RETRY_WAIT_MS"] = "10"
    del env["LAMBDA_API_KEY"]
    done = subprocess.run([BINARY, "sync", "runpod", "vastai", "lambda", "coreweave"], env=env,
                          capture_output=True, text=True, timeout=120)
    server.shutdown()
    check(done.returncode == 3 and "vastai:" in done.stderr and "runpod:" not in done.stderr,
          f"sync into the database: runpod and coreweave imported, vastai down: {done.stderr}")
    history = run("sync", "--history", "5")
    runs = json.loads(history.stdout) if history.returncode == 0 else []
    check([(r["provider"], r["outcome"]) for r in runs] ==
          [("coreweave", "imported"), ("lambda", "skipped"), ("vastai", "failed"),
           ("runpod", "imported")],
          f"sync --history reads the four runs back, newest first: {history.stderr} {runs}")
    runpod = runs[3] if len(runs) == 4 else {}
    check(runpod.get("offerings_added") == 3 and {
        "offering_id": "runpod-h100-sxm-secure-global-on-demand", "old_usd_per_hour": 3.99,
        "new_usd_per_hour": 2.99, "change_percent": -25.06} in runpod.get("price_changes", []),
        f"runpod's run says what changed and by how much: {runpod}")
    deadline = time.time() + 10
    status = 404
    while time.time() < deadline and status != 200:
        status, _, _ = get(port, "/v1/offerings/runpod-mi300x-secure-global-on-demand")
        time.sleep(0.1)
    check(status == 200, "the replica serves the synced RunPod MI300X offering")
    # Each provider's latest sync, read from sync_runs, in /metrics and /readyz.
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        metrics = r.read().decode()
    for line in ('gpucost_sync_last_run_outcome{provider="lambda",outcome="skipped"} 1',
                 'gpucost_sync_last_run_outcome{provider="vastai",outcome="failed"} 1',
                 'gpucost_sync_last_run_outcome{provider="runpod",outcome="imported"} 1'):
        check(line in metrics.splitlines(), f"/metrics from the database: {line}")
    check('gpucost_sync_last_success_timestamp_seconds{provider="runpod"}' in metrics and
          'gpucost_sync_last_success_timestamp_seconds{provider="vastai"}' not in metrics,
          "/metrics: a last successful sync for runpod, none for vastai")
    status, ready, _ = get(port, "/readyz")
    detail = {p["provider"]: p.get("last_sync") for p in (ready or {}).get("price_staleness", [])}
    check((detail.get("vastai") or {}).get("outcome") == "failed" and
          (detail.get("vastai") or {}).get("last_imported_at", "x") is None,
          f"/readyz from the database: vastai failed, never imported: {detail.get('vastai')}")


if __name__ == "__main__":
    sys.exit(main())
