// Which build of an sm_90a entry runs a call (gemm/device/sm90_build_choice.hpp): checked against
// the rule it stands for -- a lean build only for its whole case, each condition of that case
// broken on its own sends the call to the general build -- and on the calls the GPU tests and the
// benchmarks rely on (the plain and fused 4096^3 calls, C by TMA, the convolutions' transposed D).
// No GPU.
#include <tessel/gemm/device/sm90_build_choice.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

using namespace tessel;
using kernel::Sm90Build;

namespace {

constexpr Sm90EntryBuilds kBoth{/*lean=*/true, /*lean_fused=*/true, /*lean_mn=*/false, /*writes_transposed=*/false};
constexpr Sm90EntryBuilds kAll{/*lean=*/true, /*lean_fused=*/true, /*lean_mn=*/true, /*writes_transposed=*/false};

// Each way a call can leave the lean case, by name, applied to a call that is in it.
std::vector<std::pair<std::string, std::function<void(Sm90BuildCase&)>>> breakers() {
  return {{"the 64-bit unit path", [](Sm90BuildCase& c) { c.compact_units = false; }},
          {"two K slices", [](Sm90BuildCase& c) { c.splits = 2; }},
          {"Stream-K", [](Sm90BuildCase& c) { c.stream_k = true; }},
          {"D not by TMA", [](Sm90BuildCase& c) { c.tma_store = false; }},
          {"the copy warps' rows", [](Sm90BuildCase& c) { c.staged_rows = true; }},
          {"D transposed by an entry that does not write it so", [](Sm90BuildCase& c) { c.d_transposed = true; }},
          {"C from global memory", [](Sm90BuildCase& c) { c.reads_c = true; }},
          {"A MN-major", [](Sm90BuildCase& c) { c.a_mn_major = true; }},
          {"B MN-major", [](Sm90BuildCase& c) { c.b_mn_major = true; }},
          {"an fp32 D or one of another type", [](Sm90BuildCase& c) { c.d_matches_inputs = false; }},
          {"lean builds turned off", [](Sm90BuildCase& c) { c.lean_builds = false; }}};
}

}  // namespace

TEST(Sm90BuildChoice, TheLeanCaseRunsTheLeanBuilds) {
  Sm90BuildCase plain;
  EXPECT_EQ(sm90_build_choice(plain, kBoth), Sm90Build::lean);
  Sm90BuildCase fused;
  fused.fused = true;
  EXPECT_EQ(sm90_build_choice(fused, kBoth), Sm90Build::lean_fused);
}

TEST(Sm90BuildChoice, EachConditionBrokenAloneRunsTheGeneralBuild) {
  for (bool fused : {false, true}) {
    for (auto const& [what, breaks] : breakers()) {
      Sm90BuildCase c;
      c.fused = fused;
      breaks(c);
      EXPECT_EQ(sm90_build_choice(c, kBoth), Sm90Build::general) << what << (fused ? " (fused)" : "");
    }
  }
}

TEST(Sm90BuildChoice, AnEntryWithoutTheBuildRunsItsGeneralOne) {
  Sm90BuildCase plain, fused;
  fused.fused = true;
  // No lean twin at all (fp8, tf32, the 64- and 16-wide tiles, the weight gradient's convolutions).
  EXPECT_EQ(sm90_build_choice(plain, Sm90EntryBuilds{}), Sm90Build::general);
  EXPECT_EQ(sm90_build_choice(fused, Sm90EntryBuilds{}), Sm90Build::general);
  // A plain lean twin only: a fused call runs the general build, not the plain lean one.
  Sm90EntryBuilds const lean_only{true, false, false, false};
  EXPECT_EQ(sm90_build_choice(plain, lean_only), Sm90Build::lean);
  EXPECT_EQ(sm90_build_choice(fused, lean_only), Sm90Build::general);
}

TEST(Sm90BuildChoice, CByTmaAndATransposedDStayLean) {
  // beta != 0 with C loaded by TMA (the _tmac entries' lean builds).
  Sm90BuildCase c;
  c.reads_c = true, c.c_by_tma = true;
  EXPECT_EQ(sm90_build_choice(c, Sm90EntryBuilds{true, false, false, false}), Sm90Build::lean);
  // C by TMA with a fused epilogue: the _tmac entries carry no lean fused build.
  c.fused = true;
  EXPECT_EQ(sm90_build_choice(c, Sm90EntryBuilds{true, false, false, false}), Sm90Build::general);
  // A transposed D on an entry that writes D transposed (the convolutions with the pixels as B).
  Sm90BuildCase t;
  t.d_transposed = true;
  EXPECT_EQ(sm90_build_choice(t, Sm90EntryBuilds{true, false, false, true}), Sm90Build::lean);
  // C "by TMA" without C read cannot happen; it is not the lean case either.
  Sm90BuildCase odd;
  odd.c_by_tma = true;
  EXPECT_EQ(sm90_build_choice(odd, kBoth), Sm90Build::general);
}

TEST(Sm90BuildChoice, MnMajorOperandsRunTheLeanMnBuildWhereTheEntryCarriesIt) {
  for (auto const& [a_mn, b_mn] : {std::pair{true, false}, std::pair{false, true}, std::pair{true, true}}) {
    Sm90BuildCase c;
    c.a_mn_major = a_mn, c.b_mn_major = b_mn;
    EXPECT_EQ(sm90_build_choice(c, kAll), Sm90Build::lean_mn) << a_mn << b_mn;
    EXPECT_EQ(sm90_build_choice(c, kBoth), Sm90Build::general) << a_mn << b_mn;  // no lean_mn build
    // Fused with an MN-major operand: no lean build has both.
    c.fused = true;
    EXPECT_EQ(sm90_build_choice(c, kAll), Sm90Build::general) << a_mn << b_mn;
  }
  // K-major operands never take the MN-major build, fused or not.
  Sm90BuildCase plain, fused;
  fused.fused = true;
  EXPECT_EQ(sm90_build_choice(plain, kAll), Sm90Build::lean);
  EXPECT_EQ(sm90_build_choice(fused, kAll), Sm90Build::lean_fused);
  // The data gradient's convolution with the pixels as B: the filters are A, MN-major, and D is
  // written transposed -- lean_mn on an entry that writes D so, else the general build.
  Sm90BuildCase dgrad;
  dgrad.a_mn_major = true, dgrad.d_transposed = true;
  EXPECT_EQ(sm90_build_choice(dgrad, Sm90EntryBuilds{true, false, true, true}), Sm90Build::lean_mn);
  EXPECT_EQ(sm90_build_choice(dgrad, Sm90EntryBuilds{true, false, true, false}), Sm90Build::general);
  // Every other condition of the lean case, broken alone, sends an MN-major call to the general build.
  for (auto const& [what, breaks] : breakers()) {
    if (what == "A MN-major" || what == "B MN-major") continue;  // (the case itself here)
    Sm90BuildCase c;
    c.b_mn_major = true;
    breaks(c);
    EXPECT_EQ(sm90_build_choice(c, kAll), Sm90Build::general) << what;
  }
}
