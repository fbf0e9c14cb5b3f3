// src/capi/refusal.cpp -- the helpers of the C ABI's problem mappings (refusal.hpp).
#include "refusal.hpp"

#include <tessel/c_api.h>

#include <array>
#include <string>
#include <string_view>
#include <utility>

namespace tessel::capi {

std::string tuple_text(std::int64_t const* v, int n) {
  std::string s = "(";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + num(v[i]);
  return s + (n == 1 ? ",)" : ")");
}

bool is_tessel_dtype(std::int32_t d) { return d >= TESSEL_DTYPE_F32 && d <= TESSEL_DTYPE_I32; }

std::optional<DType> element_type(std::int32_t d) {
  switch (d) {
    case TESSEL_DTYPE_F32:
      return DType::f32;
    case TESSEL_DTYPE_F16:
      return DType::f16;
    case TESSEL_DTYPE_BF16:
      return DType::bf16;
    case TESSEL_DTYPE_TF32:
      return DType::tf32;
    case TESSEL_DTYPE_E4M3:
      return DType::e4m3;
    case TESSEL_DTYPE_E5M2:
      return DType::e5m2;
    default:
      return std::nullopt;
  }
}

std::string dtype_text(std::int32_t d) {
  if (std::optional<DType> const t = element_type(d)) return to_string(*t);
  if (d == TESSEL_DTYPE_I32) return "int32";
  return "dtype " + num(d);
}

bool elements_distinct(std::int64_t const* shape, std::int64_t const* strides, int ndim) {
  std::array<std::pair<std::int64_t, std::int64_t>, TESSEL_MAX_DIMS> dims{};  // (stride, extent)
  int n = 0;
  for (int i = 0; i < ndim && i < TESSEL_MAX_DIMS; ++i)
    if (shape[i] > 1) dims[n++] = {strides[i], shape[i]};
  for (int i = 1; i < n; ++i)  // insertion sort of at most TESSEL_MAX_DIMS
    for (int j = i; j > 0 && dims[j] < dims[j - 1]; --j) std::swap(dims[j], dims[j - 1]);
  std::int64_t reach = 0;
  for (int i = 0; i < n; ++i) {
    if (dims[i].first <= reach) return false;
    std::int64_t step = 0;
    if (__builtin_mul_overflow(dims[i].first, dims[i].second - 1, &step) || __builtin_add_overflow(reach, step, &reach))
      return true;
  }
  return true;
}

Named named(tessel_tensor const& t, char const* field, char const* fallback) {
  char const* const name = t.name != nullptr ? t.name : fallback != nullptr ? fallback : field;
  return {&t, field, name};
}

std::int64_t stride_of(tessel_tensor const& t, int i) {
  bool empty = false;
  for (int j = 0; j < t.ndim; ++j) empty = empty || t.shape[j] == 0;
  if (!empty && t.shape[i] > 1) return t.strides[i];
  std::int64_t packed = 1;
  for (int j = i + 1; j < t.ndim; ++j) packed *= t.shape[j] > 1 ? t.shape[j] : 1;
  return packed;
}

std::string with_callers_names(std::string why, Named const* const* tensors, int n) {
  for (int i = 0; i < n; ++i) {
    std::string_view const field = tensors[i]->field;
    if (why.size() <= field.size() || why.compare(0, field.size(), field) != 0) continue;
    char const next = why[field.size()];
    if (next == ':') return tensors[i]->name + why.substr(field.size());
    if (next == '.' || next == '_') return tensors[i]->name + "." + why.substr(field.size() + 1);
  }
  return why;
}

}  // namespace tessel::capi
