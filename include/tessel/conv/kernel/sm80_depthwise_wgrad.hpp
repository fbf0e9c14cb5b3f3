// tessel/conv/kernel/sm80_depthwise_wgrad.hpp -- direct depthwise weight gradient (groups == c == k,
// 2-D, any filter size, stride, padding and dilation): bound by memory bandwidth, its job is to
// read dy and x about once from DRAM.
//
//   dw[c][r][s] = act(alpha * sum_{n,p,q} dy[n][p][q][c] * x[n][p*sh - ph + r*dh][q*sw - pw + s*dw][c]
//                     + beta * residual)                    (taps in the padding add nothing)
//
// C*R*S outputs, each a sum over all N*P*Q output pixels, so the sum is split (the rule:
// tessel/conv/conv_depthwise_split.hpp) into slices of consecutive pixels:
//
//   pass 1, sm80_depthwise_wgrad_kernel   grid (channel blocks * tap groups, slices), 256 threads
//     A CTA owns 64 channels, up to Taps (9) taps and one slice of pixels. Each thread owns Vec
//     consecutive channels (Vec 8: 16-byte loads, channels and the strides of x and dy multiples of
//     8; Vec 1: any channel count) of one pixel lane, and walks the slice's pixels lane, lane +
//     Pixels, ...: per pixel it loads dy once and, for each of the CTA's taps that lands inside x,
//     the input pixel the tap reads (Vec 8: a filter row's three loads issued together, then their
//     products), accumulating Taps x Vec fp32 sums in registers. Neighbouring
//     pixels' taps read mostly the same rows of x, which the loads find in L1 (ld.global.nc). At
//     the end the pixel lanes are added -- by shuffles inside a warp (Vec 8: 4 lanes a warp), then
//     per warp (Vec 8) or lane (Vec 1) rows in shared memory, summed in row order -- and the CTA
//     writes its Taps x 64 sums: to partials[slice][tap][c] (fp32, kp.partial_ld = C floats a
//     row), or, when there is one slice, through the epilogue straight to dw.
//   pass 2, sm80_depthwise_wgrad_sum_kernel (only with more than one slice)
//     A CTA takes 32 outputs (tap, c) at a time, c fastest; each of its 8 warps adds every 8th
//     slice in slice order, then the 8 warp sums are added in warp order and the epilogue writes dw.
// Every sum runs in a fixed order (no atomics): the result is the same bits on every run with the
// same slice count (which follows the GPU's SM count).
//   e.g. n128 28x28 C256 3x3 on 132 SMs: 4 channel blocks x 1 tap group; 100352 pixels in 264
//        slices of 381 (the last 149): 1056 CTAs, 2.4 MB of partials (264 x 2304 floats); pass 2
//        runs 72 CTAs, each warp adding 33 slices of 32 outputs.
//   e.g. 7x7 (49 taps): 6 tap groups (5 of 9, one of 4), each CTA re-reads its slice of dy and x
//        (from L2: the tap groups of a slice are neighbours in blockIdx.x).
#pragma once

#include <tessel/arch/arch_config.hpp>
#include <tessel/config.hpp>
#include <tessel/conv/kernel/sm80_conv_epilogue.hpp>
#include <tessel/conv/kernel/sm80_conv_kernel_params.hpp>
#include <tessel/conv/kernel/sm80_depthwise_conv.hpp>

#include <cstdint>
#include <type_traits>

