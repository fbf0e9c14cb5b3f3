// src/dist/c_api_dist.cpp -- the C ABI of tessel::dist (tessel/c_api_dist.h): tensors to
// arguments, the host API underneath; no exception crosses it.
#include <tessel/c_api_dist.h>
#include <tessel/dist/dist.hpp>

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "../capi/refusal.hpp"
#include "../capi/status_reason.hpp"

struct tessel_dist_context {
  tessel::dist::Context* ctx = nullptr;
};

namespace {

using tessel::DType;
using tessel::MatrixOrder;
using tessel::Status;
using tessel::StatusCode;
using tessel::capi::invalid;
using tessel::capi::num;
using tessel::capi::refuse;
using tessel::capi::Refusal;
using tessel::capi::from_status;
using tessel::capi::guarded;
using tessel::capi::write_reason;

// A 2-D tensor as a matrix: its extents, order and leading dimension (tessel/c_api.h's rule: the
// last stride 1 is row-major, the first stride 1 column-major; an extent-1 dimension's stride
// does not count; row-major wins when both fit).
struct Matrix {
  std::string name;
  void* data = nullptr;
  DType dtype = DType::bf16;
  std::int64_t rows = 0, cols = 0, ld = 0;
  MatrixOrder order = MatrixOrder::row_major;
  bool present = false;
};

Refusal matrix_of(tessel_tensor const& t, char const* field, bool row_major_only, char const* why_row, Matrix* m) {
  m->name = t.name != nullptr ? t.name : field;
  m->present = t.ndim != 0;
  if (t.ndim != 2)
    return invalid(m->name + ": has " + num(t.ndim) + " dimensions; the tensor-parallel GEMMs take 2-D matrices");
  auto const dtype = tessel::capi::element_type(t.dtype);
  if (!dtype)
    return refuse(TESSEL_STATUS_INVALID_DTYPE, m->name + ": dtype " + tessel::capi::dtype_text(t.dtype) +
                                                   " is not an element type (bf16 or fp16 operands)");
  m->dtype = *dtype;
  m->data = t.data;
  m->rows = t.shape[0], m->cols = t.shape[1];
  std::string const view = " (shape " + tessel::capi::tuple_text(t.shape, 2) + ", strides " +
                           tessel::capi::tuple_text(t.strides, 2) + ")";
  if (m->rows < 0 || m->cols < 0) return invalid(m->name + ": a negative extent" + view);
  std::int64_t const min_row = std::max<std::int64_t>(1, m->cols), min_col = std::max<std::int64_t>(1, m->rows);
  bool const empty = m->rows == 0 || m->cols == 0;
  std::int64_t const ld_row = empty || m->rows == 1 ? min_row : t.strides[0];
  std::int64_t const ld_col = empty || m->cols == 1 ? min_col : t.strides[1];
  bool const row = (empty || m->cols == 1 || t.strides[1] == 1) && ld_row >= min_row;
  bool const col = (empty || m->rows == 1 || t.strides[0] == 1) && ld_col >= min_col;
  if (row) {
    m->order = MatrixOrder::row_major, m->ld = ld_row;
  } else if (col && !row_major_only) {
    m->order = MatrixOrder::col_major, m->ld = ld_col;
  } else if (col) {
    return invalid(m->name + ": is column-major" + view + "; it must be row-major (its last stride 1): " + why_row);
  } else {
    return invalid(m->name + ": is neither row- nor column-major with rows that do not overlap" + view +
                   "; pass a contiguous array or a transposed view of one");
  }
  return {};
}

Refusal same_dtype(Matrix const& x, Matrix const& of, char const* rule) {
  if (x.dtype == of.dtype) return {};
  return refuse(TESSEL_STATUS_INVALID_DTYPE, x.name + ": dtype " + tessel::to_string(x.dtype) + " differs from " +
                                                 of.name + "'s " + tessel::to_string(of.dtype) + "; " + rule);
}

Refusal operand_dtypes(Matrix const& a, Matrix const& b, Matrix const& d) {
  if (a.dtype != DType::bf16 && a.dtype != DType::f16)
    return refuse(TESSEL_STATUS_INVALID_DTYPE,
                  a.name + ": dtype " + tessel::to_string(a.dtype) + "; the tensor-parallel GEMMs take bf16 or fp16");
  if (Refusal r = same_dtype(b, a, "A and B share a dtype"); !r.ok()) return r;
  if (d.dtype != a.dtype && d.dtype != DType::f32)
    return refuse(TESSEL_STATUS_INVALID_DTYPE, d.name + ": dtype " + tessel::to_string(d.dtype) + " with " +
                                                   tessel::to_string(a.dtype) + " inputs; D takes their dtype or fp32");
  return {};
}

Refusal all_gather_arguments(tessel_dist_problem const& p, int nranks, tessel::dist::AllGatherGemmArguments* g) {
  if (nranks < 1) return invalid("nranks: " + num(nranks) + " is below 1");
  Matrix a, b, d, ag;
  if (Refusal r = matrix_of(p.a, "a", true, "its rows are sent as blocks", &a); !r.ok()) return r;
  if (Refusal r = matrix_of(p.b, "b", false, "", &b); !r.ok()) return r;
  if (Refusal r = matrix_of(p.d, "d", true, "each rank's rows are one block of it", &d); !r.ok()) return r;
  if (p.a_gathered.ndim != 0) {
    if (Refusal r = matrix_of(p.a_gathered, "a_gathered", true, "each rank's rows are one block of it", &ag); !r.ok())
      return r;
    if (Refusal r = same_dtype(ag, a, "the gathered A has a's dtype"); !r.ok()) return r;
  }
  if (Refusal r = operand_dtypes(a, b, d); !r.ok()) return r;
  if (b.rows != a.cols)
    return invalid(b.name + ": has " + num(b.rows) + " rows, but " + a.name + " has " + num(a.cols) + " columns (" +
                   a.name + " is this rank's [M/P, K] shard, " + b.name + " must be [K, N])");
  if (d.rows != a.rows * nranks || d.cols != b.cols)
    return invalid(d.name + ": is [" + num(d.rows) + ", " + num(d.cols) + "], but it must be [P x " + a.name +
                   "'s rows, " + b.name + "'s columns] = [" + num(a.rows * nranks) + ", " + num(b.cols) +
                   "] (every rank receives all M rows of its columns)");
  if (ag.present && (ag.rows != a.rows * nranks || ag.cols != a.cols))
    return invalid(ag.name + ": is [" + num(ag.rows) + ", " + num(ag.cols) + "], but the gathered A is [" +
                   num(a.rows * nranks) + ", " + num(a.cols) + "]");
  g->m_shard = a.rows, g->n = b.cols, g->k = a.cols;
  g->ab_type = a.dtype, g->d_type = d.dtype;
  g->a_shard = a.data, g->lda = a.ld;
  g->b = b.data, g->ldb = b.ld, g->b_order = b.order;
  g->d = d.data, g->ldd = d.ld;
  if (ag.present) g->a_gathered = ag.data, g->ld_gathered = ag.ld;
  g->alpha = p.alpha;
  g->chunk_rows = p.chunk_rows;
  g->kernel = p.kernel;
  return {};
}

Refusal reduce_scatter_arguments(tessel_dist_problem const& p, int nranks, int rank,
                                 tessel::dist::GemmReduceScatterArguments* g) {
  if (nranks < 1) return invalid("nranks: " + num(nranks) + " is below 1");
  if (p.a_gathered.ndim != 0)
    return invalid("a_gathered: is given, but only the all-gather + GEMM gathers A; leave it absent (ndim 0)");
  Matrix a, b, d;
  if (Refusal r = matrix_of(p.a, "a", false, "", &a); !r.ok()) return r;
  if (Refusal r = matrix_of(p.b, "b", false, "", &b); !r.ok()) return r;
  if (Refusal r = matrix_of(p.d, "d", true, "it is this rank's block of rows", &d); !r.ok()) return r;
  if (Refusal r = operand_dtypes(a, b, d); !r.ok()) return r;
  if (b.rows != a.cols)
    return invalid(b.name + ": has " + num(b.rows) + " rows, but " + a.name + " has " + num(a.cols) + " columns (" +
                   a.name + " is [M, K/P], " + b.name + " must be [K/P, N])");
  std::int64_t const rows = rank >= 0 && rank < nranks ? tessel::dist::rs_block_rows(a.rows, nranks, rank) : 0;
  if (d.rows != rows || d.cols != b.cols)
    return invalid(d.name + ": is [" + num(d.rows) + ", " + num(d.cols) + "], but rank " + num(rank) + "'s block of " +
                   num(a.rows) + " rows over " + num(nranks) + " ranks is [" + num(rows) + ", " + num(b.cols) +
                   "] (blocks of ceil(M / P) rows, the last ones shorter)");
  g->m = a.rows, g->n = b.cols, g->k_shard = a.cols;
  g->ab_type = a.dtype, g->d_type = d.dtype;
  g->a = a.data, g->lda = a.ld, g->a_order = a.order;
  g->b = b.data, g->ldb = b.ld, g->b_order = b.order;
  g->d = d.data, g->ldd = d.ld;
  g->alpha = p.alpha;
  g->chunk_rows = p.chunk_rows;
  g->kernel = p.kernel;
  return {};
}

tessel_status refused(Refusal const& r, char* reason, std::size_t size) {
  return write_reason(r.code, r.reason, reason, size);
}

tessel::dist::Options options_of(int64_t timeout_ms) {
  tessel::dist::Options o;
  if (timeout_ms > 0) o.timeout_ms = timeout_ms;
  return o;
}

}  // namespace

