#!/usr/bin/env bash
# Every target line of issues 6 and 7 on the GPU machine in one call (~5 min on an H100): builds
# tessel_cli and bench_copy_bandwidth with all cores, runs bench/targets.txt and the skinny suite
# (scripts/bench-skinny.sh), and leaves under $OUT: targets-<gpu>-<day>.json, skinny-<gpu>-<day>.json,
# skinny2-..., and targets.txt (the GPU, the sweep's table and the skinny table: the file to commit).
#
#   OUT=... scripts/gpu-targets.sh        TESSEL_GIT_COMMIT names the commit where the copy has no .git
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
BUILD_DIR=${BUILD_DIR:-build-gpu}
export OUT BUILD_DIR
export TESSEL_GIT_COMMIT=${TESSEL_GIT_COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
mkdir -p "$OUT/bench/results"
summary="$OUT/targets.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | sed 's/^/# /' > "$summary"
echo "# commit $TESSEL_GIT_COMMIT, $(date -u '+%Y-%m-%d %H:%M UTC')" >> "$summary"
{ cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a &&
  cmake --build "$BUILD_DIR" -j "$(nproc)" -- tessel_cli bench_copy_bandwidth; } > "$OUT/build.log" 2>&1 ||
  { echo "build failed" | tee -a "$summary"; tail -30 "$OUT/build.log"; exit 1; }
rm -f "$OUT/build.log"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | sed 's/NVIDIA //; s/ .*//' | tr 'A-Z' 'a-z')
day=$(date -u +%Y%m%d)
status=0
"$BUILD_DIR/tessel" gemm --sweep bench/targets.txt --suite targets \
  --json "$OUT/bench/results/targets-$gpu-$day.json" > "$OUT/targets.log" 2>&1 || status=1
grep -E '^ *[0-9]+x[0-9]+' "$OUT/targets.log" >> "$summary"
rm -f "$OUT/targets.log"
scripts/bench-skinny.sh "$BUILD_DIR" > "$OUT/skinny.log" 2>&1 || status=1
sed -n '/^-- skinny/,$p' "$OUT/skinny.log" >> "$summary"
rm -f "$OUT/skinny.log" "$OUT"/bench-*.log
cat "$summary"
exit $status
