#pragma once
// PostgreSQL's heap in the model: a table's rows, each a chain of versions (tuples) with their
// creator and deleter, and the indexes' entries; what a snapshot sees of a row
// (heapam_visibility.cpp) and what the unique indexes hold (index.cpp). Internal to
// models/db/postgres (docs/sql.md, "PostgreSQL").

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "models/db/database.hpp"
#include "models/db/rows.hpp"

namespace models::db::postgres {

using detail::Failure;
using Xid = std::uint64_t;

// One version of a row: who created it and who deleted or replaced it, with their commits
// (0 while open) in the order commits happened.
struct Tuple {
  Xid xmin = 0;
  std::uint64_t xmin_commit = 0;
  Xid xmax = 0;
  std::uint64_t xmax_commit = 0;
  RowValues values;
};

struct RowChain {
  std::vector<Tuple> versions;  // oldest first; the last is the latest
  detail::Origins::Stored origin;
};

// A (key, id) entry of the unique or plain index on the key column: every key a version of the
// row holds, kept while one does.
struct Entry {
  Value key{};
  std::int64_t id = 0;
  auto operator<=>(const Entry&) const = default;
};

// An entry of a further unique index (TableSchema::indexes): the values of its columns in a
// version of the row, kept while a version holds them.
struct IndexEntry {
  std::vector<Value> key{};
  std::int64_t id = 0;
  auto operator<=>(const IndexEntry&) const = default;
};

struct Table {
  TableSchema schema;
  std::map<std::int64_t, RowChain> rows;
  std::set<Entry> entries;
  std::vector<std::set<IndexEntry>> index_entries;  // by the place of the index in schema.indexes
  std::int64_t next_id = 1;  // the sequence of a SERIAL or IDENTITY id
  RowValues::Shape shape{};  // the column names its rows' values share
  RowValues stored(const Values& values) { return RowValues(values, shape); }
};

// --- Keys and the unique indexes (index.cpp) ------------------------------------------------

bool unique(const Table& t);
std::string index_name(const Table& t, const std::string& column);
std::string duplicate_message(const Table& t, const std::string& column);
std::string duplicate_index_message(const IndexDef& index);
std::optional<std::string> missing_column(const TableSchema& schema, const IndexDef& index);
std::uint64_t entry_bytes(const IndexEntry& e);
bool any_live(const Table& t, std::size_t i, const std::vector<Value>& key, std::int64_t except = 0);
std::vector<std::int64_t> live_with_key(const Table& t, const Value& key);
// An entry of a further index added or taken away, `bytes` the memory budget's count.
void add_entry(Table& t, std::size_t i, IndexEntry e, std::uint64_t& bytes);
void erase_entry(Table& t, std::size_t i, const IndexEntry& e, std::uint64_t& bytes);
// CREATE [UNIQUE] INDEX (index.cpp).
Result create_index(Table& t, const Statement& st, std::uint64_t& bytes);

template <class Row>  // Values, or a stored row's RowValues
std::optional<Value> key_of(const Table& t, const Row& v) {
  if (t.schema.key_column.empty()) return std::nullopt;
  return v.at(t.schema.key_column);
}

template <class Check>
void check_expr_columns(const Expr& e, const Check& check) {
  if (e.kind == Expr::Kind::column) check(e.column);
  for (const Expr& a : e.args) check_expr_columns(a, check);
}

// The values a version has in the table's further index `i`: nullopt where the index is
// plain, or partial and its WHERE is not true of the version, or one of them is NULL.
template <class Row>
std::optional<std::vector<Value>> key_in(const Table& t, std::size_t i, const Row& v) {
  const IndexDef& index = t.schema.indexes[i];
  if (!index.unique) return std::nullopt;
  if (index.where) {
    static const std::vector<Value> kNoArgs;
    try {
      if (!holds(*index.where, Scope{v, kNoArgs})) return std::nullopt;
    } catch (const ExprError& e) {
      throw Failure{static_cast<Code>(e.code), e.message};
    }
  }
  std::vector<Value> key;
  key.reserve(index.columns.size());
  for (const std::string& column : index.columns) {
    if (is_null(v.at(column))) return std::nullopt;  // NULLs are distinct: such a row conflicts with none
    key.push_back(v.at(column));
  }
  return key;
}

// The entries a version (of row `id`) has in the further indexes.
template <class Row>
void add_index_entries(Table& t, std::int64_t id, const Row& v, std::uint64_t& bytes) {
  for (std::size_t i = 0; i < t.schema.indexes.size(); ++i)
    if (auto key = key_in(t, i, v)) add_entry(t, i, IndexEntry{std::move(*key), id}, bytes);
}

// --- What a snapshot sees (heapam_visibility.cpp) ----------------------------------------

const Tuple* shown(const RowChain& row, bool ever);
bool sees(const Tuple& v, Xid me, std::uint64_t snap);
std::optional<std::size_t> visible(const RowChain& row, Xid me, std::uint64_t snap);
std::size_t newest(const RowChain& row, Xid me);

}  // namespace models::db::postgres
