"""Plans as FOCUS 1.2 forecasts, end to end: the real binary answers ?format=focus and
Accept: text/csv; profile="focus" with rows that the FOCUS 1.2 checker (focus_validator.py,
from the specification's MUST and SHOULD rules) accepts, file by file and all together as one
dataset, and whose figures add up to the JSON answer's budget month by month, at list and
through a price book: training (on demand, spot, a 1-year commitment, a capacity block, with and
without owned capacity), serving (with and without owned capacity) and rent-vs-buy plans. The
catalog is the seed (schema/seed) with one capacity block added, as the seed has no current
block.

usage: focus_forecast_test.py GPUCOST_BINARY
"""
import csv
import io
import json
import os
import shutil
import sys
import tempfile
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "contract"))
sys.path.insert(0, os.path.dirname(__file__))
import serve  # noqa: E402
from focus_validator import validate, validate_dataset  # noqa: E402

PLAN = {
    "model": {"params_b": 7}, "tokens_b": 200, "precision": "bf16",
    "constraints": {"providers": ["aws"], "price_types": ["on_demand"]},
    "start_date": "2026-12-30",
    "data": {"stored_gb": 500, "egress_gb": 20},
}
BOOK = {"name": "acme EDP", "id": "acme-2026", "version": 3,
        "rules": [{"provider": "aws", "discount_fraction": 0.25}]}
SEED = os.path.join(os.path.dirname(__file__), "..", "..", "schema", "seed")
BLOCK = "aws-p5.48xlarge-us-east-1-capacity-block"
# AWS's own names in its FOCUS export (tests/data/focus/aws-focus-1.0.csv), which a forecast's
# compute rows must carry to group with the bill's.
AWS_EXPORT = os.path.join(os.path.dirname(__file__), "..", "data", "focus", "aws-focus-1.0.csv")
GCP_EXPORT = os.path.join(os.path.dirname(__file__), "..", "data", "focus", "gcp-focus-view.csv")


def catalog_with_block(directory):
    """The seed catalog in `directory` with a p5 capacity block (a dated test price)."""
    catalog = os.path.join(directory, "catalog")
    shutil.copytree(SEED, catalog)
    with open(os.path.join(catalog, "offerings.csv"), "a") as f:
        f.write(f"{BLOCK},aws,p5.48xlarge,h100-sxm,8,80,192,2048,EFA,3200,us-east-1,"
                "capacity_block,,\n")
    with open(os.path.join(catalog, "prices.csv"), "a") as f:
        f.write(f"{BLOCK},64,2026-12-01,false,test price,true,\n")
    return catalog


def post(port, path, body, accept="application/json"):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json", "Accept": accept})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, r.headers.get("Content-Type"), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type"), e.read().decode()


def check(cond, message):
    if not cond:
        print("FAIL:", message)
        sys.exit(1)


def rows_of(text):
    return list(csv.DictReader(io.StringIO(text)))


