// tessel/conv/kernel/sm90_conv_fprop.hpp -- the sm_90a implicit-GEMM forward convolution: the
// activation tile loaded by TMA im2col (or gathered by cp.async where the tensor map cannot express
// the problem), the filter tile by TMA, wgmma from shared memory; a persistent grid (one CTA per SM) walking
// 128 x BLK_N output tiles, the producer loading the next tile while the consumers store this one.
//
// The GEMM: M = N*Z*P*Q output pixels, N = K filters, GEMM-K = T*R*S*C walked as k-tiles of one
// filter tap x 64 channels (channels fastest, then s, r, t -- the filters' own order).
//
// The stride-1 data gradient runs as the same kernel (Config::Dgrad): dx is the forward
// convolution of dy with the filters flipped in every spatial dimension and transposed (C and K
// swap roles), padding (filter - 1) * dilation - pad. The host hands the kernel the problem in
// those terms (src/conv/sm90_conv_run.cpp, as_fprop): input dy, C = the filters' K, K = their C.
// The producer loads filter tap T*R*S - 1 - tap, and the B tile is read MN-major, since the
// filters' channels -- now the output channels -- are the contiguous dimension.
//
//   warpgroup 0, the producer (registers lowered to 72), per k-tile: wait for a free stage, load
//       the B tile -- BLK_N filters x the tap's 64 channels -- by TMA (filters past K and channels
//       past C read as zero), and the A tile -- the 128 output pixels' input rows at the tap --
//       in one of two ways, both into the 128-byte-swizzled layout wgmma's K-major descriptor reads
//       (chunk c of row r at c ^ (r % 8)):
//     TMA im2col (im2col_rank != 0): thread 0 issues one load of the activations' im2col tensor map
//       (src/conv/sm90_conv_run.cpp builds it: bounding box -pad .. extent - 1 + pad - (filter - 1)
//       * dilation, traversal stride the convolution's) from the tile's first output pixel with
//       the tap's offsets; the walk wraps across rows and images by itself and reads zeros in the
//       padding, past C and past the last image. The full barrier completes on the bytes alone.
//     cp.async gather (a corner or stride past the map's range): thread i copies 16-byte chunk
//       i % 8 of rows i / 8 + 16 j (j < 8), a warp four whole 128-byte pixel rows, zero-filled in
//       the padding, past C, or past M; then arrives on the stage's full barrier once its copies
//       have landed (cp.async.mbarrier.arrive.noinc): 128 arrivals and the TMA bytes.
//   warpgroups 1 and 2, the consumers (registers raised to 216): 64 rows each; per k-tile wait,
//       (after a gather) fence.proxy.async (the cp.async writes are generic-proxy writes, wgmma
//       reads through the async proxy), four wgmma m64 x BLK_N x k16, one k-tile of wgmmas in flight, free the
//       previous stage.
//   epilogue: act(alpha * acc + beta * residual + bias) from registers, two channels per store.
//
// What it takes (the host sends everything else to the sm_80 kernels, sm90_conv_takes): groups ==
// 1, C and K multiples of 8 and at least 64, every stride a multiple of 8 elements and every tensor
// 16-byte aligned, input heights and widths (and pads) below 2^15 (a row's h and w share a register).
#pragma once

#include <tessel/algorithm/gemm.hpp>
#include <tessel/arch/sm80_copy_cp_async.hpp>
#include <tessel/arch/sm90_cluster.hpp>
#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/arch/sm90_copy_tma_ops.hpp>
#include <tessel/arch/sm90_mbarrier.hpp>
#include <tessel/arch/sm90_mma_wgmma.hpp>
#include <tessel/atom/mma_traits_sm90.hpp>
#include <tessel/atom/sm90_wgmma_select.hpp>
#include <tessel/config.hpp>
#include <tessel/conv/kernel/sm80_conv_epilogue.hpp>
#include <tessel/conv/kernel/sm80_conv_params.hpp>
#include <tessel/gemm/collective/sm90_operand_tile.hpp>
#include <tessel/pipeline/sm90_pipeline.hpp>
#include <tessel/tensor/tensor.hpp>
#include <tessel/tiled/tiled_mma.hpp>

#include <cstdint>

