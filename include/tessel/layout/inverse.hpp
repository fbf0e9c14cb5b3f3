// tessel/layout/inverse.hpp -- right_inverse and left_inverse.
//
// right_inverse(A) is the largest R with A(R(i)) == i for every i < size(R): it follows A's
// modes from stride 1 upward, each mode's stride equal to the extent*stride reached so far.
//   Post: A(R(i)) == i for i < size(R).
//   e.g.  right_inverse((_4,_2):(_2,_1)) -> (_2,_4):(_4,_1)
// Only static strides can be followed; run-time strides are left out (as in CuTe), so a
// layout with run-time strides gets a smaller (possibly trivial, _1:_0) right inverse.
//
// left_inverse(A) is the R with R(A(i)) == i for every i < size(A), for injective A.
//   Pre:  static strides >= 0; sorted by stride, each nonzero stride is a multiple of the
//         product of the extents of the smaller-stride modes and at least the previous stride
//         times its extent (A injective, its modes nested). Static values: static_assert.
//   Post: R(A(i)) == i for i < size(A).
//   e.g.  left_inverse((_4,_2):(_2,_1)) -> (_2,_4):(_4,_1)
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/int_tuple.hpp>
#include <tessel/layout/coalesce.hpp>  // coalesce
#include <tessel/layout/layout.hpp>

namespace tessel {

namespace detail {

// Prefix products (_1, s0, s0*s1, ...) of a flat shape.
template <class S>
TESSEL_HOST_DEVICE constexpr auto prefix_products(S const& s) {
  return fold(s, make_tuple(Int<1>{}), [](auto const& acc, auto const& si) { return append(acc, si * back(acc)); });
}

// The indices of the static strides of a flat stride tuple, stably sorted by stride.
template <class D>
constexpr auto sorted_static_indices() {
  constexpr int R = int(tuple_size_v<D>);
  struct Out {
    int idx[R > 0 ? R : 1];
    int n;
  };
  return []<int... Is>(seq<Is...>) {
    Out out{};
    long long key[R > 0 ? R : 1] = {};
    bool stat[R > 0 ? R : 1] = {};
    ((stat[Is] = is_c<tuple_element_t<Is, D>>::value,
      key[Is] = [] {
        if constexpr (is_c<tuple_element_t<Is, D>>::value) {
          return (long long)tuple_element_t<Is, D>::value;
        } else {
          return 0LL;
        }
      }()),
     ...);
    for (int i = 0; i < R; ++i) {
      if (!stat[i]) continue;
      int j = out.n++;
      while (j > 0 && key[out.idx[j - 1]] > key[i]) {
        out.idx[j] = out.idx[j - 1];
        --j;
      }
      out.idx[j] = i;
    }
    return out;
  }(make_seq<R>{});
}

template <class D, int... Js>
constexpr auto sorted_seq_impl(seq<Js...>) {
  constexpr auto s = sorted_static_indices<D>();
  return seq<s.idx[Js]...>{};
}
template <class D>
constexpr auto sorted_seq() {
  constexpr auto s = sorted_static_indices<D>();
  return sorted_seq_impl<D>(make_seq<s.n>{});
}

}  // namespace detail

template <class S, class D>
TESSEL_HOST_DEVICE constexpr auto right_inverse(Layout<S, D> const& a) {
  auto c = coalesce(a);
  auto ls = wrap(c.shape());
  auto ld = wrap(c.stride());
  auto pre = detail::prefix_products(ls);
  auto order = detail::sorted_seq<decltype(ld)>();
  auto step = [&](auto const& init, auto i) {
    constexpr int I = decltype(i)::value;
    auto const& [rs, rd, curr] = init;
    auto s = get<I>(ls);
    auto d = get<I>(ld);
    if constexpr (is_c<decltype(curr)>::value && decltype(d)::value == decltype(curr)::value) {
      return make_tuple(append(rs, s), append(rd, get<I>(pre)), s * d);
    } else {
      return init;
    }
  };
  auto result = [&]<int... Is>(seq<Is...>) {
    return fold(make_tuple(Int<Is>{}...), make_tuple(make_tuple(Int<1>{}), make_tuple(Int<0>{}), Int<1>{}), step);
  }(order);
  return coalesce(make_layout(get<0>(result), get<1>(result)));
}

TESSEL_HOST_DEVICE constexpr Underscore right_inverse(Underscore) { return {}; }

template <class S, class D>
TESSEL_HOST_DEVICE constexpr auto left_inverse(Layout<S, D> const& a) {
  auto c = coalesce(a);
  auto ls = wrap(c.shape());
  auto ld = wrap(c.stride());
  static_assert(is_static_v<decltype(ld)>,
                "left_inverse: the layout's strides must be static (tessel orders the modes by "
                "stride at compile time). Make the strides static.");
  auto pre = detail::prefix_products(ls);
  using Order = decltype(detail::sorted_seq<decltype(ld)>());
  auto step = [&](auto const& init, auto i) {
    constexpr int I = decltype(i)::value;
    auto const& [rs, rd, end] = init;
    auto d = get<I>(ld);
    if constexpr (is_constant_v<0, decltype(d)>) {
      return init;
    } else {
      static_assert(decltype(d)::value > 0, "left_inverse: negative strides have no left inverse");
      static_assert(decltype(d)::value % decltype(size(rs))::value == 0,
                    "left_inverse: the layout is not injective, or its modes interleave: sorted by "
                    "stride, each stride must be a multiple of the product of the extents before "
                    "it (docs/layout_algebra.md).");
      static_assert(decltype(d)::value >= decltype(end)::value,
                    "left_inverse: the layout is not injective: sorted by stride, a mode starts "
                    "inside the previous one (each stride must be at least the previous stride "
                    "times its extent) (docs/layout_algebra.md).");
      return make_tuple(append(rs, d / size(rs)), append(rd, get<I>(pre)), d * get<I>(ls));
    }
  };
  return [&]<int... Is>(seq<Is...>) {
    constexpr int order[] = {Is...};
    constexpr int last = order[sizeof...(Is) - 1];
    auto r = fold(make_tuple(Int<Is>{}...), make_tuple(tuple<>{}, make_tuple(Int<0>{}), Int<1>{}), step);
    return coalesce(make_layout(append(get<0>(r), get<last>(ls)), get<1>(r)));
  }(Order{});
}

TESSEL_HOST_DEVICE constexpr Underscore left_inverse(Underscore) { return {}; }

}  // namespace tessel
