// The GEMM host API's argument rules (tessel/gemm/device/gemm_validate.hpp), checked without a
// GPU: every refusal, each reason starting with the argument's name; the no-op and K = 0 rules;
// the packed-problem helper; fp16/bf16 conversions and the reference's judge.
#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/gemm/device/gemm_validate.hpp>
#include <tessel/epilogue/activation.hpp>
#include <tessel/reference/gemm_check.hpp>
#include <tessel/reference/gemm_host.hpp>
#include <tessel/numeric/float8.hpp>
#include <tessel/reference/numeric.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

using namespace tessel;

namespace {

// A valid problem with non-null dummy pointers (never dereferenced: validation only).
GemmArguments valid(std::int64_t m = 17, std::int64_t n = 33, std::int64_t k = 65) {
  GemmArguments g = make_packed_gemm(m, n, k, 1, DType::f32, DType::f32, MatrixOrder::row_major,
                                     MatrixOrder::col_major, MatrixOrder::row_major);
  static float dummy[4];
  g.a = g.b = g.c = dummy;
  g.d = dummy;
  return g;
}

void expect_refused(GemmArguments const& g, std::string const& arg, std::string const& rule_words) {
  Status s = gemm_validate(g);
  ASSERT_FALSE(s.ok()) << "expected a refusal naming " << arg;
  EXPECT_EQ(s.code, StatusCode::invalid_argument);
  EXPECT_EQ(s.reason.rfind(arg + ":", 0), 0u) << "reason must start with '" << arg << ":', got: " << s.reason;
  EXPECT_NE(s.reason.find(rule_words), std::string::npos) << "reason should say '" << rule_words << "': " << s.reason;
}

}  // namespace

TEST(GemmValidate, AcceptsValidProblemsInEveryOrder) {
  for (auto ao : {MatrixOrder::row_major, MatrixOrder::col_major})
    for (auto bo : {MatrixOrder::row_major, MatrixOrder::col_major})
      for (auto co : {MatrixOrder::row_major, MatrixOrder::col_major}) {
        GemmArguments g = make_packed_gemm(17, 33, 65, 3, DType::f32, DType::f32, ao, bo, co);
        float x;
        g.a = g.b = g.c = &x;
        g.d = &x;
        EXPECT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
      }
}

TEST(GemmValidate, TuningOptionsOutsideTheirRanges) {
  EXPECT_TRUE(gemm_validate(valid()).ok());  // the defaults are the library's choices
  struct Case {
    void (*set)(GemmOptions&);
    char const* name;
    char const* words;
  };
  for (Case c : {Case{[](GemmOptions& o) { o.splits = -1; }, "options.splits", "outside 0.."},
                 Case{[](GemmOptions& o) { o.operand_align = 8; }, "options.operand_align", "not 0"},
                 Case{[](GemmOptions& o) { o.operand_align = 64; }, "options.operand_align", "outside 0..32"},
                 Case{[](GemmOptions& o) { o.raster_group = 9; }, "options.raster_group", "outside 0..8"},
                 Case{[](GemmOptions& o) { o.raster_along = 'x'; }, "options.raster_along", "'m', 'n'"},
                 Case{[](GemmOptions& o) { o.l2_promotion = 4; }, "options.l2_promotion", "outside -1..3"},
                 Case{[](GemmOptions& o) { o.skinny_in_flight = -2; }, "options.skinny_in_flight", "outside -1.."},
                 Case{[](GemmOptions& o) { o.skinny_l2_hint_a = 3, o.skinny_l2_hint_b = 0; }, "options.skinny_l2_hint_a", "outside -1..2"},
                 Case{[](GemmOptions& o) { o.skinny_l2_hint_a = 1; }, "options.skinny_l2_hint_a/b", "set both"}}) {
    GemmArguments g = valid();
    c.set(g.options);
    expect_refused(g, c.name, c.words);
  }
  GemmArguments g = valid();
  g.options.splits = 3, g.options.operand_align = 32, g.options.raster_group = 4, g.options.raster_along = 'm';
  g.options.skinny_l2_hint_a = 1, g.options.skinny_l2_hint_b = 2, g.options.l2_promotion = 0;
  EXPECT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
}

