// The GEMM's fused epilogue, D = act(alpha * A B + beta * C + bias) (gemm_arguments.hpp,
// epilogue/epilogue_fusion.hpp), through every registry entry that takes the problem, each run by
// name through tessel::gemm and judged by the fp64 reference with the same fusion applied
// (reference/gemm_host.hpp, apply_fusion: error scale times the activation's slope bound).
//
// Every activation (none, relu, gelu, gelu_tanh, silu) x bias none / row / col x beta 0 / 1 on
// ragged shapes: a D that TMA stores (16-byte rows), a tall-and-narrow one the skinny kernels run
// swapped, a column-major D (the bias turns with the canonical problem); bf16 and fp16 D (fp8 and
// fp32/tf32 inputs on the entries that take them). D is poisoned with NaN first, so an element the
// epilogue skipped fails, and NaN where the reference is finite is an infinite error. Then the
// paths one shape does not reach: odd leading dimensions (the copy warps' row copies), fp32 D (the
// in-place pass), split-K (the reduction applies it), Stream-K and the split tail (the finisher
// does), C loaded by TMA, the lean and general builds, K = 0, batches, large inputs (no NaN from
// the activations' tails).
#include "gpu/gemm_verdict.hpp"
#include "gpu/gpu_test.hpp"

#include <tessel/gemm/device/gemm.hpp>
#include <tessel/gemm/device/gemm_registry.hpp>
#include <tessel/gemm/device/sm90_gemm_kernels.hpp>
#include <tessel/gemm/kernel/sm90_gemm_cta.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

using namespace tessel;

