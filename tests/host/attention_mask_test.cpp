// The mask's pure functions (tessel/attention/attention_mask.hpp) against brute force over keeps():
// key_blocks covers exactly the blocks holding a seen key, key_block_needs_mask is true exactly
// where some (row, key) of a visited block is not seen, keys_of and queries_of are keeps() as intervals, and
// query_blocks (the backward's walk over query blocks per key block) visits exactly the query
// blocks holding a row that sees a key of the block.
#include <tessel/attention/attention_mask.hpp>
#include <tessel/attention/kernel/attention_backward_params.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace {

using tessel::AttentionMask;

std::vector<AttentionMask> masks(std::int64_t sq, std::int64_t sk) {
  std::vector<AttentionMask> out;
  std::int64_t const offsets[] = {sk - sq, 0};
  std::int64_t const sides[] = {-1, 0, 1, 5, 17, 64, 300};
  for (std::int64_t off : offsets)
    for (std::int64_t l : sides)
      for (std::int64_t r : sides) out.push_back({sk, off, l, r});
  return out;
}

TEST(AttentionMask, WorkedExampleOfTheHeader) {
  AttentionMask const causal{256, 0, -1, 0};
  auto const r = tessel::key_blocks(causal, 128, 128, 64);
  EXPECT_EQ(r.begin, 0);
  EXPECT_EQ(r.end, 4);
  EXPECT_FALSE(tessel::key_block_needs_mask(causal, 128, 128, 0, 64));
  EXPECT_FALSE(tessel::key_block_needs_mask(causal, 128, 128, 1, 64));
  EXPECT_TRUE(tessel::key_block_needs_mask(causal, 128, 128, 2, 64));
  EXPECT_TRUE(tessel::key_block_needs_mask(causal, 128, 128, 3, 64));
}

TEST(AttentionMask, BlocksAndMasksMatchBruteForce) {
  std::int64_t const lengths[][2] = {{1, 1}, {1, 239}, {239, 1}, {113, 203}, {799, 3}, {200, 200}, {0, 5}, {5, 0}};
  int const blk_m = 64, blk_n = 32;
  for (auto const& len : lengths) {
    std::int64_t const sq = len[0], sk = len[1];
    for (AttentionMask const& m : masks(sq, sk)) {
      for (std::int64_t m0 = 0; m0 < sq; m0 += blk_m) {
        int const rows = int(sq - m0 < blk_m ? sq - m0 : blk_m);
        auto const r = tessel::key_blocks(m, m0, rows, blk_n);
        int const blocks = int((sk + blk_n - 1) / blk_n);
        for (int n = -1; n <= blocks; ++n) {
          bool any = false, all = true;
          for (std::int64_t i = m0; i < m0 + rows; ++i)
            for (std::int64_t j = std::int64_t(n) * blk_n; j < std::int64_t(n + 1) * blk_n; ++j) {
              bool const k = m.keeps(i, j);
              any = any || k;
              all = all && k;
            }
          bool const visited = n >= r.begin && n < r.end;
          SCOPED_TRACE(testing::Message() << "S_q " << sq << " S_k " << sk << " offset " << m.offset << " window ("
                                          << m.left << ", " << m.right << ") m0 " << m0 << " block " << n);
          if (any) EXPECT_TRUE(visited);
          if (visited) EXPECT_EQ(tessel::key_block_needs_mask(m, m0, rows, n, blk_n), !all);
        }
        for (std::int64_t i = m0; i < m0 + rows; ++i) {
          auto const keys = m.keys_of(i);
          for (std::int64_t j = -3; j < sk + 3; ++j) ASSERT_EQ(m.keeps(i, j), keys.begin <= j && j < keys.end);
        }
      }
    }
  }
}

TEST(AttentionMask, QueryBlocksWorkedExample) {
  AttentionMask const causal{256, 0, -1, 0};
  auto const r = tessel::query_blocks(causal, 256, 128, 64, 64);
  EXPECT_EQ(r.begin, 2);
  EXPECT_EQ(r.end, 4);
}

TEST(AttentionMask, QueryBlocksMatchBruteForce) {
  std::int64_t const lengths[][2] = {{1, 1}, {1, 239}, {239, 1}, {113, 203}, {799, 3}, {200, 200}, {0, 5}, {5, 0}};
  int const blk_m = 64, blk_n = 32;
  for (auto const& len : lengths) {
    std::int64_t const sq = len[0], sk = len[1];
    for (AttentionMask const& m : masks(sq, sk)) {
      for (std::int64_t n0 = 0; n0 < sk; n0 += blk_n) {
        int const cols = int(sk - n0 < blk_n ? sk - n0 : blk_n);
        auto const r = tessel::query_blocks(m, sq, n0, cols, blk_m);
        int const blocks = int((sq + blk_m - 1) / blk_m);
        for (int b = -1; b <= blocks; ++b) {
          bool any = false;
          for (std::int64_t i = std::int64_t(b) * blk_m; i < std::int64_t(b + 1) * blk_m; ++i)
            for (std::int64_t j = n0; j < n0 + cols; ++j) any = any || (i >= 0 && i < sq && m.keeps(i, j));
          SCOPED_TRACE(testing::Message() << "S_q " << sq << " S_k " << sk << " offset " << m.offset << " window ("
                                          << m.left << ", " << m.right << ") n0 " << n0 << " query block " << b);
          EXPECT_EQ(b >= r.begin && b < r.end, any);
        }
      }
      for (std::int64_t j = -3; j < sk + 3; ++j) {
        auto const rows = m.queries_of(j);
        SCOPED_TRACE(testing::Message() << "S_q " << sq << " S_k " << sk << " offset " << m.offset << " window ("
                                        << m.left << ", " << m.right << ") key " << j);
        for (std::int64_t i = -3; i < sq + 3; ++i) ASSERT_EQ(m.keeps(i, j), rows.begin <= i && i < rows.end) << "row " << i;
      }
    }
  }
}

