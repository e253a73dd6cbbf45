// PostgreSQL's model: the unique indexes' names and entries, and CREATE INDEX, built at once
// (models/db/postgres/heap.hpp, postgres.hpp).

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "models/db/postgres/postgres.hpp"

namespace models::db::postgres {

// --- Rows and versions -------------------------------------------------------

bool unique(const Table& t) { return !t.schema.key_column.empty() && t.schema.key_index == KeyIndex::unique; }

// PostgreSQL's name for a unique index: the constraint's, or <table>_pkey / <table>_<col>_key.
std::string index_name(const Table& t, const std::string& column) {
  if (column == "id") return t.schema.name + "_pkey";
  return t.schema.index_name.empty() ? t.schema.name + "_" + column + "_key" : t.schema.index_name;
}

std::string duplicate_message(const Table& t, const std::string& column) {
  return "duplicate key value violates unique constraint \"" + index_name(t, column) + "\"";
}

std::string duplicate_index_message(const IndexDef& index) {
  return "duplicate key value violates unique constraint \"" + index.name + "\"";
}

// --- Further indexes: on several columns, or partial -------------------------------

// A column an index names, in its columns or its WHERE, that the table lacks; nullopt: none.
std::optional<std::string> missing_column(const TableSchema& schema, const IndexDef& index) {
  std::optional<std::string> missing;
  const auto check = [&](const std::string& column) {
    if (!missing && column != "id" && column != schema.key_column && !schema.columns.count(column)) missing = column;
  };
  for (const std::string& column : index.columns) check(column);
  if (index.where) check_expr_columns(*index.where, check);
  return missing;
}

// What an entry of a further index costs the memory budget: the set's node and the key's
// values, as RowCosts::of_version counts a row's.
std::uint64_t entry_bytes(const IndexEntry& e) {
  std::uint64_t bytes = 64;
  for (const Value& v : e.key) bytes += sizeof(Value) + (std::holds_alternative<std::string>(v) ? std::get<std::string>(v).size() : 0);
  return bytes;
}

void add_entry(Table& t, std::size_t i, IndexEntry e, std::uint64_t& bytes) {
  const std::uint64_t size = entry_bytes(e);
  if (t.index_entries[i].insert(std::move(e)).second) bytes += size;
}

void erase_entry(Table& t, std::size_t i, const IndexEntry& e, std::uint64_t& bytes) {
  if (t.index_entries[i].erase(e) != 0) bytes -= entry_bytes(e);
}

// Whether a row other than `except` has a version holding `key` in index `i` that a dirty
// read finds live (load_row's and CREATE UNIQUE INDEX's check: no transaction runs).
bool any_live(const Table& t, std::size_t i, const std::vector<Value>& key, std::int64_t except) {
  for (auto it = t.index_entries[i].lower_bound(IndexEntry{key, std::numeric_limits<std::int64_t>::min()});
       it != t.index_entries[i].end() && it->key == key; ++it) {
    if (it->id == except) continue;
    const Tuple& latest = t.rows.at(it->id).versions.back();
    if (!(latest.xmax != 0 && latest.xmax_commit != 0) && key_in(t, i, latest.values) == key) return true;
  }
  return false;
}

// The ids of rows with a version holding `key` that is live to a dirty read: created by a
// committed or running transaction, not deleted by a committed one.
std::vector<std::int64_t> live_with_key(const Table& t, const Value& key) {
  std::vector<std::int64_t> out;
  if (is_null(key)) return out;  // NULLs are distinct: a NULL key conflicts with none
  for (auto it = t.entries.lower_bound(Entry{key, std::numeric_limits<std::int64_t>::min()}); it != t.entries.end() && it->key == key; ++it) {
    const RowChain& row = t.rows.at(it->id);
    const Tuple& latest = row.versions.back();
    if (latest.values.at(t.schema.key_column) == key && !(latest.xmax != 0 && latest.xmax_commit != 0)) out.push_back(it->id);
  }
  return out;
}

// CREATE [UNIQUE] INDEX on the key column, or a further index (on several columns, or
// partial), built at once. A unique one fails with 23505 where two live rows hold one key.
Result create_index(Table& t, const Statement& st, std::uint64_t& bytes) {
  const auto named = [&](const std::string& name) {
    return name == t.schema.index_name || std::any_of(t.schema.indexes.begin(), t.schema.indexes.end(),
                                                      [&](const IndexDef& x) { return x.name == name; });
  };
  if (named(st.index)) throw Failure{Code::duplicate_key_name, "relation \"" + st.index + "\" already exists"};
  // An index on another column than the key column's is a further one, as one on several
  // columns or a partial one is.
  const IndexDef* def = st.more().index_def.get();
  IndexDef other;
  if (def == nullptr && !t.schema.key_column.empty() && t.schema.key_column != st.column) {
    other = IndexDef{.name = st.index, .columns = {st.column}, .unique = st.unique};
    def = &other;
  }
  if (def != nullptr) {
    if (const auto column = missing_column(t.schema, *def)) throw Failure{Code::bad_field, "column \"" + *column + "\" does not exist"};
    t.schema.indexes.push_back(*def);
    t.index_entries.emplace_back();
    const std::size_t i = t.schema.indexes.size() - 1;
    sim::work(t.rows.size());
    for (const auto& [id, row] : t.rows)
      for (const Tuple& v : row.versions)
        if (auto key = key_in(t, i, v.values)) add_entry(t, i, IndexEntry{std::move(*key), id}, bytes);
    for (const auto& [id, row] : t.rows) {
      const Tuple& latest = row.versions.back();
      if (latest.xmax != 0 && latest.xmax_commit != 0) continue;
      if (const auto key = key_in(t, i, latest.values); key && any_live(t, i, *key, id)) {
        for (const IndexEntry& e : t.index_entries[i]) bytes -= entry_bytes(e);
        t.schema.indexes.pop_back();
        t.index_entries.pop_back();
        return Result{.code = Code::duplicate_key, .message = "could not create unique index \"" + st.index + "\""};
      }
    }
    return {};
  }
  if (st.unique) {
    std::map<Value, int> seen;
    for (const auto& [id, row] : t.rows) {
      const Tuple& latest = row.versions.back();
      if (latest.xmax != 0 && latest.xmax_commit != 0) continue;
      if (const Value& v = latest.values.at(st.column); !is_null(v) && ++seen[v] > 1)
        return Result{.code = Code::duplicate_key, .message = "could not create unique index \"" + st.index + "\""};
    }
  }
  if (t.schema.key_column.empty()) {
    t.schema.key_column = st.column;
    t.schema.key_text = std::holds_alternative<std::string>(t.schema.columns.at(st.column));
    t.schema.columns.erase(st.column);
    for (const auto& [id, row] : t.rows)
      for (const Tuple& v : row.versions) t.entries.insert(Entry{v.values.at(st.column), id});
  }
  if (st.unique || t.schema.key_index == KeyIndex::none) t.schema.key_index = st.unique ? KeyIndex::unique : KeyIndex::non_unique;
  t.schema.index_name = st.index;
  return {};
}

}  // namespace models::db::postgres
