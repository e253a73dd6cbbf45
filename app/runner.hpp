#pragma once
// Runs a scenario: every chosen strategy through `trials` trials (seeds seed, seed+1, ...),
// each trial a fresh world, and sums what the checkers found.

#include <functional>

#include "app/scenario.hpp"
#include "reports/results.hpp"

namespace locksim {

/// One trial of one strategy: what the checkers counted, and latencies.
struct TrialOutcome {
  std::map<std::string, double> counts;
  reports::Histogram latency;  // every finished logical operation, in ms
  std::uint64_t operations = 0;
  std::uint64_t db_statements = 0;
  std::uint64_t redis_commands = 0;
  std::uint64_t events = 0;
  std::uint64_t trace_hash = 0;
  std::vector<std::string> examples;
  reports::Timeline timeline;  // when asked for
};

/// What a trial keeps of its trace: the running hash (results carry it), every event too
/// (for the picture of the trial, the first of each strategy's), or nothing (a search that
/// reads only the checkers).
enum class TraceKept { hash, timeline, none };

/// `tie_break`: an explorer's schedule for simultaneous events (default: the seed decides).
/// `chooser`: an explorer's answers to the enumerable choices (ties, declared delay sets).
TrialOutcome run_trial(const Scenario& scenario, const StrategyChoice& strategy, std::uint64_t seed,
                       TraceKept kept = TraceKept::hash, sim::TieBreak tie_break = {}, sim::Chooser chooser = {});

/// Every strategy, every trial (spread over `jobs` threads, each trial in its own engine:
/// the results do not depend on `jobs`), then the expectations checked.
/// `progress(strategies done, strategies)` after each strategy.
reports::RunResults run_scenario(const Scenario& scenario, int jobs = 1,
                                 const std::function<void(std::size_t, std::size_t)>& progress = {});

}  // namespace locksim
