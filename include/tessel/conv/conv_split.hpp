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

// The sm_90a weight gradient (the GEMM kernel with an im2col B, src/conv/sm90_implicit_conv.cuh)
// splits its sum over pixels through the GEMM's split-K: a persistent CTA per SM runs its units
// (a tile's slice) one after another, and a unit costs its k-tiles plus a fixed part -- the
// pipeline's fill, the store of its fp32 partial, the start of the next -- which the H200 puts at
// about kSm90WgradUnitKTiles k-tiles. The slice count: the s in 1..64 (slices of at least 16
// k-tiles) that minimises waves(s) x (ceil(k_tiles / s) + kSm90WgradUnitKTiles), waves(s) =
// ceil(tiles x s / sms); the fewer slices on a tie. So one wave of units as full as it can be,
// unless a second wave saves more than a unit's fixed part. Measured (H200, bf16, batch 128
// unless noted, each pass against the others in one process): 14x14 C256 (18 tiles) 7 slices 57
// us, 14 65, 22 76; 7x7 C512 (72 tiles) 1 and 3 slices 68 us, 5 74; 28x28 C128 (5 tiles) 26
// slices 77 us, 52 94; U-Net 64x64 C320 batch 8 (36 tiles) 3 slices 128 us, 7 135, 11 144.
// Those were 256-column tiles. On the 192-column ones the rule's count was the fastest of those
// swept on every 3x3 layer of the suite (H200: 56x56 C64 44 slices 86 us, 33 91, 66 104; 3-D C64
// 14 slices 126 us, 7 185, 28 130; U-Net 5 slices 114 us, 2 123, 8 126; 7x7 C512 1 slice 51 us, 2
// 64; docs/conv.md).
inline constexpr std::int64_t kSm90WgradUnitKTiles = 24;

constexpr int conv_sm90_wgrad_slices(std::int64_t tiles, std::int64_t k_tiles, std::int64_t sms) {
  if (tiles < 1 || sms < 1) return 1;
  int best = 1;
  std::int64_t best_cost = 0;
  for (std::int64_t s = 1; s <= 64 && (s == 1 || s * 16 <= k_tiles); ++s) {
    std::int64_t const waves = (tiles * s + sms - 1) / sms;
    std::int64_t const cost = waves * ((k_tiles + s - 1) / s + kSm90WgradUnitKTiles);
    if (s == 1 || cost < best_cost) best = int(s), best_cost = cost;
  }
  return best;
}

}  // namespace tessel
