// tessel/layout/tile_to_shape.hpp -- repeat a block (a swizzle atom, say) until it covers a shape.
//
// tile_to_shape(block, shape, order) pads block to rank(shape), counts the copies each mode needs
// (shape_i / block_i), places those copies by a compact layout whose strides increase in `order`
// (GenColMajor: mode 0 fastest, the default; GenRowMajor; or a static Step), takes the blocked
// product and coalesces each mode:
//   R = coalesce(blocked_product(block, make_ordered_layout(shape / shape(block), order)), shape)
// A ComposedLayout block (Sw o offset o L) keeps its swizzle and offset: Sw o offset o R(L). That
// is sound for the shared-memory atoms because every copy starts at a multiple of the block's
// cosize, a multiple of the swizzle's period, so the XOR acts inside each copy alone.
//   Pre:  rank(block) <= rank(shape); every extent of shape is a static multiple of the block's
//         extent in that mode; order is static.
//   Post: rank(R) == rank(shape), size<i>(R) == shape_i, and for c = block coordinate b in
//         copy q: R(c) == block(b) + cosize(block) * P(q), P the ordered layout of the copies.
//   e.g.  tile_to_shape((_8,_64):(_64,_1), (_128,_64))                  -> (_128,_64):(_64,_1)
//         tile_to_shape((_64,_8):(_1,_64), (_128,_16), Step<_2,_1>{})   -> ((_64,_2),_16):((_1,_1024),_64)
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/int_tuple.hpp>
#include <tessel/core/tuple_algorithms.hpp>
#include <tessel/layout/coalesce.hpp>
#include <tessel/layout/composed_layout.hpp>
#include <tessel/layout/layout.hpp>
#include <tessel/layout/layout_like.hpp>
#include <tessel/layout/product.hpp>

#include <type_traits>

namespace tessel {

namespace detail {

// The compact layout of the copies: column-major, row-major, or strides ordered by a Step.
template <class Shape, class Order>
TESSEL_HOST_DEVICE constexpr auto copies_layout(Shape const& shape, Order const& order) {
  if constexpr (std::is_same_v<Order, GenColMajor> || std::is_same_v<Order, GenRowMajor>) {
    return make_layout(shape, order);
  } else {
    return make_ordered_layout(shape, order);
  }
}

// shape_i / block_i for each mode, refusing extents that do not divide.
template <class Shape, class BlockShape>
TESSEL_HOST_DEVICE constexpr auto copies_per_mode(Shape const& shape, BlockShape const& block_shape) {
  return transform(shape, block_shape, [](auto const& s, auto const& b) {
    auto const sz = size(s);
    auto const bz = size(b);
    static_assert(is_static_v<decltype(sz)> && is_static_v<decltype(bz)>,
                  "tile_to_shape: the shape and the block need static extents (Int<>)");
    static_assert(decltype(sz)::value % decltype(bz)::value == 0,
                  "tile_to_shape: each extent of the shape must be a multiple of the block's extent in that "
                  "mode; pick a shape made of whole blocks");
    return Int<decltype(sz)::value / decltype(bz)::value>{};
  });
}

}  // namespace detail

template <class BS, class BD, class Shape, class Order = GenColMajor>
TESSEL_HOST_DEVICE constexpr auto tile_to_shape(Layout<BS, BD> const& block, Shape const& shape,
                                                Order const& order = {}) {
  static_assert(is_tuple_v<Shape>, "tile_to_shape: the target shape is a tuple of extents, e.g. Shape<_128,_64>");
  constexpr int R = rank_v<Shape>;
  static_assert(rank_v<BS> <= R, "tile_to_shape: the block has more modes than the target shape");
  auto padded = append<R>(block);                                         // the block, rank R
  auto copies = detail::copies_per_mode(shape, padded.shape());          // copies along each mode
  auto placed = blocked_product(padded, detail::copies_layout(copies, order));
  return coalesce(placed, product_each(shape));
}

template <class I, class O, class L, class Shape, class Order = GenColMajor>
TESSEL_HOST_DEVICE constexpr auto tile_to_shape(ComposedLayout<I, O, L> const& block, Shape const& shape,
                                                Order const& order = {}) {
  return make_composed_layout(block.layout_a(), block.offset(), tile_to_shape(block.layout_b(), shape, order));
}

}  // namespace tessel
