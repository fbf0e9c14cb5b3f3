// tessel/tensor/pointer.hpp -- iterators that remember which memory they point into.
//
// make_gmem_ptr(p) and make_smem_ptr(p) wrap a raw pointer with a tag (global, shared); a raw
// pointer is register (or host) memory. Copies pick instructions by these tags (cp.async needs a
// gmem source and an smem destination). Indexing and + behave like the raw pointer.
//   auto g = make_gmem_ptr(A);  g[3] == A[3];  (g + 2).get() == A + 2;  is_gmem_v<decltype(g)>
// recast_ptr<U>(p) is the same address, same tag, read as U.
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/print.hpp>
#include <tessel/numeric/int_types.hpp>

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <type_traits>

namespace tessel {

struct gmem_tag {};
struct smem_tag {};

template <class T, class Tag>
struct tagged_ptr {
  using value_type = std::remove_cv_t<T>;
  using element_type = T;
  using reference = T&;
  using tag = Tag;

  T* ptr_;

  TESSEL_HOST_DEVICE constexpr T* get() const { return ptr_; }
  TESSEL_HOST_DEVICE constexpr T& operator*() const { return *ptr_; }
  template <class Index>
  TESSEL_HOST_DEVICE constexpr T& operator[](Index const& i) const {
    return ptr_[i];
  }
  template <class Index>
  TESSEL_HOST_DEVICE constexpr tagged_ptr operator+(Index const& i) const {
    return {ptr_ + i};
  }
  TESSEL_HOST_DEVICE constexpr bool operator==(tagged_ptr const& o) const { return ptr_ == o.ptr_; }
};

template <class T>
using gmem_ptr = tagged_ptr<T, gmem_tag>;
template <class T>
using smem_ptr = tagged_ptr<T, smem_tag>;

template <class T>
TESSEL_HOST_DEVICE constexpr gmem_ptr<T> make_gmem_ptr(T* p) {
  return {p};
}
template <class T>
TESSEL_HOST_DEVICE constexpr smem_ptr<T> make_smem_ptr(T* p) {
  return {p};
}
// make_gmem_ptr<T>(void_ptr): an untyped address read as T.
template <class T>
TESSEL_HOST_DEVICE constexpr gmem_ptr<T> make_gmem_ptr(void* p) {
  return {static_cast<T*>(p)};
}
template <class T>
TESSEL_HOST_DEVICE constexpr gmem_ptr<T const> make_gmem_ptr(void const* p) {
  return {static_cast<T const*>(p)};
}
template <class T>
TESSEL_HOST_DEVICE constexpr smem_ptr<T> make_smem_ptr(void* p) {
  return {static_cast<T*>(p)};
}

// ---- traits ------------------------------------------------------------------------------------

template <class P>
struct ptr_traits {
  static constexpr bool is_pointer = false;
};
template <class T>
struct ptr_traits<T*> {
  static constexpr bool is_pointer = true;
  using element_type = T;
  using tag = void;
};
template <class T, class Tag>
struct ptr_traits<tagged_ptr<T, Tag>> {
  static constexpr bool is_pointer = true;
  using element_type = T;
  using tag = Tag;
};

template <class P>
inline constexpr bool is_gmem_v = std::is_same_v<typename ptr_traits<std::remove_cvref_t<P>>::tag, gmem_tag>;
template <class P>
inline constexpr bool is_smem_v = std::is_same_v<typename ptr_traits<std::remove_cvref_t<P>>::tag, smem_tag>;
template <class P>
inline constexpr bool is_rmem_v = std::is_pointer_v<std::remove_cvref_t<P>>;

template <class T>
TESSEL_HOST_DEVICE constexpr T* raw_pointer(T* p) {
  return p;
}
template <class T, class Tag>
TESSEL_HOST_DEVICE constexpr T* raw_pointer(tagged_ptr<T, Tag> p) {
  return p.get();
}

namespace detail {
template <class From, class To>
using copy_const_t = std::conditional_t<std::is_const_v<From>, To const, To>;
}

// The same address read as U (keeps the memory tag and constness).
template <class U, class T>
TESSEL_HOST_DEVICE constexpr auto recast_ptr(T* p) {
  using R = detail::copy_const_t<T, U>;
  return reinterpret_cast<R*>(p);
}
template <class U, class T, class Tag>
TESSEL_HOST_DEVICE constexpr auto recast_ptr(tagged_ptr<T, Tag> p) {
  using R = detail::copy_const_t<T, U>;
  return tagged_ptr<R, Tag>{reinterpret_cast<R*>(p.get())};
}

// ---- printing: gmem_ptr[16b](0x7f..) as CuTe writes it ------------------------------------------

TESSEL_HOST_DEVICE inline void format_address(PrintfSink&, void const* p) { printf("%p", p); }
inline void format_address(OstreamSink& sink, void const* p) { *sink.os << p; }

template <class Sink, class T, class Tag>
TESSEL_HOST_DEVICE void format(Sink& sink, tagged_ptr<T, Tag> p) {
  sink.text(std::is_same_v<Tag, gmem_tag> ? "gmem_ptr[" : "smem_ptr[");
  sink.integer(sizeof_bits_v<T>);
  sink.text("b](");
  format_address(sink, p.get());
  sink.text(")");
}
template <class Sink, class T>
TESSEL_HOST_DEVICE void format(Sink& sink, T* p) {
  sink.text("ptr[");
  sink.integer(sizeof_bits_v<T>);
  sink.text("b](");
  format_address(sink, p);
  sink.text(")");
}


template <class T, class Tag>
std::ostream& operator<<(std::ostream& os, tagged_ptr<T, Tag> p) {
  OstreamSink sink{&os};
  format(sink, p);
  return os;
}

}  // namespace tessel
