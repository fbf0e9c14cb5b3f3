// The convolution host API's argument rules (tessel/conv/conv_validate.hpp), checked without a
// GPU: every refusal with its StatusCode and a reason that starts with the argument's name and
// says the rule; the accepted problems (every pass, 2-D and 3-D, both dtypes, groups and depthwise,
// padded strides, padding and strides larger than the filter, dilation, empty batches and channel
// counts with null inputs); and the derived sizes (output extents, one group's implicit GEMM,
// FLOPs, packed strides, buffer spans).
#include <tessel/conv/conv_activation.hpp>
#include <tessel/conv/conv_arguments.hpp>
#include <tessel/conv/conv_validate.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>

using namespace tessel;
using conv::Operator;

namespace {

// 16-byte aligned storage behind the dummy pointers (validation only: never dereferenced).
alignas(16) unsigned char g_storage[64];
void* dummy(int byte_offset = 0) { return g_storage + byte_offset; }

constexpr Operator kOps[] = {Operator::kFprop, Operator::kDgrad, Operator::kWgrad};

ConvArguments with_pointers(ConvArguments a) {
  a.x.ptr = a.filter.ptr = a.y.ptr = dummy();
  a.out = dummy();
  return a;
}

// A valid 2-D problem: n 2, 9x11 -> 9x11 (3x3, pad 1), c 6 -> k 9, groups 3.
ConvArguments valid2d(Operator op = Operator::kFprop, DType t = DType::bf16) {
  return with_pointers(make_packed_conv2d(op, 2, 9, 11, 6, 9, 3, 3, {1, 1}, {1, 1}, {1, 1}, 3, t));
}

// A valid 3-D problem: n 1, 5x6x7, c 4 -> k 8, 3x3x3, pad 1, stride (1, 2, 2).
ConvArguments valid3d(Operator op = Operator::kFprop) {
  return with_pointers(make_packed_conv3d(op, 1, 5, 6, 7, 4, 8, 3, 3, 3, {1, 1, 1}, {1, 2, 2}));
}

void expect_ok(ConvArguments const& a, std::string const& what = "") {
  Status s = conv_validate(a);
  EXPECT_TRUE(s.ok()) << what << ": " << s.reason;
}

void expect_refused(ConvArguments const& a, std::string const& arg, std::string const& rule_words,
                    StatusCode code = StatusCode::invalid_argument) {
  Status s = conv_validate(a);
  ASSERT_FALSE(s.ok()) << "expected a refusal naming " << arg;
  EXPECT_EQ(s.code, code) << s.reason;
  EXPECT_EQ(s.reason.rfind(arg + ":", 0), 0u) << "reason must start with '" << arg << ":', got: " << s.reason;
  EXPECT_NE(s.reason.find(rule_words), std::string::npos) << "reason should say '" << rule_words << "': " << s.reason;
}

// a, changed by f.
ConvArguments with(ConvArguments a, std::function<void(ConvArguments&)> const& f) {
  f(a);
  return a;
}

}  // namespace

// ---- accepted problems ----------------------------------------------------------------------------

TEST(ConvValidate, AcceptsEveryPassDtypeAndRank) {
  for (Operator op : kOps) {
    for (DType t : {DType::bf16, DType::f16}) expect_ok(valid2d(op, t), conv::to_string(op));
    expect_ok(valid3d(op), std::string("3-D ") + conv::to_string(op));
  }
}

