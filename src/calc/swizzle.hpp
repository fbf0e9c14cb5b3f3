// calc/swizzle.hpp -- run-time Swizzle<B,M,S> and swizzled (composed) layouts.
//
// Sw<B,M,S>(x) = x ^ ((x & Y) >> S)  with  Y = ((1<<B) - 1) << (M + max(0,S))  (a negative S shifts
// left), as layout/swizzle.hpp. A ComposedLayout `Sw<B,M,S> o OFFSET o L` maps c to
// Sw(OFFSET + L(c)) (layout/composed_layout.hpp); its domain (shape, size, rank, by-mode
// composition) is L's.
//   Pre:  B >= 0, M >= 0, |S| >= B, and B + M + |S| <= 62 (the bit fields fit in an int64).
//   e.g.  Sw<3,3,3>(100) == 108      (Sw<3,3,3> o _0 o (_8,_64):(_64,_1))(72) == 9
// A static offset gives a static result.
#pragma once

#include "calc/layout.hpp"

#include <string>

namespace tessel::calc {

struct Swizzle {
  int b = 0, m = 0, s = 0;
  friend bool operator==(Swizzle, Swizzle) = default;
};

// Throws AlgebraError unless the parameters are admissible.
Swizzle make_swizzle(std::int64_t b, std::int64_t m, std::int64_t s);
Integer apply(Swizzle sw, Integer x);
std::string to_string(Swizzle sw);  // Sw<B,M,S>

struct ComposedLayout {
  Swizzle swizzle;
  Integer offset;
  Layout layout;
  friend bool operator==(ComposedLayout const&, ComposedLayout const&) = default;
};

std::string to_string(ComposedLayout const& c);  // Sw<3,3,3> o _0 o (_8,_64):(_64,_1)
Integer eval(ComposedLayout const& c, IntTuple const& coord);
// composition(Swizzle, L) == Sw o _0 o L.
ComposedLayout composition(Swizzle sw, Layout const& l);
// (Sw o off o L) o T == Sw o off o (L o T).
ComposedLayout composition(ComposedLayout const& c, Tiler const& t);

}  // namespace tessel::calc
