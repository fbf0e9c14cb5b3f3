#!/usr/bin/env bash
# The GPU machine's one-stop check: build with all cores, run the GPU tests, a compute-sanitizer
# pass, and the benchmarks. Logs and bench/results/*.json go under $OUT (default: ./gpu-out).
#
#   scripts/gpu-check.sh                 # all stages
#   scripts/gpu-check.sh build test      # some stages: build | test | sanitize | bench
#
# Environment: TESSEL_GIT_COMMIT (the commit to report where the copy has no .git; pass it from
# the checkout: TESSEL_GIT_COMMIT=$(git rev-parse --short=12 HEAD) on the calling side),
# ARCHS (default 90a, the H100/H200), BUILD_DIR (default build-gpu), TARGETS (build only these),
# TEST_REGEX (ctest -R filter for the test stage), SANITIZE_FILTER (gtest filter for the
# sanitizer stage), BENCH_SCRIPTS (which scripts/bench-*.sh the bench stage runs).
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
        cmake --build "$BUILD_DIR" -j "$(nproc)" ${TARGETS:+--target $TARGETS} -- -k 0; } > "$OUT/build.log" 2>&1 || { status=1; grep -E "error|FAILED" "$OUT/build.log" | head -30; }
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
      run_san() {  # tool, description, command...
        local tool=$1 what=$2; shift 2
        echo "---- $tool $what" >> "$OUT/sanitizer.log"
        timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 3 "$@" >> "$OUT/sanitizer.log" 2>&1
        local rc=$?
        echo "$tool $what rc=$rc" | tee -a "$OUT/summary.txt"
        [ $rc -ne 0 ] && status=1
      }
      filter=${SANITIZE_FILTER:-*Small*:*Sanitize*:LayoutDevice*:CopyAtomsGpu*:MmaAtomsGpu*:Seed004*}
      for exe in "$BUILD_DIR"/tests/gpu_*; do
        [ -x "$exe" ] || continue
        # Only the executables that have tests under the filter.
        n=$("$exe" --gtest_filter="$filter" --gtest_list_tests 2>/dev/null | grep -c '^  ')
        [ "$n" -gt 0 ] || continue
        for tool in memcheck racecheck synccheck; do
          run_san "$tool" "$(basename "$exe") ($n tests)" env GTEST_FILTER="$filter" "$exe"
        done
      done
      # Every library kernel through the host API on small ragged problems, and the ladder.
      if [ -x "$BUILD_DIR/tessel" ]; then
        for args in "--m 257 --n 129 --k 65 --layout nn --beta 1" "--m 130 --n 260 --k 37 --layout tn --dtype bf16" \
                    "--m 97 --n 65 --k 33 --layout nt --dtype fp16 --beta 1" "--m 70 --n 90 --k 40 --layout tt --dtype tf32" \
                    "--m 64 --n 64 --k 64 --layout tt --batch 3 --kernel simt_64x64x8" \
                    "--m 260 --n 136 --k 44 --layout tn --batch 2 --beta 1 --kernel simt_128x128x8_128t"; do
          for tool in memcheck racecheck; do
            run_san "$tool" "tessel gemm $args" "$BUILD_DIR/tessel" gemm $args --iters 1 --warmup 0 --compare none
          done
        done
      fi
      if [ -x "$BUILD_DIR/examples/tutorial/tutorial_ladder" ]; then
        for tool in memcheck racecheck; do
          run_san "$tool" "tutorial_ladder 130x129x37" "$BUILD_DIR/examples/tutorial/tutorial_ladder" --m 130 --n 129 --k 37 --iters 1
        done
      fi
      ;;
    bench)
      note "bench $(date -u +%H:%M:%S)"
      for b in ${BENCH_SCRIPTS:-scripts/bench-*.sh}; do
        [ -x "$b" ] || continue
        BUILD_DIR=$BUILD_DIR OUT=$OUT "$b" 2>&1 | tail -30 | tee -a "$OUT/summary.txt" || status=1
      done
      ;;
    *) echo "unknown stage: $stage (build | test | sanitize | bench)" >&2; exit 2 ;;
  esac
done
note "done, status $status"
exit $status
