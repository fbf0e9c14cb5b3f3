// tessel/conv/kernel/sm80_smallc_geometry.hpp -- what the small-channel convolution kernels
// (sm80_smallc_conv.hpp) stage in shared memory, as plain arithmetic the host uses to size the
// launch and the kernels use to address it.
//
// fprop (C <= 4): a CTA owns kSmallcPixels consecutive output pixels (flattened n, p, q) and 64
// output channels. It stages the input rows those pixels read as a band: per image the tile
// touches, the input rows p*stride_h - pad_h + [0, span_h) of its output rows, all of them, at
// full width (wp columns: input column q*stride_w - pad_w + s*dil_w sits at q*stride_w + s*dil_w),
// each pixel four channels (8 bytes; channels past C and positions in the padding are zero).
// Band rows of one image: (its output rows - 1) * stride_h + span_h, span_h = (R-1)*dil_h + 1.
//   e.g. the ResNet stem (224x224, 7x7 stride 2, pad 3, Q = 112): wp = 229; a tile of 256 pixels
//        in one image spans 3 or 4 output rows: 11 or 13 band rows (18 at most by the bound).
// dgrad (C <= 8, K <= 64): a CTA owns a kSmallcDgradRows x kSmallcDgradCols block of dx in one image
// and stages the dy pixels whose taps reach it, every one of its K channels (144 bytes a pixel: 128
// and 16 more, so that 8 consecutive pixels meet 8 bank groups), and the filters of 4 channel rows
// (C <= 4) or 8.
//   e.g. the stem: dy rows floor((h0 + 15 + 3) / 2) - floor((h0 + 3 - 6) / 2) + 1 <= 12, columns
//        <= 36: 12 x 36 x 144 B = 60.8 KiB, and the filters 49 taps x 4 x 72 x 2 B = 27.6 KiB.
// wgrad (C <= 4, K <= 64, R <= 7): a CTA sums a range of output rows (n, p). A stage holds
// kSmallcWgradRows of them: each row's dy (Q rounded up to 16 pixels, 64 channels, 128 bytes a pixel)
// and, per row, its R input rows at full width (x's own layout, C channels a pixel; room for 7;
// two consecutive rows of one image hold their stride_h + R rows once), each row starting `lead`
// zeros before its padding so that column 0 is 16-byte aligned.
//   e.g. the stem: a band row is 7 + 111*6 + 24 = 697 -> 704 elements; a stage 2 x 112 x 128 B of dy
//        and 2 x 7 x 704 x 2 B of band = 47.3 KiB; two stages 94.5 KiB.
// Plain C++ (host and device).
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/gemm_coord.hpp>  // detail::ceil_div_ll, detail::floor_div

#include <cstdint>

