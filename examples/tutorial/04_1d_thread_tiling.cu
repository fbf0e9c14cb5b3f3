// 04_1d_thread_tiling.cu -- each thread computes TM = 8 outputs of one column (seed 002, "thread tile").
//
// Change from 03: a CTA computes a 64x64 tile of C with 512 threads; thread t owns rows
// (t / 64) * 8 ... + 7 of column t % 64. K advances in steps of BK = 8: the CTA stages a 64x8 tile
// of A and an 8x64 tile of B (one element each per thread), then each thread reads one B value
// into a register and uses it for 8 FMAs. Shared-memory loads per FMA drop from 2 to about 1.1:
// the kernel stops being bound by shared memory and starts being bound by arithmetic.
#include "tutorial.hpp"

namespace tutorial {

namespace {

constexpr int BM = 64, BN = 64, BK = 8, TM = 8;
constexpr int kThreads = BM * BN / TM;  // 512
static_assert(BM * BK == kThreads && BK * BN == kThreads, "each thread loads exactly one element of A and of B");

__global__ void __launch_bounds__(kThreads) gemm_1d_thread_tiling(Gemm p) {
  __shared__ float sA[BM][BK];  // (BM,BK)
  __shared__ float sB[BK][BN];  // (BK,BN)
  int const tid = threadIdx.x;
  int const m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  int const thread_row = tid / BN, thread_col = tid % BN;  // outputs rows thread_row*TM + i, column thread_col
  int const a_row = tid / BK, a_col = tid % BK;            // the element of the A tile this thread loads
  int const b_row = tid / BN, b_col = tid % BN;            // ... and of the B tile

  float acc[TM] = {};
  for (int k0 = 0; k0 < p.k; k0 += BK) {
    sA[a_row][a_col] = (m0 + a_row < p.m && k0 + a_col < p.k) ? p.a[(m0 + a_row) * p.lda + k0 + a_col] : 0.0f;
    sB[b_row][b_col] = (k0 + b_row < p.k && n0 + b_col < p.n) ? p.b[(k0 + b_row) * p.ldb + n0 + b_col] : 0.0f;
    __syncthreads();
    for (int kk = 0; kk < BK; ++kk) {
      float const b = sB[kk][thread_col];  // one shared load, TM FMAs
      for (int i = 0; i < TM; ++i) acc[i] += sA[thread_row * TM + i][kk] * b;
    }
    __syncthreads();
  }
  int const col = n0 + thread_col;
  for (int i = 0; i < TM; ++i) {
    int const row = m0 + thread_row * TM + i;
    if (row < p.m && col < p.n) {
      float* c = &p.c[row * p.ldc + col];
      *c = p.beta == 0.0f ? p.alpha * acc[i] : p.alpha * acc[i] + p.beta * *c;
    }
  }
}

}  // namespace

void launch_04_1d_thread_tiling(Gemm const& p, cudaStream_t stream) {
  dim3 const grid((p.n + BN - 1) / BN, (p.m + BM - 1) / BM);
  gemm_1d_thread_tiling<<<grid, kThreads, 0, stream>>>(p);
}

}  // namespace tutorial
