// tessel/atom/mma_traits_sm90.hpp -- the warpgroup MMAs (wgmma, A and B from shared memory: "SS";
// A from registers: "RS", below) as (thread, value) layouts, for MMA_Atom and make_tiled_mma.
//
// A wgmma is executed by a warpgroup: ThrID = _128:_1. Shape_MNK is (_64, N, K) with K = 16 for
// 16-bit inputs, 32 for fp8 and 8 for tf32 (a 32-byte k-slice each). A and B stay in shared
// memory, read through descriptors (atom/gmma_descriptor.hpp); as in CuTe every thread "sees" the
// whole operand tile, so
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
// The fragments of shared-memory operands are descriptors (atom/gmma_desc_fragment.hpp):
// partition_fragment_A/B of a stage give one descriptor per instruction slice, and gemm(mma, tCrA,
// tCrB, tCrC) issues one wgmma per (m, n) into the accumulator registers in place. Whether a wgmma
// adds to the accumulators or overwrites them is the atom's `accumulate_` (GMMA::ScaleOut, One by
// default), as in CuTe: a mainloop sets Zero for a tile's first k-slice.
//   Tensor tCrA = thr_mma.partition_fragment_A(sA);  // (_1,MMA_M,MMA_K) descriptors
//   mma.accumulate_ = GMMA::ScaleOut::Zero;
//   for (k ...) { gemm(mma, tCrA(_, _, k), tCrB(_, _, k), tCrC); mma.accumulate_ = GMMA::ScaleOut::One; }
// An RS atom's A fragment is registers (partition_fragment_A of a register-shaped tensor as for
// mma.sync), its B fragment descriptors.
#pragma once

#include <tessel/arch/sm90_mma_wgmma_ops.hpp>
#include <tessel/atom/gmma_desc_fragment.hpp>
#include <tessel/atom/gmma_smem_layout.hpp>
#include <tessel/atom/mma_traits.hpp>
#include <tessel/config.hpp>
#include <tessel/layout.hpp>
#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/float8.hpp>
#include <tessel/numeric/half.hpp>
#include <tessel/numeric/tfloat32.hpp>
#include <tessel/tensor/tensor.hpp>

#include <type_traits>

namespace tessel {

namespace GMMA {
// Whether a wgmma adds its product to the accumulators (One) or overwrites them (Zero): the
// instruction's scale-d operand.
enum class ScaleOut { Zero = 0, One = 1 };
}  // namespace GMMA

namespace detail {

// An operand read from shared memory: all 128 threads see the whole MN x K tile, column-major.
template <int MN, int K>
using sm90_ss_operand = Layout<Shape<_128, Shape<Int<MN>, Int<K>>>, Stride<_0, Stride<_1, Int<MN>>>>;

// The 64 x N fp32 accumulator: thread (q, group, warp), register (i%2, (i/2)%2, i/4).
template <int N>
using sm90_64xN_acc =
    Layout<Shape<Shape<_4, _8, _4>, Shape<_2, _2, Int<N / 8>>>, Stride<Stride<_128, _1, _16>, Stride<_64, _8, _512>>>;

// This thread's accumulators of one instruction as the op's register array: D's values must be
// compact (register i at position i), as partition_fragment_C makes them.
template <class Regs, class DT>
TESSEL_HOST_DEVICE Regs& accumulator_registers(DT const& D) {
  using DL = std::remove_cvref_t<decltype(D.layout())>;
  static_assert(is_static_v<DL> && decltype(size(DL{}))::value == std::extent_v<Regs>,
                "wgmma: the accumulator fragment must hold one instruction's registers (a slice (V) of partition_fragment_C)");
  static_assert(std::is_same_v<decltype(coalesce(DL{})), Layout<Int<std::extent_v<Regs>>, _1>>,
                "wgmma: the accumulator fragment's registers must be compact, in the instruction's order");
  return *reinterpret_cast<Regs*>(raw_pointer(D.data()));
}

template <class Op, class TA, class TB, int N, int K, GMMA::Major MA, GMMA::Major MB>
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

