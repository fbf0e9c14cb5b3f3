// Block-scaled fp8 GEMM (GemmArguments::scale_mode block: 1 x 128 scales of A, 128 x 128 of B,
// DeepSeek-V3 style) through tessel::gemm, judged against a float64 reference of the dequantized
// inputs computed here on the host (independent of the library's reference and kernels):
//   R(i, j) = alpha * a_scale * b_scale * sum_k (A(i,k) a_scales(i, k/128)) (B(k,j) b_scales(j/128, k/128))
// Random e4m3 (and e5m2) data uniform in [-2, 2), random positive scales 2^[-6, 6] (the blocks'
// products span orders of magnitude), D poisoned with NaN first, ragged M, N, K (the last K block
// and the last 128-column block of B partial), D in either order, every output type, padded scale
// tensors, batches, split K, alpha/beta, per-tensor factors on top. An element passes when
// |D - R| <= tol * sum_k |terms| (+ C's term), tol from reference::gemm_tolerance; NaN where R is
// finite fails; the first bad coordinate is reported. Needs an sm_90 GPU (the block-scaled kernel
// is sm_90a only); skips visibly elsewhere.
#include "gpu/gemm_test_support.hpp"
#include "gpu/gpu_test.hpp"

#include <tessel/gemm.hpp>
#include <tessel/numeric/float8.hpp>
#include <tessel/reference/gemm_check.hpp>

#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace tessel;

namespace {

struct Case {
  std::int64_t m, n, k;
  MatrixOrder c_order;
  DType cd;
  DType b_type = DType::e4m3;
  std::int64_t batch = 1;
  std::int64_t lda_pad = 0, ldb_pad = 0;  // extra scale-tensor leading dimension (0: packed)
  int splits = 0;                         // GemmOptions::splits (0: the heuristic's)
  float alpha = 1.0f, beta = 0.0f, a_scale = 1.0f, b_scale = 1.0f;
};

std::string describe(Case const& c) {
  return std::to_string(c.batch) + "x" + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) +
         " e4m3x" + to_string(c.b_type) + "->" + to_string(c.cd) +
         (c.c_order == MatrixOrder::row_major ? " D row-major" : " D col-major") + " lds+" + std::to_string(c.lda_pad) +
         "," + std::to_string(c.ldb_pad) + " splits " + std::to_string(c.splits) + " alpha " + std::to_string(c.alpha) +
         " beta " + std::to_string(c.beta);
}

double fp8_value(std::uint8_t bits, DType t) {
  return t == DType::e4m3 ? double(float(float_e4m3_t::bitcast(bits))) : double(float(float_e5m2_t::bitcast(bits)));
}
std::uint8_t fp8_bits(float v, DType t) { return t == DType::e4m3 ? float_e4m3_t(v).raw() : float_e5m2_t(v).raw(); }

double out_value(std::vector<unsigned char> const& d, std::size_t idx, DType t) {
  if (t == DType::f32) {
    float v;
    std::memcpy(&v, d.data() + 4 * idx, 4);
    return v;
  }
  std::uint16_t bits;
  std::memcpy(&bits, d.data() + 2 * idx, 2);
  if (t == DType::bf16) {
    std::uint32_t const w = std::uint32_t(bits) << 16;
    float v;
    std::memcpy(&v, &w, 4);
    return v;
  }
  __half_raw raw;
  raw.x = bits;
  return double(__half2float(__half(raw)));
}

void store_out(std::vector<unsigned char>& d, std::size_t idx, DType t, float v) {
  if (t == DType::f32) {
    std::memcpy(d.data() + 4 * idx, &v, 4);
  } else if (t == DType::bf16) {
    std::uint32_t w;
    std::memcpy(&w, &v, 4);
    std::uint16_t const bits = std::uint16_t(w >> 16);  // truncation: C's values need no rounding care
    std::memcpy(d.data() + 2 * idx, &bits, 2);
  } else {
    __half_raw const raw = __half(v);
    std::memcpy(d.data() + 2 * idx, &raw.x, 2);
  }
}

