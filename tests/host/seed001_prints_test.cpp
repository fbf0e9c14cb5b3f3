// Seed 001 reproduced exactly: the TiledCopy/TiledMMA prints recorded from CuTe
// (tests/oracle/data/seed_prints.txt, a copy of ../shared/oracle/seed_prints.txt), and the
// partition facts of the blog post (thread 19, offset 152, (19,2) -> 209 -> (1,26), the copied
// half_t values of tQsQ).
#include <tessel/tensor.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace tessel;

namespace {

// The blocks of seed_prints.txt: "==== title" -> the text up to the next blank line.
std::map<std::string, std::string> oracle_blocks() {
  std::ifstream in(std::string(TESSEL_SOURCE_DIR) + "/tests/oracle/data/seed_prints.txt");
  EXPECT_TRUE(in.good()) << "tests/oracle/data/seed_prints.txt is missing";
  std::map<std::string, std::string> blocks;
  std::string line, title, body;
  auto flush = [&] {
    if (!title.empty()) blocks[title] = body;
    title.clear();
    body.clear();
  };
  while (std::getline(in, line)) {
    if (line.rfind("==== ", 0) == 0) {
      flush();
      title = line.substr(5);
    } else if (line.empty()) {
      flush();
    } else if (!title.empty()) {
      body += line + "\n";
    }
  }
  flush();
  return blocks;
}

template <class TC>
std::string tiled_copy_report(TC const& tc) {
  std::ostringstream os;
  os << "---- print(tiled_copy)\n" << to_string(tc);
  os << "---- size(tiled_copy) = " << size(tc) << "\n";
  os << "---- get_layoutS_TV() = " << tc.get_layoutS_TV() << "\n";
  os << "---- get_layoutD_TV() = " << tc.get_layoutD_TV() << "\n";
  return os.str();
}

template <class TM>
std::string tiled_mma_report(TM const& mma) {
  std::ostringstream os;
  os << "---- print(tiled_mma)\n" << to_string(mma);
  os << "---- size(tiled_mma) = " << size(mma) << "\n";
  os << "---- tile_size<0,1,2> = " << tile_size<0>(mma) << "," << tile_size<1>(mma) << "," << tile_size<2>(mma) << "\n";
  os << "---- get_layoutA_TV() = " << mma.get_layoutA_TV() << "\n";
  os << "---- get_layoutB_TV() = " << mma.get_layoutB_TV() << "\n";
  os << "---- get_layoutC_TV() = " << mma.get_layoutC_TV() << "\n";
  return os.str();
}

template <class T>
auto seed_tiled_copy() {
  return make_tiled_copy(Copy_Atom<AutoVectorizingCopyWithAssumedAlignment<128>, T>{},
                         make_layout(Shape<_8, _16>{}, GenRowMajor{}), make_layout(Shape<_1, _8>{}, GenRowMajor{}));
}

}  // namespace

TEST(Seed001, TiledCopyPrintsMatchCuTe) {
  auto blocks = oracle_blocks();
  std::string const head = "make_tiled_copy(Copy_Atom<AutoVectorizingCopyWithAssumedAlignment<128>,";
  std::string const tail = ">{}, make_layout(Shape<_8,_16>{}, GenRowMajor{}), make_layout(Shape<_1,_8>{}, GenRowMajor{}))";
  ASSERT_TRUE(blocks.count(head + "half_t" + tail));
  ASSERT_TRUE(blocks.count(head + "bfloat16_t" + tail));
  EXPECT_EQ(tiled_copy_report(seed_tiled_copy<half_t>()), blocks[head + "half_t" + tail]);
  EXPECT_EQ(tiled_copy_report(seed_tiled_copy<bfloat16_t>()), blocks[head + "bfloat16_t" + tail]);
}