TEST(GemmValidate, NegativeSizes) {
  auto g = valid();
  g.m = -1;
  expect_refused(g, "m", "negative");
  g = valid(), g.n = -5;
  expect_refused(g, "n", "negative");
  g = valid(), g.k = -1;
  expect_refused(g, "k", "negative");
  g = valid(), g.batch_count = -2;
  expect_refused(g, "batch_count", "negative");
}

TEST(GemmValidate, LeadingDimensionsBelowTheMinimum) {
  auto g = valid();  // A row-major 17x65: lda >= 65
  g.lda = 64;
  expect_refused(g, "lda", "below the minimum 65");
  g = valid(), g.a_order = MatrixOrder::col_major, g.lda = 16;  // A col-major 17x65: lda >= 17
  expect_refused(g, "lda", "below the minimum 17");
  g = valid(), g.ldb = 64;  // B col-major 65x33: ldb >= 65
  expect_refused(g, "ldb", "below the minimum 65");
  g = valid(), g.b_order = MatrixOrder::row_major, g.ldb = 32;  // B row-major: ldb >= N = 33
  expect_refused(g, "ldb", "below the minimum 33");
  g = valid(), g.ldc = 32;
  expect_refused(g, "ldc", "below the minimum 33");
  g = valid(), g.ldd = 0;
  expect_refused(g, "ldd", "below the minimum 33");
  g = valid(), g.c_order = MatrixOrder::col_major, g.ldc = 17, g.ldd = 16;
  expect_refused(g, "ldd", "below the minimum 17");
}

TEST(GemmValidate, LeadingDimensionAtLeastOneEvenForEmptyMatrices) {
  auto g = valid(0, 0, 0);
  g.lda = g.ldb = g.ldc = g.ldd = 1;
  EXPECT_TRUE(gemm_validate(g).ok());
  g.lda = 0;
  expect_refused(g, "lda", "max(1");
}

TEST(GemmValidate, BatchStrides) {
  auto g = valid();
  g.batch_count = 2;
  g.batch_stride_a = -1;
  expect_refused(g, "batch_stride_a", "negative");
  g = valid(), g.batch_count = 2, g.batch_stride_b = -7;
  expect_refused(g, "batch_stride_b", "negative");
  g = valid(), g.batch_count = 2, g.batch_stride_c = -7;
  expect_refused(g, "batch_stride_c", "negative");
  g = valid(), g.batch_count = 3, g.batch_stride_d = 0;
  expect_refused(g, "batch_stride_d", "same D");
  // Broadcasting an input (stride 0) is fine; so is stride 0 with one batch.
  g = valid(), g.batch_count = 3, g.batch_stride_a = 0, g.batch_stride_b = 0, g.batch_stride_c = 0;
  g.batch_stride_d = 17 * 33;
  EXPECT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
  g = valid(), g.batch_stride_d = 0;
  EXPECT_TRUE(gemm_validate(g).ok());
}

TEST(GemmValidate, NullPointersWhereDataIsRead) {
  auto g = valid();
  g.a = nullptr;
  expect_refused(g, "a", "A is read");
  g = valid(), g.b = nullptr;
  expect_refused(g, "b", "B is read");
  g = valid(), g.beta = 0.5f, g.c = nullptr;
  expect_refused(g, "c", "beta != 0");
  g = valid(), g.d = nullptr;
  expect_refused(g, "d", "written");
}

TEST(GemmValidate, NullPointersWhereNothingIsRead) {
  auto g = valid();
  g.c = nullptr;  // beta == 0: C unread
  EXPECT_TRUE(gemm_validate(g).ok());
  g = valid(), g.k = 0, g.a = g.b = nullptr;  // K == 0: D = beta * C
  g.lda = 1, g.ldb = 1;
  EXPECT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
  EXPECT_FALSE(gemm_reads_ab(g));
  g = valid(), g.alpha = 0.0f, g.a = g.b = nullptr;  // alpha == 0: A and B unread
  EXPECT_TRUE(gemm_validate(g).ok());
  g = valid(), g.alpha = std::numeric_limits<float>::quiet_NaN();  // NaN alpha reads A and B
  EXPECT_TRUE(gemm_reads_ab(g));
}

TEST(GemmValidate, SizeZeroIsANoOpWithNothingRead) {
  for (auto dims : {std::vector<std::int64_t>{0, 33, 65}, {17, 0, 65}}) {
    auto g = valid(dims[0], dims[1], dims[2]);
    g.a = g.b = g.c = nullptr;
    g.d = nullptr;
    g.beta = 1.0f;
    EXPECT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
    EXPECT_TRUE(gemm_is_noop(g));
  }
  auto g = valid();
  g.batch_count = 0, g.d = nullptr, g.a = nullptr;
  EXPECT_TRUE(gemm_validate(g).ok());
}

