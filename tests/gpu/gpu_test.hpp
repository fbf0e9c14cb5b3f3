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
