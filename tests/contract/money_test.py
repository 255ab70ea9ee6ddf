#!/usr/bin/python3
"""Money as a budget tool reads it (docs/api.md "Money"): every priced answer names its
currency and catalog version; every amount is a whole number of cents and every rate a whole
number of millionths of a dollar; every total listed with its parts is their sum to the cent,
in JSON and in CSV, for each planner; CSV figures equal the JSON ones.

usage: money_test.py GPUCOST_BINARY
Prints one line per check and ends with 'N passed, M failed'.
"""
import csv
import io
import json
import os
import sys
import urllib.error
import urllib.request
from decimal import Decimal

sys.path.insert(0, os.path.dirname(__file__))
import serve  # noqa: E402

BINARY = sys.argv[1]
results = []


def check(ok, what):
    results.append(bool(ok))
    print(("ok - " if ok else "not ok - ") + what, flush=True)


def post(base, path, body, accept="application/json"):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "Accept": accept})
    with urllib.request.urlopen(req, timeout=60) as r:
        raw = r.read().decode()
        return json.loads(raw, parse_float=Decimal) if accept == "application/json" else raw


def cents(value):
    """A JSON number as whole cents; None when it has more than two decimals."""
    scaled = Decimal(value) * 100
    return int(scaled) if scaled == scaled.to_integral_value() else None


def is_rate_key(key):
    return "_usd_per_hour" in key or "_per_gb" in key or key.startswith("usd_per_") or \
        "usd_per_million" in key or key.endswith("usd_per_accelerator_hour")


def is_amount_key(key):
    return not is_rate_key(key) and (key.endswith("_usd") or key.endswith("_usd_per_month") or
                                     "_usd_p" in key or key == "usd")


