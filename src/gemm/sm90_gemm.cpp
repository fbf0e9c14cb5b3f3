// src/gemm/sm90_gemm.cpp -- the host side of the sm_90a GEMMs: TMA descriptors, registry entries,
// the heuristic, and the adapter from GemmArguments to the kernels' canonical problem
// (tessel/gemm/device/sm90_gemm_kernels.hpp says what it does).
#include "../runtime/tma_encode_entry.hpp"
#include "gemm_canonical.hpp"
#include "sm90_implicit_gemm.hpp"
#include "sm90_instances.hpp"

#include <tessel/gemm/device/gemm_validate.hpp>
#include <tessel/gemm/device/sm90_build_choice.hpp>
#include <tessel/gemm/device/sm90_gemm_kernels.hpp>
#include <tessel/gemm/device/sm90_operand_map.hpp>
#include <tessel/gemm/device/sm90_operand_read.hpp>
#include <tessel/gemm/epilogue/epilogue_fusion.hpp>
#include <tessel/gemm/kernel/sm90_gemm_cta.hpp>
#include <tessel/runtime/device.hpp>
#include <tessel/runtime/tma_descriptor.hpp>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace tessel {

namespace {

using detail::CallWorkspace;
using detail::CanonicalGemm;
using detail::cuda_failure;
using detail::OperandView;
using detail::prepare_operands;
using detail::release_workspace;
using detail::Staging;
using kernel::Sm90GemmParams;
using kernel::detail::Sm90Instance;

// How an entry's consumer warpgroups share the tiles (its tile text says so).
enum class Sm90Schedule { cooperative, ping_pong };
constexpr Sm90Schedule kCooperative = Sm90Schedule::cooperative, kPingPong = Sm90Schedule::ping_pong;

constexpr char kAlign[] =
    "none; operands read in place by TMA when K-major, or MN-major with bf16/fp16 inputs (wgmma transpose bits), "
    "with 16-byte aligned strides (pointer, ld, batch stride), else staged once into a K-major copy; a 16-bit D with C unread leaves through shared memory (TMA stores when its rows "
    "are 16-byte aligned, row copies when not); otherwise D/C from registers, two elements at a time where aligned";
constexpr char kLayouts[] = "A, B, C/D each row- or column-major; batched (any strides, 0 broadcasts); any leading dimension";
constexpr char kBf16[] = "bf16 -> bf16|fp32";
constexpr char kF16[] = "fp16 -> fp16|fp32";
constexpr char kE4m3[] = "e4m3|e5m2 x e4m3|e5m2 -> bf16|fp16|fp32 (a_scale, b_scale)";
constexpr char kE4m3Blocks[] =
    "e4m3|e5m2 x e4m3|e5m2 -> bf16|fp16|fp32 with block scales (scale_mode block: a_scales 1x128, b_scales 128x128; "
    "a_scale, b_scale)";
constexpr char kE4m3Only[] = "e4m3 x e4m3 -> bf16|fp16|fp32 (a_scale, b_scale)";
constexpr char kTf32[] = "tf32 (fp32 operands, rounded to tf32) -> fp32";
constexpr char kSummaryTf32[] =
    "tensor cores, sm_90a: as sm90_bf16_128x256x64_c2_s4 with wgmma m64n256k8 tf32 on 32-deep k-tiles of fp32 "
    "operands, which TMA rounds to tf32 as it loads them; D from registers";
constexpr char kSummaryFp8[] =
    "tensor cores, sm_90a: as the bf16 kernels with wgmma m64nNk32 e4m3; fp32 accumulators promoted from the tensor "
    "core after every 128-deep k-tile";
constexpr char kSummaryFp8Halves[] =
    "tensor cores, sm_90a: as the bf16 kernels with wgmma m64n128k32 fp8 on each 128-column half of the 256-wide "
    "tile; each 128-deep k-tile accumulates in a fresh register tile that is added to the fp32 accumulators once it "
    "retires (promotion)";
constexpr char kSummaryFp8Every2[] =
    "tensor cores, sm_90a: as sm90_e4m3_128x256x128_c2 with 4 stages and the fp32 promotion after every second "
    "k-tile (256 products); the epilogue's half-tile buffer takes the tile in rotating 64-column blocks";
constexpr char kSummaryFp8Blocks[] =
    "tensor cores, sm_90a: as sm90_e4m3_128x256x128_c2, with each 128-deep k-tile's partial scaled by its rows' A "
    "scales and its 128-column block's B scale as it joins the fp32 accumulators (DeepSeek-V3 block scaling); a "
    "column-major D is staged transposed and stored by TMA";
constexpr char kSummaryFp8Fast[] =
    "tensor cores, sm_90a: as the bf16 kernels with wgmma m64n256k32 e4m3, accumulating in the tensor core for the "
    "whole K (fast accumulation: fewer mantissa bits on long K)";
constexpr char kSummary[] =
    "tensor cores, sm_90a: TMA + wgmma m64n256k16, warp-specialized (1 producer, 2 consumer warpgroups), "
    "persistent over a grouped raster, TMA-store epilogue, parallel split-K for few tiles";
constexpr char kSummary64[] =
    "tensor cores, sm_90a: as the 1x1 kernel with wgmma m64n64k16 and 8 stages (skinny problems stream the long "
    "operand; parallel split-K for few tiles)";
constexpr char kSummary64x64[] =
    "tensor cores, sm_90a: as the 128x64x64 kernel with one consumer warpgroup on 64-row tiles (twice the CTAs on "
    "the long operand of a skinny problem) and 12 stages";
constexpr char kSummary64x16[] =
    "tensor cores, sm_90a: as the 64x64x64 kernel with 16-wide tiles (wgmma m64n16k16): a stage holds 10 KiB "
    "instead of 16, so 21 stages keep 1.75x the long operand's bytes in flight (fewer where that measured faster); "
    "each k-tile's products added to fp32 registers; D from registers";
constexpr char kSummaryPromoted[] =
    "tensor cores, sm_90a: as the kernel of the same tiles without _promoted, with each k-tile's products added to "
    "fp32 registers (the tensor core's own sum over a long K drifted 3-15x past cuBLAS's error with an fp32 D); "
    "MN-major operands staged";
constexpr char kSummaryC2[] =
    "tensor cores, sm_90a: as the 1x1 kernel, in 2x1 clusters whose CTAs multicast halves of the shared B tile";
constexpr char kSummary192[] =
    "tensor cores, sm_90a: as the 2x1 cluster kernel with 128x192 tiles (wgmma m64n192k16) and 4 stages: a finer "
    "grain of tiles per round where the 256-wide ones would leave rounds part-empty";
constexpr char kSummaryS4[] =
    "tensor cores, sm_90a: as the 2x1 cluster kernel with 4 stages; the epilogue TMA-stores each tile in 64-column "
    "blocks rotating through a half-tile buffer (a D that TMA cannot store leaves from registers)";
constexpr char kSummaryPingpong[] =
    "tensor cores, sm_90a: ping-pong -- the two consumer warpgroups take alternate 128x128 tiles (two wgmma "
    "m64n128k16 per slice), one's epilogue under the other's mainloop; 2x1 clusters multicast B; a D that TMA "
    "cannot store leaves from registers";
constexpr char kSummaryTmaC[] =
    "tensor cores, sm_90a: as the 2x1 cluster kernel; C (beta != 0) arrives by TMA in the staging buffer during the "
    "mainloop, becomes D there and leaves by TMA stores (a C or D that TMA cannot take goes through registers)";
constexpr char kSummaryC1x2[] =
    "tensor cores, sm_90a: as the 1x1 kernel, in 1x2 clusters (two tile columns) whose CTAs multicast halves of the "
    "shared A tile";

constexpr char kSummary64C1x2[] =
    "tensor cores, sm_90a: as the 128x64x64 kernel, in 1x2 clusters whose CTAs multicast halves of the shared A "
    "tile (a D two or four tiles wide reads each strip of its long operand from L2 half as often)";

// One sm_90a registry entry: its name, the compiled configuration it launches (everything
// numeric about it -- tile, stages, cluster, threads, shared memory -- is read from there), and
// the prose `tessel list` prints. The heuristic refers to entries by name (entry() below).
struct Sm90Entry {
  char const* name;
  DType ab;
  Sm90Instance (*instance)();
  char const* summary;
  char const* dtypes;
  Sm90Schedule schedule;
  char const* selection;
};

// clang-format off
constexpr auto kRegistry = std::to_array<Sm90Entry>({
    {"sm90_bf16_128x256x64", DType::bf16, kernel::detail::sm90_instance_bf16_128x256x64, kSummary, kBf16, kCooperative,
     "bf16 on sm_90a: a single 128-row tile row (M <= 128), or where its tiles fill the SMs' rounds enough better than the clusters'"},
    {"sm90_bf16_128x256x64_c2", DType::bf16, kernel::detail::sm90_instance_bf16_128x256x64_c2, kSummaryC2, kBf16, kCooperative,
     "bf16 on sm_90a: default (M > 128, N > 128) where C is read or D cannot take TMA stores"},
    {"sm90_bf16_128x256x64_c1x2", DType::bf16, kernel::detail::sm90_instance_bf16_128x256x64_c1x2, kSummaryC1x2, kBf16, kCooperative,
     "bf16 on sm_90a: where 2x1 clusters need more rounds of tiles than 1x2 (an odd number of tile rows)"},
    {"sm90_bf16_128x128x64_c2", DType::bf16, kernel::detail::sm90_instance_bf16_128x128x64_c2, kSummaryC2, kBf16, kCooperative,
     "bf16 on sm_90a: a single tile column of at most 128 (64 < N <= 128) with a long K; a D 129 to 256 wide or tall where its tiles fit one round; a small problem where 128x64 tiles would take more than one round, or whose rows are off the L2's 32-byte sectors"},
    {"sm90_bf16_128x64x64", DType::bf16, kernel::detail::sm90_instance_bf16_128x64x64, kSummary64, kBf16, kCooperative,
     "bf16 on sm_90a: a D at most 64 wide or tall (skinny) where 64-row tiles would need more than one round, or few 128-row tiles split a long K; 65 to 128 wide or tall where its tiles fit one round and fill most SMs, K is below 8192, or its K slices put as many CTAs to work as the wider tiles'; a small problem with a long K where its slices put more (an fp32 D at most 128 wide or tall with K >= 2048 and K-major operands: sm90_bf16_128x64x64_promoted; a D 65 to 128 wide with a long operand of >= 2^25 elements on HBM of >= 4 TB/s, or 193 to 256 wide with >= 2^24 and K <= 4096: sm90_bf16_128x64x64_c1x2)"},
    {"sm90_fp16_128x256x64", DType::f16, kernel::detail::sm90_instance_f16_128x256x64, kSummary, kF16, kCooperative,
     "fp16 on sm_90a: as sm90_bf16_128x256x64"},
    {"sm90_fp16_128x256x64_c2", DType::f16, kernel::detail::sm90_instance_f16_128x256x64_c2, kSummaryC2, kF16, kCooperative,
     "fp16 on sm_90a: default (M > 128, N > 128)"},
    {"sm90_fp16_128x256x64_c1x2", DType::f16, kernel::detail::sm90_instance_f16_128x256x64_c1x2, kSummaryC1x2, kF16, kCooperative,
     "fp16 on sm_90a: as sm90_bf16_128x256x64_c1x2"},
    {"sm90_fp16_128x128x64_c2", DType::f16, kernel::detail::sm90_instance_f16_128x128x64_c2, kSummaryC2, kF16, kCooperative,
     "fp16 on sm_90a: a single tile column of at most 128 (64 < N <= 128)"},
    {"sm90_fp16_128x64x64", DType::f16, kernel::detail::sm90_instance_f16_128x64x64, kSummary64, kF16, kCooperative,
     "fp16 on sm_90a: as sm90_bf16_128x64x64"},
    {"sm90_e4m3_128x128x128_c2", DType::e4m3, kernel::detail::sm90_instance_e4m3_128x128x128_c2, kSummaryFp8, kE4m3, kCooperative,
     "fp8 (any pair) on sm_90a: a D at most 128 wide (canonical N <= 128), or a small problem (K < 8192) whose 256-wide tiles would fill less than half the GPU"},
    {"sm90_e4m3_128x256x128_c2_fastacc", DType::e4m3, kernel::detail::sm90_instance_e4m3_128x256x128_c2_fastacc, kSummaryFp8Fast, kE4m3Only, kCooperative,
     "e4m3 x e4m3 on sm_90a: by name (fast accumulation)"},
    {"sm90_bf16_128x256x64_c2_s4", DType::bf16, kernel::detail::sm90_instance_bf16_128x256x64_c2_s4, kSummaryS4, kBf16, kCooperative,
     "bf16 on sm_90a: default where D leaves by TMA stores (M > 128, N > 256 in 2x1 clusters, C unread, D 16-byte aligned)"},
    {"sm90_e4m3_128x256x128_c2", DType::e4m3, kernel::detail::sm90_instance_e4m3_128x256x128_c2, kSummaryFp8Halves, kE4m3, kCooperative,
     "fp8 (any pair of e4m3, e5m2) on sm_90a: default (N > 128)"},
    {"sm90_e4m3_128x256x128_c2_blockscaled", DType::e4m3, kernel::detail::sm90_instance_e4m3_128x256x128_c2_blockscaled, kSummaryFp8Blocks, kE4m3Blocks, kCooperative,
     "fp8 (any pair) on sm_90a with scale_mode block: every block-scaled call (the only kernel with block scales)"},
    {"sm90_e4m3_128x256x128_c2_promote2", DType::e4m3, kernel::detail::sm90_instance_e4m3_128x256x128_c2_promote2, kSummaryFp8Every2, kE4m3, kCooperative,
     "fp8 (any pair) on sm_90a: by name (promoted every 256 products: up to 2x cuBLASLt's error; 1.03x cuBLASLt at 8192^3 on an H200 against the default's 1.013)"},
    {"sm90_bf16_128x128x64_pingpong_c2", DType::bf16, kernel::detail::sm90_instance_bf16_128x128x64_pingpong_c2, kSummaryPingpong, kBf16, kPingPong,
     "bf16 on sm_90a: by name (the ping-pong schedule: its epilogue, fused or not, runs under the other consumer's mainloop, but its 128x128 mainloop is slower than the default kernel's; gemm.md)"},
    {"sm90_bf16_128x256x64_c2_tmac", DType::bf16, kernel::detail::sm90_instance_bf16_128x256x64_c2_tmac, kSummaryTmaC, kBf16, kCooperative,
     "bf16 on sm_90a: default where C is read (beta != 0) and TMA can load C and store D (M > 128, N > 128)"},
    {"sm90_fp16_128x256x64_c2_tmac", DType::f16, kernel::detail::sm90_instance_f16_128x256x64_c2_tmac, kSummaryTmaC, kF16, kCooperative,
     "fp16 on sm_90a: as sm90_bf16_128x256x64_c2_tmac"},
    {"sm90_bf16_64x64x64", DType::bf16, kernel::detail::sm90_instance_bf16_64x64x64, kSummary64x64, kBf16, kCooperative,
     "bf16 on sm_90a: a D 17 to 64 wide or tall (skinny; the tall one runs swapped) where its tiles fit one round, unless few 128-row tiles split a long K onto more CTAs than its own slices; a small D where its tiles fit one round and put 1.5x the 128x64 tiles' CTAs to work (a skinny fp32 D with K >= 2048 and K-major operands: sm90_bf16_64x64x64_promoted)"},
    {"sm90_fp16_64x64x64", DType::f16, kernel::detail::sm90_instance_f16_64x64x64, kSummary64x64, kF16, kCooperative,
     "fp16 on sm_90a: as sm90_bf16_64x64x64"},
    {"sm90_bf16_64x16x64", DType::bf16, kernel::detail::sm90_instance_bf16_64x16x64, kSummary64x16, kBf16, kCooperative,
     "bf16 on sm_90a: a D at most 16 wide or tall (skinny; the tall one runs swapped) where its tiles fit one round, unless they would fill under 45% of the SMs and few 128-row tiles split a long K onto more CTAs than its own slices"},
    {"sm90_fp16_64x16x64", DType::f16, kernel::detail::sm90_instance_f16_64x16x64, kSummary64x16, kF16, kCooperative,
     "fp16 on sm_90a: as sm90_bf16_64x16x64"},
    {"sm90_bf16_128x192x64_c2", DType::bf16, kernel::detail::sm90_instance_bf16_128x192x64_c2, kSummary192, kBf16, kCooperative,
     "bf16 on sm_90a: where its rounds of tiles take enough less than the 128x256 ones' (K-major operands, C unread, D by TMA stores)"},
    {"sm90_fp16_128x192x64_c2", DType::f16, kernel::detail::sm90_instance_f16_128x192x64_c2, kSummary192, kF16, kCooperative,
     "fp16 on sm_90a: as sm90_bf16_128x192x64_c2"},
    {"sm90_bf16_64x64x64_promoted", DType::bf16, kernel::detail::sm90_instance_bf16_64x64x64_promoted, kSummaryPromoted, kBf16, kCooperative,
     "bf16 on sm_90a: where sm90_bf16_64x64x64 would run a skinny problem with an fp32 D and K of 2048 or more"},
    {"sm90_fp16_64x64x64_promoted", DType::f16, kernel::detail::sm90_instance_f16_64x64x64_promoted, kSummaryPromoted, kF16, kCooperative,
     "fp16 on sm_90a: as sm90_bf16_64x64x64_promoted"},
    {"sm90_bf16_128x64x64_promoted", DType::bf16, kernel::detail::sm90_instance_bf16_128x64x64_promoted, kSummaryPromoted, kBf16, kCooperative,
     "bf16 on sm_90a: where sm90_bf16_128x64x64 (or its 1x2 sibling) would run a D at most 128 wide or tall with an fp32 D and K of 2048 or more"},
    {"sm90_fp16_128x64x64_promoted", DType::f16, kernel::detail::sm90_instance_f16_128x64x64_promoted, kSummaryPromoted, kF16, kCooperative,
     "fp16 on sm_90a: as sm90_bf16_128x64x64_promoted"},
    {"sm90_tf32_128x256x32_c2", DType::tf32, kernel::detail::sm90_instance_tf32_128x256x32_c2, kSummaryTf32, kTf32, kCooperative,
     "tf32 on sm_90a: M > 128 and N > 128 where its tiles fill at least half the SMs' first round or K >= 4096 (split-K); smaller problems: the sm80 tf32 kernels"},
    {"sm90_bf16_128x64x64_c1x2", DType::bf16, kernel::detail::sm90_instance_bf16_128x64x64_c1x2, kSummary64C1x2, kBf16, kCooperative,
     "bf16 on sm_90a: where sm90_bf16_128x64x64 would run a D 65 to 128 wide (two tile columns; HBM >= 4 TB/s) or 193 to 256 wide (four; K <= 4096) with a long operand: the two CTAs of a tile row share that operand's strip"},
    {"sm90_fp16_128x64x64_c1x2", DType::f16, kernel::detail::sm90_instance_f16_128x64x64_c1x2, kSummary64C1x2, kF16, kCooperative,
     "fp16 on sm_90a: as sm90_bf16_128x64x64_c1x2"},
    {"sm90_bf16_128x64x64_promoted_c1x2", DType::bf16, kernel::detail::sm90_instance_bf16_128x64x64_promoted_c1x2, kSummaryPromoted, kBf16, kCooperative,
     "bf16 on sm_90a: where sm90_bf16_128x64x64_c1x2 would run an fp32 D with K of 2048 or more"},
    {"sm90_fp16_128x64x64_promoted_c1x2", DType::f16, kernel::detail::sm90_instance_f16_128x64x64_promoted_c1x2, kSummaryPromoted, kF16, kCooperative,
     "fp16 on sm_90a: as sm90_bf16_128x64x64_promoted_c1x2"},
});
// clang-format on

// An entry's index by name, at compile time: a name that is not in kRegistry does not build.
consteval std::size_t entry(std::string_view name) {
  for (std::size_t i = 0; i < kRegistry.size(); ++i)
    if (std::string_view(kRegistry[i].name) == name) return i;
  throw "entry(): no sm_90a registry entry has this name";
}

// The entries the heuristic names. The bf16 tiles' fp16 siblings sit kFp16Entries further on
// (`first + kTile128C2`); the other pairs put fp16 right after bf16 (+1). Both are checked here.
constexpr std::size_t kTile256 = entry("sm90_bf16_128x256x64"), kTile256C2 = entry("sm90_bf16_128x256x64_c2"),
                      kTile256C1x2 = entry("sm90_bf16_128x256x64_c1x2"), kTile128C2 = entry("sm90_bf16_128x128x64_c2"),
                      kTile64 = entry("sm90_bf16_128x64x64"), kFp16Entries = entry("sm90_fp16_128x256x64") - kTile256,
                      kFp8Narrow = entry("sm90_e4m3_128x128x128_c2"), kTile256C2S4 = entry("sm90_bf16_128x256x64_c2_s4"),
                      kFp8Entry = entry("sm90_e4m3_128x256x128_c2"), kTile256C2TmaC = entry("sm90_bf16_128x256x64_c2_tmac"),
                      kTile256C2TmaCF16 = entry("sm90_fp16_128x256x64_c2_tmac"), kTile64x64 = entry("sm90_bf16_64x64x64"),
                      kTile64x64F16 = entry("sm90_fp16_64x64x64"), kTile64x16 = entry("sm90_bf16_64x16x64"),
                      kTile64x16F16 = entry("sm90_fp16_64x16x64"), kTile192C2 = entry("sm90_bf16_128x192x64_c2"),
                      kTile192C2F16 = entry("sm90_fp16_128x192x64_c2"), kTile64x64Promoted = entry("sm90_bf16_64x64x64_promoted"),
                      kTile64Promoted = entry("sm90_bf16_128x64x64_promoted"), kTf32Entry = entry("sm90_tf32_128x256x32_c2"),
                      kTile64C1x2 = entry("sm90_bf16_128x64x64_c1x2"),
                      kFp8BlockScaled = entry("sm90_e4m3_128x256x128_c2_blockscaled"),
                      kTile64PromotedC1x2 = entry("sm90_bf16_128x64x64_promoted_c1x2");
static_assert(entry("sm90_fp16_128x256x64_c2") == kTile256C2 + kFp16Entries &&
                  entry("sm90_fp16_128x256x64_c1x2") == kTile256C1x2 + kFp16Entries &&
                  entry("sm90_fp16_128x128x64_c2") == kTile128C2 + kFp16Entries &&
                  entry("sm90_fp16_128x64x64") == kTile64 + kFp16Entries,
              "kRegistry: the five bf16 tiles' fp16 siblings must follow them in the same order, kFp16Entries on");
static_assert(entry("sm90_fp16_64x64x64_promoted") == kTile64x64Promoted + 1 &&
                  entry("sm90_fp16_128x64x64_promoted") == kTile64Promoted + 1 &&
                  entry("sm90_fp16_128x64x64_c1x2") == kTile64C1x2 + 1 &&
                  entry("sm90_fp16_128x64x64_promoted_c1x2") == kTile64PromotedC1x2 + 1,
              "kRegistry: these entries' fp16 siblings must come right after them (the heuristic adds 1)");

// ---- TMA descriptors ------------------------------------------------------------------------------

using detail::EncodeTiled;
using detail::encode_tiled_entry;  // cuTensorMapEncodeTiled (src/runtime/tma_encode_entry.hpp)

// A (cols, rows, batch) row-contiguous matrix (a K-major operand: cols = K; an MN-major one: rows
// = K) with a (box_cols, box_rows, 1) box in the 128-byte swizzle, its arguments made by the one
// TMA path (sm90_operand_map_args: make_tma_encode_args). False when they or the driver refuse it
// (the caller stages the operand, or takes the register epilogue, instead). A tf32 operand's map
// is TFLOAT32 (TMA rounds each fp32 element to tf32 as it copies it), or FLOAT32 with
// tf32_truncate (GemmOptions: wgmma then ignores the low mantissa bits).
bool encode_operand(TmaDescriptor* desc, DType t, void const* ptr, std::int64_t cols, std::int64_t rows,
                    std::int64_t row_stride, std::int64_t batch, std::int64_t batch_stride, int box_cols, int box_rows,
                    int* batch_step, CUtensorMapL2promotion l2 = CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                    bool tf32_truncate = false) {
  static_assert(sizeof(CUtensorMap) == sizeof(TmaDescriptor), "TmaDescriptor must mirror CUtensorMap");
  TmaEncodeResult const e = sm90_operand_map_args(t, ptr, cols, rows, row_stride, batch, batch_stride, box_cols, box_rows,
                                                  TmaL2Promotion(l2), tf32_truncate, batch_step);
  return e.ok() && static_cast<bool>(encode_tma_descriptor(e.args, desc));
}

// ---- occupancy: clusters resident at once, per (instance, device) ----------------------------------

Status resident_clusters(Sm90Instance const& t, int* out) {
  static std::mutex mu;
  static std::map<std::pair<std::uintptr_t, int>, int> seen;  // by the kernel (its occupancy query) and device
  std::uintptr_t const family = reinterpret_cast<std::uintptr_t>(t.max_active_clusters);
  int dev = 0;
  if (cudaError_t err = cudaGetDevice(&dev); err != cudaSuccess) return cuda_failure("cudaGetDevice", err);
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = seen.find({family, dev}); it != seen.end()) {
    *out = it->second;
    return Status::success();
  }
  int clusters = 0;
  if (cudaError_t err = t.max_active_clusters(&clusters); err != cudaSuccess)
    return cuda_failure("cudaOccupancyMaxActiveClusters (sm90 GEMM)", err);
  if (clusters < 1)
    return Status::error(StatusCode::cuda_error, "the sm90 GEMM kernel cannot be resident on this GPU (0 clusters fit)");
  seen.emplace(std::pair{family, dev}, clusters);
  *out = clusters;
  return Status::success();
}

