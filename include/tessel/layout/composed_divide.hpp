// tessel/layout/composed_divide.hpp -- dividing and regrouping a ComposedLayout (a swizzled tile).
//
// A ComposedLayout inner o offset o outer has outer's domain, so every divide, regrouping and
// mode selection acts on outer and keeps inner and offset:
//   zipped_divide(Sw<3,3,3> o _0 o (_8,_64):(_64,_1), (_8,_8))
//     -> Sw<3,3,3> o _0 o ((_8,_8),(_1,_8)):((_64,_1),(_0,_8))
// group_modes<B,E>(L) (the CuTe name) is group<B,E>(L) for layouts and composed layouts.
#pragma once

#include <tessel/config.hpp>
#include <tessel/layout/composed_layout.hpp>
#include <tessel/layout/divide.hpp>
#include <tessel/layout/layout.hpp>

namespace tessel {

template <class I, class O, class L, class Tiler>
TESSEL_HOST_DEVICE constexpr auto logical_divide(ComposedLayout<I, O, L> const& a, Tiler const& t) {
  return make_composed_layout(a.layout_a(), a.offset(), logical_divide(a.layout_b(), t));
}
template <class I, class O, class L, class Tiler>
TESSEL_HOST_DEVICE constexpr auto zipped_divide(ComposedLayout<I, O, L> const& a, Tiler const& t) {
  return make_composed_layout(a.layout_a(), a.offset(), zipped_divide(a.layout_b(), t));
}
template <class I, class O, class L, class Tiler>
TESSEL_HOST_DEVICE constexpr auto tiled_divide(ComposedLayout<I, O, L> const& a, Tiler const& t) {
  return make_composed_layout(a.layout_a(), a.offset(), tiled_divide(a.layout_b(), t));
}
template <class I, class O, class L, class Tiler>
TESSEL_HOST_DEVICE constexpr auto flat_divide(ComposedLayout<I, O, L> const& a, Tiler const& t) {
  return make_composed_layout(a.layout_a(), a.offset(), flat_divide(a.layout_b(), t));
}

template <int... Is, class I, class O, class L>
TESSEL_HOST_DEVICE constexpr auto layout(ComposedLayout<I, O, L> const& a) {
  return make_composed_layout(a.layout_a(), a.offset(), layout<Is...>(a.layout_b()));
}
template <int... Is, class I, class O, class L>
TESSEL_HOST_DEVICE constexpr auto select(ComposedLayout<I, O, L> const& a) {
  return make_composed_layout(a.layout_a(), a.offset(), select<Is...>(a.layout_b()));
}
template <int B, int E, class I, class O, class L>
TESSEL_HOST_DEVICE constexpr auto group(ComposedLayout<I, O, L> const& a) {
  return make_composed_layout(a.layout_a(), a.offset(), group<B, E>(a.layout_b()));
}
template <int B, int E, class I, class O, class L>
TESSEL_HOST_DEVICE constexpr auto take(ComposedLayout<I, O, L> const& a) {
  return make_composed_layout(a.layout_a(), a.offset(), take<B, E>(a.layout_b()));
}

template <int B, int E, class S, class D>
TESSEL_HOST_DEVICE constexpr auto group_modes(Layout<S, D> const& l) {
  return group<B, E>(l);
}
template <int B, int E, class I, class O, class L>
TESSEL_HOST_DEVICE constexpr auto group_modes(ComposedLayout<I, O, L> const& a) {
  return group<B, E>(a);
}

}  // namespace tessel
