// tessel/conv/conv_as_gemm.hpp -- a 1x1 convolution that is one plain GEMM, as the GEMM host API's
// arguments (tessel/gemm/device/gemm_arguments.hpp); and, at a stride, one batched GEMM on the grid
// of x pixels the filter reaches (conv_strided_as_grid_gemm, conv_strided_wgrad_as_gemm_slices).
//
// A filter of one tap (t = r = s = 1) at stride 1 without padding (any dilation: one tap is never
// dilated), groups == 1, reads input pixel (n, z, p, q) for output pixel (n, z, p, q). When every
// pixel row of x sits at one step from the last (pixel number i of the row-major (n, d, h, w)
// order at element offset i * step: x's w stride is the step, its h stride w times it, ...) and
// likewise for y, the tensors are row-major matrices of n*d*h*w rows, their leading dimensions the
// steps, and the filters a k x c row-major matrix of leading dimension filter.stride_k:
//
//   fprop  Y [NPQ, K] = X [NPQ, C] * W [K, C]^T     A = x row-major, B = w^T (column-major), D = y
//   dgrad  dX[NHW, C] = dY[NHW, K] * W [K, C]       A = dy row-major, B = w row-major,       D = dx
//   wgrad  dW[K, C]   = dY[NPQ, K]^T * X[NPQ, C]    A = dy^T (column-major), B = x row-major, D = dw
//
// alpha, beta and the residual are the GEMM's alpha, beta and C (the residual has out's strides,
// so C's leading dimension is D's). The GEMM has no bias or activation: a call with either is not
// a plain GEMM here (the convolution kernels fuse them).
//   e.g. fprop, x [2][1][4][4][64] packed, w [32][1][1][1][64], y packed: m = 32, n = 32, k = 64,
//        a = x (row-major, lda 64), b = w (column-major, ldb 64), d = y (row-major, ldd 32).
// Plain C++: no CUDA headers needed.
#pragma once

#include <tessel/conv/conv_arguments.hpp>
#include <tessel/gemm/device/gemm_arguments.hpp>

#include <cstdint>

