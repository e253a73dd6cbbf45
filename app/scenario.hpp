#pragma once
// Scenario files (scenarios/*.json): what world to build, which strategies to run in it, how
// many trials, and what each strategy is expected to show. Loading validates everything:
// a mistake is one line naming the file, the JSON path and what was expected.

#include <any>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/database_input.hpp"
#include "app/input.hpp"
#include "models/db/sql.hpp"
#include "models/deployment.hpp"
#include "models/workloads/lua/workload.hpp"
#include "models/workloads/rollout/rollout.hpp"
#include "models/strategies/strategy.hpp"

namespace locksim {

class WorkloadKind;

class SchemaRecorder;

struct StrategyChoice {
  std::string name;  // the registry's name; a script's file name ("my.lua")
  models::strategies::Params params;  // the registry's defaults, overridden by the file
  std::string label{};                // how results and `expect` name it ("as"); the name by default
  /// A strategy written in Lua: the script as loaded, and its file as the scenario names it.
  std::shared_ptr<const models::strategies::Entry> script{};
  std::string script_file{};
  /// A rollout's plan (the entry is `script`).
  std::shared_ptr<const models::rollout::Plan> rollout{};
  const std::string& shown() const { return label.empty() ? name : label; }
  /// The registry entry, or the script's.
  const models::strategies::Entry& entry() const;
};

/// "the strategy's metric compares with value", for example duplicate_rows > 0.
struct Expectation {
  std::string strategy;
  std::string metric;
  std::string op;  // >, >=, =, <=, <
  double value = 0;
  /// "= 1 in every trial": checked in each trial rather than on the run's total. Always so
  /// for metrics of each trial (a step's outcome, a table's rows).
  bool every_trial = false;
  bool holds(double measured) const;
  std::string text() const;
};

class Fault;      // app/fault_kind.hpp
class FaultKind;  // app/fault_kind.hpp

/// The faults of one kind a scenario configures.
struct FaultSetup {
  const FaultKind* kind = nullptr;
  std::shared_ptr<const Fault> faults;
};

struct Scenario {
  std::string file;
  std::string name, description, source, lesson;
  std::string workload = "account-bind";  // or "batch-scheduler", "sessions", a Lua workload's name
  /// A workload written in Lua ("workload": {"script": ...}), with its parameters in effect;
  /// its tables and rows are in deployment.database.
  std::shared_ptr<const models::workloads::Workload> lua_workload{};
  std::string workload_file{};  // as the scenario names it
  std::uint64_t workload_hash = 0;  // of its text: a token pins it
  /// What runs the scenario's trials (app/workload_kind.hpp); set by load_document.
  const WorkloadKind* kind = nullptr;
  /// What its statements share (models::db::sql::pinned): kept here, shared by its trials
  /// without a reference count, so that a trial restored in place writes nothing of its scenario.
  std::shared_ptr<models::db::sql::Pins> pins = std::make_shared<models::db::sql::Pins>();
  /// account-bind's operation: "bind" (insert if absent: a later binding of a bound OpenID is
  /// expected to change nothing) or "rebind" (the latest acknowledged binding should stand, so
  /// lost_updates applies).
  std::string operation = "bind";
  /// The world and its services; every default is the models' own.
  models::DeploymentConfig deployment;
  sim::Distribution app_work = sim::fixed(sim::Duration{});  // between a handler's read and its write
  /// The workload kind's own configuration (the batch scheduler's models::batch::BatchConfig, the
  /// sessions workload's script), of the type the kind's file names: its keys read into it and
  /// its trials read it through own_config (app/workload_kind.hpp). Empty for a kind without one.
  std::any workload_config{};
  /// The scenario's CREATE TABLE statements as written.
  std::vector<std::string> tables_sql;
  /// Each fault kind the file configures, in the order of fault_kinds().
  std::vector<FaultSetup> faults;
  std::vector<StrategyChoice> strategies;
  /// A rollout's table, code and cleanup job, which its plans (among `strategies`) start from.
  std::shared_ptr<const models::rollout::Plan> rollout{};
  int trials = 100;
  std::uint64_t seed = 1;
  sim::Duration time_budget = std::chrono::hours(1);  // of simulated time per trial
  // Events per trial. The catalogue's trials take at most about 12,000; a runaway trial reaches
  // this in a few seconds and counts in unfinished_runs.
  std::uint64_t event_budget = 10'000'000;
  // What a trial's servers may hold, as the models count it (tables, Redis keyspaces): past it the
  // trial ends and counts in unfinished_runs and memory_budget_runs.
  std::uint64_t memory_budget_mb = 4096;
  std::vector<Expectation> expect;
  std::uint64_t hash = 0;  // of the resolved document: names the configuration in results
  std::string resolved;    // the document after overrides, as JSON text
};

/// An override that adds a strategy written in Lua (`--strategy-file PATH`): "+script=PATH".
/// Tokens carry it with the other overrides, so a replay loads the same script.
inline constexpr std::string_view kScriptOverride = "+script=";
/// An override that runs the scenario's world and traffic with a workload written in Lua
/// (`--workload-file PATH`): "+workload=PATH". The scenario's own strategies and expectations go
/// with its workload; the run's are those of --strategy-file.
inline constexpr std::string_view kWorkloadOverride = "+workload=";

/// A script's text (a strategy's or a workload's), bounded as a scenario file is. Throws InputError.
std::string read_script(const std::string& path);
/// Where a script named `path` is: the path itself, or else under the project's strategies/
/// (`strategies/x.lua`, `x.lua` or `x`). Throws InputError.
std::string script_path(const std::string& path);
/// The scripts in strategies/, sorted.
std::vector<std::string> script_catalogue();
/// The strategy written in Lua at `path` (found by script_path), loaded: a choice with its
/// defaults, named by its file name. Throws InputError, a script's errors as "file:line: ...".
StrategyChoice load_script_file(const std::string& path);

/// Reads and validates a scenario file, after applying `path=value` overrides (for example
/// `clients.count=50`, written as if in the file; `NAME.param=value` sets a parameter of the
/// strategy NAME, by its name or "as" label). `only`: run just these strategies, as
/// narrow_strategies() does; a strategy of the workload that the file does not list may be
/// named, and given parameters. Throws InputError.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {},
                       const std::vector<std::string>& only = {});
/// Validates a scenario document already read (and overridden) from `path`, running only the
/// `only` strategies when given. A `recorder` notes what the loader reads (app/schema.hpp).
Scenario load_document(nlohmann::json doc, const std::string& path, const std::vector<std::string>& only = {},
                       SchemaRecorder* recorder = nullptr);
/// The scenario with every effective value, defaults included: what `run` prints and
/// `--print-config` shows.
nlohmann::json effective_config(const Scenario& scenario);
/// Keeps only the named strategies (`--strategy`): labels or names of the scenario's, or any
/// strategy of its workload with default parameters. None named: all stay. Throws InputError.
void narrow_strategies(Scenario& scenario, const std::vector<std::string>& names);
/// Finds a scenario by file path, or by name in the scenarios directory.
std::string scenario_path(const std::string& name_or_path);
/// The scenario files of the catalogue, sorted.
std::vector<std::string> catalogue();

}  // namespace locksim
