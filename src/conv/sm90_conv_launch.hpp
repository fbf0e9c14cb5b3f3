// src/conv/sm90_conv_launch.hpp -- the sm_90a convolution kernels as the host API (conv.cpp) sees
// them. Kernels (src/conv/sm90_conv_fprop_<dtype>.cu; tessel/conv/kernel/sm90_conv_fprop.hpp says
// how they work), <dtype> bf16 or fp16:
//   sm90_conv_fprop_<dtype>_128x256x64   implicit-GEMM fprop, activations by TMA im2col (or gathered
//                                        by cp.async where the tensor map cannot express the problem), TMA
//   sm90_conv_fprop_<dtype>_128x128x64   filters, wgmma; the widest tile whose grid still fills
//   sm90_conv_fprop_<dtype>_128x64x64    the GPU twice (sm90_conv_run.cpp)
//   sm90_conv_dgrad_<dtype>_128x{256,128,64}x64   the stride-1 data gradient: the same kernel on dy
//                                        with the filters flipped and read transposed
//   sm90_conv_{fprop,dgrad}_<dtype>_128x256x64_c2   the implicit GEMM: the sm_90a GEMM
//                                        kernel with A read as the activations' im2col view
//                                        (src/conv/sm90_implicit_conv.cuh), its schedule, clusters
//                                        sharing the filters, split-K and epilogue; the choice where
//                                        it takes the problem
//   sm90_conv_{fprop,dgrad}_<dtype>_256x{64,128}x64_c1   the same with the pixels as the GEMM's B
//                                        (256 pixels x 64 or 128 output channels a tile, D written
//                                        transposed): outputs of at most 128 channels
//   sm90_conv_{fprop,dgrad}_<dtype>_192x128x64_c1   192 pixels x 128 output channels a tile, where
//                                        the wider tiles leave the grid's last round part-empty
//   sm90_conv_wgrad_<dtype>_{128,64}x192x64_c1   the weight gradient as that GEMM with B the im2col
//                                        view (dw = dy^T x im2col(x)), its sum over pixels split
//                                        into K slices; _128x192x64_c1x2: clusters of two column
//                                        tiles sharing dy^T's box
//   sm90_conv_fprop_<dtype>_halo_64x256   3x3 C = K = 64 fprop from a halo window per tile of 4 rows
//                                        x 64 positions: the input rows loaded once, the 9 taps read
//                                        at 9 row offsets (tessel/conv/kernel/sm90_halo_conv.hpp);
//                                        picked 48 to 62 pixels wide without the fused terms
// src/conv/sm90_conv_run.cpp holds the selection.
#pragma once

#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/atom/tma_encode_args.hpp>
#include <tessel/conv/conv_as_gemm.hpp>
#include <tessel/conv/kernel/sm80_conv_params.hpp>
#include <tessel/conv/operator.hpp>
#include <tessel/core/dtype.hpp>
#include <tessel/core/status.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessel {

// Whether an sm_90a kernel takes p (the problem's rules only; the caller checks the GPU): fprop, or
// dgrad with every stride 1 and pad <= (filter - 1) * dilation -- groups == 1, C >= 64 and K >= 64
// with both multiples of 8, bf16 or fp16, every tensor 16-byte aligned and every stride a multiple
// of 8 elements, the input's H, W and pads below 2^14 -- or wgrad with C a multiple of 64, K >= 64
// a multiple of 8, dy's pixels evenly strided, whole filter rows and an im2col map that fits.
bool sm90_conv_takes(kernel::Sm80ConvParams const& p, DType dtype);

// The implicit GEMM's leading dimension of y (dy for wgrad, y of the problem in forward terms for
// fprop and dgrad): the step between its pixels where they follow one step
// (conv_rows_evenly_strided, the 1x1 GEMM route's rule), else 0.
inline long long sm90_conv_pixel_step(kernel::Sm80ConvParams const& p) {
  std::int64_t const extent[4] = {p.n, p.z, p.p, p.q};
  std::int64_t const stride[4] = {p.y_stride[0], p.y_stride[1], p.y_stride[2], p.y_stride[3]};
  std::int64_t step = 0;
  return conv_rows_evenly_strided(extent, stride, p.k, &step) ? step : 0;
}

// What a call brings beside the problem: the caller's scratch (ConvArguments::workspace), or none
// (null: the implicit GEMM's split-K partials then come from the GEMM's own pool), and
// ConvArguments::options.
struct Sm90ConvCall {
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  bool lean_builds = true;  // ConvOptions::lean_builds
  int wgrad_slices = 0;     // ConvOptions::wgrad_slices
};

