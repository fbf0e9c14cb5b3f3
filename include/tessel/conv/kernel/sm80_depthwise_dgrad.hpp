// tessel/conv/kernel/sm80_depthwise_dgrad.hpp -- direct depthwise data gradient (groups == c == k,
// 2-D, any filter size, stride, padding and dilation): the backward pass of
// sm80_depthwise_conv.hpp, bound by memory bandwidth like it; its job is to read dy about once
// from DRAM.
//
//   dx[n][h][w][c] = act(alpha * sum_{r,s} dy[n][p][q][c] * w[c][r][s] + beta * residual + bias[c])
//     over the taps whose output pixel exists: p = (h + ph - r*dh) / sh, q = (w + pw - s*dw) / sw,
//     each division exact (at stride > 1 only the taps with (h + ph - r*dh) % sh == 0 and
//     (w + pw - s*dw) % sw == 0 meet an output pixel) and 0 <= p < P, 0 <= q < Q.
//
// The layout of the work is fprop's with the roles of x and dy swapped: a CTA of 256 threads owns
// 64 channels and a run of consecutive input pixels (flattened n, h, w); the channel block's
// filters are staged once in shared memory as fp32 [R*S][64]; each thread owns Vec consecutive
// channels of one input pixel (Vec 8: one 16-byte load of dy per contributing tap, channels and
// dy's strides multiples of 8; Vec 1: one element per tap, any channel count) and accumulates in
// fp32 over the taps, in tap order. Neighbouring input pixels read mostly the same rows of dy,
// which the loads find in L1 (ld.global.nc).
//   e.g. C = 256, 3x3, stride 1, pad 1: grid (ceil(N*H*W / 32), 4); each thread 9 loads of 16 bytes.
//   e.g. stride 2, 3x3, pad 1: input row h = 4 meets taps r = 1 (p = 2) only; h = 5 meets r = 0
//        (p = 3) and r = 2 (p = 2) -- the loop tests (h + ph - r*dh) % sh per tap.
#pragma once

#include <tessel/arch/arch_config.hpp>
#include <tessel/config.hpp>
#include <tessel/conv/kernel/sm80_conv_epilogue.hpp>
#include <tessel/conv/kernel/sm80_conv_kernel_params.hpp>
#include <tessel/conv/kernel/sm80_depthwise_conv.hpp>

#include <cstdint>

namespace tessel::kernel {

// Grid (ceil(N*H*W / Config::Pixels), ceil(C / 64)), Config::Threads threads, Config::smem_bytes(R*S)
// of dynamic shared memory; Config is an Sm80DepthwiseConfig. Uses kp.p, kp.gemm_m (= N*H*W),
// kp.div_px (W, H, D = 1), kp.div_stride (stride_w, stride_h), kp.out_vec and kp.residual_vec (dx's
// and the residual's 8-channel chunks 16-byte aligned).
template <class Config>
__global__ void __launch_bounds__(Config::Threads) sm80_depthwise_dgrad_kernel(Sm80ConvKernelParams const kp) {
#if defined(TESSEL_ARCH_SM80)
  using Element = typename Config::Element;
  constexpr int Vec = Config::Vec, Channels = Config::Channels;
  extern __shared__ __align__(16) float filt[];  // [R*S][Channels]
  Sm80ConvParams const& p = kp.p;
  int const tid = int(threadIdx.x);
  int const c0 = int(blockIdx.y) * Channels;
  detail::depthwise_stage_filters<Config>(p, c0, tid, filt);

  int const m = int(blockIdx.x) * Config::Pixels + tid / Config::ThreadsPerPixel;
  int const cc = (tid % Config::ThreadsPerPixel) * Vec;  // first channel of the thread, in the block
  int const c = c0 + cc;
  if (m >= kp.gemm_m || c >= p.c) return;
  detail::ConvPixel const px = detail::conv_pixel(kp, m);  // (n, 0, h, w)
  // Output coordinates before the division by the stride: p*sh = h + ph - r*dh.
  int const ph0 = px.i1 + p.pad_h, pw0 = px.i0 + p.pad_w;
  Element const* const dyn = static_cast<Element const*>(p.y) + px.n * p.y_stride[0] + c;
  bool const strided_h = p.stride_h > 1, strided_w = p.stride_w > 1;

  float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  TESSEL_NO_UNROLL
  for (int r = 0; r < p.r; ++r) {
    int const nh = ph0 - r * p.dilation_h;
    if (nh < 0) break;  // later taps lie further above the first output row
    int out_p = nh;
    if (strided_h) {
      detail::ConvDivided const d = detail::conv_divided(nh, kp.div_stride[1]);
      if (d.rem != 0) continue;
      out_p = d.quo;
    }
    if (out_p >= p.p) continue;
    Element const* const dyrow = dyn + out_p * p.y_stride[2];
    float const* const frow = filt + r * p.s * Channels + cc;
    for (int s = 0; s < p.s; ++s) {
      int const nw = pw0 - s * p.dilation_w;
      if (nw < 0) break;
      int out_q = nw;
      if (strided_w) {
        detail::ConvDivided const d = detail::conv_divided(nw, kp.div_stride[0]);
        if (d.rem != 0) continue;
        out_q = d.quo;
      }
      if (out_q >= p.q) continue;
      float const* const f = frow + s * Channels;
      detail::depthwise_fma<Element, Vec>(acc, dyrow + out_q * p.y_stride[3], f);
    }
  }

  std::int64_t const offset = px.n * p.x_stride[0] + px.i1 * p.x_stride[2] + px.i0 * p.x_stride[3] + c;
  int const cols = p.c - c < Vec ? p.c - c : Vec;
  detail::ConvEpilogueOps const ops{p.alpha, p.beta, p.bias, p.activation};
  Element const* const residual = static_cast<Element const*>(p.residual);
  detail::conv_store_chunk<Element>(ops, acc, static_cast<Element*>(p.out) + offset, residual ? residual + offset : nullptr, c,
                                    cols, kp.out_vec, kp.residual_vec);
#endif
}

}  // namespace tessel::kernel
