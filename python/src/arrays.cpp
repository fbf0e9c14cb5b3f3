// python/src/arrays.cpp -- Python array objects as C ABI tensors (arrays.hpp).
#include "arrays.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace tessel::python {

namespace {

std::string str(py::handle h) { return py::str(h).cast<std::string>(); }

std::string type_name(py::handle obj) {
  py::handle const t = reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr()));
  std::string const mod = py::hasattr(t, "__module__") ? str(t.attr("__module__")) : "";
  std::string const qual = str(t.attr("__qualname__"));
  return mod.empty() || mod == "builtins" ? qual : mod + "." + qual;
}

bool from_module(py::handle obj, char const* prefix) {
  py::handle const t = reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr()));
  if (!py::hasattr(t, "__module__")) return false;
  std::string const mod = str(t.attr("__module__"));
  std::string const p(prefix);
  return mod == p || mod.rfind(p + ".", 0) == 0;
}

constexpr char kTakes[] = "; tessel takes float32, float16, bfloat16, float8_e4m3fn and float8_e5m2";
constexpr char kOffsetsTake[] = "; sequence offsets are int32";

// The dtype rule of what the operand holds: values are any tessel_dtype but int32, offsets int32.
bool holds(Operand const& op, tessel_dtype d) { return (d == TESSEL_DTYPE_I32) == (op.elements == Elements::offsets); }
char const* takes(Operand const& op) { return op.elements == Elements::offsets ? kOffsetsTake : kTakes; }

// ---- torch, read directly ------------------------------------------------------------------------

// torch's objects, looked up once torch is imported (this module never imports it). The
// references are kept for the life of the process.
struct Torch {
  PyObject* tensor_type = nullptr;
  PyObject* dtypes[6] = {};        // float32, float16, bfloat16, e4m3fn, e5m2, int32 (kTorchDtypes' order)
  PyObject* raw_stream = nullptr;  // torch._C._cuda_getCurrentRawStream(device) -> int, or null
};

