#!/usr/bin/env bash
# Concurrency benchmark of the HTTP API on loopback (one command, bounded time).
# Starts the binary with its default flags on a free port (only --port 0 added, plus $BENCH_FLAGS),
# then runs wrk (keep-alive) against /healthz, a catalog query, the training and inference
# estimates at 8, 32 and 256 connections, and the full-catalog training plan at 1 and 8
# connections. Prints one table row per run with the throughput ratio to /healthz at the same
# connection count, then peak RSS and start-up time.
#   usage: tests/bench/concurrency_bench.sh [BINARY] [SECONDS_PER_RUN]
# Needs wrk and curl (Debian packages). Total time is about 17 x SECONDS_PER_RUN (default 5).
set -euo pipefail
# shellcheck source=tests/bench/gpucost_port.sh
source "$(dirname "$0")/gpucost_port.sh"
binary=${1:-build/release/service/gpucost}
seconds=${2:-5}
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)"; exit 1; }
command -v curl >/dev/null || { echo "curl is not installed"; exit 1; }
work=$(mktemp -d)
log="$work/server.log"

start_ns=$(date +%s%N)
# shellcheck disable=SC2086
# All the benchmark's connections come from 127.0.0.1: lift the per-address share to the total.
"$binary" --port 0 --max-connections-per-address 900 ${BENCH_FLAGS:-} 2>"$log" >/dev/null &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$work"' EXIT
port=$(gpucost_port "$log" 500 0.01) || { echo "server did not start"; cat "$log"; exit 1; }
startup_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
base="http://127.0.0.1:${port}"

post_script() {  # $1: file, $2: JSON body
    cat >"$1" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = [[$2]]
LUA
}
post_script "$work/training.lua" \
    '{"model": {"params_b": 8}, "tokens_b": 1000, "hardware": {"accelerator": "h100-sxm", "total_accelerators": 64}}'
post_script "$work/inference.lua" \
    '{"model": {"params_b": 70, "layers": 80, "hidden_size": 8192, "kv_heads": 8, "gated_mlp": true}, "hardware": {"accelerator": "h100-sxm", "total_accelerators": 2}, "precision": "fp8", "batch_size": 1, "input_tokens": 1000, "output_tokens": 200}'
post_script "$work/plan.lua" \
    '{"model": {"params_b": 7}, "tokens_b": 1000, "precision": "bf16", "constraints": {"deadline_hours": 720, "budget_usd": 150000, "price_types": ["on_demand", "spot"]}, "sort": "expected_cost", "limit": 3}'
# Every request must succeed; a wrong body would otherwise benchmark the error path.
for s in training inference plan; do
    path=$([[ $s == plan ]] && echo /v1/plans/training || echo "/v1/estimates/$s")
    body=$(sed -n 's/^wrk.body = \[\[\(.*\)\]\]$/\1/p' "$work/$s.lua")
    code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' -d "$body" "$base$path")
    [[ $code == 200 ]] || { echo "$path answered $code; fix the benchmark body"; exit 1; }
done

declare -A healthz_rps
run() {  # $1: label, $2: connections, $3: path, $4: lua script or ""
    local label=$1 conns=$2 path=$3 script=${4:-} out rps p50 p99 errors non2xx ratio threads=1
    ((conns >= 32)) && threads=2
    local args=(-t"$threads" -c"$conns" -d"${seconds}s" --timeout 5s --latency)
    [[ -n "$script" ]] && args+=(-s "$script")
    out=$(wrk "${args[@]}" "$base$path")
    rps=$(awk '/Requests\/sec/ {printf "%.0f", $2}' <<<"$out")
    p50=$(awk '$1=="50%" {print $2}' <<<"$out")
    p99=$(awk '$1=="99%" {print $2}' <<<"$out")
    errors=$(awk '/Socket errors/ {gsub(",", ""); print $4+$6+$8+$10}' <<<"$out")
    non2xx=$(awk '/Non-2xx/ {print $NF}' <<<"$out")
    [[ $label == "GET /healthz" ]] && healthz_rps[$conns]=$rps
    ratio=$(awk -v a="$rps" -v b="${healthz_rps[$conns]:-0}" 'BEGIN {if (b > 0) printf "%.2fx", a / b; else print "-"}')
    printf '| %-40s | %4s | %8s | %6s | %9s | %9s | %s |\n' "$label" "$conns" "$rps" "$ratio" "$p50" "$p99" \
        "${errors:-0} / ${non2xx:-0}"
}

echo "gpucost $("$binary" version | cut -d' ' -f2) on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "flags: --port 0 ${BENCH_FLAGS:-}; wrk keep-alive, ${seconds}s per row, -t1 (8 connections) or -t2"
echo
echo "| endpoint                                 | conn |    req/s | ratio  |       p50 |       p99 | socket errors / non-2xx |"
echo "|------------------------------------------|------|----------|--------|-----------|-----------|-------------------------|"
for c in 8 32 256; do
    run "GET /healthz" "$c" /healthz
    run "GET /v1/offerings?...&limit=20" "$c" "/v1/offerings?accelerator=h100-sxm&limit=20"
    run "POST /v1/estimates/training (8B, 64 GPUs)" "$c" /v1/estimates/training "$work/training.lua"
    run "POST /v1/estimates/inference (70B fp8)" "$c" /v1/estimates/inference "$work/inference.lua"
done
for c in 1 8; do
    run "POST /v1/plans/training (full catalog)" "$c" /v1/plans/training "$work/plan.lua"
done
echo
echo "peak RSS: $(awk '/VmHWM/ {printf "%.1f MB", $2 / 1024}' "/proc/$pid/status"), start-up (exec to first /healthz answer): ${startup_ms} ms, load after: $(cut -d' ' -f1-3 /proc/loadavg)"
