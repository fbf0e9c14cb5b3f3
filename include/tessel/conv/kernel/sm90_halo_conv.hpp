// tessel/conv/kernel/sm90_halo_conv.hpp -- the sm_90a 3x3 forward convolution of 64 channels into
// 64 filters through a halo window: each tile's input rows arrive once, and the nine taps are the
// window's rows read at nine offsets.
//
// The implicit GEMM (kernel/sm90_gemm_producer_im2col.hpp) copies a tile's pixels again for every
// tap: at C = K = 64 that is 40 KiB of shared-memory fill per 2^20 MACs, and the copies, not the
// tensor cores, set its pace. Here a tile is kRowsOut output rows of one image, each row kPitch
// pixel positions wide (the image's q <= kPitch - 2 pixels, the rest discarded). One TMA tiled
// load brings the rows the tile's outputs read -- kRowsOut + 2 input rows of kPitch pixels from
// column -1, the pad rows and columns zero-filled by the unit -- as a K-major operand in the
// 128-byte swizzle, a pixel a 128-byte row:
//
//   window row (i + 1 + (r - 1)) * kPitch + (q + 1 + (s - 1))  holds x[n][p0 + i + r - 1][q + s - 1]
//
// so the B operand of tap (r, s) for the outputs at positions pos = i * kPitch + q is the window's
// rows [pos + r * kPitch + s, ...): one descriptor moved by r * kPitch + s rows. A descriptor of
// this layout may start at any row (the unit swizzles by the absolute address; gpu test
// Sm90Atoms.BOperandAtAnyRow), which is what makes the taps free. The 9 taps' filters (64 x 64
// each, K-major) stay in shared memory for the whole persistent CTA.
//
// 384 threads: warpgroup 0 the producer (one thread: the filters once, then a window per tile into
// a ring of three), warpgroups 1 and 2 the consumers, consumer c taking the tile's rows 2c and
// 2c + 1 (positions [128c, 128c + 128)): per tap four wgmma m64n128k16 (A: that tap's filters, 64
// filters x 64 channels; B: 128 positions x 64 channels), 36 in all, into 64 fp32 accumulators a
// thread. A consumer holds two sets of accumulators and keeps one tile's wgmmas in flight while
// it writes out the tile before, straight from the registers: alpha, beta * residual, bias,
// activation, one rounding, a 16-bit store for each output inside the image. Shared memory holds
// the filters (72 KiB) and three windows (49 KiB each) and nothing else: a third window in flight
// is worth more than staging the stores (on the H200 the windows' loads, not the stores, held a
// ring of two back; docs/conv.md has the measurements).
//   e.g. n 128, 56x56: 14 tiles an image, 1792 tiles on 132 SMs; 56 of 64 positions a row kept.
// The operands are read through raw wgmma descriptors, not partitioned tensors: a tap's B is a
// descriptor moved by rows, which no tile-shaped partition expresses. Its ring is mbarrier pairs,
// not pipeline/sm90_pipeline.hpp's TmaPipeline, and its tile walk a stride over tile indices, not
// schedule/'s persistent scheduler: one producer thread and one window a tile need neither's
// generality (docs/conv.md). Names: docs/glossary.md.
#pragma once

#include <tessel/arch/sm90_cluster.hpp>
#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/arch/sm90_copy_tma_ops.hpp>
#include <tessel/arch/sm90_mbarrier.hpp>
#include <tessel/arch/sm90_mma_wgmma.hpp>
#include <tessel/arch/sm90_mma_wgmma_ops.hpp>
#include <tessel/config.hpp>
#include <tessel/conv/kernel/sm80_conv_epilogue.hpp>
#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/half.hpp>

#include <cstdint>
#include <type_traits>

