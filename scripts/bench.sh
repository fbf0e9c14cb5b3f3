#!/usr/bin/env bash
# Runs benchmark suites on the GPU machine and writes each suite's current result file,
# $OUT/results/<suite>-<gpu>.json (copy it over bench/results/<suite>-<gpu>.json to record it).
#
#   scripts/bench.sh                       # the default suites: targets skinny fp8 sm90 sm80 sgemm grouped
#   scripts/bench.sh targets skinny        # some suites: any bench/<suite>.txt
#   scripts/bench.sh conv                  # the convolution suite (three sweeps, below; conv_fprop: its forward passes)
#
# A suite is a sweep file of `tessel gemm` lines (bench/<suite>.txt; its header says what it is),
# or of `tessel grouped` lines for the grouped suite (its baselines: a cuBLAS loop and
# cublasGemmGroupedBatchedEx), or of `tessel conv` lines for the conv suite (against cuDNN): cuDNN's
# cudnnFind picks its algorithm afresh each sweep and a layer's cuDNN time moves up to 2x between
# sweeps, so the conv suite runs three sweeps in one process and keeps each line's median-ratio
# reading of the three.
# Each line is verified against a float64 reference and timed against cuBLAS / cuBLASLt in the
# same process (docs/PERF.md, "Method"). The skinny suite also gets the HBM floor of each line:
# the bytes it must move over the copy bandwidth that bench_copy_bandwidth measures in the same
# run ("floor_ratio" per result, "copy_gbs" at the top); the decode suite too.
# Environment: BUILD_DIR (default build-gpu; built here unless SKIP_BUILD=1), OUT (default
# ./gpu-out), TESSEL_GIT_COMMIT (the commit to record where the copy has no .git).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
BUILD_DIR=${BUILD_DIR:-build-gpu}
export TESSEL_GIT_COMMIT=${TESSEL_GIT_COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
mkdir -p "$OUT/results"
suites=("$@")
[ ${#suites[@]} -eq 0 ] && suites=(targets skinny fp8 sm90 sm80 sgemm grouped)

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  { cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a &&
    cmake --build "$BUILD_DIR" -j "$(nproc)" -- tessel_cli bench_copy_bandwidth; } > "$OUT/bench-build.log" 2>&1 ||
    { echo "build failed"; tail -30 "$OUT/bench-build.log"; exit 1; }
  rm -f "$OUT/bench-build.log"
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | sed 's/NVIDIA //; s/ .*//' | tr 'A-Z' 'a-z')
status=0
for suite in "${suites[@]}"; do
  sweep=bench/$suite.txt
  [ -f "$sweep" ] || { echo "no suite $sweep"; status=1; continue; }
  json=$OUT/results/$suite-$gpu.json
  echo "== $suite -> $json"
  if [ "$suite" = conv ] || [ "$suite" = conv_fprop ]; then
    cat "$sweep" "$sweep" "$sweep" > "$OUT/conv-three-sweeps.txt"
    "$BUILD_DIR/tessel" conv --sweep "$OUT/conv-three-sweeps.txt" --suite "$suite" --iters 50 --json "$json" 2>&1 |
      grep -E '^n[0-9]|rror|FAIL'
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    rm -f "$OUT/conv-three-sweeps.txt"
    python3 - "$json" <<'PY' || status=1
import json, sys
path = sys.argv[1]
d = json.load(open(path))
runs = d["results"]
n = len(runs) // 3
fields = ("pass", "n", "d", "h", "w", "c", "k", "t", "r", "s", "pad", "stride", "dilation", "groups", "dtype", "epilogue")
kept = []
for i in range(n):
    three = [runs[i], runs[i + n], runs[i + 2 * n]]
    if len({tuple(x.get(f) for f in fields) for x in three}) != 1 or len(runs) != 3 * n:
        sys.exit(f"{path}: result {i} is not the same problem in the three sweeps")
    three.sort(key=lambda x: x.get("ratio") or 0.0)
    kept.append(three[1])
    ratios = " ".join(f"{x.get('ratio') or 0:.3f}" for x in three)
    print(f"-- {three[1]['pass']} n{three[1]['n']} {three[1]['h']}x{three[1]['w']} c{three[1]['c']} k{three[1]['k']}: "
          f"ratios {ratios}, kept the middle one")
d["results"] = kept
d["method"] += ("; each line the median-ratio reading of three sweeps in one process run after another "
                "(cudnnFind picks its algorithm afresh each sweep)")
json.dump(d, open(path, "w"), indent=1)
PY
    continue
  fi
  subcommand=gemm
  [ "$suite" = grouped ] && subcommand=grouped
  "$BUILD_DIR/tessel" "$subcommand" --sweep "$sweep" --suite "$suite" --json "$json" 2>&1 | grep -E '^ *[0-9]+x[0-9]+|rror|FAIL'
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  if [ "$suite" = skinny ] || [ "$suite" = decode ]; then
    copy_gbs=$("$BUILD_DIR/bench/bench_copy_bandwidth" --mib 1024 --iters 20 | awk '$1 == "copy_gbs" {print $2}')
    python3 - "$json" "${copy_gbs:-0}" <<'PY'
import json, sys
path, copy_gbs = sys.argv[1], float(sys.argv[2])
d = json.load(open(path))
size = {"bf16": 2, "fp16": 2, "fp32": 4, "tf32": 4}
d["copy_gbs"] = copy_gbs
print(f"-- HBM floor: copy bandwidth {copy_gbs:.0f} GB/s")
for r in d["results"]:
    ab = size.get(r["dtype"].split("->")[0], 2)
    cd = size.get(r["dtype"].split("->")[1], ab) if "->" in r["dtype"] else ab
    m, n, k, b = r["m"], r["n"], r["k"], r["batch"]
    hbm = b * ((m * k + n * k) * ab + m * n * cd * (2 if r.get("beta", 0) else 1))
    floor_ms = hbm / (copy_gbs * 1e9) * 1e3 if copy_gbs > 0 else None
    r["hbm_floor_ms"] = floor_ms
    r["floor_ratio"] = r["ms"] / floor_ms if floor_ms and r.get("ms") else None
    r["baseline_floor_ratio"] = r["baseline_ms"] / floor_ms if floor_ms and r.get("baseline_ms") else None
    print(f"{m}x{n}x{k} {r['kernel']}: {r['floor_ratio'] or 0:.2f}x the floor (cuBLAS {r['baseline_floor_ratio'] or 0:.2f}x)")
json.dump(d, open(path, "w"), indent=1)
PY
  fi
done
exit $status
