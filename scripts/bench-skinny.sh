#!/usr/bin/env bash
# The skinny GEMM benchmarks (issue 7) with the CLI on the GPU machine, beside the device's copy
# bandwidth measured in the same run:
#   $OUT/bench/results/skinny-<gpu>-<yyyymmdd>.json   (DESIGN.md section 6 schema, plus per result
#       "hbm_bytes", "hbm_floor_ms", "floor_ratio" = ms / hbm_floor_ms and "baseline_floor_ratio"
#       (cuBLAS's), and at the top
#       "copy_gbs" / "read_gbs" from bench_copy_bandwidth) and a log.
# The HBM floor of a GEMM = the bytes it must move (A + B + D, + C when beta != 0) / the copy
# bandwidth (bytes read + written per second of a 1 GiB device-to-device cudaMemcpy).
# bench/skinny.txt holds the targets (auto = the heuristic); the old choice (sm80_bf16_64x64x64)
# and the skinny kernel by name at M = 128 follow, then the sm90 skinny kernels by name (the
# 16-wide one also at M = 32 and 64, where it runs several tile columns).
#
#   scripts/bench-skinny.sh [BUILD_DIR]        default build-gpu (built with tessel_cli, bench_copy_bandwidth)
set -uo pipefail
source "$(dirname "$0")/bench-common.sh"
bench_setup skinny _skinny "${1:-}"
bw="$BUILD_DIR/bench/bench_copy_bandwidth"
if [ ! -x "$bw" ]; then
  echo "$bw is missing: build the bench_copy_bandwidth target" | tee -a "$log"
  exit 1
fi
"$cli" list 2>&1 | grep _skinny | tee -a "$log"

echo "== device bandwidth" | tee -a "$log"
"$bw" --mib 1024 --iters 20 2>&1 | tee "$OUT/copy-bandwidth.txt" | tee -a "$log"
copy_gbs=$(awk '$1 == "copy_gbs" {print $2}' "$OUT/copy-bandwidth.txt")
read_gbs=$(awk '$1 == "read_gbs" {print $2}' "$OUT/copy-bandwidth.txt")

variants="$OUT/skinny-variants.txt"
{
  cat bench/skinny.txt
  echo "--m 16 --n 8192 --k 8192 --dtype bf16 --kernel sm80_bf16_64x64x64 --iters 20 --warmup 3 --no-verify"
  echo "--m 16 --n 8192 --k 8192 --dtype bf16 --kernel sm80_bf16_128x128x32 --iters 20 --warmup 3 --no-verify"
  echo "--m 128 --n 8192 --k 8192 --dtype bf16 --kernel sm80_bf16_skinny --iters 20 --warmup 3 --no-verify"
  echo "--m 128 --n 8192 --k 8192 --dtype bf16 --kernel sm80_bf16_128x128x32 --iters 20 --warmup 3 --no-verify"
  echo "--m 16 --n 8192 --k 8192 --dtype bf16 --kernel sm90_bf16_128x256x64 --iters 20 --warmup 3 --no-verify"
  echo "--m 128 --n 8192 --k 8192 --dtype bf16 --kernel sm90_bf16_128x256x64 --iters 20 --warmup 3 --no-verify"
  for kernel in sm90_bf16_128x64x64 sm90_bf16_64x64x64 sm90_bf16_64x16x64; do
    for m in 1 16 64; do
      echo "--m $m --n 8192 --k 8192 --dtype bf16 --kernel $kernel --iters 20 --warmup 3"
    done
    echo "--m 16 --n 28672 --k 8192 --dtype bf16 --kernel $kernel --iters 20 --warmup 3 --no-verify"
    echo "--m 16 --n 4096 --k 4096 --dtype bf16 --kernel $kernel --iters 50 --warmup 5"
    echo "--m 16 --n 4096 --k 14336 --dtype bf16 --kernel $kernel --iters 50 --warmup 5"
    echo "--m 32 --n 4096 --k 4096 --dtype bf16 --kernel $kernel --iters 50 --warmup 5"
  done
  echo "--m 16 --n 8192 --k 8192 --dtype bf16 --kernel sm80_bf16_skinny --iters 20 --warmup 3 --no-verify"
} > "$variants"
echo "== bench skinny -> $json" | tee -a "$log"
"$cli" gemm --sweep "$variants" --suite skinny --json "$json" 2>&1 | tee -a "$log"
status=${PIPESTATUS[0]}
# The sm90 128x64 kernel with split-K forced to 2 slices (TESSEL_SM90_SPLITS=2; the default
# leaves 64 tiles unsplit), the first line twice (a new process's first line runs cold).
{ grep -m1 -- '--kernel sm90_bf16_128x64x64' "$variants"; grep -- '--kernel sm90_bf16_128x64x64' "$variants"; } > "$OUT/skinny-split2.txt"
echo "== bench skinny, sm90 with 2 K slices -> ${json/skinny-/skinny2-}" | tee -a "$log"
TESSEL_SM90_SPLITS=2 "$cli" gemm --sweep "$OUT/skinny-split2.txt" --suite skinny2 --json "${json/skinny-/skinny2-}" 2>&1 | tee -a "$log"
rm -f "$variants" "$OUT/copy-bandwidth.txt" "$OUT/skinny-split2.txt"

