// calc/complement.hpp -- the layout of the offsets A does not reach (mirrors layout/complement.hpp).
//
// complement(A, M) is the ordered layout R that, with A, tiles the codomain [0, M): R is strictly
// increasing and R(i) is never an offset of A for i >= 1. M (the cotarget) is an integer or a
// shape; a shape is divided mode by mode. Without M, M = cosize(filter(A)).
//   Post: R(i) < R(i+1); R(i) != A(j) for all i >= 1, all j; size(R) >= M / size(filter(A)).
//   e.g.  complement(4:2, 24) -> (2,3):(_1,8)        complement(_4:_2, _24) -> (_2,_3):(_1,_8)
// Decisions (filtering stride-0 modes, sorting by stride) are taken on the values, so run-time
// layouts of any rank work and simplify: complement(4:1, 24) -> 6:4 (CuTe: (1,6):(_1,4)).
// Pre: the templated rule -- extents >= 1, strides >= 0, and the modes nest (sorted by stride,
// each stride a positive multiple of the previous stride times its extent), or else R meets the
// Post conditions point by point. Cotarget extents must be >= 1.
#pragma once

#include "calc/layout.hpp"

namespace tessel::calc {

Layout complement(Layout const& a, IntTuple const& cotarget);
Layout complement(Layout const& a);

}  // namespace tessel::calc
