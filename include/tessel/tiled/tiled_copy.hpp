// tessel/tiled/tiled_copy.hpp -- TiledCopy: many copy atoms moving one tile, and each thread's share.
//
// A TiledCopy is a Copy_Atom plus
//   Tiler_MN        the shape of the tile one execution of the TiledCopy moves
//   TiledLayout_TV  (thread, value) -> coordinate in that tile (column-major index), numbered as
//                   the atom's reference side (RefLayout) sees threads and values
// make_tiled_copy(atom, thr_layout, val_layout): thread t owns the val_layout block at its
//   thr_layout coordinate (raked product: the blocks of all threads interleave):
//   (Copy_Atom<AutoVectorizingCopyWithAssumedAlignment<128>, half_t>, (8,16) row-major, (1,8))
//     -> Tiler_MN (_8,_128), TiledLayout_TV ((_16,_8),_8):((_64,_1),_8)         [seed 001]
// make_tiled_copy_A/B/C(atom, tiled_mma): the TV layout of the MMA's operand (e.g. ldmatrix
//   feeding mma.sync).
// get_slice(t) -> ThrCopy: partition_S/D(tensor) -> (CPY, CPY_M, CPY_N, ...) the elements thread
//   t reads / writes, the first mode being one atom execution's values; retile_S/D(fragment)
//   regroups a thread's register fragment (e.g. from partition_fragment_A) into that shape.
// get_layoutS_TV / get_layoutD_TV: (thread, value) -> tile coordinate on each side.
#pragma once

#include <tessel/atom/copy_atom.hpp>
#include <tessel/config.hpp>
#include <tessel/core/print.hpp>
#include <tessel/layout.hpp>
#include <tessel/layout/composed_divide.hpp>
#include <tessel/layout/layout_like.hpp>
#include <tessel/layout/recast.hpp>
#include <tessel/tensor/tensor.hpp>
#include <tessel/tiled/tiled_mma.hpp>

#include <ostream>
#include <type_traits>

namespace tessel {

template <class TiledCopy_, class ThrIdx>
struct ThrCopy;

template <class Atom, class LayoutCopy_TV, class ShapeTiler_MN>
struct TiledCopy : Atom {
  using AtomThrID = typename Atom::ThrID;
  using AtomLayoutSrc = typename Atom::ValLayoutSrc;
  using AtomLayoutDst = typename Atom::ValLayoutDst;
  using AtomLayoutRef = typename Atom::ValLayoutRef;
  using AtomNumThr = decltype(size<0>(AtomLayoutRef{}));
  using AtomNumVal = decltype(size<1>(AtomLayoutRef{}));

  using Tiler_MN = ShapeTiler_MN;
  using TiledLayout_TV = LayoutCopy_TV;
  using TiledNumThr = decltype(size<0>(TiledLayout_TV{}));
  using TiledNumVal = decltype(size<1>(TiledLayout_TV{}));

  static_assert(TiledNumThr::value % AtomNumThr::value == 0,
                "TiledCopy: the thread count must be a multiple of the atom's (a warp-wide atom needs whole warps)");
  static_assert(TiledNumVal::value % AtomNumVal::value == 0,
                "TiledCopy: each thread's values must be a multiple of one atom execution's values; widen the "
                "value layout or pick a narrower atom");

  constexpr TiledCopy() = default;
  TESSEL_HOST_DEVICE constexpr TiledCopy(Atom const& a) : Atom(a) {}

  // (M,N,...) -> ((ThrV,ThrX),FrgV,(RestM,RestN,...)) for the source side.
  template <class L>
  TESSEL_HOST_DEVICE static constexpr auto tidfrg_S(L const& s) {
    return tile2thrfrg(zipped_divide(s, Tiler_MN{}), composition(right_inverse(AtomLayoutRef{}), AtomLayoutSrc{}));
  }
  // (M,N,...) -> ((ThrV,ThrX),FrgV,(RestM,RestN,...)) for the destination side.
  template <class L>
  TESSEL_HOST_DEVICE static constexpr auto tidfrg_D(L const& d) {
    return tile2thrfrg(zipped_divide(d, Tiler_MN{}), composition(right_inverse(AtomLayoutRef{}), AtomLayoutDst{}));
  }

