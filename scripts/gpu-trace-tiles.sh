#!/usr/bin/env bash
# Where a large sm_90a GEMM's time goes per tile, on the GPU machine: builds tessel_cli with the
# per-tile trace compiled in (TESSEL_SM90_TRACE_TILES, its own build directory) and runs a few
# shapes with TESSEL_SM90_TRACE=1 -- per unit, over the CTAs (us, min/median/max): the loop's turn,
# the wait for the unit, its first stage (and how long before the last mainloop's end its load went out), the mainloop and
# its stage waits, the epilogue -- then the same lines untraced against
# cuBLAS (UNTRACED: by default the same binary with TESSEL_SM90_TRACE unset). Output: $OUT/trace-tiles.txt.
#
#   OUT=$OUT KERNELS="sm90_bf16_128x256x64_c2_s4 sm90_bf16_128x256x64_c2" scripts/gpu-trace-tiles.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
TRACE_DIR=${TRACE_DIR:-build-trace}
KERNELS=${KERNELS:-sm90_bf16_128x256x64_c2_s4}
SHAPES=${SHAPES:-"4096x4096x4096 8192x8192x8192 8192x28672x4096"}
DTYPE=${DTYPE:-bf16}  # e4m3: the fp8 kernels (tn layout)
txt="$OUT/trace-tiles.txt"
UNTRACED=${UNTRACED:-$TRACE_DIR/tessel}  # the same-run times (stamps compiled in but not taken: TESSEL_SM90_TRACE unset)
mkdir -p "$OUT"
{ cmake -S . -B "$TRACE_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DTESSEL_BUILD_TESTS=OFF \
    -DTESSEL_SM90_TRACE_TILES=ON && cmake --build "$TRACE_DIR" -j "$(nproc)" -- tessel_cli; } > "$OUT/trace-build.log" 2>&1 ||
  { echo "trace build failed"; tail -20 "$OUT/trace-build.log"; exit 1; }
echo "# $(nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader), commit ${TESSEL_GIT_COMMIT:-$(git rev-parse --short=12 HEAD)}" | tee -a "$txt"
for shape in $SHAPES; do
  IFS=x read -r m n k <<< "$shape"
  for kern in $KERNELS; do
    echo "== $shape $kern (traced: the last call's stamps)" | tee -a "$txt"
    TESSEL_SM90_TRACE=1 "$TRACE_DIR/tessel" gemm --m "$m" --n "$n" --k "$k" --dtype "$DTYPE" --layout tn --kernel "$kern" \
      --iters 3 --warmup 2 --no-verify --compare none 2>&1 | awk '/^sm90 trace/{buf=""} /^sm90 trace|^  unit/{buf=buf $0 "\n"} END{printf "%s", buf}' | tee -a "$txt"
    if [ -x "$UNTRACED" ]; then
      "$UNTRACED" gemm --m "$m" --n "$n" --k "$k" --dtype "$DTYPE" --layout tn --kernel "$kern" --iters 30 --warmup 5 \
        2>&1 | grep -E '^[0-9]+x[0-9]+x[0-9]+ ' | head -1 | sed 's/^/untraced: /' | tee -a "$txt"
    fi
  done
done
