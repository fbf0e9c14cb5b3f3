// tessel/gemm/kernel/sm80_gemm_persistent.hpp -- the sm_80 tensor-core GEMM as a persistent
// kernel: each CTA walks units of work (tile, batch, split-K slice) and starts loading its next
// unit before it writes the current one.
//
// sm80_gemm_persistent_kernel<Config, ElementOut16, CtasPerSm>(Sm80GemmParams), grid.x CTAs
// (at most the number that can be resident, so a split-K slice never waits on a CTA that has not
// started):
//   unit u = slice * (batch * tiles) + batch * tiles + tile; CTA c takes units c, c + grid.x, ...
//   (tile through GroupedRaster, as sm80_gemm_kernel's blockIdx.x; slices of a tile meet in the
//   epilogue in slice order, and a unit's predecessor slice has a smaller index, so it is done or
//   being worked on by a resident CTA)
//   per unit:  mainloop body (the pipeline the previous step filled)
//              mainloop prologue of the next unit (its first Stages-1 k-tiles, left in flight)
//              epilogue of this unit, in shared memory of its own (Sm80GemmPersistent::SharedStorage)
// What it saves over one CTA per tile: the launch of a CTA and its setup, and the latency of the
// pipeline fill, which now overlaps the epilogue (with one CTA per SM nothing else hides them).
// The mainloop and epilogue are sm80_gemm_kernel's (kernel/sm80_gemm.hpp); the epilogue's
// staging budget is what is left of the SM's shared memory beside the pipeline.
#pragma once

#include <tessel/config.hpp>
#include <tessel/gemm/collective/sm80_gemm_config.hpp>
#include <tessel/gemm/collective/sm80_mma_multistage.hpp>
#include <tessel/gemm/dispatch_policy.hpp>
#include <tessel/gemm/epilogue/sm80_epilogue_staged.hpp>
#include <tessel/gemm/kernel/sm80_gemm_params.hpp>
#include <tessel/schedule/raster.hpp>
#include <tessel/schedule/split_k.hpp>
#include <tessel/tensor.hpp>

#include <cstdint>

namespace tessel::kernel {

// Config with the bytes the epilogue's staging may use when it sits beside the pipeline and
// CtasPerSm CTAs share an SM of 228 KiB (227 KiB at most per CTA, 1 KiB reserved per CTA).
template <class Config, int CtasPerSm>
struct Sm80PersistentConfig : Config {
  static constexpr int SmemPerCta = CtasPerSm == 1 ? 232448 : 233472 / CtasPerSm - 1024;
  static constexpr int EpilogueStagingBytes = (SmemPerCta - Config::SmemBytesMainloop - 256) / 128 * 128;
};

template <class Config, class ElementOut16, int CtasPerSm>
struct Sm80GemmPersistent {
  using PConfig = Sm80PersistentConfig<Config, CtasPerSm>;
  using Mainloop = collective::CollectiveMma<MainloopSm80CpAsync<Config::Stages>, Config>;
  using Epilogue = epilogue::CollectiveEpilogue<EpilogueSm80SmemStaged, PConfig, ElementOut16>;
  static constexpr int BlkM = Config::TileM, BlkN = Config::TileN, BlkK = Config::TileK;
  static constexpr int Threads = Config::Threads;

