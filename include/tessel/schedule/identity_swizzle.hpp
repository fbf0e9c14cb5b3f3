// tessel/schedule/identity_swizzle.hpp -- GemmIdentityThreadblockSwizzle<N>: block index -> tile.
//
// The default threadblock swizzle of a CUTLASS 2.x GEMM, with seed 000's behaviour, as pure
// functions: the kernel passes its block index in instead of the swizzle reading it.
//
// A problem of tiles_m x tiles_n tiles (x split-K slices) launches a grid that is 2^L times
// taller in x and 2^L times shorter in y (L = log tile, chosen by get_log_tile from N):
//   grid  = (tiles_m * 2^L, ceil(tiles_n / 2^L), slices)
//   block (x, y, z) -> tile (m, n, k) = (x >> L, (y << L) + (x mod 2^L), z)
// so the 2^L blocks with consecutive x work on 2^L neighbouring tiles of one tile row, and the
// blocks that run together reuse B column panels (and A row panels) in L2. When tiles_n is not a
// multiple of 2^L the last grid row has blocks past the edge; tile_in_bounds() (gemm_coord.hpp)
// is the predicate with which a kernel recognises them as no-ops.
//
// Seed 000's example, a 4x4-tile problem (tile (m,n) <- block (x,y)):
//   N = 1: grid (4,4,1), L = 0, tile (m,n) <- block (m,n)                (the identity)
//   N = 2: grid (8,2,1), L = 1, tile (m,n) <- block (2m + n mod 2, n / 2)
//          block row y = 0 covers tile columns 0,1; row y = 1 covers columns 2,3.
#pragma once

#include <tessel/config.hpp>
#include <tessel/schedule/dim3.hpp>
#include <tessel/core/gemm_coord.hpp>
#include <tessel/schedule/schedule_error.hpp>

#include <concepts>

namespace tessel {

namespace detail {

// The problem in units of tiles: (ceil(M / tile_m), ceil(N / tile_n), slices).
//   Pre: problem extents >= 0; tile extents >= 1; slices >= 1 (checked on the host).
TESSEL_HOST_DEVICE constexpr GemmCoord tiled_shape_of(char const* who, GemmCoord problem, GemmCoord tile,
                                                      long long slices) {
  schedule_require(problem.m() >= 0 && problem.n() >= 0 && problem.k() >= 0, who, ": problem size (",
                   problem.m(), ",", problem.n(), ",", problem.k(), ") must not be negative");
  schedule_require(tile.m() >= 1 && tile.n() >= 1 && tile.k() >= 1, who, ": tile size (", tile.m(), ",",
                   tile.n(), ",", tile.k(), ") must be at least 1 in every extent");
  schedule_require(slices >= 1, who, ": split-K slices / batch count = ", slices,
                   " must be >= 1 (use 1 for no split)");
  return GemmCoord(detail::ceil_div_ll(problem.m(), tile.m()), detail::ceil_div_ll(problem.n(), tile.n()), slices);
}

}  // namespace detail

// The grid of the identity swizzle for an explicit log tile L: (tiles_m * 2^L, ceil(tiles_n / 2^L),
// slices). get_grid_shape is this with L = get_log_tile(tiled_shape); a caller that fixes L itself
// (the CLI's --log-tile) uses it directly. Pre: 0 <= log_tile < 31.
TESSEL_HOST_DEVICE constexpr Dim3 swizzled_grid_shape(GemmCoord tiled_shape, int log_tile) {
  long long const tile = 1LL << log_tile;
  return Dim3{static_cast<unsigned>(tiled_shape.m() * tile),
              static_cast<unsigned>(detail::ceil_div_ll(tiled_shape.n(), tile)),
              static_cast<unsigned>(tiled_shape.k())};
}

// GemmIdentityThreadblockSwizzle<N>: N is the widest swizzle (in tiles) the swizzle may choose;
// get_log_tile picks 2^L <= N from the tiled shape. N = 1 is the plain identity.
template <int N = 1>
struct GemmIdentityThreadblockSwizzle {
  static_assert(N >= 1,
                "GemmIdentityThreadblockSwizzle<N>: N is the largest swizzle width in tiles and must be at "
                "least 1; use N = 1 for no swizzling");

  static constexpr int kMaxSwizzle = N;

