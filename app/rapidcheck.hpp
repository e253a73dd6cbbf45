#pragma once
// RapidCheck properties over scenarios (see app/check.hpp). In a Catch2 test:
//
//   rc::prop("unique-index never inserts a duplicate in two-client races",
//            locksim::check::never_violates("two-clients-pause", "unique-index", "duplicate_rows",
//                                           {{"clients.count", 1, 4}, {"faults.pauses.0.length_ms", 0, 20000}}));
//
// Each test case draws every knob and a seed, runs one trial, and fails with the checkers
// that fired and the run's replay token; RapidCheck then shrinks the knobs and the seed.
// Header-only, so that only the tests that use it link RapidCheck.

#include <fmt/format.h>
#include <rapidcheck.h>

#include "app/check.hpp"

namespace locksim::check {

/// `path=value` overrides, one per knob, each value in the knob's range (shrinking to `low`).
inline rc::Gen<std::vector<std::string>> overrides(const std::vector<Knob>& knobs) {
  std::vector<rc::Gen<std::string>> parts;
  for (const Knob& k : knobs)
    parts.push_back(rc::gen::map(rc::gen::inRange(k.low, k.high + 1),
                                 [path = k.path](int v) { return fmt::format("{}={}", path, v); }));
  return rc::gen::exec([parts] {
    std::vector<std::string> sets;
    for (const auto& g : parts) sets.push_back(*g);
    return sets;
  });
}

/// The property "`strategy` never makes `property` fire on `scenario` varied by `knobs`".
inline auto never_violates(std::string scenario, std::string strategy, std::string property, std::vector<Knob> knobs) {
  return [=] {
    const auto sets = *overrides(knobs);
    const auto seed = *rc::gen::inRange<std::uint64_t>(1, 1'000'000);
    const Verdict v = trial(scenario, strategy, property, sets, seed);
    RC_LOG() << "replay: locksim replay " << v.token.text() << "\n";
    for (const auto& f : v.fired) RC_LOG() << "fired: " << f << "\n";
    RC_ASSERT(v.fired.empty());
  };
}

}  // namespace locksim::check
