// tessel/gemm/kernel/sm90_row_residues.hpp -- reading a matrix whose rows are not 16-byte aligned
// with TMA, in place: one aligned tensor per residue class of its rows.
//
// TMA wants a 16-byte aligned base and row stride. A row-major matrix with leading dimension ld
// (elements of `bytes` bytes) breaks that when ld * bytes is not a multiple of 16 (an odd ld,
// say), but rows r, r + P, r + 2P, ... -- with P the smallest count for which P * ld * bytes is a
// multiple of 16 -- all start at the same address modulo 16. So residue class r of the rows is
// an aligned tensor after two shifts: its base moves down to the 16-byte boundary below row r's
// first element, and the columns move right by the difference (the skew, in elements):
//
//   element (m, k), m = r + P i   ==   view r at (column skew_r + k, row i)
//   view r: base = align_down(ptr + r * ld, 16 bytes), row stride P * ld, columns skew_r + K,
//           rows ceil((rows - r) / P)
//
// Column skew_r + k < skew_r + K, so TMA still zero-fills past K; columns below skew_r are never
// asked for. A tile of TileRows rows (m0 a multiple of TileRows, TileRows a multiple of P) is then
// P boxes of TileRows / P rows, one per class, stacked in shared memory: shared row s holds tile
// row residue_row(s) -- the rows come permuted, which a GEMM absorbs by computing the tile with
// its rows (or, for B, its columns) in that order and putting each result where it belongs.
//
//   e.g. ld = 4099 bf16 (8198 bytes, 6 mod 16): P = 8; a 128-row tile is 8 boxes of 16 rows;
//        shared row s = 16 r + i holds tile row r + 8 i (residue_row(s, 8, 128)).
//
// Plain C++ (the host adapter plans the views; kernels map rows with residue_row).
#pragma once

#include <tessel/config.hpp>

#include <cstdint>

namespace tessel::kernel {

// The most residue classes a kernel takes per operand (bf16/fp16 with any ld need at most 8;
// 1-byte elements with an odd ld would need 16 and are staged instead).
inline constexpr int kSm90MaxResidues = 8;

// The smallest P >= 1 with P * ld * bytes a multiple of 16 (1 when the rows are aligned).
//   Pre: ld >= 0, bytes in {1, 2, 4}.
TESSEL_HOST_DEVICE constexpr int residue_period(std::int64_t ld, int bytes) {
  std::int64_t const row = (ld * bytes) % 16;
  int p = 1;
  while ((row * p) % 16 != 0) p *= 2;
  return p;
}

// Shared row s of a tile of `tile_rows` rows loaded as `residues` class boxes -> the tile row it
// holds. Pre: residues divides tile_rows, 0 <= s < tile_rows. residue_slot is the inverse.
TESSEL_HOST_DEVICE constexpr int residue_row(int s, int residues, int tile_rows) {
  int const per = tile_rows / residues;
  return (s % per) * residues + s / per;
}
TESSEL_HOST_DEVICE constexpr int residue_slot(int u, int residues, int tile_rows) {
  int const per = tile_rows / residues;
  return (u % residues) * per + u / residues;
}

// A tile loaded in `pieces` boxes (a multiple of `residues`: a class may be split further, e.g. to
// share B among the CTAs of a cluster): piece q is class q / (pieces / residues), rows
// [first, first + rows) of that class's part of the tile, landing at shared row q * rows.
struct ResiduePiece {
  int residue;  // the class, and the descriptor to use
  int first;    // row of the class, relative to the tile's first row of it (tile row 0 / residues)
  int rows;     // box rows; the piece lands at shared row q * rows
};
TESSEL_HOST_DEVICE constexpr ResiduePiece residue_piece(int q, int pieces, int residues, int tile_rows) {
  int const per_class = pieces / residues, rows = tile_rows / pieces;
  return {q / per_class, (q % per_class) * rows, rows};
}

// Residue class r of a matrix's rows as an aligned tensor (the file comment). Addresses in bytes.
struct ResidueView {
  std::uintptr_t base = 0;   // 16-byte aligned
  int skew = 0;              // elements: column k of the matrix is column skew + k of the view
  std::int64_t rows = 0;     // rows of the class: ceil((rows - r) / P)
  std::int64_t row_stride = 0;  // elements: P * ld
};

// Pre: ptr a multiple of `bytes`, 0 <= r < residues, residues a multiple of
// residue_period(ld, bytes). Post: base % 16 == 0, (row_stride * bytes) % 16 == 0, and the
// element (r + residues * i, k) of the matrix is at base + (i * row_stride + skew + k) * bytes.
TESSEL_HOST_DEVICE constexpr ResidueView residue_view(std::uintptr_t ptr, std::int64_t ld, int bytes, std::int64_t rows,
                                                      int residues, int r) {
  std::uintptr_t const first = ptr + std::uintptr_t(r * ld * bytes);
  ResidueView v;
  v.base = first & ~std::uintptr_t(15);
  v.skew = int((first - v.base) / std::uintptr_t(bytes));
  v.rows = rows > r ? (rows - r + residues - 1) / residues : 0;
  v.row_stride = residues * ld;
  return v;
}

}  // namespace tessel::kernel
