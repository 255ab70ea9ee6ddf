#!/usr/bin/env python3
"""Bad-input test against the real binary (embedded mode).

Sends a fixed-seed corpus of malformed and hostile requests to every POST endpoint and a few
GET ones: random member names and values of every JSON type, mutations of valid requests,
huge and negative numbers, deep nesting, duplicate keys, invalid UTF-8, non-object bodies, odd
query strings. Checks the promise of the API (docs/api.md "Errors"): never a 5xx, never a hang,
every error is application/problem+json with a status and a code, and the server still answers
and exits cleanly on SIGTERM afterwards.

Usage: bad_input_test.py <gpucost binary> [cases]
Prints `ok - ...` / `not ok - ...` per check and `N passed, M failed`; exits 1 on a failure.
"""
import json
import os
import random
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
import serve  # noqa: E402

BINARY = sys.argv[1]
CASES = int(sys.argv[2]) if len(sys.argv) > 2 else 1500
passed = 0
failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok - {what}")
    else:
        failed += 1
        print(f"not ok - {what}")
    return ok


proc, port = serve.start(BINARY, stdout=subprocess.DEVNULL)
if not check(port is not None, "server started and logged its port"):
    print(f"{passed} passed, {failed} failed")
    sys.exit(1)
BASE = f"http://127.0.0.1:{port}"

POSTS = ["/v1/estimates/training", "/v1/estimates/inference", "/v1/estimates/roofline",
         "/v1/plans/training", "/v1/plans/spot", "/v1/plans/rent-vs-buy", "/v1/plans/inference"]
VALID = {
    "/v1/estimates/training": {"model": {"params_b": 7}, "tokens_b": 100,
                               "hardware": {"accelerator": "h100-sxm", "total_accelerators": 64}},
    "/v1/estimates/inference": {"model": {"params_b": 7},
                                "hardware": {"accelerator": "h100-sxm", "total_accelerators": 1},
                                "batch_size": 1, "input_tokens": 100, "output_tokens": 100},
    "/v1/estimates/roofline": {"accelerator": "h100-sxm", "precision": "bf16",
                               "ops": [{"kind": "gemm", "m": 8192, "n": 8192, "k": 8192}]},
    "/v1/plans/training": {"model": {"params_b": 1}, "tokens_b": 10,
                           "constraints": {"accelerators": ["h100-sxm"]}},
    "/v1/plans/spot": {"job_hours": 100, "on_demand_usd_per_hour": 98.32,
                       "spot_usd_per_hour": 30, "interruptions_per_hour": 0.1,
                       "checkpoint_minutes": 3, "restart_minutes": 6},
    "/v1/plans/rent-vs-buy": {"buy": {"capex_usd": 800000, "opex_usd_per_month": 5000},
                              "rent": {"usd_per_month": 20000}},
    "/v1/plans/inference": {"model": {"params_b": 7}, "input_tokens": 1000,
                            "output_tokens": 250, "traffic": {"requests_per_second": 1},
                            "constraints": {"accelerators": ["h100-sxm"]}},
}
KEYS = ["model", "params_b", "active_params_b", "layers", "hidden_size", "attention_heads",
        "kv_heads", "ffn_hidden_size", "vocab_size", "seq_len", "tokens_b", "hardware",
        "accelerator", "total_accelerators", "accelerator_count", "precision", "parallelism", "tensor", "pipeline", "data",
        "zero_stage", "recompute", "micro_batch_size", "batch_size", "input_tokens",
        "output_tokens", "ops", "kind", "m", "n", "k", "bytes_read", "flops", "job_hours",
        "spot_usd_per_hour", "on_demand_usd_per_hour", "interruptions_per_hour",
        "checkpoint_minutes", "restart_minutes", "deadline_hours", "buy", "rent", "capex_usd",
        "usd_per_month", "horizon_months", "discount_rate_annual", "constraints", "traffic",
        "requests_per_second", "tokens_per_day", "latency", "limit", "offset", "sort",
        "global_batch_tokens", "goodput", "efficiency", "workload", "node_counts"]
