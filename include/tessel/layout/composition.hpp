// tessel/layout/composition.hpp -- A o B: first B, then A.
//
// composition(A, B) is the layout R with R(c) == A(B(c)) for every coordinate c of B.
//   Post: shape(R) is compatible with shape(B); R(c) == A(B(c)) for all c in B's domain.
//   e.g.  (6,2):(8,2) o (4,3):(3,1) -> ((2,2),3):((24,2),8)
//
// B distributes: A o (B0,B1,...) == (A o B0, A o B1, ...). For one integral mode s:d of B and a
// flat A = (c_0,...,c_{R-1}):(e_0,...,e_{R-1}), R walks A's modes left to right keeping
// (N, d) = (elements still to place, their spacing in units of the current mode):
//   q = ceil(c_k / d)              -- how many of the elements fit in mode k
//   emit min(q, N) : d * e_k;  N <- N / min(q, N);  d <- ceil(d / c_k)
// and gives what remains, N : d * e_{R-1}, to the last mode (which extends without bound).
//
// Pre (tessel's admissibility rule, docs/layout_algebra.md): at every mode k < R-1 reached with
// N > 1 and d != 0,
//     N <= ceil(c_k / d)                                   -- all remaining points fall in mode k
//  or N % ceil(c_k / d) == 0  and  (d % c_k == 0 or c_k % d == 0)
// unless every stride e_k, ..., e_{R-1} is 0. d must be >= 0, c_k >= 1 and N >= 1 there. This is exactly
// the condition under which the walk above computes A o B; CuTe checks a weaker form (and with
// run-time values none at all). Static values violating it fail with a static_assert; run-time
// values throw tessel::AlgebraError on the host.
//
// A by-mode tiler (a tuple of layouts, integers n meaning n:_1, and `_` meaning "keep") composes
// mode by mode: composition((_8,_4,_2):(_1,_8,_32), (_2,_2)) -> (_2,_2):(_1,_8). Modes of A
// beyond the tiler's rank are dropped.
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/check.hpp>     // TESSEL_ALGEBRA_REQUIRE
#include <tessel/core/int_tuple.hpp> // ceil_div
#include <tessel/layout/coalesce.hpp>
#include <tessel/layout/layout.hpp>

