// `tessel attention` as a user meets it: bad arguments give one line naming the flag (or the
// host API's reason) and exit 2, before any GPU work; without a GPU (or without CUDA) one clear
// line and exit 2; --dry-run shows the problems and their exact FLOP counts without a GPU, the
// backward's (--backward) 2.5 times the forward's.
#include "host/cli_run.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using tessel::test::CliRun;
using tessel::test::lines;
using tessel::test::tessel_binary;

CliRun run(std::string const& args) { return tessel::test::run_tessel(args); }

std::string temp_stem() {  // one per process and call: ctest runs this file's tests in parallel
  static int calls = 0;
  return std::filesystem::temp_directory_path().string() + "/cli_attention_test." + std::to_string(getpid()) + "." +
         std::to_string(calls++);
}

class CliAttention : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(tessel_binary())) GTEST_SKIP() << "the tessel CLI is not built";
    // A build without CUDA (the host-only preset) has a `tessel attention` that only says so.
    if (run("attention --help").code != 0) GTEST_SKIP() << "tessel was built without CUDA";
  }
};

// A dry run names the kernel the current GPU would run: on an H100/H200 the sm_90a one where it
// applies, else (and without a GPU) the sm_80 one. The checks below are about the counts, so they
// read an sm_90a name as its sm_80 twin.
std::string as_sm80(std::string out) {
  constexpr std::string_view kSuffix = "_deterministic";  // the sm_90a deterministic kernels' (sm_80's has none)
  for (std::size_t at = out.find("kernel sm90_"); at != std::string::npos; at = out.find("kernel sm90_", at)) {
    out.replace(at + 9, 2, "80");
    std::size_t const end = out.find(' ', at + 7);
    std::size_t const suffix = out.rfind(kSuffix, end);
    if (suffix != std::string::npos && suffix > at && suffix + kSuffix.size() == end) out.erase(suffix, kSuffix.size());
  }
  return out;
}

void expect_usage_errors(std::initializer_list<tessel::test::CliUsageCase> cases) {
  tessel::test::expect_cli_usage_errors("tessel attention: ", cases);
}

}  // namespace

TEST_F(CliAttention, BadFlagsNameTheFlag) {
  expect_usage_errors({
      {"attention --bogus", {"--bogus"}},
      {"attention stray", {"stray"}},
      {"attention --heads", {"--heads"}},
      {"attention --causal=1", {"--causal"}},
      {"attention --seqlen-q -1", {"--seqlen-q"}},
      {"attention --seqlen-k x", {"--seqlen-k"}},
      {"attention --dtype fp32", {"--dtype"}},
      {"attention --dtype e4m3", {"--dtype"}},
      {"attention --window 3", {"--window"}},
      {"attention --window 3,x", {"--window"}},
      {"attention --align middle", {"--align"}},
      {"attention --softcap x", {"--softcap"}},
      {"attention --iters 0", {"--iters"}},
      {"attention --kernel no_such_kernel", {"--kernel"}},
      {"attention --kernel sm80_attention_bf16_d64 --head-dim 128", {"kernel", "sm80_attention_bf16_d64"}},
      {"attention --varlen 0", {"--varlen"}},
      {"attention --varlen 8 --batch 4", {"--batch"}},
      {"attention --sweep /nonexistent/suite.txt", {"--sweep"}},
      {"attention --deterministic", {"--deterministic"}},
      {"attention --backward=1", {"--backward"}},
      {"attention --backward --kernel sm80_attention_bf16_d128", {"--kernel"}},
      {"attention --backward --kernel sm80_attention_bwd_bf16_d64 --head-dim 128", {"kernel", "sm80_attention_bwd_bf16_d64"}},
      {"attention --kernel sm80_attention_bwd_bf16_d128", {"--kernel"}},
  });
}

TEST_F(CliAttention, BackwardProblemRulesGiveTheValidatorsReason) {
  expect_usage_errors({
      {"attention --backward --head-dim 80", {"head_dim", "--head-dim"}},
      {"attention --backward --heads 32 --kv-heads 3", {"kv_heads", "--kv-heads"}},
      {"attention --backward --causal --window 4,2", {"window_right", "--window"}},
      {"attention --backward --dtype fp32", {"--dtype"}},
  });
}

