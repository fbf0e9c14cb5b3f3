// tessel/pipeline/sm90_pipeline.hpp -- a TMA producer / wgmma consumer pipeline over mbarriers.
//
// Stages buffers in shared memory form a ring. Each stage has two barriers:
//   full[s]   the producer's one thread arrives with expect_tx(bytes) and issues the TMA copies
//             into buffer s; the phase completes when every byte has landed.
//   empty[s]  every consumer warp (of every CTA whose buffer s a multicast copy writes) arrives
//             once it has finished reading buffer s; the phase completes when all have.
// Both sides walk the ring with a PipelineState (stage index and phase parity), flipping the
// parity at each wrap. The producer waits on empty with the opposite parity, so its first pass
// over the ring does not wait (an mbarrier's "phase before the first" counts as complete).
//
//   e.g. Stages = 2: producer fills 0, 1, then waits for empty[0] (round 1) before refilling 0;
//        consumers wait full[0] parity 0, full[1] parity 0, full[0] parity 1, ...
#pragma once

#include <tessel/arch/sm90_cluster.hpp>
#include <tessel/arch/sm90_mbarrier.hpp>
#include <tessel/config.hpp>

#include <cstdint>

namespace tessel {

// Where one side of the pipeline is in the ring.
struct PipelineState {
  int index = 0;
  std::uint32_t phase = 0;

  template <int Stages>
  TESSEL_HOST_DEVICE constexpr void advance() {
    if (++index == Stages) {
      index = 0;
      phase ^= 1u;
    }
  }

  // `count` advances at once: the state after stages that another consumer reads (the ping-pong
  // schedule's consumers skip each other's k-tiles). Pre: count >= 0.
  //   e.g. Stages = 5, {3, 0}.skip<5>(9) == {2, 0} (two wraps)
  template <int Stages>
  TESSEL_HOST_DEVICE constexpr void skip(int count) {
    unsigned const to = unsigned(index) + unsigned(count);  // < 2^32: index < Stages, count < 2^31
    index = int(to % unsigned(Stages));
    phase ^= (to / unsigned(Stages)) & 1u;
  }
};

// The barriers of a Stages-deep pipeline (they live in shared memory, inside the kernel's
// SharedStorage). init's consumer_arrivals: arrivals that free a stage (consumer warps, or
// consumer threads where each reads the stage itself, x CTAs that read a multicast copy into it).
template <int Stages>
struct TmaPipeline {
  static_assert(Stages >= 2, "TmaPipeline: a pipeline needs at least 2 stages (one filled while another is read); raise Stages");
  std::uint64_t full[Stages];
  std::uint64_t empty[Stages];

  // One thread of the CTA, before any other use; then a CTA (or cluster) barrier.
  TESSEL_DEVICE void init(int consumer_arrivals) {
    for (int s = 0; s < Stages; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], consumer_arrivals);
    }
    mbarrier_init_fence();
  }

  // Producer: wait until stage st.index is free, then announce `bytes` of TMA copies into it.
  // Returns the barrier those copies complete on.
  TESSEL_DEVICE std::uint64_t* producer_acquire(PipelineState st, std::uint32_t bytes) {
    producer_wait(st);
    return producer_expect(st, bytes);
  }
  // producer_acquire in two steps, for a producer that also writes something of its own beside the
  // stage (shared memory the consumers read after their wait) in between: the arrival of
  // producer_expect releases those writes to whoever sees the phase complete.
  TESSEL_DEVICE void producer_wait(PipelineState st) { mbarrier_wait(&empty[st.index], st.phase ^ 1u); }
  TESSEL_DEVICE std::uint64_t* producer_expect(PipelineState st, std::uint32_t bytes) {
    mbarrier_arrive_expect_tx(&full[st.index], bytes);
    return &full[st.index];
  }

  // Consumer: wait until stage st.index holds its data.
  TESSEL_DEVICE void consumer_wait(PipelineState st) { mbarrier_wait(&full[st.index], st.phase); }

  // One of init's consumer_arrivals: stage `index` may be refilled. A consumer warp arrives from
  // one lane where only the async proxy (wgmma) read the stage; where its threads also read it
  // with ordinary loads, each thread arrives (their reads are then ordered before the refill).
  // With a multicast cluster of ClusterSize CTAs, every CTA whose producer writes into this stage
  // is told.
  template <int ClusterSize>
  TESSEL_DEVICE void consumer_release(int index) {
    if constexpr (ClusterSize == 1) {
      mbarrier_arrive(&empty[index]);
    } else {
      TESSEL_UNROLL
      for (int r = 0; r < ClusterSize; ++r) mbarrier_arrive_cluster(&empty[index], std::uint32_t(r));
    }
  }
};

}  // namespace tessel
