#pragma once
// The sessions workload: a script of SQL statements, each on a named session (its own
// connection from its own client node), issued in the script's order, as a teacher of
// database races runs them by hand in terminals side by side ("S1 inserts, S2 and S3
// insert the same key, S1 rolls back").
//
// A step without a time is issued once the step before it has finished or has been
// waiting (blocked on a lock) for the settle time; a step with a time is issued at that
// time after the start, drawn anew each trial where it is a distribution (two statements
// "at the same instant"). A session runs its steps one at a time, in order: a step issued
// to a session still busy waits for it, as a terminal does. Each step's record says what
// it got (rows, affected rows, insert id, warnings, error) and whom it waited for.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/db/server.hpp"
#include "models/db/sql.hpp"
#include "models/net/network.hpp"
#include "models/node/node.hpp"

namespace models::sessions {

struct Step {
  std::string session;  // "s1"
  db::sql::Prepared sql;            // its statement bound to `args`
  std::vector<db::Value> args{};    // the values of its `?`s
  std::optional<sim::Distribution> at{};  // from the start of the trial
  /// Instead of a statement: the session closes its connection (a pool's reconnect), and its
  /// next step opens a new one. It ends once the server has closed the old session, rolling
  /// back its transaction and releasing its user locks.
  bool disconnect = false;
};

/// A disconnect step's text in its record, where a statement's is.
inline constexpr const char* kDisconnect = "disconnect";

struct Script {
  std::vector<Step> steps;
  /// How long a blocked step is given before the next step is issued.
  sim::Duration settle = std::chrono::milliseconds(100);
  /// The names of the sessions, in the order of their first step: each gets a client node.
  std::vector<std::string> sessions() const;
};

struct StepRecord {
  std::size_t step = 0;  // from 1
  std::string session, sql;
  sim::Time issued{}, finished{};
  bool was_issued = false;  // the script reached it before the trial ended
  bool done = false;        // it finished before the trial ended
  db::Result result{};
  /// The step's rows, projected on its SELECT's columns (every column for `*`).
  std::vector<std::string> columns{};
  std::vector<std::vector<db::Value>> rows{};
  bool waited() const { return !result.waits.empty(); }
};

/// The committed rows of one table at the end, for checkers and the step table.
struct TableContents {
  std::string table;
  std::vector<std::string> columns;  // display order
  std::string key_column;            // empty: the table has no secondary index
  std::vector<db::RowRecord> rows;
};

/// Runs a script on its sessions' connections to `server`: one client node per session
/// (named as the session), a pool of one connection on each, and the script's driver.
class Sessions {
 public:
  Sessions(Network& net, std::vector<Node*> session_nodes, Node& driver_node, db::Server& server, Script script);
  ~Sessions();
  Sessions(const Sessions&) = delete;
  Sessions& operator=(const Sessions&) = delete;

  void start();
  /// One per step, in script order.
  const std::vector<StepRecord>& records() const { return records_; }
  const Script& script() const { return script_; }

 private:
  struct Session;
  void drive();
  void run_step(Session& session, std::size_t step);

  Node& driver_node_;
  db::Server& server_;  // for the columns of SELECT *, as a result set names them
  Script script_;
  std::vector<std::unique_ptr<Session>> sessions_;
  std::vector<StepRecord> records_;
  std::vector<sim::Promise<bool>> finished_;       // per step: set when it finishes
  std::vector<sim::Future<bool>> finished_futures_;  // the driver's side of them
};

/// The committed rows of each of `tables`, in their order.
std::vector<TableContents> contents(const db::Database& database, const std::vector<db::TableSchema>& tables);

}  // namespace models::sessions
