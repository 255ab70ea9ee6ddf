#!/usr/bin/env bash
# The costliest anonymous requests, before and after the request bounds (docs/api.md "Request
# bounds"; docs/performance.md "Request budget"). Starts the binary with its default flags on
# a free port (plus $BENCH_FLAGS) and, for two training plans:
#   old bounds: an inline 1,000-rule price book, 64 node counts, limit 500 (what the bounds
#               allowed before; 422 once they hold),
#   new bounds: an inline 200-rule price book, 32 node counts, limit 500 (the costliest they
#               allow),
# prints the status, the answer's bytes, the server's CPU milliseconds per request (from
# /proc/PID/stat over REQUESTS sequential requests) and the p50/p90/p99 of GET /healthz, once
# idle and once while ten loops send that plan back to back for SECONDS. Then the status of
# one request past each bound. Run it with the binary before and after a change, on the same
# machine, and compare the rows.
#   usage: tests/bench/request_budget_bench.sh [BINARY] [SECONDS] [REQUESTS]
# Needs curl and python3. Total time is about 3 x SECONDS plus the sequential requests.
set -euo pipefail
# shellcheck source=tests/bench/gpucost_port.sh
source "$(dirname "$0")/gpucost_port.sh"
binary=${1:-build/release/service/gpucost}
seconds=${2:-10}
requests=${3:-20}
loops=10
command -v curl >/dev/null || { echo "curl is not installed"; exit 1; }
work=$(mktemp -d)
log="$work/server.log"
# shellcheck disable=SC2086
"$binary" --port 0 --access-log false --max-connections-per-address 900 ${BENCH_FLAGS:-} \
    2>"$log" >/dev/null &
pid=$!
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
port=$(gpucost_port "$log") || { echo "server did not start"; cat "$log"; exit 1; }
base="http://127.0.0.1:$port"

# A training plan for a 7B model with an inline book of $1 discount rules (the providers
# cycled), node counts 1..$2 and limit $3, every option listed.
plan_body() {
    python3 - "$@" <<'PY'
import json, sys
rules, counts, limit = (int(a) for a in sys.argv[1:4])
providers = ["aws", "gcp", "azure", "lambda", "coreweave", "runpod", "vastai"]
book = {"name": "bench", "rules": [
    {"provider": providers[i % len(providers)], "discount_fraction": 0.1} for i in range(rules)]}
print(json.dumps({"model": {"params_b": 7}, "tokens_b": 1000, "include_infeasible": True,
                  "constraints": {"node_counts": list(range(1, counts + 1)),
                                  "max_total_accelerators": 65536},
                  "limit": limit, "price_book": book}, separators=(",", ":")))
PY
}
plan_body 1000 64 500 >"$work/old.json"
plan_body 200 32 500 >"$work/new.json"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
post() { curl -s -o "$work/answer" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary "@$1" "$base/v1/plans/training"; }

# p50/p90/p99 in ms of GET /healthz probed every 20 ms for $seconds.
healthz_percentiles() {
    local end=$((SECONDS + seconds))
    : >"$work/probes"
    while ((SECONDS < end)); do
        curl -s -o /dev/null -w '%{time_total}\n' "$base/healthz" >>"$work/probes"
        sleep 0.02
    done
    sort -n "$work/probes" | awk '{v[NR] = $1 * 1000} END {
        printf "%.1f / %.1f / %.1f ms (%d probes)", v[int(NR * 0.5) + 1], v[int(NR * 0.9) + 1],
            v[int(NR * 0.99) + 1], NR}'
}

