// tessel/layout/composition.hpp -- A o B: first B, then A.
//
// composition(A, B) is the layout R with R(c) == A(B(c)) for every coordinate c of B.
//   Post: shape(R) is compatible with shape(B); R(c) == A(B(c)) for all c in B's domain.
//   e.g.  (6,2):(8,2) o (4,3):(3,1) -> ((2,2),3):((24,2),8)
//
// How (CuTe's construction): B distributes, A o (B0,B1,...) == (A o B0, A o B1, ...). For one
// integral mode s:d of B and a flat A = (c_0,...,c_{R-1}):(e_0,...,e_{R-1}) (coalesced as far as
// its static values allow), R walks A's modes left to right keeping (N, d) = (elements still to
// place, their spacing in units of the current mode):
//   q = ceil(c_k / d)              -- how many of the elements fit in mode k
//   emit min(q, N) : d * e_k;  N <- N / min(q, N);  d <- ceil(d / c_k)
// and gives what remains, N : d * e_{R-1}, to the last mode (which extends without bound).
//
// Pre (tessel's admissibility rule, docs/layout_algebra.md): the layout this construction
// produces must be A o B. tessel decides it exactly, in the same way for static and run-time
// values: it accepts at once when every walk step is even --
//     N == 1, or d == 0, or N <= ceil(c_k / d), or
//     N % ceil(c_k / d) == 0 and (d % c_k == 0 or c_k % d == 0)          (d > 0)
// -- and the modes of B do not carry into each other (for every mode k < R-1 of A, the largest
// positions the leaves of B reach in mode k sum to less than c_k); otherwise it compares R with
// A o B at every point of B's domain. CuTe checks only a weaker form of the first condition
// (and with run-time values nothing), and returns wrong layouts where it fails. Static values
// that fail are refused by a static_assert; run-time values throw tessel::AlgebraError (host).
// Extents of A's modes and of B must be >= 1.
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

// Extents met by the walk must be >= 1 (a static violation fails to compile, a run-time one
// throws on the host).
template <class CS, class N>
TESSEL_HOST_DEVICE constexpr void require_positive_extents(CS const& c, N const& n) {
  if constexpr (is_c<CS>::value && is_c<N>::value) {
    static_assert(CS::value >= 1 && N::value >= 1,
                  "composition: every extent of both layouts must be >= 1 (an extent-0 mode has no "
                  "elements to compose)");
  } else {
    TESSEL_ALGEBRA_REQUIRE(value_of(c) >= 1 && value_of(n) >= 1, "composition: extents must be >= 1, got ",
                           value_of(c), " and ", value_of(n));
  }
}

// The even-walk test of one leaf s:d of B against the flat modes of A; on success adds the
// largest position the leaf reaches in each mode of A to `reach`.
template <int RA>
TESSEL_HOST_DEVICE constexpr bool even_walk(Values<RA> const& c, long long n, long long d, long long* reach) {
  if (RA == 1 || n <= 1 || d == 0) return true;
  if (d < 0) return false;
  for (int k = 0; k + 1 < RA; ++k) {
    if (n <= 1) break;
    long long q = (c[k] + d - 1) / d;
    bool even = n <= q || (n % q == 0 && (d % c[k] == 0 || c[k] % d == 0));
    if (!even) return false;
    long long placed = n < q ? n : q;
    reach[k] += (placed - 1) * d;
    n /= placed;
    d = (d + c[k] - 1) / c[k];
  }
  return true;
}

// Every leaf extent of B is the size of the matching mode of R.
template <class BS, class RS>
TESSEL_HOST_DEVICE constexpr bool leaf_sizes_match(BS const& bs, RS const& rs) {
  if constexpr (is_tuple_v<BS>) {
    if constexpr (!is_tuple_v<RS> || tuple_size_v<RS> != tuple_size_v<BS>) {
      return false;
    } else {
      return [&]<int... Is>(seq<Is...>) {
        return (leaf_sizes_match(get<Is>(bs), get<Is>(rs)) && ...);
      }(tuple_seq<BS>{});
    }
  } else {
    return static_cast<long long>(size(rs)) == static_cast<long long>(bs);
  }
}

// tessel's admissibility rule for R = composition(A, B) with A already flat (see the top of this
// file): the even-walk test, then the point-by-point comparison where it is inconclusive.
template <class AL, class BL, class RL>
TESSEL_HOST_DEVICE constexpr bool composition_admissible(AL const& a, BL const& b, RL const& r) {
  auto c = leaf_values(a.shape());
  auto bs = leaf_values(b.shape());
  auto bd = leaf_values(b.stride());
  constexpr int RA = decltype(c)::size;
  constexpr int RB = decltype(bs)::size;
  long long reach[RA] = {};
  bool even = true;
  for (int j = 0; j < RB && even; ++j) even = even_walk(c, bs[j], bd[j], reach);
  for (int k = 0; k + 1 < RA && even; ++k) {
    if (reach[k] >= c[k]) even = false;
  }
  if (even) return true;
  if (!leaf_sizes_match(b.shape(), r.shape())) return false;
  long long const n = static_cast<long long>(size(b));
  for (long long i = 0; i < n; ++i) {
    if (static_cast<long long>(r(i)) != static_cast<long long>(a(static_cast<long long>(b(i))))) return false;
  }
  return true;
}

// Refuse an inadmissible composition: at compile time when everything is static, else on the host.
template <class AL, class BL, class RL>
TESSEL_HOST_DEVICE constexpr void check_composition(AL const& a, BL const& b, RL const& r) {
  if constexpr (is_static_v<AL> && is_static_v<BL> && is_static_v<RL>) {
    static_assert(composition_admissible(AL{}, BL{}, RL{}),
                  "composition: the right-hand layout walks across a mode of the left-hand layout "
                  "unevenly (stride/shape divisibility), so no layout of this form equals A o B. "
                  "Where N elements at spacing d meet a mode of extent c, tessel needs N <= "
                  "ceil(c/d), or N a multiple of ceil(c/d) with c and d dividing one another. Fix: "
                  "pick a tile whose sizes and strides divide the modes of the layout, or make the "
                  "layout coalescible (docs/layout_algebra.md).");
  } else {
#if !TESSEL_ON_DEVICE
    if (!composition_admissible(a, b, r)) {
      throw_algebra_error("composition: ", to_string(b), " walks across the modes of ", to_string(a),
                          " unevenly (stride/shape divisibility): no layout of this form equals A o B. "
                          "Where N elements at spacing d meet a mode of extent c, tessel needs N <= "
                          "ceil(c/d), or N a multiple of ceil(c/d) with c and d dividing one another "
                          "(docs/layout_algebra.md)");
    }
#else
    (void)a, (void)b, (void)r;
#endif
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
      require_positive_extents(c, rest_s);
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
  auto r = detail::compose_impl(flat.shape(), flat.stride(), b.shape(), b.stride());
  detail::check_composition(flat, b, r);
  return r;
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
    return composition(a, make_layout(t, Int<1>{}));
  }
}

}  // namespace tessel