namespace {

constexpr Activation kActivations[] = {Activation::none, Activation::relu, Activation::gelu, Activation::gelu_tanh,
                                       Activation::silu};
constexpr BiasMode kBiasModes[] = {BiasMode::none, BiasMode::row, BiasMode::col};

struct Fusion {
  Activation act;
  BiasMode bias;
  float beta;
};

std::string describe(char const* kernel, GemmArguments const& g, char const* layout, Fusion f) {
  return std::string(kernel ? kernel : "auto") + " " + describe_problem(g, layout) + " act " + to_string(f.act) +
         " bias " + to_string(f.bias) + " beta " + std::to_string(f.beta);
}

// One fused call's operands: A, B, C (Operands: random, D poisoned), and a bias of M or N values
// of D's dtype in [-1, 1).
struct FusedOperands {
  Operands ops;
  std::unique_ptr<DeviceMem> bias;
  FusedOperands(GemmArguments& g, std::uint64_t seed, float lo = -1.0f, float hi = 1.0f) : ops(g, seed, 0, lo, hi) {
    std::int64_t const n = std::max<std::int64_t>(std::max(g.m, g.n), 1);
    bias = std::make_unique<DeviceMem>(std::size_t(n) * size_of(g.c_type));
    EXPECT_TRUE(bias->p != nullptr);
    EXPECT_TRUE(reference::fill_uniform_device(bias->p, g.c_type, n, seed * 5 + 4).ok());
  }
};

// Runs g with fusion f (kernel by name, or the heuristic's with nullptr) on `in`'s operands, D
// poisoned again first; adds a failure naming everything when the judge fails. Returns whether
// it passed.
bool run_fused(char const* kernel, GemmArguments g, FusedOperands& in, char const* layout, Fusion f) {
  g.activation = f.act, g.bias_mode = f.bias, g.bias = f.bias == BiasMode::none ? nullptr : in.bias->p;
  g.beta = f.beta, g.kernel = kernel;
  EXPECT_TRUE(reference::fill_constant_device(in.ops.d->p, g.c_type, in.ops.nd, NAN).ok());
  std::string const w = describe(kernel, g, layout, f);
  Status const s = gemm(g, nullptr);
  if (!s.ok()) {
    ADD_FAILURE() << w << ": " << s.reason;
    return false;
  }
  if (cudaError_t err = cudaDeviceSynchronize(); err != cudaSuccess) {
    ADD_FAILURE() << w << ": " << cudaGetErrorString(err);
    return false;
  }
  Verdict const v = judge(g, /*with_cublas=*/false);
  if (!v.ours.passed()) ADD_FAILURE() << w << ": " << v.ours.describe();
  return v.ours.passed();
}

// Every activation x bias mode x beta on one problem; stops after a few failures of one entry.
void sweep(char const* kernel, GemmArguments g, char const* layout, std::uint64_t seed, int* failures) {
  bool const fp8 = is_fp8(g.a_type);
  FusedOperands in(g, seed, fp8 ? -2.0f : -1.0f, fp8 ? 2.0f : 1.0f);
  for (Activation act : kActivations)
    for (BiasMode bias : kBiasModes)
      for (float beta : {0.0f, 1.0f}) {
        if (*failures >= 4) return;
        if (!run_fused(kernel, g, in, layout, {act, bias, beta})) ++*failures;
      }
}

struct Shape {
  std::int64_t m, n, k;
  char const* layout;
  MatrixOrder d;
};
// A D with 16-byte rows that TMA stores, ragged M and K; a D 13 tall (the skinny kernels run it
// swapped) with MN-major A; a column-major D of odd width (the bias follows the canonical D's
// columns, then rows) with MN-major B.
constexpr Shape kShapes[] = {{150, 96, 200, "tn", MatrixOrder::row_major},
                             {13, 150, 72, "nn", MatrixOrder::row_major},
                             {70, 33, 40, "nt", MatrixOrder::col_major}};

struct Dtypes {
  DType ab, cd;
};
constexpr Dtypes kDtypes[] = {{DType::bf16, DType::bf16}, {DType::f16, DType::f16}, {DType::e4m3, DType::bf16},
                              {DType::tf32, DType::f32}, {DType::f32, DType::f32}};

// The problem with entry k forced, when k takes it on this GPU.
bool takes(GemmKernelInfo const& k, GemmArguments g) {
  // The choice reads the pointers' alignment only; the rules refuse null operands.
  alignas(256) static unsigned char a[256], b[256], c[256], d[256];
  g.a = a, g.b = b, g.c = c, g.d = d;
  g.kernel = k.name;
  return can_implement(g).ok();
}

// The entries whose names start with `prefix`, each over every dtype pair it takes and every shape.
void every_entry(char const* prefix) {
  int ran = 0;
  for (GemmKernelInfo const& k : gemm_kernels()) {
    if (std::string(k.name).rfind(prefix, 0) != 0) continue;
    int failures = 0;
    for (Dtypes dt : kDtypes)
      for (Shape const& sh : kShapes) {
        GemmArguments g = problem(sh.m, sh.n, sh.k, sh.layout, sh.d, dt.ab, dt.cd);
        if (!takes(k, g)) continue;
        ++ran;
        sweep(k.name, g, sh.layout, std::uint64_t(sh.m * 7 + sh.n), &failures);
      }
  }
  if (ran == 0) GTEST_SKIP() << "no " << prefix << " entry runs on this GPU";
}

// A few fusions that reach every code path of a problem: both bias orientations, an activation
// with each, C read and not.
constexpr Fusion kFew[] = {{Activation::gelu, BiasMode::row, 0.0f},
                           {Activation::silu, BiasMode::col, 1.0f},
                           {Activation::gelu_tanh, BiasMode::col, 0.0f},
                           {Activation::relu, BiasMode::row, -0.5f}};

void few(char const* kernel, GemmArguments g, char const* layout, std::uint64_t seed) {
  FusedOperands in(g, seed);
  for (Fusion f : kFew) run_fused(kernel, g, in, layout, f);
}

}  // namespace

TEST(GemmFusion, Sm90EntriesEveryActivationBiasAndBeta) {
  TESSEL_REQUIRE_SM90();
  every_entry("sm90_");
}

TEST(GemmFusion, Sm80EntriesEveryActivationBiasAndBeta) {
  TESSEL_REQUIRE_GPU();
  every_entry("sm80_");
}

TEST(GemmFusion, SimtEntriesEveryActivationBiasAndBeta) {
  TESSEL_REQUIRE_GPU();
  every_entry("simt_");
  every_entry("tensor_simt_");
}

