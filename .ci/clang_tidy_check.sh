#!/usr/bin/env bash
# clang-tidy with the repository's .clang-tidy over pricing/ and service/ (ctest clang_tidy),
# using the build's compile_commands.json; two files at a time. Exits 1 on any finding.
#   .ci/clang_tidy_check.sh REPO_ROOT BUILD_DIR
set -euo pipefail
root=$1 build=$2
cd "$root"
tidy=$(command -v clang-tidy-14 || command -v clang-tidy)
SECONDS=0
out=$(find pricing service -name '*.cpp' -print0 |
      xargs -0 -P2 -n4 "$tidy" -p "$build" --quiet --extra-arg=-Wno-unknown-warning-option 2>/dev/null |
      grep -E '(warning|error): .*\[(bugprone|performance|readability|modernize)-' | sort -u || true)
if [[ -n "$out" ]]; then
    echo "$out"
    echo "clang-tidy: $(wc -l <<<"$out") findings in ${SECONDS} s"
    exit 1
fi
echo "clang-tidy: no findings in pricing/ and service/ (${SECONDS} s)"
