// tessel/schedule/batched_swizzle.hpp -- GemmBatchedIdentityThreadblockSwizzle: one grid layer per batch.
//
// A batched GEMM (batch_count independent problems of the same size) launches
//   grid  = (tiles_m, tiles_n, batch_count)
//   block (x, y, z) -> tile (m, n, k) = (x, y, z)        k is the batch index
// The mapping is the identity; no blocks are no-ops.
//   e.g. get_tiled_shape(GemmCoord(256, 256, 64), GemmCoord(128, 128, 32), 3) == GemmCoord(2, 2, 3)
#pragma once

#include <tessel/config.hpp>
#include <tessel/schedule/dim3.hpp>
#include <tessel/core/gemm_coord.hpp>
#include <tessel/schedule/identity_swizzle.hpp>

namespace tessel {

// GemmBatchedIdentityThreadblockSwizzle: block (x, y, z) computes tile (x, y) of batch z.
struct GemmBatchedIdentityThreadblockSwizzle {
  // The problem in tiles: (ceil(M / tile_m), ceil(N / tile_n), batch_count).
  //   Pre: problem >= 0, tile >= 1, batch_count >= 1; checked on the host.
  TESSEL_HOST_DEVICE static constexpr GemmCoord get_tiled_shape(GemmCoord problem_size, GemmCoord tile_size,
                                                                int batch_count) {
    return detail::tiled_shape_of("GemmBatchedIdentityThreadblockSwizzle::get_tiled_shape", problem_size,
                                  tile_size, batch_count);
  }

  // The launch grid: (tiles_m, tiles_n, batch_count).
  TESSEL_HOST_DEVICE static constexpr Dim3 get_grid_shape(GemmCoord tiled_shape) {
    return Dim3{static_cast<unsigned>(tiled_shape.m()), static_cast<unsigned>(tiled_shape.n()),
                static_cast<unsigned>(tiled_shape.k())};
  }

  // Always 0: this swizzle has no width.
  TESSEL_HOST_DEVICE static constexpr int get_log_tile(GemmCoord) { return 0; }

  // Block (x, y, z) -> tile (x, y, z). `log_tile` is ignored.
  TESSEL_HOST_DEVICE static constexpr GemmCoord get_tile_offset(int log_tile, Dim3 block_idx) {
    (void)log_tile;
    return GemmCoord(block_idx.x, block_idx.y, block_idx.z);
  }

  // The batch a block works on: its z index.
  TESSEL_HOST_DEVICE static constexpr long long get_batch_idx(Dim3 block_idx) { return block_idx.z; }
};

}  // namespace tessel