TEST(ConvValidate, AcceptsRaggedAndOddProblems) {
  struct Case {
    char const* what;
    ConvArguments a;
  };
  Case const cases[] = {
      {"N = 1, H = W = 1, 1x1", make_packed_conv2d(Operator::kFprop, 1, 1, 1, 3, 5, 1, 1)},
      {"H = W = 1, 3x3 pad 1", make_packed_conv2d(Operator::kFprop, 1, 1, 1, 8, 8, 3, 3, {1, 1})},
      {"pad larger than the filter", make_packed_conv2d(Operator::kDgrad, 2, 5, 5, 4, 4, 3, 3, {4, 5})},
      {"stride larger than the filter", make_packed_conv2d(Operator::kWgrad, 2, 13, 14, 4, 4, 2, 2, {0, 0}, {5, 3})},
      {"dilation", make_packed_conv2d(Operator::kFprop, 1, 16, 16, 9, 7, 3, 3, {2, 2}, {1, 1}, {2, 3})},
      {"asymmetric 7x5 filter, stride 2", make_packed_conv2d(Operator::kFprop, 1, 20, 19, 3, 64, 7, 5, {3, 2}, {2, 2})},
      {"odd C33 K65", make_packed_conv2d(Operator::kFprop, 4, 57, 57, 33, 65, 3, 3, {1, 1})},
      {"depthwise", make_packed_conv2d(Operator::kFprop, 2, 14, 14, 256, 256, 3, 3, {1, 1}, {1, 1}, {1, 1}, 256)},
      {"depthwise multiplier 2", make_packed_conv2d(Operator::kDgrad, 2, 14, 14, 32, 64, 3, 3, {1, 1}, {1, 1}, {1, 1}, 32)},
      {"3-D 3x3x3", make_packed_conv3d(Operator::kWgrad, 1, 4, 8, 8, 64, 64, 3, 3, 3, {1, 1, 1})},
      {"3-D T=1 (2-D via 3-D)", make_packed_conv3d(Operator::kFprop, 1, 1, 8, 8, 16, 16, 1, 3, 3, {0, 1, 1})},
  };
  for (Case const& c : cases) expect_ok(with_pointers(c.a), c.what);
}

// Channels contiguous, everything else any non-overlapping stride: channel slices of a wider
// tensor, padded rows, batch-outermost or not, and any stride on a dimension of extent 1.
TEST(ConvValidate, AcceptsNonPackedStrides) {
  ConvArguments a = valid2d();
  a.x.stride_w = a.c + 10;  // a channel slice of a 16-channel tensor
  a.x.stride_h = a.x.stride_w * a.w + 3;
  a.x.stride_n = a.x.stride_h * a.h + 7;
  a.y.stride_w = a.k + 7;
  a.y.stride_h = a.y.stride_w * 11;
  a.y.stride_n = a.y.stride_h * 9 + 1;
  a.filter.stride_k = 3 * 3 * 2 + 5;
  expect_ok(a, "padded strides");
  // Batch between rows: x as [h][n][w][c].
  ConvArguments b = valid2d();
  b.x.stride_w = b.c, b.x.stride_n = b.c * b.w, b.x.stride_h = b.c * b.w * b.n;
  expect_ok(b, "[h][n][w][c]");
  // Extent-1 dimensions: d (2-D) and n = 1 with stride 0.
  ConvArguments c = with_pointers(make_packed_conv2d(Operator::kFprop, 1, 8, 8, 8, 8, 3, 3, {1, 1}));
  c.x.stride_n = 0, c.x.stride_d = 0, c.y.stride_n = 0, c.y.stride_d = 12345;
  expect_ok(c, "extent-1 dimensions");
  // One filter (k = 1): its stride does not matter.
  ConvArguments d = with_pointers(make_packed_conv2d(Operator::kFprop, 1, 8, 8, 8, 1, 3, 3, {1, 1}));
  d.filter.stride_k = 0;
  expect_ok(d, "k = 1 with filter.stride_k 0");
}

// Empty outputs touch no memory; empty sums and alpha = 0 read no input.
TEST(ConvValidate, EmptyProblemsNeedOnlyWhatTheyTouch) {
  for (Operator op : kOps) {
    ConvArguments a = valid2d(op);
    a.n = 0;
    a.x.ptr = a.filter.ptr = a.y.ptr = nullptr;
    if (op != Operator::kWgrad) a.out = nullptr;  // wgrad with n = 0 writes dw = act(beta*residual)
    expect_ok(a, std::string("n = 0 ") + conv::to_string(op));
    EXPECT_EQ(conv_output_is_empty(a), op != Operator::kWgrad);
    EXPECT_FALSE(conv_reads_inputs(a));

    ConvArguments z = valid2d(op);
    z.alpha = 0.0f;
    z.x.ptr = z.filter.ptr = z.y.ptr = nullptr;
    expect_ok(z, std::string("alpha = 0 ") + conv::to_string(op));
  }
  ConvArguments c0 = valid2d(Operator::kFprop);
  c0.c = 0, c0.groups = 1, c0.x.ptr = c0.filter.ptr = nullptr;
  expect_ok(c0, "fprop c = 0");
  EXPECT_TRUE(conv_sum_is_empty(c0));
  EXPECT_FALSE(conv_output_is_empty(c0));
  ConvArguments k0 = valid2d(Operator::kDgrad);
  k0.k = 0, k0.groups = 1, k0.y.ptr = k0.filter.ptr = nullptr;
  expect_ok(k0, "dgrad k = 0");
  EXPECT_TRUE(conv_sum_is_empty(k0));
  ConvArguments w0 = valid2d(Operator::kWgrad);
  w0.k = 0, w0.groups = 1, w0.x.ptr = w0.y.ptr = w0.out = nullptr;
  expect_ok(w0, "wgrad k = 0");
  EXPECT_TRUE(conv_output_is_empty(w0));
}

