#!/usr/bin/env bash
# Same-binary A/B of the 128x64 tiles in 1x2 clusters against the 1x1 kernel on D's 65-128 wide
# (docs/skinny_gemm.md, session 23): the CLI on the memory-bound shapes (ROUNDS rounds, the two
# kernels alternating, and the heuristic's pick once), bench_api_overhead's queued GPU time on the
# small ones. Needs tessel_cli and bench_api_overhead built in BUILD_DIR. Lines to $OUT/c1x2-ab.txt.
#
#   OUT=$OUT BUILD_DIR=build-gpu ROUNDS=3 scripts/gpu-c1x2-ab.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
BUILD_DIR=${BUILD_DIR:-build-gpu}
ROUNDS=${ROUNDS:-3}
T="$BUILD_DIR/tessel"
txt="$OUT/c1x2-ab.txt"
mkdir -p "$OUT"
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader), commit ${TESSEL_GIT_COMMIT:-unknown}" | tee -a "$txt"
for shape in "128 8192 8192 bf16" "96 8192 8192 bf16" "65 8192 8192 bf16" "128 4096 8192 bf16" "128 4096 14336 bf16" \
             "128 4096 4096 bf16" "128 6000 4096 bf16" "128 8192 4096 bf16" "128 8192 16384 bf16" "128 2048 8192 bf16" \
             "128 8192 8192 fp16"; do
  set -- $shape
  p=$([ "$4" = fp16 ] && echo fp16 || echo bf16)
  for r in $(seq "$ROUNDS"); do
    kernels="sm90_${p}_128x64x64 sm90_${p}_128x64x64_c1x2"
    [ "$r" = 1 ] && kernels="$kernels auto"
    for kn in $kernels; do
      v=--no-verify; [ "$r" = 1 ] && v=
      line=$("$T" gemm --m "$1" --n "$2" --k "$3" --dtype "$4" --kernel "$kn" --iters 50 --warmup 10 $v 2>&1 |
             grep -E '^ *[0-9]+x[0-9]+|rror' | head -1)
      echo "$kn $line" | tee -a "$txt"
    done
  done
done
echo "# bench_api_overhead (us: host, alone, queued), 1x1 then 1x2, $ROUNDS rounds" | tee -a "$txt"
problems=""
for s in 128x8192x1024 128x1024x8192 100x4500x700 128x6000x1024 128x2048x4096 128x8192x8192; do
  problems="$problems $s@sm90_bf16_128x64x64 $s@sm90_bf16_128x64x64_c1x2"
done
for r in $(seq "$ROUNDS"); do
  timeout 200 "$BUILD_DIR/bench/bench_api_overhead" $problems 2>&1 | tee -a "$txt"
done
