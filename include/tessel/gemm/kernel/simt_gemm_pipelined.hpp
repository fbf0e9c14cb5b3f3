// tessel/gemm/kernel/simt_gemm_pipelined.hpp -- the SIMT GEMM with its register fragments
// software-pipelined across k-tiles, and K-contiguous operands optionally kept in their own order.
//
// The library's SIMT kernel for problems that fill the GPU (registry entry simt_128x128x8_128t,
// src/gemm/simt_launch.cuh): SimtRegisterStaged, K-contiguous operands transposed (KMajorRows =
// false), a 128x128x8 CTA tile of 4 warps (2x2, each 64x64), 16x8 outputs per thread, 2 CTAs per
// SM; every dtype of the host API (converted to float on load). In the SIMT mainloop experiment
// (commit c08b327, H100) it measured 0.94 / 0.94 / 0.96 / 0.99x cuBLAS SGEMM
// at 4096^3 and 0.94 / 0.96 / 0.95 / 0.98x at 8192^3 (CLI layouts tn / nn / nt / tt), against
// 0.75-0.86x for simt_gemm.hpp's 256-thread, 8x8-per-thread kernel. 8x8 per thread and k-row
// storage measured below it (level where k rows do not apply); cp.async with k rows beat it only
// where neither operand is K-contiguous (nt: 0.971x with 3 stages, 1.015x with 4, at 4096^3) and
// lost 15-25% where one is. The 4-stage variant is not in the library (docs/gemm.md, "The SIMT kernels", has the
// table).
//
// Same problem, CTA tile (SimtTile) and contract as simt_gemm.hpp (D = alpha A B + beta C, D
// row-major, A/B in either order as compile-time instances, ragged M/N/K, batches); glossary of
// tile names: docs/glossary.md. What differs is the mainloop:
//
// * Fragments are double buffered by k: the fragments of step kk + 1 are read from shared memory
//   while step kk's FFMAs run, and at the last step of a k-tile the barrier comes first, so the
//   next k-tile's first fragments are already in flight when the last FFMAs issue.
// * Interior CTAs run a loop whose loads carry no predicates; edge CTAs and the last partial
//   k-tile run a second copy of the loop with guarded loads (the loop split is by tile index, so
//   neither copy branches on the operand layout or on bounds per k-tile).
// * Transport (a tag): SimtRegisterStaged (global -> registers -> shared, two stages, the
//   next k-tile's loads in flight during this one's FFMAs) or SimtCpAsync<Stages> (cp.async,
//   Stages - 1 k-tiles ahead, no staging registers; fp32 operands only).
// * KMajorRows: a K-contiguous operand is stored as it is, sX[mn][k] (one 128-bit store, or one
//   16-byte cp.async, per 4 elements) instead of transposed into sX[k][mn]. Its fragment is then
//   read as 4 consecutive k of one row per 128-bit load, so a thread holds the 4 k of a group for
//   all its rows; its rows are spread one per lane (grain 1) so that a quarter-warp reads 8
//   consecutive rows, which the row pitch BK + 4 puts on distinct banks.
//
// Per k-tile (register transport; cp.async waits for its group where the stores are):
//
//   t:  issue the global loads of tile t + 1 into registers
//       kk = 0 .. BK-2: read fragments of kk + 1 | FFMAs of kk
//       kk = BK-1:      store tile t + 1 into the other stage, barrier,
//                       read fragments of tile t + 1, kk = 0 | FFMAs of kk = BK-1
#pragma once

#include <tessel/arch/sm80_copy_cp_async.hpp>
#include <tessel/config.hpp>
#include <tessel/gemm/kernel/element_io.hpp>
#include <tessel/gemm/kernel/simt_gemm.hpp>
#include <tessel/gemm/kernel/simt_gemm_params.hpp>
#include <tessel/schedule/raster.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace tessel::kernel {

