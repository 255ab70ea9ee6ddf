#!/usr/bin/python3
"""Slow readers against the real binary: clients that ask for large answers and then read them
a few KiB a second (the Slow Read attack) must not hold the workers that /healthz and /readyz
need.

usage: slow_read_test.py GPUCOST_BINARY
Database mode when DATABASE_URL is set (run it through tests/pg/with_pg.sh): migrates, seeds
and serves with 16 workers; embedded mode otherwise, with 4 (each mode's default on 2 CPUs).

For each large answer (GET /openapi.yaml, about 250 KB; POST /v1/plans/training narrowed to
one accelerator with limit 500, about 120 KB) and each number of attackers (as many as workers,
and four times that): connections with a 2 KiB receive buffer, each sending 20 pipelined
requests (for plans, 8 GET /openapi.yaml first: the 2 MB that the kernel's send buffer takes on
loopback, so that the answers the server must hold are plans after a few built, not 20 each),
then reading 4 KiB a second (enough that the server's write timeout never cuts them:
the attack lasts). Once the server has built the answers it will build (its CPU time stays
flat), /healthz and /readyz are probed alternately on fresh connections, as a kubelet does, for
PROBE_S seconds. Every probe must answer 200, the 99th percentile under P99_LIMIT_MS (the goal
is 50 ms; the margin is for an ASan build on a loaded 2-core CI machine; before the event loop
sent answers, a probe took 4.5 s), and the attackers' connections must still be open (held, not
dropped). One attacker of the first phase then reads everything: 20 whole answers, in order.
Prints the baseline and each phase's p50/p99 (docs/performance.md quotes them), one line per
check, and `N passed, M failed`; exits 1 on any failure. Loopback only; about a minute.
"""
import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "contract"))
import serve  # noqa: E402

BINARY = sys.argv[1]
DATABASE_URL = os.environ.get("DATABASE_URL")
WORKERS = 16 if DATABASE_URL else 4
PIPELINED = 20
RECEIVE_BUFFER_BYTES = 2048
TRICKLE_BYTES_PER_S = 4096
PROBE_S = 4.0
PROBE_EVERY_S = 0.05
P99_LIMIT_MS = 500.0
PLAN = json.dumps({"model": {"params_b": 7}, "tokens_b": 1000, "precision": "bf16", "limit": 500,
                   "constraints": {"accelerators": ["h100-sxm"]}})
results = []


def check(ok, what):
    results.append(bool(ok))
    print(("ok - " if ok else "not ok - ") + what, flush=True)


OPENAPI_REQUEST = b"GET /openapi.yaml HTTP/1.1\r\nHost: t\r\n\r\n"
PLAN_REQUEST = (f"POST /v1/plans/training HTTP/1.1\r\nHost: t\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(PLAN)}\r\n\r\n{PLAN}").encode()
# What the kernel's send buffer takes of a connection's answers on loopback before the server
# must hold them (about 2.3 MB by default): the plan attackers fill it with cheap answers first,
# so that the server builds a few plans per connection rather than 20.
KERNEL_FILL_OPENAPI = 8


def pipelined_requests(kind):
    if kind == "openapi":
        return OPENAPI_REQUEST * PIPELINED
    return OPENAPI_REQUEST * KERNEL_FILL_OPENAPI + PLAN_REQUEST * (PIPELINED - KERNEL_FILL_OPENAPI)


class Attacker:
    """One connection with a small receive buffer: sends PIPELINED requests, then reads a few
    KiB a second from a shared thread. Reconnects when the server closes it (as an attacker
    would), counting how often."""

    def __init__(self, port, kind):
        self.port = port
        self.kind = kind
        self.reconnects = 0
        self.received = b""  # what this connection has read so far
        self.sock = None
        self.connect()

    def connect(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER_BYTES)
        s.settimeout(10)
        s.connect(("127.0.0.1", self.port))
        s.sendall(pipelined_requests(self.kind))
        s.setblocking(False)
        self.sock = s
        self.received = b""

    def trickle(self):
        try:
            data = self.sock.recv(TRICKLE_BYTES_PER_S)
            self.received += data
            closed = data == b""
        except BlockingIOError:
            closed = False
        except OSError:
            closed = True
        if closed:
            self.sock.close()
            self.reconnects += 1
            try:
                self.connect()
            except OSError:
                pass

    def close(self):
        self.sock.close()


def trickle_all(attackers, stop):
    while not stop.wait(1.0):
        for a in attackers:
            a.trickle()


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_until_settled(pid, limit_s=60.0):
    """Until the server's CPU time grows by under 20 ms in half a second: the answers it will
    build are built. Returns the seconds waited."""
    started = time.time()
    last = cpu_seconds(pid)
    while time.time() - started < limit_s:
        time.sleep(0.5)
        now = cpu_seconds(pid)
        if now - last < 0.02:
            break
        last = now
    return time.time() - started


