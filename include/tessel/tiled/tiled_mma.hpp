// tessel/tiled/tiled_mma.hpp -- TiledMMA: many MMA atoms working on one tile, and each thread's share.
//
// make_tiled_mma(atom, atom_layout, permutation) repeats `atom` over an (M,N,K) grid of atoms
// given by atom_layout (which atom each group of ThrID threads executes) and reads the M, N and K
// modes of the operands through `permutation` (a Tile of integers or layouts; `_` = no
// permutation, extent = atom extent x atoms in that mode).
//   ThrLayoutVMNK = tiled_product(atom ThrID, atom_layout): (ThrV,ThrM,ThrN,ThrK) -> thread
//   tile_size<I>   the extent of mode I of the tile one execution of the TiledMMA covers
//   get_layoutA_TV (thread, value) -> m + tile_M*k  (likewise B over (n,k), C over (m,n))
//   get_slice(t)   ThrMMA: partition_A/B/C(tensor) -> (V, M, K, ...) this thread's elements;
//                  partition_fragment_A/B/C -> register fragments of those shapes
// Seed 001: make_tiled_mma(MMA_Atom<SM80_16x8x8_F32F16F16F32_TN>{}, Layout<Shape<_4,_1,_1>>{},
//   Tile<_64,_16,_16>{}) has ThrLayoutVMNK (_32,_4,_1,_1):(_1,_32,_0,_0) and tile 64x16x16.
// Pre: atom_layout and permutation are static; each tile extent is a multiple of atom extent x
// atoms in that mode.
#pragma once

#include <tessel/atom/mma_atom.hpp>
#include <tessel/config.hpp>
#include <tessel/core/print.hpp>
#include <tessel/layout.hpp>
#include <tessel/layout/composed_divide.hpp>
#include <tessel/layout/layout_like.hpp>
#include <tessel/tensor/tensor.hpp>

#include <ostream>
#include <type_traits>

namespace tessel {

template <class TiledMMA_, class ThrVMNK>
struct ThrMMA;

template <class Atom, class AtomLayoutMNK, class PermutationMNK = Tile<Underscore, Underscore, Underscore>>
struct TiledMMA : Atom {
  using AtomShape_MNK = typename Atom::Shape_MNK;
  using AtomThrID = typename Atom::ThrID;
  using AtomLayoutA_TV = typename Atom::LayoutA_TV;
  using AtomLayoutB_TV = typename Atom::LayoutB_TV;
  using AtomLayoutC_TV = typename Atom::LayoutC_TV;
  using Permutation_MNK = PermutationMNK;

  static_assert(rank_v<typename AtomLayoutMNK::shape_type> == 3,
                "TiledMMA: the atom layout must have rank 3 (atoms along M, N, K); make_tiled_mma pads it");
  static_assert(is_tuple_v<PermutationMNK> && tuple_size_v<PermutationMNK> == 3,
                "TiledMMA: the permutation must be a Tile of 3 modes (M, N, K), `_` for none");
  static_assert(is_static_v<AtomLayoutMNK> && is_static_v<PermutationMNK>,
                "TiledMMA: the atom layout and the permutation must be static (Int<> extents)");

  using ThrLayoutVMNK = decltype(tiled_product(AtomThrID{}, AtomLayoutMNK{}));

  constexpr TiledMMA() = default;
  TESSEL_HOST_DEVICE constexpr TiledMMA(Atom const& a, AtomLayoutMNK const& = {}) : Atom(a) {}

  TESSEL_HOST_DEVICE static constexpr ThrLayoutVMNK get_thr_layout_vmnk() { return {}; }

  // Mode I of the tile: the permutation, or atom extent x atoms in mode I where it is `_`.
  template <int I>
  TESSEL_HOST_DEVICE static constexpr auto permutation_mnk() {
    static_assert(0 <= I && I < 3, "permutation_mnk<I>: I is 0 (M), 1 (N) or 2 (K)");
    using P = std::remove_cvref_t<decltype(get<I>(PermutationMNK{}))>;
    if constexpr (is_underscore_v<P>) {
      return size<I>(AtomShape_MNK{}) * size<I + 1>(ThrLayoutVMNK{});
    } else {
      return P{};
    }
  }
  template <int I>
  TESSEL_HOST_DEVICE static constexpr auto tile_size_mnk() {
    return size(permutation_mnk<I>());
  }

