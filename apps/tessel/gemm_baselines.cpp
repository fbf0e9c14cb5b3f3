// apps/tessel/gemm_baselines.cpp -- cuBLAS and cuBLASLt on tessel's GemmArguments (gemm_baselines.hpp).
#if defined(TESSEL_HAS_CUDA)

#include "gemm_baselines.hpp"

#include <stdexcept>

namespace tessel::cli {

using tessel::DType;
using tessel::GemmArguments;
using tessel::MatrixOrder;

void cublas_check(cublasStatus_t s, char const* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": " + cublasGetStatusString(s));
}

namespace {

cudaDataType cuda_type(DType t) {
  switch (t) {
    case DType::f16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

void lt_check(cublasStatus_t s, char const* what) { cublas_check(s, what); }

cudaDataType lt_type(DType t) {
  return t == DType::e4m3 ? CUDA_R_8F_E4M3 : t == DType::e5m2 ? CUDA_R_8F_E5M2 : cuda_type(t);
}

}  // namespace

void run_cublas(cublasHandle_t h, GemmArguments const& g, void* d) {
  cublasOperation_t const ta = g.a_order == MatrixOrder::row_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t const tb = g.b_order == MatrixOrder::row_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasComputeType_t const compute = g.a_type == DType::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  float const alpha = g.alpha, beta = g.beta;
  cublasStatus_t s;
  if (g.batch_count == 1) {
    s = cublasGemmEx(h, ta, tb, int(g.m), int(g.n), int(g.k), &alpha, g.a, cuda_type(g.a_type), int(g.lda), g.b,
                     cuda_type(g.b_type), int(g.ldb), &beta, d, cuda_type(g.c_type), int(g.ldd), compute,
                     CUBLAS_GEMM_DEFAULT);
  } else {
    s = cublasGemmStridedBatchedEx(h, ta, tb, int(g.m), int(g.n), int(g.k), &alpha, g.a, cuda_type(g.a_type),
                                   int(g.lda), g.batch_stride_a, g.b, cuda_type(g.b_type), int(g.ldb), g.batch_stride_b,
                                   &beta, d, cuda_type(g.c_type), int(g.ldd), g.batch_stride_d, int(g.batch_count),
                                   compute, CUBLAS_GEMM_DEFAULT);
  }
  cublas_check(s, "cuBLAS GEMM");
}

LtGemm::LtGemm(cublasLtHandle_t lt, GemmArguments const& g, std::string const& layout) : lt_(lt) {
  bool const fp8 = tessel::is_fp8(g.a_type);
  if (fp8 && (g.a_order != MatrixOrder::row_major || g.b_order != MatrixOrder::col_major || g.c_order != MatrixOrder::col_major)) {
    why_ = "cuBLASLt: not supported for layout " + layout + " (its fp8 matmul needs tn: A and B K-major)";
    return;
  }
  if (g.c_order != MatrixOrder::col_major) {
    why_ = "cuBLASLt: this baseline takes a column-major D";
    return;
  }
  // The epilogue that computes g's fusion, if cuBLASLt has one.
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  bool const bias = g.bias_mode == tessel::BiasMode::row;
  if (g.bias_mode == tessel::BiasMode::col) {
    why_ = "cuBLASLt: no epilogue adds a per-column bias of a column-major D (its bias runs along D's rows)";
    return;
  }
  switch (g.activation) {
    case tessel::Activation::none: epilogue = bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT, epilogue_ = bias ? "BIAS" : "DEFAULT"; break;
    case tessel::Activation::relu: epilogue = bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU, epilogue_ = bias ? "RELU_BIAS" : "RELU"; break;
    case tessel::Activation::gelu_tanh: epilogue = bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU, epilogue_ = bias ? "GELU_BIAS" : "GELU"; break;
    default:
      why_ = std::string("cuBLASLt: no epilogue computes ") + tessel::to_string(g.activation) +
             " (its GELU is the tanh form, gelu_tanh)";
      return;
  }
  cublasComputeType_t const compute = g.a_type == DType::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  lt_check(cublasLtMatmulDescCreate(&op_, compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
  if (fp8 && g.scale_mode == tessel::ScaleMode::block && epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    why_ = "cuBLASLt: no epilogue with block scales on Hopper (CUBLASLT_EPILOGUE_DEFAULT only)";
    return;
  }
  cublasOperation_t const ta = g.a_order == MatrixOrder::row_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t const tb = g.b_order == MatrixOrder::row_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  lt_check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "TRANSA");
  lt_check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "TRANSB");
  if (epilogue != CUBLASLT_EPILOGUE_DEFAULT)
    lt_check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue), "EPILOGUE");
  if (bias) {
    void const* ptr = g.bias;
    cudaDataType const type = cuda_type(g.c_type);
    lt_check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &ptr, sizeof ptr), "BIAS_POINTER");
    lt_check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &type, sizeof type), "BIAS_DATA_TYPE");
  }
  if (fp8 && g.scale_mode == tessel::ScaleMode::block) {
    // Block scales (CUDA 12.9+ on Hopper): VEC128_32F on A (one per row and 128-deep K block) and
    // BLK128x128_32F on B, on tessel's own scale tensors (gemm_arguments.hpp chose cuBLASLt's
    // layouts); the per-tensor factors, which cuBLASLt cannot add in this mode, go into alpha.
#if CUBLAS_VERSION >= 120900
    std::int32_t const a_mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F, b_mode = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
    void const* a_scale = g.a_scales;
    void const* b_scale = g.b_scales;
    if (cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &a_mode, sizeof a_mode) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &b_mode, sizeof b_mode) != CUBLAS_STATUS_SUCCESS) {
      why_ = "cuBLASLt: refuses the VEC128_32F / BLK128x128_32F scale modes (this cuBLASLt or GPU has no block scaling)";
      return;
    }
    lt_check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scale, sizeof a_scale), "A_SCALE_POINTER");
    lt_check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale, sizeof b_scale), "B_SCALE_POINTER");
    alpha_factor_ = g.a_scale * g.b_scale;
