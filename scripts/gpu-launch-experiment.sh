#!/usr/bin/env bash
# Session 6's launch experiment (issue 7), on the GPU machine after a build of tessel_cli in
# BUILD_DIR: the fixed cost of an sm90 GEMM call. TESSEL_SM90_LAUNCH=N (src/gemm/sm90_launch.cuh):
# bit 0 drops the cluster attribute of a 1x1 kernel, bit 1 programmatic dependent launch, bit 2
# calls cudaFuncSetAttribute once. Each line in its own process (the switch is read once); the
# small skinny shape at several K (time = a + bK: the intercept is the fixed cost), cuBLAS beside.
# Output: $OUT/launch-experiment.txt.
#
#   OUT=$OUT scripts/gpu-launch-experiment.sh [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
BUILD_DIR=${1:-build-gpu}
cli="$BUILD_DIR/tessel"
txt="$OUT/launch-experiment.txt"
mkdir -p "$OUT"
echo "# $(nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader), commit ${TESSEL_GIT_COMMIT:-$(git rev-parse --short=12 HEAD)}" | tee -a "$txt"
run() {  # ENV-ASSIGNMENT ARGS...: one process, its result line prefixed by the switch
  local sw=$1; shift
  local line
  line=$(env $sw "$cli" gemm "$@" 2>&1 | grep -E '^[0-9]+x[0-9]+x[0-9]+ ' | head -1)
  echo "$sw $line" | tee -a "$txt"
}
for sw in 0 1 2 3 7; do
  run TESSEL_SM90_LAUNCH=$sw --m 16 --n 4096 --k 4096 --dtype bf16 --iters 50 --warmup 5
  run TESSEL_SM90_LAUNCH=$sw --m 16 --n 8192 --k 8192 --dtype bf16 --iters 50 --warmup 5
  run TESSEL_SM90_LAUNCH=$sw --m 4096 --n 4096 --k 4096 --dtype bf16 --iters 30 --warmup 5
done
for k in 1024 2048 8192 16384; do
  run TESSEL_SM90_LAUNCH=0 --m 16 --n 4096 --k $k --dtype bf16 --iters 50 --warmup 5
done