// ---- running one entry -------------------------------------------------------------------------------

Status family_check(std::size_t i, GemmArguments const& g) {
  Sm90Entry const& f = kRegistry[i];
  Sm90Instance const t = f.instance();
  bool const fp8_pair = f.ab == DType::e4m3 && t.fp8_pairs && is_fp8(g.a_type) && is_fp8(g.b_type);
  if (!fp8_pair && (g.a_type != f.ab || g.b_type != f.ab))
    return Status::error(StatusCode::not_supported, std::string("a_type, b_type: this sm90 kernel runs ") + to_string(f.ab) +
                                                        " x " + to_string(f.ab) + " inputs, not " + to_string(g.a_type) +
                                                        " x " + to_string(g.b_type));
  if (g.m > INT_MAX || g.n > INT_MAX || g.batch_count > INT_MAX)
    return Status::error(StatusCode::not_supported, "m, n, batch_count: the sm90 kernels take extents up to 2^31 - 1 (TMA coordinates are 32-bit)");
  if ((g.k + t.tile_k - 1) / t.tile_k > INT_MAX) return Status::error(StatusCode::not_supported, "k: more than 2^31 - 1 k-tiles");
  if (t.block_scaled && g.scale_mode != ScaleMode::block)
    return Status::error(StatusCode::not_supported, std::string("scale_mode: ") + to_string(g.scale_mode) + "; " + f.name +
                                                        " runs block-scaled fp8 only (scale_mode block, a_scales, b_scales)");
  if (!t.block_scaled && g.scale_mode == ScaleMode::block)
    return Status::error(StatusCode::not_supported, std::string("scale_mode: block; ") + f.name +
                                                        " takes per-tensor scales only (sm90_e4m3_128x256x128_c2_blockscaled "
                                                        "runs block scaling)");
  return Status::success();
}

