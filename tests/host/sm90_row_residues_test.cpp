// The sm_90a GEMM's reading of unaligned rows in place and its epilogue staging, on the host:
//   - residue_period / residue_view against the definition: every element of a matrix with any
//     leading dimension and element-aligned pointer is where its class's aligned view says, the
//     views are 16-byte aligned, and the classes hold exactly the rows r, r + P, ...;
//   - the tile as the producer loads it (A: one box per class; B: pieces split among a cluster)
//     puts tile row residue_row(s) at shared row s, every row exactly once;
//   - the TMA-store epilogue's boxes (runs of shared rows within one class) are D rows r + P i;
//   - the staged stores of every thread cover the 64 x TileN buffer once, each element holding the
//     accumulator that wgmma's layout and the column permutation put there, with 0 bank conflicts
//     for one class and eight (the aligned and the odd-leading-dimension cases).
#include <tessel/analysis/bank_conflicts.hpp>
#include <tessel/arch/sm90_mma_wgmma.hpp>
#include <tessel/gemm/epilogue/sm90_epilogue_staging.hpp>
#include <tessel/gemm/kernel/sm90_row_residues.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

using namespace tessel;
using kernel::residue_period;
using kernel::residue_piece;
using kernel::residue_row;
using kernel::residue_slot;
using kernel::residue_view;

TEST(Sm90RowResidues, PeriodIsTheSmallestAligningRowCount) {
  for (int bytes : {1, 2, 4}) {
    for (std::int64_t ld = 0; ld < 200; ++ld) {
      int const p = residue_period(ld, bytes);
      EXPECT_EQ((p * ld * bytes) % 16, 0) << "ld " << ld << " bytes " << bytes;
      for (int q = 1; q < p; ++q) EXPECT_NE((q * ld * bytes) % 16, 0) << "ld " << ld << " bytes " << bytes << ": " << q;
      EXPECT_EQ(p & (p - 1), 0) << "a power of two";
    }
  }
  EXPECT_EQ(residue_period(4099, 2), 8);
  EXPECT_EQ(residue_period(4098, 2), 4);
  EXPECT_EQ(residue_period(4100, 2), 2);
  EXPECT_EQ(residue_period(4104, 2), 1);
  EXPECT_EQ(residue_period(4099, 1), 16);
}

TEST(Sm90RowResidues, EveryElementIsWhereItsViewSays) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 400; ++trial) {
    int const bytes = 1 << (trial % 3);
    std::int64_t const cols = 1 + std::int64_t(rng() % 70), rows = 1 + std::int64_t(rng() % 40);
    std::int64_t const ld = cols + std::int64_t(rng() % 20);
    std::uintptr_t const ptr = 0x10000 + bytes * std::uintptr_t(rng() % 64);  // any element-aligned address
    int const period = residue_period(ld, bytes);
    for (int classes = period; classes <= 16; classes *= 2) {
      std::int64_t counted = 0;
      for (int r = 0; r < classes; ++r) {
        kernel::ResidueView const v = residue_view(ptr, ld, bytes, rows, classes, r);
        SCOPED_TRACE("bytes " + std::to_string(bytes) + " ld " + std::to_string(ld) + " classes " +
                     std::to_string(classes) + " r " + std::to_string(r));
        ASSERT_EQ(v.base % 16, 0u);
        ASSERT_EQ((v.row_stride * bytes) % 16, 0);
        ASSERT_GE(v.skew, 0);
        ASSERT_LT(v.skew * bytes, 16);
        std::int64_t expect_rows = 0;
        for (std::int64_t m = r; m < rows; m += classes) ++expect_rows;
        ASSERT_EQ(v.rows, expect_rows);
        for (std::int64_t i = 0; i < v.rows; ++i) {
          std::int64_t const m = r + classes * i;
          for (std::int64_t k = 0; k < cols; ++k) {
            std::uintptr_t const want = ptr + std::uintptr_t((m * ld + k) * bytes);
            std::uintptr_t const got = v.base + std::uintptr_t((i * v.row_stride + v.skew + k) * bytes);
            ASSERT_EQ(got, want) << "element (" << m << "," << k << ")";
          }
        }
        counted += v.rows;
      }
      EXPECT_EQ(counted, rows);
    }
  }
}

TEST(Sm90RowResidues, LoadedTilesHoldEveryRowOnceWhereResidueRowSays) {
  for (int tile : {64, 128, 256}) {
    for (int classes : {1, 2, 4, 8}) {
      if (tile / classes < 8) continue;
      // residue_row and residue_slot are inverse permutations of the tile's rows.
      std::vector<int> seen(std::size_t(tile), 0);
      for (int s = 0; s < tile; ++s) {
        int const u = residue_row(s, classes, tile);
        ASSERT_GE(u, 0);
        ASSERT_LT(u, tile);
        ++seen[std::size_t(u)];
        EXPECT_EQ(residue_slot(u, classes, tile), s);
      }
      for (int u = 0; u < tile; ++u) EXPECT_EQ(seen[std::size_t(u)], 1) << "tile row " << u;
      // The producer's boxes: `pieces` of them (split among 1, 2 or 4 CTAs of a cluster); piece q
      // lands at shared rows [q * rows, (q + 1) * rows) and holds class r's rows first, first + 1,
      // ... i.e. tile rows r + classes * (first + x).
      for (int cluster : {1, 2, 4}) {
        int const pieces = classes > cluster ? classes : cluster;
        if (tile / pieces < 8) continue;
        std::vector<int> filled(std::size_t(tile), 0);
        for (int q = 0; q < pieces; ++q) {
          kernel::ResiduePiece const piece = residue_piece(q, pieces, classes, tile);
          ASSERT_EQ(piece.rows * pieces, tile);
          for (int x = 0; x < piece.rows; ++x) {
            int const s = q * piece.rows + x;
            ++filled[std::size_t(s)];
            EXPECT_EQ(piece.residue + classes * (piece.first + x), residue_row(s, classes, tile))
                << "tile " << tile << " classes " << classes << " cluster " << cluster << " piece " << q;
          }
        }
        for (int s = 0; s < tile; ++s) EXPECT_EQ(filled[std::size_t(s)], 1) << "shared row " << s;
      }
    }
  }
}

