// The sm_90a GEMMs (tessel/gemm/device/sm90_gemm_kernels.hpp) on the GPU, each entry run by name
// through tessel::gemm, judged by the fp64 GPU reference and against cuBLAS on the same inputs:
// our componentwise error may not exceed twice cuBLAS's (plus a few fp32 units).
//
// Random inputs, D poisoned with NaN, ragged shapes (1x1x1, 17x33x65, K below one k-tile, tiles
// that overhang in every direction), every layout with C/D in either order, both output types,
// batches (with a broadcast operand), MN-major operands read in place on 16-byte aligned leading
// dimensions (the wgmma transpose bits; the launches counted to prove no staging copy ran) and
// staged on odd ones, unaligned pointers and leading dimensions (the staging path), more tiles
// than CTAs and more k-tiles than stages (the persistent walk and the pipeline ring wrapping
// across tiles), every tile count per CTA for the ping-pong schedule, Stream-K's fix-up of tiles
// shared by clusters, NaN propagation, and the large odd shapes. Tests whose name
// contains "Small" are the compute-sanitizer sweep. On a GPU that is not sm_90 the entries must
// refuse with arch_mismatch instead of launching.
#include "gpu/gemm_verdict.hpp"
#include "gpu/gpu_test.hpp"
#include "sm90_pick_cases.hpp"

#include <tessel/gemm/device/gemm.hpp>
#include <tessel/gemm/device/gemm_registry.hpp>
#include <tessel/gemm/device/sm90_gemm_kernels.hpp>
#include <tessel/gemm/kernel/sm90_gemm_cta.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace tessel;

namespace {

// Run entry `name` on g through the host API, judge it and cuBLAS against the fp64 reference.
Verdict run_and_check(char const* name, GemmArguments g, bool with_cublas = true) {
  g.kernel = name;
  Status s = gemm(g, nullptr);
  EXPECT_TRUE(s.ok()) << name << ": " << s.reason;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << name << ": " << cudaGetErrorString(cudaGetLastError());
  return judge(g, with_cublas);
}

std::string what(char const* name, GemmArguments const& g, char const* layout) {
  return std::string(name) + " " + describe_problem(g, layout);
}

// The heuristic's pick for g (its operands in place) is an entry whose name starts with
// `family`, and it computes g correctly.
void expect_pick_runs(GemmArguments const& g, char const* family) {
  GemmKernelInfo const* pick = select_gemm_kernel(g);
  ASSERT_NE(pick, nullptr);
  EXPECT_EQ(std::string(pick->name).rfind(family, 0), 0u) << pick->name << " for " << describe_problem(g, "tn");
  expect_good(run_and_check(pick->name, g), what(pick->name, g, "tn"), g.a_type);
}

struct DtypeCase {
  DType ab, cd;
  char const* single;   // cluster 1x1
  char const* cluster;  // cluster 2x1, B multicast
  char const* cluster_n;  // cluster 1x2, A multicast
  char const* narrow;   // 128x128 tiles, cluster 2x1
  char const* skinny;   // 128x64 tiles, 8 stages
  char const* skinny64;  // 64x64 tiles, one consumer warpgroup, 12 stages
  char const* skinny16;  // 64x16 tiles, one consumer warpgroup, 21 stages, D from registers
  char const* pingpong;  // ping-pong schedule, 128x128 tiles per consumer, cluster 2x1 (bf16 only: nullptr)
  char const* c_tma;     // as `cluster`, C loaded by TMA into the staging buffer when beta != 0
  char const* skinny_c1x2;  // 128x64 tiles, 8 stages, cluster 1x2 (A multicast)
};
constexpr DtypeCase kDtypes[] = {
    {DType::bf16, DType::bf16, "sm90_bf16_128x256x64", "sm90_bf16_128x256x64_c2", "sm90_bf16_128x256x64_c1x2", "sm90_bf16_128x128x64_c2", "sm90_bf16_128x64x64", "sm90_bf16_64x64x64", "sm90_bf16_64x16x64", "sm90_bf16_128x128x64_pingpong_c2", "sm90_bf16_128x256x64_c2_tmac", "sm90_bf16_128x64x64_c1x2"},
    {DType::bf16, DType::f32, "sm90_bf16_128x256x64", "sm90_bf16_128x256x64_c2", "sm90_bf16_128x256x64_c1x2", "sm90_bf16_128x128x64_c2", "sm90_bf16_128x64x64", "sm90_bf16_64x64x64", "sm90_bf16_64x16x64", "sm90_bf16_128x128x64_pingpong_c2", "sm90_bf16_128x256x64_c2_tmac", "sm90_bf16_128x64x64_c1x2"},
    {DType::f16, DType::f16, "sm90_fp16_128x256x64", "sm90_fp16_128x256x64_c2", "sm90_fp16_128x256x64_c1x2", "sm90_fp16_128x128x64_c2", "sm90_fp16_128x64x64", "sm90_fp16_64x64x64", "sm90_fp16_64x16x64", nullptr, "sm90_fp16_128x256x64_c2_tmac", "sm90_fp16_128x64x64_c1x2"},
    {DType::f16, DType::f32, "sm90_fp16_128x256x64", "sm90_fp16_128x256x64_c2", "sm90_fp16_128x256x64_c1x2", "sm90_fp16_128x128x64_c2", "sm90_fp16_128x64x64", "sm90_fp16_64x64x64", "sm90_fp16_64x16x64", nullptr, "sm90_fp16_128x256x64_c2_tmac", "sm90_fp16_128x64x64_c1x2"},
};
constexpr char kPingpong[] = "sm90_bf16_128x128x64_pingpong_c2";

// Clusters of the ping-pong entry resident at once (its persistent grid): 0 if unknown.
int pingpong_clusters() {
  for (GemmKernelInfo const& k : sm90_gemm_kernels())
    if (std::string(k.name) == kPingpong) return sm90_resident_ctas(k) / 2;
  return 0;
}

// Elements of D's buffer that are not elements of D (padding between rows or columns, gaps
// between batches) must still hold the NaN poison: no store may land outside the matrix. nd: the
// elements of the buffer from g.d on.
void expect_padding_untouched(GemmArguments const& g, std::size_t nd, std::string const& w) {
  auto const h = download(g.d, nd * size_of(g.c_type));
  std::size_t const eb = size_of(g.c_type);
  std::int64_t written = 0, bad = -1;
  for (std::size_t i = 0; i < nd; ++i) {
    std::int64_t const b = g.batch_count > 1 && g.batch_stride_d > 0 ? std::int64_t(i) / g.batch_stride_d : 0;
    std::int64_t const in_batch = std::int64_t(i) - b * g.batch_stride_d;
    std::int64_t const outer = in_batch / g.ldd, inner = in_batch % g.ldd;
    bool const row_major = g.c_order == MatrixOrder::row_major;
    bool const inside = b < g.batch_count && (row_major ? outer < g.m && inner < g.n : outer < g.n && inner < g.m);
    if (inside) continue;
    bool nan;
    if (eb == 4) {
      float x;
      std::memcpy(&x, &h[4 * i], 4);
      nan = std::isnan(x);
    } else {
      std::uint16_t u;
      std::memcpy(&u, &h[2 * i], 2);
      nan = std::isnan(g.c_type == DType::bf16 ? reference::bf16_to_float(u) : reference::f16_to_float(u));
    }
    if (!nan) {
      ++written;
      if (bad < 0) bad = std::int64_t(i);
    }
  }
  EXPECT_EQ(written, 0) << w << ": " << written << " elements outside D were written, the first at offset " << bad;
}
constexpr char const* kLayouts[] = {"tn", "nn", "nt", "tt"};

// Kernel launches tessel::gemm makes for g: the call captured into a CUDA graph (relaxed mode) on
// a fresh stream and its kernel nodes counted -- 1 when the GEMM reads A and B in place, at least
// 2 when the staging copy runs first (one launch for both operands where their shapes allow, one
// each otherwise: the H100 counted 3 for odd batch strides and for fp8 nt); -1 when the capture
// fails.
int kernel_launches(GemmArguments const& g) {
  cudaStream_t stream = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return -1;
  int kernels = -1;
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed) == cudaSuccess) {
    Status const s = gemm(g, stream);
    cudaGraph_t graph = nullptr;
    cudaError_t const end = cudaStreamEndCapture(stream, &graph);
    EXPECT_TRUE(s.ok()) << "gemm under stream capture: " << s.reason;
    EXPECT_EQ(end, cudaSuccess) << "cudaStreamEndCapture: " << cudaGetErrorString(end);
    std::size_t count = 0;
    if (s.ok() && end == cudaSuccess && cudaGraphGetNodes(graph, nullptr, &count) == cudaSuccess) {
      std::vector<cudaGraphNode_t> nodes(count);
      if (cudaGraphGetNodes(graph, nodes.data(), &count) == cudaSuccess) {
        kernels = 0;
        for (cudaGraphNode_t n : nodes) {
          cudaGraphNodeType type{};
          if (cudaGraphNodeGetType(n, &type) == cudaSuccess && type == cudaGraphNodeTypeKernel) ++kernels;
        }
      }
    }
    if (graph != nullptr) cudaGraphDestroy(graph);
  }
  cudaStreamDestroy(stream);
  (void)cudaGetLastError();
  return kernels;
}

