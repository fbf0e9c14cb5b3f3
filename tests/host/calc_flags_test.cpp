// The calculator decides on values, never on static flags: the same values written static,
// run-time or mixed give the same answer up to the `_` marks (or are refused alike). Static
// inputs give all-static results (CuTe's static text); run-time values stay run-time, and the
// only static leaves in a result from all-run-time inputs are the constants _0 and _1 that the
// constructions themselves introduce (compact strides, filtered modes, complement's first stride).
#include "calc/expr.hpp"
#include "oracle/calc_reference.hpp"
#include "oracle/random_layouts.hpp"

#include <gtest/gtest.h>

#include <functional>

using namespace tessel;

namespace {

struct Op {
  char const* name;
  std::function<std::vector<calc::Value>(oracle::Rng&)> make;
};

std::vector<Op> ops() {
  oracle::LayoutShape s{};
  oracle::LayoutShape small = s;
  small.max_rank = 2;
  small.max_leaves = 3;
  small.max_extent = 6;
  auto lay = [](oracle::Rng& r, oracle::LayoutShape const& o) -> calc::Value { return oracle::random_layout(r, o); };
  auto lay_tiler = [=](oracle::Rng& r) {
    calc::Layout a = oracle::random_layout(r, s);
    return std::vector<calc::Value>{a, oracle::random_tiler(r, small, calc::rank(a))};
  };
  return {
      {"coalesce", [=](oracle::Rng& r) { return std::vector<calc::Value>{lay(r, s)}; }},
      {"filter", [=](oracle::Rng& r) { return std::vector<calc::Value>{lay(r, s)}; }},
      {"size", [=](oracle::Rng& r) { return std::vector<calc::Value>{lay(r, s)}; }},
      {"cosize", [=](oracle::Rng& r) { return std::vector<calc::Value>{lay(r, s)}; }},
      {"right_inverse", [=](oracle::Rng& r) { return std::vector<calc::Value>{lay(r, s)}; }},
      {"left_inverse", [=](oracle::Rng& r) { return std::vector<calc::Value>{oracle::random_layout(r, s, oracle::Strides::nested)}; }},
      {"complement", [=](oracle::Rng& r) {
         return std::vector<calc::Value>{oracle::random_layout(r, s, oracle::Strides::nested),
                                         calc::IntTuple::leaf(calc::dynamic_int(r.uniform(1, 100)))};
       }},
      {"complement", [=](oracle::Rng& r) { return std::vector<calc::Value>{oracle::random_layout(r, s, oracle::Strides::nested)}; }},
      {"composition", [=](oracle::Rng& r) { return std::vector<calc::Value>{lay(r, s), lay(r, small)}; }},
      {"composition", lay_tiler},
      {"logical_divide", lay_tiler},
      {"zipped_divide", lay_tiler},
      {"tiled_divide", lay_tiler},
      {"flat_divide", lay_tiler},
      {"logical_product", lay_tiler},
      {"zipped_product", lay_tiler},
      {"blocked_product", [=](oracle::Rng& r) { return std::vector<calc::Value>{lay(r, small), lay(r, small)}; }},
      {"raked_product", [=](oracle::Rng& r) { return std::vector<calc::Value>{lay(r, small), lay(r, small)}; }},
      {"eval", [=](oracle::Rng& r) {
         calc::Layout l = oracle::random_layout(r, s);
         return std::vector<calc::Value>{l, calc::IntTuple::leaf(calc::dynamic_int(r.uniform(0, calc::size(l).value - 1)))};
       }},
  };
}

// The answer as text, or "refused".
std::string run(char const* op, std::vector<calc::Value> const& args) {
  try {
    return calc::to_string(calc::apply_op(op, args));
  } catch (AlgebraError const&) {
    return "refused";
  }
}

std::vector<calc::Value> mixed(std::vector<calc::Value> args, oracle::Rng& rng) {
  for (auto& a : args) a = oracle::with_flags(a, rng.chance(50));
  return args;
}

}  // namespace

TEST(CalcFlags, DecisionsAreTakenOnValuesNotFlags) {
  oracle::Rng rng(53);
  for (auto const& op : ops()) {
    int answered = 0;
    for (int trial = 0; trial < 600; ++trial) {
      auto args = op.make(rng);
      std::vector<calc::Value> st, dy;
      for (auto const& a : args) {
        st.push_back(oracle::with_flags(a, true));
        dy.push_back(oracle::with_flags(a, false));
      }
      std::string const s = run(op.name, st);
      std::string const d = run(op.name, dy);
      std::string const m = run(op.name, mixed(args, rng));
      SCOPED_TRACE(std::string(op.name) + " on " + calc::to_string(st[0]) + (st.size() > 1 ? " | " + calc::to_string(st[1]) : ""));
      ASSERT_EQ(oracle::strip_static(s), oracle::strip_static(d));
      ASSERT_EQ(oracle::strip_static(s), oracle::strip_static(m));
      if (s == "refused") continue;
      ++answered;
      calc::Value rs = calc::apply_op(op.name, st);
      for (auto x : oracle::all_leaves(rs)) ASSERT_TRUE(x.is_static) << "static inputs gave " << s;
      calc::Value rd = calc::apply_op(op.name, dy);
      for (auto x : oracle::all_leaves(rd)) {
        if (x.is_static) {
          ASSERT_TRUE(x.value == 0 || x.value == 1) << "run-time inputs gave the static " << d;
        }
      }
    }
    EXPECT_GT(answered, 100) << op.name;
  }
}