  GMMA::ScaleOut accumulate_ = GMMA::ScaleOut::One;

  template <class E, class L>
  TESSEL_HOST_DEVICE static auto make_fragment_A(Tensor<E, L> const& tCsA) {  // (MMA,MMA_M,MMA_K,...) -> descriptors
    return GMMA::make_gmma_desc_fragment<MA>(tCsA);
  }
  template <class E, class L>
  TESSEL_HOST_DEVICE static auto make_fragment_B(Tensor<E, L> const& tCsB) {  // (MMA,MMA_N,MMA_K,...) -> descriptors
    return GMMA::make_gmma_desc_fragment<MB>(tCsB);
  }

  // One wgmma: D = A * B + (accumulate_ ? D : 0). A and B one descriptor each; C must be D (the
  // instruction accumulates in place).
  template <class DT, class AT, class BT, class CT>
  TESSEL_HOST_DEVICE void mma_unpack(DT const& D, AT const& A, BT const& B, CT const& C) const {
    static_assert(decltype(size(A.layout()))::value == 1 && decltype(size(B.layout()))::value == 1,
                  "wgmma (SS): A and B are one descriptor each: slice the fragments to one instruction");
    TESSEL_ALGEBRA_REQUIRE(raw_pointer(C.data()) == raw_pointer(D.data()), "wgmma: C must be D (it accumulates in place)");
    Op::fma(*A.data(), *B.data(), accumulator_registers<typename Op::CRegisters>(D), int(accumulate_));
  }
};

// A from registers ("RS", 16-bit types): thread t = 32*warp + lane (lane = 4*group + q) holds
// 8 values of the 64 x 16 A tile in four registers, value v at
//   m = 16*warp + group + 8*((v/2)%2),   k = 2q + v%2 + 8*(v/4)
// (the PTX ISA's "WGMMA .m64nNk16 register fragment layout for matrix A": each warp's 16 rows as
// mma.sync m16n8k16 lays out its A) -- the accumulator layout of an m64n16 instruction, so an
// fp32 accumulator tile converted to 16 bits in place is the A operand of the next wgmma.
using sm90_rs_a = Layout<Shape<Shape<_4, _8, _4>, Shape<_2, _2, _2>>, Stride<Stride<_128, _1, _16>, Stride<_64, _8, _512>>>;

template <class Op, class T, int N, GMMA::Major MB>
struct sm90_rs_traits : sm90_ss_traits<Op, T, T, N, 16, GMMA::Major::K, MB> {
  using ALayout = sm90_rs_a;

  template <class E, class L>
  TESSEL_HOST_DEVICE static constexpr auto make_fragment_A(Tensor<E, L> const& tCsA) {  // registers
    return make_fragment_like<T>(tCsA.layout());
  }

  // One wgmma: D = A * B + (accumulate_ ? D : 0), A this thread's 8 values (four registers of two).
  template <class DT, class AT, class BT, class CT>
  TESSEL_HOST_DEVICE void mma_unpack(DT const& D, AT const& A, BT const& B, CT const& C) const {
    static_assert(decltype(size(B.layout()))::value == 1, "wgmma (RS): B is one descriptor: slice the fragment to one instruction");
    TESSEL_ALGEBRA_REQUIRE(raw_pointer(C.data()) == raw_pointer(D.data()), "wgmma: C must be D (it accumulates in place)");
    static_assert(decltype(size(A.layout()))::value == 8, "wgmma (RS): A is this thread's 8 values of one instruction");
    Op::fma(*reinterpret_cast<std::uint32_t const(*)[4]>(raw_pointer(A.data())), *B.data(),
            accumulator_registers<typename Op::CRegisters>(D), int(this->accumulate_));
  }
};

template <int Trans>
inline constexpr GMMA::Major gmma_major = Trans == 0 ? GMMA::Major::K : GMMA::Major::MN;

template <class Op, class TA, class TB, int N>
using sm90_fp8_traits = sm90_ss_traits<Op, TA, TB, N, 32, GMMA::Major::K, GMMA::Major::K>;

}  // namespace detail

