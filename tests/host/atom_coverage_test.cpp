// Every atom's (thread, value) layouts checked against the PTX ISA's fragment descriptions, written
// out here independently of atom/mma_traits.hpp and atom/copy_traits.hpp; and TiledCopy/TiledMMA
// TV layouts checked for coverage: each element exactly once for copies, exactly the positions the
// instruction defines (tiled over the atom grid) for MMAs.
#include <tessel/tensor.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace tessel;

namespace {

// ---- the PTX ISA fragment layouts (mma.sync, "Matrix Fragments for mma.m16n8kK") -------------
// lane = 4 * groupID + threadID_in_group. Each function returns (row, col) of the operand's
// element i held by `lane`: A is MxK (row m, col k), B is KxN (row k, col n), C is MxN.
struct RowCol {
  int row, col;
};
using Fragment = std::function<RowCol(int lane, int i)>;

RowCol a_m16n8k8_b16(int l, int i) { return {l / 4 + 8 * (i / 2), 2 * (l % 4) + i % 2}; }
RowCol b_m16n8k8_b16(int l, int i) { return {2 * (l % 4) + i, l / 4}; }
RowCol a_m16n8k16_b16(int l, int i) { return {l / 4 + 8 * ((i / 2) % 2), 2 * (l % 4) + i % 2 + 8 * (i / 4)}; }
RowCol b_m16n8k16_b16(int l, int i) { return {2 * (l % 4) + i % 2 + 8 * (i / 2), l / 4}; }
RowCol a_m16n8k8_tf32(int l, int i) { return {l / 4 + 8 * (i % 2), l % 4 + 4 * (i / 2)}; }
RowCol b_m16n8k8_tf32(int l, int i) { return {l % 4 + 4 * i, l / 4}; }
RowCol a_m16n8k32_s8(int l, int i) { return {l / 4 + 8 * ((i / 4) % 2), 4 * (l % 4) + i % 4 + 16 * (i / 8)}; }
RowCol b_m16n8k32_s8(int l, int i) { return {4 * (l % 4) + i % 4 + 16 * (i / 4), l / 4}; }
RowCol c_m16n8(int l, int i) { return {l / 4 + 8 * (i / 2), 2 * (l % 4) + i % 2}; }

struct AtomPtx {
  int M, N, K;
  Fragment a, b, c;  // a: (m,k), b: (k,n), c: (m,n)
};

template <class Op>
AtomPtx ptx_of();
template <>
AtomPtx ptx_of<SM80_16x8x8_F32F16F16F32_TN>() { return {16, 8, 8, a_m16n8k8_b16, b_m16n8k8_b16, c_m16n8}; }
template <>
AtomPtx ptx_of<SM80_16x8x8_F32BF16BF16F32_TN>() { return {16, 8, 8, a_m16n8k8_b16, b_m16n8k8_b16, c_m16n8}; }
template <>
AtomPtx ptx_of<SM80_16x8x16_F32F16F16F32_TN>() { return {16, 8, 16, a_m16n8k16_b16, b_m16n8k16_b16, c_m16n8}; }
template <>
AtomPtx ptx_of<SM80_16x8x16_F32BF16BF16F32_TN>() { return {16, 8, 16, a_m16n8k16_b16, b_m16n8k16_b16, c_m16n8}; }
template <>
AtomPtx ptx_of<SM80_16x8x8_F32TF32TF32F32_TN>() { return {16, 8, 8, a_m16n8k8_tf32, b_m16n8k8_tf32, c_m16n8}; }
template <>
AtomPtx ptx_of<SM80_16x8x32_S32S8S8S32_TN>() { return {16, 8, 32, a_m16n8k32_s8, b_m16n8k32_s8, c_m16n8}; }

template <class Op>
void check_mma_atom() {
  using Atom = MMA_Atom<Op>;
  AtomPtx const p = ptx_of<Op>();
  SCOPED_TRACE(to_string(Atom{}));
  EXPECT_EQ(int(size(typename Atom::ThrID{})), 32);
  EXPECT_EQ(int(size<0>(typename Atom::Shape_MNK{})), p.M);
  EXPECT_EQ(int(size<1>(typename Atom::Shape_MNK{})), p.N);
  EXPECT_EQ(int(size<2>(typename Atom::Shape_MNK{})), p.K);
  typename Atom::LayoutA_TV a;
  typename Atom::LayoutB_TV b;
  typename Atom::LayoutC_TV c;
  ASSERT_EQ(int(size(a)), p.M * p.K);
  ASSERT_EQ(int(size(b)), p.N * p.K);
  ASSERT_EQ(int(size(c)), p.M * p.N);
  for (int l = 0; l < 32; ++l) {
    for (int i = 0; i < int(size<1>(a)); ++i) {
      RowCol rc = p.a(l, i);
      EXPECT_EQ(int(a(l, i)), rc.row + p.M * rc.col) << "A lane " << l << " a" << i;
    }
    for (int i = 0; i < int(size<1>(b)); ++i) {
      RowCol rc = p.b(l, i);
      EXPECT_EQ(int(b(l, i)), rc.col + p.N * rc.row) << "B lane " << l << " b" << i;  // (n,k) -> n + N*k
    }
    for (int i = 0; i < int(size<1>(c)); ++i) {
      RowCol rc = p.c(l, i);
      EXPECT_EQ(int(c(l, i)), rc.row + p.M * rc.col) << "C lane " << l << " c" << i;
    }
  }
}

}  // namespace

