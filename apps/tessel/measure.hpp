// apps/tessel/measure.hpp -- how the `tessel` CLI times a candidate against a baseline
// (docs/PERF.md, Method), shared by the subcommands that time kernels (tessel gemm, tessel
// attention), and the command line they share (options, sweep files).
//
// The subcommand owns its problem: the input sets' contents, the launches, the verification.
// This file owns the method: how many input sets (together >= 2x the L2, so no launch finds its
// operands cached), warm-up, the timed launches interleaved candidate, baseline, candidate,
// baseline ... (clock and power drift hit both sides), each launch between its own CUDA events
// and on the next input set in turn, the medians, and the conditions recorded with them (the GPU,
// its SM clock after the timed runs, the software versions, the commit).
//
//   int device = 0;
//   GpuReport gpu = open_gpu("tessel gemm", &device);       // no usable GPU: UsageError
//   gpu.libraries.push_back({"cuBLAS", "cublas", version});  // the baseline's library
//   Nvml nvml(device);
//   std::string why;
//   int const sets = input_set_count(set_bytes, fixed_bytes, gpu.info.l2_bytes, &why);
//   if (sets == 0) ...                                       // too large: `why` says so
//   ... allocate and fill `sets` input sets; verify both sides on set 0 ...
//   Measurement const m = measure_interleaved({iters, warmup, gap_ms, sets, stream},
//                                             [&](int s) { candidate on set s },
//                                             [&](int s) { baseline on set s },  // {}: no baseline
//                                             nvml);
//   m.candidate.median_ms, m.baseline.median_ms, m.sm_clock_after_mhz
//
// The command line (each subcommand names its options; the values' meaning is its own):
//   OptionNames const names{"gemm", {"--m", "--iters", "--sweep"}, {"--verify", "--no-verify", "--help"}};
//   Options base;
//   parse_options(base, args, names, "");                  // --m 64, --m=64, --no-verify
//   std::vector<Options> lines = base.has("--sweep")
//       ? read_sweep(*base.get("--sweep"), base, names, [](Options const& o) { (void)make_problem(o); })
//       : std::vector<Options>{base};
//   long long m = parse_int("--m", *lines[0].get("--m"), 0, 1LL << 40);
//
// report.hpp prints and writes what comes back. Errors are std::runtime_error (one line), except
// the command line's and open_gpu's UsageError (exit 2: bad options and no GPU are bad input, not
// failures).
#pragma once

#if defined(TESSEL_HAS_CUDA)

#include <tessel/core/status.hpp>
#include <tessel/runtime/device.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tessel::cli {

// ---- the command line ------------------------------------------------------------------------------

// One command line's (or sweep line's) options: name -> value, "" for a flag.
struct Options {
  std::map<std::string, std::string> values;
  bool has(std::string const& name) const { return values.count(name) != 0; }
  std::string const* get(std::string const& name) const {  // nullptr where absent
    auto const it = values.find(name);
    return it == values.end() ? nullptr : &it->second;
  }
};

// What a subcommand accepts: options that take a value and flags that take none.
struct OptionNames {
  std::string command;              // "gemm": the messages say "try: tessel gemm --help"
  std::vector<std::string> valued;  // "--m", "--dtype", ...
  std::vector<std::string> flags;   // "--verify", "--help", ...
};

// Adds args to o: `--name value`, `--name=value`, or a flag; a later value replaces an earlier
// one, and a flag --X and its negation --no-X replace each other. An unknown option, a stray
// word, a missing or empty value, or a flag given a value is a UsageError prefixed by `where`
// (a sweep file's "path:line: ").
void parse_options(Options& o, std::vector<std::string> const& args, OptionNames const& names, std::string const& where);

// text as an integer in lo..hi, or a number; else UsageError naming `option`.
long long parse_int(std::string const& option, std::string const& text, long long lo, long long hi);
float parse_float(std::string const& option, std::string const& text);
// text's comma-separated items, empty ones kept: "a,,b" -> {"a", "", "b"}; "" -> {""}.
std::vector<std::string> split_commas(std::string const& text);

// --sweep FILE: one Options per line that holds any ('#' starts a comment), each parsed over a
// copy of base, so a line's options override the command line's. check(line) throws the line's
// UsageError, which comes back prefixed "path:line: "; an unreadable or empty file, or a line that
// names another sweep file, is a UsageError too.
std::vector<Options> read_sweep(std::string const& path, Options const& base, OptionNames const& names,
                                std::function<void(Options const&)> const& check);

