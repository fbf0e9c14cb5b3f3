// tessel/gemm.hpp -- the GEMM host API: arguments, validation, gemm(), the kernel registry.
#pragma once

#include <tessel/gemm/device/gemm.hpp>
#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/gemm/device/gemm_registry.hpp>
#include <tessel/gemm/device/gemm_validate.hpp>
#include <tessel/core/status.hpp>
