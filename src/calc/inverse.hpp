// calc/inverse.hpp -- right_inverse and left_inverse on run-time layouts (mirrors layout/inverse.hpp).
//
// right_inverse(A) is the largest R with A(R(i)) == i for every i < size(R): it follows A's modes
// from stride 1 upward, each mode's stride equal to the extent*stride reached so far.
//   Post: A(R(i)) == i for i < size(R).
//   e.g.  right_inverse((4,2):(2,1)) -> (2,4):(4,1)
// The templated code can only follow static strides (CuTe silently drops run-time ones); the
// calculator follows every stride by value.
//
// left_inverse(A) is the R with R(A(i)) == i for every i < size(A), for injective A.
//   Pre:  strides >= 0; sorted by stride, each nonzero stride d is a multiple of the product of the
//         gaps before it (the templated rule), and d >= d' * s' for the previous nonzero mode s':d'
//         (the nonzero-stride modes do not overlap: without this A is not injective and no R exists;
//         the templated code does not check it). Stride-0 modes are allowed (CuTe accepts them).
//   Post: R(A(i)) == i for i < size(A) (for the coordinates of A's stride-0 modes taken as 0).
//   e.g.  left_inverse((4,2):(2,1)) -> (2,4):(4,1)
#pragma once

#include "calc/layout.hpp"

namespace tessel::calc {

Layout right_inverse(Layout const& a);
Layout left_inverse(Layout const& a);

}  // namespace tessel::calc
