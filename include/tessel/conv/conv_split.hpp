// tessel/conv/conv_split.hpp -- how many slices a split reduction cuts GEMM-K into: wgrad's
// implicit GEMM (M x N = k/g x t*r*s*c/g, K = n*z*p*q) has few output tiles and a very long sum,
// so one CTA per tile leaves most SMs idle (3x3 C64 56x56 N128: 5 tiles of 128x128 for 132 SMs).
// Each slice sums a contiguous range of k-tiles into fp32 partials; a second kernel adds the
// slices in slice order (deterministic: no atomics, the same bits run to run on one GPU).
//
// Rule: no split when the tiles fill the SMs once (a split then only adds partial-sum traffic);
// otherwise enough slices for kConvSplitCtasPerSm CTAs per SM, each slice at least
// kConvSplitMinKTiles k-tiles long, at most kConvSplitMaxSlices slices; the k-tiles are then
// dealt out evenly (ceil) and slices that would be empty dropped.
//   e.g. wgrad 3x3 C64->64 56x56 N128 on 132 SMs: 5 tiles, 12544 k-tiles of 32:
//        wanted ceil(264 / 5) = 53 (<= 12544 / 16 = 784, <= 128) -> 53 slices of 237 k-tiles
//        (the last 220); 265 CTAs.
//   e.g. the same layer at N = 2: 196 k-tiles -> at most 196 / 16 = 12 slices -> 12 of 17 k-tiles (the last 9).
// Pure function of its arguments (host test conv_split_test); plain C++.
#pragma once

#include <cstdint>

namespace tessel {

// CTAs per SM a split aims at: two waves where an SM runs one 128x128 CTA at a time, one full
// wave where it runs two (their 64 KiB of shared memory each allows two on an H100/H200), so the
// last, partial wave costs at most half of the time either way.
inline constexpr std::int64_t kConvSplitCtasPerSm = 2;
// The shortest slice, in k-tiles: a 128x128 CTA writes 64 KiB of fp32 partials (and the second
// kernel reads them back) against 16 KiB of operands read per k-tile, so below 16 k-tiles the
// partial traffic would rival the mainloop's.
inline constexpr std::int64_t kConvSplitMinKTiles = 16;
// The most slices: bounds the workspace (slices x out's elements x 4 bytes) and the second
// kernel's sum length.
inline constexpr std::int64_t kConvSplitMaxSlices = 128;

struct ConvSplit {
  int slices = 1;             // >= 1; 1: no split, no workspace
  int k_tiles_per_slice = 0;  // slice z sums k-tiles [z * k_tiles_per_slice, min((z + 1) * .., k_tiles))
};

// The split of a reduction of `k_tiles` k-tiles behind `tiles` output tiles on a GPU of `sms` SMs
// (file comment). Pre: tiles >= 1, k_tiles >= 0, sms >= 0 (0: no split).
constexpr ConvSplit conv_split_reduction(std::int64_t tiles, std::int64_t k_tiles, std::int64_t sms) {
  ConvSplit s;
  s.k_tiles_per_slice = int(k_tiles);
  if (tiles < 1 || tiles >= sms || k_tiles < 2 * kConvSplitMinKTiles) return s;
  std::int64_t want = (kConvSplitCtasPerSm * sms + tiles - 1) / tiles;
  if (want > k_tiles / kConvSplitMinKTiles) want = k_tiles / kConvSplitMinKTiles;
  if (want > kConvSplitMaxSlices) want = kConvSplitMaxSlices;
  if (want < 2) return s;
  std::int64_t const per = (k_tiles + want - 1) / want;
  s.k_tiles_per_slice = int(per);
  s.slices = int((k_tiles + per - 1) / per);
  return s;
}

// conv_split_reduction with a forced slice count (1..k_tiles; tests and tuning): the same even
// deal of k-tiles.
constexpr ConvSplit conv_split_forced(std::int64_t k_tiles, std::int64_t slices) {
  ConvSplit s;
  s.k_tiles_per_slice = int(k_tiles);
  if (slices <= 1 || k_tiles < 2) return s;
  if (slices > k_tiles) slices = k_tiles;
  std::int64_t const per = (k_tiles + slices - 1) / slices;
  s.k_tiles_per_slice = int(per);
  s.slices = int((k_tiles + per - 1) / per);
  return s;
}

}  // namespace tessel
