#pragma once
// Runs a scenario: every chosen strategy through `trials` trials (seeds seed, seed+1, ...),
// each trial a fresh world, and sums what the checkers found.

#include <chrono>
#include <functional>
#include <optional>

#include "app/scenario.hpp"
#include "reports/results.hpp"

namespace locksim {

/// One trial of one strategy: what the checkers counted, and latencies.
struct TrialOutcome {
  models::checkers::Counts counts;
  reports::Histogram latency;         // every logical operation that succeeded, in ms
  reports::Histogram failed_latency;  // every one that ended failed or gave up, in ms
  models::TimeSpent time_ok{};        // where the time of the successful ones went, summed
  std::uint64_t operations = 0;
  std::uint64_t db_statements = 0;
  std::uint64_t redis_commands = 0;
  std::uint64_t events = 0;
  std::uint64_t trace_hash = 0;
  double placed_pause_ms = 0;  // the pauses a search placed (explore's "faults": "placed"), their lengths summed
  std::vector<std::string> examples;
  reports::Timeline timeline;  // when asked for
  /// The sessions workload: each step's outcome ("ok", "1213", "unfinished", "not issued"),
  /// and, when the timeline is asked for, the steps and tables in full.
  std::vector<std::string> step_outcomes{};
  std::vector<reports::StepResult> steps{};
  std::vector<reports::TableResult> tables{};
};

/// What a trial keeps of its trace: the running hash (results carry it), every event too
/// (for the picture of the trial, the first of each strategy's), or nothing (a search that
/// reads only the checkers).
enum class TraceKept { hash, timeline, none };

/// `tie_break`: an explorer's schedule for simultaneous events (default: the seed decides).
/// `chooser`: an explorer's answers to the enumerable choices (ties, declared delay sets).
TrialOutcome run_trial(const Scenario& scenario, const StrategyChoice& strategy, std::uint64_t seed,
                       TraceKept kept = TraceKept::hash, sim::TieBreak tie_break = {}, sim::Chooser chooser = {},
                       sim::Footprints* footprints = nullptr);

/// How a run is carried out: none of it changes the results of the trials that run.
struct RunControl {
  int jobs = 1;  // threads running trials
  /// The run's deadline (--time): asked just before each trial is handed out, and only then;
  /// once it says true no trial starts, the trials under way finish, and the results are those
  /// of the trials done, reported as stopped by --time. None: every trial runs.
  std::function<bool()> stop = {};
  /// From this instant the trials under way are interrupted too (the same --time): each ends
  /// at once, unfinished, and the results are those of the trials folded before the first one
  /// cut short. None: the trials under way finish. (Over several ranks, app/exec/: the leader's own trials.)
  std::optional<std::chrono::steady_clock::time_point> interrupt_at{};
  /// `progress(trials done, trials)` as trials are folded.
  std::function<void(std::size_t, std::size_t)> progress = {};
  /// How far past the last folded trial one may be handed out, so at most this many outcomes
  /// wait to be folded whatever the trials' run times (0: 4 * jobs + 64).
  std::size_t window = 0;
  /// Keep each strategy's first violating trial's timeline for the report: the first trial's
  /// is at hand; a later one is run once more, alone, after the run (the leader's, over several ranks).
  bool draw_first_violation = false;
};

/// Every strategy, every trial, then the expectations checked. Trials are handed out from one
/// queue in trial-major order (trial 0 of every strategy, then trial 1 of every strategy, ...)
/// to `jobs` threads, each trial in its own engine; each strategy's outcomes are folded in its
/// own trial order as they finish, so the results do not depend on `jobs`, and a run stopped
/// early has run a prefix of that order: every strategy the same trials, give or take one.
reports::RunResults run_scenario(const Scenario& scenario, const RunControl& control);
/// Several scenarios' trials from one queue (a sweep's points), scenario by scenario in that
/// order, so no scenario waits for the last trials of the one before; each one's results as
/// run_scenario() gives them, whatever `jobs`. `scenario_done(k, results)` runs (under the
/// queue's lock, in scenario order) once scenario k's last trial is folded. Stopped by the
/// deadline, the scenarios not finished say so (RunResults::stopped).
std::vector<reports::RunResults> run_scenarios(
    const std::vector<const Scenario*>& scenarios, const RunControl& control,
    const std::function<void(std::size_t, const reports::RunResults&)>& scenario_done = {});
/// The same, every trial run; `progress(trials done, trials)`.
reports::RunResults run_scenario(const Scenario& scenario, int jobs = 1,
                                 const std::function<void(std::size_t, std::size_t)>& progress = {});

/// The run's --time as a RunControl: no trial starts after `seconds`, and the trials under way
/// then are interrupted.
RunControl run_deadline(double seconds, RunControl control);
/// A RunControl::stop that is true once `trials` trials have been handed out, over every run
/// it (or a copy of it) is given to.
std::function<bool()> stop_after_trials(std::uint64_t trials);
/// A RunControl::stop that runs again the trials `earlier` ran (every one, if it was not stopped).
std::function<bool()> same_trials_as(const reports::RunResults& earlier);

}  // namespace locksim
