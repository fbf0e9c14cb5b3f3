// `tessel gemm` and `tessel list` as a user meets them: bad arguments give one line and exit 2;
// without a GPU (or without CUDA) one clear line and exit 2; the bench suites parse (--dry-run).
#include "host/cli_run.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <initializer_list>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using tessel::test::CliRun;
using tessel::test::lines;
using tessel::test::tessel_binary;

CliRun run(std::string const& args) { return tessel::test::run_tessel(args); }

class CliGemm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(tessel_binary())) GTEST_SKIP() << "the tessel CLI is not built";
  }
  // A build without CUDA (the host-only preset) has a `tessel gemm` that only says so.
  static bool cuda_build() { return run("gemm --help").code == 0; }
};

}  // namespace

TEST_F(CliGemm, BadFlagsGiveOneLineAndExit2) {
  for (char const* args : {"gemm --bogus", "gemm --m", "gemm --m x", "gemm --m -5", "gemm --dtype fp64",
                           "gemm --layout xx", "gemm --iters 0", "gemm stray", "gemm --kernel no_such_kernel",
                           "gemm --dtype fp32 --out-dtype fp16", "gemm --compare mkl", "list --bogus",
                           "gemm --b-dtype fp64", "gemm --dtype e4m3 --out-dtype e4m3", "gemm --a-scale x",
                           "gemm --dtype e5m2", "gemm --dtype e4m3 --b-dtype bf16", "gemm --dtype bf16 --a-scale 2",
                           "gemm --lda x", "gemm --ldb 0", "gemm --ldc -3"}) {
    CliRun r = run(args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1) << args << ": stderr was\n" << r.err;
    EXPECT_EQ(r.err.rfind("tessel ", 0), 0u) << args << ": " << r.err;
  }
}

TEST_F(CliGemm, ValidationReasonsNameTheArgument) {
  if (!cuda_build()) GTEST_SKIP() << "tessel was built without CUDA";
  CliRun r = run("gemm --dtype bf16 --out-dtype fp16");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("c_type:"), std::string::npos) << r.err;
}

TEST_F(CliGemm, LeadingDimensionsAreCheckedAndShown) {
  if (!cuda_build()) GTEST_SKIP() << "tessel was built without CUDA";
  // tn: A is stored row-major M x K, so lda must be at least K (16); B column-major K x N, ldb >= K.
  CliRun r = run("gemm --dry-run --m 64 --n 32 --k 16 --lda 8");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("lda"), std::string::npos) << r.err;
  r = run("gemm --dry-run --m 1024 --n 1024 --k 1000 --dtype bf16 --lda 1008 --ldb 1024");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("1024x1024x1000/ld1008,1024,- "), std::string::npos) << r.out;
  r = run("gemm --dry-run --m 64 --n 32 --k 16 --layout nn --ldc 70");  // C/D column-major: ldc >= M
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("64x32x16/ld-,-,70 "), std::string::npos) << r.out;
}

// Each command line is refused before any GPU work: exit 2, one line on stderr with the words.
struct UsageCase {
  char const* args;
  char const* words;
};
void expect_usage_errors(std::initializer_list<UsageCase> cases) {
  for (UsageCase c : cases) {
    CliRun r = run(c.args);
    EXPECT_EQ(r.code, 2) << c.args << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.words), std::string::npos) << c.args << ": " << r.err;
  }
}

TEST_F(CliGemm, TuneOverridesAreCheckedBeforeAnyGpuWork) {
  if (!cuda_build()) GTEST_SKIP() << "tessel was built without CUDA";
  expect_usage_errors({{"gemm --tune lean", "--tune: 'lean' is not KEY=VALUE"},
                       {"gemm --tune fast=1", "--tune: unknown key 'fast'"},
                       {"gemm --tune splits=0", "--tune splits"},
                       {"gemm --tune align=20", "options.operand_align: 20 is not 0"},
                       {"gemm --tune raster=9m", "--tune raster"},
                       {"gemm --tune l2-hints=1", "--tune l2-hints: '1' is not A/B"},
                       {"gemm --tune lean=2", "--tune lean"}});
  CliRun r = run("gemm --dry-run --m 64 --n 32 --k 16 --tune splits=2,lean=0,raster=4n,l2-hints=1/2,align=32,in-flight=5");
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST_F(CliGemm, Fp8ArgumentsAreCheckedBeforeAnyGpuWork) {
  if (!cuda_build()) GTEST_SKIP() << "tessel was built without CUDA";
  expect_usage_errors({{"gemm --dtype e5m2", "b_type: e5m2 with a_type e5m2"},
                       {"gemm --dtype e4m3 --b-dtype bf16", "b_type: bf16 with fp8 a_type e4m3"},
                       {"gemm --dtype bf16 --a-scale 2", "a_scale: 2 scales fp8 operands only"},
                       {"gemm --dtype e4m3 --out-dtype e5m2", "--out-dtype: 'e5m2' is not one of fp32, fp16, bf16"}});
  CliRun r = run("gemm --dry-run --m 64 --n 32 --k 16 --dtype e4m3 --b-dtype e5m2 --a-scale 0.5 --out-dtype fp32");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("e4m3xe5m2->fp32"), std::string::npos) << r.out;
  r = run("gemm --dry-run --dtype e4m3");  // fp8 writes bf16 by default
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("e4m3 "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("->"), std::string::npos) << r.out;
}

