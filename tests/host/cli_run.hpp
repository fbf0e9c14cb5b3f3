// tests/host/cli_run.hpp -- running the built `tessel` binary from a host test: its exit code,
// stdout and stderr, and a line count.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace tessel::test {

struct CliRun {
  int code;
  std::string out, err;
};

inline std::string slurp(std::string const& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline std::string tessel_binary() { return std::string(TESSEL_BINARY_DIR) + "/tessel"; }

// `tessel <args>`; its output goes through one pair of files per process and call (ctest runs a
// file's tests in parallel).
inline CliRun run_tessel(std::string const& args) {
  static int calls = 0;
  std::string const stem = std::filesystem::temp_directory_path().string() + "/tessel_cli_test." +
                           std::to_string(getpid()) + "." + std::to_string(calls++);
  std::string const out = stem + ".out", err = stem + ".err";
  int const status = std::system((tessel_binary() + " " + args + " >" + out + " 2>" + err).c_str());
  CliRun r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

inline int lines(std::string const& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace tessel::test