TEST(MmaAtoms, LayoutsAreThePtxFragments) {
  check_mma_atom<SM80_16x8x8_F32F16F16F32_TN>();
  check_mma_atom<SM80_16x8x8_F32BF16BF16F32_TN>();
  check_mma_atom<SM80_16x8x16_F32F16F16F32_TN>();
  check_mma_atom<SM80_16x8x16_F32BF16BF16F32_TN>();
  check_mma_atom<SM80_16x8x8_F32TF32TF32F32_TN>();
  check_mma_atom<SM80_16x8x32_S32S8S8S32_TN>();
}

TEST(MmaAtoms, UniversalFmaIsOneThreadOneElement) {
  using Atom = MMA_Atom<UniversalFMA<float>>;
  EXPECT_EQ(to_string(Atom{}),
            "MMA_Atom\n  ThrID:      _1:_0\n  Shape_MNK:  (_1,_1,_1)\n  LayoutA_TV: (_1,_1):(_0,_0)\n"
            "  LayoutB_TV: (_1,_1):(_0,_0)\n  LayoutC_TV: (_1,_1):(_0,_0)\n");
  float d = 0, a = 3, b = 5, c = 1;
  Atom{}.call(make_tensor(&d, Layout<_1>{}), make_tensor(&a, Layout<_1>{}), make_tensor(&b, Layout<_1>{}),
              make_tensor(&c, Layout<_1>{}));
  EXPECT_EQ(d, 16.0f);
}

// ---- copy atoms: the ldmatrix / stmatrix descriptions ---------------------------------------------
// Element numbering of the moved 8x8 b16 matrices: matrix j, row r, column c -> j*64 + r*8 + c.
namespace {

// Address side: thread t (< 8*matrices) gives row t%8 of matrix t/8; the others repeat.
int ldsm_row_element(int t, int v, int matrices) {
  int const tt = t % (8 * matrices);
  return (tt / 8) * 64 + (tt % 8) * 8 + v;
}
// Register side, non-transposed: register j, half h of thread t = row t/4, column 2*(t%4)+h.
int ldsm_n_reg_element(int t, int v) {
  int const j = v / 2, h = v % 2;
  return j * 64 + (t / 4) * 8 + 2 * (t % 4) + h;
}
// Register side, transposed: row 2*(t%4)+h, column t/4.
int ldsm_t_reg_element(int t, int v) {
  int const j = v / 2, h = v % 2;
  return j * 64 + (2 * (t % 4) + h) * 8 + t / 4;
}

template <class L, class F>
void expect_layout_is(L const& l, F const& f, char const* what) {
  for (int t = 0; t < int(size<0>(l)); ++t) {
    for (int v = 0; v < int(size<1>(l)); ++v) {
      EXPECT_EQ(int(l(t, v)), f(t, v)) << what << " thread " << t << " value " << v;
    }
  }
}

template <class Op, int Matrices, bool Trans>
void check_ldsm() {
  using Atom = Copy_Atom<Op, half_t>;
  SCOPED_TRACE(to_string(Atom{}));
  EXPECT_EQ(int(size(typename Atom::ThrID{})), 32);
  EXPECT_EQ(Atom::NumValSrc, 8);
  EXPECT_EQ(Atom::NumValDst, 2 * Matrices);
  expect_layout_is(typename Atom::ValLayoutSrc{}, [](int t, int v) { return ldsm_row_element(t, v, Matrices); }, "src");
  expect_layout_is(typename Atom::ValLayoutDst{},
                   [](int t, int v) { return Trans ? ldsm_t_reg_element(t, v) : ldsm_n_reg_element(t, v); }, "dst");
}

}  // namespace

