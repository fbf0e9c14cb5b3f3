// tessel/conv/problem_size_error.hpp -- refusing a convolution that cannot exist.
//
// Conv2dProblemSize and Conv3dProblemSize are built on the host from run-time sizes. Sizes that
// describe no convolution (an extent of 0, a stride of 0, a dilated filter larger than the padded
// input so the output would be empty) throw tessel::conv::ProblemSizeError there, naming the
// rule, the values and the fix. Device code never checks.
#pragma once

#include <tessel/config.hpp>

#include <sstream>
#include <stdexcept>
#include <string>

namespace tessel::conv {

// ProblemSizeError: a convolution's sizes describe no convolution. what() says which rule failed.
class ProblemSizeError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

namespace detail {

// Throws ProblemSizeError with `parts` streamed into its message.
template <class... Parts>
[[noreturn]] inline void throw_problem_size_error(Parts const&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw ProblemSizeError(os.str());
}

// Post: returns when `ok`; on the host throws ProblemSizeError(parts...) when not; on the device
// checks nothing.
template <class... Parts>
TESSEL_HOST_DEVICE constexpr void problem_size_require(bool ok, Parts const&... parts) {
#if TESSEL_ON_DEVICE
  (void)ok;
  ((void)parts, ...);
#else
  if (!ok) throw_problem_size_error(parts...);
#endif
}

// The output extent of one spatial dimension: floor((in + 2*pad - (dilation*(f-1) + 1)) / stride) + 1,
// after checking the rules that make it a positive integer. `who` names the problem type, and
// in_name / filter_name / out_name the dimension ("H"), its filter extent ("R") and its output
// ("P") in the messages.
TESSEL_HOST_DEVICE constexpr long long output_extent(char const* who, char const* in_name, char const* filter_name,
                                                     char const* out_name, long long in, long long filter,
                                                     long long pad, long long stride, long long dilation) {
  problem_size_require(in >= 1, who, ": input extent ", in_name, " = ", in, " must be >= 1");
  problem_size_require(filter >= 1, who, ": filter extent ", filter_name, " = ", filter, " must be >= 1");
  problem_size_require(pad >= 0, who, ": padding of ", in_name, " = ", pad, " must be >= 0");
  problem_size_require(stride >= 1, who, ": stride of ", in_name, " = ", stride, " must be >= 1");
  problem_size_require(dilation >= 1, who, ": dilation of ", in_name, " = ", dilation,
                       " must be >= 1 (1 means no dilation)");
  long long const span = dilation * (filter - 1) + 1;  // the dilated filter's extent
  long long const padded = in + 2 * pad;
  problem_size_require(span <= padded, who, ": the dilated filter extent dilation*(", filter_name, "-1)+1 = ", span,
                       " exceeds the padded input ", in_name, "+2*pad = ", padded, ", so the output ", out_name,
                       " would be empty; pad more, or use a smaller filter or dilation");
  return (padded - span) / stride + 1;
}

}  // namespace detail
}  // namespace tessel::conv