// The current device's memory system, asked once per device through query_device
// (runtime/device.hpp): its L2 and its HBM's peak rate (memory clock x bus width, double data
// rate: the H200's 6144 bits at 3.2 GHz are 4.9 TB/s, the H100 SXM's 5120 at 2.6 3.35). Zeros
// where the device cannot be asked. The 16-wide skinny kernels' L2 promotion and in-flight limit
// depend on it.
struct MemorySystem {
  std::size_t l2_bytes = 0;
  double hbm_bytes_per_s = 0.0;
};
// HBM this fast or faster (the H200's, not the H100's) changes what the skinny kernels are short
// of: sm90_skinny_in_flight's limit, the 16-wide tiles' K slices at half a round
// (sm90_choose_splits) and the 1x2 clusters of shared_strip were measured to pay there.
constexpr double kFastHbmBytesPerS = 4e12;
MemorySystem memory_system() {
  static std::mutex mu;
  static std::map<int, MemorySystem> seen;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return {};
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = seen.find(dev); it != seen.end()) return it->second;
  MemorySystem m;
  if (std::optional<DeviceInfo> const d = query_device(dev)) {
    m.l2_bytes = d->l2_bytes;
    m.hbm_bytes_per_s = 2.0 * double(d->memory_clock_mhz) * 1e6 * double(d->memory_bus_bits) / 8.0;
  }
  seen.emplace(dev, m);
  return m;
}

// The K slices sm90_choose_splits gives `cluster_tiles` cluster tiles of instance t on a canonical
// m x n problem (skinny: a D at most 64 wide or tall) on a GPU with `hbm_bytes_per_s` of HBM: what
// family_run launches and what the heuristic (slicing, below) counts.
int k_slices(Sm90Instance const& t, std::int64_t cluster_tiles, int k_tiles, int clusters, std::int64_t m, std::int64_t n,
             double hbm_bytes_per_s) {
  return kernel::detail::sm90_choose_splits(cluster_tiles, k_tiles, clusters, t.tile_n, std::min(m, n) <= 64,
                                            hbm_bytes_per_s >= kFastHbmBytesPerS);
}

// Stream-K (the kTail schedule of schedule/stream_k.hpp over cluster tiles): opt-in
// (GemmOptions::stream_k), where sm90_stream_k_pays (kernel/sm90_gemm_cta.hpp). Correct on every
// entry that can run it, but measured slower on the H100 (same-run A/B: 4096^3 bf16 0.90x cuBLAS
// against 0.97x without, 8192x28672x4096 0.959 against 0.969, 8192^3 even; the kHybrid order,
// stream-K first, was worse still), so the default walk stays data-parallel. Not for split-K,
// row copies (the copy warps walk whole tiles) or kernels that promote in blocks of k-tiles.
bool choose_stream_k(GemmOptions const& o, std::int64_t cluster_tiles, int clusters, int k_tiles) {
  return o.stream_k && kernel::detail::sm90_stream_k_pays(cluster_tiles, clusters, k_tiles);
}

// The split tail (kSplitTail over cluster tiles: the last partial round's tiles cut into 2-3
// aligned K slices on as many clusters, fixed up like Stream-K) where sm90_split_tail_slices says
// so (and GemmOptions::split_tail); its slices, or 0.
int choose_split_tail(GemmOptions const& o, std::int64_t cluster_tiles, int clusters, int k_tiles) {
  return o.split_tail ? kernel::detail::sm90_split_tail_slices(cluster_tiles, clusters, k_tiles) : 0;
}

// The epoch a Stream-K launch raises its flags to: unique in the process (a counter) and salted
// per process, so no flag left in a reused workspace -- by an earlier launch, or as other data --
// reads as raised (the flags are never cleared: a clearing pass would cost a launch).
unsigned long long next_stream_k_epoch() {
  static std::atomic<unsigned long long> counter{0};
  static unsigned long long const salt = [] {
    std::random_device rd;
    return (static_cast<unsigned long long>(rd()) << 32) ^ rd() ^
           static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count());
  }();
  return salt + 0x9E3779B97F4A7C15ull * (counter.fetch_add(1) + 1);
}

// The raster of the persistent walk, as GemmOptions asks (raster_group, raster_along), over the
// heuristic's bands of 8 in its own direction.
PersistentArguments with_raster_options(PersistentArguments args, GemmOptions const& o) {
  if (o.raster_group > 0) args.group = o.raster_group;
  if (o.raster_along == 'm') args.raster = RasterOrderOption::kAlongM;
  if (o.raster_along == 'n') args.raster = RasterOrderOption::kAlongN;
  return args;
}

// Why the persistent walk launches only as many clusters as finish its tiles in the same number
// of waves (PersistentArguments::balance_waves; GemmOptions::balance_waves): H200, alternating in
// one run: 4096^3 0.991-0.993x cuBLAS -> 1.004-1.006 (64 clusters for 66: 4 full waves instead
// of a last one 58/66 full), 8192^3 1.013-1.014 -> 1.029, 6144^3 0.990 -> 1.011, fp8 e4m3 8192^3
// 0.934 -> 0.954. Not with split-K or Stream-K, whose units are not whole tiles of one wave each.
//
// Why a persistent walk in 32 bits takes the kernels' compact unit path (Sm90GemmParams::
// compact_units, kernel/sm90_gemm_cta.hpp; GemmOptions::compact_units): H100, GPU time per call
// queued (bench_api_overhead), same binary: 1024^3 7.2 us against 7.9, 512x512x4096 12.0 against
// 13.1-13.2, 2048^3 25.9 against 26.3-26.5, 3072x3072x1024 31.1-31.3 against 31.8-32.2 -- the
// producer's first load out ~0.5 us sooner.

// The L2 promotion of an entry's operand tensor maps: 256 bytes, but 128 for the 16-wide skinny
// kernels on an H200-class GPU (told apart by its 60 MB L2), whose long operand streams in 128-byte
// row pieces. Alternating in one run: on the H200 128 bytes gave 16x8192x8192 0.91-0.92x cuBLAS
// against 0.90 with 256, 16x8192x16384 0.99 against 0.975; on the H100 (50 MB) 128 bytes lost
// 0.3-1.5% (0.961-0.965 against 0.964-0.967, 0.977-0.987 against 0.992-0.995). ncu on the H200:
// with 256 a 128-byte row piece brings its neighbour into L2 (L2 hit rate 30% against cuBLAS's 9%,
// the same DRAM bytes). The 64- and 128-wide kernels' skinny shapes and 4096^3 moved by less than
// the noise; the multi-round 16x28672x8192 on 128x64 tiles lost 1.5% with 128.
// GemmOptions::l2_promotion (0 none, 1 64 B, 2 128 B, 3 256 B) overrides it for every kernel.
CUtensorMapL2promotion operand_l2_promotion(Sm90Instance const& t, GemmOptions const& o) {
  static constexpr CUtensorMapL2promotion kPromotions[] = {CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
                                                           CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B};
  if (o.l2_promotion >= 0) return kPromotions[o.l2_promotion];
  if (t.tile_n != 16) return CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  // An L2 of 55 MiB or more: the H200 (60 MB) and its class, not the H100 (50 MB).
  constexpr std::size_t kH200ClassL2Bytes = std::size_t(55) << 20;
  return memory_system().l2_bytes >= kH200ClassL2Bytes ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B : CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
}

// Whether a 16-bit matrix of D's shape at p (ld, batch stride) is TMA's to load or store in 64 x 64
// boxes: not broadcast over batches, pointer, leading dimension and batch stride 16-byte aligned,
// and the canonical width whole 16-byte units (the unit clips a box at the tensor's edge only to
// 16 bytes). The heuristic asks before the driver has its say on the tensor map; family_run after.
bool tma_box_matrix(GemmArguments const& g, void const* p, std::int64_t ld, std::int64_t batch_stride) {
  std::size_t const ob = size_of(g.c_type);
  std::int64_t const n = g.c_order == MatrixOrder::col_major ? g.m : g.n;  // canonical width
  return g.c_type != DType::f32 && detail::aligned16(p, ld, batch_stride, g.batch_count, ob) && (n * std::int64_t(ob)) % 16 == 0 &&
         !(g.batch_count > 1 && batch_stride == 0);
}

// D leaves through shared memory and TMA stores, C unread.
bool d_tma_storable(GemmArguments const& g) { return !gemm_reads_c(g) && tma_box_matrix(g, g.d, g.ldd, g.batch_stride_d); }

// C is read and both it and D are TMA's to load and store (the _tmac kernels' epilogue).
bool c_tma_loadable(GemmArguments const& g) {
  return gemm_reads_c(g) && tma_box_matrix(g, g.c, g.ldc, g.batch_stride_c) && tma_box_matrix(g, g.d, g.ldd, g.batch_stride_d);
}

