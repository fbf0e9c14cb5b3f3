// src/conv/conv_output_view.hpp -- the output tensor of a convolution pass as four strided outer
// dimensions and contiguous channels, and its packed element order:
//   fprop  y  [n][z][p][q][k]         strides y's
//   dgrad  dx [n][d][h][w][c]         strides x's
//   wgrad  dw [k][t][r][s][c/groups]  strides (filter.stride_k, r*s*c/g, s*c/g, c/g)
// Element idx of the packed order is at coordinate (i0, i1, i2, i3, ch), channel fastest, and at
// element offset i0*stride[0] + i1*stride[1] + i2*stride[2] + i3*stride[3] + ch of out.
//   e.g. fprop, y [2][1][3][3][4] packed (strides 36, 36, 12, 4): idx 13 is (0, 0, 1, 0, 1), offset 12 + 1.
// Used by the reference's judge and by the epilogue-only path of convolution().
#pragma once

#include <tessel/config.hpp>
#include <tessel/conv/conv_arguments.hpp>

#include <cstdint>

namespace tessel::detail {

struct ConvOutputCoord {
  std::int64_t i[4];  // (n, z|d, p|h, q|w) or (k, t, r, s)
  std::int64_t ch;    // the channel: k (fprop), c (dgrad) or c within the group (wgrad)
};

struct ConvOutputView {
  std::int64_t extent[4], channels;
  std::int64_t stride[4];

  TESSEL_HOST_DEVICE std::int64_t elements() const {
    return extent[0] * extent[1] * extent[2] * extent[3] * channels;
  }
  TESSEL_HOST_DEVICE ConvOutputCoord coord(std::int64_t idx) const {
    ConvOutputCoord c{};
    c.ch = idx % channels, idx /= channels;
    for (int j = 3; j > 0; --j) c.i[j] = idx % extent[j], idx /= extent[j];
    c.i[0] = idx;
    return c;
  }
  TESSEL_HOST_DEVICE std::int64_t offset(ConvOutputCoord const& c) const {
    return c.i[0] * stride[0] + c.i[1] * stride[1] + c.i[2] * stride[2] + c.i[3] * stride[3] + c.ch;
  }
};

// The output view of a's pass. Pre: conv_validate(a) passed.
inline ConvOutputView conv_output_view(ConvArguments const& a) {
  ConvOutputExtents const e = conv_output_extents(a);
  std::int64_t const cg = a.c / a.groups;
  switch (a.op) {
    case conv::Operator::kFprop:
      return {{a.n, e.z, e.p, e.q}, a.k, {a.y.stride_n, a.y.stride_d, a.y.stride_h, a.y.stride_w}};
    case conv::Operator::kDgrad:
      return {{a.n, a.d, a.h, a.w}, a.c, {a.x.stride_n, a.x.stride_d, a.x.stride_h, a.x.stride_w}};
    case conv::Operator::kWgrad:
      return {{a.k, a.t, a.r, a.s}, cg, {a.filter.stride_k, a.r * a.s * cg, a.s * cg, cg}};
  }
  return {};
}

}  // namespace tessel::detail
