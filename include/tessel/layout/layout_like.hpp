// tessel/layout/layout_like.hpp -- compact layouts shaped like another, and coordinates of an index.
//
// compact_order(shape, order): compact strides that increase in the order given by `order`
// (a static IntTuple congruent to shape; ties keep left-to-right order).
//   make_ordered_layout((_2,_3,_4), (_1,_0,_2))           -> (_2,_3,_4):(_3,_1,_6)
// make_layout_like(L): same shape, compact, strides ordered like L's (static _0 strides kept);
//   with run-time strides the result is column-major.
//   make_layout_like((_2,_2,_2,_2):(_0,_2,_4,_1))          -> (_2,_2,_2,_2):(_0,_2,_4,_1)
// make_fragment_like(L): like make_layout_like, but mode 0 is always column-major and first in
//   memory (the mode an atom reads as one register vector), the other modes follow L's order.
//   make_fragment_like(((_2,_2),_2,_4):((_2,_1),_64,_16)) -> ((_2,_2),_2,_4):((_1,_2),_16,_4)
// with_shape(L, shape): L composed with a compact column-major layout of `shape` (reshape).
// idx2crd(i, shape, stride): the coordinate whose mode k is (i / stride_k) % shape_k -- the
//   coordinate of thread i in a thread layout; get_flat_coord(L, i) flattens it.
//   get_flat_coord((_32,_4,_1,_1):(_1,_32,_0,_0), 70)   -> (6,2,_0,_0)
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/int_tuple.hpp>
#include <tessel/core/tuple_algorithms.hpp>
#include <tessel/layout/coalesce.hpp>      // filter_zeros
#include <tessel/layout/composition.hpp>
#include <tessel/layout/layout.hpp>
#include <tessel/layout/product.hpp>       // tiled_product

