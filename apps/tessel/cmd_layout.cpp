// apps/tessel/cmd_layout.cpp -- `tessel layout EXPR [--grid] [--svg FILE]`: the layout calculator.
//
// Evaluates EXPR (CuTe notation plus calls of the algebra, calc/parse.hpp) over run-time ints and
// prints the result on one line in CuTe notation. --grid adds CuTe's print_layout table, --svg
// draws the layout to FILE. Bad syntax, inadmissible algebra and anything too large to answer
// are one line on stderr and exit status 2 (main.cpp prints UsageError / AlgebraError).
//   tessel layout 'composition((4,2):(1,4), (2,2):(2,1))'     ->  (2,2):(2,1)
//   tessel layout 'complement(4:2, 24)'                        ->  (2,3):(_1,8)
#include "command.hpp"

#include "calc/expr.hpp"
#include "calc/parse.hpp"
#include "calc/print_layout.hpp"
#include "calc/svg.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace {

using tessel::cli::UsageError;
namespace calc = tessel::calc;

void print_help() {
  std::printf(
      "usage: tessel layout 'EXPR' [--grid] [--svg FILE]\n"
      "\n"
      "Evaluates a layout-algebra expression over run-time integers and prints the result in CuTe\n"
      "notation. Decisions are taken on the values (as CuTe does for static ints), so the answer is\n"
      "the simplified layout; a static input (_8) stays static in the output.\n"
      "\n"
      "notation:   _8 static int   8 run-time int   _ keep-mode   (a,b) tuple   shape:stride layout\n"
      "            Sw<B,M,S> swizzle   Sw<B,M,S> o _0 o LAYOUT swizzled layout\n"
      "            (_3:_4,_8,_) by-mode tiler (layouts, ints, _)\n"
      "evaluation: L(i)  L(i,j)  L(_,j) (slice)  Sw<3,3,3>(100)\n"
      "operations:");
  int col = 12;
  for (auto const& name : calc::operation_names()) {
    if (col + int(name.size()) + 1 > 96) {
      std::printf("\n           ");
      col = 11;
    }
    std::printf(" %s", name.c_str());
    col += int(name.size()) + 1;
  }
  std::printf(
      "\n\n"
      "options:\n"
      "  --grid       also print CuTe's print_layout table (rank-1 layouts as one column)\n"
      "  --svg FILE   draw the layout as an SVG grid of offsets into FILE\n"
      "\n"
      "examples:\n"
      "  tessel layout 'composition((4,2):(1,4), (2,2):(2,1))'\n"
      "  tessel layout 'logical_divide((4,2,3):(2,1,8), 4:2)'\n"
      "  tessel layout 'complement(4:2, 24)'\n"
      "  tessel layout --grid 'composition(Sw<3,3,3>, (_8,_64):(_64,_1))'\n"
      "\n"
      "Malformed or inadmissible input prints one line on stderr and exits with status 2.\n");
}

int run_layout(std::vector<std::string> const& args) {
  bool grid = false;
  std::string svg_path;
  std::string expr;
  bool have_expr = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string const& a = args[i];
    if (a == "--help" || a == "-h") {
      print_help();
      return 0;
    } else if (a == "--grid") {
      grid = true;
    } else if (a == "--svg") {
      if (i + 1 >= args.size()) throw UsageError("--svg needs a file name (tessel layout 'EXPR' --svg FILE)");
      svg_path = args[++i];
    } else if (a.rfind("--svg=", 0) == 0) {
      svg_path = a.substr(6);
      if (svg_path.empty()) throw UsageError("--svg needs a file name (tessel layout 'EXPR' --svg FILE)");
    } else if (a.size() > 1 && a[0] == '-' && a[1] == '-') {
      throw UsageError("unknown option '" + a + "' (try: tessel layout --help)");
    } else {
      // An unquoted expression arrives split at its spaces: join the pieces back.
      if (have_expr) expr += " ";
      expr += a;
      have_expr = true;
    }
  }
  if (!have_expr) throw UsageError("missing the expression (usage: tessel layout 'EXPR' [--grid] [--svg FILE])");

  calc::Value v;
  try {
    v = calc::evaluate(expr);
  } catch (calc::ParseError const& e) {
    throw UsageError(e.what());
  }

  auto const* layout = std::get_if<calc::Layout>(&v);
  auto const* composed = std::get_if<calc::ComposedLayout>(&v);
  if ((grid || !svg_path.empty()) && !layout && !composed) {
    throw UsageError(std::string(grid ? "--grid" : "--svg") + " needs a layout; the expression gives " +
                     calc::describe(v));
  }
  // Build everything before printing, so that an error leaves stdout empty.
  std::string out = calc::to_string(v) + "\n";
  if (grid) out += layout ? calc::print_layout(*layout) : calc::print_layout(*composed);
  if (!svg_path.empty()) {
    calc::svg::Panel p = layout ? calc::svg::layout_panel(*layout) : calc::svg::layout_panel(*composed);
    calc::svg::write_file(svg_path, calc::svg::render(p));
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

tessel::cli::Register reg{{"layout", "evaluate layout-algebra expressions (CuTe notation)", run_layout}};

}  // namespace
