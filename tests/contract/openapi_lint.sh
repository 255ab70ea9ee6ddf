#!/usr/bin/env bash
# Lints openapi.yaml as integrators' tools do, both pinned in package.json: @redocly/cli under
# redocly.yaml (the recommended rules, warnings counted as errors), then Spectral with its
# default OpenAPI ruleset (.spectral.yaml: spectral:oas), failing on any warning. Needs the npm
# tools (npm_tools.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true NO_UPDATE_NOTIFIER=1
node_modules/.bin/redocly lint --format=stylish openapi.yaml
node_modules/.bin/spectral lint --ruleset .spectral.yaml --fail-severity=warn openapi.yaml
