#!/usr/bin/env bash
# The Python package on the GPU machine: builds tessel._C with CMake for the python3 there, runs
# every Python test (the GPU ones with torch and CuPy included), then `python -m tessel.bench` for
# each suite in SUITES (default "gemm grouped attention conv"; "attention-backward" runs `attention
# --backward`). Logs go to $OUT (default ./gpu-out); the
# benchmark JSON to $OUT/results/python-<suite>-<gpu>.json (copy it over bench/results/ to record it).
#
#   scripts/gpu-python.sh                  # build, test, bench
#   scripts/gpu-python.sh build test       # some stages: build | test | bench | pip
#
# The pip stage (not run by default: it builds the kernels a second time, in pip's own tree)
# checks the packaging: `pip install --no-build-isolation .` into a scratch prefix, then an import
# from outside the source tree.
# Environment: BUILD_DIR (default build-gpu, shared with scripts/gpu-check.sh), ARCHS (default
# 90a), JOBS (default: all cores), OUT, TESSEL_GIT_COMMIT (the commit the JSON records where the
# copy has no .git), BENCH_ARGS (extra options for tessel.bench).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
BUILD_DIR=${BUILD_DIR:-build-gpu}
ARCHS=${ARCHS:-90a}
JOBS=${JOBS:-$(nproc)}
PYTHON=${PYTHON:-$(command -v python3)}
export TESSEL_GIT_COMMIT=${TESSEL_GIT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
mkdir -p "$OUT/results"
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(build test bench)
status=0

note() { printf '\n==== %s\n' "$*" | tee -a "$OUT/python-summary.txt"; }

pybind11_hint=()
if dir=$("$PYTHON" -m pybind11 --cmakedir 2>/dev/null); then
  pybind11_hint=(-Dpybind11_DIR="$dir")
fi

for stage in "${stages[@]}"; do
  case $stage in
    build)
      note "build tessel._C ($ARCHS, $PYTHON) $(date -u +%H:%M:%S)"
      "$PYTHON" -c "import os, sysconfig; h = os.path.join(sysconfig.get_paths()['include'], 'Python.h'); \
print('Python.h:', h, 'found' if os.path.exists(h) else 'MISSING (the module cannot build)')" | tee -a "$OUT/python-summary.txt"
      { cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$ARCHS" \
          -DPython_EXECUTABLE="$PYTHON" "${pybind11_hint[@]}" -DTESSEL_BUILD_PYTHON=ON &&
        cmake --build "$BUILD_DIR" -j "$JOBS" --target tessel_python host_c_api_test; } > "$OUT/python-build.log" 2>&1 ||
        { status=1; grep -E "error|Error|FAILED" "$OUT/python-build.log" | head -30; }
      tail -2 "$OUT/python-build.log" | tee -a "$OUT/python-summary.txt"
      ;;
    test)
      note "pytest $(date -u +%H:%M:%S)"
      "$PYTHON" -c "import torch, cupy; print('torch', torch.__version__, 'cupy', cupy.__version__)" 2>&1 | tee -a "$OUT/python-summary.txt"
      PYTHONPATH="$PWD/$BUILD_DIR/python" PYTHONDONTWRITEBYTECODE=1 \
        "$PYTHON" -m pytest -p no:cacheprovider -v -rs tests/python > "$OUT/pytest.log" 2>&1 || status=1
      grep -E "passed|failed|SKIPPED|FAILED|Error" "$OUT/pytest.log" | tail -25 | tee -a "$OUT/python-summary.txt"
      if [ -x "$BUILD_DIR/tests/host_c_api_test" ]; then
        "$BUILD_DIR/tests/host_c_api_test" > "$OUT/c_api_test.log" 2>&1 || status=1
        tail -1 "$OUT/c_api_test.log" | tee -a "$OUT/python-summary.txt"
      fi
      ;;
    bench)
      for suite in ${SUITES:-gemm grouped attention conv}; do
        note "python -m tessel.bench $suite $(date -u +%H:%M:%S)"
        suite_args=("$suite")
        [ "$suite" = attention-backward ] && suite_args=(attention --backward)
        PYTHONPATH="$PWD/$BUILD_DIR/python" "$PYTHON" -m tessel.bench "${suite_args[@]}" --out-dir "$OUT/results" ${BENCH_ARGS:-} 2>&1 |
          tee "$OUT/python-bench-$suite.log" | tee -a "$OUT/python-summary.txt"
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      done
      ;;
    pip)
      note "pip install --no-build-isolation . $(date -u +%H:%M:%S)"
      prefix=$(mktemp -d)
      CMAKE_ARGS="-DCMAKE_CUDA_ARCHITECTURES=$ARCHS" CMAKE_BUILD_PARALLEL_LEVEL=$JOBS \
        "$PYTHON" -m pip install --no-build-isolation --no-deps --prefix "$prefix" -v . > "$OUT/pip.log" 2>&1 || status=1
      tail -3 "$OUT/pip.log" | tee -a "$OUT/python-summary.txt"
      site=$(find "$prefix" -type d -name site-packages | head -1)
      (cd /tmp && PYTHONPATH="$site" "$PYTHON" -c "import tessel, tessel.torch
print('pip install: tessel', tessel.__version__, 'from', tessel.__file__, '-', tessel.device_count(), 'GPU(s)')") 2>&1 |
        tee -a "$OUT/python-summary.txt"
      [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      rm -rf "$prefix"
      ;;
    *) echo "unknown stage: $stage (build | test | bench | pip)" >&2; exit 2 ;;
  esac
done
note "done, status $status"
exit $status
