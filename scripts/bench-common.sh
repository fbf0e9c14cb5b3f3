# scripts/bench-common.sh -- sourced by the scripts/bench-<suite>.sh scripts (not run alone).
#
#   bench_setup SUITE PATTERN [BUILD_DIR]
# Enters the repository root and sets BUILD_DIR (argument, $BUILD_DIR or build-gpu), OUT
# (default ./gpu-out), gpu (e.g. h100), day (yyyymmdd, UTC), json
# ($OUT/bench/results/SUITE-<gpu>-<day>.json), log ($OUT/bench-SUITE.log) and cli; exits 1 with a
# line in the log when the CLI's registry lists no kernel matching PATTERN.
bench_setup() {
  local suite=$1 pattern=$2
  cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
  BUILD_DIR=${3:-${BUILD_DIR:-build-gpu}}
  OUT=${OUT:-$PWD/gpu-out}
  mkdir -p "$OUT/bench/results"
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | sed 's/NVIDIA //; s/ .*//' | tr 'A-Z' 'a-z')
  gpu=${gpu:-gpu}
  day=$(date -u +%Y%m%d)
  json="$OUT/bench/results/$suite-$gpu-$day.json"
  log="$OUT/bench-$suite.log"
  cli="$BUILD_DIR/tessel"
  if ! "$cli" list 2>/dev/null | grep -- "$pattern" > /dev/null; then  # (not grep -q: an early close is SIGPIPE under pipefail)
    echo "the registry of $cli lists no $pattern kernels: build tessel_cli with CUDA first" | tee -a "$log"
    exit 1
  fi
}