TEST(ConvValidate, AcceptsEpilogueOptions) {
  for (Operator op : {Operator::kFprop, Operator::kDgrad}) {
    ConvArguments a = valid2d(op);
    a.alpha = -0.5f, a.beta = 2.0f, a.residual = dummy(2);
    a.bias = static_cast<float const*>(dummy(4));
    for (ConvActivation act : {ConvActivation::none, ConvActivation::relu, ConvActivation::gelu, ConvActivation::silu}) {
      a.activation = act;
      expect_ok(a, to_string(act));
    }
  }
  ConvArguments w = valid2d(Operator::kWgrad);
  w.beta = 1.0f, w.residual = dummy(), w.activation = ConvActivation::relu;
  expect_ok(w, "wgrad with residual and relu");
  ConvArguments r = valid2d();
  r.residual = dummy();  // beta = 0: given but not read
  expect_ok(r, "residual with beta 0");
}

// ---- refusals ---------------------------------------------------------------------------------------

TEST(ConvValidate, RefusesBadEnumerators) {
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.op = static_cast<Operator>(7); }), "op", "not one of");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.spatial_dims = 1; }), "spatial_dims", "2 (NHWC) or 3");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.activation = static_cast<ConvActivation>(9); }), "activation",
                 "not one of none, relu, gelu, silu");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.dtype = DType::f32; }), "dtype", "bf16 or fp16");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.dtype = DType::e4m3; }), "dtype", "not supported");
}

TEST(ConvValidate, RefusesDepthInATwoDimensionalProblem) {
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.d = 2; }), "d", "2-D problem");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.t = 3; }), "t", "2-D problem");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.pad_d = 1; }), "pad_d", "spatial_dims = 3");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.stride_d = 2; }), "stride_d", "2-D problem");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.dilation_d = 2; }), "dilation_d", "2-D problem");
}

TEST(ConvValidate, RefusesBadSizes) {
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.n = -1; }), "n", "negative");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.c = -3; }), "c", "negative");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.k = -9; }), "k", "negative");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.h = 0; }), "h", "must be >= 1");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.w = -2; }), "w", "must be >= 1");
  expect_refused(with(valid3d(), [](ConvArguments& a) { a.d = 0; }), "d", "must be >= 1");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.r = 0; }), "r", "at least one tap");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.s = 0; }), "s", "at least one tap");
  expect_refused(with(valid3d(), [](ConvArguments& a) { a.t = 0; }), "t", "at least one tap");
}

TEST(ConvValidate, RefusesBadPaddingStrideDilation) {
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.pad_h = -1; }), "pad_h", "padding must be >= 0");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.pad_w = -1; }), "pad_w", "padding must be >= 0");
  expect_refused(with(valid3d(), [](ConvArguments& a) { a.pad_d = -2; }), "pad_d", "padding must be >= 0");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.stride_h = 0; }), "stride_h", ">= 1");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.stride_w = -1; }), "stride_w", ">= 1");
  expect_refused(with(valid3d(), [](ConvArguments& a) { a.stride_d = 0; }), "stride_d", ">= 1");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.dilation_h = 0; }), "dilation_h", "no dilation");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.dilation_w = 0; }), "dilation_w", "no dilation");
  expect_refused(with(valid3d(), [](ConvArguments& a) { a.dilation_d = 0; }), "dilation_d", "no dilation");
}

TEST(ConvValidate, RefusesGroupsThatDoNotDivide) {
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.groups = 0; }), "groups", ">= 1");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.groups = -3; }), "groups", ">= 1");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.groups = 4; }), "c", "not divisible by groups");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.k = 10; }), "k", "not divisible by groups");
}

