// src/capi/grouped_gemm_problem.cpp -- a C ABI grouped GEMM problem as GroupedGemmArguments
// (grouped_gemm_problem.hpp).
#include "grouped_gemm_problem.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <tessel/gemm/device/grouped_gemm_arguments.hpp>

namespace tessel::capi {

namespace {

constexpr std::int64_t at_least_1(std::int64_t v) { return v > 1 ? v : 1; }

// grouped_gemm_validate names GroupedGemmArguments' fields; the C ABI names the caller's tensors
// and their strides: "lda: ..." -> "a.row_stride: ...", "offsets: ..." -> "<offsets' name>: ...".
Refusal validator_refusal(Status const& s, Named const& a, Named const& b, Named const& c, Named const& d,
                          Named const& offsets) {
  struct Rename {
    std::string_view field;
    std::string to;
  };
  Rename const renames[] = {{"lda", a.name + ".row_stride"},          {"ldb", b.name + ".leading_stride"},
                            {"batch_stride_b", b.name + ".group_stride"}, {"ldc", c.name + ".row_stride"},
                            {"ldd", d.name + ".row_stride"},          {"offsets", offsets.name},
                            {"a", a.name},                            {"b", b.name},
                            {"c", c.name},                            {"d", d.name}};
  std::string why = s.reason;
  for (Rename const& r : renames)
    if (why.size() > r.field.size() && why.compare(0, r.field.size(), r.field) == 0 && why[r.field.size()] == ':') {
      why = r.to + why.substr(r.field.size());
      break;
    }
  return refuse(s.code == StatusCode::not_supported ? TESSEL_STATUS_NOT_SUPPORTED : TESSEL_STATUS_INVALID_ARGUMENT, why);
}

std::string real_text(float v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", double(v));
  return text;
}

bool is_half(std::int32_t d) { return d == TESSEL_DTYPE_F16 || d == TESSEL_DTYPE_BF16; }

}  // namespace

Refusal grouped_gemm_arguments_from_problem(tessel_grouped_gemm_problem const& p, GroupedGemmArguments* out) {
  Named const a = named(p.a, "a"), b = named(p.b, "b"), c = named(p.c, "c"), d = named(p.d, "d");
  Named const offsets = named(p.offsets, "offsets");
  Named const* const all[] = {&a, &b, &c, &d, &offsets};

  // Presence and ranks: a, c, d [total_m, *]; b [G, K, N]; offsets [G].
  for (Named const* x : all)
    if (x->t->ndim < 0 || x->t->ndim > TESSEL_MAX_DIMS)
      return invalid(x->name + ": ndim " + num(x->t->ndim) + " is outside 0.." + num(TESSEL_MAX_DIMS));
  for (Named const* x : {&a, &b, &d, &offsets})
    if (!x->present())
      return invalid(x->name + ": missing (ndim 0); a grouped GEMM needs " + a.name + ", " + b.name + ", " + d.name +
                     " and " + offsets.name);
  struct Rank {
    Named const* x;
    int rank;
    char const* rule;
  };
  for (Rank r : {Rank{&a, 2, "[total_m, K]"}, Rank{&b, 3, "[G, K, N] (one K x N matrix per group)"},
                 Rank{&c, 2, "[total_m, N]"}, Rank{&d, 2, "[total_m, N]"},
                 Rank{&offsets, 1, "[G]: the groups' cumulative row ends"}}) {
    if (!r.x->present()) continue;
    int const nd = r.x->t->ndim;
    if (nd != r.rank)
      return invalid(r.x->name + ": has " + num(nd) + (nd == 1 ? " dimension" : " dimensions") + "; it must be " +
                     num(r.rank) + "-D " + r.rule);
    for (int i = 0; i < nd; ++i)
      if (r.x->t->shape[i] < 0)
        return invalid(r.x->name + ": extent " + num(r.x->t->shape[i]) + " of dimension " + num(i) + " is negative");
  }

  // Dtypes: a and b one of f16, bf16; d theirs or f32; c d's; offsets int32.
  for (Named const* x : all)
    if (x->present() && !is_tessel_dtype(x->t->dtype))
      return refuse(TESSEL_STATUS_INVALID_DTYPE, x->name + ": dtype " + num(x->t->dtype) + " is not a tessel_dtype");
  if (!is_half(p.a.dtype))
    return refuse(TESSEL_STATUS_INVALID_DTYPE, a.name + ": " + dtype_text(p.a.dtype) +
                                                   " is not supported; grouped GEMM takes bf16 or fp16 inputs");
  if (p.b.dtype != p.a.dtype)
    return refuse(TESSEL_STATUS_INVALID_DTYPE, b.name + ": dtype " + dtype_text(p.b.dtype) + " differs from " + a.name +
                                                   "'s " + dtype_text(p.a.dtype) + "; " + a.name + " and " + b.name +
                                                   " share one dtype");
  if (p.d.dtype != p.a.dtype && p.d.dtype != TESSEL_DTYPE_F32)
    return refuse(TESSEL_STATUS_INVALID_DTYPE, d.name + ": dtype " + dtype_text(p.d.dtype) + " with " +
                                                   dtype_text(p.a.dtype) + " inputs; " + dtype_text(p.a.dtype) +
                                                   " inputs write " + dtype_text(p.a.dtype) + " or fp32");
  if (c.present() && p.c.dtype != p.d.dtype)
    return refuse(TESSEL_STATUS_INVALID_DTYPE, c.name + ": dtype " + dtype_text(p.c.dtype) + " differs from " + d.name +
                                                   "'s " + dtype_text(p.d.dtype) + "; " + c.name + " and " + d.name +
                                                   " share one dtype");
  if (p.offsets.dtype != TESSEL_DTYPE_I32)
    return refuse(TESSEL_STATUS_INVALID_DTYPE, offsets.name + ": dtype " + dtype_text(p.offsets.dtype) +
                                                   " is not int32; the group offsets are int32 row ends");

  // Shapes.
  std::int64_t const total_m = p.a.shape[0], k = p.a.shape[1];
  std::int64_t const groups = p.b.shape[0], n = p.b.shape[2];
  if (groups < 1)
    return invalid(b.name + ": has 0 groups (shape " + b.shape_text() + "); a grouped GEMM has at least one group");
  if (p.b.shape[1] != k)
    return invalid(b.name + ": is " + b.shape_text() + ", but " + a.name + " has " + num(k) + " columns (" + a.name +
                   " is [total_m, K] = [" + num(total_m) + ", " + num(k) + "], so " + b.name + " must be [G, K, N] = [G, " +
                   num(k) + ", N])");
  if (p.offsets.shape[0] != groups)
    return invalid(offsets.name + ": has " + num(p.offsets.shape[0]) + " values, but " + b.name + " has " + num(groups) +
                   " groups; " + offsets.name + " holds one cumulative row end per group");
  if (p.d.shape[0] != total_m || p.d.shape[1] != n)
    return invalid(d.name + ": is " + d.shape_text() + ", but the result is [total_m, N] = (" + num(total_m) + ", " +
                   num(n) + ") (" + a.name + "'s rows, " + b.name + "'s last extent)");
  if (c.present() && (p.c.shape[0] != total_m || p.c.shape[1] != n))
    return invalid(c.name + ": is " + c.shape_text() + ", but " + d.name + " is " + d.shape_text() + "; " + c.name +
                   " must be [total_m, N] like " + d.name);

  // Strides: none negative; a, c and d row-major; offsets contiguous; b either way per group.
  for (Named const* x : all) {
    if (!x->present()) continue;
    for (int i = 0; i < x->t->ndim; ++i)
      if (x->t->strides[i] < 0 && x->t->shape[i] > 1)
        return invalid(x->name + ": stride " + num(x->t->strides[i]) + " of dimension " + num(i) +
                       " is negative; tessel takes non-negative strides");
  }
  for (Named const* x : {&a, &c, &d})
    if (x->present() && stride_of(*x->t, 1) != 1)
      return invalid(x->name + ": its last stride is " + num(x->t->strides[1]) + x->view_text() + "; " + x->name +
                     " must be row-major (last stride 1): pass a contiguous array");
  if (stride_of(p.offsets, 0) != 1)
    return invalid(offsets.name + ": stride " + num(p.offsets.strides[0]) + "; the offsets must be contiguous (stride 1)");

  // b: K contiguous (each group's B stored N x K, a Linear weight) is nk, N contiguous is kn.
  bool const b_empty = b.elements() == 0;
  std::int64_t const raw_k = p.b.strides[1], raw_n = p.b.strides[2];
  std::int64_t const ld_nk = b_empty || n <= 1 ? at_least_1(k) : raw_n;  // distance between B[g]'s N rows
  std::int64_t const ld_kn = b_empty || k <= 1 ? at_least_1(n) : raw_k;  // distance between its K rows
  bool const nk_ok = (b_empty || k <= 1 || raw_k == 1) && ld_nk >= at_least_1(k);
  bool const kn_ok = (b_empty || n <= 1 || raw_n == 1) && ld_kn >= at_least_1(n);
  if (!nk_ok && !kn_ok)
    return invalid(b.name + ": neither of its last two strides is 1 with the other at least its extent" + b.view_text() +
                   "; each group's K x N matrix must be row-major (a [G, K, N] array) or column-major (the "
                   "transposed view of a [G, N, K] array): pass a contiguous array");
  bool const nk = nk_ok && (!kn_ok || k > 1 || n <= 1);  // both fit only when K or N is 1: K contiguous then

  // Data: a tensor with elements has a pointer; C exactly when beta reads it.
  if (!c.present() && !(p.beta == 0.0f))
    return invalid(c.name + ": beta is " + real_text(p.beta) + ", but no C was given; pass C or set beta to 0");
  for (Named const* x : all)
    if (x->present() && x->elements() > 0 && x->t->data == nullptr)
      return invalid(x->name + ": data is NULL, but it has " + num(x->elements()) + " elements");

  GroupedGemmArguments g;
  g.groups = groups > kGroupedGemmMaxGroups ? kGroupedGemmMaxGroups + 1 : int(groups);  // the validator refuses it
  g.total_m = total_m, g.n = n, g.k = k;
  g.ab_type = *element_type(p.a.dtype), g.d_type = *element_type(p.d.dtype);
  g.offsets = static_cast<int const*>(p.offsets.data);
  g.a = p.a.data, g.lda = stride_of(p.a, 0);
  g.b = p.b.data, g.ldb = nk ? ld_nk : ld_kn;
  g.b_layout = nk ? GroupedLayoutB::nk : GroupedLayoutB::kn;
  g.batch_stride_b = groups > 1 && !b_empty ? p.b.strides[0] : g.ldb * (nk ? n : k);
  g.d = p.d.data, g.ldd = stride_of(p.d, 0);
  if (c.present())
    g.c = p.c.data, g.ldc = stride_of(p.c, 0);
  else
    g.c = nullptr, g.ldc = g.ldd;
  g.alpha = p.alpha, g.beta = p.beta;
  if (Status s = grouped_gemm_validate(g); !s) {
    if (groups > kGroupedGemmMaxGroups)
      return refuse(TESSEL_STATUS_NOT_SUPPORTED, b.name + ": has " + num(groups) + " groups, above the " +
                                                     num(kGroupedGemmMaxGroups) + " one call takes; split the call");
    return validator_refusal(s, a, b, c, d, offsets);
  }
  *out = g;
  return {};
}

}  // namespace tessel::capi
