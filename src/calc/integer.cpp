// calc/integer.cpp -- checked arithmetic with integral.hpp's static/zero rules.
#include "calc/integer.hpp"

#include <limits>

namespace tessel::calc {

std::string to_string(Integer x) {
  std::string s = x.is_static ? "_" : "";
  s += std::to_string(x.value);
  return s;
}

void fail(std::string const& message) { throw AlgebraError(message); }

namespace {

[[noreturn]] void overflow(char const* op, std::int64_t a, std::int64_t b) {
  fail("integer overflow: " + std::to_string(a) + " " + op + " " + std::to_string(b) +
       " does not fit in 64 bits");
}

bool is_static_zero(Integer x) { return x.is_static && x.value == 0; }

}  // namespace

std::int64_t checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) overflow("+", a, b);
  return r;
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) overflow("*", a, b);
  return r;
}

Integer operator+(Integer a, Integer b) { return {checked_add(a.value, b.value), a.is_static && b.is_static}; }

Integer operator-(Integer a, Integer b) {
  std::int64_t r;
  if (__builtin_sub_overflow(a.value, b.value, &r)) overflow("-", a.value, b.value);
  return {r, a.is_static && b.is_static};
}

Integer operator*(Integer a, Integer b) {
  if (is_static_zero(a) || is_static_zero(b)) return static_int(0);
  return {checked_mul(a.value, b.value), a.is_static && b.is_static};
}

Integer operator/(Integer a, Integer b) {
  if (is_static_zero(a)) return static_int(0);
  if (b.value == 0) fail("division by zero: " + to_string(a) + " / " + to_string(b));
  if (b.value == -1 && a.value == std::numeric_limits<std::int64_t>::min()) overflow("/", a.value, b.value);
  return {a.value / b.value, a.is_static && b.is_static};
}

Integer operator%(Integer a, Integer b) {
  if (b.is_static && (b.value == 1 || b.value == -1)) return static_int(0);
  if (is_static_zero(a)) return static_int(0);
  if (b.value == 0) fail("division by zero: " + to_string(a) + " % " + to_string(b));
  if (b.value == -1) return {0, a.is_static && b.is_static};
  return {a.value % b.value, a.is_static && b.is_static};
}

Integer operator-(Integer a) {
  if (a.value == std::numeric_limits<std::int64_t>::min()) overflow("*", a.value, -1);
  return {-a.value, a.is_static};
}

Integer min(Integer a, Integer b) { return {a.value < b.value ? a.value : b.value, a.is_static && b.is_static}; }
Integer max(Integer a, Integer b) { return {a.value < b.value ? b.value : a.value, a.is_static && b.is_static}; }
Integer abs(Integer a) { return a.value < 0 ? -a : a; }
Integer signum(Integer a) { return {(a.value > 0) - (a.value < 0), a.is_static}; }

Integer ceil_div(Integer a, Integer b) { return (a + b - static_int(1)) / b; }

}  // namespace tessel::calc