def check_forecast(port, body):
    status, ctype, plan_text = post(port, "/v1/plans/training", body)
    check(status == 200, f"JSON plan: {status} {plan_text[:300]}")
    plan = json.loads(plan_text)
    status, ctype, text = post(port, "/v1/plans/training?format=focus", body)
    check(status == 200 and ctype.startswith("text/csv"), f"?format=focus: {status} {ctype}")
    problems = validate(text)
    check(not problems, "FOCUS validator: " + "; ".join(problems[:10]))
    status, _, by_accept = post(port, "/v1/plans/training", body, 'text/csv; profile="focus"')
    check(status == 200 and by_accept == text, "Accept profile=focus gives the same rows")
    rows = rows_of(text)
    budget = plan["budget"]
    by_month = {}
    for r in rows:
        by_month.setdefault(r["ChargePeriodStart"][:7], 0.0)
        by_month[r["ChargePeriodStart"][:7]] += float(r["EffectiveCost"])
    check(sorted(by_month) == [m["month"] for m in budget["monthly"]],
          f"months {sorted(by_month)} vs {budget['monthly']}")
    for m in budget["monthly"]:
        check(abs(by_month[m["month"]] - m["usd"]) < 1e-3 * max(1, m["usd"]),
              f"month {m['month']}: rows {by_month[m['month']]} vs budget {m['usd']}")
    compute = [r for r in rows if r["ServiceCategory"] == "Compute"]
    check(len(compute) >= 2 and len(compute) == len({r["ChargePeriodStart"] for r in compute}),
          f"the run crosses month ends: one compute row per month, got {len(compute)}")
    check({r["ServiceCategory"] for r in rows} == {"Compute", "Storage", "Networking"},
          "compute, storage and egress charges")
    rec = plan["recommendation"]
    offering_id = rec["offering"]["id"]
    aws_names = {(r["ProviderName"], r["PublisherName"], r["ServiceName"])
                 for r in rows_of(open(AWS_EXPORT).read())}
    for r in compute:
        check(r["SkuPriceId"] == offering_id, "SkuPriceId is the offering")
        check(offering_id.startswith(r["SkuId"] + "-") and
              offering_id[len(r["SkuId"]) + 1:] in ("on-demand", "spot"),
              f"SkuId is the offering less its price type: {r['SkuId']}")
        check((r["ProviderName"], r["PublisherName"], r["ServiceName"]) in aws_names,
              f"compute rows carry AWS's own names: {r['ServiceName']}")
        details = json.loads(r["SkuPriceDetails"])
        check(details["InstanceType"] == rec["offering"]["instance_type"] and
              details["GpuCount"] == rec["offering"]["accelerator_count"],
              f"SkuPriceDetails: {details}")
        check(r["x_Accelerator"] == rec["offering"]["accelerator"], "x_Accelerator")
        check(json.loads(r["Tags"])["gpucost-plan"] == "training", "Tags name the plan")
    return plan, rows


