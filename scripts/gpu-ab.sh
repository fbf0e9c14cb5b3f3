#!/usr/bin/env bash
# A same-machine A/B of an environment switch on the GPU machine (after a build of tessel_cli in
# BUILD_DIR): each line of SHAPES (`tessel gemm` arguments, ';'-separated) runs with the switch
# off and on, alternating, ROUNDS times; the lines go to $OUT/ab.txt with the switch's state.
#
#   OUT=$OUT SWITCH=TESSEL_SM90_DIRECT_TAIL=1 SHAPES="--m 4096 --n 4096 --k 4096 --dtype bf16" scripts/gpu-ab.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
BUILD_DIR=${BUILD_DIR:-build-gpu}
ROUNDS=${ROUNDS:-2}
txt="$OUT/ab.txt"
mkdir -p "$OUT"
echo "# $(nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader), commit ${TESSEL_GIT_COMMIT:-unknown}, switch $SWITCH" | tee -a "$txt"
IFS=';' read -ra lines <<< "$SHAPES"
for args in "${lines[@]}"; do
  for r in $(seq "$ROUNDS"); do
    for sw in X_OFF=0 "$SWITCH"; do
      line=$(env "$sw" "$BUILD_DIR/tessel" gemm $args 2>&1 | grep -E '^[0-9]+x[0-9]+' | head -1)
      echo "${sw%%=*}=${sw#*=} $line" | tee -a "$txt"
    done
  done
done
