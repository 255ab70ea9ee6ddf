"""End to end: the price-file fixtures -> `gpucost import` -> `check-catalog` accepts the
result -> `serve --catalog-dir` serves every expected offering at the right price, type and
region. Also: a malformed or truncated file exits 2, names the file and the place, and writes
nothing.

    python3 tests/import/import_e2e_test.py BINARY FIXTURE_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "contract"))
import serve  # noqa: E402

BINARY, FIXTURES = sys.argv[1], sys.argv[2]
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    return subprocess.run([BINARY, *args], capture_output=True, text=True, env=env, timeout=120)


def fixture(name):
    return os.path.join(FIXTURES, name)


# (offering id, usd_per_hour, price_type, region) that the import must serve.
EXPECTED = [
    ("aws-p6-b200.48xlarge-us-east-1-on-demand", 113.9328, "on_demand", "us-east-1"),
    ("aws-p5.48xlarge-us-east-1-commit-1y", 37.534247, "commit_1y", "us-east-1"),
    ("aws-p5.48xlarge-us-east-1-commit-3y", 24.041096, "commit_3y", "us-east-1"),
    ("aws-p5.48xlarge-us-east-1-on-demand", 55.04, "on_demand", "us-east-1"),
    ("azure-standard_nd96isr_mi300x_v5-eastus-on-demand", 48.0, "on_demand", "eastus"),
    ("azure-standard_nd96isr_mi300x_v5-eastus-spot", 14.4, "spot", "eastus"),
    ("azure-standard_nd96isr_mi300x_v5-eastus-commit-1y", 30.0, "commit_1y", "eastus"),
    ("azure-standard_nd96isr_mi300x_v5-eastus-commit-3y", 22.0, "commit_3y", "eastus"),
    ("gcp-a2-highgpu-1g-us-central1-on-demand", 3.6734, "on_demand", "us-central1"),
    ("gcp-g2-standard-12-us-central1-on-demand", 1.0004, "on_demand", "us-central1"),
    ("gcp-g2-standard-12-us-central1-commit-1y", 0.630264, "commit_1y", "us-central1"),
    ("gcp-tpu-v5p-chip-us-east5-on-demand", 4.2, "on_demand", "us-east5"),
]
# Offerings the distractor rows would have created had they been taken.
ABSENT = [
    "aws-p5.48xlarge-us-east-1-dfw-2-on-demand",
    "aws-m5.large-us-east-1-on-demand",
    "azure-standard_nd96isr_mi300x_v5-westeurope-on-demand",
    "azure-standard_d2s_v3-eastus-on-demand",
    "gcp-g2-standard-12-us-central1-commit-3y",  # 3-year L4 tiers differ
]
# Seed offerings that a skipped row would have repriced: their served source stays the seed's.
NOT_FROM_IMPORT = [
    ("gcp-a2-highgpu-1g-us-central1-spot",  # Spot GPU SKU without Spot A2 core/RAM SKUs
     "Cloud Billing Catalog API"),
    ("gcp-g2-standard-4-us-central1-commit-3y", "Cloud Billing Catalog API"),  # 3-year L4 tiers
    # The seed carries P5 in us-west-2; the file's us-west-2 row is outside --region us-east-1.
    ("aws-p5.48xlarge-us-west-2-on-demand", "AmazonEC2 offer file"),
    # Likewise G2 in europe-west4, outside --region us-central1,us-east5.
    ("gcp-g2-standard-4-europe-west4-on-demand", "Cloud Billing Catalog API"),
]


def price_of(body):
    """usd_per_hour, as_of and source of an offering body (flat, or under `price`)."""
    price = body.get("price") if isinstance(body.get("price"), dict) else body
    return price.get("usd_per_hour"), price.get("as_of"), price.get("source")


def import_all(work):
    steps = [
        ("aws", ["aws-price-list", fixture("aws-price-list-us-east-1.json"), "--region",
                 "us-east-1"]),
        ("azure", ["azure-retail-prices", fixture("azure-retail-prices-page1.json"),
                   fixture("azure-retail-prices-page2.json"), "--as-of", "2026-11-09",
                   "--region", "eastus"]),
        ("gcp", ["gcp-billing-catalog", fixture("gcp-billing-catalog-skus.json"), "--as-of",
                 "2026-07-30", "--region", "us-central1,us-east5"]),
    ]
    base = []
    summaries = {}
    for name, args in steps:
        out = os.path.join(work, name)
        done = run("import", *args, *base, "--out", out)
        check(done.returncode == 0, f"import {name} exits 0 (got {done.returncode}: {done.stderr})")
        summaries[name] = json.loads(done.stdout) if done.returncode == 0 else {}
        base = ["--catalog-dir", out]
    return os.path.join(work, "gcp"), summaries


def check_summaries(s):
    aws, azure, gcp = s.get("aws", {}), s.get("azure", {}), s.get("gcp", {})
    check(aws.get("files", [{}])[0].get("publication_date") == "2026-11-20T18:05:31Z",
          "AWS summary prints the file's publicationDate")
    check(aws.get("skipped", {}).get("not_linux") == 1 and
          aws.get("skipped", {}).get("not_shared_tenancy") == 1 and
          aws.get("skipped", {}).get("capacity_reservation_status") == 2,
          f"AWS distractors counted by reason: {aws.get('skipped')}")
    # p6-b200 in us-east-1 (AWS's list, 2026-01-21) and p5's 3-year Reserved rate (20.695, a
    # 2025-11-30 copy of the list) are in the seed: the file adds p5's 1-year commitment, and
    # its 3-year rate (24.041096) is one of the two prices it changes.
    check(aws.get("offerings_added") == 1, f"AWS adds p5's 1-year commitment: {aws}")
    check(aws.get("prices_changed") == 2, f"AWS changes two seed prices, p5's 3-year one: {aws}")
    check({"name": "hours_per_reserved_year", "value": 8760}.items() <=
          next((a for a in aws.get("assumptions", []) if a.get("name") == "hours_per_reserved_year"),
               {}).items(), "the summary echoes the hours a Reserved year is spread over")
    check(azure.get("skipped", {}).get("windows") == 2 and
          azure.get("skipped", {}).get("low_priority") == 1 and
          azure.get("skipped", {}).get("dev_test") == 1,
          f"Azure distractors counted by reason: {azure.get('skipped')}")
    check(azure.get("prices_changed") == 1, "Azure ND96asr_v4 27.197 differs from the seed")
    check(gcp.get("skipped", {}).get("tiered_rate_varies_with_usage") == 1,
          f"GCP tiered rate skipped: {gcp.get('skipped')}")


def check_served(catalog_dir):
    proc, port = serve.start(BINARY, ["--catalog-dir", catalog_dir])
    check(port is not None, "serve --catalog-dir starts on the imported catalog")
    if port is None:
        return
    try:
        for oid, usd, price_type, region in EXPECTED:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/offerings/{oid}",
                                            timeout=10) as r:
                    body = json.loads(r.read())
            except Exception as e:  # noqa: BLE001 - any failure is a test failure
                check(False, f"GET {oid}: {e}")
                continue
            got, as_of, source = price_of(body)
            check(got is not None and abs(got - usd) < 1e-4, f"{oid} price {got} == {usd}")
            check(body.get("price_type") == price_type, f"{oid} price_type {body.get('price_type')}")
            check(body.get("region") == region, f"{oid} region {body.get('region')}")
            check(bool(as_of) and bool(source), f"{oid} keeps as_of and source")
        for oid, import_source in NOT_FROM_IMPORT:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/offerings/{oid}",
                                        timeout=10) as r:
                _, _, source = price_of(json.loads(r.read()))
            check(import_source not in (source or ""),
                  f"{oid} is not repriced by a skipped row (source {source})")
        for oid in ABSENT:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/offerings/{oid}", timeout=10)
                check(False, f"{oid} (a distractor) must not be served")
            except urllib.error.HTTPError as e:
                check(e.code == 404, f"{oid} answers 404 (got {e.code})")
        with urllib.request.urlopen(
                f"http://127.0.0.1:{port}/v1/offerings?accelerator=mi300x", timeout=10) as r:
            mi = json.loads(r.read())
        items = next((v for v in mi.values() if isinstance(v, list)), [])
        check(len(items) >= 4, f"MI300X offerings are served ({len(items)})")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def check_malformed(work):
    good = open(fixture("aws-price-list-us-east-1.json"), "rb").read()
    cases = {"truncated.json": good[: len(good) // 2],
             "syntax.json": good.replace(b'"products"', b'"products" "oops"', 1),
             "empty.json": b""}
    for name, data in cases.items():
        path = os.path.join(work, name)
        with open(path, "wb") as f:
            f.write(data)
        out = os.path.join(work, "never-" + name)
        done = run("import", "aws-price-list", path, "--out", out)
        check(done.returncode == 2, f"{name}: exit 2 (got {done.returncode})")
        check(path in done.stderr and "byte" in done.stderr,
              f"{name}: stderr names the file and the place: {done.stderr.strip()}")
        check(not os.path.exists(out), f"{name}: nothing written")
    azure_without_date = run("import", "azure-retail-prices",
                             fixture("azure-retail-prices-page1.json"), "--out",
                             os.path.join(work, "never-azure"))
    check(azure_without_date.returncode == 2 and "--as-of" in azure_without_date.stderr,
          "an Azure page without --as-of exits 2 asking for it")


def check_catalog_dir_mappings(work):
    """A --catalog-dir with its own mappings/ is read instead of the embedded tables."""
    seed_mappings = os.path.join(FIXTURES, "..", "..", "..", "schema", "seed", "mappings")
    custom = os.path.join(work, "custom")
    shutil.copytree(os.path.join(work, "aws"), custom)
    shutil.copytree(seed_mappings, os.path.join(custom, "mappings"))
    sizes = os.path.join(custom, "mappings", "azure-vm-sizes.csv")
    lines = [l for l in open(sizes) if "MI300X" not in l]
    with open(sizes, "w") as f:
        f.writelines(lines)
    done = run("import", "azure-retail-prices", fixture("azure-retail-prices-page1.json"),
               "--as-of", "2026-11-09", "--catalog-dir", custom, "--out", custom)
    summary = json.loads(done.stdout) if done.returncode == 0 else {}
    check(summary.get("skipped", {}).get("vm_size_not_mapped") == 8 and
          summary.get("offerings_added") == 0,
          f"the catalog directory's own mappings are used: {summary.get('skipped')}")


def main():
    work = tempfile.mkdtemp(prefix="gpucost-import-")
    try:
        catalog_dir, summaries = import_all(work)
        check_summaries(summaries)
        checked = run("check-catalog", "--catalog-dir", catalog_dir)
        check(checked.returncode == 0, f"check-catalog accepts the import: {checked.stderr}")
        check_served(catalog_dir)
        check_malformed(work)
        check_catalog_dir_mappings(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("import end-to-end: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
