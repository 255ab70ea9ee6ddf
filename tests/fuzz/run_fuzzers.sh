#!/usr/bin/env bash
# Builds the libFuzzer harnesses with clang under ASan + UBSan (a separate build directory)
# and runs each for a bounded time from the seed corpus in tests/fuzz/corpus/<name>. New
# inputs go to BUILD_DIR/corpus, never into the repository; a crash leaves its input in
# BUILD_DIR/tests/fuzz (crash-*) and fails the run: add it to the corpus and fix the code, with a
# regression test.
# --build-only builds the harnesses (at nice 10) and stops; --run-only runs harnesses built
# before. ctest does the two apart (fuzz_build, fuzz), so that the clang build fills the cores
# the other tests leave idle rather than running alone at the end.
#   usage: tests/fuzz/run_fuzzers.sh [--build-only | --run-only] SOURCE_DIR BUILD_DIR [SECONDS_EACH]
set -euo pipefail
mode=all
case "${1:-}" in
    --build-only) mode=build; shift ;;
    --run-only) mode=run; shift ;;
esac
src=$1
build=$2
seconds=${3:-22}
command -v clang++ >/dev/null || { echo "clang++ is missing (apt-get install clang)"; exit 1; }
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
harnesses=(json_request query_string catalog_csv price_file request_frame)

# libFuzzer's documented flags (-O1 with debug line tables, llvm.org/docs/LibFuzzer.html): a
# crash report still names file and line, and the harnesses build in about two thirds of the
# time that RelWithDebInfo's -O2 -g took. The libraries under test build as the release preset's
# do, eight sources to a compiler run (the headers parsed and instrumented once per eight).
if [[ $mode != run ]]; then
    cmake -S "$src" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_UNITY_BUILD=ON \
        "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
        "-DGPUCOST_SANITIZERS=address;undefined;fuzzer-no-link" -DGPUCOST_FUZZ=ON \
        -DGPUCOST_BUILD_TESTS=OFF -DGPUCOST_WITH_POSTGRES=OFF -DGPUCOST_WERROR=OFF "${launcher[@]}" \
        >"$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
    nice=()
    [[ $mode == build ]] && nice=(nice -n 10)
    "${nice[@]}" cmake --build "$build" -j2 --target "${harnesses[@]/#/fuzz_}" >"$build.build.log" 2>&1 ||
        { tail -50 "$build.build.log"; exit 1; }
fi
[[ $mode == build ]] && { echo "fuzz harnesses built in $build"; exit 0; }
for name in "${harnesses[@]}"; do
    [[ -x "$build/tests/fuzz/fuzz_$name" ]] || { echo "fuzz_$name is not built (run --build-only first)"; exit 1; }
done

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$build/tests/fuzz"
# One harness per core (CI has two): each is single-threaded, so two at a time take half the
# wall time for the same seconds of fuzzing each.
fuzz_one() {
    local name=$1
    mkdir -p "corpus/$name"
    if ! "./fuzz_$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 "corpus/$name" "$src/tests/fuzz/corpus/$name" >"fuzz_$name.log" 2>&1; then
        echo "fuzz_$name FAILED; input and report in $build/tests/fuzz:"
        tail -60 "fuzz_$name.log"
        return 1
    fi
    echo "fuzz_$name: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "fuzz_$name.log" |
        grep -o '[0-9]*$') runs in ${seconds}s, corpus $(ls "corpus/$name" | wc -l) inputs, no crash"
}
status=0
for ((i = 0; i < ${#harnesses[@]}; i += 2)); do
    pids=()
    for name in "${harnesses[@]:i:2}"; do
        fuzz_one "$name" >"fuzz_$name.summary" & pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid" || status=1; done
    for name in "${harnesses[@]:i:2}"; do cat "fuzz_$name.summary"; done
done
exit $status
