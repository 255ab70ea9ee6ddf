#!/usr/bin/env bash
# The documented release build: `cmake --preset release && cmake --build --preset release`
# (-O3, -Werror; the preset's targets are the service, gpucost_validate and the benchmarks). GCC warns at -O3 about code the Debug build compiles cleanly (its
# inlining follows paths -O0 never looks at), so only this build shows that the preset builds.
# Prints the compiler's diagnostics and the seconds it took; an exported
# CMAKE_CXX_COMPILER_LAUNCHER (ccache) is used. The compile runs at nice 10: under ctest it
# runs beside the other tests (CI), taking the cores they leave idle while they wait on sockets,
# browsers and databases, without slowing them.
#   tests/release/release_build.sh SOURCE_DIR
set -uo pipefail
cd "$1" || exit 1
SECONDS=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! cmake --preset release >"$log" 2>&1; then
    cat "$log"
    exit 1
fi
status=0
nice -n 10 cmake --build --preset release >"$log" 2>&1 || status=$?
grep -vE '^(\[ *[0-9]+%\] (Building|Linking|Built target|Generating)|Consolidate compiler)' "$log"
echo "release build: exit $status in ${SECONDS} s"
exit "$status"
