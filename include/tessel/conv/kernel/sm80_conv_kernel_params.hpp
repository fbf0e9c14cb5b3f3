// tessel/conv/kernel/sm80_conv_kernel_params.hpp -- Sm80ConvParams with what the sm_80
// convolution kernels derive from it once on the host: one group's GEMM extents, the tile grid,
// the divisors that decode GEMM indices into taps and pixels, and which accesses may be vectors.
//
// The launch code (src/conv/sm80_conv_run.cpp) fills it; only kernels read it. Every index a
// kernel decodes (GEMM row, column and k, tap, pixel) is below 2^31: the launch code refuses
// larger problems, so the 32-bit divisors of schedule/fast_divisor.hpp apply.
//   e.g. fprop, N=2, 56x56 -> 56x56, C=K=64, 3x3, groups 1: gemm (6272, 64, 576), chan Cg = 64,
//        px (Q, P, Z) = (56, 56, 1); 128x128x32 tiles: 49 x 1 tiles, 18 k-tiles.
#pragma once

#include <tessel/conv/kernel/sm80_conv_params.hpp>
#include <tessel/config.hpp>
#include <tessel/schedule/fast_divisor.hpp>

#include <cstdint>

namespace tessel::kernel {

struct Sm80ConvKernelParams {
  Sm80ConvParams p;
  int gemm_m, gemm_n, gemm_k;  // one group's implicit GEMM (conv/implicit_gemm_problem_size.hpp)
  int cg, kg;                  // channels per group of x and of y
  int tiles_m, tiles_n;        // CTA tiles of one group; blockIdx.x = tile_m + tiles_m * group
  int k_tiles;                 // ceil(gemm_k / BLK_K)
  // A split reduction (wgrad; tessel/conv/conv_split.hpp): blockIdx.z = slice z sums k-tiles
  // [z * k_tiles_per_slice, min((z + 1) * k_tiles_per_slice, k_tiles)). Without a split, one
  // slice of every k-tile.
  int slices, k_tiles_per_slice;
  // Non-null (a split wgrad): the CTA writes its fp32 sums to partials[z][row][col] instead of
  // out -- row = group * kg + GEMM row, col = GEMM column, partial_ld >= gemm_n and a multiple of
  // 8 floats, partials 32-byte aligned -- and sm80_conv_slice_sum.hpp's kernel applies the
  // epilogue to their sum over z.
  float* partials;
  int partial_ld;
  // The channel that runs fastest along GEMM-K (fprop: Cg, dgrad: Kg) or, for wgrad, along GEMM-N (Cg).
  FastDivisor32 div_chan;
  FastDivisor32 div_s, div_r;  // tap -> (t, r, s): tap = (t*R + r)*S + s
  // Pixel decode, fastest first: the GEMM rows of fprop and the GEMM-K of wgrad are output pixels
  // (Q, P, Z); the GEMM rows of dgrad are input pixels (W, H, D).
  FastDivisor32 div_px[3];
  FastDivisor32 div_stride[3];  // dgrad: stride_w, stride_h, stride_d
  bool out_vec;                 // out's 8-channel chunks are 16-byte aligned (pointer, strides, group offset)
  bool residual_vec;            // residual's likewise
};

namespace detail {

// (t, r, s) of a tap index (t*R + r)*S + s.
struct ConvTap {
  int t, r, s;
};
TESSEL_HOST_DEVICE inline ConvTap conv_tap(Sm80ConvKernelParams const& kp, int tap) {
  int const rs = int(kp.div_s.div(std::uint32_t(tap)));
  int const t = int(kp.div_r.div(std::uint32_t(rs)));
  return {t, rs - t * kp.p.r, tap - rs * kp.p.s};
}

// A linear index along the channel-fastest (t, r, s, channel) order (GEMM-K of fprop and dgrad,
// GEMM-N of wgrad): the tap's dilated offsets and the channel (div_chan divides by the channels).
struct ConvTapOffset {
  int dz, dh, dw, ch;
};
TESSEL_HOST_DEVICE inline ConvTapOffset conv_tap_offset(Sm80ConvKernelParams const& kp, int index) {
  int const tap = int(kp.div_chan.div(std::uint32_t(index)));
  ConvTap const t = conv_tap(kp, tap);
  return {t.t * kp.p.dilation_d, t.r * kp.p.dilation_h, t.s * kp.p.dilation_w, index - tap * int(kp.div_chan.divisor())};
}

// The pixel (n, i2, i1, i0) of a flat index ((n*E2 + i2)*E1 + i1)*E0 + i0 with kp.div_px = (E0, E1, E2).
struct ConvPixel {
  int n, i2, i1, i0;
};
TESSEL_HOST_DEVICE inline ConvPixel conv_pixel(Sm80ConvKernelParams const& kp, int m) {
  int const a = int(kp.div_px[0].div(std::uint32_t(m)));
  int const b = int(kp.div_px[1].div(std::uint32_t(a)));
  int const n = int(kp.div_px[2].div(std::uint32_t(b)));
  return {n, b - n * int(kp.div_px[2].divisor()), a - b * int(kp.div_px[1].divisor()), m - a * int(kp.div_px[0].divisor())};
}

// v = quo * d + rem with 0 <= rem < d (dgrad splits coordinates and tap offsets by the stride).
// Pre: 0 <= v < 2^31.
struct ConvDivided {
  int quo, rem;
};
TESSEL_HOST_DEVICE inline ConvDivided conv_divided(int v, FastDivisor32 const& d) {
  int const q = int(d.div(std::uint32_t(v)));
  return {q, v - q * int(d.divisor())};
}

}  // namespace detail
}  // namespace tessel::kernel
