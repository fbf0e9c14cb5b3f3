// src/gemm/sm80_gemm.cpp -- the host side of the sm_80 tensor-core GEMMs: registry entries, the
// heuristic, and the adapter from GemmArguments to the kernels' canonical problem
// (tessel/gemm/device/sm80_gemm_kernels.hpp says what it does).
#include "gemm_canonical.hpp"
#include "sm80_instances.hpp"

#include <tessel/gemm/device/gemm_validate.hpp>
#include <tessel/gemm/device/sm80_gemm_kernels.hpp>
#include <tessel/schedule/raster.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <string>

namespace tessel {

namespace {

using kernel::Sm80GemmParams;
using kernel::detail::Sm80Instance;

// ---- the entries ---------------------------------------------------------------------------------

struct Sm80Family {
  DType ab;                     // input dtype the entry runs
  Sm80Instance (*instance)();  // its compiled configuration
};

// clang-format off
constexpr std::array<Sm80Family, 12> kFamilies = {{
    {DType::bf16, kernel::detail::sm80_instance_bf16_128x256x32},
    {DType::bf16, kernel::detail::sm80_instance_bf16_128x256x64},
    {DType::bf16, kernel::detail::sm80_instance_bf16_256x128x32},
    {DType::bf16, kernel::detail::sm80_instance_bf16_128x128x32},
    {DType::bf16, kernel::detail::sm80_instance_bf16_64x64x64},
    {DType::f16,  kernel::detail::sm80_instance_f16_128x256x32},
    {DType::f16,  kernel::detail::sm80_instance_f16_256x128x32},
    {DType::f16,  kernel::detail::sm80_instance_f16_128x128x32},
    {DType::f16,  kernel::detail::sm80_instance_f16_64x64x64},
    {DType::tf32, kernel::detail::sm80_instance_tf32_128x128x32},
    {DType::tf32, kernel::detail::sm80_instance_tf32_128x256x32},
    {DType::tf32, kernel::detail::sm80_instance_tf32_64x64x32},
}};
// clang-format on

using detail::aligned16;
using detail::cuda_failure;
using detail::readable_in_place;
using detail::round_up;
using detail::workspace_pool;

// ---- the heuristic ---------------------------------------------------------------------------------

int sm_count_here() {
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return 132;
  }
  return sms;
}

std::int64_t tile_count(std::int64_t m, std::int64_t n, std::int64_t batch, Sm80Instance const& t) {
  return ((m + t.tile_m - 1) / t.tile_m) * ((n + t.tile_n - 1) / t.tile_n) * batch;
}

// Serial split-K slices: only when one slice per tile leaves most SMs idle and K is long enough
// that each slice keeps at least 8 k-tiles.
int choose_splits(std::int64_t tiles, std::int64_t k, Sm80Instance const& t, int sms) {
  std::int64_t const k_tiles = (k + t.tile_k - 1) / t.tile_k;
  if (tiles * 2 > sms || k_tiles < 16) return 1;
  std::int64_t const want = (sms + tiles - 1) / tiles;
  return int(std::max<std::int64_t>(1, std::min<std::int64_t>({want, k_tiles / 8, 16})));
}

// ---- running one entry -------------------------------------------------------------------------------

Status family_check(std::size_t i, GemmArguments const& g) {
  Sm80Family const& f = kFamilies[i];
  if (g.a_type != f.ab)
    return Status::error(StatusCode::not_supported, std::string("a_type: this sm80 kernel runs ") + to_string(f.ab) +
                                                        " inputs, not " + to_string(g.a_type));
  Sm80Instance const t = f.instance();
  if (g.m > INT_MAX || g.n > INT_MAX || g.batch_count > INT_MAX)
    return Status::error(StatusCode::not_supported, "m, n, batch_count: the sm80 kernels take extents up to 2^31 - 1");
  std::int64_t const ctas = tile_count(g.m, g.n, g.batch_count, t);
  if (ctas > INT_MAX)
    return Status::error(StatusCode::not_supported, "m, n, batch_count: " + std::to_string(ctas) + " tiles of " +
                                                        std::to_string(t.tile_m) + "x" + std::to_string(t.tile_n) +
                                                        " exceed the 2^31 - 1 CTAs of one launch");
  if ((g.k + t.tile_k - 1) / t.tile_k > INT_MAX)
    return Status::error(StatusCode::not_supported, "k: more than 2^31 - 1 k-tiles");
  return Status::success();
}

Status family_run(std::size_t i, GemmArguments const& g, Sm80RunOptions const& o, cudaStream_t stream) {
  Sm80Family const& f = kFamilies[i];
  Sm80Instance const t = f.instance();
  std::size_t const in_bytes = std::size_t(t.element_bytes);
  std::size_t const out_bytes = size_of(g.c_type);
  detail::CanonicalGemm const c = detail::canonical_gemm(g);
  std::int64_t const batch = g.batch_count;

  // What must be staged, and the workspace: staged A, staged B, split-K partial sums, flags.
  std::int64_t const kp = round_up(g.k, std::int64_t(16 / in_bytes));
  bool const stage_a = o.force_staging || !readable_in_place(c.a, batch, in_bytes);
  bool const stage_b = o.force_staging || !readable_in_place(c.b, batch, in_bytes);
  std::int64_t const tiles_m = (c.m + t.tile_m - 1) / t.tile_m, tiles_n = (c.n + t.tile_n - 1) / t.tile_n;
  std::int64_t const ctas = tiles_m * tiles_n * batch;
  int const splits = o.splits > 0 ? std::min<int>(o.splits, 65535) : choose_splits(ctas, g.k, t, sm_count_here());
  std::size_t const bytes_a = stage_a ? std::size_t(batch * c.m * kp) * in_bytes : 0;
  std::size_t const bytes_b = stage_b ? std::size_t(batch * c.n * kp) * in_bytes : 0;
  std::size_t const bytes_ws = splits > 1 ? std::size_t(ctas) * std::size_t(t.tile_m * t.tile_n) * sizeof(float) : 0;
  std::size_t const bytes_flags = splits > 1 ? std::size_t(ctas) * sizeof(int) : 0;
  auto const at = [](std::size_t x) { return (x + 255) / 256 * 256; };
  std::size_t const total = at(bytes_a) + at(bytes_b) + at(bytes_ws) + at(bytes_flags);

  char* ws = nullptr;
  cudaMemPool_t pool = nullptr;
  if (total > 0) {
    if (Status s = workspace_pool(&pool); !s) return s;
    if (cudaError_t err = cudaMallocFromPoolAsync(reinterpret_cast<void**>(&ws), total, pool, stream); err != cudaSuccess)
      return cuda_failure(("workspace of " + std::to_string(total >> 20) + " MiB for the sm80 GEMM").c_str(), err);
  }
  char* const ws_a = ws;
  char* const ws_b = ws_a + at(bytes_a);
  float* const ws_k = reinterpret_cast<float*>(ws_b + at(bytes_b));
  int* const flags = reinterpret_cast<int*>(reinterpret_cast<char*>(ws_k) + at(bytes_ws));

  Status result = Status::success();
  auto const fail = [&](char const* what, cudaError_t err) {
    if (result.ok()) result = cuda_failure(what, err);
  };

  Sm80GemmParams p;
  p.m = c.m, p.n = c.n, p.k = g.k, p.batch = int(batch);
  p.a = c.a.ptr, p.lda = c.a.row_stride, p.batch_stride_a = c.a.batch_stride;
  p.b = c.b.ptr, p.ldb = c.b.row_stride, p.batch_stride_b = c.b.batch_stride;
  if (stage_a) {
    if (cudaError_t err = detail::stage_operand(c.a, g.k, kp, batch, t.element_bytes, ws_a, stream); err != cudaSuccess)
      fail("staging A", err);
    p.a = ws_a, p.lda = kp, p.batch_stride_a = c.m * kp;
  }
  if (stage_b) {
    if (cudaError_t err = detail::stage_operand(c.b, g.k, kp, batch, t.element_bytes, ws_b, stream); err != cudaSuccess)
      fail("staging B", err);
    p.b = ws_b, p.ldb = kp, p.batch_stride_b = c.n * kp;
  }
  p.c = gemm_reads_c(g) ? g.c : nullptr, p.ldc = g.ldc, p.batch_stride_c = g.batch_stride_c;
  p.d = g.d, p.ldd = g.ldd, p.batch_stride_d = g.batch_stride_d;
  p.alpha = g.alpha, p.beta = gemm_reads_c(g) ? g.beta : 0.0f;
  p.out_f32 = g.c_type == DType::f32;
  p.c_vec = p.c != nullptr && aligned16(g.c, g.ldc, g.batch_stride_c, batch, out_bytes);
  p.d_vec = aligned16(g.d, g.ldd, g.batch_stride_d, batch, out_bytes);
  p.tiles_m = int(tiles_m), p.tiles_n = int(tiles_n);
  p.raster_order = choose_raster_order(tiles_m, tiles_n);
  p.raster_group = 8;
  p.splits = splits;
  if (splits > 1) {
    p.workspace = ws_k, p.flags = flags;
    if (cudaError_t err = cudaMemsetAsync(flags, 0, bytes_flags, stream); err != cudaSuccess) fail("zeroing split-K flags", err);
  }
  if (result.ok()) {
    if (cudaError_t err = t.launch(p, stream); err != cudaSuccess) fail("launch of the sm80 GEMM kernel", err);
  }
  if (ws != nullptr) {
    if (cudaError_t err = cudaFreeAsync(ws, stream); err != cudaSuccess) fail("cudaFreeAsync (sm80 GEMM workspace)", err);
  }
  return result;
}

cudaError_t family_attributes(std::size_t i, cudaFuncAttributes* attr) { return kFamilies[i].instance().attributes(attr); }

template <std::size_t I>
Status check_entry(GemmArguments const& g) {
  return family_check(I, g);
}
template <std::size_t I>
Status launch_entry(GemmArguments const& g, cudaStream_t stream) {
  return family_run(I, g, Sm80RunOptions{}, stream);
}
template <std::size_t I>
cudaError_t attributes_entry(GemmArguments const&, cudaFuncAttributes* attr) {
  return family_attributes(I, attr);
}

constexpr char kAlign[] =
    "none; operands read in place when K-major with 16-byte aligned rows (pointer, ld, batch stride), else "
    "staged once into such a copy; D/C vector stores where their rows are 16-byte aligned";
constexpr char kLayouts[] = "A, B, C/D each row- or column-major; batched (any strides, 0 broadcasts); any leading dimension";
constexpr char kBf16[] = "bf16 -> bf16|fp32";
constexpr char kF16[] = "fp16 -> fp16|fp32";
constexpr char kTf32[] = "tf32 -> fp32 (fp32 inputs rounded to tf32, fp32 accumulation)";
constexpr char kSummary[] =
    "tensor cores, sm_80 path: mma.sync + ldmatrix + cp.async multistage pipeline, swizzled smem, serial split-K";

#define TESSEL_SM80_ENTRY(I, NAME, TILE, DT, SELECT)                                                              \
  GemmKernelInfo {                                                                                                 \
    NAME, kSummary, TILE, DT, kLayouts, kAlign, SELECT, 80, check_entry<I>, launch_entry<I>, attributes_entry<I> \
  }

// clang-format off
std::array<GemmKernelInfo, 12> const kEntries = {{
    TESSEL_SM80_ENTRY(0,  "sm80_bf16_128x256x32", "128x256x32, 8 warps (2x4), 4 stages, 96 KiB smem", kBf16, "bf16: by name (slower than 128x128x32 on the H200)"),
    TESSEL_SM80_ENTRY(1,  "sm80_bf16_128x256x64", "128x256x64, 8 warps (2x4), 3 stages, 144 KiB smem", kBf16, "bf16: by name (half the k-tiles and barriers of 128x256x32; spills 16 bytes)"),
    TESSEL_SM80_ENTRY(2,  "sm80_bf16_256x128x32", "256x128x32, 8 warps (4x2), 4 stages, 96 KiB smem", kBf16, "bf16: by name"),
    TESSEL_SM80_ENTRY(3,  "sm80_bf16_128x128x32", "128x128x32, 4 warps (2x2), 4 stages, 64 KiB smem", kBf16, "bf16: default whenever the 128x128 tiles fill every SM, and for long K (with split-K)"),
    TESSEL_SM80_ENTRY(4,  "sm80_bf16_64x64x64",   "64x64x64, 4 warps (2x2), 3 stages, 48 KiB smem",   kBf16, "bf16: small problems with short K"),
    TESSEL_SM80_ENTRY(5,  "sm80_fp16_128x256x32", "128x256x32, 8 warps (2x4), 4 stages, 96 KiB smem", kF16,  "fp16: by name"),
    TESSEL_SM80_ENTRY(6,  "sm80_fp16_256x128x32", "256x128x32, 8 warps (4x2), 4 stages, 96 KiB smem", kF16,  "fp16: by name"),
    TESSEL_SM80_ENTRY(7,  "sm80_fp16_128x128x32", "128x128x32, 4 warps (2x2), 4 stages, 64 KiB smem", kF16,  "fp16: as bf16"),
    TESSEL_SM80_ENTRY(8,  "sm80_fp16_64x64x64",   "64x64x64, 4 warps (2x2), 3 stages, 48 KiB smem",   kF16,  "fp16: as bf16"),
    TESSEL_SM80_ENTRY(9,  "sm80_tf32_128x128x32", "128x128x32, 4 warps (2x2), 3 stages, 96 KiB smem", kTf32, "tf32: when the 128x128 tiles fill every SM at least once"),
    TESSEL_SM80_ENTRY(10, "sm80_tf32_128x256x32", "128x256x32, 8 warps (2x4), 3 stages, 144 KiB smem", kTf32, "tf32: by name only (benchmark alternative)"),
    TESSEL_SM80_ENTRY(11, "sm80_tf32_64x64x32",   "64x64x32, 4 warps (2x2), 3 stages, 48 KiB smem",   kTf32, "tf32: small problems; with split-K when K is long"),
}};
// clang-format on
#undef TESSEL_SM80_ENTRY

std::size_t entry_index(GemmKernelInfo const& k) { return static_cast<std::size_t>(&k - kEntries.data()); }

}  // namespace

