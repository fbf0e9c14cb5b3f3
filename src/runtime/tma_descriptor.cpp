// src/runtime/tma_descriptor.cpp -- cuTensorMapEncodeTiled through the runtime's driver entry point,
// and TmaEncodeArgs handed to it.
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

Status encode_tiled_entry(EncodeTiled* out) {
  static std::once_flag once;
  static EncodeTiled fn = nullptr;
  static cudaError_t err = cudaSuccess;
  static cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSuccess;
  std::call_once(once, [] {
    void* p = nullptr;
    err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found);
    fn = reinterpret_cast<EncodeTiled>(p);
  });
  if (err != cudaSuccess)
    return Status::error(StatusCode::cuda_error, std::string("cudaGetDriverEntryPointByVersion(cuTensorMapEncodeTiled): ") +
                                                     cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
  if (found != cudaDriverEntryPointSuccess || fn == nullptr)
    return Status::error(StatusCode::cuda_error, "cuTensorMapEncodeTiled: the CUDA driver has no such entry point (needs 12.0 or newer)");
  *out = fn;
  return Status::success();
}

}  // namespace detail

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
    os << "cuTensorMapEncodeTiled refused the tensor map (CUresult " << int(r) << "): rank " << a.rank << ", dims";
    for (std::uint32_t d = 0; d < a.rank; ++d) os << ' ' << dims[d];
    os << ", byte strides";
    for (std::uint32_t d = 0; d + 1 < a.rank; ++d) os << ' ' << strides[d];
    os << ", box";
    for (std::uint32_t d = 0; d < a.rank; ++d) os << ' ' << box[d];
    os << ", swizzle " << int(a.swizzle);
    return Status::error(StatusCode::cuda_error, os.str());
  }
  std::memcpy(out, &map, sizeof(map));
  return Status::success();
}

}  // namespace tessel
