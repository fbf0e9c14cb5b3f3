// src/conv/sm80_conv_launch.hpp -- the sm_80 convolution kernels as the host API (conv.cpp, plain
// C++) sees them: one entry that picks a kernel for a problem and launches it, and the name of the
// kernel it would pick.
//
// Kernels (src/conv/sm80_conv_*.cu; tessel/conv/kernel/sm80_implicit_gemm_conv.hpp and
// sm80_depthwise_conv.hpp say how each works), <dtype> bf16 or fp16:
//   sm80_conv_<op>_<dtype>_128x128x32         implicit GEMM, 16-byte cp.async: the channels per
//                                             group it reads contiguously, the strides and the
//                                             addresses of its operands multiples of 8 elements
//   sm80_conv_<op>_<dtype>_128x128x32_align1  the same GEMM reading one element per access: any
//                                             channel count, any strides
//   sm80_conv_depthwise_<dtype>_vec8 / _vec1  direct depthwise convolution (2-D fprop, groups ==
//                                             c == k, R*S <= 192), 8 channels per thread (c and
//                                             x's strides multiples of 8) or 1
//   sm80_conv_depthwise_dgrad_<dtype>_vec8 / _vec1, sm80_conv_depthwise_wgrad_<dtype>_vec8 / _vec1
//                                             the same for the data gradient (8 channels per thread
//                                             where dy allows it) and the weight gradient (where x
//                                             and dy do; tessel/conv/kernel/sm80_depthwise_dgrad.hpp,
//                                             sm80_depthwise_wgrad.hpp)
//   sm80_conv_fprop_<dtype>_smallc            the first layer's passes without padding (2-D,
//   sm80_conv_dgrad_<dtype>_smallc            groups 1): fprop with C <= 4, dgrad with C <= 8 and
//   sm80_conv_wgrad_<dtype>_smallc            K <= 64, wgrad with C <= 4 and K <= 64
//                                             (tessel/conv/kernel/sm80_smallc_conv.hpp)
// src/conv/sm80_conv_run.cpp holds the selection; a wgrad with few output tiles splits its
// reduction (tessel/conv/conv_split.hpp) and finishes in sm80_conv_slice_sum.cu; the depthwise
// wgrad splits its pixels (tessel/conv/conv_depthwise_split.hpp) and sums them in its own second pass.
#pragma once

#include <tessel/conv/conv_split.hpp>
#include <tessel/conv/kernel/sm80_conv_params.hpp>
#include <tessel/core/dtype.hpp>
#include <tessel/core/status.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>

namespace tessel {

// How sm80_conv_run splits a wgrad reduction (tessel/conv/conv_split.hpp) and where its fp32
// partial sums live.
struct Sm80ConvRunOptions {
  int sms = 0;                      // the GPU's SMs, which a split fills (0: no split)
  int cc = 0;                       // its compute capability, major * 10 + minor (0: not known; as sm_80)
  int slices = 0;                   // wgrad: this many slices instead of the rule's (0: the rule's)
  void* workspace = nullptr;        // the partials: caller-owned, 256-byte aligned, or nullptr: the
  std::size_t workspace_bytes = 0;  // library's stream-ordered pool (allocated and freed on `stream`)
};

// The split sm80_conv_run makes of (p, dtype): one slice for fprop, dgrad and a wgrad with enough
// tiles (the depthwise wgrad: enough CTAs), o.slices where it is set for a wgrad. For the depthwise
// wgrad k_tiles_per_slice counts output pixels. Pre: sm80_conv_kernel_name(p, dtype) is not "none".
ConvSplit sm80_conv_split(kernel::Sm80ConvParams const& p, DType dtype, Sm80ConvRunOptions const& o);

// The scratch bytes sm80_conv_run takes for (p, dtype, o): the partials of a split (slices x k x
// t*r*s*c/g rounded up to 8, or for the depthwise wgrad slices x r*s x c, fp32), 0 otherwise (and
// for a problem it refuses) -- except the small-channel wgrad, whose kernel writes partials even
// as one slice.
std::size_t sm80_conv_workspace_size(kernel::Sm80ConvParams const& p, DType dtype, Sm80ConvRunOptions const& o);

// Runs the pass p describes on `stream`, asynchronously, with bf16 or fp16 tensors (dtype) and fp32
// accumulation; a split wgrad runs the implicit GEMM (or the depthwise kernel's first pass) into
// fp32 partials, then the slice sum.
// Pre: p follows the rules of Sm80ConvParams (the host side validates them). Returns
// not_supported (naming the rule) for a problem no kernel takes, invalid_argument for a caller's
// workspace below sm80_conv_workspace_size, cuda_error with the reason when an allocation or a
// launch fails, success otherwise. Without a split it allocates nothing.
Status sm80_conv_run(kernel::Sm80ConvParams const& p, DType dtype, cudaStream_t stream, Sm80ConvRunOptions const& o = {});

// The registry name of the kernel sm80_conv_run would launch for (p, dtype) on a GPU of compute
// capability cc (as Sm80ConvRunOptions::cc), e.g. "sm80_conv_fprop_bf16_128x128x32"; "none" when
// it would refuse. Makes no CUDA call.
char const* sm80_conv_kernel_name(kernel::Sm80ConvParams const& p, DType dtype, int cc = 0);

}  // namespace tessel
