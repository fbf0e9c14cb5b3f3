#!/usr/bin/env bash
# A same-machine A/B of two source trees on the GPU machine: the tree in BASE_SRC (a copy of the
# revision to compare against, made here and carried to the device, e.g.
#   rm -rf build-base-src && mkdir build-base-src && git archive <rev> | tar -x -C build-base-src
# -- /build*/ is ignored, so it travels only when `carry` names it) against this tree. Both are
# built (tessel_cli, and this tree's TARGETS), then each line of SHAPES (`tessel gemm` arguments,
# ';'-separated) runs base and new alternately, ROUNDS times, and after them with each kernel of
# VARIANTS (names, space-separated) on the new build; lines go to $OUT/ab-trees.txt.
#
#   OUT=$OUT BASE_SRC=build-base-src SHAPES="--m 4096 --n 4096 --k 4096 --dtype bf16" scripts/gpu-ab-trees.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
BUILD_DIR=${BUILD_DIR:-build-gpu}
BASE_SRC=${BASE_SRC:-build-base-src}
ROUNDS=${ROUNDS:-2}
txt="$OUT/ab-trees.txt"
mkdir -p "$OUT"
build() {  # source dir, build dir, targets
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a > "$OUT/ab-build-$(basename "$2").log" 2>&1 &&
    cmake --build "$2" -j "$(nproc)" -- $3 >> "$OUT/ab-build-$(basename "$2").log" 2>&1
}
build . "$BUILD_DIR" "tessel_cli ${TARGETS:-}" || { echo "build of this tree failed"; tail -20 "$OUT/ab-build-$(basename "$BUILD_DIR").log"; exit 1; }
build "$BASE_SRC" build-base tessel_cli || { echo "build of $BASE_SRC failed"; tail -20 "$OUT/ab-build-build-base.log"; exit 1; }
echo "# $(nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader), new ${TESSEL_GIT_COMMIT:-unknown} against base ${BASE_REV:-$BASE_SRC}" | tee -a "$txt"
IFS=';' read -ra lines <<< "$SHAPES"
for args in "${lines[@]}"; do
  for r in $(seq "$ROUNDS"); do
    for side in base new ${VARIANTS:-}; do
      bin=$BUILD_DIR/tessel extra=""
      [ "$side" = base ] && bin=build-base/tessel
      [ "$side" != base ] && [ "$side" != new ] && extra="--kernel $side"
      line=$("$bin" gemm $args $extra 2>&1 | grep -E '^[0-9]+x[0-9]+' | head -1)
      echo "$side $line" | tee -a "$txt"
    done
  done
done
