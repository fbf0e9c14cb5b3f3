#!/usr/bin/env bash
# One GEMM kernel family on the GPU machine in one call: build its targets (sm_90a, all cores), its
# host and GPU tests, compute-sanitizer (memcheck, racecheck, synccheck) on the *Small* tests, the
# SASS instruction mix and resources of its kernels, its benchmarks; logs and JSON under $OUT, a
# short table last.
#
#   FAMILY=sm80|sm90 scripts/gpu-family.sh [stage ...]   stages: build host gpu bench sass sanitize
# DEADLINE (seconds, default 440): later stages shrink their timeouts to fit, the sanitizer last.
# GTEST_FILTER_GPU: gtest filter for the gpu stage (default: all tests of the family's binary).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
BUILD_DIR=${BUILD_DIR:-build-gpu}
mkdir -p "$OUT"
export TESSEL_GIT_COMMIT=${TESSEL_GIT_COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(build host gpu bench sass sanitize)
FAMILY=${FAMILY:-sm80}
LOG="$OUT/gpu-$FAMILY.log"
DEADLINE=${DEADLINE:-440}
left() { local l=$((DEADLINE - SECONDS)); [ $l -lt 0 ] && l=0; [ $l -gt ${1:-9999} ] && l=$1; echo $l; }
note() { printf '\n==== %s (%s)\n' "$*" "$(date -u +%H:%M:%S)" | tee -a "$LOG"; }
gtest_line() { grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$1" | tr '\n' ' '; }
case $FAMILY in
  sm80) host_tests="host_sm80_tv_coverage_test host_bank_conflict_sm80_test"; kernel_re="sm80_gemm_kernel" ;;
  sm90) host_tests="host_sm90_pingpong_walk_test"; kernel_re="sm90_gemm_(pingpong_)?kernel" ;;
  *) echo "FAMILY: '$FAMILY' is not one of sm80, sm90" >&2; exit 2 ;;
esac
gpu_test="gpu_${FAMILY}_gemm_test"
targets="tessel_cli $gpu_test $host_tests"

for stage in "${stages[@]}"; do
  case $stage in
    build)
      note "build, commit $TESSEL_GIT_COMMIT"
      nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv 2>&1 | tee -a "$LOG"
      { cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a &&
        cmake --build "$BUILD_DIR" -j "$(nproc)" -- -k 0 $targets; } > "$OUT/build.log" 2>&1
      echo "build: exit $?" | tee -a "$LOG"
      grep -E "error|FAILED" "$OUT/build.log" | head -20 | tee -a "$LOG"
      ;;
    host)
      note "host tests"
      : > "$OUT/host-tests.log"
      for t in $host_tests; do
        "$BUILD_DIR/tests/$t" > "$OUT/t.log" 2>&1
        echo "$t: exit $? $(gtest_line "$OUT/t.log")" | tee -a "$LOG"
        cat "$OUT/t.log" >> "$OUT/host-tests.log"
      done
      rm -f "$OUT/t.log"  # at most 8 files come back from the device
      ;;
    gpu)
      note "GPU tests"
      t="$BUILD_DIR/tests/$gpu_test"
      timeout "$(left 240)" "$t" ${GTEST_FILTER_GPU:+--gtest_filter="$GTEST_FILTER_GPU"} > "$OUT/$gpu_test.log" 2>&1
      echo "$gpu_test: exit $? $(gtest_line "$OUT/$gpu_test.log")" | tee -a "$LOG"
      grep -E '^\[  FAILED|Failure|error:|Expected|Which is|FAILED:|: (max|norm) rel err|tessel [0-9]' \
        "$OUT/$gpu_test.log" | head -30 | tee -a "$LOG"
      ;;
    bench)
      note "benchmarks"
      BUILD_DIR=$BUILD_DIR OUT=$OUT timeout "$(left 200)" "scripts/bench-$FAMILY.sh" "$BUILD_DIR" > /dev/null 2>&1
      echo "bench-$FAMILY: exit $?" | tee -a "$LOG"
      grep -E "error|FAILED" "$OUT/bench-$FAMILY.log" | head -10 | tee -a "$LOG"
      ;;
    sass)
      note "SASS of the $FAMILY kernels (instruction mix, resources)"
      lib=$(find "$BUILD_DIR/src" -name libtessel_kernels.a | head -1)
      cuobjdump -res-usage "$lib" 2>/dev/null | grep -A1 -E "$kernel_re|sm80_stage" | grep -E "Function|REG" |
        sed 's/Function \(.*\):/\1/' | paste - - | sed -E 's/_ZN6tessel6kernel1[0-9]sm[0-9]+_gemm_kernelINS_(10collective)?14Sm[0-9]+GemmConfig//' |
        cut -c1-150 | tee -a "$LOG"
      cuobjdump -sass "$lib" 2>/dev/null | python3 -c '