Torch const* torch_api() {
  static Torch api;
  static bool loaded = false;
  if (loaded) return &api;
  PyObject* torch = PyImport_GetModule(py::str("torch").ptr());  // new reference, or null without an error
  if (torch == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  py::object const t = py::reinterpret_steal<py::object>(torch);
  if (!py::hasattr(t, "Tensor") || !py::hasattr(t, "bfloat16")) return nullptr;  // torch still importing
  api.tensor_type = py::object(t.attr("Tensor")).release().ptr();
  char const* const names[] = {"float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "int32"};
  for (int i = 0; i < 6; ++i)
    api.dtypes[i] = py::hasattr(t, names[i]) ? py::object(t.attr(names[i])).release().ptr() : nullptr;
  py::object const c = t.attr("_C");
  if (py::hasattr(c, "_cuda_getCurrentRawStream"))
    api.raw_stream = py::object(c.attr("_cuda_getCurrentRawStream")).release().ptr();
  loaded = true;
  return &api;
}

tessel_dtype const kTorchDtypes[6] = {TESSEL_DTYPE_F32,  TESSEL_DTYPE_F16,  TESSEL_DTYPE_BF16,
                                      TESSEL_DTYPE_E4M3, TESSEL_DTYPE_E5M2, TESSEL_DTYPE_I32};

PyObject* interned(char const* s) {
  PyObject* o = PyUnicode_InternFromString(s);  // kept for the life of the process
  if (o == nullptr) throw py::error_already_set();
  return o;
}

py::object call0(PyObject* obj, PyObject* method) {
  PyObject* r = PyObject_CallMethodNoArgs(obj, method);
  if (r == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(r);
}

py::object get(PyObject* obj, PyObject* attr) {
  PyObject* r = PyObject_GetAttr(obj, attr);
  if (r == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(r);
}

std::int64_t as_int64(PyObject* o) {
  long long const v = PyLong_AsLongLong(o);
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  return v;
}

void copy_dims(Operand& op, PyObject* tuple, std::int64_t* to, char const* what) {
  if (!PyTuple_Check(tuple)) throw py::type_error(std::string(op.name) + ": " + what + " is not a tuple");
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuple); ++i) to[i] = as_int64(PyTuple_GET_ITEM(tuple, i));
}

// A 0-d array is refused here: to the C ABI, ndim 0 means "not given".
void check_rank(Operand const& op, std::int64_t ndim) {
  if (ndim == 0 || ndim > TESSEL_MAX_DIMS)
    throw py::value_error(std::string(op.name) + ": has " + std::to_string(ndim) + " dimensions; " + op.rank_rule);
}

void inspect_torch(Operand& op, Torch const& api) {
  static PyObject* const s_get_device = interned("get_device");
  static PyObject* const s_dtype = interned("dtype");
  static PyObject* const s_shape = interned("shape");
  static PyObject* const s_stride = interned("stride");
  static PyObject* const s_data_ptr = interned("data_ptr");
  PyObject* const o = op.obj.ptr();
  op.source = Source::torch;
  op.device = int(as_int64(call0(o, s_get_device).ptr()));
  if (op.device < 0)
    throw py::value_error(std::string(op.name) + ": is a torch tensor on " + str(op.obj.attr("device").attr("type")) +
                          "; tessel needs CUDA tensors");
  py::object const dtype = get(o, s_dtype);
  int found = -1;
  for (int i = 0; i < 6; ++i)
    if (dtype.ptr() == api.dtypes[i] && holds(op, kTorchDtypes[i])) found = i;
  if (found < 0) throw py::type_error(std::string(op.name) + ": dtype " + str(dtype) + " is not supported" + takes(op));
  op.t.dtype = kTorchDtypes[found];
  py::object const shape = get(o, s_shape);
  py::object const strides = call0(o, s_stride);
  Py_ssize_t const ndim = PyTuple_Check(shape.ptr()) ? PyTuple_GET_SIZE(shape.ptr()) : 0;
  check_rank(op, ndim);
  op.t.ndim = std::int32_t(ndim);
  copy_dims(op, shape.ptr(), op.t.shape, "shape");
  copy_dims(op, strides.ptr(), op.t.strides, "stride()");
  py::object const ptr = call0(o, s_data_ptr);
  op.t.data = PyLong_AsVoidPtr(ptr.ptr());
  if (op.t.data == nullptr && PyErr_Occurred()) throw py::error_already_set();
}

// ---- DLPack ----------------------------------------------------------------------------------------

constexpr std::int32_t kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13;

std::string device_type_text(std::int32_t t) {
  std::string const n = std::to_string(t);
  if (t == kDLCPU) return n + " (CPU)";
  if (t == kDLCUDAHost) return n + " (CUDA pinned host memory)";
  return n;
}

std::string dl_dtype_text(DLDataTypeAbi d) {
  std::string const bits = std::to_string(d.bits);
  std::string name;
  switch (d.code) {
    case 0:
      name = "int" + bits;
      break;
    case 1:
      name = "uint" + bits;
      break;
    case 2:
      name = "float" + bits;
      break;
    case 4:
      name = "bfloat" + bits;
      break;
    case 5:
      name = "complex" + bits;
      break;
    case 6:
      name = "bool";
      break;
    case 10:
      name = "float8_e4m3fn";
      break;
    case 12:
      name = "float8_e5m2";
      break;
    default:
      name = "DLPack type code " + std::to_string(d.code) + " with " + bits + " bits";
  }
  if (d.lanes != 1) name += " x " + std::to_string(d.lanes) + " lanes";
  return name;
}

bool dl_to_tessel(DLDataTypeAbi d, tessel_dtype* out) {
  if (d.lanes != 1) return false;
  if (d.code == 2 && d.bits == 32)
    *out = TESSEL_DTYPE_F32;
  else if (d.code == 2 && d.bits == 16)
    *out = TESSEL_DTYPE_F16;
  else if (d.code == 4 && d.bits == 16)
    *out = TESSEL_DTYPE_BF16;
  else if (d.code == 10 && d.bits == 8)
    *out = TESSEL_DTYPE_E4M3;
  else if (d.code == 12 && d.bits == 8)
    *out = TESSEL_DTYPE_E5M2;
  else if (d.code == 0 && d.bits == 32)
    *out = TESSEL_DTYPE_I32;
  else
    return false;
  return true;
}

void inspect_dlpack(Operand& op) {
  op.source = Source::dlpack;
  op.cupy = from_module(op.obj, "cupy");
  if (!py::hasattr(op.obj, "__dlpack_device__"))
    throw py::type_error(std::string(op.name) +
                         ": has __dlpack__ but no __dlpack_device__, which the DLPack protocol requires");
  py::tuple const dev = op.obj.attr("__dlpack_device__")();
  if (dev.size() != 2) throw py::type_error(std::string(op.name) + ": __dlpack_device__() did not return (type, id)");
  std::int32_t const type = dev[0].cast<std::int32_t>();
  if (type != kDLCUDA && type != kDLCUDAManaged)
    throw py::value_error(std::string(op.name) + ": lives on DLPack device type " + device_type_text(type) +
                          "; tessel needs CUDA device memory");
  op.device = dev[1].cast<int>();
}

// ---- __cuda_array_interface__ --------------------------------------------------------------------

void inspect_cai(Operand& op) {
  op.source = Source::cai;
  op.cupy = from_module(op.obj, "cupy");
  std::string const n = op.name;
  py::object const iface = op.obj.attr("__cuda_array_interface__");
  if (!py::isinstance<py::dict>(iface)) throw py::type_error(n + ": __cuda_array_interface__ is not a dict");
  py::dict const d = iface;
  for (char const* key : {"shape", "typestr", "data"})
    if (!d.contains(key)) throw py::type_error(n + ": __cuda_array_interface__ has no '" + key + "'");
  if (d.contains("mask") && !d["mask"].is_none())
    throw py::value_error(n + ": is a masked array (__cuda_array_interface__ 'mask'); tessel takes unmasked arrays");

  std::string const typestr = str(d["typestr"]);
  std::int64_t itemsize = 0;
  std::string const kind = typestr.size() == 3 && (typestr[0] == '<' || typestr[0] == '=' || typestr[0] == '|')
                               ? typestr.substr(1)
                               : typestr;
  if (kind == "f4" && holds(op, TESSEL_DTYPE_F32))
    op.t.dtype = TESSEL_DTYPE_F32, itemsize = 4;
  else if (kind == "f2" && holds(op, TESSEL_DTYPE_F16))
    op.t.dtype = TESSEL_DTYPE_F16, itemsize = 2;
  else if (kind == "i4" && holds(op, TESSEL_DTYPE_I32))
    op.t.dtype = TESSEL_DTYPE_I32, itemsize = 4;
  else if (op.elements == Elements::offsets)
    throw py::type_error(n + ": dtype '" + typestr + "' (from __cuda_array_interface__) is not supported" +
                         kOffsetsTake + " ('<i4')");
  else
    throw py::type_error(
        n + ": dtype '" + typestr + "' (from __cuda_array_interface__) is not supported; tessel takes " +
        "float32 ('<f4') and float16 ('<f2') this way, and bfloat16 and fp8 through DLPack (__dlpack__)");

  py::tuple const shape = d["shape"];
  check_rank(op, std::int64_t(shape.size()));
  op.t.ndim = std::int32_t(shape.size());
  for (int i = 0; i < op.t.ndim; ++i) op.t.shape[i] = shape[i].cast<std::int64_t>();
  std::int64_t packed = 1;
  for (int i = op.t.ndim - 1; i >= 0; --i) {
    op.t.strides[i] = packed;
    packed *= op.t.shape[i] > 1 ? op.t.shape[i] : 1;
  }
  if (d.contains("strides") && !d["strides"].is_none()) {
    py::tuple const strides = d["strides"];
    if (std::int64_t(strides.size()) != op.t.ndim)
      throw py::value_error(n + ": __cuda_array_interface__ has " + std::to_string(strides.size()) + " strides for " +
                            std::to_string(op.t.ndim) + " dimensions");
    for (int i = 0; i < op.t.ndim; ++i) {
      std::int64_t const bytes = strides[i].cast<std::int64_t>();
      if (bytes % itemsize != 0)
        throw py::value_error(n + ": stride " + std::to_string(bytes) + " bytes of dimension " + std::to_string(i) +
                              " is not a whole number of " + std::to_string(itemsize) + "-byte elements");
      op.t.strides[i] = bytes / itemsize;
    }
  }
  py::tuple const data = d["data"];
  if (data.size() != 2) throw py::type_error(n + ": __cuda_array_interface__ 'data' is not (pointer, read_only)");
  op.t.data = reinterpret_cast<void*>(data[0].cast<std::uintptr_t>());
  op.readonly = data[1].cast<bool>();
  if (d.contains("stream") && !d["stream"].is_none()) {
    std::intptr_t const s = d["stream"].cast<std::intptr_t>();
    if (s == 0)
      throw py::value_error(n +
                            ": __cuda_array_interface__ 'stream' is 0, which the protocol disallows "
                            "(1 is the legacy default stream, 2 the per-thread one)");
    op.has_stream = true;
    op.stream = s;
  }
}

}  // namespace

Operand inspect(py::handle obj, char const* name, char const* rank_rule, Elements elements) {
  Operand op;
  op.name = name;
  op.rank_rule = rank_rule;
  op.elements = elements;
  op.obj = py::reinterpret_borrow<py::object>(obj);
  op.t.name = name;
  if (Torch const* api = torch_api();
      api != nullptr && PyObject_TypeCheck(obj.ptr(), reinterpret_cast<PyTypeObject*>(api->tensor_type))) {
    inspect_torch(op, *api);
    return op;
  }
  if (py::hasattr(obj, "__dlpack__")) {
    inspect_dlpack(op);
    return op;
  }
  if (py::hasattr(obj, "__cuda_array_interface__")) {
    inspect_cai(op);
    return op;
  }
  throw py::type_error(std::string(name) + ": expected a CUDA array (an object with __dlpack__ or " +
                       "__cuda_array_interface__, such as a torch tensor or a CuPy array), got " + type_name(obj));
}

void export_dlpack(Operand& op, std::intptr_t stream) {
  std::string const n = op.name;
  py::object const cap = op.obj.attr("__dlpack__")(py::arg("stream") = stream == 0 ? std::intptr_t(1) : stream);
  if (!PyCapsule_IsValid(cap.ptr(), "dltensor"))
    throw py::type_error(n + ": __dlpack__() returned no unused 'dltensor' capsule");
  auto* m = static_cast<DLManagedTensorAbi*>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
  if (m == nullptr || PyCapsule_SetName(cap.ptr(), "used_dltensor") != 0) throw py::error_already_set();
  op.managed.reset(m);
  DLTensorAbi const& t = m->dl_tensor;
  if ((t.device.device_type != kDLCUDA && t.device.device_type != kDLCUDAManaged) || t.device.device_id != op.device)
    throw py::value_error(n + ": __dlpack__() exported device (" + std::to_string(t.device.device_type) + ", " +
                          std::to_string(t.device.device_id) + "), not the CUDA device " + std::to_string(op.device) +
                          " that __dlpack_device__() named");
  tessel_dtype dtype = TESSEL_DTYPE_F32;
  if (!dl_to_tessel(t.dtype, &dtype) || !holds(op, dtype))
    throw py::type_error(n + ": dtype " + dl_dtype_text(t.dtype) + " is not supported" + takes(op));
  op.t.dtype = dtype;
  check_rank(op, t.ndim);
  op.t.ndim = t.ndim;
  std::int64_t packed = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    op.t.shape[i] = t.shape[i];
    op.t.strides[i] = t.strides != nullptr ? t.strides[i] : packed;
    packed *= t.shape[i] > 1 ? t.shape[i] : 1;
  }
  op.t.data = t.data == nullptr ? nullptr : static_cast<char*>(t.data) + t.byte_offset;
}

