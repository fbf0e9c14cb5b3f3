// tessel/gemm/kernel/simt_gemm.hpp -- the double-buffered SIMT GEMM: CUDA-core FFMA, fp32 accumulate.
//
// The library runs it for small problems (registry entry simt_64x64x8); large ones run the
// pipelined mainloop of simt_gemm_pipelined.hpp (simt_128x128x8_128t), which reuses SimtTile
// from here, and simt_gemm_cp_async.hpp builds on its stage and epilogue.
//
// Rung 08 of the tutorial ladder (examples/tutorial/08_double_buffering.cu), generalised: any
// dtype of the host API (converted to fp32 on load, rounded on store; fp8 operands are
// RuntimeFp8, their formats run-time flags, element_io.hpp), A and B in either order,
// ragged M, N, K, batches, alpha/beta, 64-bit sizes and offsets. Glossary of tile names (gA, sA,
// tCrC ...): docs/glossary.md.
//
//   D (M x N, row-major) = alpha * A (M x K) * B (K x N) + beta * C
//
// The host adapter (src/gemm/) brings every call to this form: a column-major D is computed as
// D^T = B^T A^T, which swaps A and B and flips their orders. Run-time arguments: which of an
// operand's two dimensions is contiguous (k_major), and whether 128-bit (4-element) loads are
// legal (vec: pointer, leading dimension and batch stride all multiples of 4 elements). The
// orders also select the kernel instance (the host launches one of four).
//
// One CTA computes a BM x BN tile of D. Per k-tile of BK:
//   global -> registers (4 consecutive elements per slot, converted to float)
//          -> shared memory, both operands stored k-major-out: sA[k][m], sB[k][n]
//             (a K-contiguous operand is transposed on the way; rows padded by 4 floats so the
//              transposing stores do not conflict on banks)
//          -> registers: each thread reads its 4-float slivers of sA[k] and sB[k] (128-bit LDS)
//             and does TM x TN FFMAs into its accumulators tCrC.
// Double buffered: two shared-memory stages; the next k-tile's global loads are issued before
// the current tile's FFMAs and land in the other stage after them, so one barrier per k-tile.
// Beyond rung 08: the operand orders are template parameters of the kernel (one mainloop per
// instance keeps the register allocation tight), and interior CTAs load full k-tiles with
// unpredicated 128-bit loads; the bounds checks run only for edge CTAs and the last, partial k-tile.
// Warp tiling: a warp owns a WM x WN block of D; its lanes form a LanesM x LanesN grid, each
// thread owns SubM x SubN 4x4 sub-tiles spaced 4*LanesM rows and 4*LanesN columns apart, so a
// quarter-warp's 128-bit shared loads touch at most 8 distinct 16-byte words (no conflicts).
#pragma once

#include <tessel/config.hpp>
#include <tessel/gemm/kernel/element_io.hpp>
#include <tessel/gemm/kernel/simt_gemm_params.hpp>
#include <tessel/schedule/raster.hpp>

#include <cuda_runtime.h>

#include <cstdint>

namespace tessel::kernel {

// The CTA tile, the warp grid and each thread's share of it.
template <int BM_, int BN_, int BK_, int WarpsM_, int WarpsN_, int LanesM_, int MinBlocksPerSM_>
struct SimtTile {
  static constexpr int BM = BM_, BN = BN_, BK = BK_;
  static constexpr int WarpsM = WarpsM_, WarpsN = WarpsN_;
  static constexpr int LanesM = LanesM_, LanesN = 32 / LanesM_;
  static constexpr int kThreads = 32 * WarpsM * WarpsN;
  static constexpr int kMinBlocksPerSM = MinBlocksPerSM_;
  static constexpr int WM = BM / WarpsM, WN = BN / WarpsN;                 // warp tile
  static constexpr int SubM = WM / (4 * LanesM), SubN = WN / (4 * LanesN);  // 4x4 sub-tiles per thread
  static constexpr int TM = 4 * SubM, TN = 4 * SubN;                       // thread tile
  static constexpr int kPad = 4;                                           // floats per smem row
  static constexpr int LdsA = BM + kPad, LdsB = BN + kPad;

