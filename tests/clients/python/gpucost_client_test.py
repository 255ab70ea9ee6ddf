#!/usr/bin/env python3
"""The Python client (clients/python/gpucost_client.py) against the live server: every
```python block of docs/python.md runs, in order, in one namespace, from the repository root,
with the page's http://127.0.0.1:8080 pointed at a server started here. Blocks whose first line
is "# database mode" run only in database mode (through tests/pg/with_pg.sh, which sets
DATABASE_URL; this test migrates, seeds and makes an admin key for them). Then the client's own rules: money as Decimal, CSV
rows, problems as GpucostProblem.

Usage: gpucost_client_test.py GPUCOST_BINARY SOURCE_DIR [embedded|database]"""
import contextlib
import io
import os
import re
import subprocess
import sys
from decimal import Decimal

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "contract"))
import serve  # noqa: E402

failures = []
DOC_URL = "http://127.0.0.1:8080"


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def doc_blocks(path):
    with open(path, encoding="utf-8") as f:
        return re.findall(r"^```python\n(.*?)^```$", f.read(), re.S | re.M)


def run_blocks(blocks, base, database):
    namespace = {"__name__": "docs_python"}
    ran = 0
    for number, block in enumerate(blocks, 1):
        if block.startswith("# database mode") and not database:
            continue
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                exec(compile(block.replace(DOC_URL, base), f"docs/python.md block {number}",
                             "exec"), namespace)
            ran += 1
            check(True, f"docs/python.md block {number} runs ({printed.getvalue().strip()[:90]!r})")
        except Exception as e:  # noqa: BLE001 (the test reports whatever the example raised)
            check(False, f"docs/python.md block {number} runs: {type(e).__name__}: {e}")
    return namespace, ran


def client_rules(client_module, base):
    api = client_module.Client(base)
    catalog = api.catalog()
    check(isinstance(catalog["offering_count"], int), "counts are int")
    offering = next(api.iter_offerings(limit=1))
    check(isinstance(offering["usd_per_hour"], Decimal), "prices are Decimal")
    try:
        api.offering("no-such-offering")
        check(False, "an unknown offering raises GpucostProblem")
    except client_module.GpucostProblem as p:
        check(p.status == 404 and p.code == "not_found" and p.problem.get("status") == 404,
              f"an unknown offering raises GpucostProblem 404 not_found ({p})")
    try:
        api.offerings(limit=0)
        check(False, "limit=0 raises GpucostProblem")
    except client_module.GpucostProblem as p:
        check(p.status == 422 and p.field == "limit", f"limit=0 is 422 on limit ({p})")
    rows = client_module.csv_rows("a,b,c,d\n1,2.50,x,\n")
    check(rows == [{"a": 1, "b": Decimal("2.50"), "c": "x", "d": None}],
          "csv_rows reads int, Decimal, text and empty cells")
    check(client_module._dumps({"usd": Decimal("98.32")}) == b'{"usd": 98.32}',
          "a Decimal is sent as the same JSON number")


def written_catalog_version(client_module, base):
    """A write's answer names the catalog version the write made: the one GET /v1/catalog
    serves after it; providers and history name the catalog served."""
    admin = client_module.Client(base, api_key=os.environ["GPUCOST_KEY"])
    offering = "aws-p5.48xlarge-us-east-1-on-demand"
    before = admin.catalog()["catalog_version"]
    check(admin.providers()["catalog_version"] == before, "providers name the catalog served")
    check(admin.offering_history(offering)["catalog_version"] == before,
          "an offering's history names the catalog served")
    written = admin.put_price(offering, {"usd_per_hour": Decimal("55.04"),
                                         "source": "python client test"})
    after = admin.catalog()["catalog_version"]
    check(written["catalog_version"] == after != before,
          f"a price write's answer names the version it made ({written['catalog_version']}, "
          f"catalog now {after}, before {before})")


def start_database_server(binary):
    url = os.environ["DATABASE_URL"]

    def gpucost(*args):
        out = subprocess.run([binary, *args, "--database-url", url], capture_output=True,
                             text=True, timeout=120)
        check(out.returncode == 0, f"gpucost {args[0]} exits 0 ({out.stderr.strip()[:200]})")
        return out.stdout.strip()

    gpucost("migrate")
    gpucost("seed")
    os.environ["GPUCOST_KEY"] = gpucost("apikey", "create", "--scope", "admin", "--name",
                                        "notebook")
    return serve.start(binary, ["--database-url", url], embedded=False)


def main():
    binary, source = sys.argv[1], sys.argv[2]
    database = sys.argv[3:] == ["database"]
    os.chdir(source)
    proc, port = start_database_server(binary) if database else serve.start(binary)
    check(port is not None, f"the server starts ({'database' if database else 'embedded'} mode)")
    if port is None:
        sys.exit(1)
    base = f"http://127.0.0.1:{port}"
    try:
        blocks = doc_blocks(os.path.join(source, "docs", "python.md"))
        namespace, ran = run_blocks(blocks, base, database)
        check(ran >= (len(blocks) if database else 6), f"{ran} of {len(blocks)} examples ran")
        sys.path.insert(0, os.path.join(source, "clients", "python"))
        import gpucost_client  # noqa: PLC0415 (after the path is set)
        client_rules(gpucost_client, base)
        if database:
            written_catalog_version(gpucost_client, base)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    print(f"{len(failures)} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
