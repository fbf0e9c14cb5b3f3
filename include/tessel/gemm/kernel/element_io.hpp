// tessel/gemm/kernel/element_io.hpp -- reading fp32/fp16/bf16 elements as float, writing them back.
//
// The SIMT kernels convert on load (every input becomes fp32 in shared memory) and on store
// (the fp32 result is rounded to the output dtype, round-to-nearest-even). Vector forms read four
// consecutive elements in one instruction (16 bytes of fp32, 8 of fp16/bf16); the caller
// guarantees the alignment (4 * sizeof(T) bytes).
#pragma once

#include <tessel/config.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace tessel::kernel {

TESSEL_HOST_DEVICE inline float to_float(float x) { return x; }
TESSEL_HOST_DEVICE inline float to_float(__half x) { return __half2float(x); }
TESSEL_HOST_DEVICE inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <class T>
TESSEL_HOST_DEVICE inline T from_float(float x);
template <>
TESSEL_HOST_DEVICE inline float from_float<float>(float x) { return x; }
template <>
TESSEL_HOST_DEVICE inline __half from_float<__half>(float x) { return __float2half_rn(x); }
template <>
TESSEL_HOST_DEVICE inline __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// Four consecutive elements starting at p (aligned to 4 * sizeof(T)), as floats.
TESSEL_DEVICE inline float4 load_float4(float const* p) { return __ldg(reinterpret_cast<float4 const*>(p)); }
TESSEL_DEVICE inline float4 load_float4(__half const* p) {
  uint2 const raw = __ldg(reinterpret_cast<uint2 const*>(p));
  float2 const lo = __half22float2(*reinterpret_cast<__half2 const*>(&raw.x));
  float2 const hi = __half22float2(*reinterpret_cast<__half2 const*>(&raw.y));
  return make_float4(lo.x, lo.y, hi.x, hi.y);
}
TESSEL_DEVICE inline float4 load_float4(__nv_bfloat16 const* p) {
  uint2 const raw = __ldg(reinterpret_cast<uint2 const*>(p));
  // bf16 is the top half of an fp32: widening is a shift.
  return make_float4(__uint_as_float(raw.x << 16), __uint_as_float(raw.x & 0xffff0000u),
                     __uint_as_float(raw.y << 16), __uint_as_float(raw.y & 0xffff0000u));
}

template <class T>
TESSEL_DEVICE inline float load_float(T const* p) { return to_float(*p); }

// Four consecutive outputs (aligned to 4 * sizeof(T)) from floats.
TESSEL_DEVICE inline void store_float4(float* p, float4 v) { *reinterpret_cast<float4*>(p) = v; }
TESSEL_DEVICE inline void store_float4(__half* p, float4 v) {
  __half2 const lo = __floats2half2_rn(v.x, v.y), hi = __floats2half2_rn(v.z, v.w);
  uint2 raw;
  raw.x = *reinterpret_cast<unsigned const*>(&lo);
  raw.y = *reinterpret_cast<unsigned const*>(&hi);
  *reinterpret_cast<uint2*>(p) = raw;
}
TESSEL_DEVICE inline void store_float4(__nv_bfloat16* p, float4 v) {
  __nv_bfloat162 const lo = __floats2bfloat162_rn(v.x, v.y), hi = __floats2bfloat162_rn(v.z, v.w);
  uint2 raw;
  raw.x = *reinterpret_cast<unsigned const*>(&lo);
  raw.y = *reinterpret_cast<unsigned const*>(&hi);
  *reinterpret_cast<uint2*>(p) = raw;
}

}  // namespace tessel::kernel
