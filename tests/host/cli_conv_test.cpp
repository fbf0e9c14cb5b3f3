// `tessel conv` as a user meets it: bad arguments give one line naming the flag (or the host API's
// reason, which names the argument) and exit 2, before any GPU work; without a GPU one clear line
// and exit 2; --dry-run shows the problems, the kernel each runs and their FLOPs without a GPU, and
// the benchmark suite bench/conv.txt parses.
#include "host/cli_run.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <unistd.h>

namespace {

using tessel::test::CliRun;
using tessel::test::lines;
using tessel::test::tessel_binary;

CliRun run(std::string const& args) { return tessel::test::run_tessel(args); }

class CliConv : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(tessel_binary())) GTEST_SKIP() << "the tessel CLI is not built";
    // A build without CUDA (the host-only preset) has a `tessel conv` that only says so.
    if (run("conv --help").code != 0) GTEST_SKIP() << "tessel was built without CUDA";
  }
};

void expect_usage_errors(std::initializer_list<tessel::test::CliUsageCase> cases) {
  tessel::test::expect_cli_usage_errors("tessel conv: ", cases);
}

// The problem line --dry-run prints for args.
std::string dry_run(std::string const& args) {
  CliRun const r = run("conv --dry-run " + args);
  EXPECT_EQ(r.code, 0) << args << ": " << r.err;
  return r.out;
}

}  // namespace

TEST_F(CliConv, BadFlagsNameTheFlag) {
  expect_usage_errors({
      {"conv --bogus", {"--bogus"}},
      {"conv stray", {"stray"}},
      {"conv --n", {"--n"}},
      {"conv --bias=1", {"--bias"}},
      {"conv --op xgrad", {"--op"}},
      {"conv --n -1", {"--n"}},
      {"conv --h 0", {"--h"}},
      {"conv --c x", {"--c"}},
      {"conv --r 0", {"--r"}},
      {"conv --t 0", {"--t"}},
      {"conv --pad -1", {"--pad"}},
      {"conv --pad 1,2,3", {"--pad"}},
      {"conv --d 4 --pad 1,2", {"--pad"}},
      {"conv --pad 1,x", {"--pad"}},
      {"conv --stride 0", {"--stride"}},
      {"conv --dilation 2,0", {"--dilation"}},
      {"conv --groups 0", {"--groups"}},
      {"conv --dtype fp32", {"--dtype"}},
      {"conv --dtype e4m3", {"--dtype"}},
      {"conv --act tanh", {"--act"}},
      {"conv --alpha x", {"--alpha"}},
      {"conv --beta y", {"--beta"}},
      {"conv --op wgrad --bias", {"--bias"}},
      {"conv --compare cublas", {"--compare"}},
      {"conv --iters 0", {"--iters"}},
      {"conv --kernel no_such_kernel", {"--kernel"}},
      {"conv --tune lean=2", {"--tune lean"}},
      {"conv --tune splits=2", {"--tune"}},
      {"conv --tune lean", {"--tune"}},
      {"conv --op wgrad --tune slices=0", {"--tune slices"}},
      {"conv --op wgrad --tune slices=5000", {"--tune slices"}},
      {"conv --op wgrad --tune lean=0,slices=x", {"--tune slices"}},
      {"conv --op fprop --tune slices=4", {"--tune slices", "wgrad"}},
      {"conv --op wgrad --tune slices=4,", {"--tune"}},
      {"conv --sweep /nonexistent/suite.txt", {"--sweep"}},
  });
}

// Rules of the problem itself come from the host API's validator (conv_validate.hpp), whose
// reason names the argument.
TEST_F(CliConv, ProblemRulesGiveTheValidatorsReason) {
  expect_usage_errors({
      {"conv --c 6 --k 9 --groups 4", {"c: 6 is not divisible by groups 4"}},
      {"conv --c 8 --k 6 --groups 4", {"k: 6 is not divisible by groups 4"}},
      {"conv --h 8 --w 8 --r 11", {"r: ", "would be empty"}},
      {"conv --h 8 --w 8 --s 3 --dilation 1,5", {"s: "}},
      {"conv --d 4 --t 7", {"t: "}},
  });
}

// A kernel from the registry that does not run the problem is refused with the one that does.
TEST_F(CliConv, NamedKernelMustRunTheProblem) {
  std::string const picked_line = dry_run("--n 1 --h 8 --w 8 --c 16 --k 16");
  std::size_t const at = picked_line.find(" kernel ") + 8;
  std::string const picked = picked_line.substr(at, picked_line.find(' ', at) - at);
  EXPECT_NE(dry_run("--n 1 --h 8 --w 8 --c 16 --k 16 --kernel " + picked).find("kernel " + picked), std::string::npos);
  CliRun const list = run("list");
  ASSERT_EQ(list.code, 0) << list.err;
  std::size_t const conv_at = list.out.find("Convolution kernels");
  ASSERT_NE(conv_at, std::string::npos) << list.out;
  // Another compiled conv kernel: each entry opens a line "sm80_conv_...".
  std::size_t pos = conv_at;
  std::string other;
  while ((pos = list.out.find("\nsm80_conv_", pos)) != std::string::npos) {
    std::string const name = list.out.substr(pos + 1, list.out.find('\n', pos + 1) - pos - 1);
    if (name != picked) {
      other = name;
      break;
    }
    ++pos;
  }
  if (other.empty()) GTEST_SKIP() << "only one convolution kernel is compiled";
  expect_usage_errors({{("conv --n 1 --h 8 --w 8 --c 16 --k 16 --kernel " + other).c_str(), {"kernel: "}}});
}

