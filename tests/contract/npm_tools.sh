#!/usr/bin/env bash
# Installs the pinned npm tools (package.json + package-lock.json at the repository root, or in
# DIR: `web` for the planning page's build tools) into node_modules with `npm ci`, unless
# node_modules already matches the lock file; so a second run, or a run without network after a
# first one, does nothing. Prints how long it took.
#   tests/contract/npm_tools.sh [DIR]            install if needed
#   tests/contract/npm_tools.sh --check [DIR]    exit 1 when node_modules does not match the lock file
#   tests/contract/npm_tools.sh --redoc          only Redoc's standalone bundle (what the build embeds
#                                                for /docs), from the lock's redoc tarball, checked
#                                                against the lock's integrity; no other package
set -euo pipefail
check=0
redoc=0
dir=.
for arg in "$@"; do
    if [[ "$arg" == "--check" ]]; then check=1; elif [[ "$arg" == "--redoc" ]]; then redoc=1; else dir=$arg; fi
done
cd "$(dirname "$0")/../.."
cd "$dir"

if ((redoc)); then
    bundle=node_modules/redoc/bundles/redoc.standalone.js
    version=$(node -p 'require("./package-lock.json").packages["node_modules/redoc"].version')
    if [[ -f "$bundle" && "$(node -p 'require("./node_modules/redoc/package.json").version' 2>/dev/null)" == "$version" ]]; then
        echo "npm tools: $bundle (redoc $version) present"
        exit 0
    fi
    integrity=$(node -p 'require("./package-lock.json").packages["node_modules/redoc"].integrity')
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    timeout 300 npm pack "redoc@$version" --pack-destination "$tmp" --silent --fetch-timeout=60000 --fetch-retries=2 >/dev/null
    got=$(node -e 'const c = require("crypto"), f = require("fs");
        console.log("sha512-" + c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' \
        "$tmp/redoc-$version.tgz")
    if [[ "$got" != "$integrity" ]]; then
        echo "npm tools: redoc-$version.tgz does not match package-lock.json's integrity" >&2
        exit 1
    fi
    mkdir -p node_modules/redoc/bundles
    tar -xzf "$tmp/redoc-$version.tgz" -C node_modules/redoc --strip-components=1 \
        package/package.json package/bundles/redoc.standalone.js
    echo "npm tools: $bundle (redoc $version) unpacked"
    exit 0
fi

# Prism's dependency @scarf/scarf reports installs home from a postinstall script; never.
export SCARF_ANALYTICS=false
SECONDS=0
# npm ci writes node_modules/.package-lock.json last; a copy of the lock's packages there means
# the tree is complete for this lock file.
installed=node_modules/.package-lock.json
up_to_date() {
    [[ -f "$installed" ]] && node -e '
        const want = require("./package-lock.json").packages, have = require("./'"$installed"'").packages;
        for (const [k, v] of Object.entries(want)) {
            if (k === "" || v.optional) continue;  // optional: platform-only (fsevents)
            if (!have[k] || have[k].version !== v.version) process.exit(1);
        }' 2>/dev/null
}

if up_to_date; then
    echo "npm tools ($dir): node_modules matches package-lock.json ($(node --version), npm $(npm --version))"
    exit 0
fi
if ((check)); then
    echo "npm tools ($dir): node_modules is missing or does not match package-lock.json; run $0" >&2
    exit 1
fi
# Bounded: a registry that does not answer fails the step instead of hanging CI.
timeout 600 npm ci --no-audit --no-fund --prefer-offline --fetch-timeout=60000 --fetch-retries=2
printf "npm tools ($dir): npm ci took %d s (node %s, npm %s)\n" \
    "$SECONDS" "$(node --version)" "$(npm --version)"
