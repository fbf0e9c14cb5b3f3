// tessel/gemm/epilogue/sm80_epilogue_staged.hpp -- D = alpha * accumulators + beta * C, converted
// to D's type, staged through shared memory so that global memory sees whole rows.
//
// CollectiveEpilogue<EpilogueSm80SmemStaged, Config, ElementOut16>:
//   The accumulators of an sm_80 TiledMMA sit in mma.sync's C layout (pairs of columns, rows 8
//   apart): stored straight to global memory each warp instruction would touch 8 rows. Instead the
//   CTA tile is written in BLK_M / (16 x WarpsM) passes: each pass puts one MMA_M row-block of
//   every thread's accumulators into a (16 x WarpsM, BLK_N) fp32 buffer in shared memory (rows
//   padded by 8 floats: the 64-bit stores of a half-warp's column pairs then cover all 32 banks),
//   and the CTA reads it back row-contiguously, 8 consecutive elements per thread: one 128-bit
//   store of 16-bit D (two of fp32 D), consecutive lanes on consecutive pieces of a row.
//   Ragged edges (rows past M, columns past N) and D or C without 16-byte aligned rows fall back
//   to element stores and loads, with the same row-contiguous order.
//   Whole tile at once: a tile that lies inside D, with D's rows 16-byte aligned, beta == 0 and no
//   split-K, is converted in registers (alpha * acc, rounded to D's type), staged whole
//   (Sm80EpilogueTileStaging: column pairs as 4- or 8-byte stores, one barrier) and copied to D as
//   16-byte loads and stores, when that buffer fits in the bytes the staging may use
//   (Config::SmemBytesMainloop: it shares the pipeline's memory; a Config may set
//   EpilogueStagingBytes instead). Same values, bit for bit, as the passes.
//   beta == 0: C is not read (NaN in C does not propagate, as in BLAS).
//   A fused epilogue (args.fusion active: D = act(alpha * acc + beta * C + bias),
//   epilogue_fusion.hpp; a 16-bit D) takes the passes, and each chunk applies it before its
//   conversion.
// The output type is chosen at run time: fp32, or ElementOut16 (the 16-bit input type of a
// bf16/fp16 GEMM; void for tf32 GEMMs, which write fp32 only).
//
// Serial split-K (schedule/split_k.hpp): slice s > 0 waits until the tile's flag says s slices
// are in and adds the partial sum from the workspace (a BLK_M x BLK_N fp32 tile, read and written
// in the same row-contiguous chunks as D); every slice but the last writes its sum back there and
// raises the flag; the last applies alpha/beta and writes D. The order is fixed: deterministic.
#pragma once

#include <tessel/config.hpp>
#include <tessel/gemm/collective/sm80_gemm_config.hpp>
#include <tessel/gemm/dispatch_policy.hpp>
#include <tessel/gemm/epilogue/epilogue_fusion.hpp>
#include <tessel/gemm/epilogue/sm80_epilogue_staging.hpp>
#include <tessel/numeric/int_types.hpp>
#include <tessel/tensor.hpp>

#include <cstdint>
#include <type_traits>

