// tessel/schedule.hpp -- the public header of threadblock swizzles and tile schedulers.
//
// Every mapping here is a pure function of an index: a kernel passes its block index (or CTA
// index and step) in, and the same functions run and are tested on the host. Compiles with a
// plain C++20 host compiler (no CUDA headers) and with nvcc. docs/schedules.md explains each
// schedule, the `tessel swizzle` CLI that draws them, and the L2-locality figure.
#pragma once

#include <tessel/config.hpp>
#include <tessel/schedule/batched_swizzle.hpp>
#include <tessel/schedule/dim3.hpp>
#include <tessel/schedule/fast_divisor.hpp>
#include <tessel/core/gemm_coord.hpp>
#include <tessel/schedule/horizontal_swizzle.hpp>
#include <tessel/schedule/identity_swizzle.hpp>
#include <tessel/schedule/l2_locality.hpp>
#include <tessel/schedule/persistent.hpp>
#include <tessel/schedule/raster.hpp>
#include <tessel/schedule/schedule_error.hpp>
#include <tessel/schedule/split_k.hpp>
#include <tessel/schedule/stream_k.hpp>
