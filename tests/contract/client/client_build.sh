#!/usr/bin/env bash
# Builds the generated-client scenario into OUT_DIR: types from openapi.yaml by
# openapi-typescript (OUT_DIR/api.d.ts), then tsc type-checks scenario.mts against them and
# writes OUT_DIR/scenario.mjs. Needs the npm tools (tests/contract/npm_tools.sh).
#   client_build.sh OPENAPI_YAML OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
spec=$1 out=$2
SECONDS=0
rm -rf "$out" && mkdir -p "$out"
# Node resolves the compiled file's imports from its own folder upwards; point it at ours.
ln -s "$root/node_modules" "$out/node_modules"
cp "$here/scenario.mts" "$out/"
cat >"$out/tsconfig.json" <<JSON
{ "extends": "$here/tsconfig.json",
  "compilerOptions": { "rootDir": ".", "outDir": ".", "typeRoots": ["$root/node_modules/@types"] },
  "files": ["scenario.mts", "api.d.ts"] }
JSON
"$root/node_modules/.bin/openapi-typescript" "$spec" -o "$out/api.d.ts" --silent
"$root/node_modules/.bin/tsc" -p "$out/tsconfig.json"
echo "client build: api.d.ts generated ($(wc -l <"$out/api.d.ts") lines), scenario type-checked in ${SECONDS} s"