  // (M,N,...) -> ((ThrV,(ThrM,ThrN)),(FrgV,(RestM,RestN,...)))
  template <class L>
  TESSEL_HOST_DEVICE static constexpr auto thrfrg_C(L const& c) {
    return thrfrg<0, 1, 1, 2>(c, AtomLayoutC_TV{});
  }
  // (M,K,...) -> ((ThrV,(ThrM,ThrK)),(FrgV,(RestM,RestK,...)))
  template <class L>
  TESSEL_HOST_DEVICE static constexpr auto thrfrg_A(L const& a) {
    return thrfrg<0, 2, 1, 3>(a, AtomLayoutA_TV{});
  }
  // (N,K,...) -> ((ThrV,(ThrN,ThrK)),(FrgV,(RestN,RestK,...)))
  template <class L>
  TESSEL_HOST_DEVICE static constexpr auto thrfrg_B(L const& b) {
    return thrfrg<1, 2, 2, 3>(b, AtomLayoutB_TV{});
  }

  template <class ThrIdx>
    requires is_integral_v<ThrIdx>
  TESSEL_HOST_DEVICE constexpr auto get_slice(ThrIdx const& thr_idx) const {
    auto vmnk = get_flat_coord(ThrLayoutVMNK{}, thr_idx);
    return ThrMMA<TiledMMA, decltype(vmnk)>{*this, vmnk};
  }
  template <class ThrIdx>
    requires is_integral_v<ThrIdx>
  TESSEL_HOST_DEVICE constexpr auto get_thread_slice(ThrIdx const& thr_idx) const {
    return get_slice(thr_idx);
  }

  // (thread index, value) -> m + tile_M * n over the C tile.
  TESSEL_HOST_DEVICE static constexpr auto get_layoutC_TV() {
    auto ref = make_layout(make_shape(tile_size_mnk<0>(), tile_size_mnk<1>()));
    return composition(thrfrg_C(ref), make_tile(right_inverse(ThrLayoutVMNK{}), _));
  }
  // (thread index, value) -> m + tile_M * k over the A tile; threads that differ only in N share.
  TESSEL_HOST_DEVICE static constexpr auto get_layoutA_TV() {
    auto ref = make_layout(make_shape(tile_size_mnk<0>(), tile_size_mnk<2>()));
    auto atile = make_tile(_, make_tile(make_layout(make_shape(size<1>(ThrLayoutVMNK{}), size<2>(ThrLayoutVMNK{})),
                                                    make_stride(Int<1>{}, Int<0>{})),
                                        _));
    return composition(composition(thrfrg_A(ref), make_tile(atile, _)), make_tile(right_inverse(ThrLayoutVMNK{}), _));
  }
  // (thread index, value) -> n + tile_N * k over the B tile; threads that differ only in M share.
  TESSEL_HOST_DEVICE static constexpr auto get_layoutB_TV() {
    auto ref = make_layout(make_shape(tile_size_mnk<1>(), tile_size_mnk<2>()));
    auto btile = make_tile(_, make_tile(make_layout(make_shape(size<1>(ThrLayoutVMNK{}), size<2>(ThrLayoutVMNK{})),
                                                    make_stride(Int<0>{}, Int<1>{})),
                                        _));
    return composition(composition(thrfrg_B(ref), make_tile(btile, _)), make_tile(right_inverse(ThrLayoutVMNK{}), _));
  }

