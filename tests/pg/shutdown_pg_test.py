#!/usr/bin/env python3
"""SIGTERM under load in PostgreSQL mode: requests are answered, the pool is closed, exit 0.

Run through tests/pg/with_pg.sh (ctest does): it provides DATABASE_URL and the server log in
GPUCOST_TEST_PG_DIR/server.log.

  python3 tests/pg/shutdown_pg_test.py path/to/gpucost

Checks (graceful shutdown in database mode):
  * while readers and writers (PUT price, through the pool) keep the server busy, SIGTERM makes
    it exit 0 within the grace period, and every request sent before the signal got an answer
    (no reset, no empty reply). Requests sent after it may meet a closed keep-alive connection
    (HTTP lets a server close an idle one; clients retry) and are only counted;
  * the log says "database closed" before "stopped";
  * PostgreSQL saw every gpucost session end with a clean Terminate message: it logged one
    disconnection per session and no "unexpected EOF on client connection" (logged at DEBUG1
    when a client goes away without closing its connection: a SIGKILLed gpucost leaves one),
    and no gpucost session is left.
Prints the figures (requests answered, sessions opened and closed, exit time).
"""
import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "contract"))
import serve  # noqa: E402

GPUCOST = sys.argv[1]
URL = os.environ["DATABASE_URL"]
PG_LOG = os.path.join(os.environ["GPUCOST_TEST_PG_DIR"], "server.log")
PSQL = "/usr/lib/postgresql/15/bin/psql"
POOL_SIZE = 4
GRACE_S = 10
LOAD_BEFORE_SIGTERM_S = 1.5
READERS = 3
WRITERS = 3

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message, flush=True)


