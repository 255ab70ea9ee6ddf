#!/usr/bin/env bash
# The catalog at its real size, embedded mode: builds synthetic catalogs of 187 (the
# seed), 1k, 5k and 20k offerings (tests/bench/make_scale_catalog.py: the seed's offerings
# copied into more regions, same hardware shapes), serves each with the binary
# (--catalog-dir) and prints one table: the full-catalog training plan's p50 with 1 client and
# plans/s with 8, GET /v1/catalog's p50, instructions of both (callgrind, 187 and 20k only), the
# offerings list without filters sorted by price (limit=100), and RSS after start and after the
# load. Then the ratios 20k / 187 that docs/performance.md's targets name. Finally the database
# half, tests/bench/scale_pg_bench.py, when that script and PostgreSQL are there.
#   usage: tests/bench/scale_bench.sh [BINARY] [SECONDS_PER_ROW]
# Needs wrk, curl, python3 and valgrind. SECONDS_PER_ROW defaults to 5: about 7 minutes in all
# at 2 cores, half of it the callgrind runs.
set -euo pipefail
# shellcheck source=tests/bench/gpucost_port.sh
source "$(dirname "$0")/gpucost_port.sh"
binary=${1:-build/release/service/gpucost}
seconds=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
seed="$here/../../schema/seed"
for tool in wrk curl python3 valgrind; do
    command -v "$tool" >/dev/null || { echo "$tool is not installed"; exit 1; }
done
work=$(mktemp -d)
pid=""
trap '[[ -n "$pid" ]] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

plan='{"model": {"params_b": 7}, "tokens_b": 1000, "precision": "bf16", "constraints": {"deadline_hours": 720, "budget_usd": 150000, "price_types": ["on_demand", "spot"]}, "sort": "expected_cost", "limit": 3}'
cat >"$work/plan.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = [[$plan]]
LUA
offerings_path="/v1/offerings?sort=usd_per_accelerator_hour&limit=100"

# Starts the binary on catalog directory $1 (extra flags after it); sets pid and base.
start() {
    local dir=$1 log="$work/server.log" port
    shift
    "$binary" --port 0 --catalog-dir "$dir" --access-log false \
        --max-connections-per-address 900 "$@" 2>"$log" >/dev/null &
    pid=$!
    port=$(gpucost_port "$log" 1000) || { echo "server did not start on $dir"; cat "$log"; exit 1; }
    base="http://127.0.0.1:$port"
}
stop() { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=""; }
rss_mb() { awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$pid/status"; }

# wrk's latency ("750.00us", "1.94ms", "2.01s") in milliseconds.
to_ms() {
    awk -v t="$1" 'BEGIN {
        v = t + 0
        if (t ~ /us$/) v /= 1000; else if (t ~ /ms$/) v += 0; else if (t ~ /s$/) v *= 1000
        printf "%.3f", v }'
}
# $1: connections, $2: path, $3: lua script or "" -> "p50_ms req_per_s"
measure() {
    local args=(-t1 -c"$1" -d"${seconds}s" --timeout 10s --latency) out
    [[ -n "${3:-}" ]] && args+=(-s "$3")
    out=$(wrk "${args[@]}" "$base$2")
    if grep -q 'Non-2xx' <<<"$out"; then echo "non-2xx answers from $2" >&2; exit 1; fi
    echo "$(to_ms "$(awk '$1=="50%" {print $2}' <<<"$out")") $(awk '/Requests\/sec/ {printf "%.0f", $2}' <<<"$out")"
}

