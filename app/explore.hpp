#pragma once
// `locksim explore` and `locksim replay`: search for a trial in which a checker fires, hand
// it back as a printable replay token, and replay a token with a narrated timeline.
//
// Search modes: `random` (independent seeds) and `pct` (probabilistic concurrency testing,
// Burckhardt et al., ASPLOS 2010: random process priorities with d - 1 priority change
// points, applied wherever several events are ready at one instant; each run also takes
// the next seed). A trial is a function of its seed and schedule, so a token holds the
// engine version, the scenario (name and hash), the strategy, the seed and the schedule.

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
  int depth = 3;                 // pct: the bug depth d it aims at
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
  std::string schedule;  // "" (the seed decides ties) or "pct.<d>.<k>.<n>.<seed>"
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
  double pct_bound = 0;  // pct: each run finds a depth-d bug with at least this probability
};

/// The PCT scheduler for one run: `steps` (k) tie decisions and `agents` (n) expected.
sim::TieBreak pct_schedule(int depth, std::uint64_t steps, std::uint64_t seed);
/// The tie-break a token's schedule names (empty for the seed's own).
sim::TieBreak schedule_of(const Token& token);

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
