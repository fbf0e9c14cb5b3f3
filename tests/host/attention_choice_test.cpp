// The attention forward's automatic kernel choice (attention_kernel_name_for), without a GPU: on
// sm_90 the TMA + wgmma kernels where TMA can load Q, K and V and store O -- without a mask the persistent
// kernels up to 1024 keys (D 64) and below 2048 (D 128); D 64's 192-row query tiles, D 128's
// 192-key blocks from 2048 keys without a sliding window (causal or not) and 128-key blocks below
// or with one -- and the sm_80 kernels everywhere else. Then the backward's
// (attention_backward_kernel_name_for): on sm_90 the sm_90a kernel at head dims 64 and 128 for
// fixed lengths that TMA can load, in the deterministic mode their ordered forms, else sm_80's.
#include <tessel/attention/attention.hpp>
#include <tessel/attention/attention_backward.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

using namespace tessel;

namespace {

alignas(16) unsigned char g_storage[64];  // behind the pointers: the choice never dereferences them

AttentionArguments problem(std::int64_t sq, int d, DType t = DType::bf16, std::int64_t sk = -1) {
  AttentionArguments a = make_packed_attention(2, sq, sk < 0 ? sq : sk, 4, 4, d, 0, t);
  a.q.ptr = a.k.ptr = a.v.ptr = g_storage;
  a.o = g_storage;
  return a;
}

std::string choice(AttentionArguments const& a, int cc) {
  char const* name = nullptr;
  Status const s = attention_kernel_name_for(a, cc, &name);
  EXPECT_TRUE(s.ok()) << s.reason;
  return name ? name : "";
}

// Why the choice on sm_90 refuses a call that names a kernel unable to take it (not_supported).
template <class Arguments>
std::string refusal(Status (*name_for)(Arguments const&, int, char const**), Arguments const& a) {
  char const* name = nullptr;
  Status const s = name_for(a, 90, &name);
  EXPECT_EQ(s.code, StatusCode::not_supported);
  return s.reason;
}

TEST(AttentionChoice, HeadDim64PersistentUpTo1024KeysWithoutAMask) {
  for (std::int64_t sk : {1, 512, 1024})
    EXPECT_EQ(choice(problem(1024, 64, DType::bf16, sk), 90), "sm90_attention_bf16_d64_persistent") << sk;
  EXPECT_EQ(choice(problem(8192, 64, DType::bf16, 1024), 90), "sm90_attention_bf16_d64_persistent");  // (the keys decide)
  EXPECT_EQ(choice(problem(512, 64, DType::f16), 90), "sm90_attention_f16_d64_persistent");
  for (std::int64_t sk : {1025, 1536, 4096})
    EXPECT_EQ(choice(problem(1024, 64, DType::bf16, sk), 90), "sm90_attention_bf16_d64") << sk;
  EXPECT_EQ(choice(problem(16384, 64, DType::f16), 90), "sm90_attention_f16_d64");
  AttentionArguments causal = problem(1024, 64, DType::f16);
  causal.causal = true;
  EXPECT_EQ(choice(causal, 90), "sm90_attention_f16_d64");
  AttentionArguments window = problem(512, 64);
  window.window_left = 128;
  EXPECT_EQ(choice(window, 90), "sm90_attention_bf16_d64");
  AttentionArguments softcap = problem(512, 64);  // a softcap is no mask
  softcap.softcap = 30.0f;
  EXPECT_EQ(choice(softcap, 90), "sm90_attention_bf16_d64_persistent");
}

TEST(AttentionChoice, HeadDim128TakesTheKeyTileTheKeysFill) {
  EXPECT_EQ(choice(problem(4096, 128), 90), "sm90_attention_bf16_d128");
  EXPECT_EQ(choice(problem(2048, 128), 90), "sm90_attention_bf16_d128");
  EXPECT_EQ(choice(problem(2047, 128), 90), "sm90_attention_bf16_d128_k128_persistent");
  EXPECT_EQ(choice(problem(1024, 128), 90), "sm90_attention_bf16_d128_k128_persistent");
  EXPECT_EQ(choice(problem(1, 128, DType::bf16, 8192), 90), "sm90_attention_bf16_d128");  // decode: one query, long keys
  EXPECT_EQ(choice(problem(8192, 128, DType::bf16, 1024), 90), "sm90_attention_bf16_d128_k128_persistent");
  EXPECT_EQ(choice(problem(1024, 128, DType::f16), 90), "sm90_attention_f16_d128_k128_persistent");
  AttentionArguments causal = problem(8192, 128);
  causal.causal = true;
  EXPECT_EQ(choice(causal, 90), "sm90_attention_bf16_d128");
  AttentionArguments short_causal = problem(2047, 128);
  short_causal.causal = true;
  EXPECT_EQ(choice(short_causal, 90), "sm90_attention_bf16_d128_k128");
  AttentionArguments short_window = problem(1024, 128);
  short_window.window_right = 0;
  EXPECT_EQ(choice(short_window, 90), "sm90_attention_bf16_d128_k128");
  AttentionArguments window = problem(8192, 128);
  window.window_left = 1024;
  EXPECT_EQ(choice(window, 90), "sm90_attention_bf16_d128_k128");
  window.window_left = -1, window.window_right = 0;
  EXPECT_EQ(choice(window, 90), "sm90_attention_bf16_d128_k128");
}

TEST(AttentionChoice, OtherHeadDimsHaveOneSm90KernelAtEveryLength) {
  for (std::int64_t sq : {1, 1024, 4096}) {
    EXPECT_EQ(choice(problem(sq, 256), 90), "sm90_attention_bf16_d256");
    EXPECT_EQ(choice(problem(sq, 192), 90), "sm90_attention_bf16_d192");
  }
}

TEST(AttentionChoice, Sm80KernelsOffHopperOrWhereTmaCannotLoad) {
  EXPECT_EQ(choice(problem(4096, 64), 80), "sm80_attention_bf16_d64");
  EXPECT_EQ(choice(problem(4096, 64), 0), "sm80_attention_bf16_d64");
  EXPECT_EQ(choice(problem(4096, 64), 100), "sm80_attention_bf16_d64");  // the sm_90a kernels run on sm_90 only
  AttentionArguments packed = problem(4096, 64);
  packed.cu_seqlens_q = packed.cu_seqlens_k = reinterpret_cast<std::int32_t const*>(g_storage + 32);
  EXPECT_EQ(choice(packed, 90), "sm80_attention_bf16_d64");  // variable length: no tensor map holds the extents
  EXPECT_EQ(choice(problem(4096, 96), 90), "sm80_attention_bf16_d96");
}

TEST(AttentionChoice, Sm80KernelsWhereATensorMapCannotDescribeO) {
  // The sm_90a kernels store O by TMA: a zero stride over more than one head or batch goes to sm_80.
  AttentionArguments a = problem(4096, 128);
  a.o_head_stride = 0;
  EXPECT_EQ(choice(a, 90), "sm80_attention_bf16_d128");
  a = problem(1024, 64);
  a.o_batch_stride = 0;
  EXPECT_EQ(choice(a, 90), "sm80_attention_bf16_d64");
  a.kernel = "sm90_attention_bf16_d64";
  EXPECT_EQ(refusal(attention_kernel_name_for, a),
            "kernel: sm90_attention_bf16_d64 loads and stores by TMA: it takes fixed-length batches whose Q, K, V and "
            "O are 16-byte aligned with strides of whole 16-byte units, none zero over more than one row, head or batch");
}

TEST(AttentionChoice, ANamedKernelIsTakenAtAnyLength) {
  AttentionArguments a = problem(4096, 64);
  a.kernel = "sm90_attention_bf16_d64";
  EXPECT_EQ(choice(a, 90), "sm90_attention_bf16_d64");
  a = problem(4096, 128);
  a.kernel = "sm90_attention_bf16_d128_k128";
  EXPECT_EQ(choice(a, 90), "sm90_attention_bf16_d128_k128");
  // The persistent kernels by name under a mask too, where the choice would not take them.
  a = problem(1024, 128);
  a.causal = true;
  a.kernel = "sm90_attention_bf16_d128_k128_persistent";
  EXPECT_EQ(choice(a, 90), "sm90_attention_bf16_d128_k128_persistent");
  a = problem(512, 64, DType::f16);
  a.kernel = "sm90_attention_f16_d64_persistent";
  EXPECT_EQ(choice(a, 90), "sm90_attention_f16_d64_persistent");
}

AttentionBackwardArguments backward(std::int64_t sq, int d, DType t = DType::bf16, bool deterministic = false) {
  AttentionArguments a = problem(sq, d, t);
  a.lse = reinterpret_cast<float*>(g_storage);
  AttentionBackwardArguments b = make_packed_attention_backward(a);
  b.d_o.ptr = b.dq.ptr = b.dk.ptr = b.dv.ptr = g_storage;
  b.deterministic = deterministic;
  return b;
}

std::string backward_choice(AttentionBackwardArguments const& b, int cc) {
  char const* name = nullptr;
  Status const s = attention_backward_kernel_name_for(b, cc, &name);
  EXPECT_TRUE(s.ok()) << s.reason;
  return name ? name : "";
}

TEST(AttentionBackwardChoice, Sm90KernelsForFixedLengthsAtHeadDims64128And256) {
  EXPECT_EQ(backward_choice(backward(4096, 64), 90), "sm90_attention_bwd_bf16_d64");
  EXPECT_EQ(backward_choice(backward(4096, 128), 90), "sm90_attention_bwd_bf16_d128");
  EXPECT_EQ(backward_choice(backward(4096, 256), 90), "sm90_attention_bwd_bf16_d256");
  EXPECT_EQ(backward_choice(backward(77, 256, DType::f16), 90), "sm90_attention_bwd_f16_d256");
  EXPECT_EQ(backward_choice(backward(4096, 256), 80), "sm80_attention_bwd_bf16_d256");
}

TEST(AttentionBackwardChoice, ASoftcapAtHeadDim256TakesTheKernelThatFormsBothScoreTilesInEachConsumer) {
  AttentionBackwardArguments b = backward(4096, 256);
  b.problem.softcap = 30.0f;
  EXPECT_EQ(backward_choice(b, 90), "sm90_attention_bwd_bf16_d256_softcap");
  b.kernel = "sm90_attention_bwd_bf16_d256";
  char const* name = nullptr;
  Status const s = attention_backward_kernel_name_for(b, 90, &name);
  EXPECT_EQ(s.code, StatusCode::not_supported);
  EXPECT_EQ(s.reason, "kernel: sm90_attention_bwd_bf16_d256 does not take a softcap (its consumers share the score "
                      "tiles; the _d256_softcap kernel takes one)");
  b.kernel = "sm90_attention_bwd_bf16_d256_softcap";
  b.problem.softcap = 0.0f;
  EXPECT_EQ(backward_choice(b, 90), "sm90_attention_bwd_bf16_d256_softcap");  // (by name it takes any problem)
  EXPECT_EQ(backward_choice(backward(333, 128, DType::f16), 90), "sm90_attention_bwd_f16_d128");
  AttentionBackwardArguments causal = backward(1000, 128);
  causal.problem.causal = true;
  EXPECT_EQ(backward_choice(causal, 90), "sm90_attention_bwd_bf16_d128");
}

TEST(AttentionBackwardChoice, TheDeterministicModeTakesTheOrderedKernelsAtHeadDims64And128) {
  EXPECT_EQ(backward_choice(backward(4096, 64, DType::bf16, true), 90), "sm90_attention_bwd_bf16_d64_deterministic");
  EXPECT_EQ(backward_choice(backward(4096, 128, DType::bf16, true), 90), "sm90_attention_bwd_bf16_d128_deterministic");
  EXPECT_EQ(backward_choice(backward(4096, 128, DType::f16, true), 90), "sm90_attention_bwd_f16_d128_deterministic");
  EXPECT_EQ(backward_choice(backward(4096, 128, DType::bf16, true), 80), "sm80_attention_bwd_bf16_d128");
  EXPECT_EQ(backward_choice(backward(4096, 256, DType::bf16, true), 90), "sm80_attention_bwd_bf16_d256");
}

TEST(AttentionBackwardChoice, Sm80KernelsOffHopperForVariableLengthsAndOtherHeadDims) {
  EXPECT_EQ(backward_choice(backward(4096, 128), 80), "sm80_attention_bwd_bf16_d128");
  EXPECT_EQ(backward_choice(backward(4096, 128), 0), "sm80_attention_bwd_bf16_d128");
  EXPECT_EQ(backward_choice(backward(4096, 128), 100), "sm80_attention_bwd_bf16_d128");  // sm_90a images run on sm_90 only
  EXPECT_EQ(backward_choice(backward(4096, 96), 90), "sm80_attention_bwd_bf16_d96");
  for (bool det : {false, true}) {
    AttentionBackwardArguments packed = backward(4096, 128, DType::bf16, det);
    packed.problem.cu_seqlens_q = packed.problem.cu_seqlens_k = reinterpret_cast<std::int32_t const*>(g_storage + 32);
    EXPECT_EQ(backward_choice(packed, 90), "sm80_attention_bwd_bf16_d128") << det;
  }
}

TEST(AttentionBackwardChoice, Sm80KernelsWhereATensorMapCannotDescribeAGradient) {
  // The sm_90a kernel stores dK and dV by TMA: a zero stride over more than one head goes to sm_80.
  AttentionBackwardArguments b = backward(4096, 128);
  b.dk.head_stride = 0;
  EXPECT_EQ(backward_choice(b, 90), "sm80_attention_bwd_bf16_d128");
  b = backward(4096, 64);
  b.dv.batch_stride = 0;
  EXPECT_EQ(backward_choice(b, 90), "sm80_attention_bwd_bf16_d64");
  b.kernel = "sm90_attention_bwd_bf16_d64";
  EXPECT_EQ(refusal(attention_backward_kernel_name_for, b),
            "kernel: sm90_attention_bwd_bf16_d64 does not take Q, K, V, dO, dK or dV with a zero stride (TMA's tensor "
            "maps take none)");
}

TEST(AttentionBackwardChoice, ANamedKernelMustTakeTheMode) {
  AttentionBackwardArguments b = backward(4096, 128, DType::bf16, true);
  b.kernel = "sm90_attention_bwd_bf16_d128";
  char const* name = nullptr;
  Status s = attention_backward_kernel_name_for(b, 90, &name);
  EXPECT_EQ(s.code, StatusCode::not_supported);
  EXPECT_EQ(s.reason, "kernel: sm90_attention_bwd_bf16_d128 does not take the deterministic mode");
  b.deterministic = false;
  b.kernel = "sm90_attention_bwd_bf16_d128_deterministic";
  s = attention_backward_kernel_name_for(b, 90, &name);
  EXPECT_EQ(s.code, StatusCode::not_supported);
  EXPECT_EQ(s.reason, "kernel: sm90_attention_bwd_bf16_d128_deterministic does not take the default mode (it is the "
                      "deterministic mode's kernel)");
  b.kernel = "sm80_attention_bwd_bf16_d128";  // the sm_80 kernels take both modes
  EXPECT_EQ(backward_choice(b, 90), "sm80_attention_bwd_bf16_d128");
  b.deterministic = true;
  EXPECT_EQ(backward_choice(b, 90), "sm80_attention_bwd_bf16_d128");
}

}  // namespace
