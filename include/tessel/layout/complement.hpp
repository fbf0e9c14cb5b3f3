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
// Pre: after filtering and sorting, every d_i is a positive multiple of d_{i-1} * s_{i-1}
// (the modes of A nest without overlapping). With several modes the strides must be static
// (sorting happens at compile time); a single run-time mode may have any stride >= 0.
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

template <class Gap, class Prev>
TESSEL_HOST_DEVICE constexpr void check_complement_gap(Gap const& d, Prev const& prev) {
  if constexpr (is_c<Gap>::value && is_c<Prev>::value) {
    static_assert(Gap::value > 0 && Prev::value > 0 && Gap::value % Prev::value == 0 &&
                      Gap::value / Prev::value >= 1,
                  "complement: the modes of the layout overlap or interleave. Sorted by stride, "
                  "each stride must be a positive multiple of the previous mode's stride times its "
                  "extent; only then does a complement exist (docs/layout_algebra.md).");
  } else {
    TESSEL_ALGEBRA_REQUIRE(value_of(prev) > 0 && value_of(d) >= value_of(prev) && value_of(d) % value_of(prev) == 0,
                           "complement: stride ", value_of(d), " is not a positive multiple of ",
                           value_of(prev),
                           " (the previous mode's stride times its extent); the modes overlap or "
                           "interleave, so no complement exists (docs/layout_algebra.md)");
  }
}

// @pre (shape, stride) is filtered: flat, no extent-1 and no static-0-stride modes.
template <class S, class D, class CoTarget>
TESSEL_HOST_DEVICE constexpr auto complement_filtered(S const& shape, D const& stride, CoTarget const& cotarget) {
  if constexpr (is_constant_v<0, D>) {
    return make_layout(coalesce(cotarget));
  } else {
    constexpr int R = rank_v<S>;
    static_assert(R == 1 || is_static_v<D>,
                  "complement: a layout with several modes needs static strides (tessel sorts them at "
                  "compile time). Make the strides static, or take the complement of one mode.");
    if constexpr (R == 1) {
      auto s0 = get<0>(shape);
      auto d0 = get<0>(stride);
      if constexpr (is_c<decltype(d0)>::value) {
        check_complement_gap(d0, Int<1>{});
        auto next = d0 * s0;
        auto rest_shape = coalesce(ceil_div(cotarget, next));
        auto rest_stride = compact_major<LayoutLeft>(rest_shape, next);
        return coalesce(make_layout(make_shape(make_tuple(d0), rest_shape), make_stride(make_tuple(Int<1>{}), rest_stride)));
      } else {
        // A run-time stride 0 reaches only offset 0: the complement is all of [0, M).
        TESSEL_ALGEBRA_REQUIRE(d0 >= 0, "complement: stride ", d0, " is negative; complement needs strides >= 0");
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
        check_complement_gap(d, prev);
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
  return detail::complement_filtered(f.shape(), f.stride(), shape(cotarget));
}

template <class S, class D>
TESSEL_HOST_DEVICE constexpr auto complement(Layout<S, D> const& a) {
  auto f = filter(a);
  return detail::complement_filtered(f.shape(), f.stride(), cosize(f));
}

}  // namespace tessel