namespace tessel::epilogue {

template <class DispatchPolicy, class Config, class ElementOut16>
struct CollectiveEpilogue {
  static_assert(sizeof(DispatchPolicy) == 0, "CollectiveEpilogue: no epilogue is defined for this dispatch policy");
};

// Where the output goes. C and D are row-major (M,N) with row strides ldc, ldd (elements).
struct EpilogueArgs {
  void* d;
  std::int64_t ldd;
  void const* c;
  std::int64_t ldc;
  float alpha, beta;
  bool out_f32;  // D and C are fp32; else ElementOut16
  bool d_vec;    // D's rows are 16-byte aligned (pointer and ldd)
  bool c_vec;    // C's rows are 16-byte aligned
  EpilogueFusion fusion{};  // bias, activation (inactive: D = alpha * acc + beta * C)
};

// This CTA's part of a serial split-K reduction (file comment).
struct SplitKSlice {
  int slice = 0, slices = 1;
  float* workspace = nullptr;  // the tile's BLK_M x BLK_N partial sum, row-major
  int* flag = nullptr;         // the tile's flag: the number of slices already summed
};

namespace detail {

TESSEL_DEVICE inline float to_f32(float x) { return x; }
template <class T>
TESSEL_DEVICE float to_f32(T x) {
  return float(x);
}

// fp32 -> the output type, round to nearest even (the hardware conversions).
template <class Out>
TESSEL_DEVICE Out from_f32(float x) {
  if constexpr (std::is_same_v<Out, float>) {
    return x;
  } else if constexpr (std::is_same_v<Out, bfloat16_t>) {
    return bfloat16_t(__float2bfloat16_rn(x));
  } else {
    static_assert(std::is_same_v<Out, half_t>, "sm80 epilogue: outputs are float, bfloat16_t or half_t");
    return half_t(__float2half_rn(x));
  }
}

// The flag of a split-K tile: spin until it reads `value` (acquire), then the whole CTA proceeds.
TESSEL_DEVICE inline void wait_flag(int const* flag, int value, int thread_idx) {
  if (thread_idx == 0) {
    int seen;
    do {
      asm volatile("ld.global.acquire.gpu.b32 %0, [%1];\n" : "=r"(seen) : "l"(flag) : "memory");
    } while (seen != value);
  }
  __syncthreads();
}

// Raise the flag to `value` once every thread's writes are visible device-wide.
TESSEL_DEVICE inline void raise_flag(int* flag, int value, int thread_idx) {
  __threadfence();
  __syncthreads();
  if (thread_idx == 0) asm volatile("st.global.release.gpu.b32 [%0], %1;\n" ::"l"(flag), "r"(value) : "memory");
}

}  // namespace detail

template <class Config, class ElementOut16>
struct CollectiveEpilogue<EpilogueSm80SmemStaged, Config, ElementOut16> {
  using TiledMma = typename Config::TiledMma;
  using Staging = Sm80EpilogueStaging<Config>;
  using StagingLayout = typename Staging::StagingLayout;
  static constexpr int BlkM = Config::TileM, BlkN = Config::TileN;
  static constexpr int Threads = Config::Threads;
  static constexpr int StepM = Staging::StepM, Passes = Staging::Passes, Pitch = Staging::Pitch;
  static constexpr bool HasOut16 = !std::is_void_v<ElementOut16>;

  // The bytes the staging buffer may occupy (file comment).
  static constexpr int staging_budget() {
    if constexpr (requires { Config::EpilogueStagingBytes; }) {
      return Config::EpilogueStagingBytes;
    } else {
      return Config::SmemBytesMainloop;
    }
  }
  static constexpr int PassBytes = StepM * Pitch * int(sizeof(float));
  static constexpr int Budget = staging_budget() > PassBytes ? staging_budget() : PassBytes;
  // Whole-tile staging of D's type Out: its geometry, and whether it fits.
  template <class Out>
  using TileStaging = Sm80EpilogueTileStaging<Config, Out>;
  template <class Out>
  static constexpr bool whole_tile_fits() {
    if constexpr (std::is_void_v<Out>) {
      return false;
    } else {
      return TileStaging<Out>::Bytes <= Budget;
    }
  }
  static constexpr bool WholeOut16 = whole_tile_fits<ElementOut16>();
  static constexpr bool WholeF32 = whole_tile_fits<float>();
  static constexpr int max3(int a, int b, int c) { return a > b ? (a > c ? a : c) : (b > c ? b : c); }
  static constexpr int StagingBytes = max3(PassBytes, WholeOut16 ? TileStaging<std::conditional_t<HasOut16, ElementOut16, float>>::Bytes : 0,
                                           WholeF32 ? TileStaging<float>::Bytes : 0);

  struct SharedStorage {
    alignas(128) float c[StagingBytes / int(sizeof(float))];
  };

