#!/usr/bin/env bash
# clang-tidy with the repository's .clang-tidy over the given folders (ctest clang_tidy runs it
# on pricing/ and service/), using the build's compile_commands.json. The sources are read eight
# to a translation unit (.ci/clang_tidy_batches.py says why), two batches at a time. Exits 1 on
# any finding, and on a file clang-tidy could not compile (a missing generated header, or two
# sources of one target that cannot compile together, would otherwise read as "no findings").
#   .ci/clang_tidy_check.sh REPO_ROOT BUILD_DIR [FOLDER...]   (default: pricing service)
set -euo pipefail
root=$(cd "$1" && pwd) build=$(cd "$2" && pwd)
shift 2
if (($#)); then folders=("$@"); else folders=(pricing service); fi
cd "$root"
tidy=$(command -v clang-tidy-14 || command -v clang-tidy)
SECONDS=0
batches=$build/tidy-batches
rm -rf "$batches"
runs=$(python3 "$root/.ci/clang_tidy_batches.py" "$build" "$batches" "${folders[@]}")
folder_pattern=$(IFS='|'; echo "${folders[*]}")
# The config is named, not found: a batch file lives in the build folder, which may lie outside
# the repository. Findings from the folders' headers and sources (in a batch, the sources are
# included files) are kept; the batch files' own includes are marked NOLINT.
tidy_args=(--quiet --config-file="$root/.clang-tidy" --extra-arg=-Wno-unknown-warning-option
           "--header-filter=^$root/($folder_pattern)/")
run() {
    local database=$1
    shift
    (($#)) || return 0
    printf '%s\0' "$@" | xargs -0 -P2 -n1 "$tidy" -p "$database" "${tidy_args[@]}" 2>/dev/null
}
mapfile -t batch_files < <(sed -n 's/^batch //p' <<<"$runs")
mapfile -t alone_files < <(sed -n 's/^alone //p' <<<"$runs")
out=$({ run "$batches" "${batch_files[@]}"; run "$build" "${alone_files[@]}"; } |
      grep -E '(warning|error): .*\[((bugprone|performance|readability|modernize)-|clang-diagnostic-error)' |
      sort -u || true)
if [[ -n "$out" ]]; then
    echo "$out"
    echo "clang-tidy: $(wc -l <<<"$out") findings in ${SECONDS} s"
    exit 1
fi
echo "clang-tidy: no findings in ${folders[*]}: ${#batch_files[@]} batches, ${#alone_files[@]} files alone (${SECONDS} s)"