#else
    why_ = "cuBLASLt: block scale modes (VEC128_32F, BLK128x128_32F) need cuBLAS 12.9 or newer";
    return;
#endif
  } else if (fp8) {
    // Each scale on its own 256-byte line: cuBLASLt's matmul refuses (not supported, after its
    // heuristic chose an algorithm) a scale pointer that is only 4-byte aligned.
    void const* a_scale = scales_.p;
    void const* b_scale = static_cast<char const*>(scales_.p) + 256;
    cuda_check(cudaMemcpy(scales_.p, &g.a_scale, sizeof(float), cudaMemcpyHostToDevice), "cuBLASLt scales");
    cuda_check(cudaMemcpy(static_cast<char*>(scales_.p) + 256, &g.b_scale, sizeof(float), cudaMemcpyHostToDevice), "cuBLASLt scales");
    lt_check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scale, sizeof a_scale), "A_SCALE_POINTER");
    lt_check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale, sizeof b_scale), "B_SCALE_POINTER");
  }
  // Stored shapes, column-major: A is K x M when transposed (else M x K), B is K x N (else N x K),
  // D is M x N.
  make_layout(&a_, g.a_type, ta == CUBLAS_OP_T ? g.k : g.m, ta == CUBLAS_OP_T ? g.m : g.k, g.lda, g.batch_count, g.batch_stride_a);
  make_layout(&b_, g.b_type, tb == CUBLAS_OP_T ? g.n : g.k, tb == CUBLAS_OP_T ? g.k : g.n, g.ldb, g.batch_count, g.batch_stride_b);
  make_layout(&d_, g.c_type, g.m, g.n, g.ldd, g.batch_count, g.batch_stride_d);
  lt_check(cublasLtMatmulPreferenceCreate(&pref_), "cublasLtMatmulPreferenceCreate");
  std::uint64_t const ws = kWorkspace;
  lt_check(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws), "workspace");
  int found = 0;
  cublasStatus_t const st = cublasLtMatmulAlgoGetHeuristic(lt_, op_, a_, b_, d_, d_, pref_, 1, &algo_, &found);
  if (st != CUBLAS_STATUS_SUCCESS || found == 0)
    why_ = std::string("cuBLASLt: no algorithm for this problem") + (epilogue_ != "DEFAULT" ? " with epilogue " + epilogue_ : "") +
           " (" + (st != CUBLAS_STATUS_SUCCESS ? cublasGetStatusString(st) : "the heuristic found none") + ")";
}

LtGemm::~LtGemm() {
  if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
  for (cublasLtMatrixLayout_t l : {a_, b_, d_})
    if (l) cublasLtMatrixLayoutDestroy(l);
  if (op_) cublasLtMatmulDescDestroy(op_);
}

std::string LtGemm::try_run(GemmArguments const& g, void* d, cudaStream_t stream) const {
  float const alpha = g.alpha * alpha_factor_, beta = g.beta;
  cublasStatus_t const s = cublasLtMatmul(lt_, op_, &alpha, g.a, a_, g.b, b_, &beta, d, d_, d, d_, &algo_.algo,
                                          workspace_.p, kWorkspace, stream);
  return s == CUBLAS_STATUS_SUCCESS ? std::string() : std::string("cuBLASLt: cublasLtMatmul refused (") + cublasGetStatusString(s) + ")";
}

void LtGemm::run(GemmArguments const& g, void* d, cudaStream_t stream) const {
  float const alpha = g.alpha * alpha_factor_, beta = g.beta;
  lt_check(cublasLtMatmul(lt_, op_, &alpha, g.a, a_, g.b, b_, &beta, d, d_, d, d_, &algo_.algo, workspace_.p, kWorkspace,
                          stream),
           "cublasLtMatmul");
}

void LtGemm::make_layout(cublasLtMatrixLayout_t* l, DType t, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                            std::int64_t batch, std::int64_t stride) {
  lt_check(cublasLtMatrixLayoutCreate(l, lt_type(t), std::uint64_t(rows), std::uint64_t(cols), ld), "cublasLtMatrixLayoutCreate");
  if (batch > 1) {
    std::int32_t const count = std::int32_t(batch);
    lt_check(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count), "BATCH_COUNT");
    lt_check(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
             "STRIDED_BATCH_OFFSET");
  }
}

}  // namespace tessel::cli

#endif  // TESSEL_HAS_CUDA