// Rules of the problem itself come from the host API's validator (attention_validate.hpp):
// the reason names the argument in the API's or the CLI's spelling.
TEST_F(CliAttention, ProblemRulesGiveTheValidatorsReason) {
  expect_usage_errors({
      {"attention --head-dim 80", {"head_dim", "--head-dim"}},
      {"attention --head-dim 128 --head-dim-v 64", {"head_dim", "--head-dim"}},
      {"attention --heads 32 --kv-heads 3", {"kv_heads", "--kv-heads"}},
      {"attention --softcap -1", {"softcap"}},
  });
}

TEST_F(CliAttention, HelpExitsZeroAndNamesTheComparison) {
  CliRun const r = run("attention --help");
  EXPECT_EQ(r.code, 0);
  for (char const* w : {"--varlen", "--window", "--sweep", "--backward", "--deterministic", "python -m tessel.bench attention"})
    EXPECT_NE(r.out.find(w), std::string::npos) << w << " missing from:\n" << r.out;
}

TEST_F(CliAttention, WithoutAGpuOneLineAndExit2) {
  CliRun const r = run("attention --batch 1 --heads 2 --seqlen-q 64 --head-dim 64 --iters 1 --warmup 0");
  if (r.code == 0) GTEST_SKIP() << "a GPU is present (the run succeeded)";
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("no CUDA device"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tessel attention needs a GPU"), std::string::npos) << r.err;
}

// FLOPs are 2 * (D + D_v) per kept (query, key) pair per query head, counted exactly.
TEST_F(CliAttention, DryRunCountsTheKeptPairs) {
  struct Case {
    char const* args;
    char const* expect;
  };
  for (Case const c : {
           // 2 * 4 * 4 pairs * 2 heads * 2 * (64 + 64) FLOPs
           Case{"--batch 2 --heads 2 --seqlen-q 4 --head-dim 64", "b2 h2 s4 d64 - bf16 kernel sm80_attention_bf16_d64 flops 16384 "},
           // causal 4x4 keeps 4+3+2+1 = 10 pairs
           Case{"--batch 1 --heads 1 --seqlen-q 4 --head-dim 64 --causal", "causal bf16 kernel sm80_attention_bf16_d64 flops 2560 "},
           // bottom-right: query i of 2 sits at key 2 + i of 4; causal keeps 3 + 4 = 7 pairs
           Case{"--batch 1 --heads 1 --seqlen-q 2 --seqlen-k 4 --head-dim 64 --causal", "flops 1792 "},
           // top-left: query i at key i; causal keeps 1 + 2 = 3 pairs
           Case{"--batch 1 --heads 1 --seqlen-q 2 --seqlen-k 4 --head-dim 64 --causal --align top-left",
                "causal,top-left bf16 kernel sm80_attention_bf16_d64 flops 768 "},
           // window 1,0 over 4x4 keeps 1 + 2 + 2 + 2 = 7 pairs; D = 192, D_v = 128: 2 * 320 each
           Case{"--batch 1 --heads 1 --seqlen-q 4 --head-dim 192 --head-dim-v 128 --window 1,0 --dtype fp16",
                "d192/128 window=1,0 fp16 kernel sm80_attention_f16_d192x128 flops 4480 "},
       }) {
    CliRun const r = run(std::string("attention --dry-run ") + c.args);
    EXPECT_EQ(r.code, 0) << c.args << ": " << r.err;
    EXPECT_NE(as_sm80(r.out).find(c.expect), std::string::npos) << c.args << ": " << r.out;
  }
}

TEST_F(CliAttention, BackwardWithoutAGpuOneLineAndExit2) {
  CliRun const r = run("attention --backward --deterministic --batch 1 --heads 2 --seqlen-q 64 --head-dim 64 --iters 1 --warmup 0");
  if (r.code == 0) GTEST_SKIP() << "a GPU is present (the run succeeded)";
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("tessel attention needs a GPU"), std::string::npos) << r.err;
}