namespace tessel::kernel {

// Sm80DepthwiseConfig plus the taps a CTA accumulates (Taps x Vec fp32 registers a thread) and how
// its pixel lanes are added at the end.
template <class Element_, int Vec_, int Taps_>
struct Sm80DepthwiseWgradConfig : Sm80DepthwiseConfig<Element_, Vec_> {
  using Base = Sm80DepthwiseConfig<Element_, Vec_>;
  static constexpr int Taps = Taps_;
  // Taps whose loads a thread issues together before their products: all of them at Vec 1; at Vec
  // 8 a filter row of three, which keeps the CTA within 128 registers a thread (two CTAs an SM).
  static constexpr int Batch = Vec_ == 8 && Taps_ % 3 == 0 ? 3 : Taps_;
  // Pixel lanes a warp holds (added by shuffles), and the rows of per-warp or per-lane sums then
  // left for shared memory.
  static constexpr int LanesPerWarp = Base::ThreadsPerPixel >= 32 ? 1 : 32 / Base::ThreadsPerPixel;
  static constexpr int Rows = Base::Pixels / LanesPerWarp;
  static_assert(Taps_ >= 1 && Taps_ <= 16, "Sm80DepthwiseWgradConfig: a thread keeps Taps x Vec sums in registers; use 1..16 taps");
  static_assert(Base::ThreadsPerPixel >= 32 || 32 % Base::ThreadsPerPixel == 0,
                "Sm80DepthwiseWgradConfig: a pixel lane must fill whole warps or divide one");
};

namespace detail {

// dw[c][tap] = act(alpha * v + beta * residual) (wgrad has no bias).
template <class Element>
TESSEL_DEVICE inline void depthwise_wgrad_store(Sm80ConvParams const& p, float v, int c, int tap) {
  float acc[8] = {v, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  std::int64_t const offset = std::int64_t(c) * p.w_stride_k + tap;
  Element const* const residual = static_cast<Element const*>(p.residual);
  ConvEpilogueOps const ops{p.alpha, p.beta, nullptr, p.activation};
  conv_store_chunk<Element>(ops, acc, static_cast<Element*>(p.out) + offset, residual ? residual + offset : nullptr, 0, 1, false,
                            false);
}

}  // namespace detail

// Pass 1 (file comment). Grid (ceil(C / 64) * ceil(R*S / Taps), kp.slices), Config::Threads
// threads, static shared memory only. Uses kp.p, kp.gemm_k (= N*P*Q), kp.div_px (Q, P, Z = 1),
// kp.k_tiles_per_slice (pixels per slice: this kernel's k-tile is one pixel), kp.partials and
// kp.partial_ld (== C). Pre: kp.slices == 1 when kp.partials is null.
template <class Config>
__global__ void __launch_bounds__(Config::Threads, 2) sm80_depthwise_wgrad_kernel(Sm80ConvKernelParams const kp) {
#if defined(TESSEL_ARCH_SM80)
  using Element = typename Config::Element;
  constexpr int Vec = Config::Vec, Channels = Config::Channels, Taps = Config::Taps, Tpp = Config::ThreadsPerPixel;
  constexpr int Batch = Config::Batch;
  using Raw = std::conditional_t<Vec == 8, uint4, unsigned short>;  // one load: Vec channels
  __shared__ __align__(16) float red[Config::Rows][Taps][Channels];
  Sm80ConvParams const& p = kp.p;
  int const tid = int(threadIdx.x);
  int const taps = p.r * p.s;
  int const tap_groups = (taps + Taps - 1) / Taps;
  int const block = int(blockIdx.x) / tap_groups;
  int const t0 = (int(blockIdx.x) - block * tap_groups) * Taps;  // the CTA's first tap
  int const ntaps = taps - t0 < Taps ? taps - t0 : Taps;
  int const c0 = block * Channels;
  int const slice = int(blockIdx.y);
  int const lane = tid / Tpp;               // pixel lane
  int const cc = (tid % Tpp) * Vec;         // first channel of the thread, in the block
  int const c = c0 + cc;

  // The CTA's taps as input offsets from (p*sh, q*sw) -- (r*dh - ph, s*dw - pw) -- in shared memory
  // (read as broadcasts; registers go to the sums). Slots past ntaps are never read.
  __shared__ int2 tap_offset[Taps];
  if (tid < ntaps) {
    int const tap = t0 + tid, r = tap / p.s;
    tap_offset[tid] = make_int2(r * p.dilation_h - p.pad_h, (tap - r * p.s) * p.dilation_w - p.pad_w);
  }
  __syncthreads();

  float acc[Taps][Vec];
  TESSEL_UNROLL
  for (int j = 0; j < Taps; ++j) {
    TESSEL_UNROLL
    for (int e = 0; e < Vec; ++e) acc[j][e] = 0.0f;
  }
  int const begin = slice * kp.k_tiles_per_slice;
  int const end = kp.gemm_k - begin < kp.k_tiles_per_slice ? kp.gemm_k : begin + kp.k_tiles_per_slice;
  if (c < p.c) {  // (every thread stays for the shuffles below)
    Element const* const x = static_cast<Element const*>(p.x) + c;
    Element const* const dy = static_cast<Element const*>(p.y) + c;
    TESSEL_NO_UNROLL
    for (int m = begin + lane; m < end; m += Config::Pixels) {
      detail::ConvPixel const px = detail::conv_pixel(kp, m);  // (n, 0, p, q)
      float g[Vec];
      Element const* const dyp = dy + px.n * p.y_stride[0] + px.i1 * p.y_stride[2] + px.i0 * p.y_stride[3];
      if constexpr (Vec == 8) {
        detail::conv_unpack8<Element>(__ldg(reinterpret_cast<uint4 const*>(dyp)), g);
      } else {
        std::uint16_t const bits = __ldg(reinterpret_cast<unsigned short const*>(dyp));
        g[0] = detail::conv_to_f32(*reinterpret_cast<Element const*>(&bits));
      }
      int const h0 = px.i1 * p.stride_h, w0 = px.i0 * p.stride_w;
      Element const* const xn = x + px.n * p.x_stride[0];
      // The loads of Config::Batch taps first (in flight together), then their products; a tap in
      // the padding neither loads nor adds (an infinite dy times a zero would be NaN).
      TESSEL_UNROLL
      for (int j0 = 0; j0 < Taps; j0 += Batch) {
        Raw raw[Batch];
        bool inside[Batch];
        TESSEL_UNROLL
        for (int b = 0; b < Batch; ++b) {
          int const j = j0 + b;
          inside[b] = false;
          if (j >= ntaps) continue;
          int2 const off = tap_offset[j];
          int const h = h0 + off.x, w = w0 + off.y;
          inside[b] = unsigned(h) < unsigned(p.h) && unsigned(w) < unsigned(p.w);
          if (inside[b]) raw[b] = __ldg(reinterpret_cast<Raw const*>(xn + h * p.x_stride[2] + w * p.x_stride[3]));
        }
        TESSEL_UNROLL
        for (int b = 0; b < Batch; ++b) {
          if (!inside[b]) continue;
          float* const a = acc[j0 + b];
          if constexpr (Vec == 8) {
            float v[8];
            detail::conv_unpack8<Element>(raw[b], v);
            TESSEL_UNROLL
            for (int e = 0; e < 8; ++e) a[e] += g[e] * v[e];
          } else {
            a[0] += g[0] * detail::conv_to_f32(*reinterpret_cast<Element const*>(&raw[b]));
          }
        }
      }
    }
  }

  // The pixel lanes of a warp (Vec 8: lanes 8 threads apart), then the warps' rows in shared memory.
  TESSEL_UNROLL
  for (int off = Tpp; off < 32; off *= 2) {
    TESSEL_UNROLL
    for (int j = 0; j < Taps; ++j) {
      TESSEL_UNROLL
      for (int e = 0; e < Vec; ++e) acc[j][e] += __shfl_xor_sync(0xffffffffu, acc[j][e], off);
    }
  }
  if ((tid & 31) < Tpp) {
    int const row = lane / Config::LanesPerWarp;
    TESSEL_UNROLL
    for (int j = 0; j < Taps; ++j) {
      TESSEL_UNROLL
      for (int e = 0; e < Vec; ++e) red[row][j][cc + e] = acc[j][e];
    }
  }
  __syncthreads();
  for (int i = tid; i < Taps * Channels; i += Config::Threads) {
    int const j = i / Channels, ch = i - j * Channels;
    int const cw = c0 + ch;
    if (j >= ntaps || cw >= p.c) continue;
    float v = red[0][j][ch];
    TESSEL_UNROLL
    for (int row = 1; row < Config::Rows; ++row) v += red[row][j][ch];
    int const tap = t0 + j;
    if (kp.partials != nullptr)
      kp.partials[(std::int64_t(slice) * taps + tap) * kp.partial_ld + cw] = v;
    else
      detail::depthwise_wgrad_store<Element>(p, v, cw, tap);
  }
#endif
}

// Pass 2 (file comment): dw from the kp.slices partial sums. A CTA of SumThreads threads takes 32
// consecutive outputs at a time (tap-major, c fastest: flat index tap * C + c, the partials' layout
// with kp.partial_ld == C, so a warp reads 128 contiguous bytes a slice); its warp w adds slices
// w, w + SumWarps, ... in that order, and warp 0 adds the warps' sums in warp order and applies the
// epilogue. Any grid (the CTAs stride over the outputs). Pre: pass 1 of the same kp ahead of it on
// the stream.
inline constexpr int kSm80DepthwiseWgradSumThreads = 256;

template <class Element>
__global__ void __launch_bounds__(kSm80DepthwiseWgradSumThreads) sm80_depthwise_wgrad_sum_kernel(Sm80ConvKernelParams const kp) {
  constexpr int Warps = kSm80DepthwiseWgradSumThreads / 32;
  __shared__ float part[Warps][32];
  Sm80ConvParams const& p = kp.p;
  int const taps = p.r * p.s;
  int const warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  std::int64_t const outputs = std::int64_t(taps) * p.c;
  std::int64_t const slice_stride = std::int64_t(taps) * kp.partial_ld;
  for (std::int64_t first = std::int64_t(blockIdx.x) * 32; first < outputs; first += std::int64_t(gridDim.x) * 32) {
    std::int64_t const o = first + lane;
    float v = 0.0f;
    if (o < outputs) {
      float const* src = kp.partials + std::int64_t(warp) * slice_stride + o;
      for (int z = warp; z < kp.slices; z += Warps, src += Warps * slice_stride) v += __ldg(src);
    }
    part[warp][lane] = v;
    __syncthreads();
    if (warp == 0 && o < outputs) {
      v = part[0][lane];
      TESSEL_UNROLL
      for (int w = 1; w < Warps; ++w) v += part[w][lane];
      int const tap = int(o / p.c);
      detail::depthwise_wgrad_store<Element>(p, v, int(o - std::int64_t(tap) * p.c), tap);
    }
    __syncthreads();  // part is written again by the next round
  }
}

}  // namespace tessel::kernel