VALUES = [None, 0, -1, 1, 2, 7, 8, 1.5, -0.5, 1e-320, 1e308, -1e308, 2**31, 2**53 + 1, 2**63,
          2**64 + 5, "", "x", "h100-sxm", "bf16", "fp4", "full", "spot", "\u00e9\u4e2d",
          "a" * 300, True, False, [], [1, 2], ["h100-sxm", 3], {}, {"a": 1}]


NUMBERS = [v for v in VALUES if isinstance(v, (int, float)) and not isinstance(v, bool)]


def value(rng, depth):
    if depth < 3 and rng.random() < 0.25:
        return {rng.choice(KEYS): value(rng, depth + 1) for _ in range(rng.randint(1, 4))}
    if depth < 3 and rng.random() < 0.08:
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return rng.choice(VALUES)


def mutate(rng, body, depth=0):
    body = json.loads(json.dumps(body))
    target = body
    while isinstance(target, dict) and target and rng.random() < 0.5 and depth < 3:
        key = rng.choice(list(target))
        if isinstance(target[key], dict):
            target = target[key]
            depth += 1
        else:
            break
    if isinstance(target, dict):
        op = rng.random()
        if op < 0.35 and target:
            # Right type, hostile value: reaches the range checks behind the type checks.
            key = rng.choice(list(target))
            if isinstance(target[key], (int, float)) and not isinstance(target[key], bool):
                target[key] = rng.choice(NUMBERS)
            else:
                target[key] = value(rng, depth)
        elif op < 0.6 and target:
            target[rng.choice(list(target))] = value(rng, depth)
        elif op < 0.8 and target:
            del target[rng.choice(list(target))]
        else:
            target[rng.choice(KEYS)] = value(rng, depth)
    return body


def send(method, path, body=None, headers=None):
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    req = urllib.request.Request(BASE + path, data=data, method=method,
                                 headers=headers or {"Content-Type": "application/json"})
    started = time.time()
    try:
        with urllib.request.urlopen(req, timeout=15) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read(), time.time() - started
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read(), time.time() - started


rng = random.Random(20261122)
five_xx = []
not_problem = []
slowest = 0.0
statuses = {}


def record(method, path, body, result):
    global slowest
    status, ctype, payload, seconds = result
    slowest = max(slowest, seconds)
    statuses[status] = statuses.get(status, 0) + 1
    if status >= 500:
        five_xx.append((method, path, body if isinstance(body, bytes) else json.dumps(body)[:300],
                        payload[:200]))
    elif status >= 400:
        try:
            problem = json.loads(payload)
            ok = (ctype.startswith("application/problem+json") and problem.get("status") == status
                  and isinstance(problem.get("code"), str) and isinstance(problem.get("detail"), str))
        except ValueError:
            ok = False
        if not ok:
            not_problem.append((method, path, status, payload[:200]))


started = time.time()
for i in range(CASES):
    path = rng.choice(POSTS)
    if rng.random() < 0.65:
        body = mutate(rng, VALID[path])
        for _ in range(rng.randint(0, 2)):
            body = mutate(rng, body)
    else:
        body = {rng.choice(KEYS): value(rng, 0) for _ in range(rng.randint(0, 6))}
    record("POST", path, body, send("POST", path, body))

RAW = [b"", b"{", b"[]", b"null", b"42", b'"text"', b'{"a":1,"a":2}', b"\xff\xfe{}",
       b'{"model":' + b"[" * 200 + b"]" * 200 + b"}", b'{"tokens_b": 1e999}',
       b'{"model": {"params_b": NaN}}', b"{" + b'"k":1,' * 5000 + b'"z":0}']
for path in POSTS:
    for raw in RAW:
        record("POST", path, raw, send("POST", path, raw))
    record("POST", path, b"{}", send("POST", path, b"{}", {"Content-Type": "text/plain"}))
# The model member's other forms: library ids, ids with overrides, Hugging Face configs with
# hostile values (a fixed list, so the seeded corpus above stays as it was).
HF = {"model_type": "deepseek_v3", "hidden_size": 7168, "num_hidden_layers": 61,
      "num_attention_heads": 128, "intermediate_size": 18432, "moe_intermediate_size": 2048,
      "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
      "first_k_dense_replace": 3, "kv_lora_rank": 512, "q_lora_rank": 1536, "vocab_size": 129280}
