// The pure rules behind a convolution's route (no GPU): which 1x1 convolutions are one plain GEMM
// and the GEMM arguments they become (tessel/conv/conv_as_gemm.hpp), and how a split wgrad cuts
// its reduction into slices (tessel/conv/conv_split.hpp).
#include <tessel/conv/conv_as_gemm.hpp>
#include <tessel/conv/conv_split.hpp>
#include <tessel/conv/conv_validate.hpp>
#include <tessel/gemm/device/gemm_validate.hpp>
#include <tessel/numeric/float_bits.hpp>
#include <tessel/reference/gemm_host.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

using namespace tessel;
using conv::Operator;
using detail::bf16_bits_to_float;
using detail::float_to_bf16_bits;
using reference::gemm_host;
using reference::HostReference;

namespace {

alignas(256) unsigned char storage[1024];
void* const kX = storage;
void* const kW = storage + 256;
void* const kY = storage + 512;
void* const kRes = storage + 768;

// A packed 1x1 problem with its pointers: x at kX, filters at kW, y at kY, out the pass's output.
ConvArguments one_by_one(Operator op, std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c, std::int64_t k) {
  ConvArguments a = make_packed_conv2d(op, n, h, w, c, k, 1, 1);
  a.x.ptr = kX, a.filter.ptr = kW, a.y.ptr = kY;
  a.out = op == Operator::kFprop ? kY : op == Operator::kDgrad ? kX : kW;
  return a;
}

}  // namespace

TEST(ConvRowsEvenlyStrided, WorkedExampleAndRefusals) {
  std::int64_t step = 0;
  // The header's example: extents (2, 1, 3, 4), strides (96, 7, 32, 8), 8 channels.
  EXPECT_TRUE(conv_rows_evenly_strided({2, 1, 3, 4}, {96, 7, 32, 8}, 8, &step));
  EXPECT_EQ(step, 8);
  // A padded row (h stride 40 != 4 * 8), a padded image (n stride 100 != 12 * 8).
  EXPECT_FALSE(conv_rows_evenly_strided({2, 1, 3, 4}, {96, 7, 40, 8}, 8, &step));
  EXPECT_FALSE(conv_rows_evenly_strided({2, 1, 3, 4}, {100, 7, 32, 8}, 8, &step));
  // A wider pixel step than the channels (a channel slice of a wider tensor) is one step.
  EXPECT_TRUE(conv_rows_evenly_strided({2, 1, 3, 4}, {192, 192, 64, 16}, 8, &step));
  EXPECT_EQ(step, 16);
  // w = 1: the h stride is the step.
  EXPECT_TRUE(conv_rows_evenly_strided({2, 1, 3, 1}, {30, 0, 10, 3}, 8, &step));
  EXPECT_EQ(step, 10);
  // One pixel: the channels are the step; any strides.
  EXPECT_TRUE(conv_rows_evenly_strided({1, 1, 1, 1}, {5, 3, 2, 1}, 8, &step));
  EXPECT_EQ(step, 8);
  // Rows that would overlap (a step below the channels) are no matrix.
  EXPECT_FALSE(conv_rows_evenly_strided({1, 1, 1, 4}, {0, 0, 0, 4}, 8, &step));
}

TEST(ConvAsGemm, FpropIsXTimesWTransposed) {
  ConvArguments a = one_by_one(Operator::kFprop, 2, 4, 4, 64, 32);  // the header's example
  GemmArguments g;
  ASSERT_TRUE(conv_as_gemm(a, &g));
  EXPECT_EQ(g.m, 32);
  EXPECT_EQ(g.n, 32);
  EXPECT_EQ(g.k, 64);
  EXPECT_EQ(g.a, kX);
  EXPECT_EQ(g.lda, 64);
  EXPECT_EQ(g.a_order, MatrixOrder::row_major);
  EXPECT_EQ(g.b, kW);
  EXPECT_EQ(g.ldb, 64);
  EXPECT_EQ(g.b_order, MatrixOrder::col_major);
  EXPECT_EQ(g.d, kY);
  EXPECT_EQ(g.ldd, 32);
  EXPECT_EQ(g.c_order, MatrixOrder::row_major);
  EXPECT_EQ(g.a_type, DType::bf16);
  EXPECT_EQ(g.c_type, DType::bf16);
  EXPECT_EQ(g.c, nullptr);
  EXPECT_EQ(g.beta, 0.0f);
  EXPECT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
}