TEST(CopyAtoms, LdmatrixIsThePtxDescription) {
  check_ldsm<SM75_U32x1_LDSM_N, 1, false>();
  check_ldsm<SM75_U32x2_LDSM_N, 2, false>();
  check_ldsm<SM75_U32x4_LDSM_N, 4, false>();
  check_ldsm<SM75_U16x2_LDSM_T, 1, true>();
  check_ldsm<SM75_U16x4_LDSM_T, 2, true>();
  check_ldsm<SM75_U16x8_LDSM_T, 4, true>();
}

TEST(CopyAtoms, StmatrixIsLdmatrixBackwards) {
  using Atom = Copy_Atom<SM90_U32x4_STSM_N, half_t>;
  EXPECT_EQ(Atom::NumValSrc, 8);
  EXPECT_EQ(Atom::NumValDst, 8);
  expect_layout_is(typename Atom::ValLayoutSrc{}, ldsm_n_reg_element, "src");
  expect_layout_is(typename Atom::ValLayoutDst{}, [](int t, int v) { return ldsm_row_element(t, v, 4); }, "dst");
}

TEST(CopyAtoms, SingleThreadAtomsMoveContiguousValues) {
  EXPECT_EQ(to_string(Copy_Atom<UniversalCopy<uint128_t>, half_t>{}),
            "Copy_Atom\n  ThrID:        _1:_0\n  ValLayoutSrc: (_1,_8):(_0,_1)\n  ValLayoutDst: (_1,_8):(_0,_1)\n"
            "  ValLayoutRef: (_1,_8):(_0,_1)\n  ValueType:    16b\n");
  EXPECT_EQ(to_string(typename Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS<uint64_t>, float>::ValLayoutSrc{}), "(_1,_2):(_0,_1)");
  EXPECT_EQ(to_string(typename Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, bfloat16_t>::ValLayoutDst{}),
            "(_1,_8):(_0,_1)");
  EXPECT_EQ(to_string(typename Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint32_t>, std::int8_t>::ValLayoutDst{}),
            "(_1,_4):(_0,_1)");
  EXPECT_EQ((Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS<uint64_t>, float>::NumValSrc), 2);
  EXPECT_EQ((Copy_Atom<UniversalCopy<float>, float>::NumValSrc), 1);
  EXPECT_EQ((Copy_Atom<AutoVectorizingCopyWithAssumedAlignment<128>, half_t>::NumValSrc), 1);
}

// ---- tiled layouts: coverage --------------------------------------------------------------------
namespace {

// How many (thread, value) pairs of a TV layout land on each of the `cells` tile elements.
template <class TV>
std::vector<int> hits(TV const& tv, int cells) {
  std::vector<int> h(cells, 0);
  for (int t = 0; t < int(size<0>(tv)); ++t) {
    for (int v = 0; v < int(size<1>(tv)); ++v) {
      long long e = static_cast<long long>(tv(t, v));
      EXPECT_TRUE(e >= 0 && e < cells) << "thread " << t << " value " << v << " -> " << e << " outside the tile";
      if (e >= 0 && e < cells) ++h[e];
    }
  }
  return h;
}

void expect_all(std::vector<int> const& h, int times, char const* what) {
  for (std::size_t e = 0; e < h.size(); ++e) {
    ASSERT_EQ(h[e], times) << what << ": element " << e << " is covered " << h[e] << " times, expected " << times;
  }
}

// `times` > 1 where the TV layout comes from an MMA operand that several warps share; an
// ldmatrix.x1 (x2) source repeats each row address 4 (2) times: `src_repeat`.
template <class TC>
void check_tiled_copy_exactly_once(TC const& tc, int times = 1, int src_repeat = 1) {
  SCOPED_TRACE(to_string(tc));
  int const cells = int(size(typename TC::Tiler_MN{}));
  expect_all(hits(tc.get_layoutD_TV(), cells), times, "destination");
  expect_all(hits(tc.get_layoutS_TV(), cells), times * src_repeat, "source");
}

}  // namespace

