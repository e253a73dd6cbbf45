#pragma once
// The story of one trial as data: what the lock monitor, the trace, the database's statement
// log and the call log recorded, gathered into a reports::Timeline (holds with how they ended,
// pauses and crashes, inserts of duplicated keys, and the statements and calls of the
// operations involved in what went wrong). Words and pictures are made from it in reports/.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "models/checkers/locks.hpp"
#include "models/db/server.hpp"
#include "models/deployment.hpp"
#include "reports/results.hpp"
#include "sim/engine.hpp"

namespace locksim {

/// A connection's or a lock holder's origin as the story keeps it: an app server's worker on a
/// client's attempt (models::Origin: lane "app-1 worker 4", node, worker, client, operation,
/// attempt), else a process's own name ("s1", "cleanup job"), its own lane and node.
reports::Timeline::Who who_of(const std::string& origin);

/// A call's participant: an app server's worker "app-1.worker-3" is the lane "app-1 worker 4"
/// (as in a connection's origin), another process "<node>.<name>" is "<node> <name>", and a
/// caller a request named ("client 7") keeps its name.
reports::Timeline::Who who_of_process(const std::string& node, const std::string& process);

/// A statement's lock wait, as reports keep it.
reports::LockWait lock_wait(const models::db::LockWait& w);
/// A database value as a report's cell: a number, a string or NULL.
reports::Cell cell_of(const models::db::Value& v);
/// What a failed statement undid: "statement", "transaction"; "" for nothing.
const char* undone_name(models::db::Undone undone);

/// The statements of the operations involved in what went wrong: every statement of an
/// operation (a connection's origin) that waited for a lock, failed, or is in `origins`; with
/// `all`, every statement. At most 200, the first ones.
std::vector<reports::Timeline::Statement> involved_statements(const std::vector<models::db::LoggedStatement>& log,
                                                              const std::set<std::string>& origins, bool all = false,
                                                              models::db::Engine engine = models::db::Engine::mariadb);
/// What each logical operation asks, in words, by its number: a Lua workload's request fields
/// ("seat 12, flight 'A'"), which tell a client's attempt better than its traffic key.
using RequestWords = std::map<std::int64_t, std::string>;

/// The picture of one trial: holds as the holders believed them, pauses and crashes from the
/// trace, the trial's inserts of duplicated keys (of `rows`, the account table's; seeded rows
/// count for a key but are not marked), and the statements and calls of the operations involved;
/// in a trial where nothing went wrong, of every operation (to the caps), so a safe trial has
/// its story too. Statements are written in `dialect`'s SQL.
reports::Timeline timeline(sim::Engine& engine, const models::checkers::LockMonitor& locks,
                           const std::vector<models::db::RowRecord>& rows, const std::vector<models::db::LoggedStatement>& log,
                           const models::CallLog* calls, std::uint64_t seed, models::db::Engine dialect = models::db::Engine::mariadb,
                           const RequestWords* asked = nullptr);

}  // namespace locksim
