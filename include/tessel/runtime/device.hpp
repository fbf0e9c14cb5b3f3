// tessel/runtime/device.hpp -- what GPU is here (host API, implemented in tessel::kernels).
//
// device_count() is 0, never an error, on a machine without a driver or a device, so callers
// can skip or refuse with a clear message instead of crashing.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace tessel {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0;          // compute capability, e.g. 9.0 for H100/H200
  int cc_minor = 0;
  int sm_count = 0;
  int clock_mhz = 0;         // maximum SM clock
  int memory_clock_mhz = 0;
  int memory_bus_bits = 0;
  std::size_t l2_bytes = 0;
  std::size_t global_bytes = 0;
  int driver_version = 0;    // e.g. 13000 for 13.0
  int runtime_version = 0;
};

// Number of usable CUDA devices; 0 when there is no driver or no device.
int device_count() noexcept;

// Properties of device `index`, or nullopt (with `why` filled) when it cannot be queried.
std::optional<DeviceInfo> query_device(int index, std::string* why = nullptr);

// One line saying why no device is usable ("no CUDA device: ..."), or "" when one is.
std::string no_device_reason();

}  // namespace tessel