std::span<GemmKernelInfo const> sm80_gemm_kernels() { return kEntries; }

GemmKernelInfo const* sm80_select_gemm_kernel(GemmArguments const& g, int sms) {
  char const* dtype = g.a_type == DType::bf16 ? "bf16" : g.a_type == DType::f16 ? "fp16" : g.a_type == DType::tf32 ? "tf32" : nullptr;
  if (dtype == nullptr) return nullptr;
  auto const pick = [&](char const* tile) -> GemmKernelInfo const* {
    std::string const name = std::string("sm80_") + dtype + "_" + tile;
    for (GemmKernelInfo const& k : kEntries)
      if (name == k.name) return &k;
    return nullptr;
  };
  bool const col_d = g.c_order == MatrixOrder::col_major;
  std::int64_t const m = col_d ? g.n : g.m, n = col_d ? g.m : g.n;  // of the row-major D computed
  auto const tiles = [&](std::int64_t tm, std::int64_t tn) { return ((m + tm - 1) / tm) * ((n + tn - 1) / tn) * g.batch_count; };
  // 128x128 whenever its tiles fill the SMs, and for long K (split-K then fills them); 64x64 for
  // small problems with short K. On the H200 (bench/results/sm80-h200-20261121.json) 128x128x32
  // (4 warps, 2 CTAs per SM) beat 128x256x64 / 256x128x32 / 128x256x32 at 4096^3 (414 / 395 / 354 /
  // 312-349 TFLOP/s), and its smaller tiles quantise better on odd shapes (4097 rows: 33 tile rows
  // of 128 instead of 17 of 256, the 17th nearly empty). The larger tiles run by name.
  if (g.a_type == DType::tf32) return pick(tiles(128, 128) >= sms || g.k >= 4096 ? "128x128x32" : "64x64x32");
  if (tiles(128, 128) >= sms || g.k >= 4096) return pick("128x128x32");
  return pick("64x64x64");
}

Status sm80_gemm_run(GemmKernelInfo const& k, GemmArguments const& g, Sm80RunOptions const& o, cudaStream_t stream) {
  std::size_t const i = entry_index(k);
  if (i >= kEntries.size())
    return Status::error(StatusCode::invalid_argument, std::string("kernel: ") + k.name + " is not an sm80 entry");
  if (!gemm_reads_ab(g) || gemm_is_noop(g))
    return Status::error(StatusCode::invalid_argument,
                         "m, n, k, alpha: the sm80 kernels need M, N, K > 0 and alpha != 0 (tessel::gemm handles the rest)");
  if (Status s = family_check(i, g); !s) return s;
  return family_run(i, g, o, stream);
}

}  // namespace tessel
