// The argument rules, row splits, chunk plans and the rank agreement of tessel::dist
// (tessel/dist/dist_arguments.hpp), and the C ABI's checks of them (tessel/c_api_dist.h). No GPU,
// no NCCL communicator: everything here is decided before any data moves.
#include <gtest/gtest.h>

#include <tessel/c_api_dist.h>
#include <tessel/dist/dist_arguments.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace tessel;
using namespace tessel::dist;

void* fake(std::uintptr_t at) { return reinterpret_cast<void*>(at); }

AllGatherGemmArguments good_all_gather() {
  AllGatherGemmArguments g;
  g.m_shard = 1000, g.n = 384, g.k = 256;
  g.a_shard = fake(1 << 20), g.lda = 256;
  g.b = fake(2 << 20), g.ldb = 256, g.b_order = MatrixOrder::col_major;
  g.d = fake(3 << 20), g.ldd = 384;
  return g;
}

GemmReduceScatterArguments good_reduce_scatter() {
  GemmReduceScatterArguments g;
  g.m = 1001, g.n = 384, g.k_shard = 128;
  g.a = fake(1 << 20), g.lda = 128;
  g.b = fake(2 << 20), g.ldb = 128;
  g.d = fake(3 << 20), g.ldd = 384;
  return g;
}

void expect_refusal(Status const& s, std::string const& starts) {
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.reason.rfind(starts, 0), 0u) << "reason: " << s.reason;
}

TEST(DistRows, BlocksAreCeilOfMOverPLastOnesShorter) {
  std::vector<std::int64_t> rows;
  for (int b = 0; b < 4; ++b) rows.push_back(rs_block_rows(10, 4, b));
  EXPECT_EQ(rows, (std::vector<std::int64_t>{3, 3, 3, 1}));
  rows.clear();
  for (int b = 0; b < 4; ++b) rows.push_back(rs_block_rows(5, 4, b));
  EXPECT_EQ(rows, (std::vector<std::int64_t>{2, 2, 1, 0}));
  EXPECT_EQ(rs_block_start(10, 4, 3), 9);
  for (std::int64_t m : {0, 1, 7, 8192, 8193})
    for (int p : {1, 2, 3, 8}) {
      std::int64_t sum = 0;
      for (int b = 0; b < p; ++b) sum += rs_block_rows(m, p, b);
      EXPECT_EQ(sum, m) << "m " << m << " p " << p;
    }
}

TEST(DistRows, ChunkPlansCoverEveryRowOnce) {
  ChunkPlan const asked = chunk_plan(1000, 256, kAllGatherChunks);  // M not divisible by the chunk
  EXPECT_EQ(asked.chunk_rows, 256);
  EXPECT_EQ(asked.chunks, 4);
  EXPECT_EQ(asked.rows_of(3, 1000), 232);
  ChunkPlan const lib = chunk_plan(4096, 0, kAllGatherChunks);
  EXPECT_EQ(lib.chunk_rows, 2048);
  EXPECT_EQ(lib.chunks, 2);
  ChunkPlan const rounded = chunk_plan(1000, 0, kReduceScatterChunks);  // 250 -> 256 rows, a whole tile
  EXPECT_EQ(rounded.chunk_rows, 256);
  EXPECT_EQ(rounded.chunks, 4);
  EXPECT_EQ(chunk_plan(100, 0, kReduceScatterChunks).chunks, 1);  // never more rows than there are
  EXPECT_EQ(chunk_plan(0, 0, kAllGatherChunks).chunks, 0);
  for (std::int64_t rows : {1, 5, 127, 128, 129, 4097})
    for (std::int64_t ask : {0, 1, 3, 128, 5000}) {
      ChunkPlan const p = chunk_plan(rows, ask, kReduceScatterChunks);
      std::int64_t sum = 0;
      for (std::int64_t c = 0; c < p.chunks; ++c) {
        EXPECT_GT(p.rows_of(c, rows), 0);
        sum += p.rows_of(c, rows);
      }
      EXPECT_EQ(sum, rows) << "rows " << rows << " asked " << ask;
    }
}

TEST(DistValidate, AllGatherAcceptsAGoodCallOnEveryRank) {
  for (int r = 0; r < 3; ++r) EXPECT_TRUE(validate(good_all_gather(), 3, r).ok()) << validate(good_all_gather(), 3, r).reason;
}