TEST(Seed001, TiledMmaPrintsMatchCuTe) {
  auto blocks = oracle_blocks();
  std::string const k1 =
      "make_tiled_mma(MMA_Atom<SM80_16x8x8_F32F16F16F32_TN>{}, make_layout(Shape<_4,_1,_1>{}, GenRowMajor{}), "
      "Tile<_64,_16,_16>{})";
  std::string const k2 =
      "make_tiled_mma(MMA_Atom<SM80_16x8x16_F32BF16BF16F32_TN>{}, make_layout(Shape<_2,_2,_1>{}), "
      "Tile<_32,_32,_16>{})";
  std::string const k3 =
      "make_tiled_mma(MMA_Atom<SM80_16x8x16_F32BF16BF16F32_TN>{}, make_layout(Shape<_2,_2,_1>{}), (no permutation: "
      "Tile<_,_,_> default))";
  ASSERT_TRUE(blocks.count(k1) && blocks.count(k2) && blocks.count(k3));
  EXPECT_EQ(tiled_mma_report(make_tiled_mma(MMA_Atom<SM80_16x8x8_F32F16F16F32_TN>{},
                                            make_layout(Shape<_4, _1, _1>{}, GenRowMajor{}), Tile<_64, _16, _16>{})),
            blocks[k1]);
  EXPECT_EQ(tiled_mma_report(make_tiled_mma(MMA_Atom<SM80_16x8x16_F32BF16BF16F32_TN>{},
                                            make_layout(Shape<_2, _2, _1>{}), Tile<_32, _32, _16>{})),
            blocks[k2]);
  EXPECT_EQ(tiled_mma_report(make_tiled_mma(MMA_Atom<SM80_16x8x16_F32BF16BF16F32_TN>{}, make_layout(Shape<_2, _2, _1>{}))),
            blocks[k3]);
  // The bf16 16x8x8 atom of the seed's other branch prints the same layouts as the f16 one.
  EXPECT_EQ(to_string(MMA_Atom<SM80_16x8x8_F32BF16BF16F32_TN>{}), to_string(MMA_Atom<SM80_16x8x8_F32F16F16F32_TN>{}));
}

TEST(Seed001, QTilePartitionOfThread19) {
  // Q: (B=1, H=32, N_QO=2048, HeadDim=128) row-major with run-time extents.
  int const B = 1, H = 32, N = 2048, D = 128;
  std::vector<half_t> q(std::size_t(B) * H * N * D);
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = half_t(float(i));
  Tensor Q = make_tensor(make_gmem_ptr(q.data()), make_layout(make_shape(B, H, N, D), GenRowMajor{}));
  Tensor gQ = local_tile(Q, make_shape(_1{}, _1{}, _64{}, _128{}), make_coord(0, 0, 0, 0))(0, 0, _, _);  // (64,128)
  EXPECT_EQ(to_string(gQ.layout()), "(_64,_128):(128,_1)");

  std::vector<half_t> smem(64 * 128, half_t(-1.0f));
  Tensor sQ = make_tensor(make_smem_ptr(smem.data()), make_layout(make_shape(_64{}, _128{}), GenRowMajor{}));

  auto tiled_copy = seed_tiled_copy<half_t>();
  auto thr_copy = tiled_copy.get_slice(19);
  Tensor tQgQ = thr_copy.partition_S(gQ);  // (CPY,CPY_M,CPY_N)
  Tensor tQsQ = thr_copy.partition_D(sQ);
  EXPECT_EQ(to_string(tQgQ.layout()), "((_1,_8),_8,_1):((_0,_1),1024,_0)");
  EXPECT_EQ(to_string(tQsQ.layout()), "((_1,_8),_8,_1):((_0,_1),_1024,_0)");
  EXPECT_EQ(raw_pointer(tQsQ.data()) - smem.data(), 152);  // 1*16*8 + 3*8: coordinate (1,24)

  // The source TV layout sends (thread 19, value 2) to 209, coordinate (1,26) of the 8x128 tile.
  auto tv = tiled_copy.get_layoutS_TV();
  EXPECT_EQ(tv(19, 2), 209);
  auto crd = idx2crd(209, make_shape(_8{}, _128{}));
  EXPECT_EQ(int(get<0>(crd)), 1);
  EXPECT_EQ(int(get<1>(crd)), 26);

  // Every thread copies its share; thread 19 then holds what the blog printed (half_t rounds
  // the indices above 2048 to even).
  for (int t = 0; t < 128; ++t) {
    auto thr = tiled_copy.get_slice(t);
    copy(tiled_copy, thr.partition_S(gQ), thr.partition_D(sQ));
  }
  std::string printed;
  for (int i = 0; i < int(size(tQsQ)); ++i) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "tQsQ(%d): %f\n", i, double(float(tQsQ(i))));
    printed += buf;
  }
  std::string const blog =
      "tQsQ(0): 152.000000\ntQsQ(1): 153.000000\ntQsQ(2): 154.000000\ntQsQ(3): 155.000000\n"
      "tQsQ(4): 156.000000\ntQsQ(5): 157.000000\ntQsQ(6): 158.000000\ntQsQ(7): 159.000000\n"
      "tQsQ(8): 1176.000000\ntQsQ(9): 1177.000000\ntQsQ(10): 1178.000000\ntQsQ(11): 1179.000000\n"
      "tQsQ(12): 1180.000000\ntQsQ(13): 1181.000000\ntQsQ(14): 1182.000000\ntQsQ(15): 1183.000000\n"
      "tQsQ(16): 2200.000000\ntQsQ(17): 2200.000000\ntQsQ(18): 2202.000000\ntQsQ(19): 2204.000000\n"
      "tQsQ(20): 2204.000000\ntQsQ(21): 2204.000000\ntQsQ(22): 2206.000000\ntQsQ(23): 2208.000000\n"
      "tQsQ(24): 3224.000000\ntQsQ(25): 3224.000000\ntQsQ(26): 3226.000000\ntQsQ(27): 3228.000000\n"
      "tQsQ(28): 3228.000000\ntQsQ(29): 3228.000000\ntQsQ(30): 3230.000000\ntQsQ(31): 3232.000000\n"
      "tQsQ(32): 4248.000000\ntQsQ(33): 4248.000000\ntQsQ(34): 4248.000000\ntQsQ(35): 4252.000000\n"
      "tQsQ(36): 4252.000000\ntQsQ(37): 4252.000000\ntQsQ(38): 4256.000000\ntQsQ(39): 4256.000000\n"
      "tQsQ(40): 5272.000000\ntQsQ(41): 5272.000000\ntQsQ(42): 5272.000000\ntQsQ(43): 5276.000000\n"
      "tQsQ(44): 5276.000000\ntQsQ(45): 5276.000000\ntQsQ(46): 5280.000000\ntQsQ(47): 5280.000000\n"
      "tQsQ(48): 6296.000000\ntQsQ(49): 6296.000000\ntQsQ(50): 6296.000000\ntQsQ(51): 6300.000000\n"
      "tQsQ(52): 6300.000000\ntQsQ(53): 6300.000000\ntQsQ(54): 6304.000000\ntQsQ(55): 6304.000000\n"
      "tQsQ(56): 7320.000000\ntQsQ(57): 7320.000000\ntQsQ(58): 7320.000000\ntQsQ(59): 7324.000000\n"
      "tQsQ(60): 7324.000000\ntQsQ(61): 7324.000000\ntQsQ(62): 7328.000000\ntQsQ(63): 7328.000000\n";
  EXPECT_EQ(printed, blog);
  for (std::size_t i = 0; i < smem.size(); ++i) ASSERT_EQ(smem[i].raw(), q[i].raw()) << "element " << i;
}

