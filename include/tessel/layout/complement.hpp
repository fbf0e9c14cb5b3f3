// tessel/layout/complement.hpp -- the layout of the offsets A does not reach.
//
// complement(A, M) is the ordered layout R that, with A, tiles the codomain [0, M): R is
// strictly increasing, R(i) is never an offset of A for i >= 1, and (A, R) covers [0, M) when
// A's strides divide evenly. M (the cotarget) is an integer or a shape; a shape is divided mode
// by mode. Without M, M = cosize(filter(A)).
//   Post: R(i) < R(i+1); R(i) != A(j) for all i >= 1, all j; size(R) >= M / size(filter(A)).
//   e.g.  complement(4:2, 24) -> (_2,_3):(_1,_8)        complement((2,2):(1,6), 24) -> (3,2):(2,12)
//
// How: filter A (drop extent-1 and stride-0 modes), sort its modes by stride d_0 < d_1 < ...,
// and emit the gaps d_i / (d_{i-1} * s_{i-1}) : d_{i-1} * s_{i-1} (with d_{-1} s_{-1} = 1), then
// the rest ceil(M / (d_last * s_last)) : d_last * s_last, and coalesce.
//
// Pre (tessel's admissibility rule, docs/layout_algebra.md): extents >= 1, strides >= 0, and the
// R this construction gives must meet the Post conditions. tessel accepts at once when, sorted by
// stride, every d_i is a positive multiple of d_{i-1} * s_{i-1} (the modes of A nest without
// overlapping); otherwise it checks the Post conditions point by point (CuTe returns such
// layouts unchecked). The same rule decides static (static_assert) and run-time (AlgebraError)
// values. With several modes the strides must be static (sorting happens at compile time); a
// single run-time mode may have any stride >= 0.
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/check.hpp>
#include <tessel/core/int_tuple.hpp>  // ceil_div, compact_major
#include <tessel/layout/coalesce.hpp> // filter, coalesce
#include <tessel/layout/layout.hpp>

