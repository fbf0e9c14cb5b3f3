#!/usr/bin/env bash
# The sm_80 tensor-core mainloop experiment (issue 6) in one GPU call: build bench_sm80_variants
# (sm_90a only, no tessel::kernels), measure the ceilings (mma.sync alone, fed by ldmatrix, with the
# barrier and with a 128x256x64 k-tile's cp.async from L2), time bf16 4096^3 / 8192^3 and tf32
# 4096^3 against cuBLAS, then the two decompositions of a kernel's time: K = 128 (the fixed cost
# of a tile: launch, pipeline fill, epilogue) and one wave with a long K (the mainloop's rate, no
# tile boundaries), one input set (warm L2) and the raster's band width (16 tiles, not 8) for the
# two best bf16 variants; check every variant on ragged shapes against the fp64 reference and
# cuBLAS (the GPU tests' rule); ncu on the best two bf16 and the best tf32 variant (tensor pipe,
# shared-memory pipe, issue, stall reasons), racecheck on the persistent kernels and the library's
# schedule, memcheck on every variant. Logs under $OUT; the ratio tables last. About 6 minutes on
# a 16-core H100 machine (the build about 2 of them).
#
#   OUT=$OUT scripts/gpu-sm80-variants.sh
# Order: build, ceilings, timings (each timed kernel's output is checked against fp64 too), ragged
# checks, ncu, sanitizers. DEADLINE (seconds from the start, default 400): later stages shrink their
# timeouts to fit, the sanitizers last.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
BUILD_DIR=${BUILD_DIR:-build-gpu}
DEADLINE=${DEADLINE:-400}
mkdir -p "$OUT"
LOG="$OUT/sm80-variants.log"
note() { printf '\n==== %s (%s, %ds)\n' "$*" "$(date -u +%H:%M:%S)" "$SECONDS" | tee -a "$LOG"; }
left() { local l=$((DEADLINE - SECONDS)); [ $l -lt 5 ] && l=5; [ $l -gt ${1:-9999} ] && l=$1; echo $l; }
B="$BUILD_DIR/bench/bench_sm80_variants"

note "build, commit $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv 2>&1 | tee -a "$LOG"
{ cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a &&
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target bench_sm80_variants; } > "$OUT/build.log" 2>&1 ||
  { tail -40 "$OUT/build.log" | tee -a "$LOG"; exit 1; }
tail -1 "$OUT/build.log" | tee -a "$LOG"
"$B" --list 1 | tee -a "$LOG"

note "ceilings: mma.sync alone, fed by ldmatrix, + barrier, + a 128x256x64 k-tile's cp.async from L2 (bench/sm80_peak.cu)"
timeout 40 "$B" --peak 1 2>&1 | tee -a "$LOG"

note "timing against cuBLAS (interleaved, medians)"
: > "$OUT/time.log"
# time LIMIT ARGS...: one timing run appended to time.log, its exit status and ratio table to the log.
time_run() {
  local limit=$1; shift
  echo "== bench_sm80_variants $*" >> "$OUT/time.log"
  timeout "$(left "$limit")" "$B" "$@" > "$OUT/t.log" 2>&1
  local rc=$?
  cat "$OUT/t.log" >> "$OUT/time.log"
  echo "$*: exit $rc" | tee -a "$LOG"
  rm -f "$OUT/t.log"
}
# best N ARGS: the N variant names with the highest ratio in the table of the run with exactly
# these arguments, as exact names for --only (=NAME,=NAME).
best() {
  awk -v want="== bench_sm80_variants $2" '
    $0 == want { run = 1; next }
    /^== bench_sm80_variants/ { run = 0 }
    run && /^ratio to cuBLAS/ { table = 1; next }
    run && table && NF == 0 { table = 0 }
    run && table { r = $NF; $NF = ""; sub(/ +$/, ""); print r "\t" $0 }' "$OUT/time.log" |
    sort -rn | head -"$1" | cut -f2 | sed 's/^/=/' | paste -sd, -
}
time_run 40 --dtype bf16 --m 4096 --n 4096 --k 4096 --iters 30
time_run 60 --dtype bf16 --m 8192 --n 8192 --k 8192 --iters 10
time_run 40 --dtype tf32 --m 4096 --n 4096 --k 4096 --iters 20
# K = 128: two k-tiles per output tile, so the time is the fixed cost of a tile (launch, pipeline
# fill, epilogue) times the waves.
time_run 20 --dtype bf16 --m 4096 --n 4096 --k 128 --iters 30
# One wave (132 tiles of 128x256 or 256x128, 264 of 128x128 at 2 CTAs per SM) with a long K: the
# mainloop's own rate, to hold against the ceilings above.
time_run 30 --dtype bf16 --m 1536 --n 2816 --k 32768 --iters 10
time_run 30 --dtype tf32 --m 1536 --n 2816 --k 16384 --iters 10
# One input set (warm L2, the peer_kernels.md CUTLASS method) for the two best at 4096^3.
BEST4=$(best 2 "--dtype bf16 --m 4096 --n 4096 --k 4096 --iters 30")
[ -n "$BEST4" ] && time_run 20 --dtype bf16 --m 4096 --n 4096 --k 4096 --iters 30 --rotate 0 --only "$BEST4"
BEST_BF16=$(best 2 "--dtype bf16 --m 8192 --n 8192 --k 8192 --iters 10")
[ -n "$BEST_BF16" ] && time_run 30 --dtype bf16 --m 8192 --n 8192 --k 8192 --iters 10 --raster-group 16 --only "$BEST_BF16"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader 2>&1 | sed 's/^/after timing: /' | tee -a "$LOG"

