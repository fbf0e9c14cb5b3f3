// tessel/gemm/device/gemm_validate.hpp -- the argument rules of the GEMM host API.
//
// cuBLAS's rules, with reasons: any M, N, K >= 0 and any leading dimension >= the minimum is
// accepted, alignment never rejects (a slower kernel runs), size 0 is a no-op and K = 0 (or
// alpha = 0) gives D = beta * C without reading A or B. Rejected, each with a reason that starts
// with the argument's name and states the rule:
//   negative m, n, k, batch_count or batch stride; a leading dimension below max(1, inner extent);
//   a null pointer for an operand that is read (A, B when M, N, K > 0 and alpha != 0; C when
//   beta != 0) or written (D when M, N > 0); an unsupported dtype mix (gemm_arguments.hpp);
//   a_scale or b_scale other than 1 on a non-fp8 operand; batch_stride_d = 0 with several
//   batches (they would all write one D); offsets that overflow 64 bits; a fused epilogue's
//   activation or bias_mode that is not an enumerator, a bias without a bias_mode (or a bias_mode
//   without a bias, unless nothing is computed), a bias not aligned to its element (D's dtype);
//   block scaling (scale_mode block) on non-fp8 operands, without its scale tensors where A and B
//   are read, with leading dimensions below their minimum or scales not 4-byte aligned, and scale
//   tensors given with per_tensor scaling.
// Plain C++ and no CUDA calls, so a bad call is refused on any machine, GPU or not.
#pragma once

#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/core/status.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

