"""Database mode, as a client walks the lists and an operator imports spend:

  * GET /v1/price-books, GET /v1/offerings/{id}/history and GET /v1/actuals/imports are paged
    like every other list (`limit` 1-500, default 50; `next_cursor`, `total_count`); a bad
    limit or cursor is 422 naming it;
  * cursors are opaque: none reads as the catalog version, the id or the offset it holds, and
    one changed character is 422 on `cursor` (offerings, scenarios, price books, history, plans);
  * `gpucost actuals import focus` writes the kept rows into the database when DATABASE_URL is
    set (one import per file, idempotent, listed by GET /v1/actuals/imports), as `gpucost
    import` writes prices there.

    tests/pg/with_pg.sh python3 tests/pg/paging_pg_test.py BINARY FOCUS_FIXTURE_DIR
"""
import base64
import binascii
import json
import os
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "contract"))
import serve  # noqa: E402

BINARY, FOCUS = sys.argv[1], sys.argv[2]
OFFERING = "aws-p5.48xlarge-us-east-1-on-demand"
failures = []


def check(condition, what):
    print(("ok: " if condition else "FAIL: ") + what)
    if not condition:
        failures.append(what)


def run(*args, env=None):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=120, env=env)


def request(port, method, path, body=None, key=None, headers=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method)
    if body is not None:
        req.add_header("Content-Type", "application/json")
    if key:
        req.add_header("Authorization", "Bearer " + key)
    for name, value in (headers or {}).items():
        req.add_header(name, value)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        text = e.read()
        return e.code, json.loads(text) if text else None


def readable(cursor):
    """Every way a client might try to read a cursor: hex, base64url, as it is."""
    texts = [cursor]
    for decode in (lambda c: binascii.unhexlify(c),
                   lambda c: base64.urlsafe_b64decode(c + "=" * (-len(c) % 4))):
        try:
            texts.append(decode(cursor).decode("latin-1"))
        except (ValueError, binascii.Error):
            pass
    return "\n".join(texts)


def tampered(cursor):
    if not cursor:
        return "AAAA"
    middle = len(cursor) // 2
    return cursor[:middle] + ("A" if cursor[middle] != "A" else "B") + cursor[middle + 1:]


def check_refused(port, path, key, what):
    status, body = request(port, "GET", path, key=key)
    check(status == 422 and body and body.get("field") == "cursor",
          f"{what}: a changed cursor is 422 on cursor ({status} {body and body.get('field')})")


def walk(port, path, key, limit):
    """Every page of a list at `limit` a page: (pages, items)."""
    pages, items, cursor = [], [], None
    while True:
        sep = "&" if "?" in path else "?"
        target = f"{path}{sep}limit={limit}" + (f"&cursor={urllib.parse.quote(cursor)}" if cursor else "")
        status, body = request(port, "GET", target, key=key)
        check(status == 200, f"GET {target[:80]} answers 200 ({status})")
        if status != 200:
            return pages, items
        pages.append(body)
        items.extend(body["items"] if "items" in body else body["prices"])
        cursor = body.get("next_cursor")
        if not cursor or len(pages) > 20:
            return pages, items


def test_price_books(port, admin):
    for n in range(3):
        status, _ = request(port, "POST", "/v1/price-books",
                            {"id": f"book-{n}", "name": f"book {n}",
                             "rules": [{"provider": "aws", "discount_fraction": 0.1}]}, key=admin)
        check(status == 201, f"price book {n} stored ({status})")
    pages, items = walk(port, "/v1/price-books", admin, 2)
    check([len(p["items"]) for p in pages] == [2, 1], "3 books come as pages of 2 and 1")
    check([b["id"] for b in items] == ["book-0", "book-1", "book-2"], "every book once, by id")
    check(pages and all(p.get("total_count") == 3 and p.get("limit") == 2 for p in pages),
          "each page says total_count 3 and limit 2")
    check(pages and pages[-1].get("next_cursor", "absent") is None, "the last page's next_cursor is null")
    status, body = request(port, "GET", "/v1/price-books", key=admin)
    check(status == 200 and body.get("limit") == 50, "the default page size is 50")
    for bad in ("0", "501", "x"):
        status, body = request(port, "GET", f"/v1/price-books?limit={bad}", key=admin)
        check(status in (400, 422) and body and body.get("field") == "limit",
              f"limit={bad} is refused naming limit ({status})")
    status, body = request(port, "GET", "/v1/price-books?limit=0", key=admin)
    check(status == 422, f"limit=0 is 422 ({status})")
    first = pages[0]["next_cursor"] if pages else ""
    check(first and "book-1" not in readable(first), "a price-book cursor does not read as the id it holds")
    check_refused(port, "/v1/price-books?cursor=" + urllib.parse.quote(tampered(first)), admin,
                  "price books")
    check_refused(port, "/v1/price-books?cursor=book-1", admin, "price books (a plain id)")