note "ragged-shape checks (every variant; fp64 judge and at most 2x cuBLAS's error)"
for dt in bf16 tf32; do
  timeout "$(left 60)" "$B" --dtype $dt --check 1 --time 0 2>&1 | tee -a "$LOG"
  echo "check $dt: exit ${PIPESTATUS[0]}" | tee -a "$LOG"
done

note "ncu, 4096^3, one launch each of the best two bf16 variants and the best tf32 one"
if command -v ncu > /dev/null; then
  : > "$OUT/ncu-order.log"
  for dt in bf16 tf32; do
    if [ $dt = bf16 ]; then only=$BEST4; else only=$(best 1 "--dtype tf32 --m 4096 --n 4096 --k 4096 --iters 20"); fi
    [ -z "$only" ] && { echo "ncu $dt: no timing table, skipped" | tee -a "$LOG"; continue; }
    timeout "$(left 45)" ncu --csv --page raw --log-file "$OUT/ncu-$dt.csv" --kernel-name regex:sm80_gemm \
      --section SpeedOfLight --section SchedulerStats --section WarpStateStats --section ComputeWorkloadAnalysis \
      --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
      --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum \
      "$B" --dtype $dt --profile 1 --time 0 --only "$only" >> "$OUT/ncu-order.log" 2>&1
    echo "ncu $dt ($only): exit $?" | tee -a "$LOG"
  done
  cat "$OUT"/ncu-bf16.csv "$OUT"/ncu-tf32.csv > "$OUT/ncu.csv" 2> /dev/null
  rm -f "$OUT"/ncu-bf16.csv "$OUT"/ncu-tf32.csv
  python3 - "$OUT/ncu.csv" "$OUT/ncu-order.log" <<'PY' | tee -a "$LOG"
# One line per profiled kernel (launch order = the "profiled VARIANT" lines): issue slots busy, the
# tensor pipe and the shared-memory pipe against their peaks, warps per scheduler, the main stall
# reasons (warps stalled per issued instruction), shared-memory bank conflicts.
import csv, sys, re
try:
    text = open(sys.argv[1]).read().splitlines()
except Exception as e:
    print('no ncu output:', e); sys.exit()
order = [l.split(' ', 1)[1].strip() for l in open(sys.argv[2]) if l.startswith('profiled ')]
rows = list(csv.reader(text))
hdrs = [i for i, r in enumerate(rows) if 'Kernel Name' in r]
if not hdrs:
    print('no ncu rows'); sys.exit()
data = []
for hi in hdrs:
    h = rows[hi]
    for r in rows[hi + 1:]:
        if r == h: break
        if len(r) == len(h) and 'sm80_gemm' in r[h.index('Kernel Name')]:
            data.append(dict(zip(h, r)))
