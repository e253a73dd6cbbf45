#pragma once
// `locksim explore` and `locksim replay`: search for a trial in which a checker fires, hand
// it back as a printable replay token, and replay a token with a narrated timeline.
//
// Search modes: `random` (independent seeds). A trial is a function of its seed, so a
// token holds the engine version, the scenario (name and hash), the strategy and the seed.

#include <optional>
#include <string>
#include <vector>

#include "app/runner.hpp"
#include "app/scenario.hpp"

namespace locksim {

struct ExploreOptions {
  std::string scenario;
  std::vector<std::string> sets;
  std::string strategy;
  std::string property = "any";  // a checker metric, or any of them
  std::string mode = "random";
  int budget = 10'000;           // trials at most
  double time_s = 60;            // wall seconds at most
};

struct Token {
  int engine = 0;
  std::string scenario;  // a catalogue name or a path
  std::uint64_t scenario_hash = 0;
  std::vector<std::string> sets;
  std::string strategy;
  std::uint64_t seed = 0;
  std::string text() const;
};
/// Throws InputError for a string that is not a token.
Token parse_token(const std::string& text);

struct Finding {
  bool found = false;
  std::uint64_t runs = 0;
  double wall_s = 0;
  Token token;
  std::vector<std::string> fired;  // "duplicate_rows 1", ...
};

/// Runs trials until the property fires or a budget runs out.
Finding explore(const ExploreOptions& options);

/// Re-runs the token's trial. Throws InputError when the token's engine version or its
/// scenario (as it is now) does not match.
struct Replay {
  Scenario scenario;
  StrategyChoice strategy;
  TrialOutcome outcome;
  std::vector<std::string> fired;
};
Replay replay(const Token& token);

/// The trial in plain words: only what bears on a violation (holds of locks, pauses and
/// crashes, the inserts of duplicated keys), in time order.
std::vector<std::string> narrate(const reports::Timeline& timeline);

/// The checkers that fired in a trial, as "metric value".
std::vector<std::string> fired_checkers(const TrialOutcome& outcome, const std::string& property);

}  // namespace locksim
