// tests/oracle/oracle_check.hpp -- the checks the generated oracle tests run on templated results.
//
//   expect_text(r, "((_2,_2),_3):((_24,_2),_8)")   all-static case: tessel prints CuTe's text
//   expect_same_function(r, "(2,3):(_1,8)")        run-time ints: same size, same value at every
//                                                  index (the expected text is read by tessel_calc)
// Works for layouts and for integer results (size, cosize, eval, swizzles).
#pragma once

#include "calc/parse.hpp"

#include <tessel/layout.hpp>

#include <gtest/gtest.h>

#include <string>

namespace tessel::oracle {

template <class R>
void expect_text(R const& r, char const* expected) {
  EXPECT_EQ(tessel::to_string(r), expected);
}

template <class R>
void expect_same_function(R const& r, char const* expected) {
  calc::Value e = calc::parse_literal(expected);
  if constexpr (tessel::is_layout_v<R>) {
    auto const* el = std::get_if<calc::Layout>(&e);
    ASSERT_NE(el, nullptr) << "the expected result " << expected << " is not a layout; tessel gave " << tessel::to_string(r);
    long long const n = calc::size(*el).value;
    ASSERT_EQ(static_cast<long long>(tessel::size(r)), n)
        << "tessel gave " << tessel::to_string(r) << ", expected " << expected;
    for (long long i = 0; i < n; ++i) {
      long long got = static_cast<long long>(r(i));
      long long want = calc::eval(*el, i).value;
      ASSERT_EQ(got, want) << "at index " << i << ": tessel gave " << tessel::to_string(r) << ", expected " << expected;
    }
  } else {
    auto const* ei = std::get_if<calc::IntTuple>(&e);
    ASSERT_TRUE(ei != nullptr && ei->is_leaf()) << "the expected result " << expected << " is not an integer";
    EXPECT_EQ(static_cast<long long>(r), ei->value.value) << "tessel gave " << tessel::to_string(r);
  }
}

}  // namespace tessel::oracle
