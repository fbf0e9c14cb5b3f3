// tessel/reference/gemm_device.hpp -- the fp64 GEMM reference on the GPU, its judge, and test data.
//
// For problems too large for the host reference (4095x4097x4099, 8192^3): the same R and S as
// gemm_host.hpp (fp64 accumulation, packed (batch, M, N) row-major), computed by a plain 16x16
// shared-memory tiled kernel, and a judge that reduces element_error over D on the GPU and
// reports the first bad coordinate. Also the deterministic random fill (never zeros) and the
// poison fill used before every run. Implemented in src/gemm/reference_gemm.cu (tessel::kernels).
// Streams are cudaStream_t (declared here as CUstream_st* so this header needs no CUDA headers).
#pragma once

#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/core/status.hpp>
#include <tessel/reference/gemm_check.hpp>

#include <cstdint>

struct CUstream_st;

namespace tessel::reference {

// r, scale: device buffers of batch * M * N doubles. Pre: gemm_validate(g) passed; device pointers.
Status gemm_device(GemmArguments const& g, double* r, double* scale, CUstream_st* stream = nullptr);

// Judge D (g.d, g.c_type, g.c_order, g.ldd, g.batch_stride_d) against r and scale. Synchronizes `stream`.
Status check_device(GemmArguments const& g, double const* r, double const* scale, double tolerance, GemmCheck* out,
                    CUstream_st* stream = nullptr);

// count elements of dtype t, uniform in [lo, hi), from a hash of (seed, index): the same data on
// every run and GPU. tf32 is filled as fp32; fp16, bf16 and fp8 round to nearest even (fp8
// saturates). With lo < 0 < hi, exact zeros are rare, never systematic (e4m3 rounds |x| <= 2^-10
// to 0: 0.05% of [-2, 2)).
Status fill_uniform_device(void* p, DType t, std::int64_t count, std::uint64_t seed, float lo = -1.0f, float hi = 1.0f,
                           CUstream_st* stream = nullptr);

// count elements of dtype t set to `value` (NaN to poison an output before a run).
Status fill_constant_device(void* p, DType t, std::int64_t count, float value, CUstream_st* stream = nullptr);

}  // namespace tessel::reference