// clang-format off
template <int TA, int TB> struct MMA_Traits<SM90_64x16x16_F32F16F16_SS<TA, TB>>    : detail::sm90_ss_traits<SM90_64x16x16_F32F16F16_SS<TA, TB>, half_t, half_t, 16, 16, detail::gmma_major<TA>, detail::gmma_major<TB>> {};
template <int TA, int TB> struct MMA_Traits<SM90_64x64x16_F32F16F16_SS<TA, TB>>    : detail::sm90_ss_traits<SM90_64x64x16_F32F16F16_SS<TA, TB>, half_t, half_t, 64, 16, detail::gmma_major<TA>, detail::gmma_major<TB>> {};
template <int TA, int TB> struct MMA_Traits<SM90_64x80x16_F32F16F16_SS<TA, TB>>    : detail::sm90_ss_traits<SM90_64x80x16_F32F16F16_SS<TA, TB>, half_t, half_t, 80, 16, detail::gmma_major<TA>, detail::gmma_major<TB>> {};
template <int TA, int TB> struct MMA_Traits<SM90_64x128x16_F32F16F16_SS<TA, TB>>   : detail::sm90_ss_traits<SM90_64x128x16_F32F16F16_SS<TA, TB>, half_t, half_t, 128, 16, detail::gmma_major<TA>, detail::gmma_major<TB>> {};
template <int TA, int TB> struct MMA_Traits<SM90_64x176x16_F32F16F16_SS<TA, TB>>   : detail::sm90_ss_traits<SM90_64x176x16_F32F16F16_SS<TA, TB>, half_t, half_t, 176, 16, detail::gmma_major<TA>, detail::gmma_major<TB>> {};
template <int TA, int TB> struct MMA_Traits<SM90_64x192x16_F32F16F16_SS<TA, TB>>   : detail::sm90_ss_traits<SM90_64x192x16_F32F16F16_SS<TA, TB>, half_t, half_t, 192, 16, detail::gmma_major<TA>, detail::gmma_major<TB>> {};
template <int TA, int TB> struct MMA_Traits<SM90_64x256x16_F32F16F16_SS<TA, TB>>   : detail::sm90_ss_traits<SM90_64x256x16_F32F16F16_SS<TA, TB>, half_t, half_t, 256, 16, detail::gmma_major<TA>, detail::gmma_major<TB>> {};
template <int TA, int TB> struct MMA_Traits<SM90_64x16x16_F32BF16BF16_SS<TA, TB>>  : detail::sm90_ss_traits<SM90_64x16x16_F32BF16BF16_SS<TA, TB>, bfloat16_t, bfloat16_t, 16, 16, detail::gmma_major<TA>, detail::gmma_major<TB>> {};
template <int TA, int TB> struct MMA_Traits<SM90_64x64x16_F32BF16BF16_SS<TA, TB>>  : detail::sm90_ss_traits<SM90_64x64x16_F32BF16BF16_SS<TA, TB>, bfloat16_t, bfloat16_t, 64, 16, detail::gmma_major<TA>, detail::gmma_major<TB>> {};
template <int TA, int TB> struct MMA_Traits<SM90_64x80x16_F32BF16BF16_SS<TA, TB>>  : detail::sm90_ss_traits<SM90_64x80x16_F32BF16BF16_SS<TA, TB>, bfloat16_t, bfloat16_t, 80, 16, detail::gmma_major<TA>, detail::gmma_major<TB>> {};
template <int TA, int TB> struct MMA_Traits<SM90_64x128x16_F32BF16BF16_SS<TA, TB>> : detail::sm90_ss_traits<SM90_64x128x16_F32BF16BF16_SS<TA, TB>, bfloat16_t, bfloat16_t, 128, 16, detail::gmma_major<TA>, detail::gmma_major<TB>> {};
template <int TA, int TB> struct MMA_Traits<SM90_64x176x16_F32BF16BF16_SS<TA, TB>> : detail::sm90_ss_traits<SM90_64x176x16_F32BF16BF16_SS<TA, TB>, bfloat16_t, bfloat16_t, 176, 16, detail::gmma_major<TA>, detail::gmma_major<TB>> {};
template <int TA, int TB> struct MMA_Traits<SM90_64x192x16_F32BF16BF16_SS<TA, TB>> : detail::sm90_ss_traits<SM90_64x192x16_F32BF16BF16_SS<TA, TB>, bfloat16_t, bfloat16_t, 192, 16, detail::gmma_major<TA>, detail::gmma_major<TB>> {};
template <int TA, int TB> struct MMA_Traits<SM90_64x256x16_F32BF16BF16_SS<TA, TB>> : detail::sm90_ss_traits<SM90_64x256x16_F32BF16BF16_SS<TA, TB>, bfloat16_t, bfloat16_t, 256, 16, detail::gmma_major<TA>, detail::gmma_major<TB>> {};

