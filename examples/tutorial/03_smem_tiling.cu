// 03_smem_tiling.cu -- stage 32x32 tiles of A and B in shared memory (seed 002, "shared memory").
//
// Change from 02: a CTA of 32x32 threads computes a 32x32 tile of C. It walks K in steps of 32:
// each thread copies one element of A's tile and one of B's into shared memory (coalesced: threadIdx.x
// walks the contiguous dimension), the CTA synchronises, and every thread does 32 FMAs from shared
// memory. Each global element is now read once per CTA instead of once per thread: 32x less traffic.
// Elements past the edges of A and B are stored as 0, so ragged M, N, K need no other care.
#include "tutorial.hpp"

namespace tutorial {

namespace {

constexpr int kTile = 32;

__global__ void gemm_smem_tiling(Gemm p) {
  __shared__ float sA[kTile][kTile];  // (BM,BK)
  __shared__ float sB[kTile][kTile];  // (BK,BN)
  int const tx = threadIdx.x, ty = threadIdx.y;
  int const row = blockIdx.y * kTile + ty;
  int const col = blockIdx.x * kTile + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < p.k; k0 += kTile) {
    sA[ty][tx] = (row < p.m && k0 + tx < p.k) ? p.a[row * p.lda + k0 + tx] : 0.0f;
    sB[ty][tx] = (k0 + ty < p.k && col < p.n) ? p.b[(k0 + ty) * p.ldb + col] : 0.0f;
    __syncthreads();  // the tiles are complete
    for (int kk = 0; kk < kTile; ++kk) acc += sA[ty][kk] * sB[kk][tx];
    __syncthreads();  // everyone is done reading before the next tile overwrites them
  }
  if (row < p.m && col < p.n) {
    float* c = &p.c[row * p.ldc + col];
    *c = p.beta == 0.0f ? p.alpha * acc : p.alpha * acc + p.beta * *c;
  }
}

}  // namespace

void launch_03_smem_tiling(Gemm const& p, cudaStream_t stream) {
  dim3 const block(kTile, kTile);
  dim3 const grid((p.n + kTile - 1) / kTile, (p.m + kTile - 1) / kTile);
  gemm_smem_tiling<<<grid, block, 0, stream>>>(p);
}

}  // namespace tutorial
