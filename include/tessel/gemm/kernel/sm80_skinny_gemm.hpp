// tessel/gemm/kernel/sm80_skinny_gemm.hpp -- the sm_80 tensor-core GEMM for skinny problems (one
// of M, N small): memory-bound, so every CTA streams a strip of the long operand at full depth
// and the K loop is split across CTAs until the GPU is full.
//
// sm80_skinny_gemm_kernel<Config, ElementOut16>(Sm80SkinnyParams) (kernel/sm80_skinny_gemm_params.hpp):
//   blockIdx.x -> (m tile, K slice, n strip, batch) through sm80_skinny_work: the small operand A
//                 is one BLK_M tile (16, 32 or 64 rows; larger M takes several, each rereading
//                 the strip of B, mostly from L2 since they run together)
//   mainloop   -> CollectiveMma<MainloopSm80CpAsync<Stages>, Config> over the slice's k-tiles:
//                 16-byte cp.async of A's tile and B's BLK_N x BLK_K strip, Stages-1 k-tiles in
//                 flight (72-96 KiB per CTA, two CTAs per SM: the bytes in flight that HBM
//                 latency needs), ldmatrix, mma.sync m16n8k16
//   epilogue   -> CollectiveEpilogue<EpilogueSm80LastSliceReduce, Config, ElementOut16>: the
//                 slices of a tile meet in an fp32 workspace, the last to arrive sums them in
//                 slice order (deterministic) and writes D at the strides the host gives
// Config is an Sm80GemmConfig with WarpsM = 1 (the warps split the strip along N). This is the
// only function that reads threadIdx and blockIdx.
#pragma once

#include <tessel/config.hpp>
#include <tessel/gemm/collective/sm80_gemm_config.hpp>
#include <tessel/gemm/collective/sm80_mma_multistage.hpp>
#include <tessel/gemm/dispatch_policy.hpp>
#include <tessel/gemm/epilogue/sm80_epilogue_last_slice.hpp>
#include <tessel/gemm/kernel/sm80_skinny_gemm_params.hpp>
#include <tessel/schedule/split_k.hpp>
#include <tessel/tensor.hpp>

#include <cstdint>

namespace tessel::kernel {

template <class Config, class ElementOut16>
struct Sm80SkinnyGemm {
  using Element = typename Config::Element;
  using Mainloop = collective::CollectiveMma<MainloopSm80CpAsync<Config::Stages>, Config>;
  using Epilogue = epilogue::CollectiveEpilogue<EpilogueSm80LastSliceReduce, Config, ElementOut16>;
  static constexpr int BlkM = Config::TileM, BlkN = Config::TileN, BlkK = Config::TileK;
  static constexpr int Threads = Config::Threads;
  static constexpr int MinCtasPerSm = 2;  // the register budget leaves room for two CTAs per SM
  static_assert(Config::WarpsM == 1, "Sm80SkinnyGemm: the warps split the strip along N; use WarpsM = 1");

  union SharedStorage {
    typename Mainloop::SharedStorage mainloop;
    typename Epilogue::SharedStorage epilogue;
  };
  static constexpr int SmemBytes = int(sizeof(SharedStorage));
};

template <class Config, class ElementOut16>
__global__ void __launch_bounds__(Config::Threads, Sm80SkinnyGemm<Config, ElementOut16>::MinCtasPerSm)
    sm80_skinny_gemm_kernel(Sm80SkinnyParams const p) {
  using G = Sm80SkinnyGemm<Config, ElementOut16>;
  using Element = typename G::Element;
  constexpr int BlkM = G::BlkM, BlkN = G::BlkN, BlkK = G::BlkK;
  extern __shared__ __align__(128) char smem_raw[];
  auto& smem = *reinterpret_cast<typename G::SharedStorage*>(smem_raw);
  int const thread_idx = int(threadIdx.x);

  Sm80SkinnyWork const w = sm80_skinny_work(std::int64_t(blockIdx.x), p.tiles_m, p.splits, p.tiles_n);
  std::int64_t const m0 = std::int64_t(w.m_tile) * BlkM, n0 = w.n_tile * BlkN;
  int const rows = int(p.m - m0 < BlkM ? p.m - m0 : BlkM);
  int const cols = int(p.n - n0 < BlkN ? p.n - n0 : BlkN);
  SplitKPartition const split{p.k, BlkK, (p.k + BlkK - 1) / BlkK, p.splits};
  KRange const iters = split.iteration_range(w.slice);

  auto const* a = static_cast<Element const*>(p.a) + w.batch * p.batch_stride_a;
  auto const* b = static_cast<Element const*>(p.b) + w.batch * p.batch_stride_b;
  Tensor mA = make_tensor(make_gmem_ptr(a), make_shape(p.m, p.k), make_stride(p.lda, Int<1>{}));      // (M,K)
  Tensor mB = make_tensor(make_gmem_ptr(b), make_shape(p.n, p.k), make_stride(p.ldb, Int<1>{}));      // (N,K)
  Tensor gA = local_tile(mA, make_shape(Int<BlkM>{}, Int<BlkK>{}), make_coord(std::int64_t(w.m_tile), _));  // (BLK_M,BLK_K,k)
  Tensor gB = local_tile(mB, make_shape(Int<BlkN>{}, Int<BlkK>{}), make_coord(w.n_tile, _));               // (BLK_N,BLK_K,k)

  typename Config::TiledMma tiled_mma;
  Tensor accum = partition_fragment_C(tiled_mma, make_shape(Int<BlkM>{}, Int<BlkN>{}));  // (MMA,MMA_M,MMA_N)
  clear(accum);

  typename G::Mainloop mainloop;
  mainloop(gA, gB, accum, collective::MainloopResidue{rows, cols, p.k},
           collective::KTileRange{int(iters.begin), int(iters.end)}, thread_idx, smem.mainloop);

  epilogue::LastSliceSplit slice;
  if (p.splits > 1) {
    slice = {w.slice, p.splits, p.workspace + w.group * p.splits * (BlkM * BlkN), p.counters + w.group};
  }
  std::int64_t const out_bytes = p.out_f32 ? std::int64_t(sizeof(float)) : std::int64_t(sizeof(Element));
  epilogue::StridedEpilogueArgs const out{
      static_cast<char*>(p.d) + out_bytes * w.batch * p.batch_stride_d, p.d_stride_m, p.d_stride_n,
      p.c ? static_cast<char const*>(p.c) + out_bytes * w.batch * p.batch_stride_c : nullptr, p.c_stride_m, p.c_stride_n,
      p.alpha, p.beta, p.out_f32, p.fusion};
  typename G::Epilogue epilogue;
  epilogue(accum, out, m0, n0, rows, cols, /*along_n=*/p.d_stride_n == 1, slice, thread_idx, smem.epilogue);
}

}  // namespace tessel::kernel
