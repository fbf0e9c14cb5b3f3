// tessel/reference/gemm_host.hpp -- the obviously-correct GEMM on the host, in fp64.
//
//   R[b](i,j) = alpha * sum_k op(A)[b](i,k) * op(B)[b](k,j) + beta * C[b](i,j)
//   S[b](i,j) = |alpha| * sum_k |op(A)(i,k) * op(B)(k,j)| + |beta * C(i,j)|      (the error scale)
// with alpha standing for alpha * a_scale * b_scale (fp8 operands' scales; 1 otherwise), in fp64.
// fp8 elements are dequantized exactly (every e4m3/e5m2 value is a double). A fused epilogue
// (bias, activation: gemm_arguments.hpp) is applied to R on top, by apply_fusion.
//
// For small problems (tests, 17x33x65): O(M N K) scalar loops over host copies of the operands,
// described by the same GemmArguments as the device call (pointers are host pointers here).
// R and S are packed row-major, batch after batch: index (b * M + i) * N + j. Plain C++.
#pragma once

#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/gemm/device/gemm_validate.hpp>
#include <tessel/epilogue/activation.hpp>
#include <tessel/numeric/float8.hpp>
#include <tessel/reference/gemm_check.hpp>
#include <tessel/reference/numeric.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace tessel::reference {

// Offset of element (row, col) of a logical rows x cols matrix stored in `order` with `ld`.
constexpr std::int64_t element_offset(MatrixOrder order, std::int64_t row, std::int64_t col, std::int64_t ld) {
  return order == MatrixOrder::row_major ? row * ld + col : col * ld + row;
}

// One stored element as a double, exactly (tf32 operands are read as the fp32 they are stored as).
inline double load_element_host(void const* base, DType t, std::int64_t offset) {
  switch (t) {
    case DType::f16: {
      std::uint16_t h;
      std::memcpy(&h, static_cast<char const*>(base) + 2 * offset, 2);
      return f16_to_float(h);
    }
    case DType::bf16: {
      std::uint16_t h;
      std::memcpy(&h, static_cast<char const*>(base) + 2 * offset, 2);
      return bf16_to_float(h);
    }
    case DType::e4m3: return double(float_e4m3_t::bitcast(static_cast<std::uint8_t const*>(base)[offset]));
    case DType::e5m2: return double(float_e5m2_t::bitcast(static_cast<std::uint8_t const*>(base)[offset]));
    default: {
      float f;
      std::memcpy(&f, static_cast<char const*>(base) + 4 * offset, 4);
      return f;
    }
  }
}

// alpha * a_scale * b_scale in fp64 (the factor on sum_k A B).
TESSEL_HOST_DEVICE inline double product_scale(GemmArguments const& g) {
  return double(g.alpha) * double(g.a_scale) * double(g.b_scale);
}

// The index into the bias vector of element (i, j) of D (bias_mode row: i, col: j), or -1 without one.
TESSEL_HOST_DEVICE inline std::int64_t bias_index(GemmArguments const& g, std::int64_t i, std::int64_t j) {
  return g.bias_mode == BiasMode::row ? i : g.bias_mode == BiasMode::col ? j : -1;
}

// The fused epilogue on one element of R, in fp64: r = act(r + bias) (bias: bias(i,j), 0 without
// one), and its error scale s = slope(act) * (s + |bias|): an error e in the sum moves act by at
// most slope * e (activation_slope), and |act(z)| <= |z| bounds the output's rounding by the same.
TESSEL_HOST_DEVICE inline void apply_fusion(GemmArguments const& g, double bias, double* r, double* s) {
  *r = activate(g.activation, *r + bias);
  *s = activation_slope(g.activation) * (*s + (bias < 0.0 ? -bias : bias));
}

struct HostReference {
  std::vector<double> r, scale;  // (batch, M, N) packed
};

// Pre: gemm_validate(g) passed and the pointers are host pointers.
inline HostReference gemm_host(GemmArguments const& g) {
  HostReference out;
  std::size_t const total = static_cast<std::size_t>(g.batch_count * g.m * g.n);
  out.r.assign(total, 0.0);
  out.scale.assign(total, 0.0);
  bool const ab = gemm_reads_ab(g), c = gemm_reads_c(g);
  for (std::int64_t b = 0; b < g.batch_count; ++b)
    for (std::int64_t i = 0; i < g.m; ++i)
      for (std::int64_t j = 0; j < g.n; ++j) {
        double sum = 0.0, abs_sum = 0.0;
        if (ab) {
          for (std::int64_t k = 0; k < g.k; ++k) {
            double const x = load_element_host(g.a, g.a_type, b * g.batch_stride_a + element_offset(g.a_order, i, k, g.lda));
            double const y = load_element_host(g.b, g.b_type, b * g.batch_stride_b + element_offset(g.b_order, k, j, g.ldb));
            sum += x * y;
            abs_sum += std::fabs(x * y);
          }
        }
        double const alpha = product_scale(g);
        double r = ab ? alpha * sum : 0.0, s = ab ? std::fabs(alpha) * abs_sum : 0.0;
        if (c) {
          double const cv = double(g.beta) * load_element_host(g.c, g.c_type, b * g.batch_stride_c +
                                                                                  element_offset(g.c_order, i, j, g.ldc));
          r += cv;
          s += std::fabs(cv);
        }
        if (gemm_is_fused(g)) {
          std::int64_t const bi = bias_index(g, i, j);
          apply_fusion(g, bi >= 0 ? load_element_host(g.bias, g.c_type, bi) : 0.0, &r, &s);
        }
        std::size_t const idx = static_cast<std::size_t>((b * g.m + i) * g.n + j);
        out.r[idx] = r;
        out.scale[idx] = s;
      }
  return out;
}

// Judge a host copy of D (g.d points at it) against the host reference.
inline GemmCheck check_host(GemmArguments const& g, HostReference const& ref, double tolerance) {
  GemmCheck c;
  c.tolerance = tolerance;
  double diff2 = 0.0, ref2 = 0.0;
  for (std::int64_t b = 0; b < g.batch_count; ++b)
    for (std::int64_t i = 0; i < g.m; ++i)
      for (std::int64_t j = 0; j < g.n; ++j) {
        std::size_t const idx = static_cast<std::size_t>((b * g.m + i) * g.n + j);
        double const d = load_element_host(g.d, g.c_type, b * g.batch_stride_d + element_offset(g.c_order, i, j, g.ldd));
        double const e = element_error(d, ref.r[idx], ref.scale[idx]);
        if (e > c.max_rel_err || e != e) c.max_rel_err = e;
        if (std::isfinite(d) && std::isfinite(ref.r[idx])) {
          diff2 += (d - ref.r[idx]) * (d - ref.r[idx]);
          ref2 += ref.r[idx] * ref.r[idx];
        }
        if (!(e <= tolerance)) {
          if (c.bad++ == 0) {
            c.first_bad_batch = b, c.first_bad_row = i, c.first_bad_col = j;
            c.first_bad_value = d, c.first_bad_expected = ref.r[idx];
          }
        }
      }
  c.norm_rel_err = ref2 > 0.0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  return c;
}

}  // namespace tessel::reference
