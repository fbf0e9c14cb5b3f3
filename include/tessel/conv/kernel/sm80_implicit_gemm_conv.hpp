// tessel/conv/kernel/sm80_implicit_gemm_conv.hpp -- the sm_80 implicit-GEMM convolution kernel:
// fprop, dgrad and wgrad, 2-D and 3-D, grouped, any channel count. One CTA per output tile of one
// group; the im2col matrix is never formed.
//
// Each pass is a GEMM D (M,N) = A (M,K) B (N,K)^T of one group (Cg = c/groups, Kg = k/groups;
// implicit_gemm_problem_size gives the extents, the GEMM-K order puts the channel fastest, then
// s, r, t -- so taps advance inside a k-tile when Cg < BLK_K and nothing is padded):
//
//   op     M          N          K           A (M,K)                      B (N,K)                    D
//   fprop  N*Z*P*Q    Kg         T*R*S*Cg    x im2col, K-major gather     w rows, K-major            y
//   dgrad  N*D*H*W    Cg         T*R*S*Kg    dy gathered per dx pixel,    w, contiguous along N      dx
//                                            K-major                      (MN-major)
//   wgrad  Kg         T*R*S*Cg   N*Z*P*Q     dy, contiguous along M       x im2col, contiguous       dw
//                                            (MN-major)                   along N (MN-major)
//
// dgrad takes the general form: dx pixel (d,h,w) gathers dy at z = (d + pad_d - t*dil_d) / stride_d
// for the taps where that division is exact and z is in range (zero otherwise), so any stride is
// correct (for stride s only about 1/s^2 of the taps contribute; their zeros are still multiplied).
//
//   global -> shared  each thread fills 16-byte chunks (8 elements) of the stage: K-major operands
//                     along K (4 threads per 32-element row), MN-major ones along M/N (BLK/8
//                     threads per row of k). A chunk is Access-element accesses, each wholly
//                     inside or outside the tensor (the launch code picks Access so that the
//                     channels per group and every stride are multiples of it): Access 8 is one
//                     16-byte cp.async (.ca for activations and gradients, which neighbouring taps
//                     re-read; .cg for filters), 4 and 2 are 8- and 4-byte cp.async, 1 is eight
//                     element loads stored as one 16-byte st.shared. Outside accesses (padding,
//                     rows past M, k past K) are zero-filled (cp.async src-size 0).
//   pipeline          Stages buffers, Stages-1 k-tiles in flight, the same schedule as the GEMM
//                     mainloop (collective/sm80_mma_multistage.hpp): copies of k-tile t+Stages-1
//                     issued at k-block 0 of tile t, one barrier per k-tile
//   shared -> regs    ldmatrix.x4 for K-major operands, ldmatrix.x4.trans for MN-major ones (both
//                     swizzled: the 16-byte chunk index XOR the row index mod 8)
//   MMA               mma.sync m16n8k16, fp32 accumulators (Config::TiledMma)
//   epilogue          the accumulators staged through shared memory one MMA_M step at a time
//                     (epilogue/sm80_epilogue_staging.hpp's geometry) and written as 8-channel
//                     chunks: out = act(alpha acc + beta residual + bias) (sm80_conv_epilogue.hpp)
//   split reduction   (wgrad, kp.partials set) each CTA sums one slice of GEMM-K (blockIdx.z) and
//                     writes its raw fp32 tile to the workspace; sm80_conv_slice_sum.hpp adds the
//                     slices in order and applies the epilogue (tessel/conv/conv_split.hpp)
//
// Tensor names: docs/glossary.md (tCsA: A in shared memory partitioned for the MMA's ldmatrix ...).
#pragma once

#include <tessel/algorithm/copy.hpp>
#include <tessel/algorithm/gemm.hpp>
#include <tessel/arch/sm75_copy_ldmatrix.hpp>
#include <tessel/arch/sm80_copy_cp_async.hpp>
#include <tessel/config.hpp>
#include <tessel/conv/kernel/sm80_conv_epilogue.hpp>
#include <tessel/conv/kernel/sm80_conv_kernel_params.hpp>
#include <tessel/conv/operator.hpp>
#include <tessel/conv/kernel/sm80_conv_config.hpp>
#include <tessel/numeric/int_types.hpp>
#include <tessel/tensor.hpp>

