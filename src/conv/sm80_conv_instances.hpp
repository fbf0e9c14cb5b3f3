// src/conv/sm80_conv_instances.hpp -- the compiled sm_80 convolution kernels as the host code
// (sm80_conv_run.cpp, plain C++) sees them.
//
// Each sm80_conv_<op>_<dtype>[_align1].cu compiles one implicit-GEMM configuration
// (tessel/conv/kernel/sm80_implicit_gemm_conv.hpp); sm80_conv_depthwise_<dtype>.cu compiles the two
// depthwise kernels of a dtype (tessel/conv/kernel/sm80_depthwise_conv.hpp), and
// sm80_conv_depthwise_dgrad_<dtype>.cu / sm80_conv_depthwise_wgrad_<dtype>.cu those of the backward
// passes (sm80_depthwise_dgrad.hpp, sm80_depthwise_wgrad.hpp); sm80_conv_smallc_<dtype>.cu the
// small-channel fprop and dgrad, sm80_conv_smallc_wgrad_<dtype>.cu its wgrad (sm80_smallc_conv.hpp).
#pragma once

#include <tessel/conv/kernel/sm80_conv_kernel_params.hpp>

#include <cuda_runtime_api.h>

namespace tessel::kernel::detail {

struct Sm80ConvInstance {
  int tile_m = 0, tile_n = 0, tile_k = 0;  // implicit GEMM: the CTA tile; depthwise: pixels, channels, 0
  int threads = 0;
  int access = 0;  // elements per global access (implicit GEMM) or channels per thread (depthwise)
  // Launches the kernel for kp (the depthwise wgrad: both passes, the second where kp.partials is
  // set). Pre: kp complete (sm80_conv_run.cpp) and the instance fits it.
  cudaError_t (*launch)(Sm80ConvKernelParams const& kp, cudaStream_t stream) = nullptr;
};

// clang-format off
Sm80ConvInstance sm80_conv_instance_fprop_bf16();
Sm80ConvInstance sm80_conv_instance_fprop_bf16_align1();
Sm80ConvInstance sm80_conv_instance_dgrad_bf16();
Sm80ConvInstance sm80_conv_instance_dgrad_bf16_align1();
Sm80ConvInstance sm80_conv_instance_wgrad_bf16();
Sm80ConvInstance sm80_conv_instance_wgrad_bf16_align1();
Sm80ConvInstance sm80_conv_instance_fprop_f16();
Sm80ConvInstance sm80_conv_instance_fprop_f16_align1();
Sm80ConvInstance sm80_conv_instance_dgrad_f16();
Sm80ConvInstance sm80_conv_instance_dgrad_f16_align1();
Sm80ConvInstance sm80_conv_instance_wgrad_f16();
Sm80ConvInstance sm80_conv_instance_wgrad_f16_align1();
Sm80ConvInstance sm80_conv_instance_fprop_bf16_smallc();
Sm80ConvInstance sm80_conv_instance_dgrad_bf16_smallc();
Sm80ConvInstance sm80_conv_instance_fprop_f16_smallc();
Sm80ConvInstance sm80_conv_instance_dgrad_f16_smallc();
Sm80ConvInstance sm80_conv_instance_wgrad_bf16_smallc();
Sm80ConvInstance sm80_conv_instance_wgrad_f16_smallc();
Sm80ConvInstance sm80_conv_instance_depthwise_bf16(int vec);  // vec 8 or 1
Sm80ConvInstance sm80_conv_instance_depthwise_f16(int vec);
Sm80ConvInstance sm80_conv_instance_depthwise_dgrad_bf16(int vec);
Sm80ConvInstance sm80_conv_instance_depthwise_dgrad_f16(int vec);
Sm80ConvInstance sm80_conv_instance_depthwise_wgrad_bf16(int vec);
Sm80ConvInstance sm80_conv_instance_depthwise_wgrad_f16(int vec);
// clang-format on

// The second kernel of a split wgrad reduction (sm80_conv_slice_sum.cu): dw from the kp.slices
// fp32 partial sums at kp.partials, bf16 or fp16 out. Pre: the wgrad kernel that wrote them is
// ahead of it on `stream`.
cudaError_t sm80_conv_slice_sum(Sm80ConvKernelParams const& kp, bool bf16, cudaStream_t stream);

// The filter taps (R*S) the depthwise fprop and dgrad kernels stage in their 48 KiB of shared
// memory; the wgrad kernel takes the same filters.
inline constexpr int kSm80DepthwiseMaxTaps = 192;

// The taps one CTA of the depthwise wgrad accumulates (9 x 8 fp32 sums a thread at Vec 8: a 3x3
// filter in one CTA); larger filters take ceil(R*S / 9) CTAs per channel block and slice.
inline constexpr int kSm80DepthwiseWgradTaps = 9;

}  // namespace tessel::kernel::detail
