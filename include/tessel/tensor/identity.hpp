// tessel/tensor/identity.hpp -- identity tensors: each element is its own coordinate.
//
// make_identity_tensor(shape) is a rank-R tensor with t(c) == c for every coordinate c (as a
// flat tuple of R integers). Partitioned exactly like a data tensor of the same shape, it tells
// a thread which coordinates its elements have -- the predicates of a ragged (non tile-multiple)
// problem:
//   Tensor cA   = make_identity_tensor(shape(mA));                          // (M,K) -> (m,k)
//   Tensor tAcA = local_partition(local_tile(cA, ...), tA, tid);            // same as tAgA
//   bool in = elem_less(tAcA(i), shape(mA));
// Tiles may overhang the shape (the last tile of a ragged mode): coordinates stay exact as long
// as every mode but the last overhangs by less than identity_overhang (65536) elements.
// Only flat (depth-1) shapes are supported.
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/print.hpp>
#include <tessel/layout.hpp>
#include <tessel/tensor/tensor.hpp>

#include <cstdint>
#include <ostream>

namespace tessel {

inline constexpr std::int64_t identity_overhang = 65536;

// An iterator over linear offsets that reads back the coordinate encoded by `radix`:
// offset = c_0 + R_0 * (c_1 + R_1 * (c_2 + ...)), the last mode unbounded.
template <int Rank>
struct CoordIterator {
  using iterator_tag = void;
  std::int64_t base_;
  std::int64_t radix_[Rank > 1 ? Rank - 1 : 1];

  TESSEL_HOST_DEVICE constexpr auto decode(std::int64_t off) const {
    return [&]<int... Is>(seq<Is...>) {
      std::int64_t c[Rank] = {};
      std::int64_t rest = off;
      for (int i = 0; i + 1 < Rank; ++i) {
        c[i] = rest % radix_[i];
        rest /= radix_[i];
      }
      c[Rank - 1] = rest;
      return make_tuple(c[Is]...);
    }(make_seq<Rank>{});
  }
  TESSEL_HOST_DEVICE constexpr auto operator*() const { return decode(base_); }
  template <class Index>
  TESSEL_HOST_DEVICE constexpr auto operator[](Index const& i) const {
    return decode(base_ + static_cast<std::int64_t>(i));
  }
  template <class Index>
  TESSEL_HOST_DEVICE constexpr CoordIterator operator+(Index const& i) const {
    CoordIterator r = *this;
    r.base_ += static_cast<std::int64_t>(i);
    return r;
  }
};

template <class Shape>
TESSEL_HOST_DEVICE constexpr auto make_identity_tensor(Shape const& shape) {
  static_assert(decltype(depth(shape))::value <= 1, "make_identity_tensor: the shape must be flat (depth <= 1)");
  auto s = wrap(shape);
  constexpr int R = int(tuple_size_v<decltype(s)>);
  CoordIterator<R> it{};
  it.base_ = 0;
  // Plain loops over the extents (a fold over nested generic lambdas here crashed g++ 13.3).
  auto const ext = detail::leaf_values(s);
  std::int64_t st[R] = {};
  std::int64_t step = 1;
  for (int i = 0; i < R; ++i) {
    st[i] = step;
    if (i + 1 < R) {
      it.radix_[i] = static_cast<std::int64_t>(ext[i]) + identity_overhang;
      step *= it.radix_[i];
    }
  }
  auto strides = [&]<int... Is>(seq<Is...>) { return make_stride(st[Is]...); }(make_seq<R>{});
  return make_tensor(it, make_layout(s, strides));
}

// True when c_i < s_i in every mode: the coordinate lies inside the shape.
template <class Crd, class Shape>
TESSEL_HOST_DEVICE constexpr bool elem_less(Crd const& c, Shape const& s) {
  if constexpr (is_tuple_v<Crd>) {
    auto ws = wrap(s);
    return [&]<int... Is>(seq<Is...>) { return ((get<Is>(c) < get<Is>(ws)) && ...); }(tuple_seq<Crd>{});
  } else {
    return c < s;
  }
}

template <class Sink, int R>
TESSEL_HOST_DEVICE void format(Sink& sink, CoordIterator<R> const& it) {
  sink.text("coord");
  format(sink, *it);
}

}  // namespace tessel
