// Shared-memory matrix descriptors made from layouts (atom/gmma_descriptor.hpp), bit by bit:
// the field encoding; the PTX ISA's own worked examples (section "Canonical Layouts": the exact
// layouts it prints and the LBO/SBO it derives); the kernel's hand-written
// wgmma_desc_k_major_sw128 for every slice the sm90 GEMM reads; the atoms of every swizzle and
// major-ness tiled to an operand; and the refusals.
#include <tessel/arch/sm90_mma_wgmma.hpp>
#include <tessel/atom/gmma_descriptor.hpp>
#include <tessel/atom/mma_traits_sm90.hpp>
#include <tessel/layout/tile_to_shape.hpp>
#include <tessel/tensor.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

using namespace tessel;
using GMMA::LayoutType;
using GMMA::Major;

namespace {

// The descriptor's bits, written out field by field (PTX ISA "Matrix Descriptor Format").
std::uint64_t bits(std::uint32_t start, std::uint32_t lbo, std::uint32_t sbo, std::uint32_t base_offset, int swizzle) {
  return std::uint64_t((start & 0x3FFFF) >> 4) | (std::uint64_t((lbo & 0x3FFFF) >> 4) << 16) |
         (std::uint64_t((sbo & 0x3FFFF) >> 4) << 32) | (std::uint64_t(base_offset) << 49) | (std::uint64_t(swizzle) << 62);
}

}  // namespace

TEST(GmmaDescriptor, FieldsAreTheBits) {
  GMMA::DescriptorFields f;
  f.start_address = 0x12340;
  f.leading_byte_offset = 0x450;
  f.stride_byte_offset = 0x3FFF0;
  f.base_offset = 5;
  f.layout_type = LayoutType::B64;
  std::uint64_t const d = GMMA::encode(f);
  EXPECT_EQ(d & 0x3FFF, 0x1234u);
  EXPECT_EQ((d >> 14) & 3, 0u);
  EXPECT_EQ((d >> 16) & 0x3FFF, 0x45u);
  EXPECT_EQ((d >> 30) & 3, 0u);
  EXPECT_EQ((d >> 32) & 0x3FFF, 0x3FFFu);
  EXPECT_EQ((d >> 46) & 7, 0u);
  EXPECT_EQ((d >> 49) & 7, 5u);
  EXPECT_EQ((d >> 52) & 0x3FF, 0u);
  EXPECT_EQ(d >> 62, 2u);  // 64-byte swizzle
  EXPECT_EQ(d, bits(0x12340, 0x450, 0x3FFF0, 5, 2));
  GMMA::DescriptorFields const g = GMMA::decode(d);
  EXPECT_EQ(g.start_address, f.start_address);
  EXPECT_EQ(g.leading_byte_offset, f.leading_byte_offset);
  EXPECT_EQ(g.stride_byte_offset, f.stride_byte_offset);
  EXPECT_EQ(g.base_offset, f.base_offset);
  EXPECT_EQ(g.layout_type, f.layout_type);
  EXPECT_EQ(int(LayoutType::B128), 1);
  EXPECT_EQ(int(LayoutType::B32), 3);
}