  // The whole tile (file comment): D[m0.., n0..] = alpha * acc in Out, through the staging buffer.
  // Ends with a barrier (the buffer may be reused).
  template <class Out, class FrgC>
  TESSEL_DEVICE static void store_whole_tile(FrgC const& accum, EpilogueArgs const& args, std::int64_t m0, std::int64_t n0,
                                             int thread_idx, SharedStorage& smem) {
    using TS = TileStaging<Out>;
    TiledMma tiled_mma;
    auto thr_mma = tiled_mma.get_slice(thread_idx);
    Out* staged = reinterpret_cast<Out*>(smem.c);
    Tensor sD = make_tensor(make_smem_ptr(staged), typename TS::StagingLayout{});  // (BLK_M,BLK_N)
    Tensor tCsD = thr_mma.partition_C(sD);                                         // (MMA,MMA_M,MMA_N)
    Tensor tCrD = make_fragment_like<Out>(accum);                                  // (MMA,MMA_M,MMA_N)
    TESSEL_UNROLL
    for (int i = 0; i < int(size(accum)); ++i) tCrD(i) = detail::from_f32<Out>(args.alpha * accum(i));
    copy(Copy_Atom<AutoVectorizingCopyWithAssumedAlignment<16 * int(sizeof(Out))>, Out>{}, tCrD,
         tCsD);  // column pairs: 4-byte (16-bit Out) or 8-byte (fp32) stores
    __syncthreads();
    Out* d = static_cast<Out*>(args.d) + m0 * args.ldd + n0;
    TESSEL_UNROLL
    for (int j = 0; j < TS::ChunksPerThread; ++j) {
      auto const [row, col] = TS::chunk(thread_idx, j);
      uint4 const v = *reinterpret_cast<uint4 const*>(staged + row * TS::Pitch + col);
      *reinterpret_cast<uint4*>(d + row * args.ldd + col) = v;
    }
    __syncthreads();  // the buffer is read before anyone reuses it
  }

  // Up to eight consecutive outputs of row m: D[n, n+cols) = alpha * acc + beta * C; a 16-byte
  // vector access where the chunk is whole and the rows are aligned.
  // Fused: then act(. + bias) before the conversion (args.fusion active, a 16-bit Out).
  template <class Out, bool Fused = false>
  TESSEL_DEVICE static void store_chunk(EpilogueArgs const& args, float const (&acc)[8], std::int64_t m, std::int64_t n,
                                        int cols, bool vec_ok_d, bool vec_ok_c) {
    Out* d = static_cast<Out*>(args.d) + m * args.ldd + n;
    Out const* c = static_cast<Out const*>(args.c) + m * args.ldc + n;
    float out[8];
    TESSEL_UNROLL
    for (int e = 0; e < 8; ++e) out[e] = args.alpha * acc[e];
    if (args.beta != 0.0f) {
      if (cols == 8 && vec_ok_c) {
        alignas(16) Out cv[8];
        TESSEL_UNROLL
        for (int e = 0; e < 8; e += 16 / int(sizeof(Out)))
          *reinterpret_cast<uint4*>(&cv[e]) = __ldg(reinterpret_cast<uint4 const*>(c + e));
        TESSEL_UNROLL
        for (int e = 0; e < 8; ++e) out[e] += args.beta * detail::to_f32(cv[e]);
      } else {
        TESSEL_UNROLL
        for (int e = 0; e < 8; ++e)
          if (e < cols) out[e] += args.beta * detail::to_f32(c[e]);
      }
    }
    if constexpr (Fused) fusion_apply_row</*Fast=*/true>(args.fusion, out, m, n, cols);
    if (cols == 8 && vec_ok_d) {
      alignas(16) Out dv[8];
      TESSEL_UNROLL
      for (int e = 0; e < 8; ++e) dv[e] = detail::from_f32<Out>(out[e]);
      TESSEL_UNROLL
      for (int e = 0; e < 8; e += 16 / int(sizeof(Out)))
        *reinterpret_cast<uint4*>(d + e) = *reinterpret_cast<uint4 const*>(&dv[e]);
    } else {
      TESSEL_UNROLL
      for (int e = 0; e < 8; ++e)
        if (e < cols) d[e] = detail::from_f32<Out>(out[e]);
    }
  }

