// tessel/atom/copy_atom.hpp -- Copy_Atom<Op, T>: one copy instruction applied to elements of T.
//
// The traits' bit layouts become element layouts (recast_layout_bits from 1 bit to bits(T)):
//   ValLayoutSrc/Dst/Ref : (thread, value) -> element of the data one execution moves.
//   NumValSrc/NumValDst  : values per thread on each side.
// atom.call(src, dst) runs the instruction once on rank-1 tensors holding exactly one
// execution's values for this thread; copy() (algorithm/copy.hpp) loops over the rest.
// print(atom) writes CuTe's text:
//   Copy_Atom
//     ThrID:        _1:_0
//     ValLayoutSrc: (_1,_8):(_0,_1)
//     ...
//     ValueType:    16b
#pragma once

#include <tessel/atom/copy_traits.hpp>
#include <tessel/atom/register_view.hpp>
#include <tessel/config.hpp>
#include <tessel/core/print.hpp>
#include <tessel/layout.hpp>
#include <tessel/layout/recast.hpp>
#include <tessel/numeric/int_types.hpp>
#include <tessel/tensor/tensor.hpp>

#include <ostream>
#include <type_traits>
#include <utility>

namespace tessel {

namespace detail {
template <class Traits>
concept traits_with_pred = requires(Traits const& t) { t.pred; };
template <class Traits>
inline constexpr bool has_pred_v = traits_with_pred<Traits>;
}  // namespace detail

template <class... Args>
struct Copy_Atom;

template <class Op, class T>
struct Copy_Atom<Op, T> : Copy_Atom<Copy_Traits<Op>, T> {
  constexpr Copy_Atom() = default;
  TESSEL_HOST_DEVICE constexpr Copy_Atom(Copy_Atom<Copy_Traits<Op>, T> const& base)
      : Copy_Atom<Copy_Traits<Op>, T>(base) {}
};

template <class Op, class... TraitArgs, class T>
struct Copy_Atom<Copy_Traits<Op, TraitArgs...>, T> : Copy_Traits<Op, TraitArgs...> {
  using Traits = Copy_Traits<Op, TraitArgs...>;
  using Operation = Op;
  using ThrID = typename Traits::ThrID;
  using BitLayoutSrc = typename Traits::SrcLayout;
  using BitLayoutDst = typename Traits::DstLayout;
  using BitLayoutRef = typename Traits::RefLayout;
  using ValType = T;

  using ValLayoutSrc = decltype(recast_layout_bits<1, sizeof_bits_v<T>>(BitLayoutSrc{}));
  using ValLayoutDst = decltype(recast_layout_bits<1, sizeof_bits_v<T>>(BitLayoutDst{}));
  using ValLayoutRef = decltype(recast_layout_bits<1, sizeof_bits_v<T>>(BitLayoutRef{}));

  static_assert(decltype(size<0>(ValLayoutSrc{}))::value == decltype(size(ThrID{}))::value,
                "Copy_Atom: the source layout does not have one row per thread of the instruction for this "
                "value type");
  static_assert(decltype(size<0>(ValLayoutDst{}))::value == decltype(size(ThrID{}))::value,
                "Copy_Atom: the destination layout does not have one row per thread of the instruction for this "
                "value type");

  static constexpr int NumValSrc = int(decltype(size<1>(ValLayoutSrc{}))::value);
  static constexpr int NumValDst = int(decltype(size<1>(ValLayoutDst{}))::value);

  constexpr Copy_Atom() = default;
  TESSEL_HOST_DEVICE constexpr Copy_Atom(Traits const& t) : Traits(t) {}

  // The atom with extra trait arguments (the zero-fill predicate of cp.async ..._ZFILL; the
  // mbarrier of a TMA load, whose traits become the executable form).
  template <class... Ws>
    requires requires(Traits const& t, Ws&... ws) { t.with(ws...); }
  TESSEL_HOST_DEVICE constexpr auto with(Ws&&... ws) const {
    using With = std::remove_cvref_t<decltype(Traits::with(ws...))>;
    return Copy_Atom<With, T>(Traits::with(ws...));
  }

  // One execution: src and dst are rank-1 and hold this thread's values of one execution.
  template <class SrcTensor, class DstTensor>
    requires(is_tensor_v<SrcTensor> && is_tensor_v<DstTensor>)
  TESSEL_HOST_DEVICE void call(SrcTensor const& src_in, DstTensor&& dst_in) const {
    auto src = make_tensor(src_in.data(), src_in.layout());  // views: an owned dst stays writable
    auto dst = make_tensor(dst_in.data(), dst_in.layout());
    using SE = typename decltype(src)::engine_type;
    using SL = typename decltype(src)::layout_type;
    using DE = typename decltype(dst)::engine_type;
    using DL = typename decltype(dst)::layout_type;
    using SReg = std::remove_extent_t<typename Op::SRegisters>;
    using DReg = std::remove_extent_t<typename Op::DRegisters>;
    constexpr int NS = int(std::extent_v<typename Op::SRegisters>);
    constexpr int ND = int(std::extent_v<typename Op::DRegisters>);
    detail::check_registers<SReg, SE, SL, NS>();
    detail::check_registers<DReg, DE, DL, ND>();
    [&]<int... Is, int... Js>(seq<Is...>, seq<Js...>) {
      if constexpr (detail::has_pred_v<Traits>) {
        Op::copy(detail::register_ref<SReg>(src, Is)..., detail::register_ref<DReg>(dst, Js)..., this->pred);
      } else {
        Op::copy(detail::register_ref<SReg>(src, Is)..., detail::register_ref<DReg>(dst, Js)...);
      }
    }(make_seq<NS>{}, make_seq<ND>{});
  }
};

template <class T>
struct is_copy_atom : std::false_type {};
template <class... Args>
struct is_copy_atom<Copy_Atom<Args...>> : std::true_type {};
template <class T>
inline constexpr bool is_copy_atom_v = is_copy_atom<std::remove_cvref_t<T>>::value;

template <class Sink, class Op, class... TraitArgs, class T>
TESSEL_HOST_DEVICE void format(Sink& sink, Copy_Atom<Copy_Traits<Op, TraitArgs...>, T> const&) {
  using Atom = Copy_Atom<Copy_Traits<Op, TraitArgs...>, T>;
  sink.text("Copy_Atom\n");
  sink.text("  ThrID:        ");
  format(sink, typename Atom::ThrID{});
  sink.text("\n  ValLayoutSrc: ");
  format(sink, typename Atom::ValLayoutSrc{});
  sink.text("\n  ValLayoutDst: ");
  format(sink, typename Atom::ValLayoutDst{});
  sink.text("\n  ValLayoutRef: ");
  format(sink, typename Atom::ValLayoutRef{});
  sink.text("\n  ValueType:    ");
  sink.integer(sizeof_bits_v<T>);
  sink.text("b\n");
}
template <class Sink, class Op, class T>
TESSEL_HOST_DEVICE void format(Sink& sink, Copy_Atom<Op, T> const& atom) {
  format(sink, static_cast<Copy_Atom<Copy_Traits<Op>, T> const&>(atom));
}

template <class... Args>
std::ostream& operator<<(std::ostream& os, Copy_Atom<Args...> const& a) {
  OstreamSink sink{&os};
  format(sink, a);
  return os;
}

}  // namespace tessel
