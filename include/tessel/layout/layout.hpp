// tessel/layout/layout.hpp -- Layout<Shape,Stride>: a function from coordinates to offsets.
//
// A layout pairs a shape with a congruent stride. L(c) = sum_i c_i * d_i for a coordinate c;
// an integer index i is first split colexicographically over the shape (the first mode varies
// fastest, the last mode absorbs overflow). Coordinates containing `_` slice the layout.
//   make_layout(make_shape(_4{},_2{}))            -> (_4,_2):(_1,_4)
//   make_layout(make_shape(4,2), GenRowMajor{})   -> (4,2):(2,_1)
//   (4,(2,3)):(2,(1,8)) at index 9  ==  at (1,(0,1))  ==  1*2 + 0*1 + 1*8 == 10
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/int_tuple.hpp>         // crd2idx, compact_major, product
#include <tessel/core/print.hpp>             // format, print
#include <tessel/core/tuple.hpp>             // tuple
#include <tessel/core/tuple_algorithms.hpp>  // transform, take, select
#include <tessel/core/underscore.hpp>        // _, slice

#include <ostream>
#include <type_traits>

namespace tessel {

template <class... Ts>
using Shape = tuple<Ts...>;
template <class... Ts>
using Stride = tuple<Ts...>;
template <class... Ts>
using Step = tuple<Ts...>;
template <class... Ts>
using Coord = tuple<Ts...>;
template <class... Ts>
using Tile = tuple<Ts...>;

template <class... Ts>
TESSEL_HOST_DEVICE constexpr Shape<Ts...> make_shape(Ts const&... t) {
  return {t...};
}
template <class... Ts>
TESSEL_HOST_DEVICE constexpr Stride<Ts...> make_stride(Ts const&... t) {
  return {t...};
}
template <class... Ts>
TESSEL_HOST_DEVICE constexpr Step<Ts...> make_step(Ts const&... t) {
  return {t...};
}
template <class... Ts>
TESSEL_HOST_DEVICE constexpr Coord<Ts...> make_coord(Ts const&... t) {
  return {t...};
}
template <class... Ts>
TESSEL_HOST_DEVICE constexpr Tile<Ts...> make_tile(Ts const&... t) {
  return {t...};
}

namespace detail {
template <class Shape, class Stride>
struct layout_storage : tuple_leaf<0, Shape>, tuple_leaf<1, Stride> {
  TESSEL_HOST_DEVICE constexpr layout_storage(Shape const& s, Stride const& d)
      : tuple_leaf<0, Shape>(s), tuple_leaf<1, Stride>(d) {}
};
}  // namespace detail

template <class ShapeT, class StrideT = typename LayoutLeft::template Apply<ShapeT>>
struct Layout : private detail::layout_storage<ShapeT, StrideT> {
  static_assert(is_congruent_v<ShapeT, StrideT>,
                "Layout: shape and stride must have the same profile (congruent IntTuples)");
  using shape_type = ShapeT;
  using stride_type = StrideT;
  static constexpr int rank = rank_v<ShapeT>;

  TESSEL_HOST_DEVICE constexpr Layout(ShapeT const& s = {}, StrideT const& d = {})
      : detail::layout_storage<ShapeT, StrideT>(s, d) {}

  template <int... Is>
  TESSEL_HOST_DEVICE constexpr auto shape() const {
    return get<Is...>(static_cast<detail::tuple_leaf<0, ShapeT> const&>(*this).ref());
  }
  template <int... Is>
  TESSEL_HOST_DEVICE constexpr auto stride() const {
    return get<Is...>(static_cast<detail::tuple_leaf<1, StrideT> const&>(*this).ref());
  }

