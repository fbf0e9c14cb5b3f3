// tessel/layout/divide.hpp -- splitting a layout into tiles and the arrangement of the tiles.
//
// logical_divide(A, T) = A o (T, complement(T, shape(coalesce(A)))): a rank-2 layout whose first
// mode is the tile T (taken from A) and whose second mode enumerates the tiles.
//   Pre:  the composition is admissible (composition.hpp); T's modes nest (complement.hpp).
//   Post: R(t, r) == A(T(t) + complement(T)(r)); size(R) >= size(A) (tiles may overhang).
//   e.g.  logical_divide((_4,_2,_3):(_2,_1,_8), _4:_2) -> ((_2,_2),(_2,_3)):((_4,_1),(_2,_8))
//
// With a by-mode tiler (T0, T1, ...) every mode i of A is divided by T_i and the modes past the
// tiler are kept:
//   logical_divide  -> ((t0,r0), (t1,r1), extra...)
//   zipped_divide   -> ((t0,t1,...), (r0,r1,...,extra...))
//   tiled_divide    -> ((t0,t1,...), r0, r1, ..., extra...)
//   flat_divide     -> (t0, t1, ..., r0, r1, ..., extra...)
// With a single (non-tuple) tiler zipped_divide == logical_divide and tiled_divide unpacks the
// rest mode.
#pragma once

#include <tessel/config.hpp>
#include <tessel/layout/coalesce.hpp>
#include <tessel/layout/complement.hpp>
#include <tessel/layout/composition.hpp>
#include <tessel/layout/layout.hpp>

namespace tessel {

template <class LS, class LD, class TS, class TD>
TESSEL_HOST_DEVICE constexpr auto logical_divide(Layout<LS, LD> const& a, Layout<TS, TD> const& tiler) {
  return composition(a, make_layout(tiler, complement(tiler, shape(coalesce(a)))));
}

template <class LS, class LD, class Tiler>
  requires(!is_layout_v<Tiler>)
TESSEL_HOST_DEVICE constexpr auto logical_divide(Layout<LS, LD> const& a, Tiler const& tiler) {
  if constexpr (is_tuple_v<Tiler>) {
    static_assert(tuple_size_v<Tiler> <= Layout<LS, LD>::rank,
                  "logical_divide: the by-mode tiler has more modes than the layout");
    return transform_layout(a, tiler, [](auto const& m, auto const& t) { return logical_divide(m, t); });
  } else if constexpr (is_underscore_v<Tiler>) {
    return a;
  } else {
    static_assert(is_integral_v<Tiler>, "logical_divide: a tiler is a layout, an integer, `_`, or a tuple of these");
    return logical_divide(a, make_layout(tiler));
  }
}

template <class LS, class LD, class Tiler>
TESSEL_HOST_DEVICE constexpr auto zipped_divide(Layout<LS, LD> const& a, Tiler const& tiler) {
  return tile_unzip(logical_divide(a, tiler), tiler);
}

namespace detail {
// l(_, (_,_,...)) with as many `_` in the second mode as it has modes: unpacks mode 1.
template <class L>
TESSEL_HOST_DEVICE constexpr auto unpack_mode1(L const& l) {
  constexpr int R1 = rank_v<decltype(l.template shape<1>())>;
  return l(make_coord(_, repeat<R1>(_)));
}
}  // namespace detail

template <class LS, class LD, class Tiler>
TESSEL_HOST_DEVICE constexpr auto tiled_divide(Layout<LS, LD> const& a, Tiler const& tiler) {
  return detail::unpack_mode1(zipped_divide(a, tiler));
}

template <class LS, class LD, class Tiler>
TESSEL_HOST_DEVICE constexpr auto flat_divide(Layout<LS, LD> const& a, Tiler const& tiler) {
  auto z = zipped_divide(a, tiler);
  constexpr int R0 = rank_v<decltype(z.template shape<0>())>;
  constexpr int R1 = rank_v<decltype(z.template shape<1>())>;
  return z(make_coord(repeat<R0>(_), repeat<R1>(_)));
}

// ceil_div(shape, tiler): the number of tiles along each mode (the rest mode of the divide).
template <class Target, class TS, class TD>
TESSEL_HOST_DEVICE constexpr auto ceil_div(Target const& target, Layout<TS, TD> const& tiler) {
  return shape(complement(tiler, shape(target)));
}

}  // namespace tessel
