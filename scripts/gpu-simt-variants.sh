#!/usr/bin/env bash
# The SIMT mainloop experiment (issue 5) in one GPU call: build bench_simt_variants (sm_90a only,
# no tessel::kernels: the library's configuration, simt_128x128x8_128t, and the cp.async
# alternative that beat it in layout nt), check every variant and layout on ragged shapes against
# the fp64 reference, memcheck + racecheck two small shapes, time 4096^3 and 8192^3 against
# cuBLAS, and profile 4096^3 tn/nt with ncu (issue-slot use, stall reasons, bank conflicts). Logs
# under $OUT; the ratio tables last. About 2 minutes on a 16-core H100/H200 machine.
#
#   OUT=$OUT scripts/gpu-simt-variants.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
BUILD_DIR=${BUILD_DIR:-build-gpu}
mkdir -p "$OUT"
LOG="$OUT/simt-variants.log"
note() { printf '\n==== %s (%s)\n' "$*" "$(date -u +%H:%M:%S)" | tee -a "$LOG"; }
B="$BUILD_DIR/bench/bench_simt_variants"

note "build, commit $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv 2>&1 | tee -a "$LOG"
{ cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a &&
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target bench_simt_variants; } > "$OUT/build.log" 2>&1 ||
  { tail -40 "$OUT/build.log" | tee -a "$LOG"; exit 1; }
tail -1 "$OUT/build.log" | tee -a "$LOG"

note "ragged-shape checks (every variant x layout)"
timeout 120 "$B" --check 1 --time 0 2>&1 | tee -a "$LOG"
echo "check: exit ${PIPESTATUS[0]}" | tee -a "$LOG"

note "compute-sanitizer on 130x129x37 and 257x260x64 (batch 2, beta), every variant x layout"
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 "$B" --check 2 --time 0 \
    > "$OUT/sanitizer-$tool.log" 2>&1
  echo "$tool: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer-$tool.log" | sort | uniq -c | tr -s ' ' | tr '\n' ' ')" | tee -a "$LOG"
done

note "timing against cuBLAS"
timeout 100 "$B" --m 4096 --n 4096 --k 4096 --iters 20 > "$OUT/time-4096.log" 2>&1
echo "4096: exit $?" | tee -a "$LOG"
timeout 150 "$B" --m 8192 --n 8192 --k 8192 --iters 10 > "$OUT/time-8192.log" 2>&1
echo "8192: exit $?" | tee -a "$LOG"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader 2>&1 | sed 's/^/after timing: /' | tee -a "$LOG"

note "ncu, 4096^3 tn and nt, one launch per variant"
if command -v ncu > /dev/null; then
  timeout 120 ncu --csv --page raw --log-file "$OUT/ncu.csv" --kernel-name regex:simt_gemm \
    --section SchedulerStats --section WarpStateStats --section ComputeWorkloadAnalysis \
    --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum \
    "$B" --profile 1 --layouts tn,nt --check 0 > "$OUT/ncu-order.log" 2> "$OUT/ncu.err"
  echo "ncu: exit $?" | tee -a "$LOG"
  python3 - "$OUT/ncu.csv" "$OUT/ncu-order.log" <<'PY' | tee -a "$LOG"
# One line per profiled kernel (launch order = the bench's "profiled LAYOUT | VARIANT" lines):
# issue slots busy, FMA pipe use, warps per scheduler, the main stall reasons (warps stalled per
# issued instruction), shared-memory bank conflicts.
import csv, sys, re
try:
    rows = list(csv.reader(open(sys.argv[1])))
except Exception as e:
    print('no ncu output:', e); sys.exit()
order = [l.split(' ', 1)[1].strip() for l in open(sys.argv[2]) if l.startswith('profiled ')]
hdr = next((i for i, r in enumerate(rows) if 'Kernel Name' in r), None)
if hdr is None:
    print('no ncu rows'); sys.exit()
h = rows[hdr]
want = [('smsp__issue_active.avg.pct_of_peak_sustained_active', 'issue%'),
        ('sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active', 'fma%'),
        ('smsp__warps_active.avg.per_cycle_active', 'warps')]
want += [(k, re.match(r'smsp__average_warps_issue_stalled_(\w+)_per_issue_active.ratio', k).group(1)[:9])
         for k in h if re.match(r'smsp__average_warps_issue_stalled_(barrier|short_scoreboard|long_scoreboard|mio_throttle|math_pipe_throttle|not_selected|wait|dispatch_stall|no_instruction|selected)_per_issue_active.ratio$', k)]
want += [('l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum', 'ldconf'), ('l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum', 'stconf')]
want = [(k, n) for k, n in want if k in h]
print('layout | variant'.ljust(46), ' '.join(n.rjust(9) for _, n in want))
data = [r for r in rows[hdr + 1:] if len(r) == len(h) and 'simt_gemm' in r[h.index('Kernel Name')]]
for i, r in enumerate(data):
    label = order[i] if i < len(order) else r[h.index('Kernel Name')][:44]
    print(label[:45].ljust(46), ' '.join(r[h.index(k)].replace(',', '')[:9].rjust(9) for k, _ in want))
PY
else
  echo "ncu: not installed" | tee -a "$LOG"
fi

note "summary"
grep -E "^checks:|CHECK FAILED|: exit" "$LOG" | head -40
for s in 4096 8192; do
  sed -n '/^ratio to cuBLAS/,$p' "$OUT/time-$s.log"
done