// Whether entry t runs g as the swapped problem: a skinny kernel (tiles 64 or 16 wide) on a
// canonical D at most a tile tall and wider than one (row-major D of BLAS M <= 64, e.g. Y = X W^T
// with few rows of X) -- as it stands, the long side would fall on the narrow tile columns.
bool sm90_swaps_problem(Sm90Instance const& t, CanonicalGemm const& c) {
  return t.tile_n <= 64 && c.m <= t.tile_n && c.n > t.tile_n;
}

// query non-null: store the scratch bytes the call takes there and launch nothing.
// Runs g on kernel t (input type ab). implicit non-null: an implicit GEMM whose two tensor maps and
// im2col geometry the caller made (sm90_implicit_gemm.hpp); g gives everything else.
Status instance_run(Sm90Instance const& t, DType ab, GemmArguments const& g, detail::Sm90ImplicitOperands const* implicit,
                    std::size_t* query, cudaStream_t stream) {
  std::size_t const ob = size_of(g.c_type);
  // A skinny kernel (64-wide tiles) runs a problem whose canonical D is at most 64 rows tall and
  // wider than 64 as the swapped problem D^T = B' A'^T (sm90_swaps_problem): the long operand
  // streams through the tiles' 64-row side, and D and C are addressed transposed.
  CanonicalGemm const c0 = detail::canonical_gemm(g);
  // A block-scaled kernel keeps the caller's A and B (its A scales run along rows, its B scales
  // in 128-column blocks): a column-major D is written transposed instead of computed as D^T. An
  // implicit GEMM says itself (its pixels as B: sm90_implicit_gemm.hpp).
  bool const transposed = implicit != nullptr ? implicit->transposed
                          : t.block_scaled    ? g.c_order == MatrixOrder::col_major
                                              : sm90_swaps_problem(t, c0);
  CanonicalGemm const c = transposed ? CanonicalGemm{c0.n, c0.m, c0.b, c0.a} : c0;
  std::int64_t const batch = g.batch_count;

  // The driver's encoder, asked for once here: a driver without it is one clear Status, not every
  // operand staged and then refused.
  EncodeTiled encoder = nullptr;
  if (Status s = encode_tiled_entry(&encoder); !s) return s;
  int clusters = 0;
  if (Status s = resident_clusters(t, &clusters); !s) return s;

  // The schedule: cluster tiles x K slices.
  std::int64_t const tiles_m = (c.m + t.tile_m - 1) / t.tile_m, tiles_n = (c.n + t.tile_n - 1) / t.tile_n;
  std::int64_t const cluster_rows = (tiles_m + t.cluster_m - 1) / t.cluster_m;
  std::int64_t const cluster_cols = (tiles_n + t.cluster_n - 1) / t.cluster_n;
  int const k_tiles = int((g.k + t.tile_k - 1) / t.tile_k);
  int const forced = g.options.splits;
  double const hbm_bytes_per_s = memory_system().hbm_bytes_per_s;  // (K slices and the 16-wide in-flight limit)
  int const splits = forced > 0 ? std::min(forced, k_tiles)
                                : k_slices(t, cluster_rows * cluster_cols * batch, k_tiles, clusters, c.m, c.n,
                                           hbm_bytes_per_s);

  Sm90GemmParams p;
  // Operands TMA can read in place (sm90_operand_read: K-major, or MN-major for the 16-bit kernels,
  // with 16-byte aligned strides -- TMA needs aligned box starts as well; 32-byte ones for a large
  // D, operand_align) get their descriptors now; the others (odd leading dimensions, unaligned
  // pointers, fp8 MN-major operands, any the driver refuses) are staged into aligned K-major
  // copies and described after.
  int const box_a = t.tile_m / t.cluster_n, box_b = t.tile_n / t.cluster_m;  // what one CTA of a cluster copies
  int const box_mn = 128 / t.element_bytes;  // MN-major: rows per box (one 128-byte swizzle row)
  CUtensorMapL2promotion const l2 = operand_l2_promotion(t, g.options);
  int align = g.options.operand_align > 0 ? g.options.operand_align : sm90_operand_align(c.m, c.n);
  auto const in_place = [&](OperandView const& v, std::int64_t rows, int box_rows, TmaDescriptor* desc, int* step,
                            bool* mn_major) {
    Sm90OperandRead const read = sm90_operand_read(reinterpret_cast<std::uintptr_t>(v.ptr), v.row_stride, v.k_stride,
                                                   v.batch_stride, batch, t.element_bytes, t.mn_major, align);
    *mn_major = read == Sm90OperandRead::mn_major;
    if (read == Sm90OperandRead::k_major)
      return encode_operand(desc, ab, v.ptr, g.k, rows, v.row_stride, batch, v.batch_stride, t.tile_k, box_rows, step, l2, g.options.tf32_truncate);
    if (read == Sm90OperandRead::mn_major)
      return encode_operand(desc, ab, v.ptr, rows, g.k, v.k_stride, batch, v.batch_stride, box_mn, t.tile_k, step, l2, g.options.tf32_truncate);
    return false;
  };
  bool a_in_place = false, b_in_place = false;
  auto const read_in_place = [&] {
    a_in_place = in_place(c.a, c.m, box_a, &p.tma_a, &p.a_batch_step, &p.a_mn_major);
    b_in_place = in_place(c.b, c.n, box_b, &p.tma_b, &p.b_batch_step, &p.b_mn_major);
    p.a_mn_major = a_in_place && p.a_mn_major, p.b_mn_major = b_in_place && p.b_mn_major;  // staged copies are K-major
  };
  if (implicit != nullptr) {  // both maps made by the caller, read as they are
    p.tma_a = implicit->a, p.tma_b = implicit->b;
    p.a_mn_major = implicit->a_mn_major, p.b_mn_major = implicit->b_mn_major;
    p.im2col = implicit->im2col;
    a_in_place = b_in_place = true;
  } else {
    read_in_place();
  }
  // Stream-K (opt-in) or the split tail: the clusters' persistent walk becomes the kTail or the
  // kSplitTail stream-K schedule (same grid).
  bool const reads_c = gemm_reads_c(g);
  // D leaves through the copy warps' row copies when TMA cannot store it, C is unread and D is
  // 16-bit, in the kernels that have copy warps (the rule p.staged_rows applies below, once the
  // driver has had its say on tma_d).
  auto const row_copies = [&](bool tma_store) { return !tma_store && !reads_c && g.c_type != DType::f32 && t.row_copies; };
  bool const row_copy_path = !transposed && row_copies(d_tma_storable(g));
  std::int64_t const cluster_tiles = cluster_rows * cluster_cols * batch;
  bool const sk_able = splits == 1 && t.stream_k && !row_copy_path && !transposed;
  bool const stream_k = sk_able && choose_stream_k(g.options, cluster_tiles, clusters, k_tiles);
  // (Not where C is read: the _tmac kernels' C by TMA, which Stream-K gives up, is worth more.
  // Not for an fp32 D: with 3 slices its error reached 2.1-2.3x cuBLAS's at K = 3195, past the
  // tests' 2x; a 16-bit D's own rounding hides the sum's order.)
  int const tail_slices = sk_able && !stream_k && !reads_c && g.c_type != DType::f32
                              ? choose_split_tail(g.options, cluster_tiles, clusters, k_tiles)
                              : 0;
  PersistentArguments args;
  args.sm_count = clusters;
  args.ctas_per_sm = 1;
  args.group = 8;
  args.balance_waves = splits == 1 && !stream_k && tail_slices == 0 && g.options.balance_waves;
  args = with_raster_options(args, g.options);
  p.scheduler = PersistentTileScheduler::make(GemmCoord(cluster_rows, cluster_cols, batch * splits), args);
  // Per CTA of the grid: a tile_m x tile_n fp32 partial, then one 8-byte flag per consumer.
  std::size_t const sk_ctas = std::size_t(p.scheduler.grid_size()) * std::size_t(t.cluster_m * t.cluster_n);
  std::size_t const sk_partial_floats = sk_ctas * std::size_t(t.tile_m) * std::size_t(t.tile_n);
  if (stream_k || tail_slices > 0) {
    StreamKArguments sk;
    sk.sm_count = clusters, sk.ctas_per_sm = 1, sk.raster = args.raster, sk.group = args.group;
    sk.decomposition = stream_k ? StreamKDecomposition::kTail : StreamKDecomposition::kSplitTail;
    if (tail_slices > 0) sk.max_tail_slices = tail_slices;  // the rule's slices (the scheduler finds the same)
    p.sk = StreamKScheduler::make(GemmCoord(cluster_rows, cluster_cols, batch), k_tiles, sk);
    p.stream_k = p.sk.grid_size() == p.scheduler.grid_size() && p.sk.sk_tile_count() > 0;
    // The whole rounds a tail schedule runs first, as the persistent walk does (sm90_unit).
    p.sk_rounds = p.stream_k && p.sk.sk_first_tile() > 0 ? p.sk.sk_first_tile() / p.sk.grid_size() : 0;
  }
  p.compact_units = !p.stream_k && p.scheduler.fits32() && g.options.compact_units;
  std::size_t const partials = splits > 1  ? std::size_t(splits * batch * c.m * c.n)
                               : p.stream_k ? sk_partial_floats + 2 * sk_ctas * std::size_t(t.consumers)
                                            : 0;
  CallWorkspace w;
  auto const prepare = [&] {
    return prepare_operands(c, g.k, batch, t.element_bytes, a_in_place ? Staging::never : Staging::always,
                            b_in_place ? Staging::never : Staging::always, partials, 0,
                            detail::workspace_source(g, query), stream, &w);
  };
  Status prepared = prepare();
  if (!prepared && align > 16 && implicit == nullptr) {
    // The 32-byte rows were asked for speed alone: where their copy cannot be had (no memory for
    // it), the operands TMA can read as they are are read in place, and only the rest staged.
    (void)cudaGetLastError();
    align = 16;
    read_in_place();
    prepared = prepare();
  }
  if (!prepared || query != nullptr) return prepared;
  Status result = Status::success();
  auto const fail = [&](Status s) {
    if (result.ok()) result = std::move(s);
  };
  if (!a_in_place && !encode_operand(&p.tma_a, ab, w.a.ptr, g.k, c.m, w.a.ld, batch, w.a.batch_stride,
                                     t.tile_k, box_a, &p.a_batch_step, l2, g.options.tf32_truncate))
    fail(Status::error(StatusCode::cuda_error, "cuTensorMapEncodeTiled refused the staged A"));
  if (!b_in_place && !encode_operand(&p.tma_b, ab, w.b.ptr, g.k, c.n, w.b.ld, batch, w.b.batch_stride,
                                     t.tile_k, box_b, &p.b_batch_step, l2, g.options.tf32_truncate))
    fail(Status::error(StatusCode::cuda_error, "cuTensorMapEncodeTiled refused the staged B"));

  // Edge maps: a K-major operand whose rows end inside a CTA's share of a tile gets a second map
  // whose box is the rows of that share inside, rounded up to whole 8-row swizzle atoms (one box:
  // the H100 ran 1000^3 on 128x64 tiles 7% slower with the edge share in 16-row boxes than
  // zero-filled whole). The producer copies that share through it (kernel/sm90_gemm_producer.hpp).
  // Without one (MN-major, the rounding reaches the share's size, or the driver refuses) the share
  // is copied whole and TMA zero-fills the rest. Returns the box's rows, or 0.
  auto const edge_map = [&](bool k_major, void const* ptr, std::int64_t rows, std::int64_t row_stride,
                            std::int64_t batch_stride, int share_rows, TmaDescriptor* desc) {
    if (!k_major) return kernel::detail::sm90_mn_edge_rows(rows, share_rows, box_mn);  // (the operand's own map)
    int const edge = kernel::detail::sm90_edge_rows(rows, share_rows);
    int step = 0;
    return edge > 0 &&
                   encode_operand(desc, ab, ptr, g.k, rows, row_stride, batch, batch_stride, t.tile_k, edge, &step, l2, g.options.tf32_truncate)
               ? edge
               : 0;
  };
  if (implicit == nullptr) {  // (an implicit GEMM's boxes are whole: TMA zero-fills past its tensors)
    p.a_edge_rows = a_in_place ? edge_map(!p.a_mn_major, c.a.ptr, c.m, c.a.row_stride, c.a.batch_stride, box_a, &p.tma_a_edge)
                               : edge_map(true, w.a.ptr, c.m, w.a.ld, w.a.batch_stride, box_a, &p.tma_a_edge);
    p.b_edge_rows = b_in_place ? edge_map(!p.b_mn_major, c.b.ptr, c.n, c.b.row_stride, c.b.batch_stride, box_b, &p.tma_b_edge)
                               : edge_map(true, w.b.ptr, c.n, w.b.ld, w.b.batch_stride, box_b, &p.tma_b_edge);
  }
  p.m = c.m, p.n = c.n, p.k = g.k;
  if (ab == DType::e4m3) {  // the kernel's pair: a column-major D swaps A and B (unless written transposed)
    bool const swap_ab = (g.c_order == MatrixOrder::col_major) != transposed;
    bool const a_e5m2 = (swap_ab ? g.b_type : g.a_type) == DType::e5m2, b_e5m2 = (swap_ab ? g.a_type : g.b_type) == DType::e5m2;
    p.fp8_pair = (a_e5m2 ? 2 : 0) + (b_e5m2 ? 1 : 0);
  }
  if (t.block_scaled) {  // GemmArguments' layouts, in the caller's orientation (the kernel's)
    p.a_scales = g.a_scales, p.b_scales = g.b_scales;
    p.lda_scales = gemm_ld_a_scales(g), p.ldb_scales = gemm_ld_b_scales(g);
    p.a_batch_scales = p.lda_scales * gemm_scale_blocks(g.k);
    p.b_batch_scales = gemm_scale_blocks(g.n) * p.ldb_scales;
    p.n_scale_blocks = int(gemm_scale_blocks(g.n));
  }
  p.k_tiles = k_tiles;
  if (t.tile_n == 16 && splits == 1) {  // (the producer takes no limit of its stages or more)
    bool const fast_hbm = hbm_bytes_per_s >= kFastHbmBytesPerS;
    p.in_flight = g.options.skinny_in_flight >= 0 ? g.options.skinny_in_flight
                  : cluster_cols == 1     ? kernel::detail::sm90_skinny_in_flight(cluster_tiles, k_tiles, clusters, fast_hbm)
                                          : 0;
  }
  if (t.tile_n == 16) {  // the long operand evict-first, the narrow one evict-last (sm90_skinny_l2_hints)
    bool const forced = g.options.skinny_l2_hint_a >= 0;  // (gemm_check_options: both or neither)
    bool const hints = splits == 1 && kernel::detail::sm90_skinny_l2_hints(cluster_tiles, clusters);  // as measured
    p.l2_priority_a = forced ? L2Priority(g.options.skinny_l2_hint_a) : hints ? L2Priority::evict_first : L2Priority::none;
    p.l2_priority_b = forced ? L2Priority(g.options.skinny_l2_hint_b) : hints ? L2Priority::evict_last : L2Priority::none;
  }
  p.batch = int(batch);
  p.splits = splits;
  if (p.stream_k) {
    p.sk_partials = w.partials;
    p.sk_flags = reinterpret_cast<unsigned long long*>(w.partials + sk_partial_floats);  // after whole fp32 tiles: aligned
    p.sk_epoch = next_stream_k_epoch();
  }
  bool const fused = gemm_is_fused(g);
  if (splits > 1) {  // fp32 partial sums, then the reduction forms D (and applies a fused epilogue)
    p.d = w.partials, p.ldd = c.n, p.batch_stride_d = c.m * c.n;
    p.out_f32 = true, p.alpha = 1.0f, p.beta = 0.0f;
    p.d_pairs = detail::vector_aligned(w.partials, c.n, c.m * c.n, batch * splits, sizeof(float), 2);
  } else {
    p.c = reads_c ? g.c : nullptr, p.ldc = g.ldc, p.batch_stride_c = g.batch_stride_c;
    p.d = g.d, p.ldd = g.ldd, p.batch_stride_d = g.batch_stride_d;
    p.alpha = gemm_product_scale(g), p.beta = reads_c ? g.beta : 0.0f;
    p.out_f32 = g.c_type == DType::f32, p.out_f16 = g.c_type == DType::f16;
    p.c_pairs = detail::vector_aligned(p.c, g.ldc, g.batch_stride_c, batch, ob, 2);
    p.d_pairs = detail::vector_aligned(g.d, g.ldd, g.batch_stride_d, batch, ob, 2);
    p.d_transposed = transposed;
    p.fusion = epilogue::epilogue_fusion_of(g, transposed);
    // D through shared memory and TMA: C unread (or, with a fused epilogue, added in registers), a
    // 16-bit D with 16-byte aligned rows whose width is whole 16-byte units too -- the unit clips a
    // box at the tensor's edge only to 16 bytes (on the H100, D 150 wide with ldd 152 got columns
    // 150 and 151 written), so a ragged width would write into the padding, which may be someone
    // else's data.
    // A C that is read takes the same path when TMA can load it too, in the _tmac kernels
    // (t.tma_loads_c): it arrives in the staging buffer during the mainloop. (From registers,
    // C's scattered 4-byte loads stalled both consumers: 8192x8192x2048 with beta = 1 ran at 0.60x
    // cuBLAS on the H100.)
    int d_step = 1, c_step = 1;
    p.c_by_tma = t.tma_loads_c && !p.stream_k && !transposed && c_tma_loadable(g) &&
                 encode_operand(&p.tma_c, g.c_type, g.c, c.n, c.m, g.ldc, batch, g.batch_stride_c, 64, 64, &c_step);
    // tma_d describes the caller's canonical D (c0): the kernel's D, or for the swapped problem
    // (never c_by_tma) its transpose, which the kernel stages transposed.
    bool const d_storable =
        reads_c ? p.c_by_tma || (fused && tma_box_matrix(g, g.d, g.ldd, g.batch_stride_d)) : d_tma_storable(g);
    // (A kernel that writes D transposed stages transposed blocks for its TMA stores.)
    p.tma_store = t.tma_store && d_storable && (!transposed || t.writes_transposed) &&
                  encode_operand(&p.tma_d, g.c_type, g.d, c0.n, c0.m, g.ldd, batch, g.batch_stride_d, 64, 64, &d_step);
    p.c_by_tma = p.c_by_tma && p.tma_store;
    // Any other 16-bit D with C unread: coalesced row copies out of shared memory by the producer
    // warpgroup's copy warps, overlapped with the next mainloop (single elements scattered over 8
    // rows per store took 361 us against 180 us at 4096^3 for 4095x4097x4099 on the H100; the
    // consumers' own synchronous row copies still cost ~55 us of its 315) -- in the kernels that
    // have copy warps (row_copies): the ping-pong kernel's register epilogue overlaps the other
    // consumer's mainloop instead.
    // (Stream-K was chosen only where D needs no row copies; should the driver refuse tma_d
    // after all, D leaves from registers.)
    p.staged_rows = row_copies(p.tma_store) && !p.stream_k && !transposed;
  }

  // The build that runs the call (gemm/device/sm90_build_choice.hpp): a lean one for its case.
  Sm90BuildCase bc;
  bc.compact_units = p.compact_units, bc.splits = splits, bc.stream_k = p.stream_k;
  bc.tma_store = p.tma_store, bc.staged_rows = p.staged_rows, bc.d_transposed = p.d_transposed;
  bc.reads_c = reads_c, bc.c_by_tma = p.c_by_tma, bc.a_mn_major = p.a_mn_major, bc.b_mn_major = p.b_mn_major;
  bc.d_matches_inputs = !p.out_f32 && p.out_f16 == (ab == DType::f16) && (ab == DType::bf16 || ab == DType::f16);
  bc.fused = fused, bc.lean_builds = g.options.lean_builds;
  Sm90EntryBuilds const eb{t.launch_lean != nullptr, t.launch_lean_fused != nullptr, t.launch_lean_mn != nullptr,
                           t.writes_transposed};
  auto launch = t.launch;
  switch (sm90_build_choice(bc, eb)) {
    case kernel::Sm90Build::lean: launch = t.launch_lean; break;
    case kernel::Sm90Build::lean_fused: launch = t.launch_lean_fused; break;
    case kernel::Sm90Build::lean_mn: launch = t.launch_lean_mn; break;
    case kernel::Sm90Build::general: break;
  }
  if (result.ok()) {
    if (cudaError_t err = launch(p, stream); err != cudaSuccess) fail(cuda_failure("launch of the sm90 GEMM kernel", err));
  }
  if (result.ok() && splits > 1) {
    kernel::detail::SplitKReduceParams r;
    r.partials = w.partials, r.splits = splits, r.batch = batch, r.rows = c.m, r.cols = c.n;
    r.c = reads_c ? g.c : nullptr, r.ldc = g.ldc, r.batch_stride_c = g.batch_stride_c;
    r.d = g.d, r.ldd = g.ldd, r.batch_stride_d = g.batch_stride_d;
    r.alpha = gemm_product_scale(g), r.beta = reads_c ? g.beta : 0.0f;
    r.transposed = transposed;
    r.fusion = epilogue::epilogue_fusion_of(g, transposed);
    if (cudaError_t err = kernel::detail::launch_splitk_reduce(r, g.c_type, stream); err != cudaSuccess)
      fail(cuda_failure("launch of the split-K reduction", err));
  }
  return release_workspace(w, std::move(result), stream);
}

