// PostgreSQL's model: the search for a cycle of waits that a wait lasting deadlock_timeout
// makes once (deadlock.c; models/db/postgres/postgres.hpp).

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "models/db/postgres/postgres.hpp"

namespace models::db::postgres {

// A cycle of waits through `start`: the sessions on it, start first.
std::vector<SessionId> Postgres::cycle_from(SessionId start) const {
  std::vector<SessionId> path, found;
  std::set<SessionId> seen;
  auto dfs = [&](auto&& self, SessionId s) -> bool {
    const SessionState& state = sessions_.at(s);
    if (!state.waiting_on) return false;
    path.push_back(s);
    for (SessionId b : blockers(*state.waiting_on, s, state.waiter->mode, state.waiter->seq)) {
      if (b == start) {
        found = path;
        return true;
      }
      if (!seen.insert(b).second) continue;
      if (self(self, b)) return true;
    }
    path.pop_back();
    return false;
  };
  dfs(dfs, start);
  return found;
}

// The wait deadlock_timeout long looks for a cycle of waits through its session once; where it
// finds one, the session leaves the queue for `key` and fails with 40P01.
void Postgres::check_deadlock(SessionState& s, const LockKey& key, std::size_t wait_index, sim::Time started, sim::Time now) {
  std::vector<SessionId> cycle = cycle_from(s.id);
  if (cycle.empty()) return;
  ++stats_.deadlocks;
  std::vector<std::string> names;
  for (SessionId c : cycle) names.push_back(sessions_.at(c).who);
  dequeue(s, key, wait_index, started, now);
  wake_waiters(key);
  throw Failure{Code::deadlock, "deadlock detected", std::move(names)};
}

}  // namespace models::db::postgres
