// The wgmma shared-memory layout atoms (atom/gmma_smem_layout.hpp) and tile_to_shape
// (layout/tile_to_shape.hpp): every atom is a bijection onto its 8 rows of W bytes, prints as
// CuTe prints a Swizzle o Layout, and puts every element where TMA puts it -- TMA's placement
// computed here independently from the PTX ISA's tables ("Swizzling Modes": 16-byte chunk c of
// 128-byte line l of a 1024/512/256-byte aligned pattern goes to chunk c ^ (l % (span / 16))),
// for single atoms and for whole stages tiled from them.
#include <tessel/atom/gmma_smem_layout.hpp>
#include <tessel/layout/tile_to_shape.hpp>
#include <tessel/numeric/float8.hpp>
#include <tessel/tensor.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

using namespace tessel;
using GMMA::LayoutType;
using GMMA::Major;

namespace {

// Where TMA puts byte `dense` of a box written densely (innermost dimension fastest), with the
// swizzle of `span` bytes (0: none). PTX ISA 5.5.7: each table row is 128 bytes (8 chunks of
// 16); the 32-byte mode swaps chunks in odd lines, the 64-byte mode XORs with line % 4, the
// 128-byte mode with line % 8.
long long tma_placement(long long dense, int span) {
  if (span == 0) return dense;
  long long const line = dense / 128, chunk = (dense / 16) % 8, byte = dense % 16;
  long long const key = line % (span / 16);
  return line * 128 + (chunk ^ key) * 16 + byte;
}

int span_of(LayoutType t) { return t == LayoutType::INTERLEAVE ? 0 : GMMA::layout_type_bytes(t); }

// `box` (rows, cols) with cols the inner (TMA dimension 0) mode for K-major, rows for MN-major:
// each element's byte address must be TMA's placement of its dense offset.
template <class T, class L>
void expect_tma_places(L const& box, Major major, LayoutType t, char const* what) {
  int const rows = int(size<0>(box)), cols = int(size<1>(box));
  std::set<long long> offsets;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      long long const dense = major == Major::K ? (long long)r * cols + c : (long long)c * rows + r;  // elements
      long long const want = tma_placement(dense * long(sizeof(T)), span_of(t));
      long long const got = (long long)box(r, c) * long(sizeof(T));
      ASSERT_EQ(got, want) << what << ": element (" << r << "," << c << ")";
      offsets.insert(got);
    }
  }
  EXPECT_EQ(offsets.size(), std::size_t(rows) * cols) << what << ": not a bijection";
  EXPECT_EQ(*offsets.rbegin(), (long long)(rows * cols - 1) * long(sizeof(T))) << what << ": not onto [0, size)";
}

template <class T, Major M, LayoutType Type>
void check_atom() {
  using Atom = GMMA::smem_atom<T, M, Type>;
  std::string const what = to_string(Atom{});
  SCOPED_TRACE(what);
  constexpr int width = GMMA::layout_type_bytes(Type) / int(sizeof(T));  // elements per row
  // 8 rows of W bytes, K along a row (K-major) or MN along a row (MN-major).
  EXPECT_EQ(int(size<0>(Atom{})), M == Major::K ? 8 : width);
  EXPECT_EQ(int(size<1>(Atom{})), M == Major::K ? width : 8);
  EXPECT_EQ(int(cosize(Atom{})), 8 * width);
  expect_tma_places<T>(Atom{}, M, Type, what.c_str());
  // A stage of 32 rows x 2 swizzle rows, tiled with the swizzle row's mode last: each W-wide
  // column of atoms is one TMA box of 32 rows, and the second box follows the first.
  constexpr int box = 32 * width;
  if constexpr (M == Major::K) {
    auto stage = tile_to_shape(Atom{}, Shape<_32, Int<2 * width>>{});  // (MN,K)
    for (int half = 0; half < 2; ++half)
      for (int r = 0; r < 32; ++r)
        for (int c = 0; c < width; ++c) {
          long long const dense = (long long)r * width + c;
          long long const want = half * box + tma_placement(dense * long(sizeof(T)), span_of(Type)) / long(sizeof(T));
          ASSERT_EQ((long long)stage(r, half * width + c), want) << "K-major stage, (" << r << "," << half * width + c << ")";
        }
  } else {
    auto stage = tile_to_shape(Atom{}, Shape<Int<2 * width>, _32>{}, Step<_2, _1>{});  // (MN,K)
    for (int half = 0; half < 2; ++half)
      for (int k = 0; k < 32; ++k)
        for (int mn = 0; mn < width; ++mn) {
          long long const dense = (long long)k * width + mn;
          long long const want = half * box + tma_placement(dense * long(sizeof(T)), span_of(Type)) / long(sizeof(T));
          ASSERT_EQ((long long)stage(half * width + mn, k), want) << "MN-major stage, (" << half * width + mn << "," << k << ")";
        }
  }
}

template <class T, Major M>
void check_all_types() {
  check_atom<T, M, LayoutType::INTERLEAVE>();
  check_atom<T, M, LayoutType::B32>();
  check_atom<T, M, LayoutType::B64>();
  check_atom<T, M, LayoutType::B128>();
}

}  // namespace

