// tessel/layout/composed_layout.hpp -- inner o offset o outer: a layout followed by a function.
//
// ComposedLayout<Inner, Offset, Outer> maps c to inner(offset + outer(c)). The usual inner is a
// Swizzle, giving the permuted shared-memory layouts of tiled kernels:
//   composition(Swizzle<3,3,3>{}, (_8,_64):(_64,_1))  prints  Sw<3,3,3> o _0 o (_8,_64):(_64,_1)
// Its domain (shape, size, slicing, by-mode composition) is the outer layout's; slicing with `_`
// folds the fixed coordinates into the offset.
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/print.hpp>
#include <tessel/layout/composition.hpp>
#include <tessel/layout/layout.hpp>
#include <tessel/layout/swizzle.hpp>

#include <ostream>

namespace tessel {

template <class Inner, class Offset, class Outer>
struct ComposedLayout {
  Inner inner_;
  Offset offset_;
  Outer outer_;

  static constexpr int rank = Outer::rank;

  TESSEL_HOST_DEVICE constexpr ComposedLayout(Inner const& i = {}, Offset const& o = {}, Outer const& l = {})
      : inner_(i), offset_(o), outer_(l) {}

  TESSEL_HOST_DEVICE constexpr Inner const& layout_a() const { return inner_; }
  TESSEL_HOST_DEVICE constexpr Offset const& offset() const { return offset_; }
  TESSEL_HOST_DEVICE constexpr Outer const& layout_b() const { return outer_; }

  template <int... Is>
  TESSEL_HOST_DEVICE constexpr auto shape() const {
    return outer_.template shape<Is...>();
  }

  template <class Crd>
  TESSEL_HOST_DEVICE constexpr auto operator()(Crd const& c) const {
    if constexpr (has_underscore_v<Crd>) {
      auto [sub, off] = slice_and_offset(c, outer_);
      return ComposedLayout<Inner, decltype(offset_ + off), decltype(sub)>(inner_, offset_ + off, sub);
    } else {
      return inner_(offset_ + outer_(c));
    }
  }
  template <class C0, class C1, class... Cs>
  TESSEL_HOST_DEVICE constexpr auto operator()(C0 const& c0, C1 const& c1, Cs const&... cs) const {
    return (*this)(make_coord(c0, c1, cs...));
  }
};

template <class T>
struct is_composed_layout : std::false_type {};
template <class I, class O, class L>
struct is_composed_layout<ComposedLayout<I, O, L>> : std::true_type {};
template <class T>
inline constexpr bool is_composed_layout_v = is_composed_layout<std::remove_cvref_t<T>>::value;

template <class Inner, class Offset, class S, class D>
TESSEL_HOST_DEVICE constexpr auto make_composed_layout(Inner const& inner, Offset const& offset,
                                                       Layout<S, D> const& outer) {
  return ComposedLayout<Inner, Offset, Layout<S, D>>(inner, offset, outer);
}

// Swizzle o layout.
template <int B, int M, int Sh, class S, class D>
TESSEL_HOST_DEVICE constexpr auto composition(Swizzle<B, M, Sh> const& sw, Layout<S, D> const& l) {
  return make_composed_layout(sw, Int<0>{}, l);
}

// (inner o offset o outer) o tiler == inner o offset o (outer o tiler).
template <class I, class O, class L, class Tiler>
TESSEL_HOST_DEVICE constexpr auto composition(ComposedLayout<I, O, L> const& a, Tiler const& t) {
  return make_composed_layout(a.layout_a(), a.offset(), composition(a.layout_b(), t));
}

template <int... Is, class I, class O, class L>
TESSEL_HOST_DEVICE constexpr auto shape(ComposedLayout<I, O, L> const& a) {
  return shape<Is...>(a.layout_b());
}
template <int... Is, class I, class O, class L>
TESSEL_HOST_DEVICE constexpr auto size(ComposedLayout<I, O, L> const& a) {
  return size<Is...>(a.layout_b());
}
template <int... Is, class I, class O, class L>
TESSEL_HOST_DEVICE constexpr auto rank(ComposedLayout<I, O, L> const& a) {
  return rank<Is...>(a.layout_b());
}
template <int... Is, class I, class O, class L>
TESSEL_HOST_DEVICE constexpr auto depth(ComposedLayout<I, O, L> const& a) {
  return depth<Is...>(a.layout_b());
}
template <int... Is, class I, class O, class L>
TESSEL_HOST_DEVICE constexpr auto cosize(ComposedLayout<I, O, L> const& a) {
  return cosize<Is...>(a.layout_b());
}

template <class Sink, class I, class O, class L>
TESSEL_HOST_DEVICE void format(Sink& sink, ComposedLayout<I, O, L> const& a) {
  format(sink, a.layout_a());
  sink.text(" o ");
  format(sink, a.offset());
  sink.text(" o ");
  format(sink, a.layout_b());
}

template <class I, class O, class L>
std::ostream& operator<<(std::ostream& os, ComposedLayout<I, O, L> const& a) {
  OstreamSink sink{&os};
  format(sink, a);
  return os;
}

}  // namespace tessel
