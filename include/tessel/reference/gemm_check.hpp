// tessel/reference/gemm_check.hpp -- how a GEMM result is judged against an fp64 reference.
//
// The reference gives, per element, R = alpha * sum_k A B + beta * C in fp64 and the scale
// S = |alpha| * sum_k |A B| + |beta C|. An element's error is |D - R| / S: the componentwise
// relative error that floating-point summation bounds (it does not blow up where R cancels to
// near 0). Non-finite references must be matched exactly: R NaN needs D NaN, R = +-inf needs
// D = R; a finite R with a non-finite D is an infinite error. NaN never passes where R is finite.
// Plain C++ (host and device).
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/dtype.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace tessel::reference {

// Error of one element: 0 when exact, +inf for a non-finite mismatch.
TESSEL_HOST_DEVICE inline double element_error(double d, double r, double scale) {
  if (r != r) return d != d ? 0.0 : INFINITY;  // R NaN: D must be NaN
  if (r == INFINITY || r == -INFINITY) return d == r ? 0.0 : INFINITY;
  if (d != d || d == INFINITY || d == -INFINITY) return INFINITY;
  double const diff = d > r ? d - r : r - d;
  if (diff == 0.0) return 0.0;
  return scale > 0.0 ? diff / scale : INFINITY;
}

// The pass threshold for elementwise errors: fp32 accumulation over K (a generous 8 sqrt(K) units
// of roundoff), tf32 rounding of the inputs, and rounding of the output to its dtype.
//
// fp8 inputs (e4m3, e5m2): the inputs are exact and so are their products (at most 4 x 4
// significant bits, exponents far inside fp32's range), so u_in = 0; the error is that of the
// fp32 sum (the 8 sqrt(K) term), of the scaling (alpha * a_scale * b_scale folded in fp32: 2
// roundings, 1 for the product with the accumulator, 1 for the beta * C fma: 4 u_acc) and of the
// output rounding. Plus one allowance for tensor-core kernels: Hopper's fp8 MMA adds products
// into an accumulator that keeps ~14 bits and truncates, until the kernel promotes the partial sum
// to fp32 (every P <= 128 k in CUTLASS-style kernels and cuBLASLt without FAST_ACCUM). Within an
// interval each addition loses < 2^-14 of the running partial sum, whose size after i products
// is ~ sqrt(i) sigma (random signs): < 2^-14 (2/3) P^1.5 sigma in all, against the interval's
// error scale P E|ab| >= (3/4) P sigma (uniform inputs): < 2^-14 (8/9) sqrt(P) = 6e-4 at P = 128
// (at K = P; longer K averages intervals down). Rounded up to 2^-10. The SIMT kernels accumulate
// in true fp32 and stay far below it; it is a quarter of bf16's output allowance.
inline double gemm_tolerance(DType ab, DType cd, std::int64_t k) {
  double const u_acc = 0x1p-24;
  double const u_in = ab == DType::tf32 ? 0x1p-11 : 0.0;
  double const u_out = cd == DType::f16 ? 0x1p-11 : cd == DType::bf16 ? 0x1p-8 : 0x1p-24;
  double const fp8 = is_fp8(ab) ? 4.0 * u_acc + 0x1p-10 : 0.0;
  return 8.0 * u_acc * std::sqrt(double(k > 1 ? k : 1)) + 2.0 * u_in + 2.0 * u_out + fp8;
}

// The verdict over a whole D.
struct GemmCheck {
  double tolerance = 0.0;
  double max_rel_err = 0.0;   // max element_error (inf after a non-finite mismatch)
  double norm_rel_err = 0.0;  // ||D - R|| / ||R|| over the elements where both are finite
  std::int64_t bad = 0;       // elements with element_error > tolerance
  std::int64_t first_bad_batch = -1, first_bad_row = -1, first_bad_col = -1;  // smallest (batch, row, col) that is bad
  double first_bad_value = 0.0, first_bad_expected = 0.0;

  bool passed() const { return bad == 0; }

  // "max rel err 3.1e-07 (tol 1.2e-05)" or "12 bad elements, first at batch 0 (17, 3): 0.5 expected 0.25 ..."
  std::string describe() const {
    char buf[320];
    if (passed()) {
      std::snprintf(buf, sizeof buf, "ok: max rel err %.3g, norm rel err %.3g (tol %.3g)", max_rel_err, norm_rel_err,
                    tolerance);
    } else {
      std::snprintf(buf, sizeof buf,
                    "FAILED: %lld bad elements, first at batch %lld (row %lld, col %lld): got %.9g, expected %.9g; "
                    "max rel err %.3g (tol %.3g)",
                    static_cast<long long>(bad), static_cast<long long>(first_bad_batch),
                    static_cast<long long>(first_bad_row), static_cast<long long>(first_bad_col), first_bad_value,
                    first_bad_expected, max_rel_err, tolerance);
    }
    return buf;
  }
};

}  // namespace tessel::reference
