// tessel/gemm/device/sm90_gemm_kernels.hpp -- the sm_90a (Hopper) GEMM kernels as registry entries.
//
// TMA + wgmma, warp-specialized (one producer warpgroup, two consumer warpgroups sharing a
// 128 x 256 or 128 x 128 tile -- or, in the ping-pong entry, taking 128 x 128 tiles in turn),
// persistent, optionally in 2x1 clusters that multicast B
// (tessel/gemm/kernel/sm90_gemm_warpspecialized.hpp, sm90_gemm_pingpong.hpp), for bf16 and fp16 inputs with fp32 or
// same-type output. Every entry takes any M, N, K, leading dimensions, strides, operand orders and
// batch count, like the sm_80 entries (sm80_gemm_kernels.hpp): a column-major D is computed as
// D^T = B^T A^T; an operand that is not K-major, or whose pointer, leading dimension or batch
// stride is not a multiple of 16 bytes (TMA's rule), is first copied into a K-major aligned buffer;
// D leaves by TMA stores where it can, else by any-alignment stores (sm90_gemm_warpspecialized.hpp).
// fp8 e4m3 x e4m3 entries take a_scale and b_scale. The images exist for sm_90a
// only: on any other GPU the registry reports arch_mismatch instead of launching.
#pragma once

#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/gemm/device/gemm_registry.hpp>
#include <tessel/core/status.hpp>

#include <cuda_runtime_api.h>

#include <optional>
#include <span>

namespace tessel {

// The entries, bf16 first, then fp16.
std::span<GemmKernelInfo const> sm90_gemm_kernels();

// The entry the sm_90a heuristic runs for `args` (validated), or nullptr when no sm_90a kernel
// takes its dtypes.
GemmKernelInfo const* sm90_select_gemm_kernel(GemmArguments const& args);

// The same choice on an assumed GPU, without asking the device: `resident_clusters[i]` clusters
// of entry i of sm90_gemm_kernels() fit on it at once (0, or an entry past the span's end: not
// known, as when the device query fails), and its HBM moves `hbm_bytes_per_s` (0: not known; the
// choices of a GPU below 4 TB/s, the H100's). On a 132-SM H100 or H200 each entry holds one CTA
// per SM, so 132 / sm90_cluster_size; the H100 SXM's HBM3 is 3.35e12 bytes/s, the H200's HBM3e
// 4.8e12. For tests and for planning on a machine without the GPU. (An empty span: the device's.)
GemmKernelInfo const* sm90_select_gemm_kernel(GemmArguments const& args, std::span<int const> resident_clusters,
                                              double hbm_bytes_per_s = 0.0);

// CTAs in one cluster of sm_90a entry `k` (1, or 2 for the 2x1 and 1x2 entries); -1 when `k` is
// not an sm_90a entry.
int sm90_cluster_size(GemmKernelInfo const& k);

// CTAs of sm_90a entry `k` resident at once on the current GPU (its persistent grid): resident
// clusters times the cluster size. -1 when `k` is not an sm_90a entry or the query fails.
int sm90_resident_ctas(GemmKernelInfo const& k);

// Whether `k` is one of the sm_90a skinny entries (tiles at most 64 wide, streaming the long
// operand of a D at most 64 wide or tall); false for any other entry.
bool sm90_is_skinny(GemmKernelInfo const& k);

// Whether `k` is the sm_90a block-scaled fp8 entry (GemmArguments::scale_mode block runs there
// and only there); false for any other entry.
bool sm90_is_block_scaled(GemmKernelInfo const& k);

// The configuration an sm_90a registry entry was compiled with, read from its instance (the
// registry's `tile` text states it; a host test holds the two together). nullopt for other entries.
struct Sm90KernelShape {
  int tile_m, tile_n, tile_k;
  int cluster_m, cluster_n;
  int stages;
  int threads;     // 128 per warpgroup: the producer and the consumers
  int smem_bytes;  // dynamic shared memory of a CTA
};
std::optional<Sm90KernelShape> sm90_kernel_shape(GemmKernelInfo const& k);

}  // namespace tessel
