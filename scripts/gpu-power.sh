#!/usr/bin/env bash
# Power, clock and energy per GEMM of run-time variants on the GPU machine, each run alone and
# long enough (SECONDS_EACH) to settle at its power state: nvidia-smi samples power draw and SM
# clock every 50 ms while `tessel gemm ARGS --compare none` runs; the samples of the middle half
# are averaged. TORCH=1 adds cuBLAS through torch.matmul on the same shape (bf16, C = A B^T form).
# NCU=1 adds, per variant, ncu's DRAM and L2 bytes of one launch of the kernel (clock control off).
# Needs tessel_cli in BUILD_DIR (SKIP_BUILD=1: already built). Lines to $OUT/${NAME:-power}.txt.
#
#   VARIANTS="base: r4:TESSEL_SM90_RASTER=4"  (name:ITEM[+ITEM]: scripts/gpu-variants.sh)
#   ARGS="--m 8192 --n 28672 --k 4096 --dtype bf16" TORCH=1 ROUNDS=2 scripts/gpu-power.sh
set -uo pipefail
source "$(dirname "$0")/gpu-variants.sh"
ROUNDS=${ROUNDS:-2}
SECONDS_EACH=${SECONDS_EACH:-4}
VARIANTS=${VARIANTS:-base:}
ARGS=${ARGS:---m 8192 --n 28672 --k 4096 --dtype bf16}
variants_setup
txt="$OUT/${NAME:-power}.txt"
echo "# $(nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader), commit ${TESSEL_GIT_COMMIT:-unknown}; $ARGS" | tee -a "$txt"
echo "# variant  ms/GEMM  TFLOP/s  W (mean of the middle half)  SM MHz  J/GEMM  C" | tee -a "$txt"
# One variant's time per GEMM (ms) from the CLI line, with a launch count that fills SECONDS_EACH.
probe_ms=$("$T" gemm $ARGS --iters 5 --warmup 2 --no-verify --compare none 2>&1 | awk '/^ *[0-9]+x[0-9]+/ {print $5; exit}')
iters=$(python3 -c "print(max(20, int($SECONDS_EACH * 1000 / max(${probe_ms:-1}, 0.001))))")
summarise() {  # name, ms, samples file
  python3 - "$1" "$2" "$3" "$ARGS" <<'PY'
import sys
name, ms, path, args = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4].split()
rows = [[float(x) for x in l.split(',')] for l in open(path) if l.strip() and l[0].isdigit()]
mid = rows[len(rows) // 4: 3 * len(rows) // 4] or rows
w = sum(r[0] for r in mid) / len(mid); mhz = sum(r[1] for r in mid) / len(mid); temp = sum(r[2] for r in mid) / len(mid)
a = dict(zip(args[::2], args[1::2]))
flops = 2 * int(a.get('--m', 4096)) * int(a.get('--n', 4096)) * int(a.get('--k', 4096)) * int(a.get('--batch', 1))
print(f"{name:12s} {ms:8.3f} {flops / ms / 1e9:8.1f} {w:7.1f} {mhz:7.0f} {w * ms / 1e3:8.3f} {temp:5.1f}")
PY
}
sample() { nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv,noheader,nounits -lms 50 > "$1" & echo $!; }
for r in $(seq "$ROUNDS"); do
  for v in $VARIANTS; do
    pid=$(sample "$OUT/s.csv")
    ms=$(run_variant "$v" gemm $ARGS --iters "$iters" --warmup 20 --no-verify --compare none 2>&1 | awk '/^ *[0-9]+x[0-9]+/ {print $5; exit}')
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    summarise "${v%%:*}" "${ms:-0}" "$OUT/s.csv" | tee -a "$txt"
  done
  if [ "${TORCH:-0}" = 1 ]; then
    # The sampler starts after torch's start-up and warm-up, so its samples cover the timed loop alone.
    ms=$(python3 - "$ARGS" "$iters" "$OUT/s.csv" <<'PY'
import subprocess, sys, torch
a = sys.argv[1].split(); a = dict(zip(a[::2], a[1::2])); n_it = int(sys.argv[2])
m, n, k = int(a['--m']), int(a['--n']), int(a['--k'])
x = torch.randn(m, k, device='cuda', dtype=torch.bfloat16); w = torch.randn(n, k, device='cuda', dtype=torch.bfloat16)
for _ in range(20): y = x @ w.t()
torch.cuda.synchronize()
smi = subprocess.Popen(['nvidia-smi', '--query-gpu=power.draw,clocks.sm,temperature.gpu', '--format=csv,noheader,nounits',
                        '-lms', '50'], stdout=open(sys.argv[3], 'w'))
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
s.record()
for _ in range(n_it): y = x @ w.t()
e.record(); torch.cuda.synchronize(); smi.terminate(); smi.wait()
print(f"{s.elapsed_time(e) / n_it:.4f}")
PY
)
    summarise "torch-cublas" "${ms:-0}" "$OUT/s.csv" | tee -a "$txt"
  fi
done
rm -f "$OUT/s.csv"
if [ "${NCU:-0}" = 1 ]; then
  echo "# ncu, one launch each: variant, then metric lines" | tee -a "$txt"
  for v in $VARIANTS; do
    echo "${v%%:*}" | tee -a "$txt"
    ( T="timeout 120 ncu --clock-control none --kernel-name regex:sm90_gemm_kernel --launch-skip 1 --launch-count 1
         --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second
         $T"
      run_variant "$v" gemm $ARGS --iters 2 --warmup 2 --no-verify --compare none 2>&1 ) | grep -E "^ +(dram|lts|gpu__|sm__)" | sed 's/  */ /g' | tee -a "$txt"
  done
fi