def main():
    directory = tempfile.mkdtemp(prefix="focus-forecast-")
    proc, port = serve.start(sys.argv[1], ["--catalog-dir", catalog_with_block(directory)])
    check(port is not None, "server did not start")
    try:
        plan, rows = check_forecast(port, PLAN)
        check(all(r["x_PricingBasis"] == "list" for r in rows), "list basis")
        compute = [r for r in rows if r["ServiceCategory"] == "Compute"]
        for r in compute:
            check(abs(float(r["ListCost"]) - float(r["EffectiveCost"])) < 1e-6,
                  "at list, ListCost = EffectiveCost")

        booked = dict(PLAN, price_book=BOOK)
        plan, rows = check_forecast(port, booked)
        compute = [r for r in rows if r["ServiceCategory"] == "Compute"]
        for r in compute:
            check(r["x_PricingBasis"] == "price_book" and r["x_PriceBook"] == "acme EDP" and
                  r["x_PriceBookId"] == "acme-2026" and r["x_PriceBookVersion"] == "3",
                  "book named, with its id and version")
            check(abs(float(r["EffectiveCost"]) - 0.75 * float(r["ListCost"])) <
                  1e-4 * float(r["ListCost"]), "effective = list x (1 - 0.25)")

        # Serving: the recommendation around the clock over its budget view (start_date,
        # budget_months), at its price: a start on the 10th pays part of its first and last
        # months, and the rows add up to the budget month by month.
        serving = {"model": {"params_b": 8}, "input_tokens": 1000, "output_tokens": 250,
                   "traffic": {"requests_per_second": 5}, "limit": 1,
                   "constraints": {"providers": ["aws"]}, "price_book": BOOK,
                   "start_date": "2027-02-10", "budget_months": 3}
        status, _, plan_text = post(port, "/v1/plans/inference", serving)
        check(status == 200, f"serving plan: {status} {plan_text[:200]}")
        serving_plan = json.loads(plan_text)
        rec = serving_plan["recommendation"]
        status, ctype, text = post(port, "/v1/plans/inference", serving,
                                   'text/csv; profile="focus"')
        check(status == 200 and ctype.startswith("text/csv"), f"serving FOCUS: {status}")
        problems = validate(text)
        check(not problems, "serving FOCUS validator: " + "; ".join(problems[:10]))
        rows = rows_of(text)
        months = [r["ChargePeriodStart"][:7] for r in rows]
        check(months == ["2027-02", "2027-03", "2027-04", "2027-05"],
              f"the budget view's months, from start_date: {months}")
        hours = [float(r["PricingQuantity"]) / rec["nodes"] / 24 for r in rows]
        check([round(h, 6) for h in hours] == [19, 31, 30, 9], f"days paid per month: {hours}")
        budget = {m["month"]: m["usd"] for m in serving_plan["budget"]["monthly"]}
        for r in rows:
            check(abs(float(r["EffectiveCost"]) - float(r["PricingQuantity"]) *
                      rec["offering"]["usd_per_hour"]) < 1e-3, "cost = hours x price")
            check(abs(float(r["EffectiveCost"]) - budget[r["ChargePeriodStart"][:7]]) < 0.01,
                  "a month's row is its budget month")
            check(json.loads(r["Tags"])["gpucost-plan"] == "serving", "serving tag")
            check(abs(float(r["ListCost"]) * 0.75 - float(r["EffectiveCost"])) < 1e-3,
                  "serving at the book's price")

        # Owned capacity: its hours are Committed rows billed 0 at the commitment's rate; the
        # billed cost by month is the budget (the marginal cash).
        owned_book = {"name": "owned p5", "owned_capacity": [
            {"offering_id": "aws-p5.48xlarge-us-east-1-on-demand", "nodes": 1,
             "start_date": "2026-12-01", "end_date": "2027-01-01", "usd_per_hour": 30}]}
        owned_plan = dict(PLAN, price_book=owned_book, constraints=dict(
            PLAN["constraints"], node_counts=[2], accelerators=["h100-sxm"]))
        owned_plan.pop("data")
        owned_training = owned_plan
        status, _, plan_text = post(port, "/v1/plans/training", owned_plan)
        check(status == 200, f"owned plan: {status} {plan_text[:300]}")
        owned_answer = json.loads(plan_text)
        owned = owned_answer["recommendation"]["owned"]
        check(owned is not None and owned["instance_hours"] == 48, f"owned: {owned}")
        status, _, text = post(port, "/v1/plans/training?format=focus", owned_plan)
        problems = validate(text)
        check(not problems, "owned FOCUS validator: " + "; ".join(problems[:10]))
        rows = rows_of(text)
        owned_rows = rows
        committed = [r for r in rows if r["CommitmentDiscountStatus"] == "Used"]
        check(len(committed) == 1 and float(committed[0]["BilledCost"]) == 0 and
              abs(float(committed[0]["EffectiveCost"]) - owned["sunk_usd"]) < 0.01,
              f"owned hours: {committed}")
        # The owned hours are priced before the commitment at the offering's rate; the rest of
        # December's reserved hours (744 - 48) are an Unused row of the same commitment.
        used = committed[0]
        check(used["PricingCategory"] == "Committed" and
              float(used["ContractedUnitPrice"]) == float(used["ListUnitPrice"]) and
              used["CommitmentDiscountId"] and used["ResourceId"] != used["CommitmentDiscountId"],
              f"used owned row: {used}")
        unused = [r for r in rows if r["CommitmentDiscountStatus"] == "Unused"]
        check(len(unused) == 1 and float(unused[0]["PricingQuantity"]) == 744 - 48 and
              abs(float(unused[0]["EffectiveCost"]) - (744 - 48) * 30) < 0.01 and
              float(unused[0]["BilledCost"]) == 0 and not unused[0]["ConsumedQuantity"] and
              unused[0]["CommitmentDiscountId"] == used["CommitmentDiscountId"] ==
              unused[0]["ResourceId"], f"unused owned hours: {unused}")
        billed = {}
        for r in rows:
            billed.setdefault(r["ChargePeriodStart"][:7], 0.0)
            billed[r["ChargePeriodStart"][:7]] += float(r["BilledCost"])
        for m in owned_answer["budget"]["monthly"]:
            check(abs(billed[m["month"]] - m["usd"]) < 0.01, f"billed by month {billed} vs {m}")

        # Serving on owned capacity: one p5 instance owned for the first of three months; its
        # hours are a Committed row billed 0 at the commitment's rate, the compute rows carry
        # the uncovered hours, and the billed cost by month is the budget (the marginal cash).
        owned_serving = {"model": {"params_b": 7}, "input_tokens": 512, "output_tokens": 256,
                         "traffic": {"requests_per_second": 10}, "limit": 1,
                         "constraints": {"providers": ["aws"], "price_types": ["on_demand"],
                                         "accelerators": ["h100-sxm"]},
                         "start_date": "2027-01-01", "budget_months": 3, "price_book": {
                             "name": "owned p5", "owned_capacity": [
                                 {"offering_id": "aws-p5.48xlarge-us-east-1-on-demand",
                                  "nodes": 1, "start_date": "2026-12-01",
                                  "end_date": "2027-02-01", "usd_per_hour": 30}]}}
        status, _, plan_text = post(port, "/v1/plans/inference", owned_serving)
        check(status == 200, f"owned serving plan: {status} {plan_text[:300]}")
        owned_answer = json.loads(plan_text)
        owned = owned_answer["recommendation"]["owned"]
        check(owned is not None and owned["instance_hours"] == 31 * 24, f"owned: {owned}")
        status, _, text = post(port, "/v1/plans/inference?format=focus", owned_serving)
        problems = validate(text)
        check(not problems, "owned serving FOCUS validator: " + "; ".join(problems[:10]))
        rows = rows_of(text)
        committed = [r for r in rows if r["CommitmentDiscountStatus"] == "Used"]
        check(len(committed) == 1 and float(committed[0]["BilledCost"]) == 0 and
              committed[0]["ChargePeriodStart"].startswith("2027-01") and
              abs(float(committed[0]["EffectiveCost"]) - owned["sunk_usd"]) < 0.01 and
              abs(float(committed[0]["EffectiveCost"]) -
                  owned_answer["budget"]["owned_usd"]) < 0.01,
              f"owned hours: {committed}")
        billed = {}
        for r in rows:
            billed.setdefault(r["ChargePeriodStart"][:7], 0.0)
            billed[r["ChargePeriodStart"][:7]] += float(r["BilledCost"])
        for m in owned_answer["budget"]["monthly"]:
            check(abs(billed[m["month"]] - m["usd"]) < 0.01,
                  f"serving billed by month {billed} vs {m}")

        # Rent-vs-buy: the rent path's usage by month, the buy path's purchase (billed up
        # front, amortised into its months) and opex; effective costs add up to the totals.
        rvb = {"buy": {"accelerator": "h100-sxm", "total_accelerators": 16},
               "rent": {"offering_id": "aws-p5.48xlarge-us-east-1-on-demand"},
               "horizon_months": 24, "price_book": BOOK}
        status, _, plan_text = post(port, "/v1/plans/rent-vs-buy", rvb)
        check(status == 200, f"rent-vs-buy: {status} {plan_text[:300]}")
        rvb_plan = json.loads(plan_text)
        status, ctype, text = post(port, "/v1/plans/rent-vs-buy?format=focus", rvb)
        check(status == 200 and ctype.startswith("text/csv"), f"rent-vs-buy FOCUS: {status}")
        problems = validate(text)
        check(not problems, "rent-vs-buy FOCUS validator: " + "; ".join(problems[:10]))
        rows = rows_of(text)
        path = {"rent": [], "buy": []}
        for r in rows:
            path[json.loads(r["Tags"])["gpucost-path"]].append(r)
        check(len(path["rent"]) == rvb_plan["rent_billed_months"], "a rent row per month")
        check(all(r["ChargeCategory"] == "Usage" for r in path["rent"]), "rent is usage")
        rent_total = sum(float(r["EffectiveCost"]) for r in path["rent"])
        check(abs(rent_total - rvb_plan["total_rent_usd"]) < 0.05, f"rent {rent_total}")
        purchase = [r for r in path["buy"] if r["ChargeCategory"] == "Purchase"]
        check(len(purchase) == 1 and float(purchase[0]["BilledCost"]) == rvb_plan["capex_usd"]
              and float(purchase[0]["EffectiveCost"]) == 0 and
              purchase[0]["ChargeFrequency"] == "One-Time", f"purchase: {purchase}")
        own_total = sum(float(r["EffectiveCost"]) for r in path["buy"])
        check(abs(own_total - rvb_plan["total_own_usd"]) < 0.05,
              f"own {own_total} vs {rvb_plan['total_own_usd']}")
        cash = sum(float(r["BilledCost"]) for r in path["buy"])
        check(abs(cash - rvb_plan["capex_usd"] - 24 * rvb_plan["opex_usd_per_month"]) < 0.05,
              "billed: capex + opex x horizon")
        check(all(abs(float(r["ListCost"]) * 0.75 - float(r["EffectiveCost"])) < 1e-3
                  for r in path["rent"]), "rent at the book's price")

        # Rent-vs-buy with owned capacity of the rented offering (one p5 instance owned every
        # hour of the horizon at 30 USD): the rent's 1,022 instance-hours a month run on two
        # instances, one of them owned, so half of each month is a Committed row billed 0 at
        # the commitment's rate and the usage rows bill the marginal rent.
        owned_rvb = dict(rvb, price_book=dict(BOOK, owned_capacity=[
            {"offering_id": "aws-p5.48xlarge-us-east-1-on-demand", "nodes": 1,
             "start_date": "2020-01-01", "end_date": "2040-01-01", "usd_per_hour": 30}]))
        status, _, plan_text = post(port, "/v1/plans/rent-vs-buy", owned_rvb)
        check(status == 200, f"owned rent-vs-buy: {status} {plan_text[:300]}")
        owned_plan = json.loads(plan_text)
        owned = owned_plan["owned"]
        check(owned is not None and abs(owned["instance_hours"] - 24 * 511) < 1e-6 and
              abs(owned["sunk_usd"] - 24 * 511 * 30) < 0.01, f"owned rent: {owned}")
        check(not owned_plan["price_book"]["warnings"], "owned capacity applied, not warned")
        status, ctype, text = post(port, "/v1/plans/rent-vs-buy?format=focus", owned_rvb)
        check(status == 200 and ctype.startswith("text/csv"), f"owned rent FOCUS: {status}")
        problems = validate(text)
        check(not problems, "owned rent FOCUS validator: " + "; ".join(problems[:10]))
        rent_rows = [r for r in rows_of(text) if json.loads(r["Tags"])["gpucost-path"] == "rent"]
        committed = [r for r in rent_rows if r["CommitmentDiscountStatus"] == "Used"]
        usage = [r for r in rent_rows if r["PricingCategory"] != "Committed"]
        check(len(committed) == 24 and len(usage) == 24, f"rows: {len(committed)} {len(usage)}")
        # The owned instance's calendar hours beyond the rent's 511 a month are Unused rows.
        unused = [r for r in rent_rows if r["CommitmentDiscountStatus"] == "Unused"]
        check(len(unused) == 24 and all(float(r["PricingQuantity"]) > 600 - 511 for r in unused),
              f"unused owned rent hours: {[r['PricingQuantity'] for r in unused]}")
        rent_rows = [r for r in rent_rows if r["CommitmentDiscountStatus"] != "Unused"]
        check(all(float(r["BilledCost"]) == 0 and abs(float(r["PricingQuantity"]) - 511) < 1e-6
                  and abs(float(r["EffectiveCost"]) - 511 * 30) < 0.01 for r in committed),
              f"committed rows: {committed[:2]}")
        billed = sum(float(r["BilledCost"]) for r in rent_rows)
        check(abs(billed - owned_plan["total_rent_usd"]) < 0.05,
              f"billed rent {billed} vs marginal {owned_plan['total_rent_usd']}")
        check(abs(owned_plan["total_rent_usd"] - rvb_plan["total_rent_usd"] / 2) < 0.05,
              "half of every month's rent is sunk")
        effective = sum(float(r["EffectiveCost"]) for r in rent_rows)
        check(abs(effective - owned_plan["total_rent_usd"] - owned["sunk_usd"]) < 0.05,
              "effective rent: marginal + sunk")

        check_paid_ahead(port)
        # Google's TPUs bill under Cloud TPU in its own export; a TPU is no GPU (no GpuCount).
        gcp = dict(PLAN, constraints={"providers": ["gcp"], "price_types": ["on_demand"]})
        status, _, text = post(port, "/v1/plans/training?format=focus", gcp)
        problems = validate(text)
        check(status == 200 and not problems, "GCP FOCUS validator: " + "; ".join(problems[:10]))
        gcp_names = {(r["ProviderName"], r["PublisherName"], r["ServiceName"])
                     for r in rows_of(open(GCP_EXPORT).read())}
        tpu = [r for r in rows_of(text) if r["ServiceCategory"] == "Compute"]
        check(tpu and all((r["ProviderName"], r["PublisherName"], r["ServiceName"]) in gcp_names
                          and "GpuCount" not in json.loads(r["SkuPriceDetails"])
                          for r in tpu if r["x_Accelerator"].startswith("tpu")),
              f"GCP rows carry Google's own names: {[r['ServiceName'] for r in tpu]}")
        # One dataset: the on-demand plan on owned capacity and the same plan on spot name one
        # SKU for the instance whatever the price type.
        # The same instance in the same region (the catalog sells p5 spot in many regions).
        owned_offering = owned_answer["recommendation"]["offering"]
        spot = dict(owned_training, constraints=dict(owned_training["constraints"],
                                                     price_types=["spot"],
                                                     regions=[owned_offering["region"]]))
        spot.pop("price_book")
        status, _, spot_text = post(port, "/v1/plans/training?format=focus", spot)
        check(status == 200 and "-spot" in spot_text, f"spot plan: {status}")
        owned_text = io.StringIO()
        writer = csv.DictWriter(owned_text, fieldnames=list(owned_rows[0].keys()))
        writer.writeheader()
        writer.writerows(owned_rows)
        problems = validate_dataset([owned_text.getvalue(), spot_text])
        check(not problems, "on demand and spot as one dataset: " + "; ".join(problems[:10]))
        check(len({r["SkuId"] for r in rows_of(spot_text) + owned_rows
                   if r["ServiceCategory"] == "Compute"}) == 1, "one SkuId")

        # The validator is not a rubber stamp: a wrong category and a missing cost fail.
        bad = rows_of(post(port, "/v1/plans/training?format=focus", PLAN)[2])
        bad[0]["ChargeCategory"] = "Usages"
        bad[1]["BilledCost"] = ""
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=list(bad[0].keys()))
        writer.writeheader()
        writer.writerows(bad)
        problems = validate(out.getvalue())
        check(any("ChargeCategory" in p for p in problems) and
              any("BilledCost" in p for p in problems), f"validator caught: {problems}")

        status, ctype, text = post(port, "/v1/plans/training?format=xlsx", PLAN)
        check(status == 422 and json.loads(text)["field"] == "format", f"bad format: {status}")
        status, _, text = post(port, "/v1/plans/spot?format=focus", {"job_hours": 1,
                               "on_demand_usd_per_hour": 2, "spot_usd_per_hour": 1})
        check(status == 400, f"routes without FOCUS output refuse ?format: {status}")
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(directory, ignore_errors=True)
    print("ok")


