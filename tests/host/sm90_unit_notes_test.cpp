// The unit-note ring of the cooperative sm_90a GEMM (kernel/sm90_gemm_producer.hpp and
// kernel/sm90_gemm_warpspecialized.hpp, Config::UnitNotes), played out on the host: the producer
// writes unit u's note into slot u % (Stages + 1) once it holds the stage of u's first k-tile
// (after the empty wait, before the stage is announced); the consumers read that slot after the
// stage has arrived and use it until their epilogue of u is done; a consumer frees k-tile g's
// stage once k-tile g + 1's wgmmas are issued and g's have retired, and a unit's last stage right
// after its mainloop, before the epilogue. Under every interleaving these rules allow (random
// ones, the producer as eager as it may be, units of 1..5 k-tiles, 2..6 stages) no note is
// overwritten before the consumers are done with it, and every consumer reads its own unit's.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace {

struct Walk {
  int stages;
  std::vector<int> unit_k_tiles;  // k-tiles per unit, >= 1 each (the host's rule)
};

// One CTA's producer and (as one: both consumer warpgroups free every stage and read every note
// alike; the slower one is what matters) consumers, stepped in an order `rng` picks among the
// steps the pipeline allows (an eager producer steps whenever it can), with a ring of `slots`
// notes (the kernel's: Stages + 1). Returns the failures seen (empty: none).
std::vector<std::string> play(Walk const& w, int slots, std::mt19937& rng, bool eager_producer) {
  int const S = w.stages, units = int(w.unit_k_tiles.size());
  std::vector<int> first(units + 1, 0);  // global index of each unit's first k-tile
  for (int u = 0; u < units; ++u) first[u + 1] = first[u] + w.unit_k_tiles[u];
  int const total = first[units];
  std::vector<int> unit_of(total);
  for (int u = 0; u < units; ++u)
    for (int g = first[u]; g < first[u + 1]; ++g) unit_of[g] = u;

  std::vector<int> slot(slots, -1);         // the unit whose note a slot holds
  std::vector<bool> filled(total, false);   // stage of k-tile g announced (note written first)
  std::vector<bool> released(total, false);
  std::vector<bool> epilogue_done(units, false);
  std::vector<std::string> failures;

  int produced = 0;  // next k-tile the producer fills
  // Consumer: next k-tile to issue, whether a unit is open (note read, mainloop or epilogue),
  // and the phase of the open unit: 0 mainloop, 1 epilogue pending.
  int consumed = 0, open_unit = -1, phase = 0;

  auto const producer_can = [&] { return produced < total && (produced < S || bool(released[produced - S])); };
  auto const producer_step = [&] {
    int const g = produced, u = unit_of[g];
    if (g == first[u]) {
      int const s = u % slots;
      int const previous = slot[s];
      if (previous >= 0 && !epilogue_done[previous])
        failures.push_back("unit " + std::to_string(u) + "'s note overwrote unit " + std::to_string(previous) +
                           "'s before its epilogue was done (Stages " + std::to_string(S) + ")");
      slot[s] = u;
    }
    filled[g] = true;
    ++produced;
  };
  auto const consumer_can = [&] {
    if (phase == 1) return true;          // the epilogue can always run
    if (consumed >= total) return false;  // done
    return bool(filled[consumed]);
  };
  auto const consumer_step = [&] {
    if (phase == 1) {  // the epilogue of open_unit reads its note (tile origin, batch) and stores
      if (slot[open_unit % slots] != open_unit)
        failures.push_back("the epilogue of unit " + std::to_string(open_unit) + " found unit " +
                           std::to_string(slot[open_unit % slots]) + "'s note");
      epilogue_done[open_unit] = true;
      open_unit = -1, phase = 0;
      return;
    }
    int const g = consumed, u = unit_of[g];
    if (g == first[u]) {  // the unit's first stage has arrived: read its note
      if (slot[u % slots] != u)
        failures.push_back("unit " + std::to_string(u) + " read unit " + std::to_string(slot[u % slots]) + "'s note");
      open_unit = u;
    } else {
      released[g - 1] = true;  // k-tile g's wgmmas issued, g - 1's retired: its stage is free
    }
    ++consumed;
    if (consumed == first[u + 1]) {  // the mainloop's end: the last stage freed, then the epilogue
      released[g] = true;
      phase = 1;
    }
  };

  while (produced < total || consumed < total || phase == 1) {
    bool const p = producer_can(), c = consumer_can();
    if (!p && !c) {
      failures.push_back("deadlock at producer " + std::to_string(produced) + ", consumer " + std::to_string(consumed));
      break;
    }
    bool const take_producer = p && (!c || eager_producer || (rng() & 1u));
    if (take_producer) {
      producer_step();
    } else {
      consumer_step();
    }
  }
  return failures;
}

TEST(Sm90UnitNotes, NoNoteIsOverwrittenBeforeItsEpilogue) {
  std::mt19937 rng(20261125);
  for (int stages = 2; stages <= 6; ++stages) {
    for (int trial = 0; trial < 300; ++trial) {
      Walk w{stages, {}};
      int const units = 1 + int(rng() % 24);
      bool const short_units = trial % 3 == 0;  // all of 1 k-tile: the producer furthest ahead
      for (int u = 0; u < units; ++u) w.unit_k_tiles.push_back(short_units ? 1 : 1 + int(rng() % 5));
      for (bool eager : {true, false}) {
        std::vector<std::string> const failures = play(w, stages + 1, rng, eager);
        EXPECT_TRUE(failures.empty()) << "Stages " << stages << ", " << units << " units, trial " << trial << ": "
                                      << (failures.empty() ? "" : failures.front());
      }
    }
  }
}

// The ring needs its Stages + 1 slots: with Stages, units of one k-tile let the eager producer
// reach unit u + Stages -- u's slot -- while the consumers are still in u's epilogue (a unit's
// last stage is freed before it). The model sees that overwrite (so the test above can fail).
TEST(Sm90UnitNotes, ARingOfStagesSlotsWouldBeOverwritten) {
  std::mt19937 rng(7);
  for (int stages = 2; stages <= 6; ++stages) {
    Walk const w{stages, std::vector<int>(3 * stages, 1)};
    std::vector<std::string> const failures = play(w, stages, rng, true);
    ASSERT_FALSE(failures.empty()) << "Stages " << stages << ": a ring of Stages slots went unnoticed";
    EXPECT_NE(failures.front().find("overwrote"), std::string::npos) << failures.front();
  }
}

}  // namespace
