// src/conv/conv_epilogue_only.hpp -- convolution() when no sum is needed: out = act(beta * residual + bias)
// for every element of out (conv_arguments.hpp), reading neither input. convolution() runs it when the
// sums are empty (fprop c = 0, dgrad k = 0, wgrad n = 0) or alpha = 0, as BLAS does for K = 0.
#pragma once

#include <tessel/conv/conv_arguments.hpp>
#include <tessel/core/status.hpp>

#include <cuda_runtime_api.h>

namespace tessel::detail {

// Pre: conv_validate(a) passed and out is not empty. Asynchronous on `stream`.
Status conv_epilogue_only(ConvArguments const& a, cudaStream_t stream);

// Whether conv_zero_off_grid takes a's dx: packed, its pixels' c channels whole 16-byte stores at a
// 16-byte aligned start, 2-D in effect (stride_d 1), each dimension's grid reaching its end
// (h = stride_h * p, w = stride_w * q).
bool conv_zero_off_grid_takes(ConvArguments const& a);

// Zeros into the pixels of a strided 1x1 dgrad's dx that its grid GEMM does not write (h or w off
// the stride), and nothing into the grid's: a quarter fewer bytes than zeroing dx whole at stride
// 2. One CTA per row of dx: a row off the grid is one run of 16-byte stores, a row on it skips
// the grid's pixels. Pre: conv_zero_off_grid_takes(a). Asynchronous on `stream`.
Status conv_zero_off_grid(ConvArguments const& a, cudaStream_t stream);

}  // namespace tessel::detail
