#pragma once
// Stating a safety property of a strategy for a test: "strategy S never makes checker P fire
// on scenarios like this one", where "like this one" is a scenario file and a few integer
// values in it (clients, keys, pause lengths, TTLs) that may vary within ranges.
//
// `trial` runs one variation and says which checkers fired, with the replay token of the
// run; app/rapidcheck.hpp turns a scenario and its knobs into a RapidCheck property, so
// RapidCheck generates the variations and shrinks a failing one towards each knob's low end.

#include <cstdint>
#include <string>
#include <vector>

#include "app/search/explore.hpp"

namespace locksim::check {

/// An integer value of the scenario, by its --set path, generated in [low, high].
struct Knob {
  std::string path;
  int low = 0, high = 0;
};

struct Verdict {
  std::vector<std::string> fired;  // "duplicate_rows 1", ...: empty when the property held
  Token token;                     // replays the run: `locksim replay <token.text()>`
};

/// One trial of `strategy` on `scenario` with `sets`, from `seed`; `property` is a checker
/// metric or "any". Throws InputError for a scenario, override or strategy that is wrong.
Verdict trial(const std::string& scenario, const std::string& strategy, const std::string& property,
              const std::vector<std::string>& sets, std::uint64_t seed);

}  // namespace locksim::check