// An output extent <= 0: the dilated filter does not fit the padded input. The reason names the
// filter extent of that dimension and says the output would be empty.
TEST(ConvValidate, RefusesAnEmptyOutput) {
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.r = 12; }), "r", "would be empty");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.pad_w = 0, a.s = 12; }), "s", "would be empty");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.pad_h = 0, a.dilation_h = 5; }), "r", "exceeds the padded input");
  expect_refused(with(valid3d(), [](ConvArguments& a) { a.t = 9; }), "t", "would be empty");
}

TEST(ConvValidate, RefusesBadScalarsAndEpilogue) {
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.alpha = std::nanf(""); }), "alpha", "not finite");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.beta = std::numeric_limits<float>::infinity(); }), "beta",
                 "not finite");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.beta = 0.5f; }), "beta", "no residual");
  expect_refused(with(valid2d(Operator::kWgrad), [](ConvArguments& a) { a.bias = static_cast<float const*>(dummy()); }),
                 "bias", "wgrad takes none");
}

// ConvOptions::wgrad_slices: 0..kConvMaxWgradSlices, and only on a weight gradient.
TEST(ConvValidate, WgradSlicesInRangeOnTheWeightGradientOnly) {
  for (int slices : {0, 1, 7, kConvMaxWgradSlices})
    expect_ok(with(valid2d(Operator::kWgrad), [&](ConvArguments& a) { a.options.wgrad_slices = slices; }),
              std::to_string(slices) + " slices");
  for (int slices : {-1, kConvMaxWgradSlices + 1})
    expect_refused(with(valid2d(Operator::kWgrad), [&](ConvArguments& a) { a.options.wgrad_slices = slices; }),
                   "options.wgrad_slices", "is not in 0..4096");
  for (Operator op : {Operator::kFprop, Operator::kDgrad})
    expect_refused(with(valid2d(op), [](ConvArguments& a) { a.options.wgrad_slices = 2; }), "options.wgrad_slices",
                   "only the weight gradient");
}

TEST(ConvValidate, RefusesNegativeStrides) {
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.x.stride_h = -1; }), "x.stride_h", "negative");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.x.stride_d = -5; }), "x.stride_d", "negative");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.y.stride_n = -1; }), "y.stride_n", "negative");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.filter.stride_k = -18; }), "filter.stride_k", "negative");
}

// Strides under which two elements of a tensor share an address.
TEST(ConvValidate, RefusesOverlappingStrides) {
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.x.stride_w = a.c - 1; }), "x.stride_w", "must not overlap");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.x.stride_h = a.x.stride_w; }), "x.stride_h", "must not overlap");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.x.stride_n = a.x.stride_h * 3; }), "x.stride_n",
                 "must not overlap");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.y.stride_w = 4; }), "y.stride_w", "must not overlap");
  expect_refused(with(valid3d(), [](ConvArguments& a) { a.y.stride_d = a.y.stride_h; }), "y.stride_d", "must not overlap");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.filter.stride_k = 17; }), "filter.stride_k",
                 "must not overlap");
  // The output tensor of each pass is checked as well (dgrad's dx is x, wgrad's dw the filters).
  expect_refused(with(valid2d(Operator::kDgrad), [](ConvArguments& a) { a.x.stride_w = 1; }), "x.stride_w", "overlap");
  expect_refused(with(valid2d(Operator::kWgrad), [](ConvArguments& a) { a.filter.stride_k = 1; }), "filter.stride_k",
                 "overlap");
}

TEST(ConvValidate, RefusesMisalignedPointers) {
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.x.ptr = dummy(1); }), "x", "2-byte aligned");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.filter.ptr = dummy(3); }), "filter", "2-byte aligned");
  expect_refused(with(valid2d(Operator::kDgrad), [](ConvArguments& a) { a.y.ptr = dummy(5); }), "y", "2-byte aligned");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.out = dummy(1); }), "out", "2-byte aligned");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.residual = dummy(1), a.beta = 1.0f; }), "residual",
                 "2-byte aligned");
  expect_refused(with(valid2d(), [](ConvArguments& a) { a.bias = static_cast<float const*>(dummy(2)); }), "bias",
                 "4-byte aligned");
}

