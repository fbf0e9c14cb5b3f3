#!/usr/bin/env bash
# Same-binary A/B of the 128x64 tiles in 1x2 clusters against the 1x1 kernel on D's 65-128 wide
# (docs/skinny_gemm.md, session 23): the CLI on the memory-bound shapes through gpu-env-ab.sh (ROUNDS
# rounds, the two kernels by name and the heuristic's pick alternating), bench_api_overhead's
# queued GPU time on the small ones. Needs tessel_cli and bench_api_overhead built in BUILD_DIR.
# Lines to $OUT/c1x2-ab.txt.
#
#   OUT=$OUT BUILD_DIR=build-gpu ROUNDS=3 scripts/gpu-c1x2-ab.sh
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-$PWD/gpu-out} BUILD_DIR=${BUILD_DIR:-build-gpu} ROUNDS=${ROUNDS:-3}
txt="$OUT/c1x2-ab.txt"
mkdir -p "$OUT"
shapes=""
for s in "128 8192 8192" "96 8192 8192" "65 8192 8192" "128 4096 8192" "128 4096 14336" "128 4096 4096" \
         "128 6000 4096" "128 8192 4096" "128 8192 16384" "128 2048 8192"; do
  set -- $s
  shapes="$shapes;--m $1 --n $2 --k $3 --dtype bf16"
done
for p in bf16 fp16; do
  [ "$p" = bf16 ] && lines=${shapes#;} || lines="--m 128 --n 8192 --k 8192 --dtype fp16"
  VARIANTS="sm90_${p}_128x64x64:--kernel=sm90_${p}_128x64x64 sm90_${p}_128x64x64_c1x2:--kernel=sm90_${p}_128x64x64_c1x2 auto:" \
    SHAPES="$lines" ITERS=50 SKIP_BUILD=1 NAME=c1x2-ab scripts/gpu-env-ab.sh > /dev/null
done
cat "$txt"
echo "# bench_api_overhead (us: host, alone, queued), 1x1 then 1x2, $ROUNDS rounds" | tee -a "$txt"
problems=""
for s in 128x8192x1024 128x1024x8192 100x4500x700 128x6000x1024 128x2048x4096 128x8192x8192; do
  problems="$problems $s@sm90_bf16_128x64x64 $s@sm90_bf16_128x64x64_c1x2"
done
for r in $(seq "$ROUNDS"); do
  timeout 200 "$BUILD_DIR/bench/bench_api_overhead" $problems 2>&1 | tee -a "$txt"
done