def test_history(port, admin):
    for n in range(4):
        status, _ = request(port, "PUT", f"/v1/offerings/{OFFERING}/price",
                            {"usd_per_hour": 90 + n, "source": "paging-test"}, key=admin)
        check(status == 200, f"price {n} written ({status})")
    pages, items = walk(port, f"/v1/offerings/{OFFERING}/history", None, 2)
    total = pages[0].get("total_count") if pages else None
    check(total is not None and total >= 5, f"history counts every price ({total})")
    check(pages and len(items) == total and len({p["id"] for p in items}) == total,
          "the pages hold every price once")
    check(all(len(p["prices"]) <= 2 for p in pages) and len(pages) == -(-(total or 0) // 2),
          f"pages of at most 2 ({len(pages)} pages)")
    check(pages and all(p.get("id") == OFFERING and "etag" in p for p in pages),
          "each page is the offering's history, with its etag")
    first = pages[0]["next_cursor"] if pages else ""
    check(first and len(items) > 1 and str(items[1]["id"]) not in readable(first).replace(OFFERING, ""),
          "a history cursor does not read as the price id it holds")
    path = f"/v1/offerings/{OFFERING}/history"
    check_refused(port, f"{path}?cursor=" + urllib.parse.quote(tampered(first)), None, "history")
    status, body = request(port, "GET", f"{path}?limit=501")
    check(status == 422 and body and body.get("field") == "limit", f"history limit=501 is 422 ({status})")
    status, _ = request(port, "PUT", f"/v1/offerings/{OFFERING}/price",
                        {"usd_per_hour": 99, "source": "paging-test"}, key=admin)
    status, body = request(port, "GET", f"{path}?cursor=" + urllib.parse.quote(first or "x"))
    check(status == 409 and body and body.get("field") == "cursor",
          f"a history cursor from before a write to the offering is 409 on cursor ({status})")
    other = "aws-p4d.24xlarge-us-east-1-on-demand"
    check_refused(port, f"/v1/offerings/{other}/history?cursor=" + urllib.parse.quote(first), None,
                  "another offering's history")


def test_opaque(port, admin):
    status, catalog = request(port, "GET", "/v1/catalog")
    version = catalog.get("catalog_version") or catalog.get("version") or "-"
    status, body = request(port, "GET", "/v1/offerings?limit=1")
    cursor = body.get("next_cursor") or ""
    check(status == 200 and cursor and version not in readable(cursor),
          f"an offerings cursor does not read as the catalog version {version}")
    check_refused(port, "/v1/offerings?limit=1&cursor=" + urllib.parse.quote(tampered(cursor)), None,
                  "offerings")
    plan = {"name": "s", "plan": "spot",
            "request": {"job_hours": 100, "on_demand_usd_per_hour": 98.32, "spot_usd_per_hour": 30,
                        "interruptions_per_hour": 0.1, "checkpoint_minutes": 3,
                        "restart_minutes": 6}}
    for n in range(2):
        status, saved = request(port, "POST", "/v1/scenarios", dict(plan, name=f"s{n}"), key=admin)
        check(status == 201, f"scenario {n} saved ({status})")
    status, body = request(port, "GET", "/v1/scenarios?limit=1", key=admin)
    cursor = (body or {}).get("next_cursor") or ""
    check(status == 200 and cursor and not cursor.isdigit(), f"a scenario cursor is not its id ({cursor[:20]})")
    check_refused(port, "/v1/scenarios?cursor=1", admin, "scenarios (a plain id)")
    training = {"model": "llama-3.1-8b", "tokens_b": 10, "limit": 2}
    status, body = request(port, "POST", "/v1/plans/training", training)
    cursor = (body or {}).get("next_cursor") or ""
    check(status == 200 and cursor and version not in readable(cursor),
          f"a plan cursor does not read as the catalog version ({status})")
    status, body = request(port, "POST", "/v1/plans/training", dict(training, cursor=tampered(cursor)))
    check(status == 422 and body and body.get("field") == "/cursor",
          f"a changed plan cursor is 422 on /cursor ({status})")


def test_actuals_import(port, admin):
    aws = os.path.join(FOCUS, "aws-focus-1.0.csv")
    gcp = os.path.join(FOCUS, "gcp-focus-1.0.csv.gz")
    done = run("actuals", "import", "focus", aws, gcp)
    check(done.returncode == 0, f"actuals import with DATABASE_URL exits 0: {done.stderr.strip()[-300:]}")
    report = json.loads(done.stdout) if done.returncode == 0 else {}
    imports = report.get("imports") or []
    check(report.get("into") == "database" and len(imports) == 2,
          f"one import per file, into the database ({report.get('into')}, {len(imports)})")
    check(report.get("kept") == 5 and report.get("added") == 5 and report.get("already_imported") == 0,
          f"the 5 kept rows are added ({report.get('kept')}, {report.get('added')})")
    again = run("actuals", "import", "focus", aws, gcp)
    report2 = json.loads(again.stdout) if again.returncode == 0 else {}
    check(report2.get("added") == 0 and report2.get("already_imported") == 5,
          f"importing again adds nothing ({report2.get('added')}, {report2.get('already_imported')})")
    status, body = request(port, "GET", "/v1/actuals/imports", key=admin)
    ids = {i.get("import_id") for i in imports + (report2.get("imports") or [])}
    listed = {str(i.get("import_id")) for i in (body or {}).get("items", [])}
    check(status == 200 and ids and ids <= listed and (body or {}).get("total_count") == 4,
          f"GET /v1/actuals/imports lists the 4 imports the command made ({status}, {listed})")
    pages, items = walk(port, "/v1/actuals/imports", admin, 3)
    check([len(p["items"]) for p in pages] == [3, 1] and
          [i["import_id"] for i in items] == sorted((i["import_id"] for i in items), key=int, reverse=True),
          "the imports come newest first as pages of 3 and 1")
    first = pages[0].get("next_cursor") if pages else ""
    check_refused(port, "/v1/actuals/imports?cursor=" + urllib.parse.quote(tampered(first)), admin,
                  "imports")
    charges = subprocess.run([os.path.join(os.environ.get("PGBIN", "/usr/lib/postgresql/15/bin"), "psql"), os.environ["DATABASE_URL"], "-Atc",
                              "SELECT count(*), sum(effective_cost)::numeric(12,2) FROM actual_charges"],
                             capture_output=True, text=True).stdout.strip()
    check(charges == "5|6762.61", f"the database holds the 5 charges, effective 6762.61 USD ({charges})")
    broken = os.path.join(os.path.dirname(os.path.abspath(__file__)), "paging_pg_test.py")
    bad = run("actuals", "import", "focus", broken)
    check(bad.returncode != 0, "a file that is not FOCUS fails the command")
    status, body = request(port, "GET", "/v1/actuals/imports", key=admin)
    check((body or {}).get("total_count") == 4, "and stores no import")
    nobody = run("actuals", "import", "focus", aws, "--team", "no-such-team")
    check(nobody.returncode == 2 and "no team 'no-such-team'" in nobody.stderr,
          f"an unknown --team is refused ({nobody.returncode}: {nobody.stderr.strip()[-120:]})")
    embedded = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    alone = run("actuals", "import", "focus", aws, env=embedded)
    report3 = json.loads(alone.stdout) if alone.returncode == 0 else {}
    check(alone.returncode == 0 and report3.get("added", 0) is None and "imports" not in report3,
          "without DATABASE_URL (and no --into) nothing is stored")


def main():
    for step in ("migrate", "seed"):
        done = run(step)
        check(done.returncode == 0, f"gpucost {step}: {done.stderr.strip()[-300:]}")
    admin = run("apikey", "create", "--scope", "admin", "--name", "paging-test").stdout.strip()
    proc, port = serve.start(BINARY, ["--snapshot-refresh-ms", "200"], embedded=False)
    check(port is not None, "a replica serves the database")
    if port is None:
        return 1
    try:
        test_price_books(port, admin)
        test_history(port, admin)
        test_opaque(port, admin)
        test_actuals_import(port, admin)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
