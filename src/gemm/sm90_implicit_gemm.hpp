// src/gemm/sm90_implicit_gemm.hpp -- the sm_90a GEMM's host side for a kernel whose operands are
// not matrices: an implicit-GEMM convolution (src/conv/sm90_implicit_conv.cuh) brings its kernel
// (an Sm90GemmConfig with an Im2col operand), the tensor maps of A and B (one of them the
// activations' im2col map), and the im2col geometry; GemmArguments say the rest -- M, N, K, D, C, alpha, beta,
// the fused epilogue, options -- and the GEMM's host side does what it does for any call: the
// schedule, split-K or the split tail, the epilogue's path, the workspace.
#pragma once

#include "sm90_instances.hpp"

#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/core/dtype.hpp>
#include <tessel/core/status.hpp>
#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/gemm/kernel/sm90_gemm_params.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>

namespace tessel::detail {

struct Sm90ImplicitOperands {
  TmaDescriptor a, b;       // A's and B's tensor maps (kernel/sm90_gemm_params.hpp, Sm90Im2col, says which is what)
  bool a_mn_major = false;  // A's rows are contiguous (the weight gradient's dy^T)
  bool b_mn_major = false;  // B's columns are contiguous (the data and weight gradients)
  // The kernel computes GemmArguments' canonical D transposed (its A holds D's columns, its B D's
  // rows: the pixels as B) and writes it transposed (Sm90GemmParams::d_transposed).
  bool transposed = false;
  kernel::Sm90Im2col im2col;
};

// Runs g on kernel t (inputs of type ab) with the operands `ops`; query non-null: store the
// workspace bytes the call takes there and launch nothing. Pre: g is a row-major D (c_order
// row_major) of the GEMM the geometry describes, batch 1, a 16-bit D and C.
Status sm90_implicit_gemm_run(kernel::detail::Sm90Instance const& t, DType ab, GemmArguments const& g,
                              Sm90ImplicitOperands const& ops, std::size_t* query, cudaStream_t stream);

}  // namespace tessel::detail