TEST(ConvAsGemm, DgradIsDyTimesW) {
  ConvArguments a = one_by_one(Operator::kDgrad, 3, 5, 7, 24, 40);
  a.dtype = DType::f16;
  GemmArguments g;
  ASSERT_TRUE(conv_as_gemm(a, &g));
  EXPECT_EQ(g.m, 3 * 5 * 7);
  EXPECT_EQ(g.n, 24);
  EXPECT_EQ(g.k, 40);
  EXPECT_EQ(g.a, kY);
  EXPECT_EQ(g.lda, 40);
  EXPECT_EQ(g.a_order, MatrixOrder::row_major);
  EXPECT_EQ(g.b, kW);
  EXPECT_EQ(g.ldb, 24);
  EXPECT_EQ(g.b_order, MatrixOrder::row_major);
  EXPECT_EQ(g.d, kX);
  EXPECT_EQ(g.ldd, 24);
  EXPECT_EQ(g.a_type, DType::f16);
  EXPECT_EQ(g.c_type, DType::f16);
  EXPECT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
}

TEST(ConvAsGemm, WgradIsDyTransposedTimesX) {
  ConvArguments a = one_by_one(Operator::kWgrad, 2, 6, 6, 16, 48);
  GemmArguments g;
  ASSERT_TRUE(conv_as_gemm(a, &g));
  EXPECT_EQ(g.m, 48);
  EXPECT_EQ(g.n, 16);
  EXPECT_EQ(g.k, 2 * 6 * 6);
  EXPECT_EQ(g.a, kY);
  EXPECT_EQ(g.lda, 48);
  EXPECT_EQ(g.a_order, MatrixOrder::col_major);
  EXPECT_EQ(g.b, kX);
  EXPECT_EQ(g.ldb, 16);
  EXPECT_EQ(g.b_order, MatrixOrder::row_major);
  EXPECT_EQ(g.d, kW);
  EXPECT_EQ(g.ldd, 16);
  EXPECT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
}

// alpha, beta and the residual are the GEMM's alpha, beta and C with D's leading dimension; the
// caller's workspace passes through; a 3-D problem and dilation are still one GEMM; a non-packed
// but evenly strided tensor keeps its step as the leading dimension.
TEST(ConvAsGemm, EpilogueWorkspaceThreeDAndSteps) {
  ConvArguments a = one_by_one(Operator::kFprop, 2, 4, 4, 64, 32);
  a.alpha = 1.5f, a.beta = -0.5f, a.residual = kRes;
  a.workspace = storage, a.workspace_bytes = 1024;
  a.dilation_h = 3, a.dilation_w = 2;
  a.y.stride_w = 40, a.y.stride_h = 160, a.y.stride_d = a.y.stride_n = 640;
  ASSERT_TRUE(conv_validate(a).ok()) << conv_validate(a).reason;
  GemmArguments g;
  ASSERT_TRUE(conv_as_gemm(a, &g));
  EXPECT_EQ(g.alpha, 1.5f);
  EXPECT_EQ(g.beta, -0.5f);
  EXPECT_EQ(g.c, kRes);
  EXPECT_EQ(g.ldc, 40);
  EXPECT_EQ(g.ldd, 40);
  EXPECT_EQ(g.workspace, storage);
  EXPECT_EQ(g.workspace_bytes, 1024u);
  EXPECT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;

  ConvArguments d3 = make_packed_conv3d(Operator::kDgrad, 2, 3, 4, 5, 16, 8, 1, 1, 1);
  d3.x.ptr = kX, d3.filter.ptr = kW, d3.y.ptr = kY, d3.out = kX;
  ASSERT_TRUE(conv_as_gemm(d3, &g));
  EXPECT_EQ(g.m, 2 * 3 * 4 * 5);
  EXPECT_EQ(g.n, 16);
  EXPECT_EQ(g.k, 8);
}