def probe(port, path):
    """(status or None, milliseconds) of one GET on a fresh connection."""
    t0 = time.perf_counter()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", path)
        r = conn.getresponse()
        r.read()
        conn.close()
        status = r.status
    except OSError:
        status = None
    return status, (time.perf_counter() - t0) * 1000


def percentile(values, p):
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, int(round(p / 100 * len(ordered) + 0.5)) - 1))]


def probe_for(port, seconds):
    statuses, ms = [], []
    deadline = time.time() + seconds
    paths = ("/healthz", "/readyz")
    while time.time() < deadline:
        status, took = probe(port, paths[len(ms) % 2])
        statuses.append(status)
        ms.append(took)
        time.sleep(PROBE_EVERY_S)
    return statuses, ms


def read_answers(attacker, count, limit_s=120):
    """`count` whole answers on the attacker's connection, from its first byte: [(status,
    body)], or fewer on a close."""
    sock = attacker.sock
    sock.setblocking(True)
    sock.settimeout(limit_s)
    data = attacker.received
    answers = []
    while len(answers) < count:
        head_end = data.find(b"\r\n\r\n")
        if head_end >= 0:
            head = data[:head_end].decode("latin-1")
            length = 0
            for line in head.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if len(data) >= head_end + 4 + length:
                answers.append((int(head.split(" ")[1]), data[head_end + 4:head_end + 4 + length]))
                data = data[head_end + 4 + length:]
                continue
        chunk = sock.recv(262144)
        if not chunk:
            break
        data += chunk
    return answers


def phase(proc, port, kind, count, expected_body=None):
    attackers = [Attacker(port, kind) for _ in range(count)]
    stop = threading.Event()
    trickler = threading.Thread(target=trickle_all, args=(attackers, stop))
    trickler.start()
    waited = wait_until_settled(proc.pid)
    statuses, ms = probe_for(port, PROBE_S)
    stop.set()
    trickler.join()
    p50, p99 = percentile(ms, 50), percentile(ms, 99)
    what = f"{count} connections reading {kind} answers slowly ({PIPELINED} pipelined each)"
    print(f"# {what}: settled after {waited:.1f} s; {len(ms)} probes p50 {p50:.1f} ms, "
          f"p99 {p99:.1f} ms, max {max(ms):.1f} ms", flush=True)
    failed = [s for s in statuses if s != 200]
    check(not failed, f"{what}: every probe answered 200 ({len(failed)} of {len(ms)} not)")
    check(p99 < P99_LIMIT_MS, f"{what}: probe p99 {p99:.1f} ms < {P99_LIMIT_MS:.0f} ms")
    reconnects = sum(a.reconnects for a in attackers)
    check(reconnects == 0,
          f"{what}: the attackers' connections were held open ({reconnects} closed by the server)")
    if expected_body is not None:
        answers = read_answers(attackers[0], PIPELINED)
        whole = [a for a in answers if a[0] == 200 and a[1] == expected_body]
        check(len(whole) == PIPELINED,
              f"{what}: one attacker reading at last gets {PIPELINED} whole answers "
              f"({len(whole)} of {len(answers)})")
    for a in attackers:
        a.close()
    return p50, p99


def main():
    args = ["--threads", str(WORKERS), "--max-connections-per-address", "1000"]
    if DATABASE_URL:
        for command in ("migrate", "seed"):
            subprocess.run([BINARY, command, "--database-url", DATABASE_URL], check=True,
                           capture_output=True, timeout=120)
        args += ["--database-url", DATABASE_URL]
    log = open(f"/tmp/slow_read_test.{os.getpid()}.log", "w")
    proc, port = serve.start(BINARY, args, embedded=not DATABASE_URL, log=log)
    check(port is not None, f"gpucost started ({'database' if DATABASE_URL else 'embedded'} "
                            f"mode, {WORKERS} workers)")
    if port is None:
        sys.exit(1)
    try:
        status, ms = probe(port, "/readyz")
        check(status == 200, "ready before the attack")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/openapi.yaml")
        openapi = conn.getresponse().read()
        conn.close()
        _, baseline = probe_for(port, 1.0)
        print(f"# baseline: {len(baseline)} probes p50 {percentile(baseline, 50):.1f} ms, "
              f"p99 {percentile(baseline, 99):.1f} ms", flush=True)
        for kind in ("openapi", "plan"):
            for count in (WORKERS, 4 * WORKERS):
                expected = openapi if (kind, count) == ("openapi", WORKERS) else None
                phase(proc, port, kind, count, expected)
        check(proc.poll() is None, "gpucost is still running")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        os.unlink(log.name)
    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    sys.exit(0 if passed == len(results) else 1)


main()