Status family_run(std::size_t i, GemmArguments const& g, std::size_t* query, cudaStream_t stream) {
  if (gemm_is_fused(g) && g.c_type == DType::f32)  // the kernels fuse a 16-bit D (epilogue_fusion.hpp)
    return detail::run_fused_fp32(g, query, stream, [i](GemmArguments const& k, std::size_t* q, cudaStream_t s) {
      return family_run(i, k, q, s);
    });
  return instance_run(kRegistry[i].instance(), kRegistry[i].ab, g, nullptr, query, stream);
}

}  // namespace

Status detail::sm90_implicit_gemm_run(Sm90Instance const& t, DType ab, GemmArguments const& g, Sm90ImplicitOperands const& ops,
                                      std::size_t* query, cudaStream_t stream) {
  return instance_run(t, ab, g, &ops, query, stream);
}

namespace {

template <std::size_t I>
Status check_entry(GemmArguments const& g) {
  return family_check(I, g);
}
template <std::size_t I>
Status launch_entry(GemmArguments const& g, cudaStream_t stream) {
  if (!gemm_reads_ab(g) || gemm_is_noop(g))
    return Status::error(StatusCode::invalid_argument,
                         "m, n, k, alpha: the sm90 kernels need M, N, K > 0 and alpha != 0 (tessel::gemm handles the rest)");
  return family_run(I, g, nullptr, stream);
}
template <std::size_t I>
Status workspace_entry(GemmArguments const& g, std::size_t* bytes) {
  return family_run(I, g, bytes, nullptr);
}
template <std::size_t I>
cudaError_t attributes_entry(GemmArguments const&, cudaFuncAttributes* attr) {
  return kRegistry[I].instance().attributes(attr);
}


// The GemmKernelInfo of each registry entry: the names and prose above, the tile text read from
// the compiled configuration (built once, on first use).
std::string tile_text(Sm90Entry const& e) {
  Sm90Instance const t = e.instance();
  bool const ping_pong = e.schedule == Sm90Schedule::ping_pong;
  return std::to_string(t.tile_m) + "x" + std::to_string(t.tile_n) + "x" + std::to_string(t.tile_k) +
         (ping_pong ? " per consumer" : "") + ", " + std::to_string(t.threads / 128) + " warpgroups" +
         (ping_pong ? " (ping-pong)" : "") + ", " + std::to_string(t.stages) + " stages, cluster " +
         std::to_string(t.cluster_m) + "x" + std::to_string(t.cluster_n) + ", " +
         std::to_string((t.smem_bytes + 1023) / 1024) + " KiB smem";
}

template <std::size_t... I>
std::array<GemmKernelInfo, sizeof...(I)> make_entries(std::index_sequence<I...>) {
  static std::array<std::string, sizeof...(I)> const tiles{tile_text(kRegistry[I])...};
  return {GemmKernelInfo{kRegistry[I].name, kRegistry[I].summary, tiles[I].c_str(), kRegistry[I].dtypes, kLayouts, kAlign,
                         kRegistry[I].selection, 90, check_entry<I>, launch_entry<I>, attributes_entry<I>,
                         workspace_entry<I>}...};
}

std::array<GemmKernelInfo, kRegistry.size()> const& entries() {
  static std::array<GemmKernelInfo, kRegistry.size()> const e = make_entries(std::make_index_sequence<kRegistry.size()>{});
  return e;
}



// Entry k's index in entries(), or kRegistry.size() when k is not one of them (std::less orders
// pointers into different objects as well, where < and - would not be defined).
std::size_t entry_index(GemmKernelInfo const& k) {
  std::less<GemmKernelInfo const*> const before;
  GemmKernelInfo const* const first = entries().data();
  if (!before(&k, first) && before(&k, first + kRegistry.size())) return static_cast<std::size_t>(&k - first);
  // A copy of an entry (gemm_kernels() holds copies of every family's entries): the same name.
  for (std::size_t i = 0; i < kRegistry.size(); ++i)
    if (k.name != nullptr && std::string_view(first[i].name) == k.name) return i;
  return kRegistry.size();
}

// What the heuristic knows of the GPU it picks for: each entry's clusters (CTAs, for a 1x1 kernel)
// resident at once, 0 when unknown, and the HBM bandwidth. Either given (an assumed GPU:
// sm90_select_gemm_kernel's second form, the host tests) or asked of the current device -- each
// entry's count once per selection (resident_clusters's own cache costs a device query and a lock
// per look, and the heuristic asks a few dozen times), so a selection on another device or thread
// asks afresh.
class GpuModel {
 public:
  GpuModel() { asked_.fill(-1); }
  GpuModel(std::span<int const> resident, double hbm_bytes_per_s) : given_(resident), hbm_(hbm_bytes_per_s) {}

