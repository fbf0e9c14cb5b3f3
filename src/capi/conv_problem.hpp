// src/capi/conv_problem.hpp -- a C ABI convolution problem (strided channels-last tensors) as the
// host API's ConvArguments.
//
// The mapping (tessel/c_api.h): x [N, (D,) H, W, C] gives n, d, h, w, c; w [K, (T,) R, S, C/groups]
// gives k, t, r, s; y [N, (Z,) P, Q, K] must have the output extents those give. Strides map
// dimension by dimension (x.stride_n, ..., filter.stride_k); the stride of an extent-1 dimension,
// and every stride of a tensor with no elements, forms no address and is replaced by its packed
// value, as attention_problem.hpp does. The written tensor (y for fprop, x for dgrad, w for wgrad)
// gives ConvArguments::out its pointer. The C ABI's own rules (presence, ranks, dtypes, shapes that
// agree, contiguous channels, dense filter taps, the residual laid out as the output) come first,
// then conv_validate's; every refusal starts with the tensor's name (its `name`) or the
// argument's. No CUDA calls.
#pragma once

#include <tessel/c_api.h>

#include <tessel/conv/conv_arguments.hpp>

#include "refusal.hpp"

namespace tessel::capi {

// Checks p against every rule of tessel_conv_check and, when it passes, fills *out. Pointers are
// copied, never dereferenced.
Refusal conv_arguments_from_problem(tessel_conv_problem const& p, ConvArguments* out);

}  // namespace tessel::capi
