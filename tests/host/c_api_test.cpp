// tests/host/c_api_test.cpp -- the C ABI (tessel/c_api.h) without a GPU: how strided tensors map to
// GemmArguments (order, leading dimension, batch stride), to AttentionArguments (dense and
// variable-length batches, views, extent-1 strides) and to ConvArguments (2-D and 3-D, the written
// tensor of each pass, channels_last views), the refusals and their status codes, and the reason
// buffer. tessel_gemm_check, tessel_attention_check and tessel_conv_check make no CUDA calls, so
// all of it runs in CI.
#include <gtest/gtest.h>
#include <tessel/c_api.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "../../src/capi/attention_problem.hpp"
#include "../../src/capi/conv_problem.hpp"
#include "../../src/capi/gemm_problem.hpp"
#include "../../src/capi/grouped_gemm_problem.hpp"

namespace {

using tessel::GemmArguments;
using tessel::MatrixOrder;

alignas(16) char g_memory[12][64];  // distinct non-null 16-byte aligned addresses; never dereferenced

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

// The C ABI's check and its mapping, per problem type.
tessel_status c_check(tessel_gemm_problem const* p, char* why, std::size_t n) { return tessel_gemm_check(p, why, n); }
tessel_status c_check(tessel_attention_problem const* p, char* why, std::size_t n) {
  return tessel_attention_check(p, why, n);
}
tessel_status c_check(tessel_attention_backward_problem const* p, char* why, std::size_t n) {
  return tessel_attention_backward_check(p, why, n);
}
tessel_status c_check(tessel_conv_problem const* p, char* why, std::size_t n) { return tessel_conv_check(p, why, n); }
tessel_status c_check(tessel_grouped_gemm_problem const* p, char* why, std::size_t n) {
  return tessel_grouped_gemm_check(p, why, n);
}
tessel::capi::Refusal map(tessel_gemm_problem const& p, GemmArguments* g) {
  return tessel::capi::gemm_arguments_from_problem(p, g);
}
tessel::capi::Refusal map(tessel_attention_problem const& p, tessel::AttentionArguments* a) {
  return tessel::capi::attention_arguments_from_problem(p, a);
}
tessel::capi::Refusal map(tessel_attention_backward_problem const& p, tessel::AttentionBackwardArguments* b) {
  return tessel::capi::attention_backward_arguments_from_problem(p, b);
}
tessel::capi::Refusal map(tessel_conv_problem const& p, tessel::ConvArguments* a) {
  return tessel::capi::conv_arguments_from_problem(p, a);
}
tessel::capi::Refusal map(tessel_grouped_gemm_problem const& p, tessel::GroupedGemmArguments* g) {
  return tessel::capi::grouped_gemm_arguments_from_problem(p, g);
}

template <class Problem>
Answer check(Problem const& p) {
  char why[512];
  std::memset(why, 'x', sizeof why);
  tessel_status const s = c_check(&p, why, sizeof why);
  return {s, why};
}

// The host-API arguments p maps to (the test fails where it is refused).
template <class Arguments, class Problem>
Arguments mapped_to(Problem const& p) {
  Arguments a;
  tessel::capi::Refusal const r = map(p, &a);
  EXPECT_TRUE(r.ok()) << r.reason;
  return a;
}
GemmArguments mapped(tessel_gemm_problem const& p) { return mapped_to<GemmArguments>(p); }

// Each case edits a valid problem made by `make`; the check must refuse it with `code` and a
// reason that starts with `reason_starts`.
template <class Problem>
struct RefusalCase {
  char const* what;
  void (*edit)(Problem&);
  tessel_status code;
  char const* reason_starts;
};

template <class Problem, class Make, std::size_t N>
void expect_refusals(Make make, RefusalCase<Problem> const (&cases)[N]) {
  for (RefusalCase<Problem> const& c : cases) {
    Problem p = make();
    c.edit(p);
    Answer const r = check(p);
    EXPECT_EQ(r.code, c.code) << c.what << ": " << r.reason;
    EXPECT_EQ(r.reason.rfind(c.reason_starts, 0), 0u) << c.what << ": " << r.reason;
  }
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
  RefusalCase<tessel_gemm_problem> const cases[] = {
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
  expect_refusals([] { return packed(7, 9, 5); }, cases);
}

TEST(CApi, FusedEpilogueBiasBroadcastsAsNumpyAndMapsToItsMode) {
  tessel_gemm_problem p = packed(7, 9, 5);
  EXPECT_EQ(p.bias.ndim, 0);  // init: no fusion
  EXPECT_EQ(p.activation, TESSEL_ACTIVATION_NONE);
  GemmArguments g = mapped(p);
  EXPECT_FALSE(tessel::gemm_is_fused(g));
  set(&p.bias, 5, TESSEL_DTYPE_F32, {9});  // [N]: per column
  p.activation = TESSEL_ACTIVATION_GELU_ERF;
  g = mapped(p);
  EXPECT_EQ(g.bias, g_memory[5]);
  EXPECT_EQ(g.bias_mode, tessel::BiasMode::col);
  EXPECT_EQ(g.activation, tessel::Activation::gelu);
  set(&p.bias, 5, TESSEL_DTYPE_F32, {1, 9});  // [1, N]: per column
  p.activation = TESSEL_ACTIVATION_GELU;      // the tanh form, as the convolution's
  g = mapped(p);
  EXPECT_EQ(g.bias_mode, tessel::BiasMode::col);
  EXPECT_EQ(g.activation, tessel::Activation::gelu_tanh);
  set(&p.bias, 5, TESSEL_DTYPE_F32, {7, 1});  // [M, 1]: per row
  p.activation = TESSEL_ACTIVATION_SILU;
  g = mapped(p);
  EXPECT_EQ(g.bias_mode, tessel::BiasMode::row);
  EXPECT_EQ(g.activation, tessel::Activation::silu);
  EXPECT_EQ(tessel_c_api_version(), TESSEL_C_API_VERSION);
  EXPECT_GE(tessel_c_api_version(), 6);  // the version that brought the fused epilogue
}

TEST(CApi, FusedEpilogueRefusals) {
  auto const with_bias = [] {
    tessel_gemm_problem p = packed(7, 9, 5);
    set(&p.bias, 5, TESSEL_DTYPE_F32, {9});
    return p;
  };
  RefusalCase<tessel_gemm_problem> const cases[] = {
      {"unknown activation", [](tessel_gemm_problem& p) { p.activation = 5; }, TESSEL_STATUS_INVALID_ARGUMENT,
       "activation: 5 is not a tessel_activation"},
      {"bias of N + 1", [](tessel_gemm_problem& p) { p.bias.shape[0] = 10; }, TESSEL_STATUS_INVALID_ARGUMENT,
       "bias: shape (10,) does not broadcast against d's 7 x 9"},
      {"bias of M as 1-D", [](tessel_gemm_problem& p) { p.bias.shape[0] = 7; }, TESSEL_STATUS_INVALID_ARGUMENT,
       "bias: shape (7,) does not broadcast"},
      {"bias 3-D", [](tessel_gemm_problem& p) { set(&p.bias, 5, TESSEL_DTYPE_F32, {1, 1, 9}); },
       TESSEL_STATUS_INVALID_ARGUMENT, "bias: has 3 dimensions"},
      {"bias dtype", [](tessel_gemm_problem& p) { p.bias.dtype = TESSEL_DTYPE_BF16; }, TESSEL_STATUS_INVALID_DTYPE,
       "bias: dtype bf16 differs from d's fp32"},
      {"bias strided", [](tessel_gemm_problem& p) { p.bias.strides[0] = 2; }, TESSEL_STATUS_INVALID_ARGUMENT,
       "bias: stride 2 along its 9 values"},
      {"bias null", [](tessel_gemm_problem& p) { p.bias.data = nullptr; }, TESSEL_STATUS_INVALID_ARGUMENT,
       "bias: data is NULL"},
      {"bias misaligned",
       [](tessel_gemm_problem& p) { p.bias.data = static_cast<char*>(p.bias.data) + 2; }, TESSEL_STATUS_INVALID_ARGUMENT,
       "bias: not aligned to its 4-byte fp32 elements"},
  };
  expect_refusals(with_bias, cases);  // (a convolution refuses GELU_ERF: CApiConv's refusals)
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

// ---- attention ----------------------------------------------------------------------------------

using tessel::AttentionArguments;
using tessel::MaskAlign;

enum Slot { kQ, kK, kV, kO, kLse, kCuQ, kCuK };

// A dense problem: q, k, v, o packed [B, S, H, D], lse packed [B, H, S_q].
tessel_attention_problem attention(std::int64_t b, std::int64_t s_q, std::int64_t s_k, std::int64_t h,
                                   std::int64_t h_kv, std::int64_t d, std::int64_t d_v,
                                   tessel_dtype dtype = TESSEL_DTYPE_BF16) {
  tessel_attention_problem p;
  tessel_attention_problem_init(&p);
  set(&p.q, kQ, dtype, {b, s_q, h, d});
  set(&p.k, kK, dtype, {b, s_k, h_kv, d});
  set(&p.v, kV, dtype, {b, s_k, h_kv, d_v});
  set(&p.o, kO, dtype, {b, s_q, h, d_v});
  set(&p.lse, kLse, TESSEL_DTYPE_F32, {b, h, s_q});
  return p;
}

// A variable-length problem of `batch` sequences: q, k, v, o packed [total, H, D], lse [H, total_q].
tessel_attention_problem attention_varlen(std::int64_t batch, std::int64_t total_q, std::int64_t total_k,
                                          std::int64_t h, std::int64_t h_kv, std::int64_t d) {
  tessel_attention_problem p;
  tessel_attention_problem_init(&p);
  set(&p.q, kQ, TESSEL_DTYPE_BF16, {total_q, h, d});
  set(&p.k, kK, TESSEL_DTYPE_BF16, {total_k, h_kv, d});
  set(&p.v, kV, TESSEL_DTYPE_BF16, {total_k, h_kv, d});
  set(&p.o, kO, TESSEL_DTYPE_BF16, {total_q, h, d});
  set(&p.lse, kLse, TESSEL_DTYPE_F32, {h, total_q});
  set(&p.cu_seqlens_q, kCuQ, TESSEL_DTYPE_I32, {batch + 1});
  set(&p.cu_seqlens_k, kCuK, TESSEL_DTYPE_I32, {batch + 1});
  return p;
}

// A [B, S, H, D] tensor whose heads lie head_stride elements apart (packed otherwise).
void pad_heads(tessel_tensor* t, std::int64_t head_stride) {
  t->strides[2] = head_stride, t->strides[1] = t->shape[2] * head_stride, t->strides[0] = t->shape[1] * t->strides[1];
}

AttentionArguments mapped(tessel_attention_problem const& p) { return mapped_to<AttentionArguments>(p); }

TEST(CApiAttention, InitLeavesNoWindowBottomRightAndNoTensors) {
  tessel_attention_problem p;
  std::memset(&p, 0xff, sizeof p);
  tessel_attention_problem_init(&p);
  EXPECT_EQ(p.window_left, -1);
  EXPECT_EQ(p.window_right, -1);
  EXPECT_EQ(p.align, TESSEL_MASK_ALIGN_BOTTOM_RIGHT);
  EXPECT_EQ(p.softmax_scale, 0.0f);
  EXPECT_EQ(p.softcap, 0.0f);
  EXPECT_EQ(p.causal, 0);
  EXPECT_EQ(p.q.ndim, 0);
  EXPECT_EQ(p.lse.ndim, 0);
  EXPECT_EQ(p.cu_seqlens_q.ndim, 0);
  EXPECT_EQ(p.kernel, nullptr);
  EXPECT_GE(TESSEL_C_API_VERSION, 3);
}

TEST(CApiAttention, DenseProblemMapsShapesStridesAndMask) {
  tessel_attention_problem p = attention(2, 37, 50, 8, 2, 192, 128);
  p.causal = 1, p.window_left = 16, p.align = TESSEL_MASK_ALIGN_TOP_LEFT;
  p.softmax_scale = 0.5f, p.softcap = 30.0f;
  Answer const r = check(p);
  EXPECT_EQ(r.code, TESSEL_STATUS_SUCCESS) << r.reason;
  EXPECT_EQ(r.reason, "");
  AttentionArguments const a = mapped(p);
  EXPECT_EQ(a.batch, 2);
  EXPECT_EQ(a.seqlen_q, 37);
  EXPECT_EQ(a.seqlen_k, 50);
  EXPECT_EQ(a.heads, 8);
  EXPECT_EQ(a.kv_heads, 2);
  EXPECT_EQ(a.head_dim, 192);
  EXPECT_EQ(a.head_dim_v, 128);
  EXPECT_EQ(a.dtype, tessel::DType::bf16);
  EXPECT_EQ(a.q.ptr, g_memory[kQ]);
  EXPECT_EQ(a.q.batch_stride, 37 * 8 * 192);
  EXPECT_EQ(a.q.row_stride, 8 * 192);
  EXPECT_EQ(a.q.head_stride, 192);
  EXPECT_EQ(a.k.batch_stride, 50 * 2 * 192);
  EXPECT_EQ(a.v.row_stride, 2 * 128);
  EXPECT_EQ(a.o, g_memory[kO]);
  EXPECT_EQ(a.o_batch_stride, 37 * 8 * 128);
  EXPECT_EQ(a.o_row_stride, 8 * 128);
  EXPECT_EQ(a.o_head_stride, 128);
  EXPECT_EQ(static_cast<void*>(a.lse), g_memory[kLse]);
  EXPECT_EQ(a.lse_batch_stride, 8 * 37);
  EXPECT_EQ(a.lse_head_stride, 37);
  EXPECT_TRUE(a.causal);
  EXPECT_EQ(a.window_left, 16);
  EXPECT_EQ(a.window_right, -1);
  EXPECT_EQ(a.align, MaskAlign::top_left);
  EXPECT_EQ(a.softmax_scale, 0.5f);
  EXPECT_EQ(a.softcap, 30.0f);
  EXPECT_EQ(a.cu_seqlens_q, nullptr);
}

TEST(CApiAttention, TransposedViewsOfBhsdArraysMapWithoutCopies) {
  // torch's [B, H, S, D] q.transpose(1, 2): shape [B, S, H, D], strides (H S D, D, S D, 1).
  tessel_attention_problem p = attention(2, 40, 40, 4, 4, 64, 64);
  set(&p.q, kQ, TESSEL_DTYPE_F16, {2, 40, 4, 64}, {4 * 40 * 64, 64, 40 * 64, 1});
  p.k.dtype = p.v.dtype = p.o.dtype = TESSEL_DTYPE_F16;
  set(&p.lse, kLse, TESSEL_DTYPE_F32, {2, 4, 40}, {4 * 48, 48, 1});  // padded rows
  AttentionArguments const a = mapped(p);
  EXPECT_EQ(a.dtype, tessel::DType::f16);
  EXPECT_EQ(a.q.batch_stride, 4 * 40 * 64);
  EXPECT_EQ(a.q.row_stride, 64);
  EXPECT_EQ(a.q.head_stride, 40 * 64);
  EXPECT_EQ(a.lse_batch_stride, 4 * 48);
  EXPECT_EQ(a.lse_head_stride, 48);
}

TEST(CApiAttention, ExtentOneAndEmptyTensorsTakeAnyStride) {
  // B = 1 and H = 1: their strides form no address (torch gives such dimensions any stride).
  tessel_attention_problem p = attention(1, 16, 16, 1, 1, 128, 128);
  set(&p.q, kQ, TESSEL_DTYPE_BF16, {1, 16, 1, 128}, {3, 128, 5, 1});
  AttentionArguments a = mapped(p);
  EXPECT_EQ(a.q.batch_stride, 16 * 128);
  EXPECT_EQ(a.q.head_stride, 128);
  EXPECT_EQ(a.q.row_stride, 128);
  // S_k = 0: K and V have no elements, so none of their strides counts.
  p = attention(2, 16, 0, 2, 2, 64, 64);
  set(&p.k, kK, TESSEL_DTYPE_BF16, {2, 0, 2, 64}, {7, 9, 11, 13});
  EXPECT_EQ(check(p).code, TESSEL_STATUS_SUCCESS) << check(p).reason;
  a = mapped(p);
  EXPECT_EQ(a.seqlen_k, 0);
  EXPECT_EQ(a.k.head_stride, 64);
}

TEST(CApiAttention, WithoutLseNoLseIsWritten) {
  tessel_attention_problem p = attention(2, 8, 8, 2, 1, 64, 64);
  p.lse.ndim = 0;
  AttentionArguments const a = mapped(p);
  EXPECT_EQ(a.lse, nullptr);
  EXPECT_EQ(a.kv_heads, 1);
}

TEST(CApiAttention, VariableLengthBatchesMapToPackedRows) {
  tessel_attention_problem p = attention_varlen(3, 100, 120, 8, 8, 128);
  AttentionArguments a = mapped(p);
  EXPECT_EQ(a.batch, 3);
  EXPECT_EQ(a.seqlen_q, 100);  // max_seqlen 0: the packed totals bound every sequence
  EXPECT_EQ(a.seqlen_k, 120);
  EXPECT_EQ(a.q.batch_stride, 0);
  EXPECT_EQ(a.q.row_stride, 8 * 128);
  EXPECT_EQ(a.q.head_stride, 128);
  EXPECT_EQ(a.o_batch_stride, 0);
  EXPECT_EQ(a.lse_batch_stride, 0);
  EXPECT_EQ(a.lse_head_stride, 100);
  EXPECT_EQ(static_cast<void const*>(a.cu_seqlens_q), g_memory[kCuQ]);
  EXPECT_EQ(static_cast<void const*>(a.cu_seqlens_k), g_memory[kCuK]);
  p.max_seqlen_q = 40, p.max_seqlen_k = 64;
  a = mapped(p);
  EXPECT_EQ(a.seqlen_q, 40);
  EXPECT_EQ(a.seqlen_k, 64);
}

TEST(CApiAttention, RefusalsNameTheTensorOrArgumentAndCarryTheirCode) {
  constexpr tessel_status kArg = TESSEL_STATUS_INVALID_ARGUMENT, kType = TESSEL_STATUS_INVALID_DTYPE;
  RefusalCase<tessel_attention_problem> const cases[] = {
      // the C ABI's own rules
      {"missing v", [](tessel_attention_problem& p) { p.v.ndim = 0; }, kArg, "v: missing (ndim 0)"},
      {"bad ndim", [](tessel_attention_problem& p) { p.k.ndim = -1; }, kArg, "k: ndim -1 is outside 0..8"},
      {"3-D q", [](tessel_attention_problem& p) { p.q.ndim = 3; }, kArg,
       "q: has 3 dimensions; attention operands are 4-D [B, S, H, D]"},
      {"2-D lse", [](tessel_attention_problem& p) { p.lse.ndim = 2; }, kArg, "lse: has 2 dimensions; LSE is 3-D"},
      {"negative extent", [](tessel_attention_problem& p) { p.q.shape[1] = -1; }, kArg,
       "q: extent -1 of dimension 1 is negative"},
      {"unknown dtype", [](tessel_attention_problem& p) { p.q.dtype = 42; }, kType, "q: dtype 42 is not a tessel_dtype"},
      {"fp32", [](tessel_attention_problem& p) { p.q.dtype = p.k.dtype = p.v.dtype = p.o.dtype = TESSEL_DTYPE_F32; },
       kType, "q: fp32 is not supported; attention takes fp16 and bf16"},
      {"dtype mix", [](tessel_attention_problem& p) { p.k.dtype = TESSEL_DTYPE_F16; }, kType,
       "k: fp16 differs from q's bf16; q, k, v and o share one dtype"},
      {"fp16 lse", [](tessel_attention_problem& p) { p.lse.dtype = TESSEL_DTYPE_F16; }, kType,
       "lse: fp16 is not fp32"},
      {"int32 operand", [](tessel_attention_problem& p) { p.v.dtype = TESSEL_DTYPE_I32; }, kType,
       "v: int32 differs from q's bf16"},
      {"batch of k", [](tessel_attention_problem& p) { p.k.shape[0] = 3; }, kArg, "k: batch 3 differs from q's 2"},
      {"head dim of k", [](tessel_attention_problem& p) { p.k.shape[3] = 64; }, kArg,
       "k: head dim 64 differs from q's 128; q and k share D"},
      {"S_k of v", [](tessel_attention_problem& p) { p.v.shape[1] = 49; }, kArg,
       "v: shape (2, 49, 2, 128) does not match k's (2, 50, 2, 128)"},
      {"o's D_v", [](tessel_attention_problem& p) { p.o.shape[3] = 64; }, kArg,
       "o: shape (2, 37, 8, 64) is not (2, 37, 8, 128), [B, S_q, H, D_v] from q and v"},
      {"lse shape", [](tessel_attention_problem& p) { p.lse.shape[2] = 36; }, kArg,
       "lse: shape (2, 8, 36) is not (2, 8, 37), [B, H, S_q] from q"},
      {"negative stride", [](tessel_attention_problem& p) { p.k.strides[1] = -256; }, kArg,
       "k: stride -256 of dimension 1 is negative"},
      {"strided head vector", [](tessel_attention_problem& p) { p.q.strides[3] = 2; }, kArg,
       "q: the last dimension's stride is 2"},
      {"strided lse rows", [](tessel_attention_problem& p) { p.lse.strides[2] = 2; }, kArg,
       "lse: the last dimension's stride is 2"},
      {"overlapping o", [](tessel_attention_problem& p) { p.o.strides[2] = 64; }, kArg, "o: its elements overlap"},
      {"overlapping lse", [](tessel_attention_problem& p) { p.lse.strides[0] = 0; }, kArg, "lse: its elements overlap"},
      {"null lse", [](tessel_attention_problem& p) { p.lse.data = nullptr; }, kArg, "lse: data is NULL"},
      {"max_seqlen without offsets", [](tessel_attention_problem& p) { p.max_seqlen_q = 5; }, kArg,
       "max_seqlen_q: 5 is given without cu_seqlens_q"},
      {"align", [](tessel_attention_problem& p) { p.align = 7; }, kArg, "align: 7 is not a tessel_mask_align"},
      {"unknown kernel", [](tessel_attention_problem& p) { p.kernel = "nope"; }, kArg,
       "kernel: 'nope' is not a compiled attention kernel"},
      // the host API's validator, reached through the C ABI
      {"GQA ratio", [](tessel_attention_problem& p) { p.k.shape[2] = p.v.shape[2] = 3; }, kArg,
       "heads: 8 is not a multiple of kv_heads 3"},
      {"head dim", [](tessel_attention_problem& p) { p.q.shape[3] = p.k.shape[3] = 80; }, kArg,
       "head_dim: 80 is not supported"},
      {"head dim pair", [](tessel_attention_problem& p) { p.v.shape[3] = p.o.shape[3] = 64; }, kArg,
       "head_dim_v: 64 with head_dim 128 is not supported"},
      {"unaligned row stride", [](tessel_attention_problem& p) { p.q.strides[1] = 8 * 128 + 4; }, kArg,
       "q.row_stride: 1028 is not a multiple of 8 elements"},
      {"unaligned o head stride", [](tessel_attention_problem& p) { pad_heads(&p.o, 132); }, kArg,
       "o.head_stride: 132 is not a multiple of 8 elements"},
      {"unaligned pointer", [](tessel_attention_problem& p) { p.v.data = g_memory[kV] + 8; }, kArg,
       "v: the pointer is not 16-byte aligned"},
      {"NaN scale", [](tessel_attention_problem& p) { p.softmax_scale = std::numeric_limits<float>::quiet_NaN(); }, kArg,
       "softmax_scale: nan is not finite"},
      {"negative softcap", [](tessel_attention_problem& p) { p.softcap = -1.0f; }, kArg,
       "softcap: -1 is not a finite value >= 0"},
      {"causal with a right window", [](tessel_attention_problem& p) { p.causal = 1, p.window_right = 2; }, kArg,
       "window_right: 2 with causal contradicts it"},
      {"null q", [](tessel_attention_problem& p) { p.q.data = nullptr; }, kArg, "q: null, but Q is read"},
      {"null o", [](tessel_attention_problem& p) { p.o.data = nullptr; }, kArg, "o: null, but O is written"},
  };
  expect_refusals([] { return attention(2, 37, 50, 8, 2, 128, 128); }, cases);
}

TEST(CApiAttention, SequencesPast32BitsAreNotSupported) {
  tessel_attention_problem p = attention(1, std::int64_t(1) << 31, 16, 1, 1, 64, 64);
  p.lse.ndim = 0;
  Answer const r = check(p);
  EXPECT_EQ(r.code, TESSEL_STATUS_NOT_SUPPORTED) << r.reason;
  EXPECT_EQ(r.reason.rfind("seqlen_q: 2147483648 is above 2^31 - 1", 0), 0u) << r.reason;
}

TEST(CApiAttention, VariableLengthRefusals) {
  constexpr tessel_status kArg = TESSEL_STATUS_INVALID_ARGUMENT, kType = TESSEL_STATUS_INVALID_DTYPE;
  RefusalCase<tessel_attention_problem> const cases[] = {
      {"only q offsets", [](tessel_attention_problem& p) { p.cu_seqlens_k.ndim = 0; }, kArg,
       "cu_seqlens_k: missing, but cu_seqlens_q is given"},
      {"only k offsets", [](tessel_attention_problem& p) { p.cu_seqlens_q.ndim = 0; }, kArg,
       "cu_seqlens_q: missing, but cu_seqlens_k is given"},
      {"4-D q", [](tessel_attention_problem& p) { set(&p.q, kQ, TESSEL_DTYPE_BF16, {1, 100, 8, 128}); }, kArg,
       "q: has 4 dimensions; with cu_seqlens the operands are packed 3-D [total, H, D]"},
      {"3-D lse", [](tessel_attention_problem& p) { set(&p.lse, kLse, TESSEL_DTYPE_F32, {3, 8, 100}); }, kArg,
       "lse: has 3 dimensions; LSE is 2-D [H, total_q] with cu_seqlens"},
      {"2-D offsets", [](tessel_attention_problem& p) { set(&p.cu_seqlens_q, kCuQ, TESSEL_DTYPE_I32, {2, 2}); }, kArg,
       "cu_seqlens_q: has 2 dimensions; it is 1-D"},
      {"float offsets", [](tessel_attention_problem& p) { p.cu_seqlens_k.dtype = TESSEL_DTYPE_F32; }, kType,
       "cu_seqlens_k: fp32 is not int32"},
      {"no offsets", [](tessel_attention_problem& p) { p.cu_seqlens_q.shape[0] = p.cu_seqlens_k.shape[0] = 0; }, kArg,
       "cu_seqlens_q: is empty"},
      {"offset counts", [](tessel_attention_problem& p) { p.cu_seqlens_k.shape[0] = 5; }, kArg,
       "cu_seqlens_k: has 5 offsets, but cu_seqlens_q has 4; both hold B + 1"},
      {"strided offsets", [](tessel_attention_problem& p) { p.cu_seqlens_q.strides[0] = 2; }, kArg,
       "cu_seqlens_q: stride 2; the offsets must be contiguous"},
      {"null offsets", [](tessel_attention_problem& p) { p.cu_seqlens_k.data = nullptr; }, kArg,
       "cu_seqlens_k: data is NULL, but it holds B + 1 = 4 offsets"},
      {"lse shape", [](tessel_attention_problem& p) { p.lse.shape[1] = 99; }, kArg,
       "lse: shape (8, 99) is not (8, 100), [H, total_q] from q"},
      {"negative max_seqlen", [](tessel_attention_problem& p) { p.max_seqlen_k = -1; }, kArg,
       "max_seqlen_k: -1 is negative"},
  };
  expect_refusals([] { return attention_varlen(3, 100, 120, 8, 8, 128); }, cases);
}

TEST(CApiAttention, ReasonsUseTheTensorsOwnNames) {
  tessel_attention_problem p = attention(2, 37, 50, 8, 2, 128, 128);
  p.o.name = "out";
  p.o.dtype = TESSEL_DTYPE_F16;
  EXPECT_EQ(check(p).reason.rfind("out: fp16 differs from q's bf16; q, k, v and out share one dtype", 0), 0u)
      << check(p).reason;
  p.o.dtype = TESSEL_DTYPE_BF16;
  pad_heads(&p.o, 132);  // the validator's o_head_stride, in o's name
  EXPECT_EQ(check(p).reason.rfind("out.head_stride: 132 is not a multiple of 8", 0), 0u) << check(p).reason;
  pad_heads(&p.o, 128);
  p.o.data = g_memory[kO] + 4;
  EXPECT_EQ(check(p).reason.rfind("out: the pointer is not 16-byte aligned", 0), 0u) << check(p).reason;
}

TEST(CApiAttention, NullProblemAndShortReasonBuffers) {
  char why[64];
  EXPECT_EQ(tessel_attention_check(nullptr, why, sizeof why), TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(why, "problem: NULL");
  EXPECT_EQ(tessel_attention_forward(nullptr, nullptr, why, sizeof why), TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(why, "problem: NULL");
  tessel_attention_problem p = attention(2, 37, 50, 8, 2, 128, 128);
  p.k.shape[0] = 3;
  char small[6];
  EXPECT_EQ(tessel_attention_check(&p, small, sizeof small), TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(small, "k: ba");
  EXPECT_EQ(tessel_attention_can_implement(&p, nullptr, 0), TESSEL_STATUS_INVALID_ARGUMENT);
}

TEST(CApiAttention, RefusedCallsReachNoCudaAndEmptyProblemsLaunchNothing) {
  char why[256];
  tessel_attention_problem p = attention(2, 37, 50, 8, 2, 128, 128);
  p.q.shape[3] = p.k.shape[3] = 80;
  EXPECT_EQ(tessel_attention_forward(&p, nullptr, why, sizeof why), TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(why).rfind("head_dim: 80", 0), 0u) << why;
  p = attention(0, 37, 50, 8, 2, 128, 128);  // B = 0: nothing to write, no pointer needed
  p.q.data = p.k.data = p.v.data = p.o.data = p.lse.data = nullptr;
  EXPECT_EQ(check(p).code, TESSEL_STATUS_SUCCESS) << check(p).reason;
  EXPECT_EQ(tessel_attention_forward(&p, nullptr, why, sizeof why), TESSEL_STATUS_SUCCESS) << why;
}

// ---- attention backward -------------------------------------------------------------------------

using tessel::AttentionBackwardArguments;

enum GradientSlot { kDO = 7, kDQ, kDK, kDV };

alignas(256) char g_workspace[512];  // a 256-byte aligned address; never dereferenced

AttentionBackwardArguments mapped(tessel_attention_backward_problem const& p) {
  return mapped_to<AttentionBackwardArguments>(p);
}

// The backward of attention(...): the forward's tensors, d_o like o, dq like q, dk like k, dv like
// v, all packed.
tessel_attention_backward_problem attention_backward(std::int64_t b, std::int64_t s_q, std::int64_t s_k,
                                                     std::int64_t h, std::int64_t h_kv, std::int64_t d,
                                                     std::int64_t d_v, tessel_dtype dtype = TESSEL_DTYPE_BF16) {
  tessel_attention_backward_problem p;
  tessel_attention_backward_problem_init(&p);
  p.forward = attention(b, s_q, s_k, h, h_kv, d, d_v, dtype);
  set(&p.d_o, kDO, dtype, {b, s_q, h, d_v});
  set(&p.dq, kDQ, dtype, {b, s_q, h, d});
  set(&p.dk, kDK, dtype, {b, s_k, h_kv, d});
  set(&p.dv, kDV, dtype, {b, s_k, h_kv, d_v});
  return p;
}

TEST(CApiAttentionBackward, InitLeavesTheForwardsDefaultsAndNoGradients) {
  tessel_attention_backward_problem p;
  std::memset(&p, 0xff, sizeof p);
  tessel_attention_backward_problem_init(&p);
  EXPECT_EQ(p.forward.window_left, -1);
  EXPECT_EQ(p.forward.window_right, -1);
  EXPECT_EQ(p.forward.align, TESSEL_MASK_ALIGN_BOTTOM_RIGHT);
  EXPECT_EQ(p.forward.q.ndim, 0);
  EXPECT_EQ(p.forward.kernel, nullptr);
  EXPECT_EQ(p.d_o.ndim, 0);
  EXPECT_EQ(p.dq.ndim, 0);
  EXPECT_EQ(p.dv.ndim, 0);
  EXPECT_EQ(p.deterministic, 0);
  EXPECT_EQ(p.kernel, nullptr);
  EXPECT_EQ(p.workspace, nullptr);
  EXPECT_EQ(p.workspace_bytes, 0u);
  EXPECT_GE(TESSEL_C_API_VERSION, 5);  // attention backward since version 5
  EXPECT_EQ(tessel_c_api_version(), TESSEL_C_API_VERSION);
}

TEST(CApiAttentionBackward, DenseProblemMapsEveryTensorAndTheOptions) {
  tessel_attention_backward_problem p = attention_backward(2, 37, 50, 8, 2, 192, 128);
  p.forward.causal = 1, p.forward.window_left = 16, p.forward.softcap = 30.0f;
  p.forward.kernel = "not read by the backward";
  // dq padded between heads (200 elements), d_o as a transposed view of a [B, H, S, D_v] array
  set(&p.dq, kDQ, TESSEL_DTYPE_BF16, {2, 37, 8, 192}, {37 * 8 * 200, 8 * 200, 200, 1});
  set(&p.d_o, kDO, TESSEL_DTYPE_BF16, {2, 37, 8, 128}, {8 * 37 * 128, 128, 37 * 128, 1});
  p.deterministic = 1;
  p.workspace = g_workspace, p.workspace_bytes = 1u << 30;
  Answer const r = check(p);
  EXPECT_EQ(r.code, TESSEL_STATUS_SUCCESS) << r.reason;
  AttentionBackwardArguments const b = mapped(p);
  EXPECT_EQ(b.problem.batch, 2);
  EXPECT_EQ(b.problem.seqlen_q, 37);
  EXPECT_EQ(b.problem.seqlen_k, 50);
  EXPECT_EQ(b.problem.kv_heads, 2);
  EXPECT_EQ(b.problem.head_dim_v, 128);
  EXPECT_EQ(b.problem.o, g_memory[kO]);
  EXPECT_EQ(static_cast<void*>(b.problem.lse), g_memory[kLse]);
  EXPECT_TRUE(b.problem.causal);
  EXPECT_EQ(b.problem.window_left, 16);
  EXPECT_EQ(b.problem.softcap, 30.0f);
  EXPECT_EQ(b.problem.kernel, nullptr);
  EXPECT_EQ(b.d_o.ptr, g_memory[kDO]);
  EXPECT_EQ(b.d_o.batch_stride, 8 * 37 * 128);
  EXPECT_EQ(b.d_o.row_stride, 128);
  EXPECT_EQ(b.d_o.head_stride, 37 * 128);
  EXPECT_EQ(b.dq.ptr, g_memory[kDQ]);
  EXPECT_EQ(b.dq.batch_stride, 37 * 8 * 200);
  EXPECT_EQ(b.dq.row_stride, 8 * 200);
  EXPECT_EQ(b.dq.head_stride, 200);
  EXPECT_EQ(b.dk.ptr, g_memory[kDK]);
  EXPECT_EQ(b.dk.batch_stride, 50 * 2 * 192);
  EXPECT_EQ(b.dk.row_stride, 2 * 192);
  EXPECT_EQ(b.dk.head_stride, 192);
  EXPECT_EQ(b.dv.ptr, g_memory[kDV]);
  EXPECT_EQ(b.dv.row_stride, 2 * 128);
  EXPECT_TRUE(b.deterministic);
  EXPECT_EQ(b.workspace, g_workspace);
  EXPECT_EQ(b.workspace_bytes, std::size_t(1) << 30);
  EXPECT_EQ(b.kernel, nullptr);
}

TEST(CApiAttentionBackward, VariableLengthGradientsArePackedRows) {
  tessel_attention_backward_problem p;
  tessel_attention_backward_problem_init(&p);
  p.forward = attention_varlen(3, 100, 120, 8, 2, 128);
  set(&p.d_o, kDO, TESSEL_DTYPE_BF16, {100, 8, 128});
  set(&p.dq, kDQ, TESSEL_DTYPE_BF16, {100, 8, 128});
  set(&p.dk, kDK, TESSEL_DTYPE_BF16, {120, 2, 128});
  set(&p.dv, kDV, TESSEL_DTYPE_BF16, {120, 2, 128});
  p.forward.max_seqlen_q = 40, p.forward.max_seqlen_k = 64;
  AttentionBackwardArguments const b = mapped(p);
  EXPECT_EQ(b.problem.batch, 3);
  EXPECT_EQ(b.problem.seqlen_q, 40);
  EXPECT_EQ(b.problem.seqlen_k, 64);
  EXPECT_EQ(b.dq.batch_stride, 0);
  EXPECT_EQ(b.dq.row_stride, 8 * 128);
  EXPECT_EQ(b.dq.head_stride, 128);
  EXPECT_EQ(b.dk.row_stride, 2 * 128);
  EXPECT_EQ(b.d_o.batch_stride, 0);
  EXPECT_EQ(static_cast<void const*>(b.problem.cu_seqlens_k), g_memory[kCuK]);
  // a 4-D gradient of a packed problem is refused by its shape
  set(&p.dk, kDK, TESSEL_DTYPE_BF16, {1, 120, 2, 128});
  EXPECT_EQ(check(p).reason.rfind("dk: shape (1, 120, 2, 128) is not k's (120, 2, 128)", 0), 0u) << check(p).reason;
}

TEST(CApiAttentionBackward, RefusalsNameTheTensorOrArgumentAndCarryTheirCode) {
  constexpr tessel_status kArg = TESSEL_STATUS_INVALID_ARGUMENT, kType = TESSEL_STATUS_INVALID_DTYPE;
  using P = tessel_attention_backward_problem;
  RefusalCase<P> const cases[] = {
      // the forward problem's C ABI rules, as tessel_attention_check states them
      {"3-D q", [](P& p) { p.forward.q.ndim = 3; }, kArg, "q: has 3 dimensions; attention operands are 4-D"},
      {"dtype mix", [](P& p) { p.forward.k.dtype = TESSEL_DTYPE_F16; }, kType, "k: fp16 differs from q's bf16"},
      {"o's shape", [](P& p) { p.forward.o.shape[3] = 64; }, kArg, "o: shape (2, 37, 8, 64) is not (2, 37, 8, 128)"},
      // the backward's own
      {"no lse", [](P& p) { p.forward.lse.ndim = 0; }, kArg,
       "lse: missing (ndim 0); the backward reads the forward's LSE ([B, H, S_q] fp32)"},
      {"missing d_o", [](P& p) { p.d_o.ndim = 0; }, kArg, "d_o: missing (ndim 0); attention backward needs d_o"},
      {"missing dv", [](P& p) { p.dv.ndim = 0; }, kArg, "dv: missing (ndim 0)"},
      {"bad ndim", [](P& p) { p.dk.ndim = 9; }, kArg, "dk: ndim 9 is outside 0..8"},
      {"unknown dtype", [](P& p) { p.dq.dtype = 42; }, kType, "dq: dtype 42 is not a tessel_dtype"},
      {"fp16 gradient", [](P& p) { p.dk.dtype = TESSEL_DTYPE_F16; }, kType,
       "dk: fp16 differs from q's bf16; the gradients share the forward's dtype"},
      {"fp32 d_o", [](P& p) { p.d_o.dtype = TESSEL_DTYPE_F32; }, kType, "d_o: fp32 differs from q's bf16"},
      {"dq's shape", [](P& p) { p.dq.shape[1] = 36; }, kArg,
       "dq: shape (2, 36, 8, 128) is not q's (2, 37, 8, 128); dq is shaped like q"},
      {"dv's shape", [](P& p) { p.dv.shape[2] = 8; }, kArg, "dv: shape (2, 50, 8, 128) is not v's (2, 50, 2, 128)"},
      {"d_o's rank", [](P& p) { p.d_o.ndim = 3; }, kArg, "d_o: shape (2, 37, 8) is not o's (2, 37, 8, 128)"},
      {"negative stride", [](P& p) { p.dk.strides[1] = -256; }, kArg, "dk: stride -256 of dimension 1 is negative"},
      {"strided head vector", [](P& p) { p.dq.strides[3] = 2; }, kArg, "dq: the last dimension's stride is 2"},
      {"overlapping dv", [](P& p) { p.dv.strides[1] = 0; }, kArg, "dv: its elements overlap"},
      {"unknown kernel", [](P& p) { p.kernel = "sm80_attention_bf16_d128"; }, kArg,
       "kernel: 'sm80_attention_bf16_d128' is not a compiled attention-backward kernel"},
      // the host API's validator, reached through the C ABI, in the caller's names
      {"GQA ratio", [](P& p) { p = attention_backward(2, 37, 50, 8, 3, 128, 128); }, kArg,
       "heads: 8 is not a multiple of kv_heads 3"},
      {"unaligned dq row stride", [](P& p) { p.dq.strides[1] = 8 * 128 + 4, p.dq.strides[0] = 37 * 1032; }, kArg,
       "dq.row_stride: 1028 is not a multiple of 8 elements"},
      {"unaligned d_o pointer", [](P& p) { p.d_o.data = g_memory[kDO] + 8; }, kArg, "d_o: the pointer is not 16-byte aligned"},
      {"negative lse stride", [](P& p) { p.forward.lse.strides[1] = -37; }, kArg, "lse: stride -37 of dimension 1 is negative"},
      {"null q", [](P& p) { p.forward.q.data = nullptr; }, kArg, "q: null, but Q is read"},
      {"null o", [](P& p) { p.forward.o.data = nullptr; }, kArg, "o: null, but O (the forward's output) is read"},
      {"null lse", [](P& p) { p.forward.lse.data = nullptr; }, kArg, "lse: null, but the forward's LSE is read"},
      {"null d_o", [](P& p) { p.d_o.data = nullptr; }, kArg, "d_o: null, but dO is read"},
      {"null dq", [](P& p) { p.dq.data = nullptr; }, kArg, "dq: null, but dQ is written"},
      {"null dk", [](P& p) { p.dk.data = nullptr; }, kArg, "dk: null, but dK is written"},
      {"misaligned workspace", [](P& p) { p.workspace = g_workspace + 16, p.workspace_bytes = 1 << 20; }, kArg,
       "workspace: the pointer is not 256-byte aligned"},
      {"small workspace", [](P& p) { p.workspace = g_workspace, p.workspace_bytes = 1000; }, kArg,
       "workspace_bytes: 1000 is less than the 311296 bytes the call needs"},
      {"causal with a right window", [](P& p) { p.forward.causal = 1, p.forward.window_right = 2; }, kArg,
       "window_right: 2 with causal contradicts it"},
  };
  expect_refusals([] { return attention_backward(2, 37, 50, 8, 2, 128, 128); }, cases);
}

// A kernel named for a call it cannot take is refused by tessel_attention_backward_can_implement
// before any device query (so on a machine without a GPU too), with the kernel's rule.
TEST(CApiAttentionBackward, NamedSm90KernelRefusesWhatItDoesNotTake) {
  struct Case {
    char const* kernel;
    int deterministic;
    tessel_status code;
    char const* reason_starts;
  };
  for (Case const c : {
           Case{"sm90_attention_bwd_bf16_d64", 0, TESSEL_STATUS_INVALID_ARGUMENT,
                "kernel: sm90_attention_bwd_bf16_d64 computes bf16 with head dims (64, 64); the call is bf16 (128, 128)"},
           Case{"sm90_attention_bwd_bf16_d128", 1, TESSEL_STATUS_NOT_SUPPORTED,
                "kernel: sm90_attention_bwd_bf16_d128 does not take the deterministic mode"},
       }) {
    tessel_attention_backward_problem p = attention_backward(2, 37, 50, 8, 2, 128, 128);
    p.kernel = c.kernel, p.deterministic = c.deterministic;
    ASSERT_EQ(tessel_attention_backward_check(&p, nullptr, 0), TESSEL_STATUS_SUCCESS) << c.kernel;
    char reason[512] = {};
    EXPECT_EQ(tessel_attention_backward_can_implement(&p, reason, sizeof reason), c.code) << c.kernel << ": " << reason;
    EXPECT_EQ(std::string(reason).rfind(c.reason_starts, 0), 0u) << reason;
  }
}

TEST(CApiAttentionBackward, ReasonsUseTheTensorsOwnNames) {
  tessel_attention_backward_problem p = attention_backward(2, 37, 50, 8, 2, 128, 128);
  p.forward.o.name = "out", p.d_o.name = "dout";
  p.d_o.strides[1] = 8 * 128 + 4, p.d_o.strides[0] = 37 * 1032;
  EXPECT_EQ(check(p).reason.rfind("dout.row_stride: 1028 is not a multiple of 8", 0), 0u) << check(p).reason;
  p.d_o.strides[1] = 8 * 128, p.d_o.strides[0] = 37 * 8 * 128;
  p.d_o.shape[3] = 64;
  EXPECT_EQ(check(p).reason.rfind("dout: shape (2, 37, 8, 64) is not out's (2, 37, 8, 128); dout is shaped like out", 0), 0u)
      << check(p).reason;
  p.d_o.shape[3] = 128;
  p.forward.o.data = nullptr;
  EXPECT_EQ(check(p).reason.rfind("out: null, but O (the forward's output) is read", 0), 0u) << check(p).reason;
  p.forward.o.data = g_memory[kO];
  pad_heads(&p.forward.o, 132);  // the validator's o_head_stride, in o's name
  EXPECT_EQ(check(p).reason.rfind("out.head_stride: 132 is not a multiple of 8", 0), 0u) << check(p).reason;
}

TEST(CApiAttentionBackward, OAndLseAreReadSoTheirElementsMayRepeat) {
  // o read through a broadcast view (stride 0 over the batch) is legal input for the backward
  tessel_attention_backward_problem p = attention_backward(2, 37, 50, 8, 2, 128, 128);
  p.forward.o.strides[0] = 0;
  p.forward.lse.strides[0] = 0;
  EXPECT_EQ(check(p).code, TESSEL_STATUS_SUCCESS) << check(p).reason;
  tessel_attention_problem f = p.forward;  // the forward writes them: refused there
  EXPECT_EQ(check(f).reason.rfind("o: its elements overlap", 0), 0u) << check(f).reason;
}

TEST(CApiAttentionBackward, WorkspaceSizeIsTheRowStatisticsAndTheDqAccumulator) {
  tessel_attention_backward_problem p = attention_backward(2, 37, 50, 8, 2, 128, 128);
  char why[256];
  std::size_t bytes = 7;
  ASSERT_EQ(tessel_attention_backward_workspace_size(&p, &bytes, why, sizeof why), TESSEL_STATUS_SUCCESS) << why;
  // LSE*log2(e) and Dsum fp32 [H, B, 64] (each sequence's 37 rows padded to 64) = 4096 bytes each;
  // the dQ accumulator fp32 [B*S_q, H, D] = 303104 bytes (a multiple of 256)
  EXPECT_EQ(bytes, 2u * 4096u + 303104u);
  p.deterministic = 1;  // head dims (128, 128): the accumulator and the turns (8 heads x 2 x 1 unsigned, in 256 bytes)
  ASSERT_EQ(tessel_attention_backward_workspace_size(&p, &bytes, why, sizeof why), TESSEL_STATUS_SUCCESS) << why;
  EXPECT_EQ(bytes, 2u * 4096u + 303104u + 256u);
  p = attention_backward(2, 0, 50, 8, 2, 128, 128);  // S_q = 0: nothing is read
  ASSERT_EQ(tessel_attention_backward_workspace_size(&p, &bytes, why, sizeof why), TESSEL_STATUS_SUCCESS) << why;
  EXPECT_EQ(bytes, 0u);
  p.dk.shape[0] = 3;
  EXPECT_EQ(tessel_attention_backward_workspace_size(&p, &bytes, why, sizeof why), TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(why).rfind("dk: shape", 0), 0u) << why;
  EXPECT_EQ(bytes, 0u);
  EXPECT_EQ(tessel_attention_backward_workspace_size(&p, nullptr, why, sizeof why), TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(why, "bytes: NULL");
}

TEST(CApiAttentionBackward, NullProblemRefusedCallsAndEmptyProblems) {
  char why[256];
  EXPECT_EQ(tessel_attention_backward_check(nullptr, why, sizeof why), TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(why, "problem: NULL");
  EXPECT_EQ(tessel_attention_backward(nullptr, nullptr, why, sizeof why), TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(why, "problem: NULL");
  tessel_attention_backward_problem p = attention_backward(2, 37, 50, 8, 2, 128, 128);
  p.dq.shape[3] = 64;  // refused before any CUDA call, by every entry point
  for (tessel_status s : {tessel_attention_backward(&p, nullptr, why, sizeof why),
                          tessel_attention_backward_can_implement(&p, why, sizeof why)}) {
    EXPECT_EQ(s, TESSEL_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(std::string(why).rfind("dq: shape", 0), 0u) << why;
  }
  p = attention_backward(0, 37, 50, 8, 2, 128, 128);  // B = 0: nothing to write, no pointer needed
  for (tessel_tensor* t : {&p.forward.q, &p.forward.k, &p.forward.v, &p.forward.o, &p.forward.lse, &p.d_o, &p.dq,
                           &p.dk, &p.dv})
    t->data = nullptr;
  EXPECT_EQ(check(p).code, TESSEL_STATUS_SUCCESS) << check(p).reason;
  EXPECT_EQ(tessel_attention_backward(&p, nullptr, why, sizeof why), TESSEL_STATUS_SUCCESS) << why;
}

// ---- convolution -----------------------------------------------------------------------------------

using tessel::ConvArguments;
namespace conv = tessel::conv;

constexpr int kX = 0, kW = 1, kY = 2, kRes = 3, kBias = 4;

// A packed 2-D fprop problem: x [n, h, w, c], w [k, r, s, c/groups], y [n, p, q, k] with padding pad
// and stride 1, bf16, bias fp32 [k].
tessel_conv_problem conv2d(std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c, std::int64_t k,
                           std::int64_t r, std::int64_t s, std::int64_t pad, std::int64_t groups = 1) {
  tessel_conv_problem p;
  tessel_conv_problem_init(&p);
  p.pad_h = p.pad_w = pad;
  p.groups = groups;
  std::int64_t const ph = h + 2 * pad - r + 1, pw = w + 2 * pad - s + 1;
  set(&p.x, kX, TESSEL_DTYPE_BF16, {n, h, w, c});
  set(&p.w, kW, TESSEL_DTYPE_BF16, {k, r, s, c / groups});
  set(&p.y, kY, TESSEL_DTYPE_BF16, {n, ph, pw, k});
  set(&p.bias, kBias, TESSEL_DTYPE_F32, {k});
  return p;
}

ConvArguments mapped(tessel_conv_problem const& p) { return mapped_to<ConvArguments>(p); }

TEST(CApiConv, InitSetsUnitStepsOneGroupAndNoTensors) {
  tessel_conv_problem p;
  std::memset(&p, 0xff, sizeof p);
  tessel_conv_problem_init(&p);
  EXPECT_EQ(p.op, TESSEL_CONV_FPROP);
  EXPECT_EQ(p.stride_d, 1);
  EXPECT_EQ(p.stride_w, 1);
  EXPECT_EQ(p.dilation_h, 1);
  EXPECT_EQ(p.pad_h, 0);
  EXPECT_EQ(p.groups, 1);
  EXPECT_EQ(p.alpha, 1.0f);
  EXPECT_EQ(p.beta, 0.0f);
  EXPECT_EQ(p.activation, TESSEL_ACTIVATION_NONE);
  EXPECT_EQ(p.x.ndim, 0);
  EXPECT_EQ(p.residual.ndim, 0);
  EXPECT_EQ(p.kernel, nullptr);
  EXPECT_EQ(p.workspace, nullptr);
  EXPECT_GE(TESSEL_C_API_VERSION, 4);  // convolution since version 4
  EXPECT_EQ(tessel_c_api_version(), TESSEL_C_API_VERSION);
}

TEST(CApiConv, Fprop2dMapsSizesStridesAndEpilogue) {
  tessel_conv_problem p = conv2d(2, 9, 11, 33, 65, 3, 3, 1);
  p.activation = TESSEL_ACTIVATION_GELU;
  set(&p.residual, kRes, TESSEL_DTYPE_BF16, {2, 9, 11, 65});
  p.alpha = 0.5f, p.beta = 2.0f;
  Answer const r = check(p);
  EXPECT_EQ(r.code, TESSEL_STATUS_SUCCESS) << r.reason;
  EXPECT_EQ(r.reason, "");
  ConvArguments const a = mapped(p);
  EXPECT_EQ(a.op, conv::Operator::kFprop);
  EXPECT_EQ(a.spatial_dims, 2);
  EXPECT_EQ(a.n, 2);
  EXPECT_EQ(a.d, 1);
  EXPECT_EQ(a.h, 9);
  EXPECT_EQ(a.w, 11);
  EXPECT_EQ(a.c, 33);
  EXPECT_EQ(a.k, 65);
  EXPECT_EQ(a.t, 1);
  EXPECT_EQ(a.r, 3);
  EXPECT_EQ(a.s, 3);
  EXPECT_EQ(a.pad_h, 1);
  EXPECT_EQ(a.dtype, tessel::DType::bf16);
  EXPECT_EQ(a.x.ptr, g_memory[kX]);
  EXPECT_EQ(a.x.stride_n, 9 * 11 * 33);
  EXPECT_EQ(a.x.stride_h, 11 * 33);
  EXPECT_EQ(a.x.stride_w, 33);
  EXPECT_EQ(a.filter.ptr, g_memory[kW]);
  EXPECT_EQ(a.filter.stride_k, 3 * 3 * 33);
  EXPECT_EQ(a.y.stride_h, 11 * 65);
  EXPECT_EQ(a.out, g_memory[kY]);
  EXPECT_EQ(a.residual, g_memory[kRes]);
  EXPECT_EQ(static_cast<void const*>(a.bias), g_memory[kBias]);
  EXPECT_EQ(a.activation, tessel::ConvActivation::gelu);
  EXPECT_EQ(a.alpha, 0.5f);
  EXPECT_EQ(a.beta, 2.0f);
}

TEST(CApiConv, EachPassWritesItsOwnTensor) {
  tessel_conv_problem p = conv2d(2, 8, 8, 16, 32, 3, 3, 1);
  p.bias.ndim = 0;
  p.op = TESSEL_CONV_DGRAD;
  EXPECT_EQ(mapped(p).op, conv::Operator::kDgrad);
  EXPECT_EQ(mapped(p).out, g_memory[kX]);
  p.op = TESSEL_CONV_WGRAD;
  EXPECT_EQ(mapped(p).op, conv::Operator::kWgrad);
  EXPECT_EQ(mapped(p).out, g_memory[kW]);
  // dgrad's bias has one value per input channel
  p.op = TESSEL_CONV_DGRAD;
  set(&p.bias, kBias, TESSEL_DTYPE_F32, {16});
  EXPECT_EQ(check(p).code, TESSEL_STATUS_SUCCESS) << check(p).reason;
  set(&p.bias, kBias, TESSEL_DTYPE_F32, {32});
  EXPECT_EQ(check(p).reason.rfind("bias: has 32 values, but x has 16 channels", 0), 0u) << check(p).reason;
}

TEST(CApiConv, StridedConv3dMapsEveryDimension) {
  tessel_conv_problem p;
  tessel_conv_problem_init(&p);
  p.pad_d = 1, p.pad_h = 2, p.pad_w = 0;
  p.stride_d = 1, p.stride_h = 2, p.stride_w = 3;
  p.dilation_d = 2, p.dilation_h = 1, p.dilation_w = 1;
  p.groups = 4;
  // D 5, H 9, W 10, T 3, R 3, S 2: Z = (5+2-5)/1+1 = 3, P = (9+4-3)/2+1 = 6, Q = (10-2)/3+1 = 3
  set(&p.x, kX, TESSEL_DTYPE_F16, {2, 5, 9, 10, 8});
  set(&p.w, kW, TESSEL_DTYPE_F16, {12, 3, 3, 2, 2});
  set(&p.y, kY, TESSEL_DTYPE_F16, {2, 3, 6, 3, 12});
  ConvArguments const a = mapped(p);
  EXPECT_EQ(a.spatial_dims, 3);
  EXPECT_EQ(a.d, 5);
  EXPECT_EQ(a.t, 3);
  EXPECT_EQ(a.s, 2);
  EXPECT_EQ(a.groups, 4);
  EXPECT_EQ(a.dtype, tessel::DType::f16);
  EXPECT_EQ(a.x.stride_d, 9 * 10 * 8);
  EXPECT_EQ(a.y.stride_d, 6 * 3 * 12);
  EXPECT_EQ(a.filter.stride_k, 3 * 3 * 2 * 2);
  EXPECT_EQ(a.stride_w, 3);
  EXPECT_EQ(a.dilation_d, 2);
  p.y.shape[2] = 5;
  EXPECT_EQ(check(p).reason.rfind("y: shape (2, 3, 5, 3, 12) is not (2, 3, 6, 3, 12), [N, Z, P, Q, K] from x, w", 0), 0u)
      << check(p).reason;
}

TEST(CApiConv, ChannelsLastViewsAndPaddedPixelsMapWithoutCopies) {
  // torch's [N, C, H, W] in channels_last memory, permuted to [N, H, W, C]: strides (H W C, W C, C, 1);
  // here with pixels padded to 40 elements and images 16 pixels apart per row.
  tessel_conv_problem p = conv2d(2, 8, 8, 33, 64, 3, 3, 1);
  set(&p.x, kX, TESSEL_DTYPE_BF16, {2, 8, 8, 33}, {8 * 16 * 40, 16 * 40, 40, 1});
  set(&p.w, kW, TESSEL_DTYPE_BF16, {64, 3, 3, 33}, {300, 99, 33, 1});  // filters padded to 300 elements
  ConvArguments const a = mapped(p);
  EXPECT_EQ(a.x.stride_n, 8 * 16 * 40);
  EXPECT_EQ(a.x.stride_h, 16 * 40);
  EXPECT_EQ(a.x.stride_w, 40);
  EXPECT_EQ(a.filter.stride_k, 300);
  // extent-1 dimensions take any stride: N = 1 and a 1x1 filter
  p = conv2d(1, 8, 8, 16, 16, 1, 1, 0);
  set(&p.x, kX, TESSEL_DTYPE_BF16, {1, 8, 8, 16}, {7, 128, 16, 1});
  set(&p.w, kW, TESSEL_DTYPE_BF16, {16, 1, 1, 16}, {16, 5, 3, 1});
  EXPECT_EQ(check(p).code, TESSEL_STATUS_SUCCESS) << check(p).reason;
  EXPECT_EQ(mapped(p).x.stride_n, 8 * 8 * 16);
}

TEST(CApiConv, RefusalsNameTheTensorOrArgumentAndCarryTheirCode) {
  constexpr tessel_status kArg = TESSEL_STATUS_INVALID_ARGUMENT, kType = TESSEL_STATUS_INVALID_DTYPE;
  RefusalCase<tessel_conv_problem> const cases[] = {
      // the C ABI's own rules
      {"op", [](tessel_conv_problem& p) { p.op = 3; }, kArg, "op: 3 is not a tessel_conv_op"},
      {"missing w", [](tessel_conv_problem& p) { p.w.ndim = 0; }, kArg, "w: missing (ndim 0)"},
      {"bad ndim", [](tessel_conv_problem& p) { p.y.ndim = 9; }, kArg, "y: ndim 9 is outside 0..8"},
      {"3-D x", [](tessel_conv_problem& p) { p.x.ndim = 3; }, kArg,
       "x: has 3 dimensions; convolution activations are 4-D [N, H, W, C] (2-D) or 5-D"},
      {"5-D w with 4-D x", [](tessel_conv_problem& p) { p.w.ndim = 5; }, kArg,
       "w: has 5 dimensions, but x has 4; a 2-D convolution's filters are 4-D [K, R, S, C/groups]"},
      {"2-D bias", [](tessel_conv_problem& p) { p.bias.ndim = 2; }, kArg, "bias: has 2 dimensions; the bias is 1-D"},
      {"negative extent", [](tessel_conv_problem& p) { p.x.shape[1] = -1; }, kArg,
       "x: extent -1 of dimension 1 is negative"},
      {"unknown dtype", [](tessel_conv_problem& p) { p.w.dtype = 42; }, kType, "w: dtype 42 is not a tessel_dtype"},
      {"fp32", [](tessel_conv_problem& p) { p.x.dtype = p.w.dtype = p.y.dtype = TESSEL_DTYPE_F32; }, kType,
       "x: fp32 is not supported; convolution takes fp16 and bf16"},
      {"dtype mix", [](tessel_conv_problem& p) { p.y.dtype = TESSEL_DTYPE_F16; }, kType,
       "y: fp16 differs from x's bf16"},
      {"bf16 bias", [](tessel_conv_problem& p) { p.bias.dtype = TESSEL_DTYPE_BF16; }, kType,
       "bias: bf16 is not fp32"},
      {"batch", [](tessel_conv_problem& p) { p.y.shape[0] = 3; }, kArg, "y: batch 3 differs from x's 2"},
      {"output channels", [](tessel_conv_problem& p) { p.y.shape[3] = 64; }, kArg,
       "y: has 64 channels, but w has 65 filters"},
      {"channels per filter", [](tessel_conv_problem& p) { p.w.shape[3] = 11; }, kArg,
       "w: has 11 channels per filter, but x has 33 channels in 1 group"},
      {"output extent", [](tessel_conv_problem& p) { p.y.shape[1] = 7; }, kArg,
       "y: shape (2, 7, 11, 65) is not (2, 9, 11, 65), [N, P, Q, K] from x, w and the padding"},
      {"bias length", [](tessel_conv_problem& p) { p.bias.shape[0] = 64; }, kArg,
       "bias: has 64 values, but y has 65 channels"},
      {"strided channels", [](tessel_conv_problem& p) {
         set(&p.x, kX, TESSEL_DTYPE_BF16, {2, 9, 11, 33}, {9 * 11 * 66, 11 * 66, 66, 2}); }, kArg,
       "x: the channel dimension's stride is 2 (shape (2, 9, 11, 33), strides (6534, 726, 66, 2))"},
      {"NCHW filters", [](tessel_conv_problem& p) {
         set(&p.w, kW, TESSEL_DTYPE_BF16, {65, 3, 3, 33}, {297, 3, 1, 9}); }, kArg,
       "w: the channel dimension's stride is 9"},
      {"sparse taps", [](tessel_conv_problem& p) {
         set(&p.w, kW, TESSEL_DTYPE_BF16, {65, 3, 3, 33}, {400, 120, 40, 1}); }, kArg,
       "w: the taps of a filter are not dense"},
      {"strided bias", [](tessel_conv_problem& p) { p.bias.strides[0] = 2; }, kArg, "bias: stride 2"},
      {"residual shape", [](tessel_conv_problem& p) { set(&p.residual, kRes, TESSEL_DTYPE_BF16, {2, 9, 11, 64}); },
       kArg, "residual: shape (2, 9, 11, 64) is not y's (2, 9, 11, 65)"},
      {"residual strides", [](tessel_conv_problem& p) {
         set(&p.residual, kRes, TESSEL_DTYPE_BF16, {2, 9, 11, 65}, {9 * 11 * 72, 11 * 72, 72, 1}); }, kArg,
       "residual: strides (7128, 792, 72, 1) differ from y's (6435, 715, 65, 1)"},
      {"null residual", [](tessel_conv_problem& p) {
         set(&p.residual, kRes, TESSEL_DTYPE_BF16, {2, 9, 11, 65});
         p.residual.data = nullptr; }, kArg, "residual: data is NULL"},
      {"activation", [](tessel_conv_problem& p) { p.activation = 4; }, kArg, "activation: 4 (GELU_ERF) is not a convolution's activation"},
      {"unknown kernel", [](tessel_conv_problem& p) { p.kernel = "nope"; }, kArg,
       "kernel: 'nope' is not a compiled convolution kernel"},
      // the host API's validator, reached through the C ABI
      {"negative pad", [](tessel_conv_problem& p) { p.pad_h = -1; }, kArg, "pad_h: -1 is negative"},
      {"zero stride", [](tessel_conv_problem& p) { p.stride_w = 0; }, kArg, "stride_w: 0 must be >= 1"},
      {"zero dilation", [](tessel_conv_problem& p) { p.dilation_h = 0; }, kArg, "dilation_h: 0 must be >= 1"},
      {"pad_d in 2-D", [](tessel_conv_problem& p) { p.pad_d = 1; }, kArg, "pad_d: 1 in a 2-D problem"},
      {"zero groups", [](tessel_conv_problem& p) { p.groups = 0; }, kArg, "groups: 0 must be >= 1"},
      {"groups not dividing c", [](tessel_conv_problem& p) { p.groups = 2; }, kArg, "c: 33 is not divisible by groups 2"},
      {"empty output", [](tessel_conv_problem& p) {
         p.pad_h = p.pad_w = 0;
         set(&p.w, kW, TESSEL_DTYPE_BF16, {65, 12, 3, 33}); }, kArg, "r: "},
      {"beta without residual", [](tessel_conv_problem& p) { p.beta = 1.0f; }, kArg, "beta: 1 with no residual"},
      {"NaN alpha", [](tessel_conv_problem& p) { p.alpha = std::numeric_limits<float>::quiet_NaN(); }, kArg,
       "alpha: nan is not finite"},
      {"wgrad bias", [](tessel_conv_problem& p) { p.op = TESSEL_CONV_WGRAD; }, kArg, "bias: wgrad takes none"},
      {"negative x stride", [](tessel_conv_problem& p) {
         set(&p.x, kX, TESSEL_DTYPE_BF16, {2, 9, 11, 33}, {9 * 11 * 33, -11 * 33, 33, 1}); }, kArg,
       "x.stride_h: -363 is negative"},
      {"overlapping y", [](tessel_conv_problem& p) {
         set(&p.y, kY, TESSEL_DTYPE_BF16, {2, 9, 11, 65}, {9 * 11 * 65, 11 * 65, 32, 1}); }, kArg,
       "y.stride_w: 32 is below 65"},
      {"overlapping filters", [](tessel_conv_problem& p) {
         set(&p.w, kW, TESSEL_DTYPE_BF16, {65, 3, 3, 33}, {200, 99, 33, 1}); }, kArg,
       "w.stride_k: 200 is below t*r*s*c/groups = 297"},
      {"unaligned pointer", [](tessel_conv_problem& p) { p.x.data = g_memory[kX] + 1; }, kArg,
       "x: the pointer is not 2-byte aligned"},
      {"null x", [](tessel_conv_problem& p) { p.x.data = nullptr; }, kArg, "x: null, but fprop reads it"},
      {"null out", [](tessel_conv_problem& p) { p.y.data = nullptr; }, kArg, "y: null, but fprop writes y"},
      {"unaligned workspace", [](tessel_conv_problem& p) { p.workspace = reinterpret_cast<void*>(std::uintptr_t(0x1010)); },
       kArg,
       "workspace: the caller's scratch must be 256-byte aligned"},
  };
  expect_refusals([] { return conv2d(2, 9, 11, 33, 65, 3, 3, 1); }, cases);
}

TEST(CApiConv, ExtentsPast32BitsAreNotSupported) {
  tessel_conv_problem p = conv2d(1, std::int64_t(1) << 31, 1, 1, 1, 1, 1, 0);
  p.bias.ndim = 0;
  Answer const r = check(p);
  EXPECT_EQ(r.code, TESSEL_STATUS_NOT_SUPPORTED) << r.reason;
  EXPECT_EQ(r.reason.rfind("h: 2147483648 is above 2^31 - 1", 0), 0u) << r.reason;
}

TEST(CApiConv, ReasonsUseTheTensorsOwnNames) {
  // The Python module's names for dgrad: dy (y), w, out (x, the written tensor).
  tessel_conv_problem p = conv2d(2, 9, 11, 33, 65, 3, 3, 1);
  p.op = TESSEL_CONV_DGRAD;
  p.bias.ndim = 0;
  p.y.name = "dy", p.x.name = "out";
  p.y.dtype = TESSEL_DTYPE_F16;
  EXPECT_EQ(check(p).reason.rfind("dy: fp16 differs from out's bf16", 0), 0u) << check(p).reason;
  p.y.dtype = TESSEL_DTYPE_BF16;
  p.x.data = nullptr;  // conv_validate's "out", in the written tensor's name
  EXPECT_EQ(check(p).reason.rfind("out: null, but dgrad writes dx", 0), 0u) << check(p).reason;
  p.x.data = g_memory[kX];
  set(&p.y, kY, TESSEL_DTYPE_BF16, {2, 9, 11, 65}, {9 * 11 * 65, -11 * 65, 65, 1});
  p.y.name = "dy";
  EXPECT_EQ(check(p).reason.rfind("dy.stride_h: -715 is negative", 0), 0u) << check(p).reason;
}

TEST(CApiConv, NullProblemAndShortReasonBuffers) {
  char why[64];
  EXPECT_EQ(tessel_conv_check(nullptr, why, sizeof why), TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(why, "problem: NULL");
  EXPECT_EQ(tessel_conv(nullptr, nullptr, why, sizeof why), TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(why, "problem: NULL");
  std::size_t bytes = 7;
  EXPECT_EQ(tessel_conv_workspace_size(nullptr, &bytes, why, sizeof why), TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(bytes, 0u);
  tessel_conv_problem p = conv2d(2, 9, 11, 33, 65, 3, 3, 1);
  EXPECT_EQ(tessel_conv_workspace_size(&p, nullptr, why, sizeof why), TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(why, "bytes: NULL");
  p.y.shape[0] = 3;
  char small[6];
  EXPECT_EQ(tessel_conv_check(&p, small, sizeof small), TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(small, "y: ba");
  char const* name = "stale";
  EXPECT_EQ(tessel_conv_can_implement(&p, &name, nullptr, 0), TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(name, nullptr);
}

TEST(CApiConv, RefusedCallsReachNoCudaAndEmptyOutputsLaunchNothing) {
  char why[256];
  tessel_conv_problem p = conv2d(2, 9, 11, 33, 65, 3, 3, 1);
  p.groups = 2;
  EXPECT_EQ(tessel_conv(&p, nullptr, why, sizeof why), TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(why).rfind("c: 33 is not divisible by groups 2", 0), 0u) << why;
  p = conv2d(0, 9, 11, 33, 65, 3, 3, 1);  // N = 0: fprop writes nothing, no pointer needed
  p.x.data = p.w.data = p.y.data = nullptr;
  p.bias.ndim = 0;
  EXPECT_EQ(check(p).code, TESSEL_STATUS_SUCCESS) << check(p).reason;
  EXPECT_EQ(tessel_conv(&p, nullptr, why, sizeof why), TESSEL_STATUS_SUCCESS) << why;
}

// ---- block-scaled fp8 (scale_mode, a_scales, b_scales) ------------------------------------------

// An e4m3 x e4m3 -> bf16 problem M x K times K x N (A row-major, B column-major: cuBLASLt's tn),
// block-scaled with packed scales: a_scales [M, ceil(K/128)] M-major, b_scales [ceil(N/128),
// ceil(K/128)] K-major.
tessel_gemm_problem block_scaled(std::int64_t m, std::int64_t n, std::int64_t k) {
  tessel_gemm_problem p;
  tessel_gemm_problem_init(&p);
  set(&p.a, 0, TESSEL_DTYPE_E4M3, {m, k});
  set(&p.b, 1, TESSEL_DTYPE_E4M3, {k, n}, {1, k});
  set(&p.d, 3, TESSEL_DTYPE_BF16, {m, n});
  std::int64_t const kb = (k + 127) / 128, nb = (n + 127) / 128;
  p.scale_mode = TESSEL_SCALE_MODE_BLOCK;
  set(&p.a_scales, 5, TESSEL_DTYPE_F32, {m, kb}, {1, m});
  set(&p.b_scales, 6, TESSEL_DTYPE_F32, {nb, kb}, {kb, 1});
  return p;
}

TEST(CApiBlockScales, VersionEightBroughtThem) {
  EXPECT_EQ(TESSEL_C_API_VERSION, 8);
  EXPECT_EQ(tessel_c_api_version(), 8);
  tessel_gemm_problem p;
  std::memset(&p, 0xff, sizeof p);
  tessel_gemm_problem_init(&p);
  EXPECT_EQ(p.scale_mode, TESSEL_SCALE_MODE_PER_TENSOR);
  EXPECT_EQ(p.a_scales.ndim, 0);
  EXPECT_EQ(p.b_scales.ndim, 0);
}

TEST(CApiBlockScales, PackedAndPaddedScalesMapToPointersAndLeadingDimensions) {
  tessel_gemm_problem p = block_scaled(200, 300, 300);  // 3 K blocks, 3 N blocks
  GemmArguments g = mapped(p);
  EXPECT_EQ(g.scale_mode, tessel::ScaleMode::block);
  EXPECT_EQ(g.a_scales, static_cast<float const*>(p.a_scales.data));
  EXPECT_EQ(g.b_scales, static_cast<float const*>(p.b_scales.data));
  EXPECT_EQ(g.ld_a_scales, 200);
  EXPECT_EQ(g.ld_b_scales, 3);
  set(&p.a_scales, 5, TESSEL_DTYPE_F32, {200, 3}, {1, 256});  // a padded M-major view
  set(&p.b_scales, 6, TESSEL_DTYPE_F32, {3, 3}, {4, 1});
  g = mapped(p);
  EXPECT_EQ(g.ld_a_scales, 256);
  EXPECT_EQ(g.ld_b_scales, 4);
  p = block_scaled(1, 100, 300);  // M = 1: a row-major [1, 3] tensor is M-major too
  set(&p.a_scales, 5, TESSEL_DTYPE_F32, {1, 3}, {3, 1});
  g = mapped(p);
  EXPECT_EQ(g.ld_a_scales, 1);
  p = block_scaled(64, 64, 100);  // one K block: any stride along it
  set(&p.a_scales, 5, TESSEL_DTYPE_F32, {64, 1}, {1, 1});
  set(&p.b_scales, 6, TESSEL_DTYPE_F32, {1, 1}, {7, 9});
  g = mapped(p);
  EXPECT_EQ(g.ld_a_scales, 64);
  EXPECT_EQ(g.ld_b_scales, 1);
  // Per-tensor scaling leaves the block fields alone.
  p = block_scaled(64, 64, 100);
  p.scale_mode = TESSEL_SCALE_MODE_PER_TENSOR;
  p.a_scales.ndim = p.b_scales.ndim = 0;
  p.a_scale = 2.0f;
  g = mapped(p);
  EXPECT_EQ(g.scale_mode, tessel::ScaleMode::per_tensor);
  EXPECT_EQ(g.a_scales, nullptr);
  EXPECT_EQ(g.a_scale, 2.0f);
}

TEST(CApiBlockScales, BatchedScalesArePackedPerBatch) {
  tessel_gemm_problem p = block_scaled(64, 256, 256);  // kb 2, nb 2
  set(&p.a, 0, TESSEL_DTYPE_E4M3, {4, 64, 256});
  set(&p.b, 1, TESSEL_DTYPE_E4M3, {4, 256, 256}, {65536, 1, 256});
  set(&p.d, 3, TESSEL_DTYPE_BF16, {4, 64, 256});
  set(&p.a_scales, 5, TESSEL_DTYPE_F32, {4, 64, 2}, {128, 1, 64});
  set(&p.b_scales, 6, TESSEL_DTYPE_F32, {4, 2, 2}, {4, 2, 1});
  GemmArguments const g = mapped(p);
  EXPECT_EQ(g.batch_count, 4);
  EXPECT_EQ(g.ld_a_scales, 64);
  EXPECT_EQ(g.ld_b_scales, 2);
  set(&p.a_scales, 5, TESSEL_DTYPE_F32, {4, 64, 2}, {256, 1, 64});  // batches not packed
  Answer r = check(p);
  EXPECT_EQ(r.code, TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.reason.rfind("a_scales: batch stride 256 is not 128", 0), 0u) << r.reason;
  set(&p.a_scales, 5, TESSEL_DTYPE_F32, {64, 2}, {1, 64});  // one batch's scales for four batches
  r = check(p);
  EXPECT_EQ(r.code, TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.reason.rfind("a_scales: has 2 dimensions; with a 3-D D it must be [4, 64, 2]", 0), 0u) << r.reason;
}

TEST(CApiBlockScales, Refusals) {
  using P = tessel_gemm_problem;
  RefusalCase<P> const cases[] = {
      {"unknown mode", [](P& p) { p.scale_mode = 7; }, TESSEL_STATUS_INVALID_ARGUMENT, "scale_mode: 7 is not a tessel_scale_mode"},
      {"scales with per-tensor mode", [](P& p) { p.scale_mode = TESSEL_SCALE_MODE_PER_TENSOR; },
       TESSEL_STATUS_INVALID_ARGUMENT, "a_scales: given, but scale_mode is per tensor"},
      {"a_scales missing", [](P& p) { p.a_scales.ndim = 0; }, TESSEL_STATUS_INVALID_ARGUMENT,
       "a_scales: missing, but scale_mode is block; it must be fp32 [200, 3]"},
      {"b_scales missing", [](P& p) { p.b_scales.ndim = 0; }, TESSEL_STATUS_INVALID_ARGUMENT,
       "b_scales: missing, but scale_mode is block; it must be fp32 [3, 3]"},
      {"fp16 scales", [](P& p) { p.b_scales.dtype = TESSEL_DTYPE_F16; }, TESSEL_STATUS_INVALID_DTYPE,
       "b_scales: fp16 is not supported; block scales are fp32"},
      {"int32 scales", [](P& p) { p.a_scales.dtype = TESSEL_DTYPE_I32; }, TESSEL_STATUS_INVALID_DTYPE,
       "a_scales: int32 is not supported"},
      {"1-D scales", [](P& p) { set(&p.a_scales, 5, TESSEL_DTYPE_F32, {600}); }, TESSEL_STATUS_INVALID_ARGUMENT,
       "a_scales: has 1 dimension; with a 2-D D it must be [200, 3]"},
      {"a_scales per 128 rows", [](P& p) { set(&p.a_scales, 5, TESSEL_DTYPE_F32, {2, 3}, {1, 2}); },
       TESSEL_STATUS_INVALID_ARGUMENT, "a_scales: shape (2, 3) is not [200, 3]"},
      {"b_scales transposed shape", [](P& p) { set(&p.b_scales, 6, TESSEL_DTYPE_F32, {3, 2}, {2, 1}); },
       TESSEL_STATUS_INVALID_ARGUMENT, "b_scales: shape (3, 2) is not [3, 3]"},
      {"a_scales K-major", [](P& p) { set(&p.a_scales, 5, TESSEL_DTYPE_F32, {200, 3}, {3, 1}); },
       TESSEL_STATUS_INVALID_ARGUMENT, "a_scales: strides (3, 1) do not make it [M, ceil(K/128)], M-major"},
      {"b_scales M-major", [](P& p) { set(&p.b_scales, 6, TESSEL_DTYPE_F32, {3, 3}, {1, 3}); },
       TESSEL_STATUS_INVALID_ARGUMENT, "b_scales: strides (1, 3) do not make it"},
      {"a_scales ld below M", [](P& p) { set(&p.a_scales, 5, TESSEL_DTYPE_F32, {200, 3}, {1, 100}); },
       TESSEL_STATUS_INVALID_ARGUMENT, "a_scales: strides (1, 100)"},
      {"negative stride", [](P& p) { set(&p.b_scales, 6, TESSEL_DTYPE_F32, {3, 3}, {-3, 1}); },
       TESSEL_STATUS_INVALID_ARGUMENT, "b_scales: stride -3 of dimension 0 is negative"},
      {"null scales", [](P& p) { p.a_scales.data = nullptr; }, TESSEL_STATUS_INVALID_ARGUMENT,
       "a_scales: data is NULL, but it has 600 elements"},
      {"bf16 operands", [](P& p) { p.a.dtype = p.b.dtype = TESSEL_DTYPE_BF16; }, TESSEL_STATUS_INVALID_ARGUMENT,
       "scale_mode: block scales fp8 operands only"},
  };
  expect_refusals([] { return block_scaled(200, 300, 300); }, cases);
  EXPECT_EQ(check(block_scaled(200, 300, 300)).code, TESSEL_STATUS_SUCCESS) << check(block_scaled(200, 300, 300)).reason;
}

TEST(CApiBlockScales, ProblemsThatReadNoOperandNeedNoScales) {
  tessel_gemm_problem p = block_scaled(64, 64, 0);  // K = 0: D = beta C, nothing scaled
  p.a_scales.ndim = p.b_scales.ndim = 0;
  EXPECT_EQ(check(p).code, TESSEL_STATUS_SUCCESS) << check(p).reason;
}

// ---- grouped GEMM ------------------------------------------------------------------------------

// A bf16 grouped problem of G groups over total_m rows: a [total_m, K], b the transposed view of
// packed [G, N, K] weights (K contiguous: b_layout nk), d [total_m, N], offsets int32 [G].
tessel_grouped_gemm_problem grouped(std::int64_t groups, std::int64_t total_m, std::int64_t n, std::int64_t k) {
  tessel_grouped_gemm_problem p;
  tessel_grouped_gemm_problem_init(&p);
  set(&p.a, 0, TESSEL_DTYPE_BF16, {total_m, k});
  set(&p.b, 1, TESSEL_DTYPE_BF16, {groups, k, n}, {n * k, 1, k});
  set(&p.d, 3, TESSEL_DTYPE_BF16, {total_m, n});
  set(&p.offsets, 4, TESSEL_DTYPE_I32, {groups});
  return p;
}

tessel::GroupedGemmArguments mapped(tessel_grouped_gemm_problem const& p) {
  return mapped_to<tessel::GroupedGemmArguments>(p);
}

TEST(CApiGrouped, InitSetsUnitAlphaAndNoTensors) {
  tessel_grouped_gemm_problem p;
  std::memset(&p, 0xff, sizeof p);
  tessel_grouped_gemm_problem_init(&p);
  EXPECT_EQ(p.alpha, 1.0f);
  EXPECT_EQ(p.beta, 0.0f);
  for (tessel_tensor const* t : {&p.a, &p.b, &p.c, &p.d, &p.offsets}) EXPECT_EQ(t->ndim, 0);
  tessel_grouped_gemm_problem_init(nullptr);  // no crash
  EXPECT_EQ(tessel_c_api_version(), TESSEL_C_API_VERSION);
}

TEST(CApiGrouped, TransposedWeightsMapToNkAndRowMajorWeightsToKn) {
  tessel_grouped_gemm_problem p = grouped(8, 1000, 512, 256);
  tessel::GroupedGemmArguments g = mapped(p);
  EXPECT_EQ(g.groups, 8);
  EXPECT_EQ(g.total_m, 1000);
  EXPECT_EQ(g.n, 512);
  EXPECT_EQ(g.k, 256);
  EXPECT_EQ(g.ab_type, tessel::DType::bf16);
  EXPECT_EQ(g.d_type, tessel::DType::bf16);
  EXPECT_EQ(g.b_layout, tessel::GroupedLayoutB::nk);
  EXPECT_EQ(g.lda, 256);
  EXPECT_EQ(g.ldb, 256);
  EXPECT_EQ(g.batch_stride_b, 512 * 256);
  EXPECT_EQ(g.ldd, 512);
  EXPECT_EQ(g.offsets, static_cast<int const*>(p.offsets.data));
  EXPECT_EQ(g.c, nullptr);
  set(&p.b, 1, TESSEL_DTYPE_BF16, {8, 256, 512});  // a packed [G, K, N] array
  g = mapped(p);
  EXPECT_EQ(g.b_layout, tessel::GroupedLayoutB::kn);
  EXPECT_EQ(g.ldb, 512);
  EXPECT_EQ(g.batch_stride_b, 256 * 512);
  // Padded rows and groups, fp32 D with C (beta), alpha.
  set(&p.a, 0, TESSEL_DTYPE_BF16, {1000, 256}, {264, 1});
  set(&p.b, 1, TESSEL_DTYPE_BF16, {8, 256, 512}, {300000, 520, 1});
  set(&p.d, 3, TESSEL_DTYPE_F32, {1000, 512}, {513, 1});
  set(&p.c, 2, TESSEL_DTYPE_F32, {1000, 512}, {600, 1});
  p.alpha = 0.5f, p.beta = 2.0f;
  g = mapped(p);
  EXPECT_EQ(g.lda, 264);
  EXPECT_EQ(g.ldb, 520);
  EXPECT_EQ(g.batch_stride_b, 300000);
  EXPECT_EQ(g.d_type, tessel::DType::f32);
  EXPECT_EQ(g.ldd, 513);
  EXPECT_EQ(g.ldc, 600);
  EXPECT_EQ(g.c, p.c.data);
  EXPECT_EQ(g.alpha, 0.5f);
  EXPECT_EQ(g.beta, 2.0f);
}

TEST(CApiGrouped, OneGroupAndExtentOneDimensionsTakeAnyStride) {
  tessel_grouped_gemm_problem p = grouped(1, 1, 64, 64);
  set(&p.a, 0, TESSEL_DTYPE_BF16, {1, 64}, {7, 1});  // one row: its row stride forms no address
  set(&p.b, 1, TESSEL_DTYPE_BF16, {1, 64, 64}, {0, 1, 64});  // one group: any group stride
  tessel::GroupedGemmArguments const g = mapped(p);
  EXPECT_EQ(g.lda, 64);
  EXPECT_EQ(g.groups, 1);
  EXPECT_EQ(g.b_layout, tessel::GroupedLayoutB::nk);
}

TEST(CApiGrouped, EmptyProblemsNeedNoOperandPointers) {
  tessel_grouped_gemm_problem p = grouped(4, 0, 64, 64);  // no rows: nothing written or read
  p.a.data = p.d.data = nullptr;
  EXPECT_EQ(check(p).code, TESSEL_STATUS_SUCCESS) << check(p).reason;
  char why[256];
  EXPECT_EQ(tessel_grouped_gemm(&p, nullptr, why, sizeof why), TESSEL_STATUS_SUCCESS) << why;
  p = grouped(4, 128, 64, 0);  // K = 0: D = beta C, a and b empty
  p.a.data = p.b.data = nullptr;
  EXPECT_EQ(check(p).code, TESSEL_STATUS_SUCCESS) << check(p).reason;
}

TEST(CApiGrouped, RefusalsNameTheTensorAndCarryTheirCode) {
  using P = tessel_grouped_gemm_problem;
  RefusalCase<P> const cases[] = {
      {"a missing", [](P& p) { p.a.ndim = 0; }, TESSEL_STATUS_INVALID_ARGUMENT, "a: missing (ndim 0)"},
      {"offsets missing", [](P& p) { p.offsets.ndim = 0; }, TESSEL_STATUS_INVALID_ARGUMENT, "offsets: missing (ndim 0)"},
      {"bad ndim", [](P& p) { p.d.ndim = -1; }, TESSEL_STATUS_INVALID_ARGUMENT, "d: ndim -1 is outside 0..8"},
      {"3-D a", [](P& p) { set(&p.a, 0, TESSEL_DTYPE_BF16, {1, 1000, 256}); }, TESSEL_STATUS_INVALID_ARGUMENT,
       "a: has 3 dimensions; it must be 2-D [total_m, K]"},
      {"2-D b", [](P& p) { set(&p.b, 1, TESSEL_DTYPE_BF16, {256, 512}); }, TESSEL_STATUS_INVALID_ARGUMENT,
       "b: has 2 dimensions; it must be 3-D [G, K, N]"},
      {"2-D offsets", [](P& p) { set(&p.offsets, 4, TESSEL_DTYPE_I32, {8, 1}); }, TESSEL_STATUS_INVALID_ARGUMENT,
       "offsets: has 2 dimensions; it must be 1-D [G]"},
      {"negative extent", [](P& p) { set(&p.a, 0, TESSEL_DTYPE_BF16, {-1, 256}); }, TESSEL_STATUS_INVALID_ARGUMENT,
       "a: extent -1 of dimension 0 is negative"},
      {"fp32 inputs", [](P& p) { p.a.dtype = p.b.dtype = TESSEL_DTYPE_F32; }, TESSEL_STATUS_INVALID_DTYPE,
       "a: fp32 is not supported; grouped GEMM takes bf16 or fp16"},
      {"fp8 inputs", [](P& p) { p.a.dtype = p.b.dtype = TESSEL_DTYPE_E4M3; }, TESSEL_STATUS_INVALID_DTYPE,
       "a: e4m3 is not supported"},
      {"mixed inputs", [](P& p) { p.b.dtype = TESSEL_DTYPE_F16; }, TESSEL_STATUS_INVALID_DTYPE,
       "b: dtype fp16 differs from a's bf16"},
      {"fp16 d from bf16", [](P& p) { p.d.dtype = TESSEL_DTYPE_F16; }, TESSEL_STATUS_INVALID_DTYPE,
       "d: dtype fp16 with bf16 inputs"},
      {"c of another dtype", [](P& p) { set(&p.c, 2, TESSEL_DTYPE_F32, {1000, 512}); p.beta = 1; },
       TESSEL_STATUS_INVALID_DTYPE, "c: dtype fp32 differs from d's bf16"},
      {"fp32 offsets", [](P& p) { p.offsets.dtype = TESSEL_DTYPE_F32; }, TESSEL_STATUS_INVALID_DTYPE,
       "offsets: dtype fp32 is not int32"},
      {"unknown dtype", [](P& p) { p.offsets.dtype = 42; }, TESSEL_STATUS_INVALID_DTYPE,
       "offsets: dtype 42 is not a tessel_dtype"},
      {"no groups", [](P& p) { set(&p.b, 1, TESSEL_DTYPE_BF16, {0, 256, 512}); set(&p.offsets, 4, TESSEL_DTYPE_I32, {0}); },
       TESSEL_STATUS_INVALID_ARGUMENT, "b: has 0 groups"},
      {"K mismatch", [](P& p) { set(&p.b, 1, TESSEL_DTYPE_BF16, {8, 128, 512}); }, TESSEL_STATUS_INVALID_ARGUMENT,
       "b: is (8, 128, 512), but a has 256 columns"},
      {"offsets count", [](P& p) { set(&p.offsets, 4, TESSEL_DTYPE_I32, {9}); }, TESSEL_STATUS_INVALID_ARGUMENT,
       "offsets: has 9 values, but b has 8 groups"},
      {"d shape", [](P& p) { set(&p.d, 3, TESSEL_DTYPE_BF16, {1000, 256}); }, TESSEL_STATUS_INVALID_ARGUMENT,
       "d: is (1000, 256), but the result is [total_m, N] = (1000, 512)"},
      {"c shape", [](P& p) { set(&p.c, 2, TESSEL_DTYPE_BF16, {999, 512}); p.beta = 1; }, TESSEL_STATUS_INVALID_ARGUMENT,
       "c: is (999, 512), but d is (1000, 512)"},
      {"column-major a", [](P& p) { set(&p.a, 0, TESSEL_DTYPE_BF16, {1000, 256}, {1, 1000}); },
       TESSEL_STATUS_INVALID_ARGUMENT, "a: its last stride is 1000"},
      {"column-major d", [](P& p) { set(&p.d, 3, TESSEL_DTYPE_BF16, {1000, 512}, {1, 1000}); },
       TESSEL_STATUS_INVALID_ARGUMENT, "d: its last stride is 1000"},
      {"b neither order", [](P& p) { set(&p.b, 1, TESSEL_DTYPE_BF16, {8, 256, 512}, {262144, 1024, 2}); },
       TESSEL_STATUS_INVALID_ARGUMENT, "b: neither of its last two strides is 1"},
      {"negative stride", [](P& p) { set(&p.a, 0, TESSEL_DTYPE_BF16, {1000, 256}, {-256, 1}); },
       TESSEL_STATUS_INVALID_ARGUMENT, "a: stride -256 of dimension 0 is negative"},
      {"strided offsets", [](P& p) { set(&p.offsets, 4, TESSEL_DTYPE_I32, {8}, {2}); }, TESSEL_STATUS_INVALID_ARGUMENT,
       "offsets: stride 2; the offsets must be contiguous"},
      {"beta without c", [](P& p) { p.beta = 1; }, TESSEL_STATUS_INVALID_ARGUMENT, "c: beta is 1, but no C was given"},
      {"null a", [](P& p) { p.a.data = nullptr; }, TESSEL_STATUS_INVALID_ARGUMENT, "a: data is NULL, but it has 256000 elements"},
      {"null offsets", [](P& p) { p.offsets.data = nullptr; }, TESSEL_STATUS_INVALID_ARGUMENT,
       "offsets: data is NULL, but it has 8 elements"},
      {"a's rows overlap", [](P& p) { set(&p.a, 0, TESSEL_DTYPE_BF16, {1000, 256}, {128, 1}); },
       TESSEL_STATUS_INVALID_ARGUMENT, "a.row_stride: 128 is below the minimum 256"},
      {"groups overlap", [](P& p) { set(&p.b, 1, TESSEL_DTYPE_BF16, {8, 256, 512}, {1024, 512, 1}); },
       TESSEL_STATUS_INVALID_ARGUMENT, "b.group_stride: 1024 is below"},
      {"too many groups", [](P& p) { set(&p.b, 1, TESSEL_DTYPE_BF16, {1025, 256, 512}); set(&p.offsets, 4, TESSEL_DTYPE_I32, {1025}); },
       TESSEL_STATUS_NOT_SUPPORTED, "b: has 1025 groups, above the 1024 one call takes"},
      {"unaligned K for TMA", [](P& p) { set(&p.a, 0, TESSEL_DTYPE_BF16, {1000, 100}); set(&p.b, 1, TESSEL_DTYPE_BF16, {8, 100, 512}, {51200, 1, 100}); },
       TESSEL_STATUS_NOT_SUPPORTED, "a.row_stride: 100 elements (200 bytes) is not a multiple of 16 bytes"},
      {"unaligned N for kn", [](P& p) { set(&p.b, 1, TESSEL_DTYPE_BF16, {8, 256, 500}); set(&p.d, 3, TESSEL_DTYPE_BF16, {1000, 500}); },
       TESSEL_STATUS_NOT_SUPPORTED, "b.leading_stride: 500 elements"},
  };
  expect_refusals([] { return grouped(8, 1000, 512, 256); }, cases);
}

TEST(CApiGrouped, ReasonsUseTheTensorsOwnNamesAndNullProblemsAreRefused) {
  tessel_grouped_gemm_problem p = grouped(8, 1000, 512, 256);
  p.offsets.name = "offs";
  p.offsets.dtype = TESSEL_DTYPE_F32;
  Answer r = check(p);
  EXPECT_EQ(r.reason.rfind("offs: dtype fp32 is not int32", 0), 0u) << r.reason;
  p = grouped(8, 1000, 512, 256);
  p.a.name = "x";
  set(&p.a, 0, TESSEL_DTYPE_BF16, {1000, 256}, {100, 1});
  p.a.name = "x";
  r = check(p);
  EXPECT_EQ(r.reason.rfind("x.row_stride: 100 is below the minimum 256", 0), 0u) << r.reason;
  char why[64];
  EXPECT_EQ(tessel_grouped_gemm_check(nullptr, why, sizeof why), TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(why, "problem: NULL");
  EXPECT_EQ(tessel_grouped_gemm_can_implement(nullptr, why, sizeof why), TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(tessel_grouped_gemm(nullptr, nullptr, why, sizeof why), TESSEL_STATUS_INVALID_ARGUMENT);
  char small[6];
  p = grouped(8, 1000, 512, 256);
  p.beta = 1;
  EXPECT_EQ(tessel_grouped_gemm_check(&p, small, sizeof small), TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(small, "c: be");
  EXPECT_EQ(tessel_grouped_gemm_check(&p, nullptr, 0), TESSEL_STATUS_INVALID_ARGUMENT);
}

TEST(CApiGrouped, RefusedCallsReachNoCuda) {
  char why[256];
  tessel_grouped_gemm_problem p = grouped(8, 1000, 512, 256);
  p.offsets.ndim = 0;
  EXPECT_EQ(tessel_grouped_gemm(&p, nullptr, why, sizeof why), TESSEL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(why).rfind("offsets: missing", 0), 0u) << why;
  EXPECT_EQ(tessel_grouped_gemm_can_implement(&p, why, sizeof why), TESSEL_STATUS_INVALID_ARGUMENT);
}

}  // namespace
