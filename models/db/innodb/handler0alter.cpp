// InnoDB's model: online ALTER TABLE ... ADD [UNIQUE] INDEX and DROP INDEX (InnoDB's
// handler0alter; docs/sql.md, Online ALTER).

#include "models/db/innodb/innodb.hpp"

namespace models::db::innodb {

// The smallest key two live rows of `t` hold, as a unique build's scan finds it first.
std::optional<Key> InnoDb::smallest_duplicate(const Table& t) const {
  sim::work(t.entries.size());  // an index build reads every entry
  std::optional<Key> last;
  for (const StoredEntry& stored : t.entries) {
    const Entry e = stored.entry();
    if (!live_entry(t, kKey, e) || has_null(e.key)) continue;  // a key holding a NULL is never a duplicate
    if (last && *last == e.key) return e.key;
    last = e.key;
  }
  return std::nullopt;
}

// ALTER TABLE ... ADD [UNIQUE] INDEX / DROP INDEX, as MariaDB 10.11 runs them online
// (ALGORITHM=INPLACE, LOCK=NONE; docs/sql.md, Online ALTER): one ALTER on a table at a time
// (the metadata lock; the waits behind open transactions are not modelled); a unique build
// on a table holding a duplicate fails at once with the smallest; otherwise the build takes
// index_build_per_row per row while other sessions write without waiting, and fails at its
// end if one of them inserted a key another row held.
Result InnoDb::alter(Table& t, const Statement& st) {
  if (t.schema.clustered_key)
    throw sim::UsageError("models::db: ALTER TABLE of " + t.schema.name + " is not modelled: its primary key is not id");
  if (!t.schema.indexes.empty())
    throw sim::UsageError("models::db: ALTER TABLE of " + t.schema.name + " is not modelled: it has more than one secondary index");
  if (t.build) {
    sim::Promise<bool> turn("metadata lock on " + t.schema.name);
    sim::Future<bool> mine = turn.get_future();
    t.ddl_waiters.push_back(std::move(turn));
    mine.get();
  }
  if (st.kind == Statement::Kind::drop_index) {
    const Result out = drop_index(t, st);
    t.build.reset();
    next_alter(t);
    return out;
  }
  t.build = Table::Build{.unique = st.unique};
  Result out;
  try {
    out = add_index(t, st);
  } catch (...) {
    t.build.reset();
    next_alter(t);
    throw;
  }
  t.build.reset();
  next_alter(t);
  return out;
}

// The metadata lock passes to the next ALTER waiting on the table.
void InnoDb::next_alter(Table& t) {
  if (t.ddl_waiters.empty()) return;
  t.build = Table::Build{};  // held for it until it starts
  sim::Promise<bool> next = std::move(t.ddl_waiters.front());
  t.ddl_waiters.pop_front();
  next.set_value(true);
}

// A table created without an index gets its key columns from its first ADD INDEX: every
// version of every row gets its entry. The columns keep their defaults in `columns`.
void InnoDb::become_key_columns(Table& t, const std::vector<std::string>& columns) {
  for (const std::string& column : columns)
    if (!t.schema.columns.count(column))
      throw sim::UsageError("models::db: Key column '" + column + "' doesn't exist in table");
  t.schema.key_column = columns.front();
  t.schema.key_text = std::holds_alternative<std::string>(t.schema.columns.at(columns.front()));
  t.schema.key_tail.assign(columns.begin() + 1, columns.end());
  sim::work(t.rows.size());
  for (const auto& [id, row] : t.rows)
    for (const Version& v : row->versions()) t.entries.insert(StoredEntry(Entry{*key_of(t, v.values), id}));
}

Result InnoDb::drop_index(Table& t, const Statement& st) {
  if (!t.covered_plain.empty() && st.index == t.covered_plain) {
    t.covered_plain.clear();
    return {};
  }
  if (!t.covered_plain.empty() && indexed(t) && index_name(t) == st.index) {  // the plain one is back in use
    t.schema.key_index = KeyIndex::non_unique;
    t.schema.index_name = std::exchange(t.covered_plain, {});
    return {};
  }
  if (!indexed(t) || index_name(t) != st.index)
    return Result{.code = Code::no_such_index, .message = "Can't DROP INDEX `" + st.index + "`; check that it exists"};
  // The entries stay (the model keeps them for every key column) and so do the locks on
  // them, until their transactions end.
  t.schema.key_index = KeyIndex::none;
  return {};
}

Result InnoDb::add_index(Table& t, const Statement& st) {
  if ((indexed(t) && index_name(t) == st.index) || st.index == t.covered_plain)
    return Result{.code = Code::duplicate_key_name, .message = "Duplicate key name '" + st.index + "'"};
  const std::vector<std::string> columns = st.more().index_def ? st.more().index_def->columns : std::vector<std::string>{st.column};
  // A unique index over a plain one on the same columns (the fix of a legacy table) is
  // modelled as the unique one taking the plain one's place once built.
  const bool over_plain = st.unique && t.covered_plain.empty() && t.schema.key_index == KeyIndex::non_unique &&
                          columns == t.schema.key_columns();
  if ((indexed(t) && !over_plain) || (!t.schema.key_column.empty() && columns != t.schema.key_columns()))
    throw sim::UsageError("models::db: an index on " + t.schema.name + "." + st.column +
                          " is not modelled: a table has at most one secondary index, on its key columns (" +
                          (indexed(t) ? "it has " + index_name(t) : t.schema.key_column) + ")");
  const bool new_key_column = t.schema.key_column.empty();
  if (new_key_column) become_key_columns(t, columns);
  // A failed build leaves the table as it was.
  const auto fail = [&](const Key& dup) {
    if (new_key_column) {
      t.schema.key_column.clear();
      t.schema.key_tail.clear();
      t.entries.clear();
    }
    ++stats_.duplicate_keys;
    return Result{.code = Code::duplicate_key, .message = duplicate_message(dup, st.index)};
  };
  if (st.unique)
    if (auto dup = smallest_duplicate(t)) return fail(*dup);
  spend(config.index_build_per_row * live_rows(t));
  if (st.unique) {
    std::optional<Key> dup = t.build->doomed_by;
    if (!dup) dup = smallest_duplicate(t);
    if (dup) return fail(*dup);
  }
  if (over_plain) t.covered_plain = index_name(t);
  t.schema.key_index = st.unique ? KeyIndex::unique : KeyIndex::non_unique;
  t.schema.index_name = st.index;
  return {};
}

}  // namespace models::db::innodb
