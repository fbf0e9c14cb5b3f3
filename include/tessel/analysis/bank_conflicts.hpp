// tessel/analysis/bank_conflicts.hpp -- shared-memory bank conflicts of one warp instruction.
//
// Shared memory has 32 banks of 4 bytes; a warp's request is served in wavefronts, each reading
// or writing at most one 4-byte word per bank. The model (the documented behaviour of sm_80+):
//   - an access of W bytes per lane (4, 8 or 16) is split into phases of 128 / W lanes
//     (4 bytes: all 32 lanes at once; 8 bytes: lanes 0-15, then 16-31; 16 bytes: 4 quarter-warps);
//   - ldmatrix / stmatrix .xN move N 8x8 matrices: phase j is lanes 8j..8j+7, each one 16-byte row;
//   - within a phase, lanes that touch the same word share it (broadcast); the phase takes as many
//     wavefronts as the most distinct words any one bank holds.
// conflicts = wavefronts - phases (0 when every phase is one wavefront: conflict-free).
//   e.g. 32 lanes reading float at stride 32 floats: 1 phase, 32 distinct words in bank 0 ->
//        32 wavefronts, 31 conflicts.   ldmatrix.x4 over Sw<3,3,3> o (8,64):(64,1) rows: 0.
// shared_instruction(kind, bytes, address_of_lane) builds the instruction from a function of the
// lane; inactive lanes return a negative address. Plain C++ (host).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace tessel::analysis {

enum class SmemOp {
  access,    // ld.shared / st.shared / cp.async's shared-memory write: `bytes` per lane
  ldmatrix,  // ldmatrix / stmatrix: one 16-byte row per lane, `matrices` phases of 8 lanes
};

struct SharedInstruction {
  SmemOp op = SmemOp::access;
  int bytes = 4;     // access: 1, 2, 4, 8 or 16 bytes per lane; ldmatrix: 16 (one row per lane)
  int matrices = 4;  // ldmatrix: 1, 2 or 4 (lanes 0-7, 0-15 or 0-31 give addresses)
  std::array<std::int64_t, 32> address{};  // byte address per lane; negative: lane inactive
};

struct BankReport {
  int phases = 0;
  int wavefronts = 0;
  int conflicts() const { return wavefronts - phases; }
};

// The instruction of `op` with each lane's byte address from address_of_lane(lane).
template <class F>
SharedInstruction shared_instruction(SmemOp op, int bytes, F&& address_of_lane, int matrices = 4) {
  SharedInstruction in;
  in.op = op;
  in.bytes = op == SmemOp::ldmatrix ? 16 : bytes;
  in.matrices = matrices;
  for (int lane = 0; lane < 32; ++lane) in.address[lane] = static_cast<std::int64_t>(address_of_lane(lane));
  return in;
}

// Wavefronts of one phase: the lanes [first, first + count) of `in`.
inline int phase_wavefronts(SharedInstruction const& in, int first, int count) {
  std::map<int, std::set<std::int64_t>> words_per_bank;
  for (int lane = first; lane < first + count; ++lane) {
    std::int64_t const a = in.address[lane];
    if (a < 0) continue;
    for (std::int64_t w = a / 4; w <= (a + in.bytes - 1) / 4; ++w) words_per_bank[int(w % 32)].insert(w);
  }
  int worst = 0;
  for (auto const& [bank, words] : words_per_bank) worst = std::max(worst, int(words.size()));
  return worst;
}

inline BankReport analyse(SharedInstruction const& in) {
  BankReport r;
  if (in.op == SmemOp::ldmatrix) {
    for (int j = 0; j < in.matrices; ++j) {
      int const w = phase_wavefronts(in, 8 * j, 8);
      r.phases += w > 0 ? 1 : 0;
      r.wavefronts += w;
    }
    return r;
  }
  int const lanes_per_phase = in.bytes >= 4 ? 128 / in.bytes : 32;
  for (int first = 0; first < 32; first += lanes_per_phase) {
    int const w = phase_wavefronts(in, first, lanes_per_phase);
    r.phases += w > 0 ? 1 : 0;
    r.wavefronts += w;
  }
  return r;
}

// "3 conflicts (7 wavefronts in 4 phases)" for test messages.
inline std::string describe(BankReport const& r) {
  return std::to_string(r.conflicts()) + " conflicts (" + std::to_string(r.wavefronts) + " wavefronts in " +
         std::to_string(r.phases) + " phases)";
}

}  // namespace tessel::analysis