namespace tessel::kernel {

// The kernel's parameters: the filters' tensor map -- (C, K, T*R*S) with C contiguous, boxes of 64
// channels x BLK_N filters, 128-byte swizzle -- the problem, and the tiling.
struct Sm90ConvParams {
  TmaDescriptor tma_w;
  TmaDescriptor tma_x;  // the activations' im2col tensor map, when im2col_rank != 0
  Sm80ConvParams c;
  int im2col_rank;  // 4 (2-D) or 5 (3-D): A loaded by TMA im2col; 0: gathered by cp.async
  int tiles;     // ceil(M / BLK_M) * n_tiles
  int n_tiles;   // ceil(K / BLK_N)
  int c_blocks;  // ceil(C / 64)
  int k_tiles;   // T*R*S * c_blocks
};

// One configuration: element type, the tile's width (output channels), whether it is the data
// gradient (filters read transposed and flipped, below), the pipeline depth (by default as many
// stages as fit 192 KiB: 4 at width 256, 6 at 128, 8 at 64).
//   e.g. Sm90ConvFpropConfig<bfloat16_t, 128>: 384 threads, 6 stages of 16 KiB A + 16 KiB B
template <class Element_, int BlkN_, bool Dgrad_ = false, int Stages_ = (BlkN_ >= 256 ? 4 : BlkN_ >= 128 ? 6 : 8)>
struct Sm90ConvFpropConfig {
  using Element = Element_;
  static constexpr int BlkM = 128, BlkN = BlkN_, BlkK = 64, Stages = Stages_;
  static constexpr bool Dgrad = Dgrad_;
  static constexpr int Threads = 384;
  static constexpr int ProducerRegisters = 72, ConsumerRegisters = 216;  // 128 x 72 + 256 x 216 <= 65536
  // fprop: B K-major (the filters' channels are the GEMM-K); dgrad: B MN-major (its GEMM-K is the
  // filters' K, its columns the channels, which are contiguous).
  using Mma = typename Sm90WgmmaOf<Element, BlkN>::template Transposed<0, Dgrad ? 1 : 0>;
  static constexpr int BoxRows = Dgrad ? BlkK : BlkN;  // the filters' TMA box: BoxRows filters x 64 channels
  static constexpr std::uint32_t ABytes = std::uint32_t(BlkM * BlkK * sizeof(Element));
  static constexpr std::uint32_t BBytes = std::uint32_t(BlkN * BlkK * sizeof(Element));

