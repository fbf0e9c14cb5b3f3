// apps/tessel/conv_baseline.cpp -- cuDNN's convolution on tessel's ConvArguments (conv_baseline.hpp).
#if defined(TESSEL_HAS_CUDA) && defined(TESSEL_HAS_CUDNN)

#include "conv_baseline.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace tessel::cli {

using tessel::ConvArguments;
using tessel::DType;
using tessel::conv::Operator;

void cudnn_check(cudnnStatus_t s, char const* what) {
  if (s != CUDNN_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": " + cudnnGetErrorString(s));
}

namespace {

// The names cudnn.h gives the algorithms (cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t).
char const* algo_name(Operator op, int algo) {
  static char const* const fwd[] = {"implicit GEMM", "implicit precomp GEMM", "GEMM", "direct",
                                    "FFT", "FFT tiling", "Winograd", "Winograd nonfused"};
  static char const* const data[] = {"algo 0", "algo 1", "FFT", "FFT tiling", "Winograd", "Winograd nonfused"};
  static char const* const filter[] = {"algo 0", "algo 1", "FFT", "algo 3", "Winograd", "Winograd nonfused", "FFT tiling"};
  auto pick = [&](auto const& names) { return algo >= 0 && algo < int(std::size(names)) ? names[algo] : "?"; };
  return op == Operator::kFprop ? pick(fwd) : op == Operator::kDgrad ? pick(data) : pick(filter);
}

// Whether a's tensors are packed NHWC / NDHWC (the descriptors cudnnSetTensorNdDescriptorEx makes).
bool packed(ConvArguments const& a) {
  ConvArguments const p = a.spatial_dims == 3
                              ? tessel::make_packed_conv3d(a.op, a.n, a.d, a.h, a.w, a.c, a.k, a.t, a.r, a.s,
                                                           {a.pad_d, a.pad_h, a.pad_w}, {a.stride_d, a.stride_h, a.stride_w},
                                                           {a.dilation_d, a.dilation_h, a.dilation_w}, a.groups, a.dtype)
                              : tessel::make_packed_conv2d(a.op, a.n, a.h, a.w, a.c, a.k, a.r, a.s, {a.pad_h, a.pad_w},
                                                           {a.stride_h, a.stride_w}, {a.dilation_h, a.dilation_w}, a.groups,
                                                           a.dtype);
  auto same = [](tessel::ConvTensor const& u, tessel::ConvTensor const& v, std::int64_t n, std::int64_t d) {
    return (n <= 1 || u.stride_n == v.stride_n) && (d <= 1 || u.stride_d == v.stride_d) && u.stride_h == v.stride_h &&
           u.stride_w == v.stride_w;
  };
  tessel::ConvOutputExtents const e = tessel::conv_output_extents(a);
  return same(a.x, p.x, a.n, a.d) && same(a.y, p.y, a.n, e.z) && (a.k <= 1 || a.filter.stride_k == p.filter.stride_k);
}

}  // namespace

