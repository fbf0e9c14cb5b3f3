// The sm_80 GEMM configurations, checked on the host: every thread-value layout covers its tile as
// it must, and the whole data path of one k-tile -- cp.async into the swizzled buffer, ldmatrix
// out of it, the MMA's fragments, the epilogue's staging buffer -- delivers to every fragment
// register exactly the element the mma.sync instruction expects there.
//
// The data path is emulated from the same partitions the kernel builds (Config's tiled copies,
// layouts and TiledMMA, and the hoisted-swizzle views the mainloop addresses through): each shared-memory element is tagged with the (m,k) the cp.async
// partition writes into it, ldmatrix is played by its PTX definition (lane 8j+r gives row r of
// matrix j; lane t receives, of matrix j, the 32-bit word t%4 of row t/4 into register j), and the
// resulting fragment tags are compared with the TiledMMA's partition of an identity tensor.
#include <tessel/gemm/collective/sm80_gemm_config.hpp>
#include <tessel/gemm/collective/swizzle_hoist.hpp>
#include <tessel/gemm/epilogue/sm80_epilogue_staging.hpp>
#include <tessel/tensor.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

using namespace tessel;

namespace {

template <class Config>
std::string config_name() {
  return std::to_string(Config::TileM) + "x" + std::to_string(Config::TileN) + "x" + std::to_string(Config::TileK) +
         " " + std::to_string(sizeof(typename Config::Element) * 8) + "-bit, " + std::to_string(Config::Threads) +
         " threads";
}

// (m,k) -> tag m * cols + k, -1 for "nothing".
inline long tag_of(long m, long k, long cols) { return m * cols + k; }

// The tiled copy global -> shared covers the (Rows,BLK_K) tile exactly once, and writes every
// element of the stage (and nothing outside it). Returns the stage's tags (shared element -> (m,k)).
template <class Config, int Rows, class SmemLayout>
std::vector<long> cp_async_tags(int stage) {
  using Element = typename Config::Element;
  constexpr int BlkK = Config::TileK;
  std::vector<Element> smem(decltype(cosize(SmemLayout{}))::value);
  Tensor s = make_tensor(make_smem_ptr(smem.data()), SmemLayout{});                   // (ROWS,BLK_K,PIPE)
  Tensor c = make_identity_tensor(make_shape(Int<Rows>{}, Int<BlkK>{}));               // (ROWS,BLK_K) -> (m,k)
  typename Config::GmemTiledCopy g2s;
  std::vector<long> tags(smem.size(), -1);
  int const stage_size = Rows * BlkK;
  for (int t = 0; t < Config::Threads; ++t) {
    auto thr = g2s.get_slice(t);
    Tensor tXsX = thr.partition_D(s);  // (CPY,CPY_M,CPY_K,PIPE)
    Tensor tXcX = thr.partition_S(c);  // (CPY,CPY_M,CPY_K)
    EXPECT_EQ(int(size(tXcX)), Rows * BlkK / Config::Threads);
    Tensor tXsX_stage = tXsX(_, _, _, stage);  // (CPY,CPY_M,CPY_K)
    // The mainloop writes through the hoisted view: the same addresses.
    Tensor hoisted = collective::hoist_swizzle(tXsX);  // (CPY,CPY_M,CPY_K,PIPE)
    for (int i = 0; i < int(size(tXsX)); ++i) EXPECT_EQ(&hoisted(i), &tXsX(i)) << "thread " << t << " value " << i;
    for (int i = 0; i < int(size(tXcX)); ++i) {
      long const off = long(&tXsX_stage(i) - smem.data());
      auto mk = tXcX(i);
      EXPECT_GE(off, long(stage) * stage_size);
      EXPECT_LT(off, long(stage + 1) * stage_size);
      EXPECT_EQ(tags[off], -1) << "element " << off << " written twice";
      tags[off] = tag_of(long(get<0>(mk)), long(get<1>(mk)), BlkK);
    }
  }
  for (int e = stage * stage_size; e < (stage + 1) * stage_size; ++e) EXPECT_NE(tags[e], -1) << "element " << e << " never written";
  return tags;
}

// ldmatrix.x4 played by its definition over the shared-memory tags; the fragment tags must be the
// MMA's (m,k) at every register of every thread. IsA: operand A (M,K), else B (N,K).
template <class Config, bool IsA>
void check_ldmatrix_feeds_the_mma() {
  using Element = typename Config::Element;
  constexpr int Rows = IsA ? Config::TileM : Config::TileN;
  constexpr int BlkK = Config::TileK;
  using SmemLayout = std::conditional_t<IsA, typename Config::SmemLayoutA, typename Config::SmemLayoutB>;
  int const stage = Config::Stages - 1;
  std::vector<long> const tags = cp_async_tags<Config, Rows, SmemLayout>(stage);

  std::vector<Element> smem(decltype(cosize(SmemLayout{}))::value);
  Tensor s = make_tensor(make_smem_ptr(smem.data()), SmemLayout{});                                  // (ROWS,BLK_K,PIPE)
  Tensor s_shape = make_tensor(make_smem_ptr(smem.data()), make_layout(make_shape(Int<Rows>{}, Int<BlkK>{})));  // (ROWS,BLK_K)
  Tensor c = make_identity_tensor(make_shape(Int<Rows>{}, Int<BlkK>{}));                              // (ROWS,BLK_K) -> (m,k)
  typename Config::TiledMma mma;
  auto s2r = [&] {
    if constexpr (IsA) {
      return make_tiled_copy_A(typename Config::SmemCopyAtomA{}, mma);
    } else {
      return make_tiled_copy_B(typename Config::SmemCopyAtomB{}, mma);
    }
  }();
  constexpr int E = 4 / int(sizeof(Element));  // elements per 32-bit register

  for (int warp = 0; warp < Config::Threads / 32; ++warp) {
    // Every lane's fragment tags, filled by the emulated ldmatrix.
    std::vector<std::vector<long>> got(32);
    std::vector<std::vector<long>> want(32);
    // Row addresses (element offsets) of every lane for every ldmatrix (i, kb).
    for (int lane = 0; lane < 32; ++lane) {
      int const t = warp * 32 + lane;
      auto thr_mma = mma.get_slice(t);
      Tensor frg = [&] {
        if constexpr (IsA) {
          return thr_mma.partition_fragment_A(s_shape);
        } else {
          return thr_mma.partition_fragment_B(s_shape);
        }
      }();  // (MMA,MMA_M|N,MMA_K)
      Tensor crd = [&] {
        if constexpr (IsA) {
          return thr_mma.partition_A(c);
        } else {
          return thr_mma.partition_B(c);
        }
      }();  // (MMA,MMA_M|N,MMA_K) -> (m,k)
      ASSERT_EQ(int(size(frg)), int(size(crd)));
      got[lane].assign(size(frg), -2);
      want[lane].resize(size(frg));
      for (int i = 0; i < int(size(frg)); ++i) {
        long const slot = long(&frg(i) - frg.data());
        want[lane][slot] = tag_of(long(get<0>(crd(i))), long(get<1>(crd(i))), BlkK);
      }
    }
    // One ldmatrix per (i, kb): gather the lanes' row addresses, deliver the words.
    auto thr0 = s2r.get_slice(warp * 32);
    Tensor tCs0 = thr0.partition_S(s);  // (CPY,CPY_M,CPY_K,PIPE)
    for (int i = 0; i < int(size<1>(tCs0)); ++i) {
      for (int kb = 0; kb < int(size<2>(tCs0)); ++kb) {
        long row_addr[32];
        for (int lane = 0; lane < 32; ++lane) {
          auto thr = s2r.get_slice(warp * 32 + lane);
          Tensor tCs = thr.partition_S(s);
          row_addr[lane] = long(&tCs(0, i, kb, stage) - smem.data());
          // The mainloop reads through the hoisted view of k-block kb: the same addresses.
          for (int s2 = 0; s2 < int(size<3>(tCs)); ++s2)
            for (int e = 0; e < int(size<0>(tCs)); ++e)
              ASSERT_EQ(&collective::hoist_swizzle(tCs(_, _, kb, _))(e, i, s2), &tCs(e, i, kb, s2));
          // The lane's 16-byte row is contiguous in shared memory.
          for (int e = 1; e < int(size<0>(tCs)); ++e) ASSERT_EQ(long(&tCs(e, i, kb, stage) - smem.data()), row_addr[lane] + e);
        }
        for (int lane = 0; lane < 32; ++lane) {
          auto thr = s2r.get_slice(warp * 32 + lane);
          auto thr_mma = mma.get_slice(warp * 32 + lane);
          Tensor frg = [&] {
            if constexpr (IsA) {
              return thr_mma.partition_fragment_A(s_shape);
            } else {
              return thr_mma.partition_fragment_B(s_shape);
            }
          }();
          Tensor view = thr.retile_D(frg);  // (CPY,CPY_M,CPY_K)
          for (int j = 0; j < 4; ++j) {
            for (int e = 0; e < E; ++e) {
              long const src = row_addr[8 * j + lane / 4] + (lane % 4) * E + e;
              long const slot = long(&view(j * E + e, i, kb) - frg.data());
              got[lane][slot] = tags[src];
            }
          }
        }
      }
    }
    for (int lane = 0; lane < 32; ++lane) {
      for (std::size_t slot = 0; slot < want[lane].size(); ++slot) {
        ASSERT_EQ(got[lane][slot], want[lane][slot])
            << (IsA ? "A" : "B") << " thread " << warp * 32 + lane << " fragment slot " << slot << ": ldmatrix delivered (m,k) = ("
            << got[lane][slot] / BlkK << "," << got[lane][slot] % BlkK << "), the MMA expects (" << want[lane][slot] / BlkK
            << "," << want[lane][slot] % BlkK << ")";
      }
    }
  }
}

// The accumulators cover the CTA tile once, and each one's staging-buffer offset is where the
// epilogue's row-contiguous read-back looks for it: (m - pass * StepM) * Pitch + n.
template <class Config>
void check_accumulators_and_staging() {
  using Epi = epilogue::Sm80EpilogueStaging<Config>;
  constexpr int M = Config::TileM, N = Config::TileN;
  std::vector<float> staging(Epi::StepM * Epi::Pitch);
  Tensor sC = make_tensor(make_smem_ptr(staging.data()), typename Epi::StagingLayout{});  // (BLK_M,BLK_N), passes aliased
  Tensor cC = make_identity_tensor(make_shape(Int<M>{}, Int<N>{}));                          // (BLK_M,BLK_N) -> (m,n)
  typename Config::TiledMma mma;
  std::vector<int> hits(M * N, 0);
  for (int t = 0; t < Config::Threads; ++t) {
    auto thr = mma.get_slice(t);
    Tensor tCsC = thr.partition_C(sC);  // (MMA,MMA_M,MMA_N)
    Tensor tCcC = thr.partition_C(cC);  // (MMA,MMA_M,MMA_N) -> (m,n)
    Tensor acc = partition_fragment_C(mma, make_shape(Int<M>{}, Int<N>{}));
    ASSERT_EQ(int(size(acc)), int(size(tCcC)));
    ASSERT_EQ(int(size<1>(tCcC)), Epi::Passes);
    for (int v = 0; v < int(size<0>(tCcC)); ++v)
      for (int pass = 0; pass < int(size<1>(tCcC)); ++pass)
        for (int n = 0; n < int(size<2>(tCcC)); ++n) {
          auto mn = tCcC(v, pass, n);
          int const gm = int(get<0>(mn)), gn = int(get<1>(mn));
          ++hits[gm * N + gn];
          ASSERT_EQ(gm / Epi::StepM, pass) << "accumulator (" << gm << "," << gn << ") is not in pass " << pass;
          ASSERT_EQ(long(&tCsC(v, pass, n) - staging.data()), long(gm - pass * Epi::StepM) * Epi::Pitch + gn);
        }
  }
  for (int e = 0; e < M * N; ++e) ASSERT_EQ(hits[e], 1) << "output (" << e / N << "," << e % N << ")";
}

// Whole-tile staging (Out = D's type): each accumulator's staged offset is m * Pitch + n, and the
// read-back's 16-byte chunks cover the tile exactly once.
template <class Config, class Out>
void check_whole_tile_staging() {
  using TS = epilogue::Sm80EpilogueTileStaging<Config, Out>;
  constexpr int M = Config::TileM, N = Config::TileN;
  std::vector<Out> staging(M * TS::Pitch);
  Tensor sD = make_tensor(make_smem_ptr(staging.data()), typename TS::StagingLayout{});  // (BLK_M,BLK_N)
  Tensor cC = make_identity_tensor(make_shape(Int<M>{}, Int<N>{}));                      // (BLK_M,BLK_N) -> (m,n)
  typename Config::TiledMma mma;
  for (int t = 0; t < Config::Threads; ++t) {
    auto thr = mma.get_slice(t);
    Tensor tCsD = thr.partition_C(sD);  // (MMA,MMA_M,MMA_N)
    Tensor tCcC = thr.partition_C(cC);  // (MMA,MMA_M,MMA_N) -> (m,n)
    for (int i = 0; i < int(size(tCcC)); ++i) {
      auto mn = tCcC(i);
      ASSERT_EQ(long(&tCsD(i) - staging.data()), long(get<0>(mn)) * TS::Pitch + long(get<1>(mn)));
    }
  }
  std::vector<int> hits(M * N, 0);
  for (int t = 0; t < Config::Threads; ++t)
    for (int j = 0; j < TS::ChunksPerThread; ++j) {
      auto const c = TS::chunk(t, j);
      ASSERT_LT(c.row, M);
      ASSERT_EQ((c.row * TS::Pitch + c.col) * int(sizeof(Out)) % 16, 0) << "a staged chunk is not 16-byte aligned";
      for (int e = 0; e < TS::ChunkElems; ++e) ++hits[c.row * N + c.col + e];
    }
  for (int e = 0; e < M * N; ++e) ASSERT_EQ(hits[e], 1) << "output (" << e / N << "," << e % N << ")";
}

template <class Config>
void check_config() {
  SCOPED_TRACE(config_name<Config>());
  check_ldmatrix_feeds_the_mma<Config, true>();
  check_ldmatrix_feeds_the_mma<Config, false>();
  check_accumulators_and_staging<Config>();
  check_whole_tile_staging<Config, float>();
  if constexpr (!std::is_same_v<typename Config::Element, float>) check_whole_tile_staging<Config, typename Config::Element>();
}

template <class E, int M, int N, int K, int WM, int WN, int S>
using Cfg = collective::Sm80GemmConfig<E, M, N, K, WM, WN, S>;

}  // namespace

