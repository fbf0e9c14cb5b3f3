// tessel/atom/mma_atom.hpp -- MMA_Atom<Op>: one MMA instruction and its fragment layouts.
//
// MMA_Atom<Op> exposes the traits as LayoutA_TV/LayoutB_TV/LayoutC_TV (thread, value) -> tile
// coordinate, ThrID and Shape_MNK, and calls the instruction on rank-1 fragment tensors:
//   atom.call(D, A, B, C)   D = A*B + C, one execution's values of this thread in each tensor
// make_fragment_A/B/C(partitioned) allocate register fragments shaped like a partition.
// Traits may take over both: a static Traits::make_fragment_A/B(partition) gives the operand's
// fragment (wgmma's shared-memory operands: descriptors, atom/gmma_desc_fragment.hpp), and a
// Traits::mma_unpack(D, A, B, C) issues the instruction on fragments the register path cannot
// unpack (atom/mma_traits_sm90.hpp).
// print(atom) writes CuTe's text:
//   MMA_Atom
//     ThrID:      _32:_1
//     Shape_MNK:  (_16,_8,_8)
//     LayoutA_TV: ((_4,_8),(_2,_2)):((_32,_1),(_16,_8))  ...
#pragma once

#include <tessel/atom/mma_traits.hpp>
#include <tessel/atom/register_view.hpp>
#include <tessel/config.hpp>
#include <tessel/core/print.hpp>
#include <tessel/layout.hpp>
#include <tessel/tensor/tensor.hpp>

#include <ostream>
#include <type_traits>

namespace tessel {

template <class... Args>
struct MMA_Atom;

template <class Op>
struct MMA_Atom<Op> : MMA_Atom<MMA_Traits<Op>> {};

template <class Op, class... TraitArgs>
struct MMA_Atom<MMA_Traits<Op, TraitArgs...>> : MMA_Traits<Op, TraitArgs...> {
  using Traits = MMA_Traits<Op, TraitArgs...>;
  using Operation = Op;
  using ValTypeD = typename Traits::ValTypeD;
  using ValTypeA = typename Traits::ValTypeA;
  using ValTypeB = typename Traits::ValTypeB;
  using ValTypeC = typename Traits::ValTypeC;
  using FrgTypeD = ValTypeD;
  using FrgTypeA = ValTypeA;
  using FrgTypeB = ValTypeB;
  using FrgTypeC = ValTypeC;
  using Shape_MNK = typename Traits::Shape_MNK;
  using ThrID = typename Traits::ThrID;
  using LayoutA_TV = typename Traits::ALayout;
  using LayoutB_TV = typename Traits::BLayout;
  using LayoutC_TV = typename Traits::CLayout;

  // D = A*B + C on this thread's fragment of one execution (rank-1 tensors).
  template <class DTensor, class AE, class AL, class BE, class BL, class CE, class CL>
    requires is_tensor_v<DTensor>
  TESSEL_HOST_DEVICE void call(DTensor&& D_in, Tensor<AE, AL> const& A, Tensor<BE, BL> const& B,
                               Tensor<CE, CL> const& C) const {
    auto D = make_tensor(D_in.data(), D_in.layout());  // a view: an owned D stays writable
    if constexpr (requires { this->mma_unpack(D, A, B, C); }) {  // operands the traits unpack (wgmma's descriptors)
      this->mma_unpack(D, A, B, C);
    } else {
      call_registers(D, A, B, C);
    }
  }
  // C += A*B.
  template <class AE, class AL, class BE, class BL, class CTensor>
    requires is_tensor_v<CTensor>
  TESSEL_HOST_DEVICE void call(Tensor<AE, AL> const& A, Tensor<BE, BL> const& B, CTensor&& C) const {
    auto c = make_tensor(C.data(), C.layout());
    call(c, A, B, c);
  }

