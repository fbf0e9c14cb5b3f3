// tessel/core/int_tuple.hpp -- IntTuple: an integral, or a tuple of IntTuples.
//
// Shapes, strides and coordinates are IntTuples. This header holds their arithmetic: rank,
// depth, size/product, ceil_div, shape_div, congruence and compatibility, and the
// coordinate <-> index maps (colexicographic: the first mode varies fastest, the last mode
// absorbs any overflow).
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/integral.hpp>          // C, Int, min, max, abs, signum
#include <tessel/core/tuple.hpp>             // tuple, get
#include <tessel/core/tuple_algorithms.hpp>  // transform, fold, apply

namespace tessel {

// ---- rank, depth, product ----------------------------------------------------------------

// Number of top-level modes: Int<N> for a tuple, _1 for an integral.
template <int... Is, class T>
TESSEL_HOST_DEVICE constexpr auto rank(T const& t) {
  if constexpr (sizeof...(Is) > 0) {
    return rank(get<Is...>(t));
  } else if constexpr (is_tuple_v<T>) {
    return Int<int(tuple_size_v<T>)>{};
  } else {
    return Int<1>{};
  }
}
template <class T>
inline constexpr int rank_v = decltype(rank(std::declval<T>()))::value;

namespace detail {
constexpr int max_of() { return 0; }
template <class... Ts>
constexpr int max_of(int a, Ts... ts) {
  int m = max_of(ts...);
  return a < m ? m : a;
}
}  // namespace detail

// Nesting depth: _0 for an integral, 1 + max depth of the modes for a tuple.
template <int... Is, class T>
TESSEL_HOST_DEVICE constexpr auto depth(T const& t) {
  if constexpr (sizeof...(Is) > 0) {
    return depth(get<Is...>(t));
  } else if constexpr (is_tuple_v<T>) {
    return apply(t, [](auto const&... a) { return Int<1 + detail::max_of(decltype(depth(a))::value...)>{}; });
  } else {
    return Int<0>{};
  }
}

// Product of all leaves (_1 for the empty tuple). Static when every leaf is static.
template <class T>
TESSEL_HOST_DEVICE constexpr auto product(T const& t) {
  if constexpr (is_tuple_v<T>) {
    if constexpr (tuple_size_v<T> == 0) {
      return Int<1>{};
    } else {
      return apply(t, [](auto const& a0, auto const&... a) { return (product(a0) * ... * product(a)); });
    }
  } else {
    return t;
  }
}

template <int... Is, class T>
TESSEL_HOST_DEVICE constexpr auto size(T const& t) {
  if constexpr (sizeof...(Is) > 0) {
    return product(get<Is...>(t));
  } else {
    return product(t);
  }
}

// (product(t0), product(t1), ...) over the top-level modes.
template <class T>
TESSEL_HOST_DEVICE constexpr auto product_each(T const& t) {
  return transform(wrap(t), [](auto const& a) { return product(a); });
}

template <class T>
TESSEL_HOST_DEVICE constexpr auto sum(T const& t) {
  if constexpr (is_tuple_v<T>) {
    return apply(t, [](auto const&... a) { return (Int<0>{} + ... + sum(a)); });
  } else {
    return t;
  }
}

template <class A, class B>
TESSEL_HOST_DEVICE constexpr auto inner_product(A const& a, B const& b) {
  if constexpr (is_tuple_v<A> && is_tuple_v<B>) {
    static_assert(tuple_size_v<A> == tuple_size_v<B>, "inner_product: the tuples differ in rank");
    return apply(transform(a, b, [](auto const& x, auto const& y) { return inner_product(x, y); }),
                 [](auto const&... v) { return (Int<0>{} + ... + v); });
  } else {
    return a * b;
  }
}

// ---- division ------------------------------------------------------------------------------

// ceil(a / b). Tuple by integral: b is divided out of a's modes from the left,
//   ceil_div((4,5,6), 40) == (1,1,3);  tuple by tuple: mode by mode (missing modes of b are 1).
template <class A, class B>
TESSEL_HOST_DEVICE constexpr auto ceil_div(A const& a, B const& b) {
  if constexpr (is_tuple_v<A>) {
    if constexpr (is_tuple_v<B>) {
      static_assert(tuple_size_v<A> >= tuple_size_v<B>, "ceil_div: the divisor has more modes");
      return transform(a, append<int(tuple_size_v<A>)>(b, Int<1>{}),
                       [](auto const& x, auto const& y) { return ceil_div(x, y); });
    } else {
      auto step = [](auto const& init, auto const& ai) {
        return make_tuple(append(get<0>(init), ceil_div(ai, get<1>(init))),
                          ceil_div(get<1>(init), ai));
      };
      return get<0>(fold(a, make_tuple(tuple<>{}, b), step));
    }
  } else if constexpr (is_tuple_v<B>) {
    return ceil_div(a, product(b));
  } else {
    return (a + b - Int<1>{}) / b;
  }
}

// Shape division: a / b rounded away from zero (so 2 / 4 == 1). Integral by integral requires
// that one of a, b divides the other; with static values this is a compile-time check.
// Tuple by integral folds b across a's modes: shape_div((4,5,6), 40) == (1,1,3).
template <class A, class B>
TESSEL_HOST_DEVICE constexpr auto shape_div(A const& a, B const& b) {
  if constexpr (is_tuple_v<A>) {
    if constexpr (is_tuple_v<B>) {
      static_assert(tuple_size_v<A> == tuple_size_v<B>, "shape_div: the tuples differ in rank");
      return transform(a, b, [](auto const& x, auto const& y) { return shape_div(x, y); });
    } else {
      auto step = [](auto const& init, auto const& ai) {
        return make_tuple(append(get<0>(init), shape_div(ai, get<1>(init))),
                          shape_div(get<1>(init), ai));
      };
      return get<0>(fold(a, make_tuple(tuple<>{}, b), step));
    }
  } else if constexpr (is_tuple_v<B>) {
    return shape_div(a, product(b));
  } else if constexpr (is_c<A>::value && is_c<B>::value) {
    static_assert(A::value % B::value == 0 || B::value % A::value == 0,
                  "shape_div: neither extent divides the other; shapes can only be divided "
                  "evenly. Choose a tile extent that divides the shape (or is a multiple of it).");
    return C<(A::value / B::value != 0 ? A::value / B::value
                                       : ((A::value > 0) - (A::value < 0)) *
                                             ((B::value > 0) - (B::value < 0)))>{};
  } else {
    return a / b != 0 ? a / b : signum(a) * signum(b);
  }
}

// min of two extents that keeps a static _1 static.
template <class A, class B>
TESSEL_HOST_DEVICE constexpr auto shape_min(A const& a, B const& b) {
  static_assert(!is_tuple_v<A> && !is_tuple_v<B>, "shape_min: defined for integrals only");
  if constexpr (is_constant_v<1, A> || is_constant_v<1, B>) {
    return Int<1>{};
  } else {
    return min(a, b);
  }
}

// Scale each leaf of a by the product of the matching mode of b.
template <class A, class B>
TESSEL_HOST_DEVICE constexpr auto elem_scale(A const& a, B const& b) {
  if constexpr (is_tuple_v<A>) {
    return transform(a, b, [](auto const& x, auto const& y) { return elem_scale(x, y); });
  } else {
    return a * product(b);
  }
}

// ---- profiles ------------------------------------------------------------------------------

// Same hierarchical structure (a static bool).
template <class A, class B>
TESSEL_HOST_DEVICE constexpr auto congruent(A const& a, B const& b) {
  return bool_constant<std::is_same_v<decltype(repeat_like(a, Int<0>{})),
                                      decltype(repeat_like(b, Int<0>{}))>>{};
}
template <class A, class B>
inline constexpr bool is_congruent_v = decltype(congruent(std::declval<A>(), std::declval<B>()))::value;

// A's profile is a prefix-refinement of B's: every leaf of A faces a leaf or subtree of B.
template <class A, class B>
TESSEL_HOST_DEVICE constexpr auto weakly_congruent(A const& a, B const& b) {
  if constexpr (is_tuple_v<A> && is_tuple_v<B>) {
    if constexpr (tuple_size_v<A> != tuple_size_v<B>) {
      return false_type{};
    } else {
      return apply(transform(a, b, [](auto const& x, auto const& y) { return weakly_congruent(x, y); }),
                   [](auto const&... z) { return bool_constant<(std::remove_cvref_t<decltype(z)>::value && ... && true)>{}; });
    }
  } else if constexpr (is_integral_v<A>) {
    return true_type{};
  } else {
    return false_type{};
  }
}

// Shape A is compatible with shape B: equal sizes, and every coordinate of A is a coordinate
// of B (B refines A leaf by leaf). Static when both sides are static.
template <class A, class B>
TESSEL_HOST_DEVICE constexpr auto compatible(A const& a, B const& b) {
  if constexpr (is_tuple_v<A> && is_tuple_v<B>) {
    if constexpr (tuple_size_v<A> != tuple_size_v<B>) {
      return false_type{};
    } else {
      return apply(transform(a, b, [](auto const& x, auto const& y) { return compatible(x, y); }),
                   [](auto const&... z) { return (true_type{} && ... && z); });
    }
  } else if constexpr (is_integral_v<A>) {
    return a == size(b);
  } else {
    return false_type{};
  }
}

// Replace the leaves of b that face a static _0 in a by _1 (used to drop broadcast modes).
template <class A, class B>
TESSEL_HOST_DEVICE constexpr auto filter_zeros(A const& a, B const& b) {
  if constexpr (is_tuple_v<A>) {
    return transform(a, b, [](auto const& x, auto const& y) { return filter_zeros(x, y); });
  } else if constexpr (is_constant_v<0, A>) {
    return repeat_like(b, Int<1>{});
  } else {
    return b;
  }
}

// ---- coordinates and indices ---------------------------------------------------------------

// The index of coordinate c under (shape, stride). An integral coordinate into a tuple shape
// is split colexicographically; the last mode takes what is left.
namespace detail {
// Whether every leaf of T is a static int (Int<N>): crd2idx then has one Int<> answer that a
// constant expression computes (crd2idx_static) without the fold below, whose steps are new
// types for every static coordinate -- in a kernel TU, thousands of instantiations.
template <class T>
struct is_static_int_tree : std::false_type {};
template <auto V>
struct is_static_int_tree<C<V>> : std::bool_constant<std::is_same_v<decltype(V), int>> {};
template <class... Ts>
struct is_static_int_tree<tuple<Ts...>> : std::bool_constant<(is_static_int_tree<Ts>::value && ...)> {};

// The product of a static-int shape's leaves.
template <class Shape>
constexpr int static_size() {
  if constexpr (is_tuple_v<Shape>) {
    return []<std::size_t... I>(std::index_sequence<I...>) {
      return (1 * ... * static_size<tuple_element_t<I, Shape>>());
    }(std::make_index_sequence<tuple_size_v<Shape>>{});
  } else {
    return Shape::value;
  }
}

// crd2idx(c, Shape{}, Stride{}) for an integral coordinate c and static-int Shape and Stride,
// step for step as the fold below: mode I < R - 1 takes c % size(mode I) and passes c / size on,
// the last mode takes the rest.
template <class Shape, class Stride>
constexpr int crd2idx_static(int c) {
  if constexpr (is_tuple_v<Shape>) {
    constexpr std::size_t R = tuple_size_v<Shape>;
    int acc = 0;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      auto const mode = [&]<std::size_t J>(std::integral_constant<std::size_t, J>) {
        using S = tuple_element_t<J, Shape>;
        using D = tuple_element_t<J, Stride>;
        if constexpr (J + 1 == R) {
          acc += crd2idx_static<S, D>(c);
        } else {
          constexpr int n = static_size<S>();
          acc += crd2idx_static<S, D>(c % n);
          c /= n;
        }
      };
      (mode(std::integral_constant<std::size_t, I>{}), ...);
    }(std::make_index_sequence<R>{});
    return acc;
  } else {
    return c * Stride::value;
  }
}
}  // namespace detail

