#pragma once
// MariaDB's user-level locks: GET_LOCK(name, timeout), RELEASE_LOCK(name), RELEASE_ALL_LOCKS(),
// IS_FREE_LOCK(name) and IS_USED_LOCK(name). The server keeps them in its metadata-lock system,
// apart from InnoDB's row locks, as MariaDB 10.11 does (conformance/sql-scripts/user-lock-*.json
// check each point below against it; docs/sql.md, "User locks"):
//
// - A name is locked by one connection at a time, which may take it again and must then release
//   it as often (RELEASE_ALL_LOCKS() answers how many takings it released). Names compare byte
//   by byte: 'a' and 'A' are two locks. A name over 192 bytes fails with 1059; NULL or '' is
//   NULL and locks nothing, as is a NULL or negative timeout.
// - A taker waits first come first served, up to its timeout in seconds, and gets 0 when it ends.
// - Neither COMMIT nor ROLLBACK releases one; closing the connection (a pool's reconnect, the
//   client's machine going down) releases all of its.
// - A request that would close a cycle of user-lock waits fails at once with 1213 and leaves the
//   transaction as it was (InnoDB's 1213 rolls it back): the others keep waiting. The waits-for
//   edges run from a waiter to the name's holder; a cycle through a row lock is not seen, and
//   ends in the waits' timeouts (GET_LOCK's, innodb_lock_wait_timeout), as on the server.

#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/db/database.hpp"
#include "sim/future.hpp"

namespace models::db {

class UserLocks {
 public:
  using SessionId = std::uint64_t;
  /// A name's or a call's answer: NULL (nullopt) or a number.
  using Answer = std::optional<std::int64_t>;
  /// The longest name MariaDB takes, in bytes.
  static constexpr std::size_t kMaxName = 192;

  /// GET_LOCK(name, timeout): 1 once `session` holds the name, 0 when its timeout ended first;
  /// NULL for a NULL or empty name or a NULL or negative timeout. Blocks the calling process
  /// while it waits, adding the wait to `waits`. Throws detail::Failure: 1213 for a request
  /// that would close a cycle, 1059 for a name too long, 4079 for a name that is a number.
  /// `who` is the session's origin, as waits and the lock table name it.
  Answer get(SessionId session, const std::string& who, const Value& name, const Value& timeout, std::vector<LockWait>& waits);
  /// RELEASE_LOCK(name): 1 released (once), 0 held by another session, NULL held by none.
  Answer release(SessionId session, const Value& name);
  /// RELEASE_ALL_LOCKS(): the takings `session` held, all released.
  std::int64_t release_all(SessionId session);
  /// IS_FREE_LOCK(name): 1 free, 0 held; NULL for a NULL or empty name.
  Answer is_free(const Value& name) const;
  /// IS_USED_LOCK(name): the holder's connection (its session), NULL when free.
  Answer is_used(const Value& name) const;
  /// The names held now, at most `most`, as a lock table lists them (for stories).
  void list(std::vector<HeldLock>& out, std::size_t most) const;
  /// Whether `session` holds `name` now.
  bool holds(SessionId session, const std::string& name) const;

 private:
  struct Waiter {
    SessionId session = 0;
    std::string who{};
    sim::Promise<bool> granted{"user lock"};
  };
  struct Lock {
    SessionId owner = 0;
    std::string owner_who{};
    std::int64_t count = 0;
    std::list<Waiter> waiting{};
  };
  /// The name as a key, checked: nullopt for NULL or ''.
  static std::optional<std::string> key(const Value& name, const char* function);
  /// Whether `session`, waiting for `name`, would wait on itself through holders' waits.
  bool closes_cycle(SessionId session, const std::string& name) const;
  /// Gives `name` to its next waiter, or frees it.
  void hand_on(std::map<std::string, Lock>::iterator it);

  std::map<std::string, Lock> locks_;
  std::map<SessionId, std::string> waiting_for_;  // a waiting session: the name it waits for
};

}  // namespace models::db
