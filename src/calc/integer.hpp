// calc/integer.hpp -- one leaf of a run-time IntTuple: a 64-bit value and a static flag.
//
// The calculator mirrors the templated algebra (include/tessel/core/integral.hpp) on run-time
// trees. A leaf remembers whether it was written static (`_8`) or run-time (`8`). Arithmetic
// gives a static result when every operand is static, and keeps the zero rules of integral.hpp
// where the answer needs no run-time value:
//   _0 * x == _0     x * _0 == _0     _0 / x == _0     x % _1 == _0     x % _-1 == _0     _0 % x == _0
// Every operation is checked: a result that does not fit in 64 bits, or a division by zero,
// throws tessel::AlgebraError (never undefined behaviour).
//   e.g.  _4 * 3 -> 12 (run-time)      _4 * _3 -> _12      _0 * 3 -> _0
#pragma once

#include <tessel/core/check.hpp>  // AlgebraError

#include <cstdint>
#include <string>

namespace tessel::calc {

struct Integer {
  std::int64_t value = 0;
  bool is_static = false;
  friend bool operator==(Integer, Integer) = default;
};

inline Integer static_int(std::int64_t v) { return {v, true}; }
inline Integer dynamic_int(std::int64_t v) { return {v, false}; }

// `_8` or `8`.
std::string to_string(Integer x);

// Throws AlgebraError(message). The one place the calculator raises its errors.
[[noreturn]] void fail(std::string const& message);

Integer operator+(Integer a, Integer b);
Integer operator-(Integer a, Integer b);
Integer operator*(Integer a, Integer b);
Integer operator/(Integer a, Integer b);  // truncates toward zero, like C++
Integer operator%(Integer a, Integer b);  // sign of the dividend, like C++
Integer operator-(Integer a);

Integer min(Integer a, Integer b);
Integer max(Integer a, Integer b);
Integer abs(Integer a);
Integer signum(Integer a);
// (a + b - _1) / b, as integral.hpp computes it (static iff both are).
Integer ceil_div(Integer a, Integer b);

// Checked plain arithmetic on values (throws AlgebraError on overflow / division by zero).
std::int64_t checked_add(std::int64_t a, std::int64_t b);
std::int64_t checked_mul(std::int64_t a, std::int64_t b);

}  // namespace tessel::calc
