// apps/tessel/gemm_baselines.hpp -- the vendor GEMMs `tessel gemm` compares against, on the same
// GemmArguments as tessel's: cuBLAS (cublasGemmEx) for fp32, tf32, fp16 and bf16, cuBLASLt's
// matmul for fp8 (cublasGemmEx has no fp8) and for the fused epilogues it has.
//
// Both run in place, as BLAS's C: D holds C on entry (the caller copies it there).
//   run_cublas(handle, args, d);                  // throws on a cuBLAS error
//   LtGemm lt_gemm(lt, args, "tn");                // built once per problem
//   if (lt_gemm.why().empty()) lt_gemm.run(args, d, stream);
#pragma once

#if defined(TESSEL_HAS_CUDA)

#include "measure.hpp"

#include <tessel/gemm/device/gemm_arguments.hpp>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace tessel::cli {

// Throws std::runtime_error "<what>: <cuBLAS status string>" when s is not CUBLAS_STATUS_SUCCESS.
void cublas_check(cublasStatus_t s, char const* what);

// cuBLAS on the same arguments: fp32 with CUBLAS_COMPUTE_32F (no tensor cores, the SGEMM
// baseline), tf32 with CUBLAS_COMPUTE_32F_FAST_TF32, fp16/bf16 with fp32 accumulation.
// In place: D holds C on entry (the caller copies it), as cuBLAS's C.
void run_cublas(cublasHandle_t h, tessel::GemmArguments const& g, void* d);

// cuBLASLt's matmul on the same arguments, where cublasGemmEx has no counterpart: fp8, and the
// fused epilogues (g.bias, g.activation: D = act(alpha A B + beta C + bias)) that cuBLASLt
// computes itself -- CUBLASLT_EPILOGUE_BIAS, RELU, RELU_BIAS, GELU, GELU_BIAS, its GELU being
// the tanh form (gelu_tanh), its bias one value per row of its column-major D (bias_mode row),
// in D's dtype (BIAS_DATA_TYPE). Its fp8 rules on Hopper: A transposed and B not ("TN": both
// operands K-major), C/D column-major bf16, fp16 or fp32, fp32 compute; the scales go in as
// device scalars (A_SCALE_POINTER, B_SCALE_POINTER): D = alpha * a_scale * b_scale * A B + beta
// * C, as tessel's. A 32 MiB workspace and the heuristic's first algorithm; FAST_ACCUM left off
// (fp32 promotion, like tessel's kernels). Built once per problem; `why()` says when cuBLASLt
// cannot run it (the row prints that). Block-scaled fp8 (g.scale_mode block) sets
// CUBLASLT_MATMUL_DESC_A_SCALE_MODE = VEC128_32F and B_SCALE_MODE = BLK128x128_32F with g's scale
// tensors as A/B_SCALE_POINTER (a_scale * b_scale folded into alpha); g's scale pointers must be
// set when it is built and stay the same for every run.
class LtGemm {
 public:
  static constexpr std::size_t kWorkspace = std::size_t(32) << 20;

  LtGemm(cublasLtHandle_t lt, tessel::GemmArguments const& g, std::string const& layout);
  ~LtGemm();
  LtGemm(LtGemm const&) = delete;
  LtGemm& operator=(LtGemm const&) = delete;

  std::string const& why() const { return why_; }
  // The epilogue it runs: "DEFAULT", "BIAS", "RELU", "RELU_BIAS", "GELU" or "GELU_BIAS".
  std::string const& epilogue() const { return epilogue_; }

  // One call whose refusal is an answer, not an error: empty when cuBLASLt ran, else why not.
  std::string try_run(tessel::GemmArguments const& g, void* d, cudaStream_t stream) const;

  // In place, like run_cublas: D holds C on entry.
  void run(tessel::GemmArguments const& g, void* d, cudaStream_t stream) const;

 private:
  static void make_layout(cublasLtMatrixLayout_t* l, tessel::DType t, std::int64_t rows, std::int64_t cols,
                          std::int64_t ld, std::int64_t batch, std::int64_t stride);

  cublasLtHandle_t lt_;
  std::string why_, epilogue_ = "DEFAULT";
  float alpha_factor_ = 1.0f;  // block scaling: a_scale * b_scale, which cuBLASLt then takes in alpha
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulHeuristicResult_t algo_{};
  DeviceBuffer scales_{512};
  DeviceBuffer workspace_{kWorkspace};
};

}  // namespace tessel::cli

#endif  // TESSEL_HAS_CUDA
