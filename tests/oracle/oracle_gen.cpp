// tests/oracle/oracle_gen.cpp -- writes the oracle tests of the templated algebra as C++.
//
//   tessel_oracle_gen CASES OUTDIR TUS RANDOM_PER_OP SEED
//
// 1. Every case of CASES (CuTe's printed inputs and results) becomes a gtest that builds the
//    inputs exactly as written (`_N` -> tessel::Int<N>{}, `N` -> int(N), tuples -> make_tuple,
//    layouts -> make_layout(shape, stride), tilers -> make_tile, Sw<B,M,S> -> tessel::Swizzle,
//    swizzled layouts -> make_composed_layout) and runs the templated operation: S cases must
//    print RESULT byte for byte, D/M cases must be the same function (oracle_check.hpp).
// 2. RANDOM_PER_OP random all-static cases per operation, admissible by tessel_calc, whose
//    templated text must equal tessel_calc's text; compositions, coalesce, eval, size,
//    cosize and swizzles also run with run-time ints and must be the same function, and random
//    compositions tessel_calc refuses must be refused at run time by the templated code too.
// 3. Random inadmissible cases that tessel_calc must refuse (oracle_refusals.cpp).
// The tests are spread over TUS translation units (oracle_tu_K.cpp). A file is rewritten only
// when its text changes, so an unchanged generator output does not trigger recompiles.
#include "calc/expr.hpp"
#include "calc/parse.hpp"
#include "oracle/oracle_cases.hpp"
#include "oracle/random_layouts.hpp"

#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace tessel;
using calc::Value;

