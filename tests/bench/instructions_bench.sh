#!/usr/bin/env bash
# Instructions per request under valgrind's callgrind: stable where wall-clock figures are not
# (a machine shared with compilers). Starts the binary under callgrind with --threads 2, sends
# N requests of one kind one at a time with curl, stops it with SIGTERM, and subtracts the
# instructions of a run without requests (start-up and shutdown).
#   usage: tests/bench/instructions_bench.sh [BINARY] [N]     (about 2 minutes)
#   BENCH_FLAGS adds server flags, e.g. BENCH_FLAGS="--catalog-dir DIR" for the plan over
#   tests/bench/make_scale_catalog.py's 20,000 offerings.
# Needs valgrind and curl.
set -euo pipefail
binary=${1:-build/release/service/gpucost}
n=${2:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

plan='{"model": {"params_b": 7}, "tokens_b": 1000, "precision": "bf16", "constraints": {"deadline_hours": 720, "budget_usd": 150000, "price_types": ["on_demand", "spot"]}, "sort": "expected_cost", "limit": 3}'
training='{"model": {"params_b": 8}, "tokens_b": 1000, "hardware": {"accelerator": "h100-sxm", "total_accelerators": 64}}'
inference='{"model": {"params_b": 70, "layers": 80, "hidden_size": 8192, "kv_heads": 8, "gated_mlp": true}, "hardware": {"accelerator": "h100-sxm", "total_accelerators": 2}, "precision": "fp8", "batch_size": 1, "input_tokens": 1000, "output_tokens": 200}'

instructions() {  # $1: path ("" for none), $2: body, $3: count -> total instructions
    local log="$work/server.log" out="$work/callgrind.out" port=""
    # shellcheck disable=SC2086  # BENCH_FLAGS: words
    valgrind --tool=callgrind --callgrind-out-file="$out" "$binary" --port 0 --threads 2 \
        ${BENCH_FLAGS:-} 2>"$log" >/dev/null &
    local pid=$!
    for _ in $(seq 600); do
        port=$(grep -o '"port":[0-9]*' "$log" | head -1 | cut -d: -f2 || true)
        [[ -n "$port" ]] && break
        sleep 0.1
    done
    [[ -n "$port" ]] || { echo "server did not start" >&2; cat "$log" >&2; exit 1; }
    for _ in $(seq "$3"); do
        # --fail: a refused request (400 after a field rename) must not pass for a cheap answer
        curl -sf -o /dev/null -H 'Content-Type: application/json' -d "$2" "http://127.0.0.1:$port$1" \
            || { echo "request to $1 failed" >&2; kill "$pid"; exit 1; }
    done
    kill -TERM "$pid"
    wait "$pid" || true
    callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
}

idle=$(instructions "" "" 0)
printf '%-42s %14s\n' "request" "instructions"
for row in "POST /v1/plans/training (full catalog)|/v1/plans/training|$plan" \
           "POST /v1/estimates/training (8B, 64 GPUs)|/v1/estimates/training|$training" \
           "POST /v1/estimates/inference (70B fp8)|/v1/estimates/inference|$inference"; do
    IFS='|' read -r label path body <<<"$row"
    total=$(instructions "$path" "$body" "$n")
    printf '%-42s %14s\n' "$label" "$(( (total - idle) / n ))"
done
echo "(per request: total minus a run without requests ($idle), divided by $n)"