TEST(DistValidate, AllGatherRefusalsNameTheArgument) {
  AllGatherGemmArguments g = good_all_gather();
  expect_refusal(validate(g, 2, 2), "rank: 2 is outside 0..1");
  expect_refusal(validate(g, 0, 0), "nranks: 0");
  g.m_shard = -1;
  expect_refusal(validate(g, 2, 0), "m_shard: -1 is negative");
  g = good_all_gather();
  g.lda = 255;
  expect_refusal(validate(g, 2, 0), "lda: 255 is below K = 256");
  g = good_all_gather();
  g.ldd = 100;
  expect_refusal(validate(g, 2, 0), "ldd: 100 is below N = 384");
  g = good_all_gather();
  g.ab_type = DType::f32, g.d_type = DType::f32;
  expect_refusal(validate(g, 2, 0), "a: dtype fp32");
  g = good_all_gather();
  g.d_type = DType::f16;
  expect_refusal(validate(g, 2, 0), "d: dtype fp16 with bf16 inputs");
  g = good_all_gather();
  g.d = nullptr;
  expect_refusal(validate(g, 2, 0), "d: null");
  g = good_all_gather();
  g.b = nullptr;
  expect_refusal(validate(g, 2, 0), "b");
  g = good_all_gather();
  g.a_gathered = fake(4 << 20), g.ld_gathered = 8;
  expect_refusal(validate(g, 2, 0), "ld_gathered: 8 is below K = 256");
}

TEST(DistValidate, ReduceScatterAcceptsRaggedBlocksAndAnyKShard) {
  GemmReduceScatterArguments g = good_reduce_scatter();
  for (int r = 0; r < 4; ++r) EXPECT_TRUE(validate(g, 4, r).ok()) << validate(g, 4, r).reason;
  g.m = 3;  // blocks of 1, 1, 1, 0 rows: the last rank receives nothing, d may be null there
  g.d = nullptr;
  EXPECT_TRUE(validate(g, 4, 3).ok()) << validate(g, 4, 3).reason;
  expect_refusal(validate(g, 4, 0), "d: null");
  g = good_reduce_scatter();
  g.ldd = 383;
  expect_refusal(validate(g, 2, 1), "ldd: 383 is below N = 384");
  g = good_reduce_scatter();
  g.k_shard = -3;
  expect_refusal(validate(g, 2, 1), "k_shard: -3 is negative");
}

TEST(DistValidate, PinnedChunksRunTheWholeProblemsKernelInOneKOrder) {
  GemmArguments const full = full_gemm(good_all_gather(), 4);
  EXPECT_EQ(full.m, 4000);
  EXPECT_EQ(full.lda, 256);  // the gathered A is packed
  GemmArguments const pinned = pin_gemm(full, "sm90_bf16_128x256x64");
  EXPECT_STREQ(pinned.kernel, "sm90_bf16_128x256x64");
  EXPECT_EQ(pinned.options.splits, 1);
  EXPECT_FALSE(pinned.options.stream_k);
  EXPECT_FALSE(pinned.options.split_tail);
}

TEST(DistAgree, EveryRankLearnsWhoRefusedOrDiffers) {
  std::vector<CallRecord> recs(3, call_record(good_all_gather(), false));
  EXPECT_TRUE(agree(recs, 0).ok());
  recs[2] = call_record(good_all_gather(), true);
  expect_refusal(agree(recs, 0), "rank 2 refused its arguments");
  EXPECT_TRUE(agree(recs, 2).ok());  // rank 2 returns its own reason instead
  AllGatherGemmArguments other = good_all_gather();
  other.m_shard = 999;
  recs[2] = call_record(other, false);
  expect_refusal(agree(recs, 1), "m_shard: rank 2 passed 999, rank 0 1000");
  other = good_all_gather();
  other.n = 7;  // N may differ: each rank has its own column shard
  recs[2] = call_record(other, false);
  EXPECT_TRUE(agree(recs, 1).ok());
  recs[1] = call_record(good_reduce_scatter(), false);
  expect_refusal(agree(recs, 0), "operation: rank 1 passed gemm_reduce_scatter, rank 0 all_gather_gemm");
  recs[1] = CallRecord{};
  recs[1].v[CallRecord::op] = kDestroyOperation;  // a peer destroying its context instead of calling
  expect_refusal(agree(recs, 0), "operation: rank 1 passed Context::destroy, rank 0 all_gather_gemm");
  std::vector<CallRecord> rs(2, call_record(good_reduce_scatter(), false));
  GemmReduceScatterArguments k = good_reduce_scatter();
  k.k_shard = 64;  // K shards may differ
  rs[1] = call_record(k, false);
  EXPECT_TRUE(agree(rs, 0).ok());
  k.ab_type = DType::f16, k.d_type = DType::f16;
  rs[1] = call_record(k, false);
  expect_refusal(agree(rs, 0), "a's dtype: rank 1 passed fp16, rank 0 bf16");
}

// ---- the C ABI ------------------------------------------------------------------------------------

struct Problem {
  tessel_dist_problem p;
  Problem(std::int64_t m_rows, std::int64_t k, std::int64_t n, std::int64_t d_rows) {
    tessel_dist_problem_init(&p);
    std::int64_t const a_shape[] = {m_rows, k}, b_shape[] = {k, n}, b_strides[] = {1, k}, d_shape[] = {d_rows, n};
    tessel_tensor_set(&p.a, fake(1 << 20), TESSEL_DTYPE_BF16, 2, a_shape, nullptr);
    tessel_tensor_set(&p.b, fake(2 << 20), TESSEL_DTYPE_BF16, 2, b_shape, b_strides);  // a weight's transpose
    tessel_tensor_set(&p.d, fake(3 << 20), TESSEL_DTYPE_BF16, 2, d_shape, nullptr);
  }
};

