#!/usr/bin/env bash
# Same-binary A/B of run-time switches (environment variables read per call) on the GPU machine:
# builds tessel_cli with all cores (unless SKIP_BUILD=1), then for each shape and round runs every
# variant in turn, alternating (the first round verified). Lines to $OUT/$NAME.txt.
#
#   VARIANTS="base: pf4:TESSEL_SM90_PREFETCH=4 c2x2:--kernel=sm90_bf16_128x256x64_c2x2_s4"
#     (name:ITEM[+ITEM], each ITEM VAR=VALUE or --option=VALUE: scripts/gpu-variants.sh)
#   SHAPES="--m 4096 --n 4096 --k 4096;--m 8192 --n 28672 --k 4096"  (extra tessel gemm arguments)
#   ROUNDS=2 ITERS=20 NAME=env-ab OUT=$OUT scripts/gpu-env-ab.sh
set -uo pipefail
source "$(dirname "$0")/gpu-variants.sh"
ROUNDS=${ROUNDS:-2}
ITERS=${ITERS:-20}
VARIANTS=${VARIANTS:-base:}
SHAPES=${SHAPES:---m 4096 --n 4096 --k 4096 --dtype bf16}
variants_setup
txt="$OUT/${NAME:-env-ab}.txt"
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader), commit ${TESSEL_GIT_COMMIT:-unknown}" | tee -a "$txt"
IFS=';' read -r -a shapes <<< "$SHAPES"
for shape in "${shapes[@]}"; do
  for r in $(seq "$ROUNDS"); do
    for v in $VARIANTS; do
      verify=--no-verify; [ "$r" = 1 ] && verify=
      line=$(run_variant "$v" gemm $shape --iters "$ITERS" --warmup 5 $verify 2>&1 | grep -E '^ *[0-9]+x[0-9]+|rror' | head -1)
      echo "${v%%:*} $line" | tee -a "$txt"
    done
  done
done