// The registry name of the kernel the selection picks for p: the implicit GEMM where it takes p
// (a pixel-packed output, no bias, a problem the im2col tensor map expresses), else the direct
// kernel ("none" when neither takes p).
char const* sm90_conv_kernel_name(kernel::Sm80ConvParams const& p, DType dtype);
// The direct kernel's name for p ("none" where it does not take p).
char const* sm90_conv_direct_kernel_name(kernel::Sm80ConvParams const& p, DType dtype);
// Every sm_90a kernel that runs p, the selection's among them: a caller may name any (A/B
// measurements); `tessel list` shows them.
std::vector<char const*> sm90_conv_kernel_names(kernel::Sm80ConvParams const& p, DType dtype);

// The workspace bytes sm90_conv_run takes for p with kernel `name` and call's options (the
// implicit GEMM's split-K partials; 0 for the direct kernel). Pre: as sm90_conv_run's.
Status sm90_conv_workspace_size(kernel::Sm80ConvParams const& p, DType dtype, char const* name, Sm90ConvCall const& call,
                                std::size_t* bytes);

// Runs p with kernel `name` (sm90_conv_kernel_name's or sm90_conv_direct_kernel_name's answer) on
// `stream` (asynchronously). Pre: sm90_conv_takes(p, dtype) and an sm_90 GPU.
Status sm90_conv_run(kernel::Sm80ConvParams const& p, DType dtype, char const* name, Sm90ConvCall const& call,
                     cudaStream_t stream);

namespace kernel::detail {
// The activations' im2col tensor map for the A tile (pixels x channels, 128-byte swizzle) into
// *out; returns its rank (4 for a 2-D problem, 5 for 3-D), or 0 where the map cannot express p
// (a bounding-box corner or traversal stride past the driver's range) and the kernel gathers instead.
int sm90_conv_im2col_map(Sm80ConvParams const& p, TmaDataType type, int pixels, int channels, TmaDescriptor* out);
// Whether the im2col tensor map can express p (the driver's corner and traversal-stride ranges).
bool sm90_conv_im2col_fits(Sm80ConvParams const& p);

// The implicit-GEMM configurations (src/conv/sm90_implicit_conv_<dtype>.cu,
// sm90_implicit_conv_n192.cu and sm90_implicit_conv_wgrad_<dtype>.cu): fprop and dgrad take
// p in forward terms (as_fprop), wgrad as it is; query non-null: store the workspace bytes there
// and launch nothing.
using Sm90ConvCall = tessel::Sm90ConvCall;
Status sm90_implicit_conv_bf16_n256(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                    std::size_t* query, cudaStream_t stream);
Status sm90_implicit_conv_bf16_pixels_b_m128(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                             std::size_t* query, cudaStream_t stream);
Status sm90_implicit_conv_bf16_pixels_b_n192(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                             std::size_t* query, cudaStream_t stream);
Status sm90_implicit_conv_bf16_pixels_b_m64(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                            std::size_t* query, cudaStream_t stream);
Status sm90_implicit_conv_bf16_wgrad_m128(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                          std::size_t* query, cudaStream_t stream);
Status sm90_implicit_conv_bf16_wgrad_m128_c1x2(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                               std::size_t* query, cudaStream_t stream);
Status sm90_implicit_conv_bf16_wgrad_m64(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                         std::size_t* query, cudaStream_t stream);
Status sm90_implicit_conv_f16_n256(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                   std::size_t* query, cudaStream_t stream);
Status sm90_implicit_conv_f16_pixels_b_m128(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                            std::size_t* query, cudaStream_t stream);
Status sm90_implicit_conv_f16_pixels_b_n192(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                            std::size_t* query, cudaStream_t stream);
Status sm90_implicit_conv_f16_pixels_b_m64(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                           std::size_t* query, cudaStream_t stream);
Status sm90_implicit_conv_f16_wgrad_m128(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                         std::size_t* query, cudaStream_t stream);
Status sm90_implicit_conv_f16_wgrad_m128_c1x2(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                              std::size_t* query, cudaStream_t stream);
Status sm90_implicit_conv_f16_wgrad_m64(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                        std::size_t* query, cudaStream_t stream);

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

// The halo-window fprop (src/conv/sm90_conv_halo.cu): whether it takes p (sm90_conv_run.cpp: the
// forward kernel's rules, and 3x3 pad 1 stride 1, C = K = 64, an image at most kSm90HaloMaxWidth
// pixels wide, y's image spanning fewer than 2^31 elements), and its launch.
inline constexpr int kSm90HaloMaxWidth = 62;
bool sm90_halo_conv_takes(Sm80ConvParams const& p, DType dtype);
Status sm90_halo_conv_launch(Sm80ConvParams const& p, DType dtype, cudaStream_t stream);
}  // namespace kernel::detail

}  // namespace tessel
