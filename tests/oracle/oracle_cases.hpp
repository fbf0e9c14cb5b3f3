// tests/oracle/oracle_cases.hpp -- reading the CuTe oracle files (../shared/oracle/README.md).
//
// A case line is OP<TAB>ARGS<TAB>RESULT with ARGS fields separated by " | ". The flavour is S when
// every integer in ARGS is static (`_N`), D when none is, M otherwise. Header-only; used by the
// oracle generator and by the calculator's oracle test.
#pragma once

#include "calc/value.hpp"

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessel::oracle {

struct Case {
  int line = 0;
  std::string op;
  std::vector<std::string> args;
  std::string result;
  char flavour = 'S';  // S, D or M
};

inline std::vector<std::string> split_fields(std::string const& s) {
  std::vector<std::string> out;
  std::string const sep = " | ";
  std::size_t start = 0;
  while (true) {
    std::size_t k = s.find(sep, start);
    out.push_back(s.substr(start, k == std::string::npos ? std::string::npos : k - start));
    if (k == std::string::npos) return out;
    start = k + sep.size();
  }
}

// S / D / M from the integers written in the fields (Sw<B,M,S> parameters are not integers of
// the case; the offset of a swizzled layout is).
inline char flavour_of(std::vector<std::string> const& fields) {
  bool any_static = false, any_dynamic = false;
  for (auto const& f : fields) {
    std::size_t i = 0;
    while (i < f.size()) {
      if (f.compare(i, 3, "Sw<") == 0) {
        i = f.find('>', i);
        if (i == std::string::npos) break;
        continue;
      }
      char c = f[i];
      bool digit_start = (c >= '0' && c <= '9') || (c == '-' && i + 1 < f.size() && f[i + 1] >= '0' && f[i + 1] <= '9');
      if (c == '_' && i + 1 < f.size() && (f[i + 1] == '-' || (f[i + 1] >= '0' && f[i + 1] <= '9'))) {
        any_static = true;
        ++i;
        while (i < f.size() && (f[i] == '-' || (f[i] >= '0' && f[i] <= '9'))) ++i;
      } else if (digit_start) {
        any_dynamic = true;
        while (i < f.size() && (f[i] == '-' || (f[i] >= '0' && f[i] <= '9'))) ++i;
      } else {
        ++i;
      }
    }
  }
  return any_dynamic ? (any_static ? 'M' : 'D') : 'S';
}

inline std::vector<Case> load_cases(std::string const& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the oracle cases at " + path);
  std::vector<Case> cases;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    std::size_t t1 = line.find('\t');
    std::size_t t2 = line.find('\t', t1 + 1);
    if (t1 == std::string::npos || t2 == std::string::npos) {
      throw std::runtime_error(path + ":" + std::to_string(n) + ": expected OP<TAB>ARGS<TAB>RESULT");
    }
    Case c;
    c.line = n;
    c.op = line.substr(0, t1);
    c.args = split_fields(line.substr(t1 + 1, t2 - t1 - 1));
    c.result = line.substr(t2 + 1);
    c.flavour = flavour_of(c.args);
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace tessel::oracle
