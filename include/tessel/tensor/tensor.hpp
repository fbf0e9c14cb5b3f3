// tessel/tensor/tensor.hpp -- Tensor<Engine,Layout>: a layout applied to an iterator.
//
// t(c) is the element at data()[layout(c)] for a coordinate or an integer index c; when c holds
// `_` the result is the sub-tensor of the kept modes (a view, whatever the engine):
//   Tensor t = make_tensor(make_gmem_ptr(A), make_shape(4, 8));   // (4,8):(_1,4)
//   t(1,2) == A[9];   t(_,2) is the column (4):(_1) starting at A + 8;   t(9) == A[9]
// make_tensor(iterator, layout | shape[, stride]) views memory; make_tensor<T>(layout | shape)
// owns cosize(layout) elements (registers in a kernel; the layout must be static);
// make_tensor_like / make_fragment_like own a compact copy shaped like another tensor.
// Works on host and device; the layout may be a Layout or a ComposedLayout (swizzled tiles).
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/print.hpp>
#include <tessel/layout.hpp>
#include <tessel/layout/composed_divide.hpp>
#include <tessel/layout/layout_like.hpp>
#include <tessel/tensor/engine.hpp>
#include <tessel/tensor/pointer.hpp>

#include <ostream>
#include <type_traits>

namespace tessel {

template <class T>
inline constexpr bool is_any_layout_v = is_layout_v<T> || is_composed_layout_v<T>;

namespace detail {
// (sub-layout, offset to add to the iterator) for a coordinate with `_`. A composed layout keeps
// the offset inside (a swizzle must see the whole offset), so the iterator does not move.
template <class L, class Crd>
TESSEL_HOST_DEVICE constexpr auto slice_for_tensor(L const& l, Crd const& c) {
  if constexpr (is_layout_v<L>) {
    return slice_and_offset(c, l);
  } else {
    return make_tuple(l(c), Int<0>{});
  }
}
}  // namespace detail

template <class Engine, class LayoutT>
struct Tensor {
  using engine_type = Engine;
  using layout_type = LayoutT;
  using iterator = typename Engine::iterator;
  using reference = typename Engine::reference;
  using element_type = typename Engine::element_type;
  using value_type = typename Engine::value_type;
  static constexpr int rank = LayoutT::rank;

  Engine engine_;
  LayoutT layout_;

  TESSEL_HOST_DEVICE constexpr auto data() const { return engine_.begin(); }
  TESSEL_HOST_DEVICE constexpr auto data() { return engine_.begin(); }
  TESSEL_HOST_DEVICE constexpr LayoutT const& layout() const { return layout_; }
  TESSEL_HOST_DEVICE constexpr auto shape() const { return layout_.shape(); }
  TESSEL_HOST_DEVICE constexpr auto stride() const { return layout_.stride(); }
  TESSEL_HOST_DEVICE constexpr auto size() const { return tessel::size(layout_); }

  template <class Crd>
  TESSEL_HOST_DEVICE constexpr decltype(auto) operator()(Crd const& c) {
    return access(*this, c);
  }
  template <class Crd>
  TESSEL_HOST_DEVICE constexpr decltype(auto) operator()(Crd const& c) const {
    return access(*this, c);
  }
  template <class C0, class C1, class... Cs>
  TESSEL_HOST_DEVICE constexpr decltype(auto) operator()(C0 const& c0, C1 const& c1, Cs const&... cs) {
    return access(*this, make_coord(c0, c1, cs...));
  }
  template <class C0, class C1, class... Cs>
  TESSEL_HOST_DEVICE constexpr decltype(auto) operator()(C0 const& c0, C1 const& c1, Cs const&... cs) const {
    return access(*this, make_coord(c0, c1, cs...));
  }
  template <class Crd>
  TESSEL_HOST_DEVICE constexpr decltype(auto) operator[](Crd const& c) {
    return access(*this, c);
  }
  template <class Crd>
  TESSEL_HOST_DEVICE constexpr decltype(auto) operator[](Crd const& c) const {
    return access(*this, c);
  }