MODELS = ["llama-3.1-70b", "LLAMA-3.1-70B", "", "x" * 300, "../etc", 7, [], None,
          {"id": "deepseek-v3", "seq_len": 2**31}, {"id": 7}, {"id": "gpt-3-175b", "params_b": 1e-9},
          {"id": "mixtral-8x7b", "experts_per_token": 9}, {"hf_config": "config.json"},
          {"hf_config": {}}, {"id": "phi-4", "hf_config": HF}, {"hf_config": HF}]
for key, hostile in [("num_hidden_layers", 10**9), ("n_routed_experts", 0), ("hidden_size", -1),
                     ("first_k_dense_replace", 61), ("kv_lora_rank", 2**40), ("vocab_size", 1.5),
                     ("num_experts_per_tok", 257), ("layer_types", "sliding"),
                     ("sliding_window", 10**8), ("tie_word_embeddings", "yes")]:
    MODELS.append({"hf_config": dict(HF, **{key: hostile})})
for model in MODELS:
    for path in ("/v1/estimates/training", "/v1/estimates/inference", "/v1/plans/inference"):
        body = dict(VALID[path], model=model)
        record("POST", path, body, send("POST", path, body))
# The serving plan's budget view (start_date, budget_months; a fixed list, so the seeded corpus
# above stays as it was): each bad value is refused with a problem naming its member, 422 for a
# value out of range and 400 for the wrong type, as every member is.
budget_unnamed = []
for key, hostile, want in [("budget_months", 0, 422), ("budget_months", 61, 422),
                           ("budget_months", -1, 422), ("budget_months", 2**40, 422),
                           ("budget_months", 1.5, 400), ("budget_months", "12", 400),
                           ("start_date", "2027-02-30", 422), ("start_date", "27-01-01", 422),
                           ("start_date", "", 422), ("start_date", 20270101, 400)]:
    body = dict(VALID["/v1/plans/inference"], **{key: hostile})
    result = send("POST", "/v1/plans/inference", body)
    record("POST", "/v1/plans/inference", body, result)
    try:
        fields = [e.get("field") for e in json.loads(result[2]).get("errors", [])]
    except (ValueError, AttributeError):
        fields = []
    if result[0] != want or f"/{key}" not in fields:
        budget_unnamed.append(f"{key}={hostile!r} -> {result[0]} {fields}")
check(not budget_unnamed, "the serving budget view's bad start_date and budget_months are refused "
      "naming the member (422 out of range, 400 wrong type)" +
      ("" if not budget_unnamed else ": " + "; ".join(budget_unnamed[:4])))
for path in ["/v1/models?family=", "/v1/models/%00", "/v1/models/" + "a" * 300,
             "/v1/models/llama-2-7b?x=1"]:
    record("GET", path, None, send("GET", path, None, {}))
for path in ["/v1/offerings?limit=-1", "/v1/offerings?limit=99999999999999999999",
             "/v1/offerings?sort=%00", "/v1/offerings?cursor=%ff%fe", "/v1/offerings?provider=",
             "/v1/offerings?min_accelerator_count=1e308", "/v1/offerings/..%2f..%2fetc",
             "/v1/accelerators?precision=fp3", "/v1/offerings?limit=1&limit=2"]:
    record("GET", path, None, send("GET", path, None, {}))
elapsed = time.time() - started

check(not five_xx, f"no 5xx in {sum(statuses.values())} requests (statuses {dict(sorted(statuses.items()))})")
for method, path, body, payload in five_xx[:5]:
    print(f"#   {method} {path} {body!r} -> {payload!r}")
check(not not_problem, "every 4xx is application/problem+json with status, code and detail")
for method, path, status, payload in not_problem[:5]:
    print(f"#   {method} {path} {status} -> {payload!r}")
check(slowest < 10, f"no request took 10 s or more (slowest {slowest:.2f} s; all in {elapsed:.1f} s)")
status, _, _, _ = send("GET", "/healthz", None, {})
check(status == 200, "the server still answers /healthz afterwards")
proc.send_signal(signal.SIGTERM)
try:
    code = proc.wait(timeout=10)
except subprocess.TimeoutExpired:
    proc.kill()
    code = None
check(code == 0, f"the server exits 0 on SIGTERM afterwards (got {code})")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
