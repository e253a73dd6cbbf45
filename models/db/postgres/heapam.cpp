// PostgreSQL's model: reading a table's rows through the statement's snapshot, and locking
// them as heap_lock_tuple and EvalPlanQual do (models/db/postgres/postgres.hpp).

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "models/db/postgres/postgres.hpp"

namespace models::db::postgres {

// --- Reading and locking rows --------------------------------------------------

Row row_of(std::int64_t id, const RowValues& values) { return Row{id, values}; }

// The rows the statement's snapshot shows that match its WHERE, in id order, each with the
// place of the version seen.
std::vector<std::pair<std::int64_t, std::size_t>> Postgres::scan(SessionState& s, Table& t, const Statement& st) {
  const std::uint64_t snap = snapshot(s);
  const Xid me = s.txn->xid;
  std::vector<std::pair<std::int64_t, std::size_t>> out;
  s.predicate = recorder_ ? recorder_->predicate(me, t.schema.name, st, snap) : std::nullopt;
  const auto consider = [&](std::int64_t id, const RowChain& row) {
    const std::optional<std::size_t> v = visible(row, me, snap);
    if (v && !History::rows_only(st)) observed(s, t, id, *v);
    if (v && matches(row.versions[*v].values, st)) out.emplace_back(id, *v);
  };
  const auto named = std::find_if(st.where.begin(), st.where.end(), [&](const Condition& c) {
    return c.op == Condition::Op::eq && (c.column == "id" || (!t.schema.key_column.empty() && c.column == t.schema.key_column));
  });
  if (serializable(*s.txn)) {
    // What the read covers: the row or key it looked up through an index, else the table
    // (PostgreSQL's sequential scan locks the relation).
    const bool indexed = named != st.where.end() && (named->column == "id" || t.schema.key_index != KeyIndex::none);
    if (!indexed) ssi_.read(s.txn->xid, ReadKey{&t, ReadKey::By::table, {}});
    else ssi_.read(s.txn->xid, ReadKey{&t, named->column == "id" ? ReadKey::By::id : ReadKey::By::key, named->value});
  }
  if (named != st.where.end() && named->column == "id") {
    if (const auto* id = std::get_if<std::int64_t>(&named->value); id != nullptr)
      if (const auto row = t.rows.find(*id); row != t.rows.end()) consider(*id, row->second);
  } else if (named != st.where.end()) {
    // A key's entries are (key, id) pairs, each once, in id order.
    for (auto it = t.entries.lower_bound(Entry{named->value, std::numeric_limits<std::int64_t>::min()});
         it != t.entries.end() && it->key == named->value; ++it)
      consider(it->id, t.rows.at(it->id));
  } else {
    sim::work(t.rows.size());
    for (const auto& [id, row] : t.rows) consider(id, row);
  }
  return out;
}

void Postgres::observed(const SessionState& s, const Table& t, std::int64_t id, std::size_t place) {
  if (!recorder_ || !s.predicate) return;
  const auto& versions = t.rows.at(id).versions;
  const Xid writer = versions[place].xmin;
  const auto ordinal = std::count_if(versions.begin(), versions.begin() + static_cast<std::ptrdiff_t>(place),
                                     [&](const Tuple& v) { return v.xmin == writer; });
  recorder_->read(*s.predicate, id, writer, static_cast<std::size_t>(ordinal));
}

// Locks a row the statement found in its snapshot (the version at `seen`), as heap_lock_tuple
// and EvalPlanQual do: waits for a conflicting holder; a row changed since the snapshot is
// read again under READ COMMITTED (its WHERE checked anew; nullopt when it no longer
// matches or is gone) and is 40001 under REPEATABLE READ. Returns the place of the version
// locked (nullopt: left, as SKIP LOCKED leaves a locked row).
std::optional<std::size_t> Postgres::lock_row(SessionState& s, Table& t, std::int64_t id, std::size_t seen, const Statement& st, Mode mode) {
  const LockKey key{LockKey::Kind::row, &t, id};
  if (acquire(s, key, mode, true, true, st.on_locked) == Got::skipped) return std::nullopt;
  const Xid me = s.txn->xid;
  const RowChain& row = t.rows.at(id);
  const std::size_t now = newest(row, me);
  const Tuple& latest = row.versions[now];
  const bool deleted = latest.xmax != 0 && latest.xmax != me && latest.xmax_commit != 0;
  if (!deleted) observed(s, t, id, now);
  if (now == seen && !deleted) return now;
  if (!per_statement(*s.txn))
    throw Failure{Code::serialization_failure,
                  std::string("could not serialize access due to concurrent ") + (deleted && now == seen ? "delete" : "update")};
  if (deleted || !matches(latest.values, st)) return std::nullopt;
  return now;
}

// The rows a locking read, UPDATE or DELETE acts on, each locked in `mode`, in the order
// ORDER BY gives (id order without one), stopping at LIMIT's rows: each with the place of
// the version locked.
std::vector<std::pair<std::int64_t, std::size_t>> Postgres::locked_rows(SessionState& s, Table& t, const Statement& st, Mode mode) {
  const auto found = scan(s, t, st);
  std::vector<Row> ordered;
  ordered.reserve(found.size());
  for (const auto& [id, v] : found) ordered.push_back(row_of(id, t.rows.at(id).versions[v].values));
  if (!st.more().order_by.empty()) {
    Statement order_only = st;
    order_only.limit.reset();
    order_only.offset = 0;
    order_and_limit(order_only, Engine::postgresql, ordered);
  }
  const std::map<std::int64_t, std::size_t> seen(found.begin(), found.end());
  std::optional<std::size_t> enough;  // LIMIT + OFFSET rows, beyond which no row is locked
  if (st.limit) enough = static_cast<std::size_t>(*st.limit) + static_cast<std::size_t>(st.offset);
  std::vector<std::pair<std::int64_t, std::size_t>> out;
  for (const Row& r : ordered) {
    if (enough && out.size() >= *enough) break;
    if (const auto v = lock_row(s, t, r.id, seen.at(r.id), st, mode)) out.emplace_back(r.id, *v);
  }
  const auto skip = std::min<std::ptrdiff_t>(st.offset, static_cast<std::ptrdiff_t>(out.size()));
  out.erase(out.begin(), out.begin() + skip);
  return out;
}

Mode mode_of(ReadLock lock) {
  switch (lock) {
    case ReadLock::key_share: return Mode::key_share;
    case ReadLock::share: return Mode::share;
    case ReadLock::no_key_update: return Mode::no_key_update;
    default: return Mode::update;
  }
}

std::vector<Row> Postgres::select(SessionState& s, Table& t, const Statement& st) {
  std::vector<Row> out;
  if (st.lock != ReadLock::none) {
    for (const auto& [id, v] : locked_rows(s, t, st, mode_of(st.lock))) out.push_back(row_of(id, t.rows.at(id).versions[v].values));
    return out;
  }
  const auto found = scan(s, t, st);
  for (const auto& [id, v] : found) out.push_back(row_of(id, t.rows.at(id).versions[v].values));
  order_and_limit(st, Engine::postgresql, out);
  if (recorder_ && History::rows_only(st)) {  // what it read: the rows it returns
    const std::map<std::int64_t, std::size_t> place(found.begin(), found.end());
    for (const Row& r : out) observed(s, t, r.id, place.at(r.id));
  }
  return out;
}

}  // namespace models::db::postgres
