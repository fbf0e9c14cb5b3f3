// src/capi/gemm_problem.cpp -- a C ABI GEMM problem as GemmArguments (gemm_problem.hpp).
#include "gemm_problem.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <tessel/gemm/device/gemm_registry.hpp>
#include <tessel/gemm/device/gemm_validate.hpp>
#include <utility>

namespace tessel::capi {

namespace {

// One matrix operand: a tensor seen as (batch,) rows x cols.
struct Matrix {
  tessel_tensor const* t = nullptr;
  std::string name;
  bool present = false;
  std::int64_t batch = 1, rows = 0, cols = 0;  // batch 1 for a 2-D tensor
  std::int64_t s_batch = 0, s_rows = 0, s_cols = 0;

  bool batched() const { return t->ndim == 3; }
  bool empty() const { return batch == 0 || rows == 0 || cols == 0; }
  std::string shape_text() const { return tuple_text(t->shape, t->ndim); }
  std::string strides_text() const { return tuple_text(t->strides, t->ndim); }
};

Matrix matrix_of(tessel_tensor const& t, char const* field) {
  Matrix m;
  m.t = &t;
  m.name = t.name != nullptr ? t.name : field;
  m.present = t.ndim != 0;
  if (t.ndim == 2 || t.ndim == 3) {
    int const r = t.ndim - 2;
    if (t.ndim == 3) m.batch = t.shape[0], m.s_batch = t.strides[0];
    m.rows = t.shape[r], m.cols = t.shape[r + 1];
    m.s_rows = t.strides[r], m.s_cols = t.strides[r + 1];
  }
  return m;
}

// The orders a matrix can be read in, with the leading dimension of each (tessel/c_api.h).
struct Orders {
  bool row = false, col = false;
  std::int64_t ld_row = 0, ld_col = 0;
  std::string why_not;  // when neither order fits
};

Orders orders_of(Matrix const& m) {
  Orders o;
  std::int64_t const min_row = std::max<std::int64_t>(1, m.cols), min_col = std::max<std::int64_t>(1, m.rows);
  if (m.empty()) {  // no element is addressed: any order, packed
    o.row = o.col = true;
    o.ld_row = min_row, o.ld_col = min_col;
    return o;
  }
  bool const row_shape = m.cols == 1 || m.s_cols == 1;
  bool const col_shape = m.rows == 1 || m.s_rows == 1;
  o.ld_row = m.rows == 1 ? min_row : m.s_rows;
  o.ld_col = m.cols == 1 ? min_col : m.s_cols;
  o.row = row_shape && o.ld_row >= min_row;
  o.col = col_shape && o.ld_col >= min_col;
  if (o.row || o.col) return o;
  std::string const view = " (shape " + m.shape_text() + ", strides " + m.strides_text() + ")";
  if (!row_shape && !col_shape)
    o.why_not = m.name + ": neither of its last two strides is 1" + view +
                "; tessel reads row- or column-major matrices: pass a contiguous array or a transposed view of one";
  else if (row_shape && !o.row)
    o.why_not = m.name + ": its rows overlap: the row stride " + num(m.s_rows) + " is below the row length " +
                num(m.cols) + view + " (a broadcast view?); pass a contiguous copy";
  else if (!o.col)
    o.why_not = m.name + ": its columns overlap: the column stride " + num(m.s_cols) + " is below the column length " +
                num(m.rows) + view + " (a broadcast view?); pass a contiguous copy";
  return o;
}

bool elements_distinct(Matrix const& m) {
  std::int64_t const shape[] = {m.batch, m.rows, m.cols}, strides[] = {m.s_batch, m.s_rows, m.s_cols};
  return capi::elements_distinct(shape, strides, 3);
}

// gemm_check_dtypes names GemmArguments' fields (a_type, b_type, c_type); the C ABI names tensors:
// "b_type: fp16 differs from a_type fp32; ..." -> "b: fp16 differs from a's dtype fp32; ...".
Refusal dtype_refusal(Status const& s, Matrix const& a, Matrix const& b, Matrix const& d) {
  std::string why = s.reason;
  std::pair<char const*, Matrix const*> const fields[] = {{"a_type", &a}, {"b_type", &b}, {"c_type", &d}};
  for (auto [field, who] : fields)
    if (why.rfind(std::string(field) + ": ", 0) == 0) {
      why = who->name + why.substr(std::string(field).size());
      break;
    }
  for (auto [field, who] : fields)
    for (std::size_t at = why.find(field); at != std::string::npos; at = why.find(field, at))
      why.replace(at, std::string(field).size(), who->name + "'s dtype");
  return refuse(TESSEL_STATUS_INVALID_DTYPE, why);
}

// The fused epilogue (tessel/c_api.h): the bias as numpy broadcasts it against D -- [N] or [1, N]
// a column's, [M, 1] a row's -- and the activation, into g (whose D is set).
Refusal fused_epilogue(tessel_gemm_problem const& p, Matrix const& d, GemmArguments* g) {
  if (p.activation < TESSEL_ACTIVATION_NONE || p.activation > TESSEL_ACTIVATION_GELU_ERF)
    return invalid("activation: " + num(p.activation) +
                   " is not a tessel_activation (0 none, 1 relu, 2 gelu: the tanh form, 3 silu, 4 gelu_erf)");
  g->activation = static_cast<Activation>(p.activation);  // the C ABI's values are Activation's
  tessel_tensor const& t = p.bias;
  if (t.ndim == 0) return {};
  std::string const name = t.name != nullptr ? t.name : "bias";
  if (t.ndim < 0 || t.ndim > 2)
    return invalid(name + ": has " + num(t.ndim) + " dimensions; a bias is 1-D [N] (per column of " + d.name +
                   ") or 2-D [M, 1] (per row) or [1, N], one vector for every batch");
  if (!is_tessel_dtype(t.dtype))
    return refuse(TESSEL_STATUS_INVALID_DTYPE, name + ": dtype " + num(t.dtype) + " is not a tessel_dtype");
  if (t.dtype != d.t->dtype)
    return refuse(TESSEL_STATUS_INVALID_DTYPE, name + ": dtype " + dtype_text(t.dtype) + " differs from " + d.name +
                                                   "'s " + dtype_text(d.t->dtype) + "; the bias has D's dtype");
  std::int64_t const rows = t.ndim == 2 ? t.shape[0] : 1, cols = t.shape[t.ndim - 1];
  bool const along_cols = rows == 1 && cols == d.cols, along_rows = t.ndim == 2 && cols == 1 && rows == d.rows;
  std::string const shape = tuple_text(t.shape, t.ndim);
  if (!along_cols && !along_rows)
    return invalid(name + ": shape " + shape + " does not broadcast against " + d.name + "'s " + num(d.rows) + " x " +
                   num(d.cols) + " as a vector: [" + num(d.cols) + "] or [1, " + num(d.cols) + "] (per column), [" +
                   num(d.rows) + ", 1] (per row)");
  int const dim = along_cols ? t.ndim - 1 : 0;  // the vector's dimension
  if (t.shape[dim] > 1 && t.strides[dim] != 1)
    return invalid(name + ": stride " + num(t.strides[dim]) + " along its " + num(t.shape[dim]) +
                   " values; the bias must be contiguous (stride 1)");
  if (t.data == nullptr && t.shape[dim] > 0) return invalid(name + ": data is NULL, but it has " + num(t.shape[dim]) + " values");
  g->bias = t.data;
  g->bias_mode = along_cols ? BiasMode::col : BiasMode::row;
  return {};
}

// Block scaling (tessel/c_api.h): scale_mode, and the scale tensors as GemmArguments' pointers and
// leading dimensions, into g (whose M, N, K and batch are set). a_scales is [(batch,) M, kb] with
// its M dimension contiguous, b_scales [(batch,) nb, kb] with its kb dimension contiguous; a batch
// of them is packed (each batch's scales right after the previous batch's), as the kernels read
// them. The rules gemm_validate applies itself (fp8 operands, null pointers where A and B are
// read, alignment) are left to it.
Refusal block_scales(tessel_gemm_problem const& p, GemmArguments* g) {
  if (p.scale_mode != TESSEL_SCALE_MODE_PER_TENSOR && p.scale_mode != TESSEL_SCALE_MODE_BLOCK)
    return invalid("scale_mode: " + num(p.scale_mode) + " is not a tessel_scale_mode (0 per tensor, 1 block)");
  Named const as = named(p.a_scales, "a_scales"), bs = named(p.b_scales, "b_scales");
  if (p.scale_mode == TESSEL_SCALE_MODE_PER_TENSOR) {
    for (Named const* x : {&as, &bs})
      if (x->present())
        return invalid(x->name + ": given, but scale_mode is per tensor; per-block scales need scale_mode " +
                       "TESSEL_SCALE_MODE_BLOCK");
    return {};
  }
  g->scale_mode = ScaleMode::block;
  std::int64_t const kb = gemm_scale_blocks(g->k), nb = gemm_scale_blocks(g->n);
  bool const batched = p.d.ndim == 3;
  struct Scales {
    Named const* x;
    std::int64_t rows, cols;  // the logical (rows, cols) of one batch's scales
    int contiguous;           // 0: rows (M-major, a_scales), 1: cols (K-major, b_scales)
    char const* what;
  };
  for (Scales sc : {Scales{&as, g->m, kb, 0, "[M, ceil(K/128)], M-major (its first dimension's stride 1)"},
                    Scales{&bs, nb, kb, 1, "[ceil(N/128), ceil(K/128)], K-major (its last dimension's stride 1)"}}) {
    Named const& x = *sc.x;
    tessel_tensor const& t = *x.t;
    std::string shape = "[";  // "[(batch, )rows, cols]"
    if (batched) shape += num(g->batch_count) + ", ";
    shape += num(sc.rows) + ", " + num(sc.cols) + "]";
    if (!x.present()) {
      if (gemm_reads_ab(*g))
        return invalid(x.name + ": missing, but scale_mode is block; it must be fp32 " + shape + " (" + sc.what + ")");
      continue;
    }
    if (t.ndim < 0 || t.ndim > TESSEL_MAX_DIMS)
      return invalid(x.name + ": ndim " + num(t.ndim) + " is outside 0.." + num(TESSEL_MAX_DIMS));
    if (!is_tessel_dtype(t.dtype))
      return refuse(TESSEL_STATUS_INVALID_DTYPE, x.name + ": dtype " + num(t.dtype) + " is not a tessel_dtype");
    if (t.dtype != TESSEL_DTYPE_F32)
      return refuse(TESSEL_STATUS_INVALID_DTYPE, x.name + ": " + dtype_text(t.dtype) + " is not supported; block scales are fp32");
    int const want = batched ? 3 : 2;
    if (t.ndim != want && !(batched && t.ndim == 2 && g->batch_count == 1))
      return invalid(x.name + ": has " + num(t.ndim) + (t.ndim == 1 ? " dimension" : " dimensions") + "; with " +
                     (batched ? "a 3-D" : "a 2-D") + " D it must be " + shape + " (" + sc.what + ")");
    int const r = t.ndim - 2;
    if (t.shape[r] != sc.rows || t.shape[r + 1] != sc.cols || (t.ndim == 3 && t.shape[0] != g->batch_count))
      return invalid(x.name + ": shape " + x.shape_text() + " is not " + shape + " (" + sc.what + ")");
    for (int i = 0; i < t.ndim; ++i)
      if (t.strides[i] < 0 && t.shape[i] > 1)
        return invalid(x.name + ": stride " + num(t.strides[i]) + " of dimension " + num(i) + " is negative");
    // The contiguous dimension's stride must be 1, the other's (the leading dimension) at least
    // the contiguous extent; the stride of an extent-1 dimension forms no address and does not count.
    int const in_dim = r + sc.contiguous, ld_dim = r + 1 - sc.contiguous;
    std::int64_t const need = sc.contiguous == 0 ? sc.rows : sc.cols;
    bool const empty = x.elements() == 0;
    bool const inner_ok = empty || t.shape[in_dim] <= 1 || t.strides[in_dim] == 1;
    std::int64_t const ld = empty || t.shape[ld_dim] <= 1 ? std::max<std::int64_t>(need, 1) : t.strides[ld_dim];
    if (!inner_ok || ld < need)
      return invalid(x.name + ": strides " + x.strides_text() + " do not make it " + sc.what + " with a leading " +
                     "dimension of at least " + num(need) + x.view_text());
    if (t.ndim == 3 && g->batch_count > 1 && t.strides[0] != ld * (sc.contiguous == 0 ? sc.cols : sc.rows))
      return invalid(x.name + ": batch stride " + num(t.strides[0]) + " is not " +
                     num(ld * (sc.contiguous == 0 ? sc.cols : sc.rows)) +
                     "; each batch's scales follow the previous batch's, packed (leading dimension x blocks)");
    if (!empty && t.data == nullptr) return invalid(x.name + ": data is NULL, but it has " + num(x.elements()) + " elements");
    if (sc.contiguous == 0)
      g->a_scales = static_cast<float const*>(t.data), g->ld_a_scales = ld;
    else
      g->b_scales = static_cast<float const*>(t.data), g->ld_b_scales = ld;
  }
  return {};
}

}  // namespace

Refusal gemm_arguments_from_problem(tessel_gemm_problem const& p, GemmArguments* out) {
  Matrix const a = matrix_of(p.a, "a"), b = matrix_of(p.b, "b"), c = matrix_of(p.c, "c"), d = matrix_of(p.d, "d");
  Matrix const* const all[] = {&a, &b, &c, &d};

  // Presence and rank.
  for (Matrix const* m : {&a, &b, &d})
    if (!m->present) return invalid(m->name + ": missing (ndim 0); a GEMM needs A, B and D");
  for (Matrix const* m : all) {
    if (!m->present) continue;
    int const nd = m->t->ndim;
    if (nd < 0 || nd > TESSEL_MAX_DIMS)
      return invalid(m->name + ": ndim " + num(nd) + " is outside 0.." + num(TESSEL_MAX_DIMS));
    if (nd != 2 && nd != 3)
      return invalid(m->name + ": has " + num(nd) + (nd == 1 ? " dimension" : " dimensions") +
                     "; a GEMM operand is 2-D (rows x cols) or 3-D (batch x rows x cols)");
    for (int i = 0; i < nd; ++i)
      if (m->t->shape[i] < 0)
        return invalid(m->name + ": extent " + num(m->t->shape[i]) + " of dimension " + num(i) + " is negative");
  }

  // Dtypes: each one known, C's the same as D's, then the host API's rules for the mix.
  for (Matrix const* m : all) {
    if (!m->present) continue;
    if (!is_tessel_dtype(m->t->dtype))
      return refuse(TESSEL_STATUS_INVALID_DTYPE, m->name + ": dtype " + num(m->t->dtype) + " is not a tessel_dtype");
    if (!element_type(m->t->dtype))
      return refuse(TESSEL_STATUS_INVALID_DTYPE, m->name + ": " + dtype_text(m->t->dtype) +
                                                     " is an index type; GEMM operands are fp32, tf32, fp16, bf16, "
                                                     "e4m3 or e5m2");
  }
  if (c.present && c.t->dtype != d.t->dtype)
    return refuse(TESSEL_STATUS_INVALID_DTYPE, c.name + ": dtype " + dtype_text(c.t->dtype) + " differs from " +
                                                   d.name + "'s " + dtype_text(d.t->dtype) + "; " + c.name + " and " +
                                                   d.name + " share one dtype");
  GemmArguments g;
  g.a_type = *element_type(p.a.dtype), g.b_type = *element_type(p.b.dtype), g.c_type = *element_type(p.d.dtype);
  if (Status s = gemm_check_dtypes(g); !s) return dtype_refusal(s, a, b, d);

  // Shapes: A is M x K, B K x N, C and D M x N.
  if (b.rows != a.cols)
    return invalid(b.name + ": has " + num(b.rows) + " rows, but " + a.name + " has " + num(a.cols) + " columns (" +
                   a.name + " is M x K = " + num(a.rows) + " x " + num(a.cols) + ", so " + b.name +
                   " must be K x N = " + num(a.cols) + " x N)");
  if (d.rows != a.rows || d.cols != b.cols)
    return invalid(d.name + ": is " + num(d.rows) + " x " + num(d.cols) + ", but " + a.name + " @ " + b.name + " is " +
                   num(a.rows) + " x " + num(b.cols) + " (M x N)");
  if (c.present && (c.rows != d.rows || c.cols != d.cols))
    return invalid(c.name + ": is " + num(c.rows) + " x " + num(c.cols) + ", but " + d.name + " is " + num(d.rows) +
                   " x " + num(d.cols) + "; " + c.name + " must be M x N like " + d.name);

  // Batches: numpy's matmul broadcasting, over one batch dimension.
  if (a.batched() && b.batched() && a.batch != b.batch && a.batch != 1 && b.batch != 1)
    return invalid(b.name + ": batch " + num(b.batch) + " does not broadcast against " + a.name + "'s batch " +
                   num(a.batch) + " (batches must be equal, or 1)");
  bool const batched = a.batched() || b.batched();
  std::int64_t const ab_batch = !a.batched() ? b.batch : !b.batched() ? a.batch : a.batch == 1 ? b.batch : a.batch;
  if (batched && !d.batched())
    return invalid(d.name + ": is 2-D, but " + (a.batched() ? a.name : b.name) + " is batched; " + d.name +
                   " must be batch x M x N = " + num(ab_batch) + " x " + num(d.rows) + " x " + num(d.cols));
  if (!batched && d.batched())
    return invalid(d.name + ": is 3-D, but " + a.name + " and " + b.name + " are 2-D; " + d.name +
                   " must be M x N = " + num(d.rows) + " x " + num(d.cols));
  if (batched && d.batch != ab_batch)
    return invalid(d.name + ": batch " + num(d.batch) + " does not match the batch " + num(ab_batch) + " of " + a.name +
                   " and " + b.name);
  if (c.present && c.batched() && !d.batched())
    return invalid(c.name + ": is 3-D, but " + d.name + " is 2-D; " + c.name + " must be M x N");
  if (c.present && c.batched() && c.batch != d.batch && c.batch != 1)
    return invalid(c.name + ": batch " + num(c.batch) + " does not broadcast to " + d.name + "'s batch " +
                   num(d.batch) + " (it must be equal, or 1)");

  // Strides: negative ones nowhere; each matrix row- or column-major; C in D's order.
  for (Matrix const* m : all) {
    if (!m->present) continue;
    for (int i = 0; i < m->t->ndim; ++i)
      if (m->t->strides[i] < 0 && m->t->shape[i] > 1)
        return invalid(m->name + ": stride " + num(m->t->strides[i]) + " of dimension " + num(i) +
                       " is negative; tessel takes non-negative strides");
  }
  Orders const oa = orders_of(a), ob = orders_of(b), od = orders_of(d);
  Orders const oc = c.present ? orders_of(c) : Orders{true, true, od.ld_row, od.ld_col, {}};
  for (Orders const* o : {&oa, &ob, &oc, &od})
    if (!o->why_not.empty()) return invalid(o->why_not);
  MatrixOrder d_order = MatrixOrder::row_major;
  if (od.row && oc.row)
    d_order = MatrixOrder::row_major;
  else if (od.col && oc.col)
    d_order = MatrixOrder::col_major;
  else
    return invalid(c.name + ": is " + (oc.row ? "row" : "column") + "-major, but " + d.name + " is " +
                   (od.row ? "row" : "column") + "-major; " + c.name + " and " + d.name + " must have the same order");
  if (!d.empty() && !elements_distinct(d))
    return invalid(d.name + (d.batch > 1 && d.s_batch == 0
                                 ? ": batch stride 0 with batch " + num(d.batch) +
                                       " makes every batch write the same matrix; give each batch its own output"
                                 : ": its elements overlap (shape " + d.shape_text() + ", strides " + d.strides_text() +
                                       "); every element of " + d.name + " needs its own address"));

  // Data: a tensor with elements has a pointer; C exactly when beta reads it.
  for (Matrix const* m : all)
    if (m->present && !m->empty() && m->t->data == nullptr)
      return invalid(m->name + ": data is NULL, but it has " + num(m->batch * m->rows * m->cols) + " elements");
  if (!c.present && !(p.beta == 0.0f))
    return invalid(c.name + ": beta is " + detail::gemm_num(p.beta) + ", but no C was given; pass C or set beta to 0");

  g.m = a.rows, g.n = b.cols, g.k = a.cols;
  g.batch_count = d.batch;
  auto const batch_stride = [&](Matrix const& m) { return m.batched() && m.batch > 1 ? m.s_batch : std::int64_t(0); };
  g.a = p.a.data, g.a_order = oa.row ? MatrixOrder::row_major : MatrixOrder::col_major;
  g.lda = oa.row ? oa.ld_row : oa.ld_col, g.batch_stride_a = batch_stride(a);
  g.b = p.b.data, g.b_order = ob.row ? MatrixOrder::row_major : MatrixOrder::col_major;
  g.ldb = ob.row ? ob.ld_row : ob.ld_col, g.batch_stride_b = batch_stride(b);
  bool const d_row = d_order == MatrixOrder::row_major;
  g.c_order = d_order;
  g.d = p.d.data, g.ldd = d_row ? od.ld_row : od.ld_col, g.batch_stride_d = batch_stride(d);
  if (c.present)
    g.c = p.c.data, g.ldc = d_row ? oc.ld_row : oc.ld_col, g.batch_stride_c = batch_stride(c);
  else
    g.c = nullptr, g.ldc = g.ldd, g.batch_stride_c = 0;
  g.alpha = p.alpha, g.beta = p.beta;
  g.a_scale = p.a_scale, g.b_scale = p.b_scale;
  g.kernel = p.kernel;
  g.workspace = p.workspace, g.workspace_bytes = p.workspace_bytes;
  if (Refusal r = fused_epilogue(p, d, &g); r.code != TESSEL_STATUS_SUCCESS) return r;
  if (Refusal r = block_scales(p, &g); r.code != TESSEL_STATUS_SUCCESS) return r;
  if (p.kernel != nullptr && std::string_view(p.kernel) != "auto" && find_gemm_kernel(p.kernel) == nullptr)
    return invalid(std::string("kernel: '") + p.kernel + "' is not a compiled kernel (`tessel list` shows them)");

  if (Status s = gemm_validate(g); !s) return invalid(s.reason);
  *out = g;
  return {};
}

}  // namespace tessel::capi
