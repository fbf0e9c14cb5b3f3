// calc/swizzle.cpp -- Swizzle and ComposedLayout on values.
#include "calc/swizzle.hpp"

#include "calc/composition.hpp"

namespace tessel::calc {

Swizzle make_swizzle(std::int64_t b, std::int64_t m, std::int64_t s) {
  std::string const text = "Sw<" + std::to_string(b) + "," + std::to_string(m) + "," + std::to_string(s) + ">";
  if (b < 0) fail("swizzle: " + text + ": the number of XORed bits B must be >= 0");
  if (m < 0) fail("swizzle: " + text + ": the base bit M must be >= 0");
  if (s > 62 || s < -62 || (s < 0 ? -s : s) < b) {
    fail("swizzle: " + text +
         ": |S| must be >= B, or the XORed bit fields overlap and the map is not a permutation. Raise |S| or lower B");
  }
  if (b + m + (s < 0 ? -s : s) > 62) {
    fail("swizzle: " + text + ": B + M + |S| must be <= 62 (the bit fields must fit in a 64-bit offset)");
  }
  return Swizzle{int(b), int(m), int(s)};
}

Integer apply(Swizzle sw, Integer x) {
  std::int64_t const bits = (std::int64_t(1) << sw.b) - 1;
  std::int64_t const yyy = bits << (sw.m + (sw.s > 0 ? sw.s : 0));
  std::uint64_t const masked = static_cast<std::uint64_t>(x.value & yyy);
  std::uint64_t const moved = sw.s >= 0 ? masked >> sw.s : masked << -sw.s;
  return Integer{x.value ^ static_cast<std::int64_t>(moved), x.is_static};
}

std::string to_string(Swizzle sw) {
  return "Sw<" + std::to_string(sw.b) + "," + std::to_string(sw.m) + "," + std::to_string(sw.s) + ">";
}

std::string to_string(ComposedLayout const& c) {
  return to_string(c.swizzle) + " o " + to_string(c.offset) + " o " + to_string(c.layout);
}

Integer eval(ComposedLayout const& c, IntTuple const& coord) { return apply(c.swizzle, c.offset + eval(c.layout, coord)); }

ComposedLayout composition(Swizzle sw, Layout const& l) { return ComposedLayout{sw, static_int(0), l}; }

ComposedLayout composition(ComposedLayout const& c, Tiler const& t) {
  return ComposedLayout{c.swizzle, c.offset, composition(c.layout, t)};
}

}  // namespace tessel::calc
