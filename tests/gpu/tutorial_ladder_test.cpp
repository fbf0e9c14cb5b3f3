// Every rung of the SIMT ladder (examples/tutorial/) on ragged and aligned shapes, against the
// fp64 GPU reference: random inputs, C poisoned with NaN when beta == 0 (C must not be read),
// alpha/beta with C read otherwise, padded leading dimensions, K below a k-tile.
#include "gpu/gpu_test.hpp"

#include "tutorial.hpp"

#include <tessel/reference/gemm_device.hpp>

#include <cmath>
#include <string>

namespace {

struct Case {
  int m, n, k;
  int pad;  // extra elements per row of A, B and C (changes alignment)
  float alpha, beta;
};

void check_rung(tutorial::Rung const& r, Case const& c) {
  int const lda = c.k + c.pad, ldb = c.n + c.pad, ldc = c.n + c.pad;
  std::size_t const na = std::size_t(c.m) * lda, nb = std::size_t(c.k) * ldb, nc = std::size_t(c.m) * ldc;
  float *a = nullptr, *b = nullptr, *cc = nullptr;
  double *ref = nullptr, *scale = nullptr;
  ASSERT_EQ(cudaMalloc(&a, 4 * na), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&b, 4 * nb), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&cc, 4 * nc), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&ref, 8 * std::size_t(c.m) * c.n), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&scale, 8 * std::size_t(c.m) * c.n), cudaSuccess);
  ASSERT_TRUE(tessel::reference::fill_uniform_device(a, tessel::DType::f32, na, 100 + c.m).ok());
  ASSERT_TRUE(tessel::reference::fill_uniform_device(b, tessel::DType::f32, nb, 200 + c.n).ok());
  if (c.beta == 0.0f)
    ASSERT_TRUE(tessel::reference::fill_constant_device(cc, tessel::DType::f32, nc, NAN).ok());
  else
    ASSERT_TRUE(tessel::reference::fill_uniform_device(cc, tessel::DType::f32, nc, 300 + c.k).ok());

  tessel::GemmArguments g = tessel::make_packed_gemm(c.m, c.n, c.k, 1, tessel::DType::f32, tessel::DType::f32,
                                                     tessel::MatrixOrder::row_major, tessel::MatrixOrder::row_major,
                                                     tessel::MatrixOrder::row_major);
  g.lda = lda, g.ldb = ldb, g.ldc = g.ldd = ldc;
  g.a = a, g.b = b, g.c = cc, g.d = cc, g.alpha = c.alpha, g.beta = c.beta;
  ASSERT_TRUE(tessel::reference::gemm_device(g, ref, scale).ok());  // from C before the rung overwrites it
  r.launch(tutorial::Gemm{c.m, c.n, c.k, c.alpha, c.beta, a, lda, b, ldb, cc, ldc}, nullptr);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess) << r.file;
  tessel::reference::GemmCheck chk;
  ASSERT_TRUE(tessel::reference::check_device(g, ref, scale, tessel::reference::gemm_tolerance(tessel::DType::f32, tessel::DType::f32, c.k), &chk).ok());
  EXPECT_TRUE(chk.passed()) << r.file << " on " << c.m << "x" << c.n << "x" << c.k << " pad " << c.pad << " alpha "
                            << c.alpha << " beta " << c.beta << ": " << chk.describe();
  cudaFree(a), cudaFree(b), cudaFree(cc), cudaFree(ref), cudaFree(scale);
}

class Ladder : public ::testing::TestWithParam<int> {};

}  // namespace

TEST_P(Ladder, RaggedAndAlignedShapes) {
  TESSEL_REQUIRE_GPU();
  tutorial::Rung const& r = tutorial::rungs()[GetParam()];
  Case const cases[] = {
      {1, 1, 1, 0, 1.0f, 0.0f},           // one element
      {17, 33, 65, 0, 1.5f, -0.5f},       // nothing is a tile multiple
      {17, 33, 65, 0, 1.0f, 0.0f},        // C poisoned, must not be read
      {130, 129, 5, 0, 1.0f, 0.0f},       // K below one k-tile
      {256, 256, 256, 0, 1.0f, 0.0f},     // aligned: 128-bit loads in rungs 06-08
      {300, 260, 61, 3, 0.75f, 2.0f},     // aligned K-tail ... with padding that breaks alignment
      {300, 260, 61, 4, 0.75f, 2.0f},     // padded, aligned, partial float4 at the K edge
      {4095, 4097, 4099, 0, 1.0f, 0.0f},  // the big ragged one
  };
  for (Case const& c : cases) check_rung(r, c);
}

INSTANTIATE_TEST_SUITE_P(Rungs, Ladder, ::testing::Range(0, 8), [](auto const& info) {
  std::string f = tutorial::rungs()[info.param].file;
  f = f.substr(0, f.find('.'));
  return "rung_" + f;
});
