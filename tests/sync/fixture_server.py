"""A stand-in for the providers' price endpoints, serving the recorded real-format answers in
tests/data/import (AWS offer file, Azure Retail Prices pages, GCP Cloud Billing Catalog SKUs,
Lambda's instance types, RunPod's GraphQL gpuTypes, Vast.ai's bundles search in pages of
three offers, CoreWeave's pricing page) under the paths `gpucost sync` asks for, in behaviours chosen by the first path
part:

  /ok/...         every answer as recorded
  /flaky/...      each URL answers 429 (Retry-After: 0), then 503, then as recorded
  /truncated/...  the body is cut off after half its Content-Length
  /nolength/...   the body is cut off after half, sent without a Content-Length (close-delimited)
  /changed/...    the documented member renamed (Items, skus, products, data, offers), RunPod's
                  GraphQL answering `errors`, CoreWeave's price column renamed: a changed schema
  /down/...       503 always

Point gpucost at it with GPUCOST_SYNC_AWS_URL=http://HOST:PORT/ok/aws/ (then REGION/index.json),
GPUCOST_SYNC_AZURE_URL=http://HOST:PORT/ok/azure, GPUCOST_SYNC_GCP_URL=http://HOST:PORT/ok/gcp/,
GPUCOST_SYNC_LAMBDA_URL=http://HOST:PORT/ok/lambda/api/v1/instance-types,
GPUCOST_SYNC_RUNPOD_URL=http://HOST:PORT/ok/runpod/graphql,
GPUCOST_SYNC_VASTAI_URL=http://HOST:PORT/ok/vastai/api/v0/bundles/,
GPUCOST_SYNC_COREWEAVE_URL=http://HOST:PORT/ok/coreweave/pricing, GCP_API_KEY=fixture-key and
LAMBDA_API_KEY=fixture-key (`env_for(base, behaviour)` gives them all). Standalone:
python3 fixture_server.py FIXTURE_DIR [PORT [HOST]] prints "listening on PORT" and serves until
killed (HOST 0.0.0.0: containers reach it at their network's gateway); python3 fixture_server.py
--env BASE prints env_for(BASE, "ok") as NAME=VALUE lines.
"""
import http.server
import json
import os
import sys
import threading
import urllib.parse

GCP_KEY = "fixture-key"
# Offers per Vast.ai search answer here, fewer than sync's limit: sync must follow the pages.
VASTAI_PAGE = 3
GCP_COMPUTE = "6F81-5844-456A"


class Fixtures:
    def __init__(self, directory):
        def load(name):
            with open(os.path.join(directory, name), encoding="utf-8") as f:
                return json.load(f)

        self.aws = {"us-east-1": load("aws-price-list-us-east-1.json")}
        self.azure = [load("azure-retail-prices-page1.json"), load("azure-retail-prices-page2.json")]
        skus = load("gcp-billing-catalog-skus.json")["skus"]
        half = len(skus) // 2
        # Two pages of Compute Engine (the page token as GCP sends one), Cloud TPU empty: the
        # importer must see every page of both services in one import.
        self.gcp_pages = {"": {"skus": skus[:half], "nextPageToken": "page-2"},
                          "page-2": {"skus": skus[half:], "nextPageToken": ""}}
        self.lambda_types = load("lambda-instance-types.json")
        self.runpod = load("runpod-gpu-types.json")
        self.vastai = load("vastai-bundles.json")
        with open(os.path.join(directory, "coreweave-pricing.html"), encoding="utf-8") as f:
            self.coreweave = f.read()
        self.tries = {}
        self.lock = threading.Lock()

    def answer(self, path, query, headers=None, body=None):
        """(status, body dict or HTML text) for a path below the behaviour part."""
        parts = path.strip("/").split("/")
        if parts[0] == "lambda" and parts[1:] == ["api", "v1", "instance-types"]:
            if (headers or {}).get("Authorization") != "Bearer " + GCP_KEY:
                return 401, {"error": {"code": "global/invalid-api-key",
                                       "message": "API key was invalid, expired, or deleted."}}
            return 200, self.lambda_types
        if parts[0] == "runpod" and parts[1:] == ["graphql"]:
            if body is None or "gpuTypes" not in body.get("query", ""):
                return 400, {"errors": [{"message": "Must provide query string."}]}
            return 200, self.runpod
        if parts[0] == "vastai" and parts[1:] == ["api", "v0", "bundles"]:
            # Offers above the query's id filter in ascending id, at most VASTAI_PAGE whatever
            # the limit asked: the recorded six offers come in two pages, then an empty one.
            q = json.loads(query.get("q", ["{}"])[0])
            after = q.get("id", {}).get("gt", -1)
            offers = sorted((o for o in self.vastai["offers"] if o["id"] > after),
                            key=lambda o: o["id"])
            return 200, {"offers": offers[:min(q.get("limit", 64), VASTAI_PAGE)]}
        if parts[0] == "coreweave" and parts[1:] == ["pricing"]:
            return 200, self.coreweave
        if parts[0] == "aws" and len(parts) == 3 and parts[2] == "index.json":
            # One recorded offer file: another region's request gets it too (its rows are
            # us-east-1's, which an import of that region passes over), as the CronJob's regions
            # all answer.
            return 200, self.aws["us-east-1"]
        if parts[0] == "azure" and len(parts) == 1:
            skip = int(query.get("$skip", ["0"])[0])
            return 200, self.azure[0 if skip == 0 else 1]
        if parts[0] == "gcp" and len(parts) == 3 and parts[2] == "skus":
            if query.get("key", [""])[0] != GCP_KEY:
                return 403, {"error": {"code": 403, "message": "API key not valid"}}
            if parts[1] != GCP_COMPUTE:
                return 200, {"skus": [], "nextPageToken": ""}
            page = self.gcp_pages.get(query.get("pageToken", [""])[0])
            return (200, page) if page else (400, {"error": "bad page token"})
        return 404, {"error": "not found"}


