// tessel/gemm/kernel/simt_gemm_cp_async.hpp -- the fp32 SIMT GEMM with a multistage cp.async
// mainloop (sm_80+).
//
// The CTA tile, warp tiling, per-stage FFMA loop and epilogue of simt_gemm.hpp; what changes is
// how k-tiles reach shared memory. Instead of global -> registers -> shared (two instructions
// and 4 staging registers per 4 elements), cp.async copies global -> shared directly, Stages - 1
// k-tiles ahead of the FFMAs, with no registers held and no store instructions:
//
//   prologue: issue k-tiles 0 .. Stages-2, one cp.async group each
//   k-tile t: wait until tile t's group has landed (cp.async.wait_group Stages-2); barrier
//             (every thread's copies of tile t are visible, and every thread is done with
//             tile t-1, whose stage is refilled next); issue tile t + Stages - 1 into that
//             stage; FFMAs on tile t's stage
//
// One barrier per k-tile. An operand whose N/M is contiguous arrives as 16-byte copies
// (cp.async.cg) where 128-bit access is legal; a K-contiguous operand is transposed on the way
// by 4-byte copies (cp.async.ca) into sX[k][mn]. Elements outside the matrix are zero-filled
// (src-size 0: nothing is read), so edges need no other care; interior CTAs skip the predicates.
// fp32 only: converting fp16/bf16 on the way needs registers (simt_gemm.hpp does that).
#pragma once

#include <tessel/arch/sm80_copy_cp_async.hpp>
#include <tessel/config.hpp>
#include <tessel/gemm/kernel/simt_gemm.hpp>
#include <tessel/gemm/kernel/simt_gemm_params.hpp>
#include <tessel/schedule/raster.hpp>

#include <cuda_runtime.h>

#include <cstdint>

namespace tessel::kernel {

namespace detail {

// One fp32 operand's global -> shared copies for a tile of MN x BK elements (slots of 4
// consecutive elements along the contiguous dimension, as SimtTileLoader).
template <int MN, int BK, int Threads, bool KMajor>
struct SimtTileCopy {
  static constexpr int Slots = MN * BK / (4 * Threads);
  float const* ptr[Slots];  // first element of each slot in the next k-tile to issue
  std::int64_t step;        // elements between consecutive k-tiles
  int mn_left;              // rows of the tile inside the matrix, at most MN

  static TESSEL_DEVICE int mn_of(int s, int tid) {
    int const v = s * Threads + tid;
    return KMajor ? v / (BK / 4) : (v % (MN / 4)) * 4;
  }
  static TESSEL_DEVICE int kk_of(int s, int tid) {
    int const v = s * Threads + tid;
    return KMajor ? (v % (BK / 4)) * 4 : v / (MN / 4);
  }

  TESSEL_DEVICE void init(float const* base, std::int64_t ld, std::int64_t rows, int tid) {
    step = KMajor ? BK : BK * ld;
    mn_left = rows < MN ? int(rows) : MN;
    TESSEL_UNROLL
    for (int s = 0; s < Slots; ++s)
      ptr[s] = base + (KMajor ? std::int64_t(mn_of(s, tid)) * ld + kk_of(s, tid) : std::int64_t(kk_of(s, tid)) * ld + mn_of(s, tid));
  }

