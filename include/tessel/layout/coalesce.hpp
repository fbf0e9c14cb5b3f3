// tessel/layout/coalesce.hpp -- coalesce and filter: simpler layouts, same function.
//
// coalesce(L): flatten L and merge neighbouring modes s0:d0, s1:d1 with s0*d0 == d1 into
// (s0*s1):d0; drop modes of extent 1. Merging and dropping happen only where the test is
// decided at compile time (static values): with run-time values coalesce only flattens.
//   Pre:  none.
//   Post: size(R) == size(L); depth(R) <= 1; R(i) == L(i) for every i < size(L).
//   e.g.  (_2,(_1,_6)):(_1,(_6,_2)) -> _12:_1      (2,(1,6)):(1,(6,2)) -> (2,1,6):(1,6,2)
//
// coalesce(L, profile) coalesces each mode named by the profile separately (keeps the rank).
// filter(L) additionally drops the modes whose stride is a static _0.
//   e.g.  filter((_4,_2):(_0,_1)) -> _2:_1
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/int_tuple.hpp>         // filter_zeros
#include <tessel/core/tuple_algorithms.hpp>  // flatten, prepend, replace_front
#include <tessel/layout/layout.hpp>          // Layout

namespace tessel {

namespace detail {

// Walk the flat modes old[I], old[I-1], ..., old[0] onto the front of (new_shape:new_stride):
//   old extent static _1            -> skip it
//   new is a lone static _1 extent  -> replace it with old[I]
//   old[I] ends where new starts    -> merge (only when decided statically)
//   otherwise                       -> prepend old[I]
template <int I, class OS, class OD, class NS, class ND>
TESSEL_HOST_DEVICE constexpr auto bw_coalesce(OS const& os, OD const& od, NS const& ns, ND const& nd) {
  if constexpr (I == -1) {
    if constexpr (is_constant_v<1, NS>) {
      return Layout<Int<1>, Int<0>>{};
    } else {
      return make_layout(ns, nd);
    }
  } else {
    auto s = get<I>(os);
    auto d = get<I>(od);
    if constexpr (is_constant_v<1, decltype(s)>) {
      return bw_coalesce<I - 1>(os, od, ns, nd);
    } else if constexpr (is_constant_v<1, NS>) {
      return bw_coalesce<I - 1>(os, od, s, d);
    } else if constexpr (is_static_v<decltype(front(ns))> &&
                         is_constant_v<true, decltype(s * d == front(nd))>) {
      return bw_coalesce<I - 1>(os, od, replace_front(ns, s * front(ns)), replace_front(nd, d));
    } else {
      return bw_coalesce<I - 1>(os, od, prepend(ns, s), prepend(nd, d));
    }
  }
}

// coalesce that also keeps the function *outside* the domain: a trailing extent-1 mode still
// carries the stride that the last mode uses for overflow. Used by composition.
template <class S, class D>
TESSEL_HOST_DEVICE constexpr auto coalesce_x(Layout<S, D> const& l) {
  auto fs = flatten_to_tuple(l.shape());
  auto fd = flatten_to_tuple(l.stride());
  constexpr int R = int(tuple_size_v<decltype(fs)>);
  if constexpr (is_constant_v<1, decltype(get<R - 1>(fs))>) {
    return bw_coalesce<R - 2>(fs, fd, Int<2>{}, get<R - 1>(fd));
  } else {
    return bw_coalesce<R - 2>(fs, fd, get<R - 1>(fs), get<R - 1>(fd));
  }
}

}  // namespace detail

template <class S, class D>
TESSEL_HOST_DEVICE constexpr auto coalesce(Layout<S, D> const& l) {
  auto fs = flatten_to_tuple(l.shape());
  auto fd = flatten_to_tuple(l.stride());
  constexpr int R = int(tuple_size_v<decltype(fs)>);
  return detail::bw_coalesce<R - 2>(fs, fd, get<R - 1>(fs), get<R - 1>(fd));
}

// Coalesce each mode at the terminals of `profile` on its own.
template <class S, class D, class Profile>
TESSEL_HOST_DEVICE constexpr auto coalesce(Layout<S, D> const& l, Profile const& profile) {
  if constexpr (is_tuple_v<Profile>) {
    static_assert(tuple_size_v<Profile> <= Layout<S, D>::rank, "coalesce: the profile has more modes than the layout");
    return transform_layout(l, profile, [](auto const& m, auto const& p) { return coalesce(m, p); });
  } else {
    return coalesce(l);
  }
}

// Coalesce a shape: multiply neighbouring leaves that are both static or both run-time.
//   coalesce((_2,_4,3,5,_2)) -> (_8,15,_2)
template <class T>
  requires(is_tuple_v<T> || is_integral_v<T>)
TESSEL_HOST_DEVICE constexpr auto coalesce(T const& shape) {
  auto flat = flatten_to_tuple(shape);
  auto step = [](auto const& init, auto const& a) {
    if constexpr (is_static_v<decltype(back(init))> == is_static_v<decltype(a)>) {
      constexpr int N = int(tuple_size_v<decltype(init)>);
      return replace<N - 1>(init, back(init) * a);
    } else {
      return append(init, a);
    }
  };
  return unwrap(fold(take<1, int(tuple_size_v<decltype(flat)>)>(flat), make_tuple(get<0>(flat)), step));
}

// The layout with every static-_0-stride mode given extent _1.
template <class S, class D>
TESSEL_HOST_DEVICE constexpr auto filter_zeros(Layout<S, D> const& l) {
  return make_layout(filter_zeros(l.stride(), l.shape()), l.stride());
}

// Drop static-_0-stride modes and extent-1 modes, then coalesce (_1:_0 if nothing is left).
template <class S, class D>
TESSEL_HOST_DEVICE constexpr auto filter(Layout<S, D> const& l) {
  return coalesce(filter_zeros(l));
}

template <class S, class D, class Profile>
TESSEL_HOST_DEVICE constexpr auto filter(Layout<S, D> const& l, Profile const& profile) {
  if constexpr (is_tuple_v<Profile>) {
    return transform_layout(l, profile, [](auto const& m, auto const& p) { return filter(m, p); });
  } else {
    return filter(l);
  }
}

}  // namespace tessel
