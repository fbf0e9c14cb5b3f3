// The tensor layer on the host: element types, tensors over memory and registers, slicing,
// local_tile/local_partition (seed 004's partitions), identity tensors, recast, and the
// algorithms copy/copy_if/gemm/axpby/fill/clear against plain loops.
#include <tessel/tensor.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace tessel;

TEST(Numeric, HalfRoundsToNearestEven) {
  EXPECT_EQ(half_t(1.0f).raw(), 0x3c00);
  EXPECT_EQ(half_t(-2.0f).raw(), 0xc000);
  EXPECT_EQ(half_t(65504.0f).raw(), 0x7bff);
  EXPECT_EQ(half_t(65520.0f).raw(), 0x7c00);  // rounds up to infinity
  EXPECT_EQ(half_t(2049.0f).raw(), half_t(2048.0f).raw());  // tie -> even
  EXPECT_EQ(float(half_t(2051.0f)), 2052.0f);               // tie -> even
  EXPECT_EQ(half_t(5.9604644775390625e-8f).raw(), 0x0001);  // smallest subnormal
  EXPECT_EQ(half_t(2.98023223876953125e-8f).raw(), 0x0000); // half of it: tie -> 0
  EXPECT_TRUE(std::isnan(float(half_t(std::numeric_limits<float>::quiet_NaN()))));
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {  // every finite half round-trips
    half_t h = half_t::bitcast(std::uint16_t(bits));
    if (((bits >> 10) & 0x1f) == 0x1f) continue;
    ASSERT_EQ(half_t(float(h)).raw(), bits) << bits;
  }
  EXPECT_EQ(float(half_t(1.5f) + half_t(2.0f)), 3.5f);
}