// Transport tags: how a k-tile reaches shared memory.
struct SimtRegisterStaged {
  static constexpr int Stages = 2;
  static constexpr bool CpAsync = false;
};
template <int Stages_>
struct SimtCpAsync {
  static_assert(Stages_ >= 2, "a cp.async pipeline needs at least 2 stages; raise Stages");
  static constexpr int Stages = Stages_;
  static constexpr bool CpAsync = true;
};

namespace detail {

// One operand's tile (MN x BK) in one shared-memory stage. MnRows: element (mn, k) at
// mn * (BK + 4) + k (a K-contiguous operand as it is); else at k * (MN + 4) + mn. Both pitches are
// 4 floats more than a row so that 128-bit accesses stay aligned and the accesses below do not
// conflict on banks.
template <int MN, int BK, bool MnRows>
struct SimtSmemTile {
  static_assert(!MnRows || BK % 8 == 0,
                "rows of BK + 4 floats keep 8 consecutive rows on distinct banks only when (BK + 4) / 4 is odd; "
                "make BK a multiple of 8");
  static constexpr int Ld = MnRows ? BK + 4 : MN + 4;
  static constexpr int Floats = MnRows ? MN * Ld : BK * Ld;
  static TESSEL_HOST_DEVICE constexpr int at(int mn, int k) { return MnRows ? mn * Ld + k : k * Ld + mn; }
};

// The T indices along M (or N) of the warp tile that one lane reads: groups of G consecutive
// indices, the lane's group at lane * G, groups Lanes * G apart. k-row operands: G = 4 (one
// 128-bit load per group and k); mn-row operands: G = 1 (one 128-bit load per index covers 4 k).
template <int T, int Lanes, bool MnRows>
struct SimtLaneSpan {
  static constexpr int G = MnRows ? 1 : 4;
  static_assert(T % G == 0, "a thread's share must be whole groups of 4 consecutive indices");
  static TESSEL_HOST_DEVICE constexpr int mn(int lane, int i) { return (i / G) * G * Lanes + lane * G + i % G; }
};

// One operand's global -> shared path for tiles of MN x BK. Chunk v of a tile is 4 consecutive
// elements along the contiguous dimension; thread tid owns chunks tid + s * Threads (slots).
// KMajor: K is contiguous in memory. MnRows: the tile is stored as sX[mn][k] (KMajor only).
template <class T, int MN, int BK, int Threads, bool KMajor, bool MnRows>
struct SimtOperandCopy {
  static_assert(KMajor || !MnRows, "an M/N-contiguous operand is stored in k rows");
  static constexpr int KC = BK / 4;  // chunks per row of a K-contiguous operand
  static constexpr int Slots = MN * BK / (4 * Threads);
  using Smem = SimtSmemTile<MN, BK, MnRows>;

  T const* ptr[Slots];  // first element of each slot in the next k-tile to load
  float4 staged[Slots];  // register transport: the loaded tile, converted to float
  ElementReader<T> reader;
  std::int64_t step;  // elements between consecutive k-tiles
  int mn_left;        // rows of the tile inside the matrix, at most MN

  // Tile coordinates of chunk v. K-contiguous stored as rows: 8 consecutive chunks go to 8
  // consecutive rows (conflict-free 128-bit stores); a warp still reads whole 32-byte sectors.
  static TESSEL_HOST_DEVICE int mn_of(int v) {
    if constexpr (!KMajor) return (v % (MN / 4)) * 4;
    else if constexpr (MnRows) return v % 8 + 8 * (v / (8 * KC));
    else return v / KC;
  }
  static TESSEL_HOST_DEVICE int k_of(int v) {
    if constexpr (!KMajor) return v / (MN / 4);
    else if constexpr (MnRows) return (v / 8) % KC * 4;
    else return v % KC * 4;
  }

  TESSEL_DEVICE void init(T const* base, std::int64_t ld, std::int64_t rows, int tid, ElementReader<T> r) {
    reader = r;
    step = KMajor ? BK : BK * ld;
    mn_left = rows < MN ? int(rows) : MN;
    TESSEL_UNROLL
    for (int s = 0; s < Slots; ++s) {
      int const v = s * Threads + tid;
      ptr[s] = base + (KMajor ? std::int64_t(mn_of(v)) * ld + k_of(v) : std::int64_t(k_of(v)) * ld + mn_of(v));
    }
  }

