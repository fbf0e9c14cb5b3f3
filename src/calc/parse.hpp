// calc/parse.hpp -- CuTe notation and the calculator's expression language.
//
// Notation (exactly what cute::print emits; the oracle cases in tests/oracle/data):
//   _8  static integer      8  run-time integer      _-4 / -4  negative      _  Underscore
//   (a,b,...)  tuple (rank-1 `(8)` differs from `8`; `()` is empty)      shape:stride  layout
//   Sw<B,M,S>  swizzle      Sw<B,M,S> o OFFSET o LAYOUT  swizzled layout (OFFSET may be left out)
//   tuple elements may be layouts: (_3:_4,_8:_2) is a by-mode tiler
// Expressions add calls and evaluation, with spaces allowed between tokens:
//   NAME(arg, ...)      an operation of calc/expr.hpp, e.g. composition((4,2):(1,4), (2,2):(2,1))
//   X(i) / X(i,j)       evaluate a layout, swizzled layout or swizzle (with `_`: slice a layout)
//   GenRowMajor / GenColMajor   for make_layout(shape, GenRowMajor)
// A malformed expression throws ParseError, one line: what was expected, what was found, and the
// 1-based column. Nesting deeper than limits::max_nesting and inputs over the size limits are
// refused the same way; integers must fit in 64 bits.
#pragma once

#include "calc/value.hpp"

#include <stdexcept>
#include <string>
#include <string_view>

namespace tessel::calc {

class ParseError : public std::invalid_argument {
 public:
  ParseError(std::string const& what, int column)
      : std::invalid_argument(what + " at column " + std::to_string(column)), column_(column) {}
  int column() const { return column_; }

 private:
  int column_;
};

// Parse and evaluate an expression. Throws ParseError, AlgebraError (inadmissible algebra, bad
// arguments, overflow) or UnknownOperation (rethrown as a ParseError naming the column).
Value evaluate(std::string_view text);

// Parse a literal in CuTe notation (no calls, no evaluation), e.g. an oracle ARGS field.
Value parse_literal(std::string_view text);

}  // namespace tessel::calc
