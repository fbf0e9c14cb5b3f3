// tessel/core/print.hpp -- CuTe's text for every core type, on host and device.
//
//   Int<8>{} -> _8      int 8 -> 8      make_tuple(_2{}, 3) -> (_2,3)      tuple<>{} -> ()
//   _ -> _              layouts print as shape:stride (layout.hpp)
//
// One formatter, two sinks: print(x) writes through printf (host or device); `os << x` and
// to_string(x) (host) write through an ostream. A type joins in by providing
// `format(Sink&, T const&)` in namespace tessel.
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/integral.hpp>    // C
#include <tessel/core/tuple.hpp>       // tuple
#include <tessel/core/underscore.hpp>  // Underscore

#include <cstdio>
#include <ostream>
#include <sstream>
#include <string>

namespace tessel {

// Writes through printf: usable in device code.
struct PrintfSink {
  TESSEL_HOST_DEVICE void text(char const* s) { printf("%s", s); }
  TESSEL_HOST_DEVICE void integer(long long v) { printf("%lld", v); }
};

// Writes to a std::ostream (host only).
struct OstreamSink {
  std::ostream* os;
  void text(char const* s) { *os << s; }
  void integer(long long v) { *os << v; }
};

template <class Sink, class T>
  requires is_std_integral_v<T>
TESSEL_HOST_DEVICE void format(Sink& sink, T const& v) {
  sink.integer(static_cast<long long>(v));
}

template <class Sink, auto V>
TESSEL_HOST_DEVICE void format(Sink& sink, C<V>) {
  sink.text("_");
  sink.integer(static_cast<long long>(V));
}

template <class Sink>
TESSEL_HOST_DEVICE void format(Sink& sink, Underscore) {
  sink.text("_");
}

template <class Sink, class... Ts>
TESSEL_HOST_DEVICE void format(Sink& sink, tuple<Ts...> const& t) {
  sink.text("(");
  [&]<int... Is>(seq<Is...>) {
    ((Is == 0 ? void() : sink.text(","), format(sink, get<Is>(t))), ...);
  }(make_seq<int(sizeof...(Ts))>{});
  sink.text(")");
}

// print(x): CuTe's text for x on stdout (works in device code).
template <class T>
TESSEL_HOST_DEVICE void print(T const& t) {
  PrintfSink sink;
  format(sink, t);
}

TESSEL_HOST_DEVICE inline void print(char const* s) { printf("%s", s); }

// to_string(x): the same text as a std::string (host only).
template <class T>
std::string to_string(T const& t) {
  std::ostringstream os;
  OstreamSink sink{&os};
  format(sink, t);
  return os.str();
}

template <auto V>
std::ostream& operator<<(std::ostream& os, C<V> const& c) {
  OstreamSink sink{&os};
  format(sink, c);
  return os;
}

template <class... Ts>
std::ostream& operator<<(std::ostream& os, tuple<Ts...> const& t) {
  OstreamSink sink{&os};
  format(sink, t);
  return os;
}

inline std::ostream& operator<<(std::ostream& os, Underscore) { return os << "_"; }

}  // namespace tessel