def changed(doc):
    if isinstance(doc, str):  # CoreWeave's page with its price column renamed
        return doc.replace("Instance Price", "Price / Hour")
    if "data" in doc and "gpuTypes" in doc["data"]:  # RunPod: a field gone from the schema
        return {"errors": [{"message": 'Cannot query field "securePrice" on type "GpuType".',
                            "extensions": {"code": "GRAPHQL_VALIDATION_FAILED"}}]}
    renamed = {"Items": "items_v2", "skus": "sku_list", "products": "productsV2",
               "data": "instance_types", "offers": "bundles"}
    return {renamed.get(k, k): v for k, v in doc.items()}


def env_for(base, behaviour, **overrides):
    """The GPUCOST_SYNC_* variables and API keys that point every provider at `base`, one
    behaviour for all (overrides: provider=behaviour)."""
    def at(provider, tail):
        return "%s/%s/%s%s" % (base, overrides.get(provider, behaviour), provider, tail)
    return {
        "GPUCOST_SYNC_AWS_URL": at("aws", "/"),
        "GPUCOST_SYNC_AZURE_URL": at("azure", ""),
        "GPUCOST_SYNC_GCP_URL": at("gcp", "/"),
        "GPUCOST_SYNC_LAMBDA_URL": at("lambda", "/api/v1/instance-types"),
        "GPUCOST_SYNC_RUNPOD_URL": at("runpod", "/graphql"),
        "GPUCOST_SYNC_VASTAI_URL": at("vastai", "/api/v0/bundles/"),
        "GPUCOST_SYNC_COREWEAVE_URL": at("coreweave", "/pricing"),
        "GCP_API_KEY": GCP_KEY,
        "LAMBDA_API_KEY": GCP_KEY,
    }


def make_handler(fixtures):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def send(self, status, body, headers=(), cut=False, length=True):
            html = isinstance(body, str)
            data = body.encode() if html else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8" if html
                             else "application/json")
            if length:
                self.send_header("Content-Length", str(len(data)))
            else:
                cut = True
            for name, value in headers:
                self.send_header(name, value)
            if cut:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data[: len(data) // 2] if cut else data)
            if cut:
                self.close_connection = True

        def do_POST(self):
            size = int(self.headers.get("Content-Length", "0"))
            try:
                body = json.loads(self.rfile.read(size) or b"null")
            except ValueError:
                body = None
            self.do_GET(body if isinstance(body, dict) else {})

        def do_GET(self, post_body=None):
            url = urllib.parse.urlsplit(self.path)
            behaviour, _, rest = url.path.lstrip("/").partition("/")
            query = urllib.parse.parse_qs(url.query)
            if behaviour == "down":
                return self.send(503, {"error": "unavailable"})
            if behaviour == "flaky":
                with fixtures.lock:
                    tries = fixtures.tries.get(self.path, 0)
                    fixtures.tries[self.path] = tries + 1
                if tries == 0:
                    return self.send(429, {"error": "too many requests"}, [("Retry-After", "0")])
                if tries == 1:
                    return self.send(503, {"error": "unavailable"})
            status, body = fixtures.answer(rest, query, self.headers, post_body)
            if status == 200 and behaviour == "changed":
                body = changed(body)
            self.send(status, body, cut=(status == 200 and behaviour == "truncated"),
                      length=not (status == 200 and behaviour == "nolength"))

    return Handler


def start(directory, port=0, host="127.0.0.1"):
    """Starts the server on a thread; returns it (server.server_port is the port)."""
    server = http.server.ThreadingHTTPServer((host, port), make_handler(Fixtures(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


if __name__ == "__main__" and sys.argv[1:2] == ["--env"]:
    for name, value in env_for(sys.argv[2], "ok").items():
        print("%s=%s" % (name, value))
elif __name__ == "__main__":
    srv = start(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0,
                sys.argv[3] if len(sys.argv) > 3 else "127.0.0.1")
    print("listening on", srv.server_port, flush=True)
    threading.Event().wait()