TEST(Numeric, Bfloat16AndTf32Round) {
  EXPECT_EQ(bfloat16_t(1.0f).raw(), 0x3f80);
  EXPECT_EQ(float(bfloat16_t(3.0f)), 3.0f);
  EXPECT_EQ(float(bfloat16_t(1.0f + 0x1p-8f)), 1.0f);              // tie -> even
  EXPECT_EQ(float(bfloat16_t(1.0f + 0x1p-8f + 0x1p-9f)), 1.0f + 0x1p-7f);
  EXPECT_TRUE(std::isnan(float(bfloat16_t(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(float(tfloat32_t(1.0f + 0x1p-11f)), 1.0f);             // tie -> even
  EXPECT_EQ(float(tfloat32_t(1.0f + 0x1p-11f + 0x1p-12f)), 1.0f + 0x1p-10f);
  EXPECT_EQ(sizeof_bits_v<half_t>, 16);
  EXPECT_EQ(sizeof_bits_v<uint128_t>, 128);
  EXPECT_EQ(sizeof(uint_bit_t<64>), 8u);
}

TEST(Tensor, IndexingSlicingAndPrinting) {
  std::vector<int> v(32);
  for (int i = 0; i < 32; ++i) v[i] = i;
  Tensor t = make_tensor(make_gmem_ptr(v.data()), make_shape(4, 8));  // (4,8):(_1,4)
  EXPECT_EQ(to_string(t.layout()), "(4,8):(_1,4)");
  EXPECT_EQ(t(1, 2), 9);
  EXPECT_EQ(t(9), 9);
  EXPECT_EQ(t(make_coord(3, 7)), 31);
  Tensor col = t(_, 2);
  EXPECT_EQ(to_string(col.layout()), "(4):(_1)");
  EXPECT_EQ(raw_pointer(col.data()), v.data() + 8);
  Tensor row = t(1, _);
  EXPECT_EQ(row(3), 13);
  t(2, 2) = 100;
  EXPECT_EQ(v[10], 100);
  std::string const s = to_string(t);
  EXPECT_EQ(s.rfind("gmem_ptr[32b](", 0), 0u) << s;
  EXPECT_NE(s.find(") o (4,8):(_1,4)"), std::string::npos) << s;

  Tensor r = make_tensor<float>(Shape<_2, _3>{});  // owned: 6 floats, column-major
  EXPECT_EQ(to_string(r.layout()), "(_2,_3):(_1,_2)");
  for (int i = 0; i < 6; ++i) r(i) = float(i);
  EXPECT_EQ(r(1, 2), 5.0f);
  auto r2 = r;  // owned storage is copied
  r2(0) = -1;
  EXPECT_EQ(r(0), 0.0f);
  EXPECT_EQ(sizeof(r.data()[0]) * 6, sizeof(r.engine_));
}

TEST(Tensor, LayoutLikeAndFragmentLike) {
  std::vector<float> v(64);
  Tensor t = make_tensor(v.data(), make_layout(Shape<_4, _8>{}, GenRowMajor{}));  // (_4,_8):(_8,_1)
  EXPECT_EQ(to_string(make_tensor_like(t).layout()), "(_4,_8):(_8,_1)");
  Tensor d = make_tensor(v.data(), make_shape(_4{}, _8{}), make_stride(17, 1));  // run-time strides
  EXPECT_EQ(to_string(make_tensor_like(d).layout()), "(_4,_8):(_1,_4)");
  Tensor p = make_tensor(v.data(), make_layout(make_shape(make_shape(_2{}, _2{}), _2{}, _4{}),
                                               make_stride(make_stride(_2{}, _1{}), _64{}, _16{})));
  EXPECT_EQ(to_string(make_fragment_like(p).layout()), "((_2,_2),_2,_4):((_1,_2),_16,_4)");
}

TEST(Tensor, LocalTileAndLocalPartitionAsInSeed004) {
  int const M = 1000, K = 333;
  std::vector<float> a(std::size_t(M) * K);
  Tensor mA = make_tensor(make_gmem_ptr(a.data()), make_shape(M, K), make_stride(_1{}, M));  // (M,K)
  auto cta_tiler = make_shape(_128{}, _128{}, _8{});
  Tensor gA = local_tile(mA, cta_tiler, make_coord(3, 4, _), Step<_1, X, _1>{});  // (BLK_M,BLK_K,k)
  EXPECT_EQ(to_string(gA.layout()), "(_128,_8,42):(_1,1000,8000)");
  EXPECT_EQ(raw_pointer(gA.data()) - a.data(), 3 * 128);

  std::vector<float> smem(128 * 8);
  Tensor sA = make_tensor(make_smem_ptr(smem.data()), make_layout(Shape<_128, _8>{}));  // (BLK_M,BLK_K)
  auto tA = make_layout(Shape<_32, _8>{});
  auto tC = make_layout(Shape<_16, _16>{});
  for (int tid : {0, 37, 255}) {
    Tensor tAgA = local_partition(gA, tA, tid);  // (THR_M,THR_K,k)
    Tensor tAsA = local_partition(sA, tA, tid);  // (THR_M,THR_K)
    EXPECT_EQ(to_string(tAgA.layout()), "(_4,_1,42):(_32,_0,8000)");
    EXPECT_EQ(to_string(tAsA.layout()), "(_4,_1):(_32,_0)");
    // thread tid owns row tid%32 + 32*i, column tid/32 of each tile
    EXPECT_EQ(raw_pointer(tAsA.data()) - smem.data(), tid % 32 + 128 * (tid / 32));
    Tensor tCsA = local_partition(sA, tC, tid, Step<_1, X>{});  // (THR_M,BLK_K): rows tid%16 + 16*i
    EXPECT_EQ(to_string(tCsA.layout()), "(_8,_8):(_16,_128)");
    EXPECT_EQ(raw_pointer(tCsA.data()) - smem.data(), tid % 16);
    Tensor tCsB = local_partition(sA, tC, tid, Step<X, _1>{});  // (THR_N,BLK_K): rows (tid/16)%16 + 16*i
    EXPECT_EQ(raw_pointer(tCsB.data()) - smem.data(), (tid / 16) % 16);
  }
}

TEST(Tensor, IdentityTensorsGiveCoordinates) {
  Tensor c = make_identity_tensor(make_shape(1000, 333));
  EXPECT_EQ(get<0>(c(17, 5)), 17);
  EXPECT_EQ(get<1>(c(17, 5)), 5);
  Tensor tile = local_tile(c, make_shape(_128{}, _8{}), make_coord(7, 41));  // overhangs both modes
  auto crd = tile(127, 7);
  EXPECT_EQ(get<0>(crd), 1023);
  EXPECT_EQ(get<1>(crd), 335);
  EXPECT_FALSE(elem_less(crd, make_shape(1000, 333)));
  EXPECT_TRUE(elem_less(tile(103, 4), make_shape(1000, 333)));
  Tensor part = local_partition(tile, make_layout(Shape<_32, _8>{}), 70);  // (THR_M,THR_K)
  EXPECT_EQ(get<0>(part(2, 0)), 7 * 128 + 6 + 64);
  EXPECT_EQ(get<1>(part(2, 0)), 41 * 8 + 2);
}

TEST(Tensor, RecastViewsTheSameBytes) {
  std::vector<half_t> v(16);
  for (int i = 0; i < 16; ++i) v[i] = half_t(float(i));
  Tensor t = make_tensor(make_smem_ptr(v.data()), make_layout(Shape<_2, _8>{}, GenRowMajor{}));
  Tensor u = recast<std::uint32_t>(t);
  EXPECT_EQ(to_string(u.layout()), "(_2,_4):(_4,_1)");
  EXPECT_TRUE(is_smem_v<decltype(u.data())>);
  std::uint32_t w;
  std::memcpy(&w, v.data() + 10, 4);
  EXPECT_EQ(u(1, 1), w);
  EXPECT_EQ(to_string(recast<uint128_t>(t).layout()), "(_2,_1):(_1,_1)");
}

TEST(Algorithms, CopyGemmAxpbyFillOnTheHost) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> a(24 * 16), b(20 * 16), c(24 * 20);
  for (auto& x : a) x = dist(rng);
  for (auto& x : b) x = dist(rng);
  for (auto& x : c) x = dist(rng);
  Tensor A = make_tensor(a.data(), make_shape(24, 16));                      // (M,K) column-major
  Tensor B = make_tensor(b.data(), make_layout(make_shape(20, 16), GenRowMajor{}));  // (N,K) K-major
  Tensor C = make_tensor(c.data(), make_shape(24, 20));
  std::vector<float> c0 = c;

  Tensor acc = make_tensor<double>(Shape<_24, Int<20>>{});
  clear(acc);
  gemm(A, B, acc);  // (M,K) x (N,K) => (M,N) through UniversalFMA<double,float,float,double>
  axpby(2.0, acc, -0.5, C);
  for (int m = 0; m < 24; ++m) {
    for (int n = 0; n < 20; ++n) {
      double ref = 0;
      for (int k = 0; k < 16; ++k) ref += double(a[m + 24 * k]) * double(b[n * 16 + k]);
      EXPECT_NEAR(c[m + 24 * n], 2.0 * ref - 0.5 * c0[m + 24 * n], 1e-5);
    }
  }

  // beta == 0 never reads y (NaN stays out).
  std::vector<float> y(4, std::numeric_limits<float>::quiet_NaN());
  Tensor Y = make_tensor(y.data(), make_shape(4));
  Tensor X = make_tensor<float>(Shape<_4>{});
  fill(X, 3.0f);
  axpby(1.0f, X, 0.0f, Y);
  for (float e : y) EXPECT_EQ(e, 3.0f);
  axpby(1.0f, X, 1.0f, Y, [](int i) { return i % 2 == 0; });
  EXPECT_EQ(y[0], 6.0f);
  EXPECT_EQ(y[1], 3.0f);

  // copy / copy_if between different layouts.
  std::vector<int> s(12), d(12, -1);
  for (int i = 0; i < 12; ++i) s[i] = i;
  Tensor S = make_tensor(s.data(), make_layout(Shape<_3, _4>{}, GenRowMajor{}));
  Tensor D = make_tensor(d.data(), make_layout(Shape<_3, _4>{}));
  copy(S, D);
  EXPECT_EQ(D(2, 1), S(2, 1));
  EXPECT_EQ(d[1], 4);
  std::vector<int> d2(12, -1);
  Tensor D2 = make_tensor(d2.data(), make_layout(Shape<_3, _4>{}));
  copy_if([](int i) { return i < 3; }, S, D2);
  EXPECT_EQ(d2[2], 8);
  EXPECT_EQ(d2[3], -1);
}

TEST(Algorithms, TiledMmaGemmWithUniversalFmaAtoms) {
  // A 4x4-thread tiling of UniversalFMA over an 8x8x4 tile, every thread run in turn on the host.
  auto mma = make_tiled_mma(UniversalFMA<float>{}, make_layout(Shape<_4, _4, _1>{}));
  EXPECT_EQ(int(size(mma)), 16);
  std::vector<float> a(8 * 4), b(8 * 4), c(8 * 8, 0.f);
  for (int i = 0; i < 32; ++i) a[i] = float(i % 7) - 3, b[i] = float(i % 5) - 2;
  Tensor A = make_tensor(a.data(), make_shape(_8{}, _4{}));
  Tensor B = make_tensor(b.data(), make_shape(_8{}, _4{}));
  Tensor C = make_tensor(c.data(), make_shape(_8{}, _8{}));
  for (int t = 0; t < 16; ++t) {
    auto thr = mma.get_slice(t);
    Tensor tCA = thr.partition_A(A);  // (MMA,MMA_M,MMA_K)
    Tensor tCB = thr.partition_B(B);
    Tensor tCC = thr.partition_C(C);
    Tensor tCr = thr.partition_fragment_C(C);
    clear(tCr);
    gemm(mma, tCA, tCB, tCr);
    copy(tCr, tCC);
  }
  for (int m = 0; m < 8; ++m) {
    for (int n = 0; n < 8; ++n) {
      float ref = 0;
      for (int k = 0; k < 4; ++k) ref += a[m + 8 * k] * b[n + 8 * k];
      EXPECT_EQ(c[m + 8 * n], ref) << m << "," << n;
    }
  }
}
