// bench/sm80_gemm_persistent.cuh -- the sm_80 tensor-core GEMM as a persistent kernel, for the
// mainloop experiment only (bench_sm80_variants; it measured 0.57-0.59x, no faster than one CTA per
// tile, so the library does not carry it): each CTA walks units of work (tile, batch, split-K slice) and starts loading its next
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
#include <tessel/gemm/kernel/sm80_gemm.hpp>
#include <tessel/gemm/kernel/sm80_gemm_params.hpp>
#include <tessel/schedule/raster.hpp>
#include <tessel/schedule/split_k.hpp>
#include <tessel/tensor.hpp>

#include <cstdint>
#include <type_traits>

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

// Unit index -> (batch, tile, slice) of problem p (file comment), and the tile's index in its batch.
struct Sm80UnitSchedule {
  GroupedRaster raster;
  std::int64_t batch;
  int splits;
  TESSEL_HOST_DEVICE std::int64_t tiles() const { return raster.size(); }
  TESSEL_HOST_DEVICE std::int64_t units() const { return tiles() * batch * splits; }
  struct Unit {
    std::int64_t batch, tile;
    int slice;
  };
  TESSEL_HOST_DEVICE Unit operator()(std::int64_t u) const {
    std::int64_t const per_slice = tiles() * batch;
    if (units() <= 0xffffffffLL) {  // 32-bit divisions (the 64-bit ones are routine calls)
      unsigned const uu = unsigned(u), ps = unsigned(per_slice), t = unsigned(tiles());
      unsigned const slice = uu / ps, rest = uu - slice * ps, b = rest / t;
      return {b, rest - b * t, int(slice)};
    }
    int const slice = int(u / per_slice);
    std::int64_t const rest = u - std::int64_t(slice) * per_slice;
    std::int64_t const b = rest / tiles();
    return {b, rest - b * tiles(), slice};
  }
  template <class Config>
  TESSEL_HOST_DEVICE Sm80TileWork<Config> work(Unit const& x) const {
    return {x.batch, raster(x.tile), x.slice};
  }
};

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
  typename G::Mainloop mainloop;
  // The mainloop's part `Part` for unit v. Only u lives across the mainloop; a unit's coordinates
  // are recomputed where they are needed (fewer registers held through the k-loop).
  auto const run = [&](auto part, std::int64_t v) {
    Sm80TileWork<Config> const w = schedule.template work<Config>(schedule(v));
    mainloop.template operator()<decltype(part)::value>(w.gA(p), w.gB(p), accum, w.residue(p), w.k_tiles(p), thread_idx,
                                                        smem.mainloop);
  };
  using Prologue = std::integral_constant<MainloopPart, MainloopPart::prologue>;
  using Body = std::integral_constant<MainloopPart, MainloopPart::body>;
  run(Prologue{}, u);
  while (true) {
    clear(accum);
    run(Body{}, u);
    std::int64_t const next_u = u + gridDim.x;
    if (next_u < units) run(Prologue{}, next_u);  // in flight during the epilogue

    Sm80UnitSchedule::Unit const x = schedule(u);
    Sm80TileWork<Config> const w = schedule.template work<Config>(x);
    typename G::Epilogue epilogue;
    epilogue(accum, w.out(p), w.m0(p), w.n0(p), w.rows(p), w.cols(p), w.split(p, x.batch * schedule.tiles() + x.tile),
             thread_idx, smem.epilogue);

    if (next_u >= units) break;
    u = next_u;
  }
}

}  // namespace tessel::kernel
