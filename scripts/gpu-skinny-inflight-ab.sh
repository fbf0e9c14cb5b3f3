#!/usr/bin/env bash
# The 16-wide skinny kernel's in-flight limit (sm90_skinny_in_flight, session 17) against none
# (TESSEL_SM90_INFLIGHT=0), on skinny shapes and two controls under the heuristic, three rounds
# alternating, in one GPU call (~2 min): builds tessel_cli, leaves $OUT/inflight-ab.txt (the CLI
# lines, then the median TFLOP/s and ratio to cuBLAS of each side).
#   OUT=$OUT [ROUNDS=3] [SHAPES="MxNxK:dtype ..."] scripts/gpu-skinny-inflight-ab.sh
set -uo pipefail
cd "$(dirname "$0")/.."
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a &&
  cmake --build build-gpu -j 16 -- tessel_cli; } > $OUT/build.log 2>&1 || { echo BUILD FAILED; grep error $OUT/build.log | head; exit 1; }
f=$OUT/inflight-ab.txt
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $f
shapes=${SHAPES:-"16x8192x8192:bf16 16x8192x8192:fp16 1x8192x8192:bf16 8192x16x8192:bf16 16x28672x8192:bf16 16x4096x4096:bf16 16x4096x14336:bf16 16x4096x8192:bf16 16x3072x8192:bf16 16x8192x4096:bf16 16x8192x16384:bf16 16x16384x8192:bf16 8x12288x12288:bf16 16x6144x8192:bf16 32x4096x4096:bf16 64x8192x8192:bf16"}
for round in $(seq ${ROUNDS:-3}); do
  for mode in off rule; do
    for sh in $shapes; do
      IFS=x: read -r m n k dt <<< "$sh"
      if [ $mode = off ]; then env="TESSEL_SM90_INFLIGHT=0"; else env="TESSEL_SM90_INFLIGHT_UNSET=1"; fi
      r=$(env $env timeout 30 build-gpu/tessel gemm --m $m --n $n --k $k --dtype $dt --iters 100 --warmup 10 --no-verify 2>&1 | grep -E '^ *[0-9]+x[0-9]+x' | head -1)
      echo "$mode $r" | tee -a $f
    done
  done
done
python3 - $f <<'PY' | tee -a $f
import sys, collections, statistics
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    w = line.split()
    if len(w) < 12 or w[0] not in ('off', 'rule'): continue
    d[(w[1], w[2], w[4], w[0])].append((float(w[6]), float(w[9]), float(w[10])))
keys = sorted({k[:3] for k in d})
print(f"{'problem':16s} {'dtype':5s} {'kernel':22s} {'off TF':>7s} {'rule TF':>7s} {'gain':>6s} {'off r':>6s} {'rule r':>6s}")
for k in keys:
    o, r = d.get(k + ('off',), []), d.get(k + ('rule',), [])
    if not o or not r: continue
    ot = statistics.median(x[0] for x in o); rt = statistics.median(x[0] for x in r)
    orr = statistics.median(x[2] for x in o); rr = statistics.median(x[2] for x in r)
    print(f"{k[0]:16s} {k[1]:5s} {k[2]:22s} {ot:7.2f} {rt:7.2f} {rt/ot-1:+6.1%} {orr:6.3f} {rr:6.3f}")
PY
