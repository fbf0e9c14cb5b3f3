// tessel/gemm/kernel/sm80_gemm_params.hpp -- the arguments of the sm_80 tensor-core GEMM kernels.
//
// The canonical problem the kernels compute, per batch b:
//   D[b] (M x N, row-major, ldd) = alpha * A[b] (M x K) * B[b] (N x K)^T + beta * C[b] (row-major, ldc)
// with A and B K-major: element (m,k) of A at a[m*lda + k], (n,k) of B at b[n*ldb + k], rows
// 16-byte aligned (pointers, lda, ldb and the batch strides). The host adapter
// (src/gemm/sm80_gemm.cpp) brings any GemmArguments to this form: a column-major D is computed as
// D^T = B^T A^T, and operands that are not K-major or not aligned are first staged into a K-major
// aligned copy. Plain C++, so the adapter compiles without nvcc.
#pragma once

#include <tessel/gemm/epilogue/epilogue_fusion.hpp>
#include <tessel/schedule/raster.hpp>

#include <cstdint>

namespace tessel::kernel {

struct Sm80GemmParams {
  std::int64_t m = 0, n = 0, k = 0;
  int batch = 1;
  void const* a = nullptr; std::int64_t lda = 0, batch_stride_a = 0;
  void const* b = nullptr; std::int64_t ldb = 0, batch_stride_b = 0;
  void const* c = nullptr; std::int64_t ldc = 0, batch_stride_c = 0;  // read only when beta != 0
  void* d = nullptr; std::int64_t ldd = 0, batch_stride_d = 0;
  float alpha = 1.0f, beta = 0.0f;
  bool out_f32 = true;  // C and D are fp32; else the 16-bit input type
  bool c_vec = false;   // C's rows (pointer, ldc, batch stride) are 16-byte aligned
  bool d_vec = false;   // D's rows are
  // CTA -> tile: blockIdx.x = batch * tiles_m * tiles_n + tile, the tile through GroupedRaster
  // (schedule/raster.hpp); blockIdx.z the split-K slice.
  int tiles_m = 0, tiles_n = 0;
  RasterOrder raster_order = RasterOrder::kAlongN;
  int raster_group = 8;
  // Serial split-K (splits > 1): per CTA of one slice (blockIdx.x) a flag, zeroed before the
  // launch, and a workspace of BLK_M x BLK_N floats.
  int splits = 1;
  float* workspace = nullptr;
  int* flags = nullptr;
  // The fused epilogue (act(alpha * acc + beta * C + bias), epilogue/epilogue_fusion.hpp), in the
  // canonical D's orientation; applied by the last slice.
  epilogue::EpilogueFusion fusion;
};

}  // namespace tessel::kernel