  // L(coord): the offset of a coordinate (integral or hierarchical), or, when the coordinate
  // contains `_`, the sub-layout of the kept modes.
  template <class Crd>
  TESSEL_HOST_DEVICE constexpr auto operator()(Crd const& c) const {
    if constexpr (has_underscore_v<Crd>) {
      return Layout<decltype(slice(c, shape())), decltype(slice(c, stride()))>(slice(c, shape()),
                                                                             slice(c, stride()));
    } else {
      return crd2idx(c, shape(), stride());
    }
  }
  template <class C0, class C1, class... Cs>
  TESSEL_HOST_DEVICE constexpr auto operator()(C0 const& c0, C1 const& c1, Cs const&... cs) const {
    return (*this)(make_coord(c0, c1, cs...));
  }
};

template <class T>
struct is_layout : std::false_type {};
template <class S, class D>
struct is_layout<Layout<S, D>> : std::true_type {};
template <class T>
inline constexpr bool is_layout_v = is_layout<std::remove_cvref_t<T>>::value;

// ---- construction --------------------------------------------------------------------------

template <class S, class D>
  requires((is_tuple_v<S> || is_integral_v<S>) && (is_tuple_v<D> || is_integral_v<D>))
TESSEL_HOST_DEVICE constexpr auto make_layout(S const& shape, D const& stride) {
  return Layout<S, D>(shape, stride);
}

// A compact layout of `shape`, column-major unless a major tag is given.
template <class S>
  requires(is_tuple_v<S> || is_integral_v<S>)
TESSEL_HOST_DEVICE constexpr auto make_layout(S const& shape) {
  return make_layout(shape, compact_major<LayoutLeft>(shape));
}
template <class S>
  requires(is_tuple_v<S> || is_integral_v<S>)
TESSEL_HOST_DEVICE constexpr auto make_layout(S const& shape, LayoutLeft) {
  return make_layout(shape, compact_major<LayoutLeft>(shape));
}
template <class S>
  requires(is_tuple_v<S> || is_integral_v<S>)
TESSEL_HOST_DEVICE constexpr auto make_layout(S const& shape, LayoutRight) {
  return make_layout(shape, compact_major<LayoutRight>(shape));
}

// Concatenation: make_layout(A, B, ...) has the modes (A, B, ...).
template <class S0, class D0, class... Ss, class... Ds>
TESSEL_HOST_DEVICE constexpr auto make_layout(Layout<S0, D0> const& l0, Layout<Ss, Ds> const&... ls) {
  return make_layout(make_shape(l0.shape(), ls.shape()...), make_stride(l0.stride(), ls.stride()...));
}

// ---- queries -------------------------------------------------------------------------------

template <int... Is, class S, class D>
TESSEL_HOST_DEVICE constexpr auto shape(Layout<S, D> const& l) {
  return l.template shape<Is...>();
}
template <int... Is, class S, class D>
TESSEL_HOST_DEVICE constexpr auto stride(Layout<S, D> const& l) {
  return l.template stride<Is...>();
}
// shape(x) of an IntTuple is the IntTuple itself.
template <int... Is, class T>
  requires(is_tuple_v<T> || is_integral_v<T>)
TESSEL_HOST_DEVICE constexpr auto shape(T const& t) {
  return get<Is...>(t);
}

template <int... Is, class S, class D>
TESSEL_HOST_DEVICE constexpr auto size(Layout<S, D> const& l) {
  return size(l.template shape<Is...>());
}
template <int... Is, class S, class D>
TESSEL_HOST_DEVICE constexpr auto rank(Layout<S, D> const& l) {
  return rank(l.template shape<Is...>());
}
template <int... Is, class S, class D>
TESSEL_HOST_DEVICE constexpr auto depth(Layout<S, D> const& l) {
  return depth(l.template shape<Is...>());
}

// The extent of the codomain: 1 + the largest offset, from sum((s_i - 1) * |d_i|) + 1.
template <int... Is, class S, class D>
TESSEL_HOST_DEVICE constexpr auto cosize(Layout<S, D> const& l) {
  auto s = l.template shape<Is...>();
  auto d = l.template stride<Is...>();
  auto m1 = transform_leaf(s, [](auto const& x) { return x - Int<1>{}; });
  auto ad = transform_leaf(d, [](auto const& x) { return abs(x); });
  return inner_product(m1, ad) + Int<1>{};
}

template <class Crd, class S, class D>
TESSEL_HOST_DEVICE constexpr auto crd2idx(Crd const& c, Layout<S, D> const& l) {
  return crd2idx(c, l.shape(), l.stride());
}

// ---- modes ---------------------------------------------------------------------------------

template <std::size_t... Is, class S, class D>
  requires(sizeof...(Is) > 0)
TESSEL_HOST_DEVICE constexpr auto get(Layout<S, D> const& l) {
  return make_layout(get<Is...>(l.shape()), get<Is...>(l.stride()));
}

template <int... Is, class S, class D>
TESSEL_HOST_DEVICE constexpr auto layout(Layout<S, D> const& l) {
  if constexpr (sizeof...(Is) == 0) {
    return l;
  } else {
    return make_layout(get<Is...>(l.shape()), get<Is...>(l.stride()));
  }
}

template <int B, int E, class S, class D>
TESSEL_HOST_DEVICE constexpr auto take(Layout<S, D> const& l) {
  return make_layout(take<B, E>(l.shape()), take<B, E>(l.stride()));
}

template <int... Is, class S, class D>
TESSEL_HOST_DEVICE constexpr auto select(Layout<S, D> const& l) {
  return make_layout(select<Is...>(l.shape()), select<Is...>(l.stride()));
}

template <class S, class D>
TESSEL_HOST_DEVICE constexpr auto flatten(Layout<S, D> const& l) {
  return make_layout(flatten(l.shape()), flatten(l.stride()));
}

// Append a mode (default _1:_0, which changes nothing but the rank).
template <class S, class D, class SX = Int<1>, class DX = Int<0>>
TESSEL_HOST_DEVICE constexpr auto append(Layout<S, D> const& l, Layout<SX, DX> const& x = {}) {
  return make_layout(append(l.shape(), x.shape()), append(l.stride(), x.stride()));
}
template <int N, class S, class D, class SX = Int<1>, class DX = Int<0>>
TESSEL_HOST_DEVICE constexpr auto append(Layout<S, D> const& l, Layout<SX, DX> const& x = {}) {
  return make_layout(append<N>(l.shape(), x.shape()), append<N>(l.stride(), x.stride()));
}
template <class S, class D, class SX = Int<1>, class DX = Int<0>>
TESSEL_HOST_DEVICE constexpr auto prepend(Layout<S, D> const& l, Layout<SX, DX> const& x = {}) {
  return make_layout(prepend(l.shape(), x.shape()), prepend(l.stride(), x.stride()));
}
template <int N, class S, class D, class SX, class DX>
TESSEL_HOST_DEVICE constexpr auto replace(Layout<S, D> const& l, Layout<SX, DX> const& x) {
  return make_layout(replace<N>(l.shape(), x.shape()), replace<N>(l.stride(), x.stride()));
}

// Group the modes [B,E) into one mode.
template <int B, int E, class S, class D>
TESSEL_HOST_DEVICE constexpr auto group(Layout<S, D> const& l) {
  constexpr int R = rank_v<S>;
  auto gs = tuple_cat(take<0, B>(wrap(l.shape())), make_tuple(take<B, E>(wrap(l.shape()))),
                      take<E, R>(wrap(l.shape())));
  auto gd = tuple_cat(take<0, B>(wrap(l.stride())), make_tuple(take<B, E>(wrap(l.stride()))),
                      take<E, R>(wrap(l.stride())));
  return make_layout(gs, gd);
}

template <class Crd, class S, class D>
TESSEL_HOST_DEVICE constexpr auto slice(Crd const& c, Layout<S, D> const& l) {
  return make_layout(slice(c, l.shape()), slice(c, l.stride()));
}
template <class Crd, class S, class D>
TESSEL_HOST_DEVICE constexpr auto dice(Crd const& c, Layout<S, D> const& l) {
  return make_layout(dice(c, l.shape()), dice(c, l.stride()));
}
// (slice, offset of the fixed part of the coordinate): the `_` modes count as coordinate 0.
template <class Crd, class S, class D>
TESSEL_HOST_DEVICE constexpr auto slice_and_offset(Crd const& c, Layout<S, D> const& l) {
  auto fixed = transform_leaf(c, [](auto const& x) {
    if constexpr (is_underscore_v<decltype(x)>) {
      return Int<0>{};
    } else {
      return x;
    }
  });
  return make_tuple(slice(c, l), crd2idx(fixed, l.shape(), l.stride()));
}

// zip of the modes of one layout, or of two layouts mode by mode.
template <class S, class D>
TESSEL_HOST_DEVICE constexpr auto zip(Layout<S, D> const& l) {
  return make_layout(zip(l.shape()), zip(l.stride()));
}
template <class S0, class D0, class S1, class D1>
TESSEL_HOST_DEVICE constexpr auto zip(Layout<S0, D0> const& a, Layout<S1, D1> const& b) {
  return make_layout(zip(a.shape(), b.shape()), zip(a.stride(), b.stride()));
}

// Regroup the rank-2 modes found at the terminals of `tiler` into ((firsts...),(seconds...)).
template <class S, class D, class Tiler>
TESSEL_HOST_DEVICE constexpr auto tile_unzip(Layout<S, D> const& l, Tiler const& tiler) {
  return make_layout(zip2_by(l.shape(), tiler), zip2_by(l.stride(), tiler));
}

// f(mode_i) for each mode of a layout (or of a tuple of layouts), concatenated into a layout.
template <class T, class F>
TESSEL_HOST_DEVICE constexpr auto transform_layout(T const& t, F&& f) {
  return [&]<int... Is>(seq<Is...>) { return make_layout(f(get<Is>(t))...); }(make_seq<rank_v<T>>{});
}

// f(a_i, b_i) for the first min(rank a, rank b) modes, then the leftover modes of a, then of b.
template <class T0, class T1, class F>
TESSEL_HOST_DEVICE constexpr auto transform_layout(T0 const& t0, T1 const& t1, F&& f) {
  constexpr int R0 = rank_v<T0>;
  constexpr int R1 = rank_v<T1>;
  constexpr int R = R0 < R1 ? R0 : R1;
  return [&]<int... Is, int... J0, int... J1>(seq<Is...>, seq<J0...>, seq<J1...>) {
    return make_layout(f(get<Is>(t0), get<Is>(t1))..., get<R + J0>(t0)..., get<R + J1>(t1)...);
  }(make_seq<R>{}, make_seq<R0 - R>{}, make_seq<R1 - R>{});
}

// ---- printing --------------------------------------------------------------------------------

template <class Sink, class S, class D>
TESSEL_HOST_DEVICE void format(Sink& sink, Layout<S, D> const& l) {
  format(sink, l.shape());
  sink.text(":");
  format(sink, l.stride());
}

template <class S, class D>
std::ostream& operator<<(std::ostream& os, Layout<S, D> const& l) {
  OstreamSink sink{&os};
  format(sink, l);
  return os;
}

}  // namespace tessel