// Every leading dimension rounded up to the next multiple of 16 bytes (8 elements of a 16-bit
// type: the least alignment TMA reads in place), and the batch strides packed on them.
void align_leading_dimensions(GemmArguments& g) {
  auto const up = [](std::int64_t x, DType t) {
    std::int64_t const per16 = std::int64_t(16 / size_of(t));
    return (x + per16 - 1) / per16 * per16;
  };
  g.lda = up(g.lda, g.a_type), g.ldb = up(g.ldb, g.b_type), g.ldc = g.ldd = up(g.ldd, g.c_type);
  g.batch_stride_a = g.lda * (g.a_order == MatrixOrder::row_major ? g.m : g.k);
  g.batch_stride_b = g.ldb * (g.b_order == MatrixOrder::row_major ? g.k : g.n);
  g.batch_stride_c = g.batch_stride_d = g.ldd * (g.c_order == MatrixOrder::row_major ? g.m : g.n);
}

// An entry's input type, from its name, and the D type the entry tests give it
// (test::sm90_test_output).
DType entry_input(std::string const& name) {
  if (name.find("bf16") != std::string::npos) return DType::bf16;
  if (name.find("e4m3") != std::string::npos) return DType::e4m3;
  if (name.find("tf32") != std::string::npos) return DType::tf32;
  return DType::f16;
}
DType entry_output(std::string const& name) { return test::sm90_test_output(entry_input(name)); }

}  // namespace

TEST(Sm90Small, EveryEntryOnARaggedProblem) {
  TESSEL_REQUIRE_SM90();
  for (GemmKernelInfo const& k : sm90_gemm_kernels()) {
    if (sm90_is_block_scaled(k)) continue;  // block-scaled calls only: tests/gpu/fp8_blockscaled_test.cpp
    std::string const name = k.name;
    DType const ab = entry_input(name);
    bool const fp8 = ab == DType::e4m3;
    GemmArguments g = problem(137, 263, 97, "tn", MatrixOrder::col_major, ab, entry_output(name));
    g.b_type = ab;
    Operands ops(g, 11, 0, -2.0f, 2.0f);
    if (fp8) {  // no cuBLAS GemmEx for fp8: the fp64 reference of the dequantized inputs judges
      Verdict const v = run_and_check(k.name, g, /*with_cublas=*/false);
      EXPECT_TRUE(v.ours.passed()) << what(k.name, g, "tn") << ": " << v.ours.describe();
    } else {
      expect_good(run_and_check(k.name, g), what(k.name, g, "tn"), ab);
    }
  }
}

// The tf32 entry (fp32 operands rounded to tf32 by TMA, fp32 D from registers): ragged shapes in
// every layout (MN-major operands are staged K-major) and both D orders, C read or not, a batch;
// several tiles per CTA; a long K (the tensor core's sum over 4100 products). Each against the
// fp64 reference and within 2x cuBLAS's fast-tf32 error (expect_good's tf32 floor).
TEST(Sm90Small, Tf32EntryOnRaggedShapesEveryLayout) {
  TESSEL_REQUIRE_SM90();
  constexpr char kTf32[] = "sm90_tf32_128x256x32_c2";
  struct Shape {
    std::int64_t m, n, k, batch;
  };
  constexpr Shape kShapes[] = {{1, 1, 1, 1}, {17, 33, 65, 1}, {129, 257, 33, 1}, {300, 520, 200, 2}};
  int i = 0;
  for (Shape const& sh : kShapes) {
    for (char const* layout : kLayouts) {
      for (MatrixOrder co : {MatrixOrder::col_major, MatrixOrder::row_major}) {
        GemmArguments g = problem(sh.m, sh.n, sh.k, layout, co, DType::tf32, DType::f32, sh.batch);
        g.beta = ++i % 2 ? -0.5f : 0.0f;
        Operands ops(g, std::uint64_t(31 * i + 7));
        expect_good(run_and_check(kTf32, g), what(kTf32, g, layout) + " beta " + std::to_string(g.beta), DType::tf32);
      }
    }
  }
  for (char const* layout : {"tn", "nt"}) {  // 8 x 5 tiles per batch: several per CTA
    GemmArguments g = problem(1000, 1200, 2000, layout, MatrixOrder::col_major, DType::tf32, DType::f32, 3);
    Operands ops(g, 41);
    expect_good(run_and_check(kTf32, g), what(kTf32, g, layout), DType::tf32);
  }
  GemmArguments g = problem(257, 300, 4100, "tn", MatrixOrder::row_major, DType::tf32, DType::f32);
  Operands ops(g, 43);
  expect_good(run_and_check(kTf32, g), what(kTf32, g, "tn"), DType::tf32);
}

// Shares of a tile past M or N (kernel/sm90_gemm_producer.hpp): the producer skips a share wholly
// past the edge and copies a share that ends past it as one edge box of the rows inside (K-major
// operands) or whole (MN-major, zero-filled), announcing to every CTA of the cluster only the bytes
// that come. D row-major, so the canonical extents are (m, n): 100 x 192 puts the second CTA of a
// 2x1 cluster wholly past M and, in 128x128 tiles, the second B share of tile column 1 wholly past
// N; 70 x 200 leaves a 1x2 cluster's second A share 6 rows (an 8-row edge box) and a 128x128
// column's second B share 8; 300 x 150 splits a 2x1 cluster row into a 44-row tile and one wholly
// past M, and a B tile column into 22 rows and nothing. A miscounted byte hangs the stage (the
// test's timeout) or lets the consumers read it early (wrong D). Every entry, K-major (tn) and,
// on aligned leading dimensions, MN-major (nt) operands, batched once.
TEST(Sm90Small, SharesPastTheEdgeAreSkippedOrCopiedInEdgeBoxes) {
  TESSEL_REQUIRE_SM90();
  struct Shape {
    std::int64_t m, n, k, batch;
  };
  constexpr Shape kShapes[] = {{100, 192, 136, 1}, {70, 200, 200, 1}, {300, 150, 72, 2}};
  for (GemmKernelInfo const& k : sm90_gemm_kernels()) {
    if (sm90_is_block_scaled(k)) continue;  // block-scaled calls only: tests/gpu/fp8_blockscaled_test.cpp
    std::string const name = k.name;
    DType const ab = entry_input(name);
    bool const fp8 = ab == DType::e4m3;
    for (Shape const& sh : kShapes) {
      for (char const* layout : {"tn", "nt"}) {
        // fp8 and tf32 MN-major operands are staged K-major: tn covers them
        if ((fp8 || ab == DType::tf32) && layout[0] == 'n') continue;
        GemmArguments g = problem(sh.m, sh.n, sh.k, layout, MatrixOrder::row_major, ab, entry_output(name), sh.batch);
        g.b_type = ab;
        if (layout[0] == 'n') align_leading_dimensions(g);
        if (sh.batch > 1) g.beta = 0.0f;  // D by TMA stores where the entry has them: rows past the edge clipped
        Operands ops(g, 17, 0, -2.0f, 2.0f);
        // fp8 has no cublasGemmEx; and cuBLAS's own kernel for `nt` reads 16 bytes past the end of
        // B's last row on these padded leading dimensions (memcheck, H100, cuBLAS 13), so under the
        // sanitizer only the fp64 reference judges those.
        if (fp8 || layout[0] == 'n') {
          Verdict const v = run_and_check(k.name, g, /*with_cublas=*/false);
          EXPECT_TRUE(v.ours.passed()) << what(k.name, g, layout) << ": " << v.ours.describe();
        } else {
          expect_good(run_and_check(k.name, g), what(k.name, g, layout), ab);
        }
      }
    }
  }
}

// The heuristic's measured picks (tests/sm90_pick_cases.hpp) on this GPU, through the registry's
// selection; the cases that count rounds on 132 SMs only where it has 132.
TEST(Sm90Small, HeuristicPicksTheMeasuredEntries) {
  TESSEL_REQUIRE_SM90();
  int dev = 0, sms = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), cudaSuccess);
  for (test::Sm90PickCase const& c : test::kSm90Picks) {
    if (!c.any_gpu && sms != 132) continue;
    GemmKernelInfo const* k = select_gemm_kernel(test::sm90_pick_problem(c));
    ASSERT_NE(k, nullptr) << c.m << "x" << c.n << "x" << c.k;
    EXPECT_EQ(std::string(k->name).rfind(c.entry, 0), 0u)
        << c.m << "x" << c.n << "x" << c.k << " " << to_string(c.ab) << " " << c.layout << " beta " << c.beta << " ldc+"
        << c.ldc_pad << " ldd+" << c.ldd_pad << ": " << k->name;
  }
}

TEST(Sm90Sweep, RaggedShapesEveryLayoutAndOrder) {
  TESSEL_REQUIRE_SM90();
  struct Shape {
    std::int64_t m, n, k;
  };
  // 1x1x1; odd everything; K below one k-tile; one past a tile; a tile multiple; several tiles.
  constexpr Shape shapes[] = {{1, 1, 1}, {17, 33, 65}, {70, 45, 7}, {129, 257, 65}, {128, 256, 64}, {300, 520, 200}};
  for (DtypeCase const& dt : kDtypes) {
    for (Shape const& s : shapes) {
      for (char const* layout : kLayouts) {
        for (MatrixOrder co : {MatrixOrder::col_major, MatrixOrder::row_major}) {
          for (char const* name : {dt.single, dt.cluster, dt.cluster_n, dt.narrow, dt.skinny, dt.skinny64, dt.pingpong, dt.c_tma, dt.skinny_c1x2}) {
            if (name == nullptr) continue;
            for (float beta : {-0.5f, 0.0f}) {  // beta = 0 with D of the input type: the TMA-store epilogue
              GemmArguments g = problem(s.m, s.n, s.k, layout, co, dt.ab, dt.cd);
              g.beta = beta;
              Operands ops(g, std::uint64_t(s.m * 7 + s.k));
              expect_good(run_and_check(name, g), what(name, g, layout) + " beta " + std::to_string(beta), g.a_type);
            }
          }
        }
      }
    }
  }
}