// The backward's FLOPs are 2.5x the forward's exact count (FlashAttention's convention), the
// deterministic mode's too; the kernel named is the backward registry's.
TEST_F(CliAttention, DryRunCountsTheBackwardAtTwoAndAHalfTimesTheForward) {
  struct Case {
    char const* args;
    char const* expect;
  };
  for (Case const c : {
           // the forward's 16384 FLOPs (DryRunCountsTheKeptPairs) x 2.5
           Case{"--batch 2 --heads 2 --seqlen-q 4 --head-dim 64 --backward",
                "b2 h2 s4 d64 - bf16 backward kernel sm80_attention_bwd_bf16_d64 flops 40960 "},
           // causal 4x4: 10 pairs, 2560 forward FLOPs
           Case{"--batch 1 --heads 1 --seqlen-q 4 --head-dim 64 --causal --backward --deterministic",
                "causal bf16 backward,deterministic kernel sm80_attention_bwd_bf16_d64 flops 6400 "},
           // window 1,0 over 4x4 at D 192, D_v 128: 4480 forward FLOPs
           Case{"--batch 1 --heads 1 --seqlen-q 4 --head-dim 192 --head-dim-v 128 --window 1,0 --dtype fp16 --backward",
                "d192/128 window=1,0 fp16 backward kernel sm80_attention_bwd_f16_d192x128 flops 11200 "},
       }) {
    CliRun const r = run(std::string("attention --dry-run ") + c.args);
    EXPECT_EQ(r.code, 0) << c.args << ": " << r.err;
    EXPECT_NE(as_sm80(r.out).find(c.expect), std::string::npos) << c.args << ": " << r.out;
  }
}

TEST_F(CliAttention, VarlenLengthsAreFixedBySeed) {
  CliRun const a = run("attention --dry-run --varlen 8 --seqlen-q 256 --head-dim 64 --causal");
  CliRun const b = run("attention --dry-run --varlen 8 --seqlen-q 256 --head-dim 64 --causal");
  CliRun const c = run("attention --dry-run --varlen 8 --seqlen-q 256 --head-dim 64 --causal --seed 2");
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);
  EXPECT_EQ(a.out.rfind("varlen8 h32 s256 d64 causal ", 0), 0u) << a.out;
  // Self-attention lengths (S_q == S_k): total_q == total_k, each at most 8 * 256.
  long long tq = -1, tk = -2;
  std::sscanf(a.out.c_str() + a.out.find("total_q"), "total_q %lld total_k %lld", &tq, &tk);
  EXPECT_EQ(tq, tk) << a.out;
  EXPECT_GE(tq, 0);
  EXPECT_LE(tq, 8 * 256);
}

TEST_F(CliAttention, SweepLinesAreCheckedAndNamed) {
  std::string const path = temp_stem() + ".txt";
  {
    std::ofstream f(path);
    f << "# two problems\n--seqlen-q 128 --head-dim 64\n\n--seqlen-q 256 --causal\n";
  }
  CliRun r = run("attention --dry-run --batch 1 --sweep " + path);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines(r.out), 2) << r.out;
  {
    std::ofstream f(path);
    f << "--seqlen-q 128\n--head-dim 80\n";
  }
  r = run("attention --dry-run --sweep " + path);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(path + ":2: "), std::string::npos) << r.err;
  std::filesystem::remove(path);
}

TEST_F(CliAttention, SweepLinesMayMixForwardAndBackward) {
  std::string const path = temp_stem() + ".txt";
  {
    std::ofstream f(path);
    f << "--seqlen-q 128 --head-dim 64\n--seqlen-q 128 --head-dim 64 --backward --deterministic\n";
  }
  CliRun const r = run("attention --dry-run --batch 1 --sweep " + path);
  EXPECT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(lines(r.out), 2) << r.out;
  std::string const first = r.out.substr(0, r.out.find('\n')), second = r.out.substr(first.size() + 1);
  EXPECT_EQ(first.find("backward"), std::string::npos) << r.out;
  EXPECT_NE(as_sm80(second).find("backward,deterministic kernel sm80_attention_bwd_bf16_d64 "), std::string::npos) << r.out;
  std::filesystem::remove(path);
}

TEST_F(CliAttention, ListNamesTheAttentionKernels) {
  CliRun const r = run("list");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Attention kernels"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Attention backward kernels"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sm80_attention_bwd_"), std::string::npos) << r.out;
}
