// 02_coalescing.cu -- the same kernel, with threadIdx.x along the columns.
//
// Change from 01: the fastest-varying thread index now walks C's columns. At each k a warp reads
// ONE element of A (a broadcast) and 32 consecutive elements of B (one 128-byte transaction), and
// writes 32 consecutive elements of C. Same arithmetic, a fraction of the memory transactions.
#include "tutorial.hpp"

namespace tutorial {

namespace {

__global__ void gemm_coalescing(Gemm p) {
  int const col = blockIdx.x * blockDim.x + threadIdx.x;  // consecutive threads: consecutive columns
  int const row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= p.m || col >= p.n) return;
  float acc = 0.0f;
  for (int k = 0; k < p.k; ++k) acc += p.a[row * p.lda + k] * p.b[k * p.ldb + col];
  float* c = &p.c[row * p.ldc + col];
  *c = p.beta == 0.0f ? p.alpha * acc : p.alpha * acc + p.beta * *c;
}

}  // namespace

void launch_02_coalescing(Gemm const& p, cudaStream_t stream) {
  dim3 const block(32, 32);
  dim3 const grid((p.n + 31) / 32, (p.m + 31) / 32);
  gemm_coalescing<<<grid, block, 0, stream>>>(p);
}

}  // namespace tutorial