TEST(GemmValidate, DtypeCombinations) {
  struct Case { DType ab, cd; bool ok; char const* arg; };
  Case const cases[] = {
      {DType::f32, DType::f32, true, ""},   {DType::tf32, DType::f32, true, ""},
      {DType::f16, DType::f16, true, ""},   {DType::f16, DType::f32, true, ""},
      {DType::bf16, DType::bf16, true, ""}, {DType::bf16, DType::f32, true, ""},
      {DType::f32, DType::f16, false, "c_type"}, {DType::f32, DType::bf16, false, "c_type"},
      {DType::f16, DType::bf16, false, "c_type"}, {DType::bf16, DType::f16, false, "c_type"},
      {DType::f32, DType::tf32, false, "c_type"}, {DType::tf32, DType::f16, false, "c_type"},
  };
  for (Case const& c : cases) {
    auto g = valid();
    g.a_type = g.b_type = c.ab;
    g.c_type = c.cd;
    Status s = gemm_validate(g);
    EXPECT_EQ(s.ok(), c.ok) << to_string(c.ab) << " -> " << to_string(c.cd) << ": " << s.reason;
    if (!c.ok) {
      EXPECT_EQ(s.reason.rfind(std::string(c.arg) + ":", 0), 0u) << s.reason;
    }
  }
  auto g = valid();
  g.b_type = DType::f16;
  expect_refused(g, "b_type", "same dtype");
}

TEST(GemmValidate, Fp8DtypeRulesFollowCublasLt) {
  struct Case { DType a, b, cd; bool ok; char const* arg; char const* words; };
  Case const cases[] = {
      {DType::e4m3, DType::e4m3, DType::bf16, true, "", ""},
      {DType::e4m3, DType::e4m3, DType::f16, true, "", ""},
      {DType::e4m3, DType::e4m3, DType::f32, true, "", ""},
      {DType::e4m3, DType::e5m2, DType::bf16, true, "", ""},
      {DType::e5m2, DType::e4m3, DType::f32, true, "", ""},
      {DType::e5m2, DType::e5m2, DType::bf16, false, "b_type", "make A or B e4m3"},
      {DType::e4m3, DType::bf16, DType::bf16, false, "b_type", "pairs only with another fp8"},
      {DType::f16, DType::e5m2, DType::f16, false, "a_type", "pairs only with another fp8"},
      {DType::e4m3, DType::e4m3, DType::e4m3, false, "c_type", "input type"},
      {DType::bf16, DType::bf16, DType::e5m2, false, "c_type", "input type"},
      {DType::e4m3, DType::e4m3, DType::tf32, false, "c_type", "tf32"},
  };
  for (Case const& c : cases) {
    auto g = valid();
    g.a_type = c.a, g.b_type = c.b, g.c_type = c.cd;
    if (c.ok) {
      EXPECT_TRUE(gemm_validate(g).ok()) << to_string(c.a) << " x " << to_string(c.b) << " -> " << to_string(c.cd)
                                         << ": " << gemm_validate(g).reason;
    } else {
      expect_refused(g, c.arg, c.words);
    }
  }
}

TEST(GemmValidate, ScalesApplyToFp8OperandsOnly) {
  auto g = valid();
  g.a_scale = 2.0f;
  expect_refused(g, "a_scale", "fp8 operands only");
  g = valid(), g.b_scale = 0.5f;
  expect_refused(g, "b_scale", "fold the factor into alpha");
  g = valid(), g.a_type = g.b_type = DType::bf16, g.b_scale = NAN;
  expect_refused(g, "b_scale", "bf16");
  g = valid(), g.a_type = g.b_type = DType::e4m3, g.c_type = DType::bf16;
  g.a_scale = 0.25f, g.b_scale = 3.0f, g.alpha = 2.0f;
  EXPECT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
  EXPECT_EQ(gemm_product_scale(g), 1.5f);
  g.a_scale = 0.0f;  // a zero scale still reads A and B; only alpha = 0 skips them
  EXPECT_TRUE(gemm_reads_ab(g));
}

