// tessel/conv/conv.hpp -- the convolution host API: fprop, dgrad and wgrad, 2-D and 3-D.
//
//   tessel::ConvArguments a = tessel::make_packed_conv2d(tessel::conv::Operator::kFprop,
//                                                        128, 56, 56, 64, 64, 3, 3, {1, 1});
//   a.x.ptr = dX; a.filter.ptr = dW; a.out = dY;                     // device pointers
//   a.bias = dBias; a.activation = tessel::ConvActivation::relu;    // optional epilogue
//   if (tessel::Status s = tessel::convolution(a, stream); !s) std::fprintf(stderr, "%s\n", s.reason.c_str());
//
// (The entry point is `convolution`: `tessel::conv` is the namespace of the problem sizes and
// conv::Operator.) convolution() validates (conv_validate.hpp: every refusal names the argument and the rule), returns at
// once when out is empty, writes out = act(beta * residual + bias) with a small elementwise kernel
// when the sums are empty or alpha = 0 (neither input is read), and otherwise launches the kernel
// the library picks for the GPU and the problem. A named kernel (ConvArguments::kernel) must be
// the one the library picks for the problem; it is refused otherwise. It never launches a kernel
// on a GPU older than the kernels' architecture (StatusCode::arch_mismatch). The launch is
// asynchronous on `stream`, takes no workspace and does not synchronise; launch errors and errors
// left pending by earlier work come back as StatusCode::cuda_error.
// Streams are cudaStream_t (declared here as CUstream_st* so this header needs no CUDA headers).
#pragma once

#include <tessel/conv/conv_arguments.hpp>
#include <tessel/conv/conv_validate.hpp>
#include <tessel/core/status.hpp>

struct CUstream_st;

namespace tessel {

// Whether convolution(args) would run: the argument rules, a kernel that takes the problem, and a GPU of
// its architecture. Makes no launch.
Status can_implement(ConvArguments const& args);

// The registry name of the kernel convolution(args) would run (or "epilogue-only" / "none" for the
// calls that need no convolution kernel). The argument rules first; no CUDA call (it answers on
// a machine without a GPU).
Status conv_kernel_name(ConvArguments const& args, char const** name);

// out for the pass args.op (conv_arguments.hpp has the definitions) on `stream`.
Status convolution(ConvArguments const& args, CUstream_st* stream = nullptr);

// The registry: every convolution kernel's name and what it runs, in the order `tessel list`
// prints. The names are those conv_kernel_name gives: each entry lists the problems of a fixed
// probe set (every pass, both dtypes, aligned, small, odd and grouped channels, 3-D) that it runs.
struct ConvKernelInfo {
  char const* name;
  char const* description;
  int min_sm;  // the lowest compute capability (major * 10 + minor) it runs on
};
int conv_kernel_count();
ConvKernelInfo conv_kernel_info(int i);

}  // namespace tessel
