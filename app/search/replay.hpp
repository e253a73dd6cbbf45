#pragma once
// Running a token's trial again: `locksim replay`, a search's runs, and the shrinker's.

#include <string>
#include <vector>

#include "app/runner.hpp"
#include "app/scenario.hpp"
#include "app/search/token.hpp"

namespace locksim {

/// Runs the token's trial (the scenario loaded with its overrides).
TrialOutcome run_token(const Scenario& scenario, const StrategyChoice& strategy, const Token& token,
                       TraceKept kept = TraceKept::hash);


/// Re-runs the token's trial. Throws InputError when the token's engine version or its
/// scenario (as it is now) does not match.
struct Replay {
  Scenario scenario;
  StrategyChoice strategy;
  TrialOutcome outcome;
  std::vector<std::string> fired;
  std::vector<Asked> asked;  // every enumerable choice a dfs schedule's run asked, in order
};
Replay replay(const Token& token);

/// The scenario's strategy shown as `name` (its label, if it has one); throws InputError.
const StrategyChoice& strategy_named(const Scenario& scenario, const std::string& name);

/// The checkers that fired in a trial, as "metric value".
std::vector<std::string> fired_checkers(const TrialOutcome& outcome, const std::string& property);

}  // namespace locksim
