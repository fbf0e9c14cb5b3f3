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
// a ring of kStages), warpgroups 1 and 2 the consumers, consumer c taking the tile's rows 2c and
// 2c + 1 (positions [128c, 128c + 128)): per tap four wgmma m64n128k16 (A: that tap's filters, 64
// filters x 64 channels; B: 128 positions x 64 channels), 36 in all, into 64 fp32 accumulators a
// thread; then alpha * acc, rounded, is staged transposed (pixel-major, its 16-byte channel chunks
// swizzled by the pixel) and written out 16 bytes at a time for the positions inside the image.
//   e.g. n 128, 56x56: 14 tiles an image, 1792 tiles on 132 SMs; 56 of 64 positions a row kept.
// The operands are read through raw wgmma descriptors, not partitioned tensors: a tap's B is a
// descriptor moved by rows, which no tile-shaped partition expresses. Its ring is two pairs of
// mbarriers, not pipeline/sm90_pipeline.hpp's TmaPipeline, and its tile walk a stride over tile
// indices, not schedule/'s persistent scheduler: moving both onto tessel's pieces is part of making
// it the selection's pick (docs/conv.md). Names: docs/glossary.md.
#pragma once

#include <tessel/arch/sm90_cluster.hpp>
#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/arch/sm90_copy_tma_ops.hpp>
#include <tessel/arch/sm90_mbarrier.hpp>
#include <tessel/arch/sm90_mma_wgmma.hpp>
#include <tessel/arch/sm90_mma_wgmma_ops.hpp>
#include <tessel/config.hpp>
#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/half.hpp>

#include <cstdint>
#include <type_traits>

