// Shared-memory matrix descriptors made from layouts (atom/gmma_descriptor.hpp), bit by bit:
// the field encoding; the PTX ISA's own worked examples (section "Canonical Layouts": the exact
// layouts it prints and the LBO/SBO it derives); the kernel's hand-written
// wgmma_desc_k_major_sw128 for every slice the sm90 GEMM reads; the atoms of every swizzle and
// major-ness tiled to an operand; and the refusals. Then descriptor fragments
// (atom/gmma_desc_fragment.hpp): every position is its slice's descriptor, an SS TiledMMA's
// partition_fragment_A/B are fragments, and the GEMM's stage tiles give its descriptors.
#include <tessel/arch/sm90_mma_wgmma.hpp>
#include <tessel/atom/gmma_descriptor.hpp>
#include <tessel/atom/gmma_desc_fragment.hpp>
#include <tessel/atom/mma_traits_sm90.hpp>
#include <tessel/atom/sm90_wgmma_select.hpp>
#include <tessel/gemm/collective/sm90_operand_tile.hpp>
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

// Host memory standing in for a CTA's shared memory. A descriptor holds 14 bits of address / 16,
// a 256 KiB window; shared memory lies inside one, so a fragment's k-slice steps never carry out
// of the field. A host array's address is arbitrary (and moves with ASLR), so the tiles start at
// a 256 KiB boundary inside a static arena: there, as on the GPU, no step crosses the window.
template <class T>
T* shared_window() {
  constexpr std::uintptr_t Window = std::uintptr_t(1) << 18;
  alignas(1024) static unsigned char arena[2 * Window];
  auto const start = (reinterpret_cast<std::uintptr_t>(arena) + Window - 1) & ~(Window - 1);
  return reinterpret_cast<T*>(arena + (start - reinterpret_cast<std::uintptr_t>(arena)));
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

// ---- descriptor fragments (atom/gmma_desc_fragment.hpp) ----------------------------------------

// The worked example at the top of gmma_desc_fragment.hpp.
TEST(GmmaDescFragment, WorkedExample) {
  using T = bfloat16_t;
  auto stage = tile_to_shape(GMMA::Layout_K_SW128_Atom<T>{}, Shape<_64, _64>{});  // (BLK_M,BLK_K)
  auto thr = make_tiled_mma(MMA_Atom<SM90_64x64x16_F32BF16BF16_SS<0, 0>>{}).get_slice(0);
  Tensor tCsA = thr.partition_A(make_tensor(make_smem_ptr((T*)nullptr), stage));  // (MMA,MMA_M,MMA_K)
  Tensor tCrA = GMMA::make_gmma_desc_fragment<Major::K, T>(tCsA.layout(), 0x1000);  // (_1,MMA_M,MMA_K)
  EXPECT_EQ(to_string(tCrA.layout()), "(_1,_1,_4):(_0,_0,_16)");
  EXPECT_EQ(tCrA(0, 0, 2), 0x4000004000010104ull);
  EXPECT_EQ(tCrA(0, 0, 2), bits(0x1000 + 2 * 32, 16, 1024, 0, 1));
}

// Every position of a fragment is make_gmma_desc of its own slice of the partition, for every
// atom (major-ness and swizzle), over a stage ring (a third mode of stages kept in the fragment),
// for both warpgroups of a 2x1 TiledMMA, and sliced the way a mainloop slices it (fragment(_, _,
// k, stage), then one instruction's (_, m)).
template <Major M, LayoutType Type, class Op, int Stages>
void check_fragment() {
  constexpr int stages = Stages;
  using T = typename MMA_Traits<Op>::ValTypeA;
  using Atom = GMMA::smem_atom<T, M, Type>;
  constexpr int TileK = 128 / int(sizeof(T));  // one 128-byte row of K
  auto ring = [&] {  // (BLK_M,BLK_K,PIPE)
    if constexpr (M == Major::K) return tile_to_shape(Atom{}, make_shape(_128{}, Int<TileK>{}, Int<Stages>{}));
    else return tile_to_shape(Atom{}, make_shape(_128{}, Int<TileK>{}, Int<Stages>{}), Step<_2, _1, _3>{});
  }();
  SCOPED_TRACE(to_string(ring));
  auto mma = make_tiled_mma(MMA_Atom<Op>{}, Layout<Shape<_2, _1, _1>>{});
  std::uint32_t const base = 0x8000;
  for (int t : {0, 77, 128, 255}) {
    auto thr = mma.get_slice(t);
    Tensor tCsA = thr.partition_A(make_tensor(make_smem_ptr((T*)nullptr), ring));  // (MMA,MMA_M,MMA_K,PIPE)
    Tensor tCrA = GMMA::make_gmma_desc_fragment<M, T>(tCsA.layout(), base);            // (_1,MMA_M,MMA_K,PIPE)
    ASSERT_EQ(int(size(tCrA)), int(size<1>(tCsA)) * int(size<2>(tCsA)) * stages);
    for (int s = 0; s < stages; ++s) {
      for (int k = 0; k < int(size<2>(tCsA)); ++k) {
        for (int m = 0; m < int(size<1>(tCsA)); ++m) {
          std::uint64_t const want = GMMA::make_gmma_desc<M, T>(tCsA(_, m, k, s).layout(), base);
          EXPECT_EQ(tCrA(0, m, k, s), want) << "thread " << t << " m " << m << " k " << k << " stage " << s;
          Tensor kslice = tCrA(_, _, k, s);  // (_1,MMA_M)
          EXPECT_EQ(*kslice(_, m).data(), want);
        }
      }
    }
  }
}

TEST(GmmaDescFragment, EveryPositionIsItsSlicesDescriptor) {
  check_fragment<Major::K, LayoutType::B128, SM90_64x64x16_F32BF16BF16_SS<0, 0>, 4>();
  check_fragment<Major::K, LayoutType::B64, SM90_64x64x16_F32F16F16_SS<0, 0>, 2>();
  check_fragment<Major::K, LayoutType::B32, SM90_64x64x16_F32BF16BF16_SS<0, 0>, 2>();
  check_fragment<Major::K, LayoutType::INTERLEAVE, SM90_64x64x16_F32BF16BF16_SS<0, 0>, 2>();
  check_fragment<Major::MN, LayoutType::B128, SM90_64x64x16_F32BF16BF16_SS<1, 0>, 3>();
  check_fragment<Major::MN, LayoutType::B64, SM90_64x64x16_F32F16F16_SS<1, 0>, 2>();
  check_fragment<Major::MN, LayoutType::INTERLEAVE, SM90_64x64x16_F32BF16BF16_SS<1, 0>, 2>();
  check_fragment<Major::K, LayoutType::B128, SM90_64x64x32_F32E4M3E4M3_SS, 3>();
}

// partition_fragment_A/B of an SS TiledMMA are the descriptor fragments (the traits' own); the
// RS atom's A fragment stays registers and its B is descriptors. On the host a shared-memory
// tensor's address is its pointer's own low bits.
TEST(GmmaDescFragment, PartitionFragmentOfAnSsAtom) {
  using T = half_t;
  T* const smem = shared_window<T>();  // 2 x 128 x 64 elements
  auto stage = tile_to_shape(GMMA::Layout_K_SW128_Atom<T>{}, Shape<_128, _64>{});  // (BLK_M,BLK_K)
  Tensor sA = make_tensor(make_smem_ptr(smem), stage);
  Tensor sB = make_tensor(make_smem_ptr(smem + 128 * 64), stage);
  auto mma = make_tiled_mma(MMA_Atom<SM90_64x128x16_F32F16F16_SS<0, 0>>{}, Layout<Shape<_2, _1, _1>>{});
  auto thr = mma.get_slice(130);  // warpgroup 1: A rows 64..127
  Tensor tCrA = thr.partition_fragment_A(sA);  // (_1,MMA_M,MMA_K)
  Tensor tCrB = thr.partition_fragment_B(sB);  // (_1,MMA_N,MMA_K)
  static_assert(std::is_same_v<typename decltype(tCrA)::value_type, std::uint64_t>, "SS fragments hold descriptors");
  auto const addr = [](void const* p) { return std::uint32_t(reinterpret_cast<std::uintptr_t>(p)); };
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(tCrA(0, 0, k), bits(addr(smem + 64 * 64) + 32 * k, 16, 1024, 0, 1)) << "k " << k;
    EXPECT_EQ(tCrB(0, 0, k), bits(addr(smem + 128 * 64) + 32 * k, 16, 1024, 0, 1)) << "k " << k;
  }
  EXPECT_EQ(int(mma.accumulate_), int(GMMA::ScaleOut::One));

  auto rs = make_tiled_mma(MMA_Atom<SM90_64x128x16_F32F16F16_RS<0>>{});
  auto rthr = rs.get_slice(5);
  Tensor tCrA_regs = rthr.partition_fragment_A(make_tensor(make_smem_ptr(smem), Layout<Shape<_64, _64>>{}));  // (MMA,MMA_M,MMA_K)
  static_assert(std::is_same_v<typename decltype(tCrA_regs)::value_type, T>, "an RS atom's A fragment is registers");
  EXPECT_EQ(int(size(tCrA_regs)), 8 * 4);
  Tensor tCrB_rs = rthr.partition_fragment_B(sB);  // (_1,MMA_N,MMA_K)
  EXPECT_EQ(tCrB_rs(0, 0, 3), bits(addr(smem + 128 * 64) + 96, 16, 1024, 0, 1));
}