template <> struct MMA_Traits<SM90_64x128x8_F32TF32TF32_SS> : detail::sm90_ss_traits<SM90_64x128x8_F32TF32TF32_SS, tfloat32_t, tfloat32_t, 128, 8, GMMA::Major::K, GMMA::Major::K> {};
template <> struct MMA_Traits<SM90_64x256x8_F32TF32TF32_SS> : detail::sm90_ss_traits<SM90_64x256x8_F32TF32TF32_SS, tfloat32_t, tfloat32_t, 256, 8, GMMA::Major::K, GMMA::Major::K> {};

template <> struct MMA_Traits<SM90_64x64x32_F32E4M3E4M3_SS>  : detail::sm90_fp8_traits<SM90_64x64x32_F32E4M3E4M3_SS, float_e4m3_t, float_e4m3_t, 64> {};
template <> struct MMA_Traits<SM90_64x128x32_F32E4M3E4M3_SS> : detail::sm90_fp8_traits<SM90_64x128x32_F32E4M3E4M3_SS, float_e4m3_t, float_e4m3_t, 128> {};
template <> struct MMA_Traits<SM90_64x192x32_F32E4M3E4M3_SS> : detail::sm90_fp8_traits<SM90_64x192x32_F32E4M3E4M3_SS, float_e4m3_t, float_e4m3_t, 192> {};
template <> struct MMA_Traits<SM90_64x256x32_F32E4M3E4M3_SS> : detail::sm90_fp8_traits<SM90_64x256x32_F32E4M3E4M3_SS, float_e4m3_t, float_e4m3_t, 256> {};
template <> struct MMA_Traits<SM90_64x64x32_F32E4M3E5M2_SS>  : detail::sm90_fp8_traits<SM90_64x64x32_F32E4M3E5M2_SS, float_e4m3_t, float_e5m2_t, 64> {};
template <> struct MMA_Traits<SM90_64x128x32_F32E4M3E5M2_SS> : detail::sm90_fp8_traits<SM90_64x128x32_F32E4M3E5M2_SS, float_e4m3_t, float_e5m2_t, 128> {};
template <> struct MMA_Traits<SM90_64x192x32_F32E4M3E5M2_SS> : detail::sm90_fp8_traits<SM90_64x192x32_F32E4M3E5M2_SS, float_e4m3_t, float_e5m2_t, 192> {};
template <> struct MMA_Traits<SM90_64x256x32_F32E4M3E5M2_SS> : detail::sm90_fp8_traits<SM90_64x256x32_F32E4M3E5M2_SS, float_e4m3_t, float_e5m2_t, 256> {};
template <> struct MMA_Traits<SM90_64x64x32_F32E5M2E4M3_SS>  : detail::sm90_fp8_traits<SM90_64x64x32_F32E5M2E4M3_SS, float_e5m2_t, float_e4m3_t, 64> {};
template <> struct MMA_Traits<SM90_64x128x32_F32E5M2E4M3_SS> : detail::sm90_fp8_traits<SM90_64x128x32_F32E5M2E4M3_SS, float_e5m2_t, float_e4m3_t, 128> {};
template <> struct MMA_Traits<SM90_64x192x32_F32E5M2E4M3_SS> : detail::sm90_fp8_traits<SM90_64x192x32_F32E5M2E4M3_SS, float_e5m2_t, float_e4m3_t, 192> {};
template <> struct MMA_Traits<SM90_64x256x32_F32E5M2E4M3_SS> : detail::sm90_fp8_traits<SM90_64x256x32_F32E5M2E4M3_SS, float_e5m2_t, float_e4m3_t, 256> {};
template <> struct MMA_Traits<SM90_64x64x32_F32E5M2E5M2_SS>  : detail::sm90_fp8_traits<SM90_64x64x32_F32E5M2E5M2_SS, float_e5m2_t, float_e5m2_t, 64> {};
template <> struct MMA_Traits<SM90_64x128x32_F32E5M2E5M2_SS> : detail::sm90_fp8_traits<SM90_64x128x32_F32E5M2E5M2_SS, float_e5m2_t, float_e5m2_t, 128> {};
template <> struct MMA_Traits<SM90_64x192x32_F32E5M2E5M2_SS> : detail::sm90_fp8_traits<SM90_64x192x32_F32E5M2E5M2_SS, float_e5m2_t, float_e5m2_t, 192> {};
template <> struct MMA_Traits<SM90_64x256x32_F32E5M2E5M2_SS> : detail::sm90_fp8_traits<SM90_64x256x32_F32E5M2E5M2_SS, float_e5m2_t, float_e5m2_t, 256> {};