  TESSEL_DEVICE void advance() {
    TESSEL_UNROLL
    for (int s = 0; s < Slots; ++s) ptr[s] += step;
  }

  // How many of chunk v's 4 elements are inside the matrix; k_left = min(K - k0, BK).
  TESSEL_DEVICE int valid(int v, int k_left) const {
    int const mn = mn_of(v), kk = k_of(v);
    if constexpr (KMajor) return mn >= mn_left ? 0 : min(4, max(0, k_left - kk));
    else return kk >= k_left ? 0 : min(4, max(0, mn_left - mn));
  }

  // Register transport. Global -> registers, whole tile inside the matrix, 128-bit loads legal.
  TESSEL_DEVICE void load_full() {
    TESSEL_UNROLL
    for (int s = 0; s < Slots; ++s) staged[s] = reader.load4(ptr[s]);
  }
  // At an edge: elements outside the matrix load as 0; vec: 128-bit loads legal.
  TESSEL_DEVICE void load_guarded(int k_left, bool vec, int tid) {
    TESSEL_UNROLL
    for (int s = 0; s < Slots; ++s) {
      int const n = valid(s * Threads + tid, k_left);
      if (vec && n == 4) {
        staged[s] = reader.load4(ptr[s]);
      } else {
        float e[4];
        TESSEL_UNROLL
        for (int j = 0; j < 4; ++j) e[j] = j < n ? reader.load1(ptr[s] + j) : 0.0f;
        staged[s] = make_float4(e[0], e[1], e[2], e[3]);
      }
    }
  }
  // Registers -> the stage's tile sX.
  TESSEL_DEVICE void store(float* sX, int tid) const {
    TESSEL_UNROLL
    for (int s = 0; s < Slots; ++s) {
      int const v = s * Threads + tid, mn = mn_of(v), kk = k_of(v);
      if constexpr (KMajor && !MnRows) {  // transpose: 4 consecutive k go to 4 rows
        sX[Smem::at(mn, kk + 0)] = staged[s].x;
        sX[Smem::at(mn, kk + 1)] = staged[s].y;
        sX[Smem::at(mn, kk + 2)] = staged[s].z;
        sX[Smem::at(mn, kk + 3)] = staged[s].w;
      } else {
        *reinterpret_cast<float4*>(&sX[Smem::at(mn, kk)]) = staged[s];
      }
    }
  }

  // cp.async transport (T = float). Whole tile inside the matrix, 16-byte copies legal.
  TESSEL_DEVICE void issue_full(float* sX, int tid) {
    static_assert(std::is_same_v<T, float>,
                  "cp.async copies fp32 operands only; other dtypes convert in registers (SimtRegisterStaged)");
    static_assert(!KMajor || MnRows, "cp.async copies 16 bytes as they are; store K-contiguous operands as rows (KMajorRows)");
    TESSEL_UNROLL
    for (int s = 0; s < Slots; ++s) {
      int const v = s * Threads + tid;
      SM80_CP_ASYNC_CACHEGLOBAL<float4>::copy(*reinterpret_cast<float4 const*>(ptr[s]),
                                              *reinterpret_cast<float4*>(&sX[Smem::at(mn_of(v), k_of(v))]));
    }
  }
  // At an edge: elements outside the matrix arrive as 0 (zero-fill copies read nothing).
  TESSEL_DEVICE void issue_guarded(float* sX, int k_left, bool vec, int tid) {
    TESSEL_UNROLL
    for (int s = 0; s < Slots; ++s) {
      int const v = s * Threads + tid, n = valid(v, k_left);
      float* dst = &sX[Smem::at(mn_of(v), k_of(v))];  // the chunk's 4 elements are consecutive here too
      if (vec && (n == 4 || n == 0)) {
        SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<float4>::copy(*reinterpret_cast<float4 const*>(ptr[s]), *reinterpret_cast<float4*>(dst),
                                                      n == 4);
      } else {
        TESSEL_UNROLL
        for (int j = 0; j < 4; ++j)  // a zero-filled copy reads nothing; point it at the first element anyway
          SM80_CP_ASYNC_CACHEALWAYS_ZFILL<float>::copy(j < n ? ptr[s][j] : ptr[s][0], dst[j], j < n);
      }
    }
  }
};

}  // namespace detail

