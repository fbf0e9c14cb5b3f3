// python/src/dist.cpp -- tessel._C's bindings of tessel::dist (tessel/c_api_dist.h), compiled in
// where the library was built (NCCL found). tessel/dist.py is their public face.
//
// A collective call must reach the C ABI on every rank, even when this rank's arguments are
// refused before that (not an array, a CPU tensor, ...): then an empty problem is sent through
// it, so that the other ranks learn of the refusal in the argument agreement instead of waiting
// for a rank that never comes; the original error is raised after.
#include <cuda_runtime_api.h>
#include <pybind11/pybind11.h>
#include <tessel/c_api_dist.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "arrays.hpp"

namespace py = pybind11;
using namespace tessel::python;

namespace {

constexpr char kDistRank[] = "the tensor-parallel GEMMs take 2-D matrices";

[[noreturn]] void raise(tessel_status s, std::string const& why) {
  switch (s) {
    case TESSEL_STATUS_INVALID_DTYPE: throw py::type_error(why);
    case TESSEL_STATUS_INVALID_ARGUMENT:
    case TESSEL_STATUS_NOT_SUPPORTED: throw py::value_error(why);
    default: throw std::runtime_error(why);
  }
}

tessel_dist_context* context_of(std::uintptr_t handle) {
  if (handle == 0) throw py::value_error("ctx: closed (or never created)");
  return reinterpret_cast<tessel_dist_context*>(handle);
}

struct Call {
  std::optional<Operand> a, b, d, g;
  tessel_dist_problem p{};
};

// The problem from Python arrays (no CUDA calls but DLPack exports for `stream`).
void describe(Call& c, py::handle a, py::handle b, py::handle out, py::handle a_gathered, std::intptr_t stream,
              float alpha, std::int64_t chunk_rows) {
  tessel_dist_problem_init(&c.p);
  c.a = inspect(a, "a", kDistRank);
  c.b = inspect(b, "b", kDistRank);
  c.d = inspect(out, "out", kDistRank);
  if (!a_gathered.is_none()) c.g = inspect(a_gathered, "a_gathered", kDistRank);
  for (std::optional<Operand>* op : {&c.a, &c.b, &c.d, &c.g})
    if (*op && (*op)->source == Source::dlpack) export_dlpack(**op, stream);
  c.p.a = c.a->t, c.p.b = c.b->t, c.p.d = c.d->t;
  if (c.g) c.p.a_gathered = c.g->t;
  c.p.alpha = alpha;
  c.p.chunk_rows = chunk_rows;
}

// Makes `device` current for the scope.
struct DeviceScope {
  int previous = -1;
  explicit DeviceScope(int device) {
    if (cudaGetDevice(&previous) != cudaSuccess) previous = -1;
    if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess) {
      (void)cudaGetLastError();
      throw std::runtime_error("cudaSetDevice(" + std::to_string(device) + "): " + cudaGetErrorString(e));
    }
  }
  ~DeviceScope() {
    if (previous >= 0) (void)cudaSetDevice(previous);
  }
};

using Check = tessel_status (*)(tessel_dist_problem const*, int, int, char*, size_t);
using Run = tessel_status (*)(tessel_dist_context*, tessel_dist_problem const*, cudaStream_t, char*, size_t);

void check_call(std::string const& op, py::handle a, py::handle b, py::handle out, py::handle a_gathered, int nranks,
                int rank, std::int64_t chunk_rows) {
  Call c;
  describe(c, a, b, out, a_gathered, 0, 1.0f, chunk_rows);
  Check const check = op == "all_gather" ? tessel_dist_all_gather_gemm_check : tessel_dist_gemm_reduce_scatter_check;
  char why[1024];
  if (tessel_status const s = check(&c.p, nranks, rank, why, sizeof why); s != TESSEL_STATUS_SUCCESS) raise(s, why);
}