TEST(TiledCopies, EachElementExactlyOnce) {
  check_tiled_copy_exactly_once(make_tiled_copy(Copy_Atom<AutoVectorizingCopyWithAssumedAlignment<128>, half_t>{},
                                                make_layout(Shape<_8, _16>{}, GenRowMajor{}),
                                                make_layout(Shape<_1, _8>{}, GenRowMajor{})));
  check_tiled_copy_exactly_once(make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, half_t>{},
                                                make_layout(Shape<_32, _4>{}), make_layout(Shape<_8, _1>{})));
  check_tiled_copy_exactly_once(make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, float>{},
                                                make_layout(Shape<_16, _8>{}, GenRowMajor{}),
                                                make_layout(Shape<_1, _4>{})));
  check_tiled_copy_exactly_once(make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS<uint32_t>, float>{},
                                                make_layout(Shape<_4, _32>{}), make_layout(Shape<_1, _1>{})));
  check_tiled_copy_exactly_once(make_tiled_copy(Copy_Atom<UniversalCopy<float>, float>{}, make_layout(Shape<_16, _16>{})));
}

TEST(TiledCopies, LdmatrixFitsTheMmaOperands) {
  // Seed 001's: A of a 4-warp 16x8x8 MMA, one ldmatrix.x4 per 16x16 block.
  auto mma1 = make_tiled_mma(MMA_Atom<SM80_16x8x8_F32F16F16F32_TN>{}, make_layout(Shape<_4, _1, _1>{}, GenRowMajor{}),
                             Tile<_64, _16, _16>{});
  check_tiled_copy_exactly_once(make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}, mma1));
  // B of the same MMA is shared by its 4 warps (they differ only in M): each element 4 times.
  check_tiled_copy_exactly_once(make_tiled_copy_B(Copy_Atom<SM75_U32x2_LDSM_N, half_t>{}, mma1), 4, 2);
  check_tiled_copy_exactly_once(make_tiled_copy_B(Copy_Atom<SM75_U32x1_LDSM_N, half_t>{}, mma1), 4, 4);

  // 2x2 warps of 16x8x16; A shared by the 2 warps along N, B by the 2 along M.
  auto mma2 = make_tiled_mma(MMA_Atom<SM80_16x8x16_F32F16F16F32_TN>{}, make_layout(Shape<_2, _2, _1>{}),
                             Tile<_32, _32, _16>{});
  check_tiled_copy_exactly_once(make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}, mma2), 2);
  check_tiled_copy_exactly_once(make_tiled_copy_B(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}, mma2), 2);
  // C through stmatrix.x4 (each warp stores its 16x16 block of C as half).
  check_tiled_copy_exactly_once(make_tiled_copy_C(Copy_Atom<SM90_U32x4_STSM_N, half_t>{}, mma2));

  // The reference (destination) TV layout of make_tiled_copy_A is the MMA's A layout.
  auto d = make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}, mma2).get_layoutD_TV();
  auto a = mma2.get_layoutA_TV();
  ASSERT_EQ(int(size(d)), int(size(a)));
  for (int t = 0; t < 128; ++t) {
    for (int v = 0; v < int(size<1>(a)); ++v) EXPECT_EQ(int(d(t, v)), int(a(t, v))) << t << "," << v;
  }
}

