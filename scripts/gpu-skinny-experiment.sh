#!/usr/bin/env bash
# The skinny experiment of session 6 (issue 7), on the GPU machine after a build of tessel_cli in
# BUILD_DIR: each line of the table below in its own process (the TESSEL_SM90_* switches are read
# once per process), the k-rotation switch (TESSEL_SM90_KROTATE=R: each tile's k-tiles start at
# (tile row * R) mod k_tiles) against none, for both skinny tiles; then tiny problems, whose time
# is the host's cost of a call (the GPU waits for the launch between the events); then ncu's
# kernel-only duration of the small skinny shape. Output: $OUT/skinny-experiment.txt.
#
#   OUT=$OUT scripts/gpu-skinny-experiment.sh [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
BUILD_DIR=${1:-build-gpu}
cli="$BUILD_DIR/tessel"
txt="$OUT/skinny-experiment.txt"
mkdir -p "$OUT"
echo "# $(nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader), commit ${TESSEL_GIT_COMMIT:-$(git rev-parse --short=12 HEAD)}" | tee -a "$txt"
run() {  # ENV-ASSIGNMENT ARGS...: one process, its result line prefixed by the switch
  local sw=$1; shift
  local line
  line=$(env $sw "$cli" gemm "$@" 2>&1 | grep -E '^[0-9]+x[0-9]+x[0-9]+ ' | head -1)
  echo "$sw $line" | tee -a "$txt"
}
for kernel in sm90_bf16_64x64x64 sm90_bf16_128x64x64; do
  for r in 0 1 7 37; do
    run TESSEL_SM90_KROTATE=$r --m 16 --n 8192 --k 8192 --dtype bf16 --kernel $kernel --iters 50 --warmup 5
  done
done
for r in 0 1 7; do
  run TESSEL_SM90_KROTATE=$r --m 1 --n 8192 --k 8192 --dtype bf16 --kernel sm90_bf16_64x64x64 --iters 50 --warmup 5
  run TESSEL_SM90_KROTATE=$r --m 16 --n 4096 --k 4096 --dtype bf16 --kernel sm90_bf16_64x64x64 --iters 50 --warmup 5
  run TESSEL_SM90_KROTATE=$r --m 16 --n 28672 --k 8192 --dtype bf16 --kernel sm90_bf16_128x64x64 --iters 20 --warmup 3
done
echo "# tiny problems: the time of a call is the host's (the GPU idles between the events)" | tee -a "$txt"
for s in "--m 64 --n 64 --k 64" "--m 256 --n 256 --k 256"; do
  run X=0 $s --dtype bf16 --iters 100 --warmup 10
  run X=0 $s --dtype bf16 --kernel sm90_bf16_64x64x64 --iters 100 --warmup 10
  run X=0 $s --dtype bf16 --kernel sm80_bf16_128x128x32 --iters 100 --warmup 10
done
echo "# ncu: kernel-only durations, 16x4096x4096 bf16 (auto)" | tee -a "$txt"
timeout 90 ncu --kernel-name regex:gemm --launch-skip 2 --launch-count 2 --metrics gpu__time_duration.sum \
  "$cli" gemm --m 16 --n 4096 --k 4096 --dtype bf16 --iters 3 --warmup 1 --no-verify 2>&1 |
  grep -E "gemm|gpu__time_duration" | head -8 | tee -a "$txt"
