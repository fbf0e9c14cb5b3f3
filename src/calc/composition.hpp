// calc/composition.hpp -- A o B on run-time layouts (mirrors layout/composition.hpp).
//
// composition(A, B) is the layout R with R(c) == A(B(c)) for every coordinate c of B.
//   Post: shape(R) is compatible with shape(B); R(c) == A(B(c)) for all c in B's domain.
//   e.g.  (6,2):(8,2) o (4,3):(3,1) -> ((2,2),3):((24,2),8)
//
// The construction is CuTe's walk (composition.hpp explains it), with every decision taken on
// the values as if they were static, so run-time layouts give the simplified static answer:
//   (10,2):(16,4) o (5,4):(1,5) -> (5,(2,2)):(16,(80,4))     (CuTe: ((5,1),(2,2)):((16,4),(80,4)))
// Pre: the same admissibility rule as the templated code (composition.hpp): every walk step even
// and the modes of B not carrying into each other, else R compared with A o B point by point.
// A refusal throws AlgebraError naming both layouts and the rule. Extents must be >= 1.
//
// A by-mode tiler composes mode by mode: integers n mean n:_1, `_` keeps the mode, modes of A
// past the tiler's rank are dropped.
#pragma once

#include "calc/layout.hpp"

namespace tessel::calc {

Layout composition(Layout const& a, Layout const& b);
Layout composition(Layout const& a, Tiler const& t);

// The walk alone, without the admissibility check (for tests that check the check).
Layout composition_unchecked(Layout const& a, Layout const& b);

// How much work the calculator spends when an admissibility rule falls back to a point-by-point
// check: points times the leaves evaluated per point (~0.1 s). Larger checks are refused with a
// message instead of run.
inline constexpr std::int64_t pointwise_work_limit = std::int64_t(1) << 25;
// Throws AlgebraError (naming `what`) when `points` evaluations of `leaves_per_point` leaves
// exceed pointwise_work_limit.
void require_pointwise_budget(std::int64_t points, std::size_t leaves_per_point, std::string const& what);

}  // namespace tessel::calc