import re, sys, collections
name, counts, keep = None, collections.OrderedDict(), []
for line in sys.stdin:
    m = re.search(r"Function : (\S+)", line)
    if m:
        name = m.group(1) if re.search(sys.argv[2], m.group(1)) else None
        if name: counts.setdefault(name, collections.Counter())
        continue
    m = re.match(r"\s+/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_]+)", line)
    if name and m:
        counts[name][m.group(2)] += 1
        if "Li256E" in name and "bfloat16" in name: keep.append(line.rstrip())
for n, c in counts.items():
    short = re.sub(r".*Sm[0-9]+(Gemm|Pingpong)ConfigI", "", n)[:70]
    print(short, " ".join(f"{k}:{c[k]}" for k in ("HMMA", "HGMMA", "LDSM", "LDGSTS", "UTMALDG", "SYNCS", "BAR", "LDS", "STS", "LDG", "STG", "LDL", "STL") if c[k]), "total", sum(c.values()))
open(sys.argv[1], "w").write("\n".join(keep))
' "$OUT/${FAMILY}_bf16_x256.sass" "$kernel_re" | tee -a "$LOG"
      ;;
    sanitize)
      note "compute-sanitizer on the Small tests"
      t="$BUILD_DIR/tests/$gpu_test"
      : > "$OUT/sanitizer.log"
      for tool in memcheck synccheck racecheck; do
        [ "$(left)" -lt 20 ] && { echo "$tool: skipped, no time left" | tee -a "$LOG"; continue; }
        timeout "$(left 150)" compute-sanitizer --tool $tool --error-exitcode 9 "$t" --gtest_filter='*Small*' >> "$OUT/sanitizer.log" 2>&1
        echo "$tool $gpu_test *Small*: exit $?" | tee -a "$LOG"
      done
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Hazard|Invalid" "$OUT/sanitizer.log" | sort | uniq -c | head -20 | tee -a "$LOG"
      ;;
  esac
done

note "summary"
grep -E ": exit [0-9]" "$LOG" | sort -u
python3 - "$OUT"/bench/results/$FAMILY-*.json <<'PY'
import json, sys
for path in sys.argv[1:]:
    try:
        d = json.load(open(path))
    except Exception as e:
        print(path, "unreadable:", e); continue
    print(f"-- {path.split('/')[-1]}: {d['gpu']}, commit {d['commit']}")
    for r in d["results"]:
        shape = (f"{r['batch']}x" if r["batch"] != 1 else "") + f"{r['m']}x{r['n']}x{r['k']}"
        ratio = r["ratio"] or 0
        print(f"{shape:20s} {r['dtype']:5s} {r['layout']:3s} {r['kernel'][:22]:22s} {r['tflops'] or 0:7.1f} "
              f"cuBLAS {r['baseline_tflops'] or 0:7.1f} x{ratio:5.2f} ver {r['verified']} err {r['max_rel_err']}")
PY
