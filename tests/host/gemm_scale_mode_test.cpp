// Block-scaled fp8's argument rules (GemmArguments::scale_mode, tessel/gemm/device/gemm_validate.hpp)
// and its scale layouts (gemm_arguments.hpp), checked without a GPU: every refusal starts with the
// argument's name and states the rule; what is accepted is.
#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/gemm/device/gemm_validate.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

using namespace tessel;

namespace {

float g_scales[4];  // dummy scale tensors (validation never reads them)

// A valid block-scaled e4m3 problem, "tn" with a column-major D (cuBLASLt's fp8 layout), K with a
// partial last block.
GemmArguments block_scaled(std::int64_t m = 300, std::int64_t n = 200, std::int64_t k = 1000) {
  GemmArguments g = make_packed_gemm(m, n, k, 1, DType::e4m3, DType::bf16, MatrixOrder::row_major, MatrixOrder::col_major,
                                     MatrixOrder::col_major);
  static char dummy[16];
  g.a = g.b = g.c = dummy;
  g.d = dummy;
  g.scale_mode = ScaleMode::block;
  g.a_scales = g.b_scales = g_scales;
  return g;
}

void expect_refused(GemmArguments const& g, std::string const& arg, std::string const& rule_words) {
  Status const s = gemm_validate(g);
  ASSERT_FALSE(s.ok()) << "expected a refusal naming " << arg;
  EXPECT_EQ(s.code, StatusCode::invalid_argument);
  EXPECT_EQ(s.reason.rfind(arg + ":", 0), 0u) << "reason must start with '" << arg << ":', got: " << s.reason;
  EXPECT_NE(s.reason.find(rule_words), std::string::npos) << "reason should say '" << rule_words << "': " << s.reason;
}

TEST(GemmScaleMode, BlockScaledFp8IsAccepted) {
  EXPECT_TRUE(gemm_validate(block_scaled()).ok()) << gemm_validate(block_scaled()).reason;
  GemmArguments g = block_scaled(1, 1, 1);  // one partial block each way
  EXPECT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
  g = block_scaled();
  g.b_type = DType::e5m2;  // a mixed pair
  EXPECT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
  g = block_scaled();
  g.ld_a_scales = 304, g.ld_b_scales = 8;  // padded scale tensors
  EXPECT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
  g = block_scaled();
  g.a_scale = 2.0f, g.b_scale = 0.5f;  // per-tensor factors still multiply
  EXPECT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
}

TEST(GemmScaleMode, RefusesBlockScalingOfNonFp8Operands) {
  GemmArguments g = block_scaled();
  g.a_type = g.b_type = DType::bf16;
  expect_refused(g, "scale_mode", "fp8 operands only");
  EXPECT_NE(gemm_validate(g).reason.find("a_type is bf16"), std::string::npos) << gemm_validate(g).reason;
}

TEST(GemmScaleMode, RefusesMissingScaleTensorsWhereAAndBAreRead) {
  GemmArguments g = block_scaled();
  g.a_scales = nullptr;
  expect_refused(g, "a_scales", "A is read");
  g = block_scaled();
  g.b_scales = nullptr;
  expect_refused(g, "b_scales", "B is read");
  // Nothing read: K = 0 (D = beta * C), alpha = 0, or an empty D need no scales.
  for (auto edit : {+[](GemmArguments& x) { x.k = 0; }, +[](GemmArguments& x) { x.alpha = 0.0f; },
                    +[](GemmArguments& x) { x.m = 0; }}) {
    g = block_scaled();
    g.a_scales = g.b_scales = nullptr;
    edit(g);
    EXPECT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
  }
}

TEST(GemmScaleMode, RefusesScaleLeadingDimensionsBelowTheirMinimum) {
  GemmArguments g = block_scaled(300, 200, 1000);
  g.ld_a_scales = 299;
  expect_refused(g, "ld_a_scales", "below M = 300");
  g = block_scaled(300, 200, 1000);
  g.ld_b_scales = 7;  // ceil(1000 / 128) = 8
  expect_refused(g, "ld_b_scales", "below ceil(K / 128) = 8");
  g = block_scaled();
  g.ld_a_scales = -1;
  expect_refused(g, "ld_a_scales", "below M");
}

TEST(GemmScaleMode, RefusesUnalignedScalesAndScalesWithoutBlockMode) {
  GemmArguments g = block_scaled();
  g.a_scales = reinterpret_cast<float const*>(reinterpret_cast<char const*>(g_scales) + 2);
  expect_refused(g, "a_scales", "4-byte");
  g = block_scaled();
  g.scale_mode = ScaleMode::per_tensor;
  expect_refused(g, "a_scales", "scale_mode is per_tensor");
  g.a_scales = nullptr;
  expect_refused(g, "b_scales", "scale_mode is per_tensor");
  g.b_scales = nullptr;
  EXPECT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
  g = block_scaled();
  g.scale_mode = static_cast<ScaleMode>(7);
  expect_refused(g, "scale_mode", "not one of per_tensor, block");
}

TEST(GemmScaleMode, ScaleLayoutsAreCuBlasLtsAndPackedByDefault) {
  GemmArguments g = block_scaled(300, 200, 1000);
  EXPECT_EQ(gemm_scale_blocks(1000), 8);
  EXPECT_EQ(gemm_scale_blocks(1024), 8);
  EXPECT_EQ(gemm_scale_blocks(1025), 9);
  EXPECT_EQ(gemm_ld_a_scales(g), 300);  // M-major: (i, kb) at kb * 300 + i
  EXPECT_EQ(gemm_ld_b_scales(g), 8);    // K-major: (nb, kb) at nb * 8 + kb
  g.ld_a_scales = 304, g.ld_b_scales = 12;
  EXPECT_EQ(gemm_ld_a_scales(g), 304);
  EXPECT_EQ(gemm_ld_b_scales(g), 12);
  EXPECT_STREQ(to_string(ScaleMode::block), "block");
  EXPECT_STREQ(to_string(ScaleMode::per_tensor), "per_tensor");
}

}  // namespace