namespace tessel {

namespace detail {

// Index of the smallest element of a static tuple.
template <class T>
constexpr int argmin_static() {
  return []<int... Is>(seq<Is...>) {
    long long v[] = {(long long)tuple_element_t<Is, T>::value...};
    int best = 0;
    for (int i = 1; i < int(sizeof...(Is)); ++i) {
      if (v[i] < v[best]) best = i;
    }
    return best;
  }(tuple_seq<T>{});
}

// tessel's admissibility rule for R = complement(F, M), F filtered (see the top of this file):
// accept at once when F's modes nest (sorted by stride, each stride a positive multiple of the
// previous stride times its extent); otherwise accept only if R meets the definition anyway:
// strictly increasing, R(i) never an offset of F for i >= 1, and size(R) >= M / size(F).
template <class FL, class M, class RL>
TESSEL_HOST_DEVICE constexpr bool complement_admissible(FL const& f, M const& cotarget, RL const& r) {
  auto s = leaf_values(f.shape());
  auto d = leaf_values(f.stride());
  constexpr int RF = decltype(s)::size;
  int order[RF] = {};
  for (int i = 0; i < RF; ++i) order[i] = i;
  for (int i = 1; i < RF; ++i) {
    for (int j = i; j > 0 && d[order[j]] < d[order[j - 1]]; --j) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  }
  bool nested = true;
  long long prev = 1;
  for (int i = 0; i < RF && nested; ++i) {
    long long di = d[order[i]];
    if (RF == 1 && di == 0) break;  // a lone run-time stride 0: handled exactly
    nested = di > 0 && di >= prev && di % prev == 0;
    prev = di * s[order[i]];
  }
  if (nested) return true;
  auto rs = leaf_values(r.shape());
  for (int i = 0; i < decltype(rs)::size; ++i) {
    if (rs[i] < 1) return false;  // an empty mode: F is not injective
  }
  long long const n = static_cast<long long>(size(r));
  long long const nf = static_cast<long long>(size(f));
  for (long long i = 1; i < n; ++i) {
    long long ri = static_cast<long long>(r(i));
    if (ri <= static_cast<long long>(r(i - 1))) return false;
    for (long long j = 0; j < nf; ++j) {
      if (ri == static_cast<long long>(f(j))) return false;
    }
  }
  return nf >= 1 && n >= static_cast<long long>(size(cotarget)) / nf;
}

template <class FL, class M, class RL>
TESSEL_HOST_DEVICE constexpr void check_complement(FL const& f, M const& cotarget, RL const& r) {
  if constexpr (is_static_v<FL> && is_static_v<M> && is_static_v<RL>) {
    static_assert(complement_admissible(FL{}, M{}, RL{}),
                  "complement: the modes of the layout overlap or interleave. Sorted by stride, "
                  "each stride must be a positive multiple of the previous mode's stride times its "
                  "extent; only then does a complement exist (docs/layout_algebra.md).");
  } else {
#if !TESSEL_ON_DEVICE
    if (!complement_admissible(f, cotarget, r)) {
      throw_algebra_error("complement: the modes of ", to_string(f),
                          " overlap or interleave (sorted by stride, each stride must be a positive "
                          "multiple of the previous stride times its extent), so no complement "
                          "exists (docs/layout_algebra.md)");
    }
#else
    (void)f, (void)cotarget, (void)r;
#endif
  }
}

template <class S, class D>
TESSEL_HOST_DEVICE constexpr void require_complement_inputs(S const& shape, D const& stride) {
  auto ss = leaf_values(shape);
  auto dd = leaf_values(stride);
  if constexpr (is_static_v<S> && is_static_v<D>) {
    static_assert([] {
      auto s2 = leaf_values(S{});
      auto d2 = leaf_values(D{});
      for (int i = 0; i < decltype(s2)::size; ++i)
        if (s2[i] < 1 || d2[i] < 0) return false;
      return true;
    }(), "complement: extents must be >= 1 and strides >= 0 (negative strides have no complement)");
  } else {
    for (int i = 0; i < decltype(ss)::size; ++i) {
      TESSEL_ALGEBRA_REQUIRE(ss[i] >= 1 && dd[i] >= 0, "complement: extents must be >= 1 and strides >= 0, got ",
                             ss[i], ":", dd[i]);
    }
  }
}

// @pre (shape, stride) is filtered: flat, no extent-1 and no static-0-stride modes.
template <class S, class D, class CoTarget>
TESSEL_HOST_DEVICE constexpr auto complement_filtered(S const& shape, D const& stride, CoTarget const& cotarget) {
  if constexpr (is_constant_v<0, D>) {
    return make_layout(coalesce(cotarget));
  } else {
    require_complement_inputs(shape, stride);
    constexpr int R = rank_v<S>;
    static_assert(R == 1 || is_static_v<D>,
                  "complement: a layout with several modes needs static strides (tessel sorts them at "
                  "compile time). Make the strides static, or take the complement of one mode.");
    if constexpr (R == 1) {
      auto s0 = get<0>(shape);
      auto d0 = get<0>(stride);
      if constexpr (is_c<decltype(d0)>::value) {
        auto next = d0 * s0;
        auto rest_shape = coalesce(ceil_div(cotarget, next));
        auto rest_stride = compact_major<LayoutLeft>(rest_shape, next);
        return coalesce(make_layout(make_shape(make_tuple(d0), rest_shape), make_stride(make_tuple(Int<1>{}), rest_stride)));
      } else {
        // A run-time stride 0 reaches only offset 0: the complement is all of [0, M).
        auto gap = d0 == 0 ? decltype(d0)(1) : d0;
        auto next = d0 == 0 ? decltype(d0 * s0)(1) : d0 * s0;
        auto rest_shape = coalesce(ceil_div(cotarget, next));
        auto rest_stride = compact_major<LayoutLeft>(rest_shape, next);
        return coalesce(make_layout(make_shape(make_tuple(gap), rest_shape), make_stride(make_tuple(Int<1>{}), rest_stride)));
      }
    } else {
      // Take the modes in increasing stride order; each contributes the gap before it.
      auto step = [](auto const& init, auto) {
        auto const& [sh, st, res_s, res_d] = init;
        constexpr int m = argmin_static<std::remove_cvref_t<decltype(st)>>();
        auto d = get<m>(st);
        auto prev = back(res_d);
        return make_tuple(remove<m>(sh), remove<m>(st), append(res_s, d / prev), append(res_d, d * get<m>(sh)));
      };
      auto [sh, st, res_s, res_d] = fold(make_seq<R>{}, make_tuple(shape, stride, tuple<>{}, make_tuple(Int<1>{})), step);
      auto next = back(res_d);
      auto rest_shape = coalesce(ceil_div(cotarget, next));
      auto rest_stride = compact_major<LayoutLeft>(rest_shape, next);
      return coalesce(make_layout(make_shape(res_s, rest_shape), make_stride(take<0, R>(res_d), rest_stride)));
    }
  }
}

}  // namespace detail

template <class S, class D, class CoTarget>
TESSEL_HOST_DEVICE constexpr auto complement(Layout<S, D> const& a, CoTarget const& cotarget) {
  auto f = filter(a);
  auto r = detail::complement_filtered(f.shape(), f.stride(), shape(cotarget));
  detail::check_complement(f, shape(cotarget), r);
  return r;
}

template <class S, class D>
TESSEL_HOST_DEVICE constexpr auto complement(Layout<S, D> const& a) {
  auto f = filter(a);
  auto r = detail::complement_filtered(f.shape(), f.stride(), cosize(f));
  detail::check_complement(f, cosize(f), r);
  return r;
}

}  // namespace tessel
