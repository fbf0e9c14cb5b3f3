// src/capi/status_reason.hpp -- what every C ABI entry point shares: a tessel::Status as a
// tessel_status code with its reason copied into the caller's buffer, and the guard that keeps
// exceptions from crossing the C boundary. Included by src/capi/c_api.cpp and src/dist/c_api_dist.cpp.
#pragma once

#include <tessel/c_api.h>
#include <tessel/core/status.hpp>

#include <algorithm>
#include <cstring>
#include <exception>
#include <new>
#include <string>

namespace tessel::capi {

// code, with `why` copied into reason[0, size) (truncated, NUL-terminated).
inline tessel_status write_reason(tessel_status code, std::string const& why, char* reason, std::size_t size) {
  if (reason != nullptr && size > 0) {
    std::size_t const n = std::min(why.size(), size - 1);
    std::memcpy(reason, why.data(), n);
    reason[n] = '\0';
  }
  return code;
}

inline tessel_status from_status(tessel::Status const& s, char* reason, std::size_t size) {
  tessel_status code = TESSEL_STATUS_INTERNAL_ERROR;
  switch (s.code) {
    case tessel::StatusCode::success:
      code = TESSEL_STATUS_SUCCESS;
      break;
    case tessel::StatusCode::invalid_argument:
      code = TESSEL_STATUS_INVALID_ARGUMENT;
      break;
    case tessel::StatusCode::not_supported:
      code = TESSEL_STATUS_NOT_SUPPORTED;
      break;
    case tessel::StatusCode::arch_mismatch:
      code = TESSEL_STATUS_ARCH_MISMATCH;
      break;
    case tessel::StatusCode::no_device:
      code = TESSEL_STATUS_NO_DEVICE;
      break;
    case tessel::StatusCode::cuda_error:
      code = TESSEL_STATUS_CUDA_ERROR;
      break;
  }
  return write_reason(code, s.reason, reason, size);
}

// Runs body() -> tessel_status, turning an escaping exception into TESSEL_STATUS_INTERNAL_ERROR.
template <class Body>
tessel_status guarded(char const* what, char* reason, std::size_t size, Body&& body) noexcept {
  try {
    return body();
  } catch (std::bad_alloc const&) {
    return write_reason(TESSEL_STATUS_INTERNAL_ERROR, std::string(what) + ": out of host memory", reason, size);
  } catch (std::exception const& e) {
    return write_reason(TESSEL_STATUS_INTERNAL_ERROR, std::string(what) + ": " + e.what(), reason, size);
  } catch (...) {
    return write_reason(TESSEL_STATUS_INTERNAL_ERROR, std::string(what) + ": an unknown exception", reason, size);
  }
}

}  // namespace tessel::capi
