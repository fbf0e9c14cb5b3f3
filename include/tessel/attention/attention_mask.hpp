// tessel/attention/attention_mask.hpp -- which keys a query row sees, and which key blocks a
// query tile must visit and mask: pure functions, shared by the kernels and tested on the host.
//
// One sequence of S_q queries and S_k keys (attention_arguments.hpp): query i sits at key
// position p(i) = i + offset, offset = S_k - S_q (bottom-right) or 0 (top-left), and sees key j when
//     0 <= j < S_k  and  (left < 0 or j >= p(i) - left)  and  (right < 0 or j <= p(i) + right).
// A query tile holds rows [m0, m0 + BlkM); keys are visited in blocks of BlkN. The tile visits
// blocks [begin, end) -- every block holding a key some row of the tile sees -- and masks only
// the blocks where some element of the tile is not seen (the last partial block, the blocks the
// window's edges cross); the others run without a mask.
//
//   e.g. S_q = S_k = 256, causal (left -1, right 0), BlkM = 128, BlkN = 64, tile m0 = 128:
//        rows 128..255 see keys 0..255: blocks [0, 4); blocks 0 and 1 lie left of every row's
//        diagonal (no mask), blocks 2 and 3 cross the diagonal (masked).
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/gemm_coord.hpp>  // detail::floor_div

#include <cstdint>

namespace tessel {

struct AttentionMask {
  std::int64_t seqlen_k;  // S_k of this sequence
  std::int64_t offset;    // p(i) - i: S_k - S_q (bottom-right) or 0 (top-left)
  std::int64_t left;      // window sides, negative: unbounded
  std::int64_t right;

  // Does query row i see key j?
  TESSEL_HOST_DEVICE constexpr bool keeps(std::int64_t i, std::int64_t j) const {
    std::int64_t const p = i + offset;
    return j >= 0 && j < seqlen_k && (left < 0 || j >= p - left) && (right < 0 || j <= p + right);
  }

  // The keys row i sees, as [begin, end) (empty: begin >= end): keeps(i, j) == (begin <= j < end).
  struct Interval {
    std::int64_t begin, end;
  };
  TESSEL_HOST_DEVICE constexpr Interval keys_of(std::int64_t i) const {
    std::int64_t const p = i + offset;
    std::int64_t const lo = left < 0 ? 0 : (p - left > 0 ? p - left : 0);
    std::int64_t const hi = right < 0 ? seqlen_k : (p + right + 1 < seqlen_k ? p + right + 1 : seqlen_k);
    return {lo, hi};
  }

  // The rows that see key j, as [begin, end): keeps(i, j) == (begin <= i < end). A side without a
  // window edge is bounded by +-2^62 (no row index comes near it). The backward's transposed
  // tiles hold a few keys and many rows per thread: one interval per key masks them all.
  TESSEL_HOST_DEVICE constexpr Interval queries_of(std::int64_t j) const {
    constexpr std::int64_t kFar = std::int64_t(1) << 62;
    if (j < 0 || j >= seqlen_k) return {0, 0};
    return {right < 0 ? -kFar : j - right - offset, left < 0 ? kFar : j + left - offset + 1};
  }
};

// Key blocks [begin, end) of BlkN keys that a tile of rows [m0, m0 + rows) visits (begin == end:
// no key is seen by any row).
struct KeyBlockRange {
  int begin, end;
};

TESSEL_HOST_DEVICE constexpr KeyBlockRange key_blocks(AttentionMask const& m, std::int64_t m0, int rows, int blk_n) {
  std::int64_t lo = 0, hi = m.seqlen_k;  // keys [lo, hi)
  if (m.left >= 0) {
    std::int64_t const first = m0 + m.offset - m.left;  // the first row's leftmost key
    if (first > lo) lo = first;
  }
  if (m.right >= 0) {
    std::int64_t const last = m0 + rows - 1 + m.offset + m.right + 1;  // past the last row's rightmost key
    if (last < hi) hi = last;
  }
  if (hi <= lo) return {0, 0};
  return {int(detail::floor_div(lo, blk_n)), int((hi + blk_n - 1) / blk_n)};
}

// Whether key block n needs the mask for the tile of rows [m0, m0 + rows): some (row, key) of
// the block is not seen.
TESSEL_HOST_DEVICE constexpr bool key_block_needs_mask(AttentionMask const& m, std::int64_t m0, int rows, int n,
                                                       int blk_n) {
  std::int64_t const j0 = std::int64_t(n) * blk_n, j1 = j0 + blk_n - 1;  // the block's keys
  if (j1 >= m.seqlen_k) return true;
  if (m.right >= 0 && j1 > m0 + m.offset + m.right) return true;                // right of the first row's edge
  if (m.left >= 0 && j0 < m0 + rows - 1 + m.offset - m.left) return true;       // left of the last row's edge
  return false;
}

// The backward's mirror of key_blocks: query blocks [begin, end) of BlkM rows (of S_q) holding a
// row that sees some key of [n0, n0 + cols) (begin == end: no row sees any of them). Row i sees a
// key of [j0, j1] (clipped to [0, S_k)) exactly when p(i) + right >= j0 and p(i) - left <= j1: a
// row's keys are an interval whose ends move right with i, so the rows form one interval.
//   e.g. S_q = S_k = 256, causal, BlkM = 64: keys [128, 192) are seen by rows 128..255, blocks [2, 4).
struct QueryBlockRange {
  int begin, end;
};

TESSEL_HOST_DEVICE constexpr QueryBlockRange query_blocks(AttentionMask const& m, std::int64_t seqlen_q, std::int64_t n0,
                                                          int cols, int blk_m) {
  std::int64_t const j0 = n0 > 0 ? n0 : 0;
  std::int64_t const j1 = (n0 + cols < m.seqlen_k ? n0 + cols : m.seqlen_k) - 1;  // the last key that exists
  if (j1 < j0 || seqlen_q <= 0) return {0, 0};
  std::int64_t lo = 0, hi = seqlen_q;  // rows [lo, hi)
  if (m.right >= 0 && j0 - m.right - m.offset > lo) lo = j0 - m.right - m.offset;
  if (m.left >= 0 && j1 + m.left - m.offset + 1 < hi) hi = j1 + m.left - m.offset + 1;
  if (hi <= lo) return {0, 0};
  return {int(lo / blk_m), int((hi + blk_m - 1) / blk_m)};
}

}  // namespace tessel