  static_assert(32 % LanesM_ == 0, "a warp's 32 lanes must split evenly into LanesM rows; make LanesM divide 32");
  static_assert(BM % WarpsM == 0 && BN % WarpsN == 0, "the warp grid must divide the CTA tile; change WarpsM/WarpsN");
  static_assert(SubM >= 1 && WM % (4 * LanesM) == 0,
                "a warp tile's rows must be a multiple of 4 * LanesM (4x4 sub-tiles per lane); change BM, WarpsM or LanesM");
  static_assert(SubN >= 1 && WN % (4 * LanesN) == 0,
                "a warp tile's columns must be a multiple of 4 * LanesN; change BN, WarpsN or LanesM");
  static_assert(BK % 4 == 0, "K-contiguous operands load 4 consecutive k per slot; make BK a multiple of 4");
  static_assert((BM * BK) % (4 * kThreads) == 0 && (BN * BK) % (4 * kThreads) == 0,
                "each thread loads whole 4-element slots of the A and B tiles; make BM*BK and BN*BK multiples of 4*threads");
};

namespace detail {

// One operand's global -> register -> shared path for a tile of MN x BK elements. KMajor: the
// operand's K is contiguous in memory (it is transposed on its way into sX[k][mn]).
// Slot s of thread `tid` covers 4 consecutive elements along the contiguous dimension, at tile
// coordinates (mn_of, kk_of); they are recomputed from tid where needed (shifts and masks), so
// the loader keeps only a pointer and 4 staged floats per slot alive across the mainloop.
template <class T, int MN, int BK, int Threads, bool KMajor>
struct SimtTileLoader {
  static constexpr int Slots = MN * BK / (4 * Threads);
  T const* ptr[Slots];  // first element of each slot in the current k-tile
  float4 staged[Slots];
  ElementReader<T> reader;  // converts to float on load
  std::int64_t step;    // elements between consecutive k-tiles
  int mn_left;          // rows of the tile inside the matrix, at most MN

  static TESSEL_DEVICE int mn_of(int s, int tid) {
    int const v = s * Threads + tid;
    return KMajor ? v / (BK / 4) : (v % (MN / 4)) * 4;
  }
  static TESSEL_DEVICE int kk_of(int s, int tid) {
    int const v = s * Threads + tid;
    return KMajor ? (v % (BK / 4)) * 4 : v / (MN / 4);
  }

  // base: the tile's (mn = 0, k = 0) element; ld: leading dimension; rows: rows of the tile
  // inside the matrix (may exceed MN).
  TESSEL_DEVICE void init(T const* base, std::int64_t ld, std::int64_t rows, int tid, ElementReader<T> r) {
    reader = r;
    step = KMajor ? BK : BK * ld;
    mn_left = rows < MN ? int(rows) : MN;
    TESSEL_UNROLL
    for (int s = 0; s < Slots; ++s)
      ptr[s] = base + (KMajor ? std::int64_t(mn_of(s, tid)) * ld + kk_of(s, tid) : std::int64_t(kk_of(s, tid)) * ld + mn_of(s, tid));
  }

  // Global -> registers when the whole k-tile is inside the matrix and 128-bit loads are legal.
  TESSEL_DEVICE void load_full() {
    TESSEL_UNROLL
    for (int s = 0; s < Slots; ++s) staged[s] = reader.load4(ptr[s]);
  }

