// tessel/gemm/collective/swizzle_hoist.hpp -- a swizzled shared-memory partition with the swizzle
// applied once, so that the loop indices become plain strides.
//
// A thread's partition of a swizzled buffer is Sw<B,M,S> o off o L: every access computes
// Sw(off + L(c)). When L's first mode stays inside one 2^M-element granule (a 16-byte chunk) and
// every other mode moves by multiples of the swizzle's period 2^(M+S+B) (whole swizzle atoms:
// row blocks, pipeline stages), the swizzle commutes with those moves:
//     Sw(off + L(c0, c1, ...)) == Sw(off + L(c0, 0, ...)) + (L(0, c1, ...) - L(0, 0, ...))
// for any granule-aligned off. hoist_swizzle(t) returns that view: a plain Layout L over the
// pointer &t(0) = base + Sw(off). In a mainloop the per-thread Sw(off) is computed once and each
// ldmatrix / cp.async address is base + a constant + stage * stage_stride.
//   e.g. tCsA = Sw<2,3,3> o 160 o ((_8,_1),_4,_4):((_1,_0),_1024,_4096) (CPY,CPY_M,PIPE)
//        -> smem_ptr(base + Sw(160)) o ((_8,_1),_4,_4):((_1,_0),_1024,_4096)
// Pre (static_assert): the layout is static and has the shape above. Pre (caller): off is a
// multiple of 2^M (a partition into whole chunks). tests/host/sm80_tv_coverage_test.cpp checks
// the view against the swizzled partition for every thread.
#pragma once

#include <tessel/config.hpp>
#include <tessel/layout.hpp>
#include <tessel/tensor.hpp>

namespace tessel::collective {

namespace detail {

// Outer's first mode inside [0, Granule) and every other offset a multiple of Period away from it.
template <class Outer, long Period, long Granule>
constexpr bool swizzle_commutes() {
  if constexpr (!is_static_v<Outer>) {
    return false;
  } else {
    constexpr int n = int(decltype(size(Outer{}))::value);
    constexpr int n0 = int(decltype(size<0>(Outer{}))::value);
    return []<int... Is>(seq<Is...>) {
      long const off[] = {static_cast<long>(Outer{}(Int<Is>{}))...};
      for (int i = 0; i < n; ++i) {
        long const first = off[i % n0];
        if (first < 0 || first >= Granule) return false;
        if ((off[i] - first) % Period != 0) return false;
      }
      return true;
    }(make_seq<n>{});
  }
}

}  // namespace detail

template <class Engine, int B, int M, int S, class Off, class Outer>
TESSEL_HOST_DEVICE auto hoist_swizzle(Tensor<Engine, ComposedLayout<Swizzle<B, M, S>, Off, Outer>> const& t) {
  static_assert(S > 0, "hoist_swizzle: expects a swizzle that XORs higher bits into lower ones (S > 0)");
  static_assert(detail::swizzle_commutes<Outer, (1L << (M + S + B)), (1L << M)>(),
                "hoist_swizzle: the partition's first mode must stay inside one swizzle granule and its other "
                "modes must step by whole swizzle periods; slice the modes that move inside the period (e.g. "
                "the k-block of an ldmatrix partition) before hoisting");
  return make_tensor(make_smem_ptr(&t(0)), t.layout().layout_b());
}

}  // namespace tessel::collective
