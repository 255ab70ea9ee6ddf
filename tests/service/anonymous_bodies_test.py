#!/usr/bin/env python3
"""Anonymous bodies cost no memory: the real binary, many connections that each declare an
8 MiB FOCUS export to POST /v1/actuals and send all of it but its last byte, without a key.

usage: anonymous_bodies_test.py BINARY embedded|database
  database: run through tests/pg/with_pg.sh (DATABASE_URL); the answer is 401 unauthenticated.
  embedded: no database; the answer is 409 database_required, the route's own.

Two rounds, each on fresh connections, loopback only:
  * 48 connections from 127.0.0.1 (under the per-address limit of 64);
  * 400 connections spread over 127.0.0.2-127.0.0.9, 50 from each, so that the per-address limit
    of 64 refuses none of them (every one reaches the route's key check).
Each connection sends its head and then its body as fast as the server takes it, and stops
sending once an answer arrives. Checked for every connection: the answer is the route's refusal
(problem+json), though the body's last byte is never sent and the request timeout is longer
than a round: a server that waits for the body before it looks at the key answers nothing.
Checked for the process: its peak resident memory (VmHWM) stays within RSS_BOUND_MIB of its
idle resident memory (docs/performance.md, "Memory"). A server whose memory passes twice the
bound is not fed further (the round stops and fails), so the test stays bounded against a
server that buffers bodies. In database mode, first: a read key's declared 8 MiB export is 403
and an unknown key's 401, each from the head, and an admin key's export is read and stored
(201). Prints the figures and `N passed, M failed`; exits 1 on any failure.
"""
import json
import os
import selectors
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "contract"))
import serve  # noqa: E402

BINARY = sys.argv[1]
MODE = sys.argv[2] if len(sys.argv) > 2 else "embedded"
DECLARED = 8 * 1024 * 1024  # --max-actuals-body-bytes' default
SENT = DECLARED - 1
RSS_BOUND_MIB = 64  # docs/performance.md, "Memory": peak RSS over idle RSS
ROUND_LIMIT_S = 45
REQUEST_TIMEOUT_S = 60  # longer than a round: no answer comes from waiting for a body
CHUNK = b"x" * 65536
FOCUS_EXPORT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "focus",
                            "aws-focus-1.0.csv")

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


def memory_kib(pid):
    """(VmRSS, VmHWM) of the process in KiB."""
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                fields[name] = int(value.split()[0])
    return fields["VmRSS"], fields["VmHWM"]


class Attacker:
    """One connection: a head declaring DECLARED bytes, then the body but its last byte."""

    def __init__(self, port, source_ip):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind((source_ip, 0))
        self.sock.connect(("127.0.0.1", port))
        self.sock.setblocking(False)
        head = ("POST /v1/actuals HTTP/1.1\r\nHost: t\r\nContent-Type: text/csv\r\n"
                f"Content-Length: {DECLARED}\r\n\r\n").encode()
        self.pending = head
        self.body_sent = 0
        self.answer = b""
        self.closed = False

    def want_write(self):
        return not self.closed and not self.answer and (self.pending or self.body_sent < SENT)

    def on_writable(self):
        while self.want_write():
            if not self.pending:
                n = min(len(CHUNK), SENT - self.body_sent)
                self.pending = CHUNK[:n]
                self.body_sent += n
            try:
                sent = self.sock.send(self.pending)
            except BlockingIOError:
                return
            except OSError:
                self.closed = True
                return
            self.pending = self.pending[sent:]

    def on_readable(self):
        try:
            data = self.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            self.closed = True
            return
        if not data:
            self.closed = True
        self.answer += data

    def status(self):
        line = self.answer.split(b"\r\n", 1)[0].split()
        return int(line[1]) if len(line) > 1 and line[1].isdigit() else None

    def problem(self):
        _, _, body = self.answer.partition(b"\r\n\r\n")
        try:
            return json.loads(body)
        except ValueError:
            return None

    def head_text(self):
        return self.answer.partition(b"\r\n\r\n")[0].decode(errors="replace").lower()

    def whole_answer(self):
        head, sep, body = self.answer.partition(b"\r\n\r\n")
        if not sep:
            return False
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                return len(body) >= int(value.strip())
        return self.closed


def attack(pid, port, sources, per_source, idle_kib):
    """One round; returns (attackers, peak VmHWM KiB, stopped for memory)."""
    attackers = [Attacker(port, ip) for ip in sources for _ in range(per_source)]
    selector = selectors.DefaultSelector()
    for a in attackers:
        selector.register(a.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, a)
    deadline = time.time() + ROUND_LIMIT_S
    stopped = False
    last_probe = 0.0
    while time.time() < deadline:
        live = [a for a in attackers if not a.closed and not a.whole_answer()]
        if not live:
            break
        if time.time() - last_probe > 0.05:
            last_probe = time.time()
            rss, _ = memory_kib(pid)
            if rss - idle_kib > 2 * RSS_BOUND_MIB * 1024:
                stopped = True
                break
        for key, events in selector.select(timeout=0.1):
            a = key.data
            if events & selectors.EVENT_READ:
                a.on_readable()
            if events & selectors.EVENT_WRITE:
                a.on_writable()
            mask = selectors.EVENT_READ | (selectors.EVENT_WRITE if a.want_write() else 0)
            if a.closed or a.whole_answer():
                mask = 0
            if mask == 0:
                selector.unregister(a.sock)
            else:
                selector.modify(a.sock, mask, a)
    _, peak = memory_kib(pid)
    for a in attackers:
        a.sock.close()
    selector.close()
    return attackers, peak, stopped


def expected():
    if MODE == "database":
        return 401, "unauthenticated"
    return 409, "database_required"


