#!/usr/bin/env python3
"""Probes that tell the truth and nothing more, and a port that belongs to one server.

Run through tests/pg/with_pg.sh (ctest does): it provides DATABASE_URL.

  python3 tests/pg/probes_pg_test.py path/to/gpucost

Checks, against the real binary and a real PostgreSQL 15:
  * a database that is migrated but never seeded: /healthz answers (the process is alive) and
    /readyz is 503 `catalog_empty`, saying in words what to do; once seeded, ready;
  * a database whose schema moves ahead of the binary (a migration it does not know): /readyz
    503 `schema_mismatch` within a refresh, ready again once it is back;
  * PostgreSQL stopped: /healthz says the database is unreachable (`connected: false`,
    status `degraded`) without libpq's text, the host or the port; the log has the detail;
  * a second `gpucost serve` on the port the first listens on exits non-zero at once, with one
    line naming the port, and the first keeps every request (no SO_REUSEPORT split).
Prints `N passed, M failed`.
"""
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "contract"))
import serve  # noqa: E402

GPUCOST = sys.argv[1]
URL = os.environ["DATABASE_URL"]
PG_PORT = os.environ["GPUCOST_TEST_PG_PORT"]
HERE = os.path.dirname(os.path.abspath(__file__))
PSQL = "/usr/lib/postgresql/15/bin/psql"

passed = 0
failed = 0


def check(condition, message):
    global passed, failed
    if condition:
        passed += 1
        print("ok -", message, flush=True)
    else:
        failed += 1
        print("not ok -", message, flush=True)


def run(*args, env_url=True):
    env = dict(os.environ)
    if not env_url:
        env.pop("DATABASE_URL", None)
    return subprocess.run([GPUCOST, *args], capture_output=True, text=True, timeout=60, env=env)


def psql(sql):
    p = subprocess.run([PSQL, URL, "-tAc", sql], capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise SystemExit(f"psql failed: {p.stderr}")
    return p.stdout.strip()


def get(port, path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path)
    r = conn.getresponse()
    body = r.read().decode()
    conn.close()
    try:
        return r.status, json.loads(body), body
    except ValueError:
        return r.status, None, body


def wait_until(predicate, limit_s):
    deadline = time.time() + limit_s
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def main():
    check(run("migrate").returncode == 0, "gpucost migrate applies the schema")
    log = tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False)
    proc, port = serve.start(GPUCOST, ["--database-url", URL, "--snapshot-refresh-ms", "200"],
                             embedded=False, timeout_s=30, stdout=subprocess.DEVNULL, log=log)
    if port is None:
        raise SystemExit("gpucost did not start: " + open(log.name).read())
    try:
        status, body, _ = get(port, "/healthz")
        check(status == 200 and body["catalog"]["offering_count"] == 0,
              f"unseeded database: /healthz answers 200 with 0 offerings ({status})")
        status, body, text = get(port, "/readyz")
        check(status == 503 and body and body.get("code") == "catalog_empty"
              and "seed" in body.get("detail", ""),
              f"unseeded database: /readyz is 503 catalog_empty and says to seed ({status} {text[:160]})")

        check(run("seed").returncode == 0, "gpucost seed fills the catalog")
        check(wait_until(lambda: get(port, "/readyz")[0] == 200, 10),
              "once seeded, /readyz is 200 within 10 s")

        psql("INSERT INTO schema_migrations (version, name, checksum) VALUES (999, 'future', 'x')")
        check(wait_until(lambda: (get(port, "/readyz")[1] or {}).get("code") == "schema_mismatch", 5),
              "a schema ahead of the binary: /readyz is 503 schema_mismatch within 5 s")
        status, body, _ = get(port, "/readyz")
        check(status == 503 and "999" in body.get("detail", ""),
              f"the schema_mismatch detail names the migration ({body.get('detail', '')[:120]})")
        psql("DELETE FROM schema_migrations WHERE version = 999")
        check(wait_until(lambda: get(port, "/readyz")[0] == 200, 5),
              "the schema back at the binary's version: ready again within 5 s")

        subprocess.run(["bash", os.path.join(HERE, "with_pg.sh"), "--ctl", "stop"], check=True)
        try:
            def unreachable():
                s, b, _ = get(port, "/healthz")
                return s == 200 and b["database"]["connected"] is False

            check(wait_until(unreachable, 10),
                  "PostgreSQL stopped: /healthz says connected false within 10 s")
            status, body, text = get(port, "/healthz")
            check(body["status"] == "degraded", f"/healthz status is degraded ({body['status']})")
            leaks = [w for w in ("127.0.0.1", PG_PORT, "connection to server", "last_error",
                                 "refused") if w in text]
            check(not leaks, f"/healthz shows no host, port or driver text ({leaks})")
            log.flush()
            logged = open(log.name).read()
            check("database unreachable" in logged, "the log has the database error's detail")
        finally:
            subprocess.run(["bash", os.path.join(HERE, "with_pg.sh"), "--ctl", "start"], check=True)

        # A second server on the same port: refused at once, the first keeps its traffic.
        started = time.time()
        second = run("--port", str(port), "--access-log", "false", env_url=False)
        lines = [line for line in second.stderr.splitlines() if line.strip()]
        check(second.returncode != 0 and time.time() - started < 20,
              f"a second gpucost on port {port} exits non-zero ({second.returncode})")
        check(any(f":{port}" in line and "already in use" in line for line in lines),
              f"its one error line names the port ({lines[-1][:200] if lines else ''})")
        answered = sum(1 for _ in range(20) if get(port, "/readyz")[0] == 200)
        check(answered == 20, f"the first server still answers every request ({answered}/20)")
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        os.unlink(log.name)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
