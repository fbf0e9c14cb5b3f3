#!/usr/bin/env bash
# Issue 5 on the GPU machine in one call: build the GEMM targets (sm_90a, all cores), run their
# GPU tests, a compute-sanitizer pass on small problems, the SIMT ladder, the tiling sweep, the
# benchmark suites; logs and JSON under $OUT; a short table last.
#
#   TESSEL_GIT_COMMIT=$(git rev-parse --short=12 HEAD) scripts/gpu-simt.sh [stage ...]
#   stages: build test sanitize ladder tiles bench sass (default: all)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
BUILD_DIR=${BUILD_DIR:-build-gpu}
mkdir -p "$OUT"
export TESSEL_GIT_COMMIT=${TESSEL_GIT_COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(build test sanitize ladder tiles bench sass)
LOG="$OUT/gpu-simt.log"
note() { printf '\n==== %s (%s)\n' "$*" "$(date -u +%H:%M:%S)" | tee -a "$LOG"; }
targets="tessel_cli tutorial_ladder bench_simt_tiles gpu_gemm_api_test gpu_tutorial_ladder_test host_gemm_validate_test host_cli_gemm_test"

for stage in "${stages[@]}"; do
  case $stage in
    build)
      note "build, commit $TESSEL_GIT_COMMIT"
      nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv 2>&1 | tee -a "$LOG"
      { cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a &&
        cmake --build "$BUILD_DIR" -j "$(nproc)" -- -k 0 $targets; } > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; }
      grep -E "error|FAILED" "$OUT/build.log" | head -20 | tee -a "$LOG"
      tail -1 "$OUT/build.log" | tee -a "$LOG"
      ;;
    test)
      note "GPU + host tests"
      for t in gpu_gemm_api_test gpu_tutorial_ladder_test host_gemm_validate_test host_cli_gemm_test; do
        [ -x "$BUILD_DIR/tests/$t" ] || { echo "$t: not built" | tee -a "$LOG"; continue; }
        "$BUILD_DIR/tests/$t" > "$OUT/test-$t.log" 2>&1
        echo "$t: exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/test-$t.log" | tr '\n' ' ')" | tee -a "$LOG"
        grep -E '^\[  FAILED|Failure|FAILED:' "$OUT/test-$t.log" | head -20 | tee -a "$LOG"
      done
      cat "$OUT"/test-*.log > "$OUT/tests.log"; rm -f "$OUT"/test-*.log
      ;;
    sanitize)
      note "compute-sanitizer (memcheck, racecheck) on small problems"
      : > "$OUT/sanitizer.log"
      for tool in memcheck racecheck; do
        for args in "--m 257 --n 129 --k 65 --layout nn --beta 1" "--m 130 --n 260 --k 37 --layout tn --dtype bf16" \
                    "--m 64 --n 64 --k 64 --layout tt --batch 3 --kernel simt_64x64x8" \
                    "--m 260 --n 136 --k 44 --layout tn --batch 2 --beta 1 --kernel simt_128x128x8_128t"; do
          compute-sanitizer --tool $tool --error-exitcode 9 "$BUILD_DIR/tessel" gemm $args --iters 1 --warmup 0 --compare none \
            >> "$OUT/sanitizer.log" 2>&1
          echo "$tool tessel gemm $args: exit $?" | tee -a "$LOG"
        done
        compute-sanitizer --tool $tool --error-exitcode 9 "$BUILD_DIR/examples/tutorial/tutorial_ladder" --m 130 --n 129 --k 37 --iters 1 \
          >> "$OUT/sanitizer.log" 2>&1
        echo "$tool tutorial_ladder 130x129x37: exit $?" | tee -a "$LOG"
      done
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitizer.log" | sort | uniq -c | tee -a "$LOG"
      ;;
    ladder)
      note "SIMT ladder 4096^3"
      "$BUILD_DIR/examples/tutorial/tutorial_ladder" 2>&1 | tee -a "$LOG"
      echo "tutorial_ladder: exit ${PIPESTATUS[0]}" | tee -a "$LOG"
      ;;
    tiles)
      note "SIMT tilings vs cuBLAS"
      for s in 4096 8192; do "$BUILD_DIR/bench/bench_simt_tiles" --m $s --n $s --k $s --iters 15; done 2>&1 | tee -a "$LOG"
      ;;
    bench)
      note "bench suites"
      scripts/bench-simt.sh "$BUILD_DIR" sgemm anchors > /dev/null 2>&1
      echo "bench-simt: exit $?" | tee -a "$LOG"
      cat "$OUT"/bench-*.log >> "$LOG"; rm -f "$OUT"/bench-*.log
      ;;
    sass)
      note "SASS of the fp32 kernels: instruction mix of each mainloop (innermost loop with a k-tile of FFMAs)"
      if command -v cuobjdump > /dev/null; then
        cuobjdump -sass "$BUILD_DIR/tessel" 2> /dev/null > "$OUT/sass.txt"
        python3 - "$OUT/sass.txt" <<'PY' | tee -a "$LOG"
