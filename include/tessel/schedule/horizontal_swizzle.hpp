// tessel/schedule/horizontal_swizzle.hpp -- GemmHorizontalThreadblockSwizzle: N fastest.
//
// The grid is the tiled shape transposed, so consecutive blocks (x fastest) walk along a tile
// row, across N:
//   grid  = (tiles_n, tiles_m, slices)
//   block (x, y, z) -> tile (m, n, k) = (y, x, z)
// Every block maps to a tile; there are no no-op blocks. A wave of W concurrent blocks touches
// about W / tiles_n A row panels and min(W, tiles_n) B column panels.
//   e.g. tiles 4x3: block (2, 1, 0) -> tile (1, 2, 0)
#pragma once

#include <tessel/config.hpp>
#include <tessel/schedule/dim3.hpp>
#include <tessel/core/gemm_coord.hpp>
#include <tessel/schedule/identity_swizzle.hpp>

namespace tessel {

// GemmHorizontalThreadblockSwizzle: block (x, y, z) computes tile (y, x, z).
struct GemmHorizontalThreadblockSwizzle {
  // The problem in tiles: (ceil(M / tile_m), ceil(N / tile_n), split_k_slices). Pre as identity.
  TESSEL_HOST_DEVICE static constexpr GemmCoord get_tiled_shape(GemmCoord problem_size, GemmCoord tile_size,
                                                                int split_k_slices) {
    return detail::tiled_shape_of("GemmHorizontalThreadblockSwizzle::get_tiled_shape", problem_size, tile_size,
                                  split_k_slices);
  }

  // The launch grid: (tiles_n, tiles_m, slices).
  TESSEL_HOST_DEVICE static constexpr Dim3 get_grid_shape(GemmCoord tiled_shape) {
    return Dim3{static_cast<unsigned>(tiled_shape.n()), static_cast<unsigned>(tiled_shape.m()),
                static_cast<unsigned>(tiled_shape.k())};
  }

  // Always 0: this swizzle has no width.
  TESSEL_HOST_DEVICE static constexpr int get_log_tile(GemmCoord) { return 0; }

  // Block (x, y, z) -> tile (y, x, z). `log_tile` is accepted for a uniform kernel interface and
  // ignored. Post: a bijection from the grid of get_grid_shape onto the tiled shape.
  TESSEL_HOST_DEVICE static constexpr GemmCoord get_tile_offset(int log_tile, Dim3 block_idx) {
    (void)log_tile;
    return GemmCoord(block_idx.y, block_idx.x, block_idx.z);
  }
};

}  // namespace tessel
