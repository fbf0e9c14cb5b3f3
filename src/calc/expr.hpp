// calc/expr.hpp -- the calculator's operations, by name, on Values.
//
// apply_op("composition", {A, B}) runs the algebra on already-parsed arguments; the parser
// (calc/parse.hpp) calls it for every `name(args...)` in an expression, and the oracle tests call
// it with the ARGS of a case. Operations:
//   eval(L, i[, j...])  size(x)  cosize(L)  rank(x)  depth(x)  shape(L)  stride(L)  get(x, i...)
//   flatten(x)  coalesce(L[, profile])  filter(L[, profile])  composition(A, B)
//   complement(L[, cotarget])  right_inverse(L)  left_inverse(L)
//   logical_divide / zipped_divide / tiled_divide / flat_divide(L or Sw o off o L, tiler)
//   logical_product / zipped_product / tiled_product / flat_product(L, tiler)
//   blocked_product(L, L)  raked_product(L, L)  swizzle(Sw, i)  swizzle_layout(Sw o off o L, i)
//   make_layout(shape[, stride | GenRowMajor | GenColMajor])  make_layout(L0, L1, ...)
// Bad arguments and inadmissible algebra throw AlgebraError whose message starts with the
// operation's name; an unknown name throws UnknownOperation.
#pragma once

#include "calc/value.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace tessel::calc {

class UnknownOperation : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

Value apply_op(std::string const& name, std::vector<Value> const& args);

// L(args...): evaluation (or slicing, with `_`) of a layout, composed layout or swizzle. Slicing
// Sw o off o L keeps the fixed coordinates in the offset: Sw o (off + L(c with `_` as 0)) o slice.
Value call_value(Value const& f, std::vector<Value> const& args);

// The operation names apply_op knows, for help texts.
std::vector<std::string> const& operation_names();
bool is_operation(std::string const& name);

}  // namespace tessel::calc
