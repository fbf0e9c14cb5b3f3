// tessel/algorithm/copy.hpp -- copy between tensors: element-wise, with a Copy_Atom, with a TiledCopy,
// and predicated.
//
// copy(src, dst)                      dst(i) = src(i) for every i (any layouts of equal size)
// copy_if(pred, src, dst)             only where pred(i)
// copy(atom | tiled_copy, src, dst)   src/dst are partitions (CPY, CPY_M, CPY_N, ...): the atom
//                                     runs once per (CPY_M, CPY_N, ...) on the CPY mode
// copy_if(atom | tiled_copy, pred, src, dst)
//                                     pred is indexed by the rest modes (i over CPY_M x CPY_N x ...);
//                                     a zero-fill atom (SM80_CP_ASYNC_*_ZFILL) writes zeros where
//                                     pred is false, any other atom skips those copies
// With AutoVectorizingCopyWithAssumedAlignment<Bits> the widest vector (<= Bits) that both static
// layouts allow is used -- seed 001's 8 half_t per thread become one 128-bit load and store.
// Pre: size(src) == size(dst); for atoms, the CPY mode holds whole executions of the atom.
#pragma once

#include <tessel/atom/copy_atom.hpp>
#include <tessel/config.hpp>
#include <tessel/layout.hpp>
#include <tessel/numeric/int_types.hpp>
#include <tessel/tensor/tensor.hpp>
#include <tessel/tiled/tiled_copy.hpp>

#include <type_traits>

