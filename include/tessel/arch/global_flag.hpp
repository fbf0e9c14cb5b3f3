// tessel/arch/global_flag.hpp -- a 64-bit flag in global memory that one CTA raises and another
// waits for (GPU scope), publishing the data written before it.
//
//   flag_raise(flag, value)  fence.acq_rel.gpu, then st.release.gpu: writes made before by this
//                            thread -- and by the threads that met it at a barrier since -- are
//                            visible to whoever reads `value` with flag_await
//   flag_await(flag, value)  ld.acquire.gpu until the flag reads `value` (backing off with
//                            nanosleep); the raiser's writes are visible to this thread after it,
//                            and to the threads that meet it at a barrier afterwards
// And a 32-bit counter that CTAs add to in turn:
//   counter_add_release(c, v)     red.release.gpu.global.add: this thread's writes before it (and
//                                 those of the threads that met it at a barrier since) are visible
//                                 to whoever reads the sum with counter_await_at_least
//   counter_await_at_least(c, v)  ld.acquire.gpu until the counter reads v or more (nanosleep
//                                 between reads)
// All sm_70+ (the PTX memory model); the caller keeps the raising and the waiting CTA resident
// at once (a wait for a CTA that cannot start never ends).
#pragma once

#include <tessel/arch/arch_config.hpp>
#include <tessel/config.hpp>

namespace tessel {

TESSEL_DEVICE inline void flag_raise(unsigned long long* flag, unsigned long long value) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  asm volatile("fence.acq_rel.gpu;\n\tst.release.gpu.global.u64 [%0], %1;\n" ::"l"(flag), "l"(value) : "memory");
#else
  (void)flag, (void)value;
#endif
}

TESSEL_DEVICE inline void flag_await(unsigned long long const* flag, unsigned long long value) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  for (;;) {
    unsigned long long seen;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];\n" : "=l"(seen) : "l"(flag) : "memory");
    if (seen == value) break;
    __nanosleep(64);
  }
#else
  (void)flag, (void)value;
#endif
}

TESSEL_DEVICE inline void counter_add_release(unsigned* counter, unsigned value) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;\n" ::"l"(counter), "r"(value) : "memory");
#else
  (void)counter, (void)value;
#endif
}

TESSEL_DEVICE inline void counter_await_at_least(unsigned const* counter, unsigned value) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  for (;;) {
    unsigned seen;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(seen) : "l"(counter) : "memory");
    if (seen >= value) break;
    __nanosleep(32);
  }
#else
  (void)counter, (void)value;
#endif
}

}  // namespace tessel
