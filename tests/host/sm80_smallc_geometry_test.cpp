// tessel/conv/kernel/sm80_smallc_geometry.hpp: the shared-memory bounds the small-channel kernels
// are launched with hold for every tile, counted here tile by tile the way the kernels walk them.
#include <tessel/conv/kernel/sm80_smallc_geometry.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

using namespace tessel::kernel;

namespace {

// The band rows the fprop kernel stages for the tile of pixels [m0, m0 + 256) of n images of
// P x Q outputs: per image it touches, (its output rows - 1) * stride + span.
std::int64_t band_rows_of_tile(std::int64_t m0, std::int64_t n, std::int64_t p, std::int64_t q, std::int64_t span,
                               std::int64_t stride) {
  std::int64_t const last = std::min(m0 + kSmallcPixels, n * p * q) - 1;
  std::int64_t rows = 0;
  for (std::int64_t image = m0 / (p * q); image <= last / (p * q); ++image) {
    std::int64_t const first_row = std::max(m0, image * p * q) / q - image * p;
    std::int64_t const last_row = std::min(last, (image + 1) * p * q - 1) / q - image * p;
    rows += (last_row - first_row) * stride + span;
  }
  return rows;
}

}  // namespace

TEST(SmallcGeometry, FpropBandBoundHoldsForEveryTile) {
  struct Case {
    std::int64_t n, p, q, r, stride, dil;
  };
  Case const cases[] = {
      {4, 112, 112, 7, 2, 1},  // the stem
      {6, 9, 11, 3, 1, 1},     // 99 pixels an image: tiles over three or four images
      {3, 1, 1, 5, 1, 2},      // one pixel an image
      {2, 300, 5, 3, 1, 1},    // 52 rows a tile
      {2, 7, 300, 2, 3, 1},    // stride past the filter
      {2, 16, 16, 3, 1, 1},    // a tile is one image
      {3, 15, 17, 4, 2, 3},
  };
  for (Case const& c : cases) {
    std::int64_t const span = (c.r - 1) * c.dil + 1;
    std::int64_t const bound = smallc_fprop_band_rows(c.p, c.q, c.r, c.stride, c.dil);
    std::int64_t most = 0;
    for (std::int64_t m0 = 0; m0 < c.n * c.p * c.q; m0 += kSmallcPixels)
      most = std::max(most, band_rows_of_tile(m0, c.n, c.p, c.q, span, c.stride));
    EXPECT_LE(most, bound) << "P " << c.p << " Q " << c.q << " R " << c.r << " stride " << c.stride;
    EXPECT_GE(most, 1);
  }
  // The stem: 13 rows at most (a tile over 4 output rows), bounded by 18.
  EXPECT_EQ(band_rows_of_tile(111, 1, 112, 112, 7, 2), 13);
  EXPECT_EQ(smallc_fprop_band_rows(112, 112, 7, 2, 1), 18);
  EXPECT_EQ(smallc_fprop_band_width(112, 7, 2, 1), 229);
  EXPECT_EQ(smallc_fprop_ksteps(49), 13);
  EXPECT_EQ(smallc_fprop_filter_pitch(49), 216);
  EXPECT_LE(smallc_fprop_smem(112, 112, 7, 7, 2, 2, 1, 1), 113 * 1024);  // two CTAs an H100 SM
}

TEST(SmallcGeometry, DgradExtentBoundHoldsForEveryBlock) {
  for (std::int64_t r = 1; r <= 7; ++r)
    for (std::int64_t stride = 1; stride <= 4; ++stride)
      for (std::int64_t dil = 1; dil <= 3; ++dil)
        for (std::int64_t pad = 0; pad <= 4; ++pad) {
          std::int64_t const bound = smallc_dgrad_extent_bound(kSmallcDgradRows, r, stride, dil);
          for (std::int64_t h0 = 0; h0 < 200; h0 += kSmallcDgradRows) {
            // Brute force: the dy rows p = (h + pad - r'*dil) / stride the block's rows reach.
            std::int64_t lo = INT64_MAX, hi = INT64_MIN;
            for (std::int64_t h = h0; h < h0 + kSmallcDgradRows; ++h)
              for (std::int64_t tap = 0; tap < r; ++tap) {
                std::int64_t const t = h + pad - tap * dil;
                if (((t % stride) + stride) % stride != 0) continue;
                lo = std::min(lo, tessel::detail::floor_div(t, stride)), hi = std::max(hi, tessel::detail::floor_div(t, stride));
              }
            if (lo > hi) continue;
            std::int64_t const first = smallc_dgrad_first(h0, r, pad, stride, dil);
            std::int64_t const extent = smallc_dgrad_extent(h0, kSmallcDgradRows, r, pad, stride, dil);
            EXPECT_LE(first, lo) << "r " << r << " stride " << stride << " dil " << dil << " pad " << pad << " h0 " << h0;
            EXPECT_GE(first + extent - 1, hi);
            EXPECT_LE(extent, bound);
          }
        }
  // The stem: 12 x 36 dy pixels, 88.3 KiB with the filters of its 3 channels (4 rows), 115.9 KiB at C = 8.
  EXPECT_EQ(smallc_dgrad_extent_bound(kSmallcDgradRows, 7, 2, 1), 12);
  EXPECT_EQ(smallc_dgrad_extent_bound(kSmallcDgradCols, 7, 2, 1), 36);
  EXPECT_EQ(smallc_dgrad_smem(7, 7, 2, 2, 1, 1, 3), 12 * 36 * 144 + 49 * 4 * 72 * 2);
  EXPECT_EQ(smallc_dgrad_smem(7, 7, 2, 2, 1, 1, 8), 12 * 36 * 144 + 49 * 8 * 72 * 2);
}