  // ((TileM,TileN,...),(RestM,RestN,...)) -> ((ThrV,ThrX),FrgV,(RestM,RestN,...)), where ref2trg maps
  // the atom's (side thread, side value) to its reference numbering.
  template <class L, class Ref2Trg>
  TESSEL_HOST_DEVICE static constexpr auto tile2thrfrg(L const& l, Ref2Trg const& ref2trg) {
    auto atom_tv = zipped_divide(TiledLayout_TV{}, make_shape(AtomNumThr{}, AtomNumVal{}));  // ((atom_t,atom_v),(rest_t,rest_v))
    auto trg_tv = composition(atom_tv, make_tile(ref2trg, _));                              // ((trg_t,trg_v),(rest_t,rest_v))
    auto thrval2mn = coalesce(zip(trg_tv), Shape<_1, Shape<_1, _1>>{});                      // ((trg_t,rest_t),(trg_v,rest_v))
    auto tv = composition(l, make_tile(thrval2mn, _));                                       // ((thr,val),(RestM,RestN,...))
    return tv(make_coord(_, _), _);
  }

  // Regroup a thread's fragment (V, M', N', ...) into (CPY, CPY_M, CPY_N, ...). Assumes the first
  // size<0>(fragment) values are the first values of TiledLayout_TV (true for MMA fragments).
  template <class L>
  TESSEL_HOST_DEVICE static constexpr auto retile(L const& l) {
    constexpr int R = rank_v<decltype(shape(l))>;
    auto v = size<0>(l);
    constexpr int upc = int(decltype(TiledNumThr{} * v)::value);
    auto frg_layout_mn = upcast<upc>(with_shape(right_inverse(TiledLayout_TV{}), shape(Tiler_MN{})));
    auto frg_layout_v = zipped_divide(logical_product(make_layout(v), right_inverse(frg_layout_mn)), make_layout(AtomNumVal{}));
    auto t = zipped_divide(l, prepend(product_each(shape(frg_layout_mn)), v));
    auto vt = composition(t, make_tile(frg_layout_v, _));
    return vt(_, append<R>(Int<0>{}, _));
  }

  TESSEL_HOST_DEVICE static constexpr auto get_layoutS_TV() {
    auto ref = make_layout(make_shape(shape(Tiler_MN{}), Int<1>{}));
    return tile2thrfrg(ref, composition(right_inverse(AtomLayoutRef{}), AtomLayoutSrc{}))(_, _, Int<0>{});
  }
  TESSEL_HOST_DEVICE static constexpr auto get_layoutD_TV() {
    auto ref = make_layout(make_shape(shape(Tiler_MN{}), Int<1>{}));
    return tile2thrfrg(ref, composition(right_inverse(AtomLayoutRef{}), AtomLayoutDst{}))(_, _, Int<0>{});
  }

  template <class ThrIdx>
    requires is_integral_v<ThrIdx>
  TESSEL_HOST_DEVICE static constexpr auto get_slice(ThrIdx const& thr_idx) {
    return ThrCopy<TiledCopy, ThrIdx>{thr_idx};
  }
  template <class ThrIdx>
    requires is_integral_v<ThrIdx>
  TESSEL_HOST_DEVICE static constexpr auto get_thread_slice(ThrIdx const& thr_idx) {
    return get_slice(thr_idx);
  }
};

template <class TiledCopy_, class ThrIdx>
struct ThrCopy {
  ThrIdx thr_idx_;

