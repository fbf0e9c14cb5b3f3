// src/gemm/grouped_gemm.cpp -- the grouped GEMM host API (tessel/gemm/device/grouped_gemm.hpp): the
// contiguous form's tensor maps and launch of the sm_90a grouped kernel, and the array form as
// one tessel::gemm per group.
#include "../runtime/current_device.hpp"
#include "gemm_canonical.hpp"
#include "sm90_grouped_instances.hpp"

#include <tessel/gemm/device/gemm.hpp>
#include <tessel/gemm/device/grouped_gemm.hpp>
#include <tessel/gemm/device/sm90_operand_map.hpp>
#include <tessel/runtime/tma_descriptor.hpp>

#include <array>
#include <mutex>
#include <string>

namespace tessel {

namespace {

using detail::cuda_failure;
using kernel::Sm90GroupedGemmParams;
using kernel::detail::Sm90GroupedInstance;

static_assert(kGroupedGemmMaxGroups == kernel::kSm90GroupedMaxGroups,
              "grouped_gemm: the API's group limit must be the kernel's shared-memory table size");

Sm90GroupedInstance instance_for(DType ab) {
  return ab == DType::f16 ? kernel::detail::sm90_grouped_instance_f16() : kernel::detail::sm90_grouped_instance_bf16();
}

// A 3-D (inner, rows, batches) map of 16-bit elements, rows `row_stride` and batches
// `batch_stride` elements apart, with a (box_inner, box_rows, 1) box in the 128-byte swizzle: the
// GEMM's own maps (sm90_operand_map_args; the validation leaves no broadcast group, so every group
// is its own batch). not_supported, naming `what`, when they or the driver refuse it.
Status encode_map(char const* what, TmaDescriptor* desc, DType t, void const* ptr, std::int64_t inner, std::int64_t rows,
                  std::int64_t row_stride, std::int64_t batches, std::int64_t batch_stride, int box_inner, int box_rows) {
  int step = 1;
  TmaEncodeResult const e = sm90_operand_map_args(t, ptr, inner, rows, row_stride, batches, batch_stride, box_inner,
                                                  box_rows, TmaL2Promotion::L2_256B, false, &step);
  if (!e.ok()) return Status::error(StatusCode::not_supported, std::string("grouped_gemm: ") + what + "'s tensor map: " + e.error);
  if (Status s = encode_tma_descriptor(e.args, desc); !s)
    return Status::error(StatusCode::not_supported, std::string("grouped_gemm: ") + what + "'s tensor map: " + s.reason);
  return Status::success();
}

// The device is an sm_90 one and the kernel has an image for it; *sms and *ctas_per_sm filled.
// The image and the occupancy are asked once per kernel and device.
Status grouped_runs_here(DType ab, int* sms, int* ctas_per_sm) {
  detail::Here h;
  if (Status s = detail::current_device(&h); !s) return s;
  if (h.cc != 90)
    return Status::error(StatusCode::arch_mismatch, "grouped_gemm: the grouped kernel is sm_90a only (wgmma, TMA); this GPU is sm_" +
                                                        std::to_string(h.cc));
  static std::mutex mu;
  static std::array<std::array<int, 64>, 2> resident{};  // CTAs per SM, per kernel (bf16, fp16) and device (0: not asked yet)
  std::lock_guard<std::mutex> lock(mu);
  int& per_sm = resident[ab == DType::f16 ? 1 : 0][std::size_t(h.device) % 64];
  if (per_sm == 0) {
    Sm90GroupedInstance const t = instance_for(ab);
    cudaFuncAttributes attr{};
    if (cudaError_t err = t.attributes(&attr); err != cudaSuccess) {
      (void)cudaGetLastError();  // the probe's own error, reported here
      return Status::error(StatusCode::arch_mismatch, std::string("grouped_gemm: the grouped kernel has no image this GPU can run (") +
                                                          cudaGetErrorName(err) + "); rebuild tessel with CMAKE_CUDA_ARCHITECTURES including 90a");
    }
    int n = 0;
    if (cudaError_t err = t.ctas_per_sm(&n); err != cudaSuccess)
      return cuda_failure("cudaOccupancyMaxActiveBlocksPerMultiprocessor (grouped GEMM)", err);
    if (n < 1) return Status::error(StatusCode::cuda_error, "grouped_gemm: the grouped kernel cannot be resident on this GPU");
    per_sm = n;
  }
  *sms = h.sms, *ctas_per_sm = per_sm;
  return Status::success();
}

}  // namespace

Status can_implement(GroupedGemmArguments const& g) {
  if (Status s = grouped_gemm_validate(g); !s) return s;
  int sms = 0, per_sm = 0;
  return grouped_runs_here(g.ab_type, &sms, &per_sm);
}

Status grouped_gemm(GroupedGemmArguments const& g, cudaStream_t stream) {
  if (Status s = grouped_gemm_validate(g); !s) return s;
  if (grouped_gemm_is_noop(g)) return Status::success();
  Sm90GroupedInstance const t = instance_for(g.ab_type);
  int sms = 0, per_sm = 0;
  if (Status s = grouped_runs_here(g.ab_type, &sms, &per_sm); !s) return s;

  Sm90GroupedGemmParams p;
  bool const reads_ab = g.k > 0 && !(g.alpha == 0.0f);
  p.offsets = g.offsets, p.groups = g.groups;
  p.total_m = int(g.total_m), p.n = int(g.n), p.k = int(g.k);
  p.k_tiles = reads_ab ? int((g.k + t.tile_k - 1) / t.tile_k) : 0;
  p.n_tiles = int((g.n + t.tile_n - 1) / t.tile_n);
  p.b_mn_major = g.b_layout == GroupedLayoutB::kn;
  p.c = g.c, p.ldc = g.ldc, p.d = g.d, p.ldd = g.ldd;
  p.alpha = reads_ab ? g.alpha : 1.0f;  // (no products: the accumulators stay 0)
  p.beta = g.beta;
  p.out_f32 = g.d_type == DType::f32, p.out_f16 = g.d_type == DType::f16;
  std::size_t const out = size_of(g.d_type);
  p.d_pairs = reinterpret_cast<std::uintptr_t>(g.d) % (2 * out) == 0 && g.ldd % 2 == 0;

  if (reads_ab) {
    if (Status s = encode_map("A", &p.tma_a, g.ab_type, g.a, g.k, g.total_m, g.lda, 1, 0, t.tile_k, t.tile_m); !s) return s;
    Status const b = p.b_mn_major ? encode_map("B", &p.tma_b, g.ab_type, g.b, g.n, g.k, g.ldb, g.groups, g.batch_stride_b, 64, t.tile_k)
                                  : encode_map("B", &p.tma_b, g.ab_type, g.b, g.k, g.n, g.ldb, g.groups, g.batch_stride_b, t.tile_k, t.tile_n);
    if (!b) return b;
  }
  // D by TMA stores where it is 16-bit with 16-byte aligned rows and C is not read (else, or
  // should the driver refuse the map, from registers).
  bool const d16 = g.d_type != DType::f32;
  if (d16 && g.beta == 0.0f && reinterpret_cast<std::uintptr_t>(g.d) % 16 == 0 && (g.ldd * 2) % 16 == 0)
    p.tma_store = encode_map("D", &p.tma_d, g.d_type, g.d, g.n, g.total_m, g.ldd, 1, 0, 64, 64).ok();

  // Enough CTAs for every tile there can be: the groups' tile rows are at most
  // ceil(total_m / TileM) + G (each group's last one may be partial).
  long long const tiles_bound = ((g.total_m + t.tile_m - 1) / t.tile_m + g.groups) * (long long)p.n_tiles;
  long long const resident = (long long)sms * per_sm;
  int const grid = int(tiles_bound < resident ? tiles_bound : resident);
  if (cudaError_t err = t.launch(p, grid, stream); err != cudaSuccess) return cuda_failure("launch of the grouped GEMM kernel", err);
  return Status::success();
}

Status grouped_gemm(GroupedGemmArrayArguments const& g, cudaStream_t stream) {
  if (Status s = grouped_gemm_validate(g); !s) return s;
  bool const nk = g.b_layout == GroupedLayoutB::nk;
  for (int i = 0; i < g.groups; ++i) {
    if (g.m[i] == 0 || g.n[i] == 0) continue;
    // A_g row-major m x k; op(B_g) = B_g^T, K x N: column-major with ldb when B_g is n x k (nk),
    // row-major when it is k x n (kn); D_g row-major.
    GemmArguments a = make_packed_gemm(g.m[i], g.n[i], g.k[i], 1, g.ab_type, g.d_type, MatrixOrder::row_major,
                                       nk ? MatrixOrder::col_major : MatrixOrder::row_major, MatrixOrder::row_major);
    a.a = g.a[i], a.lda = g.lda[i];
    a.b = g.b[i], a.ldb = g.ldb[i];
    a.d = g.d[i], a.ldd = g.ldd[i];
    a.alpha = g.alpha, a.beta = g.beta;
    if (!(g.beta == 0.0f)) a.c = g.c[i], a.ldc = g.ldc[i];
    else a.ldc = a.ldd;
    if (Status s = gemm(a, stream); !s) {
      s.reason = "group " + std::to_string(i) + ": " + s.reason;
      return s;
    }
  }
  return Status::success();
}

}  // namespace tessel
