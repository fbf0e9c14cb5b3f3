#!/usr/bin/env bash
# The tensor-core GEMM families on the GPU machine in one call: build their targets (sm_90a, all
# cores), run their GPU tests, compute-sanitizer (memcheck, racecheck, synccheck) on the *Small*
# tests, and the sm90, skinny and sm80 benchmarks. At most 8 files come back: tests.log,
# sanitizer.log, bench.log, build.log (only on failure) and bench/results/*.json.
#
#   TESSEL_GIT_COMMIT=<sha> scripts/gpu-tensor-core.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
B=${BUILD_DIR:-build-gpu}
mkdir -p "$OUT"
tests="gpu_sm90_gemm_test gpu_sm80_skinny_gemm_test gpu_sm80_gemm_test"
{ cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a &&
  cmake --build "$B" -j "$(nproc)" -- -k 0 tessel_cli bench_copy_bandwidth $tests; } > "$OUT/build.log" 2>&1
rc=$?
echo "build: exit $rc ($SECONDS s)"
[ $rc -eq 0 ] && rm -f "$OUT/build.log" || grep -E "error" "$OUT/build.log" | head -20
for t in $tests; do
  timeout 200 "$B/tests/$t" >> "$OUT/tests.log" 2>&1
  echo "$t: exit $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED) ' "$OUT/tests.log" | tail -2 | tr '\n' ' ')"
done
grep -E "^\[  FAILED|resident CTAs" "$OUT/tests.log" | sort -u | head -20
for t in gpu_sm90_gemm_test gpu_sm80_skinny_gemm_test; do
  for tool in memcheck racecheck synccheck; do
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests/$t" --gtest_filter='*Small*' >> "$OUT/sanitizer.log" 2>&1
    echo "$tool $t *Small*: exit $? ($SECONDS s)"
  done
done
for b in sm90 skinny sm80; do
  OUT=$OUT timeout 200 "scripts/bench-$b.sh" "$B" > /dev/null 2>&1
  echo "bench-$b: exit $? ($SECONDS s)"
  cat "$OUT/bench-$b.log" >> "$OUT/bench.log" && rm -f "$OUT/bench-$b.log"
done
grep -E "^[0-9x]+ +(bf16|fp16|tf32) " "$OUT/bench.log" | cut -c1-150
