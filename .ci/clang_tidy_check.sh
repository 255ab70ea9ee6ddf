#!/usr/bin/env bash
# clang-tidy with the repository's .clang-tidy over the given folders (ctest clang_tidy runs it
# on pricing/ and service/), using the build's
# compile_commands.json; two files at a time. Exits 1 on any finding, and on a file clang-tidy
# could not compile (a missing generated header would otherwise read as "no findings").
#   .ci/clang_tidy_check.sh REPO_ROOT BUILD_DIR [FOLDER...]   (default: pricing service)
set -euo pipefail
root=$1 build=$2
shift 2
if (($#)); then folders=("$@"); else folders=(pricing service); fi
cd "$root"
tidy=$(command -v clang-tidy-14 || command -v clang-tidy)
SECONDS=0
out=$(find "${folders[@]}" -name '*.cpp' -print0 |
      xargs -0 -P2 -n4 "$tidy" -p "$build" --quiet --extra-arg=-Wno-unknown-warning-option 2>/dev/null |
      grep -E '(warning|error): .*\[((bugprone|performance|readability|modernize)-|clang-diagnostic-error)' |
      sort -u || true)
if [[ -n "$out" ]]; then
    echo "$out"
    echo "clang-tidy: $(wc -l <<<"$out") findings in ${SECONDS} s"
    exit 1
fi
echo "clang-tidy: no findings in ${folders[*]} (${SECONDS} s)"
