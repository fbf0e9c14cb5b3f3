// src/gemm/gemm_canonical.cpp -- the tensor-core GEMM adapters' shared pieces (gemm_canonical.hpp).
#include "gemm_canonical.hpp"
#include "sm90_instances.hpp"

#include <tessel/gemm/device/gemm_validate.hpp>
#include <tessel/gemm/epilogue/epilogue_fusion.hpp>

#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace tessel::detail {

CanonicalGemm canonical_gemm(GemmArguments const& g) {
  OperandView const op_a = g.a_order == MatrixOrder::row_major
                               ? OperandView{g.a, g.m, g.batch_stride_a, g.lda, 1}
                               : OperandView{g.a, g.m, g.batch_stride_a, 1, g.lda};
  OperandView const op_bt = g.b_order == MatrixOrder::col_major
                                ? OperandView{g.b, g.n, g.batch_stride_b, g.ldb, 1}
                                : OperandView{g.b, g.n, g.batch_stride_b, 1, g.ldb};
  if (g.c_order == MatrixOrder::row_major) return {g.m, g.n, op_a, op_bt};
  return {g.n, g.m, op_bt, op_a};
}

bool aligned16(void const* p, std::int64_t ld, std::int64_t batch_stride, std::int64_t batch, std::size_t bytes) {
  std::int64_t const per16 = std::int64_t(16 / bytes);
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && ld % per16 == 0 && (batch == 1 || batch_stride % per16 == 0);
}

bool readable_in_place(OperandView const& v, std::int64_t batch, std::size_t bytes) {
  return v.k_stride == 1 && aligned16(v.ptr, v.row_stride, v.batch_stride, batch, bytes);
}

Status cuda_failure(char const* what, cudaError_t err) {
  return Status::error(StatusCode::cuda_error, std::string(what) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

Status workspace_pool(cudaMemPool_t* out) {
  static std::mutex mu;
  static std::map<int, cudaMemPool_t> pools;
  int dev = 0;
  if (cudaError_t err = cudaGetDevice(&dev); err != cudaSuccess) return cuda_failure("cudaGetDevice", err);
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = pools.find(dev); it != pools.end()) {
    *out = it->second;
    return Status::success();
  }
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = dev;
  cudaMemPool_t pool = nullptr;
  if (cudaError_t err = cudaMemPoolCreate(&pool, &props); err != cudaSuccess)
    return cuda_failure("cudaMemPoolCreate (GEMM workspace)", err);
  std::uint64_t keep = UINT64_MAX;  // never hand memory back between calls
  if (cudaError_t err = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep); err != cudaSuccess)
    return cuda_failure("cudaMemPoolSetAttribute", err);
  pools.emplace(dev, pool);
  *out = pool;
  return Status::success();
}

Status pool_allocate(void** out, std::size_t bytes, std::string const& what, cudaStream_t stream) {
  cudaMemPool_t pool = nullptr;
  if (Status s = workspace_pool(&pool); !s) return s;
  if (cudaError_t err = cudaMallocFromPoolAsync(out, bytes, pool, stream); err != cudaSuccess) {
    *out = nullptr;
    return cuda_failure(what.c_str(), err);
  }
  return Status::success();
}

