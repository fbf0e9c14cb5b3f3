#!/usr/bin/env bash
# A focused run on the GPU machine, for one experiment or fix: build some targets with all cores,
# run some GPU tests, time a sweep file with the CLI, and optionally profile a few lines with ncu
# and summarise the SASS of some kernels. Logs and the JSON under $OUT; a short summary last.
#
#   TARGETS="tessel_cli gpu_sm90_gemm_test" TESTS="gpu_sm90_gemm_test:*Fp8*" SWEEP=bench/fp8.txt \
#   SUITE=fp8 scripts/gpu-focus.sh
#
# TARGETS   build targets (default tessel_cli)
# TESTS     space-separated BINARY:GTEST_FILTER pairs, each run under a timeout (a hang costs the run)
# SWEEP     a file of `tessel gemm` lines (bench/*.txt format); SUITE names the JSON
#           ($OUT/bench/results/SUITE-<gpu>-<yyyymmdd>.json; default suite "focus")
# NCU       `tessel gemm` argument lines separated by ';' to profile (the second launch of a kernel
#           matching NCU_KERNEL, default regex:sm90_gemm_kernel)
# NCU_METRICS  extra metrics for ncu (comma-separated)
# NCU_SECTIONS extra ncu sections, space-separated (e.g. MemoryWorkloadAnalysis_Tables: L2 by source unit)
# NCU_CUBLAS   1: profile each NCU line a second time, cuBLAS's kernel of the same run (its nvjet
#              or xmma kernel), for a side-by-side reading
# SASS      regular expression of kernel names whose resources and instruction mix are summarised
# DEADLINE  seconds for the whole script (default 500); later stages shrink their timeouts to fit
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
BUILD_DIR=${BUILD_DIR:-build-gpu}
DEADLINE=${DEADLINE:-500}
mkdir -p "$OUT/bench/results"
LOG="$OUT/focus.log"
export TESSEL_GIT_COMMIT=${TESSEL_GIT_COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
left() { local l=$((DEADLINE - SECONDS)); [ $l -lt 5 ] && l=5; [ $l -gt ${1:-9999} ] && l=$1; echo $l; }
note() { printf '\n==== %s (%s, %ds)\n' "$*" "$(date -u +%H:%M:%S)" "$SECONDS" | tee -a "$LOG"; }

note "build ${TARGETS:-tessel_cli}, commit $TESSEL_GIT_COMMIT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv 2>&1 | tee -a "$LOG"
{ cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a &&
  cmake --build "$BUILD_DIR" -j "$(nproc)" -- -k 0 ${TARGETS:-tessel_cli}; } > "$OUT/build.log" 2>&1
echo "build: exit $?" | tee -a "$LOG"
grep -E "error|FAILED|C75[0-9][0-9]" "$OUT/build.log" | head -20 | tee -a "$LOG"

for t in ${TESTS:-}; do
  bin=${t%%:*} filter=${t#*:}
  note "test $bin --gtest_filter=$filter"
  timeout "$(left 300)" "$BUILD_DIR/tests/$bin" --gtest_filter="$filter" > "$OUT/t.log" 2>&1
  echo "$bin: exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/t.log" | tr '\n' ' ')" | tee -a "$LOG"
  grep -E '^\[  FAILED|Failure|error:|Expected|Which is|: (max|norm) rel err|Skipped|SKIPPED \]' "$OUT/t.log" | head -25 | tee -a "$LOG"
  cat "$OUT/t.log" >> "$OUT/tests.log"
done
rm -f "$OUT/t.log"

if [ -n "${SWEEP:-}" ]; then
  note "sweep $SWEEP"
  day=$(date -u +%Y%m%d)
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | sed 's/NVIDIA //; s/ .*//' | tr 'A-Z' 'a-z')
  timeout "$(left 400)" "$BUILD_DIR/tessel" gemm --sweep "$SWEEP" --suite "${SUITE:-focus}" \
    --json "$OUT/bench/results/${SUITE:-focus}-$gpu-$day.json" > "$OUT/sweep.log" 2>&1
  echo "sweep: exit $?" | tee -a "$LOG"
fi

if [ -n "${NCU:-}" ]; then
  note "ncu"
  IFS=';' read -ra lines <<< "$NCU"
  kernels=("${NCU_KERNEL:-regex:sm90_gemm_kernel}")
  [ "${NCU_CUBLAS:-0}" = 1 ] && kernels+=("regex:nvjet|xmma|cutlass")
  for args in "${lines[@]}"; do
    for kn in "${kernels[@]}"; do
      timeout "$(left 120)" ncu --clock-control none --kernel-name "$kn" --launch-skip 1 --launch-count 1 \
        --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
        ${NCU_METRICS:+--metrics $NCU_METRICS} $(for x in ${NCU_SECTIONS:-}; do printf -- '--section %s ' "$x"; done) \
        "$BUILD_DIR/tessel" gemm $args --iters 2 --warmup 2 --no-verify >> "$OUT/ncu.log" 2>&1
      echo "ncu [$kn] $args: exit $?" | tee -a "$LOG"
    done
  done
  grep -E "^  [a-zA-Z_].*\(|Duration|SM Frequency|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|L2 Hit Rate|Executed Ipc A|Issue Slots Busy|DRAM Throughput|lts__|dram__|Registers Per|Achieved Occupancy|Stall|Warp Cycles Per Issued|No Eligible|Active Warps Per" "$OUT/ncu.log" |
    sed 's/  */ /g' | cut -c1-140 | tail -80 | tee -a "$LOG"
fi

if [ -n "${SASS:-}" ]; then
  note "SASS of /$SASS/"
  lib=$(find "$BUILD_DIR/src" -name 'libtessel_kernels.a' | head -1)
  cuobjdump -res-usage "$lib" 2>/dev/null | grep -A1 -E "$SASS" | grep -E "Function|REG" | paste - - | cut -c1-220 | tee -a "$LOG"
  cuobjdump -sass "$lib" 2>/dev/null | python3 -c '
import re, sys, collections
name, counts, seq = None, collections.OrderedDict(), collections.defaultdict(list)
for line in sys.stdin:
    m = re.search(r"Function : (\S+)", line)
    if m:
        name = m.group(1) if re.search(sys.argv[1], m.group(1)) else None
        if name: counts.setdefault(name, collections.Counter())
        continue
    m = re.match(r"\s+/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_]+)", line)
    if name and m:
        counts[name][m.group(2)] += 1
        seq[name].append(m.group(2))
for n, c in counts.items():
    # Spills between the first and the last wgmma: inside (or between) the mainloops.
    ops = seq[n]
    mma = [i for i, op in enumerate(ops) if op in ("HGMMA", "QGMMA")]
    inside = sum(1 for op in ops[mma[0]:mma[-1]] if op in ("LDL", "STL")) if mma else 0
    print(n[-90:], " ".join(f"{k}:{c[k]}" for k in ("HGMMA", "QGMMA", "HMMA", "LDSM", "STSM", "UTMALDG", "SYNCS", "BAR", "LDS", "STS", "LDG", "STG", "FADD", "FFMA", "LDL", "STL") if c[k]), "total", sum(c.values()), "LDL/STL among the wgmmas", inside)
' "$SASS" | tee -a "$LOG"
fi

note "summary"
grep -E ": exit [0-9]" "$LOG"
[ -f "$OUT/sweep.log" ] && grep -vE "^\s*$" "$OUT/sweep.log" | tail -40