std::string reason_of(tessel_status (*check)(tessel_dist_problem const*, int, int, char*, size_t),
                      tessel_dist_problem const& p, int nranks, int rank, tessel_status expected) {
  char why[512] = "";
  EXPECT_EQ(check(&p, nranks, rank, why, sizeof why), expected) << why;
  return why;
}

TEST(DistCApi, AllGatherChecks) {
  Problem ok(500, 256, 384, 1000);
  EXPECT_EQ(reason_of(tessel_dist_all_gather_gemm_check, ok.p, 2, 1, TESSEL_STATUS_SUCCESS), "");
  Problem wrong_d(500, 256, 384, 999);
  EXPECT_EQ(reason_of(tessel_dist_all_gather_gemm_check, wrong_d.p, 2, 1, TESSEL_STATUS_INVALID_ARGUMENT)
                .rfind("d: is [999, 384], but it must be [P x a's rows, b's columns] = [1000, 384]", 0),
            0u);
  Problem col_a(500, 256, 384, 1000);
  std::int64_t const a_shape[] = {500, 256}, a_col[] = {1, 500};
  tessel_tensor_set(&col_a.p.a, fake(1 << 20), TESSEL_DTYPE_BF16, 2, a_shape, a_col);
  EXPECT_EQ(reason_of(tessel_dist_all_gather_gemm_check, col_a.p, 2, 0, TESSEL_STATUS_INVALID_ARGUMENT)
                .rfind("a: is column-major", 0),
            0u);
  Problem mixed(500, 256, 384, 1000);
  mixed.p.b.dtype = TESSEL_DTYPE_F16;
  EXPECT_EQ(reason_of(tessel_dist_all_gather_gemm_check, mixed.p, 2, 0, TESSEL_STATUS_INVALID_DTYPE)
                .rfind("b: dtype fp16 differs from a's bf16", 0),
            0u);
  Problem three_d(500, 256, 384, 1000);
  three_d.p.a.ndim = 3;
  EXPECT_EQ(reason_of(tessel_dist_all_gather_gemm_check, three_d.p, 2, 0, TESSEL_STATUS_INVALID_ARGUMENT)
                .rfind("a: has 3 dimensions", 0),
            0u);
  Problem gathered(500, 256, 384, 1000);
  std::int64_t const g_shape[] = {1000, 255};
  tessel_tensor_set(&gathered.p.a_gathered, fake(4 << 20), TESSEL_DTYPE_BF16, 2, g_shape, nullptr);
  EXPECT_EQ(reason_of(tessel_dist_all_gather_gemm_check, gathered.p, 2, 0, TESSEL_STATUS_INVALID_ARGUMENT)
                .rfind("a_gathered: is [1000, 255], but the gathered A is [1000, 256]", 0),
            0u);
}

TEST(DistCApi, ReduceScatterChecks) {
  // M = 1001 over 2 ranks: blocks of 501 and 500 rows.
  Problem first(1001, 128, 384, 501), last(1001, 128, 384, 500);
  EXPECT_EQ(reason_of(tessel_dist_gemm_reduce_scatter_check, first.p, 2, 0, TESSEL_STATUS_SUCCESS), "");
  EXPECT_EQ(reason_of(tessel_dist_gemm_reduce_scatter_check, last.p, 2, 1, TESSEL_STATUS_SUCCESS), "");
  EXPECT_EQ(reason_of(tessel_dist_gemm_reduce_scatter_check, last.p, 2, 0, TESSEL_STATUS_INVALID_ARGUMENT)
                .rfind("d: is [500, 384], but rank 0's block of 1001 rows over 2 ranks is [501, 384]", 0),
            0u);
  EXPECT_EQ(tessel_dist_block_rows(1001, 2, 1), 500);
  EXPECT_EQ(tessel_dist_block_rows(3, 4, 3), 0);
  Problem f32_out(1001, 128, 384, 501);
  f32_out.p.d.dtype = TESSEL_DTYPE_F32;  // fp32 partial sums
  EXPECT_EQ(reason_of(tessel_dist_gemm_reduce_scatter_check, f32_out.p, 2, 0, TESSEL_STATUS_SUCCESS), "");
  Problem fp8(1001, 128, 384, 501);
  fp8.p.a.dtype = fp8.p.b.dtype = TESSEL_DTYPE_E4M3;
  EXPECT_EQ(reason_of(tessel_dist_gemm_reduce_scatter_check, fp8.p, 2, 0, TESSEL_STATUS_INVALID_DTYPE)
                .rfind("a: dtype e4m3", 0),
            0u);
}

}  // namespace
