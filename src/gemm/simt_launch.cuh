// src/gemm/simt_launch.cuh -- launching the SIMT GEMM kernels (used by the per-dtype TUs only).
#pragma once

#include "simt_instances.hpp"

#include <tessel/gemm/kernel/simt_gemm.hpp>
#include <tessel/gemm/kernel/simt_gemm_cp_async.hpp>

#include <algorithm>
#include <type_traits>

namespace tessel::kernel::detail {

using SimtTile128 = SimtTile<128, 128, 8, /*WarpsM=*/4, /*WarpsN=*/2, /*LanesM=*/4, /*MinBlocksPerSM=*/2>;
using SimtTile64 = SimtTile<64, 64, 8, /*WarpsM=*/2, /*WarpsN=*/1, /*LanesM=*/4, /*MinBlocksPerSM=*/4>;
inline constexpr int kCpAsyncStages = 3;

template <class Tile>
dim3 simt_grid(SimtGemmParams& p) {
  p.tiles_m = static_cast<int>((p.m + Tile::BM - 1) / Tile::BM);
  p.tiles_n = static_cast<int>((p.n + Tile::BN - 1) / Tile::BN);
  p.raster_order = choose_raster_order(p.tiles_m, p.tiles_n);
  return dim3(static_cast<unsigned>(static_cast<long long>(p.tiles_m) * p.tiles_n),
              static_cast<unsigned>(std::min<std::int64_t>(p.batch, 65535)));
}

// Pre: the adapter checked that ceil(M/BM) * ceil(N/BN) < 2^31 and K < 2^31 * BK.
template <class Tile, class TIn, class TOut>
cudaError_t simt_launch(SimtGemmParams p, cudaStream_t stream) {
  dim3 const grid = simt_grid<Tile>(p);
  if (p.a_k_major) {
    if (p.b_k_major) simt_gemm_kernel<Tile, TIn, TOut, true, true><<<grid, Tile::kThreads, 0, stream>>>(p);
    else simt_gemm_kernel<Tile, TIn, TOut, true, false><<<grid, Tile::kThreads, 0, stream>>>(p);
  } else {
    if (p.b_k_major) simt_gemm_kernel<Tile, TIn, TOut, false, true><<<grid, Tile::kThreads, 0, stream>>>(p);
    else simt_gemm_kernel<Tile, TIn, TOut, false, false><<<grid, Tile::kThreads, 0, stream>>>(p);
  }
  return cudaGetLastError();
}

template <class Tile, class TIn, class TOut>
cudaError_t simt_attributes(cudaFuncAttributes* attr) {
  return cudaFuncGetAttributes(attr, simt_gemm_kernel<Tile, TIn, TOut, true, true>);
}

template <class Tile>
cudaError_t simt_cp_async_launch(SimtGemmParams p, cudaStream_t stream) {
  dim3 const grid = simt_grid<Tile>(p);
  constexpr int S = kCpAsyncStages;
  if (p.a_k_major) {
    if (p.b_k_major) simt_gemm_cp_async_kernel<Tile, S, true, true><<<grid, Tile::kThreads, 0, stream>>>(p);
    else simt_gemm_cp_async_kernel<Tile, S, true, false><<<grid, Tile::kThreads, 0, stream>>>(p);
  } else {
    if (p.b_k_major) simt_gemm_cp_async_kernel<Tile, S, false, true><<<grid, Tile::kThreads, 0, stream>>>(p);
    else simt_gemm_cp_async_kernel<Tile, S, false, false><<<grid, Tile::kThreads, 0, stream>>>(p);
  }
  return cudaGetLastError();
}

template <class Tile>
cudaError_t simt_cp_async_attributes(cudaFuncAttributes* attr) {
  return cudaFuncGetAttributes(attr, simt_gemm_cp_async_kernel<Tile, kCpAsyncStages, true, true>);
}

template <class TIn, class TOut>
SimtInstance make_simt_instance(SimtTileShape tile) {
  switch (tile) {
    case SimtTileShape::t128x128x8:
      return {SimtTile128::BM, SimtTile128::BN, simt_launch<SimtTile128, TIn, TOut>, simt_attributes<SimtTile128, TIn, TOut>};
    case SimtTileShape::t64x64x8:
      return {SimtTile64::BM, SimtTile64::BN, simt_launch<SimtTile64, TIn, TOut>, simt_attributes<SimtTile64, TIn, TOut>};
    case SimtTileShape::t128x128x8_cp_async:
      if constexpr (std::is_same_v<TIn, float> && std::is_same_v<TOut, float>)
        return {SimtTile128::BM, SimtTile128::BN, simt_cp_async_launch<SimtTile128>, simt_cp_async_attributes<SimtTile128>};
      return {};
  }
  return {};
}

}  // namespace tessel::kernel::detail
