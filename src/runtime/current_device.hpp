// src/runtime/current_device.hpp -- the current CUDA device as the host APIs' kernel choices need
// it: ordinal, compute capability, SM count; no_device (with the reason) when there is none.
#pragma once

#include <tessel/core/status.hpp>
#include <tessel/runtime/device.hpp>

#include <cuda_runtime_api.h>

#include <string>

namespace tessel::detail {

struct Here {
  int device = 0, cc = 0, sms = 0;
};

inline Status current_device(Here* h) {
  int dev = 0;
  cudaError_t err = cudaGetDevice(&dev);
  int count = 0;
  if (err == cudaSuccess) err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    std::string why = no_device_reason();
    return Status::error(StatusCode::no_device, why.empty() ? "no CUDA device" : why);
  }
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  cudaDeviceGetAttribute(&h->sms, cudaDevAttrMultiProcessorCount, dev);
  h->device = dev;
  h->cc = major * 10 + minor;
  return Status::success();
}

}  // namespace tessel::detail
