#pragma once
// Row locks, the locks on a transaction (waited for to wait for its end) and advisory locks,
// as PostgreSQL's lock manager keeps them (lmgr/lock.c): who holds each in which mode, who
// waits for it in arrival order. Internal to models/db/postgres (docs/sql.md, "PostgreSQL").

#include <cstdint>
#include <list>
#include <optional>
#include <vector>

#include "models/db/postgres/heap.hpp"
#include "sim/sim.hpp"

namespace models::db::postgres {

using SessionId = Database::SessionId;

// The four row-lock modes in PostgreSQL's order, and the conflict table of "Row-Level Locks"
// (an advisory lock is share or update; waiting for a transaction's end is share on it, which
// its own transaction holds as update).
enum class Mode { key_share, share, no_key_update, update };
bool conflicts(Mode a, Mode b);
const char* mode_name(Mode m);

// What a lock is on: a row of a table, a transaction (held by it while it runs, so others can
// wait for its end), or an advisory key.
struct LockKey {
  enum class Kind { row, transaction, advisory } kind = Kind::row;
  const Table* table = nullptr;
  std::int64_t id = 0;
  auto operator<=>(const LockKey&) const = default;
};

struct Holder {
  SessionId session = 0;
  Mode mode = Mode::share;
  bool xact = true;  // ends with the transaction; false: a session-level advisory lock
  int count = 1;
};

struct Waiter {
  SessionId session = 0;
  Mode mode = Mode::share;
  std::uint64_t seq = 0;
  std::optional<sim::Promise<bool>> wake{};
};

struct LockState {
  std::vector<Holder> holders;
  std::list<Waiter> waiters;  // in arrival order
};

}  // namespace models::db::postgres
