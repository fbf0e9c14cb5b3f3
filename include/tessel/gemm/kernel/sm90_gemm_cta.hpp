// tessel/gemm/kernel/sm90_gemm_cta.hpp -- what the sm_90a GEMM kernels' CTAs share, whatever the
// schedule (cooperative: kernel/sm90_gemm_warpspecialized.hpp, ping-pong: kernel/sm90_gemm_pingpong.hpp):
// the named barriers their warpgroups meet at, where a CTA's tile starts in its cluster tile, and
// which k-tiles a work unit covers.
#pragma once

#include <tessel/config.hpp>
#include <tessel/schedule/gemm_coord.hpp>

namespace tessel::kernel::detail {

// Named barriers (0 is __syncthreads): a consumer's own 128 threads; and the handoff of consumer
// c's staging buffer to its copy warp (a D that TMA cannot store; warp 2 + c of the producer
// warpgroup), 160 threads, both sides waiting (barrier.sync, not .aligned: the two roles meet
// through different instructions): `drained` (the copy warp has read the previous
// tile out of the buffer) before the consumer writes it, `staged` (the tile is in it) after.
TESSEL_HOST_DEVICE constexpr int sm90_consumer_barrier(int consumer) { return 1 + consumer; }
TESSEL_HOST_DEVICE constexpr int sm90_drained_barrier(int consumer) { return 3 + consumer; }
TESSEL_HOST_DEVICE constexpr int sm90_staged_barrier(int consumer) { return 5 + consumer; }
inline constexpr int kSm90HandoffThreads = 128 + 32;

// The ping-pong schedule's order barriers (kernel/sm90_gemm_pingpong.hpp): consumer c may start
// its next mainloop once the other consumer has issued its own; 256 threads, the other
// consumer's 128 arriving (barrier.arrive) and consumer c's 128 waiting (barrier.sync).
TESSEL_HOST_DEVICE constexpr int sm90_order_barrier(int consumer) { return 7 + consumer; }
inline constexpr int kSm90OrderThreads = 128 + 128;

// The first row and column of CTA `cta_rank`'s tile in cluster tile `tile`: a cluster covers
// ClusterM consecutive tile rows or ClusterN consecutive tile columns.
template <class Config>
struct Sm90TileOrigin {
  int m0, n0;
  TESSEL_DEVICE Sm90TileOrigin(GemmCoord const& tile, int cta_rank)
      : m0(int((tile.m() * Config::ClusterM + (Config::ClusterM > 1 ? cta_rank : 0)) * Config::TileM)),
        n0(int((tile.n() * Config::ClusterN + (Config::ClusterN > 1 ? cta_rank : 0)) * Config::TileN)) {}
};

// The k-tiles [begin, end) of K slice `split` of `splits` (parallel split-K; splits == 1: all
// k_tiles), in whole blocks of `block` k-tiles (an fp8 kernel's promotion blocks; 1 otherwise).
// Consecutive slices partition [0, k_tiles) -- or, when block does not divide k_tiles, [0, k_tiles
// rounded up to a block): the last block reaches past K, where TMA reads zeros. None is empty when
// splits <= k_tiles / block (the host's rule). 64-bit products: k_tiles may approach 2^31.
struct Sm90KRange {
  int begin, end;
};
TESSEL_HOST_DEVICE constexpr Sm90KRange sm90_k_range(int k_tiles, int splits, int split, int block = 1) {
  int const blocks = (k_tiles + block - 1) / block;
  if (splits == 1) return {0, block * blocks};
  return {block * int(static_cast<long long>(split) * blocks / splits),
          block * int(static_cast<long long>(split + 1) * blocks / splits)};
}

}  // namespace tessel::kernel::detail
