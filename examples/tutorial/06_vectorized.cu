// 06_vectorized.cu -- 128-bit loads and stores; A transposed in shared memory.
//
// Change from 05: each thread moves 4 consecutive floats per instruction. From global memory it
// loads one float4 of A (4 consecutive k of one row) and one float4 of B (4 consecutive n of one
// k); A is stored TRANSPOSED, sA[k][m], so that a thread's 8 values of A at one k are contiguous
// too, and the inner loop reads sA and sB with 2 + 2 float4 loads instead of 16 scalar ones. C is
// written 4 floats at a time. A 128-bit access needs a 16-byte aligned address: where a pointer or
// a leading dimension is not a multiple of 4 floats (e.g. K = 4099), or a float4 would cross the
// matrix edge, the same 4 elements are moved one by one instead.
#include "tutorial.hpp"

#include <cstdint>

namespace tutorial {

namespace {

constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
constexpr int kThreads = (BM / TM) * (BN / TN);  // 256
static_assert(BM * BK == 4 * kThreads && BK * BN == 4 * kThreads, "each thread loads one float4 of A and of B");

__device__ float4 load4(float const* p, bool vec, int valid) {  // valid: how many of the 4 exist
  if (vec && valid == 4) return *reinterpret_cast<float4 const*>(p);
  return make_float4(valid > 0 ? p[0] : 0.0f, valid > 1 ? p[1] : 0.0f, valid > 2 ? p[2] : 0.0f, valid > 3 ? p[3] : 0.0f);
}

__global__ void __launch_bounds__(kThreads) gemm_vectorized(Gemm p, bool vec_a, bool vec_b, bool vec_c) {
  __shared__ __align__(16) float sA[BK][BM];  // (BK,BM): A transposed
  __shared__ __align__(16) float sB[BK][BN];  // (BK,BN)
  int const tid = threadIdx.x;
  int const m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  int const thread_row = tid / (BN / TN), thread_col = tid % (BN / TN);
  int const a_row = tid / (BK / 4), a_k = (tid % (BK / 4)) * 4;  // this thread's float4 of the A tile
  int const b_k = tid / (BN / 4), b_col = (tid % (BN / 4)) * 4;  // ... and of the B tile

  float acc[TM][TN] = {};
  float rA[TM], rB[TN];
  for (int k0 = 0; k0 < p.k; k0 += BK) {
    int const a_valid = m0 + a_row < p.m ? min(4, max(0, p.k - (k0 + a_k))) : 0;
    float4 const a = load4(&p.a[(m0 + a_row) * p.lda + k0 + a_k], vec_a, a_valid);
    sA[a_k + 0][a_row] = a.x, sA[a_k + 1][a_row] = a.y, sA[a_k + 2][a_row] = a.z, sA[a_k + 3][a_row] = a.w;
    int const b_valid = k0 + b_k < p.k ? min(4, max(0, p.n - (n0 + b_col))) : 0;
    *reinterpret_cast<float4*>(&sB[b_k][b_col]) = load4(&p.b[(k0 + b_k) * p.ldb + n0 + b_col], vec_b, b_valid);
    __syncthreads();
    for (int kk = 0; kk < BK; ++kk) {
      for (int i = 0; i < TM; i += 4) *reinterpret_cast<float4*>(&rA[i]) = *reinterpret_cast<float4 const*>(&sA[kk][thread_row * TM + i]);
      for (int j = 0; j < TN; j += 4) *reinterpret_cast<float4*>(&rB[j]) = *reinterpret_cast<float4 const*>(&sB[kk][thread_col * TN + j]);
      for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) acc[i][j] += rA[i] * rB[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < TM; ++i) {
    int const row = m0 + thread_row * TM + i;
    if (row >= p.m) continue;
    for (int j = 0; j < TN; j += 4) {
      int const col = n0 + thread_col * TN + j;
      float* c = &p.c[row * p.ldc + col];
      if (vec_c && col + 3 < p.n) {
        float4 r = make_float4(p.alpha * acc[i][j], p.alpha * acc[i][j + 1], p.alpha * acc[i][j + 2], p.alpha * acc[i][j + 3]);
        if (p.beta != 0.0f) {
          float4 const old = *reinterpret_cast<float4 const*>(c);
          r.x += p.beta * old.x, r.y += p.beta * old.y, r.z += p.beta * old.z, r.w += p.beta * old.w;
        }
        *reinterpret_cast<float4*>(c) = r;
      } else {
        for (int jj = 0; jj < 4 && col + jj < p.n; ++jj)
          c[jj] = p.beta == 0.0f ? p.alpha * acc[i][j + jj] : p.alpha * acc[i][j + jj] + p.beta * c[jj];
      }
    }
  }
}

bool aligned16(void const* ptr, int ld) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && ld % 4 == 0; }

}  // namespace

void launch_06_vectorized(Gemm const& p, cudaStream_t stream) {
  dim3 const grid((p.n + BN - 1) / BN, (p.m + BM - 1) / BM);
  gemm_vectorized<<<grid, kThreads, 0, stream>>>(p, aligned16(p.a, p.lda), aligned16(p.b, p.ldb), aligned16(p.c, p.ldc));
}

}  // namespace tutorial
