// tessel/reference/conv_device.hpp -- the fp64 convolution reference on the GPU and its judge.
//
// The reference evaluates conv_arguments.hpp's definitions directly, one output element at a
// time (no im2col, no implicit GEMM): fprop walks the element's taps and input channels, dgrad the
// taps and the output channels of its group and keeps the (z, p, q) that land on it, wgrad the
// whole batch's output pixels. Products of the bf16/fp16 inputs are exact in fp64 and their sum's
// relative error is below L * 2^-53 (L terms, L < 2^31), far below the tolerance. Per element it writes
//   R = act(alpha * sum + beta * residual + bias)                    (alpha = 0: the sum is not read;
//                                                                      beta = 0: the residual is not)
//   S = slope(act) * (|alpha| * sum |products| + |beta * residual| + |bias|)
// in out's element order, packed. S is the scale of the error a kernel may make: with the
// activation's slope bounded (conv_activation.hpp), |act(z') - act(z)| <= slope * |z' - z|.
//
// The judge (element_error of gemm_check.hpp): an element's error is |D - R| / S; a non-finite R
// must be matched exactly (NaN by NaN, +-inf by itself) and a non-finite D where R is finite is an
// infinite error, so NaN never passes where the reference is finite. The tolerance,
// conv_tolerance, is gemm_tolerance (gemm_check.hpp) with the sum's length L: 8 sqrt(L) units of
// fp32 roundoff for the accumulation (fp32 MMA accumulators) plus two units of the output dtype
// (2^-8 bf16, 2^-11 fp16: the rounding of out, and of the epilogue's fp32 arithmetic folded in).
// L is t*r*s*c/groups (fprop), k/groups*t*r*s (dgrad) or n*z*p*q (wgrad).
// Implemented in src/conv/reference_conv.cu (tessel::kernels). Streams are cudaStream_t (declared
// as CUstream_st* so that this header needs no CUDA headers).
#pragma once

#include <tessel/conv/conv_arguments.hpp>
#include <tessel/core/status.hpp>
#include <tessel/reference/gemm_check.hpp>

#include <cstdint>
#include <string>

struct CUstream_st;

namespace tessel::reference {

// The number of output elements (the length of the reference's r and scale).
std::int64_t conv_output_elements(ConvArguments const& a);

// The length of each output element's sum: t*r*s*c/groups, k/groups*t*r*s, or n*z*p*q.
std::int64_t conv_sum_length(ConvArguments const& a);

// gemm_tolerance(dtype, dtype, conv_sum_length(a)) (see the file comment).
double conv_tolerance(ConvArguments const& a);

// r, scale: device buffers of conv_output_elements(a) doubles. Pre: conv_validate(a) passed
// (checked: its refusal is returned). Reads the inputs (and residual, bias); writes nothing of
// a.out. Asynchronous on `stream`.
Status conv_device(ConvArguments const& a, double* r, double* scale, CUstream_st* stream = nullptr);

struct ConvCheck {
  double tolerance = 0.0;
  double max_rel_err = 0.0;  // max element_error (inf after a non-finite mismatch)
  std::int64_t bad = 0;      // elements with element_error > tolerance
  std::int64_t checked = 0;  // elements judged
  std::string first_bad;     // "y[n 0, z 0, p 3, q 4, k 17]" -- its coordinate, or empty
  double first_bad_value = 0.0, first_bad_expected = 0.0;

  bool passed() const { return bad == 0; }
  // "ok: max rel err 3.1e-07 (tol 7.9e-03)" or "FAILED: 12 bad elements, first y[...]: got .. expected .."
  std::string describe() const;
};

// Judge a.out (dtype a.dtype, the strides of the pass's output tensor) against r and scale as
// conv_device writes them. Returns success when the check ran, whatever its verdict (out->passed());
// an error only when it could not run. Synchronizes `stream`.
Status check_conv(ConvArguments const& a, double const* r, double const* scale, double tolerance, ConvCheck* out,
                  CUstream_st* stream = nullptr);

}  // namespace tessel::reference
