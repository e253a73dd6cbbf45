#pragma once
// Workload kinds: what a scenario's "workload" may be. Each kind is one file in app/workloads/:
// its keys of the scenario's "workload" object (read with the models' defaults, and written back
// with every value in effect), how it runs one trial of a strategy, and the metrics its own
// checkers count (models/workloads/<kind>/). The loader, the runner and the metrics' registry go
// through the kinds and know none of them by name; adding one is its file, one line in
// app/workloads/workload_kind.cpp, its rows in docs/scenario.md, and its test. A kind declares
// each of its keys once (app/keys.hpp), and keeps its own configuration in the scenario's
// workload_config, of a type its file names (own_config below).

#include <nlohmann/json.hpp>

#include <any>
#include <string>
#include <vector>

#include "app/keys.hpp"
#include "app/reader.hpp"
#include "app/runner.hpp"
#include "models/checkers/checker.hpp"

namespace locksim {

using models::checkers::MetricInfo;

class WorkloadKind {
 public:
  virtual ~WorkloadKind() = default;
  /// Its `workload.kind` ("account-bind"); a workload written in Lua is named by its file.
  virtual const char* name() const = 0;
  /// Whether a scenario's "workload" object (absent: null) is this kind's.
  virtual bool claims(const json& workload) const;
  /// Its keys of the scenario's "workload" object, beside "kind": the loader reads them (and
  /// refuses them under another kind), the effective configuration writes them.
  virtual const Keys<Scenario>& keys() const;
  /// The keys of the document's top level it owns ("steps"), which another kind's scenario may
  /// not have.
  virtual std::vector<std::string> top_level_keys() const { return {}; }
  /// What else it reads of the document (null: the scenario has no "workload"), after its keys;
  /// throws InputError (file, JSON path, what was expected).
  virtual void load(const Reader* workload, const Reader& top, Scenario& s) const = 0;
  /// Whether its trials have clients (the "clients" section: count, operations, arrival,
  /// traffic), which the shrinker may take away.
  virtual bool has_clients() const { return false; }
  /// Its share of the check of the population's size, what a trial may start (the batch
  /// scheduler's consumers), made with the topology's and the clients' once those are read.
  virtual void check_population(const Reader&, const Scenario&) const {}
  /// Checks of the whole scenario once its strategies are read (steps against the tables).
  virtual void check_scenario(const Reader&, const Scenario&) const {}
  /// The tables its own model creates (the batch scheduler's t_task), whose names no scenario's
  /// own table may take.
  virtual std::vector<std::string> tables() const { return {}; }
  /// A scenario of this kind that reaches each of its keys, which `locksim schema` reads
  /// (app/schema.cpp); null where the documents there reach them. By default the kind named, with
  /// nothing else: its keys of "workload" are read with their defaults.
  virtual json exemplar() const;
  /// What else of the effective configuration it owns beyond its keys (the sessions' steps).
  virtual void effective(const Scenario&, json&) const {}
  /// The nodes of its own a fault may name beside the app servers (the sessions).
  virtual std::vector<std::string> node_names(const Scenario&) const { return {}; }
  /// The steps a scenario of this kind runs, when it runs its own (the sessions workload's: one
  /// strategy, named as the kind, whose expectations may stand at the top of "expect").
  virtual const models::sessions::Script* steps(const Scenario&) const { return nullptr; }
  /// One trial of `choice`, a strategy of this kind.
  virtual TrialOutcome run_trial(const Scenario& s, const StrategyChoice& choice, std::uint64_t seed, TraceKept kept,
                                 sim::TieBreak tie_break, sim::Chooser chooser, sim::Footprints* footprints) const = 0;
  /// What its own checkers count, beside the checkers of every workload (a workload written in
  /// Lua declares its metrics in its file: none here).
  virtual std::vector<MetricInfo> metrics() const { return {}; }
  /// The finding its comparison table has its columns for (reports::RunResults::headline).
  virtual std::string headline(const Scenario&) const { return "duplicate_rows"; }
  /// What a strategy of this kind shows in its results beyond what every one does (a rollout's
  /// phases), before its trials run.
  virtual void describe(const StrategyChoice&, reports::StrategyResult&) const {}
};

/// A kind's own configuration in `s` (Scenario::workload_config), of the type its file names:
/// made with the model's defaults when its keys first read into it.
template <class Config>
Config& own_config(Scenario& s) {
  if (!s.workload_config.has_value()) s.workload_config.emplace<Config>();
  return std::any_cast<Config&>(s.workload_config);
}
/// The same, to read: the model's defaults where the scenario holds none.
template <class Config>
const Config& own_config(const Scenario& s) {
  static const Config defaults{};
  return s.workload_config.has_value() ? std::any_cast<const Config&>(s.workload_config) : defaults;
}

/// Every kind; the first is the default, a scenario without "workload".
const std::vector<const WorkloadKind*>& workload_kinds();
/// The kind of a scenario's "workload" as written (absent: null), once the scenario is read.
const WorkloadKind& workload_kind_of(const json& workload);
/// The names of the kinds a scenario names by `workload.kind`.
std::vector<std::string> workload_kind_names();

}  // namespace locksim
