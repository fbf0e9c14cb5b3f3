// tessel/gemm/collective/sm80_gemm_config.hpp -- one sm_80 tensor-core GEMM configuration: the
// CTA tile, the warps, the pipeline depth, and the atoms and layouts that follow from them.
//
// Sm80GemmConfig<Element, TileM, TileN, TileK, WarpsM, WarpsN, Stages> derives everything else:
//   TiledMma      mma.sync atom of Element (bf16/fp16 m16n8k16, tf32 m16n8k8 for float), WarpsM x
//                 WarpsN warps; each warp takes two n8 atoms per step (N permutation 16 * WarpsN)
//                 so one ldmatrix.x4 feeds both A (16x16 bf16) and B (two 8x16 blocks)
//   SmemLayoutA   (BLK_M,BLK_K,PIPE) K-major, swizzled by Sw<log2(chunks per row), log2(16B in
//   SmemLayoutB   elements), 3>: each 16-byte chunk of a row moves to column chunk ^ (row bits),
//                 so 8 consecutive rows of one chunk column hit 8 distinct 16-byte bank groups
//                 (ldmatrix) and 8 consecutive chunks of a row do too (cp.async) -- proven by
//                 tests/host/bank_conflict_sm80_test.cpp with tessel/analysis/bank_conflicts.hpp
//   GmemTiledCopyA/B  16-byte cp.async (zero-fill), threads along K first: a warp reads whole
//                 128-byte rows of global memory
//   SmemCopyAtomA/B   ldmatrix.x4 (non-transposed: the operands sit K-major in shared memory)
//   Schedule      Sm80MainloopSchedule<...>: how the mainloop orders its work (below); the default
//                 is the library's schedule
//   e.g. Sm80GemmConfig<bfloat16_t,128,256,32,2,4,4>: 256 threads, warp tile 64x64, smem
//        (128+256) x 32 x 2 B x 4 stages = 96 KiB, SmemLayoutA Sw<2,3,3> o (_128,_32,_4):(_32,_1,_4096)
// Host-compilable (no CUDA needed): tests instantiate configurations and check them.
#pragma once

#include <tessel/atom/copy_atom.hpp>
#include <tessel/atom/mma_atom.hpp>
#include <tessel/config.hpp>
#include <tessel/layout.hpp>
#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/half.hpp>
#include <tessel/numeric/int_types.hpp>
#include <tessel/tiled/tiled_copy.hpp>
#include <tessel/tiled/tiled_mma.hpp>

#include <type_traits>

namespace tessel::collective {

// The mma.sync of each shared-memory element type (float operands run in tf32 mode).
template <class Element>
struct Sm80MmaOf {
  static_assert(sizeof(Element) == 0, "Sm80MmaOf: sm_80 tensor-core GEMMs take bfloat16_t, half_t or float (tf32)");
};
template <>
struct Sm80MmaOf<bfloat16_t> {
  using Op = SM80_16x8x16_F32BF16BF16F32_TN;
};
template <>
struct Sm80MmaOf<half_t> {
  using Op = SM80_16x8x16_F32F16F16F32_TN;
};
template <>
struct Sm80MmaOf<float> {
  using Op = SM80_16x8x8_F32TF32TF32F32_TN;
};

// How fp32 operands become tf32 in registers (the tf32 mma.sync reads the top 19 bits of each
// 32-bit register and ignores the 13 low mantissa bits).
enum class Tf32Rounding {
  nearest_away,  // cvt.rna.tf32.f32: round to nearest, ties away (3 instructions per element on sm_90)
  nearest_even,  // cvt.rn.tf32.f32 on sm_90 (one instruction per element); cvt.rna where that does not exist
  truncate,      // none: the tensor core drops the low bits (toward zero; twice the input error of rounding)
};

// The order in which CollectiveMma<MainloopSm80CpAsync> issues its work; every choice computes the
// same result (bit for bit, except Tf32 for fp32 operands).
//   UnpredicatedInterior  tiles whose rows all lie inside M and N run a copy of the mainloop whose
//                         cp.async carry no row predicate (edge tiles keep the predicated one)
//   SpreadCopies          the next k-tile's cp.async are spread over the k-blocks 0..KBlocks-2
//                         instead of all issued at k-block 0
//   Tf32                  Tf32Rounding above
// The fragments are always double-buffered (the next k-block's ldmatrix run while this one's
// MMAs do), and a k-block's MMAs run m-outer (consecutive MMAs share A's registers).
template <bool UnpredicatedInterior_ = false, bool SpreadCopies_ = false,
          Tf32Rounding Tf32_ = Tf32Rounding::nearest_away>
struct Sm80MainloopSchedule {
  static constexpr bool UnpredicatedInterior = UnpredicatedInterior_;
  static constexpr bool SpreadCopies = SpreadCopies_;
  static constexpr Tf32Rounding Tf32 = Tf32_;
};

namespace detail {
constexpr int log2_exact(int x) {
  int l = 0;
  while ((1 << l) < x) ++l;
  return l;
}
}  // namespace detail

// The swizzled K-major buffer of `Rows` x BlkK elements per stage, `Stages` stages. Rows longer
// than 128 bytes are cut into 128-byte column blocks, each a (Rows, 128 bytes) swizzled buffer of
// its own: ((Rows),(K in block, block)) -> the same Sw<3,.,3> pattern in every block.
template <class Element, int Rows, int BlkK, int Stages>
TESSEL_HOST_DEVICE constexpr auto sm80_smem_layout_kmajor() {
  constexpr int chunk_elems = 16 / int(sizeof(Element));             // elements per 16-byte chunk
  constexpr int chunks_per_row = BlkK * int(sizeof(Element)) / 16;  // 16-byte chunks per row
  static_assert(chunks_per_row == 4 || chunks_per_row % 8 == 0,
                "sm80 shared-memory layout: a K-major row must be 64 bytes or a multiple of 128 bytes (BLK_K = "
                "32 or 64k for 16-bit types, 16 or 32k for float) for the swizzle to be conflict-free; change TileK");
  if constexpr (chunks_per_row <= 8) {
    using Sw = Swizzle<detail::log2_exact(chunks_per_row), detail::log2_exact(chunk_elems), 3>;
    return composition(Sw{}, make_layout(make_shape(Int<Rows>{}, Int<BlkK>{}, Int<Stages>{}),
                                         make_stride(Int<BlkK>{}, Int<1>{}, Int<Rows * BlkK>{})));
  } else {
    constexpr int BlockK = 8 * chunk_elems;  // 128 bytes
    using Sw = Swizzle<3, detail::log2_exact(chunk_elems), 3>;
    return composition(Sw{}, make_layout(make_shape(Int<Rows>{}, make_shape(Int<BlockK>{}, Int<BlkK / BlockK>{}), Int<Stages>{}),
                                         make_stride(Int<BlockK>{}, make_stride(Int<1>{}, Int<Rows * BlockK>{}),
                                                     Int<Rows * BlkK>{})));
  }
}

template <class Element_, int TileM_, int TileN_, int TileK_, int WarpsM_, int WarpsN_, int Stages_,
          class Schedule_ = Sm80MainloopSchedule<>>
struct Sm80GemmConfig {
  using Element = Element_;
  using Schedule = Schedule_;
  static constexpr int TileM = TileM_, TileN = TileN_, TileK = TileK_;
  static constexpr int WarpsM = WarpsM_, WarpsN = WarpsN_, Stages = Stages_;
  static constexpr int Threads = 32 * WarpsM * WarpsN;
  using TileShape = Shape<Int<TileM>, Int<TileN>, Int<TileK>>;  // (BLK_M,BLK_N,BLK_K)

