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
}  // namespace models::db::postgres
