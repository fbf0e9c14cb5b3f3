// tessel/gemm/kernel/sm80_gemm.hpp -- the sm_80 tensor-core GEMM kernel: one CTA per output tile
// (and batch, and split-K slice), mainloop then epilogue.
//
// sm80_gemm_kernel<Config, ElementOut16>(Sm80GemmParams) (kernel/sm80_gemm_params.hpp):
//   blockIdx.x -> batch * tiles + tile; the tile (m, n) through GroupedRaster
//                 (schedule/raster.hpp): CTAs that run together share A row panels and B column
//                 panels in L2
//   blockIdx.z -> split-K slice: its k-tiles from SplitKPartition (schedule/split_k.hpp); the
//                 slices of a tile meet in the epilogue (serial, in slice order)
// The mainloop is CollectiveMma<MainloopSm80CpAsync<Stages>, Config>, the epilogue
// CollectiveEpilogue<EpilogueSm80SmemStaged, Config, ElementOut16>; they share the dynamic shared
// memory (the epilogue's staging buffer reuses the pipeline's). This is the only function that
// reads threadIdx and blockIdx.
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

template <class Config, class ElementOut16>
struct Sm80Gemm {
  using Element = typename Config::Element;
  using Mainloop = collective::CollectiveMma<MainloopSm80CpAsync<Config::Stages>, Config>;
  using Epilogue = epilogue::CollectiveEpilogue<EpilogueSm80SmemStaged, Config, ElementOut16>;
  static constexpr int BlkM = Config::TileM, BlkN = Config::TileN, BlkK = Config::TileK;
  static constexpr int Threads = Config::Threads;

  union SharedStorage {
    typename Mainloop::SharedStorage mainloop;
    typename Epilogue::SharedStorage epilogue;
  };
  static constexpr int SmemBytes = int(sizeof(SharedStorage));
};

// One CTA's share of problem p: tile `tile` of batch `batch`, split-K slice `slice`.
template <class Config>
struct Sm80TileWork {
  using Element = typename Config::Element;
  static constexpr int BlkM = Config::TileM, BlkN = Config::TileN, BlkK = Config::TileK;
  std::int64_t batch;
  GemmCoord tile;
  int slice;

  TESSEL_HOST_DEVICE std::int64_t m0(Sm80GemmParams const&) const { return tile.m() * BlkM; }
  TESSEL_HOST_DEVICE std::int64_t n0(Sm80GemmParams const&) const { return tile.n() * BlkN; }
  // Rows (columns) of the tile inside D: <= BLK_M (BLK_N).
  TESSEL_HOST_DEVICE int rows(Sm80GemmParams const& p) const { return int(p.m - m0(p) < BlkM ? p.m - m0(p) : BlkM); }
  TESSEL_HOST_DEVICE int cols(Sm80GemmParams const& p) const { return int(p.n - n0(p) < BlkN ? p.n - n0(p) : BlkN); }
  TESSEL_HOST_DEVICE collective::MainloopResidue residue(Sm80GemmParams const& p) const { return {rows(p), cols(p), p.k}; }
  TESSEL_HOST_DEVICE collective::KTileRange k_tiles(Sm80GemmParams const& p) const {
    SplitKPartition const split{p.k, BlkK, (p.k + BlkK - 1) / BlkK, p.splits};
    KRange const iters = split.iteration_range(slice);
    return {int(iters.begin), int(iters.end)};
  }
  TESSEL_DEVICE auto gA(Sm80GemmParams const& p) const {  // (BLK_M,BLK_K,k)
    auto const* a = static_cast<Element const*>(p.a) + batch * p.batch_stride_a;
    Tensor mA = make_tensor(make_gmem_ptr(a), make_shape(p.m, p.k), make_stride(p.lda, Int<1>{}));  // (M,K)
    return local_tile(mA, make_shape(Int<BlkM>{}, Int<BlkK>{}), make_coord(tile.m(), _));
  }
  TESSEL_DEVICE auto gB(Sm80GemmParams const& p) const {  // (BLK_N,BLK_K,k)
    auto const* b = static_cast<Element const*>(p.b) + batch * p.batch_stride_b;
    Tensor mB = make_tensor(make_gmem_ptr(b), make_shape(p.n, p.k), make_stride(p.ldb, Int<1>{}));  // (N,K)
    return local_tile(mB, make_shape(Int<BlkN>{}, Int<BlkK>{}), make_coord(tile.n(), _));
  }
  // D and C of this batch.
  TESSEL_HOST_DEVICE epilogue::EpilogueArgs out(Sm80GemmParams const& p) const {
    std::int64_t const out_bytes = p.out_f32 ? std::int64_t(sizeof(float)) : std::int64_t(sizeof(Element));
    return {static_cast<char*>(p.d) + out_bytes * batch * p.batch_stride_d, p.ldd,
            p.c ? static_cast<char const*>(p.c) + out_bytes * batch * p.batch_stride_c : nullptr, p.ldc,
            p.alpha, p.beta, p.out_f32, p.d_vec, p.c_vec, p.fusion};
  }
  // This slice's part of a serial split-K; tile_slot: the tile's index among all batches' tiles
  // (its workspace tile and flag).
  TESSEL_HOST_DEVICE epilogue::SplitKSlice split(Sm80GemmParams const& p, std::int64_t tile_slot) const {
    if (p.splits == 1) return {};
    return {slice, p.splits, p.workspace + tile_slot * (BlkM * BlkN), p.flags + tile_slot};
  }
};

template <class Config, class ElementOut16>
__global__ void __launch_bounds__(Config::Threads, 1) sm80_gemm_kernel(Sm80GemmParams const p) {
  using G = Sm80Gemm<Config, ElementOut16>;
  constexpr int BlkM = G::BlkM, BlkN = G::BlkN;
  extern __shared__ __align__(128) char smem_raw[];
  auto& smem = *reinterpret_cast<typename G::SharedStorage*>(smem_raw);
  int const thread_idx = int(threadIdx.x);

  // blockIdx.x = tile + tiles * batch; the tiles of one batch are walked by the raster.
  GroupedRaster const raster{p.tiles_m, p.tiles_n, p.raster_order, p.raster_group};
  std::int64_t const tiles = raster.size();
  std::int64_t const batch = std::int64_t(blockIdx.x) / tiles;
  Sm80TileWork<Config> const w{batch, raster(std::int64_t(blockIdx.x) - batch * tiles), int(blockIdx.z)};

  typename Config::TiledMma tiled_mma;
  Tensor accum = partition_fragment_C(tiled_mma, make_shape(Int<BlkM>{}, Int<BlkN>{}));  // (MMA,MMA_M,MMA_N)
  clear(accum);

  typename G::Mainloop mainloop;
  mainloop(w.gA(p), w.gB(p), accum, w.residue(p), w.k_tiles(p), thread_idx, smem.mainloop);

  typename G::Epilogue epilogue;
  epilogue(accum, w.out(p), w.m0(p), w.n0(p), w.rows(p), w.cols(p), w.split(p, std::int64_t(blockIdx.x)), thread_idx,
           smem.epilogue);
}

}  // namespace tessel::kernel
