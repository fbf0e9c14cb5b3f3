// Shared-memory bank conflicts: the analyser (tessel/analysis/bank_conflicts.hpp) on cases with
// known answers, then every sm_80 GEMM configuration's shared-memory instructions -- the cp.async
// stores of both operands, the ldmatrix loads of both operands, the epilogue's 64-bit staging
// stores and 128-bit read-back -- each warp, each instruction, each pipeline stage: 0 conflicts.
// The addresses come from the partitions the kernel builds (the configuration's layouts and tiled
// copies), not from a separate formula.
#include <tessel/analysis/bank_conflicts.hpp>
#include <tessel/gemm/collective/sm80_gemm_config.hpp>
#include <tessel/gemm/epilogue/sm80_epilogue_staging.hpp>
#include <tessel/tensor.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

using namespace tessel;
using analysis::analyse;
using analysis::describe;
using analysis::shared_instruction;
using analysis::SmemOp;

// ---- the analyser -----------------------------------------------------------------------------------

TEST(BankConflictAnalyser, KnownCases) {
  // Consecutive floats: one wavefront.
  EXPECT_EQ(analyse(shared_instruction(SmemOp::access, 4, [](int l) { return 4 * l; })).conflicts(), 0);
  // Column of a 32x32 float tile: every lane in bank 0.
  auto column = analyse(shared_instruction(SmemOp::access, 4, [](int l) { return 128 * l; }));
  EXPECT_EQ(column.wavefronts, 32);
  EXPECT_EQ(column.conflicts(), 31);
  // The same column padded to 33 floats a row: conflict-free.
  EXPECT_EQ(analyse(shared_instruction(SmemOp::access, 4, [](int l) { return 132 * l; })).conflicts(), 0);
  // Broadcast: all lanes read one word.
  EXPECT_EQ(analyse(shared_instruction(SmemOp::access, 4, [](int) { return 64; })).conflicts(), 0);
  // Two lanes per word (16-bit elements): 16 words, no conflict.
  EXPECT_EQ(analyse(shared_instruction(SmemOp::access, 2, [](int l) { return 2 * l; })).conflicts(), 0);
  // 16-byte vectors, consecutive: 4 phases of 8 lanes, one wavefront each.
  auto v16 = analyse(shared_instruction(SmemOp::access, 16, [](int l) { return 16 * l; }));
  EXPECT_EQ(v16.phases, 4);
  EXPECT_EQ(v16.conflicts(), 0);
  // 16-byte vectors 256 bytes apart: the 8 lanes of a phase all on one bank group, 8-way.
  EXPECT_EQ(analyse(shared_instruction(SmemOp::access, 16, [](int l) { return 256 * l; })).conflicts(), 4 * 7);
  // 8-byte vectors, lanes 64 bytes apart: half-warps of 16 lanes on 2 words of 8 banks -> 8-way.
  EXPECT_EQ(analyse(shared_instruction(SmemOp::access, 8, [](int l) { return 64 * l; })).conflicts(), 2 * 7);
  // Inactive lanes do not count.
  EXPECT_EQ(analyse(shared_instruction(SmemOp::access, 4, [](int l) { return l == 0 ? 0 : -1; })).wavefronts, 1);
}

TEST(BankConflictAnalyser, LdmatrixOverPlainAndSwizzledRows) {
  // An 8x64 half tile, row-major (128-byte rows): ldmatrix.x4 of the first 8x8 blocks of 4 column
  // chunks. Unswizzled, the 8 rows of one matrix share one 16-byte bank group: 8-way.
  auto plain = make_layout(make_shape(Int<8>{}, Int<64>{}), make_stride(Int<64>{}, Int<1>{}));
  auto swizzled = composition(Swizzle<3, 3, 3>{}, plain);
  auto rows_of = [](auto const& layout) {
    return [layout](int lane) { return 2 * int(layout(lane % 8, 8 * (lane / 8))); };  // matrix lane/8, row lane%8
  };
  auto p = analyse(shared_instruction(SmemOp::ldmatrix, 16, rows_of(plain)));
  EXPECT_EQ(p.phases, 4);
  EXPECT_EQ(p.conflicts(), 4 * 7);
  EXPECT_EQ(analyse(shared_instruction(SmemOp::ldmatrix, 16, rows_of(swizzled))).conflicts(), 0);
}

// ---- the sm80 configurations --------------------------------------------------------------------------