def pick(d, patterns):
    for pattern in patterns.split('|'):
        for k in d:
            if re.fullmatch(pattern, k): return d[k].replace(',', '')
    return '-'
cols = [('issue%', r'smsp__issue_active\.avg\.pct_of_peak_sustained_active'),
        ('tensor%', r'sm__pipe_tensor_op_hmma_cycles_active\.avg\.pct_of_peak_sustained_active|sm__pipe_tensor.*cycles_active\.avg\.pct_of_peak_sustained_active'),
        ('hmma%', r'sm__inst_executed_pipe_tensor_op_hmma\.avg\.pct_of_peak_sustained_active|sm__inst_executed_pipe_tensor.*\.avg\.pct_of_peak_sustained_active'),
        ('smem%', r'l1tex__data_pipe_lsu_wavefronts_mem_shared\.avg\.pct_of_peak_sustained_elapsed|l1tex__data_pipe_lsu_wavefronts_mem_shared.*pct_of_peak_sustained_(elapsed|active)'),
        ('L2%', r'lts__t_sectors\.avg\.pct_of_peak_sustained_elapsed|lts__throughput\.avg\.pct_of_peak_sustained_elapsed'),
        ('L2hit%', r'lts__t_sector_hit_rate\.pct'),
        ('dram%', r'dram__throughput\.avg\.pct_of_peak_sustained_elapsed|gpu__dram_throughput\.avg\.pct_of_peak_sustained_elapsed'),
        ('warps', r'smsp__warps_active\.avg\.per_cycle_active')]
for s in ['barrier', 'membar', 'short_scoreboard', 'long_scoreboard', 'mio_throttle', 'math_pipe_throttle', 'not_selected',
          'wait', 'dispatch_stall', 'selected', 'lg_throttle', 'sleeping', 'branch_resolving']:
    cols.append((s[:9], r'smsp__average_warps_issue_stalled_%s_per_issue_active\.ratio' % s))
cols += [('ldconf', r'l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld\.sum'),
         ('stconf', r'l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st\.sum')]
print('variant'.ljust(44), ' '.join(n.rjust(9) for n, _ in cols))
for i, d in enumerate(data):
    label = order[i] if i < len(order) else d['Kernel Name'][:43]
    print(label[:43].ljust(44), ' '.join(pick(d, p)[:9].rjust(9) for _, p in cols))
if data:
    names = [k for k in data[0] if re.search(r'tensor|mem_shared|lts__t_sectors\.|dram__th', k) and 'pct' in k]
    print('(columns present:', ' '.join(names[:16]), ')')
PY
else
  echo "ncu: not installed" | tee -a "$LOG"
fi

note "compute-sanitizer: racecheck on the persistent kernels (the next tile's copies overlap the epilogue) and the library's schedule, memcheck on every variant; the first three check shapes"
: > "$OUT/sanitizer.log"
for run in "racecheck bf16 persistent,(library)" "racecheck tf32 persistent,(library)" "memcheck bf16 " "memcheck tf32 "; do
  read -r tool dt only <<< "$run"
  [ "$(left)" -le 5 ] && { echo "$tool $dt: skipped, no time left" | tee -a "$LOG"; continue; }
  timeout "$(left 40)" compute-sanitizer --tool $tool --error-exitcode 9 "$B" --dtype $dt --check 2 --time 0 ${only:+--only "$only"} \
    >> "$OUT/sanitizer.log" 2>&1
  echo "$tool $dt ${only:-all}: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer.log" | tail -1)" | tee -a "$LOG"
done

note "summary"
grep -E "^checks|CHECK FAILED|: exit" "$LOG" | head -40
grep -A12 '^ceilings' "$LOG" | head -12
grep -E '^(GPU|variant) ' "$OUT/time.log" | head -1
for k in '--k 128' '--k 32768' '--k 16384'; do
  grep -A30 "^== bench_sm80_variants .*$k " "$OUT/time.log" | awk '/^ratio to cuBLAS/{exit} 1' |
    grep -E '^(bf16|tf32|variant) ' | awk -v k="$k" '{printf "%s: %s\n", k, substr($0, 1, 100)}'
done
awk '/^== bench_sm80_variants/{p=0; print} /^ratio to cuBLAS/{p=1} p&&NF==0{p=0} p' "$OUT/time.log"
