// tessel/atom/register_view.hpp -- reading a rank-1 tensor as the registers of an instruction.
//
// An instruction takes R registers of type Reg (e.g. 4 x uint32_t for an mma.sync A fragment of
// 8 half_t). register_ref<Reg>(t, r) is register r of the values of t: elements
// [r*K, (r+1)*K) with K = bits(Reg) / bits(value), which must be consecutive in memory.
// When t's layout is static this is checked at compile time.
#pragma once

#include <tessel/config.hpp>
#include <tessel/layout.hpp>
#include <tessel/numeric/int_types.hpp>
#include <tessel/tensor/pointer.hpp>
#include <tessel/tensor/tensor.hpp>

#include <type_traits>

namespace tessel::detail {

// True when every group of K consecutive indices of the static layout L is contiguous in memory.
template <class L, int K>
constexpr bool groups_contiguous() {
  if constexpr (!is_static_v<L> || !is_layout_v<L>) {
    return true;  // run-time layouts: the caller's promise
  } else {
    constexpr int n = int(decltype(size(L{}))::value);
    return []<int... Is>(seq<Is...>) {
      long long off[] = {static_cast<long long>(L{}(Int<Is>{}))...};
      for (int i = 0; i < n; ++i) {
        if (i % K != 0 && off[i] != off[i - 1] + 1) return false;
      }
      return true;
    }(make_seq<n>{});
  }
}

template <class Reg, class E, class L>
TESSEL_HOST_DEVICE constexpr decltype(auto) register_ref(Tensor<E, L> const& t, int r) {
  using T = typename E::element_type;
  constexpr int k = sizeof_bits_v<Reg> / sizeof_bits_v<T>;
  auto* p = &t(r * k);
  using R = copy_const_t<std::remove_pointer_t<decltype(p)>, Reg>;
  return *reinterpret_cast<R*>(p);
}

template <class Reg, class E, class L, int N>
constexpr void check_registers() {
  using T = typename E::element_type;
  static_assert(sizeof_bits_v<Reg> % sizeof_bits_v<T> == 0,
                "atom registers: a register must hold a whole number of tensor elements");
  constexpr int k = sizeof_bits_v<Reg> / sizeof_bits_v<T>;
  using Size = decltype(size(std::declval<L const&>()));
  static_assert(is_c<Size>::value, "atom registers: the tensor handed to an instruction needs a static size");
  static_assert(int(Size::value) == N * k,
                "atom registers: the tensor handed to the instruction has the wrong number of elements for "
                "its registers. Partition with the atom's TiledCopy/TiledMMA so each call sees one atom's "
                "values.");
  static_assert(groups_contiguous<L, k>(),
                "atom registers: the elements that form one register are not consecutive in memory. "
                "Use a layout whose atom-value mode is contiguous (make_fragment_like builds one).");
}

}  // namespace tessel::detail