def run(*args):
    p = subprocess.run([GPUCOST, *args], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise SystemExit(f"gpucost {' '.join(args)} failed: {p.stderr}")
    return p.stdout


def psql(sql):
    p = subprocess.run([PSQL, URL, "-tAc", sql], capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise SystemExit(f"psql failed: {p.stderr}")
    return p.stdout.strip()


def gpucost_sessions():
    return int(psql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'gpucost'"))


def start_server(log):
    proc, port = serve.start(
        GPUCOST, ["--threads", "4", "--db-pool-size", str(POOL_SIZE),
                  "--shutdown-grace-s", str(GRACE_S), "--database-url", URL],
        embedded=False, timeout_s=30, stdout=subprocess.DEVNULL, log=log, access_log=True)
    if port is None:
        raise SystemExit("gpucost did not start: " + open(log.name).read())
    return proc, port


class Load:
    """Clients on keep-alive connections until told to stop. A request whose bytes were sent
    before `signal_at` must be answered; later ones may find their connection closed."""

    def __init__(self, port, offerings, auth):
        self.port, self.offerings, self.auth = port, offerings, auth
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.answered = {}
        self.broken = []      # sent before the signal, not answered
        self.late_closed = 0  # sent after the signal on a connection the server had closed
        self.signal_at = float("inf")

    def client(self, index, writer):
        conn = None
        n = 0
        while not self.stop.is_set():
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                    conn.connect()
            except OSError:
                conn = None  # refused: the server no longer accepts (not a failure)
                time.sleep(0.02)
                continue
            n += 1
            sent_at = float("inf")
            try:
                if writer:
                    target = self.offerings[(index + n) % len(self.offerings)]
                    body = json.dumps({"usd_per_hour": 50 + index + (n % 100) / 100,
                                       "source": "shutdown-test"})
                    conn.request("PUT", f"/v1/offerings/{target}/price", body, self.auth)
                else:
                    conn.request("GET", "/v1/offerings?limit=20&sort=id")
                sent_at = time.monotonic()
                r = conn.getresponse()
                r.read()
                with self.lock:
                    self.answered[r.status] = self.answered.get(r.status, 0) + 1
                if r.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = None
            except (ConnectionResetError, http.client.RemoteDisconnected, BrokenPipeError) as e:
                with self.lock:
                    if sent_at < self.signal_at:
                        self.broken.append(f"{'PUT' if writer else 'GET'} #{n}: {type(e).__name__}")
                    else:
                        self.late_closed += 1
                conn = None
            except OSError:
                conn = None
        if conn is not None:
            conn.close()


def main():
    print(run("migrate").strip())
    print(run("seed").strip())
    key = run("apikey", "create", "--scope", "admin", "--name", "shutdown-test").strip()
    auth = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}
    # Disconnections (and clients that vanish without closing, at DEBUG1) named by application.
    psql("ALTER SYSTEM SET log_disconnections = on")
    psql("ALTER SYSTEM SET log_min_messages = debug1")
    psql("ALTER SYSTEM SET log_line_prefix = '%m [%p] app=%a '")
    psql("SELECT pg_reload_conf()")
    time.sleep(0.3)
    log_start = os.path.getsize(PG_LOG) if os.path.exists(PG_LOG) else 0

    log = tempfile.NamedTemporaryFile(prefix="gpucost-shutdown-pg-", suffix=".log", delete=False)
    proc, port = start_server(log)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/v1/offerings?limit=20&sort=id")
    offerings = [o["id"] for o in json.loads(conn.getresponse().read())["items"]]
    conn.close()

    load = Load(port, offerings, auth)
    threads = [threading.Thread(target=load.client, args=(i, i >= READERS))
               for i in range(READERS + WRITERS)]
    for t in threads:
        t.start()
    time.sleep(LOAD_BEFORE_SIGTERM_S)
    sessions_under_load = gpucost_sessions()
    sent_at = time.monotonic()
    load.signal_at = sent_at
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout=GRACE_S + 10)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = proc.wait()
        check(False, f"gpucost did not exit within {GRACE_S + 10} s of SIGTERM")
    exit_s = time.monotonic() - sent_at
    load.stop.set()
    for t in threads:
        t.join(timeout=15)

    check(code == 0, f"gpucost exited with {code} after SIGTERM under load")
    check(sessions_under_load >= 1, f"the pool held {sessions_under_load} sessions under load")
    check(sum(v for s, v in load.answered.items() if s < 300) > 50,
          f"the load got answers before the signal: {load.answered}")
    check(not [s for s in load.answered if s >= 500 and s != 503],
          f"no server error while shutting down: {load.answered}")
    check(not load.broken, f"every request sent before SIGTERM was answered: {load.broken[:5]}")

    lines = [json.loads(l) for l in open(log.name) if l.startswith("{")]
    msgs = [l.get("msg") for l in lines]
    check("database closed" in msgs and "stopped" in msgs and
          msgs.index("database closed") < msgs.index("stopped"),
          f"the log says 'database closed' before 'stopped': {msgs[-5:]}")

    left = None
    for _ in range(50):  # the backends end a moment after the Terminate message
        left = gpucost_sessions()
        if left == 0:
            break
        time.sleep(0.1)
    check(left == 0, f"{left} gpucost sessions left in PostgreSQL after exit")
    with open(PG_LOG, errors="replace") as f:
        f.seek(log_start)
        pg_lines = [l for l in f if "app=gpucost" in l]
    disconnections = [l for l in pg_lines if "disconnection:" in l]
    eofs = [l for l in pg_lines if "unexpected EOF on client connection" in l or
            "could not receive data from client" in l]
    check(len(disconnections) >= 1, "PostgreSQL logged the gpucost sessions' disconnections")
    check(not eofs, f"every gpucost session was closed, none just dropped: {eofs[:3]}")

    answered = sum(load.answered.values())
    print(f"shutdown under load: {answered} requests answered {load.answered}, "
          f"{load.late_closed} sent after the signal found their connection closed, "
          f"{sessions_under_load} sessions under load, {len(disconnections)} disconnections "
          f"logged, {len(eofs)} dropped, exit {code} {exit_s * 1000:.0f} ms after SIGTERM")
    if failures:
        print(f"{len(failures)} check(s) failed; gpucost log: {log.name}")
        sys.exit(1)
    os.unlink(log.name)
    print("ok")


if __name__ == "__main__":
    main()
