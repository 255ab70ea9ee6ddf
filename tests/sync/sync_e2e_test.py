"""End to end: `gpucost sync` for each provider against the fixture server (fixture_server.py,
recorded real-format answers): rate limits and 5xx are retried and the prices land in the
catalog directory; a body cut short, a changed schema or a provider that stays down exits 3 and
changes nothing of that provider; a provider without its API key is skipped (exit 2 when it is
the only one); one provider down and another without its key leave the others refreshed.

    python3 tests/sync/sync_e2e_test.py BINARY FIXTURE_DIR
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "contract"))
import fixture_server  # noqa: E402
import serve  # noqa: E402

BINARY, FIXTURES = sys.argv[1], sys.argv[2]
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)


server = fixture_server.start(FIXTURES)
BASE = "http://127.0.0.1:%d" % server.server_port


def sync_env(behaviour, gcp_behaviour=None, providers=None, **extra):
    """The environment of a sync against the fixture server in `behaviour`; gcp_behaviour and
    providers ({provider: behaviour}) set other behaviours for some; extra: more variables."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "GCP_API_KEY", "GCP_API_KEY_FILE", "LAMBDA_API_KEY",
                        "LAMBDA_API_KEY_FILE")}
    env.update(fixture_server.env_for(BASE, behaviour, gcp=gcp_behaviour or behaviour,
                                      **(providers or {})))
    env["GPUCOST_SYNC_RETRY_WAIT_MS"] = "10"
    env.update(extra)
    return env


def sync(env, out, *providers_and_flags, first=False):
    base = [] if first else ["--catalog-dir", out]
    return subprocess.run([BINARY, "sync", *providers_and_flags, *base, "--out", out],
                          capture_output=True, text=True, env=env, timeout=120)


def snapshot(directory):
    """The catalog files' digests (sync-runs.jsonl, the run log, grows with every run)."""
    digest = {}
    for root, _, names in os.walk(directory):
        for name in names:
            if name == "sync-runs.jsonl":
                continue
            with open(os.path.join(root, name), "rb") as f:
                digest[os.path.relpath(os.path.join(root, name), directory)] = \
                    hashlib.sha256(f.read()).hexdigest()
    return digest


def prices(out):
    path = os.path.join(out, "prices.csv")
    if not os.path.exists(path):
        return ""
    with open(path, encoding="utf-8") as f:
        return f.read()