namespace {

template <class Config>
std::string config_name() {
  return std::to_string(Config::TileM) + "x" + std::to_string(Config::TileN) + "x" + std::to_string(Config::TileK) +
         " " + std::to_string(sizeof(typename Config::Element) * 8) + "-bit";
}

// Every cp.async of every warp into every stage of an operand buffer of `Rows` rows.
template <class Config, int Rows, class SmemLayout>
void check_cp_async(char const* operand) {
  using Element = typename Config::Element;
  std::vector<Element> smem(decltype(cosize(SmemLayout{}))::value);
  Tensor s = make_tensor(make_smem_ptr(smem.data()), SmemLayout{});  // (ROWS,BLK_K,PIPE)
  typename Config::GmemTiledCopy g2s;
  int instructions = 0;
  for (int warp = 0; warp < Config::Threads / 32; ++warp) {
    Tensor t0 = g2s.get_slice(warp * 32).partition_D(s);  // (CPY,CPY_M,CPY_K,PIPE)
    for (int m = 0; m < int(size<1>(t0)); ++m)
      for (int k = 0; k < int(size<2>(t0)); ++k)
        for (int stage = 0; stage < Config::Stages; ++stage) {
          auto in = shared_instruction(SmemOp::access, 16, [&](int lane) {
            Tensor t = g2s.get_slice(warp * 32 + lane).partition_D(s);
            return long(reinterpret_cast<char const*>(&t(0, m, k, stage)) - reinterpret_cast<char const*>(smem.data()));
          });
          auto r = analyse(in);
          ++instructions;
          ASSERT_EQ(r.conflicts(), 0) << operand << " cp.async warp " << warp << " (" << m << "," << k << ") stage "
                                      << stage << ": " << describe(r);
        }
  }
  EXPECT_GT(instructions, 0);
}

// Every ldmatrix.x4 of every warp from every stage.
template <class Config, bool IsA>
void check_ldmatrix() {
  using Element = typename Config::Element;
  using SmemLayout = std::conditional_t<IsA, typename Config::SmemLayoutA, typename Config::SmemLayoutB>;
  std::vector<Element> smem(decltype(cosize(SmemLayout{}))::value);
  Tensor s = make_tensor(make_smem_ptr(smem.data()), SmemLayout{});  // (ROWS,BLK_K,PIPE)
  typename Config::TiledMma mma;
  auto s2r = [&] {
    if constexpr (IsA) {
      return make_tiled_copy_A(typename Config::SmemCopyAtomA{}, mma);
    } else {
      return make_tiled_copy_B(typename Config::SmemCopyAtomB{}, mma);
    }
  }();
  for (int warp = 0; warp < Config::Threads / 32; ++warp) {
    Tensor t0 = s2r.get_slice(warp * 32).partition_S(s);  // (CPY,CPY_M,CPY_K,PIPE)
    for (int i = 0; i < int(size<1>(t0)); ++i)
      for (int kb = 0; kb < int(size<2>(t0)); ++kb)
        for (int stage = 0; stage < Config::Stages; ++stage) {
          auto in = shared_instruction(SmemOp::ldmatrix, 16, [&](int lane) {
            Tensor t = s2r.get_slice(warp * 32 + lane).partition_S(s);
            return long(reinterpret_cast<char const*>(&t(0, i, kb, stage)) - reinterpret_cast<char const*>(smem.data()));
          });
          auto r = analyse(in);
          ASSERT_EQ(r.conflicts(), 0) << (IsA ? "A" : "B") << " ldmatrix warp " << warp << " (" << i << "," << kb
                                      << ") stage " << stage << ": " << describe(r);
        }
  }
}

// The epilogue: 64-bit stores of the accumulators' column pairs, 128-bit read-back.
template <class Config>
void check_epilogue_staging() {
  using Epi = epilogue::Sm80EpilogueStaging<Config>;
  std::vector<float> staging(Epi::StepM * Epi::Pitch);
  Tensor sC = make_tensor(make_smem_ptr(staging.data()), typename Epi::StagingLayout{});  // (BLK_M,BLK_N)
  typename Config::TiledMma mma;
  for (int warp = 0; warp < Config::Threads / 32; ++warp) {
    Tensor t0 = mma.get_slice(warp * 32).partition_C(sC);  // (MMA,MMA_M,MMA_N)
    for (int half = 0; half < 2; ++half)                   // values (0,1) and (2,3): rows g and g+8
      for (int pass = 0; pass < int(size<1>(t0)); ++pass)
        for (int n = 0; n < int(size<2>(t0)); ++n) {
          auto r = analyse(shared_instruction(SmemOp::access, 8, [&](int lane) {
            Tensor t = mma.get_slice(warp * 32 + lane).partition_C(sC);
            EXPECT_EQ(&t(2 * half + 1, pass, n), &t(2 * half, pass, n) + 1) << "a column pair is not contiguous";
            return 4 * long(&t(2 * half, pass, n) - staging.data());
          }));
          ASSERT_EQ(r.conflicts(), 0) << "staging store warp " << warp << " (" << half << "," << pass << "," << n
                                      << "): " << describe(r);
        }
    for (int j = 0; j < Epi::ChunksPerThread; ++j)
      for (bool first : {true, false}) {
        auto r = analyse(shared_instruction(SmemOp::access, 16, [&](int lane) {
          return 4 * Epi::read_offset(warp * 32 + lane, j, first);
        }));
        ASSERT_EQ(r.conflicts(), 0) << "staging read-back warp " << warp << " chunk " << j << ": " << describe(r);
      }
  }
}

// Whole-tile staging of D's type Out: column-pair stores (4 or 8 bytes), 16-byte read-back.
template <class Config, class Out>
void check_whole_tile_staging() {
  using TS = epilogue::Sm80EpilogueTileStaging<Config, Out>;
  std::vector<Out> staging(Config::TileM * TS::Pitch);
  Tensor sD = make_tensor(make_smem_ptr(staging.data()), typename TS::StagingLayout{});  // (BLK_M,BLK_N)
  typename Config::TiledMma mma;
  constexpr int E = int(sizeof(Out));
  for (int warp = 0; warp < Config::Threads / 32; ++warp) {
    Tensor t0 = mma.get_slice(warp * 32).partition_C(sD);  // (MMA,MMA_M,MMA_N)
    for (int half = 0; half < 2; ++half)
      for (int m = 0; m < int(size<1>(t0)); ++m)
        for (int n = 0; n < int(size<2>(t0)); ++n) {
          auto r = analyse(shared_instruction(SmemOp::access, 2 * E, [&](int lane) {
            Tensor t = mma.get_slice(warp * 32 + lane).partition_C(sD);
            EXPECT_EQ(&t(2 * half + 1, m, n), &t(2 * half, m, n) + 1) << "a column pair is not contiguous";
            return E * long(&t(2 * half, m, n) - staging.data());
          }));
          ASSERT_EQ(r.conflicts(), 0) << "whole-tile staging store (" << E << "-byte D) warp " << warp << " (" << half << ","
                                      << m << "," << n << "): " << describe(r);
        }
    for (int j = 0; j < TS::ChunksPerThread; ++j) {
      auto r = analyse(shared_instruction(SmemOp::access, 16, [&](int lane) {
        auto const c = TS::chunk(warp * 32 + lane, j);
        return E * long(c.row * TS::Pitch + c.col);
      }));
      ASSERT_EQ(r.conflicts(), 0) << "whole-tile read-back warp " << warp << " chunk " << j << ": " << describe(r);
    }
  }
}

template <class Config>
void check_config() {
  SCOPED_TRACE(config_name<Config>());
  check_whole_tile_staging<Config, float>();
  if constexpr (!std::is_same_v<typename Config::Element, float>) check_whole_tile_staging<Config, typename Config::Element>();
  check_cp_async<Config, Config::TileM, typename Config::SmemLayoutA>("A");
  check_cp_async<Config, Config::TileN, typename Config::SmemLayoutB>("B");
  check_ldmatrix<Config, true>();
  check_ldmatrix<Config, false>();
  check_epilogue_staging<Config>();
}

template <class E, int M, int N, int K, int WM, int WN, int S>
using Cfg = collective::Sm80GemmConfig<E, M, N, K, WM, WN, S>;

}  // namespace

