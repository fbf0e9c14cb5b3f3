// tessel/core/tuple_algorithms.hpp -- structural operations on tuples.
//
// transform, for_each, fold, filter_tuple, tuple_cat, take/select/remove/replace,
// append/prepend, repeat/repeat_like, wrap/unwrap, flatten, zip, find_if. Each returns a new
// tuple; the static elements of the input stay static.
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/integral.hpp>  // C, Int
#include <tessel/core/tuple.hpp>     // tuple, get, make_seq

#include <utility>

namespace tessel {

// ---- apply / transform / for_each / fold -----------------------------------------------------

namespace detail {
template <class T, class F, int... Is>
TESSEL_HOST_DEVICE constexpr decltype(auto) apply_impl(T&& t, F&& f, seq<Is...>) {
  return f(get<Is>(static_cast<T&&>(t))...);
}
}  // namespace detail

// f(get<0>(t), get<1>(t), ...)
template <class T, class F>
TESSEL_HOST_DEVICE constexpr decltype(auto) apply(T&& t, F&& f) {
  return detail::apply_impl(static_cast<T&&>(t), f, tuple_seq<T>{});
}

// Element-wise f over one to three tuples of equal rank; a non-tuple is transformed as itself.
template <class T, class F>
TESSEL_HOST_DEVICE constexpr auto transform(T const& t, F&& f) {
  if constexpr (is_tuple_v<T>) {
    return apply(t, [&](auto const&... a) { return make_tuple(f(a)...); });
  } else {
    return f(t);
  }
}

namespace detail {
template <class T0, class T1, class F, int... Is>
TESSEL_HOST_DEVICE constexpr auto transform2(T0 const& t0, T1 const& t1, F& f, seq<Is...>) {
  return make_tuple(f(get<Is>(t0), get<Is>(t1))...);
}
template <class T0, class T1, class T2, class F, int... Is>
TESSEL_HOST_DEVICE constexpr auto transform3(T0 const& t0, T1 const& t1, T2 const& t2, F& f,
                                             seq<Is...>) {
  return make_tuple(f(get<Is>(t0), get<Is>(t1), get<Is>(t2))...);
}
}  // namespace detail

template <class T0, class T1, class F>
TESSEL_HOST_DEVICE constexpr auto transform(T0 const& t0, T1 const& t1, F&& f) {
  if constexpr (is_tuple_v<T0>) {
    static_assert(tuple_size_v<T0> == tuple_size_v<T1>, "transform: the tuples differ in rank");
    return detail::transform2(t0, t1, f, tuple_seq<T0>{});
  } else {
    return f(t0, t1);
  }
}

template <class T0, class T1, class T2, class F>
TESSEL_HOST_DEVICE constexpr auto transform(T0 const& t0, T1 const& t1, T2 const& t2, F&& f) {
  if constexpr (is_tuple_v<T0>) {
    static_assert(tuple_size_v<T0> == tuple_size_v<T1> && tuple_size_v<T0> == tuple_size_v<T2>,
                  "transform: the tuples differ in rank");
    return detail::transform3(t0, t1, t2, f, tuple_seq<T0>{});
  } else {
    return f(t0, t1, t2);
  }
}

template <class T, class F>
TESSEL_HOST_DEVICE constexpr void for_each(T&& t, F&& f) {
  if constexpr (is_tuple_v<T>) {
    apply(static_cast<T&&>(t), [&](auto&&... a) { (f(static_cast<decltype(a)&&>(a)), ...); });
  } else {
    f(static_cast<T&&>(t));
  }
}

// Recursively visit every non-tuple element (leaf) of t, left to right.
template <class T, class F>
TESSEL_HOST_DEVICE constexpr void for_each_leaf(T&& t, F&& f) {
  if constexpr (is_tuple_v<T>) {
    apply(static_cast<T&&>(t),
          [&](auto&&... a) { (for_each_leaf(static_cast<decltype(a)&&>(a), f), ...); });
  } else {
    f(static_cast<T&&>(t));
  }
}

namespace detail {
template <class F, class V>
struct fold_step {
  F& f;
  V v;
  template <class X>
  TESSEL_HOST_DEVICE constexpr auto operator<<(X const& x) const {
    auto next = f(v, x);
    return fold_step<F, decltype(next)>{f, next};
  }
};
}  // namespace detail

// Left fold: f(...f(f(init, t0), t1)..., tN). A non-tuple t folds as a single element.
template <class T, class V, class F>
TESSEL_HOST_DEVICE constexpr auto fold(T const& t, V const& init, F&& f) {
  if constexpr (is_tuple_v<T>) {
    return apply(t, [&](auto const&... a) {
      return (detail::fold_step<F, V>{f, init} << ... << a).v;
    });
  } else {
    return f(init, t);
  }
}

// Fold over an index sequence: f(...f(init, Int<0>{})..., Int<N-1>{}).
template <int... Is, class V, class F>
TESSEL_HOST_DEVICE constexpr auto fold(seq<Is...>, V const& init, F&& f) {
  return (detail::fold_step<F, V>{f, init} << ... << Int<Is>{}).v;
}

// ---- concatenation and filtering -------------------------------------------------------------

namespace detail {
template <class T0, class T1, int... I0, int... I1>
TESSEL_HOST_DEVICE constexpr auto cat2(T0 const& t0, T1 const& t1, seq<I0...>, seq<I1...>) {
  return make_tuple(get<I0>(t0)..., get<I1>(t1)...);
}
}  // namespace detail

TESSEL_HOST_DEVICE constexpr tuple<> tuple_cat() { return {}; }
template <class T0, class... Ts>
TESSEL_HOST_DEVICE constexpr auto tuple_cat(T0 const& t0, Ts const&... ts) {
  if constexpr (sizeof...(Ts) == 0) {
    return t0;
  } else {
    auto rest = tuple_cat(ts...);
    return detail::cat2(t0, rest, tuple_seq<T0>{}, tuple_seq<decltype(rest)>{});
  }
}

// f maps each element to a tuple (often empty or of one element); the results are concatenated.
template <class T, class F>
TESSEL_HOST_DEVICE constexpr auto filter_tuple(T const& t, F&& f) {
  return apply(t, [&](auto const&... a) { return tuple_cat(tuple<>{}, f(a)...); });
}
template <class T0, class T1, class F>
TESSEL_HOST_DEVICE constexpr auto filter_tuple(T0 const& t0, T1 const& t1, F&& f) {
  return apply(transform(t0, t1, f), [](auto const&... a) { return tuple_cat(tuple<>{}, a...); });
}

// ---- selecting and editing modes -------------------------------------------------------------

template <int... Is, class T>
TESSEL_HOST_DEVICE constexpr auto select(T const& t) {
  return make_tuple(get<Is>(t)...);
}

namespace detail {
template <int B, class T, int... Is>
TESSEL_HOST_DEVICE constexpr auto take_impl(T const& t, seq<Is...>) {
  return make_tuple(get<B + Is>(t)...);
}
}  // namespace detail

// The modes [B,E) of t.
template <int B, int E, class T>
TESSEL_HOST_DEVICE constexpr auto take(T const& t) {
  static_assert(0 <= B && B <= E && E <= int(tuple_size_v<T>), "take<B,E>: range out of bounds");
  return detail::take_impl<B>(t, make_seq<E - B>{});
}

template <class T>
TESSEL_HOST_DEVICE constexpr auto front(T const& t) {
  if constexpr (is_tuple_v<T>) {
    return front(get<0>(t));
  } else {
    return t;
  }
}

template <class T>
TESSEL_HOST_DEVICE constexpr auto back(T const& t) {
  if constexpr (is_tuple_v<T>) {
    return back(get<tuple_size_v<T> - 1>(t));
  } else {
    return t;
  }
}

template <class T, class X>
TESSEL_HOST_DEVICE constexpr auto append(T const& t, X const& x) {
  if constexpr (is_tuple_v<T>) {
    return apply(t, [&](auto const&... a) { return make_tuple(a..., x); });
  } else {
    return make_tuple(t, x);
  }
}

template <class T, class X>
TESSEL_HOST_DEVICE constexpr auto prepend(T const& t, X const& x) {
  if constexpr (is_tuple_v<T>) {
    return apply(t, [&](auto const&... a) { return make_tuple(x, a...); });
  } else {
    return make_tuple(x, t);
  }
}

namespace detail {
template <class X, int... Is>
TESSEL_HOST_DEVICE constexpr auto repeat_impl(X const& x, seq<Is...>) {
  return make_tuple(((void)Is, x)...);
}
}  // namespace detail

// A rank-N tuple of x; repeat<1>(x) is x itself (as in CuTe), repeat_tuple<1>(x) is (x).
template <int N, class X>
TESSEL_HOST_DEVICE constexpr auto repeat_tuple(X const& x) {
  return detail::repeat_impl(x, make_seq<N>{});
}
template <int N, class X>
TESSEL_HOST_DEVICE constexpr auto repeat(X const& x) {
  if constexpr (N == 1) {
    return x;
  } else {
    return detail::repeat_impl(x, make_seq<N>{});
  }
}

// t padded to rank N with copies of x (a non-tuple t is wrapped first, unless N == 1).
template <int N, class T, class X>
TESSEL_HOST_DEVICE constexpr auto append(T const& t, X const& x) {
  if constexpr (is_tuple_v<T>) {
    constexpr int R = int(tuple_size_v<T>);
    static_assert(R <= N, "append<N>: the tuple is already longer than N");
    return tuple_cat(t, repeat_tuple<N - R>(x));
  } else if constexpr (N == 1) {
    return t;
  } else {
    return append<N>(make_tuple(t), x);
  }
}

// A tuple of the same profile as t with every leaf replaced by x.
template <class T, class X>
TESSEL_HOST_DEVICE constexpr auto repeat_like(T const& t, X const& x) {
  if constexpr (is_tuple_v<T>) {
    return transform(t, [&](auto const& a) { return repeat_like(a, x); });
  } else {
    return x;
  }
}

namespace detail {
template <int N, class T, int... Is>
TESSEL_HOST_DEVICE constexpr auto remove_impl(T const& t, seq<Is...>) {
  return tuple_cat(tuple<>{}, [&] {
    if constexpr (Is == N) {
      return tuple<>{};
    } else {
      return make_tuple(get<Is>(t));
    }
  }()...);
}
template <int N, class T, class X, int... Is>
TESSEL_HOST_DEVICE constexpr auto replace_impl(T const& t, X const& x, seq<Is...>) {
  return make_tuple([&] {
    if constexpr (Is == N) {
      return x;
    } else {
      return get<Is>(t);
    }
  }()...);
}
}  // namespace detail

template <int N, class T>
TESSEL_HOST_DEVICE constexpr auto remove(T const& t) {
  return detail::remove_impl<N>(t, tuple_seq<T>{});
}

template <int N, class T, class X>
TESSEL_HOST_DEVICE constexpr auto replace(T const& t, X const& x) {
  if constexpr (is_tuple_v<T>) {
    return detail::replace_impl<N>(t, x, tuple_seq<T>{});
  } else {
    static_assert(N == 0, "replace<N>: an integral has only mode 0");
    return x;
  }
}

template <class T, class X>
TESSEL_HOST_DEVICE constexpr auto replace_front(T const& t, X const& x) {
  if constexpr (is_tuple_v<T>) {
    return replace<0>(t, x);
  } else {
    return x;
  }
}

// ---- wrap / unwrap / flatten -----------------------------------------------------------------

// A tuple stays as it is; anything else becomes a rank-1 tuple.
template <class T>
TESSEL_HOST_DEVICE constexpr auto wrap(T const& t) {
  if constexpr (is_tuple_v<T>) {
    return t;
  } else {
    return make_tuple(t);
  }
}

// Strip rank-1 tuples: ((x)) -> x.
template <class T>
TESSEL_HOST_DEVICE constexpr auto unwrap(T const& t) {
  if constexpr (is_tuple_v<T>) {
    if constexpr (tuple_size_v<T> == 1) {
      return unwrap(get<0>(t));
    } else {
      return t;
    }
  } else {
    return t;
  }
}

// The leaves of t as a depth-1 tuple (a non-tuple becomes a rank-1 tuple).
template <class T>
TESSEL_HOST_DEVICE constexpr auto flatten_to_tuple(T const& t) {
  if constexpr (is_tuple_v<T>) {
    return filter_tuple(t, [](auto const& a) { return flatten_to_tuple(a); });
  } else {
    return make_tuple(t);
  }
}

// The leaves of t as a depth-1 tuple; a non-tuple stays a non-tuple.
template <class T>
TESSEL_HOST_DEVICE constexpr auto flatten(T const& t) {
  if constexpr (is_tuple_v<T>) {
    return flatten_to_tuple(t);
  } else {
    return t;
  }
}

// ---- zip and search --------------------------------------------------------------------------

namespace detail {
// Number of top-level modes: the tuple's size, 1 for a non-tuple.
template <class T>
constexpr int rank_of() {
  if constexpr (is_tuple_v<T>) {
    return int(tuple_size_v<T>);
  } else {
    return 1;
  }
}
template <int I, class... Ts>
TESSEL_HOST_DEVICE constexpr auto zip_column(Ts const&... ts) {
  return make_tuple(get<I>(ts)...);
}
template <class T0, class... Ts, int... Is>
TESSEL_HOST_DEVICE constexpr auto zip_impl(seq<Is...>, T0 const& t0, Ts const&... ts) {
  return make_tuple(zip_column<Is>(t0, ts...)...);
}
}  // namespace detail

// zip(t): transpose a tuple of equal-rank tuples, ((a0,a1,...),(b0,b1,...)) -> ((a0,b0),(a1,b1),...).
// A non-tuple counts as rank 1 (get<0>(x) == x). A tuple whose first element is not a tuple is
// wrapped, (a,b) -> ((a,b)); a non-tuple stays.
// zip(t0, t1, ...) == zip((t0, t1, ...)).
template <class T>
TESSEL_HOST_DEVICE constexpr auto zip(T const& t) {
  if constexpr (is_tuple_v<T>) {
    if constexpr (tuple_size_v<T> > 0 && is_tuple_v<tuple_element_t<0, T>>) {
      return apply(t, [](auto const& t0, auto const&... ts) {
        static_assert(((detail::rank_of<std::remove_cvref_t<decltype(ts)>>() ==
                        detail::rank_of<std::remove_cvref_t<decltype(t0)>>()) && ...),
                      "zip: the tuples must have the same rank (zip would drop modes). In blocked_product "
                      "and raked_product, each mode of the block and of the product's repetition must "
                      "have the same rank; use logical_product for other shapes.");
        return detail::zip_impl(tuple_seq<std::remove_cvref_t<decltype(t0)>>{}, t0, ts...);
      });
    } else {
      return make_tuple(t);
    }
  } else {
    return t;
  }
}
template <class T0, class T1, class... Ts>
TESSEL_HOST_DEVICE constexpr auto zip(T0 const& t0, T1 const& t1, Ts const&... ts) {
  return zip(make_tuple(t0, t1, ts...));
}

namespace detail {
template <int I, class T, class F>
TESSEL_HOST_DEVICE constexpr auto find_if_impl(T const& t, F& f) {
  if constexpr (I == int(tuple_size_v<T>)) {
    return Int<I>{};
  } else if constexpr (decltype(f(get<I>(t)))::value) {
    return Int<I>{};
  } else {
    return find_if_impl<I + 1>(t, f);
  }
}
}  // namespace detail

// The index of the first element for which f returns a static true (rank(t) if none).
template <class T, class F>
TESSEL_HOST_DEVICE constexpr auto find_if(T const& t, F&& f) {
  if constexpr (is_tuple_v<T>) {
    return detail::find_if_impl<0>(t, f);
  } else {
    return Int<decltype(f(t))::value ? 0 : 1>{};
  }
}

// Apply f at every leaf of one or two congruent IntTuples.
template <class T, class F>
TESSEL_HOST_DEVICE constexpr auto transform_leaf(T const& t, F&& f) {
  if constexpr (is_tuple_v<T>) {
    return transform(t, [&](auto const& a) { return transform_leaf(a, f); });
  } else {
    return f(t);
  }
}
template <class T0, class T1, class F>
TESSEL_HOST_DEVICE constexpr auto transform_leaf(T0 const& t0, T1 const& t1, F&& f) {
  if constexpr (is_tuple_v<T0>) {
    return transform(t0, t1, [&](auto const& a, auto const& b) { return transform_leaf(a, b, f); });
  } else {
    return f(t0, t1);
  }
}

}  // namespace tessel