def run_round(proc, port, label, sources, per_source):
    time.sleep(0.5)
    idle_kib, _ = memory_kib(proc.pid)
    started = time.time()
    attackers, peak_kib, stopped = attack(proc.pid, port, sources, per_source, idle_kib)
    took = time.time() - started
    status, code = expected()
    statuses = {}
    for a in attackers:
        statuses[a.status()] = statuses.get(a.status(), 0) + 1
    refused = [a for a in attackers
               if a.status() == status and (a.problem() or {}).get("code") == code]
    growth_mib = (peak_kib - idle_kib) / 1024
    print(f"# {MODE} {label}: {len(attackers)} connections, idle RSS {idle_kib / 1024:.1f} MiB, "
          f"peak RSS {peak_kib / 1024:.1f} MiB (+{growth_mib:.1f} MiB), {took:.1f} s, "
          f"answers {statuses}, body bytes sent before the answer: "
          f"max {max(a.body_sent for a in attackers)} of {SENT}", flush=True)
    check(not stopped, f"{label}: the server's RSS stayed under idle + {2 * RSS_BOUND_MIB} MiB "
                       "while the bodies came (the round ran to its end)")
    check(growth_mib <= RSS_BOUND_MIB,
          f"{label}: peak RSS {peak_kib / 1024:.1f} MiB is within {RSS_BOUND_MIB} MiB of idle "
          f"({idle_kib / 1024:.1f} MiB)")
    # The last byte is never sent and the request timeout is longer than the round: a server
    # that reads a body before its key answers nothing in time (or 408), never the refusal.
    check(len(refused) == len(attackers),
          f"{label}: every connection is answered {status} {code} (problem+json) though its body "
          f"never came whole: {len(refused)} of {len(attackers)}")
    if MODE == "database":
        bearer = [a for a in refused if "www-authenticate: bearer" in a.head_text()]
        check(len(bearer) == len(refused), f"{label}: each 401 carries WWW-Authenticate: Bearer")
    closes = [a for a in refused if "connection: close" in a.head_text()]
    check(len(closes) == len(refused), f"{label}: each refusal closes the connection")
    return not stopped


def create_key(scope):
    done = subprocess.run([BINARY, "apikey", "create", "--scope", scope, "--name", f"bodies-{scope}"],
                          capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise SystemExit(f"gpucost apikey create failed: {done.stderr[-400:]}")
    return done.stdout.strip()


def exchange(port, head, body=b""):
    """Sends a head (and body), returns (status, head text, problem or None); status None when
    no answer came within 10 s (a server waiting for a body that is never sent)."""
    answer = b""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head + body)
        try:
            while b"\r\n\r\n" not in answer:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                answer += chunk
            length = 0
            for line in answer.partition(b"\r\n\r\n")[0].split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            while len(answer.partition(b"\r\n\r\n")[2]) < length:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                answer += chunk
        except TimeoutError:
            pass
    head_text, _, rest = answer.partition(b"\r\n\r\n")
    status = int(head_text.split()[1]) if head_text else None
    try:
        problem = json.loads(rest)
    except ValueError:
        problem = None
    return status, head_text.decode(errors="replace").lower(), problem


def keyed_requests(port, read_key, admin_key):
    """Database mode: a read key is 403 from the head; an admin key's body is read and stored."""
    def head(key, length):
        return ("POST /v1/actuals HTTP/1.1\r\nHost: t\r\nContent-Type: text/csv\r\n"
                f"Authorization: Bearer {key}\r\nContent-Length: {length}\r\n\r\n").encode()
    status, text, problem = exchange(port, head(read_key, DECLARED))
    check(status == 403 and (problem or {}).get("code") == "forbidden"
          and "connection: close" in text,
          f"a read key's declared 8 MiB export is 403 forbidden from its head ({status})")
    status, _, problem = exchange(port, head("gpc_000000000000_" + "0" * 48, DECLARED))
    check(status == 401 and (problem or {}).get("code") == "unauthenticated",
          f"an unknown key's declared 8 MiB export is 401 from its head ({status})")
    export = open(FOCUS_EXPORT, "rb").read()
    status, _, problem = exchange(port, head(admin_key, len(export)), export)
    check(status == 201, f"an admin key's export is read and stored: 201 ({status} {problem})")


def prepare_database():
    for command in (["migrate"], ["seed"]):
        done = subprocess.run([BINARY, *command], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise SystemExit(f"gpucost {command[0]} failed: {done.stderr[-400:]}")


def main():
    if MODE not in ("embedded", "database"):
        raise SystemExit("usage: anonymous_bodies_test.py BINARY embedded|database")
    if MODE == "database":
        if "DATABASE_URL" not in os.environ:
            raise SystemExit("database mode runs through tests/pg/with_pg.sh (DATABASE_URL)")
        prepare_database()
    with tempfile.NamedTemporaryFile("w+", suffix=".log") as log:
        proc, port = serve.start(BINARY, ["--request-timeout-s", str(REQUEST_TIMEOUT_S)],
                                 embedded=(MODE == "embedded"), log=log)
        if port is None:
            raise SystemExit("gpucost did not start: " + open(log.name).read()[-800:])
        try:
            if MODE == "database":
                keyed_requests(port, create_key("read"), create_key("admin"))
            if run_round(proc, port, "48 from one address", ["127.0.0.1"], 48):
                run_round(proc, port, "400 over 8 addresses",
                          [f"127.0.0.{i}" for i in range(2, 10)], 50)
            else:
                print("# the 400-connection round is skipped: the server already buffers bodies")
                check(False, "400 over 8 addresses: not run")
            check(proc.poll() is None, "the server is still running")
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
    print(f"{passed} passed, {failed} failed", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
