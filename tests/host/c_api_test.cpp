// tests/host/c_api_test.cpp -- the C ABI (tessel/c_api.h) without a GPU: how strided tensors map to
// GemmArguments (order, leading dimension, batch stride), the refusals and their status codes, and
// the reason buffer. tessel_gemm_check makes no CUDA calls, so all of it runs in CI.
#include <gtest/gtest.h>
#include <tessel/c_api.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "../../src/capi/gemm_problem.hpp"

namespace {

using tessel::GemmArguments;
using tessel::MatrixOrder;

char g_memory[4][64];  // distinct non-null addresses; never dereferenced

void set(tessel_tensor* t, int which, tessel_dtype dtype, std::vector<std::int64_t> shape,
         std::vector<std::int64_t> strides = {}) {
  tessel_tensor_set(t, g_memory[which], dtype, std::int32_t(shape.size()), shape.data(),
                    strides.empty() ? nullptr : strides.data());
}

// A 2-D fp32 problem M x K times K x N, every tensor packed row-major.
tessel_gemm_problem packed(std::int64_t m, std::int64_t n, std::int64_t k) {
  tessel_gemm_problem p;
  tessel_gemm_problem_init(&p);
  set(&p.a, 0, TESSEL_DTYPE_F32, {m, k});
  set(&p.b, 1, TESSEL_DTYPE_F32, {k, n});
  set(&p.d, 3, TESSEL_DTYPE_F32, {m, n});
  return p;
}

struct Answer {
  tessel_status code;
  std::string reason;
};

Answer check(tessel_gemm_problem const& p) {
  char why[512];
  std::memset(why, 'x', sizeof why);
  tessel_status const s = tessel_gemm_check(&p, why, sizeof why);
  return {s, why};
}

GemmArguments mapped(tessel_gemm_problem const& p) {
  GemmArguments g;
  tessel::capi::Refusal const r = tessel::capi::gemm_arguments_from_problem(p, &g);
  EXPECT_TRUE(r.ok()) << r.reason;
  return g;
}

TEST(CApi, InitAndTensorSetGivePackedDefaults) {
  tessel_gemm_problem p;
  std::memset(&p, 0xff, sizeof p);
  tessel_gemm_problem_init(&p);
  EXPECT_EQ(p.alpha, 1.0f);
  EXPECT_EQ(p.beta, 0.0f);
  EXPECT_EQ(p.a_scale, 1.0f);
  EXPECT_EQ(p.c.ndim, 0);
  EXPECT_EQ(p.kernel, nullptr);
  set(&p.a, 0, TESSEL_DTYPE_BF16, {3, 4, 5});
  EXPECT_EQ(p.a.strides[0], 20);
  EXPECT_EQ(p.a.strides[1], 5);
  EXPECT_EQ(p.a.strides[2], 1);
  EXPECT_EQ(p.a.name, nullptr);
  p = packed(2, 2, 2);
  std::int64_t const shape[9] = {};
  tessel_tensor_set(&p.a, g_memory[0], TESSEL_DTYPE_F32, 9, shape, nullptr);
  EXPECT_EQ(p.a.ndim, -1);
  Answer const r = check(p);
  EXPECT_EQ(r.code, TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.reason.rfind("a: ndim -1 is outside 0..8", 0), 0u) << r.reason;
  EXPECT_EQ(tessel_c_api_version(), TESSEL_C_API_VERSION);
  EXPECT_STREQ(tessel_status_string(TESSEL_STATUS_INVALID_DTYPE), "invalid dtype");
}

TEST(CApi, PackedProblemMapsToRowMajorArguments) {
  tessel_gemm_problem const p = packed(7, 9, 5);
  Answer const r = check(p);
  EXPECT_EQ(r.code, TESSEL_STATUS_SUCCESS);
  EXPECT_EQ(r.reason, "");
  GemmArguments const g = mapped(p);
  EXPECT_EQ(g.m, 7);
  EXPECT_EQ(g.n, 9);
  EXPECT_EQ(g.k, 5);
  EXPECT_EQ(g.batch_count, 1);
  EXPECT_EQ(g.a_order, MatrixOrder::row_major);
  EXPECT_EQ(g.lda, 5);
  EXPECT_EQ(g.ldb, 9);
  EXPECT_EQ(g.ldd, 9);
  EXPECT_EQ(g.c, nullptr);
  EXPECT_EQ(g.a, g_memory[0]);
  EXPECT_EQ(g.d, g_memory[3]);
}

TEST(CApi, TransposedViewsMapToColumnMajorWithoutCopies) {
  tessel_gemm_problem p = packed(6, 8, 4);
  set(&p.a, 0, TESSEL_DTYPE_F32, {6, 4}, {1, 10});  // a column-major 6 x 4 with ld 10 (a padded view)
  set(&p.b, 1, TESSEL_DTYPE_F32, {4, 8}, {1, 4});   // b = (8 x 4 row-major).T
  set(&p.d, 3, TESSEL_DTYPE_F32, {6, 8}, {1, 6});   // a column-major D
  GemmArguments const g = mapped(p);
  EXPECT_EQ(g.a_order, MatrixOrder::col_major);
  EXPECT_EQ(g.lda, 10);
  EXPECT_EQ(g.b_order, MatrixOrder::col_major);
  EXPECT_EQ(g.ldb, 4);
  EXPECT_EQ(g.c_order, MatrixOrder::col_major);
  EXPECT_EQ(g.ldd, 6);
}

TEST(CApi, ExtentOneDimensionsTakeAnyStride) {
  tessel_gemm_problem p = packed(1, 8, 4);
  set(&p.a, 0, TESSEL_DTYPE_F32, {1, 4}, {1, 1});  // (4 x 1).T as torch strides it
  set(&p.b, 1, TESSEL_DTYPE_F32, {4, 8}, {8, 1});
  set(&p.d, 3, TESSEL_DTYPE_F32, {1, 8}, {99, 1});
  GemmArguments const g = mapped(p);
  EXPECT_EQ(g.a_order, MatrixOrder::row_major);
  EXPECT_EQ(g.lda, 4);  // any value >= K reads the one row
  EXPECT_EQ(g.ldd, 8);
}

TEST(CApi, BatchesBroadcastWithStrideZero) {
  tessel_gemm_problem p = packed(4, 5, 6);
  set(&p.a, 0, TESSEL_DTYPE_F32, {3, 4, 6});
  set(&p.b, 1, TESSEL_DTYPE_F32, {6, 5});  // 2-D: one B for every batch
  set(&p.c, 2, TESSEL_DTYPE_F32, {1, 4, 5});
  set(&p.d, 3, TESSEL_DTYPE_F32, {3, 4, 5});
  p.beta = 1.0f;
  GemmArguments const g = mapped(p);
  EXPECT_EQ(g.batch_count, 3);
  EXPECT_EQ(g.batch_stride_a, 24);
  EXPECT_EQ(g.batch_stride_b, 0);
  EXPECT_EQ(g.batch_stride_c, 0);
  EXPECT_EQ(g.batch_stride_d, 20);
}

TEST(CApi, InterleavedBatchesOfDAreDistinctAndAccepted) {
  // D stored as M x batch x N and viewed as batch x M x N: no two elements share an address.
  tessel_gemm_problem p = packed(4, 5, 6);
  set(&p.a, 0, TESSEL_DTYPE_F32, {2, 4, 6});
  set(&p.d, 3, TESSEL_DTYPE_F32, {2, 4, 5}, {5, 10, 1});
  EXPECT_EQ(check(p).code, TESSEL_STATUS_SUCCESS) << check(p).reason;
}

TEST(CApi, RefusalsNameTheTensorAndCarryTheirCode) {
  struct Case {
    char const* what;
    void (*edit)(tessel_gemm_problem&);
    tessel_status code;
    char const* reason_starts;
  };
  Case const cases[] = {
      {"missing b", [](tessel_gemm_problem& p) { p.b.ndim = 0; }, TESSEL_STATUS_INVALID_ARGUMENT, "b: missing"},
      {"unknown dtype", [](tessel_gemm_problem& p) { p.a.dtype = 42; }, TESSEL_STATUS_INVALID_DTYPE,
       "a: dtype 42 is not a tessel_dtype"},
      {"dtype mix", [](tessel_gemm_problem& p) { p.b.dtype = TESSEL_DTYPE_BF16; }, TESSEL_STATUS_INVALID_DTYPE,
       "b: bf16 differs from a's dtype fp32"},
      {"tf32 output", [](tessel_gemm_problem& p) { p.d.dtype = TESSEL_DTYPE_TF32; }, TESSEL_STATUS_INVALID_DTYPE,
       "d: tf32 is an input mode"},
      {"k mismatch", [](tessel_gemm_problem& p) { p.b.shape[0] = 3; }, TESSEL_STATUS_INVALID_ARGUMENT,
       "b: has 3 rows, but a has 5 columns"},
      {"negative extent", [](tessel_gemm_problem& p) { p.a.shape[0] = -1; }, TESSEL_STATUS_INVALID_ARGUMENT,
       "a: extent -1 of dimension 0 is negative"},
      {"no unit stride", [](tessel_gemm_problem& p) { p.a.strides[1] = 2, p.a.strides[0] = 10; },
       TESSEL_STATUS_INVALID_ARGUMENT, "a: neither of its last two strides is 1"},
      {"beta without c", [](tessel_gemm_problem& p) { p.beta = 2.0f; }, TESSEL_STATUS_INVALID_ARGUMENT,
       "c: beta is 2, but no C was given"},
      {"null data", [](tessel_gemm_problem& p) { p.b.data = nullptr; }, TESSEL_STATUS_INVALID_ARGUMENT,
       "b: data is NULL, but it has 45 elements"},
      {"scale on fp32", [](tessel_gemm_problem& p) { p.a_scale = 2.0f; }, TESSEL_STATUS_INVALID_ARGUMENT,
       "a_scale: 2 scales fp8 operands only"},
      {"unknown kernel", [](tessel_gemm_problem& p) { p.kernel = "nope"; }, TESSEL_STATUS_INVALID_ARGUMENT,
       "kernel: 'nope' is not a compiled kernel"},
      {"unaligned workspace", [](tessel_gemm_problem& p) { p.workspace = reinterpret_cast<void*>(std::uintptr_t(0x10010)); },
       TESSEL_STATUS_INVALID_ARGUMENT, "workspace: the caller's scratch must be 256-byte aligned"},
  };
  for (Case const& c : cases) {
    tessel_gemm_problem p = packed(7, 9, 5);
    c.edit(p);
    Answer const r = check(p);
    EXPECT_EQ(r.code, c.code) << c.what << ": " << r.reason;
    EXPECT_EQ(r.reason.rfind(c.reason_starts, 0), 0u) << c.what << ": " << r.reason;
  }
}

TEST(CApi, ReasonsUseTheTensorsOwnNames) {
  tessel_gemm_problem p = packed(7, 9, 5);
  p.d.name = "out";
  p.d.shape[1] = 10;
  EXPECT_EQ(check(p).reason.rfind("out: is 7 x 10, but a @ b is 7 x 9", 0), 0u) << check(p).reason;
}

TEST(CApi, ReasonIsTruncatedAndTerminatedOrSkipped) {
  tessel_gemm_problem p = packed(7, 9, 5);
  p.b.shape[0] = 3;
  char small[8];
  std::memset(small, 'x', sizeof small);
  EXPECT_EQ(tessel_gemm_check(&p, small, sizeof small), TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(small, "b: has ");
  EXPECT_EQ(tessel_gemm_check(&p, nullptr, 0), TESSEL_STATUS_INVALID_ARGUMENT);
  char why[64];
  EXPECT_EQ(tessel_gemm_check(nullptr, why, sizeof why), TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(why, "problem: NULL");
}

TEST(CApi, WorkspaceSizeChecksItsArgumentsFirst) {
  char why[256];
  tessel_gemm_problem p = packed(0, 9, 5);  // nothing to compute: no scratch, no GPU needed
  p.a.data = nullptr, p.d.data = nullptr;
  std::size_t bytes = 99;
  EXPECT_EQ(tessel_gemm_workspace_size(&p, &bytes, why, sizeof why), TESSEL_STATUS_SUCCESS) << why;
  EXPECT_EQ(bytes, 0u);
  EXPECT_EQ(tessel_gemm_workspace_size(&p, nullptr, why, sizeof why), TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(why, "bytes: NULL");
  p = packed(7, 9, 5);
  p.b.shape[0] = 3;
  bytes = 99;
  EXPECT_EQ(tessel_gemm_workspace_size(&p, &bytes, why, sizeof why), TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(why).rfind("b: has 3 rows", 0), 0u) << why;
  EXPECT_EQ(bytes, 0u);
}

TEST(CApi, EmptyProblemsPassAndNeedNoPointers) {
  tessel_gemm_problem p = packed(0, 9, 5);
  p.a.data = nullptr, p.d.data = nullptr;
  EXPECT_EQ(check(p).code, TESSEL_STATUS_SUCCESS) << check(p).reason;
  char why[256];
  EXPECT_EQ(tessel_gemm(&p, nullptr, why, sizeof why), TESSEL_STATUS_SUCCESS) << why;  // nothing to launch
}

}  // namespace
