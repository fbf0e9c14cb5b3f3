// tessel/algorithm/fill.hpp -- fill(t, v): every element of t becomes v; clear(t): every element 0.
#pragma once

#include <tessel/config.hpp>
#include <tessel/tensor/tensor.hpp>

#include <type_traits>

namespace tessel {

template <class TensorT, class V>
  requires is_tensor_v<TensorT>
TESSEL_HOST_DEVICE constexpr void fill(TensorT&& t, V const& v) {
  using T = typename std::remove_cvref_t<TensorT>::value_type;
  auto view = make_tensor(t.data(), t.layout());
  TESSEL_UNROLL
  for (int i = 0; i < int(size(view)); ++i) view(i) = static_cast<T>(v);
}

template <class TensorT>
  requires is_tensor_v<TensorT>
TESSEL_HOST_DEVICE constexpr void clear(TensorT&& t) {
  using T = typename std::remove_cvref_t<TensorT>::value_type;
  fill(t, static_cast<T>(0));
}

}  // namespace tessel
