#!/usr/bin/env bash
# A same-run A/B on the GPU machine: each problem runs under every variant in turn, ROUNDS times
# (A B A B ...), so clock and power drift hit all of them; the CLI's ratio-to-cuBLAS lines go to
# $OUT/ab.txt, each prefixed with its variant's name.
#
#   VARIANTS="base: lean0:--tune=lean=0 c1x2:--kernel=sm90_bf16_128x256x64_c1x2" \
#   SHAPES="--m 4096 --n 4096 --k 4096 --dtype bf16;--m 8192 --n 28672 --k 4096 --dtype bf16" scripts/ab.sh
#
# A variant is NAME:ITEM[+ITEM...], each ITEM an environment assignment VAR=VALUE or a CLI option
# --option=VALUE; NAME "base" with no items is the CLI's defaults. The special name "prev" runs
# the same options on a second build of another revision: BASE_SRC names its source tree (make it
# with `git archive REV | tar -x -C build-base-src`, and carry build-base-src to the machine).
# Environment: BUILD_DIR (default build-gpu), ROUNDS (default 3), OUT, SKIP_BUILD=1.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
BUILD_DIR=${BUILD_DIR:-build-gpu}
ROUNDS=${ROUNDS:-3}
VARIANTS=${VARIANTS:-base:}
SHAPES=${SHAPES:---m 4096 --n 4096 --k 4096 --dtype bf16}
mkdir -p "$OUT"
build() {  # source dir, build dir
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a > "$OUT/ab-build.log" 2>&1 &&
    cmake --build "$2" -j "$(nproc)" -- tessel_cli >> "$OUT/ab-build.log" 2>&1 ||
    { echo "build of $1 failed"; tail -30 "$OUT/ab-build.log"; exit 1; }
}
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  build . "$BUILD_DIR"
  [[ " $VARIANTS " == *" prev:"* ]] && build "${BASE_SRC:-build-base-src}" build-base
  rm -f "$OUT/ab-build.log"
fi
run_variant() {  # spec, CLI arguments...
  local spec=$1 bin=$BUILD_DIR/tessel
  shift
  [ "${spec%%:*}" = prev ] && bin=build-base/tessel
  (
    local item extra=()
    IFS='+'
    for item in ${spec#*:}; do
      case $item in
        --*=*) extra+=("${item%%=*}" "${item#*=}") ;;
        *=*) export "$item" ;;
      esac
    done
    unset IFS
    "$bin" "$@" "${extra[@]}"
  )
}
txt=$OUT/ab.txt
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader), commit ${TESSEL_GIT_COMMIT:-unknown}" | tee -a "$txt"
IFS=';' read -r -a shapes <<< "$SHAPES"
for shape in "${shapes[@]}"; do
  for r in $(seq "$ROUNDS"); do
    for v in $VARIANTS; do
      verify=--no-verify; [ "$r" = 1 ] && verify=
      line=$(run_variant "$v" gemm $shape $verify 2>&1 | grep -E '^ *[0-9]+x[0-9]+|rror' | head -1)
      echo "${v%%:*} $line" | tee -a "$txt"
    done
  done
done
