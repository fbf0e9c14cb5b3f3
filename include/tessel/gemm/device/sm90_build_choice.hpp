// tessel/gemm/device/sm90_build_choice.hpp -- which build of an sm_90a GEMM entry runs a call
// (Sm90Build: the general kernel, or one of the lean ones compiled beside it). Plain C++: the
// host adapter (src/gemm/sm90_gemm.cpp) and the host tests use it.
//
// A lean build is the common case compiled alone, so a CTA fetches less code on its way to its
// first loads and between tiles, and ptxas spills nothing where the general build spills
// (docs/sm90_gemm.md, "Lean twins"). A call is its case when it has
//   - the compact unit path, one K slice and no Stream-K;
//   - K-major operands read in place, or -- the lean MN-major build, for the entries that carry
//     it -- MN-major ones read in place too;
//   - a D of the operands' 16-bit type stored by TMA, transposed only by a kernel that writes it so;
//   - C unread, or loaded by TMA into the staging buffer (the _tmac entries);
// and, fused (bias, activation), only with K-major operands and where the entry carries the lean
// fused build. Every other call runs the general build, which takes every case its configuration
// can run.
#pragma once

namespace tessel {
namespace kernel {

// general: every call the configuration can run. lean: the lean case above with K-major operands.
// lean_fused: that case with the fused epilogue's bias and activation (C unread). lean_mn: the
// lean case with an MN-major operand read in place (the data gradient's filters). The last two
// for the entries that carry them.
enum class Sm90Build { general, lean, lean_fused, lean_mn };

}  // namespace kernel

// What the host has decided about a call by the time it picks the build.
struct Sm90BuildCase {
  bool compact_units = true;   // the walk's compact (32-bit) unit path
  int splits = 1;              // parallel split-K slices
  bool stream_k = false;
  bool tma_store = true;       // D leaves by TMA stores
  bool staged_rows = false;    // ... or through the copy warps' row copies
  bool d_transposed = false;   // the kernel writes D transposed (the swapped problem, the pixels as B)
  bool reads_c = false;        // beta != 0
  bool c_by_tma = false;       // C arrives by TMA in the staging buffer
  bool a_mn_major = false, b_mn_major = false;  // an operand read in place MN-major
  bool d_matches_inputs = true;  // D is 16-bit, of the operands' own type
  bool fused = false;          // a fused epilogue (bias, activation)
  bool lean_builds = true;     // GemmOptions::lean_builds (the tests' general-builds subset turns it off)
};

// What an entry carries (Sm90Instance): its lean builds and whether it writes D transposed.
struct Sm90EntryBuilds {
  bool lean = false, lean_fused = false, lean_mn = false;
  bool writes_transposed = false;
};

constexpr kernel::Sm90Build sm90_build_choice(Sm90BuildCase const& c, Sm90EntryBuilds const& e) {
  bool const lean_case = c.lean_builds && c.compact_units && c.splits == 1 && !c.stream_k && c.tma_store &&
                         !c.staged_rows && (!c.d_transposed || e.writes_transposed) && c.c_by_tma == c.reads_c &&
                         c.d_matches_inputs;
  if (!lean_case) return kernel::Sm90Build::general;
  if (c.a_mn_major || c.b_mn_major)
    return e.lean_mn && !c.fused ? kernel::Sm90Build::lean_mn : kernel::Sm90Build::general;
  if (c.fused) return e.lean_fused ? kernel::Sm90Build::lean_fused : kernel::Sm90Build::general;
  return e.lean ? kernel::Sm90Build::lean : kernel::Sm90Build::general;
}

}  // namespace tessel
