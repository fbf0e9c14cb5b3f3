// tessel/schedule/dim3.hpp -- Dim3: a grid shape or a block index, without CUDA headers.
//
// Dim3 is an aggregate of three unsigned values, Dim3{x, y, z}, so host code and tests can name
// grid shapes and block indices with a plain C++ compiler. In CUDA code (nvcc) it converts to
// dim3, and a kernel builds one from blockIdx (a uint3), so it writes
//   GemmCoord tile = Swizzle::get_tile_offset(log_tile, Dim3{blockIdx.x, blockIdx.y, blockIdx.z});
// and a host adapter launches with `kernel<<<dim3(Swizzle::get_grid_shape(tiled)), ...>>>`.
// Only the kernel reads blockIdx; everything else receives the index as a Dim3.
#pragma once

#include <tessel/config.hpp>

namespace tessel {

// Dim3: (x, y, z), each defaulting to 1 as CUDA's dim3 does.
struct Dim3 {
  unsigned x = 1;
  unsigned y = 1;
  unsigned z = 1;

  // x * y * z as a 64-bit count (a grid's number of blocks).
  TESSEL_HOST_DEVICE constexpr long long volume() const {
    return static_cast<long long>(x) * static_cast<long long>(y) * static_cast<long long>(z);
  }

  TESSEL_HOST_DEVICE friend constexpr bool operator==(Dim3 const& a, Dim3 const& b) {
    return a.x == b.x && a.y == b.y && a.z == b.z;
  }

#if defined(__CUDACC__)
  TESSEL_HOST_DEVICE operator dim3() const { return dim3(x, y, z); }
#endif
};

// The block index that CUDA gives the `linear`-th block of `grid`, counting x fastest, then y,
// then z -- the order in which the hardware dispatches blocks.
//   Pre: 0 <= linear < grid.volume().
//   e.g.  block_index_at(Dim3{8,2,1}, 9) == Dim3{1,1,0}
TESSEL_HOST_DEVICE constexpr Dim3 block_index_at(Dim3 grid, long long linear) {
  long long const xy = static_cast<long long>(grid.x) * grid.y;
  return Dim3{static_cast<unsigned>(linear % grid.x), static_cast<unsigned>((linear % xy) / grid.x),
              static_cast<unsigned>(linear / xy)};
}

// True when `grid` is a launchable CUDA grid: every extent >= 1, x <= 2^31-1, y and z <= 65535.
// A host adapter checks this before launching a swizzled grid (a swizzle multiplies grid.x).
TESSEL_HOST_DEVICE constexpr bool fits_cuda_grid(Dim3 grid) {
  return grid.x >= 1 && grid.y >= 1 && grid.z >= 1 && grid.x <= 2147483647u && grid.y <= 65535u &&
         grid.z <= 65535u;
}

}  // namespace tessel
