// python/src/module.cpp -- tessel._C, the extension module: array objects in (arrays.hpp), the C
// ABI (tessel/c_api.h) underneath. tessel/__init__.py is its public face and documents it.
//
// A call inspects its array arguments (no CUDA yet), settles the stream, exports DLPack operands
// for that stream, checks every rule through tessel_gemm_check (still no CUDA: refusals work on
// machines without a GPU), allocates `out` through the registered allocator when it is None,
// finds the device of __cuda_array_interface__ pointers, and only then makes the operands' device
// current and runs, with the GIL released.
#include <cuda_runtime_api.h>
#include <pybind11/pybind11.h>
#include <tessel/c_api.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <tessel/gemm/device/gemm_registry.hpp>
#include <tessel/runtime/device.hpp>

#include "arrays.hpp"

namespace py = pybind11;
using namespace tessel::python;

namespace {

// tessel._allocate(like, shape, dtype_name, device) -> array, set by tessel/__init__.py (kept for
// the life of the process).
PyObject* g_allocator = nullptr;

[[noreturn]] void raise(tessel_status s, std::string const& why) {
  switch (s) {
    case TESSEL_STATUS_INVALID_DTYPE:
      throw py::type_error(why);
    case TESSEL_STATUS_INVALID_ARGUMENT:
    case TESSEL_STATUS_NOT_SUPPORTED:
      throw py::value_error(why);
    default:
      throw std::runtime_error(why);
  }
}

std::string type_of(py::handle h) { return py::str(reinterpret_cast<PyObject*>(Py_TYPE(h.ptr()))).cast<std::string>(); }

float real(py::handle v, char const* name) {
  double const d = PyFloat_AsDouble(v.ptr());
  if (d == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    throw py::type_error(std::string(name) + ": expected a real number, got " + type_of(v));
  }
  return float(d);
}

// A stream argument as a cudaStream_t value: an int handle (0 = the legacy default stream), or an
// object that carries one.
std::intptr_t stream_handle(py::handle s) {
  if (PyLong_Check(s.ptr()) && !PyBool_Check(s.ptr())) {
    long long const v = PyLong_AsLongLong(s.ptr());
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      throw py::value_error("stream: " + py::str(s).cast<std::string>() + " does not fit a CUDA stream handle");
    }
    if (v < 0)
      throw py::value_error("stream: " + std::to_string(v) +
                            " is not a CUDA stream handle (0 is the legacy default stream)");
    return std::intptr_t(v);
  }
  if (py::hasattr(s, "cuda_stream")) return s.attr("cuda_stream").cast<std::intptr_t>();  // torch.cuda.Stream
  if (py::hasattr(s, "__cuda_stream__")) {                                                // CUDA Python's protocol
    py::tuple const t = s.attr("__cuda_stream__")();
    return t[1].cast<std::intptr_t>();
  }
  if (py::hasattr(s, "ptr")) return s.attr("ptr").cast<std::intptr_t>();  // cupy.cuda.Stream
  throw py::type_error(
      "stream: expected a CUDA stream handle (int) or a stream object (torch.cuda.Stream, "
      "cupy.cuda.Stream, or one with __cuda_stream__), got " +
      type_of(s));
}

void same_device(std::array<Operand const*, 4> const& ops) {
  Operand const* first = nullptr;
  for (Operand const* op : ops) {
    if (op == nullptr || op->device < 0) continue;
    if (first == nullptr)
      first = op;
    else if (op->device != first->device)
      throw py::value_error(std::string(op->name) + ": is on CUDA device " + std::to_string(op->device) + ", but " +
                            first->name + " is on device " + std::to_string(first->device) +
                            "; all operands must be on one device");
  }
}

tessel_dtype default_out_dtype(std::int32_t in) {
  switch (in) {
    case TESSEL_DTYPE_F16:
      return TESSEL_DTYPE_F16;
    case TESSEL_DTYPE_BF16:
      return TESSEL_DTYPE_BF16;
    case TESSEL_DTYPE_E4M3:
    case TESSEL_DTYPE_E5M2:
      return TESSEL_DTYPE_BF16;
    default:
      return TESSEL_DTYPE_F32;
  }
}