void run_call(std::string const& op, std::uintptr_t handle, py::handle a, py::handle b, py::handle out,
              py::handle a_gathered, std::intptr_t stream, float alpha, std::int64_t chunk_rows) {
  tessel_dist_context* const ctx = context_of(handle);
  int device = 0;
  (void)tessel_dist_context_info(ctx, nullptr, nullptr, &device, nullptr);
  DeviceScope const scope(device);  // the context's device is current for the call
  Run const run = op == "all_gather" ? tessel_dist_all_gather_gemm : tessel_dist_gemm_reduce_scatter;
  cudaStream_t const cs = reinterpret_cast<cudaStream_t>(stream);
  char why[1024];
  Call c;
  try {
    describe(c, a, b, out, a_gathered, stream, alpha, chunk_rows);
  } catch (...) {
    tessel_dist_problem empty;
    tessel_dist_problem_init(&empty);
    {
      py::gil_scoped_release const nogil;
      (void)run(ctx, &empty, cs, why, sizeof why);  // the other ranks learn that this one refused
    }
    throw;
  }
  tessel_status s = TESSEL_STATUS_SUCCESS;
  {
    py::gil_scoped_release const nogil;
    s = run(ctx, &c.p, cs, why, sizeof why);
  }
  if (s != TESSEL_STATUS_SUCCESS) raise(s, why);
}

}  // namespace

void bind_dist(py::module_& m) {
  m.attr("DIST_AVAILABLE") = true;
  m.def("dist_unique_id", [] {
    unsigned char id[TESSEL_DIST_UNIQUE_ID_BYTES];
    char why[1024];
    if (tessel_status const s = tessel_dist_unique_id(id, why, sizeof why); s != TESSEL_STATUS_SUCCESS) raise(s, why);
    return py::bytes(reinterpret_cast<char const*>(id), sizeof id);
  }, "ncclGetUniqueId's 128 bytes, made on one rank and sent to the others");
  m.def(
      "dist_context_create",
      [](py::bytes id, int nranks, int rank, int device, std::int64_t timeout_ms) {
        std::string const raw = id;
        if (raw.size() != TESSEL_DIST_UNIQUE_ID_BYTES)
          throw py::value_error("unique_id: " + std::to_string(raw.size()) + " bytes; an NCCL unique id has " +
                                std::to_string(TESSEL_DIST_UNIQUE_ID_BYTES));
        DeviceScope const scope(device);
        tessel_dist_context* ctx = nullptr;
        char why[1024];
        tessel_status s = TESSEL_STATUS_SUCCESS;
        {
          py::gil_scoped_release const nogil;
          s = tessel_dist_context_create(&ctx, reinterpret_cast<unsigned char const*>(raw.data()), nranks, rank,
                                         timeout_ms, why, sizeof why);
        }
        if (s != TESSEL_STATUS_SUCCESS) raise(s, why);
        return reinterpret_cast<std::uintptr_t>(ctx);
      },
      py::arg("unique_id"), py::arg("nranks"), py::arg("rank"), py::arg("device"), py::arg("timeout_ms") = 0,
      "a tessel::dist context (an opaque handle) with its own NCCL communicator; collective");
  m.def(
      "dist_context_destroy",
      [](std::uintptr_t handle) {
        if (handle == 0) return;
        py::gil_scoped_release const nogil;
        tessel_dist_context_destroy(reinterpret_cast<tessel_dist_context*>(handle));
      },
      py::arg("handle"), "frees a context made by dist_context_create");
  m.def(
      "dist_context_info",
      [](std::uintptr_t handle) {
        int nranks = 0, rank = 0, device = 0, version = 0;
        (void)tessel_dist_context_info(context_of(handle), &nranks, &rank, &device, &version);
        py::dict d;
        d["nranks"] = nranks, d["rank"] = rank, d["device"] = device, d["nccl_version"] = version;
        return d;
      },
      py::arg("handle"), "nranks, rank, device and the NCCL version loaded at run time");
  m.def("dist_block_rows", &tessel_dist_block_rows, py::arg("m"), py::arg("nranks"), py::arg("rank"),
        "rows of a reduce-scatter block: ceil(M / P) for the first blocks, fewer or 0 after");
  m.def("dist_check", &check_call, py::arg("op"), py::arg("a"), py::arg("b"), py::arg("out"),
        py::arg("a_gathered") = py::none(), py::arg("nranks"), py::arg("rank"), py::arg("chunk_rows") = 0,
        "every argument rule of op ('all_gather' or 'reduce_scatter') for `rank` of `nranks`; no CUDA, no NCCL");
  m.def("dist_run", &run_call, py::arg("op"), py::arg("handle"), py::arg("a"), py::arg("b"), py::arg("out"),
        py::arg("a_gathered"), py::arg("stream"), py::arg("alpha") = 1.0f, py::arg("chunk_rows") = 0,
        "op ('all_gather' or 'reduce_scatter') on `stream`; collective");
}