  int resident(std::size_t i) const {
    if (!given_.empty()) return i < given_.size() ? std::max(0, given_[i]) : 0;
    int& known = asked_[i];
    if (known < 0) {
      int clusters = 0;
      known = resident_clusters(kRegistry[i].instance(), &clusters).ok() ? clusters : 0;
    }
    return known;
  }
  // The assumed GPU's bandwidth (0 when not given), else this GPU's (0 when it cannot be asked).
  double hbm_bytes_per_s() const { return given_.empty() ? memory_system().hbm_bytes_per_s : hbm_; }

 private:
  std::span<int const> given_;
  double hbm_ = 0.0;
  mutable std::array<int, kRegistry.size()> asked_{};  // -1: not asked yet
};

// Cluster tiles of entry i on a canonical m x n x batch problem.
std::int64_t cluster_tiles(std::size_t i, std::int64_t m, std::int64_t n, std::int64_t batch) {
  Sm90Instance const t = kRegistry[i].instance();
  std::int64_t const rows = ((m + t.tile_m - 1) / t.tile_m + t.cluster_m - 1) / t.cluster_m;
  std::int64_t const cols = ((n + t.tile_n - 1) / t.tile_n + t.cluster_n - 1) / t.cluster_n;
  return rows * cols * batch;
}

// Rounds of tiles the busiest SM (cluster) runs for entry i on a canonical m x n x batch problem,
// or 0 when the resident count is unknown.
std::int64_t tile_rounds(GpuModel const& gpu, std::size_t i, std::int64_t m, std::int64_t n, std::int64_t batch) {
  int const clusters = gpu.resident(i);
  return clusters > 0 ? (cluster_tiles(i, m, n, batch) + clusters - 1) / clusters : 0;
}

// How entry i would run a canonical m x n x batch problem of depth k: its cluster tiles, its
// resident clusters, its k-tiles and the K slices family_run's sm90_choose_splits gives them (0
// slices when the resident count is unknown).
struct Slicing {
  std::int64_t tiles;
  int clusters, k_tiles, splits;
};
Slicing slicing(GpuModel const& gpu, std::size_t i, std::int64_t m, std::int64_t n, std::int64_t batch,
                std::int64_t k) {
  Sm90Instance const t = kRegistry[i].instance();
  Slicing sl{cluster_tiles(i, m, n, batch), gpu.resident(i),
             int(std::min<std::int64_t>((k + t.tile_k - 1) / t.tile_k, INT_MAX)), 0};
  if (sl.clusters > 0) sl.splits = k_slices(t, sl.tiles, sl.k_tiles, sl.clusters, m, n, gpu.hbm_bytes_per_s());
  return sl;
}

// CTAs entry i puts to work on that problem: its cluster tiles (at most one round of them) times
// their K slices, times the CTAs of a cluster; 0 when the resident count is unknown.
std::int64_t busy_ctas(GpuModel const& gpu, std::size_t i, std::int64_t m, std::int64_t n, std::int64_t batch,
                       std::int64_t k) {
  Sm90Instance const t = kRegistry[i].instance();
  Slicing const sl = slicing(gpu, i, m, n, batch, k);
  return std::min<std::int64_t>(sl.tiles, sl.clusters) * sl.splits * t.cluster_m * t.cluster_n;
}

// The busiest cluster's share of the work on that problem, for tiles of one height (128 rows):
// its rounds of units times the k-tiles of a unit times the tile's width; 0 when unknown. Without
// K slices, rounds x k-tiles x width.
double cluster_work(std::size_t i, Slicing const& sl) {
  if (sl.splits <= 0) return 0.0;
  std::int64_t const rounds = (sl.tiles * sl.splits + sl.clusters - 1) / sl.clusters;
  return double(rounds) * double((sl.k_tiles + sl.splits - 1) / sl.splits) * double(kRegistry[i].instance().tile_n);
}

// An estimate of entry i's time on that problem where K slices are in play (H100, a fit to the
// 192- and 256-wide pairs of mid-size problems run in K slices): 0.002 us per unit of cluster_work,
// plus ~2.9 us per slice per million elements of D for the partials the slices write and the
// reduction pass reads. Measured against the rounds-only rule on 98 survey and mid-size problems
// (H100, same runs): it moved only the two lines that rule had lost, 768x1024x16384 50.6 -> 48.0 us
// and 1000x384x8192 24.9 -> 22.8.
double sliced_time_us(std::size_t i, Slicing const& sl, std::int64_t m, std::int64_t n, std::int64_t batch) {
  double const reduce = sl.splits > 1 ? 2.9e-6 * double(sl.splits) * double(m) * double(n) * double(batch) : 0.0;
  return 0.002 * cluster_work(i, sl) + reduce;
}

// Whether entry i would read an operand of cg in place whose rows start off the L2's 32-byte
// sectors (a pitch that is a 16-byte multiple but not a 32-byte one: sm90_operand_align).
bool rows_off_sectors(std::size_t i, detail::CanonicalGemm const& cg, std::int64_t batch) {
  Sm90Instance const t = kRegistry[i].instance();
  auto const off = [&](OperandView const& v) {
    auto const read = [&](int align) {
      return sm90_operand_read(reinterpret_cast<std::uintptr_t>(v.ptr), v.row_stride, v.k_stride, v.batch_stride, batch,
                               t.element_bytes, t.mn_major, align);
    };
    return read(16) != Sm90OperandRead::staged && read(32) == Sm90OperandRead::staged;
  };
  return off(cg.a) || off(cg.b);
}

// Whether entry i's cluster tiles would keep less than half of its resident clusters busy: a small
// problem for it.
bool fills_under_half(GpuModel const& gpu, std::size_t i, std::int64_t m, std::int64_t n, std::int64_t batch) {
  return 2 * cluster_tiles(i, m, n, batch) < gpu.resident(i);
}

// Whether entry i reads both operands of cg where they lie: K-major ones always, MN-major ones
// only if the kernel takes them (its instance's mn_major; the others stage them first).
bool reads_in_place(std::size_t i, detail::CanonicalGemm const& cg) {
  return kRegistry[i].instance().mn_major || (cg.a.k_stride == 1 && cg.b.k_stride == 1);
}

// Where the heuristic would take 128x64 tiles (entry first + kTile64) for a D wider and taller than
// 64: the 64x64 tiles of the skinny kernel instead (one consumer warpgroup, 12 stages), when they
// fit one round and, with their K slices, put at least 1.5 times as many CTAs to work. On these
// latency-bound problems the count of CTAs streaming decides. H200, bench_api_overhead, GPU time
// per call queued: 256x192x1000 6.2 us against 8.1, 128x384x1024 6.0 against 6.8, 1536x192x2048 9.1
// against 11.7, 192x128x16384 9.7 against 10.6, 768x384x3000 14.3 against 15.4 (on 128x128 in 2x1
// clusters); not where the 128x64 tiles' slices put more to work (1024x192x3000: 48 CTAs against
// 128, 12.8 us against 11.9) or the 64x64 tiles need two rounds (1024x1024x4096 28.4 against 21.8).
std::size_t narrow_tile(GpuModel const& gpu, std::size_t first, std::int64_t m, std::int64_t n, std::int64_t batch,
                        std::int64_t k, detail::CanonicalGemm const& cg) {
  std::size_t const small = first == 0 ? kTile64x64 : kTile64x64F16;
  if (tile_rounds(gpu, small, m, n, batch) != 1 || !reads_in_place(small, cg)) return first + kTile64;
  bool const more = 2 * busy_ctas(gpu, small, m, n, batch, k) >= 3 * busy_ctas(gpu, first + kTile64, m, n, batch, k);
  return more ? small : first + kTile64;
}

// Where the heuristic would take 128x64 tiles (entry first + kTile64, or what narrow_tile made of
// it) for a D two or four tile columns wide: each column reads every strip of the long operand. In
// 1x2 clusters the two CTAs of a tile row multicast halves of that strip, so it leaves L2 half as
// often (where their cluster tiles fit one round).
// Two columns (a D 65 to 128 wide): on a GPU with fast HBM (>= 4 TB/s: the H200), and a long
// operand of at least 2^25 elements (64 MiB). Same runs, by name against the 1x1 kernel, ratios to
// cuBLAS:
//   H200: 128x8192x8192 0.92 against 0.80, fp16 0.91-0.92 against 0.80-0.81, 128x8192x16384 0.92
//         against 0.79-0.80, 128x8192x4096 0.87 against 0.80-0.82, 128x4096x8192 0.84 against
//         0.78-0.79, 128x4096x14336 0.88-0.89 against 0.80-0.81, 96x8192x8192 0.87 against 0.82;
//         even at 2^24 elements (128x4096x4096, 128x2048x8192), slower below (128x6000x4096 0.73
//         against 0.78; bench_api_overhead, GPU time queued: 128x8192x1024 8.6 us against 7.4,
//         128x2048x4096 11.6 against 10.8, 100x4500x700 15.5 against 14.9).
//   H100: slower everywhere measured (128x8192x8192 0.94-0.95 against 0.96-0.97, 128x6000x4096
//         0.87 against 0.92): its HBM, not the L2, bounds these problems.
// Four columns (a D 193 to 256 wide, which takes 128x64 tiles as a small problem with K < 8192):
// each strip leaves L2 four times instead of twice. The clusters pay on both GPUs from 2^24
// elements with K up to 4096 (same runs): 256x4096x4096 on the H100 0.83-0.85x cuBLAS against
// 0.76-0.80 (GPU time queued 21.1-21.4 us against 24.1), on the H200 0.86-0.88 against 0.81-0.82,
// fp16 alike; a batch of 2 of 256x2048x4096 0.82-0.83 against 0.73-0.74 (H100), 0.83-0.84 against
// 0.74-0.76 (H200). Not with a longer K, where the GPUs part (256x4096x6144: H200 0.81-0.82 against
// 0.87-0.88, and 256x3072x6144 0.71 against 0.77; H100 0.93-0.94 against 0.78 -- one reading each),
// nor with three columns (H100: 192x4096x4096 21 us queued against 18.6, the fourth CTA of each
// pair of clusters idling), nor below 2^24 (256x2048x4096 even on both).
std::size_t shared_strip(GpuModel const& gpu, std::size_t pick, std::size_t first, std::int64_t m, std::int64_t n,
                         std::int64_t batch, std::int64_t k) {
  std::size_t const clustered = kTile64C1x2 + (first == 0 ? 0 : 1);
  std::int64_t const long_operand = m * batch * k;
  bool const two_columns = n > 64 && n <= 128 && long_operand >= (std::int64_t(1) << 25) &&
                           gpu.hbm_bytes_per_s() >= kFastHbmBytesPerS;
  bool const four_columns = n > 192 && n <= 256 && long_operand >= (std::int64_t(1) << 24) && k <= 4096;
  if (pick != first + kTile64 || !(two_columns || four_columns) || tile_rounds(gpu, clustered, m, n, batch) != 1)
    return pick;
  return clustered;
}

// An fp32 D with K of 2048 or more on 64-wide tiles (128x64 in either cluster shape, or 64x64) for
// a D at most 128 wide or tall: the tiles' promoted sibling where it reads both operands in place
// (the 16-wide tiles always promote). Skinny (below in sm90_select_gemm_kernel) and 65 to 128 wide
// or tall: unsplit, the tensor core's own sum read 5x cuBLAS's error there too (H200: 112x8192x4100
// 5.4e-7 on the 1x2 kernel against cuBLAS's 1.1e-7, fp16 6.1e-7 against 1.5e-7; the GPU test
// Sm90Sweep.TwoTileColumnsShareTheLongOperand). The 1x2 kernel's sibling keeps its clusters: H200,
// 128x8192x8192, 0.89x cuBLAS against the promoted 1x1 kernel's 0.82 (the fast 1x2 kernel 0.95, at
// cuBLAS's own error there).
std::size_t promoted_for_long_k(std::size_t pick, GemmArguments const& g, detail::CanonicalGemm const& cg) {
  if (g.c_type != DType::f32 || g.k < 2048) return pick;
  std::size_t sibling = 0;
  if (pick == kTile64x64 || pick == kTile64x64F16)
    sibling = kTile64x64Promoted;
  else if (pick == kTile64 || pick == kFp16Entries + kTile64)
    sibling = kTile64Promoted;
  else if (pick == kTile64C1x2 || pick == kTile64C1x2 + 1)
    sibling = kTile64PromotedC1x2;
  else
    return pick;
  sibling += g.a_type == DType::bf16 ? 0 : 1;
  return reads_in_place(sibling, cg) ? sibling : pick;
}

// The heuristic: a pure function of the problem and what gpu says of the GPU.
GemmKernelInfo const* select(GemmArguments const& g, GpuModel const& gpu) {
  bool const col_d = g.c_order == MatrixOrder::col_major;
  std::int64_t const m = col_d ? g.n : g.m, n = col_d ? g.m : g.n;  // of the canonical D
  // fp8 (H100, bench/results/fp8-h100.json): 256-wide tiles promoted after every
  // k-tile, 0.93-0.94x cuBLASLt at 8192^3 with cuBLASLt's error (every 256 products by name:
  // 0.95-0.96x, but up to 1.6x its error measured, and the default must stay within 2x everywhere);
  // 192-wide tiles 0.913x, 128-wide 0.835x, both with more L2 traffic per product); a D at most
  // 128 wide takes the 128-wide tile.
  // Small fp8 problems (the 256-wide tiles in 2x1 clusters would fill less than half the GPU) with
  // K below 8192 take the 128-wide tiles where those fit one round (H100, same run:
  // 1024^3 0.70x cuBLASLt against 0.53, 512^3 0.63 against 0.50; 2048^3 stays: 0.88 against 0.81).
  std::int64_t const batch = g.batch_count;
  if (is_fp8(g.a_type) && is_fp8(g.b_type)) {
    if (g.scale_mode == ScaleMode::block) return &entries()[kFp8BlockScaled];  // the only kernel with block scales
    bool const small =
        g.k < 8192 && fills_under_half(gpu, kFp8Entry, m, n, batch) && tile_rounds(gpu, kFp8Narrow, m, n, batch) == 1;
    return &entries()[n <= 128 || small ? kFp8Narrow : kFp8Entry];
  }
  // tf32: the 128x256 tiles in 2x1 clusters wherever they fill at least half the SMs' first round,
  // or K is long enough for their split-K to put the SMs to work; smaller problems with a short K,
  // and narrow ones, keep the sm80 tf32 kernels (64x64 tiles, many CTAs). H100, same runs:
  // 1024x1024x4096 1.01x cuBLAS against 0.53 for the sm80 pick; 1024^3 0.62 against 0.74 and 512^3
  // 0.42 against 0.75 for sm80_tf32_64x64x32 (a 128x128 tf32 entry measured between them, 0.71 and
  // 0.78, and was not kept).
  if (g.a_type == DType::tf32 && g.b_type == DType::tf32) {
    bool const takes = m > 128 && n > 128 && (!fills_under_half(gpu, kTf32Entry, m, n, batch) || g.k >= 4096);
    return takes ? &entries()[kTf32Entry] : nullptr;
  }
  if (g.a_type != DType::bf16 && g.a_type != DType::f16) return nullptr;
  std::size_t const first = g.a_type == DType::bf16 ? 0 : kFp16Entries;
  detail::CanonicalGemm const cg = detail::canonical_gemm(g);
  // Measured on the H100, the sm90 suite: 128x256 tiles in 2x1 clusters are the fastest per tile
  // (the 1x1 kernel's tile takes 1.09x as long at 4096^3, 1.2x at 8192^3), except on a single tile
  // row (the cluster's second CTA idles) and a single tile column narrower than 129 (half of every
  // 256-wide B tile is padding: 128x8192x8192 runs in 68 us with 128x128, 103 us with 128x256); a D
  // at most 64 wide takes 64-wide tiles and a deep pipeline.
  if (n <= 64 || m <= 64) {
    // Skinny: memory-bound; the long side of `rows` canonical rows (a D at most 64 rows tall runs
    // as the swapped problem, sm90_swaps_problem). The 64-row tiles (one consumer warpgroup) put up
    // to twice as many CTAs on the long operand as 128-row tiles; they are taken where they fit one
    // round on the SMs and the 128-row tiles would not split K, or K is short. H100, same runs:
    // 16x8192x8192 52-53 us on 128 CTAs of 64x64 against 53-57 us on 64 CTAs of 128x64;
    // 16x6144x8192 47 against 49; 16x4096x4096 21 against 24-25 (128x64 in 4 K slices); but
    // 16x4096x8192 41 against 37 and 16x4096x14336 63 against 55 (4 slices of 128x64 stream on
    // every SM and K is long enough to pay for the reduction); with more than one round 128x64
    // (16x28672x8192: 162 us against 177).
    // At most 16 wide, 16-wide tiles: a stage then carries 2 KiB of the narrow operand instead of
    // 8, and 21 stages keep 1.75x the long operand's bytes in flight (H200, same runs: 16x8192x8192
    // 40 us against 50, 16x4096x4096 16 against 20; H100 51.6 against 52.6). Their operands must be
    // K-major: an MN-major one is staged (16 rows are not a 64-row TMA box), which cost
    // 16x8192x8192 `nt` 173 us against 56 in place.
    std::int64_t const rows = n <= 64 ? m : n, side = n <= 64 ? n : m;
    bool const bf16 = g.a_type == DType::bf16;
    std::size_t const narrow16 = bf16 ? kTile64x16 : kTile64x16F16;
    std::size_t const narrow = side <= 16 && reads_in_place(narrow16, cg)
                                   ? narrow16
                                   : (bf16 ? kTile64x64 : kTile64x64F16);
    int const narrow_clusters = gpu.resident(narrow), clusters = gpu.resident(first + kTile64);
    bool const known = narrow_clusters > 0 && clusters > 0;
    std::int64_t const tiles64 = (rows + 63) / 64 * g.batch_count, tiles128 = (rows + 127) / 128 * g.batch_count;
    int const k_tiles = int(std::min<std::int64_t>((g.k + 63) / 64, INT_MAX));
    double const hbm = gpu.hbm_bytes_per_s();
    int const wide_slices = k_slices(kRegistry[first + kTile64].instance(), tiles128, k_tiles, clusters, m, n, hbm);
    bool const wide_splits_k = wide_slices > 1;
    // The 16-wide tiles take the long K themselves where they fill at least 45% of the SMs (60-66
    // tiles on 132; ratios to cuBLAS, same runs, the 64x16 kernel by name against the heuristic's 4
    // slices of 128x64): 16x4096x8192 0.96 against 0.86 on the H100 (with its in-flight limit),
    // 0.94 against 0.85 on the H200; 16x4096x14336 0.92 against 0.91 and 0.87 against 0.86. (On
    // the H200 they now split it in 2 themselves, sm90_choose_splits: 0.94 at both.)
    bool const narrow_keeps_k = narrow == narrow16 && 100 * tiles64 >= 45LL * narrow_clusters;
    // Where both split K, the 64-row tiles also where their slices put at least as many CTAs to
    // work: few tiles with a very long K, where the 128-row tiles gain no CTAs and pad half of each
    // tile of a D 64 rows long, or put half as many to work (H200, GPU time queued, the 64x64
    // kernel against 128x64, both in 32 slices: 64x64x65536 13.1 us against 17.4, 64x128x65536
    // 13.3 against 15.3).
    bool const narrow_as_busy =
        known && tiles64 * k_slices(kRegistry[narrow].instance(), tiles64, k_tiles, narrow_clusters, m, n, hbm) >=
                     std::min<std::int64_t>(tiles128, clusters) * wide_slices;
    bool const narrow_pays =
        tiles64 <= narrow_clusters && (!wide_splits_k || k_tiles < 128 || narrow_keeps_k || narrow_as_busy);
    std::size_t const pick = known && narrow_pays ? narrow : first + kTile64;
    // An fp32 D with K of 2048 or more: the 64-wide tiles' promoted siblings (H100: summed in the
    // tensor core, 65-129 k-tiles read 3-15x cuBLAS's error; promoted 3.3e-8 against cuBLAS's
    // 1.1e-7 at 40x4000x4100, at the same speed) -- where both operands are K-major: they stage an
    // MN-major one, which cost 32x8192x8192 nt 3x its time. (The 16-wide tiles always promote.)
    return &entries()[promoted_for_long_k(pick, g, cg)];
  }
  // A D 65 to 128 wide or tall, still memory-bound: the 128x64 tiles, where they fit one round on
  // the SMs and fill most of them or K is short, put twice as many CTAs on the long operand as
  // 128x128 ones (H100, same run: 128x8192x8192 0.955x cuBLAS against 0.83 on 128x128 in 2x1
  // clusters; 8192x128x8192 0.966 against 0.83 on 128x256; 128x4096x4096 0.77 against 0.61).
  // With a long K, 128x64 also where its tiles in their K slices put at least as many CTAs to work
  // as the wider tiles in theirs, or half as many with K at most 8192, where the unsplit tiles
  // finish before the slices' reduction pass pays; else the wider tiles in slices (H100:
  // 128x4096x14336 0.90x cuBLAS on 128x128 in slices against 0.83 on 64 unsplit 128x64 tiles; those
  // 64 tiles take 2 slices, below). H100, bench_api_overhead, GPU time per call queued back to
  // back: 128x128x8192 8.7 us in 16 slices of 128x64 against 17.6 in 8 of 128x256, 128x128x65536
  // 21.8 against 46.1, 1024x128x8192 11.7 against 17.7; against 128x128 in 2x1 clusters,
  // 128x1024x8192 13.2 against 14.0, 128x2048x8192 (128 CTAs either way) 20.0 against 21.8. The 64
  // tiles of 128x4096 take 2 slices since their D is not skinny (sm90_choose_splits): 128x4096x8192
  // 33.4 against 36.8, 128x4096x14336 51.1-51.6 against 54.2-54.4 (cuBLAS 52.9-53.5),
  // 4096x128x14336 50.3 against 60.5 on 128x256, 128x2048x16384 33.6 against 37.6; 128x4096x32768
  // 106.1 against 104.0-104.5.
  if (m <= 128 || n <= 128) {
    std::int64_t const tiles = cluster_tiles(first + kTile64, m, n, batch), ctas = gpu.resident(first + kTile64);
    auto const narrowest = [&] {
      std::size_t const tile = narrow_tile(gpu, first, m, n, batch, g.k, cg);
      std::size_t const pick = shared_strip(gpu, tile, first, m, n, batch, g.k);
      return &entries()[promoted_for_long_k(pick, g, cg)];
    };
    if (tiles <= ctas && (4 * tiles >= 3 * ctas || g.k < 128 * 64)) return narrowest();
    std::size_t const wide = first + (m <= 128 ? kTile256 : kTile128C2);
    std::int64_t const narrow = busy_ctas(gpu, first + kTile64, m, n, batch, g.k);
    std::int64_t const other = busy_ctas(gpu, wide, m, n, batch, g.k);
    if (tiles <= ctas && (narrow >= other || (g.k <= 8192 && 2 * narrow >= other))) return narrowest();
    return &entries()[wide];
  }
  // Small problems (the 128x256 tiles in 2x1 clusters fill less than half the GPU) with a K short
  // enough to do without slices: 128x64 tiles where they fit one round, else 128x128 in 2x1
  // clusters where those do (H100, same runs: 1024^3 12 us against 29 on 128x256 in 4 slices and 19
  // unsplit; 512^3 9 against 18; 1024x1024x4096 0.675x cuBLAS against 0.48 in 4 slices;
  // 1024x2048x1024 on 128x128 0.775 against 0.60; 1024x1024x8192 even, so not from there).
  // Operand rows off the L2's 32-byte sectors (read in place below sm90_operand_align's size) cost
  // the 128x64 tiles most: 128x128 in 2x1 clusters instead where those fit one round and put as
  // many CTAs to work (H100, bench_api_overhead, GPU time per call queued: 1024x1024x3000,
  // 6000-byte rows, 31.4 us on 128x64 against 24.4 -- cuBLAS 18.3 --; 768x384x3000 17.8 against
  // 15.8-16.2; 4096x192x3000 27.7-28.1 against 20.8-21.0). Not with fewer: 192x192x3000 8.6 us in
  // 11 slices of 128x64 against 15.2 on 4 CTAs, 1024x192x3000 12.4 against 15.1.
  if (g.k < 8192 && fills_under_half(gpu, first + kTile256C2, m, n, batch)) {
    bool const narrow_fits = tile_rounds(gpu, first + kTile64, m, n, batch) == 1;
    if (narrow_fits) {
      std::size_t const narrowest = narrow_tile(gpu, first, m, n, batch, g.k, cg);
      if (narrowest != first + kTile64) return &entries()[narrowest];
    }
    if (narrow_fits && rows_off_sectors(first + kTile128C2, cg, batch) &&
        tile_rounds(gpu, first + kTile128C2, m, n, batch) == 1 &&
        busy_ctas(gpu, first + kTile128C2, m, n, batch, g.k) >= busy_ctas(gpu, first + kTile64, m, n, batch, g.k))
      return &entries()[first + kTile128C2];
    if (narrow_fits) return &entries()[shared_strip(gpu, first + kTile64, first, m, n, batch, g.k)];
    if (tile_rounds(gpu, first + kTile128C2, m, n, batch) == 1) return &entries()[first + kTile128C2];
  }
  // With a long K, 128x64 where its K slices put more CTAs to work than either clustered tile's
  // (H100, same runs: 256x256x8192 11.1 us in 16 slices of 128x64 against 12.7 on 128x128 in 2x1
  // clusters in 8). Where they tie the wider tiles stay (256x1024x8192 18.0 against 19.0 on 128x64,
  // 1024x1024x8192 41.1 against 46.3, 512x512x8192 18.1 against 18.8).
  if (g.k >= 8192 && fills_under_half(gpu, first + kTile256C2, m, n, batch) &&
      tile_rounds(gpu, first + kTile64, m, n, batch) == 1) {
    std::int64_t const narrow = busy_ctas(gpu, first + kTile64, m, n, batch, g.k);
    if (narrow > busy_ctas(gpu, first + kTile128C2, m, n, batch, g.k) &&
        narrow > busy_ctas(gpu, first + kTile256C2, m, n, batch, g.k))
      return &entries()[narrow_tile(gpu, first, m, n, batch, g.k, cg)];
  }
  // 129 to 256 wide or tall: 128x128 tiles in 2x1 clusters where they fit one round, rather than
  // 128x256 ones on half as many SMs (H100, same runs: 256x8192x8192 0.907x cuBLAS against 0.755;
  // 192x8192x8192 0.88 against 0.76 once the shares past the edge were no longer zero-filled by TMA,
  // kernel/sm90_gemm_producer.hpp -- before, 0.68).
  if (((n > 128 && n <= 256) || (m > 128 && m <= 256)) && tile_rounds(gpu, first + kTile128C2, m, n, batch) == 1)
    return &entries()[first + kTile128C2];
  // Where the 2x1 clusters leave the last round nearly empty (4097 rows: 17 cluster rows of 256,
  // the last with one row in it, 5 rounds on 66 clusters where 128-row tiles need 4 on 132 SMs),
  // 1x2 clusters pair the tile columns instead (33 x 8 cluster tiles: 4 rounds); where both do,
  // the 1x1 kernel may finish first.
  std::int64_t const c2 = tile_rounds(gpu, first + kTile256C2, m, n, batch);
  std::int64_t const c1x2 = tile_rounds(gpu, first + kTile256C1x2, m, n, batch);
  std::int64_t const single = tile_rounds(gpu, first + kTile256, m, n, batch);
  if (c2 <= 0 || c1x2 <= 0 || single <= 0) return &entries()[first + kTile256C2];
  std::size_t const cluster = c1x2 < c2 ? kTile256C1x2 : kTile256C2;
  // A round of 1x1 tiles is taken to cost 1.15 rounds of cluster tiles (the clusters' CTAs share
  // one operand's loads by multicast): the 1x1 kernel only where its rounds are that much fewer.
  constexpr double kSingleTileRoundCost = 1.15;
  if (double(single) * kSingleTileRoundCost < double(std::min(c2, c1x2))) return &entries()[first + kTile256];
  // 192-wide tiles in 2x1 clusters where their rounds, of tiles 3/4 as long, take less than 0.9 of
  // the 256-wide ones' (H100, same runs: 1536^3 25 -> 21 us, 1536x4096x4096 0.79 -> 0.97x cuBLAS,
  // 768x4096x4096 0.74 -> 0.93, 2304^3 0.67 -> 0.85, 3072^3 97 -> 90 us; where the rounds say no it
  // lost: 2048^3 0.88 -> 0.71, 4096^3 1.00 -> 0.89, 1024x8192x8192 0.98 -> 0.87; 5120^3 and
  // 1536x8192x8192, near the line, even). Only where it reads the operands in place (a cluster
  // CTA's 96-row share is not whole 64-row MN-major boxes: it stages those), C is unread and D
  // takes TMA stores (it has neither the C-by-TMA nor the row-copy epilogue).
  // The rounds count units with their K slices (cluster_work): where the 256-wide tiles take more
  // slices, their rounds are as many but shorter (H100, bench_api_overhead, GPU time per call
  // queued: 1024x1024x16384 68.9 us on 192-wide tiles in 2 slices against 58.6 on 256-wide in 4;
  // 1000x1024x16384 69.2 against 58.5; 512x1536x16384 53.3 against 50.7; 1024x1024x8192 41.1
  // against 38.8 -- and where the work says 192, 192 stayed ahead: 384x2048x16384 51.2 against
  // 55.9, 1536x1024x16384 77.3 against 89.9). That rule lost 768x1024x16384, whose 192-wide work is
  // 0.92 of the 256-wide tiles', 48.2 -> 50.8, and 1000x384x8192 22.4 -> 25.0: it left out the
  // extra slices' reduction. So where either side slices K, sliced_time_us (work plus a reduction
  // term) decides instead; it took both back (48.0 and 22.8 us) and moved no other line of the
  // 98-problem A/B.
  std::size_t const wide192 = g.a_type == DType::bf16 ? kTile192C2 : kTile192C2F16;
  constexpr double kWide192Tenths = 9.0;  // 192-wide where its work is under 9/10 of the 256-wide tiles' (exact in tenths)
  Slicing const s192 = slicing(gpu, wide192, m, n, batch, g.k);
  Slicing const s256c2 = slicing(gpu, first + kTile256C2, m, n, batch, g.k);
  Slicing const s256c1x2 = slicing(gpu, first + kTile256C1x2, m, n, batch, g.k);
  double const work256c2 = cluster_work(first + kTile256C2, s256c2), work256c1x2 = cluster_work(first + kTile256C1x2, s256c1x2);
  bool const c2_less = work256c2 <= work256c1x2;
  std::size_t const wide256 = first + (c2_less ? kTile256C2 : kTile256C1x2);
  Slicing const& s256 = c2_less ? s256c2 : s256c1x2;
  double const work192 = cluster_work(wide192, s192), work256 = std::min(work256c2, work256c1x2);
  bool const sliced = s192.splits > 1 || s256.splits > 1;
  if (work192 > 0.0 &&
      (sliced ? sliced_time_us(wide192, s192, m, n, batch) < sliced_time_us(wide256, s256, m, n, batch)
              : kWide192Tenths * work256 > 10.0 * work192) &&
      d_tma_storable(g) && reads_in_place(wide192, cg))
    return &entries()[wide192];
  // 128x128 in 2x1 clusters where they do the 256-wide tiles' work per cluster in one pass and
  // those would need K slices (H100, same measure: 1024x2048x8192 48.2 us against 57.7 in 2 slices;
  // 1024x2048x16384 92.0 against 98.0). C unread: this kernel adds C from registers.
  if (Slicing const s128 = slicing(gpu, first + kTile128C2, m, n, batch, g.k),
      s_cluster = cluster == kTile256C2 ? s256c2 : s256c1x2;
      !gemm_reads_c(g) && s128.splits == 1 && s_cluster.splits > 1 &&
      cluster_work(first + kTile128C2, s128) <= cluster_work(first + cluster, s_cluster))
    return &entries()[first + kTile128C2];
  // bf16 in 2x1 clusters with a TMA-stored D: 4 stages and the two-slab epilogue (H100, same runs,
  // against the 3-stage kernel: 4096^3 0.981 vs 0.959 and 0.967 vs 0.956, 8192^3 1.028 vs 1.008 and
  // 0.995 vs 1.018, 8192x28672x4096 0.984 vs 0.977). It has no copy warps, so a D that TMA cannot
  // store stays on _c2.
  if (cluster == kTile256C2 && g.a_type == DType::bf16 && d_tma_storable(g)) return &entries()[kTile256C2S4];
  // C read, and TMA can load it and store D: the kernel that loads C into its staging buffer during
  // the mainloop (H100, 8192x8192x2048 with beta = 1: 0.89x cuBLAS against 0.60x from registers).
  if (cluster == kTile256C2 && c_tma_loadable(g))
    return &entries()[g.a_type == DType::bf16 ? kTile256C2TmaC : kTile256C2TmaCF16];
  return &entries()[first + cluster];
}

}  // namespace

