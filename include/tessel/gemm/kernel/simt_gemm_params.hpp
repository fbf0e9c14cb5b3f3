// tessel/gemm/kernel/simt_gemm_params.hpp -- the arguments of the SIMT GEMM kernels.
//
// The host adapter fills this from GemmArguments after bringing the problem to a row-major D
// (a column-major D is computed as D^T = B^T A^T). Plain C++, so the adapter compiles without nvcc.
#pragma once

#include <tessel/schedule/raster.hpp>

#include <cstdint>

namespace tessel::kernel {

struct SimtGemmParams {
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  // A (M x K): element (m,k) at m*lda + k when a_k_major, else at k*lda + m.
  void const* a = nullptr; std::int64_t lda = 0, batch_stride_a = 0; bool a_k_major = true, a_vec = false;
  // B (K x N): element (k,n) at n*ldb + k when b_k_major, else at k*ldb + n.
  void const* b = nullptr; std::int64_t ldb = 0, batch_stride_b = 0; bool b_k_major = false, b_vec = false;
  // C, D (M x N, row-major). C is read only when beta != 0.
  void const* c = nullptr; std::int64_t ldc = 0, batch_stride_c = 0; bool c_vec = false;
  void* d = nullptr; std::int64_t ldd = 0, batch_stride_d = 0; bool d_vec = false;
  // fp8 instances (RuntimeFp8 operands) only: the operand's format is e5m2 (else e4m3).
  bool a_e5m2 = false, b_e5m2 = false;
  float alpha = 1.0f, beta = 0.0f;  // alpha: the whole product scale (alpha * a_scale * b_scale)
  int tiles_m = 0, tiles_n = 0;  // ceil(M/BM), ceil(N/BN); set by the launcher
  // CTA index -> tile: bands of raster_group tiles (tessel/schedule/raster.hpp), so CTAs that
  // run together share panels of A and B in L2.
  RasterOrder raster_order = RasterOrder::kAlongN;
  int raster_group = 8;
};

}  // namespace tessel::kernel
