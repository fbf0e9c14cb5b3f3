// tessel/gemm/kernel/sm90_im2col_walk.hpp -- where the im2col copies of an sm_90a implicit-GEMM
// convolution read (kernel/sm90_gemm_producer_im2col.hpp): an output pixel's input position, a
// filter tap's offsets, a column block of the weight gradient's B, and the walks from one k-tile
// (or block) to the next without a division. A producer thread issues every copy of a stage, one
// dependent instruction after another, so what it computes per k-tile sets the kernel's pace: the
// weight gradient once split each k-tile's first pixel into column, row, depth and image with
// three 64-bit divisions, and fed its consumers a k-tile every ~1.9 us (H200, 3x3 C64 56x56 batch
// 128: 0.276 ms; 0.151 ms walking the digits). Host test: sm90_im2col_walk_test.
#pragma once

#include <tessel/config.hpp>
#include <tessel/gemm/kernel/sm90_gemm_params.hpp>

#include <cstdint>

namespace tessel::kernel::detail {

// Output pixel m as digits (Sm90PixelDigits, kernel/sm90_gemm_params.hpp).
TESSEL_HOST_DEVICE inline Sm90PixelDigits sm90_pixel_digits(Sm90Im2col const& g, std::int64_t m) {
  int const q = int(m % g.q);
  m /= g.q;
  int const p = int(m % g.p);
  m /= g.p;
  int const z = int(m % g.z);
  return {q, p, z, int(m / g.z)};
}

// d += step, both as digits (step from sm90_pixel_digits, so every digit is below its radix and
// one carry per digit suffices): the weight gradient's producer walks its k-tiles of pixels this
// way.
TESSEL_HOST_DEVICE inline void sm90_pixel_advance(Sm90Im2col const& g, Sm90PixelDigits& d, Sm90PixelDigits const& step) {
  d.q += step.q;
  int carry = d.q >= g.q;
  d.q -= carry ? g.q : 0;
  d.p += step.p + carry;
  carry = d.p >= g.p;
  d.p -= carry ? g.p : 0;
  d.z += step.z + carry;
  carry = d.z >= g.z;
  d.z -= carry ? g.z : 0;
  d.n += step.n + carry;
}

// Where a pixel tile's im2col walk starts: the pixel's input position (stride x output - pad) in
// w, h, d, and its image.
struct Sm90Im2colOrigin {
  int w, h, d, n;
};
TESSEL_HOST_DEVICE inline Sm90Im2colOrigin sm90_im2col_origin(Sm90Im2col const& g, Sm90PixelDigits const& x) {
  return {x.q * g.stride_w - g.pad_w, x.p * g.stride_h - g.pad_h, x.z * g.stride_d - g.pad_d, x.n};
}
TESSEL_HOST_DEVICE inline Sm90Im2colOrigin sm90_im2col_origin(Sm90Im2col const& g, std::int64_t m) {
  return sm90_im2col_origin(g, sm90_pixel_digits(g, m));
}

// The im2col walk's offsets for a filter tap (s fastest, then r, t): the tap's position times the
// dilation.
struct Sm90TapOffsets {
  std::uint16_t w, h, d;
};
TESSEL_HOST_DEVICE inline Sm90TapOffsets sm90_tap_offsets(Sm90Im2col const& g, int tap) {
  int const ts = tap % g.s, tr = (tap / g.s) % g.r, tt = tap / (g.s * g.r);
  return {std::uint16_t(ts * g.dilation_w), std::uint16_t(tr * g.dilation_h), std::uint16_t(tt * g.dilation_d)};
}

// The offsets of the tap after the one `o` holds (s fastest, then r, t), without a division.
TESSEL_HOST_DEVICE inline void sm90_tap_advance(Sm90Im2col const& g, Sm90TapOffsets& o) {
  int w = o.w + g.dilation_w, h = o.h, d = o.d;
  if (w == g.s * g.dilation_w) {
    w = 0, h += g.dilation_h;
    if (h == g.r * g.dilation_h) h = 0, d += g.dilation_d;
  }
  o = {std::uint16_t(w), std::uint16_t(h), std::uint16_t(d)};
}

// A 64-column block of the weight gradient's B (columns tap x channels + channel): its tap, its
// first channel c0 and the tap's offsets. A block past the last column keeps the last tap (its
// columns are never stored; c0 then runs past the channels, which TMA reads as zeros).
struct Sm90ColumnBlock {
  int c0, tap;
  Sm90TapOffsets offsets;
};
TESSEL_HOST_DEVICE inline Sm90ColumnBlock sm90_column_block(Sm90Im2col const& g, int col) {
  int tap = col / g.channels;
  tap = tap < g.taps ? tap : g.taps - 1;
  return {col - tap * g.channels, tap, sm90_tap_offsets(g, tap)};
}
// The block 64 columns on (channels a multiple of 64, so a block never straddles two taps).
TESSEL_HOST_DEVICE inline void sm90_column_block_advance(Sm90Im2col const& g, Sm90ColumnBlock& b) {
  if ((b.c0 += 64) == g.channels && b.tap + 1 < g.taps) b.c0 = 0, ++b.tap, sm90_tap_advance(g, b.offsets);
}

}  // namespace tessel::kernel::detail
