#!/usr/bin/env bash
# A same-machine A/B of the heuristic's picks on many small and mid-size problems: builds
# bench_api_overhead from this tree and from BASE_SRC (a copy of the revision to compare against,
# made here and carried to the device, e.g.
#   rm -rf build-base-src && mkdir build-base-src && git archive <rev> | tar -x -C build-base-src
# -- /build*/ is ignored, so it travels only when `carry` names it), runs the problems of SHAPES
# (a file of bench_api_overhead problems, default bench/small-survey.shapes) ROUNDS times, base and
# new alternating, and prints per problem the kernel and the best queued GPU time of each side
# with cuBLAS's, the lines that moved by more than 4% first, and the geometric mean of the ratios
# to cuBLAS. The summary goes to $OUT/survey-ab.txt; the raw runs and build logs into
# $OUT/survey-raw.tgz (the device tool brings back only a few files a call).
#
#   OUT=$OUT BASE_SRC=build-base-src scripts/gpu-survey-ab.sh
#
# BASE_ENV="VAR=VALUE ..." instead compares this build with itself: the base side runs it with
# those variables set (a run-time switch, e.g. TESSEL_SM90_COMPACT=0), and nothing else is built.
# SKIP_BUILD=1 takes the existing build-gpu.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
BASE_SRC=${BASE_SRC:-build-base-src}
SHAPES=${SHAPES:-bench/small-survey.shapes}
ROUNDS=${ROUNDS:-2}
mkdir -p "$OUT"
build() {  # source dir, build dir
  { cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a &&
    cmake --build "$2" -j "$(nproc)" -- bench_api_overhead; } > "$OUT/build-$(basename "$2").log" 2>&1
}
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  build . build-gpu || { echo "build of this tree failed"; tail -20 "$OUT/build-build-gpu.log"; exit 1; }
fi
base_dir=build-base
if [ -n "${BASE_ENV:-}" ]; then
  base_dir=build-gpu
else
  build "$BASE_SRC" build-base || { echo "build of $BASE_SRC failed"; tail -20 "$OUT/build-build-base.log"; exit 1; }
fi
problems=$(grep -v '^#' "$SHAPES")
for r in $(seq "$ROUNDS"); do
  for side in base new; do
    dir=$base_dir env=(); [ "$side" = new ] && dir=build-gpu
    # shellcheck disable=SC2206
    [ "$side" = base ] && env=(${BASE_ENV:-})
    # shellcheck disable=SC2086
    env "${env[@]}" timeout 300 "$dir/bench/bench_api_overhead" $problems > "$OUT/survey-$side-$r.txt" 2>&1 || echo "$side round $r: exit $?"
  done
done
python3 - "$OUT" "$ROUNDS" <<'PY' | tee "$OUT/survey-ab.txt"
import math, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def load(path):
    rows = {}
    for line in open(path):
        f = line.split()
        if len(f) == 8 and "x" in f[0]:
            try:
                rows[f[0]] = (f[1], float(f[4]), float(f[7]))  # kernel, queued us, cuBLAS queued us
            except ValueError:
                pass
    return rows
runs = {s: [load(f"{out}/survey-{s}-{r}.txt") for r in range(1, rounds + 1)] for s in ("base", "new")}
lines, logs = [], {"base": 0.0, "new": 0.0}
for p in runs["base"][0]:
    best = {s: min(run[p][1] for run in runs[s]) for s in runs}
    blas = min(run[p][2] for s in runs for run in runs[s])
    for s in runs:
        logs[s] += math.log(blas / best[s])
    moved = best["new"] / best["base"] - 1
    lines.append((abs(moved) > 0.04, p, runs["base"][0][p][0], best["base"], runs["new"][0][p][0], best["new"], blas))
print(f"{'problem':18s} {'base kernel':28s} {'us':>7s}   {'new kernel':28s} {'us':>7s}   {'cuBLAS':>7s}")
for moved, p, kb, tb, kn, tn, blas in sorted(lines, key=lambda l: not l[0]):
    print(f"{p:18s} {kb:28s} {tb:7.2f}   {kn:28s} {tn:7.2f}   {blas:7.2f}{'   *' if moved else ''}")
n = len(lines)
print(f"geometric mean of cuBLAS / tessel over {n} problems: base {math.exp(logs['base'] / n):.3f}, new {math.exp(logs['new'] / n):.3f}")
PY
( cd "$OUT" && raw=$(ls survey-base-*.txt survey-new-*.txt build-build-gpu.log build-build-base.log 2>/dev/null; true) &&
  [ -n "$raw" ] && tar czf survey-raw.tgz $raw && rm -f $raw )
