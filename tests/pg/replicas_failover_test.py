#!/usr/bin/env python3
"""Several gpucost replicas on one PostgreSQL, then PostgreSQL stopped under load and started.

Run through tests/pg/with_pg.sh (ctest does): it provides DATABASE_URL and `--ctl stop|start|kill`.

  python3 tests/pg/replicas_failover_test.py path/to/gpucost

Checks:
  * a price written through one replica is served by the others within a second;
  * while PostgreSQL is down: reads never fail, writes answer 503 with Retry-After,
    /healthz says "degraded" with the snapshot age, /readyz stays ready;
  * after it is back: replicas reconnect and converge, every write that got a 2xx is in the
    database exactly once, and no write is there twice (clients retry with the same
    Idempotency-Key until they get an answer).
Prints the figures (requests, failures, writes acknowledged vs found).
"""
import http.client
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import uuid

GPUCOST = sys.argv[1]
URL = os.environ["DATABASE_URL"]
CTL = os.environ["GPUCOST_TEST_PG_CTL"]
PSQL = "/usr/lib/postgresql/15/bin/psql"
REPLICAS = 3
LOAD_S = 9.0            # whole load phase
STOP_AT_S = 2.0         # PostgreSQL killed (immediate) at this point of the load
START_AT_S = 5.0        # and started again here
READERS = 4
WRITERS = 3
WRITE_GIVE_UP_S = 20.0  # a client stops retrying one write after this long

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message, flush=True)


def run(*args, stdin=None):
    p = subprocess.run([GPUCOST, *args], capture_output=True, text=True, input=stdin, timeout=60)
    if p.returncode != 0:
        raise SystemExit(f"gpucost {' '.join(args)} failed: {p.stderr}")
    return p.stdout