extern "C" {

void tessel_dist_problem_init(tessel_dist_problem* p) {
  if (p == nullptr) return;
  std::memset(p, 0, sizeof *p);
  p->alpha = 1.0f;
}

tessel_status tessel_dist_all_gather_gemm_check(tessel_dist_problem const* p, int nranks, int rank, char* reason,
                                                size_t reason_size) {
  return guarded("tessel_dist_all_gather_gemm_check", reason, reason_size, [&] {
    if (p == nullptr) return write_reason(TESSEL_STATUS_INVALID_ARGUMENT, "problem: NULL", reason, reason_size);
    tessel::dist::AllGatherGemmArguments g;
    if (Refusal r = all_gather_arguments(*p, nranks, &g); !r.ok()) return refused(r, reason, reason_size);
    return from_status(tessel::dist::validate(g, nranks, rank), reason, reason_size);
  });
}

tessel_status tessel_dist_gemm_reduce_scatter_check(tessel_dist_problem const* p, int nranks, int rank, char* reason,
                                                    size_t reason_size) {
  return guarded("tessel_dist_gemm_reduce_scatter_check", reason, reason_size, [&] {
    if (p == nullptr) return write_reason(TESSEL_STATUS_INVALID_ARGUMENT, "problem: NULL", reason, reason_size);
    tessel::dist::GemmReduceScatterArguments g;
    if (Refusal r = reduce_scatter_arguments(*p, nranks, rank, &g); !r.ok()) return refused(r, reason, reason_size);
    return from_status(tessel::dist::validate(g, nranks, rank), reason, reason_size);
  });
}

int64_t tessel_dist_block_rows(int64_t m, int nranks, int rank) {
  if (m < 0 || nranks < 1 || rank < 0 || rank >= nranks) return 0;
  return tessel::dist::rs_block_rows(m, nranks, rank);
}

tessel_status tessel_dist_unique_id(unsigned char* id, char* reason, size_t reason_size) {
  return guarded("tessel_dist_unique_id", reason, reason_size, [&] {
    if (id == nullptr) return write_reason(TESSEL_STATUS_INVALID_ARGUMENT, "id: NULL", reason, reason_size);
    static_assert(sizeof(ncclUniqueId) == TESSEL_DIST_UNIQUE_ID_BYTES, "ncclUniqueId is 128 bytes in NCCL 2.x");
    ncclUniqueId u;
    if (ncclResult_t r = ncclGetUniqueId(&u); r != ncclSuccess)
      return write_reason(TESSEL_STATUS_CUDA_ERROR, std::string("NCCL: ncclGetUniqueId: ") + ncclGetErrorString(r),
                          reason, reason_size);
    std::memcpy(id, &u, sizeof u);
    return TESSEL_STATUS_SUCCESS;
  });
}

tessel_status tessel_dist_context_create(tessel_dist_context** ctx, unsigned char const* id, int nranks, int rank,
                                         int64_t timeout_ms, char* reason, size_t reason_size) {
  return guarded("tessel_dist_context_create", reason, reason_size, [&] {
    if (ctx == nullptr) return write_reason(TESSEL_STATUS_INVALID_ARGUMENT, "ctx: NULL", reason, reason_size);
    *ctx = nullptr;
    if (id == nullptr) return write_reason(TESSEL_STATUS_INVALID_ARGUMENT, "id: NULL", reason, reason_size);
    if (timeout_ms < 0)
      return write_reason(TESSEL_STATUS_INVALID_ARGUMENT, "timeout_ms: " + num(timeout_ms) + " is negative", reason,
                          reason_size);
    ncclUniqueId u;
    std::memcpy(&u, id, sizeof u);
    auto holder = std::make_unique<tessel_dist_context>();
    Status const s = tessel::dist::Context::create(u, nranks, rank, options_of(timeout_ms), &holder->ctx);
    if (s.ok()) *ctx = holder.release();
    return from_status(s, reason, reason_size);
  });
}

tessel_status tessel_dist_context_create_from_comm(tessel_dist_context** ctx, void* nccl_comm, int64_t timeout_ms,
                                                   char* reason, size_t reason_size) {
  return guarded("tessel_dist_context_create_from_comm", reason, reason_size, [&] {
    if (ctx == nullptr) return write_reason(TESSEL_STATUS_INVALID_ARGUMENT, "ctx: NULL", reason, reason_size);
    *ctx = nullptr;
    if (timeout_ms < 0)
      return write_reason(TESSEL_STATUS_INVALID_ARGUMENT, "timeout_ms: " + num(timeout_ms) + " is negative", reason,
                          reason_size);
    auto holder = std::make_unique<tessel_dist_context>();
    Status const s = tessel::dist::Context::create(static_cast<ncclComm_t>(nccl_comm), options_of(timeout_ms),
                                                   &holder->ctx);
    if (s.ok()) *ctx = holder.release();
    return from_status(s, reason, reason_size);
  });
}

void tessel_dist_context_destroy(tessel_dist_context* ctx) {
  if (ctx == nullptr) return;
  tessel::dist::Context::destroy(ctx->ctx);
  delete ctx;
}

tessel_status tessel_dist_context_info(tessel_dist_context const* ctx, int* nranks, int* rank, int* device,
                                       int* nccl_version) {
  if (ctx == nullptr || ctx->ctx == nullptr) return TESSEL_STATUS_INVALID_ARGUMENT;
  tessel::dist::ContextInfo const i = ctx->ctx->info();
  if (nranks != nullptr) *nranks = i.nranks;
  if (rank != nullptr) *rank = i.rank;
  if (device != nullptr) *device = i.device;
  if (nccl_version != nullptr) *nccl_version = i.nccl_version;
  return TESSEL_STATUS_SUCCESS;
}

tessel_status tessel_dist_all_gather_gemm(tessel_dist_context* ctx, tessel_dist_problem const* p, cudaStream_t stream,
                                          char* reason, size_t reason_size) {
  return guarded("tessel_dist_all_gather_gemm", reason, reason_size, [&] {
    if (ctx == nullptr || ctx->ctx == nullptr)
      return write_reason(TESSEL_STATUS_INVALID_ARGUMENT, "ctx: NULL", reason, reason_size);
    if (p == nullptr) return write_reason(TESSEL_STATUS_INVALID_ARGUMENT, "problem: NULL", reason, reason_size);
    tessel::dist::ContextInfo const i = ctx->ctx->info();
    tessel::dist::AllGatherGemmArguments g;
    Refusal const r = all_gather_arguments(*p, i.nranks, &g);
    if (!r.ok()) {
      // The other ranks still wait for this rank's verdict: an argument record with the refusal.
      g.m_shard = -1;
      (void)tessel::dist::all_gather_gemm(*ctx->ctx, g, stream);
      return refused(r, reason, reason_size);
    }
    return from_status(tessel::dist::all_gather_gemm(*ctx->ctx, g, stream), reason, reason_size);
  });
}

tessel_status tessel_dist_gemm_reduce_scatter(tessel_dist_context* ctx, tessel_dist_problem const* p,
                                              cudaStream_t stream, char* reason, size_t reason_size) {
  return guarded("tessel_dist_gemm_reduce_scatter", reason, reason_size, [&] {
    if (ctx == nullptr || ctx->ctx == nullptr)
      return write_reason(TESSEL_STATUS_INVALID_ARGUMENT, "ctx: NULL", reason, reason_size);
    if (p == nullptr) return write_reason(TESSEL_STATUS_INVALID_ARGUMENT, "problem: NULL", reason, reason_size);
    tessel::dist::ContextInfo const i = ctx->ctx->info();
    tessel::dist::GemmReduceScatterArguments g;
    Refusal const r = reduce_scatter_arguments(*p, i.nranks, i.rank, &g);
    if (!r.ok()) {
      g.m = -1;  // refused by validate(): the other ranks learn it in the agreement
      (void)tessel::dist::gemm_reduce_scatter(*ctx->ctx, g, stream);
      return refused(r, reason, reason_size);
    }
    return from_status(tessel::dist::gemm_reduce_scatter(*ctx->ctx, g, stream), reason, reason_size);
  });
}

}  // extern "C"