namespace {

// ---- C++ for a value, exactly as written ------------------------------------------------------

std::string cpp(calc::Integer x, bool force_dynamic = false) {
  if (x.is_static && !force_dynamic) return "tessel::Int<" + std::to_string(x.value) + ">{}";
  return "int(" + std::to_string(x.value) + ")";
}

std::string cpp(calc::IntTuple const& t, bool dyn = false) {
  switch (t.kind) {
    case calc::IntTuple::Kind::leaf: return cpp(t.value, dyn);
    case calc::IntTuple::Kind::underscore: return "tessel::_";
    case calc::IntTuple::Kind::tuple: break;
  }
  if (t.elems.empty()) return "tessel::tuple<>{}";
  std::string s = "tessel::make_tuple(";
  for (std::size_t i = 0; i < t.elems.size(); ++i) s += (i ? ", " : "") + cpp(t.elems[i], dyn);
  return s + ")";
}

std::string cpp(calc::Layout const& l, bool dyn = false) {
  return "tessel::make_layout(" + cpp(l.shape, dyn) + ", " + cpp(l.stride, dyn) + ")";
}

std::string cpp(calc::Tiler const& t, bool dyn = false) {
  switch (t.kind) {
    case calc::Tiler::Kind::integer: return cpp(t.value, dyn);
    case calc::Tiler::Kind::underscore: return "tessel::_";
    case calc::Tiler::Kind::layout: return cpp(t.layout, dyn);
    case calc::Tiler::Kind::tuple: break;
  }
  std::string s = "tessel::make_tile(";
  for (std::size_t i = 0; i < t.elems.size(); ++i) s += (i ? ", " : "") + cpp(t.elems[i], dyn);
  return s + ")";
}

std::string cpp(calc::Swizzle sw) {
  return "tessel::Swizzle<" + std::to_string(sw.b) + "," + std::to_string(sw.m) + "," + std::to_string(sw.s) + ">{}";
}

std::string cpp(Value const& v, bool dyn = false) {
  if (auto const* x = std::get_if<calc::IntTuple>(&v)) return cpp(*x, dyn);
  if (auto const* x = std::get_if<calc::Layout>(&v)) return cpp(*x, dyn);
  if (auto const* x = std::get_if<calc::Tiler>(&v)) return cpp(*x, dyn);
  if (auto const* x = std::get_if<calc::Swizzle>(&v)) return cpp(*x);
  if (auto const* x = std::get_if<calc::ComposedLayout>(&v)) {
    return "tessel::make_composed_layout(" + cpp(x->swizzle) + ", " + cpp(x->offset, dyn) + ", " + cpp(x->layout, dyn) + ")";
  }
  throw std::runtime_error("oracle_gen: no C++ for " + calc::describe(v));
}

// The templated call of `op` on the argument expressions.
std::string call(std::string const& op, std::vector<std::string> const& a) {
  if (op == "eval" || op == "swizzle" || op == "swizzle_layout") return "(" + a[0] + ")(" + a[1] + ")";
  std::string s = "tessel::" + op + "(";
  for (std::size_t i = 0; i < a.size(); ++i) s += (i ? ", " : "") + a[i];
  return s + ")";
}

std::string quoted(std::string const& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string args_text(std::vector<Value> const& args) {
  std::string s;
  for (std::size_t i = 0; i < args.size(); ++i) s += (i ? " | " : "") + calc::to_string(args[i]);
  return s;
}

// ---- random cases ------------------------------------------------------------------------------

struct RandomCase {
  std::string op;
  std::vector<Value> args;
  std::string result;  // tessel_calc's text
};

using Maker = std::function<std::vector<Value>(oracle::Rng&)>;

std::map<std::string, Maker> makers() {
  using oracle::LayoutShape;
  using oracle::Strides;
  LayoutShape const base{};
  LayoutShape small = base;
  small.max_rank = 2;
  small.max_leaves = 3;
  small.max_extent = 6;
  std::map<std::string, Maker> m;
  auto lay = [](oracle::Rng& r, LayoutShape const& o, Strides s = Strides::any) -> Value { return oracle::random_layout(r, o, s); };
  m["coalesce"] = [=](oracle::Rng& r) { return std::vector<Value>{lay(r, base)}; };
  m["filter"] = [=](oracle::Rng& r) { return std::vector<Value>{lay(r, base)}; };
  m["size"] = [=](oracle::Rng& r) { return std::vector<Value>{lay(r, base)}; };
  m["cosize"] = [=](oracle::Rng& r) { return std::vector<Value>{lay(r, base)}; };
  m["right_inverse"] = [=](oracle::Rng& r) { return std::vector<Value>{lay(r, base)}; };
  m["left_inverse"] = [=](oracle::Rng& r) {
    return std::vector<Value>{lay(r, base, r.chance(80) ? Strides::nested : Strides::arbitrary)};
  };
  m["eval"] = [=](oracle::Rng& r) {
    calc::Layout l = oracle::random_layout(r, base);
    std::int64_t n = calc::size(l).value;
    return std::vector<Value>{l, calc::IntTuple::leaf(calc::static_int(r.uniform(0, n - 1)))};
  };
  m["composition"] = [=](oracle::Rng& r) {
    calc::Layout a = oracle::random_layout(r, base);
    if (r.chance(70)) return std::vector<Value>{a, lay(r, small)};
    calc::Tiler t = oracle::random_tiler(r, small, calc::rank(a));
    return std::vector<Value>{a, t};
  };
  m["complement"] = [=](oracle::Rng& r) {
    calc::Layout a = oracle::random_layout(r, base, r.chance(85) ? Strides::nested : Strides::arbitrary);
    if (r.chance(25)) return std::vector<Value>{a};
    std::int64_t k = r.uniform(0, 9);
    if (k < 7) return std::vector<Value>{a, calc::IntTuple::leaf(calc::static_int(r.uniform(1, 96)))};
    return std::vector<Value>{a, calc::IntTuple::tuple({calc::IntTuple::leaf(calc::static_int(r.uniform(1, 12))),
                                                        calc::IntTuple::leaf(calc::static_int(r.uniform(1, 12)))})};
  };
  for (char const* op : {"logical_divide", "zipped_divide", "tiled_divide", "flat_divide"}) {
    m[op] = [=](oracle::Rng& r) {
      calc::Layout a = oracle::random_layout(r, base, r.chance(70) ? Strides::compact : Strides::any);
      return std::vector<Value>{a, oracle::random_tiler(r, small, calc::rank(a))};
    };
  }
  for (char const* op : {"logical_product", "zipped_product", "tiled_product", "flat_product"}) {
    m[op] = [=](oracle::Rng& r) {
      calc::Layout a = oracle::random_layout(r, small, r.chance(70) ? Strides::compact : Strides::nested);
      return std::vector<Value>{a, oracle::random_tiler(r, small, calc::rank(a))};
    };
  }
  for (char const* op : {"blocked_product", "raked_product"}) {
    m[op] = [=](oracle::Rng& r) {
      Value a = lay(r, small, r.chance(70) ? Strides::compact : Strides::nested);
      return std::vector<Value>{a, lay(r, small)};
    };
  }
  m["swizzle"] = [](oracle::Rng& r) {
    return std::vector<Value>{oracle::random_swizzle(r), calc::IntTuple::leaf(calc::static_int(r.uniform(0, 4095)))};
  };
  m["swizzle_layout"] = [=](oracle::Rng& r) {
    calc::Layout l = oracle::random_layout(r, small, Strides::compact);
    std::int64_t n = calc::size(l).value;
    return std::vector<Value>{calc::ComposedLayout{oracle::random_swizzle(r), calc::static_int(0), l},
                              calc::IntTuple::leaf(calc::static_int(r.uniform(0, n - 1)))};
  };
  return m;
}

// Keeps the templated instantiations (and their constexpr admissibility checks) small.
bool small_enough(std::vector<Value> const& args) {
  for (auto const& a : args) {
    if (auto const* l = std::get_if<calc::Layout>(&a)) {
      if (calc::size(*l).value > 4096) return false;
    }
  }
  return true;
}

void generate_random(std::uint64_t seed, int per_op, std::vector<RandomCase>& ok, std::vector<RandomCase>& refused) {
  oracle::Rng rng(seed);
  for (auto const& [op, make] : makers()) {
    int n_ok = 0, n_refused = 0;
    for (int attempt = 0; attempt < per_op * 400 && n_ok < per_op; ++attempt) {
      std::vector<Value> args = make(rng);
      if (!small_enough(args)) continue;
      try {
        Value r = calc::apply_op(op, args);
        if (auto const* l = std::get_if<calc::Layout>(&r); l && calc::leaf_count(l->shape) > 24) continue;
        ok.push_back({op, args, calc::to_string(r)});
        ++n_ok;
      } catch (AlgebraError const&) {
        if (n_refused < per_op / 2) {
          refused.push_back({op, args, ""});
          ++n_refused;
        }
      }
    }
    if (n_ok < per_op) {
      std::fprintf(stderr, "tessel_oracle_gen: only %d admissible random cases for %s\n", n_ok, op.c_str());
    }
  }
}

// ---- output ------------------------------------------------------------------------------------

void write_if_changed(std::string const& path, std::string const& text) {
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      if (ss.str() == text) return;
    }
  }
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("oracle_gen: cannot write " + path);
}

