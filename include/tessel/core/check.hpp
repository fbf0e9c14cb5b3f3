// tessel/core/check.hpp -- refusing inadmissible algebra when the values are run-time.
//
// When an algebra precondition involves static values only, the operation refuses at compile
// time with a static_assert that states the rule and the fix. When it involves run-time values,
// the same rule is checked on the host and a violation throws tessel::AlgebraError, whose
// message names the operation, the rule and the values. Device code skips the run-time checks
// (no asserts on hot paths); the host side that built the problem is where they are enforced.
#pragma once

#include <tessel/config.hpp>

#include <sstream>
#include <stdexcept>
#include <string>

namespace tessel {

class AlgebraError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

namespace detail {

template <class... Parts>
[[noreturn]] inline void throw_algebra_error(Parts const&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw AlgebraError(os.str());
}

}  // namespace detail

// Check a run-time precondition. `parts` are streamed into the message when it fails.
#if TESSEL_ON_DEVICE
#define TESSEL_ALGEBRA_REQUIRE(cond, ...) ((void)0)
#else
#define TESSEL_ALGEBRA_REQUIRE(cond, ...)                 \
  do {                                                    \
    if (!(cond)) ::tessel::detail::throw_algebra_error(__VA_ARGS__); \
  } while (0)
#endif

}  // namespace tessel
