// calc/coalesce.hpp -- coalesce and filter on run-time layouts (mirrors layout/coalesce.hpp).
//
// coalesce(L): flatten L, drop extent-1 modes and merge neighbours s0:d0, s1:d1 with
// s0*d0 == d1 into (s0*s1):d0. Decisions are taken on the values, as if every leaf were static,
// so run-time layouts simplify too (CuTe only flattens them); static flags follow the arithmetic.
//   Post: size(R) == size(L); depth(R) <= 1; R(i) == L(i) for every i < size(L).
//   e.g.  (_2,(_1,_6)):(_1,(_6,_2)) -> _12:_1      (2,(1,6)):(1,(6,2)) -> 12:1
//
// coalesce(L, profile) coalesces each mode named by a tuple profile on its own (keeps the rank).
// filter(L) also drops the modes of stride 0 (any stride whose value is 0).
//   e.g.  filter((_4,_2):(_0,_1)) -> _2:_1
#pragma once

#include "calc/layout.hpp"

namespace tessel::calc {

Layout coalesce(Layout const& l);
Layout coalesce(Layout const& l, IntTuple const& profile);
Layout filter_zeros(Layout const& l);
Layout filter(Layout const& l);
Layout filter(Layout const& l, IntTuple const& profile);

// coalesce that keeps the function outside the domain: a trailing extent-1 mode is treated as
// extent _2, so the stride the last mode uses for overflow survives. Used by composition.
Layout coalesce_x(Layout const& l);

}  // namespace tessel::calc