TEST(Sm90Small, PersistentGridCoversTheGpu) {
  TESSEL_REQUIRE_SM90();
  int dev = 0, sms = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), cudaSuccess);
  for (GemmKernelInfo const& k : sm90_gemm_kernels()) {
    int const ctas = sm90_resident_ctas(k);
    std::printf("%s: %d resident CTAs on %d SMs\n", k.name, ctas, sms);
    EXPECT_GE(ctas, sms - 8) << k.name << ": the persistent grid leaves SMs idle";
    EXPECT_LE(ctas, sms) << k.name << ": more than one CTA per SM cannot fit 209 KiB of shared memory";
  }
}

TEST(Sm90Sweep, ParallelSplitKForFewTiles) {
  TESSEL_REQUIRE_SM90();
  // 2 x 2 tiles with 79 k-tiles: the heuristic splits K; the reduction applies alpha, beta, C --
  // four elements a thread where D's rows allow (200 x 300), one where they do not (203 x 301, D
  // and C one element past their packed leading dimension). The 64-wide tiles split it too (the
  // 64x64 ones into 3 slices on 132 SMs), on a D wider and taller than 64 that they do not swap.
  for (DtypeCase const& dt : kDtypes) {
    for (MatrixOrder co : {MatrixOrder::col_major, MatrixOrder::row_major}) {
      for (int odd : {0, 1}) {
        GemmArguments g = problem(200 + 3 * odd, 300 + odd, 5000, "tn", co, dt.ab, dt.cd, 2);
        g.ldc += odd, g.ldd += odd;
        if (odd) g.batch_stride_c = g.batch_stride_d = g.ldd * (co == MatrixOrder::row_major ? g.m : g.n);
        Operands ops(g, 17 + odd);
        expect_good(run_and_check(dt.single, g), what(dt.single, g, "tn") + " split-K", g.a_type);
        expect_good(run_and_check(dt.cluster, g), what(dt.cluster, g, "tn") + " split-K", g.a_type);
        expect_good(run_and_check(dt.narrow, g), what(dt.narrow, g, "tn") + " split-K", g.a_type);
        expect_good(run_and_check(dt.skinny, g), what(dt.skinny, g, "tn") + " split-K", g.a_type);
        expect_good(run_and_check(dt.skinny64, g), what(dt.skinny64, g, "tn") + " split-K", g.a_type);
        expect_good(run_and_check(dt.skinny_c1x2, g), what(dt.skinny_c1x2, g, "tn") + " split-K", g.a_type);
        if (dt.pingpong) expect_good(run_and_check(dt.pingpong, g), what(dt.pingpong, g, "tn") + " split-K", g.a_type);
        if (odd) expect_padding_untouched(g, ops.nd, what(dt.single, g, "tn") + " split-K, ldd+1");
      }
    }
  }
}

TEST(Sm90Sweep, TwoTileColumnsShareTheLongOperand) {
  TESSEL_REQUIRE_SM90();
  // A D 65 to 128 wide (canonical; a column-major D of 65-128 BLAS rows) on 128x64 tiles in 1x2
  // clusters, whose two CTAs multicast halves of the long operand's strip (the heuristic's pick on
  // an H200 where that operand is large; by name here). The second tile column ragged (36 and 8
  // wide) or whole; 36-47 tile rows on as many clusters, fewer than any sm_90 GPU's resident
  // ones; K ragged; C read and not; either D order (a row-major D 100 wide is the same canonical
  // problem); a batch of 2. Then the heuristic's own pick on a problem large enough for the
  // H200's rule (the 1x1 kernel on an H100; with an fp32 D and this K, the promoted sibling of
  // either, whose error stays within 2x cuBLAS's where the unsplit fast sum read 5x): the 128x64
  // tiles in any case.
  struct Shape {
    std::int64_t m, n, k, batch;
  };
  constexpr Shape shapes[] = {{100, 4500, 700, 1}, {128, 6000, 1024, 1}, {72, 2400, 2051, 2}};
  for (DtypeCase const& dt : kDtypes) {
    for (Shape const& sh : shapes) {
      for (MatrixOrder co : {MatrixOrder::col_major, MatrixOrder::row_major}) {
        for (float beta : {0.0f, -0.5f}) {
          bool const col = co == MatrixOrder::col_major;
          GemmArguments g = problem(col ? sh.m : sh.n, col ? sh.n : sh.m, sh.k, "tn", co, dt.ab, dt.cd, sh.batch);
          g.beta = beta;
          Operands ops(g, std::uint64_t(sh.m + sh.k));
          expect_good(run_and_check(dt.skinny_c1x2, g), what(dt.skinny_c1x2, g, "tn") + " beta " + std::to_string(beta),
                      g.a_type);
        }
      }
    }
    GemmArguments g = problem(112, 8192, 4100, "tn", MatrixOrder::col_major, dt.ab, dt.cd);
    Operands ops(g, 29);
    expect_pick_runs(g, dt.skinny);
  }
}

TEST(Sm90Sweep, FourTileColumnsShareTheLongOperand) {
  TESSEL_REQUIRE_SM90();
  // A D 193 to 256 wide (canonical) on 128x64 tiles in 1x2 clusters: four tile columns, two
  // clusters per tile row, each multicasting halves of the long operand's strip. The last column
  // ragged (8 and 38 wide) or whole; tile rows ragged; K ragged; C read and not; a batch of 2. Then
  // the heuristic's own pick where the operand is long enough (256x4096x4096: the 1x2 kernel on
  // either GPU), with a 16-bit and an fp32 D.
  struct Shape {
    std::int64_t m, n, k, batch;
  };
  constexpr Shape shapes[] = {{200, 3000, 700, 1}, {256, 2500, 1030, 1}, {230, 1800, 2051, 2}};
  for (DtypeCase const& dt : kDtypes) {
    for (Shape const& sh : shapes) {
      for (float beta : {0.0f, -0.5f}) {
        GemmArguments g = problem(sh.m, sh.n, sh.k, "tn", MatrixOrder::col_major, dt.ab, dt.cd, sh.batch);
        g.beta = beta;
        Operands ops(g, std::uint64_t(sh.n + sh.k));
        expect_good(run_and_check(dt.skinny_c1x2, g), what(dt.skinny_c1x2, g, "tn") + " beta " + std::to_string(beta),
                    g.a_type);
      }
    }
    GemmArguments g = problem(256, 4096, 4096, "tn", MatrixOrder::col_major, dt.ab, dt.cd);
    Operands ops(g, 31);
    expect_pick_runs(g, dt.skinny);
  }
}

TEST(Sm90Sweep, SkinnyKernelsRunTheSwappedProblem) {
  TESSEL_REQUIRE_SM90();
  // A canonical D at most 64 rows tall and wider than 64 (here: row-major D with M <= 64, the
  // Y = X W^T of few rows) runs on the skinny kernels as D^T = B' A'^T, D and C addressed
  // transposed: from registers, or -- a 16-bit D with 16-byte aligned rows, C unread -- staged
  // transposed and stored by TMA. Ragged shapes, both skinny tiles, batches (16-byte aligned
  // strides or not), C read and not, an odd leading dimension of D (its padding must stay
  // untouched), and few tiles with a long K (K split in slices, reduced transposed).
  struct Shape {
    std::int64_t m, n, k, batch, batch_gap;
  };
  constexpr Shape shapes[] = {{16, 1000, 300, 1, 0}, {1, 333, 129, 1, 0},  {64, 4100, 513, 1, 0}, {40, 70, 65, 3, 5},
                              {24, 2048, 136, 2, 8}, {16, 700, 5000, 1, 0}};
  for (DtypeCase const& dt : kDtypes) {
    for (Shape const& sh : shapes) {
      for (char const* layout : {"tn", "nt"}) {
        for (char const* name : {dt.skinny, dt.skinny64, dt.skinny16, dt.skinny_c1x2}) {
          for (float beta : {0.0f, -0.5f}) {
            for (int pad : {0, 3}) {
              GemmArguments g = problem(sh.m, sh.n, sh.k, layout, MatrixOrder::row_major, dt.ab, dt.cd, sh.batch);
              g.ldc += pad, g.ldd += pad, g.beta = beta;
              if (sh.batch > 1) g.batch_stride_c = g.batch_stride_d = g.ldd * g.m + sh.batch_gap;
              Operands ops(g, std::uint64_t(sh.n * 3 + sh.k + pad));
              std::string const w = what(name, g, layout) + " beta " + std::to_string(beta) + " ldd+" + std::to_string(pad);
              expect_good(run_and_check(name, g), w, g.a_type);
              expect_padding_untouched(g, ops.nd, w);
            }
          }
        }
      }
    }
  }
  // The 16-wide kernel's in-flight limit (sm90_skinny_in_flight): 63 tiles of 65 k-tiles take it
  // on the H100 (10 k-tiles), 125 tiles of 129 on the H200 (9); each GPU runs the other one
  // unlimited. 125 tiles also take the L2 cache hints (sm90_skinny_l2_hints) on either GPU.
  // Ragged in every dimension, C read. With an fp32 D these long, unsplit K also check the
  // kernel's promoted accumulation: the tensor core's own fp32 sum over 129 k-tiles read 3-15x
  // cuBLAS's error (H100: max 7.2e-7 against 2.2e-7 at K = 8250); added up one
  // k-tile at a time in registers it is within 2x. (The 64-wide skinny kernels, which sum in the
  // tensor core, miss it on these shapes; their _promoted siblings below do not.)
  for (DtypeCase const& dt : kDtypes) {
    for (auto [m, n, k] : {std::array<std::int64_t, 3>{13, 4000, 4100}, std::array<std::int64_t, 3>{16, 7999, 8250}}) {
      GemmArguments g = problem(m, n, k, "tn", MatrixOrder::row_major, dt.ab, dt.cd);
      g.beta = 0.5f;
      Operands ops(g, std::uint64_t(n + k));
      expect_good(run_and_check(dt.skinny16, g), what(dt.skinny16, g, "tn") + " (in-flight limit)", g.a_type);
    }
  }
  // An fp32 D 17-64 wide with a long K and K-major operands: the heuristic takes the 64-wide
  // tiles' promoted siblings (the 64x64 tiles for 63 tiles of 64 rows, the 128x64 ones for 188),
  // which pass the same check. By name they also take an MN-major operand (nt), staged.
  for (DtypeCase const& dt : kDtypes) {
    if (dt.cd != DType::f32) continue;
    for (auto [m, n, k] : {std::array<std::int64_t, 3>{40, 4000, 4100}, std::array<std::int64_t, 3>{40, 12000, 8250}}) {
      GemmArguments g = problem(m, n, k, "tn", MatrixOrder::row_major, dt.ab, dt.cd);
      g.beta = 0.5f;
      Operands ops(g, std::uint64_t(n + k + 1));
      GemmKernelInfo const* pick = select_gemm_kernel(g);
      ASSERT_NE(pick, nullptr);
      std::string const name = pick->name;
      EXPECT_NE(name.find("_promoted"), std::string::npos) << name << " for " << describe_problem(g, "tn");
      expect_good(run_and_check(pick->name, g), what(pick->name, g, "tn") + " (promoted)", g.a_type);
      GemmArguments h = problem(m, n, k, "nt", MatrixOrder::row_major, dt.ab, dt.cd);
      Operands ops_nt(h, std::uint64_t(n + k + 2));
      expect_good(run_and_check(pick->name, h), what(pick->name, h, "nt") + " (promoted, staged)", h.a_type);
    }
  }
  // The heuristic sends the row-major 16 x 8192 D there too (the long side: 128 tiles of 64 rows;
  // at most 16 wide, the 16-wide tiles).
  GemmArguments g = problem(16, 8192, 512, "tn", MatrixOrder::row_major, DType::bf16, DType::bf16);
  EXPECT_STREQ(select_gemm_kernel(g)->name, "sm90_bf16_64x16x64");
}