// PTX ISA 9.7.15.5.1.2.1.3, the examples that are one operand of one instruction (K = 16 or
// 32 bytes of k): "Exact layout" as printed there, element offsets; LBO/SBO as it gives them.
TEST(GmmaDescriptor, PtxIsaExamples) {
  // MN-major, no swizzle, bf16: Swizzle<0,4,3> o ((8,1,2),(8,2)):((1,8,64),(8,128)); LBO 128*2, SBO 64*2.
  using MnNone = Layout<Shape<Shape<_8, _1, _2>, Shape<_8, _2>>, Stride<Stride<_1, _8, _64>, Stride<_8, _128>>>;
  auto const d0 = GMMA::decode(GMMA::make_gmma_desc<Major::MN, bfloat16_t>(MnNone{}, 0));
  EXPECT_EQ(d0.layout_type, LayoutType::INTERLEAVE);
  EXPECT_EQ(d0.leading_byte_offset, 256u);
  EXPECT_EQ(d0.stride_byte_offset, 128u);
  // MN-major, 32B swizzle, bf16: Swizzle<1,4,3> o ((8,2,2),(8,2)):((1,8,128),(16,256)); LBO 128*2, SBO 256*2.
  auto mn32 = composition(Swizzle<1, 3, 3>{},
                          Layout<Shape<Shape<_8, _2, _2>, Shape<_8, _2>>, Stride<Stride<_1, _8, _128>, Stride<_16, _256>>>{});
  auto const d1 = GMMA::decode(GMMA::make_gmma_desc<Major::MN, bfloat16_t>(mn32, 0));
  EXPECT_EQ(d1.layout_type, LayoutType::B32);
  EXPECT_EQ(d1.leading_byte_offset, 256u);
  EXPECT_EQ(d1.stride_byte_offset, 512u);
  // MN-major, 64B swizzle, bf16: Swizzle<2,4,3> o ((8,4,2),(8,2)):((1,8,256),(32,512)); LBO 256*2, SBO 512*2.
  auto mn64 = composition(Swizzle<2, 3, 3>{},
                          Layout<Shape<Shape<_8, _4, _2>, Shape<_8, _2>>, Stride<Stride<_1, _8, _256>, Stride<_32, _512>>>{});
  EXPECT_EQ((GMMA::make_gmma_desc<Major::MN, bfloat16_t>(mn64, 0)), bits(0, 512, 1024, 0, 2));
  // K-major, no swizzle, tf32: Swizzle<0,4,3> o ((8,2),(4,4)):((4,32),(1,64)); LBO 64*4, SBO 32*4.
  using KNone = Layout<Shape<Shape<_8, _2>, Shape<_4, _4>>, Stride<Stride<_4, _32>, Stride<_1, _64>>>;
  EXPECT_EQ((GMMA::make_gmma_desc<Major::K, tfloat32_t>(KNone{}, 0)), bits(0, 256, 128, 0, 0));
}

// The sm90 GEMM kernel's operands: K-major, 128-byte swizzle, (TileM,TileK) A and (TileN,TileK) B
// stages; consumer c reads A rows 64c.., and k-slice kk is the descriptor + 2*kk. make_gmma_desc
// of the TiledMMA's partition slices must give exactly wgmma_desc_k_major_sw128's bits.
template <class T, int TileN, class Op>
void check_kernel_descriptors() {
  constexpr int TileK = 128 / int(sizeof(T));
  constexpr int K = int(decltype(size<2>(typename MMA_Traits<Op>::Shape_MNK{}))::value);
  auto mma = make_tiled_mma(MMA_Atom<Op>{}, Layout<Shape<_2, _1, _1>>{});
  auto layout_a = tile_to_shape(GMMA::Layout_K_SW128_Atom<T>{}, Shape<_128, Int<TileK>>{});   // (BLK_M,BLK_K)
  auto layout_b = tile_to_shape(GMMA::Layout_K_SW128_Atom<T>{}, Shape<Int<TileN>, Int<TileK>>{});  // (BLK_N,BLK_K)
  std::uint32_t const base_a = 0x400, base_b = 0x400 + 128 * TileK * sizeof(T) * 3;  // 1024-aligned stages
  for (int consumer = 0; consumer < 2; ++consumer) {
    auto thr = mma.get_slice(128 * consumer + 5);
    auto tCsA = thr.partition_A(make_tensor(make_smem_ptr((T*)nullptr), layout_a));  // (MMA,MMA_M,MMA_K)
    auto tCsB = thr.partition_B(make_tensor(make_smem_ptr((T*)nullptr), layout_b));  // (MMA,MMA_N,MMA_K)
    ASSERT_EQ(int(size<2>(tCsA)), TileK / K);
    for (int kk = 0; kk < TileK / K; ++kk) {
      std::uint64_t const kernel_a = wgmma_desc_k_major_sw128(nullptr) + ((base_a + consumer * 64 * TileK * sizeof(T)) >> 4) + 2 * kk;
      std::uint64_t const kernel_b = wgmma_desc_k_major_sw128(nullptr) + (base_b >> 4) + 2 * kk;
      EXPECT_EQ((GMMA::make_gmma_desc<Major::K, T>(tCsA(_, 0, kk).layout(), base_a)), kernel_a)
          << "A consumer " << consumer << " k-slice " << kk;
      EXPECT_EQ((GMMA::make_gmma_desc<Major::K, T>(tCsB(_, 0, kk).layout(), base_b)), kernel_b)
          << "B k-slice " << kk;
    }
  }
}