TEST(GemmValidate, OffsetsThatOverflow64Bits) {
  auto g = valid();
  g.batch_count = 4;
  g.batch_stride_a = std::int64_t(1) << 62;
  expect_refused(g, "lda/batch_stride_a", "overflows 64 bits");
  g = valid(), g.lda = std::int64_t(1) << 60;  // 16 rows of 2^60
  expect_refused(g, "lda/batch_stride_a", "overflows 64 bits");
}

TEST(GemmValidate, SixtyFourBitSizesAreAccepted) {
  // A 3e9 x 2 row-major A: more than 2^31 rows, fine for the rules.
  auto g = valid(3'000'000'000LL, 2, 2);
  EXPECT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
}

TEST(GemmValidate, AlignmentNeverRejects) {
  auto g = valid(5, 7, 9);
  static float buf[1024];
  g.a = buf + 1, g.b = buf + 3, g.c = buf + 1;
  g.d = buf + 2;
  g.lda = 13, g.ldb = 11, g.ldc = 9, g.ldd = 7;
  EXPECT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
}

TEST(GemmValidate, PackedHelper) {
  auto g = make_packed_gemm(4, 5, 6, 2, DType::bf16, DType::f32, MatrixOrder::col_major, MatrixOrder::row_major,
                            MatrixOrder::col_major);
  EXPECT_EQ(g.lda, 4);
  EXPECT_EQ(g.batch_stride_a, 24);
  EXPECT_EQ(g.ldb, 5);
  EXPECT_EQ(g.batch_stride_b, 30);
  EXPECT_EQ(g.ldc, 4);
  EXPECT_EQ(g.batch_stride_d, 20);
  EXPECT_EQ(parse_dtype("bf16"), DType::bf16);
  EXPECT_EQ(parse_dtype("fp8"), std::nullopt);
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::tf32, DType::e4m3, DType::e5m2})
    EXPECT_EQ(parse_dtype(to_string(t)), t) << to_string(t);
  EXPECT_EQ(parse_dtype("fp8_e4m3"), DType::e4m3);
  EXPECT_EQ(parse_dtype("fp8_e5m2"), DType::e5m2);
  EXPECT_EQ(size_of(DType::e4m3), 1u);
  EXPECT_EQ(size_of(DType::e5m2), 1u);
  auto f8 = make_packed_gemm(4, 5, 6, 1, DType::e4m3, DType::bf16, MatrixOrder::row_major, MatrixOrder::col_major,
                             MatrixOrder::col_major);
  EXPECT_EQ(f8.a_scale, 1.0f);
  EXPECT_EQ(f8.b_scale, 1.0f);
}

