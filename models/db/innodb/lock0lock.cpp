// InnoDB's model: the lock system (lock0lock.hpp): whether a lock is held, the queues' grants,
// the lock requests a search makes; and what the engine shows of locks and waits.

#include "models/db/innodb/innodb.hpp"

namespace models::db::innodb {

bool holds(const LockQueue& queue, const Lock& want) {
  const auto covers = [&](const Lock& l) {
    if (l.txn != want.txn || !l.granted || l.insert_intention != want.insert_intention) return false;
    if (want.exclusive && !l.exclusive) return false;
    if (want.record && !(l.record && l.at == want.at)) return false;
    if (want.gap && !(l.gap && l.lo == want.lo && l.hi == want.hi)) return false;
    if (want.insert_intention && l.at != want.at) return false;
    return true;
  };
  if (want.record || want.insert_intention) {  // only a lock on the same entry can cover it
    const auto& here = queue.on(want.at);
    return std::any_of(here.begin(), here.end(), [&](const Lock* l) { return covers(*l); });
  }
  return std::any_of(queue.begin(), queue.end(), covers);
}

namespace {

// Odds that the latest granted of the waiters left runs next, against each other one's 1.
constexpr std::uint32_t kLatestFirstOdds = 9;

// Wakes the transactions whose requests one release granted (`woken`, in the queue's order).
// MariaDB grants them in the queue's order and wakes each waiting thread; which of them runs
// first is the host's scheduling, and there the later granted mostly ran first: of two inserts
// granted at one rollback, the later ran first in 25 to 27 of 30 runs of
// three-inserts-rollback-primary and of -unique (the earlier one then closes the deadlock and is
// its victim), and the later waiter's insert won 18 of 20 runs of delete-commit-unique
// (docs/conformance.md, "Races"). So the model runs them one nanosecond apart, in an order drawn
// one waiter at a time: the latest granted of those left at odds 9 to 1 against each other one
// (kWakeStream), each order a choice `explore` walks.
void wake_granted(std::vector<sim::Promise<Code>>& woken) {
  sim::Engine* engine = sim::Engine::current();
  if (woken.size() == 1 || engine == nullptr) {
    for (sim::Promise<Code>& p : woken) p.set_value(Code::ok);
    return;
  }
  sim::Stream order = engine->stream(kWakeStream);
  std::vector<std::uint32_t> odds;
  for (std::int64_t delay_ns = 0; !woken.empty(); ++delay_ns) {
    std::size_t next = woken.size() - 1;  // option 0: the latest granted; option i: the i-th in the queue
    if (woken.size() > 1) {
      odds.assign(woken.size(), 1);
      odds[0] = kLatestFirstOdds;
      if (const std::uint64_t option = order.pick_weighted(odds); option > 0) next = option - 1;
    }
    sim::Promise<Code> wake = std::move(woken[next]);
    woken.erase(woken.begin() + static_cast<std::ptrdiff_t>(next));
    if (delay_ns == 0) {
      wake.set_value(Code::ok);
    } else {
      engine->after(sim::Duration{delay_ns}, sim::kWorld, [wake]() mutable {
        if (!wake.satisfied()) wake.set_value(Code::ok);
      });
    }
  }
}

}  // namespace

void LockSystem::regrant(LockQueue& queue) {
  std::vector<sim::Promise<Code>> woken;
  for (Lock& l : queue) {
    if (l.granted || must_wait(queue, l)) continue;
    l.granted = true;
    if (auto t = txns_.find(l.txn); t != txns_.end() && t->second->waiting == &l) t->second->waiting = nullptr;
    if (l.wake) {
      woken.push_back(std::move(*l.wake));
      l.wake.reset();
    }
  }
  if (!woken.empty()) wake_granted(woken);
  // A waiter left waiting behind another transaction than before follows the new one; where
  // that one waits too, a deadlock may have closed (MariaDB's lock_rec_dequeue_from_page).
  for (Lock& l : queue) {
    if (l.granted || !l.wake) continue;
    const TxnId now = first_blocker(queue, l);
    if (now == l.blocker) continue;
    l.blocker = now;
    if (auto t = txns_.find(now); t != txns_.end() && t->second->waiting != nullptr) rechecks_.push_back(l.txn);
  }
}

void LockSystem::release(const Txn& txn, std::map<std::string, Table>& tables) {
  for (auto& [name, t] : tables) {
    release_in(txn, t.autoinc_lock);
    for (LockQueue& queue : t.locks) release_in(txn, queue);
  }
}

void LockSystem::release_autoinc(const Txn& txn, Table& t) { release_in(txn, t.autoinc_lock); }

void LockSystem::release_in(const Txn& txn, LockQueue& queue) {
  if (queue.erase_if([&](const Lock& l) { return l.txn == txn.id && l.granted; }) > 0) regrant(queue);
}

void LockSystem::unlock_record(const Txn& txn, LockQueue& queue, const Entry& at) {
  queue.erase_if([&](const Lock& l) { return l.txn == txn.id && l.granted && l.record && !l.gap && l.at == at; });
  regrant(queue);
}

// Where a lock or request is and its mode, as Result::waits and the lock table show it.
LockWait InnoDb::place_of(const Table& t, int index, const Lock& l) const {
  LockWait w;
  w.table = t.schema.name;
  if (index == kAutoInc) {
    w.entry = "table lock";
    w.mode = "AUTO-INC";
    return w;
  }
  w.index = index == kPrimary ? "PRIMARY" : index_name(t, index);
  const bool keyed = index == kKey && t.schema.clustered_key;
  if (l.insert_intention) w.entry = gap_text(index, after(t, index, l.at), keyed);
  else if (l.record) w.entry = entry_text(index, l.at, keyed);
  else w.entry = gap_text(index, l.hi, keyed);
  if (l.purged) w.entry += " (from its lock on the purged " + entry_text(index, *l.purged, keyed) + ")";
  w.mode = mode_text(l);
  return w;
}

// What a lock wait is shown as in Result::waits: its place, and whom it waits behind.
LockWait InnoDb::describe(const Table& t, int index, const Lock& req) const {
  LockWait w = place_of(t, index, req);
  for (TxnId b : blockers(queue_of(t, index), req)) w.behind.push_back(who(b));
  return w;
}

std::vector<HeldLock> InnoDb::locks(std::size_t most) const {
  std::vector<HeldLock> out;
  user_locks_.list(out, most);
  const auto list = [&](const Table& t, int place) {
    for (const Lock& l : queue_of(t, place)) {
      if (!l.granted || l.insert_intention) continue;
      if (out.size() == most) return false;
      const LockWait w = place_of(t, place, l);
      out.push_back({who(l.txn), w.table, w.index, w.entry, w.mode});
    }
    return true;
  };
  for (const auto& [name, t] : tables) {  // a table's table lock, then its index locks
    if (!list(t, kAutoInc)) return out;
    for (std::size_t index = 0; index < t.locks.size(); ++index)
      if (!list(t, static_cast<int>(index))) return out;
  }
  return out;
}

// When an entry goes (the insert that made it rolled back), the locks on it pass to the
// gap it leaves and gaps that ended at it reach over it, as InnoDB's lock_rec_inherit_to_gap
// gives them to the next entry. The owner's own record lock (its insert's) just goes.
void LockSystem::inherit_to_gap(LockQueue& queue, const Entry& gone, TxnId owner, const std::optional<Entry>& lo,
                                const std::optional<Entry>& hi) {
  queue.erase_if([&](const Lock& l) { return l.txn == owner && l.granted && l.record && !l.gap && l.at == gone; });
  for (Lock& l : queue) {
    if (l.insert_intention) continue;
    if (l.record && l.at == gone) {
      if (!l.gap) l.lo = lo;  // a next-key lock keeps the gap it had below
      l.record = false;
      l.gap = true;
      l.hi = hi;
    } else if (l.gap) {
      if (l.lo == gone) l.lo = lo;
      if (l.hi == gone) l.hi = hi;
    }
  }
  regrant(queue);
}

Lock record_lock(const Entry& at, bool exclusive, bool next_key, std::optional<Entry> lo) {
  Lock l;
  l.exclusive = exclusive;
  l.record = true;
  l.at = at;
  if (next_key) {
    l.gap = true;
    l.lo = std::move(lo);
    l.hi = at;
  }
  return l;
}

Lock gap_lock(bool exclusive, std::optional<Entry> lo, std::optional<Entry> hi) {
  Lock l;
  l.exclusive = exclusive;
  l.gap = true;
  l.lo = std::move(lo);
  l.hi = std::move(hi);
  return l;
}

Lock insert_intention(const Entry& at) {
  Lock l;
  l.exclusive = true;
  l.insert_intention = true;
  l.at = at;
  return l;
}

}  // namespace models::db::innodb
