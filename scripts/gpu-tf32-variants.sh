#!/usr/bin/env bash
# The tf32 part of the sm_80 mainloop experiment (issue 6) in one short GPU call: build
# bench_sm80_variants, time the tf32 variants against cuBLAS at 4096^3 and on one long-K wave,
# check them on ragged shapes, and keep the SASS instruction mix of their mainloops. Logs under $OUT.
#   OUT=$OUT scripts/gpu-tf32-variants.sh [--only FILTER]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
BUILD_DIR=${BUILD_DIR:-build-gpu}
ONLY=(); [ "${1:-}" = --only ] && ONLY=(--only "$2")
mkdir -p "$OUT"
LOG="$OUT/tf32-variants.log"
B="$BUILD_DIR/bench/bench_sm80_variants"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv 2>&1 | tee -a "$LOG"
{ cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a &&
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target bench_sm80_variants; } > "$OUT/build.log" 2>&1 ||
  { tail -40 "$OUT/build.log" | tee -a "$LOG"; exit 1; }
for args in "--m 4096 --n 4096 --k 4096 --iters 20" "--m 1536 --n 2816 --k 16384 --iters 10" "--m 4096 --n 4096 --k 4096 --iters 20"; do
  echo "== tf32 $args" | tee -a "$LOG"
  timeout 60 "$B" --dtype tf32 $args "${ONLY[@]}" 2>&1 | tee -a "$LOG"
done
timeout 60 "$B" --dtype tf32 --check 1 --time 0 "${ONLY[@]}" 2>&1 | tail -5 | tee -a "$LOG"
# SASS: per tf32 kernel, the count of each opcode (the mainloop dominates the body).
if command -v cuobjdump > /dev/null; then
  cuobjdump -sass "$B" | grep -v "^\s*/\* [0-9a-fx]* \*/\s*$" > "$OUT/sass.txt" 2>/dev/null
  python3 - "$OUT/sass.txt" <<'PY' | tee -a "$LOG"
import re, sys, collections
fn = None; counts = collections.OrderedDict()
for line in open(sys.argv[1]):
    m = re.search(r'Function : (\S+)', line)
    if m: fn = m.group(1); counts[fn] = collections.Counter(); continue
    m = re.match(r'\s+/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)', line)
    if m and fn: counts[fn][m.group(1).split('.')[0]] += 1
for fn, c in counts.items():
    if 'Sm80GemmConfigIf' not in fn: continue
    print(fn[:160]); print('  ', sum(c.values()), dict(c.most_common(14)))
PY
fi
