#pragma once
// What a run produced, as the writers read it: no simulation types, only figures.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "reports/histogram.hpp"

namespace locksim::reports {

/// A share of trials with its 95% Wilson score interval.
struct Share {
  double value = 0, low = 0, high = 0;
};
Share wilson(std::uint64_t hits, std::uint64_t trials);

/// `count` events in `operations` operations, per million operations: the exact (Garwood)
/// 95% interval of a Poisson count.
Share per_million(double count, std::uint64_t operations);
/// `count` events over `exposure` units (faults): the rate per unit, with its exact 95%
/// Poisson interval.
Share per_unit(double count, double exposure);

struct Metric {
  double total = 0;         // over all trials
  double mean = 0;          // per trial
  std::uint64_t fired = 0;  // trials in which it was above zero
  Share share;              // fired / trials, with its interval
  /// total per million operations, with its interval: the rate a design review reads. None for
  /// a metric that is not a sum over trials (the most holders at once).
  std::optional<Share> per_million{};
  /// total per injected fault (injected_faults), with its interval: the rate of a rare fault's
  /// harm. None without faults.
  std::optional<Share> per_fault{};
};

/// A statement's wait for a lock, as the database reported it.
struct LockWait {
  std::string mode;          // "X", "S gap", "X next-key", "X insert intention", ...
  std::string table, index;  // "t_account", "PRIMARY"
  std::string entry;         // "('m', 2)"; a gap or an insert intention: "gap before ('x', 3)", "supremum"
  std::vector<std::string> behind{};  // the sessions it waited behind, by their origin
  double waited_ms = 0;
};
/// A lock wait in a few words: "X on t.PRIMARY (2), behind s1, 12.0 ms".
std::string wait_words(const LockWait& wait);

/// A lock a session held, as the database's lock table listed it.
struct HeldLock {
  std::string who;           // the holder's origin: "s1", "app-1 worker 2, client 7, op 7 attempt 1"
  std::string mode;          // as LockWait's: "X", "S gap", "FOR UPDATE", "ExclusiveLock"
  std::string table, index;  // index: "" where the engine locks rows, not index entries (PostgreSQL)
  std::string entry;         // "(2)", "gap before ('x', 3)", "row (2)", "advisory key 7"
};
/// A held lock in a few words: "X on t.PRIMARY (2)", "FOR UPDATE on t row (2)".
std::string held_words(const HeldLock& lock);

/// A value in a table cell: a number, a string or NULL (nullptr), as the database holds it.
using Cell = std::variant<std::int64_t, std::string, std::nullptr_t>;
std::string to_text(const Cell& cell);  // 5, 'a', NULL

/// One trial drawn as a picture: who believed they held which lock when (with the lease the
/// service granted, where known), nodes paused or down, and the duplicate inserts.
struct Timeline {
  /// Who did something, as the trial's models named it, with the parts the story groups by:
  /// an app server's worker on a client's attempt (its text "app-1 worker 4, client 7, op 7
  /// attempt 1", its lane "app-1 worker 4", node "app-1", worker 4, client 7, operation 7,
  /// attempt 1), another process ("app-1.watchdog": lane "app-1 watchdog"), a session of a
  /// sessions script ("s1"), a process of a scenario's own ("cleanup job", "DBA"), a client
  /// ("client 7") or a service's node ("redis-1").
  struct Who {
    std::string text{};  // as the models wrote it
    std::string lane{};  // the participant, as the diagram names its lane
    std::string node{};  // the node it ran on; a session or a scenario's process: its name
    std::uint32_t worker = 0;     // an app server's worker, from 1; 0: not a worker's
    std::uint32_t client = 0;     // with an operation: the client that sent it
    std::int64_t operation = -1;  // the client operation it worked on; < 0: none
    std::uint32_t attempt = 0;    // with an operation: which attempt, from 1
    bool empty() const { return text.empty(); }
    friend bool operator==(const Who& a, const Who& b) { return a.text == b.text; }
    friend bool operator<(const Who& a, const Who& b) { return a.text < b.text; }
  };
  /// How a hold ended, as the lock monitor saw it; reports/explain.hpp puts it in words.
  enum class End {
    held,             // still believed when the trial ended
    released,         // its holder let go
    expired,          // the lease ran out at the service
    deleted,          // another's DEL removed it (a wrong unlock)
    session_expired,  // ZooKeeper: the session, and its lock node with it
    lease_expired,    // etcd: the lease, and its key with it
    lost,             // gone at the service otherwise (a failover)
    crashed,          // its holder's node crashed
  };
  struct Bar {
    std::string lock;    // "lock:openid:0"
    Who holder;          // "app-1 worker 4, client 7, op 7 attempt 1"
    double from_s = 0, to_s = 0;
    double lease_to_s = -1;  // the end of the granted lease at the service (renewed, expired or deleted); < 0: not known
    End end = End::held;
    double service_to_s = -1;  // when the service ended it, where before to_s (an expiry, another's DEL); < 0: not
    Who deleted_by{};  // whose DEL removed this holder's lock (a wrong unlock); empty: nobody's
    Who removed{};     // whose lock this holder's DEL removed at to_s (a wrong unlock); empty: none
    std::vector<double> renewals_s{};  // each renewal of the lease (a watchdog's PEXPIRE)
    std::string service{};  // "redis", "redlock", "zookeeper", "etcd"; empty: not known
  };
  struct Band {
    std::string node;
    double from_s = 0, to_s = 0;
    std::string kind;  // "paused", "down"
  };
  /// An insert of a key that the trial's rows hold more than once.
  struct Mark {
    std::int64_t row = 0;  // its id
    Who who;               // the inserting connection's origin
    double at_s = 0;
    std::string key{};     // the duplicated key
    bool first = false;    // the key's first row, which a unique index would have let in: not a duplicate
  };
  /// A database statement of an operation involved in what went wrong: one that waited for a
  /// lock or failed, or inserted a duplicated key, and the other statements of its operation.
  struct Statement {
    enum class Kind { select, write, other };
    double from_s = 0, to_s = 0;
    Who who;  // the connection's origin: "app-1 worker 2, client 7, op 7 attempt 1"
    std::string sql;
    Kind kind = Kind::other;
    std::int64_t rows = 0;                    // a SELECT's rows
    std::int64_t affected = 0, insert_id = 0;  // a write's
    int warnings = 0;
    int error = 0;            // the model's error number (MySQL's on MariaDB); 0: it succeeded
    std::string code{};       // the error as its server names it: "1062" on MariaDB, "23505" on PostgreSQL
    std::string message{};    // the error as the server said it: "1062 Duplicate entry 'a' for key 'uk'"
    std::vector<LockWait> waits{};  // each lock wait, in order
    std::vector<Who> waited_for{};  // the connections it waited behind
    std::vector<Who> cycle{};       // 1213: who was on the cycle, the victim first
    std::string undone{};           // what its failure rolled back: "statement", "transaction"; empty: nothing
    std::int64_t undone_rows = 0;   // the row changes it rolled back
    /// The locks every session held once it answered (the database's lock table then, its
    /// first 40): what each transaction holds after each step.
    std::vector<HeldLock> held{};
    bool held_cut = false;  // the lock table had more than those
  };
  /// A request and its reply between two participants: a client's attempt and the app worker
  /// that took it up, a worker's command and the Redis node, ZooKeeper or etcd it went to.
  struct Message {
    Who from;  // the caller: "client 7", "app-1 worker 4"
    Who to;    // the callee: the worker that took the attempt up, "redis-1"
    std::string request;  // "op 7 attempt 1 (key 3)", "SET lock:openid:3 app-1-3-7-1 NX PX 10000"
    std::string reply{};  // "ok", "duplicate_key", "(nil)", "OK"; empty: none was sent
    double sent_s = 0;
    double arrived_s = -1;   // at the callee's node; < 0: lost, or held past the trial
    double taken_s = -1;     // an attempt: taken up by the worker `to` names; < 0: no worker took it up
    double replied_s = -1;   // the reply sent; < 0: never
    double returned_s = -1;  // the reply reached the caller; < 0: lost, or still on its way
    double gave_up_s = -1;   // the caller stopped waiting (its timeout) before a reply; < 0: it did not
    std::int64_t operation = -1;  // a client's attempt: the operation it is of; < 0: another call
    std::uint32_t attempt = 0;    // a client's attempt: which one, from 1
  };
  std::uint64_t seed = 0;
  /// How the trial's simultaneous events were ordered when not by its seed alone, as its
  /// title says it: "dfs: choice 9 takes option 1", "pct, depth 3", and whether it was shrunk.
  std::string schedule{};
  double end_s = 0;
  std::vector<Bar> bars;
  std::vector<Band> bands;
  std::vector<Mark> inserts;  // of duplicated keys, by the trial (not the rows seeded before it)
  std::vector<Statement> statements{};
  /// The calls of the operations involved in what went wrong, in the order they were sent;
  /// at most 400, the first ones.
  std::vector<Message> messages{};
  /// Calls `messages` leaves out: involved ones past its bound, and any the trial's call log
  /// did not keep (past its own bound of kept calls), to say so.
  std::uint64_t calls_left_out = 0;
  /// Pauses and crashes the trial had past what `bands` keeps (the kMostKept longest), to say
  /// so: a trial with a GC pause every millisecond has millions.
  static constexpr std::size_t kMostKept = 2000;
  std::uint64_t bands_left_out = 0;
  std::uint64_t operations = 0;  // the trial's client operations, all of them
  /// One operation of the trial's client-visible history, as Jepsen's histories have it: its
  /// invocation and its completion (`run --history` writes them, reports/history.hpp).
  struct Operation {
    enum class Type { ok, fail, info };
    std::uint32_t client = 0;  // a client's number; a session's place in the script
    std::string f;             // what it does: "bind", the Lua workload's name, "sql"
    std::vector<std::pair<std::string, Cell>> value{};   // what it asked: its request's fields, its statement
    double invoked_s = 0;
    double completed_s = -1;   // < 0: it had not completed when the trial ended
    Type type = Type::info;    // ok; fail: it did not take effect; info: it may have
    std::string error{};       // fail, info: why ("duplicate_key", "1213", "timeout", "unfinished")
    std::vector<std::pair<std::string, Cell>> result{};  // ok: what it returned (a statement's rows, affected)
  };
  std::vector<Operation> history{};  // in the order they were invoked; the first kHistoryKept
  std::uint64_t history_left_out = 0;
  static constexpr std::size_t kHistoryKept = 100'000;
  /// The first isolation anomaly of each class found in the trial's history of transactions
  /// (docs/anomalies.md): its metric ("anomalies.g_single"), its cycle in words, and the lanes
  /// of the sessions whose transactions make it, which the diagram marks.
  struct Anomaly {
    std::string metric;
    std::string text;
    std::vector<std::string> lanes{};
  };
  std::vector<Anomaly> anomalies{};
  bool worth_drawing() const { return !inserts.empty() || bars.size() > 1; }
};

/// A count with its thousands grouped: 1204 -> "1,204".
std::string grouped(std::uint64_t n);


/// One step of the sessions workload, as its first trial ran it, and what it came to over
/// every trial.
struct StepResult {
  std::size_t step = 0;  // from 1
  std::string session, sql;
  double issued_ms = -1, finished_ms = -1;  // -1: never issued / never finished
  double applied_ms = -1;  // when its reads and writes were made, after its lock waits; -1: never (it failed)
  std::vector<std::string> columns{};
  std::vector<std::vector<Cell>> rows{};
  std::int64_t affected = 0, insert_id = 0;
  int warnings = 0;
  int error = 0;  // the model's error number (MySQL's on MariaDB); 0 for none
  std::string code{};  // the error as its server names it: "1062" on MariaDB, "23505" on PostgreSQL; empty for none
  std::string message{};
  std::vector<std::string> waited_for{};  // the sessions it waited behind
  double waited_ms = 0;                   // in lock waits, in all
  std::vector<LockWait> waits{};          // each lock wait, in order
  std::vector<std::string> deadlock_cycle{};  // 1213: the sessions on the cycle, this one first
  std::string undone{};                   // what its failure rolled back: "statement", "transaction"
  std::int64_t undone_rows = 0;
  /// Over every trial: "ok", an error number, "unfinished" or "not issued", with how many trials.
  std::map<std::string, std::uint64_t> outcomes{};
};

/// A table's committed rows at the end of the first trial.
/// A table at the end of a trial. A table of seeded rows can hold millions: past kTableRowsKept
/// rows only the first are kept, with the count of all and a digest of all.
struct TableResult {
  std::string name;
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;  // in id order; the first kTableRowsKept
  std::uint64_t row_count = 0;          // every row
  /// The sum of each row's CRC32 of its cells joined by commas, as MariaDB's
  /// SUM(CRC32(CONCAT_WS(',', ...))) computes it over the same table (conformance/).
  std::uint64_t checksum = 0;
};
inline constexpr std::size_t kTableRowsKept = 1000;
/// Rows of a table a terminal and report.md list; the rest are counted.
inline constexpr std::size_t kTableRowsShown = 20;

/// A metric `expect` checks in every trial: its value in the first, and its range.
struct EachValue {
  double first = 0, min = 0, max = 0;
};

struct StrategyResult {
  std::string name;
  std::string description;
  /// What it builds on, for pictures that group strategies: "database", "Redis", "ZooKeeper / etcd".
  std::string family;
  std::map<std::string, double> params;
  std::uint64_t trials = 0;  // run: fewer than asked when the run was stopped
  std::uint64_t operations = 0;
  std::map<std::string, Metric> counts;          // duplicate_rows, errors.1062, ...
  std::map<std::string, double> figures;         // latency_ms.p50 ..., time_ms.queue ..., db_ops_per_op, ...
  Histogram latency;                             // of every successful logical operation, in ms
  Histogram failed_latency;                      // of every one that ended in an error or gave up, in ms
  std::vector<std::string> examples;             // the first few violations, explained
  std::uint64_t first_trace_hash = 0;
  std::uint64_t trace_hash = 0;  // every trial's, folded in trial order
  /// Every trial came to the same counts (and step outcomes): a deterministic scenario,
  /// whose intervals over trials mean nothing.
  bool one_outcome = false;
  std::uint64_t events = 0;  // simulated events of every trial (for benchmarks)
  Timeline timeline;         // of the first trial
  /// The first trial in which a checker fired, to tell and draw in the report.
  struct FirstViolation {
    std::uint64_t trial = 0;         // from 0: its seed is the run's seed + trial
    std::vector<std::string> fired;  // "duplicate_rows 1", as explore prints them
    Timeline timeline{};             // when the run kept it (RunControl::draw_first_violation)
  };
  std::optional<FirstViolation> first_violation{};
  /// A rollout's phases: when each runs and the steps taken as it begins. Their figures are
  /// the counts created_in_phase.<n>, left_after_phase.<n>, ... (n from 1).
  struct Phase {
    double from_s = 0, to_s = 0;
    std::vector<std::string> steps{};
  };
  std::vector<Phase> phases{};
  std::vector<StepResult> steps{};    // the sessions workload's
  std::vector<TableResult> tables{};  // the sessions workload's, at the end of the first trial
  std::map<std::string, EachValue> each{};  // metrics checked in every trial (steps.3.error, rows.t)
  double wall_s = 0;  // a timing field, not part of the results proper: its trials' wall times summed
};

/// What a metric is, as the metric registry declares it (docs/metrics.md lists them all).
struct MetricNote {
  std::string name;  // "errors.<kind>" names a family
  std::string unit;
  std::string meaning;
  bool finding = false;    // should not happen: drawn in the violations plot
  bool per_trial = true;   // counted in each trial (else a figure of the whole run)
  bool each_trial = false; // `expect` checks it in every trial (a step's outcome)
};

struct ExpectationResult {
  std::string text;
  double measured = 0;
  bool measured_at_all = true;
  bool holds = false;
  bool skipped = false;  // its strategy was not run (--strategy)
};

struct RunResults {
  std::string scenario, file, description, source, lesson;
  std::uint64_t scenario_hash = 0;
  std::uint64_t seed = 0;
  std::uint64_t trials = 0;   // per strategy, as asked
  std::string configuration;  // the resolved scenario, JSON text
  std::vector<StrategyResult> strategies;
  std::vector<ExpectationResult> expectations;
  std::vector<MetricNote> metrics;  // every metric the tool knows, in table order
  /// The finding the comparison table has its columns for: duplicate_rows, or a Lua workload's
  /// first finding ("oversold").
  std::string headline = "duplicate_rows";
  std::string stopped;          // "time": --time ended the run before every trial ran; empty: it did not
  double stopped_after_s = 0;   // a timing field: when the run was stopped

  /// The note on `name` (a family's member finds the family's), or null.
  const MetricNote* note(const std::string& name) const;
  /// A metric's value as `expect` compares it: a count's total, or a figure.
  bool value(const std::string& strategy, const std::string& metric, double& out) const;
};

/// The comparison table for a terminal.
std::string table(const RunResults& results);
/// The sessions workload's steps and final tables for a terminal (empty without steps).
/// A count's mean per trial; 0 where no trial counted it.
double mean_per_trial(const StrategyResult& strategy, const std::string& metric);
std::string steps_table(const RunResults& results);
/// Each rollout's phases with what its trials saw in them, and how the rollout ended; "" when
/// no strategy is a rollout.
std::string phases_table(const RunResults& results);
/// results.json as text.
std::string to_json(const RunResults& results);
/// Writes `text` to `path` through a temporary file of a name of its own
/// (<path>.tmp.<pid>.<n>) and a rename: never half-written, also by writers at once.
void write_atomically(const std::string& path, const std::string& text);

}  // namespace locksim::reports
