// PostgreSQL's model: the lock table, and a session's wait for a lock, first come first served,
// with NOWAIT, SKIP LOCKED, lock_timeout, statement_timeout and the deadlock check after
// deadlock_timeout (lmgr/lock.c; models/db/postgres/lock.hpp, postgres.hpp).

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "models/db/postgres/postgres.hpp"

namespace models::db::postgres {

bool conflicts(Mode a, Mode b) {
  static constexpr bool table[4][4] = {
      {false, false, false, true},
      {false, false, true, true},
      {false, true, true, true},
      {true, true, true, true},
  };
  return table[static_cast<int>(a)][static_cast<int>(b)];
}
const char* mode_name(Mode m) {
  switch (m) {
    case Mode::key_share: return "FOR KEY SHARE";
    case Mode::share: return "FOR SHARE";
    case Mode::no_key_update: return "FOR NO KEY UPDATE";
    case Mode::update: return "FOR UPDATE";
  }
  return "?";
}

// --- Locks -------------------------------------------------------------------

// The sessions whose locks on `key` a request for `mode` waits behind: conflicting holders,
// and conflicting waiters that came first (`seq`; a new request comes after every waiter).
std::vector<SessionId> Postgres::blockers(const LockKey& key, SessionId me, Mode mode, std::uint64_t seq) const {
  std::set<SessionId> out;
  const auto it = locks_.find(key);
  if (it == locks_.end()) return {};
  for (const Holder& h : it->second.holders)
    if (h.session != me && conflicts(mode, h.mode)) out.insert(h.session);
  for (const Waiter& w : it->second.waiters)
    if (w.seq < seq && w.session != me && conflicts(mode, w.mode)) out.insert(w.session);
  return {out.begin(), out.end()};
}

void Postgres::wake_waiters(const LockKey& key) {
  const auto it = locks_.find(key);
  if (it == locks_.end()) return;
  for (Waiter& w : it->second.waiters)
    if (w.wake) {
      w.wake->set_value(true);
      w.wake.reset();
    }
  if (it->second.holders.empty() && it->second.waiters.empty()) locks_.erase(it);
}

std::string Postgres::describe(const LockKey& key) const {
  switch (key.kind) {
    case LockKey::Kind::row: return fmt::format("row ({})", key.id);
    case LockKey::Kind::transaction: return fmt::format("transaction {}", key.id);
    case LockKey::Kind::advisory: return fmt::format("advisory key {}", key.id);
  }
  return "?";
}

// Takes `mode` on `key` for the session (held to the transaction's end, or, with !xact, a
// session-level advisory lock), waiting first come first served; with !hold only waits until
// it could take it (a wait for a transaction's end). Throws Failure: 55P03 (NOWAIT or
// lock_timeout), 57014 (statement_timeout), 40P01 (this session found a deadlock).
Postgres::Got Postgres::acquire(SessionState& s, const LockKey& key, Mode mode, bool xact, bool hold, Statement::OnLocked on_locked) {
  // A transaction that holds a lock on the row already waits only for the other holders whose
  // locks conflict, not behind the sessions queued for the row: PostgreSQL's heap_update and
  // heap_lock_tuple take the tuple lock (the queue) only to wait for another transaction.
  // Queueing there made a false deadlock of a FOR UPDATE or FOR SHARE followed by its UPDATE
  // while another session waited for the row.
  const bool holds_row = key.kind == LockKey::Kind::row && holds_lock_on(s, key);
  std::uint64_t seq = holds_row ? 0 : std::numeric_limits<std::uint64_t>::max();
  bool waited = false;
  std::size_t wait_index = 0;
  sim::Time started{};
  bool deadlock_checked = false;
  for (;;) {
    const std::vector<SessionId> behind = blockers(key, s.id, mode, seq);
    if (behind.empty()) {
      if (waited) dequeue(s, key, wait_index, started, sim::now());
      if (hold) take(s, key, mode, xact);
      if (waited) wake_waiters(key);  // those behind it look again
      return waited ? Got::after_wait : Got::at_once;
    }
    if (!waited) {
      if (on_locked == Statement::OnLocked::skip) return Got::skipped;
      if (on_locked == Statement::OnLocked::fail)
        throw Failure{Code::lock_wait_timeout, key.kind == LockKey::Kind::row
                                                   ? "could not obtain lock on row in relation \"" + key.table->schema.name + "\""
                                                   : "could not obtain lock on " + describe(key)};
      waited = true;
      started = sim::now();
      seq = ++wait_seq_;
      wait_index = enqueue(s, key, mode, seq, behind);
    }
    sim::Promise<bool> promise("postgres lock wait");
    sim::Future<bool> woken = promise.get_future();
    s.waiter->wake.emplace(std::move(promise));
    const bool got = woken.try_get_until(wait_deadline(s, started, deadlock_checked)).has_value();
    if (got) continue;  // look again
    s.waiter->wake.reset();
    const sim::Time now = sim::now();
    const auto give_up = [&](Code code, std::string message) {
      dequeue(s, key, wait_index, started, now);
      wake_waiters(key);
      throw Failure{code, std::move(message)};
    };
    if (s.statement_timeout > sim::Duration::zero() && now >= s.statement_start + s.statement_timeout)
      give_up(Code::statement_timeout, "canceling statement due to statement timeout");
    if (s.lock_timeout > sim::Duration::zero() && now >= started + s.lock_timeout) {
      ++stats_.lock_wait_timeouts;
      give_up(Code::lock_wait_timeout, "canceling statement due to lock timeout");
    }
    if (!deadlock_checked && now >= started + deadlock_timeout(s)) {
      deadlock_checked = true;
      check_deadlock(s, key, wait_index, started, now);
    }
  }
}

// Queues the session for `key` (it waits behind `behind`), its wait recorded among the
// statement's: returns the wait's place there.
std::size_t Postgres::enqueue(SessionState& s, const LockKey& key, Mode mode, std::uint64_t seq, const std::vector<SessionId>& behind) {
  LockState& state = locks_[key];
  s.waiter = state.waiters.insert(state.waiters.end(), Waiter{s.id, mode, seq});
  s.waiting_on = key;
  ++stats_.lock_waits;
  LockWait w;
  w.table = key.table != nullptr ? key.table->schema.name : "";
  w.entry = describe(key);
  w.mode = key.kind == LockKey::Kind::transaction ? "ShareLock" : mode_name(mode);
  if (key.kind == LockKey::Kind::advisory) w.mode = mode == Mode::update ? "ExclusiveLock" : "ShareLock";
  for (SessionId b : behind) w.behind.push_back(sessions_.at(b).who);
  s.waits.push_back(std::move(w));
  return s.waits.size() - 1;
}

// Leaves the queue for `key`, the wait (at `wait_index`) having lasted from `started` to `now`.
void Postgres::dequeue(SessionState& s, const LockKey& key, std::size_t wait_index, sim::Time started, sim::Time now) {
  locks_.at(key).waiters.erase(s.waiter);
  s.waiting_on.reset();
  s.waits[wait_index].waited = now - started;
}

sim::Duration Postgres::deadlock_timeout(const SessionState& s) const { return s.deadlock_timeout.value_or(config_.deadlock_timeout); }

// When a wait that began at `started` looks up: the earliest of the deadlock check (once),
// lock_timeout, statement_timeout.
sim::Time Postgres::wait_deadline(const SessionState& s, sim::Time started, bool deadlock_checked) const {
  sim::Time until = sim::kNever;
  if (!deadlock_checked) until = started + deadlock_timeout(s);
  if (s.lock_timeout > sim::Duration::zero()) until = std::min(until, started + s.lock_timeout);
  if (s.statement_timeout > sim::Duration::zero()) until = std::min(until, s.statement_start + s.statement_timeout);
  return until;
}

bool Postgres::holds_lock_on(const SessionState& s, const LockKey& key) const {
  const auto it = locks_.find(key);
  return it != locks_.end() &&
         std::any_of(it->second.holders.begin(), it->second.holders.end(), [&](const Holder& h) { return h.session == s.id; });
}

void Postgres::take(SessionState& s, const LockKey& key, Mode mode, bool xact) {
  LockState& state = locks_[key];
  for (Holder& h : state.holders) {
    if (h.session != s.id || h.xact != xact) continue;
    if (key.kind == LockKey::Kind::advisory) {
      if (h.mode == mode) {
        ++h.count;
        return;
      }
      continue;
    }
    h.mode = std::max(h.mode, mode);  // a stronger row lock replaces a weaker one
    return;
  }
  state.holders.push_back(Holder{s.id, mode, xact, 1});
  if (xact) s.txn->held.insert(key);
  else s.advisory.insert(key);
}

// Lets go of the session's transaction-scoped locks.
void Postgres::release_xact(SessionState& s, Txn& txn) {
  for (const LockKey& key : txn.held) let_go(s, key);
  txn.held.clear();
}

// Lets go of the session's transaction-scoped lock on `key` (the caller forgets it in
// Txn::held), and wakes its waiters.
void Postgres::let_go(SessionState& s, const LockKey& key) {
  auto it = locks_.find(key);
  if (it == locks_.end()) return;
  std::erase_if(it->second.holders, [&](const Holder& h) { return h.session == s.id && h.xact; });
  wake_waiters(key);
}

// Session-level advisory locks: one key's (all its counts), or every key.
void Postgres::release_session_advisory(SessionState& s, std::optional<LockKey> only) {
  for (auto k = s.advisory.begin(); k != s.advisory.end();) {
    if (only && *k != *only) {
      ++k;
      continue;
    }
    const LockKey key = *k;
    if (auto it = locks_.find(key); it != locks_.end())
      std::erase_if(it->second.holders, [&](const Holder& h) { return h.session == s.id && !h.xact; });
    k = s.advisory.erase(k);
    wake_waiters(key);
  }
}

}  // namespace models::db::postgres
