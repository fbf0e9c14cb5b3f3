// calc/value.hpp -- what a calculator expression denotes, and the limits the calculator keeps.
//
// A Value is an IntTuple (an integer, `_`, or a tuple of them), a Layout, a Tiler (a tuple that
// holds at least one layout, e.g. (_3:_4,_8)), a Swizzle, a ComposedLayout, or a Major tag
// (GenRowMajor / GenColMajor, the second argument of make_layout). Values print in CuTe's text.
#pragma once

#include "calc/int_tuple.hpp"
#include "calc/layout.hpp"
#include "calc/swizzle.hpp"

#include <string>
#include <variant>

namespace tessel::calc {

using Value = std::variant<IntTuple, Layout, Tiler, Swizzle, ComposedLayout, Major>;

std::string to_string(Value const& v);
// "an integer", "a tuple", "a layout", ... for error messages.
std::string describe(Value const& v);

// Limits that keep every input answerable quickly and without deep recursion.
namespace limits {
inline constexpr int max_nesting = 64;              // parentheses and calls in one expression
inline constexpr std::size_t max_input_leaves = 4096;   // integers in one expression
inline constexpr std::size_t max_input_chars = 1 << 16; // characters in one expression
inline constexpr std::size_t max_result_leaves = 1 << 16;
inline constexpr int max_result_depth = 256;
}  // namespace limits

// Throws AlgebraError when a computed value exceeds the result limits above.
void require_within_limits(Value const& v, std::string const& op);

}  // namespace tessel::calc
