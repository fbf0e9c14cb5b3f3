// src/runtime/device.cpp -- device queries for the CLI, the tests and the host API.
#include <tessel/runtime/device.hpp>

#include <cuda_runtime.h>

namespace tessel {

int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

std::string no_device_reason() {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return std::string("no CUDA device: ") + cudaGetErrorString(err);
  }
  if (n == 0) return "no CUDA device: the driver reports 0 devices";
  return "";
}

std::optional<DeviceInfo> query_device(int index, std::string* why) {
  cudaDeviceProp p{};
  cudaError_t err = cudaGetDeviceProperties(&p, index);
  if (err != cudaSuccess) {
    if (why) *why = std::string("cannot query device ") + std::to_string(index) + ": " + cudaGetErrorString(err);
    (void)cudaGetLastError();
    return std::nullopt;
  }
  DeviceInfo d;
  d.index = index;
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, index) == cudaSuccess) d.clock_mhz = khz / 1000;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, index) == cudaSuccess) d.memory_clock_mhz = khz / 1000;
  d.memory_bus_bits = p.memoryBusWidth;
  d.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
  d.global_bytes = p.totalGlobalMem;
  cudaDriverGetVersion(&d.driver_version);
  cudaRuntimeGetVersion(&d.runtime_version);
  return d;
}

}  // namespace tessel