#include <cstdint>
#include <type_traits>

namespace tessel::kernel {

namespace detail {

// One global access of Access elements into shared memory: cp.async with zero-fill (ok == false:
// nothing is read from `src`, which is then any valid address). .cg (L2 only) for CacheGlobal
// 16-byte copies, .ca otherwise.
template <int Access, bool CacheGlobal>
TESSEL_DEVICE inline void conv_cp_async(void* dst, void const* src, bool ok) {
  if constexpr (Access == 8 && CacheGlobal) {
    SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>::copy(*static_cast<uint128_t const*>(src), *static_cast<uint128_t*>(dst), ok);
  } else if constexpr (Access == 8) {
    SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint128_t>::copy(*static_cast<uint128_t const*>(src), *static_cast<uint128_t*>(dst), ok);
  } else if constexpr (Access == 4) {
    SM80_CP_ASYNC_CACHEALWAYS_ZFILL<std::uint64_t>::copy(*static_cast<std::uint64_t const*>(src), *static_cast<std::uint64_t*>(dst), ok);
  } else {
    static_assert(Access == 2, "conv_cp_async: 16-, 8- or 4-byte accesses");
    SM80_CP_ASYNC_CACHEALWAYS_ZFILL<std::uint32_t>::copy(*static_cast<std::uint32_t const*>(src), *static_cast<std::uint32_t*>(dst), ok);
  }
}

// Fills one 16-byte chunk of shared memory at `dst` from Accesses accesses: access(i) returns the
// global address of elements [i*Access, (i+1)*Access) of the chunk and whether they exist.
// `base`: a valid address for the accesses that do not.
template <int Access, bool CacheGlobal, class Element, class AccessFn>
TESSEL_DEVICE inline void conv_fill_chunk(Element* dst, Element const* base, AccessFn const& access) {
  constexpr int Accesses = 8 / Access;
  if constexpr (Access == 1) {
    // Element loads into registers, one 16-byte shared store (cp.async has no 2-byte form).
    std::uint16_t v[8];
    TESSEL_UNROLL
    for (int i = 0; i < 8; ++i) {
      auto const [src, ok] = access(i);
      v[i] = ok ? *reinterpret_cast<std::uint16_t const*>(src) : std::uint16_t(0);
    }
    uint4 packed;
    packed.x = std::uint32_t(v[0]) | (std::uint32_t(v[1]) << 16);
    packed.y = std::uint32_t(v[2]) | (std::uint32_t(v[3]) << 16);
    packed.z = std::uint32_t(v[4]) | (std::uint32_t(v[5]) << 16);
    packed.w = std::uint32_t(v[6]) | (std::uint32_t(v[7]) << 16);
    *reinterpret_cast<uint4*>(dst) = packed;
  } else {
    TESSEL_UNROLL
    for (int i = 0; i < Accesses; ++i) {
      auto const [src, ok] = access(i);
      conv_cp_async<Access, CacheGlobal>(dst + i * Access, ok ? src : base, ok);
    }
  }
}

// The address of an access and whether it lies inside the tensor.
template <class Element>
struct ConvAccess {
  Element const* src;
  bool ok;
};

}  // namespace detail

// The kernel: grid (tiles_m * groups, tiles_n, slices), Config::Threads threads,
// Sm80ImplicitGemmConv's SmemBytes of dynamic shared memory. blockIdx.z picks the slice of GEMM-K
// (kp.k_tiles_per_slice k-tiles; one slice of all of them without a split).
template <class Config, conv::Operator Op>
__global__ void __launch_bounds__(Config::Threads, 1) sm80_implicit_gemm_conv_kernel(Sm80ConvKernelParams const kp) {
#if defined(TESSEL_ARCH_SM80)
  using K = Sm80ImplicitGemmConv<Config, Op>;
  using Element = typename K::Element;
  constexpr int BlkM = K::BlkM, BlkN = K::BlkN, BlkK = K::BlkK, Stages = K::Stages, Access = K::Access;
  constexpr bool IsFprop = Op == conv::Operator::kFprop, IsDgrad = Op == conv::Operator::kDgrad;
  using detail::ConvAccess;
  extern __shared__ __align__(128) char smem_raw[];
  auto& smem = *reinterpret_cast<typename K::SharedStorage*>(smem_raw);
  Sm80ConvParams const& p = kp.p;
  int const tid = int(threadIdx.x);

  int const group = int(blockIdx.x) / kp.tiles_m;
  int const m0 = (int(blockIdx.x) - group * kp.tiles_m) * BlkM;  // first GEMM row of the tile
  int const n0 = int(blockIdx.y) * BlkN;                         // first GEMM column
  int const cg = kp.cg, kg = kp.kg;

  Element const* const x = static_cast<Element const*>(p.x);
  Element const* const wt = static_cast<Element const*>(p.filter);
  Element const* const dy = static_cast<Element const*>(p.y);

  // ---- global -> shared: this thread's chunks and their k-tile-invariant state ----------------
  // K-major operand: chunk column kc, rows krow0 + i * KRowsPerPass; MN-major operand of Rows:
  // chunk column mn_col(Rows), k-rows mn_krow(Rows) + j * rows per pass (K::chunk).
  int const kc = (tid % K::KChunks) * 8;
  int const krow0 = tid / K::KChunks;
  auto const mn_col = [&](int rows) { return (tid % (rows / 8)) * 8; };
  auto const mn_krow = [&](int rows) { return tid / (rows / 8); };
  int smem_off_a[K::CopiesA], smem_off_b[K::CopiesB];
  TESSEL_UNROLL
  for (int i = 0; i < K::CopiesA; ++i) smem_off_a[i] = K::smem_offset_a(tid, i);
  TESSEL_UNROLL
  for (int i = 0; i < K::CopiesB; ++i) smem_off_b[i] = K::smem_offset_b(tid, i);

  // Per-row state of the gathered K-major A (fprop: x, dgrad: dy): the row's base offset and the
  // corner its taps are measured from. A row past M gets a corner no tap reaches.
  constexpr int RowsA = K::AMn ? 1 : K::CopiesA;
  constexpr int Far = -(1 << 30);  // a corner below any in-range coordinate minus any tap offset
  std::int64_t a_base[RowsA];
  // fprop: the (z, h, w) corner; dgrad: (d, h, w) + pad as quotient a_c and remainder a_r by the stride.
  int a_c0[RowsA], a_c1[RowsA], a_c2[RowsA];
  int a_r0[RowsA], a_r1[RowsA], a_r2[RowsA];
  if constexpr (!K::AMn) {
    TESSEL_UNROLL
    for (int i = 0; i < RowsA; ++i) {
      int const m = m0 + krow0 + i * K::KRowsPerPass;
      bool const inside = m < kp.gemm_m;
      detail::ConvPixel const px = detail::conv_pixel(kp, inside ? m : 0);
      if constexpr (IsFprop) {
        a_c0[i] = inside ? px.i2 * p.stride_d - p.pad_d : Far;
        a_c1[i] = px.i1 * p.stride_h - p.pad_h;
        a_c2[i] = px.i0 * p.stride_w - p.pad_w;
        a_base[i] = px.n * p.x_stride[0] + std::int64_t(a_c0[i]) * p.x_stride[1] + std::int64_t(a_c1[i]) * p.x_stride[2] +
                    std::int64_t(a_c2[i]) * p.x_stride[3] + std::int64_t(group) * cg;
      } else {
        int const cz = px.i2 + p.pad_d, ch = px.i1 + p.pad_h, cw = px.i0 + p.pad_w;
        detail::ConvDivided const qz = detail::conv_divided(cz, kp.div_stride[2]);
        detail::ConvDivided const qh = detail::conv_divided(ch, kp.div_stride[1]);
        detail::ConvDivided const qw = detail::conv_divided(cw, kp.div_stride[0]);
        a_c0[i] = inside ? qz.quo : Far, a_c1[i] = qh.quo, a_c2[i] = qw.quo;
        a_r0[i] = qz.rem, a_r1[i] = qh.rem, a_r2[i] = qw.rem;
        a_base[i] = px.n * p.y_stride[0] + std::int64_t(group) * kg;
      }
    }
  }

  // Copies of k-tile kt into stage `stage` (file comment).
  auto const load_tile = [&](int kt, int stage) {
    int const k0 = kt * BlkK;
    Element* const sa = smem.mainloop.a + stage * K::StageElemsA;
    Element* const sb = smem.mainloop.b + stage * K::StageElemsB;
    constexpr int Accesses = K::Accesses;

    if constexpr (IsFprop) {
      // A: x im2col. Row = output pixel, k = (t, r, s, c). Each access's tap is decoded once.
      detail::ConvTapOffset tap[Accesses];
      std::int64_t off[Accesses];
      bool k_in[Accesses];
      TESSEL_UNROLL
      for (int a = 0; a < Accesses; ++a) {
        int const kk = k0 + kc + a * Access;
        k_in[a] = kk < kp.gemm_k;
        tap[a] = detail::conv_tap_offset(kp, kk);
        off[a] = tap[a].dz * p.x_stride[1] + tap[a].dh * p.x_stride[2] + tap[a].dw * p.x_stride[3] + tap[a].ch;
      }
      TESSEL_UNROLL
      for (int i = 0; i < K::CopiesA; ++i) {
        detail::conv_fill_chunk<Access, false>(sa + smem_off_a[i], x, [&](int a) {
          bool const ok = k_in[a] && unsigned(a_c0[i] + tap[a].dz) < unsigned(p.d) &&
                          unsigned(a_c1[i] + tap[a].dh) < unsigned(p.h) && unsigned(a_c2[i] + tap[a].dw) < unsigned(p.w);
          return ConvAccess<Element>{x + a_base[i] + off[a], ok};
        });
      }
      // B: filter rows, k contiguous.
      TESSEL_UNROLL
      for (int i = 0; i < K::CopiesB; ++i) {
        int const nn = n0 + krow0 + i * K::KRowsPerPass;
        bool const row_in = nn < kp.gemm_n;
        Element const* const row = wt + (std::int64_t(group) * kg + nn) * p.w_stride_k;
        detail::conv_fill_chunk<Access, true>(sb + smem_off_b[i], wt, [&](int a) {
          int const kk = k0 + kc + a * Access;
          return ConvAccess<Element>{row + kk, row_in && kk < kp.gemm_k};
        });
      }
    } else if constexpr (IsDgrad) {
      // A: dy gathered for dx pixel (d, h, w); k = (t, r, s, k). A tap reaches output z when
      // d + pad_d - t*dil_d is a non-negative multiple of stride_d, z = that / stride_d < Z.
      // With d + pad_d = qc*stride + rc and t*dil_d = qt*stride + rt (remainders in [0, stride)),
      // that holds iff rc == rt and z = qc - qt is in [0, Z): no division per row and tap.
      detail::ConvDivided tz[Accesses], th[Accesses], tw[Accesses];
      int kch[Accesses];
      bool k_in[Accesses];
      TESSEL_UNROLL
      for (int a = 0; a < Accesses; ++a) {
        int const kk = k0 + kc + a * Access;
        k_in[a] = kk < kp.gemm_k;
        detail::ConvTapOffset const tap = detail::conv_tap_offset(kp, kk);
        tz[a] = detail::conv_divided(tap.dz, kp.div_stride[2]), th[a] = detail::conv_divided(tap.dh, kp.div_stride[1]);
        tw[a] = detail::conv_divided(tap.dw, kp.div_stride[0]);
        kch[a] = tap.ch;
      }
      TESSEL_UNROLL
      for (int i = 0; i < K::CopiesA; ++i) {
        detail::conv_fill_chunk<Access, false>(sa + smem_off_a[i], dy, [&](int a) {
          int const oz = a_c0[i] - tz[a].quo, op = a_c1[i] - th[a].quo, oq = a_c2[i] - tw[a].quo;
          bool const ok = k_in[a] && a_r0[i] == tz[a].rem && a_r1[i] == th[a].rem && a_r2[i] == tw[a].rem &&
                          unsigned(oz) < unsigned(p.z) && unsigned(op) < unsigned(p.p) && unsigned(oq) < unsigned(p.q);
          return ConvAccess<Element>{dy + a_base[i] + oz * p.y_stride[1] + op * p.y_stride[2] + oq * p.y_stride[3] + kch[a], ok};
        });
      }
      // B: w as (N = c, K = (t, r, s, k)), contiguous along c.
      constexpr int Rpp = K::template mn_k_rows_per_pass<BlkN>;
      int const c_col = n0 + mn_col(BlkN);
      TESSEL_UNROLL
      for (int j = 0; j < K::CopiesB; ++j) {
        int const kk = k0 + mn_krow(BlkN) + j * Rpp;
        int const tap = int(kp.div_chan.div(std::uint32_t(kk)));
        bool const k_ok = kk < kp.gemm_k;
        Element const* const row = wt + (std::int64_t(group) * kg + (kk - tap * kg)) * p.w_stride_k + std::int64_t(tap) * cg;
        detail::conv_fill_chunk<Access, true>(sb + smem_off_b[j], wt, [&](int a) {
          int const c = c_col + a * Access;
          return ConvAccess<Element>{row + c, k_ok && c < kp.gemm_n};
        });
      }
    } else {
      // A: dy as (M = k, K = output pixel), contiguous along k.
      constexpr int RppA = K::template mn_k_rows_per_pass<BlkM>;
      int const m_col = m0 + mn_col(BlkM);
      TESSEL_UNROLL
      for (int j = 0; j < K::CopiesA; ++j) {
        int const npq = k0 + mn_krow(BlkM) + j * RppA;
        bool const k_ok = npq < kp.gemm_k;
        detail::ConvPixel const px = detail::conv_pixel(kp, k_ok ? npq : 0);
        Element const* const row = dy + px.n * p.y_stride[0] + px.i2 * p.y_stride[1] + px.i1 * p.y_stride[2] +
                                   px.i0 * p.y_stride[3] + std::int64_t(group) * kg;
        detail::conv_fill_chunk<Access, false>(sa + smem_off_a[j], dy, [&](int a) {
          int const m = m_col + a * Access;
          return ConvAccess<Element>{row + m, k_ok && m < kp.gemm_m};
        });
      }
      // B: x im2col as (N = (t, r, s, c), K = output pixel), contiguous along c. Each access's
      // tap is decoded once per k-tile.
      constexpr int RppB = K::template mn_k_rows_per_pass<BlkN>;
      detail::ConvTapOffset tap[Accesses];
      bool n_in[Accesses];
      TESSEL_UNROLL
      for (int a = 0; a < Accesses; ++a) {
        int const nn = n0 + mn_col(BlkN) + a * Access;
        n_in[a] = nn < kp.gemm_n;
        tap[a] = detail::conv_tap_offset(kp, nn);
      }
      TESSEL_UNROLL
      for (int j = 0; j < K::CopiesB; ++j) {
        int const npq = k0 + mn_krow(BlkN) + j * RppB;
        bool const k_ok = npq < kp.gemm_k;
        detail::ConvPixel const px = detail::conv_pixel(kp, k_ok ? npq : 0);
        int const cz = k_ok ? px.i2 * p.stride_d - p.pad_d : Far;
        int const chh = px.i1 * p.stride_h - p.pad_h, cw = px.i0 * p.stride_w - p.pad_w;
        Element const* const corner = x + px.n * p.x_stride[0] + std::int64_t(cz) * p.x_stride[1] +
                                      std::int64_t(chh) * p.x_stride[2] + std::int64_t(cw) * p.x_stride[3] +
                                      std::int64_t(group) * cg;
        detail::conv_fill_chunk<Access, false>(sb + smem_off_b[j], x, [&](int a) {
          bool const ok = n_in[a] && unsigned(cz + tap[a].dz) < unsigned(p.d) && unsigned(chh + tap[a].dh) < unsigned(p.h) &&
                          unsigned(cw + tap[a].dw) < unsigned(p.w);
          return ConvAccess<Element>{
              corner + tap[a].dz * p.x_stride[1] + tap[a].dh * p.x_stride[2] + tap[a].dw * p.x_stride[3] + tap[a].ch, ok};
        });
      }
    }
  };

  // ---- shared -> registers -> tensor cores ------------------------------------------------------
  typename Config::TiledMma tiled_mma;
  auto thr_mma = tiled_mma.get_slice(tid);
  Tensor sA = make_tensor(make_smem_ptr(smem.mainloop.a), typename K::SmemLayoutA{});  // (BLK_M,BLK_K,PIPE)
  Tensor sB = make_tensor(make_smem_ptr(smem.mainloop.b), typename K::SmemLayoutB{});  // (BLK_N,BLK_K,PIPE)
  Tensor sA_shape = make_tensor(make_smem_ptr(smem.mainloop.a), make_layout(make_shape(Int<BlkM>{}, Int<BlkK>{})));  // (BLK_M,BLK_K)
  Tensor sB_shape = make_tensor(make_smem_ptr(smem.mainloop.b), make_layout(make_shape(Int<BlkN>{}, Int<BlkK>{})));  // (BLK_N,BLK_K)
  Tensor tCrA = thr_mma.partition_fragment_A(sA_shape);  // (MMA,MMA_M,MMA_K)
  Tensor tCrB = thr_mma.partition_fragment_B(sB_shape);  // (MMA,MMA_N,MMA_K)
  auto s2r_a = make_tiled_copy_A(typename K::SmemCopyAtomA{}, tiled_mma);
  auto s2r_b = make_tiled_copy_B(typename K::SmemCopyAtomB{}, tiled_mma);
  auto s2r_thr_a = s2r_a.get_slice(tid);
  auto s2r_thr_b = s2r_b.get_slice(tid);
  Tensor tCsA = s2r_thr_a.partition_S(sA);      // (CPY,CPY_M,CPY_K,PIPE)
  Tensor tCrA_view = s2r_thr_a.retile_D(tCrA);  // (CPY,CPY_M,CPY_K)
  Tensor tCsB = s2r_thr_b.partition_S(sB);      // (CPY,CPY_N,CPY_K,PIPE)
  Tensor tCrB_view = s2r_thr_b.retile_D(tCrB);  // (CPY,CPY_N,CPY_K)
  constexpr int KBlocks = decltype(size<2>(tCrA))::value;
  auto const load_fragments = [&](int kb, int stage) {
    copy(s2r_a, tCsA(_, _, kb, stage), tCrA_view(_, _, kb));
    copy(s2r_b, tCsB(_, _, kb, stage), tCrB_view(_, _, kb));
  };

  Tensor accum = partition_fragment_C(tiled_mma, make_shape(Int<BlkM>{}, Int<BlkN>{}));  // (MMA,MMA_M,MMA_N) fp32
  clear(accum);

  // ---- the pipeline (the GEMM mainloop's schedule) over this slice's k-tiles -----------------------
  int const k_tile_first = int(blockIdx.z) * kp.k_tiles_per_slice;
  int const k_tile_count = kp.k_tiles - k_tile_first < kp.k_tiles_per_slice ? kp.k_tiles - k_tile_first : kp.k_tiles_per_slice;
  TESSEL_UNROLL
  for (int s = 0; s < Stages - 1; ++s) {
    if (s < k_tile_count) load_tile(k_tile_first + s, s);
    cp_async_fence();
  }
  int smem_read = 0, smem_write = Stages - 1, k_load = Stages - 1;
  cp_async_wait<Stages - 2>();
  __syncthreads();
  load_fragments(0, smem_read);

  TESSEL_NO_UNROLL
  for (int k_tile = 0; k_tile < k_tile_count; ++k_tile) {
    TESSEL_UNROLL
    for (int kb = 0; kb < KBlocks; ++kb) {
      if (kb == KBlocks - 1) {
        // The next k-tile's stage has landed; the barrier also retires every read of the stage
        // the next copies overwrite.
        smem_read = smem_read == Stages - 1 ? 0 : smem_read + 1;
        cp_async_wait<Stages - 2>();
        __syncthreads();
      }
      load_fragments(kb + 1 == KBlocks ? 0 : kb + 1, smem_read);
      if (kb == 0) {
        if (k_load < k_tile_count) load_tile(k_tile_first + k_load, smem_write);
        cp_async_fence();
        ++k_load;
        smem_write = smem_write == Stages - 1 ? 0 : smem_write + 1;
      }
      gemm(tiled_mma, tCrA(_, _, kb), tCrB(_, _, kb), accum);
    }
  }
  cp_async_wait<0>();
  __syncthreads();  // shared memory is the epilogue's from here

  // ---- epilogue ----------------------------------------------------------------------------------
  using Staging = typename K::Staging;
  Tensor sC = make_tensor(make_smem_ptr(smem.epilogue.c), typename Staging::StagingLayout{});  // (BLK_M,BLK_N), passes aliased
  Tensor tCsC = thr_mma.partition_C(sC);                                                       // (MMA,MMA_M,MMA_N)
  static_assert(decltype(size<1>(tCsC))::value == Staging::Passes, "sm80 conv epilogue: one pass per MMA_M step");
  int const rows = kp.gemm_m - m0 < BlkM ? kp.gemm_m - m0 : BlkM;
  int const cols = kp.gemm_n - n0 < BlkN ? kp.gemm_n - n0 : BlkN;
  Element* const out = static_cast<Element*>(p.out);
  Element const* const residual = static_cast<Element const*>(p.residual);
  detail::ConvEpilogueOps const ops{p.alpha, p.beta, IsFprop || IsDgrad ? p.bias : nullptr, p.activation};

  TESSEL_UNROLL
  for (int pass = 0; pass < Staging::Passes; ++pass) {
    copy(Copy_Atom<AutoVectorizingCopyWithAssumedAlignment<64>, float>{}, accum(_, pass, _), tCsC(_, pass, _));
    __syncthreads();
    TESSEL_UNROLL
    for (int j = 0; j < Staging::ChunksPerThread; ++j) {
      auto const [r, c8] = Staging::chunk(tid, j);  // row of the pass, first of 8 columns
      int const row = r + pass * Staging::StepM;
      if (row < rows && c8 < cols) {
        float4 const first = *reinterpret_cast<float4 const*>(&smem.epilogue.c[Staging::read_offset(tid, j, true)]);
        float4 const second = *reinterpret_cast<float4 const*>(&smem.epilogue.c[Staging::read_offset(tid, j, false)]);
        bool const upper_first = Staging::first_half(tid) != 0;
        float4 const lo = upper_first ? second : first, hi = upper_first ? first : second;
        float const acc8[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
        int const m = m0 + row, nn = n0 + c8;
        // The element offset of (m, nn) in out (and residual), and the channel of the bias.
        std::int64_t offset;
        int channel;
        if constexpr (IsFprop) {
          detail::ConvPixel const px = detail::conv_pixel(kp, m);
          channel = group * kg + nn;
          offset = px.n * p.y_stride[0] + px.i2 * p.y_stride[1] + px.i1 * p.y_stride[2] + px.i0 * p.y_stride[3] + channel;
        } else if constexpr (IsDgrad) {
          detail::ConvPixel const px = detail::conv_pixel(kp, m);
          channel = group * cg + nn;
          offset = px.n * p.x_stride[0] + px.i2 * p.x_stride[1] + px.i1 * p.x_stride[2] + px.i0 * p.x_stride[3] + channel;
        } else {
          if (kp.partials != nullptr) {
            // A split reduction: this slice's fp32 sums, all 8 columns (those past gemm_n are the
            // zeros of zero-filled B rows, inside partial_ld); the slice-sum kernel does the rest.
            float* const dst =
                kp.partials + ((std::int64_t(blockIdx.z) * p.k + std::int64_t(group) * kg + m) * kp.partial_ld + nn);
            reinterpret_cast<float4*>(dst)[0] = lo;
            reinterpret_cast<float4*>(dst)[1] = hi;
            continue;
          }
          channel = 0;
          offset = (std::int64_t(group) * kg + m) * p.w_stride_k + nn;
        }
        detail::conv_store_chunk<Element>(ops, acc8, out + offset, residual ? residual + offset : nullptr, channel,
                                          cols - c8 < 8 ? cols - c8 : 8, kp.out_vec, kp.residual_vec);
      }
    }
    __syncthreads();  // the buffer is read before the next pass overwrites it
  }
#endif
}

}  // namespace tessel::kernel
