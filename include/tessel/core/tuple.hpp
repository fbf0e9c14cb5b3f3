// tessel/core/tuple.hpp -- a light tuple that stores nothing for static elements.
//
// tuple<_4, int> occupies sizeof(int): static integers (and any empty, default-constructible
// type) are rebuilt on access instead of stored. A tuple whose elements are all static is
// itself empty, so it is static too. Works on host and device.
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/integral.hpp>  // C, is_static

#include <cstddef>
#include <type_traits>
#include <utility>

namespace tessel {

namespace detail {

// Through the compilers' own traits where they have them: std::is_default_constructible
// instantiates a chain of helper templates per type, and every tuple leaf asks (a kernel TU
// spent 2-3 s of its front end there).
template <class T>
inline constexpr bool stateless_v =
#if defined(__GNUC__) || defined(__clang__)
    __is_empty(T) && __is_constructible(T) && !__is_final(T);
#else
    std::is_empty_v<T> && std::is_default_constructible_v<T> && !std::is_final_v<T>;
#endif

template <std::size_t I, class T, bool Stateless = stateless_v<T>>
struct tuple_leaf {
  T value_;
  TESSEL_HOST_DEVICE constexpr tuple_leaf() : value_() {}
  template <class U>
  TESSEL_HOST_DEVICE constexpr tuple_leaf(U&& u) : value_(static_cast<U&&>(u)) {}
  TESSEL_HOST_DEVICE constexpr T& ref() & { return value_; }
  TESSEL_HOST_DEVICE constexpr T const& ref() const& { return value_; }
  TESSEL_HOST_DEVICE constexpr T&& ref() && { return static_cast<T&&>(value_); }
};

template <std::size_t I, class T>
struct tuple_leaf<I, T, true> {
  TESSEL_HOST_DEVICE constexpr tuple_leaf() {}
  template <class U>
  TESSEL_HOST_DEVICE constexpr tuple_leaf(U&&) {}
  TESSEL_HOST_DEVICE constexpr T ref() const { return T{}; }
};

template <class Seq, class... Ts>
struct tuple_base;

template <std::size_t... Is, class... Ts>
struct tuple_base<std::index_sequence<Is...>, Ts...> : tuple_leaf<Is, Ts>... {
  TESSEL_HOST_DEVICE constexpr tuple_base() {}
  template <class... Us>
  TESSEL_HOST_DEVICE constexpr explicit tuple_base(Us&&... us)
      : tuple_leaf<Is, Ts>(static_cast<Us&&>(us))... {}
};

}  // namespace detail

template <class... Ts>
struct tuple : detail::tuple_base<std::index_sequence_for<Ts...>, Ts...> {
  using base = detail::tuple_base<std::index_sequence_for<Ts...>, Ts...>;
  TESSEL_HOST_DEVICE constexpr tuple() {}
  TESSEL_HOST_DEVICE constexpr tuple(Ts const&... ts)
    requires(sizeof...(Ts) > 0)
      : base(ts...) {}
};

template <class... Ts>
tuple(Ts...) -> tuple<Ts...>;

// ---- traits ----------------------------------------------------------------------------------

template <class T>
struct is_tuple : std::false_type {};
template <class... Ts>
struct is_tuple<tuple<Ts...>> : std::true_type {};
template <class T>
inline constexpr bool is_tuple_v = is_tuple<std::remove_cvref_t<T>>::value;

template <class T>
struct tuple_size;
template <class... Ts>
struct tuple_size<tuple<Ts...>> : std::integral_constant<std::size_t, sizeof...(Ts)> {};
template <class T>
inline constexpr std::size_t tuple_size_v = tuple_size<std::remove_cvref_t<T>>::value;

template <std::size_t I, class T>
struct tuple_element;
namespace detail {
template <std::size_t I, class T0, class... Ts>
struct type_at : type_at<I - 1, Ts...> {};
template <class T0, class... Ts>
struct type_at<0, T0, Ts...> {
  using type = T0;
};
}  // namespace detail
template <std::size_t I, class... Ts>
struct tuple_element<I, tuple<Ts...>> {
  using type = typename detail::type_at<I, Ts...>::type;
};
template <std::size_t I, class T>
using tuple_element_t = typename tuple_element<I, std::remove_cvref_t<T>>::type;

// ---- access ----------------------------------------------------------------------------------


// get<I>(tuple): the I-th element. get<0>(integral) is the integral itself, since an integral
// is a rank-1 IntTuple.
template <std::size_t I, class... Ts>
TESSEL_HOST_DEVICE constexpr decltype(auto) get(tuple<Ts...> const& t) {
  static_assert(I < sizeof...(Ts), "get<I>: index out of range for this tuple");
  using leaf = detail::tuple_leaf<I, typename detail::type_at<I, Ts...>::type>;
  return static_cast<leaf const&>(t).ref();
}
template <std::size_t I, class... Ts>
TESSEL_HOST_DEVICE constexpr decltype(auto) get(tuple<Ts...>& t) {
  static_assert(I < sizeof...(Ts), "get<I>: index out of range for this tuple");
  using leaf = detail::tuple_leaf<I, typename detail::type_at<I, Ts...>::type>;
  return static_cast<leaf&>(t).ref();
}
template <std::size_t I, class... Ts>
TESSEL_HOST_DEVICE constexpr decltype(auto) get(tuple<Ts...>&& t) {
  static_assert(I < sizeof...(Ts), "get<I>: index out of range for this tuple");
  using leaf = detail::tuple_leaf<I, typename detail::type_at<I, Ts...>::type>;
  return static_cast<leaf&&>(t).ref();
}
template <std::size_t I, class T>
  requires is_integral_v<T>
TESSEL_HOST_DEVICE constexpr T get(T const& t) {
  static_assert(I == 0, "get<I>: an integral has one mode; only get<0> applies");
  return t;
}
// get<>(x) with no indices is x itself.
template <class T>
TESSEL_HOST_DEVICE constexpr T get(T const& t) {
  return t;
}
template <std::size_t I0, std::size_t I1, std::size_t... Is, class T>
TESSEL_HOST_DEVICE constexpr decltype(auto) get(T&& t) {
  return get<I1, Is...>(get<I0>(static_cast<T&&>(t)));
}

template <class... Ts>
TESSEL_HOST_DEVICE constexpr tuple<Ts...> make_tuple(Ts const&... ts) {
  return tuple<Ts...>(ts...);
}

// ---- index sequences -------------------------------------------------------------------------

template <int... Is>
using seq = std::integer_sequence<int, Is...>;
template <int N>
using make_seq = std::make_integer_sequence<int, N>;
template <class T>
using tuple_seq = make_seq<int(tuple_size_v<T>)>;

}  // namespace tessel

// Structured bindings: auto [a, b] = tessel::make_tuple(x, y);
template <class... Ts>
struct std::tuple_size<tessel::tuple<Ts...>> : std::integral_constant<std::size_t, sizeof...(Ts)> {};
template <std::size_t I, class... Ts>
struct std::tuple_element<I, tessel::tuple<Ts...>> {
  using type = tessel::tuple_element_t<I, tessel::tuple<Ts...>>;
};
