#!/usr/bin/python3
"""GET /metrics against the real binary: the exposition passes `promtool check metrics`
(Debian's prometheus package), and it counts what was sent: requests by route template and
status, latency histograms, in-flight requests, catalog size and age, database up (database
mode, when DATABASE_URL is set: run through tests/pg/with_pg.sh), rate-limit rejections.

usage: metrics_test.py GPUCOST_BINARY
Prints one line per check and ends with 'N passed, M failed'.
"""
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
import serve  # noqa: E402

BINARY = sys.argv[1]
DATABASE_URL = os.environ.get("DATABASE_URL")
results = []


def check(ok, what):
    results.append(bool(ok))
    print(("ok - " if ok else "not ok - ") + what, flush=True)


def get(base, path, headers=None, method="GET"):
    request = urllib.request.Request(base + path, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


def series(text):
    """{'name{labels}': value} for every sample line."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, value = line.rsplit(" ", 1)
            out[key] = float(value)
    return out


args = []
if DATABASE_URL:
    for command in ("migrate", "seed"):
        subprocess.run([BINARY, command, "--database-url", DATABASE_URL], check=True,
                       capture_output=True, timeout=60)
    args = ["--database-url", DATABASE_URL]
proc, port = serve.start(BINARY, args, embedded=not DATABASE_URL)
check(port is not None, "gpucost started")
if port is None:
    sys.exit(1)
base = f"http://127.0.0.1:{port}"
try:
    offering = "/v1/offerings/aws-p5.48xlarge-us-east-1-on-demand"
    for _ in range(3):
        get(base, offering)
    get(base, "/v1/offerings/nope")
    get(base, "/v2/nothing")
    get(base, "/v1/offerings?limit=0")
    status, headers, text = get(base, "/metrics")
    check(status == 200, "GET /metrics answers 200")
    check(headers.get("Content-Type") == "text/plain; version=0.0.4; charset=utf-8",
          f"content type is the exposition format ({headers.get('Content-Type')})")

    promtool = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                              text=True, timeout=30)
    check(promtool.returncode == 0 and not promtool.stdout.strip() and not promtool.stderr.strip(),
          f"promtool check metrics finds nothing ({(promtool.stdout + promtool.stderr).strip()!r})")

    s = series(text)
    route = 'route="/v1/offerings/{id}"'
    check(s.get(f'gpucost_http_requests_total{{{route},method="GET",status="200"}}') == 3,
          "three 200s counted under the route template")
    check(s.get(f'gpucost_http_requests_total{{{route},method="GET",status="404"}}') == 1,
          "an unknown id's 404 is counted under its route")
    check(s.get('gpucost_http_requests_total{route="unmatched",method="GET",status="404"}') == 1,
          "an unknown path is counted as unmatched")
    check(s.get('gpucost_http_requests_total{route="/v1/offerings",method="GET",status="422"}') == 1,
          "a 422 is counted under its route")
    check(s.get(f'gpucost_http_request_duration_seconds_count{{{route}}}') == 4,
          "the latency histogram counts every request of the route")
    check(s.get(f'gpucost_http_request_duration_seconds_bucket{{{route},le="+Inf"}}') == 4,
          "the +Inf bucket equals the count")
    buckets = [v for k, v in s.items()
               if k.startswith(f"gpucost_http_request_duration_seconds_bucket{{{route}")]
    check(buckets == sorted(buckets), "buckets are cumulative")
    check(s.get("gpucost_http_requests_in_flight") == 1, "in flight: the scrape itself")
    check(s.get("gpucost_catalog_offerings", 0) > 100, "catalog size is reported")
    check(s.get("gpucost_catalog_accelerators", 0) > 10, "accelerator count is reported")
    check(s.get("gpucost_catalog_snapshot_age_seconds", -1) >= 0, "snapshot age is reported")
    check("gpucost_rate_limited_requests_total" in s, "rate-limit rejections are reported")
    check(s.get('gpucost_price_stale_after_seconds{provider="aws"}') == 30 * 86400,
          "each provider's staleness bound is reported")
    check(s.get('gpucost_price_oldest_age_seconds{provider="aws"}', -1) >= 0
          and 'gpucost_prices_stale{provider="aws"}' in s,
          "each provider's oldest price age and stale prices are reported")
    if DATABASE_URL:
        check(s.get("gpucost_database_up") == 1, "the database is up")
    else:
        check("gpucost_database_up" not in s, "embedded mode reports no database")
    check(any(k.startswith("gpucost_build_info{version=") for k in s), "build info carries the version")
    again = series(get(base, "/metrics")[2])
    check(again.get('gpucost_http_requests_total{route="/metrics",method="GET",status="200"}') == 1,
          "the first scrape is counted by the second")
    check(re.search(r"[^\x20-\x7e\n]", text) is None, "the exposition is plain ASCII")
finally:
    proc.terminate()
    proc.wait(timeout=10)

print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
sys.exit(0 if all(results) else 1)
