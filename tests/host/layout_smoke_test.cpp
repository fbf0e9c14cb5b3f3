// Smoke checks of the algebra's printed text against the oracle's curated examples.
#include <tessel/layout.hpp>

#include <gtest/gtest.h>

using namespace tessel;

TEST(LayoutSmoke, CuratedExamplesPrintLikeCuTe) {
  EXPECT_EQ(to_string(composition(make_layout(make_shape(_6{}, _2{}), make_stride(_8{}, _2{})),
                                  make_layout(make_shape(_4{}, _3{}), make_stride(_3{}, _1{})))),
            "((_2,_2),_3):((_24,_2),_8)");
  EXPECT_EQ(to_string(complement(make_layout(_4{}, _2{}), _24{})), "(_2,_3):(_1,_8)");
  EXPECT_EQ(to_string(make_layout(make_shape(8))), "(8):(_1)");
}
