// How the direct depthwise weight gradient splits its sum over the output pixels
// (tessel/conv/conv_depthwise_split.hpp): the header's worked examples, the refusals to split, the
// bounds, and that the slices cover every pixel once.
#include <tessel/conv/conv_depthwise_split.hpp>

#include <gtest/gtest.h>

#include <cstdint>

using namespace tessel;

TEST(ConvDepthwiseSplit, WorkedExamples) {
  // 3x3 C256, n128 28x28 on 132 SMs: 4 CTAs a slice -> 264 slices of 381 pixels, the last 149.
  ConvSplit s = conv_depthwise_wgrad_split(4, 100352, 132);
  EXPECT_EQ(s.slices, 264);
  EXPECT_EQ(s.k_tiles_per_slice, 381);
  EXPECT_EQ(100352 - (s.slices - 1) * s.k_tiles_per_slice, 149);
  // 3x3 C1024, n128 14x14: 16 CTAs a slice -> 66 slices of 381, the last 323.
  s = conv_depthwise_wgrad_split(16, 25088, 132);
  EXPECT_EQ(s.slices, 66);
  EXPECT_EQ(s.k_tiles_per_slice, 381);
  EXPECT_EQ(25088 - (s.slices - 1) * s.k_tiles_per_slice, 323);
  // 3x3 C64, n2 8x8: 128 pixels are fewer than two slices of kDepthwiseWgradMinPixels.
  s = conv_depthwise_wgrad_split(1, 128, 132);
  EXPECT_EQ(s.slices, 1);
  EXPECT_EQ(s.k_tiles_per_slice, 128);
}

TEST(ConvDepthwiseSplit, NoSplitWithoutSmsOrWhenOneSliceFillsThem) {
  EXPECT_EQ(conv_depthwise_wgrad_split(4, 100352, 0).slices, 1);
  EXPECT_EQ(conv_depthwise_wgrad_split(4, 100352, 0).k_tiles_per_slice, 100352);
  EXPECT_EQ(conv_depthwise_wgrad_split(kDepthwiseWgradCtasPerSm * 132, 100352, 132).slices, 1);
  EXPECT_EQ(conv_depthwise_wgrad_split(4, 0, 132).slices, 1);
  EXPECT_EQ(conv_depthwise_wgrad_split(4, 2 * kDepthwiseWgradMinPixels - 1, 132).slices, 1);
  EXPECT_EQ(conv_depthwise_wgrad_split(4, 2 * kDepthwiseWgradMinPixels, 132).slices, 2);
}

// For many shapes: at most the bounds, at least kDepthwiseWgradMinPixels a slice, every pixel in
// exactly one slice (slice z covers [z * per, min((z + 1) * per, pixels)), none of them empty).
TEST(ConvDepthwiseSplit, BoundsAndCover) {
  for (std::int64_t sms : {1, 8, 108, 132}) {
    for (std::int64_t ctas : {1, 2, 3, 4, 16, 96}) {
      for (std::int64_t pixels : {1, 255, 512, 513, 6272, 25088, 100352, 1605632, 50000000}) {
        ConvSplit const s = conv_depthwise_wgrad_split(ctas, pixels, sms);
        SCOPED_TRACE(testing::Message() << "ctas " << ctas << " pixels " << pixels << " sms " << sms);
        ASSERT_GE(s.slices, 1);
        EXPECT_LE(s.slices, kDepthwiseWgradMaxSlices);
        if (s.slices == 1) {
          EXPECT_EQ(s.k_tiles_per_slice, pixels);
          continue;
        }
        EXPECT_GE(s.k_tiles_per_slice, kDepthwiseWgradMinPixels);
        EXPECT_LE(s.slices * ctas, kDepthwiseWgradCtasPerSm * sms + ctas);
        std::int64_t const last_begin = std::int64_t(s.slices - 1) * s.k_tiles_per_slice;
        EXPECT_LT(last_begin, pixels);                                              // the last slice is not empty
        EXPECT_GE(std::int64_t(s.slices) * s.k_tiles_per_slice, pixels);             // every pixel is covered
      }
    }
  }
}
