// tessel/config.hpp -- the only general macro header.
//
// Host/device annotations, unroll pragmas and the debug-only device assert. Everything else in
// tessel is ordinary C++20; headers below core/ and layout/ compile with a plain host compiler.
#pragma once

#if defined(__CUDACC__) || defined(__CUDA_ARCH__)
#define TESSEL_HOST_DEVICE __host__ __device__
#define TESSEL_DEVICE __device__
#define TESSEL_HOST __host__
#else
#define TESSEL_HOST_DEVICE
#define TESSEL_DEVICE
#define TESSEL_HOST
#endif

#if defined(__CUDA_ARCH__)
#define TESSEL_ON_DEVICE 1
#else
#define TESSEL_ON_DEVICE 0
#endif

// Only the device pass (and clang) understands the pragma; nvcc's host pass hands it to the host compiler.
#if defined(__CUDA_ARCH__) || defined(__clang__)
#define TESSEL_UNROLL _Pragma("unroll")
#define TESSEL_NO_UNROLL _Pragma("unroll 1")
#else
#define TESSEL_UNROLL
#define TESSEL_NO_UNROLL
#endif

// A lambda or function the compiler must inline: a mainloop whose accumulators are a register
// array passed by reference (a call would put them in local memory). After a lambda's parameter
// list: [&](auto x) TESSEL_ALWAYS_INLINE { ... }.
#define TESSEL_ALWAYS_INLINE __attribute__((always_inline))