TEST(ReferenceNumeric, HalfAndBfloat16RoundTrips) {
  using namespace tessel::reference;
  EXPECT_EQ(float_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(float_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(float_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_f16(65520.0f), 0x7c00);          // rounds to inf
  EXPECT_EQ(float_to_f16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_f16(std::ldexp(1.0f, -25)), 0x0000);  // tie to even: 0
  EXPECT_EQ(float_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie to even
  EXPECT_EQ(float_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_TRUE(std::isnan(f16_to_float(float_to_f16(NAN))));
  for (std::uint32_t h = 0; h < 0x7c00; ++h) {  // every finite non-negative fp16 survives the round trip
    ASSERT_EQ(float_to_f16(f16_to_float(static_cast<std::uint16_t>(h))), h) << h;
  }
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);  // tie to even
  EXPECT_EQ(bf16_to_float(0x4049), 3.140625f);
}

TEST(ReferenceCheck, ElementErrorRules) {
  using tessel::reference::element_error;
  EXPECT_EQ(element_error(1.0, 1.0, 1.0), 0.0);
  EXPECT_DOUBLE_EQ(element_error(1.5, 1.0, 2.0), 0.25);
  EXPECT_TRUE(std::isinf(element_error(NAN, 1.0, 1.0)));  // NaN never passes where R is finite
  EXPECT_EQ(element_error(NAN, NAN, 1.0), 0.0);
  EXPECT_TRUE(std::isinf(element_error(1.0, NAN, 1.0)));
  EXPECT_EQ(element_error(INFINITY, INFINITY, 1.0), 0.0);
  EXPECT_TRUE(std::isinf(element_error(-INFINITY, INFINITY, 1.0)));
  EXPECT_TRUE(std::isinf(element_error(INFINITY, 3.0, 1.0)));
}

TEST(ReferenceHost, SmallProductAndCheck) {
  // 2x3 * 3x2 with A row-major, B col-major, C/D row-major; alpha 2, beta -1.
  float a[] = {1, 2, 3, 4, 5, 6};           // [[1,2,3],[4,5,6]]
  float b[] = {1, 0, 1, 0, 1, 0};           // columns (1,0,1), (0,1,0)
  float c[] = {1, 1, 1, 1};
  float d[] = {7, 3, 19, 9};                // 2*A*B - C = 2*[[4,2],[10,5]] - 1
  auto g = make_packed_gemm(2, 2, 3, 1, DType::f32, DType::f32, MatrixOrder::row_major, MatrixOrder::col_major,
                            MatrixOrder::row_major);
  g.a = a, g.b = b, g.c = c, g.d = d, g.alpha = 2.0f, g.beta = -1.0f;
  auto ref = tessel::reference::gemm_host(g);
  EXPECT_EQ(ref.r, (std::vector<double>{7, 3, 19, 9}));
  auto chk = tessel::reference::check_host(g, ref, 1e-6);
  EXPECT_TRUE(chk.passed()) << chk.describe();
  d[2] = 20;
  chk = tessel::reference::check_host(g, ref, 1e-6);
  EXPECT_FALSE(chk.passed());
  EXPECT_EQ(chk.first_bad_row, 1);
  EXPECT_EQ(chk.first_bad_col, 0);
  EXPECT_NE(chk.describe().find("row 1, col 0"), std::string::npos) << chk.describe();
}

TEST(ReferenceHost, Fp8InputsDequantizeExactlyAndScale) {
  // A (2x2, e4m3, row-major) = [[1.5, -448], [2^-9, 3]], B (2x2, e5m2, col-major) = columns (2, 0.25), (57344, -1).
  std::uint8_t a[] = {float_e4m3_t(1.5f).raw(), float_e4m3_t(-448.0f).raw(), float_e4m3_t(0x1p-9f).raw(),
                      float_e4m3_t(3.0f).raw()};
  std::uint8_t b[] = {float_e5m2_t(2.0f).raw(), float_e5m2_t(0.25f).raw(), float_e5m2_t(57344.0f).raw(),
                      float_e5m2_t(-1.0f).raw()};
  float d[4];
  auto g = make_packed_gemm(2, 2, 2, 1, DType::e4m3, DType::f32, MatrixOrder::row_major, MatrixOrder::col_major,
                            MatrixOrder::row_major);
  g.b_type = DType::e5m2;
  g.a = a, g.b = b, g.d = d, g.alpha = 2.0f, g.a_scale = 0.5f, g.b_scale = 0.25f;  // product scale 0.25
  ASSERT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
  auto ref = tessel::reference::gemm_host(g);
  double const r00 = 1.5 * 2 + -448.0 * 0.25, r01 = 1.5 * 57344 + 448.0;
  double const r10 = 0x1p-9 * 2 + 3 * 0.25, r11 = 0x1p-9 * 57344 - 3;
  EXPECT_EQ(ref.r, (std::vector<double>{0.25 * r00, 0.25 * r01, 0.25 * r10, 0.25 * r11}));
  EXPECT_EQ(ref.scale[0], 0.25 * (3 + 112));
  for (int i = 0; i < 4; ++i) d[i] = float(ref.r[i]);
  EXPECT_TRUE(tessel::reference::check_host(g, ref, tessel::reference::gemm_tolerance(DType::e4m3, DType::f32, 2)).passed());
}

TEST(ReferenceCheck, Fp8ToleranceIsTheFp32BoundPlusTheMmaAllowance) {
  using tessel::reference::gemm_tolerance;
  double const bf16 = gemm_tolerance(DType::bf16, DType::bf16, 4096);
  double const e4m3 = gemm_tolerance(DType::e4m3, DType::bf16, 4096);
  EXPECT_GT(e4m3, bf16);  // exact inputs, plus the tensor-core accumulation allowance
  EXPECT_LT(e4m3, bf16 + 0x1p-9);
  EXPECT_LT(gemm_tolerance(DType::e4m3, DType::f32, 8192), 0x1p-9);
  EXPECT_EQ(gemm_tolerance(DType::e5m2, DType::f16, 100), gemm_tolerance(DType::e4m3, DType::f16, 100));
}

TEST(GemmValidate, FusedEpilogueRules) {
  auto g = valid();
  EXPECT_FALSE(gemm_is_fused(g));  // the default is the plain GEMM
  static float bias[64];
  for (BiasMode mode : {BiasMode::row, BiasMode::col})
    for (Activation act : {Activation::none, Activation::relu, Activation::gelu, Activation::gelu_tanh, Activation::silu}) {
      g = valid(), g.bias = bias, g.bias_mode = mode, g.activation = act;
      EXPECT_TRUE(gemm_validate(g).ok()) << to_string(mode) << " " << to_string(act) << ": " << gemm_validate(g).reason;
      EXPECT_TRUE(gemm_is_fused(g));
    }
  g = valid(), g.activation = Activation::silu;  // an activation without a bias
  EXPECT_TRUE(gemm_validate(g).ok() && gemm_is_fused(g));

  g = valid(), g.activation = static_cast<Activation>(7);
  expect_refused(g, "activation", "not one of none, relu, gelu, gelu_tanh, silu");
  g = valid(), g.bias = bias, g.bias_mode = static_cast<BiasMode>(3);
  expect_refused(g, "bias_mode", "not one of none, row, col");
  g = valid(), g.bias = bias;  // a bias nobody said the orientation of
  expect_refused(g, "bias_mode", "say which index");
  g = valid(), g.bias_mode = BiasMode::row;
  expect_refused(g, "bias", "M = 17 values");
  g = valid(), g.bias_mode = BiasMode::col;
  expect_refused(g, "bias", "N = 33 values");
  g = valid(), g.bias = reinterpret_cast<char const*>(bias) + 2, g.bias_mode = BiasMode::col;  // fp32 D: 4-byte bias
  expect_refused(g, "bias", "4-byte fp32 elements");
  g = valid(), g.a_type = g.b_type = g.c_type = DType::bf16;
  g.bias = reinterpret_cast<char const*>(bias) + 2, g.bias_mode = BiasMode::row;  // bf16: 2 bytes is aligned
  EXPECT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
  g.bias = reinterpret_cast<char const*>(bias) + 1;
  expect_refused(g, "bias", "2-byte bf16 elements");

  // A no-op reads no bias; K = 0 still applies the epilogue (D = act(beta * C + bias)) and reads it.
  g = valid(0, 33, 65), g.bias_mode = BiasMode::row;
  EXPECT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
  g = valid(17, 33, 0), g.lda = 1, g.bias_mode = BiasMode::col;
  expect_refused(g, "bias", "N = 33 values");
}

TEST(ReferenceHost, FusedEpilogueAppliesBiasThenActivation) {
  // D (2x2, row-major) = act(alpha * A B + beta * C + bias); A B = [[4, 2], [10, 5]] as in
  // SmallProductAndCheck, alpha 1, beta -1, C = 1, so the sum before the bias is [[3, 1], [9, 4]].
  float a[] = {1, 2, 3, 4, 5, 6};
  float b[] = {1, 0, 1, 0, 1, 0};
  float c[] = {1, 1, 1, 1};
  float bias[] = {-5, 0.5f};
  auto g = make_packed_gemm(2, 2, 3, 1, DType::f32, DType::f32, MatrixOrder::row_major, MatrixOrder::col_major,
                            MatrixOrder::row_major);
  g.a = a, g.b = b, g.c = c, g.beta = -1.0f, g.bias = bias;
  g.bias_mode = BiasMode::row, g.activation = Activation::relu;  // rows: [[-2, -4], [9.5, 4.5]]
  EXPECT_EQ(reference::gemm_host(g).r, (std::vector<double>{0, 0, 9.5, 4.5}));
  g.bias_mode = BiasMode::col, g.activation = Activation::none;  // columns: [[-2, 1.5], [4, 4.5]]
  auto ref = reference::gemm_host(g);
  EXPECT_EQ(ref.r, (std::vector<double>{-2, 1.5, 4, 4.5}));
  EXPECT_EQ(ref.scale[0], 4 + 1 + 5.0);  // |alpha A B| + |beta C| + |bias|
  g.activation = Activation::gelu;
  ref = reference::gemm_host(g);
  EXPECT_NEAR(ref.r[1], 1.5 * 0.5 * (1 + std::erf(1.5 / std::sqrt(2.0))), 1e-15);
  EXPECT_DOUBLE_EQ(ref.scale[0], 1.13 * (4 + 1 + 5.0));  // times GELU's slope bound
  // A column-major D: bias_mode still names D's rows and columns.
  g.c_order = MatrixOrder::col_major, g.activation = Activation::none;
  float ccol[] = {1, 1, 1, 1};
  g.c = ccol;
  EXPECT_EQ(reference::gemm_host(g).r, (std::vector<double>{-2, 1.5, 4, 4.5}));
}

TEST(Activation, FormulasAndSlopes) {
  EXPECT_EQ(activate(Activation::none, -2.5), -2.5);
  EXPECT_EQ(activate(Activation::relu, -2.5), 0.0);
  EXPECT_EQ(activate(Activation::relu, 2.5), 2.5);
  EXPECT_TRUE(std::isnan(activate(Activation::relu, std::nan(""))));
  EXPECT_NEAR(activate(Activation::gelu, 1.0), 0.8413447460685429, 1e-15);    // torch.nn.functional.gelu(1.0)
  EXPECT_NEAR(activate(Activation::gelu_tanh, 1.0), 0.8411919906, 1e-9);      // approximate="tanh"
  EXPECT_NEAR(activate(Activation::silu, 1.0), 0.7310585786300049, 1e-15);
  EXPECT_NEAR(activate(Activation::gelu, -3.0f), -0.00404969f, 1e-7f);       // the fp32 form kernels run
  for (Activation a : {Activation::gelu, Activation::gelu_tanh, Activation::silu}) {
    double worst = 0;
    for (double z = -8; z <= 8; z += 1e-3) worst = std::max(worst, std::fabs(activate(a, z + 1e-6) - activate(a, z)) / 1e-6);
    EXPECT_LE(worst, activation_slope(a)) << to_string(a);
    EXPECT_GT(worst, activation_slope(a) - 0.01) << to_string(a);
  }
  EXPECT_FALSE(is_activation(static_cast<Activation>(5)));
  EXPECT_STREQ(to_string(Activation::gelu_tanh), "gelu_tanh");
}

// The forms a kernel runs before rounding to 16 bits (activation.hpp, activate_fast_as). On the
// host tanh and exp2 are exact, so this measures the forms themselves: the erf GELU's fitted
// normal tail within its stated 2.2e-6 |z|, the others' algebra; and the tails give 0 or z, with
// NaN exactly where the exact formulas give NaN.
TEST(Activation, FastFormsAgreeWithTheExactOnes) {
  double worst[3] = {0, 0, 0};
  Activation const acts[3] = {Activation::gelu, Activation::gelu_tanh, Activation::silu};
  for (int i = -16000; i <= 16000; ++i) {
    float const z = float(i) / 1000.0f;
    double const zd = z;
    float const fast[3] = {activate_fast_as<Activation::gelu>(z), activate_fast_as<Activation::gelu_tanh>(z),
                           activate_fast_as<Activation::silu>(z)};
    for (int a = 0; a < 3; ++a)
      worst[a] = std::max(worst[a], std::fabs(double(fast[a]) - activate(acts[a], zd)) / std::max(std::fabs(zd), 1e-3));
  }
  EXPECT_LE(worst[0], 2.2e-6);  // the fit; on the device ex2.approx adds 2^-22 relative
  EXPECT_LE(worst[1], 1e-6);    // (fp32 rounding only: the device's tanh.approx adds <= 2.5e-4)
  EXPECT_LE(worst[2], 1e-6);
  for (Activation a : acts) {
    auto const fast = [a](float z) {
      return a == Activation::gelu ? activate_fast_as<Activation::gelu>(z)
             : a == Activation::gelu_tanh ? activate_fast_as<Activation::gelu_tanh>(z)
                                          : activate_fast_as<Activation::silu>(z);
    };
    for (float z : {1e3f, 1e30f, INFINITY, -1e3f, -1e30f, -INFINITY, NAN}) {
      double const exact = activate(a, double(z));
      float const f = fast(z);
      if (std::isnan(exact)) {
        EXPECT_TRUE(std::isnan(f)) << to_string(a) << "(" << z << ") = " << f;
      } else if (std::isinf(exact)) {
        EXPECT_EQ(double(f), exact) << to_string(a) << "(" << z << ")";
      } else {
        EXPECT_NEAR(f, exact, 1e-6 * std::fabs(double(z))) << to_string(a) << "(" << z << ")";
      }
    }
  }
}
