#pragma once
// A workload written in Lua: the user's own operation (sell the last item, pay once, claim a
// job) and its invariant, run without a build (docs/writing-workloads.md is the contract).
//
// A workload file declares its tables and first rows, the fields of the request a client sends
// (each drawn from a distribution, or the scenario's key, or the operation's own ids), the
// metrics its check counts, and `check(final, history)`: after each trial, over the committed
// tables, the Redis keyspace and what each operation came to as its client saw it, it returns
// the counts. Its strategies are Lua files with `handle(req)` (script.hpp) that name it.
//
// Field values are drawn from the trial's seed and the operation's submission (a retry and a
// double submit send the same request), never from a stream of the simulation: declaring a
// field changes no trace. check runs in a fresh sandboxed state (models/lua/sandbox.hpp) under
// the same budgets as a strategy.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/app/request.hpp"
#include "models/db/database.hpp"
#include "models/lua/script_error.hpp"

namespace models::workloads {

/// How a request field's value is chosen, per submission.
struct FieldSpec {
  enum class Kind {
    key,         // the key the scenario's clients drew (clients.keys, traffic.keys), from `first` on
    operation,   // the attempt's logical operation: retries keep it, a double submit has its own
    submission,  // the first submission's operation: retries and double submits keep it
    client,      // the client's index
    uniform,     // a whole number in [lo, hi]
    zipf,        // lo .. hi, the k-th with weight 1 / k^exponent
    one_of,      // one of `values`, each as likely
    constant,    // `values[0]`
  };
  Kind kind = Kind::constant;
  std::int64_t lo = 0, hi = 0;
  double exponent = 1;
  std::vector<db::Value> values{};
  std::vector<double> cdf{};  // zipf: P(value <= lo + i)
};

struct Field {
  std::string name;
  FieldSpec spec;
};

/// A count the workload's check returns: a metric like the built-in ones.
struct MetricDecl {
  std::string name;
  std::string unit;
  std::string meaning;
  bool finding = true;  // something that should not happen
};

/// A workload parameter: its default, and whether the script sees a boolean.
struct WorkloadParam {
  std::string name;
  double value = 0;
  bool flag = false;
};

/// A loaded workload file.
struct Workload {
  std::string name;  // the file's name without `.lua`: what its strategies' `workload` names
  std::string file;
  std::string description, source;
  std::vector<WorkloadParam> params{};  // the defaults, by name
  std::vector<WorkloadParam> effective{};  // the values in effect
  std::vector<db::TableSchema> tables{};
  std::vector<std::string> tables_sql{};
  std::vector<std::pair<std::string, db::Values>> rows{};  // (table, values), in load order
  std::vector<std::pair<std::string, std::string>> redis{};  // redis-1's first keys, by key
  std::vector<Field> fields{};
  std::vector<MetricDecl> metrics{};
  std::string bytecode;  // the compiled file, run again for check
  lua::Limits limits{};

  /// The request fields of `request` in a trial with `seed`, in declared order.
  std::vector<std::pair<std::string, db::Value>> draw(std::uint64_t seed, const Request& request) const;
  std::vector<std::pair<std::string, db::Value>> draw(std::uint64_t seed, std::uint64_t operation, std::uint64_t submission,
                                                      std::uint32_t client, std::uint64_t key) const;
};

/// Compiles the workload `text` read from `file`, runs its top level with `params` overriding
/// its defaults (unknown names refused), and reads its contract, its tables in the dialect of
/// the scenario's `engine`. Throws lua::ScriptError.
std::shared_ptr<const Workload> load_workload(const std::string& file, std::string_view text,
                                              const std::vector<std::pair<std::string, double>>& params = {},
                                              db::Engine engine = db::Engine::mariadb, lua::Limits limits = {});

/// An external side effect a strategy reported (`effect(name, value)`): a card charged, a job
/// run, an email sent. Unlike a row, no rollback undoes it.
struct Effect {
  std::string name;
  db::Value value;
  std::uint64_t operation = 0;
  std::uint32_t attempt = 0;
  sim::Time at;
};

/// What a finished trial is, as check reads it.
struct Final {
  struct Table {
    std::string name;
    std::vector<std::string> columns;  // `id` first
    std::vector<db::Row> rows;          // committed, by id
  };
  std::vector<Table> tables{};
  std::vector<std::pair<std::string, std::string>> redis{};  // string keys alive at the end, by key
};

/// One logical operation as its client saw it.
struct OperationSeen {
  std::uint64_t operation = 0, submission = 0, key = 0;
  std::uint32_t client = 0;
  const char* outcome = "ok";  // "ok" (acknowledged), "failed", or "unknown" (an attempt timed out)
  std::string error;           // of the last failed attempt: "1062", "timeout", ...
  int attempts = 0;
  double start_ms = 0, end_ms = 0;
};

struct History {
  std::vector<OperationSeen> operations{};
  std::vector<Effect> effects{};
};

/// Runs the workload's check over a trial (seed: the trial's, for the request fields): the
/// declared metrics' counts, in declared order. Throws lua::ScriptError ("file:line: ...") when
/// check fails or returns what it did not declare.
std::vector<std::pair<std::string, double>> check(const Workload& workload, std::uint64_t seed, const Final& final,
                                                  const History& history);

}  // namespace models::workloads
