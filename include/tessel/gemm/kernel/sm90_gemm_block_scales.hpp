// tessel/gemm/kernel/sm90_gemm_block_scales.hpp -- one consumer thread's block scales in a
// block-scaled sm_90a fp8 GEMM (Sm90GemmConfig::BlockScaled; the layouts are GemmArguments', in
// tessel/gemm/device/gemm_arguments.hpp).
//
// The kernel promotes every 128-deep k-tile kt, a 128-column half h of the 256-wide tile at a
// time: the half's wgmma partial P (fp32) joins the sum as
//   acc(i, j) += P(i, j) * a_scales(i, kt) * b_scales(j / 128, kt)
// A thread's accumulator registers cover two rows, r and r + 8 (wgmma_accumulator_coord), and a
// half's columns lie in one 128-column block (the tile starts at a multiple of 256), so per k-tile
// it needs four products: s[2h + e] = a_scales(r + 8e, kt) * b_scales(n0 / 128 + h, kt).
//   e.g. r = 5, n0 = 256, kt = 3: s[0] = a(5, 3) * b(2, 3), s[1] = a(13, 3) * b(2, 3),
//        s[2] = a(5, 3) * b(3, 3), s[3] = a(13, 3) * b(3, 3).
// Rows past M and column blocks past N (a tile over the edge) read the last row's and block's
// scales: their products only reach D outside its edge, which is never written.
#pragma once

#include <tessel/config.hpp>
#include <tessel/gemm/kernel/sm90_gemm_params.hpp>

#include <cstdint>

namespace tessel::kernel::detail {

struct Sm90BlockScales {
  float const* a = nullptr;  // a_scales of row r, k-tile 0 (the batch's)
  float const* b = nullptr;  // b_scales of the tile's first column block, k-tile 0
  std::int64_t a_step = 0;   // a_scales' leading dimension: one k-tile on
  int a_next = 0;            // row r + 8's offset from row r's (0: past M, clamped)
  std::int64_t b_next = 0;   // the second column block's offset from the first's (0: past N)

  // The k-tile's four products (above). Read-only global loads: they stay in L2, each tile row's
  // A scales are 512 bytes per k-tile, a tile column's B scales 8.
  TESSEL_DEVICE void load(int kt, float (&s)[4]) const {
    float const* const ak = a + std::int64_t(kt) * a_step;
    float const a0 = __ldg(ak), a1 = __ldg(ak + a_next);
    float const b0 = __ldg(b + kt), b1 = __ldg(b + b_next + kt);
    s[0] = a0 * b0, s[1] = a1 * b0, s[2] = a0 * b1, s[3] = a1 * b1;
  }
};

// The scales of the thread whose first accumulator row is `row` (of the kernel's D) in the tile at
// column n0 of batch `batch`.
TESSEL_DEVICE inline Sm90BlockScales sm90_block_scales(Sm90GemmParams const& p, int row, int n0, int batch) {
  std::int64_t const last_row = p.m - 1;
  std::int64_t const r0 = row < last_row ? row : last_row;
  std::int64_t const r1 = row + 8 < last_row ? row + 8 : last_row;
  int const nb0 = n0 / 128 < p.n_scale_blocks - 1 ? n0 / 128 : p.n_scale_blocks - 1;
  int const nb1 = nb0 + 1 < p.n_scale_blocks ? nb0 + 1 : nb0;
  Sm90BlockScales s;
  s.a = p.a_scales + std::int64_t(batch) * p.a_batch_scales + r0;
  s.b = p.b_scales + std::int64_t(batch) * p.b_batch_scales + std::int64_t(nb0) * p.ldb_scales;
  s.a_step = p.lda_scales;
  s.a_next = int(r1 - r0);
  s.b_next = std::int64_t(nb1 - nb0) * p.ldb_scales;
  return s;
}

}  // namespace tessel::kernel::detail