// Epilogue for lane spans of any grain: D = alpha * tCrC + beta * C, 4 columns at a time where
// the columns are consecutive, aligned and inside N; C is read only when beta != 0.
template <class Tile, class TOut, bool ARows, bool BRows>
TESSEL_DEVICE void simt_epilogue_spans(SimtGemmParams const& p, std::int64_t batch, std::int64_t row_base,
                                       std::int64_t col_base, int lane_m, int lane_n,
                                       float const (&tCrC)[Tile::TM][Tile::TN]) {
  using SpanA = detail::SimtLaneSpan<Tile::TM, Tile::LanesM, ARows>;
  using SpanB = detail::SimtLaneSpan<Tile::TN, Tile::LanesN, BRows>;
  constexpr int G = SpanB::G;
  TOut* gD = static_cast<TOut*>(p.d) + batch * p.batch_stride_d;
  TOut const* gC = static_cast<TOut const*>(p.c) + batch * p.batch_stride_c;
  bool const read_c = p.beta != 0.0f;
  bool const vec = G == 4 && p.d_vec && (!read_c || p.c_vec);
  TESSEL_UNROLL
  for (int i = 0; i < Tile::TM; ++i) {
    std::int64_t const row = row_base + SpanA::mn(lane_m, i);
    if (row >= p.m) continue;
    TOut* d_row = gD + row * p.ldd;
    TOut const* c_row = gC + row * p.ldc;
    TESSEL_UNROLL
    for (int q = 0; q < Tile::TN / G; ++q) {
      std::int64_t const col = col_base + SpanB::mn(lane_n, q * G);
      float const* acc = &tCrC[i][q * G];
      if (vec && col + 3 < p.n) {
        float4 r = make_float4(p.alpha * acc[0], p.alpha * acc[1], p.alpha * acc[2], p.alpha * acc[3]);
        if (read_c) {
          float4 const c = load_float4(c_row + col);
          r.x = fmaf(p.beta, c.x, r.x), r.y = fmaf(p.beta, c.y, r.y);
          r.z = fmaf(p.beta, c.z, r.z), r.w = fmaf(p.beta, c.w, r.w);
        }
        store_float4(d_row + col, r);
      } else {
        TESSEL_UNROLL
        for (int j = 0; j < G; ++j) {
          if (col + j >= p.n) break;
          float r = p.alpha * acc[j];
          if (read_c) r = fmaf(p.beta, load_float(c_row + col + j), r);
          d_row[col + j] = from_float<TOut>(r);
        }
      }
    }
  }
}

// Floats of shared memory one CTA uses.
template <class Tile, class Transport, bool KMajorRows, bool AKMajor, bool BKMajor>
inline constexpr int simt_pipelined_smem_floats =
    Transport::Stages * (detail::SimtSmemTile<Tile::BM, Tile::BK, AKMajor && KMajorRows>::Floats +
                         detail::SimtSmemTile<Tile::BN, Tile::BK, BKMajor && KMajorRows>::Floats);

