// Conv2d/Conv3d problem sizes: the output extents against a brute-force count of filter
// positions, the refusals, the implicit-GEMM extents, and the swizzle's conv overloads.
#include <tessel/conv/conv2d_problem_size.hpp>
#include <tessel/conv/conv3d_problem_size.hpp>
#include <tessel/conv/implicit_gemm_problem_size.hpp>
#include <tessel/conv/operator.hpp>
#include <tessel/conv/problem_size_error.hpp>
#include <tessel/schedule.hpp>

#include <gtest/gtest.h>

#include <ostream>
#include <string>

namespace tessel {
void PrintTo(GemmCoord const& c, std::ostream* os) { *os << "(" << c.m() << "," << c.n() << "," << c.k() << ")"; }
}  // namespace tessel

using namespace tessel;
using conv::Conv2dProblemSize;
using conv::Conv3dProblemSize;
using conv::Operator;

namespace {

// The number of output positions along one dimension, by definition: the positions p >= 0 at
// which the dilated filter, placed at p * stride in the padded input, lies entirely inside it.
long long count_positions(long long in, long long filter, long long pad, long long stride, long long dilation) {
  long long count = 0;
  for (long long p = 0;; ++p) {
    long long const last_tap = p * stride + dilation * (filter - 1);  // index in the padded input
    if (last_tap >= in + 2 * pad) break;
    ++count;
  }
  return count;
}

TEST(Conv2dProblemSize, OutputExtentsMatchTheDefinition) {
  long long checked = 0;
  long long refused = 0;
  for (long long h = 1; h <= 12; ++h)
    for (long long r = 1; r <= 5; ++r)
      for (long long pad = 0; pad <= 3; ++pad)
        for (long long stride = 1; stride <= 3; ++stride)
          for (long long dil = 1; dil <= 3; ++dil) {
            long long const want = count_positions(h, r, pad, stride, dil);
            if (want == 0) {
              EXPECT_THROW(Conv2dProblemSize(2, h, 7, 3, 4, r, 1, pad, 0, stride, 1, dil, 1), conv::ProblemSizeError)
                  << "H " << h << " R " << r << " pad " << pad << " stride " << stride << " dilation " << dil;
              EXPECT_THROW(Conv2dProblemSize(2, 7, h, 3, 4, 1, r, 0, pad, 1, stride, 1, dil), conv::ProblemSizeError);
              ++refused;
              continue;
            }
            Conv2dProblemSize const p(2, h, 7, 3, 4, r, 1, pad, 0, stride, 1, dil, 1);
            EXPECT_EQ(p.P, want) << "H " << h << " R " << r << " pad " << pad << " stride " << stride << " dil " << dil;
            EXPECT_EQ(p.Q, 7);
            Conv2dProblemSize const q(2, 7, h, 3, 4, 1, r, 0, pad, 1, stride, 1, dil);
            EXPECT_EQ(q.Q, want);
            EXPECT_EQ(q.P, 7);
            ++checked;
          }
  EXPECT_GT(checked, 1000);
  EXPECT_GT(refused, 50);
}

TEST(Conv2dProblemSize, KnownLayers) {
  // ResNet-50 conv1: 224x224x3, 64 filters 7x7, pad 3, stride 2 -> 112x112.
  Conv2dProblemSize const conv1(32, 224, 224, 3, 64, 7, 7, 3, 3, 2, 2, 1, 1);
  EXPECT_EQ(conv1.P, 112);
  EXPECT_EQ(conv1.Q, 112);
  // The header's example: 56x56x64 -> 128 filters 3x3, pad 1, stride 2 -> 28x28.
  Conv2dProblemSize const p(1, 56, 56, 64, 128, 3, 3, 1, 1, 2, 2, 1, 1);
  EXPECT_EQ(p.P, 28);
  EXPECT_EQ(p.Q, 28);
  EXPECT_EQ(conv::implicit_gemm_problem_size(Operator::kFprop, p), GemmCoord(784, 128, 576));
  EXPECT_EQ(conv::implicit_gemm_problem_size(Operator::kDgrad, p), GemmCoord(1 * 56 * 56, 64, 128 * 9));
  EXPECT_EQ(conv::implicit_gemm_problem_size(Operator::kWgrad, p), GemmCoord(128, 576, 784));
  // Dilation 2 on a 3x3 filter spans 5: 10 + 2*0 - 5 -> 6 positions at stride 1.
  EXPECT_EQ(Conv2dProblemSize(1, 10, 10, 1, 1, 3, 3, 0, 0, 1, 1, 2, 2).P, 6);
  // 64-bit extents: N*P*Q past 2^31.
  Conv2dProblemSize const big(1024, 1024, 1024, 8, 8, 1, 1, 0, 0, 1, 1, 1, 1);
  EXPECT_EQ(conv::implicit_gemm_problem_size(Operator::kFprop, big).m(), 1024LL * 1024 * 1024);
}

TEST(Conv2dProblemSize, RefusesImpossibleSizesWithTheRule) {
  EXPECT_THROW(Conv2dProblemSize(0, 8, 8, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1), conv::ProblemSizeError);
  EXPECT_THROW(Conv2dProblemSize(1, 8, 8, 0, 4, 3, 3, 1, 1, 1, 1, 1, 1), conv::ProblemSizeError);
  EXPECT_THROW(Conv2dProblemSize(1, 8, 8, 4, 0, 3, 3, 1, 1, 1, 1, 1, 1), conv::ProblemSizeError);
  EXPECT_THROW(Conv2dProblemSize(1, 8, 8, 4, 4, 0, 3, 1, 1, 1, 1, 1, 1), conv::ProblemSizeError);
  EXPECT_THROW(Conv2dProblemSize(1, 8, 8, 4, 4, 3, 3, -1, 1, 1, 1, 1, 1), conv::ProblemSizeError);
  EXPECT_THROW(Conv2dProblemSize(1, 8, 8, 4, 4, 3, 3, 1, 1, 0, 1, 1, 1), conv::ProblemSizeError);
  EXPECT_THROW(Conv2dProblemSize(1, 8, 8, 4, 4, 3, 3, 1, 1, 1, 1, 1, 0), conv::ProblemSizeError);
  // ProblemSizeError is a std::invalid_argument.
  EXPECT_THROW(Conv2dProblemSize(1, 8, 0, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1), std::invalid_argument);
  try {
    Conv2dProblemSize(1, 4, 8, 4, 4, 3, 3, 0, 0, 1, 1, 2, 1);
    FAIL() << "a 5-tall dilated filter on a 4-tall input must be refused";
  } catch (conv::ProblemSizeError const& e) {
    std::string const what = e.what();
    EXPECT_NE(what.find("dilation*(R-1)+1 = 5 exceeds the padded input H+2*pad = 4"), std::string::npos) << what;
    EXPECT_NE(what.find("pad more"), std::string::npos) << what;
  }
}

TEST(Conv3dProblemSize, OutputExtentsAndImplicitGemm) {
  Conv3dProblemSize const p(2, 8, 16, 16, 32, 64, 3, 3, 3, 1, 1, 1, 1, 1, 1);
  EXPECT_EQ(p.Z, 8);
  EXPECT_EQ(p.P, 16);
  EXPECT_EQ(p.Q, 16);
  EXPECT_EQ(conv::implicit_gemm_problem_size(Operator::kFprop, p), GemmCoord(2 * 8 * 16 * 16, 64, 27 * 32));
  EXPECT_EQ(conv::implicit_gemm_problem_size(Operator::kDgrad, p), GemmCoord(2 * 8 * 16 * 16, 32, 64 * 27));
  EXPECT_EQ(conv::implicit_gemm_problem_size(Operator::kWgrad, p), GemmCoord(64, 27 * 32, 2 * 8 * 16 * 16));
  // Each spatial dimension follows the definition independently.
  for (long long d = 1; d <= 9; ++d)
    for (long long t = 1; t <= 4; ++t)
      for (long long stride = 1; stride <= 3; ++stride)
        for (long long dil = 1; dil <= 2; ++dil) {
          long long const want = count_positions(d, t, 1, stride, dil);
          if (want == 0) {
            EXPECT_THROW(Conv3dProblemSize(1, d, 5, 6, 2, 2, t, 1, 1, 1, 0, 0, stride, 1, 1, dil, 1, 1),
                         conv::ProblemSizeError);
            continue;
          }
          Conv3dProblemSize const q(1, d, 5, 6, 2, 2, t, 1, 1, 1, 0, 0, stride, 1, 1, dil, 1, 1);
          EXPECT_EQ(q.Z, want);
          EXPECT_EQ(q.P, 5);
          EXPECT_EQ(q.Q, 6);
        }
  EXPECT_THROW(Conv3dProblemSize(1, 2, 8, 8, 4, 4, 3, 3, 3, 0, 1, 1, 1, 1, 1, 1, 1, 1), conv::ProblemSizeError);
}

TEST(ConvTiledShape, SwizzleOverloadsUseTheImplicitGemm) {
  using S = GemmIdentityThreadblockSwizzle<4>;
  Conv2dProblemSize const p(1, 56, 56, 64, 128, 3, 3, 1, 1, 2, 2, 1, 1);
  GemmCoord const tile(128, 128, 32);
  EXPECT_EQ(S::get_tiled_shape(Operator::kFprop, p, tile, 1), GemmCoord(7, 1, 1));   // (784, 128, 576)
  EXPECT_EQ(S::get_tiled_shape(Operator::kDgrad, p, tile, 2), GemmCoord(25, 1, 2));  // (3136, 64, 1152)
  EXPECT_EQ(S::get_tiled_shape(Operator::kWgrad, p, tile, 3), GemmCoord(1, 5, 3));   // (128, 576, 784)
  Conv3dProblemSize const q(2, 8, 16, 16, 32, 64, 3, 3, 3, 1, 1, 1, 1, 1, 1);
  EXPECT_EQ(S::get_tiled_shape(Operator::kFprop, q, tile, 1), GemmCoord(32, 1, 1));  // (4096, 64, 864)
  EXPECT_EQ(S::get_tiled_shape(Operator::kWgrad, q, tile, 1), GemmCoord(1, 7, 1));   // (64, 864, 4096)
  EXPECT_STREQ(conv::to_string(Operator::kDgrad), "dgrad");
}

}  // namespace
