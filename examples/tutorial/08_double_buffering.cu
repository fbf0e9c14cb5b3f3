// 08_double_buffering.cu -- two shared-memory stages: the next tile loads while this one computes.
//
// Change from 07: in 07 every k-tile is load -> barrier -> compute -> barrier, and the warps wait
// for global memory with nothing to do. Now the CTA keeps two stages of sA/sB. At the top of
// k-tile t it issues the global loads of tile t+1 into registers, computes tile t from stage t%2
// while those loads are in flight, then writes them to the other stage. The other stage was last
// read during tile t-1, before the barrier that ended it, so one barrier per k-tile suffices.
// This is the mainloop of tessel/gemm/kernel/simt_gemm.hpp (the library's simt_64x64x8), reduced to
// row-major fp32; for large problems the library goes further (simt_gemm_pipelined.hpp).
#include "tutorial.hpp"

#include <cstdint>

namespace tutorial {

namespace {

constexpr int BM = 128, BN = 128, BK = 8;
constexpr int kWarpsM = 4, kWarpsN = 2, kThreads = 32 * kWarpsM * kWarpsN;  // 256
constexpr int WM = BM / kWarpsM, WN = BN / kWarpsN;                         // 32 x 64 warp tile
constexpr int kLanesM = 4, kLanesN = 8;                                     // lanes of a warp
constexpr int TM = 8, TN = 8;                                               // 2 x 2 sub-tiles of 4x4
constexpr int kPad = 4;
static_assert(WM == 2 * 4 * kLanesM && WN == 2 * 4 * kLanesN, "each lane owns 2 x 2 sub-tiles of 4x4");

__device__ float4 load4(float const* p, bool vec, int valid) {
  if (vec && valid == 4) return *reinterpret_cast<float4 const*>(p);
  return make_float4(valid > 0 ? p[0] : 0.0f, valid > 1 ? p[1] : 0.0f, valid > 2 ? p[2] : 0.0f, valid > 3 ? p[3] : 0.0f);
}

__global__ void __launch_bounds__(kThreads, 2) gemm_double_buffering(Gemm p, bool vec_a, bool vec_b, bool vec_c) {
  __shared__ __align__(16) float sA[2][BK][BM + kPad];  // (stage,BK,BM): A transposed, padded rows
  __shared__ __align__(16) float sB[2][BK][BN];         // (stage,BK,BN)
  int const tid = threadIdx.x;
  int const m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  int const warp = tid / 32, lane = tid % 32;
  int const row0 = (warp / kWarpsN) * WM + (lane / kLanesN) * 4;  // first row of the lane's first sub-tile
  int const col0 = (warp % kWarpsN) * WN + (lane % kLanesN) * 4;  // first column
  int const a_row = tid / (BK / 4), a_k = (tid % (BK / 4)) * 4;
  int const b_k = tid / (BN / 4), b_col = (tid % (BN / 4)) * 4;

  // Global -> registers for the k-tile starting at k0, and registers -> shared stage `st`.
  float4 a, b;
  auto load_tile = [&](int k0) {
    int const a_valid = m0 + a_row < p.m ? min(4, max(0, p.k - (k0 + a_k))) : 0;
    a = load4(&p.a[(m0 + a_row) * p.lda + k0 + a_k], vec_a, a_valid);
    int const b_valid = k0 + b_k < p.k ? min(4, max(0, p.n - (n0 + b_col))) : 0;
    b = load4(&p.b[(k0 + b_k) * p.ldb + n0 + b_col], vec_b, b_valid);
  };
  auto store_tile = [&](int st) {
    sA[st][a_k + 0][a_row] = a.x, sA[st][a_k + 1][a_row] = a.y, sA[st][a_k + 2][a_row] = a.z, sA[st][a_k + 3][a_row] = a.w;
    *reinterpret_cast<float4*>(&sB[st][b_k][b_col]) = b;
  };

  float acc[TM][TN] = {};
  float rA[TM], rB[TN];
  if (p.k > 0) {
    load_tile(0);
    store_tile(0);
    __syncthreads();
  }
  for (int k0 = 0, st = 0; k0 < p.k; k0 += BK, st ^= 1) {
    bool const has_next = k0 + BK < p.k;
    if (has_next) load_tile(k0 + BK);  // in flight during the FMAs below
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
#pragma unroll
      for (int s = 0; s < 2; ++s) {
        *reinterpret_cast<float4*>(&rA[4 * s]) = *reinterpret_cast<float4 const*>(&sA[st][kk][row0 + s * 4 * kLanesM]);
        *reinterpret_cast<float4*>(&rB[4 * s]) = *reinterpret_cast<float4 const*>(&sB[st][kk][col0 + s * 4 * kLanesN]);
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += rA[i] * rB[j];
    }
    if (has_next) store_tile(st ^ 1);
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    int const row = m0 + row0 + (i / 4) * 4 * kLanesM + i % 4;
    if (row >= p.m) continue;
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      int const col = n0 + col0 + s * 4 * kLanesN;
      float const* r = &acc[i][4 * s];
      float* c = &p.c[row * p.ldc + col];
      if (vec_c && col + 3 < p.n) {
        float4 v = make_float4(p.alpha * r[0], p.alpha * r[1], p.alpha * r[2], p.alpha * r[3]);
        if (p.beta != 0.0f) {
          float4 const old = *reinterpret_cast<float4 const*>(c);
          v.x += p.beta * old.x, v.y += p.beta * old.y, v.z += p.beta * old.z, v.w += p.beta * old.w;
        }
        *reinterpret_cast<float4*>(c) = v;
      } else {
        for (int j = 0; j < 4 && col + j < p.n; ++j)
          c[j] = p.beta == 0.0f ? p.alpha * r[j] : p.alpha * r[j] + p.beta * c[j];
      }
    }
  }
}

bool aligned16(void const* ptr, int ld) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && ld % 4 == 0; }

}  // namespace

void launch_08_double_buffering(Gemm const& p, cudaStream_t stream) {
  dim3 const grid((p.n + BN - 1) / BN, (p.m + BM - 1) / BM);
  gemm_double_buffering<<<grid, kThreads, 0, stream>>>(p, aligned16(p.a, p.lda), aligned16(p.b, p.ldb), aligned16(p.c, p.ldc));
}

}  // namespace tutorial
