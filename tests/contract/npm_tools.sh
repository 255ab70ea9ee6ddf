#!/usr/bin/env bash
# Installs the pinned npm tools (package.json + package-lock.json at the repository root, or in
# DIR: `web` for the planning page's build tools) into node_modules with `npm ci`, unless
# node_modules already matches the lock file; so a second run, or a run without network after a
# first one, does nothing. Prints how long it took.
#   tests/contract/npm_tools.sh [DIR]            install if needed
#   tests/contract/npm_tools.sh --check [DIR]    exit 1 when node_modules does not match the lock file
set -euo pipefail
check=0
dir=.
for arg in "$@"; do
    if [[ "$arg" == "--check" ]]; then check=1; else dir=$arg; fi
done
cd "$(dirname "$0")/../.."
cd "$dir"

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