  // Global -> registers at an edge; k_left = min(K - k0, BK) valid k; vec: 128-bit loads legal.
  TESSEL_DEVICE void load_guarded(int k_left, bool vec, int tid) {
    TESSEL_UNROLL
    for (int s = 0; s < Slots; ++s) {
      int const mn = mn_of(s, tid), kk = kk_of(s, tid);
      int valid;  // how many of the slot's 4 elements exist
      if constexpr (KMajor) {
        valid = mn >= mn_left ? 0 : min(4, max(0, k_left - kk));
      } else {
        valid = kk >= k_left ? 0 : min(4, max(0, mn_left - mn));
      }
      if (vec && valid == 4) {
        staged[s] = reader.load4(ptr[s]);
      } else {
        float e[4];
        TESSEL_UNROLL
        for (int j = 0; j < 4; ++j) e[j] = j < valid ? reader.load1(ptr[s] + j) : 0.0f;
        staged[s] = make_float4(e[0], e[1], e[2], e[3]);
      }
    }
  }

  TESSEL_DEVICE void advance() {
    TESSEL_UNROLL
    for (int s = 0; s < Slots; ++s) ptr[s] += step;
  }

  // Registers -> shared memory tile sX[BK][Lds] (k outer, mn inner).
  template <int Lds>
  TESSEL_DEVICE void store(float (*sX)[Lds], int tid) const {
    TESSEL_UNROLL
    for (int s = 0; s < Slots; ++s) {
      int const mn = mn_of(s, tid), kk = kk_of(s, tid);
      if constexpr (KMajor) {  // transpose: 4 consecutive k go to 4 rows
        sX[kk + 0][mn] = staged[s].x;
        sX[kk + 1][mn] = staged[s].y;
        sX[kk + 2][mn] = staged[s].z;
        sX[kk + 3][mn] = staged[s].w;
      } else {
        *reinterpret_cast<float4*>(&sX[kk][mn]) = staged[s];
      }
    }
  }
};

}  // namespace detail

// tCrC += sA[k] (x) sB[k] for the BK k of one shared-memory stage. row0/col0: the thread's first
// row and column in the CTA tile (its sub-tiles are 4*LanesM rows and 4*LanesN columns apart).
template <class Tile>
TESSEL_DEVICE void simt_mma_stage(float const (*sAk)[Tile::LdsA], float const (*sBk)[Tile::LdsB], int row0, int col0,
                                  float (&tCrC)[Tile::TM][Tile::TN]) {
  TESSEL_UNROLL
  for (int kk = 0; kk < Tile::BK; ++kk) {
    float tCrA[Tile::TM], tCrB[Tile::TN];  // this thread's slivers of sA[kk] and sB[kk]
    TESSEL_UNROLL
    for (int sm = 0; sm < Tile::SubM; ++sm) {
      float4 const v = *reinterpret_cast<float4 const*>(&sAk[kk][row0 + sm * 4 * Tile::LanesM]);
      tCrA[4 * sm + 0] = v.x, tCrA[4 * sm + 1] = v.y, tCrA[4 * sm + 2] = v.z, tCrA[4 * sm + 3] = v.w;
    }
    TESSEL_UNROLL
    for (int sn = 0; sn < Tile::SubN; ++sn) {
      float4 const v = *reinterpret_cast<float4 const*>(&sBk[kk][col0 + sn * 4 * Tile::LanesN]);
      tCrB[4 * sn + 0] = v.x, tCrB[4 * sn + 1] = v.y, tCrB[4 * sn + 2] = v.z, tCrB[4 * sn + 3] = v.w;
    }
    TESSEL_UNROLL
    for (int i = 0; i < Tile::TM; ++i) {
      TESSEL_UNROLL
      for (int j = 0; j < Tile::TN; ++j) tCrC[i][j] = fmaf(tCrA[i], tCrB[j], tCrC[i][j]);
    }
  }
}

// Epilogue: D = alpha * tCrC + beta * C for the thread's outputs, 4 columns at a time where
// aligned and inside N; C is read only when beta != 0.
template <class Tile, class TOut>
TESSEL_DEVICE void simt_epilogue(SimtGemmParams const& p, std::int64_t m0, std::int64_t n0, std::int64_t batch, int row0,
                                 int col0, float const (&tCrC)[Tile::TM][Tile::TN]) {
  TOut* gD = static_cast<TOut*>(p.d) + batch * p.batch_stride_d;
  TOut const* gC = static_cast<TOut const*>(p.c) + batch * p.batch_stride_c;
  bool const read_c = p.beta != 0.0f;
  TESSEL_UNROLL
  for (int sm = 0; sm < Tile::SubM; ++sm) {
    TESSEL_UNROLL
    for (int i = 0; i < 4; ++i) {
      std::int64_t const row = m0 + row0 + sm * 4 * Tile::LanesM + i;
      if (row >= p.m) continue;
      TOut* d_row = gD + row * p.ldd;
      TOut const* c_row = gC + row * p.ldc;
      TESSEL_UNROLL
      for (int sn = 0; sn < Tile::SubN; ++sn) {
        std::int64_t const col = n0 + col0 + sn * 4 * Tile::LanesN;
        float const* acc = &tCrC[4 * sm + i][4 * sn];
        if (col + 3 < p.n && p.d_vec && (!read_c || p.c_vec)) {
          float4 r = make_float4(p.alpha * acc[0], p.alpha * acc[1], p.alpha * acc[2], p.alpha * acc[3]);
          if (read_c) {
            float4 const c = load_float4(c_row + col);
            r.x = fmaf(p.beta, c.x, r.x), r.y = fmaf(p.beta, c.y, r.y);
            r.z = fmaf(p.beta, c.z, r.z), r.w = fmaf(p.beta, c.w, r.w);
          }
          store_float4(d_row + col, r);
        } else {
          TESSEL_UNROLL
          for (int j = 0; j < 4; ++j) {
            if (col + j >= p.n) break;
            float r = p.alpha * acc[j];
            if (read_c) r = fmaf(p.beta, load_float(c_row + col + j), r);
            d_row[col + j] = from_float<TOut>(r);
          }
        }
      }
    }
  }
}

// The work of one CTA on one batch: D tile (tile_m, tile_n). `tid` is the thread's index in the
// CTA. AKMajor/BKMajor: which dimension of A and B is contiguous (compile-time, so the
// mainloop carries no layout branches).
template <class Tile, class TIn, class TOut, bool AKMajor, bool BKMajor>
TESSEL_DEVICE void simt_gemm_block(SimtGemmParams const& p, int tile_m, int tile_n, std::int64_t batch, int tid,
                                   float (*sA)[Tile::BK][Tile::LdsA], float (*sB)[Tile::BK][Tile::LdsB]) {
  constexpr int BM = Tile::BM, BN = Tile::BN, BK = Tile::BK, TM = Tile::TM, TN = Tile::TN;
  std::int64_t const m0 = std::int64_t(tile_m) * BM, n0 = std::int64_t(tile_n) * BN;

  // gA: this CTA's rows of A (BM x K), gB: its columns of B (K x BN)
  TIn const* gA = static_cast<TIn const*>(p.a) + batch * p.batch_stride_a + (AKMajor ? m0 * p.lda : m0);
  TIn const* gB = static_cast<TIn const*>(p.b) + batch * p.batch_stride_b + (BKMajor ? n0 * p.ldb : n0);

  detail::SimtTileLoader<TIn, BM, BK, Tile::kThreads, AKMajor> tAgA;  // (4 elements, slots) per thread
  detail::SimtTileLoader<TIn, BN, BK, Tile::kThreads, BKMajor> tBgB;
  tAgA.init(gA, p.lda, p.m - m0, tid, element_reader<TIn>(p.a_e5m2));
  tBgB.init(gB, p.ldb, p.n - n0, tid, element_reader<TIn>(p.b_e5m2));

  // This thread's place in the warp grid: first row of each 4-row sub-tile, first column of each 4-column one.
  int const warp = tid / 32, lane = tid % 32;
  int const warp_m = warp / Tile::WarpsN, warp_n = warp % Tile::WarpsN;
  int const lane_m = lane / Tile::LanesN, lane_n = lane % Tile::LanesN;
  int const row0 = warp_m * Tile::WM + lane_m * 4;  // + sm * 4 * LanesM
  int const col0 = warp_n * Tile::WN + lane_n * 4;  // + sn * 4 * LanesN

  float tCrC[TM][TN];  // (TM,TN) accumulators
  TESSEL_UNROLL
  for (int i = 0; i < TM; ++i) {
    TESSEL_UNROLL
    for (int j = 0; j < TN; ++j) tCrC[i][j] = 0.0f;
  }

  // Interior CTAs with 128-bit-legal operands load full k-tiles without predicates; the last
  // (partial) k-tile and edge CTAs take the guarded path.
  // (k-tile counts fit in int: the host adapter checks K < 2^31 * BK)
  int const k_tiles = int((p.k + BK - 1) / BK);
  bool const interior = p.a_vec && p.b_vec && m0 + BM <= p.m && n0 + BN <= p.n;
  int const unpredicated_k_tiles = interior ? int(p.k / BK) : 0;
  auto load_tile = [&](int t) {
    if (t < unpredicated_k_tiles) {
      tAgA.load_full();
      tBgB.load_full();
    } else {
      std::int64_t const r = p.k - std::int64_t(t) * BK;
      int const k_left = r >= BK ? BK : int(r);
      tAgA.load_guarded(k_left, p.a_vec, tid);
      tBgB.load_guarded(k_left, p.b_vec, tid);
    }
  };

  // One k-tile t computed from stage (cur) while tile t + 1 travels to stage (next).
  auto k_tile = [&](int t, float (*sAcur)[Tile::LdsA], float (*sBcur)[Tile::LdsB], float (*sAnext)[Tile::LdsA],
                    float (*sBnext)[Tile::LdsB]) {
    bool const has_next = t + 1 < k_tiles;
    if (has_next) {  // issue the next k-tile's global loads; they land while we compute
      tAgA.advance();
      tBgB.advance();
      load_tile(t + 1);
    }
    simt_mma_stage<Tile>(sAcur, sBcur, row0, col0, tCrC);
    if (has_next) {  // the other stage was last read before the previous barrier: free to overwrite
      tAgA.store(sAnext, tid);
      tBgB.store(sBnext, tid);
    }
    __syncthreads();
  };

  if (k_tiles > 0) {
    load_tile(0);
    tAgA.store(sA[0], tid);
    tBgB.store(sB[0], tid);
    __syncthreads();
  }
  for (int t = 0; t < k_tiles; ++t) {
    int const st = int(t & 1);
    k_tile(t, sA[st], sB[st], sA[st ^ 1], sB[st ^ 1]);
  }

  simt_epilogue<Tile, TOut>(p, m0, n0, batch, row0, col0, tCrC);
}

// One CTA per D tile (blockIdx.x through tessel::GroupedRaster), batches along blockIdx.y
// (looping past 65535). AKMajor/BKMajor must match p.a_k_major/p.b_k_major (the host picks the
// instance): one mainloop per kernel keeps the register allocation tight.
template <class Tile, class TIn, class TOut, bool AKMajor, bool BKMajor>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocksPerSM) simt_gemm_kernel(SimtGemmParams p) {
  __shared__ __align__(16) float sA[2][Tile::BK][Tile::LdsA];  // (stage,BK,BM+pad)
  __shared__ __align__(16) float sB[2][Tile::BK][Tile::LdsB];  // (stage,BK,BN+pad)
  GroupedRaster const raster{p.tiles_m, p.tiles_n, p.raster_order, p.raster_group};
  GemmCoord const tile = raster(blockIdx.x);
  for (std::int64_t batch = blockIdx.y; batch < p.batch; batch += gridDim.y)
    simt_gemm_block<Tile, TIn, TOut, AKMajor, BKMajor>(p, int(tile.m()), int(tile.n()), batch, int(threadIdx.x), sA, sB);
}

}  // namespace tessel::kernel
