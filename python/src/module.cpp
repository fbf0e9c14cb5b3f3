// python/src/module.cpp -- tessel._C, the extension module: array objects in (arrays.hpp), the C
// ABI (tessel/c_api.h) underneath. tessel/__init__.py is its public face and documents it.
//
// A call (gemm, grouped_mm, attention, attention_backward, conv) inspects its array arguments (no CUDA
// yet), settles the stream, exports DLPack operands for that stream, checks every rule through the C
// ABI's check (tessel_gemm_check, tessel_grouped_gemm_check, tessel_attention_check,
// tessel_attention_backward_check, tessel_conv_check;
// still no CUDA: refusals work on machines without a GPU), allocates the outputs left None through
// the registered allocator, finds the device of __cuda_array_interface__ pointers, and only then
// makes the operands' device current and runs, with the GIL released.
#include <cuda_runtime_api.h>
#include <pybind11/pybind11.h>
#include <tessel/c_api.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <tessel/attention/attention.hpp>
#include <tessel/attention/attention_backward.hpp>
#include <tessel/conv/conv.hpp>
#include <tessel/gemm/device/gemm_registry.hpp>
#include <tessel/runtime/device.hpp>
#include <vector>

#include "arrays.hpp"

namespace py = pybind11;
using namespace tessel::python;

#ifdef TESSEL_HAVE_DIST
void bind_dist(py::module_& m);  // dist.cpp: tessel::dist, where it was built
#endif

namespace {

// tessel._allocate(like, shape, dtype_name, device, name, call) -> array, set by
// tessel/__init__.py (kept for the life of the process).
PyObject* g_allocator = nullptr;

constexpr char kGemmRank[] = "a GEMM operand is 2-D (rows x cols) or 3-D (batch x rows x cols)";

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

// An integer argument (an int or anything with __index__, not a bool).
std::int64_t integer(py::handle v, char const* name) {
  if (PyBool_Check(v.ptr()) || !PyIndex_Check(v.ptr()))
    throw py::type_error(std::string(name) + ": expected an int, got " + type_of(v));
  py::object const i = py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr()));
  if (!i) throw py::error_already_set();
  long long const x = PyLong_AsLongLong(i.ptr());
  if (x == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    throw py::value_error(std::string(name) + ": " + py::str(v).cast<std::string>() + " does not fit 64 bits");
  }
  return x;
}

float real(py::handle v, char const* name) {
  double const d = PyFloat_AsDouble(v.ptr());
  if (d == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    throw py::type_error(std::string(name) + ": expected a real number, got " + type_of(v));
  }
  return float(d);
}

// A flag argument: a bool, or an int (0 is false).
bool flag(py::handle v, char const* name) {
  if (PyBool_Check(v.ptr())) return v.ptr() == Py_True;
  if (PyIndex_Check(v.ptr())) return integer(v, name) != 0;
  throw py::type_error(std::string(name) + ": expected a bool, got " + type_of(v));
}

