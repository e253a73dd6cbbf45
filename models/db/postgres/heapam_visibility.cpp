// PostgreSQL's model: which version of a row a snapshot sees (heapam_visibility.c), and the
// snapshot a statement reads with (models/db/postgres/postgres.hpp).

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "models/db/postgres/postgres.hpp"

namespace models::db::postgres {

// The version a list of committed rows shows: the latest committed one that is not deleted
// (ever: the first committed one).
const Tuple* shown(const RowChain& row, bool ever) {
  if (ever) {
    for (const Tuple& v : row.versions)
      if (v.xmin_commit != 0) return &v;
    return nullptr;
  }
  for (auto it = row.versions.rbegin(); it != row.versions.rend(); ++it)
    if (it->xmin_commit != 0) return it->xmax_commit != 0 ? nullptr : &*it;
  return nullptr;
}

// Whether `v` is seen by a snapshot taken at commit count `snap` by transaction `me`.
bool sees(const Tuple& v, Xid me, std::uint64_t snap) {
  const bool created = v.xmin == me || (v.xmin_commit != 0 && v.xmin_commit <= snap);
  if (!created) return false;
  const bool deleted = v.xmax != 0 && (v.xmax == me || (v.xmax_commit != 0 && v.xmax_commit <= snap));
  return !deleted;
}

// The version a snapshot sees, by its place in the chain (a place stays the version's while
// others come and go after it); nullopt: none.
std::optional<std::size_t> visible(const RowChain& row, Xid me, std::uint64_t snap) {
  for (std::size_t i = row.versions.size(); i-- > 0;)
    if (sees(row.versions[i], me, snap)) return i;
  return std::nullopt;
}

// The newest version whose creator committed or is `me`: what a lock is taken on.
std::size_t newest(const RowChain& row, Xid me) {
  for (std::size_t i = row.versions.size(); i-- > 0;)
    if (row.versions[i].xmin_commit != 0 || row.versions[i].xmin == me) return i;
  return 0;
}

bool Postgres::running(Xid xid) const { return xid != 0 && open_xids_.count(xid) != 0; }

bool per_statement(const Txn& txn) {
  return txn.isolation == Isolation::read_committed || txn.isolation == Isolation::read_uncommitted;
}

// The statement's snapshot: taken as it starts (READ COMMITTED) or at the transaction's first
// statement (REPEATABLE READ, SERIALIZABLE).
std::uint64_t Postgres::snapshot(SessionState& s) {
  Txn& txn = *s.txn;
  if (per_statement(txn)) return s.statement_snapshot;
  if (!txn.snapshot) {
    txn.snapshot = commits_;
    if (serializable(txn)) ssi_.begin(txn.xid, commits_);
  }
  return *txn.snapshot;
}

}  // namespace models::db::postgres
