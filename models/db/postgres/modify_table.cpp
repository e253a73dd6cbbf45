// PostgreSQL's model: INSERT (with ON CONFLICT), UPDATE and DELETE, each a new version or
// the end of one (nodeModifyTable.c; models/db/postgres/postgres.hpp).

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "models/db/postgres/postgres.hpp"

namespace models::db::postgres {

// --- Writing rows --------------------------------------------------------------

void Postgres::add_version(SessionState& s, Table& t, std::int64_t id, const Values& columns, const RowOrigin* origin) {
  RowValues values = t.stored(columns);
  if (serializable(*s.txn)) ssi_.write(s.txn->xid, t, id, key_of(t, values).value_or(Value{}));
  if (auto key = key_of(t, values)) t.entries.insert(Entry{*key, id});
  add_index_entries(t, id, values, bytes_);
  auto [row, fresh] = t.rows.try_emplace(id);
  bytes_ += kPostgresCosts.of_version(values) + (fresh ? kPostgresCosts.row : 0);
  if (recorder_) recorder_->wrote(s.txn->xid, t.schema.name, id, values, false);
  row->second.versions.push_back(Tuple{s.txn->xid, 0, 0, 0, std::move(values)});
  if (origin != nullptr) origins_.keep(row->second.origin, origin->who, origin->transaction, origin->inserted_at);
  s.txn->undo.push_back({Undo::Kind::created, &t, id});
}

void Postgres::mark_deleted(SessionState& s, Table& t, std::int64_t id) {
  if (serializable(*s.txn)) ssi_.write(s.txn->xid, t, id, key_of(t, t.rows.at(id).versions.back().values).value_or(Value{}));
  t.rows.at(id).versions.back().xmax = s.txn->xid;
  if (recorder_) recorder_->wrote(s.txn->xid, t.schema.name, id, t.rows.at(id).versions.back().values, true);
  s.txn->undo.push_back({Undo::Kind::deleted, &t, id});
}

Result Postgres::update(SessionState& s, Table& t, const Statement& st, bool remove) {
  if (!remove) detail::check_unmoved(t.schema, st);
  Result out;
  // An UPDATE that changes no key takes FOR NO KEY UPDATE; a DELETE, FOR UPDATE.
  for (const auto& [id, v] : locked_rows(s, t, st, remove ? Mode::update : Mode::no_key_update)) {
    const RowValues old = t.rows.at(id).versions[v].values;
    if (remove) {
      mark_deleted(s, t, id);
      ++out.affected;
      if (!st.more().returning.empty()) out.rows.push_back(row_of(id, old));
      continue;
    }
    Values next = old.to_values();
    for (const auto& [column, value] : st.values) {
      if (!next.count(column)) throw Failure{Code::bad_field, "column \"" + column + "\" of relation \"" + t.schema.name + "\" does not exist"};
      next[column] = value;
    }
    detail::assign(st, next, nullptr, Engine::postgresql);
    detail::check_row(t.schema, Engine::postgresql, next);
    mark_deleted(s, t, id);  // the old version ends, a new one begins (its own earlier one too)
    check_new_version(s, t, next);
    add_version(s, t, id, next, nullptr);
    ++out.affected;  // PostgreSQL counts every row it updated, changed or not
    if (!st.more().returning.empty()) out.rows.push_back(row_of(id, t.rows.at(id).versions.back().values));
  }
  return out;
}

// INSERT of one row, with ON CONFLICT's arbitration on the unique indexes its target names.
// One row of an INSERT; `touched` holds the rows the statement inserted or updated so far,
// which its DO UPDATE may not update again (21000).
void Postgres::insert_one(SessionState& s, Table& t, const Statement& st, const Values& given, Result& out, std::set<std::int64_t>& touched) {
  std::optional<std::int64_t> explicit_id;
  Values values;
  try {
    values = detail::row_values(t.schema, Engine::postgresql, given, explicit_id);
  } catch (const sim::UsageError& e) {
    throw Failure{Code::bad_field, e.what()};
  }
  if (!explicit_id && !t.schema.auto_increment && !t.schema.clustered_key)
    throw Failure{Code::bad_null, "null value in column \"id\" of relation \"" + t.schema.name + "\" violates not-null constraint"};
  if (!explicit_id && t.next_id == std::numeric_limits<std::int64_t>::max())
    throw Failure{Code::out_of_range, "nextval: reached maximum value of sequence \"" + t.schema.name + "_id_seq\""};
  const std::int64_t id = explicit_id ? *explicit_id : t.next_id++;  // nextval: never rolled back
  values["id"] = Value{id};
  const std::vector<std::pair<int, bool>> probes = probes_of(t, arbiters(t, st));
  for (;;) {
    bool again = false;
    for (const auto& [which, arbitrates] : probes) {
      std::optional<std::int64_t> dup;
      if (which == kIdIndex || which == kKeyIndex) {
        const std::string column = which == kIdIndex ? std::string("id") : t.schema.key_column;
        dup = unique_conflict(s, t, column, values.at(column));
      } else if (const auto key = key_in(t, static_cast<std::size_t>(which), values)) {
        dup = index_conflict(s, t, static_cast<std::size_t>(which), *key);
      }
      if (!dup) continue;
      if (!arbitrates) {
        ++stats_.duplicate_keys;
        throw Failure{Code::duplicate_key, which >= 0 ? duplicate_index_message(t.schema.indexes[static_cast<std::size_t>(which)])
                                                      : duplicate_message(t, which == kIdIndex ? "id" : t.schema.key_column)};
      }
      if (on_conflict(s, t, st, *dup, values, out, touched)) {
        again = true;
        break;
      }
      return;
    }
    if (again) continue;
    break;
  }
  const RowOrigin origin{s.who, s.txn->xid, sim::now()};
  add_version(s, t, id, values, &origin);
  touched.insert(id);
  ++out.affected;
  if (!st.more().returning.empty()) out.rows.push_back(row_of(id, t.rows.at(id).versions.back().values));
}

// ON CONFLICT on the row `dup` that holds a key of the new row (`values`) in an arbiter: DO
// NOTHING leaves it; DO UPDATE locks the row (FOR UPDATE), then updates it if DO UPDATE's
// WHERE holds. Returns whether the whole insert tries again: the row changed while it waited.
bool Postgres::on_conflict(SessionState& s, Table& t, const Statement& st, std::int64_t dup, const Values& values, Result& out,
                           std::set<std::int64_t>& touched) {
  const RowChain& row = t.rows.at(dup);
  const bool rc = s.txn->isolation == Isolation::read_committed || s.txn->isolation == Isolation::read_uncommitted;
  if (!rc && !sees(row.versions.back(), s.txn->xid, snapshot(s)))
    throw Failure{Code::serialization_failure, "could not serialize access due to concurrent update"};
  if (st.on_duplicate == OnDuplicate::ignore) return false;  // DO NOTHING
  if (touched.count(dup))
    throw Failure{Code::cardinality_violation, "ON CONFLICT DO UPDATE command cannot affect row a second time"};
  // DO UPDATE: lock the row (FOR UPDATE), then update it if DO UPDATE's WHERE holds.
  const std::size_t seen = newest(row, s.txn->xid);
  const Got got = acquire(s, LockKey{LockKey::Kind::row, &t, dup}, Mode::update, true, true, Statement::OnLocked::wait);
  const RowChain& locked = t.rows.at(dup);
  const std::size_t now = newest(locked, s.txn->xid);
  const Tuple& latest = locked.versions[now];
  if (got == Got::after_wait && (now != seen || (latest.xmax != 0 && latest.xmax != s.txn->xid && latest.xmax_commit != 0))) {
    if (!rc) throw Failure{Code::serialization_failure, "could not serialize access due to concurrent update"};
    return true;  // the row changed while it waited: the whole insert tries again
  }
  Values next = latest.values.to_values();
  if (const auto& where = st.more().conflict_where) {
    bool pass = false;
    try {
      pass = holds(*where, Scope{next, st.more().args, &values});
    } catch (const ExprError& e) {
      throw Failure{static_cast<Code>(e.code), e.message};
    }
    if (!pass) return false;
  }
  detail::assign(st, next, &values, Engine::postgresql);
  for (const auto& [c, v] : st.on_update) next[c] = v;
  detail::check_row(t.schema, Engine::postgresql, next);
  mark_deleted(s, t, dup);
  check_new_version(s, t, next);
  add_version(s, t, dup, next, nullptr);
  touched.insert(dup);
  ++out.affected;
  if (!st.more().returning.empty()) out.rows.push_back(row_of(dup, t.rows.at(dup).versions.back().values));
  return false;
}

Result Postgres::insert(SessionState& s, Table& t, const Statement& st) {
  Result out;
  std::set<std::int64_t> touched;
  insert_one(s, t, st, st.values, out, touched);
  for (const Values& row : st.more().more_rows) insert_one(s, t, st, row, out, touched);
  return out;
}

Result Postgres::insert_if_absent(SessionState& s, Table& t, const Statement& st, const StatementTiming& timing) {
  Statement read{.kind = Statement::Kind::select, .table = st.table, .where = st.where, .extra = st.extra};
  if (!select(s, t, read).empty()) return Result{};
  spend(timing.read_to_write);
  return insert(s, t, st);
}

}  // namespace models::db::postgres
