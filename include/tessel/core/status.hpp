// tessel/core/status.hpp -- what a host-API call returns: a code and a reason.
//
// Like cuBLAS (a status code, never an exception, never a crash) with CUTLASS's habit of saying
// why: `reason` names the argument and the rule it broke ("lda: 3 is below the minimum 65 ...").
// Plain C++: usable and testable without CUDA.
#pragma once

#include <string>
#include <utility>

namespace tessel {

enum class StatusCode {
  success,
  invalid_argument,  // an argument breaks a rule (negative size, leading dimension too small, null pointer ...)
  not_supported,     // valid, but no compiled kernel can run it (dtype mix, problem too large for the grid ...)
  arch_mismatch,     // the chosen kernel has no image for this GPU's architecture
  no_device,         // no usable CUDA device
  cuda_error,        // a CUDA call failed; reason holds the call and cudaGetErrorString
};

constexpr char const* to_string(StatusCode c) {
  switch (c) {
    case StatusCode::success: return "success";
    case StatusCode::invalid_argument: return "invalid argument";
    case StatusCode::not_supported: return "not supported";
    case StatusCode::arch_mismatch: return "architecture mismatch";
    case StatusCode::no_device: return "no device";
    case StatusCode::cuda_error: return "CUDA error";
  }
  return "unknown status";
}

struct Status {
  StatusCode code = StatusCode::success;
  std::string reason;  // empty on success

  bool ok() const { return code == StatusCode::success; }
  explicit operator bool() const { return ok(); }

  static Status success() { return {}; }
  static Status error(StatusCode c, std::string why) { return {c, std::move(why)}; }
};

}  // namespace tessel
