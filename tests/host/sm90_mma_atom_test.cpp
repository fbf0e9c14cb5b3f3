// The sm90 wgmma MMA atoms (atom/mma_traits_sm90.hpp): their (thread, value) layouts checked at
// every point against the PTX ISA's fragment description, written out here independently (and
// against arch/sm90_mma_wgmma.hpp's wgmma_accumulator_coord, which the GEMM kernel's epilogue
// uses); each operand layout covers its tile; a TiledMMA of two warpgroups along M (the kernel's
// two consumers) covers 128 x N and partitions a shared-memory stage as the kernel reads it.
#include <tessel/arch/sm90_mma_wgmma.hpp>
#include <tessel/atom/mma_traits_sm90.hpp>
#include <tessel/layout/tile_to_shape.hpp>
#include <tessel/tensor.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace tessel;

namespace {

// PTX ISA, "WGMMA .m64nNk16 register fragment layout for accumulator matrix D" (the same figure
// for k32): warp w of the warpgroup owns rows 16w..16w+15; lane = 4*groupID + threadID_in_group;
// d_i sits at row groupID (+8 when bit 1 of i is set), column 2*threadID_in_group + (i & 1) in
// the 8-column block i / 4.
struct RowCol {
  int row, col;
};
RowCol wgmma_d(int thread, int i) {
  int const warp = thread / 32, lane = thread % 32, group = lane >> 2, tig = lane & 3;
  int const row = warp * 16 + group + ((i & 2) ? 8 : 0);
  int const col = tig * 2 + (i & 1) + 8 * (i >> 2);
  return {row, col};
}

template <class Op>
void check_atom(int n, int k, GMMA::Major major_a, GMMA::Major major_b) {
  using Atom = MMA_Atom<Op>;
  SCOPED_TRACE(to_string(Atom{}));
  EXPECT_EQ(int(size(typename Atom::ThrID{})), 128);
  EXPECT_EQ(int(size<0>(typename Atom::Shape_MNK{})), 64);
  EXPECT_EQ(int(size<1>(typename Atom::Shape_MNK{})), n);
  EXPECT_EQ(int(size<2>(typename Atom::Shape_MNK{})), k);
  EXPECT_EQ(Atom::MajorA, major_a);
  EXPECT_EQ(Atom::MajorB, major_b);
  EXPECT_TRUE((std::is_same_v<typename Atom::ValTypeC, float>));
  typename Atom::LayoutA_TV a;
  typename Atom::LayoutB_TV b;
  typename Atom::LayoutC_TV c;
  ASSERT_EQ(int(size<0>(a)), 128);
  ASSERT_EQ(int(size<1>(a)), 64 * k);
  ASSERT_EQ(int(size<1>(b)), n * k);
  ASSERT_EQ(int(size<1>(c)), n / 2);
  // Shared-memory operands: every thread sees value v at (mn, k) = (v % MN, v / MN), the whole tile.
  for (int t = 0; t < 128; t += 37) {
    for (int v = 0; v < 64 * k; ++v) EXPECT_EQ(int(a(t, v)), v) << "A thread " << t << " value " << v;
    for (int v = 0; v < n * k; ++v) EXPECT_EQ(int(b(t, v)), v) << "B thread " << t << " value " << v;
  }
  // Accumulators: the PTX figure, and each of the 64 x N elements exactly once.
  std::vector<int> seen(64 * n, 0);
  for (int t = 0; t < 128; ++t) {
    for (int i = 0; i < n / 2; ++i) {
      RowCol const rc = wgmma_d(t, i);
      ASSERT_EQ(int(c(t, i)), rc.row + 64 * rc.col) << "thread " << t << " d" << i;
      WgmmaCoord const kernel = wgmma_accumulator_coord(t, i);
      ASSERT_EQ(kernel.row, rc.row) << "wgmma_accumulator_coord thread " << t << " d" << i;
      ASSERT_EQ(kernel.col, rc.col) << "wgmma_accumulator_coord thread " << t << " d" << i;
      ++seen[c(t, i)];
    }
  }
  for (int e = 0; e < 64 * n; ++e) EXPECT_EQ(seen[e], 1) << "element m=" << e % 64 << " n=" << e / 64;
}

}  // namespace

