#!/usr/bin/env bash
# A same-machine A/B of prepared patches on the GPU machine, in one call: this tree (the base) and
# one copy of it per patch in PATCHES (space-separated patch files, applied with `git apply`; a
# file may hold several patches' worth, and text before its first `diff --git` is ignored) are
# built (tessel_cli, in parallel), then each line of SHAPES (`tessel gemm` arguments,
# ';'-separated) runs the base and every variant in turn, ROUNDS times. Lines go to
# $OUT/patch-ab.txt, each prefixed with its tree's name (base, or the patch file's base name).
#
#   OUT=$OUT PATCHES="bench/results/next-unit-ahead-s18.patch bench/results/early-release-s18.patch" \
#     SHAPES="--m 4096 --n 4096 --k 4096 --dtype bf16 --iters 30 --warmup 5" scripts/gpu-patch-ab.sh
#
# COMBINE=1 adds one more tree with every patch applied, in the order given.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
OUT=${OUT:-$root/gpu-out}
ROUNDS=${ROUNDS:-2}
COMBINE=${COMBINE:-0}
: "${PATCHES:?PATCHES: the patch files to compare against this tree}"
: "${SHAPES:?SHAPES: tessel gemm argument lines, ';'-separated}"
txt="$OUT/patch-ab.txt"
mkdir -p "$OUT"

# name -> source directory (the base builds in place).
names=(base)
declare -A src=([base]=.)
copy_tree() {  # destination
  rm -rf "$1" && mkdir -p "$1" &&
    tar -c --exclude='./build*' --exclude='./.git' --exclude='./gpu-out' . | tar -x -C "$1"
}
# `git apply` inside the copy: with the ceiling, git finds no repository above it. (Run in a
# subdirectory of this repository instead, it takes the patch's paths as the repository's, skips
# them as outside the directory, and reports success.)
apply_in() {  # directory, patch file
  (cd "$1" && GIT_CEILING_DIRECTORIES="$root" git apply "$root/$2") || return 1
  ! { diff -rq include "$1/include" && diff -rq src "$1/src"; } > /dev/null || { echo "patch $2 changed nothing"; return 1; }
}
for p in $PATCHES; do
  n=$(basename "$p" .patch)
  d="build-src-$n"
  copy_tree "$d" && apply_in "$d" "$p" || { echo "patch $p does not apply" | tee -a "$txt"; exit 1; }
  names+=("$n"); src[$n]=$d
done
if [ "$COMBINE" = 1 ]; then
  d=build-src-combined
  copy_tree "$d" || exit 1
  for p in $PATCHES; do apply_in "$d" "$p" || { echo "patch $p does not apply on top of the others" | tee -a "$txt"; exit 1; }; done
  names+=(combined); src[combined]=$d
fi

jobs=$(( $(nproc) / ${#names[@]} )); [ "$jobs" -lt 2 ] && jobs=2
for n in "${names[@]}"; do
  { cmake -S "${src[$n]}" -B "build-ab-$n" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
      -DTESSEL_BUILD_TESTS=OFF && cmake --build "build-ab-$n" -j "$jobs" -- tessel_cli; } > "$OUT/build-$n.log" 2>&1 &
done
wait
for n in "${names[@]}"; do
  [ -x "build-ab-$n/tessel" ] || { echo "build of $n failed"; grep -E "error" "$OUT/build-$n.log" | head -20; exit 1; }
done
rm -f "$OUT"/build-*.log

echo "# $(nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader), base ${TESSEL_GIT_COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}, trees: ${names[*]}" | tee -a "$txt"
IFS=';' read -ra lines <<< "$SHAPES"
for args in "${lines[@]}"; do
  for r in $(seq "$ROUNDS"); do
    for n in "${names[@]}"; do
      line=$("build-ab-$n/tessel" gemm $args 2>&1 | grep -E '^ *[0-9]+x[0-9]+' | head -1)
      echo "$n $line" | tee -a "$txt"
    done
  done
done