TEST(Sm90RowResidues, StoreBoxesOfAConsumerAreRowsOfOneClass) {
  // sm90_epilogue_tma: consumer c's shared rows [64c, 64c + 64) leave in boxes of min(64, 128 / P)
  // rows; a box starting at shared row `slot` is class slot / per, rows i = slot % per onwards,
  // i.e. tile rows r + P (i + x). Each must be residue_row of its shared row.
  constexpr int TileM = 128;
  for (int classes : {1, 2, 4, 8}) {
    int const per = TileM / classes, box_rows = per < 64 ? per : 64;
    for (int consumer = 0; consumer < 2; ++consumer) {
      for (int s0 = 0; s0 < 64; s0 += box_rows) {
        int const slot = consumer * 64 + s0, r = slot / per, i = slot % per;
        for (int x = 0; x < box_rows; ++x)
          EXPECT_EQ(r + classes * (i + x), residue_row(slot + x, classes, TileM)) << "classes " << classes;
      }
    }
  }
}

TEST(Sm90EpilogueStaging, EveryElementOnceHoldingItsAccumulator) {
  for (int tile_n : {64, 128, 256}) {
    for (int classes : {1, 2, 4, 8}) {
      if (tile_n % (8 * classes) != 0) continue;
      int const stores = epilogue::sm90_staged_stores(tile_n, classes);
      std::vector<int> hits(std::size_t(64 * tile_n), 0);
      std::vector<int> offsets(std::size_t(64 * tile_n), -1);
      for (int thread = 0; thread < 128; ++thread) {
        for (int i = 0; i < stores; ++i) {
          epilogue::Sm90StagedStore const at = epilogue::sm90_staged_store(thread, i, classes);
          ASSERT_EQ(at.width, classes == 1 ? 2 : classes);
          ASSERT_EQ(at.col % at.width, 0) << "a store is one aligned vector";
          for (int t = 0; t < at.width; ++t) {
            int const reg = epilogue::sm90_staged_register(i, t, classes, tile_n);
            ASSERT_GE(reg, 0);
            ASSERT_LT(reg, tile_n / 2);
            WgmmaCoord const acc = wgmma_accumulator_coord(thread, reg);
            EXPECT_EQ(acc.row, at.row);
            EXPECT_EQ(residue_row(acc.col, classes, tile_n), at.col + t)
                << "tile_n " << tile_n << " classes " << classes << " thread " << thread << " store " << i;
            ++hits[std::size_t(at.row * tile_n + at.col + t)];
            // Consecutive elements of a store are consecutive bytes.
            int const offset = epilogue::sm90_staging_offset(at.row, at.col + t);
            EXPECT_EQ(offset, epilogue::sm90_staging_offset(at.row, at.col) + 2 * t);
            offsets[std::size_t(at.row * tile_n + at.col + t)] = offset;
          }
        }
      }
      for (int e = 0; e < 64 * tile_n; ++e) ASSERT_EQ(hits[std::size_t(e)], 1) << "element " << e;
      // The buffer's layout is a bijection onto 64 * tile_n * 2 bytes.
      std::vector<int> used(std::size_t(64 * tile_n), 0);
      for (int o : offsets) ++used[std::size_t(o / 2)];
      for (int u : used) ASSERT_EQ(u, 1);
    }
  }
}

TEST(Sm90EpilogueStaging, StoresAreConflictFreeForOneAndEightClasses) {
  using analysis::analyse;
  using analysis::shared_instruction;
  using analysis::SmemOp;
  for (int classes : {1, 2, 4, 8}) {
    int const stores = epilogue::sm90_staged_stores(256, classes);
    int worst = 0;
    for (int warp = 0; warp < 4; ++warp) {
      for (int i = 0; i < stores; ++i) {
        int const width_bytes = 2 * epilogue::sm90_staged_store(0, i, classes).width;
        auto const r = analyse(shared_instruction(SmemOp::access, width_bytes, [&](int lane) {
          epilogue::Sm90StagedStore const at = epilogue::sm90_staged_store(32 * warp + lane, i, classes);
          return epilogue::sm90_staging_offset(at.row, at.col);
        }));
        worst = r.conflicts() > worst ? r.conflicts() : worst;
      }
    }
    if (classes == 1 || classes == 8) {
      EXPECT_EQ(worst, 0) << classes << " classes";
    } else {
      // 2 and 4 classes (leading dimensions 2 or 4 mod 8) are rare: a few conflicts are accepted.
      EXPECT_LE(worst, 12) << classes << " classes";
    }
  }
}
