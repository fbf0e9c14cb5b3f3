#!/usr/bin/env bash
# tessel::dist on the two-GPU machine (kind nvidia-h200-x2): builds what it needs (sm_90a, the
# Python module), runs the C++ GPU test (one process, every GPU), the Python GPU tests under
# torchrun, and `python -m tessel.bench dist`. At most seven files under $OUT (default ./gpu-out):
#   dist-summary.txt  what ran, versions, topology, pass/fail lines, the bench table
#   dist-build.log    cmake + ninja
#   dist-test.log     gpu_dist_gemm_test, host_dist_validate_test, pytest under torchrun
#   dist-nccl.log     one all-gather case again with NCCL_DEBUG=INFO (which path NCCL took)
#   dist-bench.log    the benchmark's output, every rank
#   dist-h200.json    the benchmark's JSON (copy it over bench/results/ to record it)
#   dist-trace.tgz    one traced call per problem and rank: Chrome traces and text timelines (--trace)
#
#   scripts/gpu-dist.sh                 # build test bench
#   scripts/gpu-dist.sh test bench      # some stages (the build directory kept from a warm machine)
#
# Environment: BUILD_DIR (default build-gpu), JOBS (default: every core; the x2 machine has 32),
# NPROC (ranks, default: every GPU), NCCL_ROOT (a prefix with include/nccl.h and lib/libnccl.so*; default: torch's pip NCCL when it is
# 2.28 or newer and has its header, else the CUDA toolkit's), TESSEL_GIT_COMMIT, BENCH_ARGS.
# NVLink multicast stays off in every process: NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1,
# NVSHMEM_DISABLE_NVLS=1.
set -uo pipefail
cd "$(dirname "$0")/.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-$PWD/gpu-out}
BUILD_DIR=${BUILD_DIR:-build-gpu}
JOBS=${JOBS:-$(nproc)}
PYTHON=${PYTHON:-$(command -v python3)}
NPROC=${NPROC:-$(nvidia-smi -L 2>/dev/null | wc -l)}
export TESSEL_GIT_COMMIT=${TESSEL_GIT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
mkdir -p "$OUT"
SUMMARY=$OUT/dist-summary.txt
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(build test bench)
status=0

note() { printf '\n==== %s\n' "$*" | tee -a "$SUMMARY"; }

# The NCCL to build against: the one torch loads (one libnccl.so.2 per process), if new enough.
if [ -z "${NCCL_ROOT:-}" ]; then
  NCCL_ROOT=$("$PYTHON" -c "
import os, re
try:
    import nvidia.nccl as n
    root = list(n.__path__)[0]
    text = open(os.path.join(root, 'include', 'nccl.h')).read()
    major, minor = (int(re.search(r'#define NCCL_%s +([0-9]+)' % f, text).group(1)) for f in ('MAJOR', 'MINOR'))
    if (major, minor) >= (2, 28):
        print(root)
except Exception:
    pass
" 2>/dev/null)
fi

note "tessel::dist on $NPROC GPU(s), $(date -u +%H:%M:%S); NCCL_ROOT=${NCCL_ROOT:-none, the CUDA toolkit NCCL}"
{
  nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,power.limit --format=csv
  nvidia-smi topo -m 2>&1 | head -12
  "$PYTHON" -c "import torch; print('torch', torch.__version__, 'NCCL', torch.cuda.nccl.version())" 2>&1
  grep -h "define NCCL_\(MAJOR\|MINOR\|PATCH\) " "${NCCL_ROOT:-/usr/local/cuda}/include/nccl.h" 2>/dev/null | tr '\n' ' '
  echo
} 2>&1 | tee -a "$SUMMARY"

for stage in "${stages[@]}"; do
  case $stage in
    build)
      note "build (sm_90a, -j$JOBS) $(date -u +%H:%M:%S)"
      pybind11_hint=()
      if dir=$("$PYTHON" -m pybind11 --cmakedir 2>/dev/null); then pybind11_hint=(-Dpybind11_DIR="$dir"); fi
      { cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
          -DTESSEL_BUILD_PYTHON=ON -DPython_EXECUTABLE="$PYTHON" "${pybind11_hint[@]}" \
          ${NCCL_ROOT:+-DTESSEL_NCCL_ROOT="$NCCL_ROOT"} &&
        cmake --build "$BUILD_DIR" -j "$JOBS" --target tessel_dist gpu_dist_gemm_test host_dist_validate_test \
          tessel_python; } > "$OUT/dist-build.log" 2>&1 || status=1
      grep -E "tessel::dist|error|FAILED" "$OUT/dist-build.log" | head -30 | tee -a "$SUMMARY"
      tail -2 "$OUT/dist-build.log" | tee -a "$SUMMARY"
      ;;
    test)
      note "gpu_dist_gemm_test (one process, $NPROC GPUs) $(date -u +%H:%M:%S)"
      timeout 300 "$BUILD_DIR/tests/gpu_dist_gemm_test" --gtest_filter='-DistTimeout.*' > "$OUT/dist-test.log" 2>&1 ||
        status=1
      # A rank that never makes the call, in a process of its own under a limit: it leaves a
      # communication stream waiting for the absent rank, which may hold the process's exit.
      timeout 60 "$BUILD_DIR/tests/gpu_dist_gemm_test" --gtest_filter='DistTimeout.*' >> "$OUT/dist-test.log" 2>&1
      rc=$?
      if [ $rc -ne 0 ]; then
        status=1
        echo "DistTimeout: exit status $rc (124: the process did not end within 60 s)" >> "$OUT/dist-test.log"
      fi
      timeout 60 "$BUILD_DIR/tests/host_dist_validate_test" >> "$OUT/dist-test.log" 2>&1 || status=1
      grep -E "^\[dist|PASSED|FAILED|SKIPPED|Failure|rank [0-9]:|DistTimeout" "$OUT/dist-test.log" | head -30 | tee -a "$SUMMARY"

      note "which path NCCL took: one all-gather case with NCCL_DEBUG=INFO $(date -u +%H:%M:%S)"
      NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,COLL,TUNING timeout 120 "$BUILD_DIR/tests/gpu_dist_gemm_test" \
        --gtest_filter='Shapes/DistAllGather.*/4' 2>&1 | head -c 4000000 > "$OUT/dist-nccl.log"
      grep -iE "CTA ?Policy|symmetric|copy ?engine|[^a-z]CE[^a-z]|nvls|AllGather|AlltoAll|NCCL version" "$OUT/dist-nccl.log" |
        sort | uniq -c | sort -rn | head -25 | tee -a "$SUMMARY"

      note "pytest under torchrun --nproc_per_node $NPROC $(date -u +%H:%M:%S)"
      PYTHONPATH="$PWD/$BUILD_DIR/python" PYTHONDONTWRITEBYTECODE=1 timeout 420 \
        "$PYTHON" -m torch.distributed.run --nproc_per_node "$NPROC" --tee 3 \
        -m pytest -p no:cacheprovider -q -rs --tb=short -m gpu tests/python/test_gpu_dist.py >> "$OUT/dist-test.log" 2>&1 || status=1
      PYTHONPATH="$PWD/$BUILD_DIR/python" PYTHONDONTWRITEBYTECODE=1 timeout 120 \
        "$PYTHON" -m pytest -p no:cacheprovider -q -rs tests/python/test_dist_validation.py >> "$OUT/dist-test.log" 2>&1 ||
        status=1
      grep -E "passed|failed|SKIPPED|FAILED|Error" "$OUT/dist-test.log" | tail -20 | tee -a "$SUMMARY"
      ;;
    bench)
      note "torchrun --nproc_per_node $NPROC -m tessel.bench dist $(date -u +%H:%M:%S)"
      PYTHONPATH="$PWD/$BUILD_DIR/python" timeout 480 \
        "$PYTHON" -m torch.distributed.run --nproc_per_node "$NPROC" -m tessel.bench dist \
        --json "$OUT/dist-h200.json" --trace "$OUT/dist-trace" ${BENCH_ARGS:-} > "$OUT/dist-bench.log" 2>&1 ||
        status=1
      grep -vE "^\[rank|W[0-9]{4}|warnings.warn|^  " "$OUT/dist-bench.log" | tail -30 | tee -a "$SUMMARY"
      [ -d "$OUT/dist-trace" ] && tar czf "$OUT/dist-trace.tgz" -C "$OUT" dist-trace && rm -rf "$OUT/dist-trace"
      ;;
    *) echo "unknown stage: $stage (build | test | bench)" >&2; exit 2 ;;
  esac
done
note "done, status $status"
exit $status