  using MmaOp = typename Sm80MmaOf<Element>::Op;
  using MmaAtomShape = typename MMA_Traits<MmaOp>::Shape_MNK;
  static constexpr int AtomK = decltype(size<2>(MmaAtomShape{}))::value;

  static_assert(TileM % (16 * WarpsM) == 0,
                "Sm80GemmConfig: TileM must be a multiple of 16 x WarpsM (each warp takes m16 atoms); change TileM or WarpsM");
  static_assert(TileN % (16 * WarpsN) == 0,
                "Sm80GemmConfig: TileN must be a multiple of 16 x WarpsN (each warp takes two n8 atoms per step); "
                "change TileN or WarpsN");
  static_assert(TileK % AtomK == 0 && TileK / AtomK >= 2,
                "Sm80GemmConfig: TileK must hold at least two k-blocks of the MMA atom, so fragments of the next "
                "k-block load while the current one computes; raise TileK");

  using TiledMma = decltype(make_tiled_mma(MMA_Atom<MmaOp>{}, Layout<Shape<Int<WarpsM>, Int<WarpsN>, _1>>{},
                                           Tile<Int<16 * WarpsM>, Int<16 * WarpsN>, Int<AtomK>>{}));

  using SmemLayoutA = decltype(sm80_smem_layout_kmajor<Element, TileM, TileK, Stages>());  // (BLK_M,BLK_K,PIPE)
  using SmemLayoutB = decltype(sm80_smem_layout_kmajor<Element, TileN, TileK, Stages>());  // (BLK_N,BLK_K,PIPE)

  // Global -> shared: one 16-byte chunk per thread and copy, threads along K first.
  static constexpr int ChunkElems = 16 / int(sizeof(Element));
  static constexpr int ChunksPerRow = TileK / ChunkElems;
  static constexpr int CopyRows = Threads / ChunksPerRow;  // rows one pass of the CTA covers
  static_assert(TileM % CopyRows == 0 && TileN % CopyRows == 0,
                "Sm80GemmConfig: the CTA's threads copy CopyRows rows per pass; TileM and TileN must be multiples of it");
  using GmemCopyAtom = Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>, Element>;
  using GmemTiledCopy = decltype(make_tiled_copy(GmemCopyAtom{},
                                                 Layout<Shape<Int<CopyRows>, Int<ChunksPerRow>>, Stride<Int<ChunksPerRow>, _1>>{},
                                                 Layout<Shape<_1, Int<ChunkElems>>>{}));
  using GmemTiledCopyA = GmemTiledCopy;
  using GmemTiledCopyB = GmemTiledCopy;
  // The same copy without a predicate (interior tiles under Schedule::UnpredicatedInterior).
  using GmemTiledCopyInterior =
      decltype(make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, Element>{},
                               Layout<Shape<Int<CopyRows>, Int<ChunksPerRow>>, Stride<Int<ChunksPerRow>, _1>>{},
                               Layout<Shape<_1, Int<ChunkElems>>>{}));

  // Shared -> registers: ldmatrix.x4 laid over the MMA's operand layouts.
  using SmemCopyAtomA = Copy_Atom<SM75_U32x4_LDSM_N, Element>;
  using SmemCopyAtomB = Copy_Atom<SM75_U32x4_LDSM_N, Element>;

  static constexpr int SmemBytesMainloop =
      int(sizeof(Element)) * (int(decltype(cosize(SmemLayoutA{}))::value) + int(decltype(cosize(SmemLayoutB{}))::value));
};

}  // namespace tessel::collective