namespace tessel {

template <class SrcTensor, class DstTensor>
  requires(is_tensor_v<SrcTensor> && is_tensor_v<DstTensor>)
TESSEL_HOST_DEVICE constexpr void copy(SrcTensor const& src, DstTensor&& dst) {
  auto d = make_tensor(dst.data(), dst.layout());
  using T = typename std::remove_cvref_t<DstTensor>::value_type;
  TESSEL_UNROLL
  for (int i = 0; i < int(size(d)); ++i) d(i) = static_cast<T>(src(i));
}

template <class PredTensor, class SrcTensor, class DstTensor>
  requires(is_tensor_v<SrcTensor> && is_tensor_v<DstTensor>)
TESSEL_HOST_DEVICE constexpr void copy_if(PredTensor const& pred, SrcTensor const& src, DstTensor&& dst) {
  auto d = make_tensor(dst.data(), dst.layout());
  using T = typename std::remove_cvref_t<DstTensor>::value_type;
  TESSEL_UNROLL
  for (int i = 0; i < int(size(d)); ++i) {
    if (pred(i)) d(i) = static_cast<T>(src(i));
  }
}

namespace detail {

template <class Op>
struct auto_vectorizing : std::false_type {};
template <int Bits>
struct auto_vectorizing<AutoVectorizingCopyWithAssumedAlignment<Bits>> : std::integral_constant<int, Bits> {};

// The widest W (in elements, a power of two dividing N, W*bits <= MaxBits) such that each run
// of W consecutive indices is contiguous and starts at a multiple of W in both static layouts.
template <class SL, class DL, int Bits, int MaxBits>
constexpr int common_vector_width() {
  if constexpr (!(is_static_v<SL> && is_static_v<DL> && is_layout_v<SL> && is_layout_v<DL>)) {
    return 1;
  } else {
    constexpr int n = int(decltype(size(SL{}))::value);
    return []<int... Is>(seq<Is...>) {
      long long s[] = {static_cast<long long>(SL{}(Int<Is>{}))...};
      long long d[] = {static_cast<long long>(DL{}(Int<Is>{}))...};
      int best = 1;
      for (int w = 2; w <= n && w * Bits <= MaxBits; w *= 2) {
        if (n % w != 0) break;
        bool ok = true;
        for (int i = 0; i < n && ok; ++i) {
          if (i % w == 0) {
            ok = s[i] % w == 0 && d[i] % w == 0;
          } else {
            ok = s[i] == s[i - 1] + 1 && d[i] == d[i - 1] + 1;
          }
        }
        if (!ok) break;
        best = w;
      }
      return best;
    }(make_seq<n>{});
  }
}

template <int MaxBits, class SE, class SL, class DE, class DL>
TESSEL_HOST_DEVICE void copy_vectorized(Tensor<SE, SL> const& src, Tensor<DE, DL> const& dst) {
  using T = typename DE::value_type;
  constexpr int w = common_vector_width<SL, DL, sizeof_bits_v<T>, MaxBits>();
  if constexpr (w > 1 && (w * sizeof_bits_v<T>) % 8 == 0) {
    using V = uint_bit_t<w * sizeof_bits_v<T>>;
    TESSEL_UNROLL
    for (int i = 0; i < int(size(src)); i += w) {
      UniversalCopy<V>::copy(*reinterpret_cast<copy_const_t<typename SE::element_type, V>*>(&src(i)),
                             *reinterpret_cast<V*>(&dst(i)));
    }
  } else {
    TESSEL_UNROLL
    for (int i = 0; i < int(size(src)); ++i) dst(i) = static_cast<T>(src(i));
  }
}

template <class Atom, class SE, class SL, class DE, class DL>
TESSEL_HOST_DEVICE void copy_atom_dispatch(Atom const& atom, Tensor<SE, SL> const& src, Tensor<DE, DL> const& dst) {
  using Op = typename Atom::Operation;
  constexpr int R = rank_v<decltype(shape(src.layout()))>;
  if constexpr (auto_vectorizing<Op>::value > 0) {
    if constexpr (R == 1) {
      copy_vectorized<auto_vectorizing<Op>::value>(src, dst);
    } else {
      auto sv = group_modes<1, R>(src);
      auto dv = group_modes<1, R>(dst);
      TESSEL_UNROLL
      for (int i = 0; i < int(size<1>(sv)); ++i) copy_vectorized<auto_vectorizing<Op>::value>(sv(_, i), dv(_, i));
    }
  } else if constexpr (R == 1) {
    using SSize = decltype(size(src.layout()));
    using DSize = decltype(size(dst.layout()));
    if constexpr (is_constant_v<Atom::NumValSrc, SSize> || is_constant_v<Atom::NumValDst, DSize>) {
      atom.call(src, dst);
    } else if constexpr (is_tuple_v<decltype(shape(src.layout()))> && is_tuple_v<decltype(shape(dst.layout()))>) {
      copy_atom_dispatch(atom, tensor<0>(src), tensor<0>(dst));  // ((A,B,...)) -> (A,B,...)
    } else {
      static_assert(sizeof(SE) == 0,
                    "copy(atom, src, dst): the first mode holds neither one execution of the atom nor a tuple "
                    "of such; partition src and dst with the atom's TiledCopy");
    }
  } else {
    auto sv = group_modes<1, R>(src);
    auto dv = group_modes<1, R>(dst);
    TESSEL_UNROLL
    for (int i = 0; i < int(size<1>(sv)); ++i) copy_atom_dispatch(atom, sv(_, i), dv(_, i));
  }
}

template <class Atom>
inline constexpr bool has_zfill_v = requires(Atom const& a) { a.with(true); };

template <class Atom, class PredTensor, class SE, class SL, class DE, class DL>
TESSEL_HOST_DEVICE void copy_if_dispatch(Atom const& atom, PredTensor const& pred, Tensor<SE, SL> const& src,
                                         Tensor<DE, DL> const& dst) {
  constexpr int R = rank_v<decltype(shape(src.layout()))>;
  if constexpr (R == 1) {
    if constexpr (has_zfill_v<Atom>) {
      copy_atom_dispatch(atom.with(bool(pred(0))), src, dst);
    } else if (pred(0)) {
      copy_atom_dispatch(atom, src, dst);
    }
  } else {
    auto sv = group_modes<1, R>(src);
    auto dv = group_modes<1, R>(dst);
    TESSEL_UNROLL
    for (int i = 0; i < int(size<1>(sv)); ++i) {
      if constexpr (has_zfill_v<Atom>) {
        copy_atom_dispatch(atom.with(bool(pred(i))), sv(_, i), dv(_, i));
      } else if (pred(i)) {
        copy_atom_dispatch(atom, sv(_, i), dv(_, i));
      }
    }
  }
}

}  // namespace detail

template <class... Args, class SrcTensor, class DstTensor>
  requires(is_tensor_v<SrcTensor> && is_tensor_v<DstTensor>)
TESSEL_HOST_DEVICE void copy(Copy_Atom<Args...> const& atom, SrcTensor const& src, DstTensor&& dst) {
  detail::copy_atom_dispatch(atom, make_tensor(src.data(), src.layout()), make_tensor(dst.data(), dst.layout()));
}

template <class A, class L, class S, class SrcTensor, class DstTensor>
  requires(is_tensor_v<SrcTensor> && is_tensor_v<DstTensor>)
TESSEL_HOST_DEVICE void copy(TiledCopy<A, L, S> const& tiled, SrcTensor const& src, DstTensor&& dst) {
  detail::copy_atom_dispatch(static_cast<A const&>(tiled), make_tensor(src.data(), src.layout()),
                             make_tensor(dst.data(), dst.layout()));
}

template <class... Args, class PredTensor, class SrcTensor, class DstTensor>
  requires(is_tensor_v<SrcTensor> && is_tensor_v<DstTensor>)
TESSEL_HOST_DEVICE void copy_if(Copy_Atom<Args...> const& atom, PredTensor const& pred, SrcTensor const& src,
                                DstTensor&& dst) {
  detail::copy_if_dispatch(atom, pred, make_tensor(src.data(), src.layout()), make_tensor(dst.data(), dst.layout()));
}

template <class A, class L, class S, class PredTensor, class SrcTensor, class DstTensor>
  requires(is_tensor_v<SrcTensor> && is_tensor_v<DstTensor>)
TESSEL_HOST_DEVICE void copy_if(TiledCopy<A, L, S> const& tiled, PredTensor const& pred, SrcTensor const& src,
                                DstTensor&& dst) {
  detail::copy_if_dispatch(static_cast<A const&>(tiled), pred, make_tensor(src.data(), src.layout()),
                           make_tensor(dst.data(), dst.layout()));
}

}  // namespace tessel
