// apps/tessel/conv_baseline.hpp -- cuDNN's convolution on the same ConvArguments as tessel's:
// the legacy API (cudnnConvolutionForward / BackwardData / BackwardFilter), NHWC tensor and filter
// descriptors, groups through cudnnSetConvolutionGroupCount, tensor-op math with fp32 compute, and
// the fastest algorithm cuDNN measures for the problem (cudnnFind*AlgorithmEx, as
// torch.backends.cudnn.benchmark does) with the workspace it asks for.
//
// cuDNN computes out = alpha * conv + beta * out, in place: with beta != 0 out holds the residual
// on entry (the caller copies it there). It has no fused bias or activation in this API: the
// caller runs it without them and says so.
//   CudnnConv c(handle, args);                       // descriptors; c.why() when cuDNN cannot
//   c.find(args, stream);                            // times cuDNN's algorithms on args's buffers (writes out)
//   c.run(args, out, stream);                        // one convolution into out
// Built only where CMake found cuDNN (TESSEL_HAS_CUDNN).
#pragma once

#if defined(TESSEL_HAS_CUDA) && defined(TESSEL_HAS_CUDNN)

#include "measure.hpp"

#include <tessel/conv/conv_arguments.hpp>

#include <cudnn.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

namespace tessel::cli {

// Throws std::runtime_error "<what>: <cuDNN error string>" when s is not CUDNN_STATUS_SUCCESS.
void cudnn_check(cudnnStatus_t s, char const* what);

class CudnnConv {
 public:
  // The largest workspace cudnnFind*AlgorithmEx may give an algorithm (capped by free memory).
  static constexpr std::size_t kMaxWorkspace = std::size_t(1) << 30;

  CudnnConv(cudnnHandle_t h, tessel::ConvArguments const& a);
  ~CudnnConv();
  CudnnConv(CudnnConv const&) = delete;
  CudnnConv& operator=(CudnnConv const&) = delete;

  // Empty when cuDNN can run the problem, else why not (one line for the report).
  std::string const& why() const { return why_; }
  // The algorithm chosen by find(), e.g. "fwd algo 1 (implicit precomp GEMM), 0 MiB workspace".
  std::string const& algorithm() const { return algo_text_; }

  // Times cuDNN's algorithms on a's buffers (it writes a.out) and keeps the fastest that succeeds,
  // with its workspace. Sets why() when none does.
  void find(tessel::ConvArguments const& a, cudaStream_t stream);

  // One convolution of a's inputs into `out` (out's layout is a's output's), on `stream`.
  void run(tessel::ConvArguments const& a, void* out, cudaStream_t stream) const;

 private:
  cudnnHandle_t h_;
  std::string why_, algo_text_;
  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  int algo_ = -1;
  DeviceBuffer workspace_;
  std::size_t workspace_bytes_ = 0;
};

}  // namespace tessel::cli

#endif  // TESSEL_HAS_CUDA && TESSEL_HAS_CUDNN
