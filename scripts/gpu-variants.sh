# scripts/gpu-variants.sh -- sourced by the same-binary A/B scripts on the GPU machine
# (gpu-env-ab.sh, gpu-power.sh; not run alone).
#
#   variants_setup
# Enters the repository root, sets OUT (default ./gpu-out), BUILD_DIR (default build-gpu) and T
# (the CLI), and builds tessel_cli with all cores unless SKIP_BUILD=1; exits 1 if the build fails.
#
#   run_variant SPEC ARGS...
# Runs `$T ARGS...` under variant SPEC, written NAME:ITEM[+ITEM...] with each ITEM either VAR=VALUE
# (exported for this run only) or --option=VALUE (passed to the CLI after ARGS, e.g.
# --kernel=sm90_bf16_128x256x64_c2_s4); nothing after ':' runs as is. Items are joined by '+', so
# a value may hold a comma (TESSEL_SM90_L2HINT=0,2).
variants_setup() {
  cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
  OUT=${OUT:-$PWD/gpu-out}
  BUILD_DIR=${BUILD_DIR:-build-gpu}
  T="$BUILD_DIR/tessel"
  mkdir -p "$OUT"
  if [ "${SKIP_BUILD:-0}" != 1 ]; then
    { cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a &&
      cmake --build "$BUILD_DIR" -j "$(nproc)" -- tessel_cli; } > "$OUT/build.log" 2>&1 ||
      { echo "build failed"; tail -30 "$OUT/build.log"; exit 1; }
    rm -f "$OUT/build.log"
  fi
}

run_variant() {
  local spec=$1
  shift
  (
    local items=${spec#*:} item extra=()
    IFS='+'
    for item in $items; do
      case $item in
        --*=*) extra+=("${item%%=*}" "${item#*=}") ;;
        *=*) export "$item" ;;
      esac
    done
    unset IFS
    $T "$@" "${extra[@]}"  # (unquoted: T may be a wrapper and the CLI, e.g. "ncu ... build-gpu/tessel")
  )
}
