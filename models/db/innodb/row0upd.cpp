// InnoDB's model: UPDATE and DELETE, and the entries an UPDATE moves (InnoDB's row0upd).

#include "models/db/innodb/innodb.hpp"

namespace models::db::innodb {

Result InnoDb::update(Txn& txn, Table& t, const Statement& s, bool remove) {
  if (!remove && (s.values.count("id") ||
                  std::any_of(s.more().assign.begin(), s.more().assign.end(), [](const auto& a) { return a.first == "id"; })))
    throw sim::UsageError("models::db: updating id is not modelled");
  Result out;
  // Whether it assigns a column of a secondary index (then each row's entries may move).
  const auto assigns = [&](const std::string& column) {
    return s.values.count(column) ||
           std::any_of(s.more().assign.begin(), s.more().assign.end(), [&](const auto& a) { return a.first == column; });
  };
  bool moves = !remove && !t.schema.key_column.empty() && assigns(t.schema.key_column);
  for (const std::string& column : t.schema.key_tail) moves |= !remove && assigns(column);
  for (const IndexDef& index : t.schema.indexes)
    for (const std::string& column : index.columns) moves |= !remove && assigns(column);
  std::vector<std::int64_t> found = locate_locked(txn, t, s, true, true);
  if (s.limit || !s.more().order_by.empty()) {
    std::vector<Row> rows;
    for (std::int64_t id : found) rows.push_back(row_of(id, current(*t.rows.at(id))->values));
    order_and_limit(s, Engine::mariadb, rows);
    found.clear();
    for (const Row& r : rows) found.push_back(r.id);
  }
  for (std::int64_t id : found) {
    const RowValues& old = current(*t.rows.at(id))->values;
    if (remove) {  // the delete-marked version keeps the row's columns, shared
      add_version(txn, t, id, Version{txn.id, 0, true, old});
      ++out.affected;
      continue;
    }
    Values next = old.to_values();
    for (const auto& [column, value] : s.values) {
      if (!next.count(column)) throw sim::UsageError("Unknown column '" + column + "' in 'field list'");
      next[column] = value;
    }
    assign(s, next, nullptr, Engine::mariadb);
    detail::check_row(t.schema, Engine::mariadb, next);
    assigned_id(txn, s, next);
    if (txn.statement->assigned_id) out.insert_id = *txn.statement->assigned_id;
    if (next == old.to_values()) continue;  // matched but unchanged: not counted
    if (moves) move_entries(txn, t, id, old, next);
    add_version(txn, t, id, Version{txn.id, 0, false, t.stored(next)});
    ++out.affected;
    if (moves && t.build && t.build->unique && !t.build->doomed_by)  // an online unique build meets the new key as an insert's
      if (auto key = key_of(t, next); key && !has_null(*key) && key != key_of(t, old) && entries_with(t, kKey, *key).size() > 1)
        t.build->doomed_by = key;
  }
  return out;
}

// An UPDATE of an indexed column, as InnoDB's row_upd_sec_index_entry: in each index whose
// key changes, the old entry is delete-marked (it stays until the commit: live_entry) and the
// new one inserted as an INSERT's is: a unique index is checked for a duplicate (S next-key on
// it, waiting for its writer, then 1062), an insert intention taken at its place, and the new
// entry X-locked by the updater (conformance update-indexed-*).
template <class Old>  // Values, or a stored row's RowValues
void InnoDb::move_entries(Txn& txn, Table& t, std::int64_t id, const Old& old, const Values& next) {
  for (const int index : secondary(t)) {
    std::optional<Key> key = key_of(t, index, next);
    if (!key || key == key_of(t, index, old)) continue;
    if (must_be_unique(t, index, key))
      for (Duplicate d{.waited = true}; d.waited;) {
        d = duplicate_of(txn, t, index, *key, id, false);
        if (d.id) {
          ++stats_.duplicate_keys;
          throw Failure{Code::duplicate_key, duplicate_in(t, index, *key)};
        }
      }
    lock(txn, t, index, insert_intention(Entry{*key, id}));
    Lock x = record_lock(Entry{std::move(*key), id}, true);
    x.txn = txn.id;
    x.granted = true;
    t.locks[static_cast<std::size_t>(index)].add(std::move(x));
  }
}

// An UPDATE's (from the stored row), and ON DUPLICATE KEY UPDATE's (row0ins.cpp, from its values).
template void InnoDb::move_entries(Txn&, Table&, std::int64_t, const RowValues&, const Values&);
template void InnoDb::move_entries(Txn&, Table&, std::int64_t, const Values&, const Values&);

// `c = LAST_INSERT_ID(expr)` in an UPDATE or ON DUPLICATE KEY UPDATE: the row's new `c`
// becomes the session's LAST_INSERT_ID() (when the statement succeeds) and the statement's
// insert id; the last row's, for an UPDATE of several.
void InnoDb::assigned_id(Txn& txn, const Statement& s, const Values& row) {
  const std::string& column = s.more().sets_last_insert_id;
  if (column.empty()) return;
  const Value& v = row.at(column);
  txn.statement->assigned_id = is_null(v) ? 0 : as_number(v);
}

}  // namespace models::db::innodb
