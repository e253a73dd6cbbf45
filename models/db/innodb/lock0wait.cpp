// InnoDB's model: lock waits and the deadlock search on the wait-for graph (InnoDB's lock0wait
// and lock0lock's DeadlockChecker): the graph is the lock system's (lock0lock.hpp), the wait,
// the victim and its rollback the engine's.

#include "models/db/innodb/innodb.hpp"

namespace models::db::innodb {

namespace {
// Calls `visit` with each lock in `queue` that `req` waits behind: a conflicting granted lock,
// or a conflicting request waiting ahead of it.
template <class Visit>
void for_each_blocking(const LockQueue& queue, const Lock& req, Visit visit) {
  const auto consider = [&](const Lock& l) {
    const bool ahead = l.seq < req.seq;
    if (&l != &req && l.txn != req.txn && (l.granted || ahead) && has_to_wait(req, l)) visit(l);
  };
  if (req.insert_intention) {  // any gap covering its position: look through them all
    for (const Lock& l : queue) consider(l);
  } else if (req.record) {  // only a record lock on its own entry (has_to_wait)
    for (const Lock* l : queue.on(req.at)) consider(*l);
  }  // a gap request never waits
}
}  // namespace

std::vector<TxnId> blockers(const LockQueue& queue, const Lock& req) {
  std::set<TxnId> out;
  for_each_blocking(queue, req, [&](const Lock& l) { out.insert(l.txn); });
  return {out.begin(), out.end()};
}

TxnId first_blocker(const LockQueue& queue, const Lock& req) {
  const Lock* first = nullptr;
  for_each_blocking(queue, req, [&](const Lock& l) {
    if (first == nullptr || l.seq < first->seq) first = &l;
  });
  return first == nullptr ? 0 : first->txn;
}

std::vector<Txn*> LockSystem::cycle_from(Txn& start) const {
  std::vector<Txn*> path{&start};
  for (const Txn* t = &start;;) {
    const TxnId b = t->waiting->blocker;
    if (b == start.id) return path;
    const auto it = txns_.find(b);
    if (it == txns_.end() || it->second->waiting == nullptr || it->second->doomed) return {};
    if (std::find(path.begin(), path.end(), it->second) != path.end()) return {};  // a cycle that start only waits on
    t = it->second;
    path.push_back(it->second);
  }
}

// Breaks the deadlock, if any, that the request `txn` waits on (on `index`) closes: as it
// begins to wait (`waiting`: false), or later, when its blocker changed to a waiting
// transaction (InnoDb::recheck_deadlocks).
void InnoDb::break_deadlock(Txn& txn, int index, bool waiting) {
  std::vector<Txn*> cycle = lock_sys.cycle_from(txn);
  if (cycle.empty()) return;
  // The victim is the lightest transaction on the cycle, by undo records and lock
  // structs; on a tie the requester, which closed the cycle (MariaDB 10.11's choice:
  // conformance hermitage-g2-fekete-serializable, hermitage-pmp-write-predicates-serializable).
  std::size_t victim = 0;
  for (std::size_t i = 1; i < cycle.size(); ++i)
    if (cycle[i]->weight() < cycle[victim]->weight()) victim = i;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < cycle.size(); ++i) names.push_back(who(cycle[(victim + i) % cycle.size()]->id));
  ++stats_.deadlocks;
  if (victim == 0 && !waiting) {
    lock_sys.drop_waiting(txn);
    const auto changes = static_cast<std::int64_t>(txn.undo.size());
    rollback(txn);
    throw deadlock_failure(index, std::move(names), changes);
  }
  Txn& other = *cycle[victim];
  other.doomed = true;
  other.cycle = std::move(names);
  other.waiting->wake->set_value(Code::deadlock);
  other.waiting->wake.reset();
}

