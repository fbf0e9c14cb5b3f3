// tessel/atom/copy_traits.hpp -- each copy instruction's (thread, value) -> bit layouts, as data.
//
// Copy_Traits<Op> describes one execution of Op by the threads that take part:
//   ThrID      logical thread -> thread index (_1:_0 for one thread, _32:_1 for a warp)
//   SrcLayout  (thread, value) -> bit of the data moved, as the source side sees it
//   DstLayout  (thread, value) -> bit, as the destination side sees it
//   RefLayout  the side whose (thread, value) numbering a TiledCopy's TV layout uses
// The bit numbering is the instruction's own (for ldmatrix: matrix j, row r, bit b is
// j*1024 + r*128 + b). Copy_Atom<Op, T> turns bits into elements of T.
//   Copy_Traits<SM75_U32x4_LDSM_N>: Src _32 addresses x 128 bits, (_32,_128):(_128,_1);
//                                   Dst 32 threads x 4 regs x 32 bits, (_32,(_32,_4)):(_32,(_1,_1024))
#pragma once

#include <tessel/arch/sm75_copy_ldmatrix.hpp>
#include <tessel/arch/sm80_copy_cp_async.hpp>
#include <tessel/arch/sm90_copy_stmatrix.hpp>
#include <tessel/arch/universal_copy.hpp>
#include <tessel/config.hpp>
#include <tessel/layout.hpp>
#include <tessel/numeric/int_types.hpp>

