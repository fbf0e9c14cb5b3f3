// tessel/tensor.hpp -- the public header of the tensor layer: tensors, element types, copy and MMA
// atoms, TiledCopy and TiledMMA, and the algorithms over tensors (copy, gemm, axpby, fill, clear).
//
// Everything here compiles with a plain C++20 host compiler; the PTX in arch/ is emitted only
// when compiling device code for an architecture that has the instruction. See docs/tensors.md.
#pragma once

#include <tessel/layout.hpp>
#include <tessel/layout/composed_divide.hpp>
#include <tessel/layout/layout_like.hpp>
#include <tessel/layout/recast.hpp>

#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/half.hpp>
#include <tessel/numeric/int_types.hpp>
#include <tessel/numeric/tfloat32.hpp>

#include <tessel/tensor/engine.hpp>
#include <tessel/tensor/identity.hpp>
#include <tessel/tensor/pointer.hpp>
#include <tessel/tensor/recast.hpp>
#include <tessel/tensor/tensor.hpp>
#include <tessel/tensor/tile.hpp>

#include <tessel/arch/sm75_copy_ldmatrix.hpp>
#include <tessel/arch/sm80_copy_cp_async.hpp>
#include <tessel/arch/sm80_mma_sync.hpp>
#include <tessel/arch/sm90_copy_stmatrix.hpp>
#include <tessel/arch/universal_copy.hpp>
#include <tessel/arch/universal_fma.hpp>

#include <tessel/atom/copy_atom.hpp>
#include <tessel/atom/copy_traits.hpp>
#include <tessel/atom/mma_atom.hpp>
#include <tessel/atom/mma_traits.hpp>

#include <tessel/tiled/tiled_copy.hpp>
#include <tessel/tiled/tiled_mma.hpp>

#include <tessel/algorithm/axpby.hpp>
#include <tessel/algorithm/copy.hpp>
#include <tessel/algorithm/fill.hpp>
#include <tessel/algorithm/gemm.hpp>