TEST_F(CliConv, HelpExitsZeroAndNamesTheMethod) {
  CliRun const r = run("conv --help");
  EXPECT_EQ(r.code, 0);
  for (char const* w : {"--op", "--sweep", "--dry-run", "--dilation", "cudnnFind", "2*n*z*p*q*k*t*r*s*c/groups"})
    EXPECT_NE(r.out.find(w), std::string::npos) << w << " missing from:\n" << r.out;
}

TEST_F(CliConv, WithoutAGpuOneLineAndExit2) {
  CliRun const r = run("conv --n 1 --h 8 --w 8 --c 8 --k 8 --iters 1 --warmup 0");
  if (r.code == 0) GTEST_SKIP() << "a GPU is present (the run succeeded)";
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("tessel conv needs a GPU"), std::string::npos) << r.err;
}

// FLOPs are 2 * n*z*p*q * k * t*r*s * c/groups for every pass; the problem text shows only what
// differs from the defaults.
TEST_F(CliConv, DryRunShowsProblemsAndFlops) {
  struct Case {
    char const* args;
    char const* expect;
  };
  for (Case const c : {
           // 2 * (2*8*8) * 8 * 9 * 4
           Case{"--n 2 --h 8 --w 8 --c 4 --k 8 --pad 1", "n2 8x8 c4->k8 3x3 pad1 fprop bf16 - kernel "},
           Case{"--n 2 --h 8 --w 8 --c 4 --k 8 --pad 1", " flops 73728 gemm 128x8x36 groups 1 "},
           // dgrad counts the same FLOPs; its implicit GEMM is (n*h*w, c, k*r*s)
           Case{"--op dgrad --n 2 --h 8 --w 8 --c 4 --k 8 --pad 1 --dtype fp16", "dgrad fp16 - kernel "},
           Case{"--op dgrad --n 2 --h 8 --w 8 --c 4 --k 8 --pad 1", " flops 73728 gemm 128x4x72 "},
           // 7x7 stride 2 pad 3 on 16x16: 8x8 outputs; 2 * 64 * 64 * 49 * 3
           Case{"--n 1 --h 16 --w 16 --c 3 --k 64 --r 7 --s 7 --stride 2 --pad 3", "n1 16x16 c3->k64 7x7 pad3 stride2 fprop"},
           Case{"--n 1 --h 16 --w 16 --c 3 --k 64 --r 7 --s 7 --stride 2 --pad 3", " flops 1204224 "},
           // per-dimension values; groups; the epilogue
           Case{"--n 1 --h 9 --w 9 --c 8 --k 8 --stride 2,1 --dilation 1,2 --groups 8 --bias --act relu",
                "n1 9x9 c8->k8 3x3 stride2,1 dil1,2 g8 fprop bf16 bias,relu kernel "},
           // 3-D: --d or --t; pad d,h,w; 2 * 4*8*8 * 16 * 27 * 8
           Case{"--n 1 --d 4 --h 8 --w 8 --c 8 --k 16 --t 3 --pad 1", "n1 4x8x8 c8->k16 3x3x3 pad1 fprop"},
           Case{"--n 1 --d 4 --h 8 --w 8 --c 8 --k 16 --t 3 --pad 1", " flops 1769472 "},
           Case{"--n 1 --d 4 --h 8 --w 8 --c 8 --k 8 --t 1 --r 1 --s 1 --pad 0,1,1", "c8->k8 1x1x1 pad0,1,1 "},
           // empty problems run nothing, or the epilogue alone
           Case{"--n 0 --h 8 --w 8", "kernel none "},
           Case{"--c 0 --h 8 --w 8 --bias", "kernel epilogue-only "},
           // --tune's settings off their defaults close the line
           Case{"--op wgrad --n 2 --h 8 --w 8 --tune lean=0,slices=3", " iters 30 tune lean=0,slices=3\n"},
       }) {
    std::string const out = dry_run(c.args);
    EXPECT_NE(out.find(c.expect), std::string::npos) << c.args << ": " << out;
  }
}

TEST_F(CliConv, BenchSuiteParses) {
  std::string const suite = std::string(TESSEL_SOURCE_DIR) + "/bench/conv.txt";
  std::ifstream f(suite);
  ASSERT_TRUE(f.good()) << suite;
  int problems = 0;
  for (std::string line; std::getline(f, line);) problems += line.rfind("--", 0) == 0;
  CliRun const r = run("conv --dry-run --sweep " + suite);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines(r.out), problems) << r.out;
  for (char const* w : {"n128 224x224 c3->k64 7x7 pad3 stride2 wgrad", "n64 57x57 c33->k65 3x3 pad1 dgrad",
                        "n4 16x56x56 c64->k64 3x3x3 pad1 fprop", "c1024->k1024 3x3 pad1 g1024 wgrad"})
    EXPECT_NE(r.out.find(w), std::string::npos) << w << " missing from:\n" << r.out;
}

TEST_F(CliConv, SweepLinesAreCheckedAndNamed) {
  std::string const path = std::filesystem::temp_directory_path().string() + "/cli_conv_test." +
                           std::to_string(getpid()) + ".txt";
  {
    std::ofstream f(path);
    f << "# two problems\n--op fprop --c 8\n\n--op wgrad --k 16\n";
  }
  CliRun r = run("conv --dry-run --n 1 --h 8 --w 8 --sweep " + path);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines(r.out), 2) << r.out;
  {
    std::ofstream f(path);
    f << "--c 8\n--c 6 --k 9 --groups 4\n";
  }
  r = run("conv --dry-run --sweep " + path);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(path + ":2: "), std::string::npos) << r.err;
  std::filesystem::remove(path);
}

TEST_F(CliConv, ListNamesTheConvolutionKernels) {
  CliRun const r = run("list");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Convolution kernels"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nsm80_conv_"), std::string::npos) << r.out;
}