TEST(TiledCopies, TransposedLdmatrixForMnMajorB) {
  // B stored N-major (n contiguous): ldmatrix.trans delivers the (k pairs, n) fragment.
  auto mma = make_tiled_mma(MMA_Atom<SM80_16x8x16_F32BF16BF16F32_TN>{}, make_layout(Shape<_2, _2, _1>{}),
                            Tile<_32, _32, _16>{});
  check_tiled_copy_exactly_once(make_tiled_copy_B(Copy_Atom<SM75_U16x8_LDSM_T, bfloat16_t>{}, mma), 2);
  check_tiled_copy_exactly_once(make_tiled_copy_B(Copy_Atom<SM75_U16x4_LDSM_T, bfloat16_t>{}, mma), 2, 2);
  auto mma8 = make_tiled_mma(MMA_Atom<SM80_16x8x8_F32F16F16F32_TN>{}, make_layout(Shape<_2, _2, _1>{}));
  check_tiled_copy_exactly_once(make_tiled_copy_B(Copy_Atom<SM75_U16x2_LDSM_T, half_t>{}, mma8), 2, 4);
}

// ---- tiled MMAs: each thread's values are the PTX positions, tiled over the atom grid ------------
namespace {

// For a TiledMMA whose permutation is `_` or an integer tile (no reordering): thread
// T = lane + 32*w with w = atom_layout(wm,wn,wk), value v = i + V*(rm + RM*rk) sits at
//   m = (wm + AM*rm)*atomM + row(lane,i),   k = (wk + AK*rk)*atomK + col(lane,i)
// (and likewise for B over (n,k) and C over (m,n)).
template <class TM, class AtomLayout>
void check_tiled_mma(TM const& mma, AtomPtx const& p, AtomLayout const& atom_layout) {
  SCOPED_TRACE(to_string(mma));
  int const AM = int(size<0>(atom_layout)), AN = int(size<1>(atom_layout)), AK = int(size<2>(atom_layout));
  int const TM_ = int(tile_size<0>(mma)), TN = int(tile_size<1>(mma)), TK = int(tile_size<2>(mma));
  int const RM = TM_ / (p.M * AM), RN = TN / (p.N * AN), RK = TK / (p.K * AK);
  auto a = mma.get_layoutA_TV();
  auto b = mma.get_layoutB_TV();
  auto c = mma.get_layoutC_TV();
  int const VA = int(size<1>(a)) / (RM * RK), VB = int(size<1>(b)) / (RN * RK), VC = int(size<1>(c)) / (RM * RN);
  ASSERT_EQ(int(size<0>(a)), 32 * AM * AN * AK);
  for (int wm = 0; wm < AM; ++wm)
    for (int wn = 0; wn < AN; ++wn)
      for (int wk = 0; wk < AK; ++wk) {
        int const w = int(atom_layout(wm, wn, wk));
        for (int lane = 0; lane < 32; ++lane) {
          int const T = lane + 32 * w;
          for (int v = 0; v < int(size<1>(a)); ++v) {
            int i = v % VA, rm = (v / VA) % RM, rk = v / VA / RM;
            RowCol rc = p.a(lane, i);
            int m = (wm + AM * rm) * p.M + rc.row, k = (wk + AK * rk) * p.K + rc.col;
            ASSERT_EQ(int(a(T, v)), m + TM_ * k) << "A thread " << T << " value " << v;
          }
          for (int v = 0; v < int(size<1>(b)); ++v) {
            int i = v % VB, rn = (v / VB) % RN, rk = v / VB / RN;
            RowCol rc = p.b(lane, i);
            int n = (wn + AN * rn) * p.N + rc.col, k = (wk + AK * rk) * p.K + rc.row;
            ASSERT_EQ(int(b(T, v)), n + TN * k) << "B thread " << T << " value " << v;
          }
          for (int v = 0; v < int(size<1>(c)); ++v) {
            int i = v % VC, rm = (v / VC) % RM, rn = v / VC / RM;
            RowCol rc = p.c(lane, i);
            int m = (wm + AM * rm) * p.M + rc.row, n = (wn + AN * rn) * p.N + rc.col;
            ASSERT_EQ(int(c(T, v)), m + TM_ * n) << "C thread " << T << " value " << v;
          }
        }
      }
}

template <class Op>
void check_tiled_configs() {
  AtomPtx const p = ptx_of<Op>();
  auto l221 = make_layout(Shape<_2, _2, _1>{});
  check_tiled_mma(make_tiled_mma(MMA_Atom<Op>{}, l221), p, l221);
  using M2 = Int<2 * decltype(size<0>(typename MMA_Atom<Op>::Shape_MNK{}))::value * 2>;
  using N2 = Int<2 * decltype(size<1>(typename MMA_Atom<Op>::Shape_MNK{}))::value * 2>;
  using K2 = Int<2 * decltype(size<2>(typename MMA_Atom<Op>::Shape_MNK{}))::value>;
  check_tiled_mma(make_tiled_mma(MMA_Atom<Op>{}, l221, Tile<M2, N2, K2>{}), p, l221);
  auto l412 = make_layout(Shape<_4, _1, _2>{}, GenRowMajor{});
  check_tiled_mma(make_tiled_mma(MMA_Atom<Op>{}, l412), p, l412);
}

}  // namespace