// The configurations compiled in src/gemm/sm80_*.cu (fp16 shares bf16's layouts).
TEST(Sm80TvCoverage, Bf16_128x256x64) { check_config<Cfg<bfloat16_t, 128, 256, 64, 2, 4, 3>>(); }
TEST(Sm80TvCoverage, Bf16_128x128x32) { check_config<Cfg<bfloat16_t, 128, 128, 32, 2, 2, 4>>(); }
TEST(Sm80TvCoverage, F16_64x64x64) { check_config<Cfg<half_t, 64, 64, 64, 2, 2, 3>>(); }
TEST(Sm80TvCoverage, Tf32_128x128x32) { check_config<Cfg<float, 128, 128, 32, 2, 2, 3>>(); }
TEST(Sm80TvCoverage, Tf32_64x64x32) { check_config<Cfg<float, 64, 64, 32, 2, 2, 3>>(); }

// The tiled MMA's fragments are the PTX positions: one 16x8x16 bf16 warp, checked against the ISA
// table directly (lane = 4*group + q: a_i at (group + 8*((i/2)%2), 2q + i%2 + 8*(i/4))).
// (A template, as the other checks: the GPU machine's g++ stopped with an internal error when
// make_identity_tensor was instantiated first from a non-template function.)
template <class C>
void check_ptx_a_table() {
  typename C::TiledMma mma;
  Tensor cA = make_identity_tensor(make_shape(Int<C::TileM>{}, Int<C::TileK>{}));  // (BLK_M,BLK_K) -> (m,k)
  for (int lane = 0; lane < 32; ++lane) {
    int const group = lane / 4, q = lane % 4;
    Tensor a = mma.get_slice(lane).partition_A(cA);  // (MMA,MMA_M,MMA_K) of warp 0
    for (int i = 0; i < 8; ++i) {
      auto mk = a(i, 0, 0);
      EXPECT_EQ(int(get<0>(mk)), group + 8 * ((i / 2) % 2)) << lane << " a" << i;
      EXPECT_EQ(int(get<1>(mk)), 2 * q + i % 2 + 8 * (i / 4)) << lane << " a" << i;
    }
  }
}

TEST(Sm80TvCoverage, MmaFragmentsFollowThePtxTables) { check_ptx_a_table<Cfg<bfloat16_t, 128, 256, 64, 2, 4, 3>>(); }
