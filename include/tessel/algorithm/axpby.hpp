// tessel/algorithm/axpby.hpp -- y = alpha * x + beta * y, element by element (the GEMM epilogue).
//
// Computed in the scalars' type, then converted to y's element type. When beta == 0, y is not
// read (so a poisoned or uninitialised y gives clean results, as BLAS specifies).
// axpby(alpha, x, beta, y, pred) updates only the elements i with pred(i) true.
//   axpby(alpha, tCrC, beta, tCgC)   // seed 004's epilogue
#pragma once

#include <tessel/config.hpp>
#include <tessel/tensor/tensor.hpp>

#include <type_traits>

namespace tessel {

namespace detail {
template <class Alpha, class XT, class Beta, class YT>
TESSEL_HOST_DEVICE constexpr void axpby_one(Alpha const& alpha, XT const& x, Beta const& beta, YT& y) {
  using S = decltype(alpha * beta);
  S v = static_cast<S>(alpha) * static_cast<S>(x);
  if (beta != Beta(0)) v = v + static_cast<S>(beta) * static_cast<S>(y);
  y = static_cast<YT>(v);
}
}  // namespace detail

template <class Alpha, class XTensor, class Beta, class YTensor>
  requires(is_tensor_v<XTensor> && is_tensor_v<YTensor>)
TESSEL_HOST_DEVICE constexpr void axpby(Alpha const& alpha, XTensor const& x, Beta const& beta, YTensor&& y) {
  auto yv = make_tensor(y.data(), y.layout());
  TESSEL_UNROLL
  for (int i = 0; i < int(size(yv)); ++i) detail::axpby_one(alpha, x(i), beta, yv(i));
}

template <class Alpha, class XTensor, class Beta, class YTensor, class PredTensor>
  requires(is_tensor_v<XTensor> && is_tensor_v<YTensor>)
TESSEL_HOST_DEVICE constexpr void axpby(Alpha const& alpha, XTensor const& x, Beta const& beta, YTensor&& y,
                                        PredTensor const& pred) {
  auto yv = make_tensor(y.data(), y.layout());
  TESSEL_UNROLL
  for (int i = 0; i < int(size(yv)); ++i) {
    if (pred(i)) detail::axpby_one(alpha, x(i), beta, yv(i));
  }
}

}  // namespace tessel
