// src/capi/attention_problem.cpp -- a C ABI attention problem as AttentionArguments
// (attention_problem.hpp).
#include "attention_problem.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <tessel/attention/attention.hpp>
#include <tessel/attention/attention_backward.hpp>
#include <tessel/attention/attention_validate.hpp>

namespace tessel::capi {

namespace {

bool same_extents(tessel_tensor const& x, tessel_tensor const& y, int n) {
  for (int i = 0; i < n; ++i)
    if (x.shape[i] != y.shape[i]) return false;
  return true;
}

bool known_kernel(char const* name) {
  for (int i = 0; i < attention_kernel_count(); ++i)
    if (std::string_view(attention_kernel_info(i).name) == name) return true;
  return false;
}

bool known_backward_kernel(char const* name) {
  for (int i = 0; i < attention_backward_kernel_count(); ++i)
    if (std::string_view(attention_backward_kernel_info(i).name) == name) return true;
  return false;
}

// The forward problem's tensors with the names reasons use.
struct ForwardNames {
  Named q, k, v, o, lse, cq, ck;
  explicit ForwardNames(tessel_attention_problem const& p)
      : q(named(p.q, "q")), k(named(p.k, "k")), v(named(p.v, "v")), o(named(p.o, "o")), lse(named(p.lse, "lse")),
        cq(named(p.cu_seqlens_q, "cu_seqlens_q")), ck(named(p.cu_seqlens_k, "cu_seqlens_k")) {}
};

// A host API validator's refusal as the C ABI's: its status code (not_supported stays, a dtype
// rule is INVALID_DTYPE) and its reason in the caller's names.
Refusal validator_refusal(Status const& s, Named const* const* tensors, int n) {
  tessel_status const code = s.code == StatusCode::not_supported ? TESSEL_STATUS_NOT_SUPPORTED
                             : s.reason.rfind("dtype:", 0) == 0  ? TESSEL_STATUS_INVALID_DTYPE
                                                                 : TESSEL_STATUS_INVALID_ARGUMENT;
  return refuse(code, with_callers_names(s.reason, tensors, n));
}

// What the forward and the backward share: the C ABI's own rules on the forward problem's tensors
// and the mapping to AttentionArguments, without the host API's validator (the two calls have
// their own). reads_outputs: the backward reads o and lse, so they must be present but need not
// have distinct elements.
Refusal map_forward_problem(tessel_attention_problem const& p, ForwardNames const& names, bool reads_outputs,
                            AttentionArguments* out) {
  Named const &q = names.q, &k = names.k, &v = names.v, &o = names.o;
  Named const &lse = names.lse, &cq = names.cq, &ck = names.ck;
  Named const* const operands[] = {&q, &k, &v, &o};
  Named const* const all[] = {&q, &k, &v, &o, &lse, &cq, &ck};

  // Presence and ranks.
  for (Named const* x : all)
    if (x->t->ndim < 0 || x->t->ndim > TESSEL_MAX_DIMS)
      return invalid(x->name + ": ndim " + num(x->t->ndim) + " is outside 0.." + num(TESSEL_MAX_DIMS));
  for (Named const* x : operands)
    if (!x->present())
      return invalid(x->name + ": missing (ndim 0); attention needs " + q.name + ", " + k.name + ", " + v.name + " and " +
                     o.name);
  if (cq.present() != ck.present()) {
    Named const& given = cq.present() ? cq : ck;
    Named const& missing = cq.present() ? ck : cq;
    return invalid(missing.name + ": missing, but " + given.name +
                   " is given; a variable-length batch needs the offsets of both queries and keys");
  }
  bool const varlen = cq.present();
  int const rank = varlen ? 3 : 4;
  for (Named const* x : operands) {
    int const nd = x->t->ndim;
    if (nd == rank) continue;
    std::string const dims = ": has " + num(nd) + (nd == 1 ? " dimension" : " dimensions");
    if (varlen)
      return invalid(x->name + dims + "; with cu_seqlens the operands are packed 3-D [total, H, D]");
    return invalid(x->name + dims + "; attention operands are 4-D [B, S, H, D] (or packed 3-D [total, H, D] " +
                   "with cu_seqlens_q and cu_seqlens_k)");
  }
  if (lse.present() && lse.t->ndim != rank - 1)
    return invalid(lse.name + ": has " + num(lse.t->ndim) + " dimensions; LSE is " +
                   (varlen ? "2-D [H, total_q] with cu_seqlens" : "3-D [B, H, S_q]"));
  for (Named const* x : {&cq, &ck})
    if (x->present() && x->t->ndim != 1)
      return invalid(x->name + ": has " + num(x->t->ndim) + " dimensions; it is 1-D, the B + 1 offsets of the sequences");
  for (Named const* x : all)
    for (int i = 0; i < x->t->ndim; ++i)
      if (x->t->shape[i] < 0)
        return invalid(x->name + ": extent " + num(x->t->shape[i]) + " of dimension " + num(i) + " is negative");

  // Dtypes.
  for (Named const* x : all)
    if (x->present() && !is_tessel_dtype(x->t->dtype))
      return refuse(TESSEL_STATUS_INVALID_DTYPE, x->name + ": dtype " + num(x->t->dtype) + " is not a tessel_dtype");
  if (p.q.dtype != TESSEL_DTYPE_F16 && p.q.dtype != TESSEL_DTYPE_BF16)
    return refuse(TESSEL_STATUS_INVALID_DTYPE,
                  q.name + ": " + dtype_text(p.q.dtype) + " is not supported; attention takes fp16 and bf16");
  for (Named const* x : {&k, &v, &o})
    if (x->t->dtype != p.q.dtype)
      return refuse(TESSEL_STATUS_INVALID_DTYPE, x->name + ": " + dtype_text(x->t->dtype) + " differs from " + q.name +
                                                     "'s " + dtype_text(p.q.dtype) + "; " + q.name + ", " + k.name +
                                                     ", " + v.name + " and " + o.name + " share one dtype");
  if (reads_outputs && !lse.present())
    return invalid(lse.name + ": missing (ndim 0); the backward reads the forward's LSE (" +
                   (varlen ? "[H, total_q]" : "[B, H, S_q]") + " fp32)");
  if (lse.present() && p.lse.dtype != TESSEL_DTYPE_F32)
    return refuse(TESSEL_STATUS_INVALID_DTYPE, lse.name + ": " + dtype_text(p.lse.dtype) + " is not fp32; LSE is fp32");
  for (Named const* x : {&cq, &ck})
    if (x->present() && x->t->dtype != TESSEL_DTYPE_I32)
      return refuse(TESSEL_STATUS_INVALID_DTYPE,
                    x->name + ": " + dtype_text(x->t->dtype) + " is not int32; sequence offsets are int32");

  // Shapes: q [B, S_q, H, D], k [B, S_k, H_kv, D], v [B, S_k, H_kv, D_v], o [B, S_q, H, D_v]
  // (packed: the first two dimensions are one, total).
  int const d = rank - 1, h = rank - 2;
  std::int64_t const* Q = p.q.shape;
  std::int64_t const* K = p.k.shape;
  std::int64_t const* V = p.v.shape;
  std::int64_t batch = 0;
  if (varlen) {
    if (p.cu_seqlens_q.shape[0] == 0)
      return invalid(cq.name + ": is empty; it holds B + 1 offsets, starting with 0");
    if (p.cu_seqlens_k.shape[0] != p.cu_seqlens_q.shape[0])
      return invalid(ck.name + ": has " + num(p.cu_seqlens_k.shape[0]) + " offsets, but " + cq.name + " has " +
                     num(p.cu_seqlens_q.shape[0]) + "; both hold B + 1");
    batch = p.cu_seqlens_q.shape[0] - 1;
  } else {
    batch = Q[0];
    if (K[0] != batch)
      return invalid(k.name + ": batch " + num(K[0]) + " differs from " + q.name + "'s " + num(batch));
  }
  if (K[d] != Q[d])
    return invalid(k.name + ": head dim " + num(K[d]) + " differs from " + q.name + "'s " + num(Q[d]) +
                   "; q and k share D");
  if (!same_extents(p.v, p.k, rank - 1))
    return invalid(v.name + ": shape " + v.shape_text() + " does not match " + k.name + "'s " + k.shape_text() +
                   (varlen ? "; v is [total_k, H_kv, D_v] with k's total_k and H_kv"
                           : "; v is [B, S_k, H_kv, D_v] with k's B, S_k and H_kv"));
  std::int64_t o_shape[4] = {};
  for (int i = 0; i < rank - 1; ++i) o_shape[i] = Q[i];
  o_shape[d] = V[d];
  bool o_matches = true;
  for (int i = 0; i < rank; ++i) o_matches = o_matches && p.o.shape[i] == o_shape[i];
  if (!o_matches)
    return invalid(o.name + ": shape " + o.shape_text() + " is not " + tuple_text(o_shape, rank) +
                   (varlen ? ", [total_q, H, D_v] from q and v" : ", [B, S_q, H, D_v] from q and v"));
  if (lse.present()) {
    std::int64_t const want_dense[] = {batch, Q[h], Q[1]};
    std::int64_t const want_packed[] = {Q[h], Q[0]};
    std::int64_t const* want = varlen ? want_packed : want_dense;
    for (int i = 0; i < rank - 1; ++i)
      if (p.lse.shape[i] != want[i])
        return invalid(lse.name + ": shape " + lse.shape_text() + " is not " + tuple_text(want, rank - 1) +
                       (varlen ? ", [H, total_q] from q" : ", [B, H, S_q] from q"));
  }

  // Strides: none negative; the last dimension contiguous; the outputs' elements distinct. A
  // tensor without elements forms no address: its strides do not count.
  for (Named const* x : all) {
    if (!x->present() || x->elements() == 0) continue;
    for (int i = 0; i < x->t->ndim; ++i)
      if (x->t->strides[i] < 0 && x->t->shape[i] > 1)
        return invalid(x->name + ": stride " + num(x->t->strides[i]) + " of dimension " + num(i) +
                       " is negative; tessel takes non-negative strides");
    int const last = x->t->ndim - 1;
    if (x->t->shape[last] > 1 && x->t->strides[last] != 1) {
      if (x == &cq || x == &ck)
        return invalid(x->name + ": stride " + num(x->t->strides[last]) + "; the offsets must be contiguous (stride 1)");
      if (x == &lse)
        return invalid(x->name + ": the last dimension's stride is " + num(x->t->strides[last]) + x->view_text() +
                       "; LSE rows are contiguous (stride 1)");
      return invalid(x->name + ": the last dimension's stride is " + num(x->t->strides[last]) + x->view_text() +
                     "; tessel reads each head's vector contiguous (stride 1): pass a contiguous array, or a view "
                     "that keeps the last dimension whole");
    }
  }
  for (Named const* x : {&o, &lse})
    if (!reads_outputs && x->present() && x->elements() > 0 && !elements_distinct(x->t->shape, x->t->strides, x->t->ndim))
      return invalid(x->name + ": its elements overlap" + x->view_text() + "; every element of " + x->name +
                     " needs its own address");

  // Pointers the host API cannot tell from "not given".
  for (Named const* x : {&cq, &ck})
    if (x->present() && x->t->data == nullptr)
      return invalid(x->name + ": data is NULL, but it holds B + 1 = " + num(x->t->shape[0]) + " offsets");
  if (!reads_outputs && lse.present() && lse.elements() > 0 && p.lse.data == nullptr)
    return invalid(lse.name + ": data is NULL, but it has " + num(lse.elements()) +
                   " elements; give lse ndim 0 to write no LSE");

  // Scalars.
  struct MaxSeqlen {
    char const* field;
    std::int64_t v;
    Named const* offsets;
  };
  for (MaxSeqlen m : {MaxSeqlen{"max_seqlen_q", p.max_seqlen_q, &cq}, MaxSeqlen{"max_seqlen_k", p.max_seqlen_k, &ck}}) {
    if (m.v < 0) return invalid(std::string(m.field) + ": " + num(m.v) + " is negative");
    if (!varlen && m.v != 0)
      return invalid(std::string(m.field) + ": " + num(m.v) + " is given without " + m.offsets->name +
                     "; it bounds variable-length sequences only (a dense batch's lengths are the extents of q and k)");
  }
  if (p.align != TESSEL_MASK_ALIGN_BOTTOM_RIGHT && p.align != TESSEL_MASK_ALIGN_TOP_LEFT)
    return invalid("align: " + num(p.align) + " is not a tessel_mask_align (0 bottom-right, 1 top-left)");
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  if (Q[d] > kIntMax || V[d] > kIntMax)
    return invalid(std::string(Q[d] > kIntMax ? "head_dim: " : "head_dim_v: ") + num(Q[d] > kIntMax ? Q[d] : V[d]) +
                   " is not supported; the largest head dim is 256");
  if (p.kernel != nullptr && std::string_view(p.kernel) != "auto" && !known_kernel(p.kernel))
    return invalid(std::string("kernel: '") + p.kernel + "' is not a compiled attention kernel (`tessel list` shows them)");

  AttentionArguments a;
  a.batch = batch;
  a.seqlen_q = varlen ? (p.max_seqlen_q != 0 ? p.max_seqlen_q : Q[0]) : Q[1];
  a.seqlen_k = varlen ? (p.max_seqlen_k != 0 ? p.max_seqlen_k : K[0]) : K[1];
  a.heads = Q[h], a.kv_heads = K[h];
  a.head_dim = int(Q[d]), a.head_dim_v = int(V[d]);
  a.dtype = *element_type(p.q.dtype);
  int const row = rank - 3;  // the row (sequence) dimension
  auto const operand = [&](tessel_tensor const& t) {
    return AttentionOperand{t.data, varlen ? 0 : stride_of(t, 0), stride_of(t, row), stride_of(t, h)};
  };
  a.q = operand(p.q), a.k = operand(p.k), a.v = operand(p.v);
  AttentionOperand const ao = operand(p.o);
  a.o = p.o.data, a.o_batch_stride = ao.batch_stride, a.o_row_stride = ao.row_stride, a.o_head_stride = ao.head_stride;
  if (lse.present()) {
    a.lse = static_cast<float*>(p.lse.data);
    a.lse_batch_stride = varlen ? 0 : stride_of(p.lse, 0);
    a.lse_head_stride = stride_of(p.lse, row);
  } else {
    a.lse = nullptr, a.lse_batch_stride = 0, a.lse_head_stride = 0;
  }
  a.softmax_scale = p.softmax_scale;
  a.causal = p.causal != 0;
  a.window_left = p.window_left, a.window_right = p.window_right;
  a.align = p.align == TESSEL_MASK_ALIGN_TOP_LEFT ? MaskAlign::top_left : MaskAlign::bottom_right;
  a.softcap = p.softcap;
  a.cu_seqlens_q = static_cast<std::int32_t const*>(p.cu_seqlens_q.data);
  a.cu_seqlens_k = static_cast<std::int32_t const*>(p.cu_seqlens_k.data);
  a.kernel = p.kernel;
  *out = a;
  return {};
}

}  // namespace

Refusal attention_arguments_from_problem(tessel_attention_problem const& p, AttentionArguments* out) {
  ForwardNames const names(p);
  AttentionArguments a;
  if (Refusal r = map_forward_problem(p, names, false, &a); !r.ok()) return r;
  Named const* const all[] = {&names.q, &names.k, &names.v, &names.o, &names.lse, &names.cq, &names.ck};
  if (Status s = attention_validate(a); !s) return validator_refusal(s, all, 7);
  *out = a;
  return {};
}

Refusal attention_backward_arguments_from_problem(tessel_attention_backward_problem const& p,
                                                  AttentionBackwardArguments* out) {
  tessel_attention_problem fwd = p.forward;
  fwd.kernel = nullptr;  // the forward's kernel is not the backward's: not read
  ForwardNames const names(fwd);
  AttentionArguments a;
  if (Refusal r = map_forward_problem(fwd, names, true, &a); !r.ok()) return r;

  // The gradients: present, q's dtype, the shape of the tensor each is the gradient of.
  Named const d_o = named(p.d_o, "d_o"), dq = named(p.dq, "dq"), dk = named(p.dk, "dk"), dv = named(p.dv, "dv");
  struct Gradient {
    Named const* g;
    Named const* of;  // the forward tensor it is shaped like
    bool written;
  };
  Gradient const grads[] = {{&d_o, &names.o, false}, {&dq, &names.q, true}, {&dk, &names.k, true}, {&dv, &names.v, true}};
  for (Gradient const& x : grads) {
    tessel_tensor const& t = *x.g->t;
    if (t.ndim < 0 || t.ndim > TESSEL_MAX_DIMS)
      return invalid(x.g->name + ": ndim " + num(t.ndim) + " is outside 0.." + num(TESSEL_MAX_DIMS));
    if (!x.g->present())
      return invalid(x.g->name + ": missing (ndim 0); attention backward needs " + d_o.name + " and writes " + dq.name +
                     ", " + dk.name + " and " + dv.name);
    if (!is_tessel_dtype(t.dtype))
      return refuse(TESSEL_STATUS_INVALID_DTYPE, x.g->name + ": dtype " + num(t.dtype) + " is not a tessel_dtype");
    if (t.dtype != fwd.q.dtype)
      return refuse(TESSEL_STATUS_INVALID_DTYPE, x.g->name + ": " + dtype_text(t.dtype) + " differs from " +
                                                     names.q.name + "'s " + dtype_text(fwd.q.dtype) +
                                                     "; the gradients share the forward's dtype");
    bool same = t.ndim == x.of->t->ndim;
    for (int i = 0; same && i < t.ndim; ++i) same = t.shape[i] == x.of->t->shape[i];
    if (!same)
      return invalid(x.g->name + ": shape " + x.g->shape_text() + " is not " + x.of->name + "'s " + x.of->shape_text() +
                     "; " + x.g->name + " is shaped like " + x.of->name);
    if (x.g->elements() == 0) continue;  // no element: no address, no stride counts
    for (int i = 0; i < t.ndim; ++i)
      if (t.strides[i] < 0 && t.shape[i] > 1)
        return invalid(x.g->name + ": stride " + num(t.strides[i]) + " of dimension " + num(i) +
                       " is negative; tessel takes non-negative strides");
    int const last = t.ndim - 1;
    if (t.shape[last] > 1 && t.strides[last] != 1)
      return invalid(x.g->name + ": the last dimension's stride is " + num(t.strides[last]) + x.g->view_text() +
                     "; tessel reads and writes each head's vector contiguous (stride 1)");
    if (x.written && !elements_distinct(t.shape, t.strides, t.ndim))
      return invalid(x.g->name + ": its elements overlap" + x.g->view_text() + "; every element of " + x.g->name +
                     " needs its own address");
  }
  if (p.kernel != nullptr && std::string_view(p.kernel) != "auto" && !known_backward_kernel(p.kernel))
    return invalid(std::string("kernel: '") + p.kernel +
                   "' is not a compiled attention-backward kernel (`tessel list` shows them)");

  AttentionBackwardArguments b;
  b.problem = a;
  bool const varlen = attention_is_varlen(a);
  int const row = varlen ? 0 : 1, head = varlen ? 1 : 2;
  auto const strides = [&](tessel_tensor const& t) {
    return AttentionGradient{t.data, varlen ? 0 : stride_of(t, 0), stride_of(t, row), stride_of(t, head)};
  };
  AttentionGradient const g_o = strides(p.d_o);
  b.d_o = {g_o.ptr, g_o.batch_stride, g_o.row_stride, g_o.head_stride};
  b.dq = strides(p.dq), b.dk = strides(p.dk), b.dv = strides(p.dv);
  b.deterministic = p.deterministic != 0;
  b.workspace = p.workspace, b.workspace_bytes = p.workspace_bytes;
  b.kernel = p.kernel;

  if (Status s = attention_backward_validate(b); !s) {
    // The validator names the forward's tensors "problem.q", ...: the caller's are "q", ...
    std::string_view constexpr kProblem = "problem.";
    if (s.reason.rfind(kProblem, 0) == 0) s.reason.erase(0, kProblem.size());
    Named const* const all[] = {&names.q, &names.k, &names.v, &names.o, &names.lse, &names.cq, &names.ck,
                                &d_o,     &dq,      &dk,      &dv};
    return validator_refusal(s, all, 11);
  }
  *out = b;
  return {};
}

}  // namespace tessel::capi
