#!/usr/bin/env python3
"""Writes a synthetic catalog directory of N offerings built from the seed (schema/seed).

The seed's offerings are copied into more regions: copy k of offering X is X-s<k> in region
<region>-s<k>, with the same instance type, hardware shape, price type and capacity, and
every price observation of X copied with its price scaled by a region premium of
0.5 % x (7k mod 11) (0 to 5 %, so copies are not all ties). Copy 0 is the seed itself; the
rows are cut at exactly N offerings (seed order within each copy). The other seed files
(accelerators, capacity, data prices, models, mappings) are copied unchanged, so the
directory loads with `gpucost --catalog-dir DIR`.

    usage: tests/bench/make_scale_catalog.py SEED_DIR OUT_DIR N
"""
import csv
import shutil
import sys
from pathlib import Path


def premium(copy: int) -> float:
    return 1.0 + 0.005 * ((7 * copy) % 11)


def main() -> int:
    seed, out, count = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    for item in seed.iterdir():
        if item.name in ("offerings.csv", "prices.csv") or item.suffix == ".py":
            continue
        target = out / item.name
        if item.is_dir():
            shutil.copytree(item, target, dirs_exist_ok=True)
        elif item.suffix == ".csv":
            shutil.copy(item, target)
    with open(seed / "offerings.csv", newline="") as f:
        offering_reader = csv.DictReader(f)
        offering_fields = offering_reader.fieldnames
        offerings = list(offering_reader)
    with open(seed / "prices.csv", newline="") as f:
        price_reader = csv.DictReader(f)
        price_fields = price_reader.fieldnames
        prices = list(price_reader)
    prices_of = {}
    for p in prices:
        prices_of.setdefault(p["offering_id"], []).append(p)

    out_offerings, out_prices = [], []
    copy = 0
    while len(out_offerings) < count:
        for o in offerings:
            if len(out_offerings) >= count:
                break
            suffix = "" if copy == 0 else f"-s{copy}"
            row = dict(o, id=o["id"] + suffix, region=o["region"] + suffix)
            out_offerings.append(row)
            for p in prices_of.get(o["id"], []):
                usd = float(p["usd_per_hour"]) * premium(copy)
                out_prices.append(dict(p, offering_id=row["id"],
                                       usd_per_hour=p["usd_per_hour"] if copy == 0 else f"{usd:.6g}"))
        copy += 1
    with open(out / "offerings.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=offering_fields, lineterminator="\n")
        w.writeheader()
        w.writerows(out_offerings)
    with open(out / "prices.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=price_fields, lineterminator="\n")
        w.writeheader()
        w.writerows(out_prices)
    return 0


if __name__ == "__main__":
    sys.exit(main())