TEST(ConvValidate, RefusesNullPointersThatAreUsed) {
  expect_refused(with(valid2d(Operator::kFprop), [](ConvArguments& a) { a.x.ptr = nullptr; }), "x", "null, but fprop reads it");
  expect_refused(with(valid2d(Operator::kFprop), [](ConvArguments& a) { a.filter.ptr = nullptr; }), "filter", "null");
  expect_refused(with(valid2d(Operator::kDgrad), [](ConvArguments& a) { a.y.ptr = nullptr; }), "y", "dgrad reads it");
  expect_refused(with(valid2d(Operator::kDgrad), [](ConvArguments& a) { a.filter.ptr = nullptr; }), "filter", "null");
  expect_refused(with(valid2d(Operator::kWgrad), [](ConvArguments& a) { a.x.ptr = nullptr; }), "x", "wgrad reads it");
  expect_refused(with(valid2d(Operator::kWgrad), [](ConvArguments& a) { a.y.ptr = nullptr; }), "y", "wgrad reads it");
  for (Operator op : kOps)
    expect_refused(with(valid2d(op), [](ConvArguments& a) { a.out = nullptr; }), "out", "writes");
  // The pointers a pass does not read may be null: fprop's y, dgrad's x, wgrad's filters.
  expect_ok(with(valid2d(Operator::kFprop), [](ConvArguments& a) { a.y.ptr = nullptr; }), "fprop y null");
  expect_ok(with(valid2d(Operator::kDgrad), [](ConvArguments& a) { a.x.ptr = nullptr; }), "dgrad x null");
  expect_ok(with(valid2d(Operator::kWgrad), [](ConvArguments& a) { a.filter.ptr = nullptr; }), "wgrad filter null");
}

// The kernels' 32-bit indices: extents and implicit-GEMM extents above 2^31 - 1 are not supported.
TEST(ConvValidate, RefusesWhatOverflowsTheKernelsIndices) {
  std::int64_t const big = std::int64_t(1) << 31;
  expect_refused(with(valid2d(), [&](ConvArguments& a) { a.h = big; }), "h", "2^31 - 1", StatusCode::not_supported);
  expect_refused(with(valid2d(), [&](ConvArguments& a) { a.pad_w = big; }), "pad_w", "2^31 - 1", StatusCode::not_supported);
  // n*p*q = 2^20 * 64 * 64 = 2^32 rows of fprop's implicit GEMM.
  ConvArguments m = with_pointers(make_packed_conv2d(Operator::kFprop, std::int64_t(1) << 20, 64, 64, 8, 8, 1, 1));
  expect_refused(m, "n", "implicit GEMM extent n*z*p*q", StatusCode::not_supported);
  // dgrad's rows are n*d*h*w; its sum k/groups*t*r*s.
  ConvArguments d = with_pointers(make_packed_conv2d(Operator::kDgrad, 1, 8, 8, 8, std::int64_t(1) << 28, 3, 3, {1, 1}));
  expect_refused(d, "k", "implicit GEMM extent k/groups*t*r*s", StatusCode::not_supported);
  // An element offset that overflows 64 bits.
  ConvArguments o = valid2d();
  o.x.stride_n = std::int64_t(1) << 62;
  expect_refused(o, "x", "overflows 64 bits");
}

// ---- derived sizes -----------------------------------------------------------------------------------

TEST(ConvArguments, OutputExtentsGemmAndFlops) {
  // ResNet-50's 3x3 C64 layer at batch 128: 56x56 -> 56x56.
  ConvArguments a = make_packed_conv2d(Operator::kFprop, 128, 56, 56, 64, 64, 3, 3, {1, 1});
  ConvOutputExtents e = conv_output_extents(a);
  EXPECT_EQ(e.z, 1);
  EXPECT_EQ(e.p, 56);
  EXPECT_EQ(e.q, 56);
  EXPECT_EQ(conv_group_gemm(a), GemmCoord(128 * 56 * 56, 64, 576));
  EXPECT_DOUBLE_EQ(conv_flops(a), 2.0 * 128 * 56 * 56 * 64 * 576);
  // The stem: 224x224, 7x7 stride 2 pad 3 -> 112x112; dgrad's implicit GEMM has 224^2 rows per
  // image, but the FLOPs are the convolution's (the same for every pass).
  ConvArguments s = make_packed_conv2d(Operator::kDgrad, 128, 224, 224, 3, 64, 7, 7, {3, 3}, {2, 2});
  EXPECT_EQ(conv_output_extents(s).p, 112);
  EXPECT_EQ(conv_group_gemm(s), GemmCoord(128 * 224 * 224, 3, 64 * 49));
  EXPECT_DOUBLE_EQ(conv_flops(s), 2.0 * 128 * 112 * 112 * 64 * 49 * 3);
  // Groups: one group's GEMM; FLOPs over all groups. wgrad: (k/g, t*r*s*c/g, n*z*p*q).
  ConvArguments g = make_packed_conv3d(Operator::kWgrad, 2, 4, 10, 10, 64, 32, 3, 3, 3, {1, 1, 1}, {1, 2, 2}, {1, 1, 1}, 8);
  ConvOutputExtents ge = conv_output_extents(g);
  EXPECT_EQ(ge.z, 4);
  EXPECT_EQ(ge.p, 5);
  EXPECT_EQ(ge.q, 5);
  EXPECT_EQ(conv_group_gemm(g), GemmCoord(4, 27 * 8, 2 * 4 * 5 * 5));
  EXPECT_DOUBLE_EQ(conv_flops(g), 2.0 * 2 * 4 * 5 * 5 * 32 * 27 * 8);
  // Dilation 2 with pad 2 keeps 16x16.
  ConvArguments d = make_packed_conv2d(Operator::kFprop, 1, 16, 16, 8, 8, 3, 3, {2, 2}, {1, 1}, {2, 2});
  EXPECT_EQ(conv_output_extents(d).p, 16);
}

