// calc/product.hpp -- logical/zipped/tiled/flat/blocked/raked_product on run-time layouts
// (mirrors layout/product.hpp).
//
// logical_product(A, B) = (A, complement(A, size(A)*cosize(B)) o B): a rank-2 layout whose first
// mode is A and whose second mode places the copies of A as B says.
//   Pre:  A's modes nest (calc/complement.hpp); the composition is admissible (calc/composition.hpp).
//   Post: R(a, b) == A(a) + complement(A, size(A)*cosize(B))(B(b)).
//   e.g.  logical_product((_2,_2):(_4,_1), _6:_1) -> ((_2,_2),(_2,_3)):((_4,_1),(_2,_8))
// A by-mode tiler multiplies mode by mode; zipped/tiled/flat_product regroup like the divides.
//
// blocked_product(A, B) and raked_product(A, B) pad A and B to the same rank R (with _1:_0 modes)
// and pair mode i of A with mode i of the repetition: blocked (A_i, B'_i), raked (B'_i, A_i).
//   e.g.  (_2,_5):(_5,_1) x (_3,_4):(_1,_3)
//           blocked -> ((_2,_3),(_5,_4)):((_5,_10),(_1,_30))
//           raked   -> ((_3,_2),(_4,_5)):((_10,_5),(_30,_1))
// Pre (blocked/raked): the paired modes have the same rank where the first is a tuple. With a
// rank-1 tuple block and a repetition that splits into several modes, e.g. (2):(2) x _4:_1, CuTe
// (and the templated code) silently drop modes; the calculator refuses.
#pragma once

#include "calc/layout.hpp"

namespace tessel::calc {

Layout logical_product(Layout const& a, Tiler const& t);
Layout zipped_product(Layout const& a, Tiler const& t);
Layout tiled_product(Layout const& a, Tiler const& t);
Layout flat_product(Layout const& a, Tiler const& t);
Layout blocked_product(Layout const& a, Layout const& b);
Layout raked_product(Layout const& a, Layout const& b);

}  // namespace tessel::calc