namespace tessel {

template <class Op, class... Args>
struct Copy_Traits {
  static_assert(sizeof(Op) == 0, "Copy_Traits: no traits are defined for this copy operation");
};

namespace detail {
// One thread moving one value of `Bits` bits (UniversalCopy, cp.async).
template <int SrcBits, int DstBits>
struct single_thread_copy_traits {
  using ThrID = Layout<_1>;
  using SrcLayout = Layout<Shape<_1, Int<SrcBits>>>;
  using DstLayout = Layout<Shape<_1, Int<DstBits>>>;
  using RefLayout = SrcLayout;
};

// ldmatrix / stmatrix address side: `Rows` threads give one 128-bit row each; the others repeat.
template <int Rows>
using ldsm_row_layout = std::conditional_t<
    Rows == 32, Layout<Shape<_32, _128>, Stride<_128, _1>>,
    Layout<Shape<Shape<Int<Rows>, Int<32 / Rows>>, _128>, Stride<Stride<_128, _0>, _1>>>;

// ldmatrix (non-transposed) register side: thread t, register j holds 32 bits at j*1024 + t*32.
template <int Regs>
using ldsm_n_reg_layout = std::conditional_t<Regs == 1, Layout<Shape<_32, _32>, Stride<_32, _1>>,
                                             Layout<Shape<_32, Shape<_32, Int<Regs>>>, Stride<_32, Stride<_1, _1024>>>>;

// ldmatrix.trans register side: thread t = (q, r) = (t%4, t/4), half h of register j holds the
// 16 bits of row 2q+h, column r: bit j*1024 + (2q+h)*128 + r*16.
template <int Regs>
using ldsm_t_reg_layout = std::conditional_t<
    Regs == 1, Layout<Shape<Shape<_4, _8>, Shape<_16, _2>>, Stride<Stride<_256, _16>, Stride<_1, _128>>>,
    Layout<Shape<Shape<_4, _8>, Shape<_16, _2, Int<Regs>>>, Stride<Stride<_256, _16>, Stride<_1, _128, _1024>>>>;
}  // namespace detail

template <class S, class D>
struct Copy_Traits<UniversalCopy<S, D>> : detail::single_thread_copy_traits<sizeof_bits_v<S>, sizeof_bits_v<D>> {};

// The width is chosen per copy from the layouts, so the atom itself moves "one value".
template <int MaxVecBits>
struct Copy_Traits<AutoVectorizingCopyWithAssumedAlignment<MaxVecBits>> {
  using ThrID = Layout<_1>;
  using SrcLayout = Layout<Shape<_1, _1>, Stride<_0, _0>>;
  using DstLayout = Layout<Shape<_1, _1>, Stride<_0, _0>>;
  using RefLayout = SrcLayout;
};

template <class S, class D>
struct Copy_Traits<SM80_CP_ASYNC_CACHEALWAYS<S, D>> : detail::single_thread_copy_traits<sizeof_bits_v<S>, sizeof_bits_v<D>> {};
template <class S, class D>
struct Copy_Traits<SM80_CP_ASYNC_CACHEGLOBAL<S, D>> : detail::single_thread_copy_traits<sizeof_bits_v<S>, sizeof_bits_v<D>> {};

// The zero-fill variants carry the predicate: with(false) fills the destination with zeros.
// (tessel's default is true -- an unpredicated copy copies; CuTe's default is false.)
template <class S, class D>
struct Copy_Traits<SM80_CP_ASYNC_CACHEALWAYS_ZFILL<S, D>>
    : detail::single_thread_copy_traits<sizeof_bits_v<S>, sizeof_bits_v<D>> {
  bool pred = true;
  TESSEL_HOST_DEVICE constexpr Copy_Traits with(bool p) const { return {{}, p}; }
};
template <class S, class D>
struct Copy_Traits<SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<S, D>>
    : detail::single_thread_copy_traits<sizeof_bits_v<S>, sizeof_bits_v<D>> {
  bool pred = true;
  TESSEL_HOST_DEVICE constexpr Copy_Traits with(bool p) const { return {{}, p}; }
};

template <>
struct Copy_Traits<SM75_U32x1_LDSM_N> {
  using ThrID = Layout<_32>;
  using SrcLayout = detail::ldsm_row_layout<8>;
  using DstLayout = detail::ldsm_n_reg_layout<1>;
  using RefLayout = DstLayout;
};
template <>
struct Copy_Traits<SM75_U32x2_LDSM_N> {
  using ThrID = Layout<_32>;
  using SrcLayout = detail::ldsm_row_layout<16>;
  using DstLayout = detail::ldsm_n_reg_layout<2>;
  using RefLayout = DstLayout;
};
template <>
struct Copy_Traits<SM75_U32x4_LDSM_N> {
  using ThrID = Layout<_32>;
  using SrcLayout = detail::ldsm_row_layout<32>;
  using DstLayout = detail::ldsm_n_reg_layout<4>;
  using RefLayout = DstLayout;
};
template <>
struct Copy_Traits<SM75_U16x2_LDSM_T> {
  using ThrID = Layout<_32>;
  using SrcLayout = detail::ldsm_row_layout<8>;
  using DstLayout = detail::ldsm_t_reg_layout<1>;
  using RefLayout = DstLayout;
};
template <>
struct Copy_Traits<SM75_U16x4_LDSM_T> {
  using ThrID = Layout<_32>;
  using SrcLayout = detail::ldsm_row_layout<16>;
  using DstLayout = detail::ldsm_t_reg_layout<2>;
  using RefLayout = DstLayout;
};
template <>
struct Copy_Traits<SM75_U16x8_LDSM_T> {
  using ThrID = Layout<_32>;
  using SrcLayout = detail::ldsm_row_layout<32>;
  using DstLayout = detail::ldsm_t_reg_layout<4>;
  using RefLayout = DstLayout;
};

// stmatrix is ldmatrix backwards: registers are the source, rows of shared memory the destination.
template <>
struct Copy_Traits<SM90_U32x4_STSM_N> {
  using ThrID = Layout<_32>;
  using SrcLayout = detail::ldsm_n_reg_layout<4>;
  using DstLayout = detail::ldsm_row_layout<32>;
  using RefLayout = SrcLayout;
};

}  // namespace tessel
