// 01_naive.cu -- one thread per element of C.
//
// Thread (x, y) of the grid computes C(row = x, col = y): a dot product of row `row` of A and
// column `col` of B, read straight from global memory. Consecutive threads of a warp take
// consecutive ROWS, so at each k a warp reads 32 elements of A that are K floats apart and writes
// 32 elements of C that are N floats apart: every access is its own memory transaction.
#include "tutorial.hpp"

namespace tutorial {

namespace {

__global__ void gemm_naive(Gemm p) {
  int const row = blockIdx.x * blockDim.x + threadIdx.x;
  int const col = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= p.m || col >= p.n) return;  // the ragged edge: threads past C do nothing
  float acc = 0.0f;
  for (int k = 0; k < p.k; ++k) acc += p.a[row * p.lda + k] * p.b[k * p.ldb + col];
  float* c = &p.c[row * p.ldc + col];
  *c = p.beta == 0.0f ? p.alpha * acc : p.alpha * acc + p.beta * *c;
}

}  // namespace

void launch_01_naive(Gemm const& p, cudaStream_t stream) {
  dim3 const block(32, 32);
  dim3 const grid((p.m + 31) / 32, (p.n + 31) / 32);
  gemm_naive<<<grid, block, 0, stream>>>(p);
}

}  // namespace tutorial
