// calc/divide.hpp -- logical/zipped/tiled/flat_divide on run-time layouts (mirrors layout/divide.hpp).
//
// logical_divide(A, T) = A o (T, complement(T, shape(coalesce(A)))): a rank-2 layout whose first
// mode is the tile T (taken from A) and whose second mode enumerates the tiles.
//   Pre:  the composition is admissible (calc/composition.hpp); T's modes nest (calc/complement.hpp).
//   Post: R(t, r) == A(T(t) + complement(T)(r)); size(R) >= size(A) (tiles may overhang).
//   e.g.  logical_divide((_4,_2,_3):(_2,_1,_8), _4:_2) -> ((_2,_2),(_2,_3)):((_4,_1),(_2,_8))
// With a by-mode tiler (T0, T1, ...) every mode i of A is divided by T_i, modes past the tiler kept:
//   logical_divide  -> ((t0,r0), (t1,r1), extra...)
//   zipped_divide   -> ((t0,t1,...), (r0,r1,...,extra...))
//   tiled_divide    -> ((t0,t1,...), r0, r1, ..., extra...)
//   flat_divide     -> (t0, t1, ..., r0, r1, ..., extra...)
// An integer tiler n means the compact layout of n; `_` keeps the mode.
#pragma once

#include "calc/layout.hpp"

namespace tessel::calc {

Layout logical_divide(Layout const& a, Tiler const& t);
Layout zipped_divide(Layout const& a, Tiler const& t);
Layout tiled_divide(Layout const& a, Tiler const& t);
Layout flat_divide(Layout const& a, Tiler const& t);

// Shared with the products: regroup a logical result by the tiler (layout.hpp tile_unzip), and
// unpack its second mode (tiled) or both modes (flat).
Layout tile_unzip(Layout const& l, Tiler const& t);
Layout unpack_mode1(Layout const& zipped);
Layout unpack_both(Layout const& zipped);

}  // namespace tessel::calc
