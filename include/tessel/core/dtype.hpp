// tessel/core/dtype.hpp -- DType: the element types of tessel's host APIs, their names and sizes.
//
// Every kernel family's arguments (GEMM today; attention and convolution next) name their
// operands' types with DType, so it lives below them all. Plain C++: no CUDA headers needed.
//   e.g.  parse_dtype("bf16") == DType::bf16, size_of(DType::e4m3) == 1, to_string(DType::tf32) == "tf32"
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace tessel {

// fp32, fp16, bf16; tf32 (fp32 storage whose products a kernel may round to tf32: an input mode,
// never a storage type of an output); the OCP fp8 formats e4m3 and e5m2.
enum class DType { f32, f16, bf16, tf32, e4m3, e5m2 };

constexpr char const* to_string(DType t) {
  switch (t) {
    case DType::f32: return "fp32";
    case DType::f16: return "fp16";
    case DType::bf16: return "bf16";
    case DType::tf32: return "tf32";
    case DType::e4m3: return "e4m3";
    case DType::e5m2: return "e5m2";
  }
  return "?";
}

// The 8-bit float input types.
constexpr bool is_fp8(DType t) { return t == DType::e4m3 || t == DType::e5m2; }

// Bytes per stored element (tf32 is stored as fp32).
constexpr std::size_t size_of(DType t) {
  return is_fp8(t) ? 1 : (t == DType::f16 || t == DType::bf16) ? 2 : 4;
}

// "fp32"|"f32"|"float", "fp16"|"f16"|"half", "bf16", "tf32", "e4m3"|"fp8_e4m3",
// "e5m2"|"fp8_e5m2"; nullopt otherwise.
constexpr std::optional<DType> parse_dtype(std::string_view s) {
  if (s == "fp32" || s == "f32" || s == "float") return DType::f32;
  if (s == "fp16" || s == "f16" || s == "half") return DType::f16;
  if (s == "bf16") return DType::bf16;
  if (s == "tf32") return DType::tf32;
  if (s == "e4m3" || s == "fp8_e4m3") return DType::e4m3;
  if (s == "e5m2" || s == "fp8_e5m2") return DType::e5m2;
  return std::nullopt;
}

}  // namespace tessel
