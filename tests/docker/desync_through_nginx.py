#!/usr/bin/env python3
"""Request smuggling through the shipped nginx, with legitimate clients at the same time.

Usage: desync_through_nginx.py BASE_URL ADMIN_KEY TARGET_OFFERING_ID [SECONDS]

Four legitimate clients (one of them sends an administrator's key, as the victim whose
credentials a smuggled request would borrow) send reads on kept-alive connections for SECONDS
(default 12) and check that every answer is the answer to their own request (the id in the body
is the one they asked for). Meanwhile an attacker without a key sends, over and over, requests
whose bodies hide another request: complete ones, and incomplete heads ending in `X-Ignore: `
that the next request on nginx's upstream connection would complete (a DELETE of
TARGET_OFFERING_ID and a GET of a marker path). Prints one line per finding and a summary;
exits 1 when a legitimate client got someone else's answer, a smuggled request was answered to
the attacker, or the target offering is gone. The caller also checks the replicas' access logs
for the marker and for DELETEs.
"""
import http.client
import json
import socket
import sys
import threading
import time
import urllib.parse

MARKER = "/v1/offerings/SMUGGLED-MARKER"


def attacks(target):
    """(name, bytes) pairs, each a request whose body hides another."""
    delete_prefix = (f"DELETE /v1/offerings/{target} HTTP/1.1\r\nHost: gpucost\r\n"
                     "X-Ignore: ")
    marker_prefix = f"GET {MARKER} HTTP/1.1\r\nHost: gpucost\r\nX-Ignore: "
    complete = f"GET {MARKER} HTTP/1.1\r\nHost: gpucost\r\n\r\n"
    out = []
    for hidden_name, hidden in (("incomplete DELETE", delete_prefix),
                                ("incomplete GET", marker_prefix),
                                ("complete GET", complete)):
        for outer_name, outer in (
                ("GET with a body", "GET /healthz HTTP/1.1"),
                ("DELETE with a body", "DELETE /v1/offerings/none HTTP/1.1"),
                ("OPTIONS with a body", "OPTIONS /v1/offerings HTTP/1.1"),
                ("414 path", "POST /v1/offerings/" + "a" * 1100 + " HTTP/1.1"),
                ("405 PATCH", "PATCH /readyz HTTP/1.1"),
                ("404 POST", "POST /v1/nowhere HTTP/1.1"),
                ("unauthenticated POST", "POST /v1/offerings HTTP/1.1"),
                ("bad Range", "POST /v1/estimates/roofline HTTP/1.1\r\nRange: bytes=zz"),
        ):
            body = hidden.encode()
            head = (f"{outer}\r\nHost: gpucost\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(body)}\r\n\r\n").encode()
            out.append((f"{outer_name} hiding {hidden_name}", head + body))
        # Expect: 100-continue refused for its size; the hidden request follows at once.
        body = hidden.encode()
        out.append((f"Expect 100-continue over the limit hiding {hidden_name}",
                    ("POST /v1/estimates/roofline HTTP/1.1\r\nHost: gpucost\r\n"
                     "Expect: 100-continue\r\nContent-Length: 100000\r\n\r\n").encode() + body))
    return out


def read_all(sock, limit_s=3.0):
    sock.settimeout(limit_s)
    chunks = []
    try:
        while True:
            b = sock.recv(65536)
            if not b:
                break
            chunks.append(b)
    except OSError:
        pass
    return b"".join(chunks)


class Results:
    def __init__(self):
        self.lock = threading.Lock()
        self.legit_answers = 0
        self.legit_wrong = []
        self.legit_errors = 0
        self.attacks_sent = 0
        self.attacker_saw_hidden = []

    def wrong(self, what):
        with self.lock:
            self.legit_wrong.append(what)


def legit_client(n, base, key, ids, stop, results):
    url = urllib.parse.urlparse(base)
    headers = {"X-Request-Id": f"legit-{n}"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    i = 0
    while not stop.is_set():
        kind, ident = ids[(i + n) % len(ids)]
        i += 1
        path = f"/v1/{kind}/{ident}"
        try:
            conn.request("GET", path, headers=headers)
            resp = conn.getresponse()
            body = resp.read()
        except (OSError, http.client.HTTPException):
            with results.lock:
                results.legit_errors += 1
            conn.close()
            conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
            continue
        if resp.status == 429:  # nginx's per-client rate limit: not an answer to check
            time.sleep(0.05)
            continue
        try:
            got = json.loads(body).get("id")
        except ValueError:
            got = None
        with results.lock:
            results.legit_answers += 1
        if resp.status != 200 or got != ident:
            results.wrong(f"client {n} asked {path}, got {resp.status} {body[:160]!r}")
        time.sleep(0.04)  # ~25 requests/s each: under nginx's 100 r/s per client address
    conn.close()


def attacker(base, target, stop, results):
    url = urllib.parse.urlparse(base)
    plan = attacks(target)
    i = 0
    while not stop.is_set():
        name, data = plan[i % len(plan)]
        i += 1
        try:
            s = socket.create_connection((url.hostname, url.port), timeout=5)
            s.sendall(data)
            answer = read_all(s, 0.3)
            s.close()
        except OSError:
            continue
        with results.lock:
            results.attacks_sent += 1
        if MARKER.encode() in answer:
            with results.lock:
                results.attacker_saw_hidden.append(f"{name}: {answer[:200]!r}")


def main():
    base, key, target = sys.argv[1], sys.argv[2], sys.argv[3]
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 12.0
    ids = [("accelerators", "h100-sxm"), ("accelerators", "a100-sxm4-80gb"),
           ("offerings", target), ("accelerators", "l4"), ("accelerators", "tpu-v5p")]
    results = Results()
    stop = threading.Event()
    threads = [threading.Thread(target=legit_client, args=(n, base, key if n == 0 else "", ids,
                                                           stop, results))
               for n in range(4)]
    threads += [threading.Thread(target=attacker, args=(base, target, stop, results))
                for _ in range(2)]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()

    failed = False
    for w in results.legit_wrong[:10]:
        print(f"# wrong answer: {w}")
    if results.legit_wrong:
        failed = True
    for w in results.attacker_saw_hidden[:10]:
        print(f"# hidden request answered to the attacker: {w}")
    if results.attacker_saw_hidden:
        failed = True
    url = urllib.parse.urlparse(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    conn.request("GET", f"/v1/offerings/{target}")
    resp = conn.getresponse()
    body = resp.read()
    if resp.status != 200:
        print(f"# the target offering {target} is gone: {resp.status} {body[:160]!r}")
        failed = True
    print(f"# {results.legit_answers} legitimate answers ({len(results.legit_wrong)} not their own, "
          f"{results.legit_errors} connection errors), {results.attacks_sent} attacks sent, "
          f"{len(results.attacker_saw_hidden)} hidden requests answered, target offering "
          f"{resp.status}")
    if results.legit_answers < 100 or results.attacks_sent < 20:
        print("# too little traffic to judge")
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