TEST(TiledMmas, ValuesAreThePtxPositionsTiled) {
  // The seed's two configurations ...
  auto seed_layout = make_layout(Shape<_4, _1, _1>{}, GenRowMajor{});
  check_tiled_mma(make_tiled_mma(MMA_Atom<SM80_16x8x8_F32F16F16F32_TN>{}, seed_layout, Tile<_64, _16, _16>{}),
                  ptx_of<SM80_16x8x8_F32F16F16F32_TN>(), seed_layout);
  // ... and, for every atom, 2x2x1 warps plain and with a doubled tile, and 4x1x2 row-major.
  check_tiled_configs<SM80_16x8x8_F32F16F16F32_TN>();
  check_tiled_configs<SM80_16x8x8_F32BF16BF16F32_TN>();
  check_tiled_configs<SM80_16x8x16_F32F16F16F32_TN>();
  check_tiled_configs<SM80_16x8x16_F32BF16BF16F32_TN>();
  check_tiled_configs<SM80_16x8x8_F32TF32TF32F32_TN>();
  check_tiled_configs<SM80_16x8x32_S32S8S8S32_TN>();
}

TEST(TiledMmas, PartitionsAgreeWithTheTvLayouts) {
  // partition_A/B/C of a tile of element indices hands each thread exactly the TV layout's elements.
  auto mma = make_tiled_mma(MMA_Atom<SM80_16x8x16_F32F16F16F32_TN>{}, make_layout(Shape<_2, _2, _1>{}),
                            Tile<_32, _32, _32>{});
  std::vector<int> idx(32 * 32);
  for (int i = 0; i < 32 * 32; ++i) idx[i] = i;
  Tensor tile = make_tensor(idx.data(), make_layout(Shape<_32, _32>{}));  // (M,K) = (N,K) = (M,N) here
  auto a = mma.get_layoutA_TV();
  auto b = mma.get_layoutB_TV();
  auto c = mma.get_layoutC_TV();
  for (int t = 0; t < 128; ++t) {
    auto thr = mma.get_slice(t);
    Tensor tA = thr.partition_A(tile);  // (MMA,MMA_M,MMA_K)
    Tensor tB = thr.partition_B(tile);
    Tensor tC = thr.partition_C(tile);
    ASSERT_EQ(int(size(tA)), int(size<1>(a)));
    std::multiset<int> got, want;
    for (int i = 0; i < int(size(tA)); ++i) got.insert(tA(i));
    for (int v = 0; v < int(size<1>(a)); ++v) want.insert(int(a(t, v)));
    EXPECT_EQ(got, want) << "A, thread " << t;
    got.clear(), want.clear();
    for (int i = 0; i < int(size(tB)); ++i) got.insert(tB(i));
    for (int v = 0; v < int(size<1>(b)); ++v) want.insert(int(b(t, v)));
    EXPECT_EQ(got, want) << "B, thread " << t;
    got.clear(), want.clear();
    for (int i = 0; i < int(size(tC)); ++i) got.insert(tC(i));
    for (int v = 0; v < int(size<1>(c)); ++v) want.insert(int(c(t, v)));
    EXPECT_EQ(got, want) << "C, thread " << t;
    // The value mode of a partition is one atom execution: in the atom's own value order.
    for (int i = 0; i < int(size<0>(tC)); ++i) EXPECT_EQ(tC(i, 0, 0), int(c(t, i)));
  }
}