TEST(GmmaSmemLayout, AtomsAreWhatTmaWrites) {
  check_all_types<std::uint8_t, Major::K>();
  check_all_types<std::uint8_t, Major::MN>();
  check_all_types<bfloat16_t, Major::K>();
  check_all_types<bfloat16_t, Major::MN>();
  check_all_types<float, Major::K>();
  check_all_types<float, Major::MN>();
}

TEST(GmmaSmemLayout, PrintsAsCuTe) {
  EXPECT_EQ(to_string(GMMA::Layout_K_SW128_Atom<half_t>{}), "Sw<3,3,3> o _0 o (_8,_64):(_64,_1)");
  EXPECT_EQ(to_string(GMMA::Layout_K_SW64_Atom<bfloat16_t>{}), "Sw<2,3,3> o _0 o (_8,_32):(_32,_1)");
  EXPECT_EQ(to_string(GMMA::Layout_K_SW32_Atom<float>{}), "Sw<1,2,3> o _0 o (_8,_8):(_8,_1)");
  EXPECT_EQ(to_string(GMMA::Layout_K_INTER_Atom<std::uint8_t>{}), "Sw<0,4,3> o _0 o (_8,_16):(_16,_1)");
  EXPECT_EQ(to_string(GMMA::Layout_MN_SW128_Atom<float_e4m3_t>{}), "Sw<3,4,3> o _0 o (_128,_8):(_1,_128)");
  EXPECT_EQ(to_string(GMMA::Layout_MN_SW64_Atom<half_t>{}), "Sw<2,3,3> o _0 o (_32,_8):(_1,_32)");
  EXPECT_EQ(to_string(GMMA::Layout_MN_INTER_Atom<bfloat16_t>{}), "Sw<0,3,3> o _0 o (_8,_8):(_1,_8)");
}

// The kernel's stages: (128,64) and (256,64) bf16, (128,128) fp8, K-major in the 128-byte swizzle.
TEST(GmmaSmemLayout, KernelStagesAreOneTmaBox) {
  auto a = tile_to_shape(GMMA::Layout_K_SW128_Atom<bfloat16_t>{}, Shape<_128, _64>{});
  EXPECT_EQ(to_string(a), "Sw<3,3,3> o _0 o (_128,_64):(_64,_1)");
  expect_tma_places<bfloat16_t>(a, Major::K, LayoutType::B128, "bf16 A stage");
  auto b = tile_to_shape(GMMA::Layout_K_SW128_Atom<bfloat16_t>{}, Shape<_256, _64, _3>{});
  EXPECT_EQ(to_string(b), "Sw<3,3,3> o _0 o (_256,_64,_3):(_64,_1,_16384)");
  auto f = tile_to_shape(GMMA::Layout_K_SW128_Atom<float_e4m3_t>{}, Shape<_128, _128>{});
  EXPECT_EQ(to_string(f), "Sw<3,4,3> o _0 o (_128,_128):(_128,_1)");
  expect_tma_places<float_e4m3_t>(f, Major::K, LayoutType::B128, "fp8 A stage");
  // The epilogue's 64 x 64 16-bit staging box (gemm/epilogue/sm90_epilogue_staging.hpp).
  auto d = tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, Shape<_64, _64>{});
  expect_tma_places<half_t>(d, Major::K, LayoutType::B128, "D staging box");
}

// tile_to_shape's contract: copy q of the block at block offset cosize(block) * P(q).
TEST(TileToShape, PlacesCopiesInOrder) {
  using Block = Layout<Shape<_4, _8>, Stride<_8, _1>>;  // a 4 x 8 row-major block, cosize 32
  auto col = tile_to_shape(Block{}, Shape<_12, _16>{});                 // copies (3,2), column-major
  auto row = tile_to_shape(Block{}, Shape<_12, _16>{}, GenRowMajor{});  // row-major
  auto ord = tile_to_shape(Block{}, Shape<_12, _16>{}, Step<_2, _1>{});  // mode 1 first
  for (int r = 0; r < 12; ++r) {
    for (int c = 0; c < 16; ++c) {
      int const in_block = Block{}(r % 4, c % 8), qr = r / 4, qc = c / 8;
      EXPECT_EQ(int(col(r, c)), in_block + 32 * (qr + 3 * qc)) << r << "," << c;
      EXPECT_EQ(int(row(r, c)), in_block + 32 * (qr * 2 + qc)) << r << "," << c;
      EXPECT_EQ(int(ord(r, c)), in_block + 32 * (qr * 2 + qc)) << r << "," << c;
    }
  }
  EXPECT_EQ(to_string(tile_to_shape(Layout<Shape<_64, _8>, Stride<_1, _64>>{}, Shape<_128, _16>{}, Step<_2, _1>{})),
            "((_64,_2),_16):((_1,_1024),_64)");
  EXPECT_EQ(to_string(tile_to_shape(Layout<Shape<_8, _64>, Stride<_64, _1>>{}, Shape<_128, _64>{})), "(_128,_64):(_64,_1)");
  // A rank-2 block over a rank-3 shape (the pipeline stages).
  EXPECT_EQ(to_string(tile_to_shape(Layout<Shape<_8, _64>, Stride<_64, _1>>{}, Shape<_64, _128, _4>{})),
            "(_64,(_64,_2),_4):(_64,(_1,_4096),_8192)");
}
