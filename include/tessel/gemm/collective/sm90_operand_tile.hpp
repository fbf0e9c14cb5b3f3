// tessel/gemm/collective/sm90_operand_tile.hpp -- one operand tile of a pipeline stage of the
// sm_90a GEMM (kernel/sm90_gemm_warpspecialized.hpp), K-major or MN-major: the TMA copies that
// fill it, its layout in the wgmma vocabulary, and a warpgroup's descriptor fragments of it. Both
// arrangements are 128-byte swizzled (one swizzle row of 128 bytes = 128 / sizeof(Element)
// elements) and hold the same Rows x TileK elements, so the stage's storage and its expect_tx
// byte count do not depend on the choice.
//
//   K-major   (the operand's K contiguous in global memory; TileK = one 128-byte row): one TMA
//             box of (TileK, Rows) -- row r at 128r bytes; the k-th k-slice of Mma::K elements is
//             Mma::K * sizeof(Element) bytes further along the rows.
//   MN-major  (its M or N contiguous; 16-bit inputs, read with the wgmma transpose bit): Rows / 64
//             boxes of (64, TileK) -- 64 MN-elements (128 bytes) by TileK K-rows, K-row r of box
//             c at c * ChunkBytes + 128r bytes, so the descriptor's leading-dimension offset is
//             ChunkBytes (an n256 B spans four boxes; an m64 A reads one and never uses it); the
//             k-th k-slice is Mma::K K-rows = Mma::K * 128 bytes further.
//
// The tensor maps behind them (src/gemm/sm90_gemm.cpp): K-major (K, rows, batch), MN-major
// (rows, K, batch); either way TMA zero-fills what lies past the operand's edges.
//
// The wgmma side is the vocabulary's: layout<MnMajor, Rows>() states the stage tile with the GMMA
// SW128 atoms, fragment_A/B give a one-warpgroup TiledMMA's descriptors of it (every slice checked
// against the PTX ISA's canonical layouts at compile time), and the consumers issue gemm on them.
#pragma once

#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/arch/sm90_copy_tma_ops.hpp>
#include <tessel/atom/gmma_smem_layout.hpp>
#include <tessel/config.hpp>
#include <tessel/layout/tile_to_shape.hpp>
#include <tessel/tensor/pointer.hpp>
#include <tessel/tensor/tensor.hpp>

#include <cstdint>

namespace tessel::collective {

template <class Element, int TileK>
struct Sm90OperandTile {
  static constexpr int RowElements = 128 / int(sizeof(Element));  // elements in one 128-byte swizzle row
  static_assert(TileK == RowElements, "Sm90OperandTile: a k-tile is one 128-byte swizzle row of K (TileK = 128 / sizeof(Element))");
  static constexpr int ChunkRows = RowElements;  // MN-major: rows of the operand per box (64 for 16-bit)
  static constexpr std::uint32_t ChunkBytes = std::uint32_t(ChunkRows * TileK * int(sizeof(Element)));

  // The copies of rows [row0, row0 + Rows) of k-tile k0 / TileK, batch `batch`, into `smem` (1024-byte
  // aligned), completing on `full`; Multicast: into the same offset of every CTA in `ctas`.
  // `mn_major` is read only when the kernel takes MN-major operands (MnMajorKernel). A non-zero
  // `policy` (l2_cache_policy) goes with the copies as their L2 cache hint.
  template <int Rows, bool Multicast, bool MnMajorKernel>
  TESSEL_DEVICE static void load(TmaDescriptor const* desc, std::uint64_t* full, Element* smem, std::uint16_t ctas,
                                 bool mn_major, int k0, int row0, int batch, std::uint64_t policy = 0) {
    auto const copy = [&](Element* dst, int c0, int c1) {
      if constexpr (Multicast) {
        if (policy != 0) {
          SM90_TMA_LOAD_MULTICAST::copy(desc, full, ctas, dst, {c0, c1, batch}, policy);
        } else {
          SM90_TMA_LOAD_MULTICAST::copy(desc, full, ctas, dst, {c0, c1, batch});
        }
      } else {
        if (policy != 0) {
          SM90_TMA_LOAD::copy(desc, full, dst, {c0, c1, batch}, policy);
        } else {
          SM90_TMA_LOAD::copy(desc, full, dst, {c0, c1, batch});
        }
      }
    };
    if constexpr (MnMajorKernel) {
      static_assert(Rows % ChunkRows == 0, "Sm90OperandTile: an MN-major operand is copied in boxes of 128 / sizeof(Element) rows; make each CTA's share of the tile whole boxes");
      if (mn_major) {
        TESSEL_UNROLL
        for (int c = 0; c < Rows / ChunkRows; ++c) copy(smem + c * ChunkRows * TileK, row0 + c * ChunkRows, k0);
        return;
      }
    }
    copy(smem, k0, row0);
  }