  // Issue the copies of one k-tile into sX[BK][Lds], then step to the next k-tile.
  // full: the whole tile is inside the matrix and 128-bit access is legal (no predicates).
  // Otherwise k_left = min(K - k0, BK) and vec says whether 16-byte copies are legal.
  template <int Lds>
  TESSEL_DEVICE void issue(float (*sX)[Lds], bool full, int k_left, bool vec, int tid) {
    TESSEL_UNROLL
    for (int s = 0; s < Slots; ++s) {
      int const mn = mn_of(s, tid), kk = kk_of(s, tid);
      if (full) {
        if constexpr (KMajor) {
          TESSEL_UNROLL
          for (int j = 0; j < 4; ++j) SM80_CP_ASYNC_CACHEALWAYS<float>::copy(ptr[s][j], sX[kk + j][mn]);
        } else {
          SM80_CP_ASYNC_CACHEGLOBAL<float4>::copy(*reinterpret_cast<float4 const*>(ptr[s]),
                                                  *reinterpret_cast<float4*>(&sX[kk][mn]));
        }
        continue;
      }
      int valid;  // how many of the slot's 4 elements exist
      if constexpr (KMajor) {
        valid = mn >= mn_left ? 0 : min(4, max(0, k_left - kk));
      } else {
        valid = kk >= k_left ? 0 : min(4, max(0, mn_left - mn));
      }
      if (!KMajor && vec && (valid == 4 || valid == 0)) {
        SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<float4>::copy(*reinterpret_cast<float4 const*>(ptr[s]),
                                                      *reinterpret_cast<float4*>(&sX[kk][mn]), valid == 4);
      } else {
        TESSEL_UNROLL
        for (int j = 0; j < 4; ++j) {
          float& dst = KMajor ? sX[kk + j][mn] : sX[kk][mn + j];
          // A zero-filled copy reads nothing; point it at the slot's first element anyway.
          SM80_CP_ASYNC_CACHEALWAYS_ZFILL<float>::copy(j < valid ? ptr[s][j] : ptr[s][0], dst, j < valid);
        }
      }
    }
    TESSEL_UNROLL
    for (int s = 0; s < Slots; ++s) ptr[s] += step;
  }
};

}  // namespace detail

// The work of one CTA on one batch (fp32 operands): D tile (tile_m, tile_n).
template <class Tile, int Stages, class TOut, bool AKMajor, bool BKMajor>
TESSEL_DEVICE void simt_gemm_cp_async_block(SimtGemmParams const& p, int tile_m, int tile_n, std::int64_t batch, int tid,
                                            float (*sA)[Tile::BK][Tile::LdsA], float (*sB)[Tile::BK][Tile::LdsB]) {
  static_assert(Stages >= 2, "a cp.async pipeline needs at least 2 stages; raise Stages");
  constexpr int BM = Tile::BM, BN = Tile::BN, BK = Tile::BK;
  std::int64_t const m0 = std::int64_t(tile_m) * BM, n0 = std::int64_t(tile_n) * BN;
  float const* gA = static_cast<float const*>(p.a) + batch * p.batch_stride_a + (AKMajor ? m0 * p.lda : m0);
  float const* gB = static_cast<float const*>(p.b) + batch * p.batch_stride_b + (BKMajor ? n0 * p.ldb : n0);
  detail::SimtTileCopy<BM, BK, Tile::kThreads, AKMajor> tAgA;  // (4 elements, slots) per thread
  detail::SimtTileCopy<BN, BK, Tile::kThreads, BKMajor> tBgB;
  tAgA.init(gA, p.lda, p.m - m0, tid);
  tBgB.init(gB, p.ldb, p.n - n0, tid);

  int const warp = tid / 32, lane = tid % 32;
  int const row0 = (warp / Tile::WarpsN) * Tile::WM + (lane / Tile::LanesN) * 4;
  int const col0 = (warp % Tile::WarpsN) * Tile::WN + (lane % Tile::LanesN) * 4;

  float tCrC[Tile::TM][Tile::TN];  // (TM,TN) accumulators
  TESSEL_UNROLL
  for (int i = 0; i < Tile::TM; ++i) {
    TESSEL_UNROLL
    for (int j = 0; j < Tile::TN; ++j) tCrC[i][j] = 0.0f;
  }

  // (k-tile counts fit in int: the host adapter checks K < 2^31 * BK)
  int const k_tiles = int((p.k + BK - 1) / BK);
  bool const interior = p.a_vec && p.b_vec && m0 + BM <= p.m && n0 + BN <= p.n;
  int const unpredicated_k_tiles = interior ? int(p.k / BK) : 0;
  auto issue = [&](int t, int stage) {  // tile t into `stage`, then close the group (empty past the end)
    if (t < k_tiles) {
      std::int64_t const r = p.k - std::int64_t(t) * BK;
      int const k_left = r >= BK ? BK : int(r);
      bool const full = t < unpredicated_k_tiles;
      tAgA.issue(sA[stage], full, k_left, p.a_vec, tid);
      tBgB.issue(sB[stage], full, k_left, p.b_vec, tid);
    }
    cp_async_fence();
  };

  TESSEL_UNROLL
  for (int s = 0; s < Stages - 1; ++s) issue(s, s);
  int read_stage = 0, write_stage = Stages - 1;
  for (int t = 0; t < k_tiles; ++t) {
    cp_async_wait<Stages - 2>();  // this thread's copies of tile t have landed
    __syncthreads();              // everyone's have, and everyone is done with tile t - 1
    issue(t + Stages - 1, write_stage);
    simt_mma_stage<Tile>(sA[read_stage], sB[read_stage], row0, col0, tCrC);
    read_stage = read_stage == Stages - 1 ? 0 : read_stage + 1;
    write_stage = write_stage == Stages - 1 ? 0 : write_stage + 1;
  }
  cp_async_wait<0>();
  __syncthreads();  // the stages are free before another batch reuses them

  simt_epilogue<Tile, TOut>(p, m0, n0, batch, row0, col0, tCrC);
}

// One CTA per D tile, batches along blockIdx.y. AKMajor/BKMajor must match p.a_k_major/b_k_major.
template <class Tile, int Stages, bool AKMajor, bool BKMajor>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocksPerSM) simt_gemm_cp_async_kernel(SimtGemmParams p) {
  __shared__ __align__(16) float sA[Stages][Tile::BK][Tile::LdsA];  // (stage,BK,BM+pad)
  __shared__ __align__(16) float sB[Stages][Tile::BK][Tile::LdsB];  // (stage,BK,BN+pad)
  GroupedRaster const raster{p.tiles_m, p.tiles_n, p.raster_order, p.raster_group};
  GemmCoord const tile = raster(blockIdx.x);
  for (std::int64_t batch = blockIdx.y; batch < p.batch; batch += gridDim.y)
    simt_gemm_cp_async_block<Tile, Stages, float, AKMajor, BKMajor>(p, int(tile.m()), int(tile.n()), batch,
                                                                     int(threadIdx.x), sA, sB);
}

}  // namespace tessel::kernel