// The `out` an allocation would make: (batch,) M x N, packed row-major, C's dtype or the inputs'
// default. Where a and b do not make a product, a 0 x 0 stand-in: the check then refuses a or b
// (their rules come before D's). The pointer is never dereferenced.
tessel_tensor planned_out(Operand const& a, Operand const& b, Operand const* c) {
  tessel_tensor t{};
  t.name = "out";
  t.data = reinterpret_cast<void*>(std::uintptr_t(256));
  t.dtype = c != nullptr ? c->t.dtype : default_out_dtype(a.t.dtype);
  auto const matrix = [](tessel_tensor const& x) { return x.ndim == 2 || x.ndim == 3; };
  t.ndim = 2;
  if (matrix(a.t) && matrix(b.t)) {
    bool const a3 = a.t.ndim == 3, b3 = b.t.ndim == 3;
    std::int64_t const m = a.t.shape[a.t.ndim - 2], n = b.t.shape[b.t.ndim - 1];
    if (a3 || b3) {
      std::int64_t const ab = a3 ? a.t.shape[0] : 1, bb = b3 ? b.t.shape[0] : 1;
      t.ndim = 3;
      t.shape[0] = a3 && b3 ? (ab == 1 ? bb : ab) : a3 ? ab : bb;
    }
    t.shape[t.ndim - 2] = m, t.shape[t.ndim - 1] = n;
  }
  std::int64_t packed = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    t.strides[i] = packed;
    packed *= t.shape[i] > 1 ? t.shape[i] : 1;
  }
  return t;
}

void check(tessel_gemm_problem const& p) {
  char why[1024];
  if (tessel_status const s = tessel_gemm_check(&p, why, sizeof why); s != TESSEL_STATUS_SUCCESS) raise(s, why);
}

[[noreturn]] void cuda_failure(char const* what, cudaError_t err) {
  (void)cudaGetLastError();
  throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

// Makes `device` current for the scope (nothing when it already is, or when device < 0).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    if (device < 0) return;
    if (cudaError_t err = cudaGetDevice(&previous_); err != cudaSuccess) cuda_failure("cudaGetDevice", err);
    if (previous_ == device) return;
    if (cudaError_t err = cudaSetDevice(device); err != cudaSuccess)
      cuda_failure(("cudaSetDevice(" + std::to_string(device) + ")").c_str(), err);
    restore_ = true;
  }
  ~DeviceGuard() {
    if (restore_) (void)cudaSetDevice(previous_);
  }
  DeviceGuard(DeviceGuard const&) = delete;
  DeviceGuard& operator=(DeviceGuard const&) = delete;

 private:
  int previous_ = 0;
  bool restore_ = false;
};

// __cuda_array_interface__ v3: data produced on another stream is ordered before `stream` by an
// event (the legacy default stream is both 0 and 1).
void wait_for_producers(std::array<Operand const*, 4> const& ops, std::intptr_t stream) {
  auto const same = [](std::intptr_t x, std::intptr_t y) { return (x == 1 ? 0 : x) == (y == 1 ? 0 : y); };
  for (Operand const* op : ops) {
    if (op == nullptr || op->source != Source::cai || !op->has_stream || same(op->stream, stream)) continue;
    cudaEvent_t ev = nullptr;
    if (cudaError_t err = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming); err != cudaSuccess)
      cuda_failure("cudaEventCreateWithFlags", err);
    cudaError_t err = cudaEventRecord(ev, reinterpret_cast<cudaStream_t>(op->stream));
    if (err == cudaSuccess) err = cudaStreamWaitEvent(reinterpret_cast<cudaStream_t>(stream), ev, 0);
    (void)cudaEventDestroy(ev);
    if (err != cudaSuccess)
      cuda_failure((std::string(op->name) + ": ordering its producer stream before the call's").c_str(), err);
  }
}

enum class Mode { run, kernel, host_loop };

