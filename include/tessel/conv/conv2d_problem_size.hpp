// tessel/conv/conv2d_problem_size.hpp -- the sizes of a 2-D convolution.
//
// Activations NHWC, filters KRSC, output NPQK, with per-dimension padding, stride and dilation.
// The output extents follow the usual formula
//   P = floor((H + 2*pad_h - (dilation_h*(R-1) + 1)) / stride_h) + 1      (Q likewise from W, S)
//   Pre:  N, H, W, C, K, R, S >= 1; pad >= 0; stride >= 1; dilation >= 1; and the dilated filter
//         fits the padded input (dilation_h*(R-1)+1 <= H + 2*pad_h, same for W), so P, Q >= 1.
//         A violation throws conv::ProblemSizeError on the host, naming the rule and the fix.
//   e.g.  Conv2dProblemSize(1, 56, 56, 64, 128, 3, 3, 1, 1, 2, 2, 1, 1) has P == Q == 28.
#pragma once

#include <tessel/config.hpp>
#include <tessel/conv/problem_size_error.hpp>

namespace tessel::conv {

// Conv2dProblemSize: the extents of a 2-D convolution (cross-correlation, no groups). The
// members are public, named as in CUTLASS and cuDNN; P and Q are computed, never passed.
struct Conv2dProblemSize {
  long long N, H, W, C;                  // activations
  long long K, R, S;                     // filters: K output channels of R x S x C
  long long P, Q;                        // output height and width (computed)
  long long pad_h, pad_w;
  long long stride_h, stride_w;
  long long dilation_h, dilation_w;

  // Pre/Post: see the file comment. Throws ProblemSizeError on the host for impossible sizes.
  TESSEL_HOST_DEVICE constexpr Conv2dProblemSize(long long n, long long h, long long w, long long c, long long k,
                                                 long long r, long long s, long long pad_h_, long long pad_w_,
                                                 long long stride_h_, long long stride_w_,
                                                 long long dilation_h_ = 1, long long dilation_w_ = 1)
      : N(n), H(h), W(w), C(c), K(k), R(r), S(s), P(0), Q(0), pad_h(pad_h_), pad_w(pad_w_), stride_h(stride_h_),
        stride_w(stride_w_), dilation_h(dilation_h_), dilation_w(dilation_w_) {
    detail::problem_size_require(n >= 1, "Conv2dProblemSize: batch N = ", n, " must be >= 1");
    detail::problem_size_require(c >= 1, "Conv2dProblemSize: input channels C = ", c, " must be >= 1");
    detail::problem_size_require(k >= 1, "Conv2dProblemSize: output channels K = ", k, " must be >= 1");
    P = detail::output_extent("Conv2dProblemSize", "H", "R", "P", h, r, pad_h_, stride_h_, dilation_h_);
    Q = detail::output_extent("Conv2dProblemSize", "W", "S", "Q", w, s, pad_w_, stride_w_, dilation_w_);
  }

  TESSEL_HOST_DEVICE friend constexpr bool operator==(Conv2dProblemSize const&, Conv2dProblemSize const&) = default;
};

}  // namespace tessel::conv
