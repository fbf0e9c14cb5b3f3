// tessel/schedule/split_k.hpp -- split-K: one output tile's K loop cut into slices run by separate blocks.
//
// A split-K GEMM launches tiles_m x tiles_n x S blocks; the block at z = s computes the partial
// product of its tile over slice s of the k-iterations (k-iteration = one tile_k-wide step of K).
// The slices are then combined in a fixed order, so the result does not depend on timing:
//
//   serial   (GemmSplitKIdentityThreadblockSwizzle<N>; the identity swizzle, grid z = S)
//            slice s waits until slice s-1 has written its sum into D, adds its own partial and
//            writes D back; slice S-1 applies the epilogue. Order: 0, 1, ..., S-1. No workspace.
//   parallel (GemmSplitKHorizontalThreadblockSwizzle; the horizontal swizzle, grid z = S)
//            slice s writes its partial into workspace slot s (an M x N buffer); a reduction
//            then sums slots 0, 1, ..., S-1 in that order and applies the epilogue.
//
// SplitKPartition cuts the k-iterations into S contiguous, balanced ranges: slice s gets
// [floor(s*I/S), floor((s+1)*I/S)), so sizes differ by at most one and a slice is empty only when
// S > I. Empty slices still take part in the fix-up (they contribute zeros).
//   e.g. K = 1000, tile_k = 64 -> I = 16 iterations; S = 3 -> iterations [0,5) [5,10) [10,16),
//        elements [0,320) [320,640) [640,1000).
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/gemm_coord.hpp>
#include <tessel/schedule/horizontal_swizzle.hpp>
#include <tessel/schedule/identity_swizzle.hpp>
#include <tessel/schedule/schedule_error.hpp>

namespace tessel {

// Serial split-K's swizzle: the identity swizzle, with tiled_shape.k() = S slices and the
// block's tile offset k() = its slice.
template <int N = 1>
struct GemmSplitKIdentityThreadblockSwizzle : GemmIdentityThreadblockSwizzle<N> {};

// Parallel split-K's swizzle: the horizontal swizzle, with tiled_shape.k() = S slices and the
// block's tile offset k() = its slice (= its workspace slot).
struct GemmSplitKHorizontalThreadblockSwizzle : GemmHorizontalThreadblockSwizzle {};

// How the slices of one tile are combined (file comment).
enum class SplitKMode { kSerial, kParallel };

// KRange: the half-open range [begin, end).
struct KRange {
  long long begin = 0;
  long long end = 0;
  TESSEL_HOST_DEVICE constexpr long long size() const { return end - begin; }
  TESSEL_HOST_DEVICE friend constexpr bool operator==(KRange const& a, KRange const& b) {
    return a.begin == b.begin && a.end == b.end;
  }
};

// SplitKPartition: the K extent of a problem cut into `slices` contiguous ranges.
struct SplitKPartition {
  long long problem_k = 0;    // K, in elements
  long long tile_k = 1;       // elements per k-iteration
  long long iterations = 0;   // ceil(K / tile_k)
  int slices = 1;             // S

  // Pre: problem_k >= 0, tile_k >= 1, slices >= 1; checked on the host (ScheduleError).
  static constexpr SplitKPartition make(long long problem_k, long long tile_k, int slices) {
    detail::schedule_require(problem_k >= 0, "SplitKPartition: K = ", problem_k, " must not be negative");
    detail::schedule_require(tile_k >= 1, "SplitKPartition: tile_k = ", tile_k, " must be >= 1");
    detail::schedule_require(slices >= 1, "SplitKPartition: slices = ", slices,
                             " must be >= 1 (1 means no split)");
    return SplitKPartition{problem_k, tile_k, detail::ceil_div_ll(problem_k, tile_k), slices};
  }

  // The k-iterations of slice s: [floor(s*I/S), floor((s+1)*I/S)). Pre: 0 <= s < S.
  // Post: the ranges of s = 0..S-1 tile [0, I) in order, each of size floor(I/S) or ceil(I/S).
  TESSEL_HOST_DEVICE constexpr KRange iteration_range(int s) const {
    return KRange{s * iterations / slices, (s + 1LL) * iterations / slices};
  }

  // The elements of K that slice s reduces over: its iterations times tile_k, clipped to K.
  TESSEL_HOST_DEVICE constexpr KRange element_range(int s) const {
    KRange const it = iteration_range(s);
    long long const end = it.end * tile_k;
    return KRange{it.begin * tile_k, end < problem_k ? end : problem_k};
  }

  // Serial fix-up: the slice whose sum slice s waits for before adding its own (-1: none, s = 0).
  TESSEL_HOST_DEVICE constexpr int serial_predecessor(int s) const { return s - 1; }

  // Serial fix-up: true for the slice that applies the epilogue (the last one, S-1).
  TESSEL_HOST_DEVICE constexpr bool is_final_slice(int s) const { return s == slices - 1; }

  // Parallel split-K: the workspace slot slice s writes (its own index); the reduction sums
  // slots 0..S-1 in increasing order.
  TESSEL_HOST_DEVICE constexpr int workspace_slot(int s) const { return s; }
};

}  // namespace tessel
