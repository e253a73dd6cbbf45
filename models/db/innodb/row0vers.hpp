#pragma once
// InnoDB's model: rows and their versions, what a read view sees, and a table's indexes as read
// from its rows: their keys and names, and the live entries of each (InnoDB's row0vers,
// read0read, and the index metadata of dict0dict). Functions of a table alone, defined in
// row0vers.cpp; the optimizer (opt0range.hpp) and the engine (innodb.hpp) read through them.
// Internal to models/db/innodb.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/db/innodb/types.hpp"

namespace models::db::innodb {

inline const Version* current(const RowData& row) { return row.versions().empty() ? nullptr : &row.versions().back(); }
inline const Version* latest_committed(const RowData& row) {
  const auto versions = row.versions();
  for (auto it = versions.rbegin(); it != versions.rend(); ++it)
    if (it->commit != 0) return &*it;
  return nullptr;
}
// The version a list of committed rows shows of a row: its latest committed one (ever: its
// first committed one), unless that one deletes it.
const Version* shown(const RowData& row, bool ever);
// The version a transaction's read view `view` sees.
inline const Version* visible(const RowData& row, const Txn& txn, std::uint64_t view) {
  if (txn.isolation == Isolation::read_uncommitted) return current(row);  // dirty reads
  const auto versions = row.versions();
  for (auto it = versions.rbegin(); it != versions.rend(); ++it)
    if (it->txn == txn.id || (it->commit != 0 && it->commit <= view)) return &*it;
  return nullptr;
}
// Which of its writer's versions of the row `v` is, counting those that delete nothing, from 0
// (what History::read names it by).
inline std::size_t ordinal(const RowData& row, const Version& v) {
  std::size_t n = 0;
  for (const Version& other : row.versions()) {
    if (&other == &v) return n;
    n += other.txn == v.txn && !other.deleted;
  }
  return n;
}

// A row the indexes still have entries for: not deleted by a committed delete (purge is
// not modelled: a committed delete takes the entries away at once).
inline bool live(const RowData& row) {
  const Version* v = current(row);
  return v != nullptr && !(v->deleted && v->commit != 0);
}

// A row's key in the key index: the values of its columns, in the index's order.
template <class Row>  // Values, or a stored row's RowValues
std::optional<Key> key_of(const Table& t, const Row& v) {
  if (t.schema.key_column.empty()) return std::nullopt;
  Key key{v.at(t.schema.key_column)};
  for (const std::string& column : t.schema.key_tail) key.push_back(v.at(column));
  return key;
}
// A row's key in a secondary index: the key index's, or a further one's.
// On a table whose primary key is the key index (clustered_key), a further index's entries end
// with the primary key's columns, as InnoDB's do: they order the rows of one key, and a search
// may hold them too (MariaDB's extended keys; conformance natural-key-second-index-*).
template <class Row>
std::optional<Key> key_of(const Table& t, int index, const Row& v) {
  if (index == kKey) return key_of(t, v);
  Key key;
  for (const std::string& column : t.schema.indexes[static_cast<std::size_t>(index - kExtra)].columns) key.push_back(v.at(column));
  if (t.schema.clustered_key) {
    key.push_back(v.at(t.schema.key_column));
    for (const std::string& column : t.schema.key_tail) key.push_back(v.at(column));
  }
  return key;
}
// The part of a secondary index's key that a unique index holds unique: its own columns.
Key unique_part(const Table& t, int index, Key key);
// The index whose entries are the rows' records: the primary key of ids, or the key index of a
// table keyed by other columns (clustered_key).
inline int clustered(const Table& t) { return t.schema.clustered_key ? kKey : kPrimary; }
// A row's record in the clustered index (its current version's key, on a clustered key).
Entry record_of(const Table& t, std::int64_t id);
inline const std::string& index_name(const Table& t) {
  return t.schema.index_name.empty() ? t.schema.key_column : t.schema.index_name;
}
inline const std::string& index_name(const Table& t, int index) {
  return index == kKey ? index_name(t) : t.schema.indexes[static_cast<std::size_t>(index - kExtra)].name;
}
inline bool indexed(const Table& t) { return !t.schema.key_column.empty() && t.schema.key_index != KeyIndex::none; }
// The secondary indexes searches and inserts use, in the order MariaDB keeps a table's keys.
boost::container::small_vector<int, 2> secondary(const Table& t);
// How many columns a secondary index has.
inline std::size_t width(const Table& t, int index) {
  return index == kKey ? 1 + t.schema.key_tail.size() : t.schema.indexes[static_cast<std::size_t>(index - kExtra)].columns.size();
}
// A secondary index's columns, in order.
std::vector<std::string> columns_of(const Table& t, int index);
inline bool unique_index(const Table& t, int index) {
  return index == kKey ? t.schema.key_index == KeyIndex::unique : t.schema.indexes[static_cast<std::size_t>(index - kExtra)].unique;
}
inline const absl::btree_set<StoredEntry, EntryOrder>& entries_of(const Table& t, int index) {
  return index == kKey ? t.entries : t.more_entries[static_cast<std::size_t>(index - kExtra)];
}
inline absl::btree_set<StoredEntry, EntryOrder>& entries_of(Table& t, int index) {
  return index == kKey ? t.entries : t.more_entries[static_cast<std::size_t>(index - kExtra)];
}
// Whether a unique index must refuse a second entry of `key` (a key with a NULL never does).
bool must_be_unique(const Table& t, int index, const std::optional<Key>& key);
inline std::string duplicate_in(const Table& t, int index, const Key& key) {
  return duplicate_message(unique_part(t, index, key), index_name(t, index));
}

// Whether an entry of `index` is there now: its row is live and holds its key.
bool live_entry(const Table& t, int index, const Entry& e);
// Whether the row of a secondary index's entry holds its key now.
bool holds_key(const Table& t, int index, const Entry& e);

// The live entry just below (above) `position` in `index`, if any (nullopt: the infimum, the supremum).
std::optional<Entry> before(const Table& t, int index, const Entry& position);
std::optional<Entry> after(const Table& t, int index, const Entry& position);

// A secondary index's live entries whose key begins with `prefix`, in index order; the first
// live entry past them.
std::vector<Entry> entries_with(const Table& t, int index, const Key& prefix);
std::optional<Entry> after_prefix(const Table& t, int index, const Key& prefix);

// The first (last) live entry of `index`.
std::optional<Entry> first_entry(const Table& t, int index);
std::optional<Entry> last_entry(const Table& t, int index);

inline std::int64_t live_rows(const Table& t) {
  return std::count_if(t.rows.begin(), t.rows.end(), [](const auto& r) { return live(*r.second); });
}

}  // namespace models::db::innodb