void run_case(Case const& c, std::uint64_t seed) {
  SCOPED_TRACE(describe(c));
  // "tn" operands, as cuBLASLt's fp8 takes them: A row-major M x K, B column-major K x N.
  GemmArguments g = make_packed_gemm(c.m, c.n, c.k, c.batch, DType::e4m3, c.cd, MatrixOrder::row_major,
                                     MatrixOrder::col_major, c.c_order);
  g.b_type = c.b_type;
  g.alpha = c.alpha, g.beta = c.beta, g.a_scale = c.a_scale, g.b_scale = c.b_scale;
  g.scale_mode = ScaleMode::block;
  g.options.splits = c.splits;
  std::int64_t const kb = gemm_scale_blocks(c.k), nb = gemm_scale_blocks(c.n);
  g.ld_a_scales = c.lda_pad > 0 ? c.m + c.lda_pad : 0;
  g.ld_b_scales = c.ldb_pad > 0 ? kb + c.ldb_pad : 0;
  std::int64_t const lda_s = gemm_ld_a_scales(g), ldb_s = gemm_ld_b_scales(g);

  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f), exponent(-6.0f, 6.0f);
  std::size_t const na = std::size_t(g.batch_stride_a * c.batch), nbytes_b = std::size_t(g.batch_stride_b * c.batch);
  std::vector<std::uint8_t> a(na), b(nbytes_b);
  for (auto& x : a) x = fp8_bits(value(rng), DType::e4m3);
  for (auto& x : b) x = fp8_bits(value(rng), c.b_type);
  std::size_t const n_as = std::size_t(c.batch * kb * lda_s), n_bs = std::size_t(c.batch * nb * ldb_s);
  std::vector<float> as(n_as), bs(n_bs);
  for (auto& x : as) x = std::exp2(exponent(rng));
  for (auto& x : bs) x = std::exp2(exponent(rng));
  std::size_t const ob = size_of(c.cd), nd = std::size_t(g.batch_stride_d * c.batch);
  std::vector<unsigned char> cbuf(nd * ob), dbuf(nd * ob, 0xff);  // D poisoned: all-ones bits are NaN in every output type
  for (std::size_t i = 0; i < nd; ++i) store_out(cbuf, i, c.cd, value(rng));

  DeviceMem da(na), db(nbytes_b), das(n_as * 4), dbs(n_bs * 4), dc(nd * ob), dd(nd * ob);
  ASSERT_TRUE(da.p && db.p && das.p && dbs.p && dc.p && dd.p);
  TESSEL_CUDA_OK(cudaMemcpy(da.p, a.data(), na, cudaMemcpyHostToDevice));
  TESSEL_CUDA_OK(cudaMemcpy(db.p, b.data(), nbytes_b, cudaMemcpyHostToDevice));
  TESSEL_CUDA_OK(cudaMemcpy(das.p, as.data(), n_as * 4, cudaMemcpyHostToDevice));
  TESSEL_CUDA_OK(cudaMemcpy(dbs.p, bs.data(), n_bs * 4, cudaMemcpyHostToDevice));
  TESSEL_CUDA_OK(cudaMemcpy(dc.p, cbuf.data(), nd * ob, cudaMemcpyHostToDevice));
  TESSEL_CUDA_OK(cudaMemcpy(dd.p, dbuf.data(), nd * ob, cudaMemcpyHostToDevice));
  g.a = da.p, g.b = db.p, g.c = dc.p, g.d = dd.p;
  g.a_scales = static_cast<float const*>(das.p), g.b_scales = static_cast<float const*>(dbs.p);

  GemmKernelInfo const* k = select_gemm_kernel(g);
  ASSERT_NE(k, nullptr);
  EXPECT_STREQ(k->name, "sm90_e4m3_128x256x128_c2_blockscaled");
  Status const s = gemm(g);
  ASSERT_TRUE(s.ok()) << s.reason;
  TESSEL_CUDA_OK(cudaDeviceSynchronize());
  TESSEL_CUDA_OK(cudaMemcpy(dbuf.data(), dd.p, nd * ob, cudaMemcpyDeviceToHost));

  // The float64 reference, element by element (dequantized A row and B column once per element).
  double const tol = reference::gemm_tolerance(DType::e4m3, c.cd, c.k);
  double const factor = double(c.alpha) * double(c.a_scale) * double(c.b_scale);
  std::int64_t bad = 0;
  std::string first;
  double max_rel = 0.0;
  std::vector<double> arow(std::size_t(c.k)), bdq(std::size_t(c.k * c.n));  // dequantized A row, B (column j at j * K)
  for (std::int64_t bt = 0; bt < c.batch; ++bt) {
    for (std::int64_t j = 0; j < c.n; ++j)
      for (std::int64_t kk = 0; kk < c.k; ++kk)
        bdq[std::size_t(j * c.k + kk)] = fp8_value(b[bt * g.batch_stride_b + j * g.ldb + kk], c.b_type) *
                                         double(bs[bt * nb * ldb_s + (j / 128) * ldb_s + kk / 128]);
    for (std::int64_t i = 0; i < c.m; ++i) {
      for (std::int64_t kk = 0; kk < c.k; ++kk)
        arow[kk] = fp8_value(a[bt * g.batch_stride_a + i * g.lda + kk], DType::e4m3) *
                   double(as[bt * kb * lda_s + (kk / 128) * lda_s + i]);
      for (std::int64_t j = 0; j < c.n; ++j) {
        double sum = 0.0, mag = 0.0;
        double const* const bcol = bdq.data() + j * c.k;
        for (std::int64_t kk = 0; kk < c.k; ++kk) {
          double const t = arow[kk] * bcol[kk];
          sum += t;
          mag += std::fabs(t);
        }
        double r = factor * sum, scale = std::fabs(factor) * mag;
        std::size_t const di = std::size_t(bt * g.batch_stride_d) +
                               std::size_t(c.c_order == MatrixOrder::row_major ? i * g.ldd + j : j * g.ldd + i);
        if (c.beta != 0.0f) {
          double const cv = double(c.beta) * out_value(cbuf, di, c.cd);
          r += cv;
          scale += std::fabs(cv);
        }
        double const got = out_value(dbuf, di, c.cd);
        double const err = std::fabs(got - r);
        bool const ok = std::isfinite(got) && err <= tol * scale + 1e-30;
        if (scale > 0) max_rel = std::max(max_rel, err / scale);
        if (!ok && bad++ == 0)
          first = "batch " + std::to_string(bt) + " (" + std::to_string(i) + ", " + std::to_string(j) + "): got " +
                  std::to_string(got) + ", reference " + std::to_string(r) + ", scale " + std::to_string(scale);
      }
    }
  }
  EXPECT_EQ(bad, 0) << bad << " bad elements (tolerance " << tol << " of the magnitude); first at " << first;
  ::testing::Test::RecordProperty("max_rel_err", std::to_string(max_rel));
}