namespace tessel {

// Whether the pixels of a tensor of extents (n, d, h, w) and strides st follow one step: pixel i
// of the row-major order at element offset i * step, with step >= channels (no two rows overlap).
// A dimension of extent 1 takes any stride. *step: that step; a single pixel's is `channels` (at
// least 1), the least leading dimension a GEMM accepts.
//   e.g. extents (2, 1, 3, 4), strides (96, 7, 32, 8), 8 channels: step 8 (32 = 4*8, 96 = 3*4*8).
inline bool conv_rows_evenly_strided(std::int64_t const (&extent)[4], std::int64_t const (&stride)[4],
                                     std::int64_t channels, std::int64_t* step) {
  std::int64_t const least = channels > 1 ? channels : 1;
  std::int64_t s = 0, pixels = 1;  // pixels: the rows one index of dimension i spans
  for (int i = 3; i >= 0; --i) {
    if (extent[i] > 1) {
      if (s == 0) s = stride[i];  // the innermost dimension with extent > 1 sets the step
      if (stride[i] != s * pixels) return false;
    }
    pixels *= extent[i];
  }
  *step = s == 0 ? least : s;
  return *step >= least;
}

namespace detail {

// The rules every GEMM form below shares: one tap, groups 1, no padding, no bias or activation
// (the convolution kernels fuse those), 16-bit elements.
inline bool conv_one_tap_plain(ConvArguments const& a) {
  return a.t == 1 && a.r == 1 && a.s == 1 && a.groups == 1 && a.pad_d == 0 && a.pad_h == 0 && a.pad_w == 0 &&
         a.bias == nullptr && a.activation == ConvActivation::none && (a.dtype == DType::bf16 || a.dtype == DType::f16);
}

// The GEMM arguments every form fills alike: a's dtype in and out, alpha, beta and C (the residual,
// read where beta != 0; conv_validate: beta != 0 has one), D = out, row-major, a's workspace.
inline GemmArguments conv_gemm_common(ConvArguments const& a) {
  GemmArguments r;
  r.a_type = r.b_type = r.c_type = a.dtype;
  r.alpha = a.alpha;
  r.beta = a.residual != nullptr ? a.beta : 0.0f;
  r.c = r.beta != 0.0f ? a.residual : nullptr;
  r.d = a.out;
  r.c_order = MatrixOrder::row_major;
  r.batch_stride_a = r.batch_stride_b = r.batch_stride_c = r.batch_stride_d = 0;
  r.workspace = a.workspace;
  r.workspace_bytes = a.workspace_bytes;
  return r;
}

// The filters' leading dimension as a k x c matrix: filter.stride_k, at least c (and 1).
inline std::int64_t conv_filter_ld(ConvArguments const& a) {
  return a.filter.stride_k > a.c ? a.filter.stride_k : (a.c > 1 ? a.c : 1);
}

// A strided 1x1 problem's pixels as a batched matrix (conv_strided_as_grid_gemm): M runs over
// the rows (n, z, p) of y and of x's grid, one batch per column q -- or, where a row holds more
// pixels than there are rows, M over a row's pixels and one batch per row -- with each tensor's
// step along M (ld) and between batches (batch_stride; 0 for one batch).
struct ConvGrid {
  std::int64_t m = 0, batch = 0;
  std::int64_t y_ld = 0, y_batch_stride = 0;  // y (dy): k channels a pixel
  std::int64_t x_ld = 0, x_batch_stride = 0;  // x's grid (dx's): c channels a pixel
};

// Whether a is a 1x1, unpadded, strided problem (conv_one_tap_plain, a stride above 1) whose rows
// (n, z, p) follow one step in y and on x's grid (conv_rows_evenly_strided: true for packed
// tensors whose h is sh times p), with no two pixels' channels overlapping; its grid in *grid.
inline bool conv_strided_grid(ConvArguments const& a, ConvGrid* grid) {
  if (!conv_one_tap_plain(a) || (a.stride_d == 1 && a.stride_h == 1 && a.stride_w == 1)) return false;
  ConvOutputExtents const e = conv_output_extents(a);
  std::int64_t const rows[4] = {a.n, e.z, e.p, 1};
  std::int64_t const y_rows[4] = {a.y.stride_n, a.y.stride_d, a.y.stride_h, 0};
  std::int64_t const x_rows[4] = {a.x.stride_n, a.stride_d * a.x.stride_d, a.stride_h * a.x.stride_h, 0};
  std::int64_t y_row = 0, x_row = 0;
  if (!conv_rows_evenly_strided(rows, y_rows, 1, &y_row) || !conv_rows_evenly_strided(rows, x_rows, 1, &x_row))
    return false;
  std::int64_t const row_count = a.n * e.z * e.p;
  // One pixel's step along a row and from row to row; a single pixel or row takes its channels'
  // count (any step >= it addresses the one there is).
  std::int64_t const y_pixel = e.q > 1 ? a.y.stride_w : a.k, x_pixel = e.q > 1 ? a.stride_w * a.x.stride_w : a.c;
  if (row_count == 1) y_row = a.k, x_row = a.c;
  if (y_pixel < a.k || x_pixel < a.c || y_row < a.k || x_row < a.c) return false;
  bool const rows_as_m = row_count >= e.q;
  grid->m = rows_as_m ? row_count : e.q;
  grid->batch = rows_as_m ? e.q : row_count;
  bool const batched = grid->batch > 1;
  grid->y_ld = rows_as_m ? y_row : y_pixel, grid->y_batch_stride = batched ? (rows_as_m ? y_pixel : y_row) : 0;
  grid->x_ld = rows_as_m ? x_row : x_pixel, grid->x_batch_stride = batched ? (rows_as_m ? x_pixel : x_row) : 0;
  return true;
}

}  // namespace detail

// Whether a (validated: conv_validate) is one plain GEMM (file comment), and if so its arguments
// in *g: dtype in and out as a's, fp32 accumulation, the library's kernel choice, a's workspace.
inline bool conv_as_gemm(ConvArguments const& a, GemmArguments* g) {
  if (!detail::conv_one_tap_plain(a) || a.stride_d != 1 || a.stride_h != 1 || a.stride_w != 1) return false;
  std::int64_t const extent[4] = {a.n, a.d, a.h, a.w};  // = (n, z, p, q): one tap, stride 1, no padding
  std::int64_t const xs[4] = {a.x.stride_n, a.x.stride_d, a.x.stride_h, a.x.stride_w};
  std::int64_t const ys[4] = {a.y.stride_n, a.y.stride_d, a.y.stride_h, a.y.stride_w};
  std::int64_t x_step = 0, y_step = 0;
  if (!conv_rows_evenly_strided(extent, xs, a.c, &x_step) || !conv_rows_evenly_strided(extent, ys, a.k, &y_step))
    return false;
  std::int64_t const pixels = a.n * a.d * a.h * a.w;
  std::int64_t const w_ld = detail::conv_filter_ld(a);

  GemmArguments r = detail::conv_gemm_common(a);
  switch (a.op) {
    case conv::Operator::kFprop:
      r.m = pixels, r.n = a.k, r.k = a.c;
      r.a = a.x.ptr, r.lda = x_step, r.a_order = MatrixOrder::row_major;
      r.b = a.filter.ptr, r.ldb = w_ld, r.b_order = MatrixOrder::col_major;
      r.ldc = r.ldd = y_step;
      break;
    case conv::Operator::kDgrad:
      r.m = pixels, r.n = a.c, r.k = a.k;
      r.a = a.y.ptr, r.lda = y_step, r.a_order = MatrixOrder::row_major;
      r.b = a.filter.ptr, r.ldb = w_ld, r.b_order = MatrixOrder::row_major;
      r.ldc = r.ldd = x_step;
      break;
    case conv::Operator::kWgrad:
      r.m = a.k, r.n = a.c, r.k = pixels;
      r.a = a.y.ptr, r.lda = y_step, r.a_order = MatrixOrder::col_major;
      r.b = a.x.ptr, r.ldb = x_step, r.b_order = MatrixOrder::row_major;
      r.ldc = r.ldd = w_ld;
      break;
  }
  *g = r;
  return true;
}

// Whether a (validated) is a 1x1 fprop or dgrad at a stride that is one batched GEMM on the grid
// of x (dx) pixels the filter reaches, and if so its arguments in *g. Without padding, y pixel
// (n, z, p, q) reads x pixel (n, z*sd, p*sh, q*sw) alone, so
//
//   fprop  Y[q][rows (n, z, p), K]       = X_grid[q][rows (n, z, p), C] * W^T[C, K]
//   dgrad  dX_grid[q][rows (n, z, p), C] = dY[q][rows (n, z, p), K] * W[K, C]
//
// where the rows (n, z, p) of y and of the grid follow one step each (conv_rows_evenly_strided:
// true for packed tensors whose h is sh times p, as ResNet's 56 -> 28 -> 14 -> 7 downsampling
// shortcuts are): the GEMM's M is the rows, at y's h step and x's h step times sh, and one batch
// per column q of the grid, at y's w step and x's w step times sw. Where a row holds more pixels
// than there are rows (q > n*z*p) the roles swap: M is a row's q pixels, one batch per row. The
// longer side as M keeps the GEMM's tiles full (one batch per row of 14 pixels ran 128-row tiles
// 11% full). A dgrad's pixels off the grid get no product: the caller writes them first (beta *
// residual, or zeros: the epilogue alone), then the GEMM writes the grid; so its residual may not
// be out itself (the first pass would scale it twice). Strides of 1 are conv_as_gemm's; bias,
// activation, groups and padding stay on the kernels.
//   e.g. dgrad dy [8][28][28][1024], w [1024][1][1][512], dx [8][56][56][512] packed, stride 2:
//        m = 8*28, n = 512, k = 1024, batch 28; lda 28*1024, batch_stride_a 1024; ldd 2*56*512,
//        batch_stride_d 2*512; b = w row-major (ldb 512), the same for every batch.
inline bool conv_strided_as_grid_gemm(ConvArguments const& a, GemmArguments* g) {
  bool const dgrad = a.op == conv::Operator::kDgrad;
  if (!dgrad && a.op != conv::Operator::kFprop) return false;
  GemmArguments r = detail::conv_gemm_common(a);
  if (dgrad && r.c != nullptr && r.c == a.out) return false;
  detail::ConvGrid grid;
  if (!detail::conv_strided_grid(a, &grid)) return false;
  r.m = grid.m, r.batch_count = grid.batch;
  r.n = dgrad ? a.c : a.k, r.k = dgrad ? a.k : a.c;
  r.a = dgrad ? a.y.ptr : a.x.ptr, r.a_order = MatrixOrder::row_major;
  r.lda = dgrad ? grid.y_ld : grid.x_ld;
  r.batch_stride_a = dgrad ? grid.y_batch_stride : grid.x_batch_stride;
  r.b = a.filter.ptr, r.ldb = detail::conv_filter_ld(a), r.b_order = dgrad ? MatrixOrder::row_major : MatrixOrder::col_major;
  r.ldd = dgrad ? grid.x_ld : grid.y_ld;
  r.batch_stride_d = dgrad ? grid.x_batch_stride : grid.y_batch_stride;
  r.ldc = r.ldd, r.batch_stride_c = r.batch_stride_d;
  *g = r;
  return true;
}

// The most K slices conv_strided_wgrad_as_gemm_slices makes (its fp32 partials take slices * k * c
// * 4 bytes of workspace; ResNet's downsampling shortcuts have 7, 14 and 28).
inline constexpr std::int64_t kConvWgradMaxSlices = 32;
// The fewest pixels a slice sums: the slices' fp32 traffic (8 bytes per k x c element and slice,
// written and read) costs the GEMM's time times ~870 / pixels on an H200 (1792 pixels a slice: 1x1
// stride 2 C512->1024 at 28x28, batch 128, 0.61x -> 0.89x cuDNN; 896: C1024->2048 at 14x14, 0.52x).
inline constexpr std::int64_t kConvWgradMinSlicePixels = 1024;

// Whether a (validated) is a 1x1 wgrad at a stride whose sum over pixels is one batched GEMM
// per column q of the grid (per row where rows are fewer than a row's pixels: conv_strided_grid),
//
//   partial[q][K, C] = dY[q]^T[K, rows (n, z, p)] * X_grid[q][rows (n, z, p), C]
//
// each batch a K slice of the sum, summed by the caller (dw = alpha * sum_q partial[q] + beta *
// residual, in slice order: the same bits every run); its arguments in *g: fp32 D, packed (ldd
// c, batch_stride_d k*c), alpha 1, beta 0 and d null (the caller's workspace: *g validates once
// d points at it). At most kConvWgradMaxSlices slices, and at least kConvWgradMinSlicePixels
// pixels in each.
//   e.g. dy [64][28][28][1024], x [64][56][56][512] packed, stride 2: m = 1024, n = 512, k = 64*28,
//        batch 28; a = dy^T column-major (lda 28*1024, batch_stride_a 1024); b = x's grid
//        row-major (ldb 2*56*512, batch_stride_b 2*512).
inline bool conv_strided_wgrad_as_gemm_slices(ConvArguments const& a, GemmArguments* g) {
  detail::ConvGrid grid;
  if (a.op != conv::Operator::kWgrad || !detail::conv_strided_grid(a, &grid)) return false;
  if (grid.batch > kConvWgradMaxSlices || grid.m < kConvWgradMinSlicePixels) return false;
  GemmArguments r = detail::conv_gemm_common(a);
  r.c_type = DType::f32;
  r.alpha = 1.0f, r.beta = 0.0f, r.c = nullptr, r.d = nullptr;
  r.m = a.k, r.n = a.c, r.k = grid.m, r.batch_count = grid.batch;
  r.a = a.y.ptr, r.a_order = MatrixOrder::col_major, r.lda = grid.y_ld, r.batch_stride_a = grid.y_batch_stride;
  r.b = a.x.ptr, r.b_order = MatrixOrder::row_major, r.ldb = grid.x_ld, r.batch_stride_b = grid.x_batch_stride;
  r.ldd = r.ldc = a.c, r.batch_stride_d = r.batch_stride_c = a.k * a.c;
  *g = r;
  return true;
}

}  // namespace tessel