import re, sys, collections
funcs, cur = {}, None
for line in open(sys.argv[1]):
    m = re.search(r'Function : (\S+)', line)
    if m:
        cur = m.group(1); funcs[cur] = []; continue
    m = re.match(r'\s+/\*([0-9a-f]{4,})\*/\s+(.*?);', line)
    if m and cur: funcs[cur].append((int(m.group(1), 16), m.group(2).strip()))
for name, ins in funcs.items():
    # the fp32 tn instances of the 128x128 kernels: simt_128x128x8_128t (warps 2x2) and the cp.async one (4x2, 3 stages)
    if not (('ILi128ELi128ELi8ELi2ELi2ELi4ELi2E' in name and 'EffLb1ELb1E' in name) or
            ('ILi128ELi128ELi8ELi4ELi2ELi4ELi2E' in name and 'Li3ELb1ELb1E' in name)):
        continue
    loops = []
    for a, t in ins:
        b = re.search(r'BRA (?:!?U?P\d, )?0x([0-9a-f]+)', t)
        if b and int(b.group(1), 16) < a: loops.append((int(b.group(1), 16), a))
    if not loops: continue
    def ffma(l): return sum(1 for a, t in ins if l[0] <= a <= l[1] and 'FFMA' in t)
    cand = [l for l in loops if ffma(l) >= 500] or loops
    lo, hi = min(cand, key=lambda x: x[1] - x[0])  # the innermost loop holding a k-tile's FFMAs
    body = [t for a, t in ins if lo <= a <= hi]
    c = collections.Counter(re.sub(r'^@!?U?P\w+\s+', '', t).split()[0].split('.')[0] for t in body)
    print(name[:90], '\n  loop', hex(lo), '-', hex(hi), len(body), 'instructions:', ', '.join(f'{k} {v}' for k, v in c.most_common(14)))
PY
        rm -f "$OUT/sass.txt"  # too large to bring back
      fi
      ;;
  esac
done

note "summary"
grep -E "_test: exit|: exit [0-9]" "$LOG" | grep -vE "^$" | sort -u
python3 - "$OUT"/bench/results/*.json <<'PY'
import json, sys
for path in sys.argv[1:]:
    try:
        d = json.load(open(path))
    except Exception as e:
        print(path, "unreadable:", e); continue
    print(f"-- {path.split('/')[-1]}: {d['gpu']}, commit {d['commit']}")
    for r in d["results"]:
        shape = f"{r['batch']}x" if r["batch"] != 1 else ""
        shape += f"{r['m']}x{r['n']}x{r['k']}"
        ratio = r["ratio"] if r["ratio"] is not None else 0
        print(f"{shape:22s} {r['dtype']:6s} {r['layout']:3s} {r['kernel']:15s} {r['tflops'] or 0:7.2f} "
              f"cuBLAS {r['baseline_tflops'] or 0:7.2f} ratio {ratio:5.3f} verified {r['verified']}")
PY