  // accum: this thread's (MMA,MMA_M,MMA_N) of the tile at (m0, n0); rows, cols: the tile's extent
  // inside D (<= BLK_M, BLK_N); split: this CTA's split-K slice (slices == 1: no split).
  template <class FrgC>
  TESSEL_DEVICE void operator()(FrgC const& accum, EpilogueArgs const& args, std::int64_t m0, std::int64_t n0, int rows,
                                int cols, SplitKSlice const& split, int thread_idx, SharedStorage& smem) const {
    TiledMma tiled_mma;
    auto thr_mma = tiled_mma.get_slice(thread_idx);
    Tensor sC = make_tensor(make_smem_ptr(smem.c), StagingLayout{});  // (BLK_M,BLK_N), the passes aliased
    Tensor tCsC = thr_mma.partition_C(sC);                            // (MMA,MMA_M,MMA_N)
    static_assert(decltype(size<1>(tCsC))::value == Passes, "sm80 epilogue: one pass per MMA_M step");

    bool const add_partial = split.slice > 0;                  // the previous slices' sum is in the workspace
    bool const to_workspace = split.slice + 1 < split.slices;  // this slice's sum goes back there
    if constexpr (WholeOut16 || WholeF32) {
      bool const whole =
          split.slices == 1 && args.beta == 0.0f && args.d_vec && rows == BlkM && cols == BlkN && !args.fusion.active();
      if (whole) {
        if constexpr (WholeF32) {
          if (args.out_f32 || !HasOut16) {
            store_whole_tile<float>(accum, args, m0, n0, thread_idx, smem);
            return;
          }
        }
        if constexpr (WholeOut16) {
          if (!args.out_f32) {
            store_whole_tile<ElementOut16>(accum, args, m0, n0, thread_idx, smem);
            return;
          }
        }
      }
    }
    if (add_partial) detail::wait_flag(split.flag, split.slice, thread_idx);

    // A fused epilogue (16-bit D: the host finishes an fp32 one in a pass of its own) walks a
    // pass's chunks in a loop that is not unrolled: its activations are long, and one copy of them
    // per chunk would multiply the kernel's code (and compile time) for a uniform branch.
    bool const fused = HasOut16 && !args.out_f32 && args.fusion.active();
    TESSEL_UNROLL  // the accumulators are registers: index them with constants only
    for (int pass = 0; pass < Passes; ++pass) {
      copy(Copy_Atom<AutoVectorizingCopyWithAssumedAlignment<64>, float>{}, accum(_, pass, _),
           tCsC(_, pass, _));  // (MMA,MMA_N) -> the staging buffer, column pairs as 64-bit stores
      __syncthreads();
      auto const chunk = [&](int j, auto with_fusion) {
        auto const [r, c8] = Staging::chunk(thread_idx, j);  // row of the pass, first column
        int const row = r + pass * StepM;                   // row of the tile
        if (row < rows && c8 < cols) {
          float4 const first = *reinterpret_cast<float4 const*>(&smem.c[Staging::read_offset(thread_idx, j, true)]);
          float4 const second = *reinterpret_cast<float4 const*>(&smem.c[Staging::read_offset(thread_idx, j, false)]);
          bool const upper_first = Staging::first_half(thread_idx) != 0;
          float4 const lo = upper_first ? second : first, hi = upper_first ? first : second;
          float acc[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
          float4* ws = add_partial || to_workspace ? reinterpret_cast<float4*>(split.workspace + row * BlkN + c8) : nullptr;
          if (add_partial) {
            float4 const plo = __ldcg(ws), phi = __ldcg(ws + 1);
            acc[0] += plo.x, acc[1] += plo.y, acc[2] += plo.z, acc[3] += plo.w;
            acc[4] += phi.x, acc[5] += phi.y, acc[6] += phi.z, acc[7] += phi.w;
          }
          if (to_workspace) {
            __stcg(ws, make_float4(acc[0], acc[1], acc[2], acc[3]));
            __stcg(ws + 1, make_float4(acc[4], acc[5], acc[6], acc[7]));
            return;
          }
          int const n_in = cols - c8 < 8 ? cols - c8 : 8;
          if constexpr (decltype(with_fusion)::value) {
            if constexpr (HasOut16)
              store_chunk<ElementOut16, true>(args, acc, m0 + row, n0 + c8, n_in, args.d_vec, args.c_vec);
          } else if (args.out_f32 || !HasOut16) {
            store_chunk<float>(args, acc, m0 + row, n0 + c8, n_in, args.d_vec, args.c_vec);
          } else if constexpr (HasOut16) {
            store_chunk<ElementOut16>(args, acc, m0 + row, n0 + c8, n_in, args.d_vec, args.c_vec);
          }
        }
      };
      if (fused) {  // uniform
        TESSEL_NO_UNROLL
        for (int j = 0; j < Staging::ChunksPerThread; ++j) chunk(j, std::true_type{});
      } else {
        TESSEL_UNROLL
        for (int j = 0; j < Staging::ChunksPerThread; ++j) chunk(j, std::false_type{});
      }
      __syncthreads();  // the buffer is read before the next pass overwrites it
    }
    if (to_workspace) detail::raise_flag(split.flag, split.slice + 1, thread_idx);
  }
};

}  // namespace tessel::epilogue