  // The first `boxes` boxes of an MN-major share that ends past the operand's edge, by the
  // operand's own map `desc` (the boxes after them, wholly past the edge, are not written).
  template <bool Multicast>
  TESSEL_DEVICE static void load_mn_boxes(TmaDescriptor const* desc, std::uint64_t* full, Element* smem, std::uint16_t ctas,
                                          int boxes, int k0, int row0, int batch) {
    for (int c = 0; c < boxes; ++c) {
      if constexpr (Multicast) {
        SM90_TMA_LOAD_MULTICAST::copy(desc, full, ctas, smem + c * ChunkRows * TileK, {row0 + c * ChunkRows, k0, batch});
      } else {
        SM90_TMA_LOAD::copy(desc, full, smem + c * ChunkRows * TileK, {row0 + c * ChunkRows, k0, batch});
      }
    }
  }

  // The rows of a K-major share that ends past the operand's edge, as one box of `desc` (the
  // operand's map whose box holds just the rows inside, rounded up to whole 8-row swizzle atoms):
  // the share's base is 1024-byte aligned, so they land where the full box would put them, and
  // the rows after them are not written.
  template <bool Multicast>
  TESSEL_DEVICE static void load_edge(TmaDescriptor const* desc, std::uint64_t* full, Element* smem, std::uint16_t ctas,
                                      int k0, int row0, int batch) {
    if constexpr (Multicast) {
      SM90_TMA_LOAD_MULTICAST::copy(desc, full, ctas, smem, {k0, row0, batch});
    } else {
      SM90_TMA_LOAD::copy(desc, full, smem, {k0, row0, batch});
    }
  }

  // The stage tile, (Rows,TileK), as the wgmma vocabulary states it (atom/gmma_smem_layout.hpp):
  // K-major, the SW128 atom (8 rows of one 128-byte row of K) tiled down the rows -- row r at
  // 128r bytes, as the one TMA box writes it; MN-major, the MN SW128 atom (64 MN-elements by 8
  // K-rows) tiled along K first -- one box of 64 MN-elements by TileK K-rows -- then box after box
  // along MN, ChunkBytes apart. A warpgroup's fragments of it (Sm90MmaConsumer) are the
  // descriptors of its instruction slices (atom/gmma_desc_fragment.hpp), checked at compile time
  // against the PTX ISA's canonical layouts.
  template <int MnMajor, int Rows>
  static constexpr auto layout() {
    if constexpr (MnMajor) {
      return tile_to_shape(GMMA::Layout_MN_SW128_Atom<Element>{}, Shape<Int<Rows>, Int<TileK>>{}, Step<_2, _1>{});
    } else {
      return tile_to_shape(GMMA::Layout_K_SW128_Atom<Element>{}, Shape<Int<Rows>, Int<TileK>>{});
    }
  }
  // Rows rows of the stage tile from `smem` on (1024-byte aligned; a multiple of 64 rows from the
  // tile's start when MN-major).
  template <int MnMajor, int Rows>
  TESSEL_DEVICE static auto tensor(Element* smem) {
    return make_tensor(make_smem_ptr(smem), layout<MnMajor, Rows>());  // (Rows,TileK)
  }
  // The wgmma descriptors of those rows as the A or the B operand of `mma`, a one-warpgroup
  // TiledMMA (every thread of a warpgroup sees a whole SS operand).
  template <int MnMajor, int Rows, class TiledMma>
  TESSEL_DEVICE static auto fragment_A(TiledMma const& mma, Element* smem) {
    return mma.get_slice(0).partition_fragment_A(tensor<MnMajor, Rows>(smem));  // (_1,MMA_M,MMA_K)
  }
  template <int MnMajor, int Rows, class TiledMma>
  TESSEL_DEVICE static auto fragment_B(TiledMma const& mma, Element* smem) {
    return mma.get_slice(0).partition_fragment_B(tensor<MnMajor, Rows>(smem));  // (_1,MMA_N,MMA_K)
  }
};

}  // namespace tessel::collective
