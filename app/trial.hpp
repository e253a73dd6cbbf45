#pragma once
// What every workload's trial is made of: its engine, the scenario's faults injected and
// counted, the checkers' findings taken (the picture of a trial is app/story.hpp's). Each
// workload kind (workload_kind.hpp) runs its trials with these; the runner folds the outcomes.

#include <atomic>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "app/runner.hpp"
#include "models/checkers/checker.hpp"
#include "models/db/server.hpp"
#include "models/deployment.hpp"

namespace locksim {

double seconds(sim::Time t);
double seconds(sim::Duration d);
double ms(sim::Time t);

/// While one is alive on a thread, the trials that thread runs end at once, unfinished
/// (sim::Interrupted out of run_trial), when `flag` turns true: a run's --time deadline reaching
/// the trials under way (EngineConfig::interrupt). Scopes nest; the innermost holds.
class InterruptTrials {
 public:
  explicit InterruptTrials(const std::atomic<bool>* flag);
  ~InterruptTrials();
  InterruptTrials(const InterruptTrials&) = delete;
  InterruptTrials& operator=(const InterruptTrials&) = delete;

 private:
  const std::atomic<bool>* outer_;
};

/// Who takes a trial's outcome where its workload has made it, while its world still stands.
using OutcomeTaker = std::function<void(const TrialOutcome&)>;
/// While one is alive on a thread, each trial the thread runs hands its outcome to `taker`
/// (nullptr: to nobody) before its world is torn down: every workload calls outcome_ready()
/// with the outcome it then returns. A taker that does not return (a dfs search's branched run
/// ends there, sim::Restorable::finish()) spares the trial its teardown. Scopes nest; the
/// innermost holds.
class TakeOutcome {
 public:
  explicit TakeOutcome(const OutcomeTaker* taker);
  ~TakeOutcome();
  TakeOutcome(const TakeOutcome&) = delete;
  TakeOutcome& operator=(const TakeOutcome&) = delete;

 private:
  const OutcomeTaker* outer_;
};
/// A workload's outcome, as it will return it: to the thread's TakeOutcome, if any. (A workload
/// that never calls it is still searched right: its trials are torn down and their outcome taken
/// where run_trial returns it.)
void outcome_ready(const TrialOutcome& out);

/// A trial's engine: its seed, the scenario's budgets, an explorer's schedule if any, and the
/// thread's InterruptTrials flag.
sim::EngineConfig engine_config(const Scenario& s, std::uint64_t seed, TraceKept kept, sim::TieBreak tie_break,
                                sim::Chooser chooser, sim::Footprints* footprints);
void inject_faults(const Scenario& s, const models::FaultSurface& surface);
/// The faults a trial that ran until `end` injected, where the scenario has any: the
/// denominator of its rates per fault.
void count_faults(const Scenario& s, const models::FaultSurface& surface, sim::Time end, TrialOutcome& out);
/// What the checkers found, as a trial's outcome.
void take_findings(models::checkers::Findings&& f, TrialOutcome& out);
void add_time(models::TimeSpent& sum, const models::TimeSpent& t);
/// The isolation anomalies of the trial's history of transactions, where `database` keeps one,
/// each with the lanes of `timeline`'s diagram its sessions run in (docs/anomalies.md).
std::vector<reports::Timeline::Anomaly> anomalies_told(const models::db::Database& database, const reports::Timeline& timeline);
}  // namespace locksim
