// src/capi/gemm_problem.hpp -- a C ABI GEMM problem (strided tensors) as host-API GemmArguments.
//
// The mapping (tessel/c_api.h): the last two strides of each matrix decide its order and leading
// dimension (s_cols == 1: row-major, ld = s_rows; s_rows == 1: column-major, ld = s_cols; the
// stride of an extent-1 dimension does not count); a 2-D operand, or a 3-D one with batch 1, is
// broadcast over D's batch with batch stride 0. Every refusal names the tensor (its `name`) and
// the rule. No CUDA calls: it answers on machines without a GPU.
#pragma once

#include <tessel/c_api.h>

#include <tessel/gemm/device/gemm_arguments.hpp>

#include "refusal.hpp"

namespace tessel::capi {

// Checks p against every rule of tessel_gemm_check (the C ABI's own, then gemm_validate's) and,
// when it passes, fills *out. Pointers are copied, never dereferenced.
Refusal gemm_arguments_from_problem(tessel_gemm_problem const& p, GemmArguments* out);

}  // namespace tessel::capi
