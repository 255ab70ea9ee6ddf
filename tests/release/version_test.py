#!/usr/bin/env python3
"""One version everywhere (docs/development.md, "Releasing"): CMakeLists.txt's project(VERSION)
is the one declaration; the binary (`--version`, GET /, /healthz, the API-Version header on every
answer, the served /openapi.yaml), openapi.yaml's info.version, README.md's "Current release" and
CHANGELOG.md's newest released version must all say it. Also the CHANGELOG's shape: an
"Unreleased" section on top, then released versions, newest first, each with a date.

Usage: version_test.py GPUCOST_BINARY SOURCE_DIR"""
import datetime
import json
import os
import re
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "contract"))
import serve  # noqa: E402

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def read(source, name):
    with open(os.path.join(source, name), encoding="utf-8") as f:
        return f.read()


def declared_version(source):
    found = re.search(r"^project\(gpucost VERSION (\d+\.\d+\.\d+)\b", read(source, "CMakeLists.txt"),
                      re.M)
    return found.group(1) if found else None


def semver(text):
    return tuple(int(part) for part in text.split("."))


def check_changelog(text, version):
    """## Unreleased, then '## X.Y.Z - YYYY-MM-DD' headings, newest first; the first is `version`."""
    headings = re.findall(r"^## (.+)$", text, re.M)
    check(bool(headings) and headings[0] == "Unreleased",
          f"CHANGELOG.md starts with '## Unreleased' (first heading: {headings[:1]})")
    released = []
    for heading in headings[1:]:
        m = re.fullmatch(r"(\d+\.\d+\.\d+) - (\d{4}-\d{2}-\d{2})", heading)
        check(m is not None, f"CHANGELOG.md heading '{heading}' is 'X.Y.Z - YYYY-MM-DD'")
        if m:
            datetime.date.fromisoformat(m.group(2))
            released.append((semver(m.group(1)), m.group(2)))
    check(bool(released) and released[0][0] == semver(version),
          f"CHANGELOG.md's newest release is {version} (found {released[:1]})")
    check(released == sorted(released, reverse=True) and len({v for v, _ in released}) ==
          len(released), "CHANGELOG.md's releases are newest first, versions and dates")


def check_sources(source, version):
    info = re.search(r"^info:\n(?:  .*\n)*?  version: (\S+)$", read(source, "openapi.yaml"), re.M)
    check(info is not None and info.group(1) == version,
          f"openapi.yaml info.version is {version} ({info and info.group(1)})")
    readme = re.search(r"Current release: \*\*(\S+)\*\*", read(source, "README.md"))
    check(readme is not None and readme.group(1) == version,
          f"README.md's 'Current release' is {version} ({readme and readme.group(1)})")
    check_changelog(read(source, "CHANGELOG.md"), version)


def get(port, path, accept="application/json"):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Accept": accept})
    with urllib.request.urlopen(request, timeout=10) as r:
        return r.headers, r.read().decode()


def check_binary(binary, version):
    printed = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10)
    check(printed.stdout.strip() == f"gpucost {version}",
          f"--version prints 'gpucost {version}' ({printed.stdout.strip()!r})")
    proc, port = serve.start(binary)
    check(port is not None, "the server starts")
    if port is None:
        return
    try:
        headers, body = get(port, "/")
        check(json.loads(body)["version"] == version and headers["API-Version"] == version,
              f"GET / says {version}, in its body and API-Version")
        headers, body = get(port, "/healthz")
        health = json.loads(body)
        check(health["version"] == version and headers["API-Version"] == version,
              f"/healthz says {version}, in its body and API-Version")
        check(health["catalog"].get("catalog_version") == health["catalog"].get("version"),
              "/healthz names its catalog's version catalog_version (version kept, deprecated)")
        headers, body = get(port, "/openapi.yaml", accept="application/yaml")
        served = re.search(r"^  version: (\S+)$", body, re.M)
        check(served is not None and served.group(1) == version == headers["API-Version"],
              f"the served /openapi.yaml's info.version is {version}")
        headers, _ = get(port, "/v1/catalog")
        check(headers["API-Version"] == version, f"/v1/catalog's API-Version is {version}")
        # The deprecated answer member (`version`) is in the body, but the client used nothing
        # deprecated: no Deprecation or Sunset (they mark a deprecated request member).
        check(headers.get("Deprecation") is None and headers.get("Sunset") is None,
              "GET /v1/catalog sends no Deprecation or Sunset")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main():
    binary, source = sys.argv[1], sys.argv[2]
    version = declared_version(source)
    check(version is not None, f"CMakeLists.txt declares project(gpucost VERSION {version})")
    if version:
        check_sources(source, version)
        check_binary(binary, version)
    print(f"{len(failures)} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
