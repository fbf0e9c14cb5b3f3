// src/gemm/sm80_gemm.cpp -- the host side of the sm_80 tensor-core GEMMs: registry entries, the
// heuristic, and the adapter from GemmArguments to the kernels' canonical problem
// (tessel/gemm/device/sm80_gemm_kernels.hpp says what it does).
#include "gemm_canonical.hpp"
#include "sm80_instances.hpp"
#include "sm80_skinny_instances.hpp"

#include <tessel/gemm/device/gemm_validate.hpp>
#include <tessel/gemm/device/sm80_gemm_kernels.hpp>
#include <tessel/gemm/device/sm80_skinny_policy.hpp>
#include <tessel/gemm/epilogue/epilogue_fusion.hpp>
#include <tessel/schedule/raster.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

namespace tessel {

namespace {

using kernel::Sm80GemmParams;
using kernel::Sm80SkinnyParams;
using kernel::detail::Sm80Instance;
using kernel::detail::Sm80SkinnyInstance;

// ---- the entries ---------------------------------------------------------------------------------

// One registry entry: a multistage configuration (instance) or a skinny family (skinny: its
// small-side tile picked per problem, docs/skinny_gemm.md). The entry's tile text is read from
// the compiled configuration (tile_text), not written here.
struct Sm80Entry {
  char const* name;
  DType ab;  // the input dtype it runs
  Sm80Instance (*instance)();               // multistage, else nullptr
  Sm80SkinnyInstance (*skinny)(int tile_m);  // skinny, else nullptr
  char const* selection;                    // when the heuristic picks it
};

// clang-format off
constexpr std::array<Sm80Entry, 9> kRegistry = {{
    {"sm80_bf16_128x256x64", DType::bf16, kernel::detail::sm80_instance_bf16_128x256x64, nullptr, "bf16: by name (the fastest on the H100/H200; spills 16 bytes)"},
    {"sm80_bf16_128x128x32", DType::bf16, kernel::detail::sm80_instance_bf16_128x128x32, nullptr, "bf16: default whenever the 128x128 tiles fill every SM, and for long K (with split-K)"},
    {"sm80_bf16_64x64x64",   DType::bf16, kernel::detail::sm80_instance_bf16_64x64x64,   nullptr, "bf16: small problems with short K"},
    {"sm80_fp16_128x128x32", DType::f16,  kernel::detail::sm80_instance_f16_128x128x32,  nullptr, "fp16: as bf16"},
    {"sm80_fp16_64x64x64",   DType::f16,  kernel::detail::sm80_instance_f16_64x64x64,    nullptr, "fp16: as bf16"},
    {"sm80_tf32_128x128x32", DType::tf32, kernel::detail::sm80_instance_tf32_128x128x32, nullptr, "tf32: when the 128x128 tiles fill every SM at least once"},
    {"sm80_tf32_64x64x32",   DType::tf32, kernel::detail::sm80_instance_tf32_64x64x32,   nullptr, "tf32: small problems; with split-K when K is long"},
    {"sm80_bf16_skinny",     DType::bf16, nullptr, kernel::detail::sm80_skinny_instance_bf16, "bf16: when min(M, N) <= 64 and the long operand (all batches) is >= 8 MiB"},
    {"sm80_fp16_skinny",     DType::f16,  nullptr, kernel::detail::sm80_skinny_instance_f16,  "fp16: as bf16"},
}};
// clang-format on

// The skinny kernels' small-side tiles (sm80_skinny_shape picks one per problem).
constexpr std::array<int, 3> kSkinnyTiles = {16, 32, 64};

using detail::aligned16;
using detail::CallWorkspace;
using detail::cuda_failure;
using detail::prepare_operands;
using detail::release_workspace;
using Canonical = detail::CanonicalGemm;

detail::Staging staging_of(Sm80RunOptions const& o) {
  return o.force_staging ? detail::Staging::always : detail::Staging::if_unaligned;
}

// ---- the heuristic ---------------------------------------------------------------------------------

int sm_count_here() {
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return 132;
  }
  return sms;
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

// What every sm80 entry requires: its input dtype, extents below 2^31, output tiles (m tiles x n
// tiles x batch) that fit one launch's grid, and fewer than 2^31 k-tiles.
Status sm80_limits(GemmArguments const& g, DType ab, std::int64_t tile_m, std::int64_t tile_n, std::int64_t tile_k,
                   std::int64_t tiles_m, std::int64_t tiles_n) {
  if (g.a_type != ab)
    return Status::error(StatusCode::not_supported, std::string("a_type: this sm80 kernel runs ") + to_string(ab) +
                                                        " inputs, not " + to_string(g.a_type));
  if (g.m > INT_MAX || g.n > INT_MAX || g.batch_count > INT_MAX)
    return Status::error(StatusCode::not_supported, "m, n, batch_count: the sm80 kernels take extents up to 2^31 - 1");
  std::int64_t const tiles = tiles_m * tiles_n * g.batch_count;
  if (tiles > INT_MAX)
    return Status::error(StatusCode::not_supported, "m, n, batch_count: " + std::to_string(tiles) + " tiles of " +
                                                        std::to_string(tile_m) + "x" + std::to_string(tile_n) +
                                                        " exceed the 2^31 - 1 CTAs of one launch");
  if ((g.k + tile_k - 1) / tile_k > INT_MAX)
    return Status::error(StatusCode::not_supported, "k: more than 2^31 - 1 k-tiles");
  return Status::success();
}

Status family_check(std::size_t i, GemmArguments const& g) {
  Sm80Entry const& f = kRegistry[i];
  Sm80Instance const t = f.instance();
  return sm80_limits(g, f.ab, t.tile_m, t.tile_n, t.tile_k, (g.m + t.tile_m - 1) / t.tile_m, (g.n + t.tile_n - 1) / t.tile_n);
}

Status family_run(std::size_t i, GemmArguments const& g, Sm80RunOptions const& o, std::size_t* query, cudaStream_t stream) {
  Sm80Instance const t = kRegistry[i].instance();
  std::size_t const out_bytes = size_of(g.c_type);
  Canonical const c = detail::canonical_gemm(g);
  std::int64_t const batch = g.batch_count;

  std::int64_t const tiles_m = (c.m + t.tile_m - 1) / t.tile_m, tiles_n = (c.n + t.tile_n - 1) / t.tile_n;
  std::int64_t const ctas = tiles_m * tiles_n * batch;
  int const splits = o.splits > 0 ? std::min<int>(o.splits, 65535) : choose_splits(ctas, g.k, t, sm_count_here());
  // Serial split-K: a partial tile and a flag per output tile.
  std::size_t const partials = splits > 1 ? std::size_t(ctas) * std::size_t(t.tile_m * t.tile_n) : 0;
  CallWorkspace w;
  if (Status s = prepare_operands(c, g.k, batch, t.element_bytes, staging_of(o), staging_of(o), partials, splits > 1 ? ctas : 0,
                                  detail::workspace_source(g, query), stream, &w);
      !s || query != nullptr)
    return s;

  Sm80GemmParams p;
  p.m = c.m, p.n = c.n, p.k = g.k, p.batch = int(batch);
  p.a = w.a.ptr, p.lda = w.a.ld, p.batch_stride_a = w.a.batch_stride;
  p.b = w.b.ptr, p.ldb = w.b.ld, p.batch_stride_b = w.b.batch_stride;
  p.c = gemm_reads_c(g) ? g.c : nullptr, p.ldc = g.ldc, p.batch_stride_c = g.batch_stride_c;
  p.d = g.d, p.ldd = g.ldd, p.batch_stride_d = g.batch_stride_d;
  p.alpha = g.alpha, p.beta = gemm_reads_c(g) ? g.beta : 0.0f;
  p.out_f32 = g.c_type == DType::f32;
  p.c_vec = p.c != nullptr && aligned16(g.c, g.ldc, g.batch_stride_c, batch, out_bytes);
  p.d_vec = aligned16(g.d, g.ldd, g.batch_stride_d, batch, out_bytes);
  p.tiles_m = int(tiles_m), p.tiles_n = int(tiles_n);
  p.raster_order = choose_raster_order(tiles_m, tiles_n);
  // Bands of 16 tile rows for the 128x256 tiles (8192^3 bf16 on the H100: 0.646x cuBLAS against
  // 0.606 with bands of 8), 8 for the rest.
  p.raster_group = t.tile_m * t.tile_n >= 128 * 256 ? 16 : 8;
  p.splits = splits;
  p.workspace = w.partials, p.flags = w.flags;
  p.fusion = epilogue::epilogue_fusion_of(g);
  Status result = Status::success();
  if (cudaError_t err = t.launch(p, stream); err != cudaSuccess) result = cuda_failure("launch of the sm80 GEMM kernel", err);
  return release_workspace(w, std::move(result), stream);
}

// ---- the skinny entries ------------------------------------------------------------------------------

Sm80SkinnyShape skinny_shape(GemmArguments const& g) {
  Canonical const c = detail::canonical_gemm(g);
  return sm80_skinny_shape(c.m, c.n);
}

Status skinny_check(std::size_t i, GemmArguments const& g) {
  Sm80Entry const& f = kRegistry[i];
  Sm80SkinnyShape const sh = skinny_shape(g);
  Sm80SkinnyInstance const t = f.skinny(sh.tile_m);
  return sm80_limits(g, f.ab, t.tile_m, t.tile_n, t.tile_k, (sh.small + t.tile_m - 1) / t.tile_m,
                     (sh.large + t.tile_n - 1) / t.tile_n);
}

// The problem on the kernel's axes: the small side is its M (file comment of
// sm80_skinny_gemm_params.hpp); D and C keep their memory, seen at swapped strides when the
// canonical N is the small side.
Status skinny_run(std::size_t i, GemmArguments const& g, Sm80RunOptions const& o, std::size_t* query, cudaStream_t stream) {
  Canonical const c = detail::canonical_gemm(g);
  Sm80SkinnyShape const sh = sm80_skinny_shape(c.m, c.n);
  Sm80SkinnyInstance const t = kRegistry[i].skinny(sh.tile_m);
  Canonical const kc = sh.swap ? Canonical{c.n, c.m, c.b, c.a} : c;
  std::int64_t const batch = g.batch_count;

  std::int64_t const tiles_m = (kc.m + t.tile_m - 1) / t.tile_m, tiles_n = (kc.n + t.tile_n - 1) / t.tile_n;
  std::int64_t const tiles = tiles_m * tiles_n * batch;
  std::int64_t const k_tiles = (g.k + t.tile_k - 1) / t.tile_k;
  int const max_splits = int(std::min<std::int64_t>(4096, INT_MAX / tiles));
  int splits = std::min(o.splits, max_splits);
  if (o.splits <= 0) {
    int per_sm = 0;
    if (t.ctas_per_sm(&per_sm) != cudaSuccess || per_sm < 1) {
      (void)cudaGetLastError();
      per_sm = 1;
    }
    splits = std::min(sm80_skinny_splits(tiles, k_tiles, std::int64_t(sm_count_here()) * per_sm, t.stages), max_splits);
  }
  // Parallel split-K: a partial tile per slice and a counter per output tile.
  std::size_t const partials = splits > 1 ? std::size_t(tiles) * std::size_t(splits) * std::size_t(t.tile_m * t.tile_n) : 0;
  CallWorkspace w;
  if (Status s = prepare_operands(kc, g.k, batch, t.element_bytes, staging_of(o), staging_of(o), partials, splits > 1 ? tiles : 0,
                                  detail::workspace_source(g, query), stream, &w);
      !s || query != nullptr)
    return s;

  // Canonical D (c.m x c.n) is row-major with ld ldd (ldc): element (i, j) at i * ldd + j.
  std::int64_t const along_m_d = sh.swap ? 1 : g.ldd, along_n_d = sh.swap ? g.ldd : 1;
  std::int64_t const along_m_c = sh.swap ? 1 : g.ldc, along_n_c = sh.swap ? g.ldc : 1;
  Sm80SkinnyParams p;
  p.m = kc.m, p.n = kc.n, p.k = g.k, p.batch = int(batch);
  p.a = w.a.ptr, p.lda = w.a.ld, p.batch_stride_a = w.a.batch_stride;
  p.b = w.b.ptr, p.ldb = w.b.ld, p.batch_stride_b = w.b.batch_stride;
  p.c = gemm_reads_c(g) ? g.c : nullptr, p.c_stride_m = along_m_c, p.c_stride_n = along_n_c;
  p.batch_stride_c = g.batch_stride_c;
  p.d = g.d, p.d_stride_m = along_m_d, p.d_stride_n = along_n_d, p.batch_stride_d = g.batch_stride_d;
  p.alpha = g.alpha, p.beta = gemm_reads_c(g) ? g.beta : 0.0f;
  p.out_f32 = g.c_type == DType::f32;
  p.tiles_m = int(tiles_m), p.tiles_n = int(tiles_n);
  p.splits = splits;
  p.workspace = w.partials, p.counters = w.flags;
  p.fusion = epilogue::epilogue_fusion_of(g, sh.swap);
  Status result = Status::success();
  if (cudaError_t err = t.launch(p, stream); err != cudaSuccess) result = cuda_failure("launch of the sm80 skinny GEMM kernel", err);
  return release_workspace(w, std::move(result), stream);
}

// ---- the registry entries ----------------------------------------------------------------------------

Status entry_check(std::size_t i, GemmArguments const& g) {
  return kRegistry[i].instance != nullptr ? family_check(i, g) : skinny_check(i, g);
}
Status entry_run(std::size_t i, GemmArguments const& g, Sm80RunOptions const& o, std::size_t* query, cudaStream_t stream) {
  if (gemm_is_fused(g) && g.c_type == DType::f32)  // the kernels fuse a 16-bit D (epilogue_fusion.hpp)
    return detail::run_fused_fp32(g, query, stream, [&](GemmArguments const& k, std::size_t* q, cudaStream_t s) {
      return entry_run(i, k, o, q, s);
    });
  return kRegistry[i].instance != nullptr ? family_run(i, g, o, query, stream) : skinny_run(i, g, o, query, stream);
}

template <std::size_t I>
Status check_entry(GemmArguments const& g) {
  return entry_check(I, g);
}
template <std::size_t I>
Status launch_entry(GemmArguments const& g, cudaStream_t stream) {
  return entry_run(I, g, Sm80RunOptions{}, nullptr, stream);
}
template <std::size_t I>
Status workspace_entry(GemmArguments const& g, std::size_t* bytes) {
  return entry_run(I, g, Sm80RunOptions{}, bytes, nullptr);
}
template <std::size_t I>
cudaError_t attributes_entry(GemmArguments const& g, cudaFuncAttributes* attr) {
  if constexpr (kRegistry[I].instance != nullptr) {
    return kRegistry[I].instance().attributes(attr);
  } else {
    return kRegistry[I].skinny(skinny_shape(g).tile_m).attributes(attr);
  }
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

constexpr char kSkinnySummary[] =
    "tensor cores, sm_80 path, for skinny problems (one of M, N small; memory-bound): the small operand on the MMA's M, "
    "each CTA streams a 128-column strip of the long operand through a deep 16-byte cp.async pipeline (two CTAs, "
    "~150 KiB in flight per SM), mma.sync m16n8k16; K split across CTAs to fill every SM, the slices summed in a fixed "
    "order by the last CTA to arrive (deterministic)";
constexpr char kSkinnyAlign[] =
    "none; operands read in place when K-major with 16-byte aligned rows (pointer, ld, batch stride), else "
    "staged once into such a copy; D/C element stores in D's contiguous direction";

int kib(int bytes) { return (bytes + 1023) / 1024; }

// An entry's tile text, read from its compiled configuration: "128x256x64, 8 warps (2x4), 3 stages,
// 144 KiB smem"; a skinny family lists its three small-side tiles ("16|32|64 x 128 x 64, ...").
std::string tile_text(Sm80Entry const& e) {
  if (e.instance != nullptr) {
    Sm80Instance const t = e.instance();
    return std::to_string(t.tile_m) + "x" + std::to_string(t.tile_n) + "x" + std::to_string(t.tile_k) + ", " +
           std::to_string(t.warps_m * t.warps_n) + " warps (" + std::to_string(t.warps_m) + "x" + std::to_string(t.warps_n) +
           "), " + std::to_string(t.stages) + " stages, " + std::to_string(kib(t.smem_bytes)) + " KiB smem";
  }
  std::string tiles, stages, smem;
  Sm80SkinnyInstance t{};
  for (int tile_m : kSkinnyTiles) {
    t = e.skinny(tile_m);
    if (!tiles.empty()) tiles += '|', stages += '|', smem += '|';
    tiles += std::to_string(t.tile_m);
    stages += std::to_string(t.stages);
    smem += std::to_string(kib(t.smem_bytes));
  }
  int const warps = t.threads / 32;
  return "small side " + tiles + " (the smallest covering min(M, N); more rows take several tiles) x " +
         std::to_string(t.tile_n) + " x " + std::to_string(t.tile_k) + ", " + std::to_string(warps) + " warps (1x" +
         std::to_string(warps) + "), " + stages + " stages, " + smem + " KiB smem";
}

template <std::size_t... I>
std::array<GemmKernelInfo, sizeof...(I)> make_entries(std::index_sequence<I...>) {
  static std::array<std::string, sizeof...(I)> const tiles{tile_text(kRegistry[I])...};
  auto const info = [](std::size_t i, auto check, auto launch, auto attributes, auto workspace) {
    bool const skinny = kRegistry[i].instance == nullptr;
    DType const ab = kRegistry[i].ab;
    char const* const dtypes = ab == DType::bf16 ? kBf16 : ab == DType::f16 ? kF16 : kTf32;
    return GemmKernelInfo{kRegistry[i].name, skinny ? kSkinnySummary : kSummary, tiles[i].c_str(), dtypes, kLayouts,
                          skinny ? kSkinnyAlign : kAlign, kRegistry[i].selection, 80, check, launch, attributes, workspace};
  };
  return {info(I, check_entry<I>, launch_entry<I>, attributes_entry<I>, workspace_entry<I>)...};
}

std::array<GemmKernelInfo, kRegistry.size()> const& entries() {
  static std::array<GemmKernelInfo, kRegistry.size()> const e = make_entries(std::make_index_sequence<kRegistry.size()>{});
  return e;
}

// Entry k's index in entries(), or kRegistry.size() when k is not one of them: a copy of an entry
// (gemm_kernels() holds copies of every family's entries) is found by its name.
std::size_t entry_index(GemmKernelInfo const& k) {
  std::less<GemmKernelInfo const*> const before;
  GemmKernelInfo const* const first = entries().data();
  if (!before(&k, first) && before(&k, first + kRegistry.size())) return static_cast<std::size_t>(&k - first);
  for (std::size_t i = 0; i < kRegistry.size(); ++i)
    if (k.name != nullptr && std::string_view(kRegistry[i].name) == k.name) return i;
  return kRegistry.size();
}

}  // namespace

std::span<GemmKernelInfo const> sm80_gemm_kernels() { return entries(); }

GemmKernelInfo const* sm80_select_gemm_kernel(GemmArguments const& g, int sms) {
  char const* dtype = g.a_type == DType::bf16 ? "bf16" : g.a_type == DType::f16 ? "fp16" : g.a_type == DType::tf32 ? "tf32" : nullptr;
  if (dtype == nullptr) return nullptr;
  auto const pick = [&](char const* tile) -> GemmKernelInfo const* {
    std::string const name = std::string("sm80_") + dtype + "_" + tile;
    for (GemmKernelInfo const& k : entries())
      if (name == k.name) return &k;
    return nullptr;
  };
  bool const col_d = g.c_order == MatrixOrder::col_major;
  std::int64_t const m = col_d ? g.n : g.m, n = col_d ? g.m : g.n;  // of the row-major D computed
  auto const tiles = [&](std::int64_t tm, std::int64_t tn) { return ((m + tm - 1) / tm) * ((n + tn - 1) / tn) * g.batch_count; };
  // 128x128 whenever its tiles fill the SMs, and for long K (split-K then fills them); 64x64 for
  // small problems with short K. On the H200 (bench/results/sm80-h200.json) 128x128x32
  // (4 warps, 2 CTAs per SM) beat 128x256x64 at 4096^3 (414 / 395 TFLOP/s), and its smaller tiles
  // quantise better on odd shapes (4097 rows: 33 tile rows of 128 instead of 17 of 256, the 17th
  // nearly empty). 128x256x64 runs by name.
  if (g.a_type == DType::tf32) return pick(tiles(128, 128) >= sms || g.k >= 4096 ? "128x128x32" : "64x64x32");
  // Skinny and memory-bound (min(M, N) <= 64, the long operand >= 8 MiB): the skinny kernel
  // streams the long operand at HBM bandwidth (docs/skinny_gemm.md).
  if (sm80_skinny_pays(m, n, g.k, g.batch_count, int(size_of(g.a_type)))) return pick("skinny");
  if (tiles(128, 128) >= sms || g.k >= 4096) return pick("128x128x32");
  return pick("64x64x64");
}

Status sm80_gemm_run(GemmKernelInfo const& k, GemmArguments const& g, Sm80RunOptions const& o, cudaStream_t stream) {
  std::size_t const i = entry_index(k);
  if (i >= kRegistry.size())
    return Status::error(StatusCode::invalid_argument, std::string("kernel: ") + k.name + " is not an sm80 entry");
  if (!gemm_reads_ab(g) || gemm_is_noop(g))
    return Status::error(StatusCode::invalid_argument,
                         "m, n, k, alpha: the sm80 kernels need M, N, K > 0 and alpha != 0 (tessel::gemm handles the rest)");
  if (Status s = entry_check(i, g); !s) return s;
  return entry_run(i, g, o, nullptr, stream);
}

}  // namespace tessel
