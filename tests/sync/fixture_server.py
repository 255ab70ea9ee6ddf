"""A stand-in for the providers' price endpoints, serving the recorded real-format answers in
tests/data/import (AWS offer file, Azure Retail Prices pages, GCP Cloud Billing Catalog SKUs)
under the paths `gpucost sync` asks for, in five behaviours chosen by the first path part:

  /ok/...         every answer as recorded
  /flaky/...      each URL answers 429 (Retry-After: 0), then 503, then as recorded
  /truncated/...  the body is cut off after half its Content-Length
  /changed/...    the documented member renamed (Items, skus, products): a changed schema
  /down/...       503 always

Point gpucost at it with GPUCOST_SYNC_AWS_URL=http://HOST:PORT/ok/aws/ (then REGION/index.json),
GPUCOST_SYNC_AZURE_URL=http://HOST:PORT/ok/azure, GPUCOST_SYNC_GCP_URL=http://HOST:PORT/ok/gcp/
and GCP_API_KEY=fixture-key. Standalone: python3 fixture_server.py FIXTURE_DIR [PORT] prints
"listening on PORT" and serves until killed.
"""
import http.server
import json
import os
import sys
import threading
import urllib.parse

GCP_KEY = "fixture-key"
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
        self.tries = {}
        self.lock = threading.Lock()

    def answer(self, path, query):
        """(status, body dict or None) for a path below the behaviour part."""
        parts = path.strip("/").split("/")
        if parts[0] == "aws" and len(parts) == 3 and parts[2] == "index.json":
            doc = self.aws.get(parts[1])
            return (200, doc) if doc else (404, {"error": "no such region"})
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
    renamed = {"Items": "items_v2", "skus": "sku_list", "products": "productsV2"}
    return {renamed.get(k, k): v for k, v in doc.items()}


def make_handler(fixtures):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def send(self, status, body, headers=(), cut=False):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers:
                self.send_header(name, value)
            if cut:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data[: len(data) // 2] if cut else data)
            if cut:
                self.close_connection = True

        def do_GET(self):
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
            status, body = fixtures.answer(rest, query)
            if status == 200 and behaviour == "changed":
                body = changed(body)
            self.send(status, body, cut=(status == 200 and behaviour == "truncated"))

    return Handler


def start(directory, port=0):
    """Starts the server on a thread; returns it (server.server_port is the port)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), make_handler(Fixtures(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


if __name__ == "__main__":
    srv = start(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    print("listening on", srv.server_port, flush=True)
    threading.Event().wait()
