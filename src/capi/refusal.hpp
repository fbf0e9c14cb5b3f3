// src/capi/refusal.hpp -- what the C ABI's problem mappings share: a refusal (a status and its
// reason), the text reasons give values, tuples and dtypes, and the distinct-addresses test of an
// output. No CUDA calls.
#pragma once

#include <tessel/c_api.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tessel/core/dtype.hpp>
#include <utility>

namespace tessel::capi {

struct Refusal {
  tessel_status code = TESSEL_STATUS_SUCCESS;
  std::string reason;  // empty on success

  bool ok() const { return code == TESSEL_STATUS_SUCCESS; }
};

inline Refusal refuse(tessel_status code, std::string why) { return {code, std::move(why)}; }
inline Refusal invalid(std::string why) { return refuse(TESSEL_STATUS_INVALID_ARGUMENT, std::move(why)); }

inline std::string num(std::int64_t v) { return std::to_string(v); }

// "(4, 5)", or "(4,)" for one value: Python's tuple text, which most readers of these reasons see.
std::string tuple_text(std::int64_t const* v, int n);

// Whether d is an enumerator of tessel_dtype.
bool is_tessel_dtype(std::int32_t d);

// The element type of a floating-point tessel_dtype; nullopt for TESSEL_DTYPE_I32 and for values
// outside the enum.
std::optional<DType> element_type(std::int32_t d);

// A tessel_dtype as reasons write it: DType's name ("bf16"), "int32", or "dtype 42".
std::string dtype_text(std::int32_t d);

// One tensor of a problem with the name its reasons use: the caller's (tessel_tensor::name), else
// `fallback`, else `field` -- the host API's name for it, which its validators' reasons start with.
struct Named {
  tessel_tensor const* t = nullptr;
  char const* field = "";
  std::string name;

  bool present() const { return t->ndim != 0; }
  std::string shape_text() const { return tuple_text(t->shape, t->ndim); }
  std::string strides_text() const { return tuple_text(t->strides, t->ndim); }
  std::string view_text() const { return " (shape " + shape_text() + ", strides " + strides_text() + ")"; }
  std::int64_t elements() const {
    std::int64_t n = 1;
    for (int i = 0; i < t->ndim; ++i) n *= t->shape[i];
    return n;
  }
};
Named named(tessel_tensor const& t, char const* field, char const* fallback = nullptr);

// The stride of dimension i as the host API takes it: the tensor's own where it forms an address,
// else the packed value (a dimension of extent <= 1, or an empty tensor, has no stride of its own).
std::int64_t stride_of(tessel_tensor const& t, int i);

// A host API reason in the caller's names. The validators name the host API's fields
// ("q.row_stride: ...", "o_row_stride: ...", "filter.stride_k: ...", "out: ..."); the C ABI names
// the caller's tensors, one way for all: "<name>.row_stride: ...", "<name>: ..." (o named "out":
// "o_row_stride: ..." -> "out.row_stride: ..."). tensors: the problem's n tensors.
std::string with_callers_names(std::string why, Named const* const* tensors, int n);

// A sufficient test that every element of a strided tensor has its own address: with the
// dimensions of extent > 1 sorted by stride, each stride exceeds the largest offset the smaller
// ones reach. Offsets past 2^63 count as distinct (the host API's validators refuse them).
bool elements_distinct(std::int64_t const* shape, std::int64_t const* strides, int ndim);

}  // namespace tessel::capi
