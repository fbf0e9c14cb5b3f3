// tessel/schedule/schedule_error.hpp -- refusing an impossible schedule on the host.
//
// Swizzles and tile schedulers are built on the host from run-time sizes (problem, tile, SM
// count, group size). A size that cannot describe a schedule (a tile extent of 0, a group size
// of 9, a negative problem) throws tessel::ScheduleError there, with a message that states the
// rule and the fix. Device code never checks: the mappings it calls are pure and assume a
// schedule the host already accepted.
#pragma once

#include <tessel/config.hpp>

#include <sstream>
#include <stdexcept>
#include <string>

namespace tessel {

// ScheduleError: a schedule's precondition failed on the host. what() names the function, the
// rule and the offending values.
class ScheduleError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

namespace detail {

// Throws ScheduleError with `parts` streamed into its message.
template <class... Parts>
[[noreturn]] inline void throw_schedule_error(Parts const&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw ScheduleError(os.str());
}

// Pre: none. Post: returns normally when `ok`; on the host throws ScheduleError(parts...) when
// not. On the device it checks nothing (no asserts on hot paths).
template <class... Parts>
TESSEL_HOST_DEVICE constexpr void schedule_require(bool ok, Parts const&... parts) {
#if TESSEL_ON_DEVICE
  (void)ok;
  ((void)parts, ...);
#else
  if (!ok) throw_schedule_error(parts...);
#endif
}

}  // namespace detail
}  // namespace tessel