TEST(Sm90Small, Fp8EntriesOnRaggedShapes) {
  TESSEL_REQUIRE_SM90();
  // Judged against the fp64 reference of the dequantized inputs (cuBLAS has no fp8 GemmEx);
  // per-tensor scales, every output type, both D orders, beta = 0 (TMA-store epilogue) and not.
  struct Shape {
    std::int64_t m, n, k;
  };
  constexpr DType outs[] = {DType::bf16, DType::f16, DType::f32};
  // The pairs tessel (like cuBLASLt) takes: not e5m2 x e5m2.
  constexpr DType pairs[3][2] = {{DType::e4m3, DType::e4m3}, {DType::e4m3, DType::e5m2}, {DType::e5m2, DType::e4m3}};
  int run = 0;
  for (char const* name : {"sm90_e4m3_128x256x128_c2_promote2", "sm90_e4m3_128x128x128_c2", "sm90_e4m3_128x256x128_c2",
                           "sm90_e4m3_128x256x128_c2_fastacc"}) {
    for (Shape sh : {Shape{1, 1, 1}, Shape{17, 33, 65}, Shape{129, 257, 300}, Shape{300, 520, 1000}}) {
      // Fast accumulation keeps fewer bits in the tensor core than the tolerance's promotion
      // model allows beyond a few k-tiles: judged on the short-K shapes only.
      bool const fast = std::string(name).find("fastacc") != std::string::npos;
      if (fast && sh.k > 300) continue;
      for (char const* layout : {"tn", "nt"}) {
        for (MatrixOrder co : {MatrixOrder::col_major, MatrixOrder::row_major}) {
          for (float beta : {-0.5f, 0.0f}) {
            // Every fp8 pair in turn (the promoted kernels are compiled for e4m3 x e4m3 and take the
            // others with their own wgmma instruction at run time; the fast one takes e4m3 only).
            int const pair = fast ? 0 : run % 3;
            GemmArguments g = problem(sh.m, sh.n, sh.k, layout, co, pairs[pair][0], outs[(run / 3) % 3]);
            g.b_type = pairs[pair][1];
            ++run;
            g.a_scale = 0.5f, g.b_scale = 2.0f, g.beta = beta;
            Operands ops(g, std::uint64_t(sh.m + sh.k), 0, -2.0f, 2.0f);
            g.kernel = name;
            Status st = gemm(g, nullptr);
            ASSERT_TRUE(st.ok()) << name << ": " << st.reason;
            ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
            Verdict const v = judge(g, /*with_cublas=*/false);
            EXPECT_TRUE(v.ours.passed()) << what(name, g, layout) << " " << to_string(g.a_type) << " x " << to_string(g.b_type) << ": " << v.ours.describe();
          }
        }
      }
    }
  }
}

TEST(Sm90Small, PingpongConsumersTakeTurnsOverSeveralTiles) {
  TESSEL_REQUIRE_SM90();
  // The compute-sanitizer case of the ping-pong schedule: 2 or 3 tiles per cluster (so both
  // consumers run, skip each other's k-tiles, meet at the order barriers and restage their
  // buffers), 3 k-tiles each, D TMA-stored (beta = 0) and from registers.
  int const clusters = pingpong_clusters();
  ASSERT_GT(clusters, 0) << kPingpong << ": resident clusters";
  for (float beta : {0.0f, -0.5f}) {
    GemmArguments g = problem(256 * std::int64_t(2 * clusters + 1) - 5, 104, 130, "tn", MatrixOrder::row_major, DType::bf16,
                              DType::bf16);
    g.beta = beta;
    Operands ops(g, 7);
    expect_good(run_and_check(kPingpong, g), what(kPingpong, g, "tn") + " beta " + std::to_string(beta), g.a_type);
  }
}

TEST(Sm90Small, BetaZeroDoesNotReadC) {
  TESSEL_REQUIRE_SM90();
  GemmArguments g = problem(40, 50, 60, "tn", MatrixOrder::col_major, DType::bf16, DType::bf16);
  Operands ops(g, 5);
  std::size_t const nc = elems(1, 0, g.m, g.n, g.ldc, g.c_order);
  ASSERT_TRUE(reference::fill_constant_device(const_cast<void*>(g.c), g.c_type, nc, NAN).ok());
  g.beta = 0.0f;
  Verdict v = run_and_check("sm90_bf16_128x256x64_c2", g);
  EXPECT_TRUE(v.ours.passed()) << "NaN in C leaked through beta = 0: " << v.ours.describe();
}

namespace {

// g's C (its leading dimension ldc) copied into a buffer with leading dimension `ld` and the
// matching batch stride: the same matrices at another alignment.
struct CopyOfC {
  std::unique_ptr<DeviceMem> mem;
  std::int64_t ld = 0, batch_stride = 0;
  CopyOfC(GemmArguments const& g, std::int64_t ld_) : ld(ld_) {
    std::size_t const es = size_of(g.c_type);
    bool const row = g.c_order == MatrixOrder::row_major;
    std::int64_t const lines = row ? g.m : g.n, width = row ? g.n : g.m;
    batch_stride = ld * lines;
    mem = std::make_unique<DeviceMem>(std::size_t(batch_stride * g.batch_count) * es);
    for (std::int64_t b = 0; b < g.batch_count; ++b)
      EXPECT_EQ(cudaMemcpy2D(static_cast<char*>(mem->p) + std::size_t(b * batch_stride) * es, std::size_t(ld) * es,
                             static_cast<char const*>(g.c) + std::size_t(b * g.batch_stride_c) * es, std::size_t(g.ldc) * es,
                             std::size_t(width) * es, std::size_t(lines), cudaMemcpyDeviceToDevice),
                cudaSuccess);
  }
};

// D computed by entry `name` for g, downloaded (g.d poisoned with NaN first).
std::vector<unsigned char> d_bytes_of(char const* name, GemmArguments g, std::size_t nd) {
  EXPECT_TRUE(reference::fill_constant_device(g.d, g.c_type, nd, NAN).ok());
  g.kernel = name;
  Status const s = gemm(g, nullptr);
  EXPECT_TRUE(s.ok()) << name << ": " << s.reason;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return download(g.d, nd * size_of(g.c_type));
}

}  // namespace