 private:
  template <int P0, int P1, int T0, int T1, class L, class AtomTV>
  TESSEL_HOST_DEVICE static constexpr auto thrfrg(L const& l, AtomTV const& atom_tv) {
    static_assert(rank_v<decltype(shape(l))> >= 2, "TiledMMA partition: the tensor needs at least 2 modes");
    auto permuted = logical_divide(l, make_tile(permutation_mnk<P0>(), permutation_mnk<P1>()));
    auto atoms = zipped_divide(permuted, make_tile(make_layout(size<P0>(AtomShape_MNK{})),
                                                   make_layout(size<P1>(AtomShape_MNK{}))));  // ((AtomM,AtomK),(RestM,RestK))
    auto tv = composition(atoms, make_tile(atom_tv, _));                                     // ((ThrV,FrgV),(RestM,RestK))
    auto thr_tile = make_tile(_, make_tile(make_layout(size<T0>(ThrLayoutVMNK{})), make_layout(size<T1>(ThrLayoutVMNK{}))));
    return zipped_divide(tv, thr_tile);  // ((ThrV,(ThrM,ThrK)),(FrgV,(RestM,RestK)))
  }
};

template <class TiledMMA_, class ThrVMNK>
struct ThrMMA : TiledMMA_ {
  ThrVMNK thr_vmnk_;

  TESSEL_HOST_DEVICE constexpr ThrMMA(TiledMMA_ const& mma, ThrVMNK const& vmnk) : TiledMMA_(mma), thr_vmnk_(vmnk) {}

  template <class T>
    requires is_tensor_v<T>
  TESSEL_HOST_DEVICE constexpr auto partition_C(T&& c) const {
    auto thr = make_tensor(c.data(), TiledMMA_::thrfrg_C(c.layout()));
    auto crd = make_coord(get<0>(thr_vmnk_), make_coord(get<1>(thr_vmnk_), get<2>(thr_vmnk_)));
    return thr(crd, make_coord(_, repeat<rank_v<decltype(shape<1, 1>(thr.layout()))>>(_)));
  }
  template <class T>
    requires is_tensor_v<T>
  TESSEL_HOST_DEVICE constexpr auto partition_A(T&& a) const {
    auto thr = make_tensor(a.data(), TiledMMA_::thrfrg_A(a.layout()));
    auto crd = make_coord(get<0>(thr_vmnk_), make_coord(get<1>(thr_vmnk_), get<3>(thr_vmnk_)));
    return thr(crd, make_coord(_, repeat<rank_v<decltype(shape<1, 1>(thr.layout()))>>(_)));
  }
  template <class T>
    requires is_tensor_v<T>
  TESSEL_HOST_DEVICE constexpr auto partition_B(T&& b) const {
    auto thr = make_tensor(b.data(), TiledMMA_::thrfrg_B(b.layout()));
    auto crd = make_coord(get<0>(thr_vmnk_), make_coord(get<2>(thr_vmnk_), get<3>(thr_vmnk_)));
    return thr(crd, make_coord(_, repeat<rank_v<decltype(shape<1, 1>(thr.layout()))>>(_)));
  }

