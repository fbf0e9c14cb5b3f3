// tessel/gemm/device/gemm_arguments.hpp -- the problem a host-API GEMM call describes.
//
//   D[b] = alpha * op(A)[b] * op(B)[b] + beta * C[b]      for b in [0, batch_count)
//
// op(A) is M x K, op(B) is K x N, C and D are M x N. Each operand is stored row- or
// column-major with its own leading dimension (the distance between consecutive rows of a
// row-major matrix, or columns of a column-major one) and its own batch stride, in elements.
// BLAS's "transpose" flags are the same thing seen from column-major storage:
//   cuBLAS transa = T   <=>  a_order = row_major   (A stored K x M column-major == M x K row-major)
// C and D share one order (c_order) and one dtype (c_type), with separate pointers, leading
// dimensions and batch strides. Sizes, leading dimensions and strides are 64-bit.
//
// dtypes: A and B have the same dtype: f32, f16, bf16, or tf32 (fp32 storage; the kernel may
// round products' inputs to tf32). C/D: f32, f16 or bf16. f16 and bf16 inputs may write their
// own dtype or f32; f32/tf32 inputs write f32. Accumulation is always fp32.
// fp8 (OCP e4m3, e5m2; tessel/numeric/float8.hpp) as cuBLASLt takes it: A and B each e4m3 or
// e5m2, but not both e5m2; C/D bf16, fp16 or fp32. Only fp8 operands take a per-tensor scale:
//   D = alpha * (a_scale * op(A)) * (b_scale * op(B)) + beta * C
// (a_scale and b_scale must stay 1 for other dtypes; kernels apply them as one factor
// gemm_product_scale() = alpha * a_scale * b_scale on the fp32 accumulators, like cuBLASLt's
// A/B scale pointers). A scale of 0 does not skip reading A and B; only alpha = 0 does.
//
// Fused epilogue (all optional; the defaults compute the plain GEMM above):
//   D[b](i,j) = act(alpha * (op(A)[b] op(B)[b])(i,j) + beta * C[b](i,j) + bias(i,j))
//   bias(i,j) = bias[i] (bias_mode row: one value per row of D, M values)
//             = bias[j] (bias_mode col: one value per column, N values; a Linear layer's bias)
// The bias vector is contiguous, of D's dtype (c_type, as cuBLASLt's epilogue bias and torch's
// addmm take it), shared by every batch, and not scaled by alpha; act is an Activation
// (tessel/epilogue/activation.hpp: none, relu, gelu (erf), gelu_tanh, silu), applied in fp32
// before the one rounding to D's dtype. K = 0 or alpha = 0 gives D = act(beta * C + bias).
// Plain C++: no CUDA headers needed.
#pragma once

#include <tessel/core/dtype.hpp>
#include <tessel/epilogue/activation.hpp>

#include <cstddef>
#include <cstdint>

namespace tessel {

enum class MatrixOrder { row_major, col_major };

constexpr char const* to_string(MatrixOrder o) { return o == MatrixOrder::row_major ? "row-major" : "col-major"; }

// Which index of D a fused epilogue's bias vector follows (GemmArguments::bias_mode).
enum class BiasMode : int { none = 0, row = 1, col = 2 };

// How the fp8 operands are scaled (GemmArguments::scale_mode; the file comment has the math).
enum class ScaleMode : int { per_tensor = 0, block = 1 };

constexpr char const* to_string(ScaleMode s) { return s == ScaleMode::block ? "block" : "per_tensor"; }

// The 128-deep K blocks (and 128-wide N blocks of op(B)) that block scaling works in.
inline constexpr std::int64_t kGemmScaleBlock = 128;
constexpr std::int64_t gemm_scale_blocks(std::int64_t extent) { return (extent + kGemmScaleBlock - 1) / kGemmScaleBlock; }

constexpr char const* to_string(BiasMode b) {
  switch (b) {
    case BiasMode::none: return "none";
    case BiasMode::row: return "row";
    case BiasMode::col: return "col";
  }
  return "?";
}

// Overrides of the host's choices, for same-run A/B measurements and for tests that must reach a
// path the heuristic does not take on their problems. The defaults are the library's own choices
// (each field names the rule it overrides; src/gemm/sm90_gemm.cpp and docs/sm90_gemm.md have the
// measurements behind them). `tessel gemm` maps its tuning flags onto these fields.
struct GemmOptions {
  int splits = 0;             // sm_90a: K slices per tile, 1.. (0: sm90_choose_splits's)
  bool stream_k = false;      // sm_90a: the Stream-K walk where sm90_stream_k_pays (off: measured slower)
  bool split_tail = true;     // sm_90a: the last partial round in K slices where sm90_split_tail_slices says so
  bool balance_waves = true;  // sm_90a: launch only the clusters that finish in the same number of waves
  bool compact_units = true;  // sm_90a: the kernels' 32-bit unit path where the walk fits 32 bits
  bool lean_builds = true;    // sm_90a: a call that is a lean twin's case runs the lean build
  int operand_align = 0;      // sm_90a: the row alignment read in place, 16 or 32 bytes (0: sm90_operand_align's)
  int raster_group = 0;       // sm_90a: the persistent raster's band width, 1..8 (0: 8)
  char raster_along = 0;      // sm_90a: the raster's direction, 'm' or 'n' (0: the heuristic's)
  int l2_promotion = -1;      // sm_90a: operand tensor maps' L2 promotion: 0 none, 1 64 B, 2 128 B, 3 256 B (-1: by GPU)
  int skinny_in_flight = -1;  // sm_90a 16-wide skinny kernels: k-tiles in flight, 0 = no limit (-1: sm90_skinny_in_flight's)
  int skinny_l2_hint_a = -1;  // sm_90a 16-wide skinny kernels: A's loads' L2 priority: 0 none, 1 evict-first,
  int skinny_l2_hint_b = -1;  //   2 evict-last; B's likewise (-1 for both: sm90_skinny_l2_hints's)
  bool tf32_truncate = false; // sm_90a tf32: FLOAT32 tensor maps (wgmma drops the low bits) instead of TFLOAT32 (TMA rounds)
};

struct GemmArguments {
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t batch_count = 1;