def monthly(rows, column):
    out = {}
    for r in rows:
        out.setdefault(r["ChargePeriodStart"][:7], 0.0)
        out[r["ChargePeriodStart"][:7]] += float(r[column])
    return out


def check_paid_ahead(port):
    """A 1-year commitment is a Recurring purchase each month amortised into its used and
    unused hours; a capacity block a One-Time purchase amortised the same way."""
    commit = dict(PLAN, constraints={"providers": ["aws"], "price_types": ["commit_1y"]})
    commit.pop("data")
    status, _, plan_text = post(port, "/v1/plans/training", commit)
    check(status == 200, f"commitment plan: {status} {plan_text[:300]}")
    plan = json.loads(plan_text)
    status, _, text = post(port, "/v1/plans/training?format=focus", commit)
    problems = validate(text)
    check(not problems, "commitment FOCUS validator: " + "; ".join(problems[:10]))
    rows = rows_of(text)
    purchases = [r for r in rows if r["ChargeCategory"] == "Purchase"]
    budget = {m["month"]: m["usd"] for m in plan["budget"]["monthly"]}
    check(len(purchases) == len(budget) and
          all(r["ChargeFrequency"] == "Recurring" and float(r["EffectiveCost"]) == 0 and
              r["CommitmentDiscountId"] == purchases[0]["CommitmentDiscountId"]
              for r in purchases), f"a Recurring purchase a month: {purchases[:2]}")
    for column in ("BilledCost", "EffectiveCost"):
        sums = monthly(rows, column)
        check(all(abs(sums[m] - usd) < 0.01 for m, usd in budget.items()),
              f"{column} by month {sums} vs budget {budget}")
    usage = [r for r in rows if r["ChargeCategory"] == "Usage"]
    check({r["CommitmentDiscountStatus"] for r in usage} <= {"Used", "Unused"} and
          all(r["PricingCategory"] == "Committed" for r in usage), "used and unused hours")

    block = dict(PLAN, constraints={"providers": ["aws"], "price_types": ["capacity_block"]})
    status, _, plan_text = post(port, "/v1/plans/training", block)
    check(status == 200, f"block plan: {status} {plan_text[:300]}")
    plan = json.loads(plan_text)
    check(plan["recommendation"]["offering"]["id"] == BLOCK, "the block is planned")
    status, _, text = post(port, "/v1/plans/training?format=focus", block)
    problems = validate(text)
    check(not problems, "capacity block FOCUS validator: " + "; ".join(problems[:10]))
    rows = [r for r in rows_of(text) if r["ServiceCategory"] == "Compute"]
    purchase, usage = rows[0], rows[1:]
    check(purchase["ChargeCategory"] == "Purchase" and purchase["ChargeFrequency"] == "One-Time"
          and float(purchase["EffectiveCost"]) == 0 and purchase["CapacityReservationId"] and
          abs(float(purchase["BilledCost"]) - plan["budget"]["monthly"][0]["usd"] +
              sum(float(r["BilledCost"]) for r in rows_of(text)
                  if r["ServiceCategory"] != "Compute" and
                  r["ChargePeriodStart"] == purchase["ChargePeriodStart"])) < 0.01,
          f"the block bought at reservation: {purchase}")
    check(all(r["CapacityReservationId"] == purchase["CapacityReservationId"] and
              r["CapacityReservationStatus"] in ("Used", "Unused") and
              float(r["BilledCost"]) == 0 for r in usage), f"block hours: {usage}")
    hours = sum(float(r["PricingQuantity"]) for r in usage)
    check(abs(hours - float(purchase["PricingQuantity"])) < 1e-3, "used + unused = bought")
    used = sum(float(r["PricingQuantity"]) for r in usage
               if r["CapacityReservationStatus"] == "Used")
    rec = plan["recommendation"]
    check(abs(used - rec["expected_wall_clock_hours"] * rec["nodes"]) < 1e-3,
          f"used hours {used} are the run's")
    check(abs(sum(float(r["EffectiveCost"]) for r in usage) - float(purchase["BilledCost"])) <
          0.01, "the block's cost amortised into its hours")


if __name__ == "__main__":
    main()
