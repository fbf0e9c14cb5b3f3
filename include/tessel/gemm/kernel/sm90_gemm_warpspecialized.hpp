// tessel/gemm/kernel/sm90_gemm_warpspecialized.hpp -- the sm_90a GEMM: TMA + wgmma, warp-specialized,
// persistent, cooperative, optionally in clusters with TMA multicast.
//
// sm90_gemm_kernel<Config>(Sm90GemmParams) (kernel/sm90_gemm_params.hpp), 384 threads:
//   warpgroup 0, the producer: its registers lowered (setmaxnreg), one thread walks the tiles of
//       this CTA and, per k-tile, waits for a free pipeline stage and issues the TMA copies of the
//       A tile (TileM x TileK) and the B tile (TileN x TileK) into it (pipeline/sm90_pipeline.hpp).
//       In a cluster of ClusterM CTAs (consecutive tile rows, one tile column), CTA r copies rows
//       [r, r+1) * TileN / ClusterM of the B tile and multicasts them to every CTA of the cluster:
//       each B byte is read from L2 once per cluster.
//   warpgroups 1 and 2, the consumers (cooperative: one tile, 64 rows each): per k-tile they wait
//       for the stage, issue TileK / K wgmma m64 x TileN instructions from shared memory, keep
//       one k-tile of wgmmas in flight and free the previous stage; after the last k-tile the
//       epilogue writes alpha * accumulators + beta * C straight from registers to D.
// The producer runs ahead across tile boundaries, so the next tile's loads overlap this tile's
// epilogue. Tiles come from a PersistentTileScheduler (schedule/persistent.hpp) over cluster
// tiles: grid = clusters that fit at once, each walking every grid-th cluster tile in grouped
// raster order. This is the only function that reads threadIdx and blockIdx.
#pragma once

#include <tessel/arch/sm90_cluster.hpp>
#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/arch/sm90_mbarrier.hpp>
#include <tessel/arch/sm90_mma_wgmma.hpp>
#include <tessel/config.hpp>
#include <tessel/gemm/kernel/sm90_gemm_params.hpp>
#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/half.hpp>
#include <tessel/pipeline/sm90_pipeline.hpp>

#include <cstdint>

namespace tessel::kernel {

// The wgmma instruction for a 16-bit input type and tile width (K-major A and B).
template <class Element, int N>
struct Sm90WgmmaOf {
  static_assert(sizeof(Element) == 0, "Sm90WgmmaOf: the sm_90a GEMM takes bfloat16_t or half_t inputs with TileN 128 or 256");
};
template <>
struct Sm90WgmmaOf<bfloat16_t, 256> {
  using Op = SM90_64x256x16_F32BF16BF16_SS<0, 0>;
};
template <>
struct Sm90WgmmaOf<bfloat16_t, 128> {
  using Op = SM90_64x128x16_F32BF16BF16_SS<0, 0>;
};
template <>
struct Sm90WgmmaOf<half_t, 256> {
  using Op = SM90_64x256x16_F32F16F16_SS<0, 0>;
};
template <>
struct Sm90WgmmaOf<half_t, 128> {
  using Op = SM90_64x128x16_F32F16F16_SS<0, 0>;
};

// One configuration: input type, tile width, pipeline depth, cluster size along M.
template <class Element_, int TileN_, int Stages_, int ClusterM_>
struct Sm90GemmConfig {
  using Element = Element_;
  static constexpr int Consumers = 2;                 // consumer warpgroups, 64 rows of the tile each
  static constexpr int TileM = 64 * Consumers;        // 128
  static constexpr int TileN = TileN_;
  static constexpr int TileK = 128 / int(sizeof(Element));  // one 128-byte swizzle row
  static constexpr int Stages = Stages_;
  static constexpr int ClusterM = ClusterM_;
  static constexpr int Threads = 128 * (1 + Consumers);
  using Mma = typename Sm90WgmmaOf<Element, TileN>::Op;
  static constexpr int Accumulators = TileN / 2;      // fp32 registers per consumer thread
  static constexpr std::uint32_t StageBytes = std::uint32_t((TileM + TileN) * TileK * int(sizeof(Element)));
  // setmaxnreg: the producer needs few registers; 40 * 128 + 232 * 256 = 64512 <= 65536.
  static constexpr int ProducerRegisters = 40, ConsumerRegisters = 232;

