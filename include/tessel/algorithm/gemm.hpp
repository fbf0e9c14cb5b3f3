// tessel/algorithm/gemm.hpp -- thread-level GEMM on tensors: D = A * B + C.
//
// gemm(mma, D, A, B, C) with an MMA_Atom or TiledMMA (or gemm(mma, A, B, C): C += A*B) accepts
//   (V)     x (V)     => (V)       one execution of the atom
//   (M)     x (N)     => (M,N)     outer product          (V = 1 is prepended)
//   (M,K)   x (N,K)   => (M,N)     seed 004's tCsA x tCsB => tCrC
//   (V,M)   x (V,N)   => (V,M,N)   one atom per (m,n)
//   (V,M,K) x (V,N,K) => (V,M,N)   summed over k, in order k = 0, 1, ...
// gemm(A, B, C) / gemm(D, A, B, C) use MMA_Atom<UniversalFMA<D,A,B,C>> (one thread, scalar FMA).
// Note B is (N,K): both operands are indexed by the K mode last.
#pragma once

#include <tessel/atom/mma_atom.hpp>
#include <tessel/arch/universal_fma.hpp>
#include <tessel/config.hpp>
#include <tessel/layout.hpp>
#include <tessel/tensor/tensor.hpp>
#include <tessel/tiled/tiled_mma.hpp>

#include <type_traits>

namespace tessel {

namespace detail {

// A rank-1 (X) tensor as (_1, X), a rank-2 (X,Y) as (_1, X, Y): a unit value mode in front.
template <class E, class L>
TESSEL_HOST_DEVICE constexpr auto prepend_unit_mode(Tensor<E, L> const& t) {
  return make_tensor(t.data(), prepend(t.layout(), Layout<_1, _0>{}));
}

template <class Atom, class DE, class DL, class AE, class AL, class BE, class BL, class CE, class CL>
TESSEL_HOST_DEVICE void gemm_dispatch(Atom const& atom, Tensor<DE, DL> const& D, Tensor<AE, AL> const& A,
                                      Tensor<BE, BL> const& B, Tensor<CE, CL> const& C) {
  constexpr int RD = rank_v<decltype(shape(D.layout()))>;
  constexpr int RA = rank_v<decltype(shape(A.layout()))>;
  constexpr int RB = rank_v<decltype(shape(B.layout()))>;
  constexpr int RC = rank_v<decltype(shape(C.layout()))>;
  if constexpr (RD == 1 && RA == 1 && RB == 1 && RC == 1) {
    // (V) x (V) => (V), or (M) x (N) => (M,N) written as (M) x (N) => (M*N)? No: rank-1 C is one atom.
    atom.call(D, A, B, C);
  } else if constexpr (RD == 2 && RA == 1 && RB == 1 && RC == 2) {
    // (M) x (N) => (M,N)
    gemm_dispatch(atom, prepend_unit_mode(D), prepend_unit_mode(A), prepend_unit_mode(B), prepend_unit_mode(C));
  } else if constexpr (RD == 2 && RA == 2 && RB == 2 && RC == 2) {
    // (M,K) x (N,K) => (M,N)
    gemm_dispatch(atom, prepend_unit_mode(D), prepend_unit_mode(A), prepend_unit_mode(B), prepend_unit_mode(C));
  } else if constexpr (RD == 3 && RA == 2 && RB == 2 && RC == 3) {
    // (V,M) x (V,N) => (V,M,N)
    TESSEL_UNROLL
    for (int m = 0; m < int(size<1>(A.layout())); ++m) {
      TESSEL_UNROLL
      for (int n = 0; n < int(size<1>(B.layout())); ++n) {
        atom.call(D(_, m, n), A(_, m), B(_, n), C(_, m, n));
      }
    }
  } else if constexpr (RD == 3 && RA == 3 && RB == 3 && RC == 3) {
    // (V,M,K) x (V,N,K) => (V,M,N)
    TESSEL_UNROLL
    for (int k = 0; k < int(size<2>(A.layout())); ++k) {
      if (k == 0) {
        gemm_dispatch(atom, D, A(_, _, k), B(_, _, k), C);
      } else {
        gemm_dispatch(atom, D, A(_, _, k), B(_, _, k), D);
      }
    }
  } else {
    static_assert(RD == 0, "gemm: unsupported ranks; expected (V)x(V)=>(V), (M)x(N)=>(M,N), (M,K)x(N,K)=>(M,N), "
                           "(V,M)x(V,N)=>(V,M,N) or (V,M,K)x(V,N,K)=>(V,M,N)");
  }
}

template <class T>
TESSEL_HOST_DEVICE constexpr auto as_view(T&& t) {
  return make_tensor(t.data(), t.layout());
}

}  // namespace detail

template <class... Args, class DT, class AT, class BT, class CT>
  requires(is_tensor_v<DT> && is_tensor_v<AT> && is_tensor_v<BT> && is_tensor_v<CT>)
TESSEL_HOST_DEVICE void gemm(MMA_Atom<Args...> const& atom, DT&& D, AT const& A, BT const& B, CT const& C) {
  detail::gemm_dispatch(atom, detail::as_view(D), detail::as_view(A), detail::as_view(B), detail::as_view(C));
}
template <class Atom, class L, class P, class DT, class AT, class BT, class CT>
  requires(is_tensor_v<DT> && is_tensor_v<AT> && is_tensor_v<BT> && is_tensor_v<CT>)
TESSEL_HOST_DEVICE void gemm(TiledMMA<Atom, L, P> const& mma, DT&& D, AT const& A, BT const& B, CT const& C) {
  detail::gemm_dispatch(static_cast<Atom const&>(mma), detail::as_view(D), detail::as_view(A), detail::as_view(B),
                        detail::as_view(C));
}
template <class TM, class V, class DT, class AT, class BT, class CT>
  requires(is_tensor_v<DT> && is_tensor_v<AT> && is_tensor_v<BT> && is_tensor_v<CT>)
TESSEL_HOST_DEVICE void gemm(ThrMMA<TM, V> const& mma, DT&& D, AT const& A, BT const& B, CT const& C) {
  gemm(static_cast<TM const&>(mma), D, A, B, C);
}

// C += A * B with an atom or a TiledMMA.
template <class MMA, class AT, class BT, class CT>
  requires(!is_tensor_v<MMA> && is_tensor_v<AT> && is_tensor_v<BT> && is_tensor_v<CT>)
TESSEL_HOST_DEVICE void gemm(MMA const& mma, AT const& A, BT const& B, CT&& C) {
  gemm(mma, C, A, B, C);
}

// With the scalar FMA of the tensors' element types.
template <class DT, class AT, class BT, class CT>
  requires(is_tensor_v<DT> && is_tensor_v<AT> && is_tensor_v<BT> && is_tensor_v<CT>)
TESSEL_HOST_DEVICE void gemm(DT&& D, AT const& A, BT const& B, CT const& C) {
  using Op = UniversalFMA<typename std::remove_cvref_t<DT>::value_type, typename AT::value_type,
                          typename BT::value_type, typename CT::value_type>;
  gemm(MMA_Atom<Op>{}, D, A, B, C);
}
template <class AT, class BT, class CT>
  requires(is_tensor_v<AT> && is_tensor_v<BT> && is_tensor_v<CT>)
TESSEL_HOST_DEVICE void gemm(AT const& A, BT const& B, CT&& C) {
  gemm(C, A, B, C);
}

}  // namespace tessel
