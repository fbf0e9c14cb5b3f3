// src/gemm/gemm.cpp -- the GEMM host API: validation, the kernel registry, the heuristic, launch.
#include "gemm_canonical.hpp"
#include "simt_instances.hpp"
#include "sm90_instances.hpp"
#include "../runtime/current_device.hpp"

#include <tessel/gemm/device/gemm.hpp>
#include <tessel/gemm/device/gemm_registry.hpp>
#include <tessel/gemm/device/sm80_gemm_kernels.hpp>
#include <tessel/gemm/device/sm90_gemm_kernels.hpp>
#include <tessel/gemm/epilogue/epilogue_fusion.hpp>
#include <tessel/runtime/device.hpp>

#include <cuda_runtime_api.h>

#include <array>
#include <climits>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace tessel {

namespace {

using kernel::SimtGemmParams;
using kernel::detail::SimtInstance;
using kernel::detail::SimtTileShape;

// The compiled instances of configuration `tile` for g's dtypes (empty when not compiled).
SimtInstance simt_instance(SimtTileShape tile, GemmArguments const& g) {
  namespace d = kernel::detail;
  DType const c = g.c_type;
  switch (tile) {
    case SimtTileShape::t128x128x8_128t:
      switch (g.a_type) {
        case DType::f32:
        case DType::tf32: return d::simt_f32_128x128x8_128t(c);
        case DType::f16: return d::simt_f16_128x128x8_128t(c);
        case DType::bf16: return d::simt_bf16_128x128x8_128t(c);
        case DType::e4m3:
        case DType::e5m2: return d::simt_fp8_128x128x8_128t(c);
      }
      break;
    case SimtTileShape::t64x64x8:
      switch (g.a_type) {
        case DType::f32:
        case DType::tf32: return d::simt_f32_64x64x8(c);
        case DType::f16: return d::simt_f16_64x64x8(c);
        case DType::bf16: return d::simt_bf16_64x64x8(c);
        case DType::e4m3:
        case DType::e5m2: return d::simt_fp8_64x64x8(c);
      }
      break;
    case SimtTileShape::t128x128x8_cp_async:
      if (g.a_type == DType::f32 || g.a_type == DType::tf32) return d::simt_f32_cp_async_128x128x8(c);
      break;
  }
  return {};
}

// Four consecutive elements of each row as one access (the SIMT kernels' vector loads and stores).
bool aligned4(void const* p, DType t, std::int64_t ld, std::int64_t batch_stride, std::int64_t batch) {
  return detail::vector_aligned(p, ld, batch_stride, batch, size_of(t), 4);
}

// Bring the problem to a row-major D: a column-major D is D^T = B^T A^T (swap A and B, M and N).
SimtGemmParams simt_params(GemmArguments const& g) {
  SimtGemmParams p;
  p.batch = g.batch_count;
  p.alpha = gemm_product_scale(g), p.beta = g.beta;
  p.c = g.c, p.ldc = g.ldc, p.batch_stride_c = g.batch_stride_c;
  p.d = g.d, p.ldd = g.ldd, p.batch_stride_d = g.batch_stride_d;
  p.c_vec = g.c != nullptr && aligned4(g.c, g.c_type, g.ldc, g.batch_stride_c, g.batch_count);
  p.d_vec = aligned4(g.d, g.c_type, g.ldd, g.batch_stride_d, g.batch_count);
  bool const a_k_contig = g.a_order == MatrixOrder::row_major;  // A is M x K
  bool const b_k_contig = g.b_order == MatrixOrder::col_major;  // B is K x N
  bool const a_vec = aligned4(g.a, g.a_type, g.lda, g.batch_stride_a, g.batch_count);
  bool const b_vec = aligned4(g.b, g.b_type, g.ldb, g.batch_stride_b, g.batch_count);
  p.k = g.k;
  if (g.c_order == MatrixOrder::row_major) {
    p.m = g.m, p.n = g.n;
    p.a = g.a, p.lda = g.lda, p.batch_stride_a = g.batch_stride_a, p.a_k_major = a_k_contig, p.a_vec = a_vec;
    p.b = g.b, p.ldb = g.ldb, p.batch_stride_b = g.batch_stride_b, p.b_k_major = b_k_contig, p.b_vec = b_vec;
    p.a_e5m2 = g.a_type == DType::e5m2, p.b_e5m2 = g.b_type == DType::e5m2;
  } else {
    p.m = g.n, p.n = g.m;
    p.a = g.b, p.lda = g.ldb, p.batch_stride_a = g.batch_stride_b, p.a_k_major = b_k_contig, p.a_vec = b_vec;
    p.b = g.a, p.ldb = g.lda, p.batch_stride_b = g.batch_stride_a, p.b_k_major = a_k_contig, p.b_vec = a_vec;
    p.a_e5m2 = g.b_type == DType::e5m2, p.b_e5m2 = g.a_type == DType::e5m2;
  }
  return p;
}

Status simt_check(SimtTileShape tile, GemmArguments const& g) {
  SimtInstance const inst = simt_instance(tile, g);
  if (inst.launch == nullptr)
    return Status::error(StatusCode::not_supported,
                         tile == SimtTileShape::t128x128x8_cp_async
                             ? std::string("a_type: the cp.async SIMT kernel takes fp32 (or tf32) operands only, not ") +
                                   to_string(g.a_type) + " -> " + to_string(g.c_type)
                             : std::string("c_type: no SIMT instance for ") + to_string(g.a_type) + " -> " +
                                   to_string(g.c_type));
  if (g.k / 8 >= INT_MAX)
    return Status::error(StatusCode::not_supported, "k: " + std::to_string(g.k) + " needs more than 2^31 k-tiles of 8");
  std::int64_t const tm = (g.m + inst.bm - 1) / inst.bm, tn = (g.n + inst.bn - 1) / inst.bn;
  if (tm > INT_MAX || tn > INT_MAX || tm * tn > INT_MAX)
    return Status::error(StatusCode::not_supported,
                         "m, n: " + std::to_string(tm) + " x " + std::to_string(tn) + " tiles of " +
                             std::to_string(inst.bm) + "x" + std::to_string(inst.bn) +
                             " exceed the 2^31 - 1 CTAs of one launch");
  return Status::success();
}

// A fused epilogue (bias, activation) on a kernel that has none: the SIMT kernels. `run` computes
// the unfused product in fp32 -- into D itself when D is fp32 (alpha * A B + beta * C), else into
// an fp32 workspace (alpha * A B; C joins in the pass) -- and detail::fused_epilogue_pass forms
// act(. + beta * C + bias), rounded once to D's dtype: the arithmetic of a fused epilogue, one
// pass over D later. With `query`, the workspace bytes only. Pre: gemm_is_fused(g).
template <class Run>
Status run_then_epilogue(GemmArguments const& g, std::size_t* query, cudaStream_t stream, Run run) {
  if (g.c_type == DType::f32)
    return detail::run_fused_fp32(g, query, stream, [&](GemmArguments const& k, std::size_t* q, cudaStream_t s) {
      if (q == nullptr) return run(k, s);
      *q = 0;  // in place: no scratch
      return Status::success();
    });
  bool const col_d = g.c_order == MatrixOrder::col_major;
  std::int64_t const rows = col_d ? g.n : g.m, cols = col_d ? g.m : g.n;  // the canonical (row-major) D
  detail::CallWorkspace w;
  if (Status s = detail::prepare_operands(detail::canonical_gemm(g), g.k, g.batch_count, int(size_of(g.a_type)),
                                          detail::Staging::never, detail::Staging::never,
                                          std::size_t(g.batch_count * rows * cols), 0, detail::workspace_source(g, query),
                                          stream, &w);
      !s || query != nullptr)
    return s;
  GemmArguments k = detail::without_fusion(g);  // alpha * A B, fp32, into the workspace
  k.c_type = DType::f32, k.c = nullptr, k.beta = 0.0f;
  k.d = w.partials, k.ldd = k.ldc = cols, k.batch_stride_d = k.batch_stride_c = rows * cols;
  Status result = run(k, stream);
  if (result.ok()) result = detail::fused_epilogue_pass(g, w.partials, cols, rows * cols, /*with_c=*/true, stream);
  return detail::release_workspace(w, std::move(result), stream);
}

Status simt_launch(SimtTileShape tile, GemmArguments const& g, cudaStream_t stream) {
  SimtInstance const inst = simt_instance(tile, g);
  cudaError_t const err = inst.launch(simt_params(g), stream);
  if (err != cudaSuccess)
    return Status::error(StatusCode::cuda_error, std::string("launch of the SIMT GEMM kernel: ") + cudaGetErrorName(err) +
                                                     ": " + cudaGetErrorString(err));
  return Status::success();
}

Status simt_run(SimtTileShape tile, GemmArguments const& g, cudaStream_t stream) {
  if (!gemm_is_fused(g)) return simt_launch(tile, g, stream);
  return run_then_epilogue(g, nullptr, stream,
                           [tile](GemmArguments const& k, cudaStream_t s) { return simt_launch(tile, k, s); });
}

// The scratch of a fused call whose D is not fp32 (run_then_epilogue); none otherwise.
Status simt_workspace(GemmArguments const& g, std::size_t* bytes) {
  if (!gemm_is_fused(g)) {
    *bytes = 0;
    return Status::success();
  }
  return run_then_epilogue(g, bytes, nullptr, [](GemmArguments const&, cudaStream_t) { return Status::success(); });
}

Status tensor_simt_launch(GemmArguments const& g, cudaStream_t stream) {
  cudaError_t const err = kernel::detail::launch_tensor_simt(g, stream);
  if (err != cudaSuccess)
    return Status::error(StatusCode::cuda_error, std::string("launch of tensor_simt_128x128x8: ") + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
  return Status::success();
}

cudaError_t simt_attr(SimtTileShape tile, GemmArguments const& g, cudaFuncAttributes* attr) {
  SimtInstance const inst = simt_instance(tile, g);
  if (inst.attributes == nullptr) return cudaErrorInvalidDeviceFunction;
  return inst.attributes(attr);
}

constexpr char kSimtDtypes[] =
    "fp32|tf32 -> fp32, fp16 -> fp16|fp32, bf16 -> bf16|fp32 (tf32 runs in full fp32), "
    "e4m3|e5m2 x e4m3|e5m2 (not e5m2 x e5m2) -> bf16|fp16|fp32";
constexpr char kSimtLayouts[] = "A, B, C/D each row- or column-major; batched; any leading dimension";
constexpr char kSimtAlign[] = "none; 128-bit loads/stores where pointer, ld and batch stride are multiples of 4 elements";

constexpr char kCpAsyncDtypes[] = "fp32|tf32 -> fp32 (tf32 runs in full fp32)";

std::array<GemmKernelInfo, 4> const kKernels = {{
    {"simt_cp_async_128x128x8",
     "CUDA-core FFMA, fp32: 3-stage cp.async pipeline (global -> shared, no staging registers), warp tiling, 8x8 per thread",
     "128x128x8, 256 threads, 3 stages", kCpAsyncDtypes, kSimtLayouts, kSimtAlign,
     "by name (at its best, A M- and B N-contiguous, 0.84x cuBLAS on the H200; K-contiguous operands take 4-byte "
     "transposing copies); docs/gemm.md", 80,
     [](GemmArguments const& g) { return simt_check(SimtTileShape::t128x128x8_cp_async, g); },
     [](GemmArguments const& g, cudaStream_t s) { return simt_run(SimtTileShape::t128x128x8_cp_async, g, s); },
     [](GemmArguments const& g, cudaFuncAttributes* a) { return simt_attr(SimtTileShape::t128x128x8_cp_async, g, a); }, simt_workspace},
    {"simt_128x128x8_128t",
     "CUDA-core FFMA: double-buffered smem through registers (converts fp16/bf16/fp8 on load), fragments read one k "
     "step ahead across k-tiles, warp tiling, 16x8 per thread",
     "128x128x8, 128 threads, 2 stages", kSimtDtypes, kSimtLayouts, kSimtAlign,
     "default when the 128x128 tiles fill at least every SM once", 80,
     [](GemmArguments const& g) { return simt_check(SimtTileShape::t128x128x8_128t, g); },
     [](GemmArguments const& g, cudaStream_t s) { return simt_run(SimtTileShape::t128x128x8_128t, g, s); },
     [](GemmArguments const& g, cudaFuncAttributes* a) { return simt_attr(SimtTileShape::t128x128x8_128t, g, a); }, simt_workspace},
    {"simt_64x64x8",
     "CUDA-core FFMA: tutorial rung 08's double-buffered mainloop (converts fp16/bf16/fp8 on load) on 64x64 tiles, "
     "8x8 per thread: four times the CTAs of a 128x128 tile, for small and skinny problems",
     "64x64x8, 64 threads, 2 stages", kSimtDtypes, kSimtLayouts, kSimtAlign,
     "when there are fewer 128x128 tiles (times batches) than SMs", 80,
     [](GemmArguments const& g) { return simt_check(SimtTileShape::t64x64x8, g); },
     [](GemmArguments const& g, cudaStream_t s) { return simt_run(SimtTileShape::t64x64x8, g, s); },
     [](GemmArguments const& g, cudaFuncAttributes* a) { return simt_attr(SimtTileShape::t64x64x8, g, a); }, simt_workspace},
    {"tensor_simt_128x128x8",
     "seed 004's gemm_device in tessel tensors: local_tile/local_partition, one-element zero-filling cp.async "
     "copies, gemm, axpby; the generic fp32 path",
     "128x128x8, 256 threads (tA, tB 32x8; tC 16x16)", kCpAsyncDtypes, kSimtLayouts,
     "none; every copy is one element (strides are run-time values)", "by name only (--kernel tensor_simt_128x128x8)", 80,
     [](GemmArguments const& g) -> Status {
       if (g.a_type != DType::f32 && g.a_type != DType::tf32)
         return Status::error(StatusCode::not_supported, std::string("a_type: tensor_simt_128x128x8 takes fp32 (or tf32) only, not ") + to_string(g.a_type));
       if ((g.n + 127) / 128 > 65535 || (g.m + 127) / 128 > INT_MAX)
         return Status::error(StatusCode::not_supported, "n: tensor_simt_128x128x8 launches one CTA row per 128 columns, at most 65535");
       return Status::success();
     },
     [](GemmArguments const& g, cudaStream_t s) {
       return gemm_is_fused(g) ? run_then_epilogue(g, nullptr, s, tensor_simt_launch) : tensor_simt_launch(g, s);
     },
     [](GemmArguments const&, cudaFuncAttributes* a) { return kernel::detail::tensor_simt_attributes(a); }, simt_workspace},
}};

// The heuristic's SIMT entries: 128x128 tiles, and 64x64 tiles when those leave SMs idle.
constexpr std::size_t kSimtLarge = 1, kSimtSmall = 2;

using detail::current_device;
using detail::Here;

}  // namespace

namespace {
// Every compiled kernel: the SIMT entries, then the sm_80 and the sm_90a tensor-core entries.
std::vector<GemmKernelInfo> const& all_kernels() {
  static std::vector<GemmKernelInfo> const all = [] {
    std::vector<GemmKernelInfo> v(kKernels.begin(), kKernels.end());
    for (GemmKernelInfo const& k : sm80_gemm_kernels()) v.push_back(k);
    for (GemmKernelInfo const& k : sm90_gemm_kernels()) v.push_back(k);
    return v;
  }();
  return all;
}
}  // namespace

std::span<GemmKernelInfo const> gemm_kernels() { return all_kernels(); }

GemmKernelInfo const* find_gemm_kernel(std::string_view name) {
  for (GemmKernelInfo const& k : all_kernels())
    if (name == k.name) return &k;
  return nullptr;
}

namespace {

// ---- the heuristic's answers, remembered ------------------------------------------------------------

// Everything the heuristic's choice reads, as numbers: the problem's fields and options, each
// pointer as its low byte and whether it is null (the kernels' checks read alignment, never an
// address), which pointers coincide, and the device. Two calls with equal keys get the same kernel.
struct SelectionKey {
  std::array<std::uint64_t, 25> v{};
  int device = -1;
  bool operator==(SelectionKey const&) const = default;
};

std::uint64_t bits_of(float x) {
  std::uint32_t u = 0;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

std::uint64_t pointer_class(void const* p) {
  auto const u = reinterpret_cast<std::uintptr_t>(p);
  return (u & 0xff) | (u != 0 ? 0x100 : 0);
}

SelectionKey selection_key(GemmArguments const& g, int device) {
  SelectionKey k;
  k.device = device;
  auto const e = [](auto x) { return static_cast<std::uint64_t>(x); };
  GemmOptions const& o = g.options;
  void const* const ptrs[8] = {g.a, g.b, g.c, g.d, g.bias, g.a_scales, g.b_scales, g.workspace};
  std::uint64_t classes[2] = {0, 0}, same = 0;
  for (int i = 0; i < 8; ++i) {
    classes[i / 4] |= pointer_class(ptrs[i]) << (16 * (i % 4));
    for (int j = 0; j < i; ++j) same |= std::uint64_t(ptrs[i] == ptrs[j] && ptrs[i] != nullptr) << (i * 8 + j);
  }
  k.v = {e(g.m), e(g.n), e(g.k), e(g.batch_count),
         e(g.a_type) | e(g.b_type) << 8 | e(g.c_type) << 16 | e(g.a_order) << 24 | e(g.b_order) << 32 |
             e(g.c_order) << 40 | e(g.scale_mode) << 48 | e(g.bias_mode) << 56,
         e(g.activation), e(g.lda), e(g.batch_stride_a), e(g.ldb), e(g.batch_stride_b), e(g.ldc),
         e(g.batch_stride_c), e(g.ldd), e(g.batch_stride_d), bits_of(g.alpha) | bits_of(g.beta) << 32,
         bits_of(g.a_scale) | bits_of(g.b_scale) << 32, e(g.ld_a_scales), e(g.ld_b_scales), e(g.workspace_bytes),
         classes[0], classes[1], same,
         e(o.splits) << 32 | e(o.stream_k) | e(o.split_tail) << 1 | e(o.balance_waves) << 2 | e(o.compact_units) << 3 |
             e(o.lean_builds) << 4 | e(o.tf32_truncate) << 5 | e(static_cast<unsigned char>(o.raster_along)) << 8,
         e(static_cast<std::uint32_t>(o.operand_align)) << 32 | e(static_cast<std::uint32_t>(o.raster_group)),
         e(static_cast<std::uint16_t>(o.l2_promotion)) | e(static_cast<std::uint16_t>(o.skinny_in_flight)) << 16 |
             e(static_cast<std::uint16_t>(o.skinny_l2_hint_a)) << 32 | e(static_cast<std::uint16_t>(o.skinny_l2_hint_b)) << 48};
  return k;
}

// The last few choices of this thread. A layer called with the same shapes again and again (an
// inference loop, a training step from Python) skips the sm_90a heuristic's occupancy and slicing
// arithmetic over its candidates: on the H200 the rules and the choice took 1.8 us of a 7.2 us
// 1024^3 call from C++.
struct RememberedChoices {
  static constexpr int kSlots = 8;
  std::array<SelectionKey, kSlots> keys{};
  std::array<GemmKernelInfo const*, kSlots> kernels{};
  int next = 0;

  GemmKernelInfo const* find(SelectionKey const& k) const {
    for (int i = 0; i < kSlots; ++i)
      if (kernels[i] != nullptr && keys[i] == k) return kernels[i];
    return nullptr;
  }
  void remember(SelectionKey const& k, GemmKernelInfo const* kernel) {
    keys[next] = k, kernels[next] = kernel;
    next = (next + 1) % kSlots;
  }
};
thread_local RememberedChoices remembered;

GemmKernelInfo const* choose_kernel(GemmArguments const& g, Status* why);

}  // namespace

GemmKernelInfo const* select_gemm_kernel(GemmArguments const& g, Status* why) {
  if (g.kernel != nullptr && std::string_view(g.kernel) != "auto") return choose_kernel(g, why);  // by name
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return choose_kernel(g, why);
  }
  SelectionKey const key = selection_key(g, device);
  if (GemmKernelInfo const* k = remembered.find(key)) return k;
  GemmKernelInfo const* k = choose_kernel(g, why);
  if (k != nullptr) remembered.remember(key, k);
  return k;
}

namespace {

// select_gemm_kernel's answer, worked out: the kernel named, or the heuristic's choice.
GemmKernelInfo const* choose_kernel(GemmArguments const& g, Status* why) {
  auto fail = [&](Status s) -> GemmKernelInfo const* {
    if (why) *why = std::move(s);
    return nullptr;
  };
  if (g.kernel != nullptr && std::string_view(g.kernel) != "auto") {
    GemmKernelInfo const* k = find_gemm_kernel(g.kernel);
    if (k == nullptr)
      return fail(Status::error(StatusCode::invalid_argument, std::string("kernel: '") + g.kernel +
                                                                  "' is not a compiled kernel (`tessel list` shows them)"));
    if (g.scale_mode == ScaleMode::block && !sm90_is_block_scaled(*k))
      return fail(Status::error(StatusCode::not_supported, std::string("scale_mode: block; kernel ") + k->name +
                                                               " takes per-tensor scales only (block scaling runs on "
                                                               "sm90_e4m3_128x256x128_c2_blockscaled)"));
    if (Status s = k->check(g); !s) return fail(std::move(s));
    return k;
  }
  // Heuristic: bf16, fp16, fp8 and tf32 on an sm_90 GPU take the sm_90a kernels where the sm_90a
  // heuristic has one (tf32: problems that fill half the SMs with 128x256 tiles, or K >= 4096);
  // tensor-core dtypes (bf16, fp16, tf32) on sm_80 or newer otherwise take the sm_80 kernels' own
  // heuristic.
  // Otherwise (fp32, and the other fp8 pairs) SIMT: 128x128 tiles unless they leave SMs idle,
  // then 64x64 (4x the CTAs).
  Here h;
  bool const have_device = current_device(&h).ok();
  int const sms = have_device ? h.sms : 132;
  bool const tensor_core_dtype = g.a_type == DType::bf16 || g.a_type == DType::f16 || g.a_type == DType::tf32;
  // Block-scaled fp8 runs on its sm_90a kernel only: no other kernel applies per-block scales.
  if (g.scale_mode == ScaleMode::block) {
    if (have_device && h.cc == 90) {
      GemmKernelInfo const* k90 = sm90_select_gemm_kernel(g);
      if (k90 == nullptr) return fail(Status::error(StatusCode::not_supported, "scale_mode: no sm_90a kernel takes this block-scaled call"));
      if (Status s = k90->check(g); !s) return fail(std::move(s));
      return find_gemm_kernel(k90->name);
    }
    return fail(Status::error(StatusCode::not_supported,
                              std::string("scale_mode: block scaling runs on the sm_90a kernel "
                                          "sm90_e4m3_128x256x128_c2_blockscaled only; ") +
                                  (have_device ? "this GPU is sm_" + std::to_string(h.cc) : std::string("no CUDA device was found"))));
  }
  // sm_90a images run on compute capability 9.0 only (arch-specific features). A skinny problem
  // streams its long operand at memory bandwidth: a canonical D at most 64 wide or 64 tall in the
  // sm_90a skinny kernels (64x16, 64x64 or 128x64 tiles; the tall-and-narrow orientation runs swapped,
  // D addressed transposed) -- measured on the H100 against the sm_80 skinny kernel: 16x8192x8192
  // 52.4 us against 59.5, 64x8192x8192 60.2 against 89.6 (docs/skinny_gemm.md). fp8 pairs without
  // an sm_90a kernel fall through to SIMT.
  if ((tensor_core_dtype || is_fp8(g.a_type)) && have_device && h.cc == 90) {
    GemmKernelInfo const* k90 = sm90_select_gemm_kernel(g);
    bool const narrow90 = k90 != nullptr && sm90_is_skinny(*k90);
    if (GemmKernelInfo const* k80 = sm80_select_gemm_kernel(g, sms);
        !narrow90 && k80 != nullptr && std::string_view(k80->name).find("skinny") != std::string_view::npos && k80->check(g).ok())
      return find_gemm_kernel(k80->name);
    if (k90 != nullptr && k90->check(g).ok()) return find_gemm_kernel(k90->name);
  }
  if (tensor_core_dtype && (!have_device || h.cc >= 80)) {
    // The registry's own copy of the entry (gemm_kernel_runs_here indexes into the registry).
    if (GemmKernelInfo const* k80 = sm80_select_gemm_kernel(g, sms); k80 != nullptr && k80->check(g).ok())
      return find_gemm_kernel(k80->name);
  }
  std::int64_t const tiles128 = ((g.m + 127) / 128) * ((g.n + 127) / 128) * g.batch_count;
  GemmKernelInfo const* k = &kKernels[tiles128 < sms ? kSimtSmall : kSimtLarge];
  if (Status s = k->check(g); !s) {
    k = &kKernels[kSimtLarge];
    if (Status s1 = k->check(g); !s1) return fail(std::move(s1));
  }
  return k;
}

}  // namespace

Status gemm_kernel_runs_here(GemmKernelInfo const& k, GemmArguments const& g) {
  Here h;
  if (Status s = current_device(&h); !s) return s;
  std::string const sm = "sm_" + std::to_string(h.cc);
  if (h.cc < k.min_cc)
    return Status::error(StatusCode::arch_mismatch, std::string("kernel ") + k.name + " needs sm_" +
                                                        std::to_string(k.min_cc) + " or newer; this GPU is " + sm);
  // One probe per (kernel instance, device); the answer cannot change within a process.
  static std::mutex mu;
  // [kernel entry x dtype family][device]: 0 unknown, 1 ok
  constexpr std::size_t kRowsPerKernel = 2 * (static_cast<std::size_t>(DType::e5m2) + 1);  // a_type x (f32 out or not)
  static std::vector<std::array<signed char, 64>> seen(all_kernels().size() * kRowsPerKernel);
  std::size_t const row = static_cast<std::size_t>(&k - all_kernels().data()) * kRowsPerKernel +
                          static_cast<std::size_t>(g.a_type) * 2 + (g.c_type == DType::f32 ? 0 : 1);
  bool const cacheable = row < seen.size() && h.device >= 0 && h.device < 64;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (cacheable && seen[row][h.device] == 1) return Status::success();
  }
  cudaFuncAttributes attr{};
  cudaError_t const err = k.attributes(g, &attr);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();  // the probe's own error, reported here
    return Status::error(StatusCode::arch_mismatch,
                         std::string("kernel ") + k.name + " has no image this " + sm + " GPU can run (" +
                             cudaGetErrorName(err) + "); rebuild tessel with CMAKE_CUDA_ARCHITECTURES including " +
                             std::to_string(h.cc));
  }
  if (cacheable) {
    std::lock_guard<std::mutex> lock(mu);
    seen[row][h.device] = 1;
  }
  return Status::success();
}

