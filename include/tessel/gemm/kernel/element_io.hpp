// tessel/gemm/kernel/element_io.hpp -- reading fp32/fp16/bf16/fp8 elements as float, writing
// fp32/fp16/bf16 back.
//
// The SIMT kernels convert on load (every input becomes fp32 in shared memory) and on store
// (the fp32 result is rounded to the output dtype, round-to-nearest-even). Vector forms read four
// consecutive elements in one instruction (16 bytes of fp32, 8 of fp16/bf16, 4 of fp8); the
// caller guarantees the alignment (4 * sizeof(T) bytes). Kernels read operands through an
// ElementReader<T>: stateless for the fixed dtypes; for RuntimeFp8 it carries the operand's fp8
// format, so one kernel instance serves e4m3 and e5m2 operands in any mix.
#pragma once

#include <tessel/config.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

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

// An fp8 element (OCP e4m3 or e5m2, tessel/numeric/float8.hpp) whose format is a run-time value
// held by its ElementReader.
struct RuntimeFp8 {
  std::uint8_t storage;
};

// Reads elements of T as floats: load4 (4 consecutive, aligned to 4 * sizeof(T)) and load1.
template <class T>
struct ElementReader {
  TESSEL_DEVICE float4 load4(T const* p) const { return load_float4(p); }
  TESSEL_DEVICE float load1(T const* p) const { return load_float(p); }
};

// fp8 widens exactly through fp16 (cuda_fp8.h: one cvt per pair on sm_89+, integer code before).
template <>
struct ElementReader<RuntimeFp8> {
  bool e5m2 = false;  // else e4m3

  TESSEL_DEVICE __nv_fp8_interpretation_t format() const { return e5m2 ? __NV_E5M2 : __NV_E4M3; }
  TESSEL_DEVICE float2 widen2(std::uint32_t pair) const {
    __half2_raw const h = __nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t(pair), format());
    return __half22float2(__half2(h));
  }
  TESSEL_DEVICE float4 load4(RuntimeFp8 const* p) const {
    std::uint32_t const raw = __ldg(reinterpret_cast<unsigned const*>(p));
    float2 const lo = widen2(raw & 0xffffu), hi = widen2(raw >> 16);
    return make_float4(lo.x, lo.y, hi.x, hi.y);
  }
  TESSEL_DEVICE float load1(RuntimeFp8 const* p) const {
    return __half2float(__half(__nv_cvt_fp8_to_halfraw(p->storage, format())));
  }
};

// The reader of an operand of T; e5m2 matters only for RuntimeFp8.
template <class T>
TESSEL_DEVICE inline ElementReader<T> element_reader(bool e5m2) {
  if constexpr (std::is_same_v<T, RuntimeFp8>) {
    return ElementReader<T>{e5m2};
  } else {
    (void)e5m2;
    return ElementReader<T>{};
  }
}

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
