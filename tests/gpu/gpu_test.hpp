// tests/gpu/gpu_test.hpp -- shared helpers for GPU tests: visible skips, checked CUDA calls.
#pragma once

#include <tessel/runtime/device.hpp>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

// Skip the test, visibly and with the reason, when no CUDA device is usable.
#define TESSEL_REQUIRE_GPU()                                     \
  do {                                                           \
    std::string why__ = ::tessel::no_device_reason();            \
    if (!why__.empty()) GTEST_SKIP() << why__;                   \
  } while (0)

// Fail the test on any CUDA error, naming the call.
#define TESSEL_CUDA_OK(call)                                                              \
  do {                                                                                    \
    cudaError_t err__ = (call);                                                           \
    ASSERT_EQ(err__, cudaSuccess) << #call << ": " << cudaGetErrorString(err__);          \
  } while (0)

// The current device's compute capability (major * 10 + minor), 0 without one.
inline int compute_capability() {
  int dev = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  return major * 10 + minor;
}

// Skip, visibly, unless the GPU is an sm_90 one (the sm_90a kernels' images run nowhere else).
#define TESSEL_REQUIRE_SM90()                                                                           \
  do {                                                                                                  \
    TESSEL_REQUIRE_GPU();                                                                               \
    if (compute_capability() != 90) GTEST_SKIP() << "the sm_90a kernels need an sm_90 GPU (H100/H200)"; \
  } while (0)
