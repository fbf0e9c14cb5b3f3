// tessel/atom/mma_traits.hpp -- each MMA instruction's (thread, value) -> (m,k) / (n,k) / (m,n)
// layouts, as data.
//
// MMA_Traits<Op>: value types, Shape_MNK, ThrID (lane -> thread) and
//   ALayout  (thread, value) -> m + M*k   in the MxK tile of A
//   BLayout  (thread, value) -> n + N*k   in the NxK tile of B
//   CLayout  (thread, value) -> m + M*n   in the MxN tile of C and D
// where "value" numbers a thread's fragment elements in the order the PTX ISA lists them
// (a0, a1, ...). For mma.sync with lane = 4*group + q (PTX's groupID and threadID_in_group):
//   m16n8k8  f16/bf16  A: a_i at (group + 8*(i/2), 2q + i%2)       B: b_i at (n=group, k=2q+i)
//   m16n8k16 f16/bf16  A: a_i at (group + 8*((i/2)%2), 2q + i%2 + 8*(i/4))
//                      B: b_i at (n=group, k=2q + i%2 + 8*(i/2))
//   m16n8k8  tf32      A: a_i at (group + 8*(i%2), q + 4*(i/2))    B: b_i at (n=group, k=q+4i)
//   m16n8k32 s8        A: a_i at (group + 8*((i/4)%2), 4q + i%4 + 16*(i/8))
//                      B: b_i at (n=group, k=4q + i%4 + 16*(i/4))
//   C (all)            c_i at (group + 8*(i/2), 2q + i%2)
//   e.g. SM80_16x8x8_F32F16F16F32_TN  ALayout ((_4,_8),(_2,_2)):((_32,_1),(_16,_8))
#pragma once

#include <tessel/arch/sm80_mma_sync.hpp>
#include <tessel/arch/universal_fma.hpp>
#include <tessel/config.hpp>
#include <tessel/layout.hpp>
#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/half.hpp>
#include <tessel/numeric/tfloat32.hpp>

#include <cstdint>

namespace tessel {

template <class Op, class... Args>
struct MMA_Traits {
  static_assert(sizeof(Op) == 0, "MMA_Traits: no traits are defined for this MMA operation");
};

template <class D, class A, class B, class C>
struct MMA_Traits<UniversalFMA<D, A, B, C>> {
  using ValTypeD = D;
  using ValTypeA = A;
  using ValTypeB = B;
  using ValTypeC = C;
  using Shape_MNK = Shape<_1, _1, _1>;
  using ThrID = Layout<_1>;
  using ALayout = Layout<Shape<_1, _1>>;
  using BLayout = Layout<Shape<_1, _1>>;
  using CLayout = Layout<Shape<_1, _1>>;
};

namespace detail {
// clang-format off
// C/D of every m16n8 shape: thread (q,group), value (i%2, i/2) -> m = group + 8*(i/2), n = 2q + i%2.
using sm80_16x8_c  = Layout<Shape<Shape<_4, _8>, Shape<_2, _2>>, Stride<Stride<_32, _1>, Stride<_16, _8>>>;
// A of m16n8k8 with 16-bit types (16x8 tile, the same shape as C).
using sm80_16x8_a  = sm80_16x8_c;
// B of m16n8k8 with 16-bit types: k = 2q + i, n = group.
using sm80_8x8_b   = Layout<Shape<Shape<_4, _8>, _2>, Stride<Stride<_16, _1>, _8>>;
// A of m16n8k16: m = group + 8*((i/2)%2), k = 2q + i%2 + 8*(i/4).
using sm80_16x16_a = Layout<Shape<Shape<_4, _8>, Shape<_2, _2, _2>>, Stride<Stride<_32, _1>, Stride<_16, _8, _128>>>;
// B of m16n8k16: k = 2q + i%2 + 8*(i/2), n = group.
using sm80_8x16_b  = Layout<Shape<Shape<_4, _8>, Shape<_2, _2>>, Stride<Stride<_16, _1>, Stride<_8, _64>>>;
// A of m16n8k8 tf32: m = group + 8*(i%2), k = q + 4*(i/2).
using sm80_16x8_a_tf32 = Layout<Shape<Shape<_4, _8>, Shape<_2, _2>>, Stride<Stride<_16, _1>, Stride<_8, _64>>>;
// B of m16n8k8 tf32: k = q + 4i, n = group.
using sm80_8x8_b_tf32  = Layout<Shape<Shape<_4, _8>, _2>, Stride<Stride<_8, _1>, _32>>;
// A of m16n8k32 s8: m = group + 8*((i/4)%2), k = 4q + i%4 + 16*(i/8).
using sm80_16x32_a = Layout<Shape<Shape<_4, _8>, Shape<_4, _2, _2>>, Stride<Stride<_64, _1>, Stride<_16, _8, _256>>>;
// B of m16n8k32 s8: k = 4q + i%4 + 16*(i/4), n = group.
using sm80_8x32_b  = Layout<Shape<Shape<_4, _8>, Shape<_4, _2>>, Stride<Stride<_32, _1>, Stride<_8, _128>>>;
// clang-format on

template <class TA, class TB, class TC, class MNK, class AL, class BL, class CL>
struct sm80_mma_traits {
  using ValTypeD = TC;
  using ValTypeA = TA;
  using ValTypeB = TB;
  using ValTypeC = TC;
  using Shape_MNK = MNK;
  using ThrID = Layout<_32>;
  using ALayout = AL;
  using BLayout = BL;
  using CLayout = CL;
};
}  // namespace detail

template <>
struct MMA_Traits<SM80_16x8x8_F32F16F16F32_TN>
    : detail::sm80_mma_traits<half_t, half_t, float, Shape<_16, _8, _8>, detail::sm80_16x8_a, detail::sm80_8x8_b,
                              detail::sm80_16x8_c> {};
template <>
struct MMA_Traits<SM80_16x8x8_F32BF16BF16F32_TN>
    : detail::sm80_mma_traits<bfloat16_t, bfloat16_t, float, Shape<_16, _8, _8>, detail::sm80_16x8_a,
                              detail::sm80_8x8_b, detail::sm80_16x8_c> {};
template <>
struct MMA_Traits<SM80_16x8x16_F32F16F16F32_TN>
    : detail::sm80_mma_traits<half_t, half_t, float, Shape<_16, _8, _16>, detail::sm80_16x16_a, detail::sm80_8x16_b,
                              detail::sm80_16x8_c> {};
template <>
struct MMA_Traits<SM80_16x8x16_F32BF16BF16F32_TN>
    : detail::sm80_mma_traits<bfloat16_t, bfloat16_t, float, Shape<_16, _8, _16>, detail::sm80_16x16_a,
                              detail::sm80_8x16_b, detail::sm80_16x8_c> {};
template <>
struct MMA_Traits<SM80_16x8x8_F32TF32TF32F32_TN>
    : detail::sm80_mma_traits<tfloat32_t, tfloat32_t, float, Shape<_16, _8, _8>, detail::sm80_16x8_a_tf32,
                              detail::sm80_8x8_b_tf32, detail::sm80_16x8_c> {};
template <>
struct MMA_Traits<SM80_16x8x32_S32S8S8S32_TN>
    : detail::sm80_mma_traits<std::int8_t, std::int8_t, std::int32_t, Shape<_16, _8, _32>, detail::sm80_16x32_a,
                              detail::sm80_8x32_b, detail::sm80_16x8_c> {};

}  // namespace tessel
