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
// the library picks for the GPU and the problem:
//   - a 1x1 convolution at stride 1 without padding, groups 1, evenly strided pixel rows and no
//     bias or activation is one GEMM (conv_as_gemm.hpp) and runs through tessel::gemm
//     (gemm/device/gemm.hpp) where the GEMM API has a kernel for it; its name is "gemm:" + that
//     GEMM kernel's (a bias or an activation keeps it on the convolution kernels, which fuse them);
//   - a groups-1 problem whose channel counts (or strides, or addresses) the aligned kernels cannot
//     read 16 bytes at a time runs on copies in the workspace with its channels rounded up and
//     zero-filled, then its output is copied back (conv_padded.hpp); its name is "padded:" + the
//     aligned kernel's;
//   - otherwise a convolution kernel; a wgrad with few output tiles splits its reduction over the
//     SMs (conv_split.hpp): fp32 partial sums in a workspace, then a second kernel adds them in a
//     fixed order (the same bits on every run on one GPU) and applies the epilogue.
// A named kernel (ConvArguments::kernel) must be the one the library picks for the problem, or
// the sm_80 convolution kernel where the library picks another route; it is refused otherwise. It
// never launches a kernel on a GPU older than the kernels' architecture
// (StatusCode::arch_mismatch). The launch is asynchronous on `stream` and does not synchronise;
// launch errors and errors left pending by earlier work come back as StatusCode::cuda_error.
// Workspace (cuBLAS's and cuDNN's practice): conv_workspace_size says how much scratch a call
// takes (0 for most); the caller passes that much as ConvArguments::workspace/workspace_bytes, or
// leaves workspace null and the call takes it from the library's stream-ordered pool
// (cudaMallocFromPoolAsync / cudaFreeAsync on `stream`: nothing synchronises; the pool keeps its
// memory between calls). A CUDA graph capture or a framework allocator passes its own.
// Streams are cudaStream_t (declared here as CUstream_st* so this header needs no CUDA headers).
#pragma once

#include <tessel/conv/conv_arguments.hpp>
#include <tessel/conv/conv_validate.hpp>
#include <tessel/core/status.hpp>

#include <cstddef>

struct CUstream_st;

namespace tessel {

// Whether convolution(args) would run: the argument rules, a kernel that takes the problem, and a GPU of
// its architecture. Makes no launch.
Status can_implement(ConvArguments const& args);

// The registry name of the kernel convolution(args) would run (or "epilogue-only" / "none" for the
// calls that need no convolution kernel; "gemm:<GEMM kernel>" for a 1x1 convolution the GEMM API
// runs; "padded:<kernel>" for the padded route). The argument rules first; launches nothing. It reads the current device's compute
// capability and SM count (the choice depends on the GPU) and answers on a machine without a GPU
// too, as for an sm_80-class GPU.
Status conv_kernel_name(ConvArguments const& args, char const** name);

// The scratch bytes convolution(args) takes on the current device: the fp32 partial sums of a
// split wgrad reduction, what the GEMM API takes for a 1x1 convolution it runs
// (gemm_workspace_size), or the padded route's channel-padded copies and its kernel's own
// scratch; 0 for most calls. Launches nothing and enqueues nothing; needs the GPU
// (StatusCode::no_device without one) where the answer depends on it.
Status conv_workspace_size(ConvArguments const& args, std::size_t* bytes);

// out for the pass args.op (conv_arguments.hpp has the definitions) on `stream`.
Status convolution(ConvArguments const& args, CUstream_st* stream = nullptr);

// The registry: every convolution kernel's name and what it runs, in the order `tessel list`
// prints. The names are those conv_kernel_name gives: each entry lists the problems of a fixed
// probe set (every pass, both dtypes, aligned, small, odd and grouped channels, 3-D) that it runs.
// The GEMM API's kernels are not entries (`tessel list` lists them with the GEMMs); a name
// "gemm:<GEMM kernel>" is accepted wherever a registry name is.
struct ConvKernelInfo {
  char const* name;
  char const* description;
  int min_sm;  // the lowest compute capability (major * 10 + minor) it runs on
};
int conv_kernel_count();
ConvKernelInfo conv_kernel_info(int i);

}  // namespace tessel
