// tessel/conv/conv3d_problem_size.hpp -- the sizes of a 3-D convolution.
//
// Activations NDHWC, filters KTRSC, output NZPQK, with per-dimension padding, stride and
// dilation. Each output extent follows the usual formula
//   Z = floor((D + 2*pad_d - (dilation_d*(T-1) + 1)) / stride_d) + 1   (P from H, R; Q from W, S)
//   Pre:  N, D, H, W, C, K, T, R, S >= 1; pad >= 0; stride >= 1; dilation >= 1; and each dilated
//         filter extent fits its padded input, so Z, P, Q >= 1. A violation throws
//         conv::ProblemSizeError on the host, naming the rule and the fix.
//   e.g.  Conv3dProblemSize(1, 8, 16, 16, 32, 64, 3, 3, 3, 1, 1, 1, 1, 1, 1) has Z, P, Q == 8, 16, 16.
#pragma once

#include <tessel/config.hpp>
#include <tessel/conv/problem_size_error.hpp>

namespace tessel::conv {

// Conv3dProblemSize: the extents of a 3-D convolution (cross-correlation, no groups). Z, P and
// Q are computed, never passed.
struct Conv3dProblemSize {
  long long N, D, H, W, C;               // activations
  long long K, T, R, S;                  // filters: K output channels of T x R x S x C
  long long Z, P, Q;                     // output depth, height and width (computed)
  long long pad_d, pad_h, pad_w;
  long long stride_d, stride_h, stride_w;
  long long dilation_d, dilation_h, dilation_w;

  // Pre/Post: see the file comment. Throws ProblemSizeError on the host for impossible sizes.
  TESSEL_HOST_DEVICE constexpr Conv3dProblemSize(long long n, long long d, long long h, long long w, long long c,
                                                 long long k, long long t, long long r, long long s,
                                                 long long pad_d_, long long pad_h_, long long pad_w_,
                                                 long long stride_d_, long long stride_h_, long long stride_w_,
                                                 long long dilation_d_ = 1, long long dilation_h_ = 1,
                                                 long long dilation_w_ = 1)
      : N(n), D(d), H(h), W(w), C(c), K(k), T(t), R(r), S(s), Z(0), P(0), Q(0), pad_d(pad_d_), pad_h(pad_h_),
        pad_w(pad_w_), stride_d(stride_d_), stride_h(stride_h_), stride_w(stride_w_), dilation_d(dilation_d_),
        dilation_h(dilation_h_), dilation_w(dilation_w_) {
    detail::problem_size_require(n >= 1, "Conv3dProblemSize: batch N = ", n, " must be >= 1");
    detail::problem_size_require(c >= 1, "Conv3dProblemSize: input channels C = ", c, " must be >= 1");
    detail::problem_size_require(k >= 1, "Conv3dProblemSize: output channels K = ", k, " must be >= 1");
    Z = detail::output_extent("Conv3dProblemSize", "D", "T", "Z", d, t, pad_d_, stride_d_, dilation_d_);
    P = detail::output_extent("Conv3dProblemSize", "H", "R", "P", h, r, pad_h_, stride_h_, dilation_h_);
    Q = detail::output_extent("Conv3dProblemSize", "W", "S", "Q", w, s, pad_w_, stride_w_, dilation_w_);
  }

  TESSEL_HOST_DEVICE friend constexpr bool operator==(Conv3dProblemSize const&, Conv3dProblemSize const&) = default;
};

}  // namespace tessel::conv
