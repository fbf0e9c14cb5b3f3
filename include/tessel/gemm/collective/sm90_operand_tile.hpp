// tessel/gemm/collective/sm90_operand_tile.hpp -- one operand tile of a pipeline stage of the
// sm_90a GEMM (kernel/sm90_gemm_warpspecialized.hpp), K-major or MN-major: the TMA copies that
// fill it and the wgmma descriptors that read it. Both are 128-byte swizzled (one swizzle row of
// 128 bytes = 128 / sizeof(Element) elements) and hold the same Rows x TileK elements, so the
// stage's storage and its expect_tx byte count do not depend on the choice.
//
//   K-major   (the operand's K contiguous in global memory; TileK = one 128-byte row): one TMA
//             box of (TileK, Rows) -- row r at 128r bytes; the descriptor from the vocabulary
//             (below), the k-th k-slice of Mma::K elements Mma::K * sizeof(Element) bytes further.
//   MN-major  (its M or N contiguous; 16-bit inputs, read with the wgmma transpose bit): Rows / 64
//             boxes of (64, TileK) -- 64 MN-elements (128 bytes) by TileK K-rows, K-row r of box
//             c at c * ChunkBytes + 128r bytes; wgmma_desc_mn_major_sw128 with ChunkBytes as the
//             leading-dimension offset (an m64 A reads one box, an n256 B four), the k-th k-slice
//             Mma::K K-rows = Mma::K * 128 bytes further (sm90_mma_wgmma.hpp has the PTX rule).
//
// The tensor maps behind them (src/gemm/sm90_gemm.cpp): K-major (K, rows, batch), MN-major
// (rows, K, batch); either way TMA zero-fills what lies past the operand's edges.
//
// The K-major stage tile is stated as the atom/ vocabulary states it (the wgmma SW128 atom of
// atom/gmma_smem_layout.hpp tiled down the rows with tile_to_shape), and its descriptor's
// offsets and swizzle come from that layout at compile time (GMMA::gmma_descriptor_layout,
// atom/gmma_descriptor.hpp, which also checks that wgmma can read it); only the start address is
// computed at run time. The MN-major descriptor is still the hand-written one (the host test
// sm90_gmma_descriptor_test checks both against the vocabulary and the PTX ISA's layouts).
#pragma once

#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/arch/sm90_mma_wgmma.hpp>
#include <tessel/atom/gmma_descriptor.hpp>
#include <tessel/atom/gmma_smem_layout.hpp>
#include <tessel/config.hpp>
#include <tessel/layout/tile_to_shape.hpp>

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
          tma_load_3d_multicast_hint(desc, full, dst, ctas, c0, c1, batch, policy);
        } else {
          tma_load_3d_multicast(desc, full, dst, ctas, c0, c1, batch);
        }
      } else {
        if (policy != 0) {
          tma_load_3d_hint(desc, full, dst, c0, c1, batch, policy);
        } else {
          tma_load_3d(desc, full, dst, c0, c1, batch);
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
        tma_load_3d_multicast(desc, full, smem + c * ChunkRows * TileK, ctas, row0 + c * ChunkRows, k0, batch);
      } else {
        tma_load_3d(desc, full, smem + c * ChunkRows * TileK, row0 + c * ChunkRows, k0, batch);
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
      tma_load_3d_multicast(desc, full, smem, ctas, k0, row0, batch);
    } else {
      tma_load_3d(desc, full, smem, k0, row0, batch);
    }
  }

  // Two swizzle atoms of a K-major stage tile (16 rows: the offsets do not depend on how many rows
  // follow, and nvcc's constexpr step limit stops the full tile's check).
  static constexpr auto k_major_stage_layout() {
    return tile_to_shape(GMMA::Layout_K_SW128_Atom<Element>{}, Shape<_16, Int<TileK>>{});
  }
  static constexpr GMMA::DescriptorLayout k_major_descriptor_layout =
      GMMA::gmma_descriptor_layout<GMMA::Major::K, Element>(k_major_stage_layout());
  static_assert(k_major_descriptor_layout.error == GMMA::DescError::none &&
                    k_major_descriptor_layout.layout_type == GMMA::LayoutType::B128 &&
                    k_major_descriptor_layout.stride_byte_offset == 1024,
                "Sm90OperandTile: wgmma cannot read the K-major stage layout its TMA boxes fill");

  // The descriptor of the tile (or of its rows from `smem` on: a multiple of 64 rows when MN-major).
  template <int MnMajor>
  TESSEL_DEVICE static std::uint64_t descriptor(Element const* smem) {
    if constexpr (MnMajor) {
      // (The vocabulary's check of a 128 x TileK MN-major stage exceeds nvcc's constexpr step
      // limit; sm90_gmma_descriptor_test checks this one against it on the host.)
      return wgmma_desc_mn_major_sw128(smem, ChunkBytes);
    } else {
      constexpr GMMA::DescriptorLayout d = k_major_descriptor_layout;
      GMMA::DescriptorFields f;
      f.start_address = detail::smem_address(smem);
      f.leading_byte_offset = d.leading_byte_offset, f.stride_byte_offset = d.stride_byte_offset;
      f.layout_type = d.layout_type;
      return GMMA::encode(f);
    }
  }

  // How far the descriptor's start address moves per further k-slice of MmaK elements, in its
  // 16-byte units (wgmma_desc_advance).
  template <int MnMajor, int MmaK>
  static constexpr std::uint32_t k_step = std::uint32_t(MnMajor ? MmaK * 128 / 16 : MmaK * int(sizeof(Element)) / 16);
};

}  // namespace tessel::collective