namespace tessel::kernel {

// The problem the kernel takes (the host checks it: src/conv/sm90_conv_halo.cu): fprop, 2-D,
// 3x3, pad 1, stride 1, dilation 1, C = K = 64, groups 1, q <= kSm90HaloPitch - 2; x's pixels,
// y's and the residual's rows 16-byte aligned.
inline constexpr int kSm90HaloPitch = 64;   // pixel positions a window row (and an output row)
inline constexpr int kSm90HaloRowsOut = 4;  // output rows a tile: two per consumer warpgroup

struct Sm90HaloConvParams {
  TmaDescriptor x_map;      // x as (C 64, W, H, N), box (64, kPitch, kRowsOut + 2, 1), 128-byte swizzle, zero fill
  TmaDescriptor w_map;      // the filters as (9 * 64, K 64), box (64, 64), 128-byte swizzle
  void* y;                  // y [n][p][q][64]
  void const* residual;     // nullptr or y's shape and strides
  long long y_stride[3];    // elements between images, rows and pixels of y (and the residual)
  int n, p, q;              // y's extents (p = h, q = w)
  detail::ConvEpilogueOps ops;  // alpha, beta, bias, activation
};

namespace detail {

template <class Element>
struct Sm90HaloConvStorage {
  static constexpr int Stages = 3;
  static constexpr int WindowRows = (kSm90HaloRowsOut + 2) * kSm90HaloPitch;
  // Rows a tap's operand may reach past the window: positions whose q + s passes the row's end
  // read the next row's first pixels, or these (outputs outside the image, never stored).
  static constexpr int Slack = 8;
  static constexpr std::uint32_t WindowBytes = WindowRows * 128;
  alignas(1024) Element filters[9][64 * 64];                 // per tap (K 64, C 64), K-major, 128-byte swizzle
  alignas(1024) Element window[Stages][(WindowRows + Slack) * 64];  // (positions, C 64), the same layout
  std::uint64_t full[Stages], empty[Stages], filters_full;
};

template <class Element>
using Sm90HaloMma = std::conditional_t<std::is_same_v<Element, half_t>, SM90_64x128x16_F32F16F16_SS<0, 0>,
                                       SM90_64x128x16_F32BF16BF16_SS<0, 0>>;

// Issues the tile's 36 wgmmas (9 taps x 4 k16 steps) for consumer `consumer` on window stage
// `window` into acc, as one commit group.
template <class Element>
TESSEL_DEVICE inline void sm90_halo_mma(Sm90HaloConvStorage<Element>& s, int stage, int consumer, float (&acc)[64]) {
  using Mma = Sm90HaloMma<Element>;
  // (K 64, C 64) per tap, the taps 8 KiB apart; the window (WindowRows + Slack, C 64), a row 128 bytes
  std::uint64_t const desc_filters = wgmma_desc_k_major_sw128(s.filters[0]);
  std::uint64_t const desc_window = wgmma_desc_k_major_sw128(s.window[stage]);
  wgmma_fence_operand(acc);
  wgmma_fence();
  TESSEL_UNROLL
  for (int tap = 0; tap < 9; ++tap) {
    int const row = 128 * consumer + (tap / 3) * kSm90HaloPitch + tap % 3;  // the tap's first window row
    TESSEL_UNROLL
    for (int kk = 0; kk < 4; ++kk)  // 16 channels (32 bytes of a swizzled row) a wgmma
      Mma::fma(wgmma_desc_advance(desc_filters, std::uint32_t(tap * 512 + 2 * kk)),
               wgmma_desc_advance(desc_window, std::uint32_t(row * 8 + 2 * kk)), acc, (tap | kk) != 0);
  }
  wgmma_commit_group();
}

// Writes a finished tile's accumulators out: the consumer's two output rows p0 + 2 consumer + h.
// Thread (warp, lane) holds filters m = 16 warp + lane / 4 and m + 8 at positions 8j + 2 (lane % 4)
// and that + 1 (acc[4j + 2e + b]: filter m + 8e, position + b); positions [64h, 64h + 64) are
// output row h. Fused: beta * residual, bias (bias0, bias8: of filters m and m + 8) and the
// activation; without them, alpha * acc alone. Offsets inside an image are 32-bit (the host's rule).
template <class Element, bool Fused>
TESSEL_DEVICE inline void sm90_halo_epilogue(Sm90HaloConvParams const& p, float const (&acc)[64], float bias0, float bias8,
                                             int consumer, int n, int p0) {
  int const wg_thread = int(threadIdx.x) % 128, lane = wg_thread % 32;
  long long const first = n * p.y_stride[0] + 16 * (wg_thread / 32) + lane / 4;  // y's offset of (n, 0, 0, m)
  Element* const y = static_cast<Element*>(p.y) + first;
  Element const* const residual = Fused && p.residual ? static_cast<Element const*>(p.residual) + first : nullptr;
  bool const read_residual = Fused && p.residual != nullptr && p.ops.beta != 0.0f;
  int const row_stride = int(p.y_stride[1]), pixel_stride = int(p.y_stride[2]);
  TESSEL_UNROLL
  for (int h = 0; h < 2; ++h) {
    int const row = p0 + 2 * consumer + h;
    if (row >= p.p) break;
    TESSEL_UNROLL
    for (int j = 0; j < 8; ++j) {
      TESSEL_UNROLL
      for (int b = 0; b < 2; ++b) {
        int const q = 8 * j + 2 * (lane % 4) + b;
        if (q < p.q) {
          int const at = row * row_stride + q * pixel_stride;
          float v[2] = {p.ops.alpha * acc[4 * (8 * h + j) + b], p.ops.alpha * acc[4 * (8 * h + j) + 2 + b]};
          if constexpr (Fused) {
            if (read_residual) {
              v[0] += p.ops.beta * conv_to_f32(residual[at]);
              v[1] += p.ops.beta * conv_to_f32(residual[at + 8]);
            }
            v[0] += bias0, v[1] += bias8;
            if (p.ops.act != ConvActivation::none) v[0] = conv_activate(v[0], p.ops.act), v[1] = conv_activate(v[1], p.ops.act);
          }
          y[at] = conv_from_f32<Element>(v[0]);
          y[at + 8] = conv_from_f32<Element>(v[1]);
        }
      }
    }
  }
}

}  // namespace detail

// The shared memory a launch asks for: the storage and room to align it to 1024 bytes.
template <class Element>
inline constexpr int kSm90HaloSmemBytes = int(sizeof(detail::Sm90HaloConvStorage<Element>)) + 1024;

// Persistent: CTA b takes tiles b, b + gridDim.x, ... of n * ceil(p / kRowsOut), image-major.
// Fused: the epilogue reads the residual, bias and activation of p.ops (else alpha alone).
template <class Element, bool Fused>
__global__ void __launch_bounds__(384, 1) sm90_halo_conv_kernel(__grid_constant__ Sm90HaloConvParams const p) {
#if defined(TESSEL_ARCH_SM90A)
  using Storage = detail::Sm90HaloConvStorage<Element>;
  constexpr int Stages = Storage::Stages, RowsOut = kSm90HaloRowsOut;
  extern __shared__ char smem_raw[];
  Storage& s = *reinterpret_cast<Storage*>((reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t(1023));
  int const warpgroup = __shfl_sync(0xffffffffu, int(threadIdx.x) / 128, 0), wg_thread = int(threadIdx.x) % 128;
  int const groups = (p.p + RowsOut - 1) / RowsOut;
  long long const tiles = (long long)p.n * groups;
  if (threadIdx.x == 0) {
    for (int i = 0; i < Stages; ++i) {
      mbarrier_init(&s.full[i], 1);
      mbarrier_init(&s.empty[i], 8);  // the 8 consumer warps
    }
    mbarrier_init(&s.filters_full, 1);
    mbarrier_init_fence();
  }
  __syncthreads();

  if (warpgroup == 0) {
    // ---- producer ------------------------------------------------------------------------------
    warpgroup_reg_dealloc<40>();
    if (wg_thread == 0) {
      mbarrier_arrive_expect_tx(&s.filters_full, 9 * 64 * 64 * int(sizeof(Element)));
      for (int tap = 0; tap < 9; ++tap) SM90_TMA_LOAD::copy(&p.w_map, &s.filters_full, s.filters[tap], {tap * 64, 0});
      int it = 0;
      for (long long t = blockIdx.x; t < tiles; t += gridDim.x, ++it) {
        int const st = it % Stages, round = it / Stages;
        mbarrier_wait(&s.empty[st], (round & 1) ^ 1);
        int const n = int(t / groups), p0 = int(t % groups) * RowsOut;
        mbarrier_arrive_expect_tx(&s.full[st], Storage::WindowBytes);
        SM90_TMA_LOAD::copy(&p.x_map, &s.full[st], s.window[st], {0, -1, p0 - 1, n});
      }
    }
  } else {
    // ---- consumers -----------------------------------------------------------------------------
    // Tile `it` of this CTA runs on window stage it % Stages into accumulators a (it even) or b
    // (odd): a tile's wgmmas are issued before the tile before it is written out.
    warpgroup_reg_alloc<232>();
    int const consumer = warpgroup - 1, lane = wg_thread % 32;
    int const m = 16 * (wg_thread / 32) + lane / 4;  // this thread's first filter
    float const bias0 = Fused && p.ops.bias ? p.ops.bias[m] : 0.0f, bias8 = Fused && p.ops.bias ? p.ops.bias[m + 8] : 0.0f;
    mbarrier_wait(&s.filters_full, 0);
    auto const issue = [&](int it, float(&acc)[64]) {
      mbarrier_wait(&s.full[it % Stages], (it / Stages) & 1);
      detail::sm90_halo_mma(s, it % Stages, consumer, acc);
    };
    auto const retire = [&](int it, long long t, float(&acc)[64]) {  // after its wgmmas completed
      wgmma_fence_operand(acc);
      if (lane == 0) mbarrier_arrive(&s.empty[it % Stages]);
      detail::sm90_halo_epilogue<Element, Fused>(p, acc, bias0, bias8, consumer, int(t / groups), int(t % groups) * RowsOut);
    };
    // Every path into the loop's head has tile t's wgmmas (into acc_a) in flight and nothing else,
    // and every exit drains them first: the shape ptxas needs to leave the wgmmas asynchronous.
    float acc_a[64], acc_b[64];  // (64 filters, 128 positions) as wgmma m64n128's accumulator fragment
    long long t = blockIdx.x;    // < tiles: the grid is at most the tile count
    int it = 0;
    issue(it, acc_a);
    for (;;) {
      long long const t1 = t + gridDim.x;
      if (t1 >= tiles) {
        wgmma_wait_group<0>();
        retire(it, t, acc_a);
        break;
      }
      issue(it + 1, acc_b);
      wgmma_wait_group<1>();
      retire(it, t, acc_a);
      long long const t2 = t1 + gridDim.x;
      if (t2 >= tiles) {
        wgmma_wait_group<0>();
        retire(it + 1, t1, acc_b);
        break;
      }
      issue(it + 2, acc_a);
      wgmma_wait_group<1>();
      retire(it + 1, t1, acc_b);
      t = t2, it += 2;
    }
  }
#else
  (void)p;
  tessel::detail::arch_unavailable("sm90_halo_conv_kernel (wgmma and setmaxnreg need sm_90a)");
#endif
}

}  // namespace tessel::kernel
