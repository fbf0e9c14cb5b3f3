#!/usr/bin/env bash
# Run the SIMT GEMM benchmark suites with the CLI on the GPU machine and write
#   $OUT/bench/results/<suite>-<gpu>-<yyyymmdd>.json     (DESIGN.md section 6 schema)
# plus a text log per suite. Bring the JSON back and commit it under bench/results/.
#
#   scripts/bench-simt.sh [BUILD_DIR] [SUITE ...]      default: build-gpu, suites sgemm anchors
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build-gpu}
shift || true
suites=("$@")
[ ${#suites[@]} -eq 0 ] && suites=(sgemm anchors)
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT/bench/results"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | sed 's/NVIDIA //; s/ .*//' | tr 'A-Z' 'a-z')
gpu=${gpu:-gpu}
day=$(date -u +%Y%m%d)
status=0
for suite in "${suites[@]}"; do
  json="$OUT/bench/results/$suite-$gpu-$day.json"
  echo "== bench $suite -> $json"
  "$BUILD_DIR/tessel" gemm --sweep "bench/$suite.txt" --suite "$suite" --json "$json" 2>&1 | tee "$OUT/bench-$suite.log" || status=1
done
exit $status
