// tessel/conv/kernel/sm80_conv_config.hpp -- one sm_80 implicit-GEMM convolution configuration:
// the GEMM configuration it builds on, the shared-memory buffers of K-major and MN-major operands,
// and which 16-byte chunks of a stage each thread fills (the kernel is
// sm80_implicit_gemm_conv.hpp). Host-compilable: tests/host/sm80_conv_tv_test.cpp checks that the
// chunks cover every stage once and that ldmatrix / ldmatrix.trans out of these buffers deliver
// what the MMA expects.
//
// Copy partitions: a K-major operand (fprop A and B, dgrad A) is (Rows, 32) per stage, 4 threads
// per row, each thread 16 bytes along K; an MN-major one (dgrad B, wgrad A and B) is 32 k-rows of
// Rows contiguous elements, Rows/8 threads per k-row, each thread 16 bytes along the rows.
//   e.g. 128x128x32, 256 threads: K-major rows 0-63 in the first pass, 64-127 in the second;
//        MN-major k-rows 0-15, then 16-31.
#pragma once

#include <tessel/arch/sm75_copy_ldmatrix.hpp>
#include <tessel/atom/copy_atom.hpp>
#include <tessel/config.hpp>
#include <tessel/conv/operator.hpp>
#include <tessel/gemm/collective/sm80_gemm_config.hpp>
#include <tessel/gemm/epilogue/sm80_epilogue_staging.hpp>
#include <tessel/layout.hpp>

#include <type_traits>

namespace tessel::kernel {

// The shared-memory buffer of an MN-major operand: `Rows` elements contiguous per k, BlkK k's per
// stage, `Stages` stages. Rows are cut into 64-element (128-byte) blocks; each (64, BlkK) block is
// swizzled Sw<3,3,3>: 16-byte chunk j of row k moves to chunk j ^ (k mod 8), so the 8 chunks of a
// k-row (one cp.async pass) and the 8 k-rows of one chunk column (one ldmatrix.trans) both hit 8
// distinct 16-byte bank groups.
//   e.g. Rows 128, BlkK 32, Stages 4: Sw<3,3,3> o ((_64,_2),_32,_4):((_1,_2048),_64,_4096)
template <class Element, int Rows, int BlkK, int Stages>
TESSEL_HOST_DEVICE constexpr auto sm80_smem_layout_mnmajor() {
  static_assert(sizeof(Element) == 2, "sm80 MN-major shared-memory layout: 16-bit elements (ldmatrix.trans moves b16)");
  static_assert(Rows % 64 == 0, "sm80 MN-major shared-memory layout: the M (N) extent of the tile must be a multiple of 64");
  static_assert(BlkK % 8 == 0, "sm80 MN-major shared-memory layout: BLK_K must be a multiple of the 8-row swizzle period");
  return composition(Swizzle<3, 3, 3>{},
                     make_layout(make_shape(make_shape(Int<64>{}, Int<Rows / 64>{}), Int<BlkK>{}, Int<Stages>{}),
                                 make_stride(make_stride(Int<1>{}, Int<64 * BlkK>{}), Int<64>{}, Int<Rows * BlkK>{})));
}

// One sm_80 implicit-GEMM convolution configuration: the GEMM configuration (tile, warps, stages,
// TiledMma, K-major layouts) and the width of the global accesses, in elements (8, 4, 2 or 1).
//   e.g. Sm80ConvConfig<bfloat16_t, 128, 128, 32, 2, 4, 4, 8>: 256 threads, warp tile 64x32,
//        4 stages of (128 + 128) x 32 x 2 B = 64 KiB
template <class Element_, int TileM_, int TileN_, int TileK_, int WarpsM_, int WarpsN_, int Stages_, int Access_>
struct Sm80ConvConfig : collective::Sm80GemmConfig<Element_, TileM_, TileN_, TileK_, WarpsM_, WarpsN_, Stages_> {
  using Base = collective::Sm80GemmConfig<Element_, TileM_, TileN_, TileK_, WarpsM_, WarpsN_, Stages_>;
  static constexpr int Access = Access_;
  static_assert(Access_ == 8 || Access_ == 4 || Access_ == 2 || Access_ == 1,
                "Sm80ConvConfig: a global access moves 8, 4, 2 or 1 elements (16, 8, 4 or 2 bytes)");
  static_assert(sizeof(Element_) == 2, "Sm80ConvConfig: the convolution kernels take bfloat16_t or half_t");
  static_assert(TileK_ == 32, "Sm80ConvConfig: the copy partitions assume BLK_K = 32 (four 16-byte chunks per K-major row)");
  using SmemLayoutAMn = decltype(sm80_smem_layout_mnmajor<Element_, TileM_, TileK_, Stages_>());  // (BLK_M,BLK_K,PIPE)
  using SmemLayoutBMn = decltype(sm80_smem_layout_mnmajor<Element_, TileN_, TileK_, Stages_>());  // (BLK_N,BLK_K,PIPE)
};

// The partitions and shared memory of the implicit-GEMM kernel for one Config and op.
template <class Config_, conv::Operator Op>
struct Sm80ImplicitGemmConv {
  using Config = Config_;
  using Element = typename Config::Element;
  static constexpr int BlkM = Config::TileM, BlkN = Config::TileN, BlkK = Config::TileK;
  static constexpr int Stages = Config::Stages, Threads = Config::Threads;
  static constexpr int Access = Config::Access;
  static constexpr int Accesses = 8 / Access;  // global accesses per 16-byte shared-memory chunk
  static constexpr bool AMn = Op == conv::Operator::kWgrad;  // A is MN-major
  static constexpr bool BMn = Op != conv::Operator::kFprop;  // B is MN-major