  // Register fragments for partitions (V, M|N, K|N, ...) made by a TiledMMA; the traits' own
  // (wgmma's shared-memory operands: descriptors) where they have one.
  template <class E, class L>
  TESSEL_HOST_DEVICE static constexpr auto make_fragment_C(Tensor<E, L> const& c) {
    static_assert(rank_v<decltype(c.shape())> >= 3, "make_fragment_C: expects a partition (V,M,N,...)");
    return make_tensor<FrgTypeC>(c.shape());
  }
  template <class E, class L>
  TESSEL_HOST_DEVICE static constexpr auto make_fragment_A(Tensor<E, L> const& a) {
    static_assert(rank_v<decltype(a.shape())> >= 3, "make_fragment_A: expects a partition (V,M,K,...)");
    if constexpr (requires { Traits::make_fragment_A(a); }) {
      return Traits::make_fragment_A(a);
    } else {
      return make_fragment_like<FrgTypeA>(a.layout());
    }
  }
  template <class E, class L>
  TESSEL_HOST_DEVICE static constexpr auto make_fragment_B(Tensor<E, L> const& b) {
    static_assert(rank_v<decltype(b.shape())> >= 3, "make_fragment_B: expects a partition (V,N,K,...)");
    if constexpr (requires { Traits::make_fragment_B(b); }) {
      return Traits::make_fragment_B(b);
    } else {
      return make_fragment_like<FrgTypeB>(b.layout());
    }
  }

 private:
  // One execution on register operands: each register of the op from the fragments' values.
  template <class DE, class DL, class AE, class AL, class BE, class BL, class CE, class CL>
  TESSEL_HOST_DEVICE static void call_registers(Tensor<DE, DL> const& D, Tensor<AE, AL> const& A, Tensor<BE, BL> const& B,
                                                Tensor<CE, CL> const& C) {
    using DReg = std::remove_extent_t<typename Op::DRegisters>;
    using AReg = std::remove_extent_t<typename Op::ARegisters>;
    using BReg = std::remove_extent_t<typename Op::BRegisters>;
    using CReg = std::remove_extent_t<typename Op::CRegisters>;
    constexpr int ND = int(std::extent_v<typename Op::DRegisters>);
    constexpr int NA = int(std::extent_v<typename Op::ARegisters>);
    constexpr int NB = int(std::extent_v<typename Op::BRegisters>);
    constexpr int NC = int(std::extent_v<typename Op::CRegisters>);
    detail::check_registers<DReg, DE, DL, ND>();
    detail::check_registers<AReg, AE, AL, NA>();
    detail::check_registers<BReg, BE, BL, NB>();
    detail::check_registers<CReg, CE, CL, NC>();
    [&]<int... Ds, int... As, int... Bs, int... Cs>(seq<Ds...>, seq<As...>, seq<Bs...>, seq<Cs...>) {
      Op::fma(detail::register_ref<DReg>(D, Ds)..., detail::register_ref<AReg>(A, As)...,
              detail::register_ref<BReg>(B, Bs)..., detail::register_ref<CReg>(C, Cs)...);
    }(make_seq<ND>{}, make_seq<NA>{}, make_seq<NB>{}, make_seq<NC>{});
  }
};

template <class T>
struct is_mma_atom : std::false_type {};
template <class... Args>
struct is_mma_atom<MMA_Atom<Args...>> : std::true_type {};
template <class T>
inline constexpr bool is_mma_atom_v = is_mma_atom<std::remove_cvref_t<T>>::value;

template <class Sink, class Op, class... TraitArgs>
TESSEL_HOST_DEVICE void format(Sink& sink, MMA_Atom<MMA_Traits<Op, TraitArgs...>> const&) {
  using Atom = MMA_Atom<MMA_Traits<Op, TraitArgs...>>;
  sink.text("MMA_Atom\n");
  sink.text("  ThrID:      ");
  format(sink, typename Atom::ThrID{});
  sink.text("\n  Shape_MNK:  ");
  format(sink, typename Atom::Shape_MNK{});
  sink.text("\n  LayoutA_TV: ");
  format(sink, typename Atom::LayoutA_TV{});
  sink.text("\n  LayoutB_TV: ");
  format(sink, typename Atom::LayoutB_TV{});
  sink.text("\n  LayoutC_TV: ");
  format(sink, typename Atom::LayoutC_TV{});
  sink.text("\n");
}
template <class Sink, class Op>
TESSEL_HOST_DEVICE void format(Sink& sink, MMA_Atom<Op> const& atom) {
  format(sink, static_cast<MMA_Atom<MMA_Traits<Op>> const&>(atom));
}

template <class... Args>
std::ostream& operator<<(std::ostream& os, MMA_Atom<Args...> const& a) {
  OstreamSink sink{&os};
  format(sink, a);
  return os;
}

}  // namespace tessel