# Instructions per request to $2 (POST body $3, else GET) on catalog $1 under callgrind: 11
# requests minus a run with 1, so one-off work (a per-version summary, the first use of a
# cache) is not counted as every request's.
instructions() {
    local dir=$1 path=$2 body=${3:-} total idle
    run_callgrind() {  # $1: request count
        local out="$work/callgrind.out" log="$work/cg.log" port=""
        valgrind --tool=callgrind --callgrind-out-file="$out" "$binary" --port 0 --threads 2 \
            --catalog-dir "$dir" --access-log false 2>"$log" >/dev/null &
        local cg=$!
        for _ in $(seq 1200); do
            port=$(grep -so '"port":[0-9]*' "$log" | head -1 | cut -d: -f2 || true)
            [[ -n "$port" ]] && break
            sleep 0.1
        done
        [[ -n "$port" ]] || { echo "server did not start under callgrind" >&2; exit 1; }
        for _ in $(seq "$1"); do
            if [[ -n "$body" ]]; then
                curl -sf -o /dev/null -H 'Content-Type: application/json' -d "$body" \
                    "http://127.0.0.1:$port$path"
            else
                curl -sf -o /dev/null "http://127.0.0.1:$port$path"
            fi
        done
        kill -TERM "$cg"
        wait "$cg" || true
        callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
    }
    idle=$(run_callgrind 1)
    total=$(run_callgrind 11)
    awk -v a="$total" -v b="$idle" 'BEGIN {printf "%.2f", (a - b) / 10 / 1e6}'
}

echo "gpucost $("$binary" version | cut -d' ' -f2) on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "embedded mode, --catalog-dir of synthetic catalogs; wrk keep-alive -t1, ${seconds}s per row"
echo
declare -A plan_p50 catalog_p50 catalog_minstr plan_minstr rows
sizes=(187 1000 5000 20000)
for n in "${sizes[@]}"; do
    python3 "$here/make_scale_catalog.py" "$seed" "$work/catalog-$n" "$n"
    start "$work/catalog-$n"
    rss_start=$(rss_mb)
    read -r p1 _ < <(measure 1 /v1/plans/training "$work/plan.lua")
    read -r _ rps8 < <(measure 8 /v1/plans/training "$work/plan.lua")
    read -r cat_p50 _ < <(measure 1 /v1/catalog "")
    read -r off_p50 _ < <(measure 1 "$offerings_path" "")
    rss_end=$(rss_mb)
    stop
    minstr="-"
    plan_instr="-"
    if [[ $n == 187 || $n == 20000 ]]; then
        minstr="$(instructions "$work/catalog-$n" /v1/catalog) M"
        catalog_minstr[$n]=${minstr% M}
        plan_instr="$(instructions "$work/catalog-$n" /v1/plans/training "$plan") M"
        plan_minstr[$n]=${plan_instr% M}
    fi
    plan_p50[$n]=$p1
    catalog_p50[$n]=$cat_p50
    rows[$n]="| $n | $p1 ms ($plan_instr) | $rps8 | $cat_p50 ms ($minstr) | $off_p50 ms | $rss_start / $rss_end MB |"
done
echo "| offerings | training plan, 1 client, p50 (instructions) | plans/s, 8 clients | /v1/catalog p50 (instructions) | offerings, no filter, sort, limit=100, p50 | RSS after start / after load |"
echo "|---|---|---|---|---|---|"
for n in "${sizes[@]}"; do echo "${rows[$n]}"; done
echo
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2fx", a / b}'; }
echo "20k / 187: training plan p50 $(ratio "${plan_p50[20000]}" "${plan_p50[187]}")" \
     "and instructions $(ratio "${plan_minstr[20000]}" "${plan_minstr[187]}") (target <= 2x)," \
     "/v1/catalog p50 $(ratio "${catalog_p50[20000]}" "${catalog_p50[187]}")" \
     "and instructions $(ratio "${catalog_minstr[20000]}" "${catalog_minstr[187]}") (target <= 2x);" \
     "RSS after load at 20k: see the last row (target <= 100 MB)"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
pg_bench="$here/scale_pg_bench.py"
if [[ -f "$pg_bench" ]] && { command -v pg_ctl >/dev/null || command -v postgres >/dev/null ||
                             compgen -G '/usr/lib/postgresql/*/bin/pg_ctl' >/dev/null; }; then
    echo "database mode (tests/bench/scale_pg_bench.py):"
    python3 "$pg_bench" --bin "$binary"
else
    echo "database mode: skipped ($( [[ -f "$pg_bench" ]] && echo "PostgreSQL not found" || echo "tests/bench/scale_pg_bench.py not present"))"
fi
