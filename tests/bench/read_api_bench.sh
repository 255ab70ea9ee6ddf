#!/usr/bin/env bash
# Throughput of the read API on loopback: starts the release binary on a free port and runs
# wrk against a few endpoints. Prints one line per endpoint (req/s, p50/p99 latency).
#   usage: tests/bench/read_api_bench.sh [BINARY] [SECONDS]
# Needs wrk (Debian package `wrk`). Bounded: each endpoint runs SECONDS (default 10), loopback only.
set -euo pipefail
binary=${1:-build/release/service/gpucost}
seconds=${2:-10}
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)"; exit 1; }
log=$(mktemp)
"$binary" --port 0 --access-log false --threads 16 2>"$log" &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -f "$log"' EXIT
port=""
for _ in $(seq 100); do
    port=$(grep -o '"port":[0-9]*' "$log" | head -1 | cut -d: -f2 || true)
    [[ -n "$port" ]] && break
    sleep 0.1
done
[[ -n "$port" ]] || { echo "server did not start"; cat "$log"; exit 1; }
echo "gpucost $("$binary" version | cut -d' ' -f2), $(nproc) cores, wrk -t1 -c8 -d${seconds}s, keep-alive"
for path in /healthz /v1/accelerators/h100-sxm "/v1/offerings?limit=50" \
            "/v1/offerings?accelerator=h100-sxm&price_type=on_demand&sort=-usd_per_hour" /v1/providers; do
    out=$(wrk -t1 -c8 -d"${seconds}s" --latency "http://127.0.0.1:${port}${path}")
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    p50=$(awk '$1=="50%" {print $2}' <<<"$out")
    p99=$(awk '$1=="99%" {print $2}' <<<"$out")
    errors=$(grep -E 'Non-2xx|Socket errors' <<<"$out" | tr '\n' ' ' || true)
    printf '%-75s %9s req/s  p50 %-8s p99 %-8s %s\n' "$path" "$rps" "$p50" "$p99" "$errors"
done
