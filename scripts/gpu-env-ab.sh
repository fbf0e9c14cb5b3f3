#!/usr/bin/env bash
# Same-binary A/B of run-time switches (environment variables read per call) on the GPU machine:
# builds tessel_cli with all cores (unless SKIP_BUILD=1), then for each shape and round runs every
# variant in turn, alternating (the first round verified). Lines to $OUT/$NAME.txt.
#
#   VARIANTS="base: pf4:TESSEL_SM90_PREFETCH=4"  (name:VAR=VALUE[+VAR=VALUE]; nothing after ':' = as is)
#   SHAPES="--m 4096 --n 4096 --k 4096;--m 8192 --n 28672 --k 4096"  (extra tessel gemm arguments)
#   ROUNDS=2 ITERS=20 NAME=env-ab OUT=$OUT scripts/gpu-env-ab.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
BUILD_DIR=${BUILD_DIR:-build-gpu}
ROUNDS=${ROUNDS:-2}
ITERS=${ITERS:-20}
VARIANTS=${VARIANTS:-base:}
SHAPES=${SHAPES:---m 4096 --n 4096 --k 4096 --dtype bf16}
txt="$OUT/${NAME:-env-ab}.txt"
mkdir -p "$OUT"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  { cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a &&
    cmake --build "$BUILD_DIR" -j "$(nproc)" -- tessel_cli; } > "$OUT/build.log" 2>&1 ||
    { echo "build failed"; tail -30 "$OUT/build.log"; exit 1; }
fi
T="$BUILD_DIR/tessel"
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader), commit ${TESSEL_GIT_COMMIT:-unknown}" | tee -a "$txt"
IFS=';' read -r -a shapes <<< "$SHAPES"
for shape in "${shapes[@]}"; do
  for r in $(seq "$ROUNDS"); do
    for v in $VARIANTS; do
      name=${v%%:*}; envs=${v#*:}
      verify=--no-verify; [ "$r" = 1 ] && verify=
      line=$( (IFS='+'; for e in $envs; do export "$e"; done; unset IFS
               "$T" gemm $shape --iters "$ITERS" --warmup 5 $verify 2>&1) | grep -E '^ *[0-9]+x[0-9]+|rror' | head -1)
      echo "$name $line" | tee -a "$txt"
    done
  done
done
