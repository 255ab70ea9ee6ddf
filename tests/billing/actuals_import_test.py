"""`gpucost actuals import focus` end to end on FOCUS exports of the three clouds
(tests/data/focus/: AWS 1.0 with AWS columns, Azure 1.2 in EUR, GCP 1.0 gzip-compressed),
with usage, spot, credits, taxes, commitment purchases, an adjustment, untagged, non-GPU and
unknown-GPU rows, then `gpucost actuals compare` against a plan's forecast. The expected figures are summed by hand in tests/data/focus/README.md.

usage: actuals_import_test.py GPUCOST_BINARY DATA_DIR
"""
import csv
import json
import os
import subprocess
import sys
import tempfile
from decimal import Decimal


def check(cond, message):
    if not cond:
        print("FAIL:", message)
        sys.exit(1)


def close(a, b):
    return abs(a - b) < 1e-6 * max(1.0, abs(b))


def run(binary, *args):
    p = subprocess.run([binary, "actuals", *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def main():
    binary, data = sys.argv[1], sys.argv[2]
    files = [os.path.join(data, f) for f in
             ("aws-focus-1.0.csv", "azure-focus-1.2.csv", "gcp-focus-1.0.csv.gz")]
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "actuals.csv")
        rc, out, err = run(binary, "import", "focus", *files, "--into", store)
        check(rc == 0, f"import: {rc} {err}")
        report = json.loads(out)
        check(report["rows_read"] == 20, f"rows_read {report['rows_read']}")
        check(report["kept"] == 7, f"kept {report['kept']}")
        check(report["skipped"] == {"non_accelerator": 3, "unknown_sku": 2, "tax": 3,
                                    "credit": 2, "purchase": 2, "adjustment": 1},
              f"skipped {report['skipped']}")
        check(report["skipped_examples"]["unknown_sku"] == "g6f.2xlarge",
              f"examples {report['skipped_examples']}")
        usd, eur = report["by_currency"]["USD"], report["by_currency"]["EUR"]
        check(usd["rows"] == 5 and close(usd["accelerator_hours"], 1450), f"USD {usd}")
        check(close(usd["billed_cost"], 6960.75) and close(usd["effective_cost"], 6762.61) and
              close(usd["list_cost"], 7951.47), f"USD costs {usd}")
        check(eur["rows"] == 2 and close(eur["accelerator_hours"], 120) and
              close(eur["effective_cost"], 950) and close(eur["list_cost"], 1100), f"EUR {eur}")
        tags = {(t["currency"], t["tag_value"]): t for t in report["by_tag"]}
        check(close(tags[("USD", "s-1")]["effective_cost"], 5826.95), f"s-1 {tags}")
        check(close(tags[("USD", None)]["effective_cost"], 935.66), "untagged USD")
        check(close(tags[("EUR", "s-2")]["effective_cost"], 950), "s-2 EUR")
        months = {(m["currency"], m["month"]): m for m in report["by_month"]}
        check(close(months[("USD", "2027-01")]["accelerator_hours"], 160), "January")
        check(report["added"] == 7 and report["already_imported"] == 0, "first import adds 7")
        with open(store, newline="") as f:
            rows = list(csv.DictReader(f))
        check(len(rows) == 7, f"store rows {len(rows)}")
        offerings = {r["offering_id"] for r in rows}
        check({"aws-p5.48xlarge-us-east-1-on-demand", "aws-p5.48xlarge-us-east-1-spot",
               "azure-standard_nd96isr_h100_v5-eastus-on-demand"} <= offerings,
              f"offerings {offerings}")

        # Idempotent: the same exports again add nothing.
        rc, out, err = run(binary, "import", "focus", *files, "--into", store)
        again = json.loads(out)
        check(rc == 0 and again["added"] == 0 and again["already_imported"] == 7,
              f"re-import {again.get('added')} {again.get('already_imported')}")
        with open(store, newline="") as f:
            check(len(list(csv.DictReader(f))) == 7, "store unchanged")

        # Plan vs actual for scenario s-1, figures worked by hand in tests/data/focus/README.md.
        rc, out, err = run(binary, "compare", "--plan", os.path.join(data, "plan-s-1.focus.csv"),
                           "--actuals", store, "--tag", "s-1")
        check(rc == 0, f"compare: {rc} {err}")
        cmp = json.loads(out)
        check(close(cmp["planned"]["accelerator_hours"], 1500) and
              close(cmp["planned"]["effective_cost"], 9000), f"planned {cmp['planned']}")
        check(close(cmp["actual"]["accelerator_hours"], 1280) and
              close(cmp["actual"]["effective_cost"], 5826.95), f"actual {cmp['actual']}")
        check(close(cmp["gap"], -3173.05), f"gap {cmp['gap']}")
        # Money as the API states it (docs/api.md "Money"), read exactly: every cost, gap and
        # effect to the cent, the effects adding up to the gap; the rate to 1e-6.
        exact = json.loads(out, parse_float=Decimal)
        check(exact["price_effect"] == Decimal("-2171.54"), f"price {exact['price_effect']}")
        check(exact["quantity_effect"] == Decimal("-1001.51"), f"qty {exact['quantity_effect']}")
        check(exact["price_effect"] + exact["quantity_effect"] == exact["gap"], "effects add up")
        check(exact["actual"]["effective_per_accelerator_hour"] == Decimal("4.552305"),
              f"rate {exact['actual']['effective_per_accelerator_hour']}")
        for side in [exact["planned"], exact["actual"]] + \
                [m[k] for m in exact["by_month"] for k in ("planned", "actual")]:
            for key in ("effective_cost", "list_cost"):
                check(side[key] == side[key].quantize(Decimal("0.01")), f"{key} {side[key]}")
        check([m["month"] for m in cmp["by_month"]] == ["2026-12", "2027-01"], "months")
        check("Mostly price." in cmp["explanation"], cmp["explanation"])

        # Another attribution tag.
        rc, out, _ = run(binary, "import", "focus", files[0], "--tag-key", "team")
        by_team = {t["tag_value"]: t for t in json.loads(out)["by_tag"]}
        check(close(by_team["research"]["effective_cost"], 4513.28), f"team {by_team}")
        check(json.loads(out)["added"] is None, "without --into nothing is stored")

        # Many rows (the store is written in batches of 4096): exact counts, one header, and a
        # command whose second file fails leaves the store as it was.
        big = os.path.join(tmp, "big.csv")
        with open(files[0], newline="") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames
            templates = [r for r in reader if r["x_UsageType"].endswith(":p5.48xlarge")]
        with open(big, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=header, lineterminator="\n")
            w.writeheader()
            for i in range(10000):
                w.writerow(dict(templates[i % len(templates)], ResourceId=f"i-{i}"))
        big_store = os.path.join(tmp, "big-store.csv")
        rc, out, err = run(binary, "import", "focus", big, "--into", big_store)
        first = json.loads(out)
        check(rc == 0 and first["added"] == first["kept"] == 10000,
              f"big import: {rc} {err} {first.get('kept')} {first.get('added')}")
        with open(big_store, "rb") as f:
            text = f.read()
        check(text.count(b"\r\n") == first["kept"] + 1 and text.startswith(b"row_id,"),
              "big store: one header and a line per kept row")
        bad_number = os.path.join(tmp, "bad-number.csv")
        with open(files[0]) as src, open(bad_number, "w") as f:
            lines = src.readlines()
            f.write(lines[0] + lines[1].replace("4513.28", "45l3.28", 1))
        rc, _, err = run(binary, "import", "focus", files[1], bad_number, "--into", big_store)
        check(rc == 2 and "not a number" in err, f"bad number: {rc} {err}")
        with open(big_store, "rb") as f:
            check(f.read() == text, "a failed command leaves the store as it was")
        rc, out, _ = run(binary, "import", "focus", big, "--into", big_store)
        again = json.loads(out)
        check(again["added"] == 0 and again["already_imported"] == first["kept"],
              f"big re-import {again['added']} {again['already_imported']}")

        # Not FOCUS, missing file, bad usage.
        bad = os.path.join(tmp, "bad.csv")
        with open(bad, "w") as f:
            f.write("a,b\n1,2\n")
        rc, _, err = run(binary, "import", "focus", bad)
        check(rc == 2 and "ChargeCategory" in err, f"not FOCUS: {rc} {err}")
        rc, _, err = run(binary, "import", "focus", os.path.join(tmp, "absent.csv"))
        check(rc == 1, f"absent file: {rc}")
        rc, _, err = run(binary, "import", "parquet", files[0])
        check(rc == 2 and "usage" in err, f"usage: {rc}")
    print("ok")


if __name__ == "__main__":
    main()