def money_figures(value, path="$"):
    """(path, key, number) for every money figure in an answer, assumptions aside (they echo
    the request and the constants as used)."""
    if isinstance(value, dict):
        for key, v in value.items():
            if key == "assumptions":
                continue
            if isinstance(v, (int, Decimal)) and not isinstance(v, bool):
                if is_amount_key(key) or is_rate_key(key):
                    yield f"{path}.{key}", key, v
            else:
                yield from money_figures(v, f"{path}.{key}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from money_figures(v, f"{path}[{i}]")


def check_precision(name, answer):
    bad = []
    count = 0
    for path, key, v in money_figures(answer):
        count += 1
        if is_rate_key(key):
            if (Decimal(v) * 10**6) != (Decimal(v) * 10**6).to_integral_value():
                bad.append(f"{path}={v}")
        elif cents(v) is None:
            bad.append(f"{path}={v}")
    check(count > 0 and not bad,
          f"{name}: {count} money figures, amounts to the cent and rates to 1e-6 USD" +
          ("" if not bad else ": " + ", ".join(bad[:5])))


def check_labels(name, answer):
    check(answer.get("currency") == "USD", f"{name}: currency is USD")
    check(bool(answer.get("catalog_version")), f"{name}: names its catalog_version")


def csv_rows(text):
    return list(csv.DictReader(io.StringIO(text)))


def training(base):
    body = {"model": {"params_b": 7}, "tokens_b": 300, "limit": 10,
            "constraints": {"price_types": ["on_demand", "spot"]},
            "data": {"stored_gb": 1236, "egress_gb": 250},
            "start_date": "2026-12-20"}
    plan = post(base, "/v1/plans/training", body)
    check_labels("training plan", plan)
    check_precision("training plan", plan)
    b = plan["budget"]
    parts = [cents(b["compute_usd"]), cents(b["storage_usd"] or 0), cents(b["egress_usd"] or 0)]
    check(sum(parts) == cents(b["total_usd"]),
          f"training budget: compute {b['compute_usd']} + storage {b['storage_usd']} + egress "
          f"{b['egress_usd']} = total {b['total_usd']}")
    check(b["storage_usd"] is not None and b["egress_usd"] is not None,
          "training budget prices the data (storage and egress listed)")
    months = [cents(m["usd"]) for m in b["monthly"]]
    check(len(months) >= 2 and sum(months) == cents(b["total_usd"]),
          f"training budget: the {len(months)} months add up to the total {b['total_usd']}")
    check(cents(b["compute_usd"]) == cents(plan["recommendation"]["expected_cost_usd"]),
          "training budget: compute is the recommendation's expected cost")
    rows = csv_rows(post(base, "/v1/plans/training", body, "text/csv"))
    check(len(rows) == len(plan["options"]), f"training CSV: {len(rows)} rows, one per option")
    same = all(
        cents(row[k]) == cents(o[k])
        for row, o in zip(rows, plan["options"])
        for k in ("cost_usd", "expected_cost_usd", "cost_usd_p10", "cost_usd_p50", "cost_usd_p90"))
    check(same, "training CSV: every cost column equals the JSON option's, to the cent")
    check(all(row["currency"] == "USD" and row["catalog_version"] == plan["catalog_version"]
              for row in rows), "training CSV: currency and catalog_version on every row")
    check(all(row["verified"] in ("true", "false") and row["as_of"] for row in rows),
          "training CSV: price date and verified on every row")


def spot(base):
    body = {"job_hours": 240, "on_demand_usd_per_hour": 98.32, "spot_usd_per_hour": 29.4917,
            "interruptions_per_hour": 0.013, "nodes": 3, "checkpoint_minutes": 7,
            "restart_minutes": 11}
    plan = post(base, "/v1/plans/spot", body)
    check_labels("spot plan", plan)
    check_precision("spot plan", plan)
    check(cents(plan["on_demand_cost_usd"]) - cents(plan["expected_spot_cost_usd"]) ==
          cents(plan["expected_savings_usd"]),
          f"spot: on-demand {plan['on_demand_cost_usd']} - spot {plan['expected_spot_cost_usd']}"
          f" = saving {plan['expected_savings_usd']}")


def rent_vs_buy(base):
    offerings = json.loads(urllib.request.urlopen(
        base + "/v1/offerings?accelerator=h100-sxm&price_type=on_demand&limit=1", timeout=30
    ).read())["items"]
    body = {"buy": {"accelerator": "h100-sxm", "total_accelerators": 16,
                    "purchase_price_usd_per_accelerator": 27333.33, "utilization": 0.63},
            "rent": {"offering_id": offerings[0]["id"], "accelerator_hours_per_month": 7358},
            "horizon_months": 37}
    plan = post(base, "/v1/plans/rent-vs-buy", body)
    check_labels("rent-vs-buy plan", plan)
    check_precision("rent-vs-buy plan", plan)
    own = cents(plan["capex_usd"]) + cents(plan["opex_usd_per_month"]) * plan["horizon_months"] \
        - cents(plan["residual_value_at_horizon_usd"])
    check(own == cents(plan["total_own_usd"]),
          f"rent vs buy: capex + {plan['horizon_months']} x opex - resale = total own "
          f"{plan['total_own_usd']}")
    check(cents(plan["monthly_rent_usd"]) * plan["rent_billed_months"] ==
          cents(plan["total_rent_usd"]), "rent vs buy: monthly rent x billed months = total rent")
    last = plan["cumulative"][-1]
    check(cents(last["own_net_of_resale_usd"]) == cents(plan["total_own_usd"]),
          "rent vs buy: the series ends at the total own cost")
    check(all(cents(p["own_usd"]) == cents(plan["capex_usd"]) +
              cents(plan["opex_usd_per_month"]) * p["month"] for p in plan["cumulative"]),
          "rent vs buy: every month's own cost is capex + months x opex")
    check(all(cents(r["monthly_usd"]) * r["billed_months"] == cents(r["total_usd"])
              for r in plan["rent_options"]) and plan["rent_options"],
          f"rent vs buy: each of {len(plan['rent_options'])} rent options' total is monthly x months")
    rows = csv_rows(post(base, "/v1/plans/rent-vs-buy", body, "text/csv"))
    check(len(rows) == len(plan["cumulative"]) and all(
        cents(row[k]) == cents(p[k]) for row, p in zip(rows, plan["cumulative"])
        for k in ("rent_usd", "own_usd", "own_net_of_resale_usd")),
          "rent vs buy CSV: the series equals the JSON one, to the cent")
    check(all(row["currency"] == "USD" and row["catalog_version"] == plan["catalog_version"]
              for row in rows), "rent vs buy CSV: currency and catalog_version on every row")


def inference(base):
    body = {"model": {"params_b": 8}, "input_tokens": 1500, "output_tokens": 300,
            "traffic": {"requests_per_second": 3.7}, "limit": 8}
    plan = post(base, "/v1/plans/inference", body)
    check_labels("inference plan", plan)
    check_precision("inference plan", plan)
    rows = csv_rows(post(base, "/v1/plans/inference", body, "text/csv"))
    check(len(rows) == len(plan["options"]) and all(
        cents(row["monthly_cost_usd"]) == cents(o["monthly_cost_usd"])
        for row, o in zip(rows, plan["options"])),
          "inference CSV: monthly cost equals the JSON option's, to the cent")
    check(all(row["currency"] == "USD" and row["catalog_version"] == plan["catalog_version"]
              and row["as_of"] for row in rows),
          "inference CSV: currency, catalog_version and price date on every row")
    # The budget view: 3 calendar months from 20 December, so part months first and last.
    dated = post(base, "/v1/plans/inference", dict(body, start_date="2026-12-20", budget_months=3))
    check_precision("inference plan with a budget view", dated)
    b = dated["budget"]
    months = [cents(m["usd"]) for m in b["monthly"]]
    check([m["month"] for m in b["monthly"]] == ["2026-12", "2027-01", "2027-02", "2027-03"] and
          b["end_date"] == "2027-03-20" and sum(months) == cents(b["total_usd"]),
          f"inference budget: the {len(months)} months add up to the total {b['total_usd']}")
    days = [12, 31, 28, 19]
    check(abs(cents(b["total_usd"]) - sum(days) * Decimal(b["usd_per_day"]) * 100) <= Decimal("0.5") and
          all(abs(c - d * Decimal(b["usd_per_day"]) * 100) <= 1 for c, d in zip(months, days)),
          f"inference budget: each month its days x usd_per_day {b['usd_per_day']} within a cent, "
          "the total 90 days of it to the cent")
    check(Decimal(b["usd_per_day"]) == Decimal(dated["recommendation"]["cluster_usd_per_hour"]) * 24,
          "inference budget: usd_per_day is the recommendation's cluster_usd_per_hour x 24")


proc, port = serve.start(BINARY)
check(port is not None, "server started")
try:
    if port is not None:
        base = f"http://127.0.0.1:{port}"
        for planner in (training, spot, rent_vs_buy, inference):
            try:
                planner(base)
            except (urllib.error.HTTPError, KeyError, TypeError) as e:
                detail = e.read().decode()[:300] if isinstance(e, urllib.error.HTTPError) else ""
                check(False, f"{planner.__name__}: {e!r} {detail}")
finally:
    proc.terminate()
    proc.wait(timeout=10)
print(f"{results.count(True)} passed, {results.count(False)} failed")
sys.exit(0 if all(results) else 1)