namespace tessel {

namespace detail {

inline std::string gemm_num(std::int64_t v) { return std::to_string(v); }
inline std::string gemm_num(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", double(v));
  return buf;
}

// Largest element offset touched by a batched matrix, or -1 on 64-bit overflow.
inline std::int64_t gemm_last_offset(std::int64_t batch, std::int64_t bstride, std::int64_t rows, std::int64_t cols,
                                     std::int64_t ld) {
  if (batch == 0 || rows == 0 || cols == 0) return 0;
  std::int64_t a = 0, b = 0, r = 0;
  if (__builtin_mul_overflow(batch - 1, bstride, &a)) return -1;
  if (__builtin_mul_overflow(rows - 1, ld, &b)) return -1;
  if (__builtin_add_overflow(a, b, &r)) return -1;
  if (__builtin_add_overflow(r, cols - 1, &r)) return -1;
  return r;
}

inline Status gemm_invalid(std::string why) { return Status::error(StatusCode::invalid_argument, std::move(why)); }

}  // namespace detail

// True when the call has nothing to compute or write (M, N or batch_count is 0).
constexpr bool gemm_is_noop(GemmArguments const& g) { return g.m == 0 || g.n == 0 || g.batch_count == 0; }

// True when A and B are read: M, N, K > 0 and alpha != 0 (NaN alpha counts as non-zero).
constexpr bool gemm_reads_ab(GemmArguments const& g) { return !gemm_is_noop(g) && g.k > 0 && !(g.alpha == 0.0f); }

// True when C is read: beta != 0 (cuBLAS: with beta == 0, C is not read, so NaN in C is ignored).
constexpr bool gemm_reads_c(GemmArguments const& g) { return !gemm_is_noop(g) && !(g.beta == 0.0f); }

// Is this dtype combination one the API supports? When not, `why` says which argument is wrong.
inline Status gemm_check_dtypes(GemmArguments const& g) {
  using detail::gemm_invalid;
  if (is_fp8(g.c_type))
    return gemm_invalid(std::string("c_type: ") + to_string(g.c_type) +
                        " is an input type here; C and D take fp32, fp16 or bf16");
  bool const a8 = is_fp8(g.a_type), b8 = is_fp8(g.b_type);
  if (a8 || b8) {  // cuBLASLt's fp8 rules: e4m3 x e4m3, e4m3 x e5m2, e5m2 x e4m3
    if (!a8 || !b8) {
      DType const other = a8 ? g.b_type : g.a_type;
      return gemm_invalid(std::string(a8 ? "b_type: " : "a_type: ") + to_string(other) + " with fp8 " +
                          (a8 ? "a_type " : "b_type ") + to_string(a8 ? g.a_type : g.b_type) +
                          "; an fp8 operand pairs only with another fp8 (e4m3 or e5m2) operand");
    }
    if (g.a_type == DType::e5m2 && g.b_type == DType::e5m2)
      return gemm_invalid("b_type: e5m2 with a_type e5m2 is not supported (as in cuBLASLt); make A or B e4m3");
    if (g.c_type == DType::tf32)
      return gemm_invalid("c_type: tf32 is an input mode, not a storage type; fp8 inputs write fp32, fp16 or bf16");
    return Status::success();
  }
  if (g.a_type != g.b_type)
    return gemm_invalid(std::string("b_type: ") + to_string(g.b_type) + " differs from a_type " + to_string(g.a_type) +
                        "; A and B must have the same dtype");
  if (g.c_type == DType::tf32)
    return gemm_invalid("c_type: tf32 is an input mode, not a storage type; C and D take fp32, fp16 or bf16");
  bool const narrow_in = g.a_type == DType::f16 || g.a_type == DType::bf16;
  if (!narrow_in && g.c_type != DType::f32)
    return gemm_invalid(std::string("c_type: ") + to_string(g.c_type) + " output needs " + to_string(g.c_type) +
                        " inputs, but a_type is " + to_string(g.a_type) + "; fp32 and tf32 inputs write fp32");
  if (narrow_in && g.c_type != DType::f32 && g.c_type != g.a_type)
    return gemm_invalid(std::string("c_type: ") + to_string(g.c_type) + " output with " + to_string(g.a_type) +
                        " inputs is not supported; " + to_string(g.a_type) + " inputs write " + to_string(g.a_type) +
                        " or fp32");
  return Status::success();
}

// Every argument rule of the GEMM host API (see the file comment). No CUDA calls.
// GemmOptions' ranges (gemm_arguments.hpp): every field's value is one the host can apply.
inline Status gemm_check_options(GemmOptions const& o) {
  using detail::gemm_invalid;
  using detail::gemm_num;
  struct Range { char const* name; int v, lo, hi; };
  for (Range r : {Range{"splits", o.splits, 0, 1 << 20}, Range{"operand_align", o.operand_align, 0, 32},
                  Range{"raster_group", o.raster_group, 0, 8}, Range{"l2_promotion", o.l2_promotion, -1, 3},
                  Range{"skinny_in_flight", o.skinny_in_flight, -1, 1 << 20},
                  Range{"skinny_l2_hint_a", o.skinny_l2_hint_a, -1, 2}, Range{"skinny_l2_hint_b", o.skinny_l2_hint_b, -1, 2}})
    if (r.v < r.lo || r.v > r.hi)
      return gemm_invalid(std::string("options.") + r.name + ": " + gemm_num(std::int64_t(r.v)) + " is outside " +
                          gemm_num(std::int64_t(r.lo)) + ".." + gemm_num(std::int64_t(r.hi)));
  if (o.operand_align != 0 && o.operand_align != 16 && o.operand_align != 32)
    return gemm_invalid("options.operand_align: " + gemm_num(std::int64_t(o.operand_align)) +
                        " is not 0 (the heuristic's), 16 or 32 bytes");
  if (o.raster_along != 0 && o.raster_along != 'm' && o.raster_along != 'n')
    return gemm_invalid(std::string("options.raster_along: '") + o.raster_along + "' is not 'm', 'n' or 0 (the heuristic's)");
  if ((o.skinny_l2_hint_a < 0) != (o.skinny_l2_hint_b < 0))
    return gemm_invalid("options.skinny_l2_hint_a/b: set both (0 none, 1 evict-first, 2 evict-last) or neither");
  return Status::success();
}

// The fused epilogue's rules (gemm_arguments.hpp): known enumerators, a bias exactly where
// bias_mode asks for one (a no-op call reads none), aligned to its element of D's dtype.
inline Status gemm_check_fusion(GemmArguments const& g) {
  using detail::gemm_invalid;
  using detail::gemm_num;
  if (!is_activation(g.activation))
    return gemm_invalid("activation: " + gemm_num(std::int64_t(g.activation)) +
                        " is not one of none, relu, gelu, gelu_tanh, silu");
  if (g.bias_mode != BiasMode::none && g.bias_mode != BiasMode::row && g.bias_mode != BiasMode::col)
    return gemm_invalid("bias_mode: " + gemm_num(std::int64_t(g.bias_mode)) + " is not one of none, row, col");
  if (g.bias_mode == BiasMode::none && g.bias != nullptr)
    return gemm_invalid("bias_mode: none, but bias is set; say which index of D it follows: row (M values, bias[i] "
                        "joins row i) or col (N values)");
  if (g.bias_mode != BiasMode::none && g.bias == nullptr && !gemm_is_noop(g))
    return gemm_invalid(std::string("bias: null, but bias_mode is ") + to_string(g.bias_mode) + " (" +
                        (g.bias_mode == BiasMode::row ? "M = " + gemm_num(g.m) : "N = " + gemm_num(g.n)) +
                        " values of D's dtype are read)");
  if (g.bias != nullptr && reinterpret_cast<std::uintptr_t>(g.bias) % size_of(g.c_type) != 0)
    return gemm_invalid(std::string("bias: not aligned to its ") + gemm_num(std::int64_t(size_of(g.c_type))) + "-byte " +
                        to_string(g.c_type) + " elements (the bias has D's dtype, c_type)");
  return Status::success();
}

// Block scaling's rules (gemm_arguments.hpp): a known mode; fp8 operands; both scale tensors
// where A and B are read (none with per_tensor), fp32-aligned, with leading dimensions of at
// least M (a_scales, M-major) and ceil(K / 128) (b_scales, K-major). Any M, N, K: the last K
// block may be partial, and so may the last 128-column block of B.
inline Status gemm_check_scales(GemmArguments const& g) {
  using detail::gemm_invalid;
  using detail::gemm_num;
  if (g.scale_mode != ScaleMode::per_tensor && g.scale_mode != ScaleMode::block)
    return gemm_invalid("scale_mode: " + gemm_num(std::int64_t(g.scale_mode)) + " is not one of per_tensor, block");
  if (g.scale_mode == ScaleMode::per_tensor) {
    if (g.a_scales != nullptr || g.b_scales != nullptr)
      return gemm_invalid(std::string(g.a_scales != nullptr ? "a_scales" : "b_scales") +
                          ": set, but scale_mode is per_tensor; per-block scales need scale_mode block");
    return Status::success();
  }
  if (!is_fp8(g.a_type) || !is_fp8(g.b_type))
    return gemm_invalid(std::string("scale_mode: block scales fp8 operands only, and ") +
                        (is_fp8(g.a_type) ? "b_type is " + std::string(to_string(g.b_type))
                                          : "a_type is " + std::string(to_string(g.a_type))) +
                        "; use per_tensor (fold any factor into alpha)");
  if (g.ld_a_scales < 0 || (g.ld_a_scales > 0 && g.ld_a_scales < g.m))
    return gemm_invalid("ld_a_scales: " + gemm_num(g.ld_a_scales) + " is below M = " + gemm_num(g.m) +
                        " (a_scales is M-major: scale (i, kb) at kb * ld_a_scales + i; 0 means M)");
  std::int64_t const k_blocks = gemm_scale_blocks(g.k);
  if (g.ld_b_scales < 0 || (g.ld_b_scales > 0 && g.ld_b_scales < k_blocks))
    return gemm_invalid("ld_b_scales: " + gemm_num(g.ld_b_scales) + " is below ceil(K / 128) = " + gemm_num(k_blocks) +
                        " (b_scales is K-major: scale (nb, kb) at nb * ld_b_scales + kb; 0 means ceil(K / 128))");
  if (gemm_reads_ab(g)) {
    if (g.a_scales == nullptr)
      return gemm_invalid("a_scales: null, but scale_mode is block and A is read (M x ceil(K / 128) fp32 scales, M-major)");
    if (g.b_scales == nullptr)
      return gemm_invalid(
          "b_scales: null, but scale_mode is block and B is read (ceil(N / 128) x ceil(K / 128) fp32 scales, K-major)");
  }
  for (auto [name, ptr] : {std::pair{"a_scales", g.a_scales}, std::pair{"b_scales", g.b_scales}})
    if (reinterpret_cast<std::uintptr_t>(ptr) % alignof(float) != 0)
      return gemm_invalid(std::string(name) + ": not aligned to its 4-byte fp32 elements");
  std::int64_t last = 0;
  if (__builtin_mul_overflow(std::max<std::int64_t>(g.batch_count, 1), std::max<std::int64_t>(k_blocks, 1), &last) ||
      __builtin_mul_overflow(last, std::max<std::int64_t>(gemm_ld_a_scales(g), 1), &last) ||
      __builtin_mul_overflow(std::max<std::int64_t>(g.batch_count, 1) * std::max<std::int64_t>(gemm_scale_blocks(g.n), 1),
                             std::max<std::int64_t>(gemm_ld_b_scales(g), 1), &last))
    return gemm_invalid("ld_a_scales/ld_b_scales: the offset of the last scale overflows 64 bits");
  return Status::success();
}

inline Status gemm_validate(GemmArguments const& g) {
  using detail::gemm_invalid;
  using detail::gemm_num;
  struct Size { char const* name; std::int64_t v; };
  for (Size s : {Size{"m", g.m}, Size{"n", g.n}, Size{"k", g.k}, Size{"batch_count", g.batch_count}})
    if (s.v < 0) return gemm_invalid(std::string(s.name) + ": " + gemm_num(s.v) + " is negative; sizes must be >= 0");

  if (Status s = gemm_check_dtypes(g); !s) return s;
  struct Scale { char const* name; float v; DType t; };
  for (Scale s : {Scale{"a_scale", g.a_scale, g.a_type}, Scale{"b_scale", g.b_scale, g.b_type}})
    if (!(s.v == 1.0f) && !is_fp8(s.t))
      return gemm_invalid(std::string(s.name) + ": " + gemm_num(s.v) + " scales fp8 operands only, and this one is " +
                          to_string(s.t) + "; leave it 1 and fold the factor into alpha");

  struct Operand {
    char const* name;  // "A"
    char const* ld_name;
    char const* stride_name;
    char const* rows_name;  // of op(X): "M"
    char const* cols_name;  // "K"
    std::int64_t rows, cols, ld, stride;
    MatrixOrder order;
  };
  Operand const ops[] = {
      {"A", "lda", "batch_stride_a", "M", "K", g.m, g.k, g.lda, g.batch_stride_a, g.a_order},
      {"B", "ldb", "batch_stride_b", "K", "N", g.k, g.n, g.ldb, g.batch_stride_b, g.b_order},
      {"C", "ldc", "batch_stride_c", "M", "N", g.m, g.n, g.ldc, g.batch_stride_c, g.c_order},
      {"D", "ldd", "batch_stride_d", "M", "N", g.m, g.n, g.ldd, g.batch_stride_d, g.c_order},
  };
  for (Operand const& o : ops) {
    std::int64_t const need = min_leading_dim(o.rows, o.cols, o.order);
    if (o.ld < need) {
      bool const row = o.order == MatrixOrder::row_major;
      return gemm_invalid(std::string(o.ld_name) + ": " + gemm_num(o.ld) + " is below the minimum " + gemm_num(need) +
                          " (op(" + o.name + ") is " + gemm_num(o.rows) + " x " + gemm_num(o.cols) + " " +
                          to_string(o.order) + ", so " + o.ld_name + " >= max(1, " +
                          (row ? o.cols_name : o.rows_name) + "))");
    }
    if (o.stride < 0)
      return gemm_invalid(std::string(o.stride_name) + ": " + gemm_num(o.stride) + " is negative; batch strides must be >= 0");
    StoredExtent const e = stored_extent(o.rows, o.cols, o.order);
    if (detail::gemm_last_offset(g.batch_count, o.stride, e.rows, e.cols, o.ld) < 0)
      return gemm_invalid(std::string(o.ld_name) + "/" + o.stride_name + ": the offset of " + o.name +
                          "'s last element overflows 64 bits");
  }
  if (!gemm_is_noop(g) && g.batch_count > 1 && g.batch_stride_d == 0)
    return gemm_invalid("batch_stride_d: 0 with batch_count " + gemm_num(g.batch_count) +
                        " makes every batch write the same D; give each batch its own output");

  if (Status s = gemm_check_options(g.options); !s) return s;
  if (g.workspace != nullptr && reinterpret_cast<std::uintptr_t>(g.workspace) % 256 != 0)
    return gemm_invalid("workspace: the caller's scratch must be 256-byte aligned (cudaMalloc's is)");

  if (gemm_reads_ab(g)) {
    if (g.a == nullptr) return gemm_invalid("a: null, but A is read (M, N, K > 0 and alpha != 0)");
    if (g.b == nullptr) return gemm_invalid("b: null, but B is read (M, N, K > 0 and alpha != 0)");
  }
  if (gemm_reads_c(g) && g.c == nullptr) return gemm_invalid("c: null, but C is read (beta != 0)");
  if (!gemm_is_noop(g) && g.d == nullptr) return gemm_invalid("d: null, but D is written (M, N, batch_count > 0)");
  if (Status s = gemm_check_scales(g); !s) return s;
  return gemm_check_fusion(g);
}

}  // namespace tessel