template <class Coord, class Shape, class Stride>
TESSEL_HOST_DEVICE constexpr auto crd2idx(Coord const& c, Shape const& s, Stride const& d) {
  if constexpr (is_tuple_v<Coord>) {
    static_assert(is_tuple_v<Shape>, "crd2idx: a tuple coordinate needs a tuple shape");
    static_assert(tuple_size_v<Coord> == tuple_size_v<Shape> && tuple_size_v<Shape> == tuple_size_v<Stride>,
                  "crd2idx: coordinate, shape and stride differ in rank");
    return apply(transform(c, s, d, [](auto const& ci, auto const& si, auto const& di) {
                   return crd2idx(ci, si, di);
                 }),
                 [](auto const&... v) { return (Int<0>{} + ... + v); });
  } else if constexpr (is_tuple_v<Shape>) {
    static_assert(tuple_size_v<Shape> == tuple_size_v<Stride>, "crd2idx: shape and stride differ in rank");
    constexpr int R = int(tuple_size_v<Shape>);
    if constexpr (R == 0) {
      return Int<0>{};
    } else if constexpr (detail::is_static_int_tree<Coord>::value && detail::is_static_int_tree<Shape>::value &&
                         detail::is_static_int_tree<Stride>::value) {
      return Int<detail::crd2idx_static<Shape, Stride>(Coord::value)>{};
    } else {
      auto step = [&](auto const& init, auto i) {
        constexpr int I = decltype(i)::value;
        auto [acc, rest] = init;
        if constexpr (I == R - 1) {
          return make_tuple(acc + crd2idx(rest, get<I>(s), get<I>(d)), Int<0>{});
        } else {
          auto n = product(get<I>(s));
          return make_tuple(acc + crd2idx(rest % n, get<I>(s), get<I>(d)), rest / n);
        }
      };
      return get<0>(fold(make_seq<R>{}, make_tuple(Int<0>{}, c), step));
    }
  } else {
    return c * d;
  }
}