  template <class T>
    requires is_tensor_v<T>
  TESSEL_HOST_DEVICE constexpr auto partition_S(T&& s) const {
    auto thr = make_tensor(s.data(), TiledCopy_::tidfrg_S(s.layout()));
    return thr(thr_idx_, _, repeat<rank_v<decltype(shape(s.layout()))>>(_));
  }
  template <class T>
    requires is_tensor_v<T>
  TESSEL_HOST_DEVICE constexpr auto partition_D(T&& d) const {
    auto thr = make_tensor(d.data(), TiledCopy_::tidfrg_D(d.layout()));
    return thr(thr_idx_, _, repeat<rank_v<decltype(shape(d.layout()))>>(_));
  }
  template <class T>
    requires is_tensor_v<T>
  TESSEL_HOST_DEVICE static constexpr auto retile_S(T&& s) {
    return make_tensor(s.data(), TiledCopy_::retile(s.layout()));
  }
  template <class T>
    requires is_tensor_v<T>
  TESSEL_HOST_DEVICE static constexpr auto retile_D(T&& d) {
    return make_tensor(d.data(), TiledCopy_::retile(d.layout()));
  }
};

template <class Atom, class LayoutTV, class Tiler>
TESSEL_HOST_DEVICE constexpr auto make_tiled_copy_impl(Atom const& atom, LayoutTV const&, Tiler const&) {
  return TiledCopy<Atom, LayoutTV, Tiler>{atom};
}

template <class... Args, class ThrLayout, class ValLayout = Layout<_1>>
TESSEL_HOST_DEVICE constexpr auto make_tiled_copy(Copy_Atom<Args...> const& atom, ThrLayout const& thr_layout = {},
                                                  ValLayout const& val_layout = {}) {
  static_assert(is_static_v<ThrLayout> && is_static_v<ValLayout>,
                "make_tiled_copy: the thread and value layouts must be static (Int<> extents)");
  auto layout_mn = raked_product(thr_layout, val_layout);                                     // (M,N) -> (thr,val)
  auto layout_tv = with_shape(right_inverse(layout_mn), make_shape(size(thr_layout), size(val_layout)));  // (thr,val) -> (M,N)
  auto tiler = product_each(shape(layout_mn));
  return make_tiled_copy_impl(atom, layout_tv, tiler);
}

template <class... CArgs, class A, class L, class P>
TESSEL_HOST_DEVICE constexpr auto make_tiled_copy_A(Copy_Atom<CArgs...> const& atom, TiledMMA<A, L, P> const& mma) {
  return make_tiled_copy_impl(atom, mma.get_layoutA_TV(), make_shape(tile_size<0>(mma), tile_size<2>(mma)));
}
template <class... CArgs, class A, class L, class P>
TESSEL_HOST_DEVICE constexpr auto make_tiled_copy_B(Copy_Atom<CArgs...> const& atom, TiledMMA<A, L, P> const& mma) {
  return make_tiled_copy_impl(atom, mma.get_layoutB_TV(), make_shape(tile_size<1>(mma), tile_size<2>(mma)));
}
template <class... CArgs, class A, class L, class P>
TESSEL_HOST_DEVICE constexpr auto make_tiled_copy_C(Copy_Atom<CArgs...> const& atom, TiledMMA<A, L, P> const& mma) {
  return make_tiled_copy_impl(atom, mma.get_layoutC_TV(), make_shape(tile_size<0>(mma), tile_size<1>(mma)));
}
// A TiledCopy with another atom but the same source (or destination) TV layout and tile.
template <class... Args, class TC>
TESSEL_HOST_DEVICE constexpr auto make_tiled_copy_S(Copy_Atom<Args...> const& atom, TC const& tiled) {
  return make_tiled_copy_impl(atom, tiled.get_layoutS_TV(), typename TC::Tiler_MN{});
}
template <class... Args, class TC>
TESSEL_HOST_DEVICE constexpr auto make_tiled_copy_D(Copy_Atom<Args...> const& atom, TC const& tiled) {
  return make_tiled_copy_impl(atom, tiled.get_layoutD_TV(), typename TC::Tiler_MN{});
}

template <class T>
struct is_tiled_copy : std::false_type {};
template <class A, class L, class S>
struct is_tiled_copy<TiledCopy<A, L, S>> : std::true_type {};
template <class T>
inline constexpr bool is_tiled_copy_v = is_tiled_copy<std::remove_cvref_t<T>>::value;

// The number of threads.
template <class A, class L, class S>
TESSEL_HOST_DEVICE constexpr auto size(TiledCopy<A, L, S> const&) {
  return typename TiledCopy<A, L, S>::TiledNumThr{};
}
template <int... Is, class A, class L, class S>
TESSEL_HOST_DEVICE constexpr auto tile_size(TiledCopy<A, L, S> const&) {
  return size<Is...>(S{});
}

template <class Sink, class A, class L, class S>
TESSEL_HOST_DEVICE void format(Sink& sink, TiledCopy<A, L, S> const& c) {
  sink.text("TiledCopy\n");
  sink.text("  Tiler_MN:       ");
  format(sink, S{});
  sink.text("\n  TiledLayout_TV: ");
  format(sink, L{});
  sink.text("\n");
  format(sink, static_cast<A const&>(c));
}

template <class A, class L, class S>
std::ostream& operator<<(std::ostream& os, TiledCopy<A, L, S> const& c) {
  OstreamSink sink{&os};
  format(sink, c);
  return os;
}

}  // namespace tessel