std::string const header =
    "// Generated by tessel_oracle_gen (tests/oracle/oracle_gen.cpp) -- do not edit.\n"
    "#include \"oracle/oracle_check.hpp\"\n\n";

std::string oracle_test(oracle::Case const& c) {
  std::vector<std::string> a;
  for (auto const& f : c.args) a.push_back(cpp(calc::parse_literal(f)));
  std::string body = "  auto r = " + call(c.op, a) + ";\n";
  body += c.flavour == 'S' ? "  tessel::oracle::expect_text(r, " + quoted(c.result) + ");\n"
                           : "  tessel::oracle::expect_same_function(r, " + quoted(c.result) + ");\n";
  return "// cases_public.txt:" + std::to_string(c.line) + " (" + std::string(1, c.flavour) + "): " + c.op + "\t" +
         args_text([&] {
           std::vector<Value> v;
           for (auto const& f : c.args) v.push_back(calc::parse_literal(f));
           return v;
         }()) +
         "\nTEST(OracleCuTe, " + c.op + "_L" + std::to_string(c.line) + "_" + std::string(1, c.flavour) + ") {\n" + body + "}\n\n";
}

std::string random_block(RandomCase const& rc, int k) {
  std::vector<std::string> a;
  for (auto const& v : rc.args) a.push_back(cpp(v));
  std::string trace = rc.op + "(" + args_text(rc.args) + ")";
  std::string s = "  {  // " + trace + "\n    SCOPED_TRACE(" + quoted(trace) + ");\n";
  s += "    tessel::oracle::expect_text(" + call(rc.op, a) + ", " + quoted(rc.result) + ");\n";
  // The run-time twin (every int written `int(N)`) must be the same function. Only for operations
  // whose run-time path compiles for any input and keeps the function: CuTe's run-time divides and
  // products may tile differently (an uncoalesced cotarget gives a larger rest mode).
  // (filter is not one: a run-time 0 stride is not filtered, so the domain differs.)
  static std::set<std::string> const twins = {"composition", "coalesce", "eval", "size", "cosize", "swizzle",
                                               "swizzle_layout"};
  if (twins.count(rc.op)) {
    std::vector<std::string> d;
    for (auto const& v : rc.args) d.push_back(cpp(v, true));
    s += "    tessel::oracle::expect_same_function(" + call(rc.op, d) + ", " + quoted(rc.result) + ");\n";
  }
  (void)k;
  return s + "  }\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: tessel_oracle_gen CASES OUTDIR TUS RANDOM_PER_OP SEED\n");
    return 2;
  }
  try {
    std::string const outdir = argv[2];
    int const tus = std::stoi(argv[3]);
    int const per_op = std::stoi(argv[4]);
    std::uint64_t const seed = std::stoull(argv[5]);
    auto cases = oracle::load_cases(argv[1]);

    std::vector<std::string> tu(std::size_t(tus), header);
    std::size_t k = 0;
    for (auto const& c : cases) tu[k++ % tu.size()] += oracle_test(c);

    std::vector<RandomCase> ok, refused;
    generate_random(seed, per_op, ok, refused);
    // One TEST per (operation, TU), the cases of an operation spread over the TUs.
    std::map<std::pair<std::size_t, std::string>, std::string> blocks;
    std::map<std::string, int> count;
    for (auto const& rc : ok) {
      int i = count[rc.op]++;
      blocks[{std::size_t(i) % tu.size(), rc.op}] += random_block(rc, i);
    }
    for (auto const& [key, body] : blocks) {
      tu[key.first] += "TEST(OracleRandom, " + key.second + "_tu" + std::to_string(key.first) + ") {\n" + body + "}\n\n";
    }
    // Compositions that tessel_calc refuses must be refused at run time by the templated code too.
    std::string comp_refusals;
    std::string refusals = "// Generated by tessel_oracle_gen (tests/oracle/oracle_gen.cpp) -- do not edit.\n"
                           "// Random all-static cases that tessel_calc refuses.\n"
                           "#include \"calc/expr.hpp\"\n#include \"calc/parse.hpp\"\n\n#include <gtest/gtest.h>\n\n"
                           "#include <vector>\n\n"
                           "TEST(OracleRandomRefusals, CalculatorRefuses) {\n"
                           "  struct Case { char const* op; std::vector<char const*> args; };\n"
                           "  std::vector<Case> const cases = {\n";
    for (auto const& rc : refused) {
      refusals += "      {" + quoted(rc.op) + ", {";
      for (std::size_t i = 0; i < rc.args.size(); ++i) refusals += (i ? ", " : "") + quoted(calc::to_string(rc.args[i]));
      refusals += "}},\n";
      if (rc.op == "composition") {
        std::vector<std::string> d;
        for (auto const& v : rc.args) d.push_back(cpp(v, true));
        comp_refusals += "  EXPECT_THROW(" + call(rc.op, d) + ", tessel::AlgebraError) << " +
                         quoted(rc.op + "(" + args_text(rc.args) + ")") + ";\n";
      }
    }
    refusals += "  };\n"
                "  ASSERT_GT(cases.size(), 0u);\n"
                "  for (auto const& c : cases) {\n"
                "    std::vector<tessel::calc::Value> args;\n"
                "    std::string text = std::string(c.op) + \"(\";\n"
                "    for (auto const* a : c.args) {\n"
                "      args.push_back(tessel::calc::parse_literal(a));\n"
                "      text += std::string(a) + \" \";\n"
                "    }\n"
                "    EXPECT_THROW(tessel::calc::apply_op(c.op, args), tessel::AlgebraError) << text << \")\";\n"
                "  }\n"
                "}\n";
    tu[0] += "TEST(OracleRandomRefusals, TemplatedCompositionRefusesAtRunTime) {\n" + comp_refusals + "}\n";

    for (std::size_t i = 0; i < tu.size(); ++i) write_if_changed(outdir + "/oracle_tu_" + std::to_string(i) + ".cpp", tu[i]);
    write_if_changed(outdir + "/oracle_refusals.cpp", refusals);
    std::printf("tessel_oracle_gen: %zu CuTe cases, %zu random cases, %zu random refusals in %d TUs\n", cases.size(),
                ok.size(), refused.size(), tus);
    return 0;
  } catch (std::exception const& e) {
    std::fprintf(stderr, "tessel_oracle_gen: %s\n", e.what());
    return 1;
  }
}