// Exclusive prefix products of a shape, in column-major (LayoutLeft) or row-major (LayoutRight)
// order, starting from `current`. A static _1 extent gets stride _0.
struct LayoutLeft;
struct LayoutRight;
using GenColMajor = LayoutLeft;
using GenRowMajor = LayoutRight;

namespace detail {
// Returns (strides, current * size(shape)).
template <class Major, class Shape, class Current>
TESSEL_HOST_DEVICE constexpr auto compact(Shape const& shape, Current const& current) {
  if constexpr (is_tuple_v<Shape>) {
    constexpr int R = int(tuple_size_v<Shape>);
    auto step = [&](auto const& init, auto i) {
      constexpr int I = std::is_same_v<Major, LayoutLeft> ? decltype(i)::value : R - 1 - decltype(i)::value;
      auto r = compact<Major>(get<I>(shape), get<1>(init));
      if constexpr (std::is_same_v<Major, LayoutLeft>) {
        return make_tuple(append(get<0>(init), get<0>(r)), get<1>(r));
      } else {
        return make_tuple(prepend(get<0>(init), get<0>(r)), get<1>(r));
      }
    };
    return fold(make_seq<R>{}, make_tuple(tuple<>{}, current), step);
  } else if constexpr (is_constant_v<1, Shape>) {
    return make_tuple(Int<0>{}, current);
  } else {
    return make_tuple(current, current * shape);
  }
}
}  // namespace detail