// What is not one plain GEMM stays on the convolution kernels.
TEST(ConvAsGemm, RefusesWhatIsNotOnePlainGemm) {
  GemmArguments g;
  ConvArguments const base = one_by_one(Operator::kFprop, 2, 6, 6, 16, 16);
  ASSERT_TRUE(conv_as_gemm(base, &g));
  auto refused = [&](auto change) {
    ConvArguments a = base;
    change(a);
    return !conv_as_gemm(a, &g);
  };
  EXPECT_TRUE(refused([](ConvArguments& a) { a.r = a.s = 3, a.pad_h = a.pad_w = 1; }));   // a 3x3 filter
  EXPECT_TRUE(refused([](ConvArguments& a) { a.stride_h = a.stride_w = 2; }));            // strided
  EXPECT_TRUE(refused([](ConvArguments& a) { a.pad_h = 1; }));                            // padded
  EXPECT_TRUE(refused([](ConvArguments& a) { a.groups = 2; }));                           // grouped
  EXPECT_TRUE(refused([](ConvArguments& a) { a.bias = reinterpret_cast<float const*>(kRes); }));  // bias
  EXPECT_TRUE(refused([](ConvArguments& a) { a.activation = ConvActivation::relu; }));   // activation
  EXPECT_TRUE(refused([](ConvArguments& a) { a.x.stride_h += 8, a.x.stride_n = a.x.stride_h * 6; }));  // padded x rows
  EXPECT_TRUE(refused([](ConvArguments& a) { a.y.stride_n += 16; }));                      // padded y images
}

// A strided 1x1 dgrad: one batched GEMM on the grid of dx (conv_strided_as_grid_gemm).
TEST(ConvAsGridGemm, WorkedExample) {
  ConvArguments a = make_packed_conv2d(Operator::kDgrad, 8, 56, 56, 512, 1024, 1, 1, {0, 0}, {2, 2}, {1, 1}, 1, DType::bf16);
  a.x.ptr = kX, a.filter.ptr = kW, a.y.ptr = kY, a.out = kX;
  GemmArguments g;
  EXPECT_FALSE(conv_as_gemm(a, &g));
  ASSERT_TRUE(conv_strided_as_grid_gemm(a, &g));  // the header's example
  EXPECT_EQ(g.m, 8 * 28);
  EXPECT_EQ(g.n, 512);
  EXPECT_EQ(g.k, 1024);
  EXPECT_EQ(g.batch_count, 28);
  EXPECT_EQ(g.lda, 28 * 1024);
  EXPECT_EQ(g.batch_stride_a, 1024);
  EXPECT_EQ(g.ldb, 512);
  EXPECT_EQ(g.batch_stride_b, 0);
  EXPECT_EQ(g.ldd, 2 * 56 * 512);
  EXPECT_EQ(g.batch_stride_d, 2 * 512);
  EXPECT_EQ(g.c, nullptr);
  EXPECT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
}

// One image of one row: a row's pixels are the GEMM's M, one batch per row.
TEST(ConvAsGridGemm, LongRowsAreTheRowsOfTheGemm) {
  ConvArguments a = make_packed_conv2d(Operator::kDgrad, 1, 2, 64, 16, 32, 1, 1, {0, 0}, {2, 2}, {1, 1}, 1, DType::bf16);
  a.x.ptr = kX, a.filter.ptr = kW, a.y.ptr = kY, a.out = kX;
  GemmArguments g;
  ASSERT_TRUE(conv_strided_as_grid_gemm(a, &g));
  EXPECT_EQ(g.m, 32);  // q
  EXPECT_EQ(g.batch_count, 1);
  EXPECT_EQ(g.lda, 32);
  EXPECT_EQ(g.ldd, 2 * 16);
  EXPECT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
}

