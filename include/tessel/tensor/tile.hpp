// tessel/tensor/tile.hpp -- cutting tensors into tiles and handing tiles to threads.
//
// The divides of layout/divide.hpp apply to a tensor's layout and keep its data.
// inner_partition(t, tiler, c) = zipped_divide(t, tiler)(_, c): the tile at tile-coordinate c.
// outer_partition(t, tiler, c) = zipped_divide(t, tiler)(c, _): element c of every tile.
// local_tile(t, tiler, c[, proj]) is inner_partition -- the CTA's tile; `_` in c keeps that mode:
//   mA (M,K), tiler (BLK_M,BLK_N,BLK_K), c (bm,bn,_), Step<_1,X,_1>  ->  gA (BLK_M,BLK_K,k)
// local_partition(t, thr_layout, idx[, proj]) is outer_partition at thread idx's coordinate in
// thr_layout -- the elements one thread owns:
//   sA (BLK_M,BLK_K), tA (32,8)                ->  tAsA (BLK_M/32, BLK_K/8)
//   sA (BLK_M,BLK_K), tC (16,16), Step<_1,X>   ->  tCsA (BLK_M/16, BLK_K)   (rows of tC only)
// A projection (Step with _1 to keep a mode and X to drop it) is applied to the tiler/thread
// layout and to the coordinate first.
#pragma once

#include <tessel/config.hpp>
#include <tessel/layout.hpp>
#include <tessel/layout/composed_divide.hpp>
#include <tessel/layout/layout_like.hpp>
#include <tessel/tensor/tensor.hpp>

namespace tessel {

// CuTe's name for "drop this mode" in a projection Step.
using X = Underscore;

template <class T, class Tiler>
  requires is_tensor_v<T>
TESSEL_HOST_DEVICE constexpr auto logical_divide(T&& t, Tiler const& tiler) {
  return make_tensor(t.data(), logical_divide(t.layout(), tiler));
}
template <class T, class Tiler>
  requires is_tensor_v<T>
TESSEL_HOST_DEVICE constexpr auto zipped_divide(T&& t, Tiler const& tiler) {
  return make_tensor(t.data(), zipped_divide(t.layout(), tiler));
}
template <class T, class Tiler>
  requires is_tensor_v<T>
TESSEL_HOST_DEVICE constexpr auto tiled_divide(T&& t, Tiler const& tiler) {
  return make_tensor(t.data(), tiled_divide(t.layout(), tiler));
}
template <class T, class Tiler>
  requires is_tensor_v<T>
TESSEL_HOST_DEVICE constexpr auto flat_divide(T&& t, Tiler const& tiler) {
  return make_tensor(t.data(), flat_divide(t.layout(), tiler));
}
template <class T, class Tiler>
  requires is_tensor_v<T>
TESSEL_HOST_DEVICE constexpr auto composition(T&& t, Tiler const& tiler) {
  return make_tensor(t.data(), composition(t.layout(), tiler));
}

template <class T, class Tiler, class Coord>
  requires is_tensor_v<T>
TESSEL_HOST_DEVICE constexpr auto inner_partition(T&& t, Tiler const& tiler, Coord const& c) {
  auto tiled = zipped_divide(t, tiler);  // ((tile modes), (rest modes))
  constexpr int R0 = rank_v<decltype(tiled.layout().template shape<0>())>;
  constexpr int R1 = rank_v<decltype(tiled.layout().template shape<1>())>;
  if constexpr (is_tuple_v<Coord>) {
    return tiled(make_coord(repeat<R0>(_), append<R1>(c, _)));
  } else {
    return tiled(make_coord(repeat<R0>(_), c));
  }
}

template <class T, class Tiler, class Coord>
  requires is_tensor_v<T>
TESSEL_HOST_DEVICE constexpr auto outer_partition(T&& t, Tiler const& tiler, Coord const& c) {
  auto tiled = zipped_divide(t, tiler);
  constexpr int R0 = rank_v<decltype(tiled.layout().template shape<0>())>;
  constexpr int R1 = rank_v<decltype(tiled.layout().template shape<1>())>;
  if constexpr (is_tuple_v<Coord>) {
    return tiled(make_coord(append<R0>(c, _), repeat<R1>(_)));
  } else {
    return tiled(make_coord(c, repeat<R1>(_)));
  }
}

template <class T, class Tiler, class Coord>
  requires is_tensor_v<T>
TESSEL_HOST_DEVICE constexpr auto local_tile(T&& t, Tiler const& tiler, Coord const& c) {
  return inner_partition(t, tiler, c);
}
template <class T, class Tiler, class Coord, class Proj>
  requires is_tensor_v<T>
TESSEL_HOST_DEVICE constexpr auto local_tile(T&& t, Tiler const& tiler, Coord const& c, Proj const& proj) {
  return local_tile(t, dice(proj, tiler), dice(proj, c));
}

template <class T, class TS, class TD, class Index>
  requires(is_tensor_v<T> && is_integral_v<Index>)
TESSEL_HOST_DEVICE constexpr auto local_partition(T&& t, Layout<TS, TD> const& thr_layout, Index const& idx) {
  return outer_partition(t, product_each(thr_layout.shape()), get_flat_coord(thr_layout, idx));
}
template <class T, class TS, class TD, class Index, class Proj>
  requires(is_tensor_v<T> && is_integral_v<Index>)
TESSEL_HOST_DEVICE constexpr auto local_partition(T&& t, Layout<TS, TD> const& thr_layout, Index const& idx,
                                                  Proj const& proj) {
  return local_partition(t, dice(proj, thr_layout), idx);
}

}  // namespace tessel
