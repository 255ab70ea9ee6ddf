"""End to end: `gpucost sync` for each provider against the fixture server (fixture_server.py,
recorded real-format answers): rate limits and 5xx are retried and the prices land in the
catalog directory; a body cut short, a changed schema, a provider that stays down or a missing
API key exits 2 and changes nothing; one provider failing leaves the others refreshed.

    python3 tests/sync/sync_e2e_test.py BINARY FIXTURE_DIR
"""
import hashlib
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_server  # noqa: E402

BINARY, FIXTURES = sys.argv[1], sys.argv[2]
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)


server = fixture_server.start(FIXTURES)
BASE = "http://127.0.0.1:%d" % server.server_port


def sync_env(behaviour, gcp_behaviour=None, **extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "GCP_API_KEY", "GCP_API_KEY_FILE")}
    env.update({
        "GPUCOST_SYNC_AWS_URL": "%s/%s/aws/" % (BASE, behaviour),
        "GPUCOST_SYNC_AZURE_URL": "%s/%s/azure" % (BASE, behaviour),
        "GPUCOST_SYNC_GCP_URL": "%s/%s/gcp/" % (BASE, gcp_behaviour or behaviour),
        "GCP_API_KEY": fixture_server.GCP_KEY,
        "GPUCOST_SYNC_RETRY_WAIT_MS": "10",
    })
    env.update(extra)
    return env


def sync(env, out, *providers_and_flags, first=False):
    base = [] if first else ["--catalog-dir", out]
    return subprocess.run([BINARY, "sync", *providers_and_flags, *base, "--out", out],
                          capture_output=True, text=True, env=env, timeout=120)


def snapshot(directory):
    digest = {}
    for root, _, names in os.walk(directory):
        for name in names:
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

    # 2. Anything short of every page whole and in the documented shape changes nothing.
    before = snapshot(out)
    cases = [(b, p) for b in ("truncated", "changed", "down") for p in ("aws", "azure", "gcp")]
    for behaviour, provider in cases:
        region = ["--region", "us-east-1"] if provider == "aws" else []
        done = sync(sync_env(behaviour), out, provider, *region)
        check(done.returncode == 2, "%s %s exits 2 (got %d)" % (behaviour, provider,
                                                               done.returncode))
        check("left as they were" in done.stderr, "%s %s says so: %s" % (behaviour, provider,
                                                                         done.stderr))
        check(snapshot(out) == before, "%s %s changed the catalog" % (behaviour, provider))
    env = sync_env("ok")
    del env["GCP_API_KEY"]
    done = sync(env, out, "gcp")
    check(done.returncode == 2 and "GCP_API_KEY" in done.stderr, "gcp without a key: %s"
          % done.stderr)
    check(snapshot(out) == before, "gcp without a key changed the catalog")

    # 3. One provider down leaves the others refreshed.
    done = sync(sync_env("ok", gcp_behaviour="down"), out, "azure", "gcp", "--as-of",
                "2026-12-01")
    check(done.returncode == 2, "azure ok + gcp down exits 2")
    check("gcp:" in done.stderr and "azure:" not in done.stderr, "names gcp only: %s"
          % done.stderr)
    check("azure-standard_nd96isr_mi300x_v5-eastus-on-demand,48,2026-12-01" in prices(out),
          "azure refreshed while gcp was down")

server.shutdown()
if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("sync e2e: all checks passed")
