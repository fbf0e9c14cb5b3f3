// python/src/arrays.hpp -- Python array objects as C ABI tensors (tessel/c_api.h).
//
// Three sources, tried in this order:
//   torch.Tensor               read directly (data_ptr(), shape, stride(), dtype, get_device()):
//                              a few attribute calls, where a DLPack export costs microseconds;
//   __dlpack__                 any producer (CuPy, JAX, ...): __dlpack_device__() first, then a
//                              legacy "dltensor" capsule exported for the stream the call runs on
//                              (the producer orders its pending work before that stream);
//   __cuda_array_interface__   version 2 or 3 (Numba, CuPy, test fakes): float32 and float16
//                              only, since its type strings name no bfloat16 or fp8.
// Refusals are Python exceptions that start with the argument's name: TypeError for what the
// object or its dtype is, ValueError for where it lives and how it is laid out. An argument holds
// values (float32, float16, bfloat16, fp8) or, as attention's cu_seqlens do, int32 offsets.
#pragma once

#include <pybind11/pybind11.h>  // first: Python's headers set feature macros for the system headers
#include <tessel/c_api.h>

#include <cstdint>
#include <memory>

namespace tessel::python {

namespace py = pybind11;

// The DLPack 0.x ABI (DLManagedTensor in a "dltensor" capsule), declared here so the module needs
// no DLPack header; field order and types are the protocol's.
struct DLDeviceAbi {
  std::int32_t device_type;  // 1 CPU, 2 CUDA, 3 CUDA pinned host, 13 CUDA managed, ...
  std::int32_t device_id;
};
struct DLDataTypeAbi {
  std::uint8_t code;  // 0 int, 1 uint, 2 float, 4 bfloat, 10 float8_e4m3fn, 12 float8_e5m2, ...
  std::uint8_t bits;
  std::uint16_t lanes;
};
struct DLTensorAbi {
  void* data;
  DLDeviceAbi device;
  std::int32_t ndim;
  DLDataTypeAbi dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; NULL: compact row-major
  std::uint64_t byte_offset;
};
struct DLManagedTensorAbi {
  DLTensorAbi dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorAbi* self);
};

struct DlpackRelease {
  void operator()(DLManagedTensorAbi* m) const {
    if (m != nullptr && m->deleter != nullptr) m->deleter(m);
  }
};

enum class Source { torch, dlpack, cai };

// What an argument's elements are: operand values, or int32 offsets (TESSEL_DTYPE_I32).
enum class Elements { values, offsets };

// One array argument of a call.
struct Operand {
  char const* name = "";
  char const* rank_rule = "";  // the reason's rule for a rank no call takes (0-d, or above TESSEL_MAX_DIMS)
  Elements elements = Elements::values;
  py::object obj;
  Source source = Source::cai;
  bool cupy = false;        // a CuPy array: its current stream is the default
  int device = -1;          // CUDA ordinal; -1 until known (a __cuda_array_interface__ pointer is looked up)
  tessel_tensor t{};        // filled by describe()
  bool readonly = false;    // __cuda_array_interface__'s flag
  bool has_stream = false;  // __cuda_array_interface__ v3 "stream": where the data is produced
  std::intptr_t stream = 0;
  std::unique_ptr<DLManagedTensorAbi, DlpackRelease> managed;  // the consumed DLPack tensor
};

// What `obj` is and on which device it lives; for a torch tensor and a __cuda_array_interface__
// object also its shape, strides and dtype. No CUDA calls, no DLPack export yet. rank_rule is the
// sentence a refused rank gets ("a GEMM operand is 2-D (rows x cols) or 3-D (batch x rows x cols)").
Operand inspect(py::handle obj, char const* name, char const* rank_rule, Elements elements = Elements::values);

// A DLPack operand's shape, strides and dtype, from a capsule exported for `stream` (a raw
// cudaStream_t value; 0 is passed to the producer as 1, DLPack's legacy default stream).
void export_dlpack(Operand& op, std::intptr_t stream);

// The device of a __cuda_array_interface__ operand, from its pointer (cudaPointerGetAttributes):
// ValueError for host memory, RuntimeError when CUDA cannot answer.
void locate(Operand& op);

// The default stream of a call whose first array is `op` (tessel.gemm's docstring).
std::intptr_t default_stream(Operand const& op);

// The array libraries' name of a tessel dtype ("float32", "bfloat16", "float8_e4m3fn", ...).
char const* dtype_name(tessel_dtype d);

}  // namespace tessel::python
