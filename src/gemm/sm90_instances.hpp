// src/gemm/sm90_instances.hpp -- the compiled sm_90a GEMM instances as the host adapter
// (sm90_gemm.cpp, plain C++) sees them. Each sm90_<dtype>_<tile>.cu compiles one configuration
// of tessel/gemm/kernel/sm90_gemm_warpspecialized.hpp (cooperative) or, for the _pingpong ones,
// tessel/gemm/kernel/sm90_gemm_pingpong.hpp, for sm_90a only.
#pragma once

#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/gemm/kernel/sm90_gemm_params.hpp>

#include <cuda_runtime_api.h>

namespace tessel::kernel::detail {

struct Sm90Instance {
  int tile_m = 0, tile_n = 0, tile_k = 0;
  int cluster_m = 1, cluster_n = 1;  // CTAs of a cluster along M (sharing B) or N (sharing A)
  int stages = 0;
  int epilogue_slabs = 1;  // 2: the staging buffer holds half a tile (TMA-stored D only)
  bool row_copies = true;  // a D that TMA cannot store may leave through the copy warps (else from registers: odd-width tiles, the ping-pong kernel)
  bool tma_store = true;   // a 16-bit D may leave by TMA stores (tiles of whole 64-column boxes; not the 16-wide skinny ones)
  bool fp8_pairs = false;  // an fp8 kernel that takes every e4m3/e5m2 pair (else e4m3 x e4m3 only)
  int threads = 0;
  int smem_bytes = 0;
  int element_bytes = 0;
  bool mn_major = false;  // reads MN-major operands in place (16-bit: TMA boxes of 64 x tile_k, wgmma transpose bits)
  bool stream_k = false;  // walks a Stream-K schedule when p.stream_k (the cooperative kernels with k-tile-sized K slices)
  int consumers = 2;      // consumer warpgroups (a Stream-K partial is tile_m x tile_n fp32 per CTA)
  bool tma_loads_c = false;  // a 16-bit C may arrive by TMA in the staging buffer (p.c_by_tma; the _tmac kernels)
  bool block_scaled = false;  // fp8 with per-block scales (p.a_scales, p.b_scales; Sm90GemmConfig::BlockScaled)
  bool writes_transposed = false;  // may write D transposed, by TMA stores too (Sm90GemmConfig::WritesTransposed)
  // Launches grid = p.scheduler.grid_size() clusters of cluster_m * cluster_n CTAs. Pre: p complete.
  cudaError_t (*launch)(Sm90GemmParams const& p, cudaStream_t stream) = nullptr;
  // The same configuration's lean builds (Sm90Build), where it has them: the host launches one
  // instead for a call that is its case (sm90_build_choice) -- launch_lean_fused for a fused
  // epilogue (bias, activation), launch_lean_mn for an MN-major operand, launch_lean otherwise.
  cudaError_t (*launch_lean)(Sm90GemmParams const& p, cudaStream_t stream) = nullptr;
  cudaError_t (*launch_lean_fused)(Sm90GemmParams const& p, cudaStream_t stream) = nullptr;
  cudaError_t (*launch_lean_mn)(Sm90GemmParams const& p, cudaStream_t stream) = nullptr;
  cudaError_t (*attributes)(cudaFuncAttributes* attr) = nullptr;
  // How many clusters of this kernel can be resident at once on the current device.
  cudaError_t (*max_active_clusters)(int* clusters) = nullptr;
};

// clang-format off
Sm90Instance sm90_instance_bf16_128x256x64();
Sm90Instance sm90_instance_bf16_128x256x64_c2();
Sm90Instance sm90_instance_bf16_128x256x64_c2_tmac();
Sm90Instance sm90_instance_bf16_128x256x64_c1x2();
Sm90Instance sm90_instance_bf16_128x256x64_c2_s4();
Sm90Instance sm90_instance_bf16_64x16x64();
Sm90Instance sm90_instance_f16_64x16x64();
Sm90Instance sm90_instance_bf16_128x128x64_c2();
Sm90Instance sm90_instance_bf16_64x64x64_promoted();
Sm90Instance sm90_instance_f16_64x64x64_promoted();
Sm90Instance sm90_instance_bf16_128x64x64_promoted();
Sm90Instance sm90_instance_f16_128x64x64_promoted();
Sm90Instance sm90_instance_bf16_128x192x64_c2();
Sm90Instance sm90_instance_bf16_128x128x64_pingpong_c2();
Sm90Instance sm90_instance_bf16_128x64x64();
Sm90Instance sm90_instance_bf16_128x64x64_c1x2();
Sm90Instance sm90_instance_f16_128x64x64_c1x2();
Sm90Instance sm90_instance_bf16_128x64x64_promoted_c1x2();
Sm90Instance sm90_instance_f16_128x64x64_promoted_c1x2();
Sm90Instance sm90_instance_bf16_64x64x64();
Sm90Instance sm90_instance_f16_128x256x64();
Sm90Instance sm90_instance_f16_128x256x64_c2();
Sm90Instance sm90_instance_f16_128x256x64_c2_tmac();
Sm90Instance sm90_instance_f16_128x256x64_c1x2();
Sm90Instance sm90_instance_f16_128x128x64_c2();
Sm90Instance sm90_instance_f16_128x192x64_c2();
Sm90Instance sm90_instance_f16_128x64x64();
Sm90Instance sm90_instance_f16_64x64x64();
Sm90Instance sm90_instance_e4m3_128x128x128_c2();
Sm90Instance sm90_instance_e4m3_128x256x128_c2_fastacc();
Sm90Instance sm90_instance_e4m3_128x256x128_c2();
Sm90Instance sm90_instance_e4m3_128x256x128_c2_promote2();
Sm90Instance sm90_instance_e4m3_128x256x128_c2_blockscaled();
Sm90Instance sm90_instance_tf32_128x256x32_c2();
// clang-format on

// D = act(alpha * (sum over the splits of the fp32 partials) + beta * C + bias)
// (src/gemm/splitk_reduce.cu): a split-K call's fix-up, and the fused epilogue of a kernel that
// has none (one split: its fp32 result, in a workspace or in an fp32 D itself).
struct SplitKReduceParams {
  float const* partials = nullptr;  // slice s, batch b, (r, c) at s * batch * rows * cols + b * partials_batch_stride + r * partials_ld + c
  std::int64_t partials_ld = 0, partials_batch_stride = 0;  // 0: packed (cols, rows * cols)
  int splits = 1;
  std::int64_t batch = 1, rows = 0, cols = 0;
  void const* c = nullptr; std::int64_t ldc = 0, batch_stride_c = 0;  // read only when beta != 0
  void* d = nullptr; std::int64_t ldd = 0, batch_stride_d = 0;        // may be the partials (one split, fp32 D)
  float alpha = 1.0f, beta = 0.0f;
  bool transposed = false;  // D and C hold the transpose: element (r, c) at c * ld + r
  epilogue::EpilogueFusion fusion;  // on (r, c) of the partials' orientation
};
cudaError_t launch_splitk_reduce(SplitKReduceParams const& p, DType out, cudaStream_t stream);

}  // namespace tessel::kernel::detail
