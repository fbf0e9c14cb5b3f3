// tessel/core/underscore.hpp -- `_`, the "keep this mode" marker, and slice/dice.
//
// slice(c, t) keeps the elements of t paired with `_` in c; dice(c, t) keeps those paired with
// an integer. Nested underscores are lifted into the parent:
//   slice((_,(_,0)), (A,(B,C))) == (A,B)      slice(_, t) == t      slice(3, t) == ()
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/tuple.hpp>             // tuple, is_tuple
#include <tessel/core/tuple_algorithms.hpp>  // filter_tuple

#include <type_traits>

namespace tessel {

struct Underscore {};
// Device code passes `_` by reference (a coordinate `(_, k)`), which needs a device-side object:
// the device compilation pass gets a __device__ constant, the host pass an inline constexpr.
#if defined(__CUDA_ARCH__)
static __device__ constexpr Underscore _{};
#else
inline constexpr Underscore _{};
#endif

template <class T>
inline constexpr bool is_underscore_v = std::is_same_v<std::remove_cvref_t<T>, Underscore>;

// True when any leaf of T is `_`.
template <class T>
inline constexpr bool has_underscore_v = [] {
  if constexpr (is_tuple_v<T>) {
    return []<int... Is>(seq<Is...>) {
      return (has_underscore_v<tuple_element_t<Is, T>> || ... || false);
    }(tuple_seq<T>{});
  } else {
    return is_underscore_v<T>;
  }
}();

namespace detail {
template <class A, class B>
TESSEL_HOST_DEVICE constexpr auto lift_slice(A const& a, B const& b) {
  if constexpr (is_tuple_v<A>) {
    static_assert(tuple_size_v<A> == tuple_size_v<B>, "slice: coordinate and shape differ in rank");
    return filter_tuple(a, b, [](auto const& x, auto const& y) { return lift_slice(x, y); });
  } else if constexpr (is_underscore_v<A>) {
    return make_tuple(b);
  } else {
    return tuple<>{};
  }
}
template <class A, class B>
TESSEL_HOST_DEVICE constexpr auto lift_dice(A const& a, B const& b) {
  if constexpr (is_tuple_v<A>) {
    static_assert(tuple_size_v<A> == tuple_size_v<B>, "dice: coordinate and shape differ in rank");
    return filter_tuple(a, b, [](auto const& x, auto const& y) { return lift_dice(x, y); });
  } else if constexpr (is_underscore_v<A>) {
    return tuple<>{};
  } else {
    return make_tuple(b);
  }
}
}  // namespace detail

template <class A, class B>
TESSEL_HOST_DEVICE constexpr auto slice(A const& a, B const& b) {
  if constexpr (is_tuple_v<A>) {
    static_assert(tuple_size_v<A> == tuple_size_v<B>, "slice: coordinate and shape differ in rank");
    return filter_tuple(a, b, [](auto const& x, auto const& y) { return detail::lift_slice(x, y); });
  } else if constexpr (is_underscore_v<A>) {
    return b;
  } else {
    return tuple<>{};
  }
}

template <class A, class B>
TESSEL_HOST_DEVICE constexpr auto dice(A const& a, B const& b) {
  if constexpr (is_tuple_v<A>) {
    static_assert(tuple_size_v<A> == tuple_size_v<B>, "dice: coordinate and shape differ in rank");
    return filter_tuple(a, b, [](auto const& x, auto const& y) { return detail::lift_dice(x, y); });
  } else if constexpr (is_underscore_v<A>) {
    return tuple<>{};
  } else {
    return b;
  }
}

}  // namespace tessel
