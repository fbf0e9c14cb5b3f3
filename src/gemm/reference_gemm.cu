// src/gemm/reference_gemm.cu -- the fp64 GPU reference, its judge, and the test-data fills.
#include <tessel/gemm/device/gemm_validate.hpp>
#include <tessel/gemm/kernel/element_io.hpp>
#include <tessel/numeric/float8.hpp>
#include <tessel/reference/gemm_device.hpp>
#include <tessel/reference/gemm_host.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace tessel::reference {

namespace {

Status cuda_status(cudaError_t err, char const* what) {
  if (err == cudaSuccess) return Status::success();
  return Status::error(StatusCode::cuda_error, std::string(what) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

__device__ double load_element(void const* base, DType t, std::int64_t offset) {
  switch (t) {
    case DType::f16: return double(kernel::to_float(static_cast<__half const*>(base)[offset]));
    case DType::bf16: return double(kernel::to_float(static_cast<__nv_bfloat16 const*>(base)[offset]));
    case DType::e4m3: return double(static_cast<float_e4m3_t const*>(base)[offset]);  // exact
    case DType::e5m2: return double(static_cast<float_e5m2_t const*>(base)[offset]);
    default: return double(static_cast<float const*>(base)[offset]);
  }
}

__device__ void store_element(void* base, DType t, std::int64_t offset, float v) {
  switch (t) {
    case DType::f16: static_cast<__half*>(base)[offset] = __float2half_rn(v); break;
    case DType::bf16: static_cast<__nv_bfloat16*>(base)[offset] = __float2bfloat16_rn(v); break;
    case DType::e4m3: static_cast<float_e4m3_t*>(base)[offset] = float_e4m3_t(v); break;  // RNE, satfinite
    case DType::e5m2: static_cast<float_e5m2_t*>(base)[offset] = float_e5m2_t(v); break;
    default: static_cast<float*>(base)[offset] = v; break;
  }
}

constexpr int kRefTile = 16;

// One 16x16 block of R per CTA: stage 16x16 tiles of A and B as doubles, accumulate in fp64.
__global__ void reference_gemm_kernel(GemmArguments g, bool reads_ab, bool reads_c, double* r, double* scale) {
  __shared__ double sA[kRefTile][kRefTile + 1];  // (m, k)
  __shared__ double sB[kRefTile][kRefTile + 1];  // (k, n)
  int const tx = threadIdx.x, ty = threadIdx.y;
  std::int64_t const row_blocks = (g.m + kRefTile - 1) / kRefTile;
  std::int64_t const j = std::int64_t(blockIdx.x) * kRefTile + tx;  // column of D
  for (std::int64_t b = blockIdx.z; b < g.batch_count; b += gridDim.z)
  for (std::int64_t by = blockIdx.y; by < row_blocks; by += gridDim.y) {  // rows past 65535 blocks
    std::int64_t const i = by * kRefTile + ty;  // row of D
    double sum = 0.0, abs_sum = 0.0;
    if (reads_ab) {
      for (std::int64_t k0 = 0; k0 < g.k; k0 += kRefTile) {
        std::int64_t const ai = by * kRefTile + ty, ak = k0 + tx;
        sA[ty][tx] = (ai < g.m && ak < g.k)
                         ? load_element(g.a, g.a_type, b * g.batch_stride_a + element_offset(g.a_order, ai, ak, g.lda))
                         : 0.0;
        std::int64_t const bk = k0 + ty, bj = std::int64_t(blockIdx.x) * kRefTile + tx;
        sB[ty][tx] = (bk < g.k && bj < g.n)
                         ? load_element(g.b, g.b_type, b * g.batch_stride_b + element_offset(g.b_order, bk, bj, g.ldb))
                         : 0.0;
        if (g.scale_mode == ScaleMode::block) {  // the dequantized operands (gemm_arguments.hpp's layouts), exact in fp64
          std::int64_t const kb = gemm_scale_blocks(g.k);
          if (ai < g.m && ak < g.k)
            sA[ty][tx] *= double(g.a_scales[b * gemm_ld_a_scales(g) * kb + (ak / kGemmScaleBlock) * gemm_ld_a_scales(g) + ai]);
          if (bk < g.k && bj < g.n)
            sB[ty][tx] *= double(g.b_scales[b * gemm_scale_blocks(g.n) * gemm_ld_b_scales(g) +
                                            (bj / kGemmScaleBlock) * gemm_ld_b_scales(g) + bk / kGemmScaleBlock]);
        }
        __syncthreads();
        for (int kk = 0; kk < kRefTile; ++kk) {
          double const p = sA[ty][kk] * sB[kk][tx];
          sum += p;
          abs_sum += fabs(p);
        }
        __syncthreads();
      }
    }
    if (i < g.m && j < g.n) {
      double const alpha = product_scale(g);  // alpha * a_scale * b_scale
      double rv = reads_ab ? alpha * sum : 0.0;
      double sv = reads_ab ? fabs(alpha) * abs_sum : 0.0;
      if (reads_c) {
        double const cv = double(g.beta) * load_element(g.c, g.c_type, b * g.batch_stride_c + element_offset(g.c_order, i, j, g.ldc));
        rv += cv;
        sv += fabs(cv);
      }
      if (gemm_is_fused(g)) {
        std::int64_t const bi = bias_index(g, i, j);
        apply_fusion(g, bi >= 0 ? load_element(g.bias, g.c_type, bi) : 0.0, &rv, &sv);
      }
      std::int64_t const idx = (b * g.m + i) * g.n + j;
      r[idx] = rv;
      scale[idx] = sv;
    }
  }
}

struct CheckAccum {
  unsigned long long max_err_bits;  // non-negative doubles order like their bit patterns
  unsigned long long bad;
  unsigned long long first_bad;     // smallest bad linear index (batch, row, col)
  double diff2, ref2;
};

__global__ void check_kernel(GemmArguments g, double const* r, double const* scale, double tol, CheckAccum* acc) {
  std::int64_t const total = g.batch_count * g.m * g.n;
  double max_err = 0.0, diff2 = 0.0, ref2 = 0.0;
  unsigned long long bad = 0, first = ~0ull;
  for (std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += std::int64_t(gridDim.x) * blockDim.x) {
    std::int64_t const b = idx / (g.m * g.n), i = (idx / g.n) % g.m, j = idx % g.n;
    double const d = load_element(g.d, g.c_type, b * g.batch_stride_d + element_offset(g.c_order, i, j, g.ldd));
    double const e = element_error(d, r[idx], scale[idx]);
    max_err = fmax(max_err, e);
    if (isfinite(d) && isfinite(r[idx])) {
      diff2 += (d - r[idx]) * (d - r[idx]);
      ref2 += r[idx] * r[idx];
    }
    if (!(e <= tol)) {
      ++bad;
      first = min(first, static_cast<unsigned long long>(idx));
    }
  }
  for (int off = 16; off > 0; off /= 2) {
    max_err = fmax(max_err, __shfl_down_sync(0xffffffffu, max_err, off));
    diff2 += __shfl_down_sync(0xffffffffu, diff2, off);
    ref2 += __shfl_down_sync(0xffffffffu, ref2, off);
    bad += __shfl_down_sync(0xffffffffu, bad, off);
    first = min(first, __shfl_down_sync(0xffffffffu, first, off));
  }
  if (threadIdx.x % 32 == 0) {
    atomicMax(&acc->max_err_bits, static_cast<unsigned long long>(__double_as_longlong(max_err)));
    if (bad) atomicAdd(&acc->bad, bad);
    atomicMin(&acc->first_bad, first);
    atomicAdd(&acc->diff2, diff2);
    atomicAdd(&acc->ref2, ref2);
  }
}

__device__ std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__global__ void fill_uniform_kernel(void* p, DType t, std::int64_t count, std::uint64_t seed, float lo, float hi) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    std::uint64_t const h = splitmix64(seed * 0x2545f4914f6cdd1dull ^ std::uint64_t(i));
    float const u = float(h >> 40) * (1.0f / 16777216.0f);  // [0, 1), 24 bits
    store_element(p, t, i, lo + (hi - lo) * u);
  }
}

__global__ void fill_constant_kernel(void* p, DType t, std::int64_t count, float v) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    store_element(p, t, i, v);
}

