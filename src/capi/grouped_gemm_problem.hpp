// src/capi/grouped_gemm_problem.hpp -- a C ABI grouped GEMM problem (strided tensors) as the host
// API's GroupedGemmArguments.
//
// The mapping (tessel/c_api.h): a [total_m, K] gives total_m, K and lda (its row stride); b
// [G, K, N] gives G and N, and its strides pick the layout -- N contiguous is b_layout kn (ldb its
// K stride), K contiguous (a transposed view of [G, N, K] weights) is nk (ldb its N stride) -- and
// batch_stride_b (its group stride); d and c [total_m, N] give ldd and ldc; offsets (1-D int32, G
// values) is passed as a device pointer, never read. The stride of an extent-1 dimension, and every
// stride of a tensor with no elements, forms no address and is replaced by its packed value. The
// C ABI's own rules (presence, ranks, dtypes, shapes that agree, row-major a, c and d) come first,
// then grouped_gemm_validate's, whose reasons are renamed to the caller's tensors ("lda: ..." ->
// "a.row_stride: ..."). No CUDA calls.
#pragma once

#include <tessel/c_api.h>

#include <tessel/gemm/device/grouped_gemm_arguments.hpp>

#include "refusal.hpp"

namespace tessel::capi {

// Checks p against every rule of tessel_grouped_gemm_check and, when it passes, fills *out.
// Pointers are copied, never dereferenced.
Refusal grouped_gemm_arguments_from_problem(tessel_grouped_gemm_problem const& p, GroupedGemmArguments* out);

}  // namespace tessel::capi