// The suite a JSON file records: --suite, else the --sweep file's name up to its first '.', else "".
std::string suite_name(Options const& base);

// ---- device helpers ------------------------------------------------------------------------------

// Throws std::runtime_error "<what>: <error name>: <error string>" when err is not cudaSuccess.
void cuda_check(cudaError_t err, char const* what);
// Throws std::runtime_error "<what>: <reason>" when s failed.
void status_check(tessel::Status const& s, char const* what);

// cudaMalloc'd bytes, freed on destruction; no allocation for 0 bytes (p stays null).
struct DeviceBuffer {
  void* p = nullptr;
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) {
    if (bytes) cuda_check(cudaMalloc(&p, bytes), "cudaMalloc");
  }
  ~DeviceBuffer() {
    if (p) cudaFree(p);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : p(o.p) { o.p = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(p, o.p);
    return *this;
  }
};

// ---- the GPU and its conditions ------------------------------------------------------------------

// A baseline's library as the reports name it: the header line says "cuBLAS 130100", the JSON
// "cublas": 130100.
struct LibraryVersion {
  std::string name, json_key;
  int version = 0;
};

struct GpuReport {
  tessel::DeviceInfo info;
  std::vector<LibraryVersion> libraries;  // the subcommand adds its baselines' libraries
  std::string commit, date;               // the commit built from, today (UTC, YYYY-MM-DD)
};

// The current CUDA device (its index into *device) and its report, libraries left empty.
// No usable GPU: UsageError "<why> (<command> needs a GPU)".
GpuReport open_gpu(char const* command, int* device);

// NVML, if the driver ships it (loaded at run time: no link dependency): the SM clock and power now.
// Each reads 0 where NVML is missing or refuses.
class Nvml {
 public:
  explicit Nvml(int cuda_device);
  ~Nvml();
  Nvml(Nvml const&) = delete;
  Nvml& operator=(Nvml const&) = delete;
  int sm_clock_mhz() const;
  double power_w() const;

 private:
  void* lib_ = nullptr;
  void* dev_ = nullptr;
  int (*clock_)(void*, int, unsigned*) = nullptr;
  int (*power_)(void*, unsigned*) = nullptr;
};

// ---- the method ------------------------------------------------------------------------------------

// How many input sets of set_bytes each to rotate through: enough that together they are at
// least twice the L2 (nothing stays cached), at least 2 and at most 64, and no more than fit in
// 85% of the free device memory after fixed_bytes (what the subcommand allocates besides the sets).
// 0, with *why "needs N MiB, the GPU has F MiB free", when not even one set fits.
// TESSEL_CLI_SETS=N caps the count at N: a diagnostic, so that a launch may find its code,
// parameters and inputs in the L2 (what a warm cache changes; the JSON records input_sets).
int input_set_count(std::size_t set_bytes, std::size_t fixed_bytes, std::size_t l2_bytes, std::string* why);

struct Timing {
  double median_ms = 0, min_ms = 0, max_ms = 0;
};
// The median (mean of the middle two for an even count), min and max; all 0 for no samples.
Timing summarize(std::vector<float> v);

struct MeasureMethod {
  int iters = 0;                  // timed launches of each side
  int warmup = 0;                 // untimed launches of each side first
  double gap_ms = 0;              // idle milliseconds before each timed pair (burst figures), 0: none
  int sets = 0;                   // input sets to rotate through (input_set_count)
  cudaStream_t stream = nullptr;  // the stream both sides launch on
};

// Enqueues one side's launch on input set `set` (0 <= set < sets) on the method's stream. Make
// each set's arguments beforehand: whatever it does on the host runs between that launch's events.
using LaunchOnSet = std::function<void(int set)>;

struct Measurement {
  Timing candidate, baseline;  // baseline all 0 when there was none
  int sm_clock_after_mhz = 0;  // NVML's reading just after the timed runs, 0 without NVML
  double power_after_w = 0.0;
};

// The timed part of the method. Warm-up: `warmup` times candidate, then baseline. Then `iters`
// times: (after gap_ms idle, if asked) candidate between its own two events, then baseline
// between its own two. Every launch, warm-up included, either side's, takes the next input set in
// turn (set = launch number % sets): a side that ran on the set the other had just read would
// find much of it in L2. An empty `baseline` times the candidate alone (still on every set in
// turn). The stream is synchronized before the clock is read and the events are.
Measurement measure_interleaved(MeasureMethod const& method, LaunchOnSet const& candidate, LaunchOnSet const& baseline,
                                Nvml const& nvml);

}  // namespace tessel::cli

#endif  // TESSEL_HAS_CUDA
