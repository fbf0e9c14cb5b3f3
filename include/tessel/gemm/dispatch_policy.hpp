// tessel/gemm/dispatch_policy.hpp -- the tags that pick a mainloop, an epilogue and a kernel.
//
// A GEMM variant is a specialization keyed by one of these tags, not a new family of classes:
//   MainloopSm80CpAsync<Stages>  sm_80 tensor cores: 16-byte cp.async into `Stages` swizzled
//                                shared-memory buffers, ldmatrix into double-buffered register
//                                fragments, mma.sync (collective/sm80_mma_multistage.hpp)
//   EpilogueSm80SmemStaged       alpha/beta, conversion, accumulators staged through shared
//                                memory into row-contiguous 128-bit stores (epilogue/)
//   EpilogueSm80LastSliceReduce  parallel split-K: every slice writes its fp32 partial tile to a
//                                workspace, the last to arrive sums the slices in slice order
//                                and applies alpha/beta; any output strides
//                                (epilogue/sm80_epilogue_last_slice.hpp)
// Plain C++.
#pragma once

namespace tessel {

template <int Stages_>
struct MainloopSm80CpAsync {
  static constexpr int Stages = Stages_;
  static_assert(Stages_ >= 2,
                "MainloopSm80CpAsync: a pipelined mainloop needs at least 2 stages (one being filled while "
                "another is read); raise Stages");
};

struct EpilogueSm80SmemStaged {};

struct EpilogueSm80LastSliceReduce {};

}  // namespace tessel
