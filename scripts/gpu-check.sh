#!/usr/bin/env bash
# The GPU machine's one-stop check: build with all cores, run the GPU tests, a compute-sanitizer
# pass, and the benchmarks. Logs and bench/results/*.json go under $OUT (default: ./gpu-out).
#
#   scripts/gpu-check.sh                 # all stages
#   scripts/gpu-check.sh build test      # some stages: build | test | sanitize | bench
#
# Environment: ARCHS (default 90a, the H100/H200), BUILD_DIR (default build-gpu),
# TEST_REGEX (ctest -R filter for the test stage), SANITIZE_FILTER (gtest filter for the
# sanitizer stage).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
BUILD_DIR=${BUILD_DIR:-build-gpu}
ARCHS=${ARCHS:-90a}
mkdir -p "$OUT"
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(build test sanitize bench)
status=0

note() { printf '\n==== %s\n' "$*" | tee -a "$OUT/summary.txt"; }

for stage in "${stages[@]}"; do
  case $stage in
    build)
      note "build ($ARCHS) $(date -u +%H:%M:%S)"
      nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee -a "$OUT/summary.txt"
      { cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$ARCHS" &&
        cmake --build "$BUILD_DIR" -j "$(nproc)" -- -k 0; } > "$OUT/build.log" 2>&1 || { status=1; grep -E "error|FAILED" "$OUT/build.log" | head -30; }
      tail -2 "$OUT/build.log" | tee -a "$OUT/summary.txt"
      ;;
    test)
      note "ctest $(date -u +%H:%M:%S)"
      ctest --test-dir "$BUILD_DIR" --output-on-failure -j 4 ${TEST_REGEX:+-R "$TEST_REGEX"} > "$OUT/ctest.log" 2>&1 || status=1
      grep -E "tests passed|tests failed|\(Failed\)|\(Skipped\)|Timeout" "$OUT/ctest.log" | tail -25 | tee -a "$OUT/summary.txt"
      ;;
    sanitize)
      note "compute-sanitizer $(date -u +%H:%M:%S)"
      : > "$OUT/sanitizer.log"
      for exe in "$BUILD_DIR"/tests/gpu_*; do
        [ -x "$exe" ] || continue
        for tool in memcheck racecheck synccheck; do
          echo "---- $tool $(basename "$exe")" >> "$OUT/sanitizer.log"
          GTEST_FILTER=${SANITIZE_FILTER:-*Sanitize*:*Small*:*Device*} \
            timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 3 "$exe" >> "$OUT/sanitizer.log" 2>&1
          rc=$?
          echo "$tool $(basename "$exe") rc=$rc" | tee -a "$OUT/summary.txt"
          [ $rc -ne 0 ] && status=1
        done
      done
      ;;
    bench)
      note "bench $(date -u +%H:%M:%S)"
      for b in scripts/bench-*.sh; do
        [ -x "$b" ] || continue
        BUILD_DIR=$BUILD_DIR OUT=$OUT "$b" 2>&1 | tail -30 | tee -a "$OUT/summary.txt" || status=1
      done
      ;;
    *) echo "unknown stage: $stage (build | test | sanitize | bench)" >&2; exit 2 ;;
  esac
done
note "done, status $status"
exit $status