py::object gemm_call(Mode mode, py::handle a, py::handle b, py::handle out, py::handle c, py::handle alpha,
                     py::handle beta, py::handle stream, py::handle kernel, bool tf32, long long calls) {
  float const fa = real(alpha, "alpha"), fb = real(beta, "beta");
  std::optional<std::string> kernel_name;
  if (!kernel.is_none()) {
    if (!PyUnicode_Check(kernel.ptr()))
      throw py::type_error("kernel: expected a kernel name (str; tessel.gemm_kernels() lists them) or None, got " +
                           type_of(kernel));
    kernel_name = kernel.cast<std::string>();
  }

  Operand A = inspect(a, "a"), B = inspect(b, "b");
  std::optional<Operand> C, D;
  if (!c.is_none()) C = inspect(c, "c");
  if (!out.is_none()) D = inspect(out, "out");
  auto const operands = [&] { return std::array<Operand const*, 4>{&A, &B, C ? &*C : nullptr, D ? &*D : nullptr}; };
  same_device(operands());

  std::intptr_t const s = stream.is_none() ? default_stream(A) : stream_handle(stream);
  for (Operand* op : {&A, &B, C ? &*C : nullptr, D ? &*D : nullptr})
    if (op != nullptr && op->source == Source::dlpack) export_dlpack(*op, s);
  if (tf32)
    for (Operand* op : {&A, &B}) {
      if (op->t.dtype != TESSEL_DTYPE_F32)
        throw py::type_error(std::string("tf32: applies to float32 operands, but ") + op->name + " is " +
                             dtype_name(tessel_dtype(op->t.dtype)));
      op->t.dtype = TESSEL_DTYPE_TF32;
    }

  tessel_gemm_problem p;
  tessel_gemm_problem_init(&p);
  p.a = A.t, p.b = B.t;
  if (C) p.c = C->t;
  p.d = D ? D->t : planned_out(A, B, C ? &*C : nullptr);
  p.alpha = fa, p.beta = fb;
  p.kernel = kernel_name ? kernel_name->c_str() : nullptr;
  check(p);

  if (!D && mode != Mode::kernel) {  // gemm_kernel() only names the kernel: no output needed
    if (g_allocator == nullptr)
      throw std::runtime_error("out: no allocator is registered; import tessel, not tessel._C");
    py::tuple shape(p.d.ndim);
    for (int i = 0; i < p.d.ndim; ++i) shape[i] = py::int_(p.d.shape[i]);
    py::object const made = py::reinterpret_borrow<py::object>(g_allocator)(
        py::reinterpret_borrow<py::object>(a), shape, dtype_name(tessel_dtype(p.d.dtype)), A.device);
    D = inspect(made, "out");
    same_device(operands());
    if (D->source == Source::dlpack) export_dlpack(*D, s);
    p.d = D->t;
    check(p);
  }
  if (D) {
    if (D->readonly) throw py::value_error("out: is read-only (its __cuda_array_interface__ says so)");
    for (Operand const* in : {&A, &B})
      if (D->t.data != nullptr && D->t.data == in->t.data)
        throw py::value_error(std::string("out: starts at the same address as ") + in->name +
                              "; the result cannot overwrite an input it reads (c may be out itself)");
  }

  for (Operand* op : {&A, &B, C ? &*C : nullptr, D ? &*D : nullptr})
    if (op != nullptr) locate(*op);
  same_device(operands());
  int device = -1;
  for (Operand const* op : operands())
    if (op != nullptr && op->device >= 0 && device < 0) device = op->device;

  DeviceGuard const guard(device);
  char why[1024];
  if (mode == Mode::kernel) {
    char const* name = nullptr;
    tessel_status const st = tessel_gemm_can_implement(&p, &name, why, sizeof why);
    if (st != TESSEL_STATUS_SUCCESS) raise(st, why);
    return name != nullptr ? py::object(py::str(name)) : py::object(py::none());
  }
  wait_for_producers(operands(), s);
  cudaStream_t const cs = reinterpret_cast<cudaStream_t>(s);
  if (mode == Mode::host_loop) {
    tessel_status st = TESSEL_STATUS_SUCCESS;
    double seconds = 0;
    {
      py::gil_scoped_release const nogil;
      auto const t0 = std::chrono::steady_clock::now();
      for (long long i = 0; i < calls && st == TESSEL_STATUS_SUCCESS; ++i) st = tessel_gemm(&p, cs, why, sizeof why);
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    if (st != TESSEL_STATUS_SUCCESS) raise(st, why);
    return py::float_(calls > 0 ? seconds / double(calls) : 0.0);
  }
  tessel_status st = TESSEL_STATUS_SUCCESS;
  {
    py::gil_scoped_release const nogil;
    st = tessel_gemm(&p, cs, why, sizeof why);
  }
  if (st != TESSEL_STATUS_SUCCESS) raise(st, why);
  return D->obj;
}

py::dict device_dict(int index) {
  std::string why;
  std::optional<tessel::DeviceInfo> const d = tessel::query_device(index, &why);
  if (!d) throw std::runtime_error(why.empty() ? "device " + std::to_string(index) + ": cannot be queried" : why);
  py::dict r;
  r["index"] = d->index;
  r["name"] = d->name;
  r["cc"] = py::make_tuple(d->cc_major, d->cc_minor);
  r["sm_count"] = d->sm_count;
  r["clock_mhz"] = d->clock_mhz;
  r["memory_clock_mhz"] = d->memory_clock_mhz;
  r["memory_bus_bits"] = d->memory_bus_bits;
  r["l2_bytes"] = d->l2_bytes;
  r["global_bytes"] = d->global_bytes;
  r["driver_version"] = d->driver_version;
  r["runtime_version"] = d->runtime_version;
  return r;
}

py::list kernel_list() {
  py::list r;
  for (tessel::GemmKernelInfo const& k : tessel::gemm_kernels()) {
    py::dict e;
    e["name"] = k.name;
    e["summary"] = k.summary;
    e["tile"] = k.tile;
    e["dtypes"] = k.dtypes;
    e["layouts"] = k.layouts;
    e["alignment"] = k.alignment;
    e["selection"] = k.selection;
    e["min_cc"] = k.min_cc;
    r.append(e);
  }
  return r;
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "tessel's extension module over its C ABI; use the functions of the tessel package.";
  m.def(
      "gemm",
      [](py::object a, py::object b, py::object out, py::object c, py::object alpha, py::object beta, py::object stream,
         py::object kernel,
         bool tf32) { return gemm_call(Mode::run, a, b, out, c, alpha, beta, stream, kernel, tf32, 1); },
      py::arg("a"), py::arg("b"), py::arg("out") = py::none(), py::arg("c") = py::none(), py::arg("alpha") = 1.0,
      py::arg("beta") = 0.0, py::arg("stream") = py::none(), py::arg("kernel") = py::none(), py::arg("tf32") = false,
      "out = alpha * a @ b + beta * c on `stream` (tessel.gemm documents it); returns out");
  m.def(
      "gemm_kernel",
      [](py::object a, py::object b, py::object out, py::object c, py::object alpha, py::object beta, py::object stream,
         py::object kernel,
         bool tf32) { return gemm_call(Mode::kernel, a, b, out, c, alpha, beta, stream, kernel, tf32, 0); },
      py::arg("a"), py::arg("b"), py::arg("out") = py::none(), py::arg("c") = py::none(), py::arg("alpha") = 1.0,
      py::arg("beta") = 0.0, py::arg("stream") = py::none(), py::arg("kernel") = py::none(), py::arg("tf32") = false,
      "the registry name of the kernel gemm would run (None when there is nothing to compute); launches nothing");
  m.def(
      "_gemm_host_loop",
      [](py::object a, py::object b, py::object out, py::object c, py::object alpha, py::object beta, py::object stream,
         py::object kernel, bool tf32, long long calls) {
        return gemm_call(Mode::host_loop, a, b, out, c, alpha, beta, stream, kernel, tf32, calls);
      },
      py::arg("a"), py::arg("b"), py::arg("out"), py::arg("c"), py::arg("alpha"), py::arg("beta"), py::arg("stream"),
      py::arg("kernel"), py::arg("tf32"), py::arg("calls"),
      "seconds of host time per tessel_gemm call, over `calls` calls made back to back from C++ with the "
      "arguments prepared once (the C ABI's own cost; tessel.bench compares the Python call with it)");
  m.def(
      "_set_allocator",
      [](py::object fn) {
        Py_XDECREF(g_allocator);
        g_allocator = fn.release().ptr();
      },
      "registers tessel's allocator for out=None: fn(like, shape, dtype_name, device) -> array");
  m.def(
      "device_count", [] { return tessel::device_count(); }, "usable CUDA devices; 0 without a driver or a device");
  m.def("device_info", &device_dict, py::arg("index") = 0, "properties of CUDA device `index`");
  m.def("gemm_kernels", &kernel_list, "the compiled GEMM kernels, as `tessel list` prints them");
  m.attr("C_API_VERSION") = tessel_c_api_version();
}
