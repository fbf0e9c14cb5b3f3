// apps/tessel/measure.cpp -- the CLI's measurement method (measure.hpp; docs/PERF.md, Method).
#if defined(TESSEL_HAS_CUDA)

#include "measure.hpp"

#include "command.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#ifndef TESSEL_GIT_COMMIT
#define TESSEL_GIT_COMMIT "unknown"
#endif

namespace tessel::cli {

// ---- the command line ------------------------------------------------------------------------------

void parse_options(Options& o, std::vector<std::string> const& args, OptionNames const& names, std::string const& where) {
  auto const listed = [](std::vector<std::string> const& list, std::string const& name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  std::string const help = "(try: tessel " + names.command + " --help)";
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::optional<std::string> value;
    if (auto eq = name.find('='); eq != std::string::npos && name.rfind("--", 0) == 0) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    bool const flag = listed(names.flags, name);
    if (!flag && !listed(names.valued, name)) {
      if (name.rfind("-", 0) == 0) throw UsageError(where + "unknown option '" + name + "' " + help);
      throw UsageError(where + "unexpected argument '" + name + "' (options start with --; try: tessel " + names.command +
                       " --help)");
    }
    if (flag) {
      if (value) throw UsageError(where + name + " takes no value");
      o.values[name] = "";
      o.values.erase(name.rfind("--no-", 0) == 0 ? "--" + name.substr(5) : "--no-" + name.substr(2));
      continue;
    }
    if (!value) {
      if (i + 1 >= args.size()) throw UsageError(where + name + " needs a value " + help);
      value = args[++i];
    }
    if (value->empty()) throw UsageError(where + name + " needs a non-empty value");
    o.values[name] = *value;
  }
}

long long parse_int(std::string const& option, std::string const& text, long long lo, long long hi) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (std::exception const&) {
    used = 0;
  }
  if (used != text.size() || text.empty()) throw UsageError(option + ": '" + text + "' is not an integer");
  if (v < lo || v > hi)
    throw UsageError(option + " must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + text);
  return v;
}

std::vector<std::string> split_commas(std::string const& text) {
  std::vector<std::string> items;
  for (std::size_t at = 0;;) {
    std::size_t const comma = text.find(',', at);
    items.push_back(text.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) return items;
    at = comma + 1;
  }
}

float parse_float(std::string const& option, std::string const& text) {
  std::size_t used = 0;
  float v = 0;
  try {
    v = std::stof(text, &used);
  } catch (std::exception const&) {
    used = 0;
  }
  if (used != text.size() || text.empty()) throw UsageError(option + ": '" + text + "' is not a number");
  return v;
}

std::vector<Options> read_sweep(std::string const& path, Options const& base, OptionNames const& names,
                                std::function<void(Options const&)> const& check) {
  std::ifstream f(path);
  if (!f) throw UsageError("--sweep: cannot read '" + path + "'");
  std::vector<Options> out;
  std::string line;
  int lineno = 0;
  while (std::getline(f, line)) {
    ++lineno;
    if (auto h = line.find('#'); h != std::string::npos) line.resize(h);
    std::istringstream ss(line);
    std::vector<std::string> words;
    for (std::string w; ss >> w;) words.push_back(w);
    if (words.empty()) continue;
    Options o = base;
    std::string const where = path + ":" + std::to_string(lineno) + ": ";
    parse_options(o, words, names, where);
    if (o.has("--sweep") && *o.get("--sweep") != path) throw UsageError(where + "--sweep cannot nest");
    try {
      check(o);
    } catch (UsageError const& e) {
      throw UsageError(where + e.what());
    }
    out.push_back(std::move(o));
  }
  if (out.empty()) throw UsageError("--sweep: '" + path + "' holds no problems");
  return out;
}

std::string suite_name(Options const& base) {
  if (std::string const* s = base.get("--suite")) return *s;
  std::string const* sweep = base.get("--sweep");
  if (!sweep) return "";
  std::size_t const slash = sweep->find_last_of('/');
  std::string const file = sweep->substr(slash == std::string::npos ? 0 : slash + 1);
  return file.substr(0, file.find('.'));
}

// ---- device helpers ----------------------------------------------------------------------------------

void cuda_check(cudaError_t err, char const* what) {
  if (err != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}
void status_check(tessel::Status const& s, char const* what) {
  if (!s) throw std::runtime_error(std::string(what) + ": " + s.reason);
}

// ---- the GPU and its conditions ------------------------------------------------------------------

namespace {

std::string commit_id() {
  std::string c = TESSEL_GIT_COMMIT;
  if (c == "unknown")
    if (char const* env = std::getenv("TESSEL_GIT_COMMIT"); env && *env) c = env;
  return c;
}

std::string today() {
  std::time_t const t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

// One set of events per timed launch pair: candidate start, end, baseline start, end.
struct Events {
  std::vector<cudaEvent_t> e;
  explicit Events(std::size_t n) : e(n, nullptr) {
    for (auto& x : e) cuda_check(cudaEventCreate(&x), "cudaEventCreate");
  }
  ~Events() {
    for (auto x : e)
      if (x) cudaEventDestroy(x);
  }
};

}  // namespace

GpuReport open_gpu(char const* command, int* device) {
  std::string const why = tessel::no_device_reason();
  if (!why.empty()) throw UsageError(why + " (" + command + " needs a GPU)");
  std::string qwhy;
  int dev = 0;
  cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
  auto info = tessel::query_device(dev, &qwhy);
  if (!info) throw UsageError(qwhy);
  *device = dev;
  GpuReport gpu;
  gpu.info = *info;
  gpu.commit = commit_id();
  gpu.date = today();
  return gpu;
}

Nvml::Nvml(int cuda_device) {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) return;
  auto init = reinterpret_cast<int (*)()>(dlsym(lib_, "nvmlInit_v2"));
  auto by_pci = reinterpret_cast<int (*)(char const*, void**)>(dlsym(lib_, "nvmlDeviceGetHandleByPciBusId_v2"));
  clock_ = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(lib_, "nvmlDeviceGetClockInfo"));
  power_ = reinterpret_cast<int (*)(void*, unsigned*)>(dlsym(lib_, "nvmlDeviceGetPowerUsage"));
  char bus[64] = {};
  if (!init || !by_pci || !clock_ || init() != 0 || cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device) != cudaSuccess ||
      by_pci(bus, &dev_) != 0)
    dev_ = nullptr;
}
Nvml::~Nvml() {
  if (lib_) dlclose(lib_);
}
int Nvml::sm_clock_mhz() const {
  unsigned v = 0;
  return dev_ && clock_(dev_, /*NVML_CLOCK_SM=*/1, &v) == 0 ? int(v) : 0;
}
double Nvml::power_w() const {
  unsigned mw = 0;
  return dev_ && power_ && power_(dev_, &mw) == 0 ? mw / 1000.0 : 0.0;
}

