// tessel/tensor/recast.hpp -- the same tensor memory read as another element type.
//
// recast<U>(t) views t's data as U: the layout is re-expressed with recast_layout (stride-1 runs
// shrink or grow by the size ratio), the iterator keeps its memory tag.
//   t: 8 half_t, (_8):(_1)  ->  recast<uint32_t>(t): (_4):(_1)   recast<uint128_t>(t): (_1):(_1)
// Pre: the stride-1 runs of t hold a whole number of U's, and the data is aligned for U.
#pragma once

#include <tessel/config.hpp>
#include <tessel/layout/recast.hpp>
#include <tessel/tensor/pointer.hpp>
#include <tessel/tensor/tensor.hpp>

#include <type_traits>

namespace tessel {

template <class U, class TensorT>
  requires is_tensor_v<TensorT>
TESSEL_HOST_DEVICE constexpr auto recast(TensorT&& t) {
  using T = typename std::remove_cvref_t<TensorT>::value_type;
  static_assert(is_layout_v<typename std::remove_cvref_t<TensorT>::layout_type>,
                "recast: the tensor must have a plain Layout (not a swizzled one)");
  return make_tensor(recast_ptr<U>(t.data()), recast_layout<T, U>(t.layout()));
}

}  // namespace tessel
