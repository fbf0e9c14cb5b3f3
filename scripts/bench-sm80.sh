#!/usr/bin/env bash
# The sm_80 tensor-core GEMM benchmarks (issue 6) with the CLI on the GPU machine:
#   $OUT/bench/results/sm80-<gpu>-<yyyymmdd>.json   (DESIGN.md section 6 schema) and a log.
# bench/sm80.txt holds the targets (auto = the registry's heuristic); the tile variants at 4096^3
# and 8192^3 follow, by name.
#
#   scripts/bench-sm80.sh [BUILD_DIR]        default build-gpu (built with tessel_cli)
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-${BUILD_DIR:-build-gpu}}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT/bench/results"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | sed 's/NVIDIA //; s/ .*//' | tr 'A-Z' 'a-z')
gpu=${gpu:-gpu}
day=$(date -u +%Y%m%d)
json="$OUT/bench/results/sm80-$gpu-$day.json"
log="$OUT/bench-sm80.log"

cli="$BUILD_DIR/tessel"
if ! "$cli" list 2>/dev/null | grep sm80_ > /dev/null; then  # (not grep -q: an early close is SIGPIPE under pipefail)
  echo "the registry of $cli lists no sm80 kernels: build tessel_cli with CUDA first" | tee -a "$log"
  exit 1
fi
"$cli" list 2>&1 | grep sm80_ | tee -a "$log"

# The targets, then every tile at 4096^3 / 8192^3 (bf16) and the tf32 tiles at 4096^3.
variants="$OUT/sm80-variants.txt"
{
  cat bench/sm80.txt
  for k in sm80_bf16_128x256x32 sm80_bf16_128x256x64 sm80_bf16_256x128x32 sm80_bf16_128x128x32 sm80_bf16_64x64x64; do
    echo "--m 4096 --n 4096 --k 4096 --dtype bf16 --kernel $k --iters 20 --warmup 3 --no-verify"
  done
  for k in sm80_bf16_128x256x32 sm80_bf16_128x256x64 sm80_bf16_256x128x32; do
    echo "--m 8192 --n 8192 --k 8192 --dtype bf16 --kernel $k --iters 10 --warmup 2 --no-verify"
  done
  for k in sm80_tf32_128x128x32 sm80_tf32_128x256x32 sm80_tf32_64x64x32; do
    echo "--m 4096 --n 4096 --k 4096 --dtype tf32 --kernel $k --iters 20 --warmup 3 --no-verify"
  done
} > "$variants"
echo "== bench sm80 -> $json" | tee -a "$log"
"$cli" gemm --sweep "$variants" --suite sm80 --json "$json" 2>&1 | tee -a "$log"
status=${PIPESTATUS[0]}
rm -f "$variants"
exit $status
