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

}  // namespace tessel::detail