template <class Major, class Shape, class Current = Int<1>>
TESSEL_HOST_DEVICE constexpr auto compact_major(Shape const& shape, Current const& current = {}) {
  if constexpr (is_tuple_v<Current>) {
    return transform(shape, current, [](auto const& s, auto const& c) { return compact_major<Major>(s, c); });
  } else {
    return get<0>(detail::compact<Major>(shape, current));
  }
}

struct LayoutLeft {
  template <class Shape>
  using Apply = decltype(compact_major<LayoutLeft>(std::declval<Shape>()));
};
struct LayoutRight {
  template <class Shape>
  using Apply = decltype(compact_major<LayoutRight>(std::declval<Shape>()));
};

template <class Shape, class Current = Int<1>>
TESSEL_HOST_DEVICE constexpr auto compact_col_major(Shape const& shape, Current const& current = {}) {
  return compact_major<LayoutLeft>(shape, current);
}
template <class Shape, class Current = Int<1>>
TESSEL_HOST_DEVICE constexpr auto compact_row_major(Shape const& shape, Current const& current = {}) {
  return compact_major<LayoutRight>(shape, current);
}

// The coordinate of index `idx` in a compact column-major shape (inverse of
// crd2idx(c, shape, compact_col_major(shape))). The last mode absorbs overflow.
template <class Index, class Shape>
TESSEL_HOST_DEVICE constexpr auto idx2crd(Index const& idx, Shape const& shape) {
  if constexpr (is_tuple_v<Index>) {
    return transform(idx, shape, [](auto const& i, auto const& s) { return idx2crd(i, s); });
  } else if constexpr (is_tuple_v<Shape>) {
    constexpr int R = int(tuple_size_v<Shape>);
    auto step = [&](auto const& init, auto i) {
      constexpr int I = decltype(i)::value;
      auto [crd, rest] = init;
      if constexpr (I == R - 1) {
        return make_tuple(append(crd, idx2crd(rest, get<I>(shape))), Int<0>{});
      } else {
        auto n = product(get<I>(shape));
        return make_tuple(append(crd, idx2crd(rest % n, get<I>(shape))), rest / n);
      }
    };
    return get<0>(fold(make_seq<R>{}, make_tuple(tuple<>{}, idx), step));
  } else {
    return idx;
  }
}