// The grid GEMM computes dx at (n, sh*p, sw*q) = sum_k dy(n, p, q, k) w(k, c) (dgrad), or
// y(n, p, q, k) = sum_c x(n, sh*p, sw*q, c) w(k, c) (fprop), checked on the host: the GEMM
// reference run on the mapped arguments against the sum written out directly, every row reading
// its y pixel (dgrad) or grid pixel of x (fprop) and writing the other, and the rows covering
// every y pixel once. Small integers: exact.
TEST(ConvAsGridGemm, WritesExactlyTheGrid) {
  for (Operator op : {Operator::kDgrad, Operator::kFprop})
    for (auto [n, h, w, sh, sw] :
         {std::array<std::int64_t, 5>{2, 6, 4, 2, 2}, {1, 7, 5, 2, 3}, {3, 9, 6, 3, 2}, {1, 2, 9, 2, 1}, {1, 3, 12, 2, 2}}) {
      SCOPED_TRACE(std::string(conv::to_string(op)) + " " + std::to_string(n) + "x" + std::to_string(h) + "x" + std::to_string(w));
      std::int64_t const c = 3, k = 5;
      bool const dgrad = op == Operator::kDgrad;
      ConvArguments a = make_packed_conv2d(op, n, h, w, c, k, 1, 1, {0, 0}, {sh, sw}, {1, 1}, 1, DType::bf16);
      std::int64_t const p = (h - 1) / sh + 1, q = (w - 1) / sw + 1;
      std::vector<std::uint16_t> y(std::size_t(n * p * q * k)), filt(std::size_t(k * c)), x(std::size_t(n * h * w * c));
      for (std::size_t i = 0; i < y.size(); ++i) y[i] = float_to_bf16_bits(float(int(i % 7) - 3));
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = float_to_bf16_bits(float(int(i % 9) - 4));
      for (std::size_t i = 0; i < filt.size(); ++i) filt[i] = float_to_bf16_bits(float(int(i % 5) - 2));
      a.y.ptr = y.data(), a.filter.ptr = filt.data(), a.x.ptr = x.data(), a.out = dgrad ? x.data() : y.data();
      GemmArguments g;
      ASSERT_TRUE(conv_strided_as_grid_gemm(a, &g));
      ASSERT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
      HostReference const ref = gemm_host(g);
      std::set<std::int64_t> seen;
      for (std::int64_t b = 0; b < g.batch_count; ++b)
        for (std::int64_t i = 0; i < g.m; ++i) {
          // The y pixel (nn, pp, qq) of the row: dgrad reads it, fprop writes it.
          std::int64_t const at = dgrad ? b * g.batch_stride_a + i * g.lda : b * g.batch_stride_d + i * g.ldd;
          std::int64_t const nn = at / a.y.stride_n, pp = at % a.y.stride_n / a.y.stride_h,
                             qq = at % a.y.stride_h / a.y.stride_w;
          ASSERT_EQ(at % a.y.stride_w, 0);
          ASSERT_TRUE(nn < n && pp < p && qq < q) << "batch " << b << " row " << i;
          EXPECT_TRUE(seen.insert(at).second) << "y pixel met twice: batch " << b << " row " << i;
          std::int64_t const grid = nn * a.x.stride_n + pp * sh * a.x.stride_h + qq * sw * a.x.stride_w;
          EXPECT_EQ(dgrad ? b * g.batch_stride_d + i * g.ldd : b * g.batch_stride_a + i * g.lda, grid)
              << "batch " << b << " row " << i;
          for (std::int64_t j = 0; j < g.n; ++j) {
            double sum = 0.0;
            if (dgrad)
              for (std::int64_t kk = 0; kk < k; ++kk)
                sum += bf16_bits_to_float(y[std::size_t(at + kk)]) * bf16_bits_to_float(filt[std::size_t(kk * c + j)]);
            else
              for (std::int64_t cc = 0; cc < c; ++cc)
                sum += bf16_bits_to_float(x[std::size_t(grid + cc)]) * bf16_bits_to_float(filt[std::size_t(j * c + cc)]);
            EXPECT_EQ(ref.r[std::size_t((b * g.m + i) * g.n + j)], sum);
          }
        }
      EXPECT_EQ(std::int64_t(seen.size()), n * p * q);
    }
}

