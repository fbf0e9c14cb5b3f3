// tessel/layout/recast.hpp -- the same memory seen through a wider or narrower element type.
//
// upcast<N>(L): L indexes elements of b bits; the result indexes elements of N*b bits. A stride-1
// mode shrinks by N, any other static stride d becomes d/N (a stride-0 mode stays as it is).
// downcast<N>(L) is the reverse: stride-1 modes grow by N, other strides are scaled by N.
// recast_layout<Old, New>(L) picks one or both from sizeof_bits<Old> : sizeof_bits<New>.
//   upcast<2>((_4,_8):(_1,_4))      -> (_2,_8):(_1,_2)
//   downcast<2>((_2,_8):(_1,_2))    -> (_4,_8):(_1,_4)
//   recast_layout<half_t,uint32_t>  == upcast<2>
// Pre (upcast): a static stride other than 0 and +-1 is a multiple of N or divides N; a run-time
// stride is assumed to be a multiple of N.
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/int_tuple.hpp>
#include <tessel/layout/layout.hpp>
#include <tessel/numeric/int_types.hpp>

namespace tessel {

namespace detail {
template <int N, class S, class D>
TESSEL_HOST_DEVICE constexpr auto upcast_mode(S const& s, D const& d) {
  if constexpr (is_tuple_v<S>) {
    return transform_layout(s, d, [](auto const& si, auto const& di) { return upcast_mode<N>(si, di); });
  } else if constexpr (is_constant_v<0, D>) {
    return make_layout(s, d);
  } else if constexpr (is_c<D>::value) {
    return make_layout(shape_div(s, shape_div(Int<N>{}, abs(d))), shape_div(d, Int<N>{}));
  } else {
    return make_layout(s, d / Int<N>{});
  }
}
template <int N, class S, class D>
TESSEL_HOST_DEVICE constexpr auto downcast_mode(S const& s, D const& d) {
  if constexpr (is_tuple_v<S>) {
    return transform_layout(s, d, [](auto const& si, auto const& di) { return downcast_mode<N>(si, di); });
  } else if constexpr (is_constant_v<1, D> || is_constant_v<-1, D>) {
    return make_layout(s * Int<N>{}, d);
  } else {
    return make_layout(s, d * Int<N>{});
  }
}
constexpr int gcd_int(int a, int b) { return b == 0 ? a : gcd_int(b, a % b); }
}  // namespace detail

template <int N, class S, class D>
TESSEL_HOST_DEVICE constexpr auto upcast(Layout<S, D> const& l) {
  if constexpr (N == 1) {
    return l;
  } else {
    return detail::upcast_mode<N>(l.shape(), l.stride());
  }
}

template <int N, class S, class D>
TESSEL_HOST_DEVICE constexpr auto downcast(Layout<S, D> const& l) {
  if constexpr (N == 1) {
    return l;
  } else {
    return detail::downcast_mode<N>(l.shape(), l.stride());
  }
}

// A layout over OldBits-bit elements re-expressed over NewBits-bit elements.
template <int OldBits, int NewBits, class L>
TESSEL_HOST_DEVICE constexpr auto recast_layout_bits(L const& l) {
  constexpr int g = detail::gcd_int(OldBits, NewBits);
  constexpr int up = NewBits / g;
  constexpr int down = OldBits / g;
  return downcast<down>(upcast<up>(l));
}

template <class OldType, class NewType, class L>
TESSEL_HOST_DEVICE constexpr auto recast_layout(L const& l) {
  return recast_layout_bits<sizeof_bits_v<OldType>, sizeof_bits_v<NewType>>(l);
}

}  // namespace tessel
