// tessel/gemm/device/grouped_gemm.hpp -- the grouped GEMM host API (mixture-of-experts layers).
//
//   tessel::GroupedGemmArguments g = tessel::make_grouped_gemm(experts, tokens, n, k, DType::bf16, DType::bf16);
//   g.a = dX; g.b = dW; g.d = dY; g.offsets = dOffsets;   // device pointers; offsets: G cumulative row ends
//   if (tessel::Status s = tessel::grouped_gemm(g, stream); !s) std::fprintf(stderr, "%s\n", s.reason.c_str());
//
// The contiguous form (grouped_gemm_arguments.hpp has the layout and the rules) runs every group
// in ONE persistent sm_90a launch (kernel/sm90_grouped_gemm.hpp; docs/grouped_gemm.md), which
// reads the offsets on the device: the call never synchronises with the host, and it may be
// captured in a CUDA graph. It needs an sm_90 GPU (else arch_mismatch) and TMA-readable A and B
// (16-byte aligned bases and rows; else not_supported, with the fix). total_m or N = 0 is a
// no-op; K = 0 or alpha = 0 gives D = beta * C without reading A or B.
//
// The array form runs each non-empty group as its own tessel::gemm call on `stream` (one launch
// per group, any GPU, any alignment): the groups' tensor maps would need their pointers on the
// host anyway, and this form's sizes are host arrays.
#pragma once

#include <tessel/core/status.hpp>
#include <tessel/gemm/device/grouped_gemm_arguments.hpp>

#include <cuda_runtime_api.h>

namespace tessel {

// Whether grouped_gemm(args) would run here: the argument rules, an sm_90 device, the kernel's image.
Status can_implement(GroupedGemmArguments const& args);

// The contiguous form (see the file comment). Asynchronous on `stream`; launch errors and errors
// left pending by earlier work are returned as StatusCode::cuda_error.
Status grouped_gemm(GroupedGemmArguments const& args, cudaStream_t stream = nullptr);

// The array form (see the file comment).
Status grouped_gemm(GroupedGemmArrayArguments const& args, cudaStream_t stream = nullptr);

}  // namespace tessel
