// tessel/atom/mma_traits_sm90.hpp -- the warpgroup MMAs (wgmma, A and B from shared memory: "SS";
// A from registers: "RS", below) as (thread, value) layouts, for MMA_Atom and make_tiled_mma.
//
// A wgmma is executed by a warpgroup: ThrID = _128:_1. Shape_MNK is (_64, N, K) with K = 16 for
// 16-bit inputs and 32 for fp8. A and B stay in shared memory, read through descriptors
// (atom/gmma_descriptor.hpp); as in CuTe every thread "sees" the whole operand tile, so
//   ALayout = (_128,(_64,K)):(_0,(_1,_64))    (thread, value v) -> v = m + 64*k
//   BLayout = (_128,(N,K)):(_0,(_1,N))        (thread, value v) -> v = n + N*k
// and a TiledMMA's partition_A/B of a shared-memory tile gives each thread the whole (MN,K) slice
// of every instruction, which is what make_gmma_desc wants.
// The accumulators: thread t = 32*warp + lane, lane = 4*group + q (PTX's groupID and
// threadID_in_group); fp32 register i holds D(m, n) with
//   m = 16*warp + group + 8*((i/2)%2),   n = 2q + i%2 + 8*(i/4)
// (the PTX ISA's "WGMMA .m64nNk16 register fragment layout for accumulator matrix D";
// wgmma_accumulator_coord in arch/sm90_mma_wgmma.hpp says the same), so
//   CLayout = ((_4,_8,_4),(_2,_2,N/8)):((_128,_1,_16),(_64,_8,_512))   (thread, i) -> m + 64*n
// MajorA/MajorB say how the operands lie in shared memory: the op's template bits TransA/TransB
// (0 K-major, 1 MN-major); the fp8 instructions read K-major operands only.
//   e.g. MMA_Atom<SM90_64x64x16_F32BF16BF16_SS<0,1>>  ThrID _128:_1, Shape_MNK (_64,_64,_16),
//        LayoutC_TV ((_4,_8,_4),(_2,_2,_8)):((_128,_1,_16),(_64,_8,_512))
// MMA_Atom::call and partition_fragment_A/B do not apply to SS atoms (the operands are
// descriptors, not registers): issue Op::fma(desc_a, desc_b, d, scale_d) directly.
#pragma once

#include <tessel/arch/sm90_mma_wgmma_ops.hpp>
#include <tessel/atom/gmma_smem_layout.hpp>
#include <tessel/atom/mma_traits.hpp>
#include <tessel/config.hpp>
#include <tessel/layout.hpp>
#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/float8.hpp>
#include <tessel/numeric/half.hpp>

