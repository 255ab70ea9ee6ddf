#!/usr/bin/env bash
# HTTPS with --tls-cert/--tls-key against the real binary on a free loopback port: a
# self-signed certificate made here with openssl, curl over TLS 1.2 and 1.3, and refusals of
# TLS 1.1 and of a non-AEAD TLS 1.2 cipher.
#   usage: tests/service/tls_test.sh BINARY
set -euo pipefail
binary=$1
work=$(mktemp -d)
pid=""
cleanup() {
    [[ -n "$pid" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=127.0.0.1" \
    -addext "subjectAltName=IP:127.0.0.1" \
    -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null

# Mismatched flags are a configuration error (exit 2), before anything listens.
set +e
"$binary" --port 0 --tls-cert "$work/cert.pem" 2>/dev/null
rc=$?
set -e
[[ $rc == 2 ]] || fail "--tls-cert without --tls-key exited $rc, expected 2"

"$binary" --port 0 --access-log false --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" \
    2>"$work/log" &
pid=$!
port=""
for _ in $(seq 200); do
    port=$(grep -o '"port":[0-9]*' "$work/log" | head -1 | cut -d: -f2 || true)
    [[ -n "$port" ]] && break
    sleep 0.05
done
[[ -n "$port" ]] || { cat "$work/log"; fail "server did not start"; }
url="https://127.0.0.1:$port"

code=$(curl -s -o "$work/body" -w '%{http_code}' --cacert "$work/cert.pem" "$url/healthz")
[[ $code == 200 ]] || fail "GET /healthz over TLS answered $code"
grep -q '"status"' "$work/body" || fail "unexpected /healthz body: $(cat "$work/body")"

code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$work/cert.pem" --tlsv1.2 --tls-max 1.2 \
    "$url/v1/accelerators/h100-sxm")
[[ $code == 200 ]] || fail "TLS 1.2 request answered $code"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$work/cert.pem" --tlsv1.3 "$url/v1/catalog")
[[ $code == 200 ]] || fail "TLS 1.3 request answered $code"

# Plain HTTP on the TLS port gets no answer.
if curl -s -m 3 -o /dev/null "http://127.0.0.1:$port/healthz"; then fail "plain HTTP was answered"; fi

# TLS 1.1 and a CBC (non-AEAD) TLS 1.2 suite must fail the handshake; an ECDHE-GCM one works.
# (SECLEVEL=0 so that the refusal is the server's, not the client's own policy.)
handshake() {
    openssl s_client -connect "127.0.0.1:$port" "$@" </dev/null >"$work/s_client" 2>&1
}
if handshake -tls1_1 -cipher 'DEFAULT:@SECLEVEL=0'; then fail "TLS 1.1 handshake succeeded"; fi
if handshake -tls1_2 -cipher 'ECDHE-RSA-AES128-SHA:@SECLEVEL=0'; then
    fail "non-AEAD cipher ECDHE-RSA-AES128-SHA was accepted"
fi
handshake -tls1_2 -cipher 'ECDHE-RSA-AES128-GCM-SHA256' || fail "ECDHE-RSA-AES128-GCM-SHA256 refused"
grep -q "ECDHE-RSA-AES128-GCM-SHA256" "$work/s_client" || fail "negotiated another cipher"

# The library frames TLS requests itself, so each TLS connection serves one request: a request
# hidden in a GET's body (which the library never reads) is not answered.
hidden=$'GET /v1/offerings/SMUGGLED-TLS HTTP/1.1\r\nHost: x\r\n\r\n'
printf 'GET /readyz HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s' "${#hidden}" "$hidden" |
    timeout 10 openssl s_client -connect "127.0.0.1:$port" -quiet -ign_eof >"$work/smuggle" 2>/dev/null || true
answers=$(grep -c '^HTTP/1.1 ' "$work/smuggle" || true)
[[ $answers == 1 ]] || fail "TLS: $answers answers to one request with a hidden one in its body"
if grep -q 'SMUGGLED-TLS' "$work/smuggle"; then fail "TLS: the hidden request was answered"; fi
grep -qi '^Connection: close' "$work/smuggle" || fail "TLS: the answer does not close the connection"

kill -TERM "$pid"
wait "$pid" || fail "exit status $? after SIGTERM"
pid=""
echo "tls: TLS 1.2/1.3 served with AEAD ciphers; TLS 1.1, CBC and plain HTTP refused; one request per connection"