TEST(ConvArguments, PackedStridesAndSpans) {
  ConvArguments a = make_packed_conv2d(Operator::kFprop, 3, 9, 11, 6, 9, 3, 3, {1, 1}, {2, 2}, {1, 1}, 3);
  EXPECT_EQ(a.spatial_dims, 2);
  EXPECT_EQ(a.x.stride_w, 6);
  EXPECT_EQ(a.x.stride_h, 11 * 6);
  EXPECT_EQ(a.x.stride_n, 9 * 11 * 6);
  ConvOutputExtents const e = conv_output_extents(a);  // 5 x 6
  EXPECT_EQ(e.p, 5);
  EXPECT_EQ(e.q, 6);
  EXPECT_EQ(a.y.stride_h, 6 * 9);
  EXPECT_EQ(a.y.stride_n, 5 * 6 * 9);
  EXPECT_EQ(a.filter.stride_k, 3 * 3 * 2);
  EXPECT_EQ(conv_tensor_span(a, ConvOperand::x), 3 * 9 * 11 * 6);
  EXPECT_EQ(conv_tensor_span(a, ConvOperand::y), 3 * 5 * 6 * 9);
  EXPECT_EQ(conv_tensor_span(a, ConvOperand::filter), 9 * 18);
  a.x.stride_w = 8;  // padded channels: the last pixel holds only c elements
  a.x.stride_h = 11 * 8, a.x.stride_n = 9 * 11 * 8;
  EXPECT_EQ(conv_tensor_span(a, ConvOperand::x), 3 * 9 * 11 * 8 - 2);
  a.n = 0;
  EXPECT_EQ(conv_tensor_span(a, ConvOperand::x), 0);
  EXPECT_EQ(conv_output_operand(Operator::kDgrad), ConvOperand::x);
  EXPECT_EQ(conv_output_operand(Operator::kWgrad), ConvOperand::filter);
}

TEST(ConvEpilogueActivation, FormulasAndSlopes) {
  EXPECT_EQ(conv_activate(ConvActivation::none, -2.5), -2.5);
  EXPECT_EQ(conv_activate(ConvActivation::relu, -2.5), 0.0);
  EXPECT_EQ(conv_activate(ConvActivation::relu, 2.5), 2.5);
  EXPECT_TRUE(std::isnan(conv_activate(ConvActivation::relu, std::nan(""))));
  EXPECT_NEAR(conv_activate(ConvActivation::gelu, 1.0), 0.8411919906, 1e-9);  // torch gelu(1, approximate="tanh")
  EXPECT_NEAR(conv_activate(ConvActivation::silu, 1.0), 0.7310585786, 1e-9);
  // The slope bounds hold: a fine scan of |act'| stays below them.
  for (ConvActivation act : {ConvActivation::gelu, ConvActivation::silu}) {
    double worst = 0;
    for (double z = -10; z < 10; z += 1e-3)
      worst = std::max(worst, std::fabs(conv_activate(act, z + 1e-6) - conv_activate(act, z)) / 1e-6);
    EXPECT_LE(worst, conv_activation_slope(act)) << to_string(act);
    EXPECT_GT(worst, conv_activation_slope(act) - 0.01) << to_string(act);
  }
}