// What is not that one batched GEMM stays on the kernels. (An fprop may read its residual in place:
// it has no first pass.)
TEST(ConvAsGridGemm, RefusesWhatIsNotOneBatchedGemm) {
  ConvArguments const base = make_packed_conv2d(Operator::kDgrad, 2, 8, 8, 16, 32, 1, 1, {0, 0}, {2, 2}, {1, 1}, 1,
                                                DType::bf16);
  GemmArguments g;
  auto with = [&](auto change) {
    ConvArguments a = base;
    a.x.ptr = kX, a.filter.ptr = kW, a.y.ptr = kY, a.out = kX;
    change(a);
    return conv_strided_as_grid_gemm(a, &g);
  };
  EXPECT_TRUE(with([](ConvArguments&) {}));
  EXPECT_FALSE(with([](ConvArguments& a) { a.stride_h = a.stride_w = 1; }));               // conv_as_gemm's
  EXPECT_TRUE(with([](ConvArguments& a) { a.op = Operator::kFprop, a.out = kY; }));        // fprop
  EXPECT_TRUE(with([](ConvArguments& a) { a.op = Operator::kFprop, a.out = kY, a.residual = kY, a.beta = 1.0f; }));
  EXPECT_FALSE(with([](ConvArguments& a) { a.op = Operator::kWgrad, a.out = kW; }));       // wgrad
  EXPECT_FALSE(with([](ConvArguments& a) { a.pad_h = 1; }));                               // padded
  EXPECT_FALSE(with([](ConvArguments& a) { a.r = a.s = 3; }));                             // 3x3
  EXPECT_FALSE(with([](ConvArguments& a) { a.bias = reinterpret_cast<float const*>(kRes); }));
  EXPECT_FALSE(with([](ConvArguments& a) { a.residual = kX, a.beta = 1.0f; }));            // the residual is out
  EXPECT_TRUE(with([](ConvArguments& a) { a.residual = kRes, a.beta = 1.0f; }));           // another residual
  // h = 7 at stride 2 (p = 4): image n+1 starts 7 rows on, not 8: the rows (n, p) are no one step.
  EXPECT_FALSE(with([](ConvArguments& a) {
    a.h = 7, a.x.stride_n = 7 * 8 * 16, a.y.stride_n = 4 * 4 * 32;
  }));
}