  DType a_type = DType::f32, b_type = DType::f32, c_type = DType::f32;  // D has c_type
  MatrixOrder a_order = MatrixOrder::row_major;  // of op(A), M x K
  MatrixOrder b_order = MatrixOrder::row_major;  // of op(B), K x N
  MatrixOrder c_order = MatrixOrder::row_major;  // of C and D, M x N

  void const* a = nullptr; std::int64_t lda = 0; std::int64_t batch_stride_a = 0;
  void const* b = nullptr; std::int64_t ldb = 0; std::int64_t batch_stride_b = 0;
  void const* c = nullptr; std::int64_t ldc = 0; std::int64_t batch_stride_c = 0;
  void*       d = nullptr; std::int64_t ldd = 0; std::int64_t batch_stride_d = 0;

  float alpha = 1.0f, beta = 0.0f;
  float a_scale = 1.0f, b_scale = 1.0f;  // fp8 operands only (see the file comment)
  // Block scaling (fp8 only; file comment): per-block fp32 scales in device memory, null with
  // per_tensor. a_scale and b_scale still multiply the whole product.
  ScaleMode scale_mode = ScaleMode::per_tensor;
  float const* a_scales = nullptr; std::int64_t ld_a_scales = 0;  // (M, ceil(K/128)), M-major; 0: ld M
  float const* b_scales = nullptr; std::int64_t ld_b_scales = 0;  // (ceil(N/128), ceil(K/128)), K-major; 0: ld ceil(K/128)

  // The fused epilogue (file comment): bias (c_type elements, M for row, N for col; null with
  // BiasMode::none) and the activation applied last.
  void const* bias = nullptr;
  BiasMode bias_mode = BiasMode::none;
  Activation activation = Activation::none;

  // A registry name (`tessel list`), or nullptr / "auto" for the heuristic.
  char const* kernel = nullptr;

  GemmOptions options;  // the library's own choices unless set (above)

  // Scratch memory for the calls that stage operands into aligned copies or split K: nullptr
  // takes it from the library's stream-ordered pool; otherwise `workspace_bytes` bytes the caller
  // owns, 256-byte aligned, at least gemm_workspace_size's answer, untouched by other work until
  // the call's stream has passed it (tessel/gemm/device/gemm.hpp).
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
};

// The call adds a bias or applies an activation (the fused epilogue).
constexpr bool gemm_is_fused(GemmArguments const& g) {
  return g.bias_mode != BiasMode::none || g.activation != Activation::none;
}

// The factor the fp32 accumulators are multiplied by: alpha * a_scale * b_scale.
constexpr float gemm_product_scale(GemmArguments const& g) { return g.alpha * g.a_scale * g.b_scale; }

// The leading dimensions of a block-scaled call's scale tensors (0 in GemmArguments: packed).
constexpr std::int64_t gemm_ld_a_scales(GemmArguments const& g) { return g.ld_a_scales > 0 ? g.ld_a_scales : g.m; }
constexpr std::int64_t gemm_ld_b_scales(GemmArguments const& g) {
  return g.ld_b_scales > 0 ? g.ld_b_scales : gemm_scale_blocks(g.k);
}

// Rows and columns of each stored matrix (as stored: a row-major M x K has M rows).
struct StoredExtent {
  std::int64_t rows, cols;
};
constexpr StoredExtent stored_extent(std::int64_t r, std::int64_t c, MatrixOrder o) {
  return o == MatrixOrder::row_major ? StoredExtent{r, c} : StoredExtent{c, r};
}

// The smallest legal leading dimension of an r x c matrix in order o: max(1, elements per row
// of a row-major matrix / per column of a column-major one), as cuBLAS requires.
constexpr std::int64_t min_leading_dim(std::int64_t r, std::int64_t c, MatrixOrder o) {
  std::int64_t const inner = o == MatrixOrder::row_major ? c : r;
  return inner > 1 ? inner : 1;
}

// A fully packed problem: minimal leading dimensions, batches back to back. Pointers unset.
inline GemmArguments make_packed_gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                                      DType ab, DType cd, MatrixOrder ao, MatrixOrder bo, MatrixOrder co) {
  GemmArguments g;
  g.m = m, g.n = n, g.k = k, g.batch_count = batch;
  g.a_type = g.b_type = ab;
  g.c_type = cd;
  g.a_order = ao, g.b_order = bo, g.c_order = co;
  g.lda = min_leading_dim(m, k, ao), g.ldb = min_leading_dim(k, n, bo);
  g.ldc = g.ldd = min_leading_dim(m, n, co);
  g.batch_stride_a = g.lda * (ao == MatrixOrder::row_major ? m : k);
  g.batch_stride_b = g.ldb * (bo == MatrixOrder::row_major ? k : n);
  g.batch_stride_c = g.batch_stride_d = g.ldc * (co == MatrixOrder::row_major ? m : n);
  return g;
}

}  // namespace tessel
