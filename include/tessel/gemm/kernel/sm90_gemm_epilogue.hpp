// tessel/gemm/kernel/sm90_gemm_epilogue.hpp -- how a consumer warpgroup's fp32 accumulators leave
// its registers in the sm_90a GEMM kernels (cooperative and ping-pong): to D as alpha * acc +
// beta * C (any output type and alignment), or converted into the swizzled staging buffer that
// TMA stores or row copies take D from (epilogue/sm90_epilogue_staging.hpp: where each value goes).
// Both take one 64-row block of accumulators, as one m64nN wgmma leaves them. A fused epilogue
// (p.fusion: bias, activation) is applied to that block in registers first (sm90_fuse_block), C
// joining it there, so every store path then writes a finished D.
#pragma once

#include <tessel/arch/sm90_cluster.hpp>
#include <tessel/config.hpp>
#include <tessel/gemm/epilogue/epilogue_fusion.hpp>
#include <tessel/gemm/epilogue/sm90_epilogue_staging.hpp>
#include <tessel/gemm/kernel/sm90_gemm_params.hpp>
#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/half.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>
#include <utility>

namespace tessel::kernel::detail {

// Two fp32 values as one 4- or 8-byte store of Out (lower column in the lower half).
template <class Out>
struct Sm90Pair;
template <>
struct Sm90Pair<float> {
  using Storage = float2;
  TESSEL_DEVICE static float2 pack(float a, float b) { return make_float2(a, b); }
};
template <>
struct Sm90Pair<bfloat16_t> {
  using Storage = std::uint32_t;
  TESSEL_DEVICE static std::uint32_t pack(float a, float b) {
    __nv_bfloat162 const v = __floats2bfloat162_rn(a, b);
    return *reinterpret_cast<std::uint32_t const*>(&v);
  }
  TESSEL_DEVICE static float2 unpack(std::uint32_t w) { return __bfloat1622float2(*reinterpret_cast<__nv_bfloat162 const*>(&w)); }
};
template <>
struct Sm90Pair<half_t> {
  using Storage = std::uint32_t;
  TESSEL_DEVICE static std::uint32_t pack(float a, float b) {
    __half2 const v = __floats2half2_rn(a, b);
    return *reinterpret_cast<std::uint32_t const*>(&v);
  }
  TESSEL_DEVICE static float2 unpack(std::uint32_t w) { return __half22float2(*reinterpret_cast<__half2 const*>(&w)); }
};

// The epilogue from registers of a kernel running the swapped problem (p.d_transposed): element
// (row, col) of the kernel's D is element (col, row) of the caller's, at col * ldd + row (C
// alike). One element per store; the skinny kernels that take this path have a D of at most 64
// columns of the caller's, so it is a small share of their time.
template <class Out, int TileN>
TESSEL_DEVICE void sm90_epilogue_registers_transposed(Sm90GemmParams const& p, float const (&acc)[TileN / 2],
                                                      std::int64_t row0, std::int64_t col0, std::int64_t d_slice,
                                                      std::int64_t c_batch) {
  Out* const d_base = static_cast<Out*>(p.d) + d_slice * p.batch_stride_d;
  Out const* const c_base =
      p.beta != 0.0f && !p.fusion.active() ? static_cast<Out const*>(p.c) + c_batch * p.batch_stride_c : nullptr;
  TESSEL_UNROLL
  for (int j = 0; j < TileN / 8; ++j) {
    TESSEL_UNROLL
    for (int e = 0; e < 2; ++e) {
      std::int64_t const col = col0 + 8 * j + e;
      if (col >= p.n) continue;
      TESSEL_UNROLL
      for (int h = 0; h < 2; ++h) {
        std::int64_t const row = row0 + 8 * h;
        if (row >= p.m) continue;
        float v = acc[4 * j + 2 * h + e];
        if (c_base) v += p.beta * float(c_base[col * p.ldc + row]);
        d_base[col * p.ldd + row] = Out(v);
      }
    }
  }
}

// The last column of D at or after col0, as an offset from col0 (negative where col0 is past it):
// loads of the fused epilogue's C and bias clamp their column to it instead of testing each one
// (a 64-bit compare per element cost 2 s more ptxas time per kernel); the accumulators of columns
// past D's edge are never stored.
TESSEL_DEVICE inline int sm90_last_column(Sm90GemmParams const& p, std::int64_t col0) {
  std::int64_t const last = p.n - 1 - col0;
  return last < 4096 ? int(last) : 4096;
}

// The fused epilogue's C (16-bit, D's type) on accumulators [4 J0, 4 J1): acc += beta * C for this
// thread's rows row0, row0 + 8 and column pairs col0 + 8j (the map of sm90_epilogue_registers,
// which then stores acc without reading C), from global memory; the swapped problem
// (p.d_transposed) reads C transposed. Rows outside D are not read, columns past it read its last
// one (neither is stored).
template <int J0, int J1, int TileN>
TESSEL_DEVICE void sm90_add_c16(Sm90GemmParams const& p, float (&acc)[TileN / 2], std::int64_t row0, std::int64_t col0,
                                std::int64_t c_batch, int last) {
  auto const* const c = static_cast<unsigned short const*>(p.c) + c_batch * p.batch_stride_c;
  std::int64_t const row_step = p.d_transposed ? 1 : p.ldc, col_step = p.d_transposed ? p.ldc : 1;
  TESSEL_UNROLL
  for (int h = 0; h < 2; ++h) {
    std::int64_t const row = row0 + 8 * h;
    if (row >= p.m) continue;
    unsigned short const* const c_row = c + row * row_step + col0 * col_step;
    TESSEL_UNROLL
    for (int j = J0; j < J1; ++j) {
      TESSEL_UNROLL
      for (int e = 0; e < 2; ++e) {
        int const at = 8 * j + e < last ? 8 * j + e : last;
        acc[4 * j + 2 * h + e] += p.beta * epilogue::widen16(__ldg(c_row + at * col_step), p.out_f16);
      }
    }
  }
}

// The same from the staging buffer, where a C loaded by TMA waits (p.c_by_tma): each thread reads
// the pairs it will overwrite with D (sm90_stage_accumulators's map), so no other thread's D
// lands on a C value before it is read.
template <class Out, int TileN>
TESSEL_DEVICE void sm90_add_c_staged(float (&acc)[TileN / 2], char const* base, int wg_thread, float beta) {
  TESSEL_UNROLL
  for (int i = 0; i < epilogue::sm90_staged_stores(TileN); ++i) {
    epilogue::Sm90StagedStore const at = epilogue::sm90_staged_store(wg_thread, i);
    float2 const c = Sm90Pair<Out>::unpack(*reinterpret_cast<std::uint32_t const*>(base + epilogue::sm90_staging_offset(at.row, at.col)));
    acc[epilogue::sm90_staged_register(i, 0)] += beta * c.x;
    acc[epilogue::sm90_staged_register(i, 1)] += beta * c.y;
  }
}

// The fused epilogue's bias for one thread, loaded at a unit's start and used in its epilogue:
// raw 16-bit values, not yet widened (a use would wait for the load before the mainloop). A
// column bias: the pair of columns n0 + 2t, +1 (t < TileN / 2; columns past D's last read it); a
// row bias: the thread's rows row0, row0 + 8 of the block at rows m0 (rows past M read row M - 1).
struct Sm90BiasShare {
  unsigned short v0 = 0, v1 = 0;
};
template <int TileN>
TESSEL_DEVICE Sm90BiasShare sm90_prefetch_bias(Sm90GemmParams const& p, std::int64_t m0, std::int64_t n0, int t) {
  epilogue::EpilogueFusion const& f = p.fusion;
  unsigned short const* const bias = static_cast<unsigned short const*>(f.bias);
  Sm90BiasShare share;
  if (f.bias_rows) {
    std::int64_t const row0 = m0 + (t / 32) * 16 + (t % 32) / 4;
    share.v0 = __ldg(bias + (row0 < p.m ? row0 : p.m - 1));
    share.v1 = __ldg(bias + (row0 + 8 < p.m ? row0 + 8 : p.m - 1));
  } else if (2 * t < TileN) {
    std::int64_t const col = n0 + 2 * t;
    share.v0 = __ldg(bias + (col < p.n ? col : p.n - 1));
    share.v1 = __ldg(bias + (col + 1 < p.n ? col + 1 : p.n - 1));
  }
  return share;
}

// A column bias's shares into the consumer's buffer `pairs` (TileN / 2 of them), the consumer's
// 128 threads meeting at barrier `id` after; returns this thread's first pair (its columns
// col0 + 8j are pairs 4j further), or nullptr for a row bias or none.
template <int TileN>
TESSEL_DEVICE std::uint32_t const* sm90_share_bias(Sm90GemmParams const& p, Sm90BiasShare const& share, std::uint32_t* pairs,
                                                   int t, int id) {
  if (p.fusion.bias == nullptr || p.fusion.bias_rows) return nullptr;
  if (2 * t < TileN) pairs[t] = std::uint32_t(share.v0) | (std::uint32_t(share.v1) << 16);
  named_barrier_sync(id, 128);
  return pairs + t % 4;
}

// The fused epilogue on a consumer's 64-row block of alpha * acc (p.fusion active; a uniform
// branch once per tile): acc = act(acc + beta * C + bias) in the kernel's orientation, for this
// thread's rows row0, row0 + 8 and column pairs col0 + 8j. D is 16-bit (the host finishes an fp32
// D in a pass of its own: epilogue/epilogue_fusion.hpp), so the activations take their fast forms.
// C comes from global memory when `read_c` (else it was added from the staging buffer, or is not
// read). The block goes 64 columns at a time, a compiler fence between them: left to itself, the
// compiler hoisted every load of C and the bias above the arithmetic, 192 more registers' worth
// beside the 128 accumulators, and spilled.
// With `share` (sm90_prefetch_bias) the bias comes from it -- a row bias -- or from `col_bias`
// (sm90_share_bias) -- a column bias; without, from global memory here.
template <int TileN>
TESSEL_DEVICE void sm90_fuse_block(Sm90GemmParams const& p, float (&acc)[TileN / 2], std::int64_t row0, std::int64_t col0,
                                   std::int64_t c_batch, bool read_c, std::uint32_t const* col_bias = nullptr,
                                   Sm90BiasShare const* share = nullptr) {
  epilogue::EpilogueFusion const& f = p.fusion;
  int const last = sm90_last_column(p, col0);
  bool const bias_f16 = f.bias_type == epilogue::BiasType::f16;
  float row_bias[2] = {0.0f, 0.0f};
  if (f.bias != nullptr && f.bias_rows) {
    if (share != nullptr) {
      row_bias[0] = epilogue::widen16(share->v0, bias_f16), row_bias[1] = epilogue::widen16(share->v1, bias_f16);
    } else {
      TESSEL_UNROLL
      for (int h = 0; h < 2; ++h) row_bias[h] = row0 + 8 * h < p.m ? epilogue::fusion_bias16(f, row0 + 8 * h) : 0.0f;
    }
  }
  [&]<int... G>(std::integer_sequence<int, G...>) {
    auto const group = [&](auto which) {  // columns [64 G, 64 G + 64), accumulators [32 G, 32 G + 32)
      constexpr int J0 = 8 * decltype(which)::value, J1 = J0 + 8 < TileN / 8 ? J0 + 8 : TileN / 8;
      if (read_c) sm90_add_c16<J0, J1, TileN>(p, acc, row0, col0, c_batch, last);
      if (f.bias != nullptr) {
        if (f.bias_rows) {
          TESSEL_UNROLL
          for (int i = 4 * J0; i < 4 * J1; ++i) acc[i] += row_bias[(i / 2) % 2];
        } else if (col_bias != nullptr) {
          TESSEL_UNROLL
          for (int j = J0; j < J1; ++j) {
            std::uint32_t const pair = col_bias[4 * j];
            float const b0 = epilogue::widen16((unsigned short)(pair & 0xffffu), bias_f16);
            float const b1 = epilogue::widen16((unsigned short)(pair >> 16), bias_f16);
            acc[4 * j] += b0, acc[4 * j + 1] += b1, acc[4 * j + 2] += b0, acc[4 * j + 3] += b1;
          }
        } else {
          unsigned short const* const bias = static_cast<unsigned short const*>(f.bias) + col0;
          TESSEL_UNROLL
          for (int j = J0; j < J1; ++j) {
            float const b0 = epilogue::widen16(__ldg(bias + (8 * j < last ? 8 * j : last)), bias_f16);
            float const b1 = epilogue::widen16(__ldg(bias + (8 * j + 1 < last ? 8 * j + 1 : last)), bias_f16);
            acc[4 * j] += b0, acc[4 * j + 1] += b1, acc[4 * j + 2] += b0, acc[4 * j + 3] += b1;
          }
        }
      }
      epilogue::fusion_activate_range</*Fast=*/true, 4 * J0, 4 * J1>(f.act, acc);
      asm volatile("" ::: "memory");  // the next group's loads stay below this one
    };
    (group(std::integral_constant<int, G>{}), ...);
  }(std::make_integer_sequence<int, (TileN + 63) / 64>{});
}

// Accumulator row h of a thread (its rows row0 + 8h; column pairs col0 + 8j) into D's row d_row,
// which starts at column col0: beta * C's row added where c_row is given, columns from n on
// skipped, a pair as one store where `pairs` (D's rows and base allow it).
template <class Out, int TileN>
TESSEL_DEVICE void sm90_store_accumulator_row(float const (&acc)[TileN / 2], int h, Out* d_row, Out const* c_row, float beta,
                                              std::int64_t col0, std::int64_t n, bool pairs) {
  TESSEL_UNROLL
  for (int j = 0; j < TileN / 8; ++j) {
    std::int64_t const col = col0 + 8 * j;
    if (col >= n) continue;
    bool const two = col + 1 < n;
    float v0 = acc[4 * j + 2 * h], v1 = acc[4 * j + 2 * h + 1];
    if (c_row) {
      v0 += beta * float(c_row[8 * j]);
      if (two) v1 += beta * float(c_row[8 * j + 1]);
    }
    if (two && pairs) {
      *reinterpret_cast<typename Sm90Pair<Out>::Storage*>(d_row + 8 * j) = Sm90Pair<Out>::pack(v0, v1);
    } else {
      d_row[8 * j] = Out(v0);
      if (two) d_row[8 * j + 1] = Out(v1);
    }
  }
}

// Epilogue from registers: D = alpha * acc + beta * C (acc already scaled by alpha) for this
// thread's rows row0, row0 + 8 and column pairs col0 + 8j (wgmma_accumulator_coord). `d_slice`
// selects D's batch (or the split-K partial-sum slice), `c_batch` C's. Interior tiles with
// aligned pairs store without checks. A skinny kernel (TileN 64 or 16) or a block-scaled one
// (Transposable: the only ones compiled with the branch) may write D transposed (p.d_transposed).
template <class Out, int TileN, bool Transposable = (TileN <= 64)>
TESSEL_DEVICE void sm90_epilogue_registers(Sm90GemmParams const& p, float const (&acc)[TileN / 2], std::int64_t row0,
                                           std::int64_t col0, bool full_cols, std::int64_t d_slice, std::int64_t c_batch) {
  if constexpr (Transposable) {
    if (p.d_transposed) {
      sm90_epilogue_registers_transposed<Out, TileN>(p, acc, row0, col0, d_slice, c_batch);
      return;
    }
  }
  Out* const d_base = static_cast<Out*>(p.d) + d_slice * p.batch_stride_d;
  Out const* const c_base =  // (a fused epilogue has added C already: sm90_fuse_block)
      p.beta != 0.0f && !p.fusion.active() ? static_cast<Out const*>(p.c) + c_batch * p.batch_stride_c : nullptr;
  TESSEL_UNROLL
  for (int h = 0; h < 2; ++h) {
    std::int64_t const row = row0 + 8 * h;
    if (row >= p.m) continue;
    Out* const d_row = d_base + row * p.ldd + col0;
    if (full_cols && p.d_pairs && c_base == nullptr) {
      TESSEL_UNROLL
      for (int j = 0; j < TileN / 8; ++j)
        *reinterpret_cast<typename Sm90Pair<Out>::Storage*>(d_row + 8 * j) =
            Sm90Pair<Out>::pack(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
      continue;
    }
    sm90_store_accumulator_row<Out, TileN>(acc, h, d_row, c_base ? c_base + row * p.ldc + col0 : nullptr, p.beta, col0, p.n,
                                           p.d_pairs);
  }
}

// A consumer warpgroup's alpha * acc, converted to Out, into its 64 x TileN staging buffer -- or
// columns [Slab, Slab + 1) * SlabN of it into a 64 x SlabN one
// (epilogue/sm90_epilogue_staging.hpp: which registers each 4-byte store takes, and where it goes;
// a warp's 32 writes, 8 rows of one 16-byte chunk each, land in 32 distinct banks).
template <class Out, int TileN, int SlabN = TileN, int Slab = 0>
TESSEL_DEVICE void sm90_stage_accumulators(float const (&acc)[TileN / 2], char* base, int wg_thread) {
  constexpr int First = Slab * epilogue::sm90_staged_stores(SlabN), Last = First + epilogue::sm90_staged_stores(SlabN);
  TESSEL_UNROLL
  for (int i = First; i < Last; ++i) {
    epilogue::Sm90StagedStore const at = epilogue::sm90_staged_store(wg_thread, i);
    *reinterpret_cast<std::uint32_t*>(base + epilogue::sm90_staging_offset(at.row, at.col - Slab * SlabN)) =
        Sm90Pair<Out>::pack(acc[epilogue::sm90_staged_register(i, 0)], acc[epilogue::sm90_staged_register(i, 1)]);
  }
}

// The same for a kernel running the swapped problem (p.d_transposed): element (row, col) of the
// consumer's 64 x 64 block Slab (columns [Slab, Slab + 1) * 64 of its 64 x TileN block) goes to
// (col, row) of its box, which then holds 64 rows of the caller's D (the kernel's columns) by 64
// of its columns (the kernel's rows), as its TMA store reads them. One 2-byte store per element;
// a warp's stores land in 4 rows, one 16-byte chunk each, in 4 distinct chunk columns (the
// swizzle): no bank conflicts.
template <class Out, int TileN = 64, int Slab = 0>
TESSEL_DEVICE void sm90_stage_accumulators_transposed(float const (&acc)[TileN / 2], char* base, int wg_thread) {
  constexpr int First = Slab * epilogue::sm90_staged_stores(64), Last = First + epilogue::sm90_staged_stores(64);
  TESSEL_UNROLL
  for (int i = First; i < Last; ++i) {
    epilogue::Sm90StagedStore const at = epilogue::sm90_staged_store(wg_thread, i);
    std::uint32_t const pair =
        Sm90Pair<Out>::pack(acc[epilogue::sm90_staged_register(i, 0)], acc[epilogue::sm90_staged_register(i, 1)]);
    int const col = at.col - Slab * 64;
    *reinterpret_cast<std::uint16_t*>(base + epilogue::sm90_staging_offset(col, at.row)) = std::uint16_t(pair);
    *reinterpret_cast<std::uint16_t*>(base + epilogue::sm90_staging_offset(col + 1, at.row)) = std::uint16_t(pair >> 16);
  }
}

// The same, where the buffer already holds the consumer's 64 x TileN block of C (loaded by TMA,
// p.c_by_tma): each pair of C there becomes alpha * acc + beta * C, converted, in place -- the
// arithmetic of sm90_epilogue_registers, so both paths give the same bits.
template <class Out, int TileN>
TESSEL_DEVICE void sm90_stage_accumulators_plus_c(float const (&acc)[TileN / 2], char* base, int wg_thread, float beta) {
  TESSEL_UNROLL
  for (int i = 0; i < epilogue::sm90_staged_stores(TileN); ++i) {
    epilogue::Sm90StagedStore const at = epilogue::sm90_staged_store(wg_thread, i);
    auto* const pair = reinterpret_cast<std::uint32_t*>(base + epilogue::sm90_staging_offset(at.row, at.col));
    float2 const c = Sm90Pair<Out>::unpack(*pair);
    float v0 = acc[epilogue::sm90_staged_register(i, 0)], v1 = acc[epilogue::sm90_staged_register(i, 1)];
    v0 += beta * c.x;
    v1 += beta * c.y;
    *pair = Sm90Pair<Out>::pack(v0, v1);
  }
}

}  // namespace tessel::kernel::detail
