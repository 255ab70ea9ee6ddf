#!/usr/bin/python3
"""Contract test: runs the real gpucost binary and checks its answers against openapi.yaml.

usage: openapi_contract_test.py GPUCOST_BINARY OPENAPI_YAML

Every operation in the document is called at least once; each response's status must be
documented for that operation and its body must validate against the documented schema
(a small validator for the subset of JSON Schema the document uses: $ref, allOf, type with
null, required, properties, items, enum, additionalProperties, minimum, maximum). Examples in
the document are validated too, so they cannot drift from the schemas.
Prints one line per check and ends with 'N passed, M failed'.
"""
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request

import yaml

BINARY, SPEC_PATH = sys.argv[1], sys.argv[2]
spec = yaml.safe_load(open(SPEC_PATH, encoding="utf-8"))
results = []


def check(ok, what):
    results.append(bool(ok))
    print(("ok - " if ok else "not ok - ") + what, flush=True)


def resolve(schema):
    while isinstance(schema, dict) and "$ref" in schema:
        node = spec
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def type_ok(value, t):
    return {
        "object": isinstance(value, dict),
        "array": isinstance(value, list),
        "string": isinstance(value, str),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, (int, float)) and not isinstance(value, bool),
        "boolean": isinstance(value, bool),
        "null": value is None,
    }[t]


def validate(value, schema, path="$"):
    """Returns a list of error strings."""
    schema = resolve(schema)
    errors = []
    for sub in schema.get("allOf", []):
        errors += validate(value, sub, path)
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(type_ok(value, t) for t in types):
            return errors + [f"{path}: {value!r:.60} is not {types}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} not in enum")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{path}: {value} < minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{path}: {value} > maximum {schema['maximum']}")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{path}: missing required '{key}'")
        props = schema.get("properties", {})
        for key, sub in props.items():
            if key in value:
                errors += validate(value[key], sub, f"{path}.{key}")
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key, v in value.items():
                if key not in props:
                    errors += validate(v, extra, f"{path}.{key}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            errors += validate(item, schema["items"], f"{path}[{i}]")
    return errors


def operation(path, method):
    return spec["paths"][path][method]


def response_schema(op, status, media):
    responses = op["responses"]
    resp = responses.get(str(status))
    if resp is None:
        return None, None
    resp = resolve(resp)
    content = resp.get("content", {})
    return (content.get(media) or {}).get("schema"), content.get(media)


called = set()


def call(doc_path, url_path, method="get", expect=200, body=None, headers=None):
    called.add((doc_path, method))
    req = urllib.request.Request(BASE + url_path, method=method.upper(), data=body,
                                 headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            status, ctype, raw = r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        status, ctype, raw = e.code, e.headers.get("Content-Type", ""), e.read()
    op = operation(doc_path, method)
    check(status == expect, f"{method.upper()} {url_path} -> {status} (want {expect})")
    schema, media = response_schema(op, status, ctype.split(";")[0])
    check(media is not None, f"{method.upper()} {doc_path} documents {status} {ctype}")
    if schema is not None and ctype.startswith(("application/json", "application/problem+json")):
        value = json.loads(raw)
        errs = validate(value, schema)
        check(not errs, f"{method.upper()} {url_path} body matches schema" +
              ("" if not errs else ": " + "; ".join(errs[:5])))
        return value
    return raw


# 1. Examples in the document validate against their schemas.
for path, item in spec["paths"].items():
    for method, op in item.items():
        for status, resp in op["responses"].items():
            for media, content in resolve(resp).get("content", {}).items():
                if "example" in content and "schema" in content:
                    errs = validate(content["example"], content["schema"])
                    check(not errs, f"example {method.upper()} {path} {status} is valid" +
                          ("" if not errs else ": " + "; ".join(errs[:5])))

# 2. Start the real server on a free port and read the port from its log.
proc = subprocess.Popen([BINARY, "--port", "0", "--access-log", "false"],
                        stderr=subprocess.PIPE, text=True)
port = None
deadline = time.time() + 20
while time.time() < deadline and port is None:
    line = proc.stderr.readline()
    if not line:
        break
    try:
        entry = json.loads(line)
    except ValueError:
        continue
    if entry.get("msg") == "listening":
        port = entry["port"]
check(port is not None, "server started and logged its port")
if port is None:
    proc.kill()
    sys.exit(1)
BASE = f"http://127.0.0.1:{port}"

try:
    accelerators = call("/v1/accelerators", "/v1/accelerators")
    call("/v1/accelerators", "/v1/accelerators?vendor=nvidia&precision=fp8")
    call("/v1/accelerators", "/v1/accelerators?precision=fp3", expect=422)
    call("/v1/accelerators/{id}", "/v1/accelerators/h100-sxm")
    call("/v1/accelerators/{id}", "/v1/accelerators/no-such-chip", expect=404)
    providers = call("/v1/providers", "/v1/providers")
    check({p["id"] for p in providers["items"]} ==
          {"aws", "gcp", "azure", "lambda", "coreweave", "runpod", "vastai"},
          "all seven providers are listed")
    page = call("/v1/offerings", "/v1/offerings?provider=aws&limit=7")
    seen = [o["id"] for o in page["items"]]
    while page["next_cursor"]:
        page = call("/v1/offerings", "/v1/offerings?provider=aws&limit=7&cursor=" +
                    page["next_cursor"])
        seen += [o["id"] for o in page["items"]]
    check(len(seen) == len(set(seen)) == page["total_count"],
          f"cursor paging visits all {page['total_count']} AWS offerings once")
    call("/v1/offerings", "/v1/offerings?bogus=1", expect=400)
    call("/v1/offerings", "/v1/offerings?limit=0", expect=422)
    call("/v1/offerings/{id}", "/v1/offerings/" + seen[0])
    call("/v1/offerings/{id}", "/v1/offerings/nope", expect=404)
    call("/v1/catalog", "/v1/catalog")
    # Estimator (issue 3): each endpoint with its documented request example, and a 422.
    json_headers = {"Content-Type": "application/json"}
    for est_path in ("/v1/estimates/training", "/v1/estimates/inference",
                     "/v1/estimates/roofline"):
        body = operation(est_path, "post")["requestBody"]["content"]["application/json"]
        errs = validate(body["example"], body["schema"])
        check(not errs, f"request example POST {est_path} is valid" +
              ("" if not errs else ": " + "; ".join(errs[:5])))
        call(est_path, est_path, "post", body=json.dumps(body["example"]).encode(),
             headers=json_headers)
    call("/v1/estimates/training", "/v1/estimates/training", "post", expect=422,
         body=json.dumps({"model": {"params_b": 7}, "tokens_b": 1,
                          "hardware": {"accelerator": "no-such-chip", "count": 8}}).encode(),
         headers=json_headers)
    call("/", "/")
    call("/healthz", "/healthz")
    call("/readyz", "/readyz")
    served = call("/openapi.yaml", "/openapi.yaml")
    check(served == open(SPEC_PATH, "rb").read(), "served /openapi.yaml is the repository's file")
    for path, item in spec["paths"].items():
        for method in item:
            check((path, method) in called, f"{method.upper()} {path} was exercised")
finally:
    proc.terminate()
    try:
        code = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = -9
    check(code == 0, f"server exits 0 on SIGTERM (got {code})")

passed = sum(results)
failed = len(results) - passed
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