// The deterministic backward orders the key blocks' dQ additions to a query block last to first,
// key_blocks(...).end - 1 - n before key block n: that is right only if the key blocks whose
// query_blocks hold the query block are exactly key_blocks' range (cut to the blocks that exist).
TEST(AttentionMask, KeyBlocksAreExactlyTheBlocksWhoseQueryBlocksHoldTheRows) {
  std::int64_t const lengths[][2] = {{1, 1}, {1, 239}, {239, 1}, {113, 203}, {799, 3}, {200, 200}, {300, 1000}, {1000, 300}};
  int const blk_m = 64, blk_n = 128;
  for (auto const& len : lengths) {
    std::int64_t const sq = len[0], sk = len[1];
    int const key_blocks = int((sk + blk_n - 1) / blk_n);
    for (AttentionMask const& m : masks(sq, sk)) {
      for (std::int64_t m0 = 0; m0 < sq; m0 += blk_m) {
        int const rows = int(sq - m0 < blk_m ? sq - m0 : blk_m);
        auto const r = tessel::key_blocks(m, m0, rows, blk_n);
        int const begin = r.begin < 0 ? 0 : r.begin, end = r.end > key_blocks ? key_blocks : r.end;
        for (int n = 0; n < key_blocks; ++n) {
          std::int64_t const n0 = std::int64_t(n) * blk_n;
          auto const q = tessel::query_blocks(m, sq, n0, int(sk - n0 < blk_n ? sk - n0 : blk_n), blk_m);
          bool const visits = m0 / blk_m >= q.begin && m0 / blk_m < q.end;
          SCOPED_TRACE(testing::Message() << "S_q " << sq << " S_k " << sk << " offset " << m.offset << " window ("
                                          << m.left << ", " << m.right << ") m0 " << m0 << " key block " << n);
          ASSERT_EQ(visits, n >= begin && n < end);
        }
      }
    }
  }
}

// The rotated order against brute force: key block j starts at query block r_j and walks on
// cyclically, so it reaches query block i at step (i - r_j) mod m; the additions to query block i
// go in the order of those steps, which are distinct (m >= nk), so every key block waits only on
// key blocks that reached i at an earlier step -- and the turns before key block j are its rank.
TEST(AttentionMask, RotatedDqOrderIsTheOrderOfArrival) {
  for (int nk = 1; nk <= 20; ++nk)
    for (int m = nk; m <= 3 * nk + 5; ++m)
      for (int i = 0; i < m; ++i) {
        std::vector<int> step(nk), by_step(nk);
        for (int j = 0; j < nk; ++j) step[j] = ((i - tessel::kernel::attention_bwd_dq_rotation(j, m, nk)) % m + m) % m;
        std::iota(by_step.begin(), by_step.end(), 0);
        std::sort(by_step.begin(), by_step.end(), [&](int x, int y) { return step[x] < step[y]; });
        for (int rank = 0; rank < nk; ++rank) {
          int const j = by_step[rank];
          SCOPED_TRACE(testing::Message() << "m " << m << " nk " << nk << " query block " << i << " key block " << j);
          if (rank > 0) ASSERT_LT(step[by_step[rank - 1]], step[j]);
          ASSERT_EQ(tessel::kernel::attention_bwd_dq_turns_before(true, j, i, m, nk, nk), rank);
        }
      }
  // The header's example: m 4, nk 2.
  EXPECT_EQ(tessel::kernel::attention_bwd_dq_rotation(1, 4, 2), 2);
  EXPECT_EQ(tessel::kernel::attention_bwd_dq_turns_before(true, 1, 1, 4, 2, 2), 1);
  EXPECT_EQ(tessel::kernel::attention_bwd_dq_turns_before(true, 0, 3, 4, 2, 2), 1);
  // Rotated only where every key is kept, m >= nk and the nk CTAs fit on the SMs at once.
  tessel::kernel::AttentionParams full{};
  full.window_left = full.window_right = -1;
  EXPECT_TRUE(tessel::kernel::attention_bwd_dq_rotates(full, 64, 32, 132));
  EXPECT_FALSE(tessel::kernel::attention_bwd_dq_rotates(full, 16, 32, 132));
  EXPECT_FALSE(tessel::kernel::attention_bwd_dq_rotates(full, 512, 256, 132));
  tessel::kernel::AttentionParams causal = full;
  causal.window_right = 0;
  EXPECT_FALSE(tessel::kernel::attention_bwd_dq_rotates(causal, 64, 32, 132));
  // Last to first: key block 5 of the blocks [2, 7) that see a query block comes second.
  EXPECT_EQ(tessel::kernel::attention_bwd_dq_turns_before(false, 5, 0, 0, 0, 7), 1);
}