  template <class T>
    requires is_tensor_v<T>
  TESSEL_HOST_DEVICE constexpr auto partition_fragment_C(T&& c) const {
    return TiledMMA_::make_fragment_C(partition_C(c));
  }
  template <class T>
    requires is_tensor_v<T>
  TESSEL_HOST_DEVICE constexpr auto partition_fragment_A(T&& a) const {
    return TiledMMA_::make_fragment_A(partition_A(a));
  }
  template <class T>
    requires is_tensor_v<T>
  TESSEL_HOST_DEVICE constexpr auto partition_fragment_B(T&& b) const {
    return TiledMMA_::make_fragment_B(partition_B(b));
  }
};

template <class Op, class ThrLayout = Layout<Shape<_1, _1, _1>>, class Permutations = Tile<Underscore, Underscore, Underscore>>
TESSEL_HOST_DEVICE constexpr auto make_tiled_mma(MMA_Atom<Op> const& atom, ThrLayout const& thr_layout = {},
                                                 Permutations const& permutations = {}) {
  auto thr_layout_mnk = append<3>(thr_layout, Layout<_1, _0>{});
  auto permutation_mnk = append<3>(permutations, _);
  return TiledMMA<MMA_Atom<Op>, decltype(thr_layout_mnk), decltype(permutation_mnk)>{atom};
}
template <class Op, class ThrLayout = Layout<Shape<_1, _1, _1>>, class Permutations = Tile<Underscore, Underscore, Underscore>>
  requires(!is_mma_atom_v<Op>)
TESSEL_HOST_DEVICE constexpr auto make_tiled_mma(Op const&, ThrLayout const& thr_layout = {},
                                                 Permutations const& permutations = {}) {
  return make_tiled_mma(MMA_Atom<Op>{}, thr_layout, permutations);
}

template <class T>
struct is_tiled_mma : std::false_type {};
template <class A, class L, class P>
struct is_tiled_mma<TiledMMA<A, L, P>> : std::true_type {};
template <class T>
inline constexpr bool is_tiled_mma_v = is_tiled_mma<std::remove_cvref_t<T>>::value;

// ---- sizes --------------------------------------------------------------------------------------

template <int I, class A, class L, class P>
TESSEL_HOST_DEVICE constexpr auto tile_size(TiledMMA<A, L, P> const&) {
  return TiledMMA<A, L, P>::template tile_size_mnk<I>();
}
template <class A, class L, class P>
TESSEL_HOST_DEVICE constexpr auto tile_shape(TiledMMA<A, L, P> const& m) {
  return make_shape(tile_size<0>(m), tile_size<1>(m), tile_size<2>(m));
}
// The number of threads (size<I...> of ThrLayoutVMNK).
template <int... Is, class A, class L, class P>
TESSEL_HOST_DEVICE constexpr auto size(TiledMMA<A, L, P> const&) {
  return size<Is...>(typename TiledMMA<A, L, P>::ThrLayoutVMNK{});
}
template <int... Is, class A, class L, class P>
TESSEL_HOST_DEVICE constexpr auto thr_size(TiledMMA<A, L, P> const& m) {
  return size<Is...>(m);
}

// The shape of one thread's accumulators for an (M,N,...) tile, without a tensor: (V, M', N', ...).
template <class A, class L, class P, class ShapeMN>
TESSEL_HOST_DEVICE constexpr auto partition_shape_C(TiledMMA<A, L, P> const&, ShapeMN const& shape_mn) {
  using M = TiledMMA<A, L, P>;
  constexpr int R = rank_v<ShapeMN>;
  static_assert(R >= 2, "partition_shape_C: the shape needs at least (M,N)");
  auto v = shape<1>(typename M::AtomLayoutC_TV{});
  auto m = shape_div(size<0>(shape_mn), size<0>(typename M::AtomShape_MNK{}) * size<1>(typename M::ThrLayoutVMNK{}));
  auto n = shape_div(size<1>(shape_mn), size<1>(typename M::AtomShape_MNK{}) * size<2>(typename M::ThrLayoutVMNK{}));
  return tuple_cat(make_shape(v, m, n), take<2, R>(shape_mn));
}
template <class A, class L, class P, class ShapeMN>
TESSEL_HOST_DEVICE constexpr auto partition_fragment_C(TiledMMA<A, L, P> const& mma, ShapeMN const& shape_mn) {
  return make_tensor<typename TiledMMA<A, L, P>::FrgTypeC>(partition_shape_C(mma, shape_mn));
}

// ---- printing -----------------------------------------------------------------------------------

template <class Sink, class A, class L, class P>
TESSEL_HOST_DEVICE void format(Sink& sink, TiledMMA<A, L, P> const& mma) {
  sink.text("TiledMMA\n");
  sink.text("  ThrLayoutVMNK:  ");
  format(sink, mma.get_thr_layout_vmnk());
  sink.text("\n  PermutationMNK: ");
  format(sink, P{});
  sink.text("\n");
  format(sink, static_cast<A const&>(mma));
}

template <class A, class L, class P>
std::ostream& operator<<(std::ostream& os, TiledMMA<A, L, P> const& m) {
  OstreamSink sink{&os};
  format(sink, m);
  return os;
}

}  // namespace tessel
