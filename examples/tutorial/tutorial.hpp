// examples/tutorial/tutorial.hpp -- what every rung of the SIMT GEMM ladder computes.
//
//   C = alpha * A * B + beta * C      fp32, all row-major: A is M x K, B is K x N, C is M x N
//
// (tessel/gemm/kernel/simt_gemm.hpp, a library kernel, generalises rung 08 to every dtype,
// order and batch, with 64-bit indices; the rungs keep 32-bit indices to stay short).
// As in cuBLAS, C is not read when beta == 0. Each NN_<idea>.cu holds one kernel and its launch.
// Tensor names (gA, sA, tCrC ...): docs/glossary.md.
#pragma once

#include <cuda_runtime_api.h>

#include <span>

namespace tutorial {

struct Gemm {
  int m, n, k;
  float alpha, beta;
  float const* a; int lda;
  float const* b; int ldb;
  float* c; int ldc;
};

using Launch = void (*)(Gemm const&, cudaStream_t);

struct Rung {
  int number;
  char const* file;  // "05_2d_thread_tiling.cu"
  char const* idea;  // one line: what changed from the previous rung
  Launch launch;
};

// All rungs, in ladder order.
std::span<Rung const> rungs();

void launch_01_naive(Gemm const&, cudaStream_t);
void launch_02_coalescing(Gemm const&, cudaStream_t);
void launch_03_smem_tiling(Gemm const&, cudaStream_t);
void launch_04_1d_thread_tiling(Gemm const&, cudaStream_t);
void launch_05_2d_thread_tiling(Gemm const&, cudaStream_t);
void launch_06_vectorized(Gemm const&, cudaStream_t);
void launch_07_warp_tiling(Gemm const&, cudaStream_t);
void launch_08_double_buffering(Gemm const&, cudaStream_t);

}  // namespace tutorial
