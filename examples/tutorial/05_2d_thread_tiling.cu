// 05_2d_thread_tiling.cu -- each thread computes an 8x8 block of C.
//
// Change from 04: a CTA of 256 threads computes a 128x128 tile; thread t owns the 8x8 block at
// rows (t / 16) * 8, columns (t % 16) * 8. Per k it loads 8 values of A and 8 of B into registers
// and does their outer product: 64 FMAs for 16 shared loads (04: 8 FMAs for 9). Each thread now
// loads 4 elements of each 1024-element tile.
#include "tutorial.hpp"

namespace tutorial {

namespace {

constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
constexpr int kThreads = (BM / TM) * (BN / TN);  // 256
constexpr int kLoads = BM * BK / kThreads;       // 4 elements of A (and of B) per thread

__global__ void __launch_bounds__(kThreads) gemm_2d_thread_tiling(Gemm p) {
  __shared__ float sA[BM][BK];  // (BM,BK)
  __shared__ float sB[BK][BN];  // (BK,BN)
  int const tid = threadIdx.x;
  int const m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  int const thread_row = tid / (BN / TN), thread_col = tid % (BN / TN);

  float acc[TM][TN] = {};
  float rA[TM], rB[TN];  // this thread's column of sA and row of sB at one k
  for (int k0 = 0; k0 < p.k; k0 += BK) {
    for (int l = 0; l < kLoads; ++l) {
      int const i = tid + l * kThreads;
      int const ar = i / BK, ac = i % BK;  // consecutive threads: consecutive k (A is K-contiguous)
      sA[ar][ac] = (m0 + ar < p.m && k0 + ac < p.k) ? p.a[(m0 + ar) * p.lda + k0 + ac] : 0.0f;
      int const br = i / BN, bc = i % BN;  // consecutive threads: consecutive n
      sB[br][bc] = (k0 + br < p.k && n0 + bc < p.n) ? p.b[(k0 + br) * p.ldb + n0 + bc] : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < BK; ++kk) {
      for (int i = 0; i < TM; ++i) rA[i] = sA[thread_row * TM + i][kk];
      for (int j = 0; j < TN; ++j) rB[j] = sB[kk][thread_col * TN + j];
      for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) acc[i][j] += rA[i] * rB[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < TM; ++i)
    for (int j = 0; j < TN; ++j) {
      int const row = m0 + thread_row * TM + i, col = n0 + thread_col * TN + j;
      if (row < p.m && col < p.n) {
        float* c = &p.c[row * p.ldc + col];
        *c = p.beta == 0.0f ? p.alpha * acc[i][j] : p.alpha * acc[i][j] + p.beta * *c;
      }
    }
}

}  // namespace

void launch_05_2d_thread_tiling(Gemm const& p, cudaStream_t stream) {
  dim3 const grid((p.n + BN - 1) / BN, (p.m + BM - 1) / BM);
  gemm_2d_thread_tiling<<<grid, kThreads, 0, stream>>>(p);
}

}  // namespace tutorial