TEST(Fp8BlockScaled, MatchesTheDequantizedFp64Reference) {
  TESSEL_REQUIRE_SM90();
  Case const cases[] = {
      {1, 1, 1, MatrixOrder::row_major, DType::bf16},
      {1, 1, 1, MatrixOrder::col_major, DType::f32},
      {128, 256, 128, MatrixOrder::row_major, DType::bf16},     // one tile, one block each way
      {200, 300, 1000, MatrixOrder::row_major, DType::bf16},    // K partial in its last block
      {200, 300, 1000, MatrixOrder::col_major, DType::bf16},    // cuBLASLt's tn (D written transposed)
      {129, 257, 129, MatrixOrder::col_major, DType::f16},
      {255, 513, 384, MatrixOrder::row_major, DType::f32},
      {17, 33, 65, MatrixOrder::row_major, DType::f16},         // K smaller than a block
      {640, 1000, 2100, MatrixOrder::col_major, DType::bf16},   // several tiles per CTA? (the walk), N ragged
      {640, 1000, 2100, MatrixOrder::row_major, DType::bf16},
      {300, 700, 1500, MatrixOrder::row_major, DType::bf16, DType::e5m2},  // a mixed pair
      {300, 400, 900, MatrixOrder::col_major, DType::f32, DType::e4m3, 3},  // batched scales
      {300, 400, 900, MatrixOrder::row_major, DType::bf16, DType::e4m3, 1, 5, 3},  // padded scale tensors
      {256, 512, 4000, MatrixOrder::row_major, DType::f32, DType::e4m3, 1, 0, 0, 3},  // split K (fp32 partials)
      {256, 512, 4000, MatrixOrder::col_major, DType::bf16, DType::e4m3, 1, 0, 0, 2},
      {300, 260, 700, MatrixOrder::row_major, DType::bf16, DType::e4m3, 1, 0, 0, 0, 0.5f, 1.0f, 2.0f, 0.25f},  // beta, factors
      {300, 260, 700, MatrixOrder::col_major, DType::f32, DType::e4m3, 1, 0, 0, 0, -1.5f, 0.5f},
  };
  std::uint64_t seed = 43;
  for (Case const& c : cases) run_case(c, seed++);
}

// A larger problem on the full persistent walk (many tiles per CTA, cluster pairs, the split tail
// where the heuristic takes it), still judged element by element on the host.
TEST(Fp8BlockScaled, LargeRaggedProblem) {
  TESSEL_REQUIRE_SM90();
  run_case({2100, 3000, 1100, MatrixOrder::col_major, DType::bf16}, 7);
  run_case({2100, 3000, 1100, MatrixOrder::row_major, DType::bf16}, 8);
}

}  // namespace
