#!/usr/bin/env bash
# Saves the answers of a fixed set of requests (training estimates: searched, fixed, MoE,
# LoRA, QLoRA, not fitting; inference estimates incl. MoE and serving; training plans incl.
# MoE, QLoRA and CSV; inference, spot and rent-vs-buy plans; problems from the request
# reader), so a speed change can show that it changes no answer: run it with the binary
# before and after, then compare the two directories. With CATALOG_DIR the binary serves
# that catalog (--catalog-dir; e.g. tests/bench/make_scale_catalog.py's 20,000 offerings,
# whose copy 0 is the seed, so every request still finds its offerings).
#   usage: tests/bench/same_answers.sh BINARY OUT_DIR [CATALOG_DIR]
#          tests/bench/same_answers.sh --compare DIR_A DIR_B   (request ids aside)
set -euo pipefail
# shellcheck source=tests/bench/gpucost_port.sh
source "$(dirname "$0")/gpucost_port.sh"
if [[ ${1:-} == --compare ]]; then
    a=$2 b=$3 bad=0
    for f in "$a"/*; do
        n=$(basename "$f")
        if ! diff -q <(sed 's/"request_id":"[^"]*"//' "$f") <(sed 's/"request_id":"[^"]*"//' "$b/$n") >/dev/null; then
            echo "DIFFERENT: $n"
            bad=1
        fi
    done
    [[ $bad == 0 ]] && echo "all $(ls "$a" | wc -l) files identical"
    exit $bad
fi
bin=$1 out=$2 catalog=()
[[ -n ${3:-} ]] && catalog=(--catalog-dir "$3")
mkdir -p "$out"
log=$(mktemp)
"$bin" --port 0 --access-log false "${catalog[@]}" 2>"$log" >/dev/null &
pid=$!
trap 'kill $pid; wait $pid 2>/dev/null; rm -f "$log"' EXIT
port=$(gpucost_port "$log") || { echo "server did not start"; cat "$log"; exit 1; }
b="http://127.0.0.1:$port"
i=0
req() {  # $1: path, $2: body
  i=$((i+1)); curl -s -H 'Content-Type: application/json' -d "$2" "$b$1" -o "$out/$i.json" -w "%{http_code}\n" > "$out/$i.code"; }
reqcsv() { i=$((i+1)); curl -s -H "Accept: text/csv" -H "Content-Type: application/json" -d "$2" "$b$1" -o "$out/$i.json" -w "%{http_code}\n" > "$out/$i.code"; }
T=/v1/estimates/training; I=/v1/estimates/inference
req $T '{"model": {"params_b": 8}, "tokens_b": 1000, "hardware": {"accelerator": "h100-sxm", "total_accelerators": 64}}'
req $T '{"model": {"params_b": 65.2, "layers": 80, "hidden_size": 8192, "attention_heads": 64, "kv_heads": 64, "ffn_hidden_size": 22016, "vocab_size": 32000, "seq_len": 2048, "gated_mlp": true}, "tokens_b": 1400, "hardware": {"accelerator": "a100-sxm4-80gb", "total_accelerators": 2048}}'
req $T '{"model": {"params_b": 65.2, "layers": 80, "hidden_size": 8192, "attention_heads": 64, "kv_heads": 64, "ffn_hidden_size": 22016, "vocab_size": 32000, "seq_len": 2048, "gated_mlp": true}, "tokens_b": 1400, "hardware": {"accelerator": "a100-sxm4-80gb", "total_accelerators": 2048}, "parallelism": {"tensor": 8, "pipeline": 4, "data": 64, "zero_stage": 1, "recompute": "selective"}}'
req $T '{"model": {"id": "deepseek-v3"}, "tokens_b": 1000, "hardware": {"accelerator": "h100-sxm", "total_accelerators": 2048}}'
req $T '{"model": {"id": "deepseek-v3"}, "tokens_b": 100, "hardware": {"accelerator": "h200-sxm", "total_accelerators": 256}, "precision": "fp8"}'
req $T '{"model": {"id": "llama-3.1-70b"}, "tokens_b": 1, "hardware": {"accelerator": "h100-sxm", "total_accelerators": 8}, "mode": "lora"}'
req $T '{"model": {"id": "llama-3.1-70b"}, "tokens_b": 1, "hardware": {"accelerator": "a100-sxm4-80gb", "total_accelerators": 1}, "mode": "qlora", "lora_rank": 16}'
req $T '{"model": {"id": "llama-3.1-8b"}, "tokens_b": 10, "hardware": {"accelerator": "h100-sxm", "total_accelerators": 8}, "mode": "full_finetune", "flash_attention": false}'
req $T '{"model": {"params_b": 400}, "tokens_b": 10, "hardware": {"accelerator": "h100-sxm", "total_accelerators": 8}}'
req $T '{"model": {"id": "mixtral-8x7b"}, "tokens_b": 100, "hardware": {"accelerator": "h100-sxm", "total_accelerators": 64}}'
req $I '{"model": {"params_b": 70, "layers": 80, "hidden_size": 8192, "kv_heads": 8, "gated_mlp": true}, "hardware": {"accelerator": "h100-sxm", "total_accelerators": 2}, "precision": "fp8", "batch_size": 1, "input_tokens": 1000, "output_tokens": 200}'
req $I '{"model": {"params_b": 70, "layers": 80, "hidden_size": 8192, "kv_heads": 8, "gated_mlp": true}, "hardware": {"accelerator": "h100-sxm", "total_accelerators": 2}, "precision": "fp8", "batch_size": 1, "input_tokens": 1000, "output_tokens": 200, "concurrency": 8}'
req $I '{"model": {"id": "deepseek-v3"}, "hardware": {"accelerator": "h200-sxm", "total_accelerators": 8}, "precision": "fp8", "batch_size": 4, "input_tokens": 2000, "output_tokens": 500, "requests_per_second": 3}'
req $I '{"model": {"params_b": 7}, "hardware": {"accelerator": "h100-sxm", "total_accelerators": 1}, "batch_size": 1, "input_tokens": 100, "output_tokens": 100}'
req /v1/plans/training '{"model": {"params_b": 7}, "tokens_b": 1000, "precision": "bf16", "constraints": {"deadline_hours": 720, "budget_usd": 150000, "price_types": ["on_demand", "spot"]}, "sort": "expected_cost", "limit": 3}'
req /v1/plans/training '{"model": {"id": "deepseek-v3"}, "tokens_b": 100, "constraints": {"price_types": ["on_demand", "spot", "commit_1y"]}, "limit": 10, "include_infeasible": true}'
req /v1/plans/training '{"model": {"id": "llama-3.1-70b"}, "tokens_b": 1, "mode": "qlora", "limit": 5}'
req /v1/plans/training '{"model": {"params_b": 1}, "tokens_b": 10, "constraints": {"accelerators": ["h100-sxm"]}}'
req /v1/plans/inference '{"model": {"params_b": 7}, "input_tokens": 1000, "output_tokens": 250, "traffic": {"requests_per_second": 1}, "constraints": {"accelerators": ["h100-sxm"]}}'
req /v1/plans/inference '{"model": {"id": "llama-3.1-70b"}, "input_tokens": 2000, "output_tokens": 500, "traffic": {"requests_per_second": 20}}'
req /v1/plans/spot '{"job_hours": 100, "on_demand_usd_per_hour": 98.32, "spot_usd_per_hour": 30, "interruptions_per_hour": 0.1, "checkpoint_minutes": 3, "restart_minutes": 6}'
reqcsv /v1/plans/training '{"model": {"params_b": 7}, "tokens_b": 1000}'
req '/v1/estimates/training?assumptions=summary' '{"model": {"id": "deepseek-v3"}, "tokens_b": 1000, "hardware": {"accelerator": "h100-sxm", "total_accelerators": 2048}}'
# Model warnings (params_b against a structure that counts more), a budget view with data
# prices, nothing feasible (binding constraints), and the ?assumptions= detail levels.
W='"model": {"params_b": 30, "layers": 80, "hidden_size": 8192, "attention_heads": 64, "kv_heads": 8, "ffn_hidden_size": 28672, "vocab_size": 128256, "seq_len": 8192, "gated_mlp": true}'
req $T "{$W, \"tokens_b\": 100, \"hardware\": {\"accelerator\": \"h100-sxm\", \"total_accelerators\": 64}}"
req $I "{$W, \"hardware\": {\"accelerator\": \"h100-sxm\", \"total_accelerators\": 4}, \"input_tokens\": 1000, \"output_tokens\": 200}"
req /v1/plans/training "{$W, \"tokens_b\": 100, \"data\": {\"stored_gb\": 500, \"egress_gb\": 100}, \"start_date\": \"2026-01-15\", \"limit\": 2, \"uncertainty\": {\"price_spread_fraction\": 0.2}}"
req /v1/plans/training '{"model": {"params_b": 70}, "tokens_b": 15000, "constraints": {"deadline_hours": 24, "budget_usd": 1000}, "limit": 2}'
req '/v1/plans/training?assumptions=summary' '{"model": {"params_b": 7}, "tokens_b": 1000, "limit": 1}'
req '/v1/plans/training?assumptions=none' '{"model": {"params_b": 7}, "tokens_b": 1000, "limit": 1, "offset": 2, "sort": "time"}'
req '/v1/estimates/inference?assumptions=none' '{"model": {"id": "llama-3.1-8b"}, "hardware": {"accelerator": "h100-sxm", "total_accelerators": 1}, "input_tokens": 100, "output_tokens": 100}'
req /v1/plans/inference "{$W, \"input_tokens\": 1000, \"output_tokens\": 250, \"traffic\": {\"requests_per_second\": 2}, \"limit\": 2}"
# Problems from the request reader: an unknown member (with the list of known ones), an
# escaped pointer, a wrong type, a missing field.
req $T '{"model": {"params_b": 8, "bogus": 1}, "tokens_b": 1000, "hardware": {"accelerator": "h100-sxm", "total_accelerators": 64}}'
req $T '{"model": {"params_b": 8}, "tokens_b": 1000, "hardware": {"accelerator": "h100-sxm", "total_accelerators": 64}, "a/b~c": 1}'
req /v1/plans/training '{"model": {"params_b": 7}, "tokens_b": 1000, "constraints": {"deadline_hours": "soon"}}'
req $I '{"model": {"params_b": 7}, "hardware": {"accelerator": "h100-sxm", "total_accelerators": 1}, "output_tokens": 100}'
# Inference plans with no option meeting the targets, and on spot capacity (spare replicas).
req /v1/plans/inference '{"model": {"params_b": 70}, "input_tokens": 1000, "output_tokens": 250, "traffic": {"requests_per_second": 1}, "latency": {"max_time_to_first_token_ms": 0.001}}'
req /v1/plans/inference '{"model": {"params_b": 8}, "input_tokens": 1000, "output_tokens": 250, "traffic": {"requests_per_second": 5}, "constraints": {"price_types": ["spot"]}, "limit": 3}'
# Spot plans from catalog offerings (spot risk bucket, offering ids) with a deadline, and
# for a training workload.
req /v1/plans/spot '{"spot_offering_id": "aws-p5.48xlarge-us-east-1-spot", "on_demand_offering_id": "aws-p5.48xlarge-us-east-1-on-demand", "nodes": 4, "job_hours": 200, "deadline_hours": 260}'
req '/v1/plans/spot?assumptions=summary' '{"spot_offering_id": "aws-p5.48xlarge-us-east-1-spot", "nodes": 2, "workload": {"model": {"params_b": 7}, "tokens_b": 100}}'
# Rent-vs-buy: given figures; a catalog accelerator against a catalog offering (rent options,
# utilisation); the cumulative series as CSV.
req /v1/plans/rent-vs-buy '{"buy": {"capex_usd": 800000, "opex_usd_per_month": 5000, "total_accelerators": 80}, "rent": {"usd_per_month": 20000}}'
req /v1/plans/rent-vs-buy '{"buy": {"accelerator": "h100-sxm", "total_accelerators": 8}, "rent": {"offering_id": "aws-p5.48xlarge-us-east-1-on-demand", "accelerator_hours_per_month": 4000}, "horizon_months": 48, "discount_rate_annual": 0.08}'
reqcsv /v1/plans/rent-vs-buy '{"buy": {"capex_usd": 800000, "opex_usd_per_month": 5000, "total_accelerators": 80}, "rent": {"usd_per_month": 20000}}'
# Options that break constraints (violations listed), a spot plan on an open-ended bucket
# (ranges), and serving options as CSV.
req /v1/plans/training '{"model": {"params_b": 70}, "tokens_b": 15000, "constraints": {"deadline_hours": 24}, "include_infeasible": true, "limit": 2}'
req /v1/plans/spot '{"job_hours": 336, "spot_offering_id": "aws-p5.48xlarge-us-east-1-spot", "nodes": 8, "deadline_hours": 384}'
reqcsv /v1/plans/inference '{"model": {"id": "llama-3.1-70b"}, "input_tokens": 2000, "output_tokens": 500, "traffic": {"requests_per_second": 20}, "limit": 5}'
# Training plans whose options are mostly infeasible or skipped, where the planner works per
# price class (pricing/plan/training_pricing.cpp): the infeasible options paged by cost; capacity
# blocks, commitments and spot with data costs by time; a spot budget that binds in probability.
req /v1/plans/training '{"model": {"params_b": 7}, "tokens_b": 1000, "constraints": {"deadline_hours": 720, "budget_usd": 150000, "price_types": ["on_demand", "spot"]}, "include_infeasible": true, "offset": 40, "limit": 5, "sort": "cost"}'
req /v1/plans/training '{"model": {"params_b": 70}, "tokens_b": 2000, "constraints": {"price_types": ["capacity_block", "commit_1y", "spot"], "budget_usd": 2000000, "deadline_hours": 400}, "data": {"stored_gb": 1000, "egress_gb": 200}, "sort": "time", "limit": 4}'
req /v1/plans/training '{"model": {"params_b": 7}, "tokens_b": 1000, "constraints": {"budget_usd": 9000, "budget_confidence": 0.99, "price_types": ["spot"]}, "limit": 2}'
echo "$i requests; codes: $(cat $out/*.code | sort | uniq -c | tr '\n' ' ')"