// A strided 1x1 wgrad: one batched GEMM whose batches are K slices of dw (conv_strided_wgrad_as_gemm_slices).
TEST(ConvAsGemmSlices, WorkedExample) {
  ConvArguments a = make_packed_conv2d(Operator::kWgrad, 64, 56, 56, 512, 1024, 1, 1, {0, 0}, {2, 2}, {1, 1}, 1, DType::bf16);
  a.x.ptr = kX, a.filter.ptr = kW, a.y.ptr = kY, a.out = kW;
  GemmArguments g;
  EXPECT_FALSE(conv_as_gemm(a, &g));
  EXPECT_FALSE(conv_strided_as_grid_gemm(a, &g));
  ASSERT_TRUE(conv_strided_wgrad_as_gemm_slices(a, &g));  // the header's example
  EXPECT_EQ(g.m, 1024);
  EXPECT_EQ(g.n, 512);
  EXPECT_EQ(g.k, 64 * 28);
  EXPECT_EQ(g.batch_count, 28);
  EXPECT_EQ(g.a_order, MatrixOrder::col_major);
  EXPECT_EQ(g.lda, 28 * 1024);
  EXPECT_EQ(g.batch_stride_a, 1024);
  EXPECT_EQ(g.b_order, MatrixOrder::row_major);
  EXPECT_EQ(g.ldb, 2 * 56 * 512);
  EXPECT_EQ(g.batch_stride_b, 2 * 512);
  EXPECT_EQ(g.c_type, DType::f32);
  EXPECT_EQ(g.ldd, 512);
  EXPECT_EQ(g.batch_stride_d, 1024 * 512);
  EXPECT_EQ(g.d, nullptr);
  EXPECT_EQ(g.alpha, 1.0f);
  EXPECT_EQ(g.beta, 0.0f);
  g.d = kW;
  EXPECT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
  // Too many slices (q = 56 > 32), too few pixels a slice (8 rows; 896), and the other passes.
  EXPECT_FALSE(conv_strided_wgrad_as_gemm_slices(
      make_packed_conv2d(Operator::kWgrad, 128, 224, 112, 64, 64, 1, 1, {0, 0}, {2, 2}, {1, 1}, 1, DType::bf16), &g));
  EXPECT_FALSE(conv_strided_wgrad_as_gemm_slices(
      make_packed_conv2d(Operator::kWgrad, 1, 16, 16, 64, 64, 1, 1, {0, 0}, {2, 2}, {1, 1}, 1, DType::bf16), &g));
  EXPECT_FALSE(conv_strided_wgrad_as_gemm_slices(
      make_packed_conv2d(Operator::kWgrad, 128, 14, 14, 1024, 2048, 1, 1, {0, 0}, {2, 2}, {1, 1}, 1, DType::bf16), &g));
  a.op = Operator::kDgrad;
  EXPECT_FALSE(conv_strided_wgrad_as_gemm_slices(a, &g));
}

// The slices' GEMM, summed over its batches, is dw(k, c) = sum_{n,p,q} dy(n, p, q, k) x(n, sh*p,
// sw*q, c), on the host (the GEMM reference on the mapped arguments; small integers: exact), in
// both orientations.
TEST(ConvAsGemmSlices, SlicesSumToTheWeightGradient) {
  for (auto [n, h, w, sh, sw] : {std::array<std::int64_t, 5>{64, 32, 8, 2, 2}, {1, 2, 2048, 2, 2}, {4, 768, 10, 3, 2}}) {
    SCOPED_TRACE(std::to_string(n) + "x" + std::to_string(h) + "x" + std::to_string(w));
    std::int64_t const c = 3, k = 5;
    ConvArguments a = make_packed_conv2d(Operator::kWgrad, n, h, w, c, k, 1, 1, {0, 0}, {sh, sw}, {1, 1}, 1, DType::bf16);
    std::int64_t const p = (h - 1) / sh + 1, q = (w - 1) / sw + 1;
    std::vector<std::uint16_t> y(std::size_t(n * p * q * k)), x(std::size_t(n * h * w * c)), dw(std::size_t(k * c));
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = float_to_bf16_bits(float(int(i % 7) - 3));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = float_to_bf16_bits(float(int(i % 9) - 4));
    a.y.ptr = y.data(), a.x.ptr = x.data(), a.filter.ptr = dw.data(), a.out = dw.data();
    GemmArguments g;
    ASSERT_TRUE(conv_strided_wgrad_as_gemm_slices(a, &g));
    std::vector<float> slices(std::size_t(g.batch_count * k * c));
    g.d = slices.data();
    ASSERT_TRUE(gemm_validate(g).ok()) << gemm_validate(g).reason;
    HostReference const ref = gemm_host(g);
    for (std::int64_t kk = 0; kk < k; ++kk)
      for (std::int64_t cc = 0; cc < c; ++cc) {
        double want = 0.0, got = 0.0;
        for (std::int64_t nn = 0; nn < n; ++nn)
          for (std::int64_t pp = 0; pp < p; ++pp)
            for (std::int64_t qq = 0; qq < q; ++qq)
              want += bf16_bits_to_float(y[std::size_t(((nn * p + pp) * q + qq) * k + kk)]) *
                      bf16_bits_to_float(x[std::size_t(((nn * h + pp * sh) * w + qq * sw) * c + cc)]);
        for (std::int64_t b = 0; b < g.batch_count; ++b) got += ref.r[std::size_t((b * k + kk) * c + cc)];
        EXPECT_EQ(got, want) << "k " << kk << " c " << cc;
      }
  }
}

