// tessel/layout/product.hpp -- repeating a layout according to another.
//
// logical_product(A, B) = (A, complement(A, size(A)*cosize(B)) o B): a rank-2 layout whose
// first mode is A and whose second mode places the copies of A as B says.
//   Pre:  A's modes nest (complement.hpp); the composition is admissible (composition.hpp).
//   Post: R(a, b) == A(a) + complement(A, size(A)*cosize(B))(B(b)).
//   e.g.  logical_product((_2,_2):(_4,_1), _6:_1) -> ((_2,_2),(_2,_3)):((_4,_1),(_2,_8))
// A by-mode tiler multiplies mode by mode; zipped/tiled/flat_product regroup like the divides.
//
// blocked_product(A, B) and raked_product(A, B) pad A and B to the same rank R and pair mode i
// of A with mode i of the repetition: blocked keeps each copy of A contiguous, (A_i, B'_i);
// raked interleaves the copies, (B'_i, A_i).
//   e.g.  (_2,_5):(_5,_1) x (_3,_4):(_1,_3)
//           blocked -> ((_2,_3),(_5,_4)):((_5,_10),(_1,_30))
//           raked   -> ((_3,_2),(_4,_5)):((_10,_5),(_30,_1))
#pragma once

#include <tessel/config.hpp>
#include <tessel/layout/complement.hpp>
#include <tessel/layout/composition.hpp>
#include <tessel/layout/divide.hpp>  // unpack_mode1
#include <tessel/layout/layout.hpp>

namespace tessel {

template <class AS, class AD, class BS, class BD>
TESSEL_HOST_DEVICE constexpr auto logical_product(Layout<AS, AD> const& a, Layout<BS, BD> const& b) {
  return make_layout(a, composition(complement(a, size(a) * cosize(b)), b));
}

template <class AS, class AD, class Tiler>
  requires(!is_layout_v<Tiler>)
TESSEL_HOST_DEVICE constexpr auto logical_product(Layout<AS, AD> const& a, Tiler const& tiler) {
  if constexpr (is_tuple_v<Tiler>) {
    static_assert(tuple_size_v<Tiler> <= Layout<AS, AD>::rank,
                  "logical_product: the by-mode tiler has more modes than the layout");
    return transform_layout(a, tiler, [](auto const& m, auto const& t) { return logical_product(m, t); });
  } else if constexpr (is_underscore_v<Tiler>) {
    return a;
  } else {
    static_assert(is_integral_v<Tiler>, "logical_product: a tiler is a layout, an integer, `_`, or a tuple of these");
    return logical_product(a, make_layout(tiler));
  }
}

template <class AS, class AD, class Tiler>
TESSEL_HOST_DEVICE constexpr auto zipped_product(Layout<AS, AD> const& a, Tiler const& tiler) {
  return tile_unzip(logical_product(a, tiler), tiler);
}

template <class AS, class AD, class Tiler>
TESSEL_HOST_DEVICE constexpr auto tiled_product(Layout<AS, AD> const& a, Tiler const& tiler) {
  return detail::unpack_mode1(zipped_product(a, tiler));
}

template <class AS, class AD, class Tiler>
TESSEL_HOST_DEVICE constexpr auto flat_product(Layout<AS, AD> const& a, Tiler const& tiler) {
  auto z = zipped_product(a, tiler);
  constexpr int R0 = rank_v<decltype(z.template shape<0>())>;
  constexpr int R1 = rank_v<decltype(z.template shape<1>())>;
  return z(make_coord(repeat<R0>(_), repeat<R1>(_)));
}

template <class AS, class AD, class BS, class BD>
TESSEL_HOST_DEVICE constexpr auto blocked_product(Layout<AS, AD> const& a, Layout<BS, BD> const& b) {
  constexpr int R = rank_v<AS> > rank_v<BS> ? rank_v<AS> : rank_v<BS>;
  auto p = logical_product(append<R>(a), append<R>(b));
  return zip(layout<0>(p), layout<1>(p));
}

template <class AS, class AD, class BS, class BD>
TESSEL_HOST_DEVICE constexpr auto raked_product(Layout<AS, AD> const& a, Layout<BS, BD> const& b) {
  constexpr int R = rank_v<AS> > rank_v<BS> ? rank_v<AS> : rank_v<BS>;
  auto p = logical_product(append<R>(a), append<R>(b));
  return zip(layout<1>(p), layout<0>(p));
}

}  // namespace tessel
