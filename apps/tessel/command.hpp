// apps/tessel/command.hpp -- how a subcommand joins the `tessel` CLI.
//
// Each subcommand lives in its own file and registers itself:
//   static tessel::cli::Register reg{{"layout", "evaluate layout-algebra expressions", run_layout}};
// A subcommand reports bad input by throwing UsageError (one line, exit code 2); tessel's
// AlgebraError is reported the same way.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace tessel::cli {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Command {
  char const* name;
  char const* summary;
  int (*run)(std::vector<std::string> const& args);  // args exclude the subcommand name
};

std::vector<Command>& commands();

struct Register {
  explicit Register(Command c) { commands().push_back(c); }
};

}  // namespace tessel::cli