TEST(ConvSplit, WorkedExamples) {
  // wgrad 3x3 C64->64 56x56 N128 on 132 SMs: 5 tiles, 12544 k-tiles -> 53 slices of 237.
  ConvSplit s = conv_split_reduction(5, 12544, 132);
  EXPECT_EQ(s.slices, 53);
  EXPECT_EQ(s.k_tiles_per_slice, 237);
  // The same layer at N = 2: 196 k-tiles, at least 16 per slice -> 12 slices of 17.
  s = conv_split_reduction(5, 196, 132);
  EXPECT_EQ(s.slices, 12);
  EXPECT_EQ(s.k_tiles_per_slice, 17);
}

TEST(ConvSplit, NoSplitWhereItCannotPay) {
  EXPECT_EQ(conv_split_reduction(132, 100000, 132).slices, 1);  // the tiles fill the SMs
  EXPECT_EQ(conv_split_reduction(500, 100000, 132).slices, 1);
  EXPECT_EQ(conv_split_reduction(5, 31, 132).slices, 1);        // too short for two slices of 16
  EXPECT_EQ(conv_split_reduction(5, 100000, 0).slices, 1);      // no SMs given: no split
  EXPECT_EQ(conv_split_reduction(5, 31, 132).k_tiles_per_slice, 31);
}

// The sm_90a weight gradient's slice count on the layers whose slice counts were swept on an H200
// (conv_split.hpp has the times): the fastest count measured on each, or one within 1% of it. The
// sweeps ran the 256-column tiles the kernels had then; the tile counts below are theirs.
TEST(ConvSplit, Sm90WgradSlicesOfTheMeasuredLayers) {
  EXPECT_EQ(conv_sm90_wgrad_slices(3, 6272, 132), 44);  // 56x56 C64: 64x256 tiles over 576 columns; one wave
  EXPECT_EQ(conv_sm90_wgrad_slices(5, 1568, 132), 26);  // 28x28 C128: one wave of 130 units
  EXPECT_EQ(conv_sm90_wgrad_slices(18, 392, 132), 7);   // 14x14 C256: one wave (126) rather than three (22 slices)
  EXPECT_EQ(conv_sm90_wgrad_slices(72, 98, 132), 3);    // 7x7 C512: two waves of 33 k-tiles (1 slice measured the same)
  EXPECT_EQ(conv_sm90_wgrad_slices(36, 512, 132), 3);   // U-Net C320: 108 units, one wave
  EXPECT_EQ(conv_sm90_wgrad_slices(7, 3136, 132), 18);  // 3-D C64: 126 units
}