// The work of one CTA on one batch: D tile (tile_m, tile_n). smem: simt_pipelined_smem_floats.
template <class Tile, class Transport, bool KMajorRows, class TIn, class TOut, bool AKMajor, bool BKMajor>
TESSEL_DEVICE void simt_gemm_pipelined_block(SimtGemmParams const& p, int tile_m, int tile_n, std::int64_t batch, int tid,
                                             float* smem) {
  constexpr int BM = Tile::BM, BN = Tile::BN, BK = Tile::BK, TM = Tile::TM, TN = Tile::TN, S = Transport::Stages;
  constexpr bool ARows = AKMajor && KMajorRows, BRows = BKMajor && KMajorRows;
  using SA = detail::SimtSmemTile<BM, BK, ARows>;
  using SB = detail::SimtSmemTile<BN, BK, BRows>;
  using SpanA = detail::SimtLaneSpan<TM, Tile::LanesM, ARows>;
  using SpanB = detail::SimtLaneSpan<TN, Tile::LanesN, BRows>;
  constexpr int StageFloats = SA::Floats + SB::Floats;  // (A tile, B tile) per stage
  static_assert(BK % 4 == 0, "fragments of k-row operands are read 4 k at a time; make BK a multiple of 4");

  std::int64_t const m0 = std::int64_t(tile_m) * BM, n0 = std::int64_t(tile_n) * BN;
  TIn const* gA = static_cast<TIn const*>(p.a) + batch * p.batch_stride_a + (AKMajor ? m0 * p.lda : m0);
  TIn const* gB = static_cast<TIn const*>(p.b) + batch * p.batch_stride_b + (BKMajor ? n0 * p.ldb : n0);
  detail::SimtOperandCopy<TIn, BM, BK, Tile::kThreads, AKMajor, ARows> tAgA;  // (4 elements, slots) per thread
  detail::SimtOperandCopy<TIn, BN, BK, Tile::kThreads, BKMajor, BRows> tBgB;
  tAgA.init(gA, p.lda, p.m - m0, tid, element_reader<TIn>(p.a_e5m2));
  tBgB.init(gB, p.ldb, p.n - n0, tid, element_reader<TIn>(p.b_e5m2));

  int const warp = tid / 32, lane = tid % 32;
  int const warp_m = warp / Tile::WarpsN, warp_n = warp % Tile::WarpsN;
  int const lane_m = lane / Tile::LanesN, lane_n = lane % Tile::LanesN;
  // The thread's first fragment element in a stage (k = 0); the others are compile-time offsets.
  int const a_frag = SA::at(warp_m * Tile::WM + SpanA::mn(lane_m, 0), 0);
  int const b_frag = SA::Floats + SB::at(warp_n * Tile::WN + SpanB::mn(lane_n, 0), 0);

  float tCrC[TM][TN];  // (TM,TN) accumulators
  TESSEL_UNROLL
  for (int i = 0; i < TM; ++i) {
    TESSEL_UNROLL
    for (int j = 0; j < TN; ++j) tCrC[i][j] = 0.0f;
  }

  // Fragments. k-row operands: one k per step, double buffered by the parity of kk.
  // mn-row operands: 4 k per row, read at the first step of each group of 4.
  float tCrA[2][TM], tCrB[2][TN];  // (2,TM) / (2,TN), k-row operands
  float4 tCrA4[TM], tCrB4[TN];     // (TM) / (TN) x 4 k, mn-row operands
  auto read_k = [&](float const* st, int kk, int buf) {
    if constexpr (!ARows) {
      TESSEL_UNROLL
      for (int q = 0; q < TM / 4; ++q) {
        float4 const v = *reinterpret_cast<float4 const*>(st + a_frag + SA::at(SpanA::mn(0, 4 * q), kk));
        tCrA[buf][4 * q + 0] = v.x, tCrA[buf][4 * q + 1] = v.y, tCrA[buf][4 * q + 2] = v.z, tCrA[buf][4 * q + 3] = v.w;
      }
    }
    if constexpr (!BRows) {
      TESSEL_UNROLL
      for (int q = 0; q < TN / 4; ++q) {
        float4 const v = *reinterpret_cast<float4 const*>(st + b_frag + SB::at(SpanB::mn(0, 4 * q), kk));
        tCrB[buf][4 * q + 0] = v.x, tCrB[buf][4 * q + 1] = v.y, tCrB[buf][4 * q + 2] = v.z, tCrB[buf][4 * q + 3] = v.w;
      }
    }
  };
  // The held mn-row operand's group of 4 k (both operands in mn rows: B is held, A is read one
  // row at a time in ffma_rows, so only one operand's group occupies registers).
  auto read_group = [&](float const* st, int k4) {
    if constexpr (ARows && !BRows) {
      TESSEL_UNROLL
      for (int i = 0; i < TM; ++i) tCrA4[i] = *reinterpret_cast<float4 const*>(st + a_frag + SA::at(SpanA::mn(0, i), k4));
    }
    if constexpr (BRows) {
      TESSEL_UNROLL
      for (int j = 0; j < TN; ++j) tCrB4[j] = *reinterpret_cast<float4 const*>(st + b_frag + SB::at(SpanB::mn(0, j), k4));
    }
  };
  auto pick = [](float4 const& v, int c) { return c == 0 ? v.x : c == 1 ? v.y : c == 2 ? v.z : v.w; };
  auto ffma_step = [&](int kk) {  // at least one operand in k rows
    TESSEL_UNROLL
    for (int i = 0; i < TM; ++i) {
      float const a = ARows ? pick(tCrA4[i], kk % 4) : tCrA[kk & 1][i];
      TESSEL_UNROLL
      for (int j = 0; j < TN; ++j) {
        float const b = BRows ? pick(tCrB4[j], kk % 4) : tCrB[kk & 1][j];
        tCrC[i][j] = fmaf(a, b, tCrC[i][j]);
      }
    }
  };
  auto ffma_rows = [&](float const* st, int k4) {  // both operands in mn rows: 4 k, row by row of A
    TESSEL_UNROLL
    for (int i = 0; i < TM; ++i) {
      float4 const a = *reinterpret_cast<float4 const*>(st + a_frag + SA::at(SpanA::mn(0, i), k4));
      TESSEL_UNROLL
      for (int c = 0; c < 4; ++c) {
        TESSEL_UNROLL
        for (int j = 0; j < TN; ++j) tCrC[i][j] = fmaf(pick(a, c), pick(tCrB4[j], c), tCrC[i][j]);
      }
    }
  };

  // (k-tile counts fit in int: the host adapter checks K < 2^31 * BK)
  int const k_tiles = int((p.k + BK - 1) / BK);
  bool const interior = p.a_vec && p.b_vec && m0 + BM <= p.m && n0 + BN <= p.n;
  int const full_tiles = interior ? int(p.k / BK) : 0;  // tiles loaded without predicates
  auto k_left_of = [&](int t) {
    std::int64_t const r = p.k - std::int64_t(t) * BK;
    return r >= BK ? BK : int(r);
  };
  // Tile t into the stage at `dst` (register transport: into the staging registers).
  auto load = [&](int t, float* dst, bool guarded) {
    if constexpr (Transport::CpAsync) {
      if (!guarded) {
        tAgA.issue_full(dst, tid);
        tBgB.issue_full(dst + SA::Floats, tid);
      } else {
        tAgA.issue_guarded(dst, k_left_of(t), p.a_vec, tid);
        tBgB.issue_guarded(dst + SA::Floats, k_left_of(t), p.b_vec, tid);
      }
      tAgA.advance();
      tBgB.advance();
    } else {
      (void)dst;
      if (!guarded) {
        tAgA.load_full();
        tBgB.load_full();
      } else {
        tAgA.load_guarded(k_left_of(t), p.a_vec, tid);
        tBgB.load_guarded(k_left_of(t), p.b_vec, tid);
      }
    }
  };

  // Prologue: the first S - 1 tiles on their way, tile 0 landed, its first fragments read.
  int rd = 0;                        // offset of the stage being computed
  int wr = (S - 1) * StageFloats;    // offset of the stage the next load fills
  if constexpr (Transport::CpAsync) {
    TESSEL_UNROLL
    for (int s = 0; s < S - 1; ++s) {
      if (s < k_tiles) load(s, smem + s * StageFloats, s >= full_tiles);
      cp_async_fence();
    }
    cp_async_wait<S - 2>();
  } else if (k_tiles > 0) {
    load(0, nullptr, full_tiles == 0);
    tAgA.store(smem, tid);
    tBgB.store(smem + SA::Floats, tid);
  }
  __syncthreads();
  read_k(smem, 0, 0);

  // One k-tile: t computed from stage rd while tile t + S - 1 travels to stage wr. Guarded: the
  // loads check bounds (and that the tile exists); else they are full tiles, loaded as they are.
  auto k_tile = [&](int t, auto guarded_tag) {
    constexpr bool Guarded = decltype(guarded_tag)::value;
    int const t_load = t + S - 1;
    bool const has_load = !Guarded || t_load < k_tiles;
    if constexpr (Transport::CpAsync) {
      if (has_load) load(t_load, smem + wr, Guarded);
      cp_async_fence();
    } else if (has_load) {
      tAgA.advance();
      tBgB.advance();
      load(t_load, nullptr, Guarded);
    }
    auto next_tile_into_place = [&] {  // every thread is done reading stage wr
      if constexpr (Transport::CpAsync) {
        cp_async_wait<S - 2>();  // tile t + 1 has landed (this thread's copies)
      } else if (has_load) {
        tAgA.store(smem + wr, tid);
        tBgB.store(smem + wr + SA::Floats, tid);
      }
      __syncthreads();
      rd = rd + StageFloats == S * StageFloats ? 0 : rd + StageFloats;
      wr = wr + StageFloats == S * StageFloats ? 0 : wr + StageFloats;
    };
    if constexpr (ARows && BRows) {
      TESSEL_UNROLL
      for (int k4 = 0; k4 < BK; k4 += 4) {
        read_group(smem + rd, k4);
        ffma_rows(smem + rd, k4);
      }
      next_tile_into_place();
    } else {
      TESSEL_UNROLL
      for (int kk = 0; kk < BK; ++kk) {
        if (kk % 4 == 0) read_group(smem + rd, kk);
        if (kk == BK - 1) next_tile_into_place();
        read_k(smem + rd, (kk + 1) % BK, (kk + 1) & 1);  // kk + 1, or kk = 0 of the next tile
        ffma_step(kk);
      }
    }
  };
  int const unguarded_end = full_tiles > S - 1 ? full_tiles - (S - 1) : 0;  // tiles whose load is a full tile
  int t = 0;
  for (; t < unguarded_end; ++t) k_tile(t, std::false_type{});
  for (; t < k_tiles; ++t) k_tile(t, std::true_type{});
  if constexpr (Transport::CpAsync) cp_async_wait<0>();
  __syncthreads();  // the stages are free before another batch reuses them

  simt_epilogue_spans<Tile, TOut, ARows, BRows>(p, batch, m0 + warp_m * Tile::WM, n0 + warp_n * Tile::WN, lane_m, lane_n,
                                                 tCrC);
}

