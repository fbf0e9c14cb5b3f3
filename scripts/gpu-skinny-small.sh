#!/usr/bin/env bash
# Small skinny shapes (decode-like: M <= 32, N and K 4096) on the GPU machine after a build of
# tessel_cli in BUILD_DIR: the heuristic's kernel as it stands, with the K split forced to 2
# (TESSEL_SM90_SPLITS: every SM streams, plus the reduction launch), with the opt-in Stream-K walk
# (TESSEL_SM90_STREAMK: the fix-up inside the kernel), and without cuBLAS between the launches
# (--compare none: back to back, no change of shared-memory carveout between kernels). One
# process per line (the switches are read once). Output: $OUT/skinny-small.txt.
#
#   OUT=$OUT scripts/gpu-skinny-small.sh [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
BUILD_DIR=${1:-build-gpu}
cli="$BUILD_DIR/tessel"
txt="$OUT/skinny-small.txt"
mkdir -p "$OUT"
echo "# $(nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader), commit ${TESSEL_GIT_COMMIT:-$(git rev-parse --short=12 HEAD)}" | tee -a "$txt"
run() {  # LABEL ENV-ASSIGNMENT ARGS...
  local label=$1 sw=$2; shift 2
  local line
  line=$(env $sw "$cli" gemm "$@" 2>&1 | grep -E '^[0-9]+x[0-9]+x[0-9]+ ' | head -1)
  echo "$label $line" | tee -a "$txt"
}
for shape in "--m 16 --n 4096 --k 4096" "--m 32 --n 4096 --k 4096" "--m 16 --n 4096 --k 14336"; do
  run default X=0 $shape --dtype bf16 --iters 50 --warmup 5
  run splits2 TESSEL_SM90_SPLITS=2 $shape --dtype bf16 --iters 50 --warmup 5
  run streamk TESSEL_SM90_STREAMK=1 $shape --dtype bf16 --iters 50 --warmup 5
  run alone X=0 $shape --dtype bf16 --iters 50 --warmup 5 --compare none
done