  using SmemLayoutA = std::conditional_t<AMn, typename Config::SmemLayoutAMn, typename Config::SmemLayoutA>;
  using SmemLayoutB = std::conditional_t<BMn, typename Config::SmemLayoutBMn, typename Config::SmemLayoutB>;
  using SmemCopyAtomA = Copy_Atom<std::conditional_t<AMn, SM75_U16x8_LDSM_T, SM75_U32x4_LDSM_N>, Element>;
  using SmemCopyAtomB = Copy_Atom<std::conditional_t<BMn, SM75_U16x8_LDSM_T, SM75_U32x4_LDSM_N>, Element>;
  using Staging = epilogue::Sm80EpilogueStaging<Config>;

  // Copy partitions: a K-major operand as (rows, 4 chunks), 4 threads per row; an MN-major one as
  // (BLK_K rows of k, Rows/8 chunks), Rows/8 threads per k-row.
  static constexpr int KChunks = BlkK / 8;
  static constexpr int KRowsPerPass = Threads / KChunks;
  template <int Rows>
  static constexpr int mn_threads_per_k_row = Rows / 8;
  template <int Rows>
  static constexpr int mn_k_rows_per_pass = Threads / (Rows / 8);
  static constexpr int CopiesA = AMn ? BlkK / mn_k_rows_per_pass<BlkM> : BlkM / KRowsPerPass;  // chunks per thread
  static constexpr int CopiesB = BMn ? BlkK / mn_k_rows_per_pass<BlkN> : BlkN / KRowsPerPass;
  static_assert(BlkM % KRowsPerPass == 0 && BlkN % KRowsPerPass == 0,
                "Sm80ImplicitGemmConv: a K-major copy pass covers Threads/4 rows; BLK_M and BLK_N must be multiples of it");
  static_assert(Threads % (BlkM / 8) == 0 && Threads % (BlkN / 8) == 0 && BlkK % mn_k_rows_per_pass<BlkM> == 0 &&
                    BlkK % mn_k_rows_per_pass<BlkN> == 0,
                "Sm80ImplicitGemmConv: an MN-major copy pass covers Threads/(BLK/8) k-rows; BLK_K must be a multiple of it");

  struct MainloopStorage {
    alignas(128) Element a[decltype(cosize(SmemLayoutA{}))::value];
    alignas(128) Element b[decltype(cosize(SmemLayoutB{}))::value];
  };
  struct EpilogueStorage {
    alignas(128) float c[Staging::StepM * Staging::Pitch];
  };
  union SharedStorage {
    MainloopStorage mainloop;
    EpilogueStorage epilogue;
  };
  static constexpr int SmemBytes = int(sizeof(SharedStorage));
  static constexpr int StageElemsA = BlkM * BlkK, StageElemsB = BlkN * BlkK;

  // Chunk i of thread `thread` in operand A (B): the tile coordinate (row, k) of its first
  // element; its 8 elements run along k (K-major operand) or along the rows (MN-major).
  struct Coord {
    int row, k;
  };
  template <bool Mn, int Rows>
  TESSEL_HOST_DEVICE static constexpr Coord chunk(int thread, int i) {
    if constexpr (Mn) {
      return {(thread % (Rows / 8)) * 8, thread / (Rows / 8) + i * mn_k_rows_per_pass<Rows>};
    } else {
      return {thread / KChunks + i * KRowsPerPass, (thread % KChunks) * 8};
    }
  }
  TESSEL_HOST_DEVICE static constexpr Coord chunk_a(int thread, int i) { return chunk<AMn, BlkM>(thread, i); }
  TESSEL_HOST_DEVICE static constexpr Coord chunk_b(int thread, int i) { return chunk<BMn, BlkN>(thread, i); }
  // Its element offset in stage 0 of the swizzled buffer (a stage adds StageElemsA/B: whole
  // swizzle periods).
  TESSEL_HOST_DEVICE static int smem_offset_a(int thread, int i) {
    Coord const c = chunk_a(thread, i);
    return int(SmemLayoutA{}(c.row, c.k, 0));
  }
  TESSEL_HOST_DEVICE static int smem_offset_b(int thread, int i) {
    Coord const c = chunk_b(thread, i);
    return int(SmemLayoutB{}(c.row, c.k, 0));
  }
};

}  // namespace tessel::kernel
