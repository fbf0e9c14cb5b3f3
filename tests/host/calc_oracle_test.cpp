// Every case of the CuTe oracle (tests/oracle/data/cases_public.txt) through the run-time
// calculator: all-static (S) cases must print CuTe's RESULT byte for byte; cases with run-time
// ints (D/M) must be the same function (same size, the same value at every index). The
// calculator simplifies run-time layouts, so D/M text may differ; the test reports how often.
#include "calc/expr.hpp"
#include "calc/parse.hpp"
#include "oracle/oracle_cases.hpp"

#include <gtest/gtest.h>

#include <map>

using namespace tessel;

namespace {

// "" when r and the expected text denote the same function (or integer), else the first difference.
std::string compare_function(calc::Value const& r, std::string const& expected_text) {
  calc::Value e = calc::parse_literal(expected_text);
  if (auto const* ei = std::get_if<calc::IntTuple>(&e)) {
    auto const* ri = std::get_if<calc::IntTuple>(&r);
    if (!ri || !ri->is_leaf() || !ei->is_leaf()) return "expected an integer, got " + calc::to_string(r);
    if (ri->value.value != ei->value.value) return "value " + calc::to_string(r) + " != " + expected_text;
    return "";
  }
  auto const* el = std::get_if<calc::Layout>(&e);
  auto const* rl = std::get_if<calc::Layout>(&r);
  if (!el || !rl) return "expected a layout, got " + calc::to_string(r);
  std::int64_t n = calc::size(*el).value;
  if (calc::size(*rl).value != n) return "size " + std::to_string(calc::size(*rl).value) + " != " + std::to_string(n);
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t a = calc::eval(*rl, i).value, b = calc::eval(*el, i).value;
    if (a != b) return "at index " + std::to_string(i) + ": " + std::to_string(a) + " != " + std::to_string(b);
  }
  return "";
}

}  // namespace

TEST(CalcOracle, EveryPublicCase) {
  auto cases = oracle::load_cases(TESSEL_SOURCE_DIR "/tests/oracle/data/cases_public.txt");
  ASSERT_EQ(cases.size(), 303u);
  std::map<char, int> total, passed, exact;
  for (auto const& c : cases) {
    SCOPED_TRACE("cases_public.txt:" + std::to_string(c.line) + ": " + c.op);
    std::vector<calc::Value> args;
    for (auto const& f : c.args) args.push_back(calc::parse_literal(f));
    calc::Value r;
    try {
      r = calc::apply_op(c.op, args);
    } catch (std::exception const& e) {
      ADD_FAILURE() << "refused: " << e.what();
      ++total[c.flavour];
      continue;
    }
    ++total[c.flavour];
    std::string text = calc::to_string(r);
    if (text == c.result) ++exact[c.flavour];
    if (c.flavour == 'S') {
      EXPECT_EQ(text, c.result);
      if (text == c.result) ++passed['S'];
    } else {
      std::string diff = compare_function(r, c.result);
      EXPECT_EQ(diff, "") << "calc gave " << text << ", CuTe " << c.result;
      if (diff.empty()) ++passed[c.flavour];
    }
  }
  for (char f : {'S', 'D', 'M'}) {
    std::printf("[ oracle ] calc %c: %d/%d pass (%d print exactly CuTe's text)\n", f, passed[f], total[f], exact[f]);
  }
}
