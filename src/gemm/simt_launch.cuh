// src/gemm/simt_launch.cuh -- launching one instance of the SIMT GEMM kernel (used by the
// per-dtype TUs only).
#pragma once

#include "simt_instances.hpp"

#include <tessel/gemm/kernel/simt_gemm.hpp>

#include <algorithm>

namespace tessel::kernel::detail {

using SimtTile128 = SimtTile<128, 128, 8, /*WarpsM=*/4, /*WarpsN=*/2, /*LanesM=*/4, /*MinBlocksPerSM=*/2>;
using SimtTile64 = SimtTile<64, 64, 8, /*WarpsM=*/2, /*WarpsN=*/1, /*LanesM=*/4, /*MinBlocksPerSM=*/4>;

// Pre: the adapter checked that ceil(M/BM) * ceil(N/BN) < 2^31 (one launch's CTAs along x).
template <class Tile, class TIn, class TOut>
cudaError_t simt_launch(SimtGemmParams p, cudaStream_t stream) {
  p.tiles_m = static_cast<int>((p.m + Tile::BM - 1) / Tile::BM);
  p.tiles_n = static_cast<int>((p.n + Tile::BN - 1) / Tile::BN);
  p.raster_order = choose_raster_order(p.tiles_m, p.tiles_n);
  dim3 const grid(static_cast<unsigned>(static_cast<long long>(p.tiles_m) * p.tiles_n),
                  static_cast<unsigned>(std::min<std::int64_t>(p.batch, 65535)));
  simt_gemm_kernel<Tile, TIn, TOut><<<grid, Tile::kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

template <class Tile, class TIn, class TOut>
cudaError_t simt_attributes(cudaFuncAttributes* attr) {
  return cudaFuncGetAttributes(attr, simt_gemm_kernel<Tile, TIn, TOut>);
}

template <class TIn, class TOut>
SimtInstance make_simt_instance(SimtTileShape tile) {
  if (tile == SimtTileShape::t128x128x8)
    return {SimtTile128::BM, SimtTile128::BN, simt_launch<SimtTile128, TIn, TOut>, simt_attributes<SimtTile128, TIn, TOut>};
  return {SimtTile64::BM, SimtTile64::BN, simt_launch<SimtTile64, TIn, TOut>, simt_attributes<SimtTile64, TIn, TOut>};
}

}  // namespace tessel::kernel::detail
