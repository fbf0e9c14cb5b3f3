// apps/tessel/main.cpp -- `tessel <subcommand> [args]`: dispatch, help, and the error contract.
//
// Every error is one line on stderr starting with "tessel: " and a non-zero exit status:
// 2 for bad input (arguments, expressions, inadmissible algebra, no GPU where one is needed),
// 1 for a failure while running (a CUDA error, a failed verification).
#include "command.hpp"

#include <tessel/core/check.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace tessel::cli {
std::vector<Command>& commands() {
  static std::vector<Command> list;
  return list;
}
}  // namespace tessel::cli

namespace {

void print_help() {
  std::printf("tessel: a CuTe-family tile library's calculator and profiler\n\n");
  std::printf("usage: tessel <command> [args]   (tessel <command> --help for details)\n\ncommands:\n");
  auto cmds = tessel::cli::commands();
  std::sort(cmds.begin(), cmds.end(), [](auto const& a, auto const& b) { return std::string(a.name) < b.name; });
  for (auto const& c : cmds) std::printf("  %-10s %s\n", c.name, c.summary);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h" || std::string(argv[1]) == "help") {
    print_help();
    return argc < 2 ? 2 : 0;
  }
  std::string const name = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  for (auto const& c : tessel::cli::commands()) {
    if (name != c.name) continue;
    try {
      return c.run(args);
    } catch (tessel::cli::UsageError const& e) {
      std::fprintf(stderr, "tessel %s: %s\n", c.name, e.what());
      return 2;
    } catch (tessel::AlgebraError const& e) {
      std::fprintf(stderr, "tessel %s: %s\n", c.name, e.what());
      return 2;
    } catch (std::exception const& e) {
      std::fprintf(stderr, "tessel %s: error: %s\n", c.name, e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "tessel: unknown command '%s' (try: tessel --help)\n", name.c_str());
  return 2;
}