  static_assert(Stages >= 2, "Sm90GemmConfig: the TMA pipeline needs at least 2 stages; raise Stages");
  static_assert(ClusterM == 1 || ClusterM == 2 || ClusterM == 4,
                "Sm90GemmConfig: ClusterM (CTAs sharing one B tile by multicast) must be 1, 2 or 4");
  static_assert(TileN % (8 * ClusterM) == 0, "Sm90GemmConfig: each CTA of a cluster multicasts TileN / ClusterM rows of B");

  struct SharedStorage {
    alignas(1024) Element a[Stages][TileM * TileK];  // (BLK_M,BLK_K) per stage, 128-byte swizzle
    alignas(1024) Element b[Stages][TileN * TileK];  // (BLK_N,BLK_K) per stage, 128-byte swizzle
    TmaPipeline<Stages> pipeline;
  };
  // The dynamic shared memory asked for: the storage plus room to align it to 1024 bytes.
  static constexpr int SmemBytes = int(sizeof(SharedStorage)) + 1024;
  static_assert(SmemBytes <= 232448, "Sm90GemmConfig: the stages do not fit the 227 KiB of shared memory; lower Stages");
};

namespace detail {

// out = alpha * acc + beta * C for the two adjacent columns (col, col + 1) of one row; `two`
// says col + 1 is inside D.
template <class Out>
TESSEL_DEVICE void sm90_store_pair(Sm90GemmParams const& p, char* d_row, char const* c_row, std::int64_t col, bool two,
                                   float v0, float v1) {
  Out* d = reinterpret_cast<Out*>(d_row) + col;
  v0 *= p.alpha, v1 *= p.alpha;
  if (p.beta != 0.0f) {
    Out const* c = reinterpret_cast<Out const*>(c_row) + col;
    v0 += p.beta * float(c[0]);
    if (two) v1 += p.beta * float(c[1]);
  }
  if (two && p.d_pairs) {
    struct alignas(2 * sizeof(Out)) Pair {
      Out x, y;
    };
    *reinterpret_cast<Pair*>(d) = Pair{Out(v0), Out(v1)};
  } else {
    d[0] = Out(v0);
    if (two) d[1] = Out(v1);
  }
}

}  // namespace detail

template <class Config>
__global__ void __launch_bounds__(Config::Threads, 1) sm90_gemm_kernel(__grid_constant__ Sm90GemmParams const p) {
#if defined(TESSEL_ARCH_SM90A)
  using Element = typename Config::Element;
  using Mma = typename Config::Mma;
  using SharedStorage = typename Config::SharedStorage;
  constexpr int TileM = Config::TileM, TileN = Config::TileN, TileK = Config::TileK;
  constexpr int Stages = Config::Stages, ClusterM = Config::ClusterM;

  // 1024-byte alignment (of the shared-window address: the swizzle pattern repeats every 1024 bytes).
  extern __shared__ char smem_raw[];
  std::uint32_t const misalign = tessel::detail::smem_address(smem_raw) & 1023u;
  auto& s = *reinterpret_cast<SharedStorage*>(smem_raw + ((1024u - misalign) & 1023u));

  int const warpgroup = int(threadIdx.x) / 128, wg_thread = int(threadIdx.x) % 128;
  int const cta_rank = ClusterM > 1 ? int(cluster_cta_rank()) : 0;
  if (threadIdx.x == 0) {
    s.pipeline.init(Config::Consumers * 4 * ClusterM);  // every consumer warp of every CTA that writes a stage
    tma_prefetch_descriptor(&p.tma_a);
    tma_prefetch_descriptor(&p.tma_b);
  }
  if constexpr (ClusterM > 1) {
    cluster_sync();  // peers' barriers are initialised before any multicast reaches them
  } else {
    __syncthreads();
  }

  PersistentTileScheduler const& sched = p.scheduler;
  int const cluster = int(blockIdx.x) / ClusterM;

  if (warpgroup == 0) {
    // ---- producer ------------------------------------------------------------------------------
    warpgroup_reg_dealloc<Config::ProducerRegisters>();
    if (wg_thread == 0) {
      PipelineState st;
      for (long long t = sched.first_tile(cluster); sched.is_valid(t); t = sched.next_tile(t)) {
        GemmCoord const tile = sched.tile_offset(t);
        int const m0 = int((tile.m() * ClusterM + cta_rank) * TileM), n0 = int(tile.n() * TileN);
        int const batch = int(tile.k());
        for (int kt = 0; kt < p.k_tiles; ++kt) {
          std::uint64_t* full = s.pipeline.producer_acquire(st, Config::StageBytes);
          tma_load_3d(&p.tma_a, full, s.a[st.index], kt * TileK, m0, batch * p.a_batch_step);
          if constexpr (ClusterM == 1) {
            tma_load_3d(&p.tma_b, full, s.b[st.index], kt * TileK, n0, batch * p.b_batch_step);
          } else {
            constexpr int Rows = TileN / ClusterM;
            tma_load_3d_multicast(&p.tma_b, full, s.b[st.index] + cta_rank * Rows * TileK,
                                  std::uint16_t((1u << ClusterM) - 1u), kt * TileK, n0 + cta_rank * Rows,
                                  batch * p.b_batch_step);
          }
          st.advance<Stages>();
        }
      }
    }
  } else {
    // ---- consumers -----------------------------------------------------------------------------
    warpgroup_reg_alloc<Config::ConsumerRegisters>();
    int const consumer = warpgroup - 1;
    int const warp = wg_thread / 32, lane = wg_thread % 32;
    std::int64_t const out_bytes = p.out_f32 ? 4 : std::int64_t(sizeof(Element));
    PipelineState st;
    float acc[Config::Accumulators];
    TESSEL_UNROLL
    for (int i = 0; i < Config::Accumulators; ++i) acc[i] = 0.0f;

    for (long long t = sched.first_tile(cluster); sched.is_valid(t); t = sched.next_tile(t)) {
      GemmCoord const tile = sched.tile_offset(t);
      std::int64_t const m0 = (tile.m() * ClusterM + cta_rank) * TileM, n0 = tile.n() * TileN;
      std::int64_t const batch = tile.k();

      // Mainloop: one commit group per k-tile, the previous one retired before its stage is freed.
      int previous = -1;
      for (int kt = 0; kt < p.k_tiles; ++kt) {
        s.pipeline.consumer_wait(st);
        std::uint64_t const desc_a = wgmma_desc_k_major_sw128(s.a[st.index] + consumer * 64 * TileK);
        std::uint64_t const desc_b = wgmma_desc_k_major_sw128(s.b[st.index]);
        wgmma_fence_operand(acc);
        wgmma_fence();
        TESSEL_UNROLL
        for (int kk = 0; kk < TileK / Mma::K; ++kk) {
          // The k-th 32-byte slice of every row: +2 in the descriptor's 16-byte address units.
          Mma::fma(desc_a + 2 * kk, desc_b + 2 * kk, acc, (kt > 0 || kk > 0) ? 1 : 0);
        }
        wgmma_commit_group();
        wgmma_fence_operand(acc);
        wgmma_wait_group<1>();
        if (previous >= 0 && lane == 0) s.pipeline.template consumer_release<ClusterM>(previous);
        previous = st.index;
        st.advance<Stages>();
      }
      wgmma_wait_group<0>();
      wgmma_fence_operand(acc);
      if (lane == 0) s.pipeline.template consumer_release<ClusterM>(previous);

      // Epilogue: thread (warp, lane) holds rows r and r + 8, column pairs 2 * (lane % 4) + 8j.
      std::int64_t const row0 = m0 + consumer * 64 + warp * 16 + lane / 4;
      std::int64_t const col0 = n0 + 2 * (lane % 4);
      char* const d_base = static_cast<char*>(p.d) + out_bytes * batch * p.batch_stride_d;
      char const* const c_base =
          p.beta != 0.0f ? static_cast<char const*>(p.c) + out_bytes * batch * p.batch_stride_c : nullptr;
      TESSEL_UNROLL
      for (int h = 0; h < 2; ++h) {
        std::int64_t const row = row0 + 8 * h;
        if (row >= p.m) continue;
        char* const d_row = d_base + out_bytes * row * p.ldd;
        char const* const c_row = c_base ? c_base + out_bytes * row * p.ldc : nullptr;
        TESSEL_UNROLL
        for (int j = 0; j < TileN / 8; ++j) {
          std::int64_t const col = col0 + 8 * j;
          if (col >= p.n) continue;
          float const v0 = acc[4 * j + 2 * h], v1 = acc[4 * j + 2 * h + 1];
          if (p.out_f32) {
            detail::sm90_store_pair<float>(p, d_row, c_row, col, col + 1 < p.n, v0, v1);
          } else {
            detail::sm90_store_pair<Element>(p, d_row, c_row, col, col + 1 < p.n, v0, v1);
          }
        }
      }
    }
  }
  if constexpr (ClusterM > 1) cluster_sync();  // no CTA leaves while a peer may still signal it
#else
  (void)p;
  tessel::detail::arch_unavailable("sm90_gemm_kernel (wgmma and setmaxnreg need sm_90a)");
#endif
}

}  // namespace tessel::kernel