# The floor next to each time; the JSON gains the fields named above.
python3 - "$json" "${copy_gbs:-0}" "${read_gbs:-0}" <<'PY' 2>&1 | tee -a "$log"
import json, sys
path, copy_gbs, read_gbs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
try:
    d = json.load(open(path))
except Exception as e:
    print(path, "unreadable:", e); sys.exit(0)
size = {"bf16": 2, "fp16": 2, "fp32": 4, "tf32": 4}
d["copy_gbs"], d["read_gbs"] = copy_gbs, read_gbs
print(f"-- {path.split('/')[-1]}: {d['gpu']}, commit {d['commit']}; copy {copy_gbs:.0f} GB/s, read {read_gbs:.0f} GB/s")
print(f"{'problem':18s} {'dtype':10s} {'lay':3s} {'kernel':22s} {'us':>8s} {'floor us':>8s} {'x floor':>7s} "
      f"{'cuBLAS us':>9s} {'x floor':>7s} {'TFLOP/s':>7s} {'ratio':>6s} verified")
for r in d["results"]:
    ab = size.get(r["dtype"].split("->")[0], 2)
    cd = size.get(r["dtype"].split("->")[1], ab) if "->" in r["dtype"] else ab
    m, n, k, b = r["m"], r["n"], r["k"], r["batch"]
    reads_c = r.get("beta", 0) not in (0, 0.0)
    hbm = b * ((m * k + n * k) * ab + m * n * cd * (2 if reads_c else 1))
    floor_ms = hbm / (copy_gbs * 1e9) * 1e3 if copy_gbs > 0 else None
    r["hbm_bytes"] = hbm
    r["hbm_floor_ms"] = floor_ms
    r["floor_ratio"] = (r["ms"] / floor_ms) if (floor_ms and r.get("ms")) else None
    r["baseline_floor_ratio"] = (r["baseline_ms"] / floor_ms) if (floor_ms and r.get("baseline_ms")) else None
    shape = (f"{b}x" if b != 1 else "") + f"{m}x{n}x{k}"
    us = (r["ms"] or 0) * 1e3
    fl = (floor_ms or 0) * 1e3
    print(f"{shape:18s} {r['dtype']:10s} {r['layout']:3s} {r['kernel'][:22]:22s} {us:8.1f} {fl:8.1f} "
          f"{(r['floor_ratio'] or 0):7.2f} {(r.get('baseline_ms') or 0) * 1e3:9.1f} "
          f"{(r['baseline_floor_ratio'] or 0):7.2f} {(r['tflops'] or 0):7.1f} {(r['ratio'] or 0):6.2f} {r['verified']}")
json.dump(d, open(path, "w"), indent=1)
PY
exit $status