TEST(BankConflictSm80, Bf16_128x256x64) { check_config<Cfg<bfloat16_t, 128, 256, 64, 2, 4, 3>>(); }
TEST(BankConflictSm80, Bf16_128x128x32) { check_config<Cfg<bfloat16_t, 128, 128, 32, 2, 2, 4>>(); }
TEST(BankConflictSm80, F16_64x64x64) { check_config<Cfg<half_t, 64, 64, 64, 2, 2, 3>>(); }
TEST(BankConflictSm80, Tf32_128x128x32) { check_config<Cfg<float, 128, 128, 32, 2, 2, 3>>(); }
TEST(BankConflictSm80, Tf32_64x64x32) { check_config<Cfg<float, 64, 64, 32, 2, 2, 3>>(); }

// The swizzle is what makes the difference: the same ldmatrix over the unswizzled K-major tile
// (64-byte rows) conflicts.
TEST(BankConflictSm80, UnswizzledTileConflicts) {
  auto plain = make_layout(make_shape(Int<128>{}, Int<32>{}), make_stride(Int<32>{}, Int<1>{}));  // bf16, BLK_K 32
  // ldmatrix.x4 of rows 0-7 (matrix j = column chunk j): 64-byte rows put rows r and r+2 on one bank group.
  auto r = analyse(shared_instruction(SmemOp::ldmatrix, 16, [&](int lane) {
    return 2 * long(plain(lane % 8, 8 * (lane / 8)));
  }));
  EXPECT_GT(r.conflicts(), 0) << describe(r);
}
