#!/usr/bin/env bash
# The sm_80 tensor-core GEMM benchmarks (issue 6) with the CLI on the GPU machine:
#   $OUT/bench/results/sm80-<gpu>-<yyyymmdd>.json   (DESIGN.md section 6 schema) and a log.
# bench/sm80.txt holds the targets (auto = the registry's heuristic); the tile variants at 4096^3
# and 8192^3 follow, by name.
#
#   scripts/bench-sm80.sh [BUILD_DIR]        default build-gpu (built with tessel_cli)
set -uo pipefail
source "$(dirname "$0")/bench-common.sh"
bench_setup sm80 sm80_ "${1:-}"
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