CudnnConv::CudnnConv(cudnnHandle_t h, ConvArguments const& a) : h_(h) {
  if (!packed(a)) {
    why_ = "cuDNN: the baseline runs packed NHWC tensors only";
    return;
  }
  cudnnDataType_t const t = a.dtype == DType::bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
  bool const three = a.spatial_dims == 3;
  int const nb = three ? 5 : 4;
  tessel::ConvOutputExtents const e = tessel::conv_output_extents(a);
  // Dimensions in cuDNN's order (N, C, [D,] H, W); the NHWC format sets the strides.
  std::vector<int> xd = {int(a.n), int(a.c)}, yd = {int(a.n), int(a.k)}, wd = {int(a.k), int(a.c / a.groups)};
  std::vector<int> pad, stride, dil;
  if (three) {
    xd.push_back(int(a.d)), yd.push_back(int(e.z)), wd.push_back(int(a.t));
    pad.push_back(int(a.pad_d)), stride.push_back(int(a.stride_d)), dil.push_back(int(a.dilation_d));
  }
  xd.insert(xd.end(), {int(a.h), int(a.w)});
  yd.insert(yd.end(), {int(e.p), int(e.q)});
  wd.insert(wd.end(), {int(a.r), int(a.s)});
  pad.insert(pad.end(), {int(a.pad_h), int(a.pad_w)});
  stride.insert(stride.end(), {int(a.stride_h), int(a.stride_w)});
  dil.insert(dil.end(), {int(a.dilation_h), int(a.dilation_w)});

  cudnn_check(cudnnCreateTensorDescriptor(&x_), "cudnnCreateTensorDescriptor");
  cudnn_check(cudnnCreateTensorDescriptor(&y_), "cudnnCreateTensorDescriptor");
  cudnn_check(cudnnCreateFilterDescriptor(&w_), "cudnnCreateFilterDescriptor");
  cudnn_check(cudnnCreateConvolutionDescriptor(&conv_), "cudnnCreateConvolutionDescriptor");
  cudnn_check(cudnnSetTensorNdDescriptorEx(x_, CUDNN_TENSOR_NHWC, t, nb, xd.data()), "x descriptor");
  cudnn_check(cudnnSetTensorNdDescriptorEx(y_, CUDNN_TENSOR_NHWC, t, nb, yd.data()), "y descriptor");
  cudnn_check(cudnnSetFilterNdDescriptor(w_, t, CUDNN_TENSOR_NHWC, nb, wd.data()), "filter descriptor");
  cudnn_check(cudnnSetConvolutionNdDescriptor(conv_, nb - 2, pad.data(), stride.data(), dil.data(),
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
              "convolution descriptor");
  cudnn_check(cudnnSetConvolutionMathType(conv_, CUDNN_TENSOR_OP_MATH), "cudnnSetConvolutionMathType");
  cudnn_check(cudnnSetConvolutionGroupCount(conv_, int(a.groups)), "cudnnSetConvolutionGroupCount");
  // cuDNN's output extents must be tessel's (one formula, two implementations).
  std::vector<int> out(std::size_t(nb), 0);
  cudnn_check(cudnnGetConvolutionNdForwardOutputDim(conv_, x_, w_, nb, out.data()), "cudnnGetConvolutionNdForwardOutputDim");
  if (out != yd) why_ = "cuDNN: its output extents differ from tessel's";
}

CudnnConv::~CudnnConv() {
  if (conv_) cudnnDestroyConvolutionDescriptor(conv_);
  if (w_) cudnnDestroyFilterDescriptor(w_);
  if (y_) cudnnDestroyTensorDescriptor(y_);
  if (x_) cudnnDestroyTensorDescriptor(x_);
}

void CudnnConv::find(ConvArguments const& a, cudaStream_t stream) {
  if (!why_.empty()) return;
  cudnn_check(cudnnSetStream(h_, stream), "cudnnSetStream");
  std::size_t free_bytes = 0, total = 0;
  cuda_check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
  std::size_t const ws = std::min(kMaxWorkspace, free_bytes / 4);
  DeviceBuffer trial(ws);
  constexpr int kMaxAlgos = 16;
  int found = 0;
  struct Pick {
    int algo = -1;
    std::size_t memory = 0;
  } best;
  cudnnStatus_t st;
  switch (a.op) {
    case Operator::kFprop: {
      cudnnConvolutionFwdAlgoPerf_t perf[kMaxAlgos];
      st = cudnnFindConvolutionForwardAlgorithmEx(h_, x_, a.x.ptr, w_, a.filter.ptr, conv_, y_, a.out, kMaxAlgos, &found,
                                                  perf, trial.p, ws);
      for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < found && best.algo < 0; ++i)
        if (perf[i].status == CUDNN_STATUS_SUCCESS) best = {int(perf[i].algo), perf[i].memory};
      break;
    }
    case Operator::kDgrad: {
      cudnnConvolutionBwdDataAlgoPerf_t perf[kMaxAlgos];
      st = cudnnFindConvolutionBackwardDataAlgorithmEx(h_, w_, a.filter.ptr, y_, a.y.ptr, conv_, x_, a.out, kMaxAlgos,
                                                       &found, perf, trial.p, ws);
      for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < found && best.algo < 0; ++i)
        if (perf[i].status == CUDNN_STATUS_SUCCESS) best = {int(perf[i].algo), perf[i].memory};
      break;
    }
    default: {
      cudnnConvolutionBwdFilterAlgoPerf_t perf[kMaxAlgos];
      st = cudnnFindConvolutionBackwardFilterAlgorithmEx(h_, x_, a.x.ptr, y_, a.y.ptr, conv_, w_, a.out, kMaxAlgos,
                                                         &found, perf, trial.p, ws);
      for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < found && best.algo < 0; ++i)
        if (perf[i].status == CUDNN_STATUS_SUCCESS) best = {int(perf[i].algo), perf[i].memory};
      break;
    }
  }
  if (st != CUDNN_STATUS_SUCCESS || best.algo < 0) {
    why_ = std::string("cuDNN: no algorithm runs this problem (") +
           (st != CUDNN_STATUS_SUCCESS ? cudnnGetErrorString(st) : "every one failed") + ")";
    return;
  }
  algo_ = best.algo;
  workspace_bytes_ = best.memory;
  trial = DeviceBuffer();
  workspace_ = DeviceBuffer(workspace_bytes_);
  char const* const kind = a.op == Operator::kFprop ? "fwd" : a.op == Operator::kDgrad ? "bwd data" : "bwd filter";
  algo_text_ = std::string(kind) + " " + algo_name(a.op, algo_) + ", " + std::to_string(workspace_bytes_ >> 20) +
               " MiB workspace";
}

void CudnnConv::run(ConvArguments const& a, void* out, cudaStream_t stream) const {
  if (algo_ < 0) throw std::runtime_error("cuDNN: run before find");
  cudnn_check(cudnnSetStream(h_, stream), "cudnnSetStream");
  float const alpha = a.alpha, beta = a.beta;
  cudnnStatus_t st;
  switch (a.op) {
    case Operator::kFprop:
      st = cudnnConvolutionForward(h_, &alpha, x_, a.x.ptr, w_, a.filter.ptr, conv_, cudnnConvolutionFwdAlgo_t(algo_),
                                   workspace_.p, workspace_bytes_, &beta, y_, out);
      break;
    case Operator::kDgrad:
      st = cudnnConvolutionBackwardData(h_, &alpha, w_, a.filter.ptr, y_, a.y.ptr, conv_,
                                        cudnnConvolutionBwdDataAlgo_t(algo_), workspace_.p, workspace_bytes_, &beta, x_,
                                        out);
      break;
    default:
      st = cudnnConvolutionBackwardFilter(h_, &alpha, x_, a.x.ptr, y_, a.y.ptr, conv_,
                                          cudnnConvolutionBwdFilterAlgo_t(algo_), workspace_.p, workspace_bytes_, &beta,
                                          w_, out);
      break;
  }
  cudnn_check(st, "cuDNN convolution");
}

}  // namespace tessel::cli

#endif  // TESSEL_HAS_CUDA && TESSEL_HAS_CUDNN