namespace tessel {

namespace detail {

// f(values...) as a static C<> when every argument is static, else as a run-time value.
template <class F, class... Ts>
TESSEL_HOST_DEVICE constexpr auto static_or_runtime(F f, Ts const&... ts) {
  if constexpr ((is_c<Ts>::value && ...)) {
    return C<f(Ts::value...)>{};
  } else {
    return f(static_cast<long long>(value_of(ts))...);
  }
}

// True when every leaf of the strides from mode K on is zero.
template <int K, class Strides>
TESSEL_HOST_DEVICE constexpr auto zero_tail(Strides const& d) {
  constexpr int R = int(tuple_size_v<Strides>);
  if constexpr (K >= R) {
    return true_type{};
  } else {
    auto here = static_or_runtime([](auto x) { return x == 0; }, get<K>(d));
    auto rest = zero_tail<K + 1>(d);
    if constexpr (is_c<decltype(here)>::value && is_c<decltype(rest)>::value) {
      return bool_constant<decltype(here)::value && decltype(rest)::value>{};
    } else {
      return bool(here) && bool(rest);
    }
  }
}

struct compose_step_rule {
  constexpr bool operator()(long long c, long long n, long long d, bool zero_tail) const {
    if (n < 1) return false;
    if (n == 1 || d == 0 || zero_tail) return true;
    if (d < 0 || c < 1) return false;
    long long q = (c + d - 1) / d;
    return n <= q || (n % q == 0 && (d % c == 0 || c % d == 0));
  }
};

template <class CS, class N, class D, class Z>
TESSEL_HOST_DEVICE constexpr void check_compose_step(CS const& c, N const& n, D const& d, Z const& z) {
  if constexpr (is_c<CS>::value && is_c<N>::value && is_c<D>::value && is_c<Z>::value) {
    static_assert(compose_step_rule{}(CS::value, N::value, D::value, Z::value),
                  "composition: the right-hand layout walks across a mode of the left-hand layout "
                  "unevenly (stride/shape divisibility). Where N elements at spacing d meet a mode of "
                  "extent c, tessel needs N <= ceil(c/d), or N a multiple of ceil(c/d) with c and d "
                  "dividing one another. Fix: pick a tile whose sizes and strides divide the modes "
                  "of the layout, or make the layout coalescible (docs/layout_algebra.md).");
  } else {
    TESSEL_ALGEBRA_REQUIRE(compose_step_rule{}(value_of(c), value_of(n), value_of(d), bool(z)),
                           "composition: ", value_of(n), " elements at spacing ", value_of(d),
                           " cross a mode of extent ", value_of(c),
                           " of the left-hand layout unevenly; tessel needs N <= ceil(c/d), or N a "
                           "multiple of ceil(c/d) with c and d dividing one another, and d >= 0 "
                           "(docs/layout_algebra.md)");
  }
}

// A o (rs:rd) for a flat, coalesced A = ls:ld.
template <class LS, class LD, class RS, class RD>
TESSEL_HOST_DEVICE constexpr auto compose_impl(LS const& ls, LD const& ld, RS const& rs, RD const& rd) {
  if constexpr (is_tuple_v<RS>) {
    return transform_layout(rs, rd, [&](auto const& s, auto const& d) { return compose_impl(ls, ld, s, d); });
  } else if constexpr (is_constant_v<0, RD>) {
    return make_layout(rs, rd);
  } else if constexpr (is_integral_v<LS>) {
    return make_layout(rs, rd * ld);
  } else {
    constexpr int R = int(tuple_size_v<LS>);
    auto step = [&](auto const& init, auto k) {
      constexpr int K = decltype(k)::value;
      auto const& [res_s, res_d, rest_s, rest_d] = init;
      auto c = get<K>(ls);
      check_compose_step(c, rest_s, rest_d, zero_tail<K>(ld));
      // A run-time spacing of 0 keeps every point at offset 0 of this mode.
      auto ad = abs(rest_d);
      auto next_s = [&] {
        if constexpr (is_c<decltype(ad)>::value) {
          return ceil_div(c, ad);
        } else {
          return ad == 0 ? decltype(ceil_div(c, ad))(1) : ceil_div(c, ad);
        }
      }();
      auto next_d = [&] {
        if constexpr (is_c<decltype(ad)>::value) {
          return ceil_div(ad, c) * signum(rest_d);
        } else {
          return ad == 0 ? decltype(ceil_div(ad, c) * signum(rest_d))(0) : ceil_div(ad, c) * signum(rest_d);
        }
      }();
      if constexpr (is_constant_v<1, decltype(next_s)> || is_constant_v<1, decltype(rest_s)>) {
        return make_tuple(res_s, res_d, rest_s, next_d);
      } else {
        auto new_s = min(next_s, rest_s);
        return make_tuple(append(res_s, new_s), append(res_d, rest_d * get<K>(ld)), rest_s / new_s, next_d);
      }
    };
    auto [res_s, res_d, rest_s, rest_d] = fold(make_seq<R - 1>{}, make_tuple(tuple<>{}, tuple<>{}, rs, rd), step);
    if constexpr (tuple_size_v<decltype(res_s)> == 0) {
      return make_layout(rest_s, rest_d * get<R - 1>(ld));
    } else if constexpr (is_constant_v<1, decltype(rest_s)>) {
      return make_layout(unwrap(res_s), unwrap(res_d));
    } else {
      return make_layout(append(res_s, rest_s), append(res_d, rest_d * get<R - 1>(ld)));
    }
  }
}

}  // namespace detail

template <class LS, class LD, class RS, class RD>
TESSEL_HOST_DEVICE constexpr auto composition(Layout<LS, LD> const& a, Layout<RS, RD> const& b) {
  auto flat = detail::coalesce_x(a);
  return detail::compose_impl(flat.shape(), flat.stride(), b.shape(), b.stride());
}

// By-mode tilers, integers (n means n:_1) and `_` (keep A).
template <class LS, class LD, class Tiler>
  requires(!is_layout_v<Tiler>)
TESSEL_HOST_DEVICE constexpr auto composition(Layout<LS, LD> const& a, Tiler const& t) {
  if constexpr (is_tuple_v<Tiler>) {
    static_assert(tuple_size_v<Tiler> <= Layout<LS, LD>::rank,
                  "composition: the by-mode tiler has more modes than the layout it tiles");
    return [&]<int... Is>(seq<Is...>) {
      return make_layout(composition(get<Is>(a), get<Is>(t))...);
    }(tuple_seq<Tiler>{});
  } else if constexpr (is_underscore_v<Tiler>) {
    return a;
  } else {
    static_assert(is_integral_v<Tiler>, "composition: a tiler is a layout, an integer, `_`, or a tuple of these");
    auto flat = detail::coalesce_x(a);
    return detail::compose_impl(flat.shape(), flat.stride(), t, Int<1>{});
  }
}

}  // namespace tessel