namespace tessel::kernel {

// The problem the kernel takes (the host checks it: src/conv/sm90_conv_halo.cu): fprop, 2-D,
// 3x3, pad 1, stride 1, dilation 1, C = K = 64, groups 1, q <= kSm90HaloPitch - 2; x's pixels
// and y's rows 16-byte aligned.
inline constexpr int kSm90HaloPitch = 64;   // pixel positions a window row (and an output row)
inline constexpr int kSm90HaloRowsOut = 4;  // output rows a tile: two per consumer warpgroup

struct Sm90HaloConvParams {
  TmaDescriptor x_map;      // x as (C 64, W, H, N), box (64, kPitch, kRowsOut + 2, 1), 128-byte swizzle, zero fill
  TmaDescriptor w_map;      // the filters as (9 * 64, K 64), box (64, 64), 128-byte swizzle
  void* y;                  // y [n][p][q][64]
  long long y_stride[3];    // elements between images, rows and pixels of y
  int n, p, q;              // y's extents (p = h, q = w)
  float alpha;
};

namespace detail {

template <class Element>
struct Sm90HaloConvStorage {
  static constexpr int Stages = 2;
  static constexpr int WindowRows = (kSm90HaloRowsOut + 2) * kSm90HaloPitch;
  // Rows a tap's operand may reach past the window: positions whose q + s passes the row's end
  // read the next row's first pixels, or these (outputs outside the image, never stored).
  static constexpr int Slack = 8;
  static constexpr std::uint32_t WindowBytes = WindowRows * 128;
  alignas(1024) Element filters[9][64 * 64];                 // per tap (K 64, C 64), K-major, 128-byte swizzle
  alignas(1024) Element window[Stages][(WindowRows + Slack) * 64];  // (positions, C 64), the same layout
  alignas(1024) Element out[2][128 * 64];                    // per consumer (positions 128, K 64), chunks swizzled
  std::uint64_t full[Stages], empty[Stages], filters_full;
};

template <class Element>
using Sm90HaloMma = std::conditional_t<std::is_same_v<Element, half_t>, SM90_64x128x16_F32F16F16_SS<0, 0>,
                                       SM90_64x128x16_F32BF16BF16_SS<0, 0>>;

template <class Element>
TESSEL_DEVICE Element sm90_halo_round(float v) {
  if constexpr (std::is_same_v<Element, half_t>) return half_t(v);
  else return bfloat16_t(v);
}

}  // namespace detail

// The shared memory a launch asks for: the storage and room to align it to 1024 bytes.
template <class Element>
inline constexpr int kSm90HaloSmemBytes = int(sizeof(detail::Sm90HaloConvStorage<Element>)) + 1024;

// Persistent: CTA b takes tiles b, b + gridDim.x, ... of n * ceil(p / kRowsOut), image-major.
template <class Element>
__global__ void __launch_bounds__(384, 1) sm90_halo_conv_kernel(__grid_constant__ Sm90HaloConvParams const p) {
#if defined(TESSEL_ARCH_SM90A)
  using Storage = detail::Sm90HaloConvStorage<Element>;
  constexpr int Stages = Storage::Stages, Pitch = kSm90HaloPitch, RowsOut = kSm90HaloRowsOut;
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
    warpgroup_reg_alloc<232>();
    using Mma = detail::Sm90HaloMma<Element>;
    int const consumer = warpgroup - 1, warp = wg_thread / 32, lane = wg_thread % 32;
    mbarrier_wait(&s.filters_full, 0);
    // (K 64, C 64) per tap, the taps 8 KiB apart
    std::uint64_t const desc_filters = wgmma_desc_k_major_sw128(s.filters[0]);
    Element* const out = s.out[consumer];
    int it = 0;
    for (long long t = blockIdx.x; t < tiles; t += gridDim.x, ++it) {
      int const st = it % Stages, round = it / Stages;
      int const n = int(t / groups), p0 = int(t % groups) * RowsOut;
      mbarrier_wait(&s.full[st], round & 1);
      // (WindowRows + Slack, C 64), a row 128 bytes
      std::uint64_t const desc_window = wgmma_desc_k_major_sw128(s.window[st]);
      float acc[64];  // (64 filters, 128 positions) as wgmma m64n128's accumulator fragment
      wgmma_fence_operand(acc);
      wgmma_fence();
      TESSEL_UNROLL
      for (int tap = 0; tap < 9; ++tap) {
        int const row = 128 * consumer + (tap / 3) * Pitch + tap % 3;  // the tap's first window row
        TESSEL_UNROLL
        for (int kk = 0; kk < 4; ++kk)  // 16 channels (32 bytes of a swizzled row) a wgmma
          Mma::fma(wgmma_desc_advance(desc_filters, std::uint32_t(tap * 512 + 2 * kk)),
                   wgmma_desc_advance(desc_window, std::uint32_t(row * 8 + 2 * kk)), acc, (tap | kk) != 0);
      }
      wgmma_commit_group();
      wgmma_wait_group<0>();
      wgmma_fence_operand(acc);
      if (lane == 0) mbarrier_arrive(&s.empty[st]);

      // Epilogue. Thread (warp, lane) holds filters m = 16 warp + lane / 4 (+ 8) at positions
      // 8j + 2 (lane % 4) (+ 1); staged as out[pos][m], the 8-filter chunk index XOR pos % 8.
      named_barrier_sync(1 + consumer, 128);  // this consumer's previous copy-out has read `out`
      TESSEL_UNROLL
      for (int i = 0; i < 64; ++i) {
        int const m = 16 * warp + 8 * ((i >> 1) & 1) + lane / 4;
        int const pos = 8 * (i >> 2) + 2 * (lane % 4) + (i & 1);
        out[pos * 64 + (m ^ ((pos & 7) << 3))] = detail::sm90_halo_round<Element>(p.alpha * acc[i]);
      }
      named_barrier_sync(1 + consumer, 128);
      Element* const y = static_cast<Element*>(p.y) + n * p.y_stride[0];
      for (int j = wg_thread; j < 128 * 8; j += 128) {
        int const pos = j / 8, chunk = j % 8, q = pos % Pitch, row = p0 + 2 * consumer + pos / Pitch;
        if (q < p.q && row < p.p) {
          uint4 const v = *reinterpret_cast<uint4 const*>(&out[pos * 64 + ((chunk ^ (pos & 7)) << 3)]);
          *reinterpret_cast<uint4*>(y + row * p.y_stride[1] + q * p.y_stride[2] + chunk * 8) = v;
        }
      }
    }
  }
#else
  (void)p;
  tessel::detail::arch_unavailable("sm90_halo_conv_kernel (wgmma and setmaxnreg need sm_90a)");
#endif
}

}  // namespace tessel::kernel