TEST(Sm90MmaAtoms, LayoutsAreThePtxFragments) {
  check_atom<SM90_64x64x16_F32BF16BF16_SS<0, 0>>(64, 16, GMMA::Major::K, GMMA::Major::K);
  check_atom<SM90_64x128x16_F32BF16BF16_SS<0, 1>>(128, 16, GMMA::Major::K, GMMA::Major::MN);
  check_atom<SM90_64x192x16_F32BF16BF16_SS<1, 0>>(192, 16, GMMA::Major::MN, GMMA::Major::K);
  check_atom<SM90_64x256x16_F32BF16BF16_SS<1, 1>>(256, 16, GMMA::Major::MN, GMMA::Major::MN);
  check_atom<SM90_64x64x16_F32F16F16_SS<0, 1>>(64, 16, GMMA::Major::K, GMMA::Major::MN);
  check_atom<SM90_64x256x16_F32F16F16_SS<0, 0>>(256, 16, GMMA::Major::K, GMMA::Major::K);
  check_atom<SM90_64x128x32_F32E4M3E4M3_SS>(128, 32, GMMA::Major::K, GMMA::Major::K);
  check_atom<SM90_64x256x32_F32E5M2E4M3_SS>(256, 32, GMMA::Major::K, GMMA::Major::K);
}

// PTX ISA, "WGMMA .m64nNk16 register fragment layout for matrix A" (A from registers): warp w
// owns rows 16w..16w+15; a_j (two 16-bit values each) holds row groupID (+8 when j is odd) and
// columns 2*threadID_in_group + {0,1} (+8 when j >= 2) -- mma.sync m16n8k16's A, per warp.
RowCol wgmma_a(int thread, int v) {
  int const warp = thread / 32, lane = thread % 32, group = lane >> 2, tig = lane & 3, j = v / 2;
  return {warp * 16 + group + (j % 2) * 8, tig * 2 + v % 2 + (j / 2) * 8};
}

template <class Op>
void check_rs_atom(int n, GMMA::Major major_b) {
  using Atom = MMA_Atom<Op>;
  SCOPED_TRACE(to_string(Atom{}));
  EXPECT_EQ(int(size<1>(typename Atom::Shape_MNK{})), n);
  EXPECT_EQ(Atom::MajorB, major_b);
  typename Atom::LayoutA_TV a;
  typename Atom::LayoutB_TV b;
  typename Atom::LayoutC_TV c;
  ASSERT_EQ(int(size<0>(a)), 128);
  ASSERT_EQ(int(size<1>(a)), 8);  // four registers of two values
  std::vector<int> seen(64 * 16, 0);
  for (int t = 0; t < 128; ++t) {
    for (int v = 0; v < 8; ++v) {
      RowCol const rc = wgmma_a(t, v);
      ASSERT_EQ(int(a(t, v)), rc.row + 64 * rc.col) << "A thread " << t << " value " << v;
      ++seen[a(t, v)];
    }
    // The A tile is an m64n16 accumulator tile: register i of the accumulator is A value i.
    for (int i = 0; i < 8; ++i) {
      RowCol const d = wgmma_d(t, i);
      ASSERT_EQ(int(a(t, i)), d.row + 64 * d.col) << "thread " << t << " value " << i;
    }
  }
  for (int e = 0; e < 64 * 16; ++e) EXPECT_EQ(seen[e], 1) << "A element m=" << e % 64 << " k=" << e / 64;
  for (int v = 0; v < n * 16; v += 7) EXPECT_EQ(int(b(0, v)), v);  // B as the SS atoms read it
  ASSERT_EQ(int(size<1>(c)), n / 2);
}

TEST(Sm90MmaAtoms, RegisterALayoutsAreThePtxFragments) {
  check_rs_atom<SM90_64x64x16_F32BF16BF16_RS<1>>(64, GMMA::Major::MN);
  check_rs_atom<SM90_64x128x16_F32BF16BF16_RS<0>>(128, GMMA::Major::K);
  check_rs_atom<SM90_64x256x16_F32F16F16_RS<1>>(256, GMMA::Major::MN);
  check_rs_atom<SM90_64x192x16_F32F16F16_RS<0>>(192, GMMA::Major::K);
}

TEST(Sm90MmaAtoms, ValueTypes) {
  EXPECT_TRUE((std::is_same_v<MMA_Traits<SM90_64x64x16_F32BF16BF16_SS<0, 0>>::ValTypeA, bfloat16_t>));
  EXPECT_TRUE((std::is_same_v<MMA_Traits<SM90_64x64x16_F32F16F16_SS<0, 0>>::ValTypeB, half_t>));
  EXPECT_TRUE((std::is_same_v<MMA_Traits<SM90_64x64x32_F32E4M3E5M2_SS>::ValTypeA, float_e4m3_t>));
  EXPECT_TRUE((std::is_same_v<MMA_Traits<SM90_64x64x32_F32E4M3E5M2_SS>::ValTypeB, float_e5m2_t>));
  EXPECT_TRUE((std::is_same_v<MMA_Traits<SM90_64x64x32_F32E5M2E5M2_SS>::ValTypeD, float>));
}

