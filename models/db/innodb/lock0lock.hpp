#pragma once
// InnoDB's model: the lock system (InnoDB's lock0lock and lock0wait): a table's lock queues (one
// per index, and one for its AUTO-INC lock), whether a lock is held, whom a request waits
// behind, the grants as locks go, and the wait-for graph the deadlock search walks. The wait
// itself, with the deadlock's victim and its rollback, is the engine's (InnoDb::lock).
// Internal to models/db/innodb.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/db/innodb/types.hpp"

namespace models::db::innodb {

// The queue a lock request of `place` joins: an index's (kPrimary, kKey, kExtra + n), or the
// table's AUTO-INC lock (kAutoInc).
inline LockQueue& queue_of(Table& t, int place) { return place == kAutoInc ? t.autoinc_lock : t.locks[static_cast<std::size_t>(place)]; }
inline const LockQueue& queue_of(const Table& t, int place) {
  return place == kAutoInc ? t.autoinc_lock : t.locks[static_cast<std::size_t>(place)];
}

Lock record_lock(const Entry& at, bool exclusive, bool next_key = false, std::optional<Entry> lo = {});
Lock gap_lock(bool exclusive, std::optional<Entry> lo, std::optional<Entry> hi);
Lock insert_intention(const Entry& at);

// Whether the transaction of `want` holds a granted lock in `queue` that covers it.
bool holds(const LockQueue& queue, const Lock& want);
// The transactions `req` waits behind: a conflicting granted lock anywhere in its queue, or a
// conflicting request waiting ahead of it (first come, first served).
std::vector<TxnId> blockers(const LockQueue& queue, const Lock& req);
inline bool must_wait(const LockQueue& queue, const Lock& req) { return !blockers(queue, req).empty(); }
// The transaction of the first lock in `queue` (by its place) that `req` waits behind: the one
// MariaDB's deadlock search follows from a waiter (lock.wait_trx; 0: none).
TxnId first_blocker(const LockQueue& queue, const Lock& req);

class LockSystem {
 public:
  explicit LockSystem(const std::map<TxnId, Txn*>& txns) : txns_(txns) {}
  LockSystem(const LockSystem&) = delete;
  LockSystem& operator=(const LockSystem&) = delete;

  // Grants each request in `queue` that need no longer wait, and wakes its transaction.
  void regrant(LockQueue& queue);
  // Releases every granted lock of `txn`, table by table (its AUTO-INC lock, then its index
  // locks), granting what waited for them.
  void release(const Txn& txn, std::map<std::string, Table>& tables);
  // Releases `txn`'s AUTO-INC lock on `t`, if it holds it (at its statement's end).
  void release_autoinc(const Txn& txn, Table& t);
  // Releases `txn`'s record lock on `at` alone (a row READ COMMITTED read and did not keep).
  void unlock_record(const Txn& txn, LockQueue& queue, const Entry& at);
  // Takes the request `txn` waits on out of its queue.
  void drop_waiting(Txn& txn);
  // When the entry `gone` goes (lo and hi its live neighbours), the locks on it pass to the gap
  // it leaves (InnoDB's lock_rec_inherit_to_gap); the owner's own record lock just goes.
  void inherit_to_gap(LockQueue& queue, const Entry& gone, TxnId owner, const std::optional<Entry>& lo, const std::optional<Entry>& hi);
  // A cycle through `start` in the wait-for graph as MariaDB 10.6 and later search it
  // (Deadlock::find_cycle): from each waiter to its one blocker (Lock::blocker), until the
  // chain comes back to `start` (the transactions on it, start first) or ends at a transaction
  // that does not wait (none).
  std::vector<Txn*> cycle_from(Txn& start) const;
  // The waiters whose blocker became a transaction that itself waits, as releases regranted
  // their queues: each a deadlock search to make (MariaDB's Deadlock::to_check). Taken once.
  std::vector<TxnId> take_rechecks() { return std::exchange(rechecks_, {}); }

 private:
  // Releases `txn`'s granted locks in `queue`, granting what waited for them.
  void release_in(const Txn& txn, LockQueue& queue);

  const std::map<TxnId, Txn*>& txns_;
  std::vector<TxnId> rechecks_;
};

}  // namespace models::db::innodb
