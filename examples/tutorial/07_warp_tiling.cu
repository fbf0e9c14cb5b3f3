// 07_warp_tiling.cu -- warps own 32x64 blocks of C; lanes take interleaved 4x4 sub-tiles.
//
// Change from 06: the thread -> output map. In 06 a thread owned 8 consecutive rows and columns,
// so at one k the 8 lanes of a quarter-warp read float4s of sB that are 32 bytes apart: 2-way bank
// conflicts, and 16 distinct rows of sA per warp. Now the 8 warps tile the 128x128 CTA tile as
// 4 (M) x 2 (N) warp tiles of 32x64; a warp's lanes form a 4 x 8 grid, and each lane owns 2 x 2
// sub-tiles of 4x4, spaced 16 rows and 32 columns apart:
//
//   warp tile (32 x 64), lane (lm, ln) owns rows lm*4 + {0..3} and 16 + lm*4 + {0..3},
//                        columns ln*4 + {0..3} and 32 + ln*4 + {0..3}
//
// so a quarter-warp's float4 reads of sB are 8 consecutive 16-byte words (conflict-free) and of
// sA one broadcast word. sA's rows get 4 floats of padding so that the transposing stores of A
// (4 floats of one row to 4 rows of sA) do not land on one bank either.
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

__global__ void __launch_bounds__(kThreads, 2) gemm_warp_tiling(Gemm p, bool vec_a, bool vec_b, bool vec_c) {
  __shared__ __align__(16) float sA[BK][BM + kPad];  // (BK,BM): A transposed, padded rows
  __shared__ __align__(16) float sB[BK][BN];         // (BK,BN)
  int const tid = threadIdx.x;
  int const m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  int const warp = tid / 32, lane = tid % 32;
  int const row0 = (warp / kWarpsN) * WM + (lane / kLanesN) * 4;  // first row of the lane's first sub-tile
  int const col0 = (warp % kWarpsN) * WN + (lane % kLanesN) * 4;  // first column
  int const a_row = tid / (BK / 4), a_k = (tid % (BK / 4)) * 4;
  int const b_k = tid / (BN / 4), b_col = (tid % (BN / 4)) * 4;

  float acc[TM][TN] = {};
  float rA[TM], rB[TN];
  for (int k0 = 0; k0 < p.k; k0 += BK) {
    int const a_valid = m0 + a_row < p.m ? min(4, max(0, p.k - (k0 + a_k))) : 0;
    float4 const a = load4(&p.a[(m0 + a_row) * p.lda + k0 + a_k], vec_a, a_valid);
    sA[a_k + 0][a_row] = a.x, sA[a_k + 1][a_row] = a.y, sA[a_k + 2][a_row] = a.z, sA[a_k + 3][a_row] = a.w;
    int const b_valid = k0 + b_k < p.k ? min(4, max(0, p.n - (n0 + b_col))) : 0;
    *reinterpret_cast<float4*>(&sB[b_k][b_col]) = load4(&p.b[(k0 + b_k) * p.ldb + n0 + b_col], vec_b, b_valid);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
#pragma unroll
      for (int s = 0; s < 2; ++s) {
        *reinterpret_cast<float4*>(&rA[4 * s]) = *reinterpret_cast<float4 const*>(&sA[kk][row0 + s * 4 * kLanesM]);
        *reinterpret_cast<float4*>(&rB[4 * s]) = *reinterpret_cast<float4 const*>(&sB[kk][col0 + s * 4 * kLanesN]);
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += rA[i] * rB[j];
    }
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

void launch_07_warp_tiling(Gemm const& p, cudaStream_t stream) {
  dim3 const grid((p.n + BN - 1) / BN, (p.m + BM - 1) / BM);
  gemm_warp_tiling<<<grid, kThreads, 0, stream>>>(p, aligned16(p.a, p.lda), aligned16(p.b, p.ldb), aligned16(p.c, p.ldc));
}

}  // namespace tutorial
