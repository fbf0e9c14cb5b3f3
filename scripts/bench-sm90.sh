#!/usr/bin/env bash
# The sm_90a GEMM benchmarks (issue 7) with the CLI on the GPU machine:
#   $OUT/bench/results/sm90-<gpu>-<yyyymmdd>.json   (DESIGN.md section 6 schema) and a log.
# bench/sm90.txt holds the targets (auto = the registry's heuristic); the cluster variants and the
# ping-pong kernel at 4096^3, 8192^3 and 4095x4097x4099 follow, by name, then the ping-pong
# kernel against the default cooperative one where D leaves from registers (fp32 D, beta != 0),
# and C read by TMA (the _tmac kernel) against C read from registers.
#
#   scripts/bench-sm90.sh [BUILD_DIR]        default build-gpu (built with tessel_cli)
set -uo pipefail
source "$(dirname "$0")/bench-common.sh"
bench_setup sm90 sm90_ "${1:-}"

variants="$OUT/sm90-variants.txt"
{
  grep -v '^#' bench/sm90.txt
  for k in sm90_bf16_128x256x64 sm90_bf16_128x256x64_c2 sm90_bf16_128x256x64_c1x2 sm90_bf16_128x256x64_c2_s4 sm90_bf16_128x128x64_c2 \
           sm90_bf16_128x128x64_pingpong_c2; do
    echo "--m 4096 --n 4096 --k 4096 --dtype bf16 --kernel $k --iters 30 --warmup 5 --no-verify"
    echo "--m 8192 --n 8192 --k 8192 --dtype bf16 --kernel $k --iters 10 --warmup 2 --no-verify"
    echo "--m 4095 --n 4097 --k 4099 --dtype bf16 --kernel $k --iters 20 --warmup 3 --no-verify"
  done
  for k in sm90_bf16_128x256x64_c2 sm90_bf16_128x128x64_pingpong_c2; do
    echo "--m 4096 --n 4096 --k 4096 --dtype bf16 --out-dtype fp32 --kernel $k --iters 30 --warmup 5 --no-verify"
  done
  # C read (beta = 1): from registers (the 2x1 kernel, ping-pong) or by TMA (_tmac).
  for k in sm90_bf16_128x256x64_c2 sm90_bf16_128x128x64_pingpong_c2 sm90_bf16_128x256x64_c2_tmac; do
    echo "--m 8192 --n 8192 --k 2048 --dtype bf16 --beta 1 --kernel $k --iters 20 --warmup 3 --no-verify"
  done
  echo "--m 4096 --n 4096 --k 4096 --dtype bf16 --beta 1 --kernel sm90_bf16_128x256x64_c2 --iters 30 --warmup 5 --no-verify"
} > "$variants"
echo "== bench sm90 -> $json" | tee -a "$log"
"$cli" gemm --sweep "$variants" --suite sm90 --json "$json" 2>&1 | tee -a "$log"
status=${PIPESTATUS[0]}

rm -f "$variants"
exit $status