TEST_F(CliGemm, BlockScaledFp8IsAcceptedAndCheckedBeforeAnyGpuWork) {
  if (!cuda_build()) GTEST_SKIP() << "tessel was built without CUDA";
  expect_usage_errors({{"gemm --dtype e4m3 --scale-mode tile", "--scale-mode: 'tile' is not one of per-tensor, block"},
                       {"gemm --dtype bf16 --scale-mode block", "scale_mode"}});
  CliRun r = run("gemm --dry-run --m 4095 --n 4097 --k 4000 --dtype e4m3 --scale-mode block");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("e4m3+blockscaled"), std::string::npos) << r.out;
}

TEST_F(CliGemm, FusedEpilogueFlagsAreCheckedBeforeAnyGpuWork) {
  if (!cuda_build()) GTEST_SKIP() << "tessel was built without CUDA";
  expect_usage_errors({{"gemm --bias diagonal", "--bias: 'diagonal' is not one of row, col, none"},
                       {"gemm --act gelu_erf", "--act: 'gelu_erf' is not one of relu, gelu, gelu_tanh, silu, none"},
                       {"gemm --act", "--act"},
                       {"gemm --bias", "--bias"}});
  CliRun r = run("gemm --dry-run --m 64 --n 32 --k 16 --bias row --act gelu");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("bf16+bias_row+gelu"), std::string::npos) << r.out;
  r = run("gemm --dry-run --dtype fp16 --bias col --act gelu_tanh --beta 1");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("fp16+bias_col+gelu_tanh"), std::string::npos) << r.out;
  r = run("gemm --dry-run --act silu");  // an activation without a bias
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("bf16+silu"), std::string::npos) << r.out;
  r = run("gemm --help");
  EXPECT_NE(r.out.find("--bias row|col"), std::string::npos);
  EXPECT_NE(r.out.find("--act A"), std::string::npos);
}

TEST_F(CliGemm, WithoutAGpuOneLineAndExit2) {
  CliRun r = run("gemm --m 8 --n 8 --k 8 --iters 1 --warmup 0");
  if (r.code == 0) GTEST_SKIP() << "a GPU is present (the run succeeded)";
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  bool const says = r.err.find("no CUDA device") != std::string::npos || r.err.find("without CUDA") != std::string::npos;
  EXPECT_TRUE(says) << r.err;
}

TEST_F(CliGemm, HelpExitsZero) {
  if (!cuda_build()) GTEST_SKIP() << "tessel was built without CUDA";
  CliRun r = run("gemm --help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--sweep"), std::string::npos);
}

// Every bench/*.txt sweep parses: attention*.txt, conv*.txt and grouped*.txt as sweeps of their
// subcommands, the rest as `tessel gemm`'s.
TEST_F(CliGemm, BenchSuitesParse) {
  if (!cuda_build()) GTEST_SKIP() << "tessel was built without CUDA";
  std::filesystem::path const bench = std::filesystem::path(TESSEL_SOURCE_DIR) / "bench";
  int suites = 0;
  for (auto const& e : std::filesystem::directory_iterator(bench)) {
    if (e.path().extension() != ".txt" || e.path().filename() == "CMakeLists.txt") continue;
    ++suites;
    std::string const file = e.path().filename().string();
    char const* command = "gemm";
    for (char const* sub : {"attention", "conv", "grouped"})
      if (file.rfind(sub, 0) == 0) command = sub;
    CliRun r = run(std::string(command) + " --dry-run --sweep " + e.path().string());
    EXPECT_EQ(r.code, 0) << e.path() << ": " << r.err;
    EXPECT_GT(lines(r.out), 0) << e.path();
  }
  EXPECT_GT(suites, 0) << "no bench/*.txt suites";
  CliRun bad = run("gemm --dry-run --sweep /nonexistent/suite.txt");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
}

TEST_F(CliGemm, ListRuns) {
  CliRun r = run("list");
  if (r.code == 2) {  // a build without CUDA says so in one line
    EXPECT_EQ(lines(r.err), 1) << r.err;
    return;
  }
  EXPECT_EQ(r.code, 0) << r.err;
  // Every entry opens a line with its name: the SIMT entries are there (the 256-thread
  // simt_128x128x8 is not: simt_128x128x8_128t replaced it), and the heuristic's rule names the one
  // it runs for fp32 problems that fill the GPU.
  for (char const* name : {"\nsimt_128x128x8_128t\n", "\nsimt_64x64x8\n", "\nsimt_cp_async_128x128x8\n"})
    EXPECT_NE(r.out.find(name), std::string::npos) << name << " missing from:\n" << r.out;
  EXPECT_EQ(r.out.find("\nsimt_128x128x8\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("else simt_128x128x8_128t."), std::string::npos) << r.out;
}