// The preprocess's lanes a row: 16-byte pieces of D_v, rounded up to a power of two, at most 32.
TEST(AttentionMask, PreprocessLanesCoverTheRowInSixteenBytePieces) {
  using tessel::kernel::attention_bwd_preprocess_lanes;
  EXPECT_EQ(attention_bwd_preprocess_lanes(64), 8);
  EXPECT_EQ(attention_bwd_preprocess_lanes(96), 16);
  EXPECT_EQ(attention_bwd_preprocess_lanes(128), 16);
  EXPECT_EQ(attention_bwd_preprocess_lanes(192), 32);
  EXPECT_EQ(attention_bwd_preprocess_lanes(256), 32);
  for (int d = 8; d <= 512; d += 8) {
    int const lanes = attention_bwd_preprocess_lanes(d);
    EXPECT_EQ(32 % lanes, 0) << d;                             // whole rows a warp
    EXPECT_TRUE(8 * lanes >= d || lanes == 32) << d;           // one piece a lane where 32 lanes suffice
    EXPECT_TRUE(lanes == 1 || 8 * (lanes / 2) < d) << d;       // and no more lanes than that
  }
}

// The default mode's grouped CTA order: every (key block, pair) exactly once; within a group the
// key blocks in order, each for all the group's pairs; the groups in order.
TEST(AttentionMask, GroupedBlockOrderVisitsEveryBlockOnceLongestFirst) {
  using tessel::kernel::attention_bwd_block_of;
  for (int n_blocks = 1; n_blocks <= 9; ++n_blocks)
    for (int pairs = 1; pairs <= 11; ++pairs)
      for (int group = 1; group <= pairs + 1; ++group) {
        SCOPED_TRACE(testing::Message() << "n_blocks " << n_blocks << " pairs " << pairs << " group " << group);
        std::vector<int> seen(std::size_t(n_blocks) * pairs, 0);
        int last_group = 0, last_n_block = 0;
        for (int linear = 0; linear < n_blocks * pairs; ++linear) {
          tessel::kernel::AttentionBwdBlock const b = attention_bwd_block_of(linear, n_blocks, pairs, group);
          ASSERT_GE(b.n_block, 0);
          ASSERT_LT(b.n_block, n_blocks);
          ASSERT_GE(b.pair, 0);
          ASSERT_LT(b.pair, pairs);
          ++seen[std::size_t(b.pair) * n_blocks + b.n_block];
          int const g = b.pair / group;
          ASSERT_GE(g, last_group);  // the groups in order
          if (g == last_group) ASSERT_GE(b.n_block, last_n_block);  // within one, key blocks ascending
          last_group = g, last_n_block = b.n_block;
        }
        for (int count : seen) ASSERT_EQ(count, 1);
      }
  // The header's example: n_blocks 3, pairs 3, group 2.
  int const want[9][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}, {2, 1}, {0, 2}, {1, 2}, {2, 2}};
  for (int linear = 0; linear < 9; ++linear) {
    tessel::kernel::AttentionBwdBlock const b = attention_bwd_block_of(linear, 3, 3, 2);
    EXPECT_EQ(b.n_block, want[linear][0]) << linear;
    EXPECT_EQ(b.pair, want[linear][1]) << linear;
  }
  // Grouped under a causal mask (a right bound, no left one) on at most 16 waves of CTAs; the
  // grid's order elsewhere. 132 SMs: B4 H32/8 S4096 D 128 is 32 x 8 x 4 = 1024 CTAs, B4 H32 4096.
  tessel::kernel::AttentionParams p{};
  p.window_left = p.window_right = -1;
  EXPECT_EQ(tessel::kernel::attention_bwd_block_group(p, 1024, 132), 0);
  p.window_right = 0;
  EXPECT_EQ(tessel::kernel::attention_bwd_block_group(p, 1024, 132), 4);
  EXPECT_EQ(tessel::kernel::attention_bwd_block_group(p, 16 * 132, 132), 4);
  EXPECT_EQ(tessel::kernel::attention_bwd_block_group(p, 16 * 132 + 1, 132), 0);
  EXPECT_EQ(tessel::kernel::attention_bwd_block_group(p, 4096, 132), 0);
  p.window_left = 256;
  EXPECT_EQ(tessel::kernel::attention_bwd_block_group(p, 1024, 132), 0);
}

}  // namespace
