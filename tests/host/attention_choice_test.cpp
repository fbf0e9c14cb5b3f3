// The attention forward's automatic kernel choice (attention_kernel_name_for), without a GPU: on
// sm_90 the TMA + wgmma kernels where TMA can load the tensors, D 64's 192-row query tiles from 1536
// query rows and its 128-row tiles below, the sm_80 kernels everywhere else.
#include <tessel/attention/attention.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

using namespace tessel;

namespace {

alignas(16) unsigned char g_storage[64];  // behind the pointers: the choice never dereferences them

AttentionArguments problem(std::int64_t sq, int d, DType t = DType::bf16) {
  AttentionArguments a = make_packed_attention(2, sq, sq, 4, 4, d, 0, t);
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

TEST(AttentionChoice, HeadDim64TakesTheQueryTileItsLengthFills) {
  EXPECT_EQ(choice(problem(4096, 64), 90), "sm90_attention_bf16_d64");
  EXPECT_EQ(choice(problem(1536, 64), 90), "sm90_attention_bf16_d64");
  EXPECT_EQ(choice(problem(1535, 64), 90), "sm90_attention_bf16_d64_q128");
  EXPECT_EQ(choice(problem(1024, 64), 90), "sm90_attention_bf16_d64_q128");
  EXPECT_EQ(choice(problem(1, 64), 90), "sm90_attention_bf16_d64_q128");
  EXPECT_EQ(choice(problem(16384, 64, DType::f16), 90), "sm90_attention_f16_d64");
  EXPECT_EQ(choice(problem(512, 64, DType::f16), 90), "sm90_attention_f16_d64_q128");
}

TEST(AttentionChoice, OtherHeadDimsHaveOneSm90KernelAtEveryLength) {
  for (std::int64_t sq : {1, 1024, 4096}) {
    EXPECT_EQ(choice(problem(sq, 128), 90), "sm90_attention_bf16_d128");
    EXPECT_EQ(choice(problem(sq, 256), 90), "sm90_attention_bf16_d256");
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

TEST(AttentionChoice, ANamedKernelIsTakenAtAnyLength) {
  AttentionArguments a = problem(4096, 64);
  a.kernel = "sm90_attention_bf16_d64_q128";
  EXPECT_EQ(choice(a, 90), "sm90_attention_bf16_d64_q128");
  a = problem(128, 64);
  a.kernel = "sm90_attention_bf16_d64";
  EXPECT_EQ(choice(a, 90), "sm90_attention_bf16_d64");
}

}  // namespace
