// src/gemm/gemm_canonical.cpp -- the tensor-core GEMM adapters' shared pieces (gemm_canonical.hpp).
#include "gemm_canonical.hpp"

#include <map>
#include <mutex>
#include <string>

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

cudaError_t stage_operand(OperandView const& v, std::int64_t k, std::int64_t kp, std::int64_t batch, int element_bytes,
                          void* dst, cudaStream_t stream) {
  kernel::detail::Sm80StageParams const s{v.ptr, v.batch_stride, v.row_stride, v.k_stride, dst, v.rows, k, kp,
                                          int(batch), element_bytes};
  return kernel::detail::sm80_stage_operand(s, stream);
}

}  // namespace tessel::detail