// Which GPUs give a block 160 KiB: the stem's dgrad at C = 8 (115.9 KiB) fits those only; at C = 3
// (88.3 KiB) and its fprop fit every one.
TEST(SmallcGeometry, SharedMemoryLimitPerGpu) {
  for (int cc : {0, 80, 87, 90, 100, 103}) EXPECT_EQ(smallc_smem_limit(cc), 160 * 1024) << cc;
  for (int cc : {86, 89, 120, 121, 130}) EXPECT_EQ(smallc_smem_limit(cc), 99 * 1024) << cc;
  EXPECT_GT(smallc_dgrad_smem(7, 7, 2, 2, 1, 1, 8), smallc_smem_limit(89));
  EXPECT_LE(smallc_dgrad_smem(7, 7, 2, 2, 1, 1, 8), smallc_smem_limit(90));
  EXPECT_LE(smallc_dgrad_smem(7, 7, 2, 2, 1, 1, 3), smallc_smem_limit(89));
  EXPECT_LE(smallc_fprop_smem(112, 112, 7, 7, 2, 2, 1, 1), smallc_smem_limit(89));
}

TEST(SmallcGeometry, FloorDivision) {
  EXPECT_EQ(tessel::detail::floor_div(-1, 2), -1);
  EXPECT_EQ(tessel::detail::floor_div(-4, 2), -2);
  EXPECT_EQ(tessel::detail::floor_div(-5, 3), -2);
  EXPECT_EQ(tessel::detail::floor_div(5, 3), 1);
  EXPECT_EQ(tessel::detail::floor_div(0, 7), 0);
}

// The wgrad's band row holds what its kernel reads: the B fragments of every pixel of the staged
// row (Q rounded up to 16) over every n8 tile of a filter row, and the used columns copied after
// the padding; every column a real pixel's tap reads is a used one; column 0 is 16-byte aligned.
TEST(SmallcGeometry, WgradBandRowHoldsEveryRead) {
  struct Case {
    int q, w, s, c, stride, pad;
  };
  Case const cases[] = {
      {112, 224, 7, 3, 2, 3},  // the stem
      {131, 131, 3, 3, 1, 1},  // Q past a k-step
      {14, 40, 4, 3, 3, 1},    // stride 3
      {4, 11, 2, 3, 5, 0},     // stride past the filter
      {4, 4, 3, 3, 1, 4},      // pad past the filter: the last pixels read only padding
      {1, 1, 3, 2, 2, 1},      // W = 1
      {16, 16, 1, 4, 1, 0},    // one tap
      {35, 70, 7, 1, 2, 3},
  };
  for (Case const& k : cases) {
    SCOPED_TRACE(::testing::Message() << "Q " << k.q << " W " << k.w << " S " << k.s << " C " << k.c << " stride " << k.stride);
    std::int64_t const lead = smallc_wgrad_lead(k.pad, k.c);
    std::int64_t const elems = smallc_wgrad_row_elems(k.q, k.w, k.s, k.c, k.stride, k.pad);
    std::int64_t const used = smallc_wgrad_used_cols(k.q, k.w, k.s, k.stride, k.pad);
    EXPECT_EQ((lead + k.pad * k.c) % 8, 0);
    EXPECT_EQ(elems % 8, 0);
    EXPECT_LE(lead + (k.pad + used) * k.c, elems);
    std::int64_t most = 0, widest = -1;
    for (std::int64_t q = 0; q < smallc_wgrad_row_pixels(k.q); ++q)
      for (std::int64_t j = 0; j < smallc_wgrad_row_tiles(k.s, k.c) * 8; ++j) most = std::max(most, lead + q * k.stride * k.c + j);
    for (std::int64_t q = 0; q < k.q; ++q)
      for (std::int64_t s = 0; s < k.s; ++s)
        if (std::int64_t const col = q * k.stride - k.pad + s; col >= 0 && col < k.w) widest = std::max(widest, col);
    EXPECT_LT(most, elems);
    EXPECT_EQ(widest + 1, used);
  }
  // The stem: 21 n8 tiles in 3 warp groups; a band row of 704 elements; two stages of 2 x 112
  // pixels of dy and 2 x 7 band rows, 94.5 KiB (two CTAs an H100 SM).
  EXPECT_EQ(smallc_wgrad_row_tiles(7, 3), 3);
  EXPECT_EQ(smallc_wgrad_groups(7, 3), 3);
  EXPECT_EQ(smallc_wgrad_groups(7, 4), 4);
  EXPECT_EQ(smallc_wgrad_groups(7, 1), 1);
  EXPECT_EQ(smallc_wgrad_row_elems(112, 224, 7, 3, 2, 3), 704);
  EXPECT_EQ(smallc_wgrad_smem(112, 224, 7, 3, 2, 3), 2 * 2 * (112 * 64 + 7 * 704) * 2);
  EXPECT_LE(smallc_wgrad_smem(112, 224, 7, 3, 2, 3), 113 * 1024);
  // A tiny problem (one warp group): the hand-off of the accumulators, 14 KiB, sets the size.
  EXPECT_EQ(smallc_wgrad_smem(1, 1, 3, 2, 2, 1), 64 * 56 * 4);
}