namespace tessel {

namespace detail {

// The number of leaves of an IntTuple.
template <class T>
constexpr int leaf_count() {
  if constexpr (is_tuple_v<T>) {
    return []<int... Is>(seq<Is...>) { return (0 + ... + leaf_count<tuple_element_t<Is, T>>()); }(tuple_seq<T>{});
  } else {
    return 1;
  }
}

// The number of leaves before mode I of Profile.
template <class Profile, int I>
constexpr int leaf_offset() {
  int o = 0;
  [&]<int... Js>(seq<Js...>) { ((o += (Js < I ? leaf_count<tuple_element_t<Js, Profile>>() : 0)), ...); }(tuple_seq<Profile>{});
  return o;
}

// Rebuild the profile of `profile` from the flat tuple `flat`, starting at leaf Offset.
template <int Offset, class Flat, class Profile>
TESSEL_HOST_DEVICE constexpr auto unflatten_like(Flat const& flat, Profile const& profile) {
  if constexpr (is_tuple_v<Profile>) {
    return [&]<int... Is>(seq<Is...>) {
      return make_tuple(unflatten_like<Offset + leaf_offset<Profile, Is>()>(flat, get<Is>(profile))...);
    }(tuple_seq<Profile>{});
  } else {
    return get<Offset>(flat);
  }
}

// rank_of[i]: the position of leaf i when the leaves are sorted by order value (stable).
template <class FlatOrder>
constexpr auto order_ranks() {
  constexpr int R = int(tuple_size_v<FlatOrder>);
  struct Out {
    int rank[R > 0 ? R : 1];
  };
  return []<int... Is>(seq<Is...>) {
    long long key[R > 0 ? R : 1] = {(long long)tuple_element_t<Is, FlatOrder>::value...};
    Out out{};
    for (int i = 0; i < R; ++i) {
      int r = 0;
      for (int j = 0; j < R; ++j) {
        if (key[j] < key[i] || (key[j] == key[i] && j < i)) ++r;
      }
      out.rank[i] = r;
    }
    return out;
  }(make_seq<R>{});
}

}  // namespace detail

template <class Shape, class Order>
TESSEL_HOST_DEVICE constexpr auto compact_order(Shape const& shape, Order const& order) {
  static_assert(is_static_v<Order>, "compact_order: the order must be static (Int<> values)");
  static_assert(detail::leaf_count<Shape>() == detail::leaf_count<Order>(),
                "compact_order: the order must have one value per leaf of the shape");
  auto fs = flatten_to_tuple(shape);
  using FO = decltype(flatten_to_tuple(order));
  constexpr int R = int(tuple_size_v<decltype(fs)>);
  // stride of leaf i = product of the extents of the leaves ranked before it.
  auto flat_strides = [&]<int... Is>(seq<Is...>) {
    return make_tuple([&]<int I>(C<I>) {
      if constexpr (is_constant_v<1, decltype(get<I>(fs))>) {
        return Int<0>{};  // an extent-1 mode gets stride 0, as in compact_major
      } else {
        return [&]<int... Js>(seq<Js...>) {
        return (Int<1>{} * ... * [&] {
          // (re-evaluated, not the captured `ranks`: nvcc rejects a captured constexpr local here)
          if constexpr (detail::order_ranks<FO>().rank[Js] < detail::order_ranks<FO>().rank[I]) {
            return get<Js>(fs);
          } else {
            return Int<1>{};
          }
        }());
        }(make_seq<R>{});
      }
    }(C<Is>{})...);
  }(make_seq<R>{});
  if constexpr (is_tuple_v<Shape>) {
    return detail::unflatten_like<0>(flat_strides, shape);
  } else {
    return get<0>(flat_strides);
  }
}

template <class Shape, class Order>
TESSEL_HOST_DEVICE constexpr auto make_ordered_layout(Shape const& shape, Order const& order) {
  return make_layout(shape, compact_order(shape, order));
}

template <class S, class D>
TESSEL_HOST_DEVICE constexpr auto make_layout_like(Layout<S, D> const& l) {
  auto zero_free = filter_zeros(l.stride(), l.shape());  // extent 1 where the stride is a static 0
  if constexpr (is_static_v<D>) {
    return make_layout(l.shape(), compact_order(zero_free, l.stride()));
  } else {
    return make_layout(l.shape(), compact_col_major(zero_free));
  }
}

template <class S, class D>
TESSEL_HOST_DEVICE constexpr auto make_fragment_like(Layout<S, D> const& l) {
  constexpr int R = Layout<S, D>::rank;
  if constexpr (R > 1 && is_static_v<S>) {
    auto mode0 = make_layout(l.template shape<0>(),
                             compact_col_major(filter_zeros(l.template stride<0>(), l.template shape<0>())));
    auto rest_shape = take<1, R>(l.shape());
    auto rest_stride = take<1, R>(l.stride());
    if constexpr (is_static_v<decltype(rest_stride)>) {
      return tiled_product(mode0, make_ordered_layout(rest_shape, rest_stride));
    } else {
      return tiled_product(mode0, make_layout(rest_shape));
    }
  } else {
    return make_layout_like(l);
  }
}

// L reshaped: L o (compact column-major layout of shape).
template <class S, class D, class NewShape>
TESSEL_HOST_DEVICE constexpr auto with_shape(Layout<S, D> const& l, NewShape const& shape) {
  return composition(l, make_layout(shape));
}

template <class Index, class Shape, class Stride>
TESSEL_HOST_DEVICE constexpr auto idx2crd(Index const& idx, Shape const& shape, Stride const& stride) {
  if constexpr (is_tuple_v<Shape>) {
    return transform(shape, stride, [&](auto const& s, auto const& d) { return idx2crd(idx, s, d); });
  } else if constexpr (is_constant_v<1, Shape> || is_constant_v<0, Stride>) {
    return Int<0>{};
  } else {
    return (idx / stride) % shape;
  }
}

template <class S, class D, class Index>
TESSEL_HOST_DEVICE constexpr auto get_hier_coord(Layout<S, D> const& l, Index const& idx) {
  return idx2crd(idx, l.shape(), l.stride());
}

template <class S, class D, class Index>
TESSEL_HOST_DEVICE constexpr auto get_flat_coord(Layout<S, D> const& l, Index const& idx) {
  return flatten(idx2crd(idx, l.shape(), l.stride()));
}

}  // namespace tessel