unsigned grid_for(std::int64_t count, int threads) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((count + threads - 1) / threads, 1, 65535LL * 32));
}

}  // namespace

Status gemm_device(GemmArguments const& g, double* r, double* scale, CUstream_st* stream) {
  if (Status s = gemm_validate(g); !s) return s;
  if (gemm_is_noop(g)) return Status::success();
  std::int64_t const gx = (g.n + kRefTile - 1) / kRefTile, gy = (g.m + kRefTile - 1) / kRefTile;
  if (gx > 0x7fffffffLL)
    return Status::error(StatusCode::not_supported, "n: the reference's grid (" + std::to_string(gx) +
                                                        " blocks of 16 columns) exceeds the launch limit");
  dim3 const grid(static_cast<unsigned>(gx), static_cast<unsigned>(std::min<std::int64_t>(gy, 65535)),
                  static_cast<unsigned>(std::min<std::int64_t>(g.batch_count, 65535)));
  reference_gemm_kernel<<<grid, dim3(kRefTile, kRefTile), 0, stream>>>(g, gemm_reads_ab(g), gemm_reads_c(g), r, scale);
  return cuda_status(cudaGetLastError(), "launch of the reference GEMM");
}

Status check_device(GemmArguments const& g, double const* r, double const* scale, double tolerance, GemmCheck* out,
                    CUstream_st* stream) {
  *out = GemmCheck{};
  out->tolerance = tolerance;
  if (gemm_is_noop(g)) return Status::success();
  CheckAccum* acc = nullptr;
  if (Status s = cuda_status(cudaMalloc(&acc, sizeof(CheckAccum)), "cudaMalloc (check)"); !s) return s;
  CheckAccum init{0, 0, ~0ull, 0.0, 0.0};
  Status s = cuda_status(cudaMemcpyAsync(acc, &init, sizeof init, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync (check)");
  if (s) {
    check_kernel<<<grid_for(g.batch_count * g.m * g.n, 256), 256, 0, stream>>>(g, r, scale, tolerance, acc);
    s = cuda_status(cudaGetLastError(), "launch of the GEMM check");
  }
  CheckAccum h{};
  if (s) s = cuda_status(cudaMemcpyAsync(&h, acc, sizeof h, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync (check)");
  if (s) s = cuda_status(cudaStreamSynchronize(stream), "the GEMM check");
  cudaFree(acc);
  if (!s) return s;
  out->max_rel_err = __builtin_bit_cast(double, h.max_err_bits);
  out->bad = static_cast<std::int64_t>(h.bad);
  out->norm_rel_err = h.ref2 > 0.0 ? std::sqrt(h.diff2 / h.ref2) : std::sqrt(h.diff2);
  if (h.bad > 0) {
    std::int64_t const idx = static_cast<std::int64_t>(h.first_bad);
    std::int64_t const b = idx / (g.m * g.n), i = (idx / g.n) % g.m, j = idx % g.n;
    out->first_bad_batch = b, out->first_bad_row = i, out->first_bad_col = j;
    unsigned char raw[4] = {};
    std::int64_t const off = b * g.batch_stride_d + element_offset(g.c_order, i, j, g.ldd);
    s = cuda_status(cudaMemcpy(raw, static_cast<char const*>(g.d) + off * std::int64_t(size_of(g.c_type)),
                               size_of(g.c_type), cudaMemcpyDeviceToHost), "cudaMemcpy (first bad element)");
    if (s) s = cuda_status(cudaMemcpy(&out->first_bad_expected, r + idx, sizeof(double), cudaMemcpyDeviceToHost),
                           "cudaMemcpy (first bad reference)");
    if (!s) return s;
    out->first_bad_value = load_element_host(raw, g.c_type, 0);
  }
  return Status::success();
}

Status fill_uniform_device(void* p, DType t, std::int64_t count, std::uint64_t seed, float lo, float hi, CUstream_st* stream) {
  if (count <= 0) return Status::success();
  fill_uniform_kernel<<<grid_for(count, 256), 256, 0, stream>>>(p, t, count, seed, lo, hi);
  return cuda_status(cudaGetLastError(), "launch of the uniform fill");
}

Status fill_constant_device(void* p, DType t, std::int64_t count, float value, CUstream_st* stream) {
  if (count <= 0) return Status::success();
  fill_constant_kernel<<<grid_for(count, 256), 256, 0, stream>>>(p, t, count, value);
  return cuda_status(cudaGetLastError(), "launch of the constant fill");
}

}  // namespace tessel::reference
