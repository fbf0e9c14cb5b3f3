// src/conv/sm90_conv_launch.hpp -- the sm_90a convolution kernels as the host API (conv.cpp) sees
// them. Kernels (src/conv/sm90_conv_fprop_<dtype>.cu; tessel/conv/kernel/sm90_conv_fprop.hpp says
// how they work), <dtype> bf16 or fp16:
//   sm90_conv_fprop_<dtype>_128x256x64   implicit-GEMM fprop, activations by TMA im2col (or gathered
//                                        by cp.async where the tensor map cannot express the problem), TMA
//   sm90_conv_fprop_<dtype>_128x128x64   filters, wgmma; the widest tile whose grid still fills
//   sm90_conv_fprop_<dtype>_128x64x64    the GPU twice (sm90_conv_run.cpp)
//   sm90_conv_dgrad_<dtype>_128x{256,128,64}x64   the stride-1 data gradient: the same kernel on dy
//                                        with the filters flipped and read transposed
// src/conv/sm90_conv_run.cpp holds the selection.
#pragma once

#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/atom/tma_encode_args.hpp>
#include <tessel/conv/kernel/sm80_conv_params.hpp>
#include <tessel/core/dtype.hpp>
#include <tessel/core/status.hpp>

#include <cuda_runtime_api.h>

namespace tessel {

// Whether an sm_90a kernel takes p (the problem's rules only; the caller checks the GPU): fprop, or
// dgrad with every stride 1 and pad <= (filter - 1) * dilation; groups == 1, C >= 64 and K >= 64
// with both multiples of 8, bf16 or fp16, every tensor 16-byte aligned and every stride a multiple
// of 8 elements, the input's H, W and pads below 2^14.
bool sm90_conv_takes(kernel::Sm80ConvParams const& p, DType dtype);

// The registry name of the kernel sm90_conv_run launches for p ("none" when it takes no such p).
char const* sm90_conv_kernel_name(kernel::Sm80ConvParams const& p, DType dtype);

// Runs p on `stream` (asynchronously). Pre: sm90_conv_takes(p, dtype) and an sm_90 GPU.
Status sm90_conv_run(kernel::Sm80ConvParams const& p, DType dtype, cudaStream_t stream);

namespace kernel::detail {
// The activations' im2col tensor map for the A tile (pixels x channels, 128-byte swizzle) into
// *out; returns its rank (4 for a 2-D problem, 5 for 3-D), or 0 where the map cannot express p
// (a bounding-box corner or traversal stride past the driver's range) and the kernel gathers instead.
int sm90_conv_im2col_map(Sm80ConvParams const& p, TmaDataType type, int pixels, int channels, TmaDescriptor* out);

// One compiled configuration's launch (src/conv/sm90_conv_fprop_<dtype>.cu).
Status sm90_conv_fprop_launch_bf16_n256(Sm80ConvParams const& p, cudaStream_t stream);
Status sm90_conv_fprop_launch_bf16_n128(Sm80ConvParams const& p, cudaStream_t stream);
Status sm90_conv_fprop_launch_bf16_n64(Sm80ConvParams const& p, cudaStream_t stream);
Status sm90_conv_fprop_launch_f16_n256(Sm80ConvParams const& p, cudaStream_t stream);
Status sm90_conv_fprop_launch_f16_n128(Sm80ConvParams const& p, cudaStream_t stream);
Status sm90_conv_fprop_launch_f16_n64(Sm80ConvParams const& p, cudaStream_t stream);
// The dgrad configurations take the problem in forward terms (sm90_conv_run.cpp, as_fprop).
Status sm90_conv_dgrad_launch_bf16_n256(Sm80ConvParams const& p, cudaStream_t stream);
Status sm90_conv_dgrad_launch_bf16_n128(Sm80ConvParams const& p, cudaStream_t stream);
Status sm90_conv_dgrad_launch_bf16_n64(Sm80ConvParams const& p, cudaStream_t stream);
Status sm90_conv_dgrad_launch_f16_n256(Sm80ConvParams const& p, cudaStream_t stream);
Status sm90_conv_dgrad_launch_f16_n128(Sm80ConvParams const& p, cudaStream_t stream);
Status sm90_conv_dgrad_launch_f16_n64(Sm80ConvParams const& p, cudaStream_t stream);
}  // namespace kernel::detail

}  // namespace tessel
