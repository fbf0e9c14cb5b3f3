// src/runtime/tma_descriptor.cpp -- cuTensorMapEncodeTiled and cuTensorMapEncodeIm2col through the
// runtime's driver entry points, and TmaEncodeArgs / TmaIm2colArgs handed to them.
#include "tma_encode_entry.hpp"

#include <tessel/runtime/tma_descriptor.hpp>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstring>
#include <mutex>
#include <sstream>
#include <string>

namespace tessel {

// tessel's mirrors of the driver's enumerators hold the driver's values.
static_assert(int(TmaDataType::UINT8) == CU_TENSOR_MAP_DATA_TYPE_UINT8 &&
                  int(TmaDataType::FLOAT16) == CU_TENSOR_MAP_DATA_TYPE_FLOAT16 &&
                  int(TmaDataType::BFLOAT16) == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 &&
                  int(TmaDataType::FLOAT32) == CU_TENSOR_MAP_DATA_TYPE_FLOAT32 &&
                  int(TmaDataType::TFLOAT32_FTZ) == CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ,
              "TmaDataType must mirror CUtensorMapDataType");
static_assert(int(TmaSwizzle::B32) == CU_TENSOR_MAP_SWIZZLE_32B && int(TmaSwizzle::B64) == CU_TENSOR_MAP_SWIZZLE_64B &&
                  int(TmaSwizzle::B128) == CU_TENSOR_MAP_SWIZZLE_128B,
              "TmaSwizzle must mirror CUtensorMapSwizzle");
static_assert(int(TmaL2Promotion::L2_256B) == CU_TENSOR_MAP_L2_PROMOTION_L2_256B &&
                  int(TmaOobFill::NAN_REQUEST_ZERO_FMA) == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA,
              "TmaL2Promotion / TmaOobFill must mirror the driver's enumerators");
static_assert(sizeof(CUtensorMap) == sizeof(TmaDescriptor), "TmaDescriptor must mirror CUtensorMap");

namespace detail {

namespace {

// A driver entry point looked up once per process.
struct DriverEntry {
  std::once_flag once;
  void* fn = nullptr;
  cudaError_t err = cudaSuccess;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSuccess;
};

Status driver_entry(DriverEntry& e, char const* name, void** out) {
  std::call_once(e.once, [&] { e.err = cudaGetDriverEntryPointByVersion(name, &e.fn, 12000, cudaEnableDefault, &e.found); });
  if (e.err != cudaSuccess)
    return Status::error(StatusCode::cuda_error, std::string("cudaGetDriverEntryPointByVersion(") + name + "): " +
                                                     cudaGetErrorName(e.err) + ": " + cudaGetErrorString(e.err));
  if (e.found != cudaDriverEntryPointSuccess || e.fn == nullptr)
    return Status::error(StatusCode::cuda_error, std::string(name) + ": the CUDA driver has no such entry point (needs 12.0 or newer)");
  *out = e.fn;
  return Status::success();
}

}  // namespace

Status encode_tiled_entry(EncodeTiled* out) {
  static DriverEntry entry;
  void* fn = nullptr;
  if (Status s = driver_entry(entry, "cuTensorMapEncodeTiled", &fn); !s) return s;
  *out = reinterpret_cast<EncodeTiled>(fn);
  return Status::success();
}

Status encode_im2col_entry(EncodeIm2col* out) {
  static DriverEntry entry;
  void* fn = nullptr;
  if (Status s = driver_entry(entry, "cuTensorMapEncodeIm2col", &fn); !s) return s;
  *out = reinterpret_cast<EncodeIm2col>(fn);
  return Status::success();
}

}  // namespace detail

namespace {

// "<encoder> refused the tensor map (CUresult r): rank R, dims ..., byte strides ..."
void describe_refusal(std::ostringstream& os, char const* encoder, CUresult r, std::uint32_t rank, cuuint64_t const* dims,
                      cuuint64_t const* strides) {
  os << encoder << " refused the tensor map (CUresult " << int(r) << "): rank " << rank << ", dims";
  for (std::uint32_t d = 0; d < rank; ++d) os << ' ' << dims[d];
  os << ", byte strides";
  for (std::uint32_t d = 0; d + 1 < rank; ++d) os << ' ' << strides[d];
}

}  // namespace

Status encode_tma_descriptor(TmaEncodeArgs const& a, TmaDescriptor* out) {
  detail::EncodeTiled encode = nullptr;
  if (Status s = detail::encode_tiled_entry(&encode); !s) return s;
  cuuint64_t dims[5] = {}, strides[4] = {};
  cuuint32_t box[5] = {}, elem[5] = {};
  for (std::uint32_t d = 0; d < a.rank && d < 5; ++d) {
    dims[d] = a.global_dim[d];
    box[d] = a.box_dim[d];
    elem[d] = a.element_strides[d];
    if (d + 1 < a.rank) strides[d] = a.global_strides[d];
  }
  CUtensorMap map;
  CUresult const r = encode(&map, CUtensorMapDataType(a.data_type), a.rank, const_cast<void*>(a.global_address), dims,
                            strides, box, elem, CUtensorMapInterleave(a.interleave), CUtensorMapSwizzle(a.swizzle),
                            CUtensorMapL2promotion(a.l2_promotion), CUtensorMapFloatOOBfill(a.oob_fill));
  if (r != CUDA_SUCCESS) {
    std::ostringstream os;
    describe_refusal(os, "cuTensorMapEncodeTiled", r, a.rank, dims, strides);
    os << ", box";
    for (std::uint32_t d = 0; d < a.rank; ++d) os << ' ' << box[d];
    os << ", swizzle " << int(a.swizzle);
    return Status::error(StatusCode::cuda_error, os.str());
  }
  std::memcpy(out, &map, sizeof(map));
  return Status::success();
}

Status encode_tma_im2col_descriptor(TmaIm2colArgs const& a, TmaDescriptor* out) {
  if (a.rank < 3 || a.rank > 5)
    return Status::error(StatusCode::invalid_argument, "im2col tensor map: rank " + std::to_string(a.rank) + " is not 3, 4 or 5");
  detail::EncodeIm2col encode = nullptr;
  if (Status s = detail::encode_im2col_entry(&encode); !s) return s;
  cuuint64_t dims[5] = {}, strides[4] = {};
  cuuint32_t elem[5] = {};
  int lower[3] = {}, upper[3] = {};
  for (std::uint32_t d = 0; d < a.rank; ++d) {
    dims[d] = a.global_dim[d];
    elem[d] = a.element_strides[d];
    if (d + 1 < a.rank) strides[d] = a.global_strides[d];
  }
  for (std::uint32_t d = 0; d + 2 < a.rank; ++d) lower[d] = a.lower_corner[d], upper[d] = a.upper_corner[d];
  CUtensorMap map;
  CUresult const r = encode(&map, CUtensorMapDataType(a.data_type), a.rank, const_cast<void*>(a.global_address), dims, strides,
                            lower, upper, a.channels_per_pixel, a.pixels_per_column, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            CUtensorMapSwizzle(a.swizzle), CUtensorMapL2promotion(a.l2_promotion),
                            CUtensorMapFloatOOBfill(a.oob_fill));
  if (r != CUDA_SUCCESS) {
    std::ostringstream os;
    describe_refusal(os, "cuTensorMapEncodeIm2col", r, a.rank, dims, strides);
    os << ", corners";
    for (std::uint32_t d = 0; d + 2 < a.rank; ++d) os << ' ' << lower[d] << ".." << upper[d];
    os << ", traversal strides";
    for (std::uint32_t d = 0; d < a.rank; ++d) os << ' ' << elem[d];
    os << ", " << a.channels_per_pixel << " channels x " << a.pixels_per_column << " pixels";
    return Status::error(StatusCode::cuda_error, os.str());
  }
  std::memcpy(out, &map, sizeof(map));
  return Status::success();
}

}  // namespace tessel