// A kernel argument: a registry name (`lister` lists them) or None.
std::optional<std::string> kernel_of(py::handle kernel, char const* lister) {
  if (kernel.is_none()) return std::nullopt;
  if (!PyUnicode_Check(kernel.ptr()))
    throw py::type_error(std::string("kernel: expected a kernel name (str; ") + lister + " lists them) or None, got " +
                         type_of(kernel));
  return kernel.cast<std::string>();
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

// The operands of one call (absent optional ones nullptr), held by value so that a lambda can
// return them.
class Operands {
 public:
  Operands(std::initializer_list<Operand*> ops) {
    if (ops.size() > ops_.size()) throw std::logic_error("tessel._C: more operands than Operands holds");
    for (Operand* op : ops) ops_[n_++] = op;
  }
  Operand* const* begin() const { return ops_.data(); }
  Operand* const* end() const { return ops_.data() + n_; }

 private:
  std::array<Operand*, 12> ops_{};
  std::size_t n_ = 0;
};

void same_device(Operands ops) {
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

// A tensor description of what an allocation would make: packed row-major, with a made-up
// pointer that is never dereferenced (the check runs before anything is allocated).
tessel_tensor planned(char const* name, tessel_dtype dtype, std::initializer_list<std::int64_t> shape) {
  tessel_tensor t{};
  t.name = name;
  t.data = reinterpret_cast<void*>(std::uintptr_t(256));
  t.dtype = dtype;
  t.ndim = std::int32_t(shape.size());
  int i = 0;
  for (std::int64_t e : shape) t.shape[i++] = e;
  std::int64_t packed = 1;
  for (i = t.ndim - 1; i >= 0; --i) {
    t.strides[i] = packed;
    packed *= t.shape[i] > 1 ? t.shape[i] : 1;
  }
  return t;
}

// The `out` an allocation would make: (batch,) M x N, packed row-major, C's dtype or the inputs'
// default. Where a and b do not make a product, a 0 x 0 stand-in: the check then refuses a or b
// (their rules come before D's).
tessel_tensor planned_out(Operand const& a, Operand const& b, Operand const* c) {
  tessel_dtype const dtype = c != nullptr ? tessel_dtype(c->t.dtype) : default_out_dtype(a.t.dtype);
  auto const matrix = [](tessel_tensor const& x) { return x.ndim == 2 || x.ndim == 3; };
  if (!matrix(a.t) || !matrix(b.t)) return planned("out", dtype, {0, 0});
  bool const a3 = a.t.ndim == 3, b3 = b.t.ndim == 3;
  std::int64_t const m = a.t.shape[a.t.ndim - 2], n = b.t.shape[b.t.ndim - 1];
  if (!a3 && !b3) return planned("out", dtype, {m, n});
  std::int64_t const ab = a3 ? a.t.shape[0] : 1, bb = b3 ? b.t.shape[0] : 1;
  return planned("out", dtype, {a3 && b3 ? (ab == 1 ? bb : ab) : a3 ? ab : bb, m, n});
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
void wait_for_producers(Operands ops, std::intptr_t stream) {
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

template <class Problem>
void check(tessel_status (*checker)(Problem const*, char*, size_t), Problem const& p) {
  char why[1024];
  if (tessel_status const s = checker(&p, why, sizeof why); s != TESSEL_STATUS_SUCCESS) raise(s, why);
}

// The stream a call runs on: `stream`, or the default of its first array (tessel.gemm's docstring).
std::intptr_t call_stream(py::handle stream, Operand const& first) {
  return stream.is_none() ? default_stream(first) : stream_handle(stream);
}

void export_for(Operands ops, std::intptr_t stream) {
  for (Operand* op : ops)
    if (op != nullptr && op->source == Source::dlpack) export_dlpack(*op, stream);
}

// An output the call was not given: `planned` made through the registered allocator by the
// library of `like`, then inspected and exported like the caller's arrays.
Operand allocate(py::handle like, int device, tessel_tensor const& planned, char const* call, char const* rank_rule,
                 std::intptr_t stream) {
  if (g_allocator == nullptr)
    throw std::runtime_error(std::string(planned.name) + ": no allocator is registered; import tessel, not tessel._C");
  py::tuple shape(planned.ndim);
  for (int i = 0; i < planned.ndim; ++i) shape[i] = py::int_(planned.shape[i]);
  py::object const made = py::reinterpret_borrow<py::object>(g_allocator)(
      py::reinterpret_borrow<py::object>(like), shape, dtype_name(tessel_dtype(planned.dtype)), device, planned.name,
      call);
  Operand op = inspect(made, planned.name, rank_rule);
  export_for({&op}, stream);
  return op;
}

// An output is writable and does not start where an input it reads does (`note`: what the call
// allows instead).
void check_output(Operand const& out, Operands inputs, char const* note = "") {
  if (out.readonly)
    throw py::value_error(std::string(out.name) + ": is read-only (its __cuda_array_interface__ says so)");
  for (Operand const* in : inputs)
    if (in != nullptr && out.t.data != nullptr && out.t.data == in->t.data)
      throw py::value_error(std::string(out.name) + ": starts at the same address as " + in->name +
                            "; the result cannot overwrite an input it reads" + note);
}

// The device of every operand (__cuda_array_interface__ pointers looked up), which must be one;
// -1 when none is known (every operand empty).
int settle_device(Operands ops) {
  for (Operand* op : ops)
    if (op != nullptr) locate(*op);
  same_device(ops);
  for (Operand const* op : ops)
    if (op != nullptr && op->device >= 0) return op->device;
  return -1;
}

// Runs `launch` (a C ABI call writing its reason into `why`) with the GIL released; raises its refusal.
template <class Launch>
void run_without_gil(Launch&& launch) {
  char why[1024];
  tessel_status st = TESSEL_STATUS_SUCCESS;
  {
    py::gil_scoped_release const nogil;
    st = launch(why, sizeof why);
  }
  if (st != TESSEL_STATUS_SUCCESS) raise(st, why);
}

// host_loop times tessel_gemm from C++ (the C ABI's own cost per call); host_loop_check times
// tessel_gemm_can_implement, the same call's rules and kernel choice without the launch.
enum class Mode { run, kernel, host_loop, host_loop_check };

// The fused epilogue's activation: None or one of its names (tessel.gemm's docstring), as the C
// ABI's tessel_activation.
std::int32_t gemm_activation_of(py::handle act) {
  if (act.is_none()) return TESSEL_ACTIVATION_NONE;
  if (!py::isinstance<py::str>(act))
    throw py::type_error("activation: expected a str ('relu', 'gelu', 'gelu_tanh', 'silu') or None, got " + type_of(act));
  std::string const name = act.cast<std::string>();
  if (name == "none") return TESSEL_ACTIVATION_NONE;
  if (name == "relu") return TESSEL_ACTIVATION_RELU;
  if (name == "gelu") return TESSEL_ACTIVATION_GELU_ERF;   // torch's default, the exact form
  if (name == "gelu_tanh") return TESSEL_ACTIVATION_GELU;  // torch's approximate="tanh"
  if (name == "silu") return TESSEL_ACTIVATION_SILU;
  throw py::value_error("activation: '" + name + "' is not one of 'relu', 'gelu', 'gelu_tanh', 'silu' (or None)");
}

constexpr char kGemmBiasRank[] = "a bias is 1-D [N] (per column of out) or 2-D [M, 1] (per row) or [1, N]";

constexpr char kScaleRank[] =
    "a block scale is 2-D (scale_a [M, ceil(K/128)], scale_b [ceil(N/128), ceil(K/128)]) or 3-D with the batch "
    "first; a per-tensor scale is a Python float";

// A scale argument: None, a per-tensor factor (a Python int or float, applied on the host), or an
// array of block scales (returned in *block).
std::optional<float> scale_of(py::handle v, char const* name, std::optional<Operand>* block) {
  if (v.is_none()) return std::nullopt;
  if ((PyFloat_Check(v.ptr()) || PyLong_Check(v.ptr())) && !PyBool_Check(v.ptr())) return real(v, name);
  if (PyBool_Check(v.ptr()))
    throw py::type_error(std::string(name) + ": expected a float (per-tensor) or a float32 array of block scales, got bool");
  *block = inspect(v, name, kScaleRank);
  return std::nullopt;
}

py::object gemm_call(Mode mode, py::handle a, py::handle b, py::handle out, py::handle c, py::handle alpha,
                     py::handle beta, py::handle stream, py::handle kernel, bool tf32, long long calls,
                     py::handle bias, py::handle activation, py::handle scale_a, py::handle scale_b) {
  float const fa = real(alpha, "alpha"), fb = real(beta, "beta");
  std::optional<std::string> const kernel_name = kernel_of(kernel, "tessel.gemm_kernels()");
  std::int32_t const act = gemm_activation_of(activation);

  Operand A = inspect(a, "a", kGemmRank), B = inspect(b, "b", kGemmRank);
  std::optional<Operand> C, D, Bias, SA, SB;
  if (!c.is_none()) C = inspect(c, "c", kGemmRank);
  if (!out.is_none()) D = inspect(out, "out", kGemmRank);
  if (!bias.is_none()) Bias = inspect(bias, "bias", kGemmBiasRank);
  std::optional<float> const sa = scale_of(scale_a, "scale_a", &SA), sb = scale_of(scale_b, "scale_b", &SB);
  if (SA.has_value() != SB.has_value()) {
    bool const a_block = SA.has_value();
    throw py::value_error(std::string(a_block ? "scale_b" : "scale_a") + ": " + (a_block ? "scale_a" : "scale_b") +
                          " is an array of block scales, so " + (a_block ? "scale_b" : "scale_a") +
                          " must be one too (" +
                          (a_block ? "[ceil(N/128), ceil(K/128)] float32, K-major" : "[M, ceil(K/128)] float32, M-major") +
                          "); per-tensor factors go into alpha");
  }
  auto const operands = [&] {
    return Operands{&A, &B, C ? &*C : nullptr, D ? &*D : nullptr, Bias ? &*Bias : nullptr, SA ? &*SA : nullptr,
                    SB ? &*SB : nullptr};
  };
  same_device(operands());

  std::intptr_t const s = call_stream(stream, A);
  export_for(operands(), s);
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
  if (Bias) p.bias = Bias->t;
  p.activation = act;
  if (sa) p.a_scale = *sa;
  if (sb) p.b_scale = *sb;
  if (SA) {
    p.scale_mode = TESSEL_SCALE_MODE_BLOCK;
    p.a_scales = SA->t, p.b_scales = SB->t;
  }
  check(tessel_gemm_check, p);

  if (!D && mode != Mode::kernel) {  // gemm_kernel() only names the kernel: no output needed
    D = allocate(a, A.device, p.d, "tessel.gemm", kGemmRank, s);
    same_device(operands());
    p.d = D->t;
    check(tessel_gemm_check, p);
  }
  if (D) check_output(*D, {&A, &B}, " (c may be out itself)");

  DeviceGuard const guard(settle_device(operands()));
  if (mode == Mode::kernel) {
    char why[1024];
    char const* name = nullptr;
    tessel_status const st = tessel_gemm_can_implement(&p, &name, why, sizeof why);
    if (st != TESSEL_STATUS_SUCCESS) raise(st, why);
    return name != nullptr ? py::object(py::str(name)) : py::object(py::none());
  }
  wait_for_producers(operands(), s);
  cudaStream_t const cs = reinterpret_cast<cudaStream_t>(s);
  if (mode == Mode::host_loop || mode == Mode::host_loop_check) {
    double seconds = 0;
    run_without_gil([&](char* why, std::size_t size) {
      tessel_status st = TESSEL_STATUS_SUCCESS;
      char const* name = nullptr;
      auto const t0 = std::chrono::steady_clock::now();
      for (long long i = 0; i < calls && st == TESSEL_STATUS_SUCCESS; ++i)
        st = mode == Mode::host_loop ? tessel_gemm(&p, cs, why, size) : tessel_gemm_can_implement(&p, &name, why, size);
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return st;
    });
    return py::float_(calls > 0 ? seconds / double(calls) : 0.0);
  }
  run_without_gil([&](char* why, std::size_t size) { return tessel_gemm(&p, cs, why, size); });
  return D->obj;
}

// ---- grouped GEMM --------------------------------------------------------------------------------

constexpr char kGroupedARank[] = "a grouped GEMM's a is 2-D [total_m, K] (tokens sorted by group)";
constexpr char kGroupedBRank[] = "a grouped GEMM's b is 3-D [G, K, N] (one K x N matrix per group)";
constexpr char kGroupedDRank[] = "a grouped GEMM's c and out are 2-D [total_m, N]";
constexpr char kGroupOffsetsRank[] = "group offsets are 1-D: G int32 cumulative row ends";

// out_dtype: None, or a dtype by name ("bfloat16", "float16", "float32") or any object whose str()
// ends in one (torch.bfloat16, numpy.dtype("float16")).
std::optional<tessel_dtype> out_dtype_of(py::handle v) {
  if (v.is_none()) return std::nullopt;
  std::string name = py::str(v).cast<std::string>();
  if (std::size_t const dot = name.rfind('.'); dot != std::string::npos) name = name.substr(dot + 1);
  if (name == "bfloat16" || name == "bf16") return TESSEL_DTYPE_BF16;
  if (name == "float16" || name == "half" || name == "fp16") return TESSEL_DTYPE_F16;
  if (name == "float32" || name == "float" || name == "fp32") return TESSEL_DTYPE_F32;
  throw py::type_error("out_dtype: " + py::str(v).cast<std::string>() +
                       " is not supported; a grouped GEMM writes bfloat16, float16 or float32");
}

py::object grouped_mm_call(py::handle a, py::handle b, py::handle offs, py::handle out, py::handle out_dtype,
                           py::handle c, py::handle alpha, py::handle beta, py::handle stream) {
  float const fa = real(alpha, "alpha"), fb = real(beta, "beta");
  std::optional<tessel_dtype> const want = out_dtype_of(out_dtype);
  Operand A = inspect(a, "a", kGroupedARank), B = inspect(b, "b", kGroupedBRank);
  Operand O = inspect(offs, "offs", kGroupOffsetsRank, Elements::offsets);
  std::optional<Operand> C, D;
  if (!c.is_none()) C = inspect(c, "c", kGroupedDRank);
  if (!out.is_none()) D = inspect(out, "out", kGroupedDRank);
  auto const operands = [&] { return Operands{&A, &B, &O, C ? &*C : nullptr, D ? &*D : nullptr}; };
  same_device(operands());
  std::intptr_t const s = call_stream(stream, A);
  export_for(operands(), s);
  if (want && D && D->t.dtype != *want)
    throw py::type_error(std::string("out_dtype: ") + dtype_name(*want) + ", but out is " +
                         dtype_name(tessel_dtype(D->t.dtype)) + "; give one of them, or both alike");

  tessel_grouped_gemm_problem p;
  tessel_grouped_gemm_problem_init(&p);
  p.a = A.t, p.b = B.t, p.offsets = O.t;
  if (C) p.c = C->t;
  if (D) {
    p.d = D->t;
  } else {  // [total_m, N] as allocated; a 0 x 0 stand-in where a or b has the wrong rank (refused first)
    tessel_dtype const dtype = want ? *want : C ? tessel_dtype(C->t.dtype) : tessel_dtype(A.t.dtype);
    bool const ranks = A.t.ndim == 2 && B.t.ndim == 3;
    p.d = ranks ? planned("out", dtype, {A.t.shape[0], B.t.shape[2]}) : planned("out", dtype, {0, 0});
  }
  p.alpha = fa, p.beta = fb;
  check(tessel_grouped_gemm_check, p);
  if (!D) {
    D = allocate(a, A.device, p.d, "tessel.grouped_mm", kGroupedDRank, s);
    same_device(operands());
    p.d = D->t;
    check(tessel_grouped_gemm_check, p);
  }
  check_output(*D, {&A, &B, &O}, " (c may be out itself)");

  DeviceGuard const guard(settle_device(operands()));
  wait_for_producers(operands(), s);
  cudaStream_t const cs = reinterpret_cast<cudaStream_t>(s);
  run_without_gil([&](char* why, std::size_t size) { return tessel_grouped_gemm(&p, cs, why, size); });
  return D->obj;
}

// ---- attention ----------------------------------------------------------------------------------

constexpr char kAttentionRank[] =
    "attention operands are 4-D [B, S, H, D] (or packed 3-D [total, H, D] with cu_seqlens_q and cu_seqlens_k)";
constexpr char kLseRank[] = "LSE is 3-D [B, H, S_q] (or 2-D [H, total_q] with cu_seqlens_q and cu_seqlens_k)";
constexpr char kOffsetsRank[] = "sequence offsets are 1-D: B + 1 int32 values";

Operand* opt(std::optional<Operand>& op) { return op ? &*op : nullptr; }

// window=(left, right): key j is kept for query position p when p - left <= j <= p + right.
void window_of(py::handle w, tessel_attention_problem* p) {
  if (w.is_none()) return;  // unbounded on both sides
  if (!PyTuple_Check(w.ptr()) && !PyList_Check(w.ptr()))
    throw py::type_error("window: expected (left, right), two ints (-1: unbounded on that side), got " + type_of(w));
  py::sequence const seq = py::reinterpret_borrow<py::sequence>(w);
  if (seq.size() != 2)
    throw py::type_error("window: expected (left, right), two ints (-1: unbounded on that side), got " +
                         std::to_string(seq.size()) + " values");
  p->window_left = integer(seq[0], "window[0] (left)");
  p->window_right = integer(seq[1], "window[1] (right)");
}

std::int32_t align_of(py::handle a) {
  if (!PyUnicode_Check(a.ptr()))
    throw py::type_error("align: expected 'bottom-right' or 'top-left', got " + type_of(a));
  std::string const s = a.cast<std::string>();
  if (s == "bottom-right") return TESSEL_MASK_ALIGN_BOTTOM_RIGHT;
  if (s == "top-left") return TESSEL_MASK_ALIGN_TOP_LEFT;
  throw py::value_error("align: '" + s + "' is neither 'bottom-right' (FlashAttention's, the default) nor " +
                        "'top-left' (torch's is_causal)");
}

// What allocations would make: out like q with v's last extent (D_v); LSE fp32 [B, H, S_q] from a
// 4-D q, [H, total_q] from a packed one. Where q's rank does not fit, a stand-in: the check refuses
// q first.
tessel_tensor planned_attention_out(Operand const& q, Operand const& v) {
  std::int64_t const* s = q.t.shape;
  std::int64_t const d_v = v.t.shape[v.t.ndim - 1];
  tessel_dtype const dtype = tessel_dtype(q.t.dtype);
  if (q.t.ndim == 4) return planned("out", dtype, {s[0], s[1], s[2], d_v});
  if (q.t.ndim == 3) return planned("out", dtype, {s[0], s[1], d_v});
  return planned("out", dtype, {0, 0, 0, 0});
}

tessel_tensor planned_lse(Operand const& q, bool varlen) {
  std::int64_t const* s = q.t.shape;
  if (varlen && q.t.ndim == 3) return planned("lse", TESSEL_DTYPE_F32, {s[1], s[0]});
  if (!varlen && q.t.ndim == 4) return planned("lse", TESSEL_DTYPE_F32, {s[0], s[2], s[1]});
  return planned("lse", TESSEL_DTYPE_F32, {0, 0});
}

// What an allocation of the gradient of `of` would make: packed, of's shape and dtype, named `name`.
tessel_tensor planned_like(char const* name, Operand const& of) {
  tessel_tensor t = planned(name, tessel_dtype(of.t.dtype), {});
  t.ndim = of.t.ndim;
  std::int64_t packed = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    t.shape[i] = of.t.shape[i];
    t.strides[i] = packed;
    packed *= t.shape[i] > 1 ? t.shape[i] : 1;
  }
  return t;
}

// The mask, scales and offsets both attention calls take, onto p (the forward's problem).
void attention_options(tessel_attention_problem* p, py::handle softmax_scale, py::handle causal, py::handle window,
                       py::handle softcap, py::handle align, py::handle max_seqlen_q, py::handle max_seqlen_k) {
  if (!softmax_scale.is_none()) {
    p->softmax_scale = real(softmax_scale, "softmax_scale");
    if (p->softmax_scale == 0.0f)
      throw py::value_error("softmax_scale: 0 is not a scale; pass None for 1 / sqrt(head_dim)");
  }
  p->causal = flag(causal, "causal");
  window_of(window, p);
  p->softcap = real(softcap, "softcap");
  p->align = align_of(align);
  if (!max_seqlen_q.is_none()) p->max_seqlen_q = integer(max_seqlen_q, "max_seqlen_q");
  if (!max_seqlen_k.is_none()) p->max_seqlen_k = integer(max_seqlen_k, "max_seqlen_k");
}

py::object attention_call(py::handle q, py::handle k, py::handle v, py::handle out, py::handle lse,
                          py::handle return_lse, py::handle softmax_scale, py::handle causal, py::handle window,
                          py::handle softcap, py::handle align, py::handle cu_seqlens_q, py::handle cu_seqlens_k,
                          py::handle max_seqlen_q, py::handle max_seqlen_k, py::handle stream, py::handle kernel) {
  tessel_attention_problem p;
  tessel_attention_problem_init(&p);
  attention_options(&p, softmax_scale, causal, window, softcap, align, max_seqlen_q, max_seqlen_k);
  bool const want_lse = flag(return_lse, "return_lse");
  std::optional<std::string> const kernel_name = kernel_of(kernel, "tessel.attention_kernels()");

  Operand Q = inspect(q, "q", kAttentionRank), K = inspect(k, "k", kAttentionRank), V = inspect(v, "v", kAttentionRank);
  std::optional<Operand> O, L, CQ, CK;
  if (!out.is_none()) O = inspect(out, "out", kAttentionRank);
  if (!lse.is_none()) L = inspect(lse, "lse", kLseRank);
  if (!cu_seqlens_q.is_none()) CQ = inspect(cu_seqlens_q, "cu_seqlens_q", kOffsetsRank, Elements::offsets);
  if (!cu_seqlens_k.is_none()) CK = inspect(cu_seqlens_k, "cu_seqlens_k", kOffsetsRank, Elements::offsets);
  auto const operands = [&] { return Operands{&Q, &K, &V, opt(O), opt(L), opt(CQ), opt(CK)}; };
  same_device(operands());

  std::intptr_t const s = call_stream(stream, Q);
  export_for(operands(), s);
  p.q = Q.t, p.k = K.t, p.v = V.t;
  p.o = O ? O->t : planned_attention_out(Q, V);
  if (L)
    p.lse = L->t;
  else if (want_lse)
    p.lse = planned_lse(Q, CQ || CK);
  if (CQ) p.cu_seqlens_q = CQ->t;
  if (CK) p.cu_seqlens_k = CK->t;
  p.kernel = kernel_name ? kernel_name->c_str() : nullptr;
  check(tessel_attention_check, p);

  if (!O || (!L && want_lse)) {
    if (!O) {
      O = allocate(q, Q.device, p.o, "tessel.attention", kAttentionRank, s);
      p.o = O->t;
    }
    if (!L && want_lse) {
      L = allocate(q, Q.device, p.lse, "tessel.attention", kLseRank, s);
      p.lse = L->t;
    }
    same_device(operands());
    check(tessel_attention_check, p);
  }
  check_output(*O, {&Q, &K, &V});
  if (L) check_output(*L, {&Q, &K, &V, &*O});

  DeviceGuard const guard(settle_device(operands()));
  wait_for_producers(operands(), s);
  cudaStream_t const cs = reinterpret_cast<cudaStream_t>(s);
  run_without_gil([&](char* why, std::size_t size) { return tessel_attention_forward(&p, cs, why, size); });
  if (want_lse) return py::make_tuple(O->obj, L->obj);
  return O->obj;
}

// tessel.attention_backward: dq, dk, dv (allocated like q, k, v where None) from the forward's
// q, k, v, out and lse and the upstream gradient dout.
py::object attention_backward_call(py::handle q, py::handle k, py::handle v, py::handle out, py::handle dout,
                                   py::handle lse, py::handle dq, py::handle dk, py::handle dv,
                                   py::handle softmax_scale, py::handle causal, py::handle window, py::handle softcap,
                                   py::handle align, py::handle cu_seqlens_q, py::handle cu_seqlens_k,
                                   py::handle max_seqlen_q, py::handle max_seqlen_k, py::handle deterministic,
                                   py::handle stream, py::handle kernel) {
  tessel_attention_backward_problem p;
  tessel_attention_backward_problem_init(&p);
  attention_options(&p.forward, softmax_scale, causal, window, softcap, align, max_seqlen_q, max_seqlen_k);
  p.deterministic = flag(deterministic, "deterministic");
  std::optional<std::string> const kernel_name = kernel_of(kernel, "tessel.attention_backward_kernels()");

  Operand Q = inspect(q, "q", kAttentionRank), K = inspect(k, "k", kAttentionRank), V = inspect(v, "v", kAttentionRank);
  Operand O = inspect(out, "out", kAttentionRank), DO = inspect(dout, "dout", kAttentionRank);
  Operand L = inspect(lse, "lse", kLseRank);
  std::optional<Operand> CQ, CK, DQ, DK, DV;
  if (!cu_seqlens_q.is_none()) CQ = inspect(cu_seqlens_q, "cu_seqlens_q", kOffsetsRank, Elements::offsets);
  if (!cu_seqlens_k.is_none()) CK = inspect(cu_seqlens_k, "cu_seqlens_k", kOffsetsRank, Elements::offsets);
  if (!dq.is_none()) DQ = inspect(dq, "dq", kAttentionRank);
  if (!dk.is_none()) DK = inspect(dk, "dk", kAttentionRank);
  if (!dv.is_none()) DV = inspect(dv, "dv", kAttentionRank);
  auto const operands = [&] {
    return Operands{&Q, &K, &V, &O, &DO, &L, opt(CQ), opt(CK), opt(DQ), opt(DK), opt(DV)};
  };
  same_device(operands());

  std::intptr_t const s = call_stream(stream, Q);
  export_for(operands(), s);
  tessel_attention_problem& f = p.forward;
  f.q = Q.t, f.k = K.t, f.v = V.t, f.o = O.t, f.lse = L.t;
  if (CQ) f.cu_seqlens_q = CQ->t;
  if (CK) f.cu_seqlens_k = CK->t;
  p.d_o = DO.t;
  p.dq = DQ ? DQ->t : planned_like("dq", Q);
  p.dk = DK ? DK->t : planned_like("dk", K);
  p.dv = DV ? DV->t : planned_like("dv", V);
  p.kernel = kernel_name ? kernel_name->c_str() : nullptr;
  check(tessel_attention_backward_check, p);

  if (!DQ || !DK || !DV) {
    struct Missing {
      std::optional<Operand>* op;
      tessel_tensor* slot;
    };
    for (Missing m : {Missing{&DQ, &p.dq}, Missing{&DK, &p.dk}, Missing{&DV, &p.dv}}) {
      if (*m.op) continue;
      *m.op = allocate(q, Q.device, *m.slot, "tessel.attention_backward", kAttentionRank, s);
      *m.slot = (*m.op)->t;
    }
    same_device(operands());
    check(tessel_attention_backward_check, p);
  }
  Operand const* const gradients[] = {&*DQ, &*DK, &*DV};
  for (int i = 0; i < 3; ++i) {
    check_output(*gradients[i], {&Q, &K, &V, &O, &DO, &L});
    for (int j = 0; j < i; ++j)
      if (gradients[i]->t.data != nullptr && gradients[i]->t.data == gradients[j]->t.data)
        throw py::value_error(std::string(gradients[i]->name) + ": starts at the same address as " +
                              gradients[j]->name + "; each gradient needs its own memory");
  }

  DeviceGuard const guard(settle_device(operands()));
  wait_for_producers(operands(), s);
  cudaStream_t const cs = reinterpret_cast<cudaStream_t>(s);
  run_without_gil([&](char* why, std::size_t size) { return tessel_attention_backward(&p, cs, why, size); });
  return py::make_tuple(DQ->obj, DK->obj, DV->obj);
}

// A kernel registry (count entries, info(i) with a name, description and min_sm) as dicts (name,
// description, min_cc): the attention forward's, the attention backward's, the convolution's.
template <class Info>
py::list registry_list(int count, Info (*info)(int)) {
  py::list r;
  for (int i = 0; i < count; ++i) {
    Info const k = info(i);
    py::dict e;
    e["name"] = k.name;
    e["description"] = k.description;
    e["min_cc"] = k.min_sm;
    r.append(e);
  }
  return r;
}

// ---- convolution -------------------------------------------------------------------------------

constexpr char kConvRank[] =
    "convolution tensors are 4-D (x [N, H, W, C], w [K, R, S, C/groups]) or 5-D (x [N, D, H, W, C], "
    "w [K, T, R, S, C/groups])";
constexpr char kBiasRank[] = "the bias is 1-D, one fp32 per output channel";

// The tensors of one pass, as tessel.conv / conv_dgrad / conv_wgrad name them: its two inputs and
// the slot (x, w or y of tessel_conv_problem) each one and the output fill.
struct ConvPass {
  std::int32_t op;
  char const* in_a;       // "x" (fprop, wgrad) or "dy" (dgrad)
  char const* in_b;       // "w" (fprop, dgrad) or "dy" (wgrad)
  char const* out_shape;  // the argument giving the output's shape when out is None ("" for fprop)
  char const* call;
};

ConvPass conv_pass_of(py::handle op) {
  if (!PyUnicode_Check(op.ptr())) throw py::type_error("op: expected 'fprop', 'dgrad' or 'wgrad', got " + type_of(op));
  std::string const s = op.cast<std::string>();
  if (s == "fprop") return {TESSEL_CONV_FPROP, "x", "w", "", "tessel.conv"};
  if (s == "dgrad") return {TESSEL_CONV_DGRAD, "dy", "w", "x_shape", "tessel.conv_dgrad"};
  if (s == "wgrad") return {TESSEL_CONV_WGRAD, "x", "dy", "w_shape", "tessel.conv_wgrad"};
  throw py::value_error("op: '" + s + "' is not 'fprop', 'dgrad' or 'wgrad'");
}

std::int32_t activation_of(py::handle a) {
  if (a.is_none()) return TESSEL_ACTIVATION_NONE;
  if (!PyUnicode_Check(a.ptr()))
    throw py::type_error("activation: expected None, 'relu', 'gelu' or 'silu', got " + type_of(a));
  std::string const s = a.cast<std::string>();
  if (s == "none") return TESSEL_ACTIVATION_NONE;
  if (s == "relu") return TESSEL_ACTIVATION_RELU;
  if (s == "gelu") return TESSEL_ACTIVATION_GELU;
  if (s == "silu") return TESSEL_ACTIVATION_SILU;
  throw py::value_error("activation: '" + s + "' is not one of None, 'relu', 'gelu' (tanh form) or 'silu'");
}

// stride / padding / dilation: one int for every spatial dimension, or one int per dimension
// (outermost first); written into (d, h, w), the dimensions a 2-D problem lacks left as they are.
void spatial_of(py::handle v, char const* name, int dims, std::int64_t* d, std::int64_t* h, std::int64_t* w) {
  std::int64_t* const slot[3] = {d, h, w};
  int const first = 3 - dims;
  if (PyIndex_Check(v.ptr()) && !PyBool_Check(v.ptr())) {
    std::int64_t const x = integer(v, name);
    for (int i = first; i < 3; ++i) *slot[i] = x;
    return;
  }
  if (!PyTuple_Check(v.ptr()) && !PyList_Check(v.ptr()))
    throw py::type_error(std::string(name) + ": expected an int or " + std::to_string(dims) + " ints, got " + type_of(v));
  py::sequence const seq = py::reinterpret_borrow<py::sequence>(v);
  if (int(seq.size()) != dims)
    throw py::value_error(std::string(name) + ": has " + std::to_string(seq.size()) + " values, but the convolution is " +
                          std::to_string(dims) + "-D; give one int or " + std::to_string(dims));
  for (int i = 0; i < dims; ++i) {
    std::string const item = std::string(name) + "[" + std::to_string(i) + "]";
    *slot[first + i] = integer(seq[i], item.c_str());
  }
}

// A shape argument (x_shape, w_shape): a sequence of ints.
std::optional<std::vector<std::int64_t>> shape_of(py::handle v, char const* name) {
  if (v.is_none()) return std::nullopt;
  if (!PyTuple_Check(v.ptr()) && !PyList_Check(v.ptr()) && !py::hasattr(v, "__len__"))
    throw py::type_error(std::string(name) + ": expected a shape (a sequence of ints), got " + type_of(v));
  py::sequence const seq = py::reinterpret_borrow<py::sequence>(v);
  if (seq.size() == 0 || seq.size() > TESSEL_MAX_DIMS)
    throw py::value_error(std::string(name) + ": has " + std::to_string(seq.size()) + " extents; " + kConvRank);
  std::vector<std::int64_t> r;
  for (std::size_t i = 0; i < seq.size(); ++i) {
    std::string const item = std::string(name) + "[" + std::to_string(i) + "]";
    r.push_back(integer(seq[i], item.c_str()));
  }
  return r;
}

// The y an allocation would make for fprop: [N, (Z,) P, Q, K] from x, w and the steps. Where the
// ranks or the steps describe no convolution, a stand-in of x's rank that the check refuses (for x,
// w or the step, whose rules come before y's shape).
tessel_tensor planned_conv_out(tessel_conv_problem const& p) {
  tessel_dtype const dtype = tessel_dtype(p.x.dtype);
  int const rank = p.x.ndim == 5 ? 5 : 4;
  std::int64_t const n = p.x.ndim >= 4 ? p.x.shape[0] : 0;
  std::int64_t const k = p.w.ndim >= 1 ? p.w.shape[0] : 0;
  tessel_tensor const stand_in =
      rank == 5 ? planned("out", dtype, {n, 1, 1, 1, k}) : planned("out", dtype, {n, 1, 1, k});
  if ((p.x.ndim != 4 && p.x.ndim != 5) || p.w.ndim != p.x.ndim) return stand_in;
  bool const three_d = rank == 5;
  tessel::ConvArguments a;
  a.spatial_dims = three_d ? 3 : 2;
  a.d = three_d ? p.x.shape[1] : 1, a.h = p.x.shape[rank - 3], a.w = p.x.shape[rank - 2];
  a.t = three_d ? p.w.shape[1] : 1, a.r = p.w.shape[rank - 3], a.s = p.w.shape[rank - 2];
  a.pad_d = p.pad_d, a.pad_h = p.pad_h, a.pad_w = p.pad_w;
  a.stride_d = p.stride_d, a.stride_h = p.stride_h, a.stride_w = p.stride_w;
  a.dilation_d = p.dilation_d, a.dilation_h = p.dilation_h, a.dilation_w = p.dilation_w;
  for (std::int64_t v : {a.d, a.h, a.w, a.t, a.r, a.s, a.pad_d, a.pad_h, a.pad_w, a.dilation_d, a.dilation_h,
                         a.dilation_w})
    if (v > tessel::kConvMaxExtent) return stand_in;  // conv_validate refuses it; no overflow in the formula
  tessel::ConvOutputExtents e;
  try {
    e = tessel::conv_output_extents(a);
  } catch (tessel::conv::ProblemSizeError const&) {
    return stand_in;
  }
  if (three_d) return planned("out", dtype, {n, e.z, e.p, e.q, k});
  return planned("out", dtype, {n, e.p, e.q, k});
}

// "(4, 5)": Python's tuple text, as the C ABI's reasons write shapes.
std::string tuple_text(std::vector<std::int64_t> const& v) {
  std::string s = "(";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

tessel_tensor planned_from_shape(std::vector<std::int64_t> const& shape, tessel_dtype dtype) {
  tessel_tensor t = planned("out", dtype, {});
  t.ndim = std::int32_t(shape.size());
  std::int64_t packed = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    t.shape[i] = shape[std::size_t(i)];
    t.strides[i] = packed;
    packed *= t.shape[i] > 1 ? t.shape[i] : 1;
  }
  return t;
}

py::object conv_call(Mode mode, py::handle op, py::handle a, py::handle b, py::handle out, py::handle out_shape,
                     py::handle bias, py::handle residual, py::handle stride, py::handle padding,
                     py::handle dilation, py::handle groups, py::handle activation, py::handle alpha, py::handle beta,
                     py::handle stream, py::handle kernel) {
  ConvPass const pass = conv_pass_of(op);
  tessel_conv_problem p;
  tessel_conv_problem_init(&p);
  p.op = pass.op;
  p.alpha = real(alpha, "alpha"), p.beta = real(beta, "beta");
  p.groups = integer(groups, "groups");
  p.activation = activation_of(activation);
  std::optional<std::string> const kernel_name = kernel_of(kernel, "tessel.conv_kernels()");
  std::optional<std::vector<std::int64_t>> const shape = shape_of(out_shape, pass.op == TESSEL_CONV_FPROP ? "out_shape" : pass.out_shape);

  Operand A = inspect(a, pass.in_a, kConvRank), B = inspect(b, pass.in_b, kConvRank);
  std::optional<Operand> O, R, Bias;
  if (!out.is_none()) O = inspect(out, "out", kConvRank);
  if (!residual.is_none()) R = inspect(residual, "residual", kConvRank);
  if (!bias.is_none()) Bias = inspect(bias, "bias", kBiasRank);
  auto const operands = [&] { return Operands{&A, &B, opt(O), opt(R), opt(Bias)}; };
  same_device(operands());

  std::intptr_t const s = call_stream(stream, A);
  export_for(operands(), s);
  // The steps, by the rank of the first input (x, or dy for dgrad; known once exported): 4-D is
  // 2-D, 5-D is 3-D.
  int const dims = A.t.ndim == 5 ? 3 : 2;
  spatial_of(stride, "stride", dims, &p.stride_d, &p.stride_h, &p.stride_w);
  spatial_of(padding, "padding", dims, &p.pad_d, &p.pad_h, &p.pad_w);
  spatial_of(dilation, "dilation", dims, &p.dilation_d, &p.dilation_h, &p.dilation_w);
  tessel_tensor* const slot_a = pass.op == TESSEL_CONV_DGRAD ? &p.y : &p.x;
  tessel_tensor* const slot_b = pass.op == TESSEL_CONV_WGRAD ? &p.y : &p.w;
  tessel_tensor* const slot_out = pass.op == TESSEL_CONV_FPROP ? &p.y : pass.op == TESSEL_CONV_DGRAD ? &p.x : &p.w;
  *slot_a = A.t, *slot_b = B.t;
  if (R) p.residual = R->t;
  if (Bias) p.bias = Bias->t;
  p.kernel = kernel_name ? kernel_name->c_str() : nullptr;
  if (O) {
    if (shape && pass.op != TESSEL_CONV_FPROP) {
      bool same = int(shape->size()) == O->t.ndim;
      for (int i = 0; same && i < O->t.ndim; ++i) same = (*shape)[std::size_t(i)] == O->t.shape[i];
      if (!same)
        throw py::value_error(std::string(pass.out_shape) + ": " + tuple_text(*shape) + " differs from out's " +
                              tuple_text(std::vector<std::int64_t>(O->t.shape, O->t.shape + O->t.ndim)));
    }
    *slot_out = O->t;
  } else if (pass.op == TESSEL_CONV_FPROP) {
    *slot_out = planned_conv_out(p);
  } else if (shape) {
    *slot_out = planned_from_shape(*shape, tessel_dtype(A.t.dtype));
  } else {
    throw py::value_error(std::string(pass.out_shape) + ": needed when out is None; " + pass.call +
                          (pass.op == TESSEL_CONV_DGRAD
                               ? " cannot tell dx's extents from dy's (at a stride above 1 several input sizes give "
                                 "one output size): pass x_shape, x's [N, (D,) H, W, C], or out"
                               : " cannot tell the filter's extents from x and dy alone: pass w_shape, the filters' "
                                 "[K, (T,) R, S, C/groups], or out"));
  }
  check(tessel_conv_check, p);

  if (!O && mode != Mode::kernel) {  // conv_kernel() only names the kernel: no output needed
    O = allocate(a, A.device, *slot_out, pass.call, kConvRank, s);
    same_device(operands());
    *slot_out = O->t;
    check(tessel_conv_check, p);
  }
  if (O) check_output(*O, {&A, &B}, " (residual may be out itself)");

  DeviceGuard const guard(settle_device(operands()));
  if (mode == Mode::kernel) {
    char why[1024];
    char const* name = nullptr;
    tessel_status const st = tessel_conv_can_implement(&p, &name, why, sizeof why);
    if (st != TESSEL_STATUS_SUCCESS) raise(st, why);
    return name != nullptr ? py::object(py::str(name)) : py::object(py::none());
  }
  wait_for_producers(operands(), s);
  cudaStream_t const cs = reinterpret_cast<cudaStream_t>(s);
  run_without_gil([&](char* why, std::size_t size) { return tessel_conv(&p, cs, why, size); });
  return O->obj;
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
         py::object kernel, bool tf32, py::object bias, py::object activation, py::object scale_a, py::object scale_b) {
        return gemm_call(Mode::run, a, b, out, c, alpha, beta, stream, kernel, tf32, 1, bias, activation, scale_a,
                         scale_b);
      },
      py::arg("a"), py::arg("b"), py::arg("out") = py::none(), py::arg("c") = py::none(), py::arg("alpha") = 1.0,
      py::arg("beta") = 0.0, py::arg("stream") = py::none(), py::arg("kernel") = py::none(), py::arg("tf32") = false,
      py::arg("bias") = py::none(), py::arg("activation") = py::none(), py::arg("scale_a") = py::none(),
      py::arg("scale_b") = py::none(),
      "out = act(alpha * a @ b + beta * c + bias) on `stream` (tessel.gemm documents it); returns out");
  m.def(
      "gemm_kernel",
      [](py::object a, py::object b, py::object out, py::object c, py::object alpha, py::object beta, py::object stream,
         py::object kernel, bool tf32, py::object bias, py::object activation, py::object scale_a, py::object scale_b) {
        return gemm_call(Mode::kernel, a, b, out, c, alpha, beta, stream, kernel, tf32, 0, bias, activation, scale_a,
                         scale_b);
      },
      py::arg("a"), py::arg("b"), py::arg("out") = py::none(), py::arg("c") = py::none(), py::arg("alpha") = 1.0,
      py::arg("beta") = 0.0, py::arg("stream") = py::none(), py::arg("kernel") = py::none(), py::arg("tf32") = false,
      py::arg("bias") = py::none(), py::arg("activation") = py::none(), py::arg("scale_a") = py::none(),
      py::arg("scale_b") = py::none(),
      "the registry name of the kernel gemm would run (None when there is nothing to compute); launches nothing");
  m.def(
      "_gemm_host_loop",
      [](py::object a, py::object b, py::object out, py::object c, py::object alpha, py::object beta, py::object stream,
         py::object kernel, bool tf32, long long calls, bool launch) {
        return gemm_call(launch ? Mode::host_loop : Mode::host_loop_check, a, b, out, c, alpha, beta, stream, kernel,
                         tf32, calls, py::none(), py::none(), py::none(), py::none());
      },
      py::arg("a"), py::arg("b"), py::arg("out"), py::arg("c"), py::arg("alpha"), py::arg("beta"), py::arg("stream"),
      py::arg("kernel"), py::arg("tf32"), py::arg("calls"), py::arg("launch") = true,
      "seconds of host time per tessel_gemm call, over `calls` calls made back to back from C++ with the "
      "arguments prepared once (the C ABI's own cost; tessel.bench compares the Python call with it); "
      "launch=False times tessel_gemm_can_implement instead (the rules and the kernel choice alone)");
  m.def(
      "grouped_mm",
      [](py::object a, py::object b, py::object offs, py::object out, py::object out_dtype, py::object c,
         py::object alpha, py::object beta, py::object stream) {
        return grouped_mm_call(a, b, offs, out, out_dtype, c, alpha, beta, stream);
      },
      py::arg("a"), py::arg("b"), py::arg("offs"), py::arg("out") = py::none(), py::arg("out_dtype") = py::none(),
      py::arg("c") = py::none(), py::arg("alpha") = 1.0, py::arg("beta") = 0.0, py::arg("stream") = py::none(),
      "out[rows of group g] = alpha * a[rows of g] @ b[g] + beta * c[rows of g] on `stream` (tessel.grouped_mm "
      "documents it); returns out");
  m.def(
      "attention",
      [](py::object q, py::object k, py::object v, py::object out, py::object lse, py::object return_lse,
         py::object softmax_scale, py::object causal, py::object window, py::object softcap, py::object align,
         py::object cu_seqlens_q, py::object cu_seqlens_k, py::object max_seqlen_q, py::object max_seqlen_k,
         py::object stream, py::object kernel) {
        return attention_call(q, k, v, out, lse, return_lse, softmax_scale, causal, window, softcap, align,
                              cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, stream, kernel);
      },
      py::arg("q"), py::arg("k"), py::arg("v"), py::arg("out") = py::none(), py::arg("lse") = py::none(),
      py::arg("return_lse") = false, py::arg("softmax_scale") = py::none(), py::arg("causal") = false,
      py::arg("window") = py::none(), py::arg("softcap") = 0.0, py::arg("align") = "bottom-right",
      py::arg("cu_seqlens_q") = py::none(), py::arg("cu_seqlens_k") = py::none(),
      py::arg("max_seqlen_q") = py::none(), py::arg("max_seqlen_k") = py::none(), py::arg("stream") = py::none(),
      py::arg("kernel") = py::none(),
      "attention forward on `stream` (tessel.attention documents it); returns out, or (out, lse) with return_lse");
  m.def(
      "attention_kernels",
      [] { return registry_list(tessel::attention_kernel_count(), tessel::attention_kernel_info); },
      "the compiled attention kernels, as `tessel list` prints them");
  m.def(
      "attention_backward",
      [](py::object q, py::object k, py::object v, py::object out, py::object dout, py::object lse, py::object dq,
         py::object dk, py::object dv, py::object softmax_scale, py::object causal, py::object window,
         py::object softcap, py::object align, py::object cu_seqlens_q, py::object cu_seqlens_k,
         py::object max_seqlen_q, py::object max_seqlen_k, py::object deterministic, py::object stream,
         py::object kernel) {
        return attention_backward_call(q, k, v, out, dout, lse, dq, dk, dv, softmax_scale, causal, window, softcap,
                                       align, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, deterministic,
                                       stream, kernel);
      },
      py::arg("q"), py::arg("k"), py::arg("v"), py::arg("out"), py::arg("dout"), py::arg("lse"),
      py::arg("dq") = py::none(), py::arg("dk") = py::none(), py::arg("dv") = py::none(),
      py::arg("softmax_scale") = py::none(), py::arg("causal") = false, py::arg("window") = py::none(),
      py::arg("softcap") = 0.0, py::arg("align") = "bottom-right", py::arg("cu_seqlens_q") = py::none(),
      py::arg("cu_seqlens_k") = py::none(), py::arg("max_seqlen_q") = py::none(),
      py::arg("max_seqlen_k") = py::none(), py::arg("deterministic") = false, py::arg("stream") = py::none(),
      py::arg("kernel") = py::none(),
      "attention backward on `stream` (tessel.attention_backward documents it); returns (dq, dk, dv)");
  m.def(
      "attention_backward_kernels",
      [] { return registry_list(tessel::attention_backward_kernel_count(), tessel::attention_backward_kernel_info); },
      "the compiled attention-backward kernels, as `tessel list` prints them");
  m.def(
      "conv",
      [](py::object op, py::object a, py::object b, py::object out, py::object out_shape, py::object bias,
         py::object residual, py::object stride, py::object padding, py::object dilation, py::object groups,
         py::object activation, py::object alpha, py::object beta, py::object stream, py::object kernel) {
        return conv_call(Mode::run, op, a, b, out, out_shape, bias, residual, stride, padding, dilation, groups,
                         activation, alpha, beta, stream, kernel);
      },
      py::arg("op"), py::arg("a"), py::arg("b"), py::arg("out") = py::none(), py::arg("out_shape") = py::none(),
      py::arg("bias") = py::none(), py::arg("residual") = py::none(), py::arg("stride") = 1, py::arg("padding") = 0,
      py::arg("dilation") = 1, py::arg("groups") = 1, py::arg("activation") = py::none(), py::arg("alpha") = 1.0,
      py::arg("beta") = 0.0, py::arg("stream") = py::none(), py::arg("kernel") = py::none(),
      "the convolution pass `op` ('fprop': a = x, b = w; 'dgrad': a = dy, b = w; 'wgrad': a = x, b = dy) on "
      "`stream` (tessel.conv, conv_dgrad and conv_wgrad document it); returns out");
  m.def(
      "conv_kernel",
      [](py::object op, py::object a, py::object b, py::object out, py::object out_shape, py::object bias,
         py::object residual, py::object stride, py::object padding, py::object dilation, py::object groups,
         py::object activation, py::object alpha, py::object beta, py::object stream, py::object kernel) {
        return conv_call(Mode::kernel, op, a, b, out, out_shape, bias, residual, stride, padding, dilation, groups,
                         activation, alpha, beta, stream, kernel);
      },
      py::arg("op"), py::arg("a"), py::arg("b"), py::arg("out") = py::none(), py::arg("out_shape") = py::none(),
      py::arg("bias") = py::none(), py::arg("residual") = py::none(), py::arg("stride") = 1, py::arg("padding") = 0,
      py::arg("dilation") = 1, py::arg("groups") = 1, py::arg("activation") = py::none(), py::arg("alpha") = 1.0,
      py::arg("beta") = 0.0, py::arg("stream") = py::none(), py::arg("kernel") = py::none(),
      "the registry name of the kernel conv would run; checks the arguments as conv does and launches nothing");
  m.def(
      "conv_kernels", [] { return registry_list(tessel::conv_kernel_count(), tessel::conv_kernel_info); },
      "the compiled convolution kernels, as `tessel list` prints them");
  m.def(
      "_set_allocator",
      [](py::object fn) {
        Py_XDECREF(g_allocator);
        g_allocator = fn.release().ptr();
      },
      "registers tessel's allocator for outputs left None: fn(like, shape, dtype_name, device, name, call) -> array");
  m.def(
      "device_count", [] { return tessel::device_count(); }, "usable CUDA devices; 0 without a driver or a device");
  m.def("device_info", &device_dict, py::arg("index") = 0, "properties of CUDA device `index`");
  m.def("gemm_kernels", &kernel_list, "the compiled GEMM kernels, as `tessel list` prints them");
  m.attr("C_API_VERSION") = tessel_c_api_version();
#ifdef TESSEL_HAVE_DIST
  bind_dist(m);
#else
  m.attr("DIST_AVAILABLE") = false;
#endif
}
