#!/usr/bin/env bash
# Lints openapi.yaml with @redocly/cli (pinned in package.json) under redocly.yaml: the
# recommended rules, warnings counted as errors. Needs the npm tools (npm_tools.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true NO_UPDATE_NOTIFIER=1
exec node_modules/.bin/redocly lint --format=stylish openapi.yaml