with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "cat")
    # 1. Each provider through 429 (Retry-After) then 503 before the recorded answer.
    done = sync(sync_env("flaky"), out, "aws", "--region", "us-east-1", first=True)
    check(done.returncode == 0, "aws sync through 429 and 503: %s" % done.stderr)
    check("aws-p5.48xlarge-us-east-1-on-demand,55.04," in prices(out), "aws p5 at 55.04")
    done = sync(sync_env("flaky"), out, "azure", "--region", "aws:us-east-1,azure:eastus")
    check(done.returncode == 0, "azure sync over two pages: %s" % done.stderr)
    check("azure-standard_nd96isr_mi300x_v5-eastus-on-demand,48," in prices(out),
          "azure MI300X from page 1 at 48")
    key_file = os.path.join(tmp, "gcp-api-key")  # as a mounted Secret holds it
    with open(key_file, "w", encoding="utf-8") as f:
        f.write(fixture_server.GCP_KEY + "\n")
    env = sync_env("flaky", GCP_API_KEY_FILE=key_file)
    del env["GCP_API_KEY"]
    done = sync(env, out, "gcp")
    check(done.returncode == 0, "gcp sync with the key from a file: %s" % done.stderr)
    check("gcp-a2-highgpu-1g-us-central1-on-demand,3.6734," in prices(out),
          "gcp a2 composed from SKUs on both pages")
    # The neoclouds' own answers: Lambda (API key), RunPod (GraphQL POST), Vast.ai (the
    # cheapest of a marketplace's offers), CoreWeave (the pricing page's GPU table).
    done = sync(sync_env("flaky"), out, "lambda", "runpod", "vastai", "coreweave")
    check(done.returncode == 0, "neocloud sync through 429 and 503: %s" % done.stderr)
    got = prices(out)
    for row in ("lambda-gpu_8x_h100_sxm5-us-on-demand,23.92,",
                "runpod-h100-sxm-secure-global-on-demand,2.99,",
                "runpod-h100-sxm-secure-global-spot,1.75,",
                "runpod-mi300x-secure-global-on-demand,2.49,",
                "vastai-1x-h100_sxm-texas-us-on-demand,1.87,",
                "vastai-1x-h100_sxm-texas-us-spot,1.05,",
                "vastai-8x-h100_sxm-vietnam-on-demand,15.2,",
                "vastai-1x-rtx_4090-quebec-ca-on-demand,0.35,",  # the search's second page
                "coreweave-nvidia-hgx-h100-8x-north-america-on-demand,49.24,",
                "coreweave-nvidia-gb200-nvl72-4x-north-america-on-demand,42,"):
        check(row in got, "neocloud price row %s" % row)

    # 2. Anything short of every page whole and in the documented shape changes nothing.
    before = snapshot(out)
    # One run per behaviour, every provider in it (a process start is most of a run's time):
    # each is named as left as it was, and the catalog directory is byte for byte the same.
    everyone = ("aws", "azure", "gcp", "lambda", "runpod", "vastai", "coreweave")
    for behaviour, providers in (("truncated", everyone), ("changed", everyone),
                                 ("down", everyone), ("nolength", ("aws", "lambda", "coreweave"))):
        done = sync(sync_env(behaviour), out, *providers, "--region", "aws:us-east-1")
        check(done.returncode == 3, "%s exits 3 (got %d)" % (behaviour, done.returncode))
        for provider in providers:
            check("gpucost sync: %s: " % provider in done.stderr and
                  "left as they were" in done.stderr,
                  "%s %s is named as left as it was: %s" % (behaviour, provider, done.stderr))
        check(snapshot(out) == before, "%s changed the catalog" % behaviour)
    env = sync_env("ok")
    del env["GCP_API_KEY"]
    done = sync(env, out, "gcp")
    check(done.returncode == 2 and "GCP_API_KEY" in done.stderr, "gcp without a key: %s"
          % done.stderr)
    check(snapshot(out) == before, "gcp without a key changed the catalog")
    env = sync_env("ok")
    del env["LAMBDA_API_KEY"]
    done = sync(env, out, "lambda")
    check(done.returncode == 2 and "LAMBDA_API_KEY" in done.stderr, "lambda without a key: %s"
          % done.stderr)
    check(snapshot(out) == before, "lambda without a key changed the catalog")

    # 3. One provider down leaves the others refreshed.
    done = sync(sync_env("ok", gcp_behaviour="down"), out, "azure", "gcp", "--as-of",
                "2026-12-01")
    check(done.returncode == 3, "azure ok + gcp down exits 3")
    check("gcp:" in done.stderr and "azure:" not in done.stderr, "names gcp only: %s"
          % done.stderr)
    check("azure-standard_nd96isr_mi300x_v5-eastus-on-demand,48,2026-12-01" in prices(out),
          "azure refreshed while gcp was down")

    # 4. Every run recorded, newest first: what it read, how it ended, what changed by how much.
    done = subprocess.run([BINARY, "sync", "--history", "40", "--out", out], capture_output=True,
                          text=True, timeout=60)
    check(done.returncode == 0, "sync --history: %s" % done.stderr)
    runs = json.loads(done.stdout or "[]")
    # flaky aws, azure, gcp, 4 neoclouds; 3 x 7 + 3 failures; gcp and lambda skipped; azure + gcp
    check(len(runs) == 35, "35 runs recorded (got %d)" % len(runs))
    check([r["id"] for r in runs] == sorted((r["id"] for r in runs), reverse=True),
          "newest first")
    by = {(r["provider"], r["outcome"]): r for r in reversed(runs)}  # each one's first run
    runpod = by.get(("runpod", "imported"), {})
    check(runpod.get("sources") == ["%s/flaky/runpod/graphql" % BASE], "runpod's URL recorded")
    check(runpod.get("offerings_added") == 3, "runpod: 3 offerings added: %s" % runpod)
    change = [c for c in runpod.get("price_changes", [])
              if c["offering_id"] == "runpod-h100-sxm-secure-global-on-demand"]
    check(change == [{"offering_id": "runpod-h100-sxm-secure-global-on-demand",
                      "old_usd_per_hour": 3.99, "new_usd_per_hour": 2.99,
                      "change_percent": -25.06}], "runpod H100 3.99 -> 2.99 recorded: %s" % change)
    check(runpod.get("prices_changed") == len(runpod.get("price_changes", [])),
          "every changed price listed")
    cut = by.get(("coreweave", "failed"), {})
    check("cut short" in cut.get("message", "") or "Read" in cut.get("message", ""),
          "a failed run says why: %s" % cut)
    check(by.get(("lambda", "failed"), {}).get("offerings_added") == 0, "failed: nothing added")

    # 5. Each provider stands alone: RunPod down and Lambda without its key (an optional Secret
    # left empty) leave their rows byte for byte as they were, the others are applied, every
    # run is recorded with its outcome, and the exit status says some failed.
    def rows_of(providers):
        kept = {}
        for name in ("offerings.csv", "prices.csv"):
            with open(os.path.join(out, name), encoding="utf-8") as f:
                kept[name] = [line for line in f if line.startswith(providers)]
        return kept

    untouched = rows_of(("runpod-", "lambda-"))
    check(untouched["prices.csv"], "runpod and lambda rows to compare")
    env = sync_env("ok", providers={"runpod": "down"})
    del env["LAMBDA_API_KEY"]
    done = sync(env, out, "runpod", "lambda", "azure", "vastai", "coreweave", "--as-of",
                "2026-12-02")
    check(done.returncode == 3, "runpod down + lambda without a key exits 3 (got %d): %s"
          % (done.returncode, done.stderr))
    check("gpucost sync: lambda: skipped, no API key" in done.stderr and
          "LAMBDA_API_KEY" in done.stderr, "lambda named as skipped: %s" % done.stderr)
    check("gpucost sync: runpod: " in done.stderr, "runpod named as failed: %s" % done.stderr)
    check(done.stderr.rstrip().endswith(
        "gpucost sync: failed runpod; imported azure vastai coreweave; skipped lambda"),
        "the last line says how each ended: %s" % done.stderr)
    check(rows_of(("runpod-", "lambda-")) == untouched, "runpod's and lambda's rows unchanged")
    got = prices(out)
    for row in ("azure-standard_nd96isr_mi300x_v5-eastus-on-demand,48,2026-12-02",
                "vastai-1x-h100_sxm-texas-us-on-demand,1.87,2026-12-02",
                "coreweave-nvidia-hgx-h100-8x-north-america-on-demand,49.24,2026-12-02"):
        check(row in got, "applied beside a failed and a skipped provider: %s" % row)
    done = subprocess.run([BINARY, "sync", "--history", "5", "--out", out], capture_output=True,
                          text=True, timeout=60)
    runs = {r["provider"]: r for r in json.loads(done.stdout or "[]")}
    check(runs.get("lambda", {}).get("outcome") == "skipped" and
          "LAMBDA_API_KEY" in runs["lambda"].get("message", ""),
          "lambda recorded as skipped, with why: %s" % runs.get("lambda"))
    check(runs.get("runpod", {}).get("outcome") == "failed", "runpod recorded as failed")
    check(all(runs.get(p, {}).get("outcome") == "imported"
              for p in ("azure", "vastai", "coreweave")), "the others recorded as imported")
    # Every provider named without its key: nothing could run, a mistake in the deployment.
    env = sync_env("ok")
    del env["LAMBDA_API_KEY"]
    del env["GCP_API_KEY"]
    done = sync(env, out, "lambda", "gcp")
    check(done.returncode == 2, "only providers without keys exits 2 (got %d)" % done.returncode)

    # A write a crash stopped after its commit point (prices.csv still staged beside the old
    # one) is finished by the next run before it extends the catalog: never a mix of two writes.
    staged = prices(out).replace("runpod-mi300x-secure-global-on-demand,2.49,",
                                 "runpod-mi300x-secure-global-on-demand,2.39,")
    with open(os.path.join(out, ".prices.csv.import-tmp"), "w", encoding="utf-8") as f:
        f.write(staged)
    with open(os.path.join(out, ".import-commit"), "w", encoding="utf-8") as f:
        f.write("staged catalog files, to be renamed\n")
    done = sync(sync_env("ok"), out, "coreweave")
    check(done.returncode == 0 and "runpod-mi300x-secure-global-on-demand,2.39," in prices(out)
          and not os.path.exists(os.path.join(out, ".import-commit")),
          "an interrupted write finished before the next sync: %s" % done.stderr)

    # 6. A server over the synced catalog shows each provider's latest sync in /metrics (valid
    # for promtool) and in /readyz's detail: when its prices were last confirmed by a sync and
    # how its latest run ended.
    proc, port = serve.start(BINARY, ["--catalog-dir", out])
    check(port is not None, "gpucost serves the synced catalog")
    if port is not None:
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
                metrics = r.read().decode()
            with urllib.request.urlopen("http://127.0.0.1:%d/readyz" % port, timeout=10) as r:
                ready = json.loads(r.read())
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        samples = dict(line.rsplit(" ", 1) for line in metrics.splitlines()
                       if line.startswith("gpucost_sync_"))
        for provider, latest in (("azure", "imported"), ("runpod", "failed"),
                                 ("lambda", "skipped"), ("gcp", "skipped")):
            synced_at = float(samples.get(
                'gpucost_sync_last_success_timestamp_seconds{provider="%s"}' % provider, "0"))
            check(abs(synced_at - time.time()) < 86400,
                  "%s's last successful sync in /metrics: %s" % (provider, synced_at))
            for outcome in ("imported", "failed", "skipped"):
                key = 'gpucost_sync_last_run_outcome{provider="%s",outcome="%s"}' % (
                    provider, outcome)
                check(samples.get(key) == ("1" if outcome == latest else "0"),
                      "/metrics %s = %s" % (key, samples.get(key)))
        if shutil.which("promtool"):
            promtool = subprocess.run(["promtool", "check", "metrics"], input=metrics,
                                      capture_output=True, text=True, timeout=60)
            check(promtool.returncode == 0, "promtool check metrics: %s" % promtool.stdout)
        detail = {p["provider"]: p for p in ready.get("price_staleness", [])}
        last = detail.get("lambda", {}).get("last_sync") or {}
        check(last.get("outcome") == "skipped" and last.get("last_imported_at"),
              "/readyz: lambda's latest sync skipped, its last import dated: %s" % last)
        last = detail.get("runpod", {}).get("last_sync") or {}
        check(last.get("outcome") == "failed", "/readyz: runpod's latest sync failed: %s" % last)

server.shutdown()
if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("sync e2e: all checks passed")
