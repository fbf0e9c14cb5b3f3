// apps/tessel/report.cpp -- the CLI's GPU header, JSON and CSV files and progress line (report.hpp).
#if defined(TESSEL_HAS_CUDA)

#include "report.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace tessel::cli {

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}
std::string json_string(std::string const& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    o += c;
  }
  return o + "\"";
}

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

double peak_tflops(tessel::DeviceInfo const& d, tessel::DType t) {
  using tessel::DType;
  bool const hopper_sxm = d.cc_major == 9 && (d.name.find("H100 80GB HBM3") != std::string::npos ||
                                              d.name.find("H200") != std::string::npos ||
                                              d.name.find("H100 SXM") != std::string::npos);
  if (hopper_sxm) return t == DType::f32 ? 66.9 : t == DType::tf32 ? 494.7 : tessel::is_fp8(t) ? 1978.9 : 989.4;
  double const ghz = d.clock_mhz / 1000.0, sms = d.sm_count;
  int const cc = d.cc_major * 10 + d.cc_minor;
  double const fp32_per_sm = cc == 80 ? 128 : 256;             // flops/clock
  double const half_per_sm = cc >= 90 ? 4096 : cc == 80 ? 2048 : 1024;
  double per_sm = t == DType::f32 ? fp32_per_sm : t == DType::tf32 ? half_per_sm / 2 : half_per_sm;
  if (tessel::is_fp8(t)) per_sm = cc >= 89 ? 2 * half_per_sm : fp32_per_sm;  // no fp8 tensor cores before sm_89
  return sms * per_sm * ghz / 1000.0;
}

void print_gpu_header(GpuReport const& gpu, int sm_clock_now) {
  auto const& d = gpu.info;
  std::printf("GPU        %s (sm_%d%d, %d SMs, L2 %zu MB), SM clock %d MHz max%s\n", d.name.c_str(), d.cc_major,
              d.cc_minor, d.sm_count, d.l2_bytes >> 20, d.clock_mhz,
              sm_clock_now ? (", " + std::to_string(sm_clock_now) + " MHz now").c_str() : "");
  std::printf("software   driver %s, CUDA runtime %s", version_text(d.driver_version).c_str(),
              version_text(d.runtime_version).c_str());
  for (LibraryVersion const& l : gpu.libraries) std::printf(", %s %d", l.name.c_str(), l.version);
  std::printf("\n");
  std::printf("tessel     commit %s, %s\n", gpu.commit.c_str(), gpu.date.c_str());
}

void write_json(std::string const& path, GpuReport const& gpu, std::string const& suite, std::string const& method,
                std::vector<Fields> const& results) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write --json file '" + path + "'");
  f << "{\n";
  f << "  \"gpu\": " << json_string(gpu.info.name) << ",\n";
  f << "  \"sm_count\": " << gpu.info.sm_count << ",\n";
  f << "  \"clock_mhz\": " << gpu.info.clock_mhz << ",\n";
  f << "  \"driver\": " << json_string(version_text(gpu.info.driver_version)) << ",\n";
  f << "  \"cuda\": " << json_string(version_text(gpu.info.runtime_version)) << ",\n";
  for (LibraryVersion const& l : gpu.libraries) f << "  " << json_string(l.json_key) << ": " << l.version << ",\n";
  f << "  \"commit\": " << json_string(gpu.commit) << ",\n";
  f << "  \"date\": " << json_string(gpu.date) << ",\n";
  f << "  \"suite\": " << json_string(suite) << ",\n";
  f << "  \"method\": " << json_string(method) << ",\n";
  f << "  \"results\": [";
  bool first = true;
  for (Fields const& r : results) {
    f << (first ? "\n" : ",\n");
    first = false;
    f << "    {";
    for (std::size_t i = 0; i < r.size(); ++i) f << (i ? ", " : "") << json_string(r[i].first) << ": " << r[i].second;
    f << "}";
  }
  f << "\n  ]\n}\n";
}

void append_csv(std::string const& path, GpuReport const& gpu, Fields const& row) {
  bool const fresh = !std::ifstream(path).good();
  std::ofstream f(path, std::ios::app);
  if (!f) throw std::runtime_error("cannot write --csv file '" + path + "'");
  if (fresh) {
    f << "gpu,commit";
    for (auto const& field : row) f << "," << field.first;
    f << "\n";
  }
  f << gpu.info.name << "," << gpu.commit;
  for (auto const& field : row) f << "," << field.second;
  f << "\n";
}

void progress(std::size_t done, std::size_t total, std::string const& what) {
  if (total <= 1) return;
  if (isatty(2)) {
    int const width = 30, fill = int(width * done / total);
    std::fprintf(stderr, "\r[%s%s] %zu/%zu %-40s", std::string(fill, '#').c_str(), std::string(width - fill, '.').c_str(),
                 done, total, what.c_str());
    if (done == total) std::fprintf(stderr, "\n");
  } else {
    std::fprintf(stderr, "[%zu/%zu] %s\n", done, total, what.c_str());
  }
}

}  // namespace tessel::cli

#endif  // TESSEL_HAS_CUDA
