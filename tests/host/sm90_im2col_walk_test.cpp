// The division-free walks of the sm_90a implicit-GEMM producers (kernel/sm90_im2col_walk.hpp),
// against the divisions they replace: a pixel index advanced k-tile by k-tile keeps the digits of
// the index, over output grids smaller and larger than a k-tile, 2-D and 3-D, into the images past
// the last one (which TMA reads as zeros); a tap advanced one by one keeps the offsets of its
// index, with and without dilation; a column block of the weight gradient's B advanced 64 columns
// at a time keeps the tap and channels of its column, across taps and past the last one. No GPU.
#include <tessel/gemm/kernel/sm90_im2col_walk.hpp>

#include <gtest/gtest.h>

#include <cstdint>

using namespace tessel::kernel::detail;
using tessel::kernel::Sm90Im2col;
using tessel::kernel::Sm90PixelDigits;

namespace {

bool same(Sm90PixelDigits const& a, Sm90PixelDigits const& b) { return a.q == b.q && a.p == b.p && a.z == b.z && a.n == b.n; }

}  // namespace

TEST(Sm90Im2colWalk, PixelDigitsAdvanceLikeTheDivision) {
  struct Grid {
    int q, p, z, n;
  };
  constexpr Grid grids[] = {{56, 56, 1, 128}, {7, 7, 1, 128}, {1, 1, 1, 300}, {3, 2, 1, 40}, {57, 57, 1, 64},
                            {56, 56, 16, 4},  {5, 3, 2, 50},  {64, 1, 1, 9},  {65, 1, 1, 9},  {8, 8, 1, 20}};
  for (Grid const& grid : grids) {
    Sm90Im2col g;
    g.q = grid.q, g.p = grid.p, g.z = grid.z;
    std::int64_t const pixels = std::int64_t(grid.q) * grid.p * grid.z * grid.n;
    for (int tile : {64, 1, 13}) {
      Sm90PixelDigits const step = sm90_pixel_digits(g, tile);
      for (std::int64_t start : {std::int64_t(0), std::int64_t(tile) * 7, std::int64_t(tile) * 101}) {
        Sm90PixelDigits d = sm90_pixel_digits(g, start);
        for (std::int64_t m = start; m < pixels + 3 * tile; m += tile) {
          Sm90PixelDigits const want = sm90_pixel_digits(g, m);
          ASSERT_TRUE(same(d, want)) << "grid " << grid.q << "x" << grid.p << "x" << grid.z << " pixel " << m << ": walked (" << d.q
                                     << ", " << d.p << ", " << d.z << ", " << d.n << ")";
          sm90_pixel_advance(g, d, step);
        }
      }
    }
  }
}

TEST(Sm90Im2colWalk, OriginIsStrideTimesOutputMinusPad) {
  Sm90Im2col g;
  g.q = 28, g.p = 14, g.z = 3;
  g.stride_w = 2, g.stride_h = 3, g.stride_d = 1;
  g.pad_w = 1, g.pad_h = 2, g.pad_d = 1;
  std::int64_t const m = 5 + 28 * (9 + 14 * (2 + 3 * 6));  // q 5, p 9, z 2, image 6
  Sm90Im2colOrigin const o = sm90_im2col_origin(g, m);
  EXPECT_EQ(o.w, 5 * 2 - 1);
  EXPECT_EQ(o.h, 9 * 3 - 2);
  EXPECT_EQ(o.d, 2 * 1 - 1);
  EXPECT_EQ(o.n, 6);
}

TEST(Sm90Im2colWalk, TapOffsetsAdvanceLikeTheDivision) {
  struct Filter {
    int t, r, s, dilation_w, dilation_h, dilation_d;
  };
  constexpr Filter filters[] = {{1, 3, 3, 1, 1, 1}, {1, 7, 7, 1, 1, 1}, {3, 3, 3, 1, 1, 1}, {1, 1, 1, 1, 1, 1},
                                {1, 3, 3, 2, 3, 1}, {2, 3, 5, 4, 1, 3}, {1, 1, 4, 1, 1, 1}, {1, 5, 1, 1, 2, 1}};
  for (Filter const& f : filters) {
    Sm90Im2col g;
    g.s = f.s, g.r = f.r, g.taps = f.t * f.r * f.s;
    g.dilation_w = f.dilation_w, g.dilation_h = f.dilation_h, g.dilation_d = f.dilation_d;
    Sm90TapOffsets o = sm90_tap_offsets(g, 0);
    for (int tap = 0; tap < g.taps; ++tap) {
      int const ts = tap % f.s, tr = tap / f.s % f.r, tt = tap / (f.s * f.r);
      ASSERT_EQ(o.w, ts * f.dilation_w) << f.t << "x" << f.r << "x" << f.s << " tap " << tap;
      ASSERT_EQ(o.h, tr * f.dilation_h) << f.t << "x" << f.r << "x" << f.s << " tap " << tap;
      ASSERT_EQ(o.d, tt * f.dilation_d) << f.t << "x" << f.r << "x" << f.s << " tap " << tap;
      sm90_tap_advance(g, o);
    }
  }
}

TEST(Sm90Im2colWalk, ColumnBlocksAdvanceLikeTheDivision) {
  struct Shape {
    int channels, r, s;
  };
  constexpr Shape shapes[] = {{64, 3, 3}, {128, 3, 3}, {192, 3, 3}, {320, 3, 3}, {512, 3, 3}, {64, 1, 1}, {192, 1, 7}, {64, 5, 5}};
  for (Shape const& sh : shapes) {
    Sm90Im2col g;
    g.channels = sh.channels, g.r = sh.r, g.s = sh.s, g.taps = sh.r * sh.s;
    g.dilation_w = 2, g.dilation_h = 3;
    int const columns = g.taps * g.channels;
    for (int n0 = 0; n0 < columns; n0 += 64) {  // a tile's first block at any 64-column offset
      Sm90ColumnBlock b = sm90_column_block(g, n0);
      for (int col = n0; col < n0 + 256 && col < columns + 256; col += 64) {  // a 256-column tile, past the end too
        int tap = col / g.channels;
        tap = tap < g.taps ? tap : g.taps - 1;
        Sm90TapOffsets const o = sm90_tap_offsets(g, tap);
        ASSERT_EQ(b.tap, tap) << sh.channels << " channels, column " << col;
        ASSERT_EQ(b.c0, col - tap * g.channels) << sh.channels << " channels, column " << col;
        ASSERT_TRUE(b.offsets.w == o.w && b.offsets.h == o.h && b.offsets.d == o.d) << sh.channels << " channels, column " << col;
        sm90_column_block_advance(g, b);
      }
    }
  }
}