TEST(Seed001, LdmatrixCopyForTheMmaOperand) {
  // The smem -> register side of the seed: SM75_U32x4_LDSM_N fitted to the TiledMMA's A operand.
  auto mma = make_tiled_mma(MMA_Atom<SM80_16x8x8_F32F16F16F32_TN>{}, make_layout(Shape<_4, _1, _1>{}, GenRowMajor{}),
                            Tile<_64, _16, _16>{});
  auto s2r = make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}, mma);
  EXPECT_EQ(to_string(typename decltype(s2r)::Tiler_MN{}), "(_64,_16)");
  EXPECT_EQ(to_string(typename decltype(s2r)::TiledLayout_TV{}), to_string(mma.get_layoutA_TV()));

  std::vector<half_t> smem(64 * 128);
  Tensor sQ = make_tensor(make_smem_ptr(smem.data()), make_layout(make_shape(_64{}, _128{}), GenRowMajor{}));
  auto thr_mma = mma.get_slice(19);
  Tensor tSrQ = thr_mma.partition_fragment_A(sQ);  // (MMA,MMA_M,MMA_K)
  EXPECT_EQ(to_string(tSrQ.layout()), "((_2,_2),_1,_16):((_1,_2),_0,_4)");
  auto thr_s2r = s2r.get_slice(19);
  Tensor tXsQ = thr_s2r.partition_S(sQ);   // (CPY,CPY_M,CPY_K)
  Tensor tXrQ = thr_s2r.retile_D(tSrQ);    // (CPY,CPY_M,CPY_K)
  EXPECT_EQ(to_string(tXsQ.layout()), "((_8,_1),_1,_8):((_1,_0),_0,_16)");
  EXPECT_EQ(to_string(tXrQ.layout()), "((_8,_1),_1,_8):((_1,_0),_0,_8)");
  EXPECT_EQ(size(tXrQ), size(tSrQ));
}