template <int TB> struct MMA_Traits<SM90_64x64x16_F32F16F16_RS<TB>>    : detail::sm90_rs_traits<SM90_64x64x16_F32F16F16_RS<TB>, half_t, 64, detail::gmma_major<TB>> {};
template <int TB> struct MMA_Traits<SM90_64x128x16_F32F16F16_RS<TB>>   : detail::sm90_rs_traits<SM90_64x128x16_F32F16F16_RS<TB>, half_t, 128, detail::gmma_major<TB>> {};
template <int TB> struct MMA_Traits<SM90_64x192x16_F32F16F16_RS<TB>>   : detail::sm90_rs_traits<SM90_64x192x16_F32F16F16_RS<TB>, half_t, 192, detail::gmma_major<TB>> {};
template <int TB> struct MMA_Traits<SM90_64x256x16_F32F16F16_RS<TB>>   : detail::sm90_rs_traits<SM90_64x256x16_F32F16F16_RS<TB>, half_t, 256, detail::gmma_major<TB>> {};
template <int TB> struct MMA_Traits<SM90_64x64x16_F32BF16BF16_RS<TB>>  : detail::sm90_rs_traits<SM90_64x64x16_F32BF16BF16_RS<TB>, bfloat16_t, 64, detail::gmma_major<TB>> {};
template <int TB> struct MMA_Traits<SM90_64x128x16_F32BF16BF16_RS<TB>> : detail::sm90_rs_traits<SM90_64x128x16_F32BF16BF16_RS<TB>, bfloat16_t, 128, detail::gmma_major<TB>> {};
template <int TB> struct MMA_Traits<SM90_64x192x16_F32BF16BF16_RS<TB>> : detail::sm90_rs_traits<SM90_64x192x16_F32BF16BF16_RS<TB>, bfloat16_t, 192, detail::gmma_major<TB>> {};
template <int TB> struct MMA_Traits<SM90_64x256x16_F32BF16BF16_RS<TB>> : detail::sm90_rs_traits<SM90_64x256x16_F32BF16BF16_RS<TB>, bfloat16_t, 256, detail::gmma_major<TB>> {};
// clang-format on

}  // namespace tessel