// Its bounds: slices of at least 16 k-tiles, at most 64 slices, none where the tiles fill the
// GPU or no SMs are given.
TEST(ConvSplit, Sm90WgradSlicesBounds) {
  EXPECT_EQ(conv_sm90_wgrad_slices(5, 31, 132), 1);
  EXPECT_EQ(conv_sm90_wgrad_slices(5, 32, 132), 2);
  EXPECT_EQ(conv_sm90_wgrad_slices(1, 1000000, 132), 64);
  EXPECT_EQ(conv_sm90_wgrad_slices(132, 100000, 132), 1);
  EXPECT_EQ(conv_sm90_wgrad_slices(5, 100000, 0), 1);
  for (std::int64_t sms : {1, 66, 132})
    for (std::int64_t tiles = 1; tiles <= 140; ++tiles)
      for (std::int64_t k_tiles : {1, 16, 31, 32, 100, 392, 1568, 6272, 100000}) {
        int const s = conv_sm90_wgrad_slices(tiles, k_tiles, sms);
        EXPECT_GE(s, 1);
        EXPECT_LE(s, 64);
        if (s > 1) {
          EXPECT_GE(k_tiles, 16 * s) << tiles << " tiles, " << k_tiles << " k-tiles";
        }
      }
}

// Every split covers the k-tiles exactly once: no empty slice, at most the cap, at least the
// minimum length, and (where the sum is long enough) the CTAs the rule aims at.
TEST(ConvSplit, SlicesCoverTheReductionOnce) {
  for (std::int64_t sms : {1, 80, 108, 132})
    for (std::int64_t tiles : {1, 2, 3, 5, 9, 40, 131})
      for (std::int64_t k_tiles : {1, 2, 16, 32, 33, 100, 196, 1000, 12544, 50176, 1000000}) {
        ConvSplit const s = conv_split_reduction(tiles, k_tiles, sms);
        SCOPED_TRACE(testing::Message() << "sms " << sms << " tiles " << tiles << " k_tiles " << k_tiles);
        ASSERT_GE(s.slices, 1);
        ASSERT_LE(s.slices, kConvSplitMaxSlices);
        ASSERT_GE(std::int64_t(s.slices) * s.k_tiles_per_slice, k_tiles);           // covered
        ASSERT_LT(std::int64_t(s.slices - 1) * s.k_tiles_per_slice, k_tiles);       // no empty slice
        if (s.slices > 1) {
          EXPECT_GE(s.k_tiles_per_slice, kConvSplitMinKTiles);
          EXPECT_LT(tiles, sms);
          EXPECT_LE(std::int64_t(s.slices) * tiles, kConvSplitCtasPerSm * sms + tiles);  // no more than the aim
        }
      }
}

TEST(ConvSplit, ForcedSlices) {
  ConvSplit s = conv_split_forced(7, 3);  // 7 k-tiles in 3: 3, 3, 1
  EXPECT_EQ(s.slices, 3);
  EXPECT_EQ(s.k_tiles_per_slice, 3);
  s = conv_split_forced(7, 4);  // 2, 2, 2, 1
  EXPECT_EQ(s.slices, 4);
  EXPECT_EQ(s.k_tiles_per_slice, 2);
  s = conv_split_forced(6, 4);  // ceil(6/4) = 2 per slice: 3 slices (a fourth would be empty)
  EXPECT_EQ(s.slices, 3);
  s = conv_split_forced(5, 9);  // at most one k-tile per slice
  EXPECT_EQ(s.slices, 5);
  EXPECT_EQ(s.k_tiles_per_slice, 1);
  EXPECT_EQ(conv_split_forced(5, 1).slices, 1);
}

TEST(ConvValidate, WorkspaceMustBe256ByteAligned) {
  ConvArguments a = one_by_one(Operator::kWgrad, 2, 6, 6, 16, 48);
  a.workspace = storage + 16, a.workspace_bytes = 512;
  Status const s = conv_validate(a);
  EXPECT_EQ(s.code, StatusCode::invalid_argument);
  EXPECT_EQ(s.reason.rfind("workspace:", 0), 0u) << s.reason;
  a.workspace = storage;
  EXPECT_TRUE(conv_validate(a).ok());
}
