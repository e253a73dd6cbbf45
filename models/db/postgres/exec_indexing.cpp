// PostgreSQL's model: an insert's check of each unique index with a dirty read, waiting for
// an inserter or deleter still running (execIndexing.c, _bt_check_unique), and the indexes
// ON CONFLICT arbitrates on (models/db/postgres/postgres.hpp).

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "models/db/postgres/postgres.hpp"

namespace models::db::postgres {

// Waits for the transaction `xid` to end (XactLockTableWait).
void Postgres::wait_for_transaction(SessionState& s, Xid xid) {
  acquire(s, LockKey{LockKey::Kind::transaction, nullptr, static_cast<std::int64_t>(xid)}, Mode::share, true, false,
          Statement::OnLocked::wait);
}

// The first row of a unique index holding the new row's value, as a dirty read finds it;
// waits for a transaction still inserting or deleting it, then looks again. nullopt: none.
std::optional<std::int64_t> Postgres::unique_conflict(SessionState& s, Table& t, const std::string& column, const Value& value) {
  if (is_null(value)) return std::nullopt;  // NULLs are distinct
  for (;;) {
    std::vector<std::int64_t> ids;
    if (column == "id") {
      if (t.rows.count(std::get<std::int64_t>(value))) ids.push_back(std::get<std::int64_t>(value));
    } else {
      for (auto it = t.entries.lower_bound(Entry{value, std::numeric_limits<std::int64_t>::min()});
           it != t.entries.end() && it->key == value; ++it)
        ids.push_back(it->id);
    }
    std::optional<Xid> wait_for;
    std::optional<std::int64_t> found;
    for (std::int64_t id : ids) {
      const Tuple& latest = t.rows.at(id).versions.back();
      if (column != "id" && latest.values.at(column) != value) continue;
      const Xid me = s.txn->xid;
      if (latest.xmax != 0 && latest.xmax_commit != 0) continue;  // deleted, committed
      if (latest.xmax == me) continue;                             // deleted by this transaction
      if (latest.xmin != me && latest.xmin_commit == 0 && running(latest.xmin)) {
        wait_for = latest.xmin;  // an insert not yet committed
        break;
      }
      if (latest.xmax != 0 && running(latest.xmax)) {
        wait_for = latest.xmax;  // a delete not yet committed
        break;
      }
      found = id;
      break;
    }
    if (wait_for) {
      wait_for_transaction(s, *wait_for);
      continue;
    }
    return found;
  }
}

// The first row whose version holds `key` in the further unique index `i`, as _bt_check_unique
// finds it: each version the index has an entry for is checked with a dirty read, and one a
// transaction still inserts or deletes (an UPDATE that moved it out of the index included) is
// waited for, then the index is looked at again. nullopt: none.
std::optional<std::int64_t> Postgres::index_conflict(SessionState& s, Table& t, std::size_t i, const std::vector<Value>& key) {
  const Xid me = s.txn->xid;
  for (;;) {
    std::optional<Xid> wait_for;
    std::optional<std::int64_t> found;
    for (auto it = t.index_entries[i].lower_bound(IndexEntry{key, std::numeric_limits<std::int64_t>::min()});
         it != t.index_entries[i].end() && it->key == key && !wait_for && !found; ++it) {
      for (const Tuple& v : t.rows.at(it->id).versions) {
        if (key_in(t, i, v.values) != key) continue;
        if (v.xmax != 0 && v.xmax_commit != 0) continue;  // deleted or replaced, committed
        if (v.xmax == me) continue;                       // deleted or replaced by this transaction
        if (v.xmin != me && v.xmin_commit == 0 && running(v.xmin)) wait_for = v.xmin;
        else if (v.xmax != 0 && running(v.xmax)) wait_for = v.xmax;
        else found = it->id;
        break;
      }
    }
    if (!wait_for) return found;
    wait_for_transaction(s, *wait_for);
  }
}

// A new version of row `id` (an UPDATE's, or ON CONFLICT DO UPDATE's) against the further
// unique indexes: 23505 where another row holds its values in one.
void Postgres::check_new_version(SessionState& s, Table& t, const Values& next) {
  for (std::size_t i = 0; i < t.schema.indexes.size(); ++i)
    if (const auto key = key_in(t, i, next); key && index_conflict(s, t, i, *key)) {
      ++stats_.duplicate_keys;
      throw Failure{Code::duplicate_key, duplicate_index_message(t.schema.indexes[i])};
    }
}

void terms_of(const Expr& e, std::vector<std::string>& out) {
  if (e.kind == Expr::Kind::logical_and) {
    for (const Expr& a : e.args) terms_of(a, out);
    return;
  }
  out.push_back(to_string(e));
}

Arbiters arbiters(const Table& t, const Statement& st) {
  const std::vector<std::string>& target = st.more().conflict_target;
  Arbiters out;
  out.indexes.assign(t.schema.indexes.size(), false);
  if (st.on_duplicate != OnDuplicate::ignore && st.on_duplicate != OnDuplicate::update) return out;
  const std::set<std::string> wanted(target.begin(), target.end());
  const auto on = [&](const std::vector<std::string>& columns) {
    return target.empty() || std::set<std::string>(columns.begin(), columns.end()) == wanted;
  };
  std::vector<std::string> given;
  if (const auto& where = st.more().conflict_index_where) terms_of(*where, given);
  bool any = false;
  out.id = on({"id"});
  out.key = unique(t) && on({t.schema.key_column});
  any = out.id || out.key;
  for (std::size_t i = 0; i < t.schema.indexes.size(); ++i) {
    const IndexDef& index = t.schema.indexes[i];
    if (!index.unique || !on(index.columns)) continue;
    if (index.where && !target.empty()) {
      std::vector<std::string> needed;
      terms_of(*index.where, needed);
      const bool implied = std::all_of(needed.begin(), needed.end(),
                                       [&](const std::string& n) { return std::find(given.begin(), given.end(), n) != given.end(); });
      if (!implied && !given.empty())
        throw sim::UsageError("models::db: ON CONFLICT's WHERE (" + to_string(*st.more().conflict_index_where) +
                              ") implies the WHERE of the index " + index.name + " (" + index.where_text +
                              ") only where it repeats each of its terms in the model (docs/sql.md)");
      if (!implied) continue;
    }
    out.indexes[i] = true;
    any = true;
  }
  if (!any) throw Failure{Code::no_conflict_index, "there is no unique or exclusion constraint matching the ON CONFLICT specification"};
  return out;
}

// Each unique index, the arbiters first (PostgreSQL's speculative insertion checks them
// before it inserts, the others as it does): which one (kIdIndex, kKeyIndex, or the place of
// a further index) and whether it arbitrates.
std::vector<std::pair<int, bool>> probes_of(const Table& t, const Arbiters& arbiter) {
  std::vector<std::pair<int, bool>> probes;
  for (const bool arbitrates : {true, false}) {
    if (arbiter.id == arbitrates) probes.emplace_back(kIdIndex, arbitrates);
    if (unique(t) && arbiter.key == arbitrates) probes.emplace_back(kKeyIndex, arbitrates);
    for (std::size_t i = 0; i < t.schema.indexes.size(); ++i)
      if (t.schema.indexes[i].unique && arbiter.indexes[i] == arbitrates) probes.emplace_back(static_cast<int>(i), arbitrates);
  }
  return probes;
}

}  // namespace models::db::postgres