// D's rows off 16 bytes: the sm_90a kernels' copy warps (or registers), the sm_80 kernels'
// element stores; and an fp32 D, which every entry finishes in a pass over D.
TEST(GemmFusion, EveryEntryOddLeadingDimensionAndFp32D) {
  TESSEL_REQUIRE_GPU();
  int ran = 0;
  for (GemmKernelInfo const& k : gemm_kernels()) {
    for (DType ab : {DType::bf16, DType::f16}) {
      GemmArguments g = problem(300, 200, 130, "tn", MatrixOrder::row_major, ab, ab);
      g.ldc = g.ldd = 203, g.batch_stride_c = g.batch_stride_d = 203 * 300;
      if (takes(k, g)) few(k.name, g, "tn", 11), ++ran;
      GemmArguments h = problem(300, 200, 130, "tn", MatrixOrder::row_major, ab, DType::f32);
      if (takes(k, h)) few(k.name, h, "tn", 12), ++ran;
    }
  }
  EXPECT_GT(ran, 0) << "no entry took the problem";
}

// Parallel split-K: the reduction applies the epilogue (forced slices on the sm_90a entries; a
// long K over one tile on the others, whose heuristics split it).
TEST(GemmFusion, SplitKReductionsApplyIt) {
  TESSEL_REQUIRE_GPU();
  int ran = 0;
  for (GemmKernelInfo const& k : gemm_kernels()) {
    for (MatrixOrder d : {MatrixOrder::row_major, MatrixOrder::col_major}) {
      GemmArguments g = problem(96, 80, 6000, "tn", d, DType::bf16, DType::bf16);
      if (std::string(k.name).rfind("sm90_", 0) == 0) g.options.splits = 3;
      if (takes(k, g)) few(k.name, g, "tn", 13), ++ran;
      GemmArguments t = problem(13, 300, 5000, "tn", d, DType::f16, DType::f16);  // skinny, swapped on sm_90a
      if (std::string(k.name).rfind("sm90_", 0) == 0) t.options.splits = 2;
      if (takes(k, t)) few(k.name, t, "tn", 14), ++ran;
    }
  }
  EXPECT_GT(ran, 0) << "no entry took the problem";
}

// Stream-K and the split tail: the unit that finishes a tile adds its peers' partials and runs
// the epilogue (one tile column of clusters + 5 cluster tiles, as sm90_gemm_test.cpp's checks).
TEST(GemmFusion, StreamKAndSplitTailFinishersApplyIt) {
  TESSEL_REQUIRE_SM90();
  char const* const name = "sm90_bf16_128x256x64_c2_s4";
  GemmKernelInfo const* k = nullptr;
  for (GemmKernelInfo const& e : sm90_gemm_kernels())
    if (std::string(e.name) == name) k = &e;
  ASSERT_NE(k, nullptr);
  int const clusters = sm90_resident_ctas(*k) / 2;
  ASSERT_GT(clusters, 1);
  for (int extra : {5, 9}) {
    int const tiles = clusters + extra, k_tiles = extra == 5 ? 17 : 50;
    GemmArguments g = problem(std::int64_t(256) * tiles - 37, 248, std::int64_t(64) * k_tiles - 5, "tn",
                              MatrixOrder::row_major, DType::bf16, DType::bf16);
    if (extra == 5) {
      ASSERT_TRUE(kernel::detail::sm90_stream_k_pays(tiles, clusters, k_tiles));
      g.options.stream_k = true;
    } else {
      ASSERT_GE(kernel::detail::sm90_split_tail_slices(tiles, clusters, k_tiles), 2);
    }
    few(name, g, "tn", 15 + std::uint64_t(extra));
  }
}