  // The problem in tiles: (ceil(M / tile_m), ceil(N / tile_n), split_k_slices).
  //   Pre: problem >= 0, tile >= 1, split_k_slices >= 1; checked on the host (ScheduleError).
  //   e.g. get_tiled_shape(GemmCoord(1000, 512, 64), GemmCoord(128, 128, 32), 1) == GemmCoord(8, 4, 1)
  TESSEL_HOST_DEVICE static constexpr GemmCoord get_tiled_shape(GemmCoord problem_size, GemmCoord tile_size,
                                                                int split_k_slices) {
    return detail::tiled_shape_of("GemmIdentityThreadblockSwizzle::get_tiled_shape", problem_size, tile_size,
                                  split_k_slices);
  }

  // The tiled shape of an implicit-GEMM convolution pass: a conv::Operator and a
  // conv::Conv2dProblemSize or Conv3dProblemSize, through the GEMM extent that
  // conv::implicit_gemm_problem_size gives them (found beside those types: this header includes
  // no convolution header, so schedule/ does not depend on conv/).
  //   e.g. fprop, 1x56x56x64 -> 128 3x3 pad 1 stride 2, 128x128x32 tiles: the GEMM (784, 128, 576),
  //        tiled (7, 1, 1)
  template <class Operator, class ConvProblem>
    requires requires(Operator op, ConvProblem const& p) {
      { implicit_gemm_problem_size(op, p) } -> std::convertible_to<GemmCoord>;
    }
  TESSEL_HOST_DEVICE static constexpr GemmCoord get_tiled_shape(Operator conv_operator, ConvProblem const& problem_size,
                                                                GemmCoord tile_size, int split_k_slices) {
    return get_tiled_shape(implicit_gemm_problem_size(conv_operator, problem_size), tile_size, split_k_slices);
  }

  // The swizzle width's log, L, from the number of tile columns n (so that the swizzle does not
  // leave many no-op blocks in the last grid row):
  //   N >= 8 and n >= 6 -> 3;  N >= 4 and n >= 3 -> 2;  N >= 2 and n >= 2 -> 1;  else 0.
  TESSEL_HOST_DEVICE static constexpr int get_log_tile(GemmCoord tiled_shape) {
    long long const n = tiled_shape.n();
    if (N >= 8 && n >= 6) return 3;
    if (N >= 4 && n >= 3) return 2;
    if (N >= 2 && n >= 2) return 1;
    return 0;
  }

  // The launch grid: (tiles_m * 2^L, ceil(tiles_n / 2^L), slices), L = get_log_tile(tiled_shape).
  //   e.g. get_grid_shape(GemmCoord(4, 4, 1)) == Dim3{4,4,1} for N = 1 and Dim3{8,2,1} for N = 2.
  // A host adapter checks fits_cuda_grid() on the result before launching.
  TESSEL_HOST_DEVICE static constexpr Dim3 get_grid_shape(GemmCoord tiled_shape) {
    return swizzled_grid_shape(tiled_shape, get_log_tile(tiled_shape));
  }

  // The tile of block `block_idx` in a grid from get_grid_shape (L = log_tile):
  //   (x >> L, (y << L) + (x mod 2^L), z).
  //   Pre: 0 <= log_tile < 31. Post: over the whole grid, each tile of the tiled shape comes out
  //   exactly once; the other blocks get offsets outside it (tile_in_bounds() is false).
  TESSEL_HOST_DEVICE static constexpr GemmCoord get_tile_offset(int log_tile, Dim3 block_idx) {
    long long const x = block_idx.x;
    long long const y = block_idx.y;
    return GemmCoord(x >> log_tile, (y << log_tile) + (x & ((1LL << log_tile) - 1)), block_idx.z);
  }

  // The tile of block `block_idx`, with the swizzle width N itself rather than a log tile
  // (seed 000's second overload, kept with its behaviour):
  //   tiles_m < N or tiles_n < N:  (x, y, z)                       (no swizzle)
  //   otherwise:                   (x / N, y * N + x mod N, z)
  // Caution, as in CUTLASS: this agrees with get_grid_shape only when get_grid_shape's width 2^L
  // equals N here, i.e. (tiles_m >= N and tiles_n >= N and 2^get_log_tile == N) or (the identity
  // branch is taken and get_log_tile == 0). Kernels launched with get_grid_shape should use the
  // log-tile overload; tests/host/schedule_identity_test.cpp pins both the agreement and the gap.
  TESSEL_HOST_DEVICE static constexpr GemmCoord get_tile_offset(GemmCoord tiled_shape, Dim3 block_idx) {
    long long const x = block_idx.x;
    long long const y = block_idx.y;
    if (tiled_shape.m() < N || tiled_shape.n() < N) return GemmCoord(x, y, block_idx.z);
    return GemmCoord(x / N, y * N + x % N, block_idx.z);
  }
};

}  // namespace tessel
