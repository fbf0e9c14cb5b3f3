// tessel/core/gemm_coord.hpp -- GemmCoord: an (m, n, k) triple.
//
// One type for four roles, as in CUTLASS: a problem size in elements (M, N, K), a tile size in
// elements, a tiled shape (tiles along M, tiles along N, and k = split-K slices or batch count),
// and a tile offset (which tile, which slice). Extents are 64-bit so that problems with more than
// 2^31 rows (implicit-GEMM convolutions reach that: N*P*Q) are represented exactly.
//   e.g.  GemmCoord(4096, 4096, 512).m() == 4096
#pragma once

#include <tessel/config.hpp>

#include <cstdint>

namespace tessel {

// GemmCoord: the triple (m, n, k). Any values are representable; each user states its own
// preconditions (a tile extent must be >= 1, a tiled shape >= 0, ...).
class GemmCoord {
 public:
  constexpr GemmCoord() = default;
  TESSEL_HOST_DEVICE constexpr GemmCoord(long long m, long long n, long long k) : m_(m), n_(n), k_(k) {}

  TESSEL_HOST_DEVICE constexpr long long m() const { return m_; }
  TESSEL_HOST_DEVICE constexpr long long n() const { return n_; }
  TESSEL_HOST_DEVICE constexpr long long k() const { return k_; }

  // m * n * k: the number of elements of a problem, of tiles-times-slices of a tiled shape.
  TESSEL_HOST_DEVICE constexpr long long product() const { return m_ * n_ * k_; }

  TESSEL_HOST_DEVICE friend constexpr bool operator==(GemmCoord const& a, GemmCoord const& b) {
    return a.m_ == b.m_ && a.n_ == b.n_ && a.k_ == b.k_;
  }

 private:
  long long m_ = 0;
  long long n_ = 0;
  long long k_ = 0;
};

// The predicate every kernel uses to recognise a no-op block: true when `tile_offset` names a
// tile of `tiled_shape` (0 <= m < tiles_m, 0 <= n < tiles_n, 0 <= k < slices). A block whose
// swizzle returns an offset outside the tiled shape (the padding of a swizzled grid) does nothing.
//   e.g.  tile_in_bounds(GemmCoord(4,3,1), GemmCoord(1,3,0)) == false   (n == 3 is past the edge)
TESSEL_HOST_DEVICE constexpr bool tile_in_bounds(GemmCoord tiled_shape, GemmCoord tile_offset) {
  return tile_offset.m() >= 0 && tile_offset.m() < tiled_shape.m() &&  //
         tile_offset.n() >= 0 && tile_offset.n() < tiled_shape.n() &&  //
         tile_offset.k() >= 0 && tile_offset.k() < tiled_shape.k();
}

namespace detail {
// ceil(a / b). Pre: a >= 0, b >= 1.
TESSEL_HOST_DEVICE constexpr long long ceil_div_ll(long long a, long long b) { return (a + b - 1) / b; }
// floor(a / b) for b >= 1 and any a (C++'s / truncates toward zero).
TESSEL_HOST_DEVICE constexpr std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
}  // namespace detail

}  // namespace tessel