void locate(Operand& op) {
  if (op.source != Source::cai || op.t.data == nullptr) return;
  for (int i = 0; i < op.t.ndim; ++i)
    if (op.t.shape[i] == 0) return;  // no element is addressed: any device will do
  cudaPointerAttributes attr{};
  cudaError_t const err = cudaPointerGetAttributes(&attr, op.t.data);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    throw std::runtime_error(std::string(op.name) + ": cudaPointerGetAttributes: " + cudaGetErrorName(err) + ": " +
                             cudaGetErrorString(err));
  }
  char address[32];
  std::snprintf(address, sizeof address, "%p", op.t.data);
  switch (attr.type) {
    case cudaMemoryTypeDevice:
    case cudaMemoryTypeManaged:
      op.device = attr.device;
      return;
    case cudaMemoryTypeHost:
      throw py::value_error(std::string(op.name) + ": " + address +
                            " is pinned host memory; tessel needs CUDA device memory");
    default:
      throw py::value_error(std::string(op.name) + ": " + address +
                            " is not CUDA memory (cudaPointerGetAttributes: unregistered host memory)");
  }
}

std::intptr_t default_stream(Operand const& op) {
  if (op.source == Source::torch) {
    Torch const* api = torch_api();
    if (api != nullptr && api->raw_stream != nullptr) {
      py::object const s = py::reinterpret_borrow<py::object>(api->raw_stream)(op.device);
      return s.cast<std::intptr_t>();
    }
    py::object const cuda = py::module_::import("torch.cuda");
    return cuda.attr("current_stream")(op.device).attr("cuda_stream").cast<std::intptr_t>();
  }
  if (op.cupy) {
    py::object const cuda = py::module_::import("cupy.cuda");
    return cuda.attr("get_current_stream")(op.device).attr("ptr").cast<std::intptr_t>();
  }
  if (op.source == Source::cai && op.has_stream) return op.stream;
  return 0;
}

char const* dtype_name(tessel_dtype d) {
  switch (d) {
    case TESSEL_DTYPE_F32:
      return "float32";
    case TESSEL_DTYPE_TF32:
      return "float32";
    case TESSEL_DTYPE_F16:
      return "float16";
    case TESSEL_DTYPE_BF16:
      return "bfloat16";
    case TESSEL_DTYPE_E4M3:
      return "float8_e4m3fn";
    case TESSEL_DTYPE_E5M2:
      return "float8_e5m2";
    case TESSEL_DTYPE_I32:
      return "int32";
  }
  return "?";
}

}  // namespace tessel::python