// C by TMA (the _tmac entries, beta != 0): the fused epilogue takes C from the staging buffer;
// and the entries of the 4096^3-class picks on a problem of many tiles per CTA (held blocks, the
// persistent walk), each on its general build and on its lean one: a fused call with C unread
// runs the lean fused build where the entry has one (the bf16 _c2_s4 and fp16 _c2 entries), the
// general build otherwise.
TEST(GemmFusion, CByTmaAndManyTilesPerCta) {
  TESSEL_REQUIRE_SM90();
  GemmArguments g = problem(1000, 1536, 256, "tn", MatrixOrder::row_major, DType::bf16, DType::bf16);
  few("sm90_bf16_128x256x64_c2_tmac", g, "tn", 21);
  few("sm90_fp16_128x256x64_c2_tmac", problem(1000, 1536, 256, "tn", MatrixOrder::row_major, DType::f16, DType::f16),
      "tn", 22);
  for (bool lean : {true, false}) {
    GemmArguments big = problem(2048, 3072, 512, "tn", MatrixOrder::row_major, DType::bf16, DType::bf16);
    big.options.lean_builds = lean;
    for (char const* name : {"sm90_bf16_128x256x64_c2_s4", "sm90_bf16_128x256x64_c2", "sm90_bf16_128x192x64_c2",
                             "sm90_bf16_128x128x64_pingpong_c2"})
      few(name, big, "tn", 23);
    GemmArguments big16 = problem(2048, 3072, 512, "tn", MatrixOrder::row_major, DType::f16, DType::f16);
    big16.options.lean_builds = lean;
    few("sm90_fp16_128x256x64_c2", big16, "tn", 24);
  }
}

// K = 0 and alpha = 0: D = act(beta * C + bias), A and B unread.
TEST(GemmFusion, KZeroAndAlphaZero) {
  TESSEL_REQUIRE_GPU();
  for (DType cd : {DType::bf16, DType::f32}) {
    GemmArguments g = problem(37, 45, 0, "tn", MatrixOrder::col_major, cd == DType::f32 ? DType::f32 : cd, cd);
    g.lda = g.ldb = 1;
    few(nullptr, g, "tn", 31);
    GemmArguments h = problem(37, 45, 20, "tn", MatrixOrder::row_major, cd == DType::f32 ? DType::f32 : cd, cd);
    h.alpha = 0.0f;
    few(nullptr, h, "tn", 32);
  }
}

// Batches share one bias vector; the heuristic's pick on larger problems and every layout.
TEST(GemmFusion, BatchesAndTheHeuristicsPick) {
  TESSEL_REQUIRE_GPU();
  for (char const* layout : {"tn", "nn", "nt", "tt"}) {
    GemmArguments g = problem(130, 260, 96, layout, MatrixOrder::row_major, DType::bf16, DType::bf16, 3);
    few(nullptr, g, layout, 41);
  }
  few(nullptr, problem(1024, 2048, 512, "tn", MatrixOrder::row_major, DType::bf16, DType::bf16), "tn", 42);
  few(nullptr, problem(2048, 1024, 512, "nt", MatrixOrder::col_major, DType::f16, DType::f16), "nt", 43);
  few(nullptr, problem(8, 4096, 1024, "tn", MatrixOrder::row_major, DType::bf16, DType::bf16), "tn", 44);  // M of a decode step
}

// Inputs in [-40, 40): sums of +-10^5, far into the activations' tails, where their fast forms
// must give 0 or z (never NaN) as the reference does (bf16 D: fp16 would overflow).
TEST(GemmFusion, LargeSumsStayFinite) {
  TESSEL_REQUIRE_GPU();
  GemmArguments g = problem(200, 136, 96, "tn", MatrixOrder::row_major, DType::bf16, DType::bf16);
  FusedOperands in(g, 51, -40.0f, 40.0f);
  for (Activation act : kActivations)
    for (BiasMode bias : {BiasMode::row, BiasMode::col}) run_fused(nullptr, g, in, "tn", {act, bias, 0.0f});
}

// A bad fused call is refused before anything runs (the rules themselves: host tests).
TEST(GemmFusion, RefusalsNameTheArgument) {
  TESSEL_REQUIRE_GPU();
  GemmArguments g = problem(64, 64, 64, "tn", MatrixOrder::row_major, DType::bf16, DType::bf16);
  FusedOperands in(g, 61);
  g.bias = in.bias->p;  // no bias_mode
  Status s = gemm(g, nullptr);
  EXPECT_EQ(s.code, StatusCode::invalid_argument);
  EXPECT_EQ(s.reason.rfind("bias_mode:", 0), 0u) << s.reason;
  g.bias_mode = BiasMode::row, g.activation = static_cast<Activation>(12);
  s = gemm(g, nullptr);
  EXPECT_EQ(s.reason.rfind("activation:", 0), 0u) << s.reason;
}
