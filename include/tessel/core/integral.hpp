// tessel/core/integral.hpp -- static integers C<v> / Int<N>, mixed freely with run-time ints.
//
// A static integer carries its value in its type: Int<8>{} prints as `_8`, a run-time `int 8`
// prints as `8`. Arithmetic on two static integers is static; anything touching a run-time
// value is run-time, except where the answer is known without the run-time value
// (`_0 * x == _0`, `x % _1 == _0`, ...), which keeps broadcast strides static.
#pragma once

#include <tessel/config.hpp>

#include <cstdint>
#include <type_traits>

namespace tessel {

template <auto V>
struct C {
  using type = C;
  using value_type = decltype(V);
  static constexpr value_type value = V;
  TESSEL_HOST_DEVICE constexpr operator value_type() const noexcept { return V; }
  TESSEL_HOST_DEVICE constexpr value_type operator()() const noexcept { return V; }
};

template <int N>
using Int = C<N>;
template <bool B>
using bool_constant = C<B>;
using true_type = bool_constant<true>;
using false_type = bool_constant<false>;

// clang-format off
using _m1 = Int<-1>;
using _0 = Int<0>;     using _1 = Int<1>;     using _2 = Int<2>;     using _3 = Int<3>;
using _4 = Int<4>;     using _5 = Int<5>;     using _6 = Int<6>;     using _7 = Int<7>;
using _8 = Int<8>;     using _9 = Int<9>;     using _10 = Int<10>;   using _11 = Int<11>;
using _12 = Int<12>;   using _13 = Int<13>;   using _14 = Int<14>;   using _15 = Int<15>;
using _16 = Int<16>;   using _24 = Int<24>;   using _32 = Int<32>;   using _48 = Int<48>;
using _64 = Int<64>;   using _80 = Int<80>;   using _96 = Int<96>;   using _112 = Int<112>;
using _128 = Int<128>; using _144 = Int<144>; using _160 = Int<160>; using _176 = Int<176>;
using _192 = Int<192>; using _208 = Int<208>; using _224 = Int<224>; using _240 = Int<240>;
using _256 = Int<256>; using _384 = Int<384>; using _512 = Int<512>; using _768 = Int<768>;
using _1024 = Int<1024>;   using _2048 = Int<2048>;   using _4096 = Int<4096>;
using _8192 = Int<8192>;   using _16384 = Int<16384>; using _32768 = Int<32768>;
using _65536 = Int<65536>;
// clang-format on

// ---- traits -------------------------------------------------------------------------------

namespace detail {
template <class T>
struct is_c_impl : std::false_type {};
template <auto V>
struct is_c_impl<C<V>> : std::true_type {};
}  // namespace detail
// is_c<T>::value: T (ignoring const/volatile) is a static integer C<v>.
template <class T>
struct is_c : detail::is_c_impl<std::remove_cv_t<T>> {};

template <class T>
inline constexpr bool is_std_integral_v = std::is_integral_v<std::remove_cvref_t<T>>;

// An "integral" is a run-time integer or a static C<v> holding an integer.
template <class T>
inline constexpr bool is_integral_v =
    is_std_integral_v<T> || is_c<std::remove_cvref_t<T>>::value;

// True when T is a static integer with value N.
template <auto N, class T>
inline constexpr bool is_constant_v = [] {
  if constexpr (is_c<std::remove_cvref_t<T>>::value) {
    return std::remove_cvref_t<T>::value == N;
  } else {
    return false;
  }
}();

// is_static<T> for integers; the tuple overload lives in tuple.hpp.
template <class T, class = void>
struct is_static : std::bool_constant<std::is_empty_v<std::remove_cvref_t<T>> &&
                                      std::is_default_constructible_v<std::remove_cvref_t<T>>> {};
template <class T>
inline constexpr bool is_static_v = is_static<std::remove_cvref_t<T>>::value;

// ---- static (x) static ---------------------------------------------------------------------

// clang-format off
#define TESSEL_C_BINARY_OP(OP)                                                        \
  template <auto t, auto u>                                                           \
  TESSEL_HOST_DEVICE constexpr C<(t OP u)> operator OP(C<t>, C<u>) { return {}; }
TESSEL_C_BINARY_OP(+)  TESSEL_C_BINARY_OP(-)  TESSEL_C_BINARY_OP(*)  TESSEL_C_BINARY_OP(/)
TESSEL_C_BINARY_OP(%)  TESSEL_C_BINARY_OP(&)  TESSEL_C_BINARY_OP(|)  TESSEL_C_BINARY_OP(^)
TESSEL_C_BINARY_OP(<<) TESSEL_C_BINARY_OP(>>) TESSEL_C_BINARY_OP(&&) TESSEL_C_BINARY_OP(||)
TESSEL_C_BINARY_OP(==) TESSEL_C_BINARY_OP(!=) TESSEL_C_BINARY_OP(<)  TESSEL_C_BINARY_OP(>)
TESSEL_C_BINARY_OP(<=) TESSEL_C_BINARY_OP(>=)
#undef TESSEL_C_BINARY_OP
// clang-format on

template <auto t>
TESSEL_HOST_DEVICE constexpr C<-t> operator-(C<t>) {
  return {};
}
template <auto t>
TESSEL_HOST_DEVICE constexpr C<!t> operator!(C<t>) {
  return {};
}

// ---- static (x) run-time where the answer needs no run-time value -------------------------

template <auto t, class U>
  requires(is_std_integral_v<U> && t == 0)
TESSEL_HOST_DEVICE constexpr C<0> operator*(C<t>, U) {
  return {};
}
template <class U, auto t>
  requires(is_std_integral_v<U> && t == 0)
TESSEL_HOST_DEVICE constexpr C<0> operator*(U, C<t>) {
  return {};
}
template <auto t, class U>
  requires(is_std_integral_v<U> && t == 0)
TESSEL_HOST_DEVICE constexpr C<0> operator/(C<t>, U) {
  return {};
}
template <class U, auto t>
  requires(is_std_integral_v<U> && (t == 1 || t == -1))
TESSEL_HOST_DEVICE constexpr C<0> operator%(U, C<t>) {
  return {};
}
template <auto t, class U>
  requires(is_std_integral_v<U> && t == 0)
TESSEL_HOST_DEVICE constexpr C<0> operator%(C<t>, U) {
  return {};
}

// ---- named scalar functions: static when every argument is static -------------------------

namespace detail {
template <class T>
TESSEL_HOST_DEVICE constexpr auto value_of(T const& t) {
  if constexpr (is_c<T>::value) {
    return T::value;
  } else {
    return t;
  }
}
}  // namespace detail

#define TESSEL_SCALAR_FN2(NAME, EXPR)                                       \
  template <class A, class B>                                               \
    requires(is_integral_v<A> && is_integral_v<B>)                          \
  TESSEL_HOST_DEVICE constexpr auto NAME(A const& a_, B const& b_) {        \
    constexpr auto f = [](auto a, auto b) { return EXPR; };                 \
    if constexpr (is_c<A>::value && is_c<B>::value) {                       \
      return C<f(A::value, B::value)>{};                                    \
    } else {                                                                \
      return f(detail::value_of(a_), detail::value_of(b_));                 \
    }                                                                       \
  }

TESSEL_SCALAR_FN2(min, (a < b ? a : b))
TESSEL_SCALAR_FN2(max, (a < b ? b : a))
#undef TESSEL_SCALAR_FN2

namespace detail {
template <class T>
TESSEL_HOST_DEVICE constexpr T gcd_value(T a, T b) {
  a = a < 0 ? -a : a;
  b = b < 0 ? -b : b;
  while (b != 0) {
    T r = a % b;
    a = b;
    b = r;
  }
  return a;
}
}  // namespace detail

template <class A, class B>
  requires(is_integral_v<A> && is_integral_v<B>)
TESSEL_HOST_DEVICE constexpr auto gcd(A const& a, B const& b) {
  if constexpr (is_c<A>::value && is_c<B>::value) {
    return C<detail::gcd_value<decltype(A::value + B::value)>(A::value, B::value)>{};
  } else {
    using T = decltype(detail::value_of(a) + detail::value_of(b));
    return detail::gcd_value<T>(detail::value_of(a), detail::value_of(b));
  }
}

template <class A>
  requires is_integral_v<A>
TESSEL_HOST_DEVICE constexpr auto abs(A const& a) {
  if constexpr (is_c<A>::value) {
    return C<(A::value < 0 ? -A::value : A::value)>{};
  } else {
    return a < 0 ? -a : a;
  }
}

template <class A>
  requires is_integral_v<A>
TESSEL_HOST_DEVICE constexpr auto signum(A const& a) {
  if constexpr (is_c<A>::value) {
    return C<(A::value > 0) - (A::value < 0)>{};
  } else {
    return static_cast<A>((a > 0) - (a < 0));
  }
}

}  // namespace tessel
