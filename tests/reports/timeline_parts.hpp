#pragma once
// The parts of a hand-made Timeline, named as the runner names them (app/story.hpp): who did
// something, and a statement with its outcome.

#include <cstdint>
#include <string>

#include "app/story.hpp"
#include "reports/results.hpp"

namespace test {

using Who = locksim::reports::Timeline::Who;
using Statement = locksim::reports::Timeline::Statement;

/// A connection's or a lock holder's origin: "app-1 worker 4, client 7, op 7 attempt 1", "s1".
inline Who who(const std::string& origin) { return locksim::who_of(origin); }
/// An app server's worker as a call's participant, from 1: worker("app-1", 2) is "app-1 worker 2".
inline Who worker(const std::string& node, int index) {
  return locksim::who_of_process(node, node + ".worker-" + std::to_string(index - 1));
}
/// A client as a call's caller: "client 7".
inline Who client(int n) { return locksim::who_of_process("clients", "client " + std::to_string(n)); }
/// A node that answers calls: "redis-1", "app-1" (no worker took the call up).
inline Who node(const std::string& name) { return {name, name, name}; }

/// A SELECT that returned `rows` rows.
inline Statement selected(double from_s, double to_s, const std::string& origin, std::string sql, std::int64_t rows) {
  Statement st{from_s, to_s, who(origin), std::move(sql), Statement::Kind::select};
  st.rows = rows;
  return st;
}
/// A write that affected `affected` rows (an insert: taking id `insert_id`).
inline Statement wrote(double from_s, double to_s, const std::string& origin, std::string sql, std::int64_t affected,
                       std::int64_t insert_id = 0) {
  Statement st{from_s, to_s, who(origin), std::move(sql), Statement::Kind::write};
  st.affected = affected;
  st.insert_id = insert_id;
  return st;
}
/// A statement the server refused: `message` as it said it, "1213 Deadlock found ...".
inline Statement refused(double from_s, double to_s, const std::string& origin, std::string sql, int error, std::string message) {
  Statement st{from_s, to_s, who(origin), std::move(sql), Statement::Kind::write};
  st.error = error;
  st.message = std::move(message);
  return st;
}

}  // namespace test