// Requests `want`; blocks the calling process while it must wait, and records the wait in
// its statement's waits. Throws Failure (deadlock: the transaction is already rolled back;
// lock wait timeout).
Got InnoDb::lock(Txn& txn, Table& t, int index, Lock want) {
  want.txn = txn.id;
  LockQueue& queue = queue_of(t, index);
  if (holds(queue, want)) return Got::at_once;
  const Txn::Kind kind{&t, index << 4 | int(want.exclusive) | int(want.record) << 1 | int(want.gap) << 2 |
                               int(want.insert_intention) << 3};
  Lock& req = queue.add(std::move(want));
  if (!must_wait(queue, req)) {
    req.granted = true;
    if (req.insert_intention) {
      queue.remove(&req);  // it only had to get past the gaps, and leaves no struct
    } else if (!txn.had_kind(kind)) {
      ++txn.lock_structs;
    }
    return Got::at_once;
  }
  if (req.record && req.gap && !req.insert_intention) {
    Lock record = record_lock(req.at, req.exclusive);
    record.txn = txn.id;
    if (holds(queue, record)) {
      // It holds the record already (on its own, as strong): a next-key request that cannot be
      // granted whole takes just its gap, which waits for nobody, rather than queue behind a
      // request that waits for this very transaction (InnoDB's lock upgrade; conformance
      // mtr-deadlock-on-lock-upgrade-scenario2-upgrade-no-deadlock).
      Lock gap = gap_lock(req.exclusive, req.lo, req.hi);
      queue.remove(&req);
      return lock(txn, t, index, std::move(gap));
    }
  }
  if (txn.statement->on_locked != Statement::OnLocked::wait && req.record) {
    // NOWAIT fails with 1205 at once, as MariaDB 10.11 does; SKIP LOCKED leaves the row.
    queue.remove(&req);
    if (txn.statement->on_locked == Statement::OnLocked::skip) return Got::skipped;
    throw Failure{Code::lock_wait_timeout, kLockWaitTimeoutMessage};
  }
  ++txn.lock_structs;  // a waiting request is a struct of its own
  if (!req.insert_intention) txn.had_kind(kind);
  ++stats_.lock_waits;
  txn.waiting = &req;
  txn.waiting_table = &t;
  txn.waiting_index = index;
  txn.statement->waits.push_back(describe(t, index, req));
  const std::size_t wait = txn.statement->waits.size() - 1;
  const sim::Time started = sim::now();
  req.blocker = first_blocker(queue, req);
  break_deadlock(txn, index, false);
  sim::Promise<Code> promise("innodb lock wait");
  sim::Future<Code> granted = promise.get_future();
  req.wake.emplace(std::move(promise));
  Code outcome;
  try {
    outcome = granted.get_for(txn.session->lock_wait_timeout.value_or(config.lock_wait_timeout));
  } catch (const sim::Timeout&) {
    txn.statement->waits[wait].waited = sim::now() - started;
    lock_sys.drop_waiting(txn);
    ++stats_.lock_wait_timeouts;
    throw Failure{Code::lock_wait_timeout, kLockWaitTimeoutMessage};
  }
  txn.statement->waits[wait].waited = sim::now() - started;
  if (outcome == Code::deadlock) {
    lock_sys.drop_waiting(txn);
    const auto changes = static_cast<std::int64_t>(txn.undo.size());
    std::vector<std::string> cycle = std::move(txn.cycle);
    rollback(txn);
    throw deadlock_failure(index, std::move(cycle), changes);
  }
  txn.waiting = nullptr;
  if (req.insert_intention) {
    queue.remove(&req);
    lock_sys.regrant(queue);
  }
  return Got::after_wait;
}

void LockSystem::drop_waiting(Txn& txn) {
  if (txn.waiting == nullptr) return;
  LockQueue& queue = queue_of(*txn.waiting_table, txn.waiting_index);
  queue.remove(txn.waiting);
  txn.waiting = nullptr;
  regrant(queue);
}

void InnoDb::recheck_deadlocks() {
  for (const TxnId id : lock_sys.take_rechecks()) {
    const auto it = txns.find(id);
    if (it == txns.end() || it->second->waiting == nullptr || it->second->doomed) continue;
    break_deadlock(*it->second, it->second->waiting_index, true);
  }
}

}  // namespace models::db::innodb