// ---- the method ------------------------------------------------------------------------------------

int input_set_count(std::size_t set_bytes, std::size_t fixed, std::size_t l2_bytes, std::string* why) {
  std::size_t free_b = 0, total_b = 0;
  cuda_check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  std::size_t const budget = std::size_t(double(free_b) * 0.85);
  if (set_bytes + fixed > budget) {
    *why = "needs " + std::to_string((set_bytes + fixed) >> 20) + " MiB, the GPU has " + std::to_string(free_b >> 20) +
           " MiB free";
    return 0;
  }
  // Input sets rotated so that together they are at least twice the L2 (nothing stays cached).
  std::size_t const want = std::max<std::size_t>(2, (2 * l2_bytes + set_bytes - 1) / std::max<std::size_t>(set_bytes, 1));
  int sets = int(std::min<std::size_t>({want, 64, std::max<std::size_t>(1, (budget - fixed) / std::max<std::size_t>(set_bytes, 1))}));
  // Diagnostics only: TESSEL_CLI_SETS=N caps the rotation at N sets, so a launch may find its code,
  // parameters and inputs in the L2 (what a warm cache changes; the JSON records input_sets).
  if (char const* env = std::getenv("TESSEL_CLI_SETS"); env != nullptr && std::atoi(env) > 0) sets = std::min(sets, std::atoi(env));
  return sets;
}

Timing summarize(std::vector<float> v) {
  Timing t;
  if (v.empty()) return t;
  std::sort(v.begin(), v.end());
  std::size_t const n = v.size();
  t.median_ms = n % 2 ? v[n / 2] : 0.5 * (double(v[n / 2 - 1]) + v[n / 2]);
  t.min_ms = v.front(), t.max_ms = v.back();
  return t;
}

Measurement measure_interleaved(MeasureMethod const& method, LaunchOnSet const& candidate, LaunchOnSet const& baseline,
                                Nvml const& nvml) {
  cudaStream_t const stream = method.stream;
  bool const compare = static_cast<bool>(baseline);
  // Timing: warm-up, then interleaved pairs, each launch between its own events. Every launch,
  // the candidate's or the baseline's, takes the next input set in turn: a side that ran on the
  // set the other had just read would find much of it in L2 (all of it where the operands are
  // smaller than the L2, as 16x4096x4096's 32 MiB B on the H100's 50 MB).
  Events ev(std::size_t(4) * method.iters);
  int launch = 0;
  auto next_set = [&] { return launch++ % method.sets; };
  for (int i = 0; i < method.warmup; ++i) {
    candidate(next_set());
    if (compare) baseline(next_set());
  }
  cuda_check(cudaStreamSynchronize(stream), "warm-up");
  for (int i = 0; i < method.iters; ++i) {
    if (method.gap_ms > 0) {
      cuda_check(cudaStreamSynchronize(stream), "gap");
      std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long long>(method.gap_ms * 1000)));
    }
    int const x = next_set();
    cuda_check(cudaEventRecord(ev.e[4 * i + 0], stream), "cudaEventRecord");
    candidate(x);
    cuda_check(cudaEventRecord(ev.e[4 * i + 1], stream), "cudaEventRecord");
    if (compare) {
      int const y = next_set();
      cuda_check(cudaEventRecord(ev.e[4 * i + 2], stream), "cudaEventRecord");
      baseline(y);
      cuda_check(cudaEventRecord(ev.e[4 * i + 3], stream), "cudaEventRecord");
    }
  }
  cuda_check(cudaStreamSynchronize(stream), "timed runs");
  Measurement m;
  m.sm_clock_after_mhz = nvml.sm_clock_mhz();
  m.power_after_w = nvml.power_w();
  std::vector<float> t_ms, c_ms;
  for (int i = 0; i < method.iters; ++i) {
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, ev.e[4 * i + 0], ev.e[4 * i + 1]), "cudaEventElapsedTime");
    t_ms.push_back(ms);
    if (compare) {
      cuda_check(cudaEventElapsedTime(&ms, ev.e[4 * i + 2], ev.e[4 * i + 3]), "cudaEventElapsedTime");
      c_ms.push_back(ms);
    }
  }
  m.candidate = summarize(t_ms);
  m.baseline = summarize(c_ms);
  return m;
}

}  // namespace tessel::cli

#endif  // TESSEL_HAS_CUDA
