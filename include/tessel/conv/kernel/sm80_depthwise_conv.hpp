// tessel/conv/kernel/sm80_depthwise_conv.hpp -- direct depthwise convolution (groups == c == k,
// 2-D fprop, any filter size, stride, padding and dilation): each output channel reads one input
// channel, so there is no reduction over channels to hand to a tensor core; the kernel is bound by
// memory bandwidth, and its job is to read x about once from DRAM.
//
//   y[n][p][q][c] = act(alpha * sum_{r,s} x[n][p*sh - ph + r*dh][q*sw - pw + s*dw][c] * w[c][r][s]
//                       + beta * residual + bias[c])
//
// A CTA of 256 threads owns 64 channels (one channel block) and a run of consecutive output
// pixels (flattened n, p, q). Its filters are staged once in shared memory as fp32
// [R*S][64] (tap-major, so the Vec channels of one thread are consecutive floats). Each thread
// owns Vec consecutive channels of one pixel (Vec 8: one 16-byte load per tap, channels and strides
// multiples of 8; Vec 1: one element per tap, any channel count) and accumulates in fp32 over the
// taps, skipping the ones that fall into the padding. Neighbouring pixels of a CTA share most of
// their input rows, which the loads find in L1 (ld.global.nc).
//   e.g. C = 256, 3x3: grid (ceil(N*P*Q / 32), 4), 32 pixels x 64 channels per CTA, 2.3 KiB of filters.
// The backward passes: sm80_depthwise_dgrad.hpp (the same layout over input pixels) and
// sm80_depthwise_wgrad.hpp (a split sum over the output pixels).
#pragma once

#include <tessel/arch/arch_config.hpp>
#include <tessel/config.hpp>
#include <tessel/conv/kernel/sm80_conv_epilogue.hpp>
#include <tessel/conv/kernel/sm80_conv_kernel_params.hpp>

#include <cstdint>

namespace tessel::kernel {

template <class Element_, int Vec_>
struct Sm80DepthwiseConfig {
  using Element = Element_;
  static constexpr int Vec = Vec_;
  static constexpr int Threads = 256;
  static constexpr int Channels = 64;                               // channels per CTA
  static constexpr int ThreadsPerPixel = Channels / Vec;
  static constexpr int Pixels = Threads / ThreadsPerPixel;          // pixels per CTA
  static_assert(Vec_ == 8 || Vec_ == 1, "Sm80DepthwiseConfig: a thread owns 8 channels (16-byte loads) or 1");
  static_assert(sizeof(Element_) == 2, "Sm80DepthwiseConfig: bfloat16_t or half_t");
  // Dynamic shared memory for the filters of an R x S window.
  static constexpr int smem_bytes(int taps) { return taps * Channels * int(sizeof(float)); }
};

namespace detail {

// Eight 16-bit elements of a 16-byte word as floats.
template <class Element>
TESSEL_DEVICE inline void conv_unpack8(uint4 const& v, float (&f)[8]) {
  Element e[8];
  *reinterpret_cast<uint4*>(e) = v;
  TESSEL_UNROLL
  for (int i = 0; i < 8; ++i) f[i] = conv_to_f32(e[i]);
}

// The filters of channels [c0, c0 + Channels) as fp32 [R*S][Channels] in shared memory (tap-major,
// so a thread's Vec channels are consecutive floats; channels past C are zero). Every thread of the
// CTA calls it (thread index tid); it ends in __syncthreads().
template <class Config>
TESSEL_DEVICE void depthwise_stage_filters(Sm80ConvParams const& p, int c0, int tid, float* filt) {
  using Element = typename Config::Element;
  constexpr int Channels = Config::Channels;
  int const taps = p.r * p.s;
  Element const* const w = static_cast<Element const*>(p.filter);
  for (int i = tid; i < taps * Channels; i += Config::Threads) {
    int const tap = i / Channels, cc = i - tap * Channels;
    int const c = c0 + cc;
    filt[i] = c < p.c ? conv_to_f32(w[std::int64_t(c) * p.w_stride_k + tap]) : 0.0f;
  }
  __syncthreads();
}

// acc[0, Vec) += the Vec channels at src (loaded through the read-only path) times their fp32 filter
// weights f[0, Vec): one 16-byte load for Vec 8, one element for Vec 1.
template <class Element, int Vec>
TESSEL_DEVICE inline void depthwise_fma(float (&acc)[8], Element const* src, float const* f) {
  if constexpr (Vec == 8) {
    float v[8];
    conv_unpack8<Element>(__ldg(reinterpret_cast<uint4 const*>(src)), v);
    float4 const f0 = *reinterpret_cast<float4 const*>(f), f1 = *reinterpret_cast<float4 const*>(f + 4);
    acc[0] += v[0] * f0.x, acc[1] += v[1] * f0.y, acc[2] += v[2] * f0.z, acc[3] += v[3] * f0.w;
    acc[4] += v[4] * f1.x, acc[5] += v[5] * f1.y, acc[6] += v[6] * f1.z, acc[7] += v[7] * f1.w;
  } else {
    std::uint16_t const bits = __ldg(reinterpret_cast<unsigned short const*>(src));
    acc[0] += conv_to_f32(*reinterpret_cast<Element const*>(&bits)) * f[0];
  }
}

}  // namespace detail

// Grid (ceil(N*P*Q / Pixels), ceil(C / 64)), Config::Threads threads, smem_bytes(R*S) of dynamic
// shared memory. Uses kp.p, kp.gemm_m (= N*P*Q) and kp.div_px (Q, P, Z = 1); kp.out_vec and
// kp.residual_vec as for the implicit GEMM.
template <class Config>
__global__ void __launch_bounds__(Config::Threads) sm80_depthwise_conv_kernel(Sm80ConvKernelParams const kp) {
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
  detail::ConvPixel const px = detail::conv_pixel(kp, m);  // (n, 0, p, q)
  int const h0 = px.i1 * p.stride_h - p.pad_h, w0 = px.i0 * p.stride_w - p.pad_w;
  Element const* const xn = static_cast<Element const*>(p.x) + px.n * p.x_stride[0] + c;

  float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  TESSEL_NO_UNROLL
  for (int r = 0; r < p.r; ++r) {
    int const h = h0 + r * p.dilation_h;
    if (unsigned(h) >= unsigned(p.h)) continue;
    Element const* const xrow = xn + h * p.x_stride[2];
    float const* const frow = filt + r * p.s * Channels + cc;
    for (int s = 0; s < p.s; ++s) {
      int const wc = w0 + s * p.dilation_w;
      if (unsigned(wc) >= unsigned(p.w)) continue;
      float const* const f = frow + s * Channels;
      detail::depthwise_fma<Element, Vec>(acc, xrow + wc * p.x_stride[3], f);
    }
  }

  std::int64_t const offset = px.n * p.y_stride[0] + px.i1 * p.y_stride[2] + px.i0 * p.y_stride[3] + c;
  int const cols = p.c - c < Vec ? p.c - c : Vec;
  detail::ConvEpilogueOps const ops{p.alpha, p.beta, p.bias, p.activation};
  Element const* const residual = static_cast<Element const*>(p.residual);
  detail::conv_store_chunk<Element>(ops, acc, static_cast<Element*>(p.out) + offset, residual ? residual + offset : nullptr, c, cols,
                            kp.out_vec, kp.residual_vec);
#endif
}

}  // namespace tessel::kernel