  struct SharedStorage {
    alignas(1024) Element a[Stages][BlkM * BlkK];
    alignas(1024) Element b[Stages][BlkN * BlkK];
    TmaPipeline<Stages> pipe;
  };
  static constexpr int SmemBytes = int(sizeof(SharedStorage)) + 1024;  // + the alignment of the base
};

// Output pixel m (of N*Z*P*Q, q fastest) as (n, z, p, q).
struct ConvOutputPixel {
  int n, z, p, q;
};
TESSEL_HOST_DEVICE inline ConvOutputPixel conv_output_pixel(Sm80ConvParams const& c, std::int64_t m) {
  ConvOutputPixel px;
  px.q = int(m % c.q);
  m /= c.q;
  px.p = int(m % c.p);
  m /= c.p;
  px.z = int(m % c.z);
  px.n = int(m / c.z);
  return px;
}

template <class Config>
__global__ void __launch_bounds__(Config::Threads, 1) sm90_conv_fprop_kernel(__grid_constant__ Sm90ConvParams const p) {
#if defined(TESSEL_ARCH_SM90A)
  using Element = typename Config::Element;
  constexpr int BlkM = Config::BlkM, BlkN = Config::BlkN, BlkK = Config::BlkK, Stages = Config::Stages;
  using OperandTile = collective::Sm90OperandTile<typename Config::Element, BlkK>;
  auto const mma = make_tiled_mma(typename Config::Mma{});  // one warpgroup: 64 x BLK_N x 16
  constexpr int ConsumerWarps = 8;
  extern __shared__ char smem_raw[];
  auto& smem = *reinterpret_cast<typename Config::SharedStorage*>((reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) &
                                                                  ~std::uintptr_t(1023));
  Sm80ConvParams const& c = p.c;
  int const tid = int(threadIdx.x);
  std::int64_t const rows = std::int64_t(c.n) * c.z * c.p * c.q;  // M
  // Tile t: filters from (t % n_tiles) * BLK_N, output pixels from (t / n_tiles) * BLK_M; the CTA
  // takes tiles blockIdx.x, + gridDim.x, ... (a grid of at most one CTA per SM).
  auto tile_n0 = [&](int t) { return (t % p.n_tiles) * BlkN; };
  auto tile_m0 = [&](int t) { return std::int64_t(t / p.n_tiles) * BlkM; };
  // The B tile of k-tile (cb, tap) for output channels from n0. fprop: one box of BLK_N filters x
  // the tap's 64 channels. dgrad: the filters' rows are the GEMM-K, so BLK_N / 64 boxes of 64
  // filters x 64 channels, one per 64 output channels, 64 x 128 bytes apart (the MN-major chunks),
  // at the flipped tap.
  int const taps = c.t * c.r * c.s;
  auto load_b = [&](std::uint64_t* full, int stage, int n0, int cb, int tap) {
    if constexpr (Config::Dgrad) {
      TESSEL_UNROLL
      for (int j = 0; j < BlkN / 64; ++j)
        SM90_TMA_LOAD::copy(&p.tma_w, full, smem.b[stage] + j * 64 * BlkK, {n0 + 64 * j, cb * BlkK, taps - 1 - tap});
    } else {
      SM90_TMA_LOAD::copy(&p.tma_w, full, smem.b[stage], {cb * BlkK, n0, tap});
    }
  };

  if (tid == 0) {
    // TMA im2col: the one expect_tx arrival; the gather: also the producers' 128 cp.async arrivals.
    unsigned const full_arrivals = p.im2col_rank != 0 ? 1u : 128u + 1u;
    for (int s = 0; s < Stages; ++s) {
      mbarrier_init(&smem.pipe.full[s], full_arrivals);
      mbarrier_init(&smem.pipe.empty[s], ConsumerWarps);
    }
    mbarrier_init_fence();
  }
  __syncthreads();

  if (tid < 128) {  // the producer warpgroup: runs ahead into the next tile while the consumers store
    warpgroup_reg_dealloc<Config::ProducerRegisters>();
    PipelineState st;
    if (p.im2col_rank != 0) {
      // Thread 0 loads both tiles by TMA: the A tile is the 128 pixels from the tile's first output
      // pixel on, each read at its input position (stride x output - pad) plus the tap's offset.
      if (tid != 0) return;
      for (int t = int(blockIdx.x); t < p.tiles; t += int(gridDim.x)) {
        int const n0 = tile_n0(t);
        ConvOutputPixel const px = conv_output_pixel(c, tile_m0(t));
        int const w0 = px.q * c.stride_w - c.pad_w, h0 = px.p * c.stride_h - c.pad_h, d0 = px.z * c.stride_d - c.pad_d;
        int tap = 0, cb = 0;
        for (int kt = 0; kt < p.k_tiles; ++kt) {
          int const ts = tap % c.s, tr = (tap / c.s) % c.r, tt = tap / (c.s * c.r);
          std::uint16_t const ow = std::uint16_t(ts * c.dilation_w), oh = std::uint16_t(tr * c.dilation_h),
                              od = std::uint16_t(tt * c.dilation_d);
          std::uint64_t* const full = smem.pipe.producer_acquire(st, Config::ABytes + Config::BBytes);
          load_b(full, st.index, n0, cb, tap);
          if (p.im2col_rank == 4)
            SM90_TMA_LOAD_IM2COL::copy(&p.tma_x, full, smem.a[st.index], {cb * BlkK, w0, h0, px.n}, {ow, oh});
          else
            SM90_TMA_LOAD_IM2COL::copy(&p.tma_x, full, smem.a[st.index], {cb * BlkK, w0, h0, d0, px.n}, {ow, oh, od});
          st.advance<Stages>();
          if (++cb == p.c_blocks) cb = 0, ++tap;
        }
      }
      return;
    }
    // Thread i copies 16-byte chunk i % 8 of rows i / 8 + 16 j (j < 8): a warp's copy covers four
    // whole 128-byte pixel rows, so each of its loads touches four cache lines. Per row it keeps
    // where the first tap's input pixel is (pointer, z, and h and w packed in 16 bits each); a row
    // past M gets a z no tap reaches.
    constexpr int RowsPerThread = BlkM / 16;
    int const chunk = tid % 8, row0 = tid / 8;
    Element* const a_chunk = smem.a[0] + row0 * BlkK + ((chunk ^ (row0 % 8)) * 8);  // (row0 + 16 j) % 8 == row0 % 8
    for (int t = int(blockIdx.x); t < p.tiles; t += int(gridDim.x)) {
      int const n0 = tile_n0(t);
      std::int64_t const m0 = tile_m0(t);
      Element const* row_src[RowsPerThread];
      int row_z[RowsPerThread], row_hw[RowsPerThread];
      TESSEL_UNROLL
      for (int j = 0; j < RowsPerThread; ++j) {
        std::int64_t const m = m0 + row0 + 16 * j;
        ConvOutputPixel const px = conv_output_pixel(c, m < rows ? m : 0);
        int const iz0 = px.z * c.stride_d - c.pad_d, ih0 = px.p * c.stride_h - c.pad_h, iw0 = px.q * c.stride_w - c.pad_w;
        row_src[j] = static_cast<Element const*>(c.x) + std::int64_t(px.n) * c.x_stride[0] + std::int64_t(iz0) * c.x_stride[1] +
                     std::int64_t(ih0) * c.x_stride[2] + std::int64_t(iw0) * c.x_stride[3] + chunk * 8;
        row_z[j] = m < rows ? iz0 : -(1 << 30);
        row_hw[j] = int(std::uint32_t(ih0) << 16 | (std::uint32_t(iw0) & 0xffffu));
      }
      int tap = 0, cb = 0;  // the k-tile's filter tap and 64-channel block
      for (int kt = 0; kt < p.k_tiles; ++kt) {
        int const ts = tap % c.s, tr = (tap / c.s) % c.r, tt = tap / (c.s * c.r);
        int const dz = tt * c.dilation_d, dh = tr * c.dilation_h, dw = ts * c.dilation_w;
        std::int64_t const tap_offset = std::int64_t(dz) * c.x_stride[1] + std::int64_t(dh) * c.x_stride[2] +
                                        std::int64_t(dw) * c.x_stride[3] + cb * BlkK;
        bool const channels = cb * BlkK + chunk * 8 < c.c;
        smem.pipe.producer_wait(st);
        if (tid == 0) {
          std::uint64_t* const full = smem.pipe.producer_expect(st, Config::BBytes);
          load_b(full, st.index, n0, cb, tap);
        }
        Element* const dst = a_chunk + st.index * (BlkM * BlkK);
        TESSEL_UNROLL
        for (int j = 0; j < RowsPerThread; ++j) {
          int const iz = row_z[j] + dz, ih = (row_hw[j] >> 16) + dh, iw = (int(std::uint32_t(row_hw[j]) << 16) >> 16) + dw;
          bool const ok = channels && unsigned(iz) < unsigned(c.d) && unsigned(ih) < unsigned(c.h) && unsigned(iw) < unsigned(c.w);
          Element const* const src = ok ? row_src[j] + tap_offset : static_cast<Element const*>(c.x);
          SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint128_t>::copy(*reinterpret_cast<uint128_t const*>(src),
                                                           *reinterpret_cast<uint128_t*>(dst + 16 * j * BlkK), ok);
        }
        cp_async_mbarrier_arrive_noinc(&smem.pipe.full[st.index]);
        st.advance<Stages>();
        if (++cb == p.c_blocks) cb = 0, ++tap;
      }
    }
    cp_async_wait<0>();
    return;
  }

  // A consumer warpgroup: rows [64 wg, 64 wg + 64) of the tile. Thread t holds rows r and r + 8
  // (r = 16 * warp + lane / 4): accumulator values 4j + {0, 1} and 4j + {2, 3}, columns
  // 8j + 2 (lane % 4) + {0, 1}.
  warpgroup_reg_alloc<Config::ConsumerRegisters>();
  int const wg = warpgroup_index() - 1, lane = tid % 32;  // (uniform: arch/sm90_cluster.hpp)
  detail::ConvEpilogueOps const ops{c.alpha, c.beta, c.bias, c.activation};
  bool const read_residual = c.residual != nullptr && c.beta != 0.0f;
  PipelineState st;
  for (int t = int(blockIdx.x); t < p.tiles; t += int(gridDim.x)) {
    int const n0 = tile_n0(t);
    std::int64_t const m0 = tile_m0(t);
    float acc[BlkN / 2];
    TESSEL_UNROLL
    for (int i = 0; i < BlkN / 2; ++i) acc[i] = 0.0f;
    Tensor tCrC = make_tensor(&acc[0], Layout<Shape<Int<BlkN / 2>, _1, _1>>{});  // (MMA,MMA_M,MMA_N)
    int held = -1;  // the stage whose wgmmas may still run
    for (int kt = 0; kt < p.k_tiles; ++kt) {
      smem.pipe.consumer_wait(st);
      if (p.im2col_rank == 0) fence_proxy_async_shared();  // the gather's writes are generic-proxy writes
      wgmma_fence();
      // The GEMM's stage tiles and wgmma issue (collective/sm90_operand_tile.hpp): this warpgroup's
      // 64 rows of A, K-major; B K-major, or MN-major for the data gradient (a k16 step is 32 bytes
      // along a K-major row, 16 rows of 128 bytes down an MN-major tile). acc starts at zero, so
      // every wgmma adds (accumulate_ One).
      Tensor tCrA = OperandTile::template fragment_A<0, 64>(mma, smem.a[st.index] + 64 * wg * BlkK);  // (_1,_1,BLK_K/16)
      Tensor tCrB = OperandTile::template fragment_B<Config::Dgrad ? 1 : 0, BlkN>(mma, smem.b[st.index]);  // (_1,_1,BLK_K/16)
      TESSEL_UNROLL
      for (int kk = 0; kk < BlkK / 16; ++kk) gemm(mma, tCrA(_, _, kk), tCrB(_, _, kk), tCrC);
      wgmma_commit_group();
      wgmma_wait_group<1>();
      if (held >= 0 && lane == 0) mbarrier_arrive(&smem.pipe.empty[held]);
      held = st.index;
      st.advance<Stages>();
    }
    wgmma_wait_group<0>();
    wgmma_fence_operand(acc);
    if (held >= 0 && lane == 0) mbarrier_arrive(&smem.pipe.empty[held]);  // the producer may refill it now

    TESSEL_UNROLL
    for (int h = 0; h < 2; ++h) {
      std::int64_t const m = m0 + 64 * wg + 16 * (tid % 128 / 32) + lane / 4 + 8 * h;
      if (m >= rows) continue;
      ConvOutputPixel const px = conv_output_pixel(c, m);
      std::int64_t const offset = std::int64_t(px.n) * c.y_stride[0] + std::int64_t(px.z) * c.y_stride[1] +
                                  std::int64_t(px.p) * c.y_stride[2] + std::int64_t(px.q) * c.y_stride[3];
      Element* const out = static_cast<Element*>(c.out) + offset;
      Element const* const residual = static_cast<Element const*>(c.residual) + offset;
      TESSEL_UNROLL
      for (int j = 0; j < BlkN / 8; ++j) {
        int const col = n0 + 8 * j + 2 * (lane % 4);
        if (col >= c.k) continue;  // K is a multiple of 8: col + 1 < K too
        float v[2] = {ops.alpha * acc[4 * j + 2 * h], ops.alpha * acc[4 * j + 2 * h + 1]};
        if (read_residual) {
          std::uint32_t const two = *reinterpret_cast<std::uint32_t const*>(residual + col);
          Element const* r = reinterpret_cast<Element const*>(&two);
          v[0] += ops.beta * detail::conv_to_f32(r[0]);
          v[1] += ops.beta * detail::conv_to_f32(r[1]);
        }
        if (ops.bias != nullptr) v[0] += ops.bias[col], v[1] += ops.bias[col + 1];
        if (ops.act != ConvActivation::none) v[0] = detail::conv_activate(v[0], ops.act), v[1] = detail::conv_activate(v[1], ops.act);
        Element two[2] = {detail::conv_from_f32<Element>(v[0]), detail::conv_from_f32<Element>(v[1])};
        *reinterpret_cast<std::uint32_t*>(out + col) = *reinterpret_cast<std::uint32_t const*>(two);
      }
    }
  }
#else
  (void)p;
#endif
}

}  // namespace tessel::kernel
