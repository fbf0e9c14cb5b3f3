#!/usr/bin/env bash
# The sm_90a GEMM benchmarks (issue 7) with the CLI on the GPU machine:
#   $OUT/bench/results/sm90-<gpu>-<yyyymmdd>.json   (DESIGN.md section 6 schema) and a log.
# bench/sm90.txt holds the targets (auto = the registry's heuristic); the cluster variants at
# 4096^3 and 8192^3 follow, by name.
#
#   scripts/bench-sm90.sh [BUILD_DIR]        default build-gpu (built with tessel_cli)
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-${BUILD_DIR:-build-gpu}}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT/bench/results"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | sed 's/NVIDIA //; s/ .*//' | tr 'A-Z' 'a-z')
gpu=${gpu:-gpu}
day=$(date -u +%Y%m%d)
json="$OUT/bench/results/sm90-$gpu-$day.json"
log="$OUT/bench-sm90.log"

cli="$BUILD_DIR/tessel"
if ! "$cli" list 2>/dev/null | grep sm90_ > /dev/null; then  # (not grep -q: an early close is SIGPIPE under pipefail)
  echo "the registry of $cli lists no sm90 kernels: build tessel_cli with CUDA first" | tee -a "$log"
  exit 1
fi

variants="$OUT/sm90-variants.txt"
{
  grep -v '^#' bench/sm90.txt
  for k in sm90_bf16_128x256x64 sm90_bf16_128x256x64_c2; do
    echo "--m 4096 --n 4096 --k 4096 --dtype bf16 --kernel $k --iters 30 --warmup 5 --no-verify"
    echo "--m 8192 --n 8192 --k 8192 --dtype bf16 --kernel $k --iters 10 --warmup 2 --no-verify"
  done
} > "$variants"
echo "== bench sm90 -> $json" | tee -a "$log"
"$cli" gemm --sweep "$variants" --suite sm90 --json "$json" 2>&1 | tee -a "$log"
status=${PIPESTATUS[0]}
rm -f "$variants"
exit $status