TEST(GmmaDescriptor, KernelDescriptorsAreTheHandWrittenOnes) {
  EXPECT_EQ(wgmma_desc_k_major_sw128(nullptr), bits(0, 16, 1024, 0, 1));
  check_kernel_descriptors<bfloat16_t, 256, SM90_64x256x16_F32BF16BF16_SS<0, 0>>();
  check_kernel_descriptors<half_t, 128, SM90_64x128x16_F32F16F16_SS<0, 0>>();
  check_kernel_descriptors<bfloat16_t, 64, SM90_64x64x16_F32BF16BF16_SS<0, 0>>();
  check_kernel_descriptors<float_e4m3_t, 128, SM90_64x128x32_F32E4M3E4M3_SS>();
}

// Every atom tiled to a (64, 64) bf16 A stage (K-major: atoms along M first; MN-major: along K
// first, so each swizzle-row-wide column of atoms is one TMA box), partitioned by an
// m64n64k16 TiledMMA: at every k-step the LBO/SBO of the canonical layouts, worked out by hand
// from the atom's cosize (64 elements per 8 x 16 bytes ... 512 per 8 x 128 bytes), and the
// start address of the slice's first element.
template <Major M, LayoutType Type>
void check_tiled_atom(std::uint32_t lbo, std::uint32_t sbo) {
  using T = bfloat16_t;
  using Op = SM90_64x64x16_F32BF16BF16_SS<M == Major::MN ? 1 : 0, 0>;
  using Atom = GMMA::smem_atom<T, M, Type>;
  auto stage = [] {
    if constexpr (M == Major::K) return tile_to_shape(Atom{}, Shape<_64, _64>{});
    else return tile_to_shape(Atom{}, Shape<_64, _64>{}, Step<_2, _1>{});
  }();
  SCOPED_TRACE(to_string(stage));
  std::vector<T> smem(64 * 64);
  auto thr = make_tiled_mma(MMA_Atom<Op>{}).get_slice(3);
  Tensor tCsA = thr.partition_A(make_tensor(make_smem_ptr(smem.data()), stage));  // (MMA,MMA_M,MMA_K)
  ASSERT_EQ(int(size<2>(tCsA)), 4);
  std::uint32_t const base = 0x2000;
  for (int kk = 0; kk < 4; ++kk) {
    GMMA::DescriptorFields const f = GMMA::decode(GMMA::make_gmma_desc<M, T>(tCsA(_, 0, kk).layout(), base));
    EXPECT_EQ(f.layout_type, Type);
    EXPECT_EQ(f.leading_byte_offset, lbo) << "k-step " << kk;
    EXPECT_EQ(f.stride_byte_offset, sbo) << "k-step " << kk;
    EXPECT_EQ(f.start_address, base + 2 * std::uint32_t(stage.layout_b()(0, 16 * kk))) << "k-step " << kk;
    EXPECT_EQ(f.base_offset, 0u);
  }
}