// A step between slices that is not whole 16-byte units cannot be a descriptor's: a run-time
// layout is refused on the host.
TEST(GmmaDescFragment, RefusesStepsOfPartUnits) {
  using T = bfloat16_t;
  auto k_slice = composition(tile_to_shape(GMMA::Layout_K_SW128_Atom<T>{}, Shape<_64, _64>{}),
                             make_tile(Layout<_64>{}, Layout<_16>{}));  // (64,16): one instruction's A
  auto bad = make_layout(make_layout(k_slice.layout_b().shape(), k_slice.layout_b().stride()),
                         make_layout(make_shape(1), make_stride(1)), make_layout(make_shape(2), make_stride(4)));  // k steps of 8 bytes
  expect_refusal([&] { (void)GMMA::make_gmma_desc_fragment<Major::K, T>(composition(Swizzle<3, 3, 3>{}, bad), 0); },
                 "not a multiple of 16 bytes");
}

// The sm90 GEMM's stage tiles (collective/sm90_operand_tile.hpp) read through descriptor
// fragments give the descriptors its kernels were written with: K-major, the 128-byte-swizzle
// descriptor of the rows (SBO 1024) advanced 32 bytes per k-slice; MN-major, one 64 x TileK box
// per 64 rows, LBO = a box (ChunkBytes), advanced 16 K-rows = 2048 bytes per k-slice. An MN-major
// A share of 64 rows is one box wide, so its LBO is never used and the vocabulary writes 16.
template <class T, int TileN, class Op, bool MnMajorToo>
void check_stage_fragments() {
  using Tile = collective::Sm90OperandTile<T, 128 / int(sizeof(T))>;
  constexpr int K = int(decltype(size<2>(typename MMA_Traits<Op>::Shape_MNK{}))::value);
  constexpr int TileK = 128 / int(sizeof(T));
  T* const smem = shared_window<T>();  // (128 + TileN) x TileK elements
  T* const a = smem + 64 * TileK;  // consumer 1's rows of a 128-row A
  T* const b = smem + 128 * TileK;
  auto const addr = [](T const* p) { return std::uint32_t(reinterpret_cast<std::uintptr_t>(p)); };
  auto mma = make_tiled_mma(Op{});
  Tensor tCrA = Tile::template fragment_A<0, 64>(mma, a);     // (_1,_1,MMA_K)
  Tensor tCrB = Tile::template fragment_B<0, TileN>(mma, b);  // (_1,_1,MMA_K)
  ASSERT_EQ(int(size<2>(tCrA)), TileK / K);
  for (int kk = 0; kk < TileK / K; ++kk) {
    EXPECT_EQ(tCrA(0, 0, kk), bits(addr(a) + 32 * kk, 16, 1024, 0, 1)) << "K-major A, k-slice " << kk;
    EXPECT_EQ(tCrB(0, 0, kk), bits(addr(b) + 32 * kk, 16, 1024, 0, 1)) << "K-major B, k-slice " << kk;
  }
  if constexpr (MnMajorToo) {
    constexpr std::uint32_t Box = Tile::ChunkBytes;
    auto mn = make_tiled_mma(typename kernel::Sm90WgmmaOf<T, TileN>::template Transposed<1, 1>{});
    Tensor tCrA_mn = Tile::template fragment_A<1, 64>(mn, a);     // (_1,_1,MMA_K)
    Tensor tCrB_mn = Tile::template fragment_B<1, TileN>(mn, b);  // (_1,_1,MMA_K)
    for (int kk = 0; kk < TileK / K; ++kk) {
      EXPECT_EQ(tCrA_mn(0, 0, kk), bits(addr(a) + 2048 * kk, 16, 1024, 0, 1)) << "MN-major A, k-slice " << kk;
      EXPECT_EQ(tCrB_mn(0, 0, kk), bits(addr(b) + 2048 * kk, Box, 1024, 0, 1)) << "MN-major B, k-slice " << kk;
    }
  }
}

TEST(GmmaDescFragment, TheGemmStageTiles) {
  check_stage_fragments<bfloat16_t, 256, SM90_64x256x16_F32BF16BF16_SS<0, 0>, true>();
  check_stage_fragments<half_t, 128, SM90_64x128x16_F32F16F16_SS<0, 0>, true>();
  check_stage_fragments<bfloat16_t, 16, SM90_64x16x16_F32BF16BF16_SS<0, 0>, false>();
  check_stage_fragments<float_e4m3_t, 256, SM90_64x256x32_F32E4M3E4M3_SS, false>();
  check_stage_fragments<tfloat32_t, 256, SM90_64x256x8_F32TF32TF32_SS, false>();
}
