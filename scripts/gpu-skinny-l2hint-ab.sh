#!/usr/bin/env bash
# Same-binary A/B of the 16-wide skinny kernels' L2 cache hints (docs/skinny_gemm.md, session 22):
# each skinny shape with the default hints (long operand evict-first, narrow one evict-last) and
# with none (TESSEL_SM90_L2HINT=0,0), alternating, ROUNDS rounds. Needs a built tessel_cli in
# BUILD_DIR (scripts/gpu-check.sh build, or gpu-targets.sh). Lines to $OUT/skinny-l2hint-ab.txt.
#
#   OUT=$OUT BUILD_DIR=build-gpu ROUNDS=3 scripts/gpu-skinny-l2hint-ab.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
BUILD_DIR=${BUILD_DIR:-build-gpu}
ROUNDS=${ROUNDS:-3}
T="$BUILD_DIR/tessel"
txt="$OUT/skinny-l2hint-ab.txt"
mkdir -p "$OUT"
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader), commit ${TESSEL_GIT_COMMIT:-unknown}" | tee -a "$txt"
for shape in "--m 16 --n 8192 --k 8192 --dtype bf16" "--m 16 --n 8192 --k 8192 --dtype fp16" \
             "--m 8192 --n 16 --k 8192 --dtype bf16" "--m 1 --n 8192 --k 8192 --dtype bf16" \
             "--m 16 --n 4096 --k 8192 --dtype bf16" "--m 16 --n 8192 --k 16384 --dtype bf16"; do
  for r in $(seq "$ROUNDS"); do
    for hint in default 0,0; do
      line=$( ([ $hint = default ] || export TESSEL_SM90_L2HINT=$hint; "$T" gemm $shape --iters 30 --warmup 5 2>&1) |
             grep -E '^ *[0-9]+x[0-9]+' | head -1)
      echo "$hint $line" | tee -a "$txt"
    done
  done
done
