// `tessel layout` as a user meets it: the built binary is run with arguments (no shell). Results
// print on one stdout line; every malformed, inadmissible or oversized input gives exactly one
// line on stderr, nothing on stdout and exit status 2 -- never a crash, a hang or a stack overflow.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

std::string const binary = TESSEL_BINARY_DIR "/tessel";

struct Outcome {
  int status = -1;  // exit status, or 128 + signal
  std::string out, err;
};

std::string slurp(std::string const& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string temp_path(char const* tag) {
  return ::testing::TempDir() + "tessel_cli_layout_" + std::to_string(::getpid()) + "_" + tag;
}

Outcome tessel(std::vector<std::string> args) {
  args.insert(args.begin(), {binary, "layout"});
  std::string const out_path = temp_path("out"), err_path = temp_path("err");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid;
  Outcome r;
  if (posix_spawn(&pid, binary.c_str(), &fa, nullptr, argv.data(), environ) != 0) {
    posix_spawn_file_actions_destroy(&fa);
    r.err = "cannot run " + binary;
    return r;
  }
  posix_spawn_file_actions_destroy(&fa);
  int ws = 0;
  waitpid(pid, &ws, 0);
  r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return r;
}

std::size_t lines(std::string const& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// The contract for bad input: status 2, empty stdout, one stderr line starting "tessel layout: ".
void expect_one_line_error(std::vector<std::string> const& args, std::string const& contains) {
  Outcome r = tessel(args);
  std::string shown = args.empty() ? "" : args[0].substr(0, 80);
  EXPECT_EQ(r.status, 2) << shown << "\nstderr: " << r.err;
  EXPECT_EQ(r.out, "") << shown;
  EXPECT_EQ(lines(r.err), 1u) << shown << "\nstderr: " << r.err;
  EXPECT_EQ(r.err.rfind("tessel layout: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(contains), std::string::npos) << shown << "\nstderr: " << r.err;
}

class CliLayout : public ::testing::Test {
 protected:
  void SetUp() override {
    struct stat st;
    if (::stat(binary.c_str(), &st) != 0) GTEST_SKIP() << "the tessel binary is not built at " << binary;
  }
};

}  // namespace

TEST_F(CliLayout, PrintsTheResultOnOneLine) {
  Outcome r = tessel({"composition((4,2):(1,4), (2,2):(2,1))"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "(2,2):(2,1)\n");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(tessel({"complement(4:2, 24)"}).out, "(2,3):(_1,8)\n");
  EXPECT_EQ(tessel({"logical_divide((4,2,3):(2,1,8), 4:2)"}).out, "((2,2),(2,3)):((4,1),(2,8))\n");
  EXPECT_EQ(tessel({"composition((_6,_2):(_8,_2), (_4,_3):(_3,_1))"}).out, "((_2,_2),_3):((_24,_2),_8)\n");
  EXPECT_EQ(tessel({"size((_4,_4,(_2,_2)):(_96,_6,(_1,_48)))"}).out, "_64\n");
  // An unquoted expression split by the shell is joined back.
  EXPECT_EQ(tessel({"composition((4,2):(1,4),", "(2,2):(2,1))"}).out, "(2,2):(2,1)\n");
}

TEST_F(CliLayout, GridPrintsCuTesTable) {
  Outcome r = tessel({"--grid", "(2,3):(1,2)"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out,
            "(2,3):(1,2)\n"
            "(2,3):(1,2)\n"
            "      0   1   2 \n"
            "    +---+---+---+\n"
            " 0  | 0 | 2 | 4 |\n"
            "    +---+---+---+\n"
            " 1  | 1 | 3 | 5 |\n"
            "    +---+---+---+\n");
  Outcome s = tessel({"composition(Sw<3,0,3>, (_8,_8):(_8,_1))", "--grid"});
  EXPECT_EQ(s.status, 0);
  EXPECT_NE(s.out.find(" 1  |  9 |  8 | 11 | 10 | 13 | 12 | 15 | 14 |\n"), std::string::npos) << s.out;
}

TEST_F(CliLayout, SvgWritesAFile) {
  std::string const path = temp_path("grid.svg");
  Outcome r = tessel({"(4,8):(8,1)", "--svg", path});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "(4,8):(8,1)\n");
  std::string svg = slurp(path);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  std::size_t cells = 0;
  for (std::size_t k = svg.find("class=\"cell\""); k != std::string::npos; k = svg.find("class=\"cell\"", k + 1)) ++cells;
  EXPECT_EQ(cells, 32u);
  std::remove(path.c_str());
}

TEST_F(CliLayout, HelpExitsZero) {
  Outcome r = tessel({"--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("usage: tessel layout"), std::string::npos);
  EXPECT_NE(r.out.find("logical_divide"), std::string::npos);
}

TEST_F(CliLayout, MalformedInputIsOneLineAndStatusTwo) {
  expect_one_line_error({"(1,2"}, "expected ',' or ')' to close the '(' at column 1, found end of input at column 5");
  expect_one_line_error({"((1,2)"}, "at column 7");
  expect_one_line_error({"(1,2))"}, "has no matching '('");
  expect_one_line_error({"(4,2):(1)"}, "must have the same profile");
  expect_one_line_error({"foo((4,2):(1,4))"}, "unknown operation 'foo'");
  expect_one_line_error({"composition(4:1)"}, "composition: expects 2 arguments, got 1");
  expect_one_line_error({"99999999999999999999999"}, "does not fit in 64 bits");
  expect_one_line_error({"(1,@)"}, "unexpected character '@' at column 4");
  expect_one_line_error({""}, "expected a layout");
  expect_one_line_error({}, "missing the expression");
  expect_one_line_error({"8:1", "--frobnicate"}, "unknown option '--frobnicate'");
  expect_one_line_error({"8:1", "--svg"}, "--svg needs a file name");
}

TEST_F(CliLayout, DeepNestingIsRefused) {
  expect_one_line_error({std::string(10000, '(')}, "nesting deeper than 64 levels");
  expect_one_line_error({std::string(10000, '(') + "1" + std::string(10000, ')')}, "nesting deeper than 64 levels");
  std::string calls;
  for (int i = 0; i < 3000; ++i) calls += "coalesce(";
  expect_one_line_error({calls + "8:1" + std::string(3000, ')')}, "nesting deeper than 64 levels");
}

TEST_F(CliLayout, HugeValuesAreRefused) {
  expect_one_line_error({"size((4294967296,4294967296,4))"}, "integer overflow");
  expect_one_line_error({"--grid", "(100000,100000):(1,100000)"}, "the limit is 65536");
  expect_one_line_error({"composition((3,1099511627776):(1,4), 1099511627776:2)"}, "limit");
}

TEST_F(CliLayout, InadmissibleAlgebraIsRefused) {
  // CuTe returns (8,1):(1,8) for the first with run-time ints (a layout of size 8).
  expect_one_line_error({"composition((4,3):(1,5), 6:1)"}, "composition: 6:1 walks across the modes of (4,3):(1,5) unevenly");
  expect_one_line_error({"complement((2,2):(2,3))"}, "complement: ");
  expect_one_line_error({"left_inverse((4,2):(1,2))"}, "left_inverse: (4,2):(1,2) is not injective");
  expect_one_line_error({"Sw<3,3,2>"}, "|S| must be >= B");
  expect_one_line_error({"logical_divide((4,4):(1,4), (_,_,_))"}, "has more modes");
}

TEST_F(CliLayout, GridAndSvgNeedALayoutOfRankAtMostTwo) {
  expect_one_line_error({"--grid", "(2,2,2):(1,2,4)"}, "needs a layout of rank 1 or 2");
  expect_one_line_error({"--svg", temp_path("r3.svg"), "(2,2,2):(1,2,4)"}, "needs a layout of rank 1 or 2");
  expect_one_line_error({"--grid", "size(8:1)"}, "--grid needs a layout; the expression gives the integer 8");
  expect_one_line_error({"--svg", "/nonexistent-dir/x.svg", "8:1"}, "cannot open '/nonexistent-dir/x.svg'");
}