namespace tessel {

namespace detail {

// An operand read from shared memory: all 128 threads see the whole MN x K tile, column-major.
template <int MN, int K>
using sm90_ss_operand = Layout<Shape<_128, Shape<Int<MN>, Int<K>>>, Stride<_0, Stride<_1, Int<MN>>>>;

// The 64 x N fp32 accumulator: thread (q, group, warp), register (i%2, (i/2)%2, i/4).
template <int N>
using sm90_64xN_acc =
    Layout<Shape<Shape<_4, _8, _4>, Shape<_2, _2, Int<N / 8>>>, Stride<Stride<_128, _1, _16>, Stride<_64, _8, _512>>>;

template <class TA, class TB, int N, int K, GMMA::Major MA, GMMA::Major MB>
struct sm90_ss_traits {
  static_assert(N % 8 == 0 && 8 <= N && N <= 256, "wgmma: N is a multiple of 8 from 8 to 256");
  using ValTypeD = float;
  using ValTypeA = TA;
  using ValTypeB = TB;
  using ValTypeC = float;
  using Shape_MNK = Shape<_64, Int<N>, Int<K>>;
  using ThrID = Layout<_128>;
  using ALayout = sm90_ss_operand<64, K>;
  using BLayout = sm90_ss_operand<N, K>;
  using CLayout = sm90_64xN_acc<N>;
  static constexpr GMMA::Major MajorA = MA;
  static constexpr GMMA::Major MajorB = MB;
};

// A from registers ("RS", 16-bit types): thread t = 32*warp + lane (lane = 4*group + q) holds
// 8 values of the 64 x 16 A tile in four registers, value v at
//   m = 16*warp + group + 8*((v/2)%2),   k = 2q + v%2 + 8*(v/4)
// (the PTX ISA's "WGMMA .m64nNk16 register fragment layout for matrix A": each warp's 16 rows as
// mma.sync m16n8k16 lays out its A) -- the accumulator layout of an m64n16 instruction, so an
// fp32 accumulator tile converted to 16 bits in place is the A operand of the next wgmma.
using sm90_rs_a = Layout<Shape<Shape<_4, _8, _4>, Shape<_2, _2, _2>>, Stride<Stride<_128, _1, _16>, Stride<_64, _8, _512>>>;

template <class T, int N, GMMA::Major MB>
struct sm90_rs_traits : sm90_ss_traits<T, T, N, 16, GMMA::Major::K, MB> {
  using ALayout = sm90_rs_a;
};

template <int Trans>
inline constexpr GMMA::Major gmma_major = Trans == 0 ? GMMA::Major::K : GMMA::Major::MN;

template <class TA, class TB, int N>
using sm90_fp8_traits = sm90_ss_traits<TA, TB, N, 32, GMMA::Major::K, GMMA::Major::K>;

}  // namespace detail

// clang-format off
template <int TA, int TB> struct MMA_Traits<SM90_64x64x16_F32F16F16_SS<TA, TB>>    : detail::sm90_ss_traits<half_t, half_t, 64, 16, detail::gmma_major<TA>, detail::gmma_major<TB>> {};
template <int TA, int TB> struct MMA_Traits<SM90_64x128x16_F32F16F16_SS<TA, TB>>   : detail::sm90_ss_traits<half_t, half_t, 128, 16, detail::gmma_major<TA>, detail::gmma_major<TB>> {};
template <int TA, int TB> struct MMA_Traits<SM90_64x192x16_F32F16F16_SS<TA, TB>>   : detail::sm90_ss_traits<half_t, half_t, 192, 16, detail::gmma_major<TA>, detail::gmma_major<TB>> {};
template <int TA, int TB> struct MMA_Traits<SM90_64x256x16_F32F16F16_SS<TA, TB>>   : detail::sm90_ss_traits<half_t, half_t, 256, 16, detail::gmma_major<TA>, detail::gmma_major<TB>> {};
template <int TA, int TB> struct MMA_Traits<SM90_64x64x16_F32BF16BF16_SS<TA, TB>>  : detail::sm90_ss_traits<bfloat16_t, bfloat16_t, 64, 16, detail::gmma_major<TA>, detail::gmma_major<TB>> {};
template <int TA, int TB> struct MMA_Traits<SM90_64x128x16_F32BF16BF16_SS<TA, TB>> : detail::sm90_ss_traits<bfloat16_t, bfloat16_t, 128, 16, detail::gmma_major<TA>, detail::gmma_major<TB>> {};
template <int TA, int TB> struct MMA_Traits<SM90_64x192x16_F32BF16BF16_SS<TA, TB>> : detail::sm90_ss_traits<bfloat16_t, bfloat16_t, 192, 16, detail::gmma_major<TA>, detail::gmma_major<TB>> {};
template <int TA, int TB> struct MMA_Traits<SM90_64x256x16_F32BF16BF16_SS<TA, TB>> : detail::sm90_ss_traits<bfloat16_t, bfloat16_t, 256, 16, detail::gmma_major<TA>, detail::gmma_major<TB>> {};

template <> struct MMA_Traits<SM90_64x64x32_F32E4M3E4M3_SS>  : detail::sm90_fp8_traits<float_e4m3_t, float_e4m3_t, 64> {};
template <> struct MMA_Traits<SM90_64x128x32_F32E4M3E4M3_SS> : detail::sm90_fp8_traits<float_e4m3_t, float_e4m3_t, 128> {};
template <> struct MMA_Traits<SM90_64x192x32_F32E4M3E4M3_SS> : detail::sm90_fp8_traits<float_e4m3_t, float_e4m3_t, 192> {};
template <> struct MMA_Traits<SM90_64x256x32_F32E4M3E4M3_SS> : detail::sm90_fp8_traits<float_e4m3_t, float_e4m3_t, 256> {};
template <> struct MMA_Traits<SM90_64x64x32_F32E4M3E5M2_SS>  : detail::sm90_fp8_traits<float_e4m3_t, float_e5m2_t, 64> {};
template <> struct MMA_Traits<SM90_64x128x32_F32E4M3E5M2_SS> : detail::sm90_fp8_traits<float_e4m3_t, float_e5m2_t, 128> {};
template <> struct MMA_Traits<SM90_64x192x32_F32E4M3E5M2_SS> : detail::sm90_fp8_traits<float_e4m3_t, float_e5m2_t, 192> {};
template <> struct MMA_Traits<SM90_64x256x32_F32E4M3E5M2_SS> : detail::sm90_fp8_traits<float_e4m3_t, float_e5m2_t, 256> {};
template <> struct MMA_Traits<SM90_64x64x32_F32E5M2E4M3_SS>  : detail::sm90_fp8_traits<float_e5m2_t, float_e4m3_t, 64> {};
template <> struct MMA_Traits<SM90_64x128x32_F32E5M2E4M3_SS> : detail::sm90_fp8_traits<float_e5m2_t, float_e4m3_t, 128> {};
template <> struct MMA_Traits<SM90_64x192x32_F32E5M2E4M3_SS> : detail::sm90_fp8_traits<float_e5m2_t, float_e4m3_t, 192> {};
template <> struct MMA_Traits<SM90_64x256x32_F32E5M2E4M3_SS> : detail::sm90_fp8_traits<float_e5m2_t, float_e4m3_t, 256> {};
template <> struct MMA_Traits<SM90_64x64x32_F32E5M2E5M2_SS>  : detail::sm90_fp8_traits<float_e5m2_t, float_e5m2_t, 64> {};
template <> struct MMA_Traits<SM90_64x128x32_F32E5M2E5M2_SS> : detail::sm90_fp8_traits<float_e5m2_t, float_e5m2_t, 128> {};
template <> struct MMA_Traits<SM90_64x192x32_F32E5M2E5M2_SS> : detail::sm90_fp8_traits<float_e5m2_t, float_e5m2_t, 192> {};
template <> struct MMA_Traits<SM90_64x256x32_F32E5M2E5M2_SS> : detail::sm90_fp8_traits<float_e5m2_t, float_e5m2_t, 256> {};

template <int TB> struct MMA_Traits<SM90_64x64x16_F32F16F16_RS<TB>>    : detail::sm90_rs_traits<half_t, 64, detail::gmma_major<TB>> {};
template <int TB> struct MMA_Traits<SM90_64x128x16_F32F16F16_RS<TB>>   : detail::sm90_rs_traits<half_t, 128, detail::gmma_major<TB>> {};
template <int TB> struct MMA_Traits<SM90_64x192x16_F32F16F16_RS<TB>>   : detail::sm90_rs_traits<half_t, 192, detail::gmma_major<TB>> {};
template <int TB> struct MMA_Traits<SM90_64x256x16_F32F16F16_RS<TB>>   : detail::sm90_rs_traits<half_t, 256, detail::gmma_major<TB>> {};
template <int TB> struct MMA_Traits<SM90_64x64x16_F32BF16BF16_RS<TB>>  : detail::sm90_rs_traits<bfloat16_t, 64, detail::gmma_major<TB>> {};
template <int TB> struct MMA_Traits<SM90_64x128x16_F32BF16BF16_RS<TB>> : detail::sm90_rs_traits<bfloat16_t, 128, detail::gmma_major<TB>> {};
template <int TB> struct MMA_Traits<SM90_64x192x16_F32BF16BF16_RS<TB>> : detail::sm90_rs_traits<bfloat16_t, 192, detail::gmma_major<TB>> {};
template <int TB> struct MMA_Traits<SM90_64x256x16_F32BF16BF16_RS<TB>> : detail::sm90_rs_traits<bfloat16_t, 256, detail::gmma_major<TB>> {};
// clang-format on

}  // namespace tessel
