#!/usr/bin/env bash
# Same-binary A/B of the 16-wide skinny kernels' L2 cache hints (docs/skinny_gemm.md, session 22):
# each skinny shape with the default hints (long operand evict-first, narrow one evict-last) and
# with none (TESSEL_SM90_L2HINT=0,0), alternating, ROUNDS rounds, through scripts/gpu-env-ab.sh.
# Needs a built tessel_cli in BUILD_DIR (scripts/gpu-check.sh build, or gpu-targets.sh). Lines to
# $OUT/skinny-l2hint-ab.txt.
#
#   OUT=$OUT BUILD_DIR=build-gpu ROUNDS=3 scripts/gpu-skinny-l2hint-ab.sh
ROUNDS=${ROUNDS:-3} ITERS=30 SKIP_BUILD=1 NAME=skinny-l2hint-ab VARIANTS="default: 0,0:TESSEL_SM90_L2HINT=0,0" \
SHAPES="--m 16 --n 8192 --k 8192 --dtype bf16;--m 16 --n 8192 --k 8192 --dtype fp16;--m 8192 --n 16 --k 8192 --dtype bf16;\
--m 1 --n 8192 --k 8192 --dtype bf16;--m 16 --n 4096 --k 8192 --dtype bf16;--m 16 --n 8192 --k 16384 --dtype bf16" \
  exec "$(dirname "$0")/gpu-env-ab.sh"
