// src/runtime/tma_encode_entry.hpp -- the driver's cuTensorMapEncodeTiled and cuTensorMapEncodeIm2col, reached through the CUDA
// runtime (cudaGetDriverEntryPointByVersion), so tessel::kernels needs no link against libcuda.
// Shared by the TMA descriptor maker (tma_descriptor.cpp) and the sm90 GEMM's host side.
#pragma once

#include <tessel/core/status.hpp>

#include <cuda.h>

namespace tessel::detail {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, cuuint64_t const*,
                                 cuuint64_t const*, cuuint32_t const*, cuuint32_t const*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

using EncodeIm2col = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, cuuint64_t const*,
                                  cuuint64_t const*, int const*, int const*, cuuint32_t, cuuint32_t, cuuint32_t const*,
                                  CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// The entry points, each looked up once per process; a Status naming the failure when there is none.
Status encode_tiled_entry(EncodeTiled* out);
Status encode_im2col_entry(EncodeIm2col* out);

}  // namespace tessel::detail