hz=$(getconf CLK_TCK)
echo "gpucost $("$binary" version | cut -d' ' -f2) on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "flags: --port 0 ${BENCH_FLAGS:-}; $requests sequential requests for CPU, $loops loops for ${seconds}s under load"
echo
echo "GET /healthz idle (p50 / p90 / p99): $(healthz_percentiles)"
echo
echo "| training plan                          | body    | status | answer    | CPU ms/request | /healthz p50 / p90 / p99 under $loops loops |"
echo "|----------------------------------------|---------|--------|-----------|----------------|---------------------------------------------|"
for kind in old new; do
    file="$work/$kind.json"
    label=$([[ $kind == old ]] && echo "1,000 rules, 64 node counts, limit 500" || echo "200 rules, 32 node counts, limit 500")
    status=$(post "$file")
    bytes=$(wc -c <"$work/answer")
    before=$(cpu_ticks)
    for _ in $(seq "$requests"); do post "$file" >/dev/null; done
    cpu_ms=$(awk -v t=$(($(cpu_ticks) - before)) -v n="$requests" -v hz="$hz" 'BEGIN {printf "%.1f", t * 1000 / hz / n}')
    for _ in $(seq "$loops"); do
        (while true; do post "$file" >/dev/null; done) &
    done
    sleep 1  # the loops are running
    under=$(healthz_percentiles)
    kill $(jobs -p | grep -v "^$pid$") 2>/dev/null || true
    for job in $(jobs -p); do [[ $job == "$pid" ]] || wait "$job" 2>/dev/null || true; done
    printf '| %-38s | %5s B | %6s | %7s B | %14s | %s |\n' "$label" "$(wc -c <"$file")" "$status" "$bytes" "$cpu_ms" "$under"
done

echo
echo "One past each bound (422 naming the list once the bounds hold):"
over() {  # $1: label, $2: path, $3: body
    local code field
    code=$(curl -s -o "$work/answer" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "$3" "$base$2")
    field=""
    [[ $code == 200 ]] || field=$(grep -o '"field":"[^"]*"' "$work/answer" | head -1 || true)
    printf '  %-44s %s %s\n' "$1" "$code" "$field"
}
list() { python3 -c 'import json,sys; print(json.dumps([json.loads(sys.argv[1])] * int(sys.argv[2]), separators=(",", ":")))' "$1" "$2"; }
plan='"model":{"params_b":7},"tokens_b":20,"limit":1'
serve='"model":{"params_b":7},"input_tokens":100,"output_tokens":10,"traffic":{"requests_per_second":1},"limit":1'
over "training node_counts: 33" /v1/plans/training "{$plan,\"constraints\":{\"node_counts\":$(list 1 33)}}"
over "training providers: 65" /v1/plans/training "{$plan,\"constraints\":{\"providers\":$(list '"aws"' 65)}}"
over "training regions: 65" /v1/plans/training "{$plan,\"constraints\":{\"regions\":$(list '"us-east-1"' 65)}}"
over "training accelerators: 65" /v1/plans/training "{$plan,\"constraints\":{\"accelerators\":$(list '"h100-sxm"' 65)}}"
over "training price_types: 6" /v1/plans/training "{$plan,\"constraints\":{\"price_types\":$(list '"spot"' 6)}}"
over "training inline price_book rules: 201" /v1/plans/training \
    "{$plan,\"price_book\":{\"name\":\"b\",\"rules\":$(list '{"provider":"aws","discount_fraction":0.1}' 201)}}"
over "serving providers: 65" /v1/plans/inference "{$serve,\"constraints\":{\"providers\":$(list '"aws"' 65)}}"
over "serving regions: 65" /v1/plans/inference "{$serve,\"constraints\":{\"regions\":$(list '"us-east-1"' 65)}}"
over "serving accelerators: 65" /v1/plans/inference "{$serve,\"constraints\":{\"accelerators\":$(list '"h100-sxm"' 65)}}"
over "serving price_types: 6" /v1/plans/inference "{$serve,\"constraints\":{\"price_types\":$(list '"spot"' 6)}}"
over "serving inline price_book rules: 201" /v1/plans/inference \
    "{$serve,\"price_book\":{\"name\":\"b\",\"rules\":$(list '{"provider":"aws","discount_fraction":0.1}' 201)}}"
over "roofline ops: 1025" /v1/estimates/roofline \
    "{\"accelerator\":\"h100-sxm\",\"ops\":$(list '{"kind":"custom","flops":1e12,"bytes":1e6}' 1025)}"
echo
echo "peak RSS: $(awk '/VmHWM/ {print $2, $3}' "/proc/$pid/status")"