// ---- values ------------------------------------------------------------------------------

namespace detail {
// The flat leaves of an IntTuple as an array of values (constexpr; works for static types).
template <int N>
struct Values {
  long long v[N > 0 ? N : 1] = {};
  static constexpr int size = N;
  TESSEL_HOST_DEVICE constexpr long long operator[](int i) const { return v[i]; }
};
template <class T>
TESSEL_HOST_DEVICE constexpr auto leaf_values(T const& t) {
  auto flat = flatten_to_tuple(t);
  constexpr int N = int(tuple_size_v<decltype(flat)>);
  Values<N> out{};
  int i = 0;
  for_each(flat, [&](auto const& x) { out.v[i++] = static_cast<long long>(x); });
  return out;
}
}  // namespace detail

// ---- regrouping ----------------------------------------------------------------------------

// Split each pair found at the terminals of `guide` into (firsts, seconds): with a tuple guide,
//   zip2_by(((a,b),(c,d),e), (G0,G1)) == ((a,c),(b,d,e));  with a non-tuple guide, t is a pair.
template <class T, class Guide>
TESSEL_HOST_DEVICE constexpr auto zip2_by(T const& t, Guide const& guide) {
  if constexpr (is_tuple_v<Guide>) {
    constexpr int TR = int(tuple_size_v<T>);
    constexpr int GR = int(tuple_size_v<Guide>);
    static_assert(TR >= GR, "zip2_by: the guide has more modes than the tuple");
    auto split = transform(take<0, GR>(t), guide, [](auto const& x, auto const& g) { return zip2_by(x, g); });
    auto firsts = transform(split, [](auto const& p) { return get<0>(p); });
    auto seconds = transform(split, [](auto const& p) { return get<1>(p); });
    return make_tuple(firsts, tuple_cat(seconds, take<GR, TR>(t)));
  } else {
    static_assert(tuple_size_v<T> == 2, "zip2_by: expected a rank-2 mode at a terminal of the guide");
    return t;
  }
}

}  // namespace tessel
