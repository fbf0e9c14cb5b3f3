// tessel/layout/print_layout.hpp -- a rank-2 layout as a table of offsets (CuTe's format).
//
//   print_layout(make_layout(make_shape(_2{},_3{})))  prints
//   (_2,_3):(_1,_2)
//          0    1    2
//       +---+---+---+
//    0  | 0 | 2 | 4 |
//       +---+---+---+
//    1  | 1 | 3 | 5 |
//       +---+---+---+
// (each cell is as wide as the widest offset, cosize - 1, plus padding). Works for Layout and
// ComposedLayout, on host and device.
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/print.hpp>
#include <tessel/layout/layout.hpp>

#include <cstdio>

namespace tessel {

namespace detail {
TESSEL_HOST_DEVICE inline int num_digits(long long x) {
  int n = 1;
  while (x >= 10) {
    x /= 10;
    ++n;
  }
  return n;
}
}  // namespace detail

template <class L>
TESSEL_HOST_DEVICE void print_layout(L const& layout) {
  static_assert(rank_v<decltype(shape(layout))> == 2,
                "print_layout: the layout must have rank 2 (rows, columns); group or select modes first");
  int const w = detail::num_digits(static_cast<long long>(cosize(layout))) + 2;
  char const* delim = "+-----------------------";
  long long const rows = size<0>(layout);
  long long const cols = size<1>(layout);
  print(layout);
  printf("\n");
  printf("    ");
  for (long long n = 0; n < cols; ++n) printf("  %*lld ", w - 2, n);
  printf("\n");
  for (long long m = 0; m < rows; ++m) {
    printf("    ");
    for (long long n = 0; n < cols; ++n) printf("%.*s", w + 1, delim);
    printf("+\n");
    printf("%2lld  ", m);
    for (long long n = 0; n < cols; ++n) printf("| %*lld ", w - 2, static_cast<long long>(layout(m, n)));
    printf("|\n");
  }
  printf("    ");
  for (long long n = 0; n < cols; ++n) printf("%.*s", w + 1, delim);
  printf("+\n");
}

}  // namespace tessel