namespace {

// What every entry point does first: the argument rules, then (unless there is nothing to
// compute: *k stays null) the kernel gemm() would run and its image for this GPU.
Status kernel_for_call(GemmArguments const& g, GemmKernelInfo const** k) {
  *k = nullptr;
  if (Status s = gemm_validate(g); !s) return s;
  if (gemm_is_noop(g)) return Status::success();
  Status why;
  GemmKernelInfo const* picked = select_gemm_kernel(g, &why);
  if (picked == nullptr) return why;
  if (Status s = gemm_kernel_runs_here(*picked, g); !s) return s;
  *k = picked;
  return Status::success();
}

}  // namespace

Status can_implement(GemmArguments const& g) {
  GemmKernelInfo const* k = nullptr;
  return kernel_for_call(g, &k);
}

Status gemm_workspace_size(GemmArguments const& g, std::size_t* bytes) {
  if (bytes == nullptr) return Status::error(StatusCode::invalid_argument, "bytes: null");
  *bytes = 0;
  GemmKernelInfo const* k = nullptr;
  if (Status s = kernel_for_call(g, &k); !s || k == nullptr) return s;
  if (!gemm_reads_ab(g) || k->workspace == nullptr) return Status::success();  // D = beta * C, or a kernel that takes none
  return k->workspace(g, bytes);
}

Status gemm(GemmArguments const& g, cudaStream_t stream) {
  GemmKernelInfo const* k = nullptr;
  if (Status s = kernel_for_call(g, &k); !s || k == nullptr) return s;
  if (!gemm_reads_ab(g)) {  // K = 0 or alpha = 0: D = beta * C, A and B unread
    cudaError_t const err = kernel::detail::launch_gemm_scale(g, stream);
    if (err != cudaSuccess)
      return Status::error(StatusCode::cuda_error,
                           std::string("launch of D = beta * C: ") + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
    return Status::success();
  }
  return k->launch(g, stream);
}

}  // namespace tessel
