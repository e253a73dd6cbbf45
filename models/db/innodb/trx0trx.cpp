// InnoDB's model: transactions: begin, undo, rollback, commit and the purge race at a commit
// (InnoDB's trx0trx, trx0roll, trx0purge).

#include "models/db/innodb/innodb.hpp"

namespace models::db::innodb {

Txn& InnoDb::begin(SessionState& s, bool explicit_) {
  s.txn = std::make_unique<Txn>();
  s.txn->id = next_txn++;
  s.txn->explicit_ = explicit_;
  s.txn->session = &s;
  if (recorder) recorder->began(s.txn->id, s.who);
  s.txn->isolation = s.next_isolation.value_or(s.isolation);
  s.next_isolation.reset();
  txns[s.txn->id] = s.txn.get();
  return *s.txn;
}

void InnoDb::undo_to(Txn& txn, std::size_t mark) {
  while (txn.undo.size() > mark) {
    const Undo u = txn.undo.back();
    txn.undo.pop_back();
    Table& t = *u.table;
    auto row = t.rows.find(u.id);
    RowData& data = *row->second;
    const Version undone = data.pop();
    if (recorder) recorder->undone(txn.id, t.schema.name, u.id);
    bytes -= kInnoDbCosts.of_version(undone.values);
    // An entry no remaining version holds leaves its index.
    boost::container::small_vector<std::pair<int, Entry>, 1> gone;
    const auto drop_entry = [&](int index) {
      const std::optional<Key> key = key_of(t, index, undone.values);
      const auto versions = data.versions();
      if (!key || std::any_of(versions.begin(), versions.end(), [&](const Version& v) { return key_of(t, index, v.values) == key; }))
        return;
      gone.emplace_back(index, Entry{*key, u.id});
      entries_of(t, index).erase(gone.back().second);
    };
    drop_entry(kKey);
    for (std::size_t i = 0; i < t.more_entries.size(); ++i) drop_entry(kExtra + static_cast<int>(i));
    const bool row_gone = data.versions().empty();
    if (row_gone) {
      origins.drop(data.origin);
      t.rows.erase(row);
      bytes -= kInnoDbCosts.row;
    }
    const auto pass_on = [&](int index, const Entry& entry) {  // the locks on a gone entry to its gap
      lock_sys.inherit_to_gap(queue_of(t, index), entry, txn.id, before(t, index, entry), after(t, index, entry));
    };
    for (const auto& [index, entry] : gone) pass_on(index, entry);
    if (row_gone && !t.schema.clustered_key) pass_on(kPrimary, primary_entry(u.id));
  }
}

void InnoDb::rollback(Txn& txn) {
  undo_to(txn, 0);
  finish(txn);
  ++stats_.rollbacks;
}

void InnoDb::commit(Txn& txn) {
  ++commits;
  // Only another open transaction can hold a lock the purge would hand on.
  std::vector<Purged> purged = txns.size() > 1 ? entries_going(txn) : std::vector<Purged>{};
  for (const Undo& u : txn.undo)
    for (Version& v : u.table->rows.at(u.id)->versions())
      if (v.txn == txn.id && v.commit == 0) v.commit = commits;
  if (recorder) recorder->committed(txn.id, commits);
  finish(txn);
  purge_race(purged);
  ++stats_.commits;
}

std::vector<InnoDb::Purged> InnoDb::entries_going(const Txn& txn) const {
  std::vector<Purged> out;  // a row written twice is listed twice: purge_race hands a lock on once
  for (const Undo& u : txn.undo) {
    Table& t = *u.table;
    const RowData& row = *t.rows.at(u.id);
    const Version* now = current(row);
    const Version* was = latest_committed(row);
    if (now == nullptr || was == nullptr || was->deleted || now->txn != txn.id) continue;
    if (now->deleted && !t.schema.clustered_key) out.push_back({&t, kPrimary, primary_entry(u.id)});
    for (const int index : secondary(t)) {
      std::optional<Key> old = key_of(t, index, was->values);
      if (old && (now->deleted || key_of(t, index, now->values) != old)) out.push_back({&t, index, Entry{std::move(*old), u.id}});
    }
  }
  return out;
}

// Who goes first once a delete commits while other transactions wait on its entries: the
// purge thread, which turns their locks on the removed entry into gap locks where it was (so two
// waiters to insert the key each hold the gap the other inserts into, and one of them is a
// deadlock's victim), or the woken waiters, which run before the entry goes (one inserts, the
// other waits for it and meets a duplicate). MariaDB 10.11 gives both (conformance
// delete-commit-unique, docs/conformance.md); so does the model, as a choice (kPurgeStream;
// the waiters first is the default an explorer departs from).
void InnoDb::purge_race(const std::vector<Purged>& purged) {
  struct Heir {
    Txn* txn;
    Purged where;
    bool exclusive;
  };
  std::vector<Heir> heirs;
  for (const Purged& p : purged)
    for (const Lock* l : queue_of(*p.table, p.index).on(p.entry)) {
      auto t = txns.find(l->txn);
      if (!l->granted || l->insert_intention || t == txns.end()) continue;
      // Under READ COMMITTED an exclusive lock is not inherited (lock_rec_inherit_to_gap).
      if (l->exclusive && !gap_locking(t->second->isolation)) continue;
      heirs.push_back({t->second, p, l->exclusive});
    }
  sim::Engine* engine = sim::Engine::current();
  if (heirs.empty() || engine == nullptr || engine->stream(kPurgeStream).pick(2) == 0) return;
  for (const Heir& h : heirs) {
    Table& t = *h.where.table;
    Lock gap = gap_lock(h.exclusive, before(t, h.where.index, h.where.entry), after(t, h.where.index, h.where.entry));
    gap.txn = h.txn->id;
    gap.purged = std::make_shared<const Entry>(h.where.entry);
    LockQueue& queue = queue_of(t, h.where.index);
    if (holds(queue, gap)) continue;
    gap.granted = true;
    queue.add(std::move(gap));
    ++h.txn->lock_structs;
  }
}

// Ends the transaction: its locks go and waiters are granted.
void InnoDb::finish(Txn& txn) {
  lock_sys.drop_waiting(txn);
  lock_sys.release(txn, tables);
  txns.erase(txn.id);
  txn.id = 0;  // marks it ended; the session drops it
  recheck_deadlocks();
}

}  // namespace models::db::innodb
