// tessel/gemm/device/sm80_skinny_policy.hpp -- when the sm_80 skinny GEMM runs, and how it cuts a
// problem (docs/skinny_gemm.md). Plain C++: the host adapter and the host tests use it.
//
// A GEMM with one of M, N at most 64 and a long operand of megabytes is memory-bound: each
// element of the long operand meets at most 64 rows of the small one (<= 128 flops per 2 bytes),
// so it runs at the speed the long operand streams from HBM. The skinny kernel
// (tessel/gemm/kernel/sm80_skinny_gemm.hpp) puts the small side on the MMA's M and streams the
// long operand in 128-column strips, K split across CTAs until every SM holds two of them.
//   sm80_skinny_shape      which canonical side is small (a column-major D swaps M and N), and
//                          the kernel's M tile: the smallest of 16, 32, 64 that covers it
//   sm80_skinny_pays       the heuristic's rule: small side <= 64 and the long operand (all
//                          batches) >= 8 MiB; smaller problems keep the multistage kernels
//   sm80_skinny_splits     the split-K slices: choose_split_k_waves over the output tiles
#pragma once

#include <tessel/schedule/split_k_waves.hpp>

#include <cstdint>

namespace tessel {

// The largest small side the heuristic sends to the skinny kernel, and the long operand's size
// from which it pays.
inline constexpr std::int64_t kSm80SkinnyMaxSmall = 64;
inline constexpr std::int64_t kSm80SkinnyMinLongBytes = std::int64_t(8) << 20;

struct Sm80SkinnyShape {
  bool swap;                  // the canonical N is the small side: the kernel's A is the canonical B
  std::int64_t small, large;  // the kernel's M and N
  int tile_m;                 // 16, 32 or 64
};

// m, n: the canonical (row-major D) extents.
constexpr Sm80SkinnyShape sm80_skinny_shape(std::int64_t m, std::int64_t n) {
  bool const swap = n < m;
  std::int64_t const small = swap ? n : m, large = swap ? m : n;
  return {swap, small, large, small <= 16 ? 16 : small <= 32 ? 32 : 64};
}

constexpr bool sm80_skinny_pays(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, int element_bytes) {
  Sm80SkinnyShape const s = sm80_skinny_shape(m, n);
  if (s.small > kSm80SkinnyMaxSmall || s.small == 0) return false;
  // bytes of the long operand, saturating instead of overflowing
  double const bytes = double(s.large) * double(k) * double(batch) * double(element_bytes);
  return bytes >= double(kSm80SkinnyMinLongBytes);
}

// Split-K slices for `tiles` output tiles (m tiles x strips x batch) of k_tiles k-tiles each, on
// `slots` concurrent CTAs (SMs x CTAs per SM), with a pipeline of `stages`: one wave-balanced
// choice (schedule/split_k_waves.hpp), each slice at least 4 k-tiles, at most 512 slices.
constexpr int sm80_skinny_splits(std::int64_t tiles, std::int64_t k_tiles, std::int64_t slots, int stages) {
  return choose_split_k_waves(tiles, k_tiles, slots, /*overhead=*/stages, /*min_iterations=*/4, /*max_slices=*/512);
}

}  // namespace tessel
