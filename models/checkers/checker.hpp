#pragma once
// A checker reads a finished trial and counts what went wrong in it: duplicate rows, two
// holders of one lock, a write after the lease ran out. It only observes: it runs once the
// trial is over, on what the world recorded, and nothing it does reaches the simulation.
//
// Each checker declares the metrics it counts (name, kind, unit, one-line meaning); the
// registry below is the one list of them that results, reports, `expect`, `--property`,
// `--metric` and docs/metrics.md are made from. Adding a checker: its own file in
// models/checkers/, one line in checker.cpp, and its test.
//
// The checkers here read what every workload's trial has (the database, the clients'
// operations, the lock holds, Redis) and apply to every workload. A workload's own checkers (the
// batch scheduler's tasks, the sessions' steps, account-bind's lost updates, a rollout's phases)
// live in its folder under models/workloads/, read the record of the trial only that workload
// keeps (WorkloadChecker), and are run by that workload alone.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "models/app/clients.hpp"
#include "models/app/remote.hpp"
#include "models/checkers/locks.hpp"
#include "models/db/database.hpp"
#include "models/redis/server.hpp"

namespace models::checkers {

enum class MetricKind {
  count,     // things counted in a trial; summed over trials
  duration,  // milliseconds
  ratio,     // per logical operation
};
const char* to_string(MetricKind kind);

/// How a metric's per-trial values make the run's figure.
enum class Aggregate {
  sum,       // the total over the trials (and the share of trials in which it fired)
  max,       // the largest value of any trial
  over_run,  // computed once over every operation of the run (percentiles, per-operation ratios)
  each,      // a value per trial that `expect` checks in every trial (a step's outcome)
};

struct MetricInfo {
  /// In results.json, `expect`, --property, --metric; a name with a `<` names a family of
  /// metrics whose names start with what comes before it ("errors.<kind>": errors.1062, ...).
  std::string name;
  MetricKind kind = MetricKind::count;
  std::string unit;     // "rows", "holds", "ms", ...
  std::string meaning;  // one line
  /// A finding: something that should not happen. A trial with a value above `fires_above`
  /// fails the property of that name (explore), and counts in the violations plot.
  bool finding = false;
  double fires_above = 0;
  Aggregate aggregate = Aggregate::sum;
  /// Whether its total per million operations (and per injected fault) means something: a
  /// count of what the operations did or met, not of the run's own jobs, trials or setup.
  bool per_operation = true;
  /// It counts the table's rows, the rows seeded before the trial included: per operation only
  /// where the scenario seeds none.
  bool counts_seeded_rows = false;
};

/// A table whose rows stand one for each value of a business key: duplicate_rows counts the
/// rows beyond the first of a value (account-bind's t_account by open_id; each table of the
/// sessions workload by its indexed column).
struct KeyedTable {
  std::string table;
  std::string key_column;
};

/// What a checker sees of a finished trial, whatever its workload. Pointers are null, and
/// lists empty, where the trial's world has no such part (no clients in the batch workload, no
/// Redis for a database-only strategy).
struct Trial {
  sim::Time end;               // when the run ended
  bool finished = true;        // it ended on its own, not at a budget
  bool out_of_memory = false;  // the budget it ended at was the memory budget
  const db::Database* database = nullptr;
  std::vector<KeyedTable> keyed_tables{};  // in `database`: read from there, never copied (they may hold millions of rows)
  std::uint64_t lock_rows = 0;                           // committed rows of a lock table, if the strategy has one
  const std::vector<OperationRecord>* operations = nullptr;  // the clients' logical operations
  const LockMonitor* locks = nullptr;                        // who believed they held which lock when
  std::vector<const redis::Server*> redis{};                 // every Redis instance
  const RemoteService* remote = nullptr;
  std::uint64_t dropped_requests = 0;  // requests the strategy chose to drop
  std::uint64_t lock_wakeups = 0;      // watch events that woke lock waiters
  const std::vector<std::string>* script_errors = nullptr;  // a script strategy's runtime errors
};

/// A trial's metric values by name. The comparator is transparent, so a checker names a metric
/// with a literal and no string is made for the lookup: only for the key, once a trial.
using Counts = std::map<std::string, double, std::less<>>;

/// What checkers found in one trial: metric values by name, and the first few violations
/// explained.
struct Findings {
  Counts values;
  std::vector<std::string> examples;
  void set(std::string_view name, double value) { slot(name) = value; }
  void add(std::string_view name, double value) { slot(name) += value; }

 private:
  double& slot(std::string_view name) {
    auto it = values.lower_bound(name);
    if (it == values.end() || it->first != name) it = values.emplace_hint(it, std::string(name), 0.0);
    return it->second;
  }
};

class Checker {
 public:
  virtual ~Checker() = default;
  /// The metrics it counts, in the order tables list them.
  virtual std::vector<MetricInfo> metrics() const = 0;
  /// Counts in `out` what it finds in `trial`; a trial without what it reads adds nothing.
  virtual void check(const Trial& trial, Findings& out) const = 0;
};

/// A workload's own checker: it reads, beside the trial, the record that only its workload
/// keeps (`Record`: the batch scheduler's task runs, the sessions' steps, a rollout's log).
template <class Record>
class WorkloadChecker {
 public:
  virtual ~WorkloadChecker() = default;
  /// The metrics it counts, in the order tables list them.
  virtual std::vector<MetricInfo> metrics() const = 0;
  virtual void check(const Trial& trial, const Record& record, Findings& out) const = 0;
};

/// A workload's checkers, in the order tables list their metrics.
template <class Record>
using WorkloadCheckers = std::vector<const WorkloadChecker<Record>*>;

template <class Record>
std::vector<MetricInfo> metrics_of(const WorkloadCheckers<Record>& checkers) {
  std::vector<MetricInfo> out;
  for (const auto* c : checkers)
    for (auto& m : c->metrics()) out.push_back(std::move(m));
  return out;
}

template <class Record>
void check_each(const WorkloadCheckers<Record>& checkers, const Trial& trial, const Record& record, Findings& out) {
  for (const auto* c : checkers) c->check(trial, record, out);
}

/// How an error kind is named in metrics (`errors.<name>`) and in `retry_on`: database errors
/// by the server's code (MariaDB's 1062, 1213, 1205; PostgreSQL's 23505, 40P01, 55P03), the
/// others by their kind (timeout, lock_busy, ...).
std::string error_name(ErrorKind kind, db::Engine engine = db::Engine::mariadb);

/// Every checker of every workload, in the order tables list their metrics.
const std::vector<const Checker*>& registry();
/// Their findings in `trial`.
Findings check_all(const Trial& trial);

}  // namespace models::checkers
