// PostgreSQL's model: transactions, savepoints, an error's abort of the block, COMMIT and
// ROLLBACK, and the isolation level (xact.c; models/db/postgres/postgres.hpp).

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "models/db/postgres/postgres.hpp"

namespace models::db::postgres {

bool serializable(const Txn& txn) { return txn.isolation == Isolation::serializable; }

// --- Transactions ------------------------------------------------------------

Txn& Postgres::begin(SessionState& s, bool explicit_) {
  s.txn = std::make_unique<Txn>();
  Txn& txn = *s.txn;
  txn.xid = next_xid_++;
  txn.explicit_ = explicit_;
  txn.wall_start = s.statement_wall;
  txn.isolation = s.next_isolation.value_or(s.isolation);
  s.next_isolation.reset();
  open_xids_.insert(txn.xid);
  if (recorder_) recorder_->began(txn.xid, s.who);
  take(s, LockKey{LockKey::Kind::transaction, nullptr, static_cast<std::int64_t>(txn.xid)}, Mode::update, true);
  return txn;
}

void Postgres::undo_all(Txn& txn) { undo_to(txn, 0); }

// Undoes the transaction's changes after its first `keep` ones, the latest first.
void Postgres::undo_to(Txn& txn, std::size_t keep) {
  while (txn.undo.size() > keep) {
    const Undo u = txn.undo.back();
    txn.undo.pop_back();
    Table& t = *u.table;
    auto row = t.rows.find(u.id);
    if (recorder_) recorder_->undone(txn.xid, t.schema.name, u.id);
    if (u.kind == Undo::Kind::deleted) {
      for (Tuple& v : row->second.versions)
        if (v.xmax == txn.xid) v.xmax = 0;
      continue;
    }
    const Tuple gone = std::move(row->second.versions.back());
    row->second.versions.pop_back();
    bytes_ -= kPostgresCosts.of_version(gone.values);
    if (const auto key = key_of(t, gone.values)) {
      const bool kept = std::any_of(row->second.versions.begin(), row->second.versions.end(),
                                    [&](const Tuple& v) { return v.values.at(t.schema.key_column) == *key; });
      if (!kept) t.entries.erase(Entry{*key, u.id});
    }
    for (std::size_t i = 0; i < t.schema.indexes.size(); ++i) {
      const auto key = key_in(t, i, gone.values);
      if (!key) continue;
      const bool kept = std::any_of(row->second.versions.begin(), row->second.versions.end(),
                                    [&](const Tuple& v) { return key_in(t, i, v.values) == key; });
      if (!kept) erase_entry(t, i, IndexEntry{*key, u.id}, bytes_);
    }
    if (row->second.versions.empty()) {
      origins_.drop(row->second.origin);
      t.rows.erase(row);
      bytes_ -= kPostgresCosts.row;
    }
  }
}

void Postgres::end(SessionState& s) {
  Txn& txn = *s.txn;
  open_xids_.erase(txn.xid);
  release_xact(s, txn);
  s.txn.reset();
}

// ROLLBACK TO SAVEPOINT, or an error in a transaction that has one (PostgreSQL aborts the
// innermost subtransaction at once): the changes since `mark` are undone and the locks first
// taken since let go. A lock taken before it and made stronger since stays as strong.
std::int64_t Postgres::roll_back_to(SessionState& s, const SavepointMark& mark) {
  Txn& txn = *s.txn;
  const auto undone = static_cast<std::int64_t>(txn.undo.size() - mark.undo);
  undo_to(txn, mark.undo);
  for (auto k = txn.held.begin(); k != txn.held.end();) {
    if (mark.held.count(*k)) {
      ++k;
      continue;
    }
    const LockKey key = *k;
    k = txn.held.erase(k);
    let_go(s, key);
  }
  return undone;
}

// SAVEPOINT, ROLLBACK TO SAVEPOINT, RELEASE SAVEPOINT. Outside a transaction block each is
// 25P01; a name not set is 3B001, an error that aborts the block as any other does. ROLLBACK
// TO is what ends an aborted block's 25P02 and keeps the savepoint; RELEASE forgets it and
// every later one. Of two savepoints of one name, the later is meant.
Result Postgres::savepoint(SessionState& s, const Statement& st) {
  using Op = Savepoint::Op;
  const Savepoint& sp = st.savepoint;
  if (!s.aborted && (!s.txn || !s.txn->explicit_)) {
    const char* what = sp.op == Op::set ? "SAVEPOINT" : sp.op == Op::release ? "RELEASE SAVEPOINT" : "ROLLBACK TO SAVEPOINT";
    return Result{.code = Code::no_active_transaction, .message = std::string(what) + " can only be used in transaction blocks"};
  }
  if (s.aborted && sp.op != Op::rollback_to) return Result{.code = Code::in_failed_transaction, .message = kAborted};
  if (sp.op == Op::set) {
    s.txn->savepoints.push_back(SavepointMark{sp.name, s.txn->undo.size(), s.txn->held});
    return {};
  }
  // The latest savepoint of that name; none where an error ended the whole transaction.
  std::vector<SavepointMark> none;
  std::vector<SavepointMark>& marks = s.txn ? s.txn->savepoints : none;
  const auto found = std::find_if(marks.rbegin(), marks.rend(), [&](const SavepointMark& m) { return m.name == sp.name; });
  if (found == marks.rend()) {
    Result r{.code = Code::no_such_savepoint, .message = "savepoint \"" + sp.name + "\" does not exist"};
    if (!s.aborted) abort_block(s, r);
    return r;
  }
  const auto at = std::prev(found.base());  // the mark, as a forward iterator
  if (sp.op == Op::release) {
    marks.erase(at, marks.end());
  } else {
    marks.erase(std::next(at), marks.end());
    roll_back_to(s, marks.back());
    s.aborted = false;
  }
  return {};
}

// An error inside a transaction block: with a savepoint, the changes since the latest are
// undone and the block waits for ROLLBACK TO or ROLLBACK; without one, all of it is.
void Postgres::abort_block(SessionState& s, Result& out) {
  if (!s.txn->savepoints.empty()) {
    out.undone = Undone::statement;  // back to the savepoint: the block itself stays, aborted
    out.undone_rows = roll_back_to(s, s.txn->savepoints.back());
  } else {
    out.undone = Undone::transaction;
    out.undone_rows = static_cast<std::int64_t>(s.txn->undo.size());
    rollback(s);
  }
  s.aborted = true;
}

void Postgres::rollback(SessionState& s) {
  ssi_.forget(s.txn->xid);  // an aborted transaction's reads and dependencies go with it
  ssi_.prune();
  undo_all(*s.txn);
  end(s);
  ++stats_.rollbacks;
}

void Postgres::commit(SessionState& s) {
  Txn& txn = *s.txn;
  ++commits_;
  ssi_.committed(txn.xid, commits_);
  for (const Undo& u : txn.undo)
    for (Tuple& v : u.table->rows.at(u.id).versions) {
      if (v.xmin == txn.xid && v.xmin_commit == 0) v.xmin_commit = commits_;
      if (v.xmax == txn.xid && v.xmax_commit == 0) v.xmax_commit = commits_;
    }
  if (recorder_) recorder_->committed(txn.xid, commits_);
  end(s);
  ssi_.prune();
  ++stats_.commits;
}

// --- Statements ------------------------------------------------------------------

Result Postgres::set_isolation(SessionState& s, const Statement& st) {
  if (!st.next_transaction_only) {
    s.isolation = st.isolation;
    return {};
  }
  // SET TRANSACTION: the open transaction's level, before its first query; outside one a
  // warning and no effect, as on the server.
  if (s.txn && s.txn->explicit_) {
    if (s.txn->snapshot || !s.txn->undo.empty())
      return Result{.code = Code::transaction_in_progress, .message = "SET TRANSACTION ISOLATION LEVEL must be called before any query"};
    s.txn->isolation = st.isolation;
  }
  return {};
}

// COMMIT (40001 where SSI fails it: the transaction is rolled back) or ROLLBACK; either ends
// an aborted block.
Result Postgres::end_block(SessionState& s, const Statement& st, const StatementTiming& timing) {
  using K = Statement::Kind;
  if (st.kind == K::commit) spend(timing.before_commit);
  if (st.kind == K::commit && s.txn && ssi_.follows(s.txn->xid)) {
    if (ssi_.fails_commit(s.txn->xid, commits_)) {
      const auto undone = static_cast<std::int64_t>(s.txn->undo.size());
      rollback(s);
      s.aborted = false;
      return Result{.code = Code::serialization_failure, .message = kSerialization, .undone = Undone::transaction, .undone_rows = undone};
    }
  }
  if (s.txn) (st.kind == K::commit) ? commit(s) : rollback(s);
  s.aborted = false;
  return {};
}

}  // namespace models::db::postgres