TEST(Sm90MmaAtoms, PrintsAsCuTe) {
  EXPECT_EQ(to_string(MMA_Atom<SM90_64x64x16_F32BF16BF16_SS<0, 1>>{}),
            "MMA_Atom\n"
            "  ThrID:      _128:_1\n"
            "  Shape_MNK:  (_64,_64,_16)\n"
            "  LayoutA_TV: (_128,(_64,_16)):(_0,(_1,_64))\n"
            "  LayoutB_TV: (_128,(_64,_16)):(_0,(_1,_64))\n"
            "  LayoutC_TV: ((_4,_8,_4),(_2,_2,_8)):((_128,_1,_16),(_64,_8,_512))\n");
  EXPECT_EQ(to_string(typename MMA_Atom<SM90_64x256x32_F32E4M3E4M3_SS>::LayoutC_TV{}),
            "((_4,_8,_4),(_2,_2,_32)):((_128,_1,_16),(_64,_8,_512))");
}

// The kernel's consumers: two warpgroups along M, 128 x N per k-step.
TEST(Sm90MmaAtoms, TwoWarpgroupsAlongM) {
  using Op = SM90_64x256x16_F32BF16BF16_SS<0, 0>;
  auto mma = make_tiled_mma(MMA_Atom<Op>{}, Layout<Shape<_2, _1, _1>>{});
  EXPECT_EQ(to_string(mma.get_thr_layout_vmnk()), "(_128,_2,_1,_1):(_1,_128,_0,_0)");
  EXPECT_EQ(int(size(mma)), 256);
  EXPECT_EQ(int(tile_size<0>(mma)), 128);
  EXPECT_EQ(int(tile_size<1>(mma)), 256);
  EXPECT_EQ(int(tile_size<2>(mma)), 16);

  // C: thread 128*w + t holds the atom's element of thread t, 64*w rows down; all 128 x 256 once.
  auto c = mma.get_layoutC_TV();  // (thread, value) -> m + 128*n
  std::vector<int> seen(128 * 256, 0);
  for (int t = 0; t < 256; ++t) {
    for (int i = 0; i < 128; ++i) {
      RowCol const rc = wgmma_d(t % 128, i);
      int const m = 64 * (t / 128) + rc.row;
      ASSERT_EQ(int(c(t, i)), m + 128 * rc.col) << "thread " << t << " d" << i;
      ++seen[c(t, i)];
    }
  }
  for (int e = 0; e < 128 * 256; ++e) ASSERT_EQ(seen[e], 1) << "element " << e;

  // A: warpgroup w sees rows 64w..64w+63, all of them; B: both see all of B.
  auto a = mma.get_layoutA_TV();  // (thread, value) -> m + 128*k
  auto b = mma.get_layoutB_TV();  // (thread, value) -> n + 256*k
  for (int t : {0, 77, 128, 255}) {
    for (int v = 0; v < 64 * 16; ++v) {
      ASSERT_EQ(int(a(t, v)), 64 * (t / 128) + v % 64 + 128 * (v / 64)) << "A thread " << t << " value " << v;
    }
    for (int v = 0; v < 256 * 16; ++v) ASSERT_EQ(int(b(t, v)), v) << "B thread " << t << " value " << v;
  }
}

// partition_A of the kernel's (128,64) K-major 128-byte-swizzled stage: each thread gets, per
// k-step, its warpgroup's whole 64 x 16 slice -- the elements the descriptor of that slice reads.
TEST(Sm90MmaAtoms, PartitionsASharedMemoryStage) {
  using T = bfloat16_t;
  auto mma = make_tiled_mma(MMA_Atom<SM90_64x128x16_F32BF16BF16_SS<0, 0>>{}, Layout<Shape<_2, _1, _1>>{});
  std::vector<T> smem(128 * 64);
  Tensor sA = make_tensor(make_smem_ptr(smem.data()),
                          tile_to_shape(GMMA::Layout_K_SW128_Atom<T>{}, Shape<_128, _64>{}));  // (BLK_M,BLK_K)
  for (int t : {0, 100, 128, 250}) {
    auto thr = mma.get_slice(t);
    Tensor tCsA = thr.partition_A(sA);  // (MMA,MMA_M,MMA_K)
    ASSERT_EQ(int(size<0>(tCsA)), 64 * 16);
    ASSERT_EQ(int(size<1>(tCsA)), 1);
    ASSERT_EQ(int(size<2>(tCsA)), 4);
    for (int k = 0; k < 4; ++k) {
      for (int v = 0; v < 64 * 16; ++v) {
        int const m = 64 * (t / 128) + v % 64, kk = 16 * k + v / 64;
        ASSERT_EQ(&tCsA(v, 0, k), &sA(m, kk)) << "thread " << t << " k-step " << k << " value " << v;
      }
    }
  }
}