std::span<GemmKernelInfo const> sm90_gemm_kernels() { return entries(); }

GemmKernelInfo const* sm90_select_gemm_kernel(GemmArguments const& g) { return select(g, GpuModel{}); }

GemmKernelInfo const* sm90_select_gemm_kernel(GemmArguments const& args, std::span<int const> resident_clusters,
                                              double hbm_bytes_per_s) {
  if (resident_clusters.empty()) return select(args, GpuModel{});
  return select(args, GpuModel{resident_clusters, hbm_bytes_per_s});
}

int sm90_cluster_size(GemmKernelInfo const& k) {
  std::size_t const i = entry_index(k);
  if (i >= kRegistry.size()) return -1;
  Sm90Instance const t = kRegistry[i].instance();
  return t.cluster_m * t.cluster_n;
}

std::optional<Sm90KernelShape> sm90_kernel_shape(GemmKernelInfo const& k) {
  std::size_t const i = entry_index(k);
  if (i >= kRegistry.size()) return std::nullopt;
  Sm90Instance const t = kRegistry[i].instance();
  return Sm90KernelShape{t.tile_m, t.tile_n, t.tile_k, t.cluster_m, t.cluster_n, t.stages, t.threads, t.smem_bytes};
}

bool sm90_is_block_scaled(GemmKernelInfo const& k) {
  std::size_t const i = entry_index(k);
  return i < kRegistry.size() && kRegistry[i].instance().block_scaled;
}

bool sm90_is_skinny(GemmKernelInfo const& k) {
  std::size_t const i = entry_index(k);
  return i < kRegistry.size() && kRegistry[i].instance().tile_n <= 64;
}

int sm90_resident_ctas(GemmKernelInfo const& k) {
  std::size_t const i = entry_index(k);
  if (i >= kRegistry.size()) return -1;
  Sm90Instance const t = kRegistry[i].instance();
  int clusters = 0;
  if (!resident_clusters(t, &clusters).ok()) return -1;
  return clusters * t.cluster_m * t.cluster_n;
}

}  // namespace tessel
