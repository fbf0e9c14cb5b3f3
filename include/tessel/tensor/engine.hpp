// tessel/tensor/engine.hpp -- what a Tensor's elements live in: a view or owned storage.
//
// ViewEngine<Iterator> holds an iterator (a raw, gmem or smem pointer, or a counting iterator);
// copying the tensor copies the view. ArrayEngine<T,N> owns N elements in place -- in a kernel,
// registers -- and copying the tensor copies the elements.
#pragma once

#include <tessel/config.hpp>

#include <type_traits>
#include <utility>

namespace tessel {

template <class Iterator>
struct ViewEngine {
  using iterator = Iterator;
  using reference = decltype(*std::declval<Iterator const&>());
  using element_type = std::remove_reference_t<reference>;
  using value_type = std::remove_cv_t<element_type>;

  Iterator it_;

  TESSEL_HOST_DEVICE constexpr Iterator begin() const { return it_; }
};

template <class T, int N>
struct ArrayEngine {
  static_assert(N > 0, "ArrayEngine: owned storage needs at least one element");
  using iterator = T*;
  using reference = T&;
  using element_type = T;
  using value_type = std::remove_cv_t<T>;

  T data_[N];

  TESSEL_HOST_DEVICE constexpr T* begin() { return data_; }
  TESSEL_HOST_DEVICE constexpr T const* begin() const { return data_; }
};

template <class E>
struct is_owning_engine : std::false_type {};
template <class T, int N>
struct is_owning_engine<ArrayEngine<T, N>> : std::true_type {};

}  // namespace tessel