def psql(sql):
    p = subprocess.run([PSQL, URL, "-tAc", sql], capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise SystemExit(f"psql failed: {p.stderr}")
    return p.stdout.strip()


class Replica:
    def __init__(self, index):
        self.log = tempfile.NamedTemporaryFile(prefix=f"gpucost-replica{index}-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(
            [GPUCOST, "serve", "--port", "0", "--threads", "8", "--access-log", "false",
             "--snapshot-refresh-ms", "1000", "--max-snapshot-age-s", "60", "--database-url", URL],
            stdout=subprocess.DEVNULL, stderr=self.log)
        self.port = None
        deadline = time.time() + 30
        while time.time() < deadline and self.port is None:
            with open(self.log.name) as f:
                for line in f:
                    if '"msg":"listening"' in line:
                        self.port = json.loads(line)["port"]
            if self.proc.poll() is not None:
                raise SystemExit(f"replica {index} exited: {open(self.log.name).read()}")
            time.sleep(0.05)
        if self.port is None:
            raise SystemExit(f"replica {index} did not start")

    def request(self, method, path, body=None, headers=None, timeout=5):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            r = conn.getresponse()
            return r.status, dict(r.getheaders()), r.read()
        finally:
            conn.close()

    def get_json(self, path):
        status, _, body = self.request("GET", path)
        return status, json.loads(body)

    def stop(self):
        if self.proc.poll() is not None:
            print(f"replica on port {self.port} died; its log:\n" + open(self.log.name).read()[-4000:])
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        check(self.proc.returncode == 0, f"replica on port {self.port} exited with {self.proc.returncode}")


def main():
    print(run("migrate").strip())
    print(run("seed").strip())
    key = run("apikey", "create", "--scope", "admin", "--name", "failover-test").strip()
    auth = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}

    replicas = [Replica(i) for i in range(REPLICAS)]
    try:
        offerings = [o["id"] for o in replicas[0].get_json("/v1/offerings?limit=20&sort=id")[1]["items"]]

        # --- 1. A write through one replica is served by the others within a second.
        lag_ms = []
        for round_no in range(3):
            writer = replicas[round_no % REPLICAS]
            target = offerings[round_no]
            price = 100 + round_no + random.random()
            status, _, _ = writer.request("PUT", f"/v1/offerings/{target}/price",
                                          json.dumps({"usd_per_hour": round(price, 6), "source": "replica-test"}),
                                          auth)
            check(status == 200, f"PUT through replica {round_no % REPLICAS} answered {status}")
            acked = time.monotonic()
            for other in replicas:
                while True:
                    s, o = other.get_json(f"/v1/offerings/{target}")
                    if s == 200 and abs(o["usd_per_hour"] - round(price, 6)) < 1e-9:
                        lag_ms.append((time.monotonic() - acked) * 1000)
                        break
                    if time.monotonic() - acked > 3:
                        check(False, f"replica {other.port} did not serve the new price within 3 s")
                        break
                    time.sleep(0.01)
        worst_lag = max(lag_ms) if lag_ms else float("inf")
        print(f"replication: {len(lag_ms)} observations, worst {worst_lag:.1f} ms after the write was acknowledged")
        check(worst_lag < 1000, f"a replica served a write {worst_lag:.0f} ms after it was acknowledged (> 1 s)")

        # --- 2. PostgreSQL stopped under a load of reads and writes, then started again.
        stats = {"reads": 0, "read_failures": 0, "writes_sent": 0, "write_2xx": 0, "write_503": 0,
                 "write_503_without_retry_after": 0, "write_other": 0, "write_transport_errors": 0,
                 "writes_abandoned": 0, "degraded_seen": 0, "ready_failures_while_down": 0}
        lock = threading.Lock()
        acked_sources = []     # sources of writes that got a 2xx
        other_statuses = []    # (status, body) of answers other than 2xx/503
        attempted_sources = []  # every logical write
        stop = threading.Event()
        start = time.monotonic()

        def reader(n):
            rnd = random.Random(n)
            while not stop.is_set():
                replica = rnd.choice(replicas)
                path = rnd.choice(["/v1/offerings?limit=5", f"/v1/offerings/{rnd.choice(offerings)}",
                                   "/v1/catalog", "/v1/providers"])
                try:
                    status, _, _ = replica.request("GET", path)
                    ok = status == 200
                except Exception:  # noqa: BLE001 - a transport failure is a failed read
                    ok = False
                with lock:
                    stats["reads"] += 1
                    if not ok:
                        stats["read_failures"] += 1

        def writer(n):
            rnd = random.Random(1000 + n)
            while not stop.is_set():
                source = f"failover-{uuid.uuid4()}"
                idem = str(uuid.uuid4())
                target = rnd.choice(offerings)
                body = json.dumps({"usd_per_hour": round(rnd.uniform(1, 90), 4), "source": source})
                with lock:
                    attempted_sources.append(source)
                first_try = time.monotonic()
                while True:
                    replica = rnd.choice(replicas)
                    try:
                        status, headers, _body = replica.request(
                            "PUT", f"/v1/offerings/{target}/price", body, {**auth, "Idempotency-Key": idem})
                    except Exception:  # noqa: BLE001
                        status, headers, _body = None, {}, b""
                    with lock:
                        stats["writes_sent"] += 1
                        if status is None:
                            stats["write_transport_errors"] += 1
                        elif 200 <= status < 300:
                            stats["write_2xx"] += 1
                        elif status == 503:
                            stats["write_503"] += 1
                            if "Retry-After" not in headers:
                                stats["write_503_without_retry_after"] += 1
                        else:
                            stats["write_other"] += 1
                            other_statuses.append((status, _body[:300]))
                    if status is not None and 200 <= status < 300:
                        with lock:
                            acked_sources.append(source)
                        break
                    if status is not None and status not in (503,):
                        break  # a 4xx is final; counted as write_other
                    if time.monotonic() - first_try > WRITE_GIVE_UP_S:
                        with lock:
                            stats["writes_abandoned"] += 1
                        break
                    time.sleep(0.1)
                time.sleep(0.02)

        threads = [threading.Thread(target=reader, args=(i,)) for i in range(READERS)]
        threads += [threading.Thread(target=writer, args=(i,)) for i in range(WRITERS)]
        for t in threads:
            t.start()

        time.sleep(STOP_AT_S)
        subprocess.run([CTL, "--ctl", "kill"], check=True)
        stopped_at = time.monotonic()
        # While it is down: health says degraded, readiness stays.
        time.sleep(1.0)
        for r in replicas:
            s, h = r.get_json("/healthz")
            with lock:
                if h.get("status") == "degraded" and "snapshot_age_s" in h.get("database", {}):
                    stats["degraded_seen"] += 1
            s, _, _ = r.request("GET", "/readyz")
            if s != 200:
                stats["ready_failures_while_down"] += 1
        time.sleep(max(0.0, START_AT_S - (time.monotonic() - start)))
        subprocess.run([CTL, "--ctl", "start"], check=True)
        restarted_at = time.monotonic()
        time.sleep(max(0.0, LOAD_S - (time.monotonic() - start)))
        stop.set()
        for t in threads:
            t.join(timeout=WRITE_GIVE_UP_S + 10)

        # Replicas reconnect and converge on one revision.
        deadline = time.monotonic() + 10
        revisions = set()
        while time.monotonic() < deadline:
            healths = [r.get_json("/healthz")[1] for r in replicas]
            revisions = {h["database"]["catalog_revision"] for h in healths}
            if all(h["status"] == "ok" for h in healths) and len(revisions) == 1:
                break
            time.sleep(0.1)
        db_revision = int(psql("SELECT revision FROM catalog_state"))
        check(revisions == {db_revision}, f"replicas serve revisions {revisions}, database has {db_revision}")

        counts = {}
        for line in psql("SELECT s.name, count(*) FROM prices p JOIN sources s ON s.id = p.source_id"
                         " WHERE s.name LIKE 'failover-%' GROUP BY s.name").splitlines():
            name, count = line.split("|")
            counts[name] = int(count)
        found_acked = sum(1 for s in acked_sources if counts.get(s, 0) == 1)
        duplicates = sum(1 for c in counts.values() if c > 1)
        unacked_found = sum(1 for s in attempted_sources if s not in acked_sources and counts.get(s, 0) > 0)
        open_twice = int(psql("SELECT count(*) FROM (SELECT offering_id FROM prices WHERE valid_to IS NULL"
                              " GROUP BY offering_id HAVING count(*) > 1) x"))

        print("failover figures:")
        print(f"  PostgreSQL down for {restarted_at - stopped_at:.1f} s (killed with pg_ctl -m immediate)"
              f" during a {LOAD_S:.0f} s load, {READERS} readers + {WRITERS} writers over {REPLICAS} replicas")
        print(f"  reads: {stats['reads']} requests, {stats['read_failures']} failures")
        print(f"  writes: {len(attempted_sources)} logical writes, {stats['writes_sent']} requests"
              f" ({stats['write_2xx']} 2xx, {stats['write_503']} 503, {stats['write_other']} other,"
              f" {stats['write_transport_errors']} transport errors), {stats['writes_abandoned']} abandoned")
        print(f"  acknowledged: {len(acked_sources)}; found exactly once: {found_acked};"
              f" found twice or more: {duplicates}; unacknowledged but applied: {unacked_found}")
        print(f"  /healthz degraded on {stats['degraded_seen']}/{REPLICAS} replicas while down;"
              f" /readyz failures while down: {stats['ready_failures_while_down']}")

        check(stats["reads"] > 100, "too few reads to mean anything")
        check(stats["read_failures"] == 0, f"{stats['read_failures']} reads failed")
        check(stats["write_503"] > 0, "no write saw the outage (503)")
        check(stats["write_503_without_retry_after"] == 0, "a 503 came without Retry-After")
        check(stats["write_other"] == 0,
              f"{stats['write_other']} writes got a status other than 2xx/503: {other_statuses[:3]}")
        check(stats["writes_abandoned"] == 0, f"{stats['writes_abandoned']} writes never got an answer")
        check(len(acked_sources) > 10, "too few acknowledged writes")
        check(found_acked == len(acked_sources),
              f"acknowledged writes missing: {len(acked_sources) - found_acked}")
        check(duplicates == 0, f"{duplicates} writes applied twice")
        check(open_twice == 0, "an offering has two current prices")
        check(stats["degraded_seen"] == REPLICAS, "not every replica reported degraded while PostgreSQL was down")
        check(stats["ready_failures_while_down"] == 0, "/readyz failed while the snapshot was fresh")
    finally:
        for r in replicas:
            died = r.proc.poll() is not None
            r.stop()
            if died or r.proc.returncode != 0:
                print(f"kept the log of the replica that died: {r.log.name}")
            else:
                os.unlink(r.log.name)

    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("replicas and failover: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
