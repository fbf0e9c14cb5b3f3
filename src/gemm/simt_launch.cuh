// src/gemm/simt_launch.cuh -- launching the SIMT GEMM kernels (used by the per-configuration TUs only).
#pragma once

#include "simt_instances.hpp"

#include <tessel/gemm/kernel/simt_gemm.hpp>
#include <tessel/gemm/kernel/simt_gemm_cp_async.hpp>
#include <tessel/gemm/kernel/simt_gemm_pipelined.hpp>

#include <algorithm>

namespace tessel::kernel::detail {

// The compiled configurations (SimtTileShape): CTA tile, warp grid, lanes along M, CTAs per SM.
// simt_128x128x8_128t: 4 warps of 64x64; a thread owns 16x8 outputs (4x2 sub-tiles of 4x4).
using SimtTile128x128x8_128t = SimtTile<128, 128, 8, /*WarpsM=*/2, /*WarpsN=*/2, /*LanesM=*/4, /*MinBlocksPerSM=*/2>;
// simt_64x64x8: 2 warps of 32x64; 8x8 outputs per thread.
using SimtTile64x64x8 = SimtTile<64, 64, 8, /*WarpsM=*/2, /*WarpsN=*/1, /*LanesM=*/4, /*MinBlocksPerSM=*/4>;
// simt_cp_async_128x128x8: 8 warps of 32x64; 8x8 outputs per thread; 3 stages.
using SimtTile128x128x8 = SimtTile<128, 128, 8, /*WarpsM=*/4, /*WarpsN=*/2, /*LanesM=*/4, /*MinBlocksPerSM=*/2>;

// The kernel families, each naming the __global__ function of one instance per operand order
// (`kernel<AKMajor, BKMajor>`).
template <class Tile, class TIn, class TOut>
struct SimtPipelinedKernel {  // simt_gemm_pipelined.hpp: register-staged, K-contiguous operands transposed
  template <bool AK, bool BK>
  static constexpr auto kernel = &simt_gemm_pipelined_kernel<Tile, SimtRegisterStaged, false, TIn, TOut, AK, BK>;
};
template <class Tile, class TIn, class TOut>
struct SimtDoubleBufferedKernel {  // simt_gemm.hpp: tutorial rung 08's mainloop
  template <bool AK, bool BK>
  static constexpr auto kernel = &simt_gemm_kernel<Tile, TIn, TOut, AK, BK>;
};
template <class Tile, int Stages>
struct SimtCpAsyncKernel {  // simt_gemm_cp_async.hpp: fp32 only
  template <bool AK, bool BK>
  static constexpr auto kernel = &simt_gemm_cp_async_kernel<Tile, Stages, AK, BK>;
};

// One CTA per tile of D, batches along y. Pre: the adapter checked that ceil(M/BM) * ceil(N/BN)
// < 2^31 and K < 2^31 * BK.
template <class Kernel, class Tile>
cudaError_t simt_launch(SimtGemmParams p, cudaStream_t stream) {
  p.tiles_m = static_cast<int>((p.m + Tile::BM - 1) / Tile::BM);
  p.tiles_n = static_cast<int>((p.n + Tile::BN - 1) / Tile::BN);
  p.raster_order = choose_raster_order(p.tiles_m, p.tiles_n);
  dim3 const grid(static_cast<unsigned>(static_cast<long long>(p.tiles_m) * p.tiles_n),
                  static_cast<unsigned>(std::min<std::int64_t>(p.batch, 65535)));
  if (p.a_k_major) {
    if (p.b_k_major) Kernel::template kernel<true, true><<<grid, Tile::kThreads, 0, stream>>>(p);
    else Kernel::template kernel<true, false><<<grid, Tile::kThreads, 0, stream>>>(p);
  } else {
    if (p.b_k_major) Kernel::template kernel<false, true><<<grid, Tile::kThreads, 0, stream>>>(p);
    else Kernel::template kernel<false, false><<<grid, Tile::kThreads, 0, stream>>>(p);
  }
  return cudaGetLastError();
}

template <class Kernel>
cudaError_t simt_attributes(cudaFuncAttributes* attr) {
  return cudaFuncGetAttributes(attr, Kernel::template kernel<true, true>);
}

template <class Kernel, class Tile>
SimtInstance make_simt_instance() {
  return {Tile::BM, Tile::BN, simt_launch<Kernel, Tile>, simt_attributes<Kernel>};
}

}  // namespace tessel::kernel::detail