namespace {

std::size_t aligned256(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace

Status release_workspace(CallWorkspace& w, Status result, cudaStream_t stream) {
  if (w.base != nullptr && w.pooled) {
    if (cudaError_t err = cudaFreeAsync(w.base, stream); err != cudaSuccess && result.ok())
      result = cuda_failure("cudaFreeAsync (GEMM workspace)", err);
    w.base = nullptr;
  }
  return result;
}

Status prepare_operands(CanonicalGemm const& c, std::int64_t k, std::int64_t batch, int element_bytes, Staging a,
                        Staging b, std::size_t partials, std::size_t flags, WorkspaceSource const& from,
                        cudaStream_t stream, CallWorkspace* w) {
  std::size_t const in_bytes = std::size_t(element_bytes);
  std::int64_t const kp = round_up(k, std::int64_t(128 / in_bytes));
  auto const staged = [&](Staging s, OperandView const& v) {
    return s == Staging::always || (s == Staging::if_unaligned && !readable_in_place(v, batch, in_bytes));
  };
  bool const stage_a = staged(a, c.a), stage_b = staged(b, c.b);
  std::size_t const bytes_a = stage_a ? std::size_t(batch * c.m * kp) * in_bytes : 0;
  std::size_t const bytes_b = stage_b ? std::size_t(batch * c.n * kp) * in_bytes : 0;
  std::size_t const bytes_partials = partials * sizeof(float), bytes_flags = flags * sizeof(int);
  std::size_t const total = aligned256(bytes_a) + aligned256(bytes_b) + aligned256(bytes_partials) + bytes_flags;
  if (from.query != nullptr) {
    *from.query = total;
    return Status::success();
  }
  if (total > 0 && from.caller != nullptr) {
    if (from.caller_bytes < total)
      return Status::error(StatusCode::invalid_argument,
                           "workspace_bytes: " + std::to_string(from.caller_bytes) + " is below the " + std::to_string(total) +
                               " bytes this call needs (gemm_workspace_size)");
    w->base = static_cast<char*>(from.caller);
  } else if (total > 0) {
    void* base = nullptr;
    if (Status s = pool_allocate(&base, total, "workspace of " + std::to_string(total >> 20) + " MiB for the GEMM", stream); !s)
      return s;
    w->base = static_cast<char*>(base), w->pooled = true;
  }
  char* const ws_a = w->base;
  char* const ws_b = ws_a + aligned256(bytes_a);
  char* const ws_k = ws_b + aligned256(bytes_b);
  if (partials > 0) w->partials = reinterpret_cast<float*>(ws_k);
  if (flags > 0) w->flags = reinterpret_cast<int*>(ws_k + aligned256(bytes_partials));
  w->a = {c.a.ptr, c.a.row_stride, c.a.batch_stride};
  w->b = {c.b.ptr, c.b.row_stride, c.b.batch_stride};
  Status result = Status::success();
  if (w->flags != nullptr) {
    if (cudaError_t err = cudaMemsetAsync(w->flags, 0, bytes_flags, stream); err != cudaSuccess)
      result = cuda_failure("zeroing split-K flags", err);
  }
  struct Stage {
    bool needed;
    OperandView const& from;
    char* to;
    KMajorOperand* out;
  };
  kernel::detail::Sm80StageParams jobs[2];
  int count = 0;
  for (Stage const& s : {Stage{stage_a, c.a, ws_a, &w->a}, Stage{stage_b, c.b, ws_b, &w->b}}) {
    if (!s.needed) continue;
    jobs[count++] = {s.from.ptr, s.from.batch_stride, s.from.row_stride, s.from.k_stride, s.to, s.from.rows, k, kp,
                     int(batch), element_bytes};
    *s.out = {s.to, kp, s.from.rows * kp};
  }
  if (count > 0 && result.ok()) {  // both operands in one launch where they can share it
    if (cudaError_t err = kernel::detail::sm80_stage_operands(jobs, count, stream); err != cudaSuccess)
      result = cuda_failure(count == 2 ? "staging A and B" : stage_a ? "staging A" : "staging B", err);
  }
  if (!result.ok()) return release_workspace(*w, std::move(result), stream);
  return result;
}

GemmArguments without_fusion(GemmArguments g) {
  g.bias = nullptr, g.bias_mode = BiasMode::none, g.activation = Activation::none;
  return g;
}

Status fused_epilogue_pass(GemmArguments const& g, float const* s, std::int64_t s_ld, std::int64_t s_batch_stride,
                           bool with_c, cudaStream_t stream) {
  bool const col_d = g.c_order == MatrixOrder::col_major;
  kernel::detail::SplitKReduceParams r;
  r.partials = s, r.partials_ld = s_ld, r.partials_batch_stride = s_batch_stride;
  r.batch = g.batch_count, r.rows = col_d ? g.n : g.m, r.cols = col_d ? g.m : g.n;  // the canonical (row-major) D
  bool const reads_c = with_c && gemm_reads_c(g);
  r.c = reads_c ? g.c : nullptr, r.ldc = g.ldc, r.batch_stride_c = g.batch_stride_c, r.beta = reads_c ? g.beta : 0.0f;
  r.d = g.d, r.ldd = g.ldd, r.batch_stride_d = g.batch_stride_d;
  r.fusion = epilogue::epilogue_fusion_of(g);
  if (cudaError_t err = kernel::detail::launch_splitk_reduce(r, g.c_type, stream); err != cudaSuccess)
    return cuda_failure("launch of the fused epilogue's pass", err);
  return Status::success();
}

}  // namespace tessel::detail
