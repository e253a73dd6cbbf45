#pragma once
// The story of one trial as data: what the lock monitor, the trace, the database's statement
// log and the call log recorded, gathered into a reports::Timeline (holds with how they ended,
// pauses and crashes, inserts of duplicated keys, and the statements and calls of the
// operations involved in what went wrong). Words and pictures are made from it in reports/.

#include <set>
#include <string>
#include <vector>

#include "models/checkers/locks.hpp"
#include "models/db/server.hpp"
#include "models/deployment.hpp"
#include "reports/results.hpp"
#include "sim/engine.hpp"

namespace locksim {

/// A statement's lock wait: "X on t.PRIMARY 3, behind s1, 12.0 ms".
std::string wait_text(const models::db::LockWait& w);

/// The statements of the operations involved in what went wrong: every statement of an
/// operation (a connection's origin) that waited for a lock, failed, or is in `origins`; with
/// `all`, every statement. At most 200, the first ones.
std::vector<reports::Timeline::Statement> involved_statements(const std::vector<models::db::LoggedStatement>& log,
                                                              const std::set<std::string>& origins, bool all = false);
/// The picture of one trial: holds as the holders believed them, pauses and crashes from the
/// trace, the trial's inserts of duplicated keys (of `rows`, the account table's; seeded rows
/// count for a key but are not marked), and the statements and calls of the operations involved.
reports::Timeline timeline(sim::Engine& engine, const models::checkers::LockMonitor& locks,
                           const std::vector<models::db::RowRecord>& rows, const std::vector<models::db::LoggedStatement>& log,
                           const models::CallLog* calls, std::uint64_t seed);

}  // namespace locksim
