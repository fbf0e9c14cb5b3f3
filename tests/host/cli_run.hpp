// tests/host/cli_run.hpp -- running the built `tessel` binary from a host test: its exit code,
// stdout and stderr, and a line count.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <initializer_list>
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

// Each command line is refused before any GPU work: exit 2, one line on stderr starting with
// `prefix` ("tessel conv: ") that holds one of the words (the flag, or the argument the host API names).
struct CliUsageCase {
  char const* args;
  std::initializer_list<char const*> words;
};
inline void expect_cli_usage_errors(std::string const& prefix, std::initializer_list<CliUsageCase> cases) {
  for (CliUsageCase const& c : cases) {
    CliRun const r = run_tessel(c.args);
    EXPECT_EQ(r.code, 2) << c.args << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1) << c.args << ": stderr was\n" << r.err;
    EXPECT_EQ(r.err.rfind(prefix, 0), 0u) << c.args << ": " << r.err;
    bool named = false;
    for (char const* w : c.words) named = named || r.err.find(w) != std::string::npos;
    EXPECT_TRUE(named) << c.args << ": the line names none of the expected words: " << r.err;
  }
}

}  // namespace tessel::test