namespace tessel::kernel {

inline constexpr int kSmallcThreads = 256;     // 8 warps, both kernels
inline constexpr int kSmallcPixels = 256;      // fprop: output pixels a CTA owns (32 a warp)
inline constexpr int kSmallcChannels = 64;     // fprop: output channels a CTA owns
inline constexpr int kSmallcMaxC = 4;          // fprop: input channels (a band pixel holds 4)
inline constexpr int kSmallcDgradRows = 16;    // dgrad: dx rows a CTA owns (2 a warp)
inline constexpr int kSmallcDgradCols = 64;    // dgrad: dx columns a CTA owns
inline constexpr int kSmallcDgradMaxC = 8;     // dgrad: output channels (one n8 MMA tile)
inline constexpr int kSmallcDgradMaxK = 64;    // dgrad: dy channels staged per pixel
inline constexpr int kSmallcFilterPitch = 72;  // dgrad: elements per (tap, c) row of staged filters
inline constexpr int kSmallcDgradPixelPitch = 72;  // dgrad: elements per staged dy pixel (64 channels, 8 more)
// The shared memory one CTA may take on a GPU of compute capability cc (major * 10 + minor): 160 KiB
// where a block may opt in to 163 KiB or more (sm_80, sm_87, sm_90, sm_100, sm_103; cc 0, no GPU,
// counts as one of those), 99 KiB on the others (sm_86, sm_89, sm_120, and any not listed).
inline constexpr int kSmallcMaxSmem = 160 * 1024;
TESSEL_HOST_DEVICE constexpr int smallc_smem_limit(int cc) {
  return cc == 0 || cc == 80 || cc == 87 || cc == 90 || cc == 100 || cc == 103 ? kSmallcMaxSmem : 99 * 1024;
}

// ---- fprop ----------------------------------------------------------------------------------------

// GEMM-K of the fprop kernel: (tap, channel) with four channels a tap, in k-steps of 16 (4 taps).
TESSEL_HOST_DEVICE constexpr int smallc_fprop_ksteps(int taps) { return (taps + 3) / 4; }
// Elements per staged filter row (one output channel): the k-steps' 16 plus 8 (an odd number of
// 16-byte chunks: the 8 rows one ldmatrix reads fall in distinct bank groups).
TESSEL_HOST_DEVICE constexpr int smallc_fprop_filter_pitch(int taps) { return smallc_fprop_ksteps(taps) * 16 + 8; }
// Band width in pixels.
TESSEL_HOST_DEVICE constexpr std::int64_t smallc_fprop_band_width(std::int64_t q, std::int64_t s, std::int64_t stride_w,
                                                                  std::int64_t dil_w) {
  return (q - 1) * stride_w + (s - 1) * dil_w + 1;
}
// An upper bound on the band rows of any tile: it spans at most T = ceil(Pixels / Q) + 1 output
// rows in at most G = min(T, ceil(Pixels / (P*Q)) + 1) images, and its band has
// T*stride_h + G*(span_h - stride_h) rows or fewer (span_h - stride_h counted only when positive).
TESSEL_HOST_DEVICE constexpr std::int64_t smallc_fprop_band_rows(std::int64_t p, std::int64_t q, std::int64_t r,
                                                                 std::int64_t stride_h, std::int64_t dil_h) {
  std::int64_t const t = tessel::detail::ceil_div_ll(kSmallcPixels, q) + 1;
  std::int64_t const g0 = tessel::detail::ceil_div_ll(kSmallcPixels, p * q) + 1;
  std::int64_t const g = g0 < t ? g0 : t;
  std::int64_t const extra = (r - 1) * dil_h + 1 - stride_h;
  return t * stride_h + (extra > 0 ? g * extra : 0);
}
// Elements of the band (4 a pixel), rounded up to 8 so that the filters after it start 16-byte aligned.
TESSEL_HOST_DEVICE constexpr std::int64_t smallc_fprop_band_elems(std::int64_t p, std::int64_t q, std::int64_t r, std::int64_t s,
                                                                  std::int64_t stride_h, std::int64_t stride_w, std::int64_t dil_h,
                                                                  std::int64_t dil_w) {
  return (smallc_fprop_band_rows(p, q, r, stride_h, dil_h) * smallc_fprop_band_width(q, s, stride_w, dil_w) * 4 + 7) / 8 * 8;
}
// Dynamic shared memory of the fprop kernel: the band (8 bytes a pixel), the filters of 64 output
// channels, and the taps' offsets (one int per tap of the k-steps).
TESSEL_HOST_DEVICE constexpr std::int64_t smallc_fprop_smem(std::int64_t p, std::int64_t q, std::int64_t r, std::int64_t s,
                                                            std::int64_t stride_h, std::int64_t stride_w, std::int64_t dil_h,
                                                            std::int64_t dil_w) {
  std::int64_t const band = smallc_fprop_band_elems(p, q, r, s, stride_h, stride_w, dil_h, dil_w) * 2;
  int const taps = int(r * s);
  std::int64_t const filters = std::int64_t(kSmallcChannels) * smallc_fprop_filter_pitch(taps) * 2;
  return band + filters + std::int64_t(smallc_fprop_ksteps(taps)) * 4 * 4;
}

// ---- dgrad ----------------------------------------------------------------------------------------

// The dy rows (or columns) a block of `len` dx rows starting at h0 reads: floor((h0 + len - 1 + pad)
// / stride) - floor((h0 + pad - (R-1)*dil) / stride) + 1, and its first one.
TESSEL_HOST_DEVICE constexpr std::int64_t smallc_dgrad_first(std::int64_t h0, std::int64_t r, std::int64_t pad, std::int64_t stride,
                                                             std::int64_t dil) {
  return tessel::detail::floor_div(h0 + pad - (r - 1) * dil, stride);
}
TESSEL_HOST_DEVICE constexpr std::int64_t smallc_dgrad_extent(std::int64_t h0, std::int64_t len, std::int64_t r, std::int64_t pad,
                                                              std::int64_t stride, std::int64_t dil) {
  return tessel::detail::floor_div(h0 + len - 1 + pad, stride) - smallc_dgrad_first(h0, r, pad, stride, dil) + 1;
}
// An upper bound of smallc_dgrad_extent over every h0: (len - 1 + (R-1)*dil) / stride + 2.
TESSEL_HOST_DEVICE constexpr std::int64_t smallc_dgrad_extent_bound(std::int64_t len, std::int64_t r, std::int64_t stride,
                                                                    std::int64_t dil) {
  return (len - 1 + (r - 1) * dil) / stride + 2;
}
// Elements of the staged dy: the bound's rows x columns, kSmallcDgradPixelPitch a pixel.
TESSEL_HOST_DEVICE constexpr std::int64_t smallc_dgrad_dy_elems(std::int64_t r, std::int64_t s, std::int64_t stride_h,
                                                                std::int64_t stride_w, std::int64_t dil_h, std::int64_t dil_w) {
  return smallc_dgrad_extent_bound(kSmallcDgradRows, r, stride_h, dil_h) *
         smallc_dgrad_extent_bound(kSmallcDgradCols, s, stride_w, dil_w) * kSmallcDgradPixelPitch;
}
// Channel rows of the staged filters: 4 for C <= 4 (the MMA's lanes 4-7 of an n8 tile read rows 0-3
// again; their columns are not stored), else 8.
TESSEL_HOST_DEVICE constexpr int smallc_dgrad_filter_rows(std::int64_t c) { return c <= 4 ? 4 : kSmallcDgradMaxC; }
// Dynamic shared memory of the dgrad kernel: dy (144 bytes a pixel) and the filters
// [R*S][filter rows][kSmallcFilterPitch].
TESSEL_HOST_DEVICE constexpr std::int64_t smallc_dgrad_smem(std::int64_t r, std::int64_t s, std::int64_t stride_h,
                                                            std::int64_t stride_w, std::int64_t dil_h, std::int64_t dil_w,
                                                            std::int64_t c) {
  return smallc_dgrad_dy_elems(r, s, stride_h, stride_w, dil_h, dil_w) * 2 +
         r * s * smallc_dgrad_filter_rows(c) * kSmallcFilterPitch * 2;
}

// ---- wgrad ----------------------------------------------------------------------------------------

inline constexpr int kSmallcWgradMaxK = 64;     // dy channels: GEMM-M, four m16 tiles
inline constexpr int kSmallcWgradWarpTiles = 7; // n8 tiles a warp accumulates (4 x 7 x 4 fp32 registers):
                                                // one of each filter row, R <= 7
inline constexpr int kSmallcWgradMaxGroups = 4; // warp groups over GEMM-N, one per column tile of a
                                                // filter row (S*C <= 32), two warps each (256 threads)
inline constexpr int kSmallcWgradRows = 2;      // output rows a stage holds
inline constexpr int kSmallcWgradStages = 2;

// n8 tiles of one filter row r: its S*C (tap, channel) columns, rounded up to 8.
TESSEL_HOST_DEVICE constexpr int smallc_wgrad_row_tiles(int s, int c) { return (s * c + 7) / 8; }
// Warp groups over GEMM-N: one per column tile of a filter row (each takes that tile of every row).
TESSEL_HOST_DEVICE constexpr int smallc_wgrad_groups(int s, int c) { return smallc_wgrad_row_tiles(s, c); }
// Zeros before a band row's padding: column 0 (after pad_w * C padding elements) on a multiple of 8.
TESSEL_HOST_DEVICE constexpr int smallc_wgrad_lead(int pad_w, int c) { return (8 - (pad_w * c) % 8) % 8; }
// Columns of x the output row's pixels read: min(W, (Q-1)*stride_w - pad_w + S), at least 0. The
// kernel stages only these (the columns past them stay zero: a pixel past Q reads no data).
TESSEL_HOST_DEVICE constexpr std::int64_t smallc_wgrad_used_cols(std::int64_t q, std::int64_t w, std::int64_t s, std::int64_t stride_w,
                                                                 std::int64_t pad_w) {
  std::int64_t const reach = (q - 1) * stride_w - pad_w + s;
  return reach < 0 ? 0 : reach < w ? reach : w;
}
// Pixels of a staged dy row: Q rounded up to a k-step of 16.
TESSEL_HOST_DEVICE constexpr std::int64_t smallc_wgrad_row_pixels(std::int64_t q) { return (q + 15) / 16 * 16; }
// Elements of a band row: what the B fragments of the last pixel's last tile read, and the copy of
// the used columns, rounded up to 8.
TESSEL_HOST_DEVICE constexpr std::int64_t smallc_wgrad_row_elems(std::int64_t q, std::int64_t w, std::int64_t s, std::int64_t c,
                                                                 std::int64_t stride_w, std::int64_t pad_w) {
  std::int64_t const lead = smallc_wgrad_lead(int(pad_w), int(c));
  std::int64_t const reads = lead + (smallc_wgrad_row_pixels(q) - 1) * stride_w * c + smallc_wgrad_row_tiles(int(s), int(c)) * 8;
  std::int64_t const copy = lead + (pad_w + smallc_wgrad_used_cols(q, w, s, stride_w, pad_w)) * c;
  return ((reads > copy ? reads : copy) + 7) / 8 * 8;
}
// Elements of one stage: dy, then the band (kSmallcWgradWarpTiles rows an output row, R of them staged).
TESSEL_HOST_DEVICE constexpr std::int64_t smallc_wgrad_stage_elems(std::int64_t q, std::int64_t w, std::int64_t s, std::int64_t c,
                                                                   std::int64_t stride_w, std::int64_t pad_w) {
  return kSmallcWgradRows *
         (smallc_wgrad_row_pixels(q) * kSmallcWgradMaxK + kSmallcWgradWarpTiles * smallc_wgrad_row_elems(q, w, s, c, stride_w, pad_w));
}
// Dynamic shared memory of the wgrad kernel: the stages, or the accumulators one warp of each group
// hands the other at the end (groups x 64 x 56 fp32), whichever is larger.
TESSEL_HOST_DEVICE constexpr std::int64_t smallc_wgrad_smem(std::int64_t q, std::int64_t w, std::int64_t s, std::int64_t c,
                                                            std::int64_t stride_w, std::int64_t pad_w) {
  std::int64_t const stages = kSmallcWgradStages * smallc_wgrad_stage_elems(q, w, s, c, stride_w, pad_w) * 2;
  std::int64_t const handoff = std::int64_t(smallc_wgrad_groups(int(s), int(c))) * kSmallcWgradMaxK * kSmallcWgradWarpTiles * 8 * 4;
  return stages > handoff ? stages : handoff;
}

}  // namespace tessel::kernel