TEST(GmmaDescriptor, EveryAtomTiled) {
  check_tiled_atom<Major::K, LayoutType::INTERLEAVE>(1024, 128);  // next 8 k: 8 atoms of 64 down; next 8 rows: 64
  check_tiled_atom<Major::K, LayoutType::B32>(16, 256);           // rows of 32 bytes
  check_tiled_atom<Major::K, LayoutType::B64>(16, 512);
  check_tiled_atom<Major::K, LayoutType::B128>(16, 1024);
  check_tiled_atom<Major::MN, LayoutType::INTERLEAVE>(128, 1024);  // next 8 k: 64; next 8 mn: 8 atoms of 64
  check_tiled_atom<Major::MN, LayoutType::B32>(2048, 256);         // next 16 mn: 8 atoms of 128; next 8 k: 128
  check_tiled_atom<Major::MN, LayoutType::B64>(4096, 512);
  check_tiled_atom<Major::MN, LayoutType::B128>(16, 1024);        // 64 mn fit one row: LBO unused
}

// The SW128 K-major slices move by 32 bytes per k-step inside the row (the kernel's "+2").
TEST(GmmaDescriptor, KStepsInsideTheSwizzleRow) {
  using T = half_t;
  auto stage = tile_to_shape(GMMA::Layout_K_SW128_Atom<T>{}, Shape<_64, _64>{});
  auto thr = make_tiled_mma(MMA_Atom<SM90_64x64x16_F32F16F16_SS<0, 0>>{}).get_slice(0);
  Tensor tCsA = thr.partition_A(make_tensor(make_smem_ptr((T*)nullptr), stage));  // (MMA,MMA_M,MMA_K)
  std::uint64_t const d0 = GMMA::make_gmma_desc<Major::K, T>(tCsA(_, 0, 0).layout(), 0x6000);
  EXPECT_EQ(d0, bits(0x6000, 16, 1024, 0, 1));
  for (int kk = 1; kk < 4; ++kk) EXPECT_EQ((GMMA::make_gmma_desc<Major::K, T>(tCsA(_, 0, kk).layout(), 0x6000)), d0 + 2 * kk);
}

namespace {
// `make` must throw an AlgebraError whose message says `what`.
template <class F>
void expect_refusal(F const& make, char const* what) {
  try {
    make();
    ADD_FAILURE() << "accepted; expected a refusal saying \"" << what << "\"";
  } catch (AlgebraError const& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}
}  // namespace

// Layouts the descriptor cannot describe are refused, saying which rule.
TEST(GmmaDescriptor, Refusals) {
  using T = bfloat16_t;
  // A plain row-major 64 x 16 tile: rows 32 bytes apart, no 8 x 16-byte core matrices.
  auto row_major = make_layout(make_shape(64, 16), make_stride(16, 1));  // run-time: checked on the host
  EXPECT_EQ((GMMA::gmma_descriptor_layout<Major::K, T>(row_major).error), GMMA::DescError::canonical);
  expect_refusal([&] { (void)GMMA::make_gmma_desc<Major::K, T>(row_major, 0); }, "not a canonical wgmma operand layout");
  // The right shape, read with the wrong major-ness.
  auto k_sw128 = composition(tile_to_shape(GMMA::Layout_K_SW128_Atom<T>{}, Shape<_64, _64>{}),
                             make_tile(Layout<_64>{}, Layout<_16>{}));  // the first k-step's (64,16)
  EXPECT_EQ((GMMA::gmma_descriptor_layout<Major::MN, T>(k_sw128).error), GMMA::DescError::canonical);
  EXPECT_EQ((GMMA::gmma_descriptor_layout<Major::K, T>(k_sw128).error), GMMA::DescError::none);
  // A swizzle in byte terms applied to 16-bit offsets: not the 16-byte-chunk swizzle.
  auto bytes_swizzle = composition(Swizzle<3, 4, 3>{}, Layout<Shape<_64, _16>, Stride<_64, _1>>{});
  EXPECT_EQ((GMMA::gmma_descriptor_layout<Major::K, T>(bytes_swizzle).error), GMMA::DescError::swizzle);
  // A pattern-misaligned base: the hardware's XOR would not be the layout's.
  expect_refusal([&] { (void)GMMA::make_gmma_desc<Major::K, T>(k_sw128, 0x1200); }, "not aligned to the swizzle pattern");
  EXPECT_NO_THROW(((void)GMMA::make_gmma_desc<Major::K, T>(k_sw128, 0x1400)));
}
