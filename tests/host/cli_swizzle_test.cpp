// `tessel swizzle`, run as a user runs it: the built binary, its stdout, stderr and exit code.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

std::string slurp(fs::path const& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A scratch directory of this process, removed when the tests end.
fs::path scratch() {
  struct Dir {
    fs::path path = fs::temp_directory_path() / ("tessel_cli_swizzle_" + std::to_string(::getpid()));
    Dir() { fs::create_directories(path); }
    ~Dir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  };
  static Dir const dir;
  return dir.path;
}

// Runs `tessel swizzle ARGS` (ARGS is shell text) and captures everything.
Result run(std::string const& args) {
  fs::path const bin = fs::path(TESSEL_BINARY_DIR) / "tessel";
  if (!fs::exists(bin)) {
    ADD_FAILURE() << bin << " does not exist: build the tessel_cli target before this test";
    return {};
  }
  fs::path const dir = scratch();
  std::string cmd = "'";
  cmd += bin.string();
  cmd += "' swizzle ";
  cmd += args;
  cmd += " >'";
  cmd += (dir / "out").string();
  cmd += "' 2>'";
  cmd += (dir / "err").string();
  cmd += "'";
  int const status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(dir / "out");
  r.err = slurp(dir / "err");
  return r;
}

bool contains(std::string const& hay, std::string const& needle) { return hay.find(needle) != std::string::npos; }

long long count_of(std::string const& hay, std::string const& needle) {
  long long n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

TEST(CliSwizzle, IssueExamplePrintsGridAndMap) {
  Result const r = run("--kind identity --log-tile 1 --tiles 4x4");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(contains(r.out, "grid (8,2,1): 16 blocks, 16 tiles, 0 no-op blocks")) << r.out;
  // Block rows y = 0 and y = 1: the seed's N = 2 map.
  EXPECT_TRUE(contains(r.out, "    0  0,0  0,1  1,0  1,1  2,0  2,1  3,0  3,1\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "    1  0,2  0,3  1,2  1,3  2,2  2,3  3,2  3,3\n")) << r.out;
  // Tile grid view: tile (m, n) <- block (x, y).
  EXPECT_TRUE(contains(r.out, "    3  6,0  7,0  6,1  7,1\n")) << r.out;
}

TEST(CliSwizzle, SwizzleNPicksTheLogTileAndShowsNoOps) {
  Result const r = run("--kind identity --swizzle 8 --tiles 3x7");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "GemmIdentityThreadblockSwizzle<8>, log_tile 3")) << r.out;
  EXPECT_TRUE(contains(r.out, "grid (24,1,1): 24 blocks, 21 tiles, 3 no-op blocks")) << r.out;
  EXPECT_EQ(count_of(r.out, "    -"), 3) << r.out;
}

TEST(CliSwizzle, SvgDrawsOneCellPerTile) {
  fs::path const svg = scratch() / "map.svg";
  fs::remove(svg);
  Result const r = run("--kind identity --log-tile 1 --tiles 4x4 --svg '" + svg.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  std::string const text = slurp(svg);
  ASSERT_FALSE(text.empty()) << "no SVG written to " << svg;
  EXPECT_EQ(text.rfind("<svg ", 0), 0u);
  EXPECT_TRUE(contains(text, "</svg>"));
  EXPECT_EQ(count_of(text, "<rect x="), 16);  // one per tile (plus the untagged background)
  EXPECT_TRUE(contains(text, ">7,1</text>"));  // tile (3,3) <- block (7,1)
}

TEST(CliSwizzle, OtherKinds) {
  Result const h = run("--kind horizontal --tiles 2x3");
  ASSERT_EQ(h.code, 0) << h.err;
  EXPECT_TRUE(contains(h.out, "grid (3,2,1)")) << h.out;

  Result const b = run("--kind batched --tiles 2x2 --batch 3");
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_TRUE(contains(b.out, "grid (2,2,3)")) << b.out;

  Result const sk = run("--kind splitk --tiles 2x2 --split-k 3 --k-iters 10");
  ASSERT_EQ(sk.code, 0) << sk.err;
  EXPECT_TRUE(contains(sk.out, "slice 2: k-iterations [6,10)")) << sk.out;
  EXPECT_TRUE(contains(sk.out, "slice 2 runs the epilogue")) << sk.out;

  Result const skp = run("--kind splitk-parallel --problem 256x256x1000 --tile 128x128x64 --split-k 3");
  ASSERT_EQ(skp.code, 0) << skp.err;
  EXPECT_TRUE(contains(skp.out, "16 k-iterations per tile in 3 slices (parallel)")) << skp.out;
  EXPECT_TRUE(contains(skp.out, "sums slots 0..2 in order")) << skp.out;

  Result const p = run("--kind persistent --tiles 4x4 --sms 3 --raster n");
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_TRUE(contains(p.out, "grid (3,1,1)")) << p.out;
  EXPECT_TRUE(contains(p.out, "  CTA 0: (0,0) (0,3) (1,2) (2,1) (3,0) (3,3)\n")) << p.out;

  Result const s = run("--kind streamk --tiles 2x2 --k-iters 3 --sms 3 --raster n");
  ASSERT_EQ(s.code, 0) << s.err;
  EXPECT_TRUE(contains(s.out, "CTA 1 [4,8): tile 1 (0,1) k[1,3) partial->slot 1 | tile 2 (1,0) k[0,2) finishes, adds CTA 2"))
      << s.out;
  EXPECT_TRUE(contains(s.out, "tile 2: CTA 1 adds 2")) << s.out;

  fs::path const svg = scratch() / "streamk.svg";
  Result const s2 = run("--kind streamk --tiles 5x5 --k-iters 4 --sms 4 --decomposition hybrid --svg '" +
                        svg.string() + "'");
  ASSERT_EQ(s2.code, 0) << s2.err;
  EXPECT_TRUE(contains(s2.out, "5 stream-K tiles (20 iterations), 20 data-parallel tiles")) << s2.out;
  EXPECT_EQ(count_of(slurp(svg), "<rect x="), 25);

  // The split tail: 26 tiles on 8 CTAs, 24 of them data-parallel, tiles 24 and 25 in 4 K slices of
  // 9 k-iterations each ([0,2) [2,4) [4,6) [6,9)): CTA 1 stores slice 1 of tile 24 for CTA 0.
  Result const s3 = run("--kind streamk --tiles 2x13 --k-iters 9 --sms 8 --decomposition split-tail");
  ASSERT_EQ(s3.code, 0) << s3.err;
  EXPECT_TRUE(contains(s3.out, "decomposition split-tail: 2 stream-K tiles (18 iterations), 24 data-parallel tiles")) << s3.out;
  EXPECT_TRUE(contains(s3.out, "k[2,4) partial->slot 1")) << s3.out;
  EXPECT_TRUE(contains(s3.out, "k[6,9) partial->slot 7")) << s3.out;
}

TEST(CliSwizzle, LocalityFigure) {
  Result const r = run("--locality");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "-> 64x32 tiles, waves of 132 CTAs (16 waves)")) << r.out;
  EXPECT_TRUE(contains(r.out, "identity<1> (log_tile 0)")) << r.out;
  EXPECT_TRUE(contains(r.out, "67 67 67 67 67 67 67 67 67 67 67 67 67 67 67 66")) << r.out;
  EXPECT_TRUE(contains(r.out, "persistent along-N group 8 (heuristic raster)")) << r.out;
}

TEST(CliSwizzle, HelpExitsZero) {
  Result const r = run("--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(contains(r.out, "usage: tessel swizzle")) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(CliSwizzle, BadArgumentsGiveOneLineAndExit2) {
  std::vector<std::string> const bad = {
      "",                                              // no shape
      "--kind spiral --tiles 4x4",                     // unknown kind
      "--tiles 4",                                     // not a shape
      "--tiles 4x0",                                   // empty grid
      "--tiles axb",                                   // not numbers
      "--tiles 99999999999999999999x2",                // overflow
      "--tiles 4x4 --log-tile 9",                      // out of range
      "--tiles 4x4 --swizzle 2 --log-tile 1",          // conflicting
      "--tiles 4x4 --problem 64x64x64",                // conflicting
      "--tiles",                                       // missing value
      "--tiles 4x4 --tiles 4x4",                       // repeated
      "--tiles 4x4 --frobnicate",                      // unknown option
      "--tiles 4x4 stray",                             // stray argument
      "--kind identity --tiles 4x4 --sms 3",           // option of another kind
      "--kind persistent --tiles 4x4 --group 9",       // group out of 1..8
      "--kind persistent --tiles 4x4 --raster diagonal",
      "--kind streamk --tiles 4x4 --k-iters 0",
      "--kind streamk --tiles 4x4 --decomposition magic",
      "--tiles 4096x4096",                             // too many cells to draw
      "--locality --wave 0",
      "--locality --kind identity",
      "--locality --problem 8192x8192x8192 --tile 0x256x64",
  };
  for (auto const& args : bad) {
    Result const r = run(args);
    EXPECT_EQ(r.code, 2) << "args: " << args << "\nstderr: " << r.err;
    EXPECT_EQ(r.out, "") << "args: " << args;
    ASSERT_FALSE(r.err.empty()) << "args: " << args;
    EXPECT_EQ(count_of(r.err, "\n"), 1) << "args: " << args << "\nstderr: " << r.err;
    EXPECT_EQ(r.err.rfind("tessel swizzle: ", 0), 0u) << "args: " << args << "\nstderr: " << r.err;
  }
}

}  // namespace