TEST(Sm90Sweep, CReadByTmaEqualsTheRegisterPathAndMayBeD) {
  TESSEL_REQUIRE_SM90();
  // beta != 0 with a 16-bit C and D whose rows are 16-byte aligned: the _tmac kernels load C by
  // TMA into the staging buffer during the mainloop (p.c_by_tma) and D leaves by TMA stores; the
  // others read C from registers. Judged against fp64 and cuBLAS, and bit for bit against the
  // register epilogue on the same values (C copied to a leading dimension one element longer,
  // which TMA cannot read) and against C and D being one buffer (D = alpha A B + beta D, in place).
  // Ragged M and N (whole 16-byte rows), one k-tile and many, batches, both D orders. A row-major
  // D with C by TMA is a lean build's case (the ctest prefix general. runs it on the general ones).
  struct Case {
    std::int64_t m, n, k, batch;
    DType ab, cd;
    char const* entry;
  };
  constexpr Case cases[] = {
      {136, 264, 65, 1, DType::bf16, DType::bf16, "sm90_bf16_128x256x64_c2_tmac"},
      {312, 520, 200, 2, DType::bf16, DType::bf16, "sm90_bf16_128x256x64_c2_tmac"},
      {8, 8, 1, 1, DType::bf16, DType::bf16, "sm90_bf16_128x256x64_c2_tmac"},
      {200, 72, 1000, 3, DType::f16, DType::f16, "sm90_fp16_128x256x64_c2_tmac"},
      {264, 136, 130, 1, DType::f16, DType::f16, "sm90_fp16_128x256x64_c2_tmac"},
      {4104, 2056, 512, 1, DType::bf16, DType::bf16, "sm90_bf16_128x256x64_c2_tmac"},  // many tiles per CTA
      {264, 120, 64, 2, DType::f16, DType::f16, "sm90_fp16_128x128x64_c2"},            // C from registers
      {520, 312, 384, 1, DType::e4m3, DType::bf16, "sm90_e4m3_128x256x128_c2"},
  };
  for (Case const& c : cases) {
    for (MatrixOrder co : {MatrixOrder::col_major, MatrixOrder::row_major}) {
      for (float beta : {1.0f, -0.5f}) {
        GemmArguments g = problem(c.m, c.n, c.k, "tn", co, c.ab, c.cd, c.batch);
        align_leading_dimensions(g);
        g.beta = beta, g.alpha = 0.75f;
        bool const fp8 = c.ab == DType::e4m3;
        if (fp8) g.a_scale = 0.5f, g.b_scale = 2.0f;
        Operands ops(g, std::uint64_t(c.m + c.k), 0, -2.0f, 2.0f);
        std::string const w = what(c.entry, g, "tn") + " beta " + std::to_string(beta);
        Verdict const v = run_and_check(c.entry, g, /*with_cublas=*/!fp8);
        if (fp8) {
          EXPECT_TRUE(v.ours.passed()) << w << ": " << v.ours.describe();
        } else {
          expect_good(v, w, g.a_type);
        }
        std::size_t const nd = ops.nd;
        std::vector<unsigned char> const by_tma = d_bytes_of(c.entry, g, nd);

        CopyOfC odd(g, g.ldc + 1);  // rows no longer 16-byte aligned: C from registers
        GemmArguments r = g;
        r.c = odd.mem->p, r.ldc = odd.ld, r.batch_stride_c = odd.batch_stride;
        EXPECT_TRUE(d_bytes_of(c.entry, r, nd) == by_tma) << w << ": C by TMA and C from registers differ";

        // D's buffer holds C (align_leading_dimensions gave them one leading dimension and batch stride).
        ASSERT_EQ(cudaMemcpy(g.d, g.c, nd * size_of(g.c_type), cudaMemcpyDeviceToDevice), cudaSuccess);
        GemmArguments in_place = g;
        in_place.c = in_place.d;
        in_place.kernel = c.entry;
        Status const st = gemm(in_place, nullptr);
        ASSERT_TRUE(st.ok()) << w << ": " << st.reason;
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        EXPECT_TRUE(download(g.d, nd * size_of(g.c_type)) == by_tma) << w << ": C in D's buffer (in place) differs";
      }
    }
  }
}

TEST(Sm90Small, OddLeadingDimensionOfDLeavesThroughTheCopyWarps) {
  TESSEL_REQUIRE_SM90();
  // beta = 0 and a 16-bit D whose rows are not 16-byte aligned: the consumers hand each staged
  // tile to the producer warpgroup's copy warps (several tiles per CTA here, so the handoff
  // barriers cycle); every entry, both D orders, a batch of 2; D's padding untouched.
  for (GemmKernelInfo const& k : sm90_gemm_kernels()) {
    std::string const name = k.name;
    DType const ab = entry_input(name);
    if (ab == DType::e4m3 || ab == DType::tf32) continue;  // a 16-bit D only
    for (MatrixOrder co : {MatrixOrder::col_major, MatrixOrder::row_major}) {
      GemmArguments g = problem(1100, 2100, 70, "tn", co, ab, ab, 2);
      g.ldc += 1, g.ldd += 1, g.beta = 0.0f;
      g.batch_stride_c = g.batch_stride_d = g.ldd * (co == MatrixOrder::row_major ? g.m : g.n) + 3;
      Operands ops(g, 29);
      std::string const w = what(k.name, g, "tn") + " ldd+1";
      expect_good(run_and_check(k.name, g), w, ab);
      expect_padding_untouched(g, ops.nd, w);
    }
  }
}

TEST(Sm90Sweep, BatchedWithABroadcastOperand) {
  TESSEL_REQUIRE_SM90();
  for (DtypeCase const& dt : kDtypes) {
    for (char const* layout : {"tn", "nt"}) {
      GemmArguments g = problem(70, 290, 110, layout, MatrixOrder::col_major, dt.ab, dt.cd, 3);
      Operands ops(g, 21);
      expect_good(run_and_check(dt.cluster, g), what(dt.cluster, g, layout), g.a_type);
      if (dt.pingpong) expect_good(run_and_check(dt.pingpong, g), what(dt.pingpong, g, layout), g.a_type);
      g.batch_stride_b = 0;  // every batch multiplies by the same B
      expect_good(run_and_check(dt.single, g), what(dt.single, g, layout) + " B broadcast", g.a_type);
      if (dt.pingpong) expect_good(run_and_check(dt.pingpong, g), what(dt.pingpong, g, layout) + " B broadcast", g.a_type);
    }
  }
}

TEST(Sm90Sweep, UnalignedPointersAndLeadingDimensions) {
  TESSEL_REQUIRE_SM90();
  for (DtypeCase const& dt : kDtypes) {
    for (char const* layout : kLayouts) {
      GemmArguments g = problem(45, 77, 91, layout, MatrixOrder::col_major, dt.ab, dt.cd);
      g.lda += 3, g.ldb += 1, g.ldc += 5, g.ldd = g.ldc;  // odd leading dimensions
      Operands ops(g, 41, /*offset=*/1);                  // and pointers one element off
      expect_good(run_and_check(dt.cluster, g), what(dt.cluster, g, layout) + " unaligned", g.a_type);
      expect_good(run_and_check(dt.cluster_n, g), what(dt.cluster_n, g, layout) + " unaligned", g.a_type);
      if (dt.pingpong) expect_good(run_and_check(dt.pingpong, g), what(dt.pingpong, g, layout) + " unaligned", g.a_type);
    }
  }
}

TEST(Sm90Sweep, MnMajorOperandsReadInPlace) {
  TESSEL_REQUIRE_SM90();
  // Leading dimensions 16-byte aligned, M, N, K ragged: an MN-major operand (`nn`, `nt`, `tt`, D
  // either way round) is read in place -- TMA boxes of 64 rows x 64 K, wgmma with the transpose
  // bit -- so the GEMM is the only launch; every 16-bit entry (each cluster shape: A or B shared
  // in 64-row boxes), beta = 0 (TMA-store epilogue) and not.
  struct Shape {
    std::int64_t m, n, k;
  };
  constexpr Shape shapes[] = {{1, 1, 1}, {17, 33, 65}, {70, 45, 7}, {129, 257, 65}, {300, 520, 200}};
  int run = 0;
  for (DtypeCase const& dt : kDtypes) {
    for (Shape const& sh : shapes) {
      for (char const* layout : kLayouts) {
        for (MatrixOrder co : {MatrixOrder::col_major, MatrixOrder::row_major}) {
          for (char const* name : {dt.single, dt.cluster, dt.cluster_n, dt.narrow, dt.skinny, dt.skinny64, dt.skinny_c1x2}) {
            GemmArguments g = problem(sh.m, sh.n, sh.k, layout, co, dt.ab, dt.cd);
            align_leading_dimensions(g);
            g.beta = run++ % 2 == 0 ? 0.0f : -0.5f;
            Operands ops(g, std::uint64_t(sh.m * 5 + sh.k));
            std::string const w = what(name, g, layout) + " aligned lds beta " + std::to_string(g.beta);
            expect_good(run_and_check(name, g), w, g.a_type);
            g.kernel = name;
            EXPECT_EQ(kernel_launches(g), 1) << w << ": an operand was staged instead of read in place";
          }
        }
      }
    }
  }
}

TEST(Sm90Sweep, MnMajorOperandsBatched) {
  TESSEL_REQUIRE_SM90();
  // Batches of MN-major operands read in place: batch strides multiples of 8 elements, or 0 (B
  // broadcast, one 1-batch tensor map); a batch stride off 16 bytes stages that operand.
  for (DtypeCase const& dt : kDtypes) {
    for (char const* layout : {"nn", "nt", "tt"}) {
      for (MatrixOrder co : {MatrixOrder::col_major, MatrixOrder::row_major}) {
        GemmArguments g = problem(129, 290, 110, layout, co, dt.ab, dt.cd, 3);
        align_leading_dimensions(g);
        g.batch_stride_a += 8;  // a gap between batches, still 16-byte aligned
        Operands ops(g, 23);
        for (char const* name : {dt.cluster, dt.cluster_n}) {
          std::string const w = what(name, g, layout) + " batched, aligned";
          expect_good(run_and_check(name, g), w, g.a_type);
          g.kernel = name;
          EXPECT_EQ(kernel_launches(g), 1) << w << ": an operand was staged instead of read in place";
        }
        GemmArguments bc = g;
        bc.batch_stride_b = 0;  // every batch multiplies by the same B
        std::string const wb = what(dt.single, bc, layout) + " B broadcast";
        expect_good(run_and_check(dt.single, bc), wb, bc.a_type);
        bc.kernel = dt.single;
        EXPECT_EQ(kernel_launches(bc), 1) << wb << ": an operand was staged instead of read in place";
        GemmArguments odd = problem(129, 290, 110, layout, co, dt.ab, dt.cd, 3);
        align_leading_dimensions(odd);
        odd.batch_stride_a += 1, odd.batch_stride_b += 1;  // odd batch strides: both operands staged
        Operands odd_ops(odd, 29);
        std::string const wo = what(dt.single, odd, layout) + " odd batch strides";
        expect_good(run_and_check(dt.single, odd), wo, odd.a_type);
        odd.kernel = dt.single;
        EXPECT_GE(kernel_launches(odd), 2) << wo << ": expected the staging copy and the GEMM";
      }
    }
  }
}

