#include "app/trial.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <set>
#include <stdexcept>

#include "app/fault_kind.hpp"
#include "app/metrics.hpp"
#include "app/workload_kind.hpp"
#include "models/checkers/anomalies.hpp"
#include "reports/explain.hpp"
#include "sim/errors.hpp"

namespace locksim {

double seconds(sim::Time t) { return std::chrono::duration<double>(t.time_since_epoch()).count(); }
double seconds(sim::Duration d) { return std::chrono::duration<double>(d).count(); }

namespace {
thread_local const std::atomic<bool>* trials_interrupt = nullptr;
thread_local const OutcomeTaker* outcome_taker = nullptr;
}  // namespace

TakeOutcome::TakeOutcome(const OutcomeTaker* taker) : outer_(outcome_taker) { outcome_taker = taker; }

TakeOutcome::~TakeOutcome() { outcome_taker = outer_; }

void outcome_ready(const TrialOutcome& out) {
  if (outcome_taker != nullptr && *outcome_taker) (*outcome_taker)(out);
}

InterruptTrials::InterruptTrials(const std::atomic<bool>* flag) : outer_(trials_interrupt) { trials_interrupt = flag; }

InterruptTrials::~InterruptTrials() { trials_interrupt = outer_; }

sim::EngineConfig engine_config(const Scenario& s, std::uint64_t seed, TraceKept kept, sim::TieBreak tie_break,
                                sim::Chooser chooser, sim::Footprints* footprints) {
  sim::EngineConfig ec;
  ec.seed = seed;
  ec.interrupt = trials_interrupt;
  ec.trace = kept == TraceKept::timeline ? sim::TraceMode::full  // keeps the events, same hash
             : kept == TraceKept::none   ? sim::TraceMode::off
                                         : sim::TraceMode::hash;
  ec.time_budget = s.time_budget;
  ec.event_budget = s.event_budget;
  ec.memory_budget = s.memory_budget_mb << 20;
  ec.tie_break = std::move(tie_break);
  ec.chooser = std::move(chooser);
  ec.footprints = footprints;
  return ec;
}

void inject_faults(const Scenario& s, const models::FaultSurface& surface) {
  for (const FaultSetup& f : s.faults) f.faults->inject(surface);
}

void count_faults(const Scenario& s, const models::FaultSurface& surface, sim::Time end, TrialOutcome& out) {
  if (s.faults.empty()) return;
  if (surface.placed_faults != nullptr)
    out.placed_pause_ms = std::chrono::duration<double, std::milli>(surface.placed_faults->paused).count();
  std::uint64_t n = 0;
  for (const FaultSetup& f : s.faults) n += f.faults->injected(surface, end);
  out.counts["injected_faults"] = static_cast<double>(n);
}

void take_findings(models::checkers::Findings&& f, TrialOutcome& out) {
  out.counts = std::move(f.values);
  out.examples = std::move(f.examples);
}

double ms(sim::Time t) { return std::chrono::duration<double, std::milli>(t.time_since_epoch()).count(); }

void add_time(models::TimeSpent& sum, const models::TimeSpent& t) {
  for (auto part : kTimeParts) sum.*part.member += t.*part.member;
}

// A trial that fails for a reason that is not the input's is a defect: the message says which
// trial, so that it can be run alone.
TrialOutcome run_trial(const Scenario& s, const StrategyChoice& choice, std::uint64_t seed, TraceKept kept,
                       sim::TieBreak tie_break, sim::Chooser chooser, sim::Footprints* footprints) {
  const bool scheduled = static_cast<bool>(tie_break) || static_cast<bool>(chooser);
  try {
    if (s.kind == nullptr) throw std::logic_error("a scenario not made by load_document has no workload kind");
    return s.kind->run_trial(s, choice, seed, kept, std::move(tie_break), std::move(chooser), footprints);
  } catch (const InputError&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const sim::Interrupted&) {
    throw;  // unfinished, not failed
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("the trial of {} with seed {}{} failed: {} (`--strategy {} --seed {} --trials 1` runs it "
                                         "alone)",
                                         choice.shown(), seed, scheduled ? " under an explorer's schedule" : "", e.what(),
                                         choice.shown(), seed));
  }
}

std::vector<reports::Timeline::Anomaly> anomalies_told(const models::db::Database& database, const reports::Timeline& timeline) {
  std::vector<reports::Timeline::Anomaly> out;
  if (database.history() == nullptr) return out;
  // A session is its lane (the sessions workload); a client's connection is named as its statements' runner.
  const auto lane_of = [&](const std::string& who) {
    for (const auto& st : timeline.statements)
      if (st.who.text == who) return st.who.lane;
    return who;
  };
  for (auto& a : models::checkers::explain_anomalies(*database.history())) {
    reports::Timeline::Anomaly told{a.metric, std::move(a.text)};
    for (const auto& who : a.who)
      if (std::string lane = lane_of(who); std::find(told.lanes.begin(), told.lanes.end(), lane) == told.lanes.end())
        told.lanes.push_back(std::move(lane));
    out.push_back(std::move(told));
  }
  return out;
}

}  // namespace locksim