  // The same data seen through layout() o tiler (CuTe's tensor.compose).
  template <class... Tilers>
  TESSEL_HOST_DEVICE constexpr auto compose(Tilers const&... tilers) const;

 private:
  template <class Self, class Crd>
  TESSEL_HOST_DEVICE static constexpr decltype(auto) access(Self& self, Crd const& c) {
    if constexpr (has_underscore_v<Crd>) {
      auto [sub, off] = detail::slice_for_tensor(self.layout_, c);
      return Tensor<ViewEngine<decltype(self.data() + off)>, decltype(sub)>{{self.data() + off}, sub};
    } else {
      return self.data()[self.layout_(c)];
    }
  }
};

template <class T>
struct is_tensor : std::false_type {};
template <class E, class L>
struct is_tensor<Tensor<E, L>> : std::true_type {};
template <class T>
inline constexpr bool is_tensor_v = is_tensor<std::remove_cvref_t<T>>::value;

template <class T>
inline constexpr bool is_iterator_v =
    ptr_traits<std::remove_cvref_t<T>>::is_pointer || requires(T const& t) { typename std::remove_cvref_t<T>::iterator_tag; };

// ---- make_tensor ---------------------------------------------------------------------------------

// A view: make_tensor(ptr, layout) or make_tensor(ptr, shape[, stride | major tag]).
template <class Iterator, class L>
  requires(is_iterator_v<Iterator> && is_any_layout_v<L>)
TESSEL_HOST_DEVICE constexpr auto make_tensor(Iterator const& it, L const& layout) {
  return Tensor<ViewEngine<Iterator>, L>{{it}, layout};
}
template <class Iterator, class Arg0, class... Args>
  requires(is_iterator_v<Iterator> && !is_any_layout_v<Arg0>)
TESSEL_HOST_DEVICE constexpr auto make_tensor(Iterator const& it, Arg0 const& arg0, Args const&... args) {
  return make_tensor(it, make_layout(arg0, args...));
}

// Owned storage: make_tensor<T>(layout) or make_tensor<T>(shape[, stride | major tag]).
template <class T, class L>
  requires(!is_iterator_v<T> && is_any_layout_v<L>)
TESSEL_HOST_DEVICE constexpr auto make_tensor(L const& layout) {
  static_assert(is_static_v<L>,
                "make_tensor<T>(layout): owned (register) storage needs a static layout, so its size is "
                "known at compile time. Use Int<N> extents, or make a view over memory you allocate.");
  constexpr int n = int(decltype(cosize(layout))::value);
  return Tensor<ArrayEngine<T, (n > 0 ? n : 1)>, L>{{}, layout};
}
template <class T, class Arg0, class... Args>
  requires(!is_iterator_v<T> && !is_any_layout_v<Arg0>)
TESSEL_HOST_DEVICE constexpr auto make_tensor(Arg0 const& arg0, Args const&... args) {
  return make_tensor<T>(make_layout(arg0, args...));
}

// A copy of a tensor's data: make_tensor(tensor) re-views, make_tensor(tensor.data(), layout).
template <class E, class L>
TESSEL_HOST_DEVICE constexpr auto make_tensor(Tensor<E, L> const& t) {
  return make_tensor(t.data(), t.layout());
}

// Owned tensors shaped like `t`: compact, strides ordered like t's (make_layout_like).
template <class T, class E, class L>
TESSEL_HOST_DEVICE constexpr auto make_tensor_like(Tensor<E, L> const& t) {
  return make_tensor<T>(make_layout_like(t.layout()));
}
template <class E, class L>
TESSEL_HOST_DEVICE constexpr auto make_tensor_like(Tensor<E, L> const& t) {
  return make_tensor_like<typename E::value_type>(t);
}
template <class T, class S, class D>
TESSEL_HOST_DEVICE constexpr auto make_tensor_like(Layout<S, D> const& l) {
  return make_tensor<T>(make_layout_like(l));
}

// Owned fragments: mode 0 column-major and contiguous (one atom's values), the rest ordered.
template <class T, class E, class L>
TESSEL_HOST_DEVICE constexpr auto make_fragment_like(Tensor<E, L> const& t) {
  return make_tensor<T>(make_fragment_like(t.layout()));
}
template <class E, class L>
TESSEL_HOST_DEVICE constexpr auto make_fragment_like(Tensor<E, L> const& t) {
  return make_fragment_like<typename E::value_type>(t);
}
template <class T, class S, class D>
TESSEL_HOST_DEVICE constexpr auto make_fragment_like(Layout<S, D> const& l) {
  return make_tensor<T>(make_fragment_like(l));
}

template <class E, class L>
template <class... Tilers>
TESSEL_HOST_DEVICE constexpr auto Tensor<E, L>::compose(Tilers const&... tilers) const {
  if constexpr (sizeof...(Tilers) == 1) {
    return make_tensor(data(), composition(layout_, tilers...));
  } else {
    return make_tensor(data(), composition(layout_, make_tile(tilers...)));
  }
}

// ---- queries -----------------------------------------------------------------------------------

template <int... Is, class E, class L>
TESSEL_HOST_DEVICE constexpr auto shape(Tensor<E, L> const& t) {
  return shape<Is...>(t.layout());
}
template <int... Is, class E, class L>
TESSEL_HOST_DEVICE constexpr auto stride(Tensor<E, L> const& t) {
  return stride<Is...>(t.layout());
}
template <int... Is, class E, class L>
TESSEL_HOST_DEVICE constexpr auto size(Tensor<E, L> const& t) {
  return size<Is...>(t.layout());
}
template <int... Is, class E, class L>
TESSEL_HOST_DEVICE constexpr auto rank(Tensor<E, L> const& t) {
  return rank<Is...>(t.layout());
}
template <int... Is, class E, class L>
TESSEL_HOST_DEVICE constexpr auto depth(Tensor<E, L> const& t) {
  return depth<Is...>(t.layout());
}
template <int... Is, class E, class L>
TESSEL_HOST_DEVICE constexpr auto cosize(Tensor<E, L> const& t) {
  return cosize<Is...>(t.layout());
}
template <int... Is, class E, class L>
TESSEL_HOST_DEVICE constexpr auto layout(Tensor<E, L> const& t) {
  return layout<Is...>(t.layout());
}

// The sub-tensor of mode I...: same data, layout<I...>.
template <int... Is, class T>
  requires is_tensor_v<T>
TESSEL_HOST_DEVICE constexpr auto tensor(T&& t) {
  return make_tensor(t.data(), layout<Is...>(t.layout()));
}

template <int B, int E_, class T>
  requires is_tensor_v<T>
TESSEL_HOST_DEVICE constexpr auto group_modes(T&& t) {
  return make_tensor(t.data(), group_modes<B, E_>(t.layout()));
}
template <int B, int E_, class T>
  requires is_tensor_v<T>
TESSEL_HOST_DEVICE constexpr auto take(T&& t) {
  return make_tensor(t.data(), take<B, E_>(t.layout()));
}
template <int... Is, class T>
  requires is_tensor_v<T>
TESSEL_HOST_DEVICE constexpr auto select(T&& t) {
  return make_tensor(t.data(), select<Is...>(t.layout()));
}
template <class T>
  requires is_tensor_v<T>
TESSEL_HOST_DEVICE constexpr auto flatten(T&& t) {
  return make_tensor(t.data(), flatten(t.layout()));
}
template <class T>
  requires is_tensor_v<T>
TESSEL_HOST_DEVICE constexpr auto coalesce(T&& t) {
  return make_tensor(t.data(), coalesce(t.layout()));
}

// ---- printing: CuTe writes `iterator o layout` ------------------------------------------------

template <class Sink, class E, class L>
TESSEL_HOST_DEVICE void format(Sink& sink, Tensor<E, L> const& t) {
  format(sink, t.data());
  sink.text(" o ");
  format(sink, t.layout());
}

template <class E, class L>
std::ostream& operator<<(std::ostream& os, Tensor<E, L> const& t) {
  OstreamSink sink{&os};
  format(sink, t);
  return os;
}

}  // namespace tessel