  struct SharedStorage {
    typename Mainloop::SharedStorage mainloop;
    typename Epilogue::SharedStorage epilogue;  // beside the pipeline: the next unit's copies land meanwhile
  };
  static constexpr int SmemBytes = int(sizeof(SharedStorage));
  static_assert(SmemBytes <= PConfig::SmemPerCta,
                "Sm80GemmPersistent: the pipeline and the epilogue's staging buffer do not fit in the shared memory of "
                "CtasPerSm CTAs per SM; lower Stages or CtasPerSm");
};

// A unit of work (file comment).
struct Sm80Unit {
  std::int64_t batch = 0, tile = 0;  // tile: index in the batch's raster
  GemmCoord coord{0, 0, 0};          // the tile (m, n)
  int slice = 0;
};

// Unit index -> unit, for the problem p.
struct Sm80UnitSchedule {
  GroupedRaster raster;
  std::int64_t batch;
  int splits;
  TESSEL_HOST_DEVICE std::int64_t tiles() const { return raster.size(); }
  TESSEL_HOST_DEVICE std::int64_t units() const { return tiles() * batch * splits; }
  TESSEL_HOST_DEVICE Sm80Unit operator()(std::int64_t u) const {
    std::int64_t const per_slice = tiles() * batch;
    Sm80Unit w;
    if (units() <= 0xffffffffLL) {  // 32-bit divisions (the 64-bit ones are routine calls)
      unsigned const uu = unsigned(u), ps = unsigned(per_slice), t = unsigned(tiles());
      unsigned const slice = uu / ps, rest = uu - slice * ps, b = rest / t;
      w.slice = int(slice), w.batch = b, w.tile = rest - b * t;
    } else {
      w.slice = int(u / per_slice);
      std::int64_t const rest = u - std::int64_t(w.slice) * per_slice;
      w.batch = rest / tiles();
      w.tile = rest - w.batch * tiles();
    }
    w.coord = raster(w.tile);
    return w;
  }
};

namespace detail {

// The mainloop's part `Part` for unit w.
template <collective::MainloopPart Part, class G, class FrgC>
TESSEL_DEVICE void sm80_unit_mainloop(Sm80GemmParams const& p, Sm80Unit const& w, FrgC& accum, int thread_idx,
                                      typename G::Mainloop::SharedStorage& smem) {
  using Element = typename G::Mainloop::Element;
  constexpr int BlkM = G::BlkM, BlkN = G::BlkN, BlkK = G::BlkK;
  std::int64_t const m0 = w.coord.m() * BlkM, n0 = w.coord.n() * BlkN;
  int const rows = int(p.m - m0 < BlkM ? p.m - m0 : BlkM);
  int const cols = int(p.n - n0 < BlkN ? p.n - n0 : BlkN);
  SplitKPartition const split{p.k, BlkK, (p.k + BlkK - 1) / BlkK, p.splits};
  KRange const iters = split.iteration_range(w.slice);
  auto const* a = static_cast<Element const*>(p.a) + w.batch * p.batch_stride_a;
  auto const* b = static_cast<Element const*>(p.b) + w.batch * p.batch_stride_b;
  Tensor mA = make_tensor(make_gmem_ptr(a), make_shape(p.m, p.k), make_stride(p.lda, Int<1>{}));  // (M,K)
  Tensor mB = make_tensor(make_gmem_ptr(b), make_shape(p.n, p.k), make_stride(p.ldb, Int<1>{}));  // (N,K)
  Tensor gA = local_tile(mA, make_shape(Int<BlkM>{}, Int<BlkK>{}), make_coord(w.coord.m(), _));   // (BLK_M,BLK_K,k)
  Tensor gB = local_tile(mB, make_shape(Int<BlkN>{}, Int<BlkK>{}), make_coord(w.coord.n(), _));   // (BLK_N,BLK_K,k)
  typename G::Mainloop mainloop;
  mainloop.template operator()<Part>(gA, gB, accum, collective::MainloopResidue{rows, cols, p.k},
                                     collective::KTileRange{int(iters.begin), int(iters.end)}, thread_idx, smem);
}

}  // namespace detail

template <class Config, class ElementOut16, int CtasPerSm>
__global__ void __launch_bounds__(Config::Threads, CtasPerSm) sm80_gemm_persistent_kernel(Sm80GemmParams const p) {
  using G = Sm80GemmPersistent<Config, ElementOut16, CtasPerSm>;
  using collective::MainloopPart;
  constexpr int BlkM = G::BlkM, BlkN = G::BlkN;
  extern __shared__ __align__(128) char smem_raw[];
  auto& smem = *reinterpret_cast<typename G::SharedStorage*>(smem_raw);
  int const thread_idx = int(threadIdx.x);

  Sm80UnitSchedule const schedule{GroupedRaster{p.tiles_m, p.tiles_n, p.raster_order, p.raster_group}, p.batch, p.splits};
  std::int64_t const units = schedule.units();
  std::int64_t u = blockIdx.x;
  if (u >= units) return;

  typename Config::TiledMma tiled_mma;
  Tensor accum = partition_fragment_C(tiled_mma, make_shape(Int<BlkM>{}, Int<BlkN>{}));  // (MMA,MMA_M,MMA_N)
  // Only u lives across the mainloop; a unit's coordinates are recomputed where they are needed
  // (fewer registers held through the k-loop).
  detail::sm80_unit_mainloop<MainloopPart::prologue, G>(p, schedule(u), accum, thread_idx, smem.mainloop);
  while (true) {
    clear(accum);
    detail::sm80_unit_mainloop<MainloopPart::body, G>(p, schedule(u), accum, thread_idx, smem.mainloop);
    std::int64_t const next_u = u + gridDim.x;
    if (next_u < units) detail::sm80_unit_mainloop<MainloopPart::prologue, G>(p, schedule(next_u), accum, thread_idx, smem.mainloop);

    Sm80Unit const w = schedule(u);
    std::int64_t const m0 = w.coord.m() * BlkM, n0 = w.coord.n() * BlkN;
    int const rows = int(p.m - m0 < BlkM ? p.m - m0 : BlkM);
    int const cols = int(p.n - n0 < BlkN ? p.n - n0 : BlkN);
    std::int64_t const tile_slot = w.batch * schedule.tiles() + w.tile;  // sm80_gemm_kernel's blockIdx.x
    epilogue::SplitKSlice slice_info;
    if (p.splits > 1) slice_info = {w.slice, p.splits, p.workspace + tile_slot * (BlkM * BlkN), p.flags + tile_slot};
    std::int64_t const out_bytes = p.out_f32 ? std::int64_t(sizeof(float)) : std::int64_t(sizeof(typename Config::Element));
    epilogue::EpilogueArgs const out{
        static_cast<char*>(p.d) + out_bytes * w.batch * p.batch_stride_d, p.ldd,
        p.c ? static_cast<char const*>(p.c) + out_bytes * w.batch * p.batch_stride_c : nullptr, p.ldc,
        p.alpha, p.beta, p.out_f32, p.d_vec, p.c_vec};
    typename G::Epilogue epilogue;
    epilogue(accum, out, m0, n0, rows, cols, slice_info, thread_idx, smem.epilogue);

    if (next_u >= units) break;
    u = next_u;
  }
}

}  // namespace tessel::kernel
