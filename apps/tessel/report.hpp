// apps/tessel/report.hpp -- what the `tessel` CLI prints and writes about a measurement: the GPU
// header, the JSON and CSV files (bench/results/*.json are the JSON's records; docs/PERF.md,
// Method, says what the fields mean), the progress line, and the figures' number formats.
//
// The generic parts are here; a subcommand supplies its columns as Fields, in order, each value
// already rendered (json_number, json_string, an integer's digits):
//
//   print_gpu_header(gpu, nvml.sm_clock_mhz());
//     GPU        NVIDIA H200 (sm_90, 132 SMs, L2 60 MB), SM clock 1980 MHz max, 345 MHz now
//     software   driver 13.0, CUDA runtime 13.0, cuBLAS 130100
//     tessel     commit 41b55d34fb36, 2026-11-28
//   Fields const row = {{"op", json_string("gemm")}, {"m", "4096"}, {"ms", json_number(0.1768)}};
//   write_json("r.json", gpu, "sm90", "median of ...", {row});
//     {"gpu": "NVIDIA H200", "sm_count": 132, ..., "cublas": 130100, "commit": ..., "date": ...,
//      "suite": "sm90", "method": "median of ...", "results": [{"op": "gemm", "m": 4096, "ms": 0.1768}]}
//     (one key a line, one result a line)
//   append_csv("r.csv", gpu, {{"m", "4096"}, {"ms", "0.1768"}});
//     gpu,commit,m,ms                          (only when r.csv is new)
//     NVIDIA H200,41b55d34fb36,4096,0.1768
#pragma once

#if defined(TESSEL_HAS_CUDA)

#include "measure.hpp"

#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/runtime/device.hpp>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace tessel::cli {

// "%.6g", or null where v is not finite.
std::string json_number(double v);
// s quoted, '"' and '\\' escaped, control characters dropped.
std::string json_string(std::string const& s);
// A CUDA version number as text: 13000 -> "13.0".
std::string version_text(int v);

// Dense peak TFLOP/s of the math the dtype asks for: datasheet figures for H100/H200 SXM, else
// an estimate from SMs x clock x per-SM rate of the architecture.
double peak_tflops(tessel::DeviceInfo const& d, tessel::DType t);

// The three lines that open a run's table: the GPU (with its SM clock now, where NVML reads one:
// sm_clock_now != 0), the software versions (the libraries in gpu's order), tessel's commit and the date.
void print_gpu_header(GpuReport const& gpu, int sm_clock_now);

// One result's fields in order, as (name, text): for JSON each text is a JSON value (json_number,
// json_string, an integer, null); for CSV the cell as written.
using Fields = std::vector<std::pair<std::string, std::string>>;

// Writes (replaces) path: the GPU report, the suite, the method in words, and one object per
// entry of results. Throws std::runtime_error when path cannot be written.
void write_json(std::string const& path, GpuReport const& gpu, std::string const& suite, std::string const& method,
                std::vector<Fields> const& results);

// Appends one row to path: gpu and commit, then row's cells; a new file first gets the header
// line (gpu,commit, then row's names). Throws std::runtime_error when path cannot be written.
void append_csv(std::string const& path, GpuReport const& gpu, Fields const& row);

// "[####......] done/total what" on a terminal's stderr (redrawn in place), else one line per
// call; nothing for a single problem.
void progress(std::size_t done, std::size_t total, std::string const& what);

}  // namespace tessel::cli

#endif  // TESSEL_HAS_CUDA