TEST(Sm90Small, MnMajorOperandsStagedWhenTheyMustBe) {
  TESSEL_REQUIRE_SM90();
  // An odd leading dimension of an MN-major operand, or an fp8 one (wgmma has no transpose for
  // fp8): the staging copy runs first and the result is still right. The K-major operand alone
  // would be read in place; the copy stages what needs it.
  for (char const* layout : {"nn", "nt", "tt"}) {
    GemmArguments g = problem(100, 200, 150, layout, MatrixOrder::col_major, DType::bf16, DType::bf16);
    align_leading_dimensions(g);
    g.lda += 1, g.ldb += 1;
    g.beta = 0.0f;
    Operands ops(g, 31);
    std::string const w = what("sm90_bf16_128x256x64_c2", g, layout) + " odd lda, ldb";
    expect_good(run_and_check("sm90_bf16_128x256x64_c2", g), w, g.a_type);
    g.kernel = "sm90_bf16_128x256x64_c2";
    EXPECT_GE(kernel_launches(g), 2) << w;
  }
  GemmArguments f = problem(129, 257, 256, "nt", MatrixOrder::col_major, DType::e4m3, DType::bf16);
  f.b_type = DType::e4m3;
  align_leading_dimensions(f);
  f.beta = 0.0f;
  Operands ops(f, 37, 0, -2.0f, 2.0f);
  f.kernel = "sm90_e4m3_128x128x128_c2";
  ASSERT_TRUE(gemm(f, nullptr).ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  Verdict const v = judge(f, /*with_cublas=*/false);
  EXPECT_TRUE(v.ours.passed()) << what(f.kernel, f, "nt") << ": " << v.ours.describe();
  EXPECT_GE(kernel_launches(f), 2) << what(f.kernel, f, "nt") << ": fp8 MN-major operands must be staged";
}

TEST(Sm90Sweep, ManyTilesPerCtaAndALongK) {
  TESSEL_REQUIRE_SM90();
  // 49 x 21 tiles of 128x256 (canonical: D is column-major; more than one per SM), 41 k-tiles of
  // 64 (the ring of stages wraps within and across tiles), every cluster shape, tile counts odd
  // both ways (the last 2x1 cluster has a lone tile row, the last 1x2 cluster a lone tile column).
  for (char const* name : {"sm90_bf16_128x256x64", "sm90_bf16_128x256x64_c2", "sm90_bf16_128x256x64_c1x2",
                           "sm90_bf16_128x128x64_c2", kPingpong}) {
    GemmArguments g = problem(5200, 6200, 2600, "tn", MatrixOrder::col_major, DType::bf16, DType::bf16);
    Operands ops(g, 91);
    expect_good(run_and_check(name, g), what(name, g, "tn"), g.a_type);
  }
}

TEST(Sm90Sweep, ShortTilesLetTheProducerRunUnitsAhead) {
  TESSEL_REQUIRE_SM90();
  // Units of 1, 2 and 3 k-tiles (K = 64, 100, 130 -- the last ragged), several per CTA: with fewer
  // k-tiles per unit than stages, the producer hands the consumers several units ahead through its
  // ring of unit notes (Stages + 1 slots), which must not be overwritten before the consumers'
  // epilogues have read them. Every kernel that takes the notes (TileN > 64), C read by TMA (the
  // _tmac kernel reads its note in the mainloop) and not, batched.
  for (char const* name : {"sm90_bf16_128x256x64_c2_s4", "sm90_bf16_128x256x64_c2", "sm90_bf16_128x256x64_c1x2",
                           "sm90_bf16_128x128x64_c2", "sm90_bf16_128x256x64_c2_tmac", "sm90_bf16_128x256x64"}) {
    for (std::int64_t k : {64, 100, 130}) {
      // (D's 2104-element columns are 16-byte aligned: TMA stores it, and loads C for _tmac.)
      GemmArguments g = problem(2104, 4300, k, "tn", MatrixOrder::col_major, DType::bf16, DType::bf16, 3);
      g.beta = std::string(name).find("tmac") != std::string::npos ? 0.75f : 0.0f;
      Operands ops(g, 23 + int(k));
      expect_good(run_and_check(name, g), what(name, g, "tn") + " k " + std::to_string(k), g.a_type);
    }
  }
}

TEST(Sm90Sweep, PingpongEveryTileCountPerCta) {
  TESSEL_REQUIRE_SM90();
  // The ping-pong consumers take turns over a CTA's tiles: every cluster with one tile (consumer
  // 1 idle), one or two, two or three, three (odd and even counts side by side: the order
  // barriers' last arrivals skipped), against 1, 5 and 9 k-tiles per tile (a 5-stage ring: each
  // consumer's skip over the other's tile crosses no, one or two wraps), D through TMA stores
  // (beta = 0, 104 columns: 16-byte rows) and from registers (beta != 0). One tile column of
  // 2x1 cluster tiles, the last cluster's second tile row ragged.
  int const clusters = pingpong_clusters();
  ASSERT_GT(clusters, 2) << kPingpong << ": resident clusters";
  for (int tiles : {clusters - 1, clusters + 1, 2 * clusters + 1, 3 * clusters}) {
    for (std::int64_t k : {59, 320, 575}) {
      for (float beta : {0.0f, -0.5f}) {
        GemmArguments g = problem(256 * std::int64_t(tiles) - 37, 104, k, "tn", MatrixOrder::row_major, DType::bf16, DType::bf16);
        g.beta = beta;
        Operands ops(g, std::uint64_t(tiles + k));
        expect_good(run_and_check(kPingpong, g),
                    what(kPingpong, g, "tn") + " " + std::to_string(tiles) + " cluster tiles, beta " + std::to_string(beta),
                    g.a_type);
      }
    }
  }
}

// An sm_90a entry, its cluster shape and tile, for the Stream-K and split-tail checks below.
struct StreamKEntry {
  char const* name;
  int cluster_m, cluster_n, tile_n, tile_k;
  DType ab;
};

// The clusters of entry `e` that are resident at once (0, with a failure, for an unknown name).
int resident_clusters(StreamKEntry const& e) {
  for (GemmKernelInfo const& k : sm90_gemm_kernels())
    if (std::string(k.name) == e.name) return sm90_resident_ctas(k) / (e.cluster_m * e.cluster_n);
  ADD_FAILURE() << e.name << ": not an sm_90a kernel";
  return 0;
}

// The problem both checks below run: `tiles` cluster tiles in one cluster column, the last
// ragged; N 8 short of the cluster tile (16-byte rows: TMA-stored when beta is 0); K 5 short of
// `k_tiles` k-tiles. fp8 is scaled (Operands then draws its inputs from [-2, 2]).
GemmArguments one_column_problem(StreamKEntry const& e, int tiles, int k_tiles, float beta, DType cd) {
  std::int64_t const m = std::int64_t(128) * e.cluster_m * tiles - 37, n = std::int64_t(e.tile_n) * e.cluster_n - 8;
  std::int64_t const k = std::int64_t(e.tile_k) * k_tiles - 5;
  GemmArguments g = problem(m, n, k, "tn", MatrixOrder::row_major, e.ab, cd);
  g.beta = beta;
  if (e.ab == DType::e4m3) g.a_scale = 0.5f, g.b_scale = 2.0f;
  return g;
}

// fp8 against its dequantized inputs only (cuBLASLt's fp8 is not run here); the rest also
// against cuBLAS's error.
void expect_verdict(Verdict const& v, std::string const& w, GemmArguments const& g) {
  if (g.a_type == DType::e4m3) {
    EXPECT_TRUE(v.ours.passed()) << w << ": " << v.ours.describe();
  } else {
    expect_good(v, w, g.a_type);
  }
}

// Stream-K (opt-in: GemmOptions::stream_k; kernel/sm90_gemm_cta.hpp,
// sm90_stream_k_pays): one tile column of `clusters + extra` cluster tiles, so the persistent walk
// would leave most of a last round idle and the entries share the last round's tiles out by
// k-tiles instead. K ragged, 17 or 47 k-tiles: the pieces cut tiles in two or three, the
// finisher adds one or two peers' partials. D through TMA stores (beta 0), from registers (beta
// != 0), and fp32; fp8 judged against its dequantized inputs.
void check_stream_k(StreamKEntry const& e, int extra, int k_tiles, float beta, DType cd) {
  int const clusters = resident_clusters(e);
  ASSERT_GT(clusters, 1) << e.name;
  int const tiles = clusters + extra;
  ASSERT_TRUE(kernel::detail::sm90_stream_k_pays(tiles, clusters, k_tiles)) << e.name << ": " << tiles << " cluster tiles";
  GemmArguments g = one_column_problem(e, tiles, k_tiles, beta, cd);
  bool const fp8 = e.ab == DType::e4m3;
  Operands ops(g, std::uint64_t(tiles * 131 + k_tiles), 0, fp8 ? -2.0f : -1.0f, fp8 ? 2.0f : 1.0f);
  std::string const w = what(e.name, g, "tn") + " " + std::to_string(tiles) + " cluster tiles on " + std::to_string(clusters) +
                        " clusters, " + std::to_string(k_tiles) + " k-tiles";
  g.options.stream_k = true;  // opt-in (src/gemm/sm90_gemm.cpp: measured slower so far)
  Verdict const v = run_and_check(e.name, g, /*with_cublas=*/!fp8);
  expect_verdict(v, w, g);
}

// The split tail (the default where sm90_split_tail_slices says so: kSplitTail of
// schedule/stream_k.hpp): `clusters + extra` cluster tiles in one tile column, so the last round
// holds `extra` tiles, each cut into 2 or 3 aligned K slices on as many clusters and fixed up as
// Stream-K is. K ragged (41 or 64 k-tiles: 2 or 3 slices). C unread and a 16-bit D (the rule): D
// through TMA stores.
void check_split_tail(StreamKEntry const& e, int extra, int k_tiles, DType cd) {
  int const clusters = resident_clusters(e);
  ASSERT_GT(clusters, 1) << e.name;
  int const tiles = clusters + extra;
  int const slices = kernel::detail::sm90_split_tail_slices(tiles, clusters, k_tiles);
  ASSERT_GE(slices, 2) << e.name << ": " << tiles << " cluster tiles on " << clusters << " clusters, " << k_tiles << " k-tiles";
  GemmArguments g = one_column_problem(e, tiles, k_tiles, 0.0f, cd);
  bool const fp8 = e.ab == DType::e4m3;
  Operands ops(g, std::uint64_t(tiles * 71 + k_tiles), 0, fp8 ? -2.0f : -1.0f, fp8 ? 2.0f : 1.0f);
  std::string const w = what(e.name, g, "tn") + " " + std::to_string(tiles) + " cluster tiles on " + std::to_string(clusters) +
                        " clusters, " + std::to_string(k_tiles) + " k-tiles, the last round in " + std::to_string(slices) +
                        " slices";
  expect_verdict(run_and_check(e.name, g, /*with_cublas=*/!fp8), w, g);
  // The slices sum in a fixed order: a second run gives the same bits.
  std::size_t const bytes = ops.nd * size_of(g.c_type);
  auto const first = download(g.d, bytes);
  ASSERT_TRUE(reference::fill_constant_device(g.d, g.c_type, ops.nd, NAN).ok());
  g.kernel = e.name;
  ASSERT_TRUE(gemm(g, nullptr).ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(download(g.d, bytes) == first) << w << ": two runs differ";
}

TEST(Sm90Small, SplitTailOnTheDefaultKernel) {
  TESSEL_REQUIRE_SM90();
  check_split_tail({"sm90_bf16_128x256x64_c2_s4", 2, 1, 256, 64, DType::bf16}, 9, 50, DType::bf16);
}

TEST(Sm90Sweep, SplitTailSlicesTheLastRoundsTiles) {
  TESSEL_REQUIRE_SM90();
  StreamKEntry const entries[] = {
      {"sm90_bf16_128x256x64_c2_s4", 2, 1, 256, 64, DType::bf16}, {"sm90_bf16_128x256x64_c2", 2, 1, 256, 64, DType::bf16},
      {"sm90_bf16_128x256x64", 1, 1, 256, 64, DType::bf16},       {"sm90_bf16_128x256x64_c1x2", 1, 2, 256, 64, DType::bf16},
      {"sm90_fp16_128x128x64_c2", 2, 1, 128, 64, DType::f16},     {"sm90_e4m3_128x256x128_c2", 2, 1, 256, 128, DType::e4m3}};
  for (StreamKEntry const& e : entries) {
    for (int extra : {3, 9}) {
      for (int k_tiles : {41, 64}) {
        check_split_tail(e, extra, k_tiles, e.ab == DType::e4m3 ? DType::bf16 : e.ab);
      }
    }
  }
}

TEST(Sm90Small, StreamKFixUpOnTheDefaultKernel) {
  TESSEL_REQUIRE_SM90();
  check_stream_k({"sm90_bf16_128x256x64_c2_s4", 2, 1, 256, 64, DType::bf16}, 5, 17, 0.0f, DType::bf16);
}

TEST(Sm90Sweep, StreamKSharesTheLastRoundsTiles) {
  TESSEL_REQUIRE_SM90();
  StreamKEntry const entries[] = {
      {"sm90_bf16_128x256x64_c2_s4", 2, 1, 256, 64, DType::bf16}, {"sm90_bf16_128x256x64_c2", 2, 1, 256, 64, DType::bf16},
      {"sm90_bf16_128x256x64", 1, 1, 256, 64, DType::bf16},       {"sm90_bf16_128x256x64_c1x2", 1, 2, 256, 64, DType::bf16},
      {"sm90_fp16_128x128x64_c2", 2, 1, 128, 64, DType::f16},     {"sm90_e4m3_128x256x128_c2", 2, 1, 256, 128, DType::e4m3},
      {"sm90_e4m3_128x128x128_c2", 2, 1, 128, 128, DType::e4m3},  {"sm90_e4m3_128x256x128_c2_fastacc", 2, 1, 256, 128, DType::e4m3}};
  for (StreamKEntry const& e : entries) {
    bool const fast = std::string(e.name).find("fastacc") != std::string::npos;
    for (int extra : {5, 37}) {
      for (int k_tiles : {17, 47}) {
        if (fast && k_tiles > 17) continue;  // fast accumulation: short K only (see Fp8EntriesOnRaggedShapes)
        check_stream_k(e, extra, k_tiles, 0.0f, e.ab == DType::e4m3 ? DType::bf16 : e.ab);
        check_stream_k(e, extra, k_tiles, -0.5f, e.ab == DType::e4m3 ? DType::bf16 : e.ab);
        check_stream_k(e, extra, k_tiles, 0.0f, DType::f32);
      }
    }
  }
}

TEST(Sm90Sweep, NanInARowOfAPropagates) {
  TESSEL_REQUIRE_SM90();
  for (DtypeCase const& dt : kDtypes) {
    GemmArguments g = problem(50, 40, 70, "tn", MatrixOrder::row_major, dt.ab, dt.cd);
    g.beta = 0.0f;
    Operands ops(g, 61);
    std::uint16_t const nan16 = dt.ab == DType::bf16 ? reference::float_to_bf16(NAN) : reference::float_to_f16(NAN);
    // A row-major (M,K): A(3, 5) = NaN, so row 3 of D is NaN and nothing else is.
    ASSERT_EQ(cudaMemcpy(static_cast<char*>(const_cast<void*>(g.a)) + (3 * g.lda + 5) * 2, &nan16, 2, cudaMemcpyHostToDevice),
              cudaSuccess);
    g.kernel = dt.cluster;
    ASSERT_TRUE(gemm(g, nullptr).ok());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    auto const h = download(g.d, ops.nd * size_of(g.c_type));
    for (std::int64_t r = 0; r < g.m; ++r) {
      for (std::int64_t c = 0; c < g.n; ++c) {
        std::size_t const i = std::size_t(r * g.ldd + c);
        float x;
        if (g.c_type == DType::f32) {
          std::memcpy(&x, &h[4 * i], 4);
        } else {
          std::uint16_t u;
          std::memcpy(&u, &h[2 * i], 2);
          x = g.c_type == DType::bf16 ? reference::bf16_to_float(u) : reference::f16_to_float(u);
        }
        EXPECT_EQ(std::isnan(x), r == 3) << dt.cluster << " D(" << r << "," << c << ") = " << x;
      }
    }
  }
}

TEST(Sm90Small, OtherArchitecturesRefuseWithArchMismatch) {
  TESSEL_REQUIRE_GPU();
  if (compute_capability() == 90) GTEST_SKIP() << "this GPU is sm_90: the refusal is for other architectures";
  GemmArguments g = problem(64, 64, 64, "tn", MatrixOrder::col_major, DType::bf16, DType::bf16);
  Operands ops(g, 3);
  g.kernel = "sm90_bf16_128x256x64";
  Status s = gemm(g, nullptr);
  EXPECT_EQ(s.code, StatusCode::arch_mismatch) << s.reason;
}

TEST(Sm90Sweep, LeadingDimensionsOffEveryAlignment) {
  TESSEL_REQUIRE_SM90();
  // Leading dimensions 1..6 elements past a multiple of 8 (rows 2, 4, 8 or 16 bytes aligned at
  // best: TMA needs 16, so those operands are staged, and D leaves by row copies or from
  // registers), alone or together, with pointers on or off 16 bytes; beta = 0 (16-bit D through
  // shared memory) and not (registers); D's padding must stay untouched.
  struct Extra {
    int a, b, d;
  };
  // K = 203: +5 makes lda/ldb 208, 16-byte aligned rows read in place with K not a multiple of
  // 8 (TMA must zero the k-tail, not read the padding); ldd + 2 with N = 150 is aligned but not
  // whole 16-byte units wide (no TMA store: it would write columns 150 and 151).
  constexpr Extra extras[] = {{1, 1, 1}, {2, 2, 2}, {4, 4, 4}, {3, 0, 1}, {0, 5, 0}, {0, 0, 3}, {6, 2, 0}, {5, 5, 0}, {5, 5, 2}};
  for (DtypeCase const& dt : kDtypes) {
    for (Extra const& x : extras) {
      for (MatrixOrder co : {MatrixOrder::col_major, MatrixOrder::row_major}) {
        for (int offset : {0, 1}) {
          for (float beta : {0.0f, -0.5f}) {
            for (char const* name : {dt.single, dt.cluster, dt.cluster_n, dt.narrow, dt.skinny, dt.skinny64, dt.pingpong, dt.c_tma, dt.skinny_c1x2}) {
              if (name == nullptr) continue;
              GemmArguments g = problem(150, 170, 203, "tn", co, dt.ab, dt.cd);
              g.lda += x.a, g.ldb += x.b, g.ldc += x.d, g.ldd += x.d, g.beta = beta;
              Operands ops(g, std::uint64_t(x.a * 100 + x.b * 10 + x.d), offset);
              std::string const w = what(name, g, "tn") + " lda+" + std::to_string(x.a) + " ldb+" +
                                    std::to_string(x.b) + " ldd+" + std::to_string(x.d) + " offset " +
                                    std::to_string(offset) + " beta " + std::to_string(beta);
              expect_good(run_and_check(name, g), w, g.a_type);
              expect_padding_untouched(g, ops.nd - std::size_t(offset), w);
            }
          }
        }
      }
    }
  }
}

TEST(Sm90Sweep, LargeDWithRowsOffTheSectorsReadsAStagedCopy) {
  TESSEL_REQUIRE_SM90();
  // A 6144 x 6144 D (M N / (M + N) = 3072: large enough that the host stages 16-bit operands
  // whose rows are 16-byte aligned but off the L2's 32-byte sectors, src/gemm/sm90_gemm.cpp
  // operand_align): leading dimensions 8 elements past a multiple of 16, K-major (`tn`) and
  // MN-major (`nn`: A's rows 6152 elements apart), a ragged K.
  for (DtypeCase const& dt : kDtypes) {
    if (dt.cd != dt.ab) continue;  // 16-bit D: the TMA-store kernels
    for (char const* layout : {"tn", "nn"}) {
      GemmArguments g = problem(6144, 6144, 200, layout, MatrixOrder::col_major, dt.ab, dt.cd);
      g.lda += 8, g.ldb += 8;
      Operands ops(g, 53);
      std::string const s4 = dt.ab == DType::bf16 ? "sm90_bf16_128x256x64_c2_s4" : dt.cluster;
      for (std::string const& name : {s4, std::string(dt.cluster)})
        expect_good(run_and_check(name.c_str(), g), what(name.c_str(), g, layout) + " lda+8 ldb+8", g.a_type);
    }
  }
}

TEST(Sm90Sweep, OddLeadingDimensionsWithFewRowsOrBatches) {
  TESSEL_REQUIRE_SM90();
  // Fewer rows than one 8-row swizzle atom (5 x 300) with odd leading dimensions, and batches
  // whose strides are multiples of 8 elements or odd, every operand staged or not accordingly.
  for (DtypeCase const& dt : kDtypes) {
    for (MatrixOrder co : {MatrixOrder::col_major, MatrixOrder::row_major}) {
      GemmArguments g = problem(5, 300, 77, "tn", co, dt.ab, dt.cd);
      g.lda += 1, g.ldb += 1, g.ldc += 1, g.ldd += 1, g.beta = 0.0f;
      Operands ops(g, 3);
      for (char const* name : {dt.cluster, dt.pingpong}) {
        if (name == nullptr) continue;
        expect_good(run_and_check(name, g), what(name, g, "tn") + " few rows", g.a_type);
        expect_padding_untouched(g, ops.nd, what(name, g, "tn") + " few rows");
      }
      for (std::int64_t pad : {0, 1}) {  // batch strides: multiples of 8 elements, then odd
        GemmArguments b = problem(130, 140, 99, "tn", co, dt.ab, dt.cd, 3);
        b.lda += 1, b.ldb += 3, b.ldc += 1, b.ldd += 1, b.beta = 0.0f;
        b.batch_stride_a = (b.lda * (b.a_order == MatrixOrder::row_major ? b.m : b.k) + 7) / 8 * 8 + pad;
        b.batch_stride_b = (b.ldb * (b.b_order == MatrixOrder::row_major ? b.k : b.n) + 7) / 8 * 8 + pad;
        b.batch_stride_c = b.batch_stride_d = (b.ldd * (co == MatrixOrder::row_major ? b.m : b.n) + 7) / 8 * 8 + pad;
        Operands bops(b, 5 + std::uint64_t(pad));
        for (char const* name : {dt.single, dt.pingpong}) {
          if (name == nullptr) continue;
          std::string const w = what(name, b, "tn") + " batch stride pad " + std::to_string(pad);
          expect_good(run_and_check(name, b), w, b.a_type);
          expect_padding_untouched(b, bops.nd, w);
        }
      }
    }
  }
}

TEST(Sm90Large, OddAndAlignedShapesAgainstCublas) {
  TESSEL_REQUIRE_SM90();
  struct Case {
    std::int64_t m, n, k;
    char const* layout;
    DType ab, cd;
    char const* entry;
  };
  constexpr Case cases[] = {
      {4095, 4097, 4099, "tn", DType::bf16, DType::bf16, "sm90_bf16_128x256x64_c2"},
      {4095, 4097, 4099, "nt", DType::f16, DType::f16, "sm90_fp16_128x256x64"},
      {4095, 4097, 4099, "tn", DType::bf16, DType::bf16, "sm90_bf16_128x128x64_c2"},
      {8191, 8193, 8191, "tn", DType::bf16, DType::bf16, "sm90_bf16_128x256x64_c2"},
      {4096, 4096, 4096, "tn", DType::bf16, DType::f32, "sm90_bf16_128x256x64_c2"},
      {4095, 4097, 4099, "tn", DType::bf16, DType::bf16, "sm90_bf16_128x256x64"},
      {4095, 4097, 4099, "tn", DType::bf16, DType::bf16, "sm90_bf16_128x256x64_c1x2"},
      {4096, 4096, 4099, "tn", DType::bf16, DType::bf16, "sm90_bf16_128x256x64_c2"},  // odd K, aligned D
      {4095, 4097, 4096, "tn", DType::f16, DType::f16, "sm90_fp16_128x256x64_c2"},   // odd D, aligned K
      {16, 8192, 8191, "tn", DType::bf16, DType::bf16, "sm90_bf16_128x64x64"},        // skinny, odd K
      {16, 8192, 8191, "tn", DType::bf16, DType::bf16, "sm90_bf16_64x64x64"},         // skinny, 64-row tiles, odd K
      {8192, 40, 8192, "tn", DType::f16, DType::f16, "sm90_fp16_64x64x64"},            // the other side narrow
      {16, 8192, 8191, "tn", DType::bf16, DType::bf16, "sm90_bf16_64x16x64"},         // 16-wide tiles (swapped), odd K
      {13, 8192, 4096, "nt", DType::bf16, DType::bf16, "sm90_bf16_64x16x64"},         // MN-major operands staged
      {8192, 9, 4099, "tn", DType::f16, DType::f16, "sm90_fp16_64x16x64"},            // the other side narrow, odd K
      {1000, 40, 3000, "tn", DType::bf16, DType::bf16, "sm90_bf16_64x16x64"},         // wider than a tile: 3 tile columns
      {4095, 4097, 4099, "tn", DType::bf16, DType::bf16, kPingpong},                    // register epilogue (odd ldd)
      {4096, 4096, 4096, "tn", DType::bf16, DType::bf16, kPingpong},                    // TMA-store epilogue
      {4096, 4096, 4096, "nt", DType::bf16, DType::f32, kPingpong},                     // fp32 D from registers
      {4096, 4096, 4096, "nn", DType::bf16, DType::bf16, "sm90_bf16_128x256x64_c2"},   // MN-major B in place
      {4096, 4096, 4096, "nt", DType::f16, DType::f16, "sm90_fp16_128x256x64_c1x2"},   // both MN-major
      {4000, 4104, 3000, "tt", DType::bf16, DType::bf16, "sm90_bf16_128x256x64"},      // MN-major A, ragged
  };
  for (Case const& c : cases) {
    GemmArguments g = problem(c.m, c.n, c.k, c.layout, MatrixOrder::col_major, c.ab, c.cd);
    g.alpha = 1.0f, g.beta = 0.0f;
    Operands ops(g, 71);
    expect_good(run_and_check(c.entry, g), what(c.entry, g, c.layout), g.a_type);
  }
}

// The test binary's own main: after gtest's flags, one optional --options=NAME runs every test
// with that GemmOptions set on each problem() (tests/CMakeLists.txt registers the subsets):
//   --options=in-flight-5     the 16-wide skinny kernels keep at most 5 k-tiles in flight (the
//                             rule takes that limit only for some tile counts per GPU)
//   --options=l2-hints-1-2    every 16-wide launch gives A evict-first and B evict-last loads (the
//                             test problems are too small for the rule to give them)
//   --options=general-builds  no lean twins: the general kernels' own path for the calls a lean
//                             build would otherwise take
int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    std::string const a = argv[i];
    tessel::GemmOptions& o = tessel::test_options();
    if (a == "--options=in-flight-5") {
      o.skinny_in_flight = 5;
    } else if (a == "--options=l2-hints-1-2") {
      o.skinny_l2_hint_a = 1, o.skinny_l2_hint_b = 2;
    } else if (a == "--options=general-builds") {
      o.lean_builds = false;
    } else {
      std::fprintf(stderr, "%s: unknown argument '%s' (--options=in-flight-5|l2-hints-1-2|general-builds)\n", argv[0],
                   argv[i]);
      return 2;
    }
  }
  return RUN_ALL_TESTS();
}
