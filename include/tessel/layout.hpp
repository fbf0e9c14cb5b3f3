// tessel/layout.hpp -- the public header of the layout algebra (core + layout).
//
// Compiles with a plain C++20 host compiler (no CUDA headers) and with nvcc for host and device.
// Everything lives in namespace tessel and follows CuTe's names and printed text.
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/check.hpp>
#include <tessel/core/int_tuple.hpp>
#include <tessel/core/integral.hpp>
#include <tessel/core/print.hpp>
#include <tessel/core/tuple.hpp>
#include <tessel/core/tuple_algorithms.hpp>
#include <tessel/core/underscore.hpp>
#include <tessel/layout/coalesce.hpp>
#include <tessel/layout/complement.hpp>
#include <tessel/layout/composed_layout.hpp>
#include <tessel/layout/composition.hpp>
#include <tessel/layout/divide.hpp>
#include <tessel/layout/inverse.hpp>
#include <tessel/layout/layout.hpp>
#include <tessel/layout/print_layout.hpp>
#include <tessel/layout/product.hpp>
#include <tessel/layout/swizzle.hpp>