// One CTA per D tile (blockIdx.x through tessel::GroupedRaster), batches along blockIdx.y.
// AKMajor/BKMajor must match p.a_k_major/p.b_k_major (the host picks the instance).
template <class Tile, class Transport, bool KMajorRows, class TIn, class TOut, bool AKMajor, bool BKMajor>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocksPerSM) simt_gemm_pipelined_kernel(SimtGemmParams p) {
  constexpr int Floats = simt_pipelined_smem_floats<Tile, Transport, KMajorRows, AKMajor, BKMajor>;
  static_assert(Floats * 4 <= 48 * 1024, "the stages exceed 48 KiB of static shared memory; lower Stages or BK");
  __shared__ __align__(16) float smem[Floats];  // (stage) x (A tile, B tile)
  GroupedRaster const raster{p.tiles_m, p.tiles_n, p.raster_order, p.raster_group};
  GemmCoord const tile = raster(blockIdx.x);
  for (std::int64_t batch = blockIdx.y; batch < p.batch; batch += gridDim.y)
    simt_gemm_pipelined_block<Tile, Transport, KMajorRows, TIn, TOut, AKMajor, BKMajor>(p, int(tile.m()), int(tile.n()), batch,
                                                                                       int(threadIdx.x), smem);
}

}  // namespace tessel::kernel
