// src/conv/reference_conv.cu -- the fp64 convolution reference and its judge
// (tessel/reference/conv_device.hpp).
//
// One group of threads per output element: a warp for fprop and dgrad (sums of t*r*s*c/groups or
// k/groups*t*r*s terms, the channel index fastest so that the lanes read neighbouring channels), a
// whole CTA of 256 threads for wgrad (sums over the batch's n*z*p*q output pixels, up to millions of
// terms for an element). The lanes take every group-th term, accumulate in fp64 and reduce. Sum
// indices are 32-bit: conv_validate caps every implicit-GEMM extent at 2^31 - 1.
#include "conv_output_view.hpp"

#include <tessel/conv/conv_activation.hpp>
#include <tessel/conv/conv_validate.hpp>
#include <tessel/gemm/kernel/element_io.hpp>
#include <tessel/reference/conv_device.hpp>
#include <tessel/reference/numeric.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>
#include <cmath>
#include <cstdio>
#include <string>

namespace tessel::reference {

namespace {

Status cuda_status(cudaError_t err, char const* what) {
  if (err == cudaSuccess) return Status::success();
  return Status::error(StatusCode::cuda_error, std::string(what) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

constexpr int kThreads = 256;
constexpr unsigned kFullWarp = 0xffffffffu;

// Everything the kernels read: the arguments and the extents derived from them.
struct View {
  ConvArguments a;
  detail::ConvOutputView out;
  std::int64_t z, p, q;   // output extents
  std::int64_t cg, kg;    // channels per group: input, output
  std::int64_t total;     // output elements
  std::uint32_t sum_len;  // terms per output element
};

__device__ double load(void const* base, DType t, std::int64_t offset) {
  return t == DType::bf16 ? double(kernel::to_float(static_cast<__nv_bfloat16 const*>(base)[offset]))
                          : double(kernel::to_float(static_cast<__half const*>(base)[offset]));
}

using OutCoord = detail::ConvOutputCoord;  // (n, z|d, p|h, q|w) or (k, t, r, s), and the channel

__device__ std::int64_t x_offset(ConvArguments const& a, std::int64_t n, std::int64_t d, std::int64_t h, std::int64_t w,
                                 std::int64_t c) {
  return n * a.x.stride_n + d * a.x.stride_d + h * a.x.stride_h + w * a.x.stride_w + c;
}
__device__ std::int64_t y_offset(ConvArguments const& a, std::int64_t n, std::int64_t z, std::int64_t p, std::int64_t q,
                                 std::int64_t k) {
  return n * a.y.stride_n + z * a.y.stride_d + p * a.y.stride_h + q * a.y.stride_w + k;
}
__device__ std::int64_t w_offset(View const& v, std::int64_t k, std::int64_t t, std::int64_t r, std::int64_t s,
                                 std::int64_t ci) {
  return k * v.a.filter.stride_k + ((t * v.a.r + r) * v.a.s + s) * v.cg + ci;
}

// The input coordinate that output coordinate o (of z, p or q) and tap f (of t, r or s) read:
// o*stride - pad + f*dilation; in range when 0 <= it < extent.
__device__ bool input_at(std::int64_t o, std::int64_t f, std::int64_t stride, std::int64_t pad, std::int64_t dilation,
                         std::int64_t extent, std::int64_t* i) {
  *i = o * stride - pad + f * dilation;
  return *i >= 0 && *i < extent;
}
// The output coordinate whose tap f reads input coordinate i: (i + pad - f*dilation) / stride
// when that is a whole number in [0, extent).
__device__ bool output_at(std::int64_t i, std::int64_t f, std::int64_t stride, std::int64_t pad, std::int64_t dilation,
                          std::int64_t extent, std::int64_t* o) {
  std::int64_t const num = i + pad - f * dilation;
  if (num < 0 || num % stride != 0) return false;
  *o = num / stride;
  return *o < extent;
}

// A sum index j = ((t * R + r) * S + s) * inner_extent + inner, decoded (the channel fastest).
struct Tap {
  std::uint32_t inner, t, r, s;
};
__device__ Tap tap_of(std::uint32_t j, std::uint32_t inner_extent, ConvArguments const& a) {
  std::uint32_t const s = std::uint32_t(a.s), r = std::uint32_t(a.r), tap = j / inner_extent;
  return {j % inner_extent, tap / (s * r), (tap / s) % r, tap % s};
}

// Term j of output element o's sum: *prod = a * b, false where the tap meets padding.
__device__ bool term(View const& v, OutCoord const& o, std::uint32_t j, double* prod) {
  ConvArguments const& a = v.a;
  DType const t = a.dtype;
  switch (a.op) {
    case conv::Operator::kFprop: {  // j = tap * Cg + ci
      Tap const f = tap_of(j, std::uint32_t(v.cg), a);
      std::int64_t di, hi, wi;
      if (!input_at(o.i[1], f.t, a.stride_d, a.pad_d, a.dilation_d, a.d, &di) ||
          !input_at(o.i[2], f.r, a.stride_h, a.pad_h, a.dilation_h, a.h, &hi) ||
          !input_at(o.i[3], f.s, a.stride_w, a.pad_w, a.dilation_w, a.w, &wi))
        return false;
      std::int64_t const g = o.ch / v.kg;
      *prod = load(a.x.ptr, t, x_offset(a, o.i[0], di, hi, wi, g * v.cg + f.inner)) *
              load(a.filter.ptr, t, w_offset(v, o.ch, f.t, f.r, f.s, f.inner));
      return true;
    }
    case conv::Operator::kDgrad: {  // j = tap * Kg + kk; the output pixels whose tap lands on o
      Tap const f = tap_of(j, std::uint32_t(v.kg), a);
      std::int64_t zo, po, qo;
      if (!output_at(o.i[1], f.t, a.stride_d, a.pad_d, a.dilation_d, v.z, &zo) ||
          !output_at(o.i[2], f.r, a.stride_h, a.pad_h, a.dilation_h, v.p, &po) ||
          !output_at(o.i[3], f.s, a.stride_w, a.pad_w, a.dilation_w, v.q, &qo))
        return false;
      std::int64_t const g = o.ch / v.cg, k = g * v.kg + f.inner;
      *prod = load(a.y.ptr, t, y_offset(a, o.i[0], zo, po, qo, k)) *
              load(a.filter.ptr, t, w_offset(v, k, f.t, f.r, f.s, o.ch - g * v.cg));
      return true;
    }
    default: {  // wgrad: j = ((n * Z + zo) * P + po) * Q + qo; o = (k, t, r, s, ci)
      std::uint32_t const q = std::uint32_t(v.q), p = std::uint32_t(v.p), z = std::uint32_t(v.z);
      std::uint32_t const qo = j % q, po = (j / q) % p, zo = (j / (q * p)) % z, n = j / (q * p * z);
      std::int64_t di, hi, wi;
      if (!input_at(zo, o.i[1], a.stride_d, a.pad_d, a.dilation_d, a.d, &di) ||
          !input_at(po, o.i[2], a.stride_h, a.pad_h, a.dilation_h, a.h, &hi) ||
          !input_at(qo, o.i[3], a.stride_w, a.pad_w, a.dilation_w, a.w, &wi))
        return false;
      std::int64_t const g = o.i[0] / v.kg;
      *prod = load(a.y.ptr, t, y_offset(a, n, zo, po, qo, o.i[0])) * load(a.x.ptr, t, x_offset(a, n, di, hi, wi, g * v.cg + o.ch));
      return true;
    }
  }
}

// Sums of every Group-th term by the group's threads, reduced; lane 0 of the group applies the
// epilogue and writes R and S.
template <int Group>
__global__ void __launch_bounds__(kThreads) reference_conv_kernel(View v, double* r, double* scale) {
  static_assert(Group == 32 || Group == kThreads, "a reference group is a warp or the whole CTA");
  __shared__ double s_sum[kThreads / 32], s_mag[kThreads / 32];
  ConvArguments const& a = v.a;
  constexpr int kGroupsPerCta = kThreads / Group;
  int const lane = int(threadIdx.x) % Group, warp = int(threadIdx.x) / 32;
  bool const reads = a.alpha != 0.0f;
  for (std::int64_t idx = std::int64_t(blockIdx.x) * kGroupsPerCta + threadIdx.x / Group; idx < v.total;
       idx += std::int64_t(gridDim.x) * kGroupsPerCta) {  // the same trip count for a whole group
    OutCoord const o = v.out.coord(idx);
    double sum = 0.0, mag = 0.0;
    if (reads) {
      for (std::uint32_t j = std::uint32_t(lane); j < v.sum_len; j += Group) {
        double prod;
        if (term(v, o, j, &prod)) sum += prod, mag += fabs(prod);
      }
    }
    for (int off = 16; off > 0; off /= 2) {
      sum += __shfl_xor_sync(kFullWarp, sum, off);
      mag += __shfl_xor_sync(kFullWarp, mag, off);
    }
    if constexpr (Group == kThreads) {
      __syncthreads();  // the previous element's readers of s_sum are done
      if (threadIdx.x % 32 == 0) s_sum[warp] = sum, s_mag[warp] = mag;
      __syncthreads();
      sum = 0.0, mag = 0.0;
      for (int i = 0; i < kThreads / 32; ++i) sum += s_sum[i], mag += s_mag[i];
    }
    if (lane != 0) continue;
    double acc = 0.0, m = 0.0;
    if (reads) acc = double(a.alpha) * sum, m = fabs(double(a.alpha)) * mag;
    std::int64_t const off = v.out.offset(o);
    if (a.beta != 0.0f) {
      double const res = double(a.beta) * load(a.residual, a.dtype, off);
      acc += res, m += fabs(res);
    }
    if (a.bias != nullptr) {
      double const b = a.bias[o.ch];  // fprop: k; dgrad: c (wgrad takes no bias)
      acc += b, m += fabs(b);
    }
    r[idx] = conv_activate(a.activation, acc);
    scale[idx] = conv_activation_slope(a.activation) * m;
  }
}

unsigned grid_for(std::int64_t groups, int groups_per_cta) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((groups + groups_per_cta - 1) / groups_per_cta, 1, 65535LL * 32));
}

View make_view(ConvArguments const& a) {
  ConvOutputExtents const e = conv_output_extents(a);
  View v{a, detail::conv_output_view(a), e.z, e.p, e.q, a.c / a.groups, a.k / a.groups, conv_output_elements(a),
         static_cast<std::uint32_t>(conv_sum_length(a))};
  return v;
}

// ---- the judge --------------------------------------------------------------------------------------

struct JudgeStats {
  unsigned long long max_err;  // the bit pattern of a non-negative double (they order like the values)
  unsigned long long bad;
  unsigned long long first_bad;
};

template <class T>
__global__ void judge_kernel(View v, double const* r, double const* scale, double tol, JudgeStats* out) {
  double worst = 0.0;
  unsigned long long bad = 0, first = ~0ull;
  for (std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < v.total;
       idx += std::int64_t(gridDim.x) * blockDim.x) {
    double const d = double(kernel::to_float(static_cast<T const*>(v.a.out)[v.out.offset(v.out.coord(idx))]));
    double err = element_error(d, r[idx], scale[idx]);
    // An fp16 output below 2^-14 is subnormal: its rounding is an absolute 2^-25, which no relative
    // tolerance covers when the terms nearly cancel; one subnormal unit (2^-24) of difference passes.
    if (std::is_same_v<T, __half> && err > tol && err < INFINITY && fabs(d - r[idx]) <= 0x1p-24) err = tol;
    if (!(err <= INFINITY)) err = INFINITY;  // NaN (a NaN scale) counts as infinite
    worst = fmax(worst, err);
    if (err > tol) {
      ++bad;
      if (first == ~0ull) first = static_cast<unsigned long long>(idx);  // a thread's indices increase
    }
  }
  for (int off = 16; off > 0; off /= 2) {
    worst = fmax(worst, __shfl_down_sync(kFullWarp, worst, off));
    bad += __shfl_down_sync(kFullWarp, bad, off);
    first = min(first, __shfl_down_sync(kFullWarp, first, off));
  }
  if (threadIdx.x % 32 == 0) {
    atomicMax(&out->max_err, static_cast<unsigned long long>(__double_as_longlong(worst)));
    if (bad) atomicAdd(&out->bad, bad);
    if (first != ~0ull) atomicMin(&out->first_bad, first);
  }
}

// "y[n 0, z 0, p 3, q 4, k 17]", "dx[n .., d .., h .., w .., c ..]", "dw[k .., t .., r .., s .., c ..]"
std::string coord_text(View const& v, std::int64_t idx) {
  OutCoord const o = v.out.coord(idx);
  char buf[160];
  auto const ll = [](std::int64_t x) { return static_cast<long long>(x); };
  switch (v.a.op) {
    case conv::Operator::kFprop:
      std::snprintf(buf, sizeof buf, "y[n %lld, z %lld, p %lld, q %lld, k %lld]", ll(o.i[0]), ll(o.i[1]), ll(o.i[2]), ll(o.i[3]), ll(o.ch));
      break;
    case conv::Operator::kDgrad:
      std::snprintf(buf, sizeof buf, "dx[n %lld, d %lld, h %lld, w %lld, c %lld]", ll(o.i[0]), ll(o.i[1]), ll(o.i[2]), ll(o.i[3]), ll(o.ch));
      break;
    default:
      std::snprintf(buf, sizeof buf, "dw[k %lld, t %lld, r %lld, s %lld, c %lld]", ll(o.i[0]), ll(o.i[1]), ll(o.i[2]), ll(o.i[3]), ll(o.ch));
      break;
  }
  return buf;
}

}  // namespace

std::int64_t conv_output_elements(ConvArguments const& a) {
  return conv_output_is_empty(a) ? 0 : detail::conv_output_view(a).elements();
}

std::int64_t conv_sum_length(ConvArguments const& a) {
  ConvOutputExtents const e = conv_output_extents(a);
  std::int64_t const taps = a.t * a.r * a.s;
  switch (a.op) {
    case conv::Operator::kFprop: return taps * (a.c / a.groups);
    case conv::Operator::kDgrad: return taps * (a.k / a.groups);
    case conv::Operator::kWgrad: return a.n * e.z * e.p * e.q;
  }
  return 0;
}

double conv_tolerance(ConvArguments const& a) { return gemm_tolerance(a.dtype, a.dtype, conv_sum_length(a)); }

std::string ConvCheck::describe() const {
  char buf[400];
  if (passed())
    std::snprintf(buf, sizeof buf, "ok: max rel err %.3g (tol %.3g)", max_rel_err, tolerance);
  else
    std::snprintf(buf, sizeof buf, "FAILED: %lld of %lld elements bad, first %s: got %.9g, expected %.9g; max rel err %.3g (tol %.3g)",
                  static_cast<long long>(bad), static_cast<long long>(checked), first_bad.c_str(), first_bad_value,
                  first_bad_expected, max_rel_err, tolerance);
  return buf;
}

Status conv_device(ConvArguments const& a, double* r, double* scale, CUstream_st* stream) {
  if (Status s = conv_validate(a); !s) return s;
  View const v = make_view(a);
  if (v.total == 0) return Status::success();
  if (r == nullptr || scale == nullptr)
    return Status::error(StatusCode::invalid_argument, "r/scale: null; the reference writes R and S");
  if (a.op == conv::Operator::kWgrad)
    reference_conv_kernel<kThreads><<<grid_for(v.total, 1), kThreads, 0, stream>>>(v, r, scale);
  else
    reference_conv_kernel<32><<<grid_for(v.total, kThreads / 32), kThreads, 0, stream>>>(v, r, scale);
  return cuda_status(cudaGetLastError(), "launch of the reference convolution");
}

Status check_conv(ConvArguments const& a, double const* r, double const* scale, double tolerance, ConvCheck* out,
                  CUstream_st* stream) {
  *out = ConvCheck{};
  out->tolerance = tolerance;
  if (Status s = conv_validate(a); !s) return s;
  View const v = make_view(a);
  out->checked = v.total;
  if (v.total == 0) return Status::success();
  JudgeStats* dev = nullptr;
  if (Status s = cuda_status(cudaMalloc(&dev, sizeof(JudgeStats)), "cudaMalloc (conv check)"); !s) return s;
  JudgeStats h{0, 0, ~0ull};
  Status s = cuda_status(cudaMemcpyAsync(dev, &h, sizeof h, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync (conv check)");
  if (s) {
    unsigned const grid = grid_for(v.total, kThreads);
    if (a.dtype == DType::bf16)
      judge_kernel<__nv_bfloat16><<<grid, kThreads, 0, stream>>>(v, r, scale, tolerance, dev);
    else
      judge_kernel<__half><<<grid, kThreads, 0, stream>>>(v, r, scale, tolerance, dev);
    s = cuda_status(cudaGetLastError(), "launch of the conv check");
  }
  if (s) s = cuda_status(cudaMemcpyAsync(&h, dev, sizeof h, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync (conv check)");
  if (s) s = cuda_status(cudaStreamSynchronize(stream), "the conv check");
  cudaFree(dev);
  if (!s) return s;
  out->max_rel_err = __builtin_bit_cast(double, h.max_err);
  out->bad = static_cast<std::int64_t>(h.bad);
  if (h.bad == 0) return Status::success();
  std::int64_t const idx = static_cast<std::int64_t>(h.first_bad);
  out->first_bad = coord_text(v, idx);
  std::int64_t const off = v.out.offset(v.out.coord(idx));
  std::uint16_t raw = 0;
  s = cuda_status(cudaMemcpy(&raw, static_cast<std::uint16_t const*>(a.out) + off, sizeof raw, cudaMemcpyDeviceToHost),
                  "cudaMemcpy (first bad element)");
  if (s) s = cuda_status(cudaMemcpy(&out->first_bad_expected, r + idx, sizeof(double), cudaMemcpyDeviceToHost),
                         "cudaMemcpy (first bad reference)");
  if (!s) return s;
  out->first_bad_value = a.dtype == DType::bf16 ? double(bf16_to_float(raw)) : double(f16_to_float(raw));
  return Status::success();
}

}  // namespace tessel::reference
