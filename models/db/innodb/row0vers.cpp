// InnoDB's model: rows and their versions, what a read view sees, and the live entries of an
// index read from its rows (InnoDB's row0vers, read0read).

#include "models/db/innodb/innodb.hpp"

namespace models::db::innodb {

Table& InnoDb::table(const std::string& name) {
  auto it = tables.find(name);
  if (it == tables.end()) throw sim::UsageError("models::db: no table '" + name + "'");
  return it->second;
}

// The version a list of committed rows shows of a row: its latest committed one (ever: its
// first committed one), unless that one deletes it.
const Version* shown(const RowData& row, bool ever) {
  const Version* v = nullptr;
  if (!ever) {
    v = latest_committed(row);
  } else {
    const auto versions = row.versions();
    const auto first = std::find_if(versions.begin(), versions.end(), [](const Version& x) { return x.commit != 0; });
    if (first != versions.end()) v = &*first;
  }
  return v != nullptr && !v->deleted ? v : nullptr;
}

void InnoDb::visit_rows(const Table& t, bool ever, const RowVisitor& visit) const {
  for (const auto& [id, row] : t.rows)
    if (const Version* v = shown(*row, ever)) visit(id, v->values, origins(row->origin));
}

// The part of a secondary index's key that a unique index holds unique: its own columns.
Key unique_part(const Table& t, int index, Key key) {
  key.resize(width(t, index));
  return key;
}

// A row's record in the clustered index (its current version's key, on a clustered key).
Entry record_of(const Table& t, std::int64_t id) {
  if (!t.schema.clustered_key) return primary_entry(id);
  return Entry{*key_of(t, current(*t.rows.at(id))->values), id};
}

// The secondary indexes searches and inserts use, in the order MariaDB keeps a table's keys
// (sort_keys): unique ones whose columns are all NOT NULL, other unique ones, then plain ones,
// each kind in the order the table declares them. An insert checks for duplicates in this
// order, and ON DUPLICATE KEY UPDATE updates the first row found (conformance
// second-index-upsert-order).
boost::container::small_vector<int, 2> secondary(const Table& t) {
  boost::container::small_vector<int, 2> out;
  if (indexed(t)) out.push_back(kKey);
  if (t.schema.indexes.empty()) return out;
  for (std::size_t i = 0; i < t.schema.indexes.size(); ++i) out.push_back(kExtra + static_cast<int>(i));
  const auto kind = [&](int index) {
    if (!unique_index(t, index)) return 2;
    const std::vector<std::string> columns = columns_of(t, index);
    return std::any_of(columns.begin(), columns.end(), [&](const std::string& c) { return t.schema.may_be_null(c); }) ? 1 : 0;
  };
  std::stable_sort(out.begin(), out.end(), [&](int a, int b) { return kind(a) < kind(b); });
  return out;
}

// A secondary index's columns, in order (on a clustered key's table, a further index's end
// with the primary key's: key_of).
std::vector<std::string> columns_of(const Table& t, int index) {
  if (index == kKey) return t.schema.key_columns();
  std::vector<std::string> columns = t.schema.indexes[static_cast<std::size_t>(index - kExtra)].columns;
  if (t.schema.clustered_key) {
    const std::vector<std::string> key = t.schema.key_columns();
    columns.insert(columns.end(), key.begin(), key.end());
  }
  return columns;
}

// Whether a row with `key` must be alone with it in a secondary index: the index is unique,
// and the key holds no NULL (a unique index admits any number of NULLs, as both servers' do).
bool must_be_unique(const Table& t, int index, const std::optional<Key>& key) {
  if (!key || (index == kKey && !indexed(t)) || !unique_index(t, index)) return false;
  const auto own = key->begin() + static_cast<std::ptrdiff_t>(std::min(key->size(), width(t, index)));
  return std::none_of(key->begin(), own, [](const Value& v) { return is_null(v); });
}

// Whether `index` has the entry `e` now: its row is live and, on a secondary index, its
// current version holds that key.
// An UPDATE that changed the key leaves the old entry there, delete-marked, until it commits
// (purge is not modelled past that): every version from the latest committed one on holds
// its entry.
bool live_entry(const Table& t, int index, const Entry& e) {
  auto it = t.rows.find(e.id);
  if (it == t.rows.end() || !live(*it->second)) return false;
  if (index == kPrimary || key_of(t, index, current(*it->second)->values) == e.key) return true;
  const auto versions = it->second->versions();
  for (auto v = versions.rbegin(); v != versions.rend(); ++v) {
    if (key_of(t, index, v->values) == e.key) return true;
    if (v->commit != 0) break;
  }
  return false;
}

// Whether the row of a secondary index's entry holds its key now (not only a delete-marked
// entry an uncommitted UPDATE left).
bool holds_key(const Table& t, int index, const Entry& e) {
  const Version* v = current(*t.rows.at(e.id));
  return !v->deleted && key_of(t, index, v->values) == e.key;
}

// The live entry just below `position` in `index`, if any (nullopt: the infimum).
std::optional<Entry> before(const Table& t, int index, const Entry& position) {
  if (index == kPrimary) {
    for (auto it = t.rows.lower_bound(position.id); it != t.rows.begin();) {
      --it;
      if (live(*it->second)) return primary_entry(it->first);
    }
    return std::nullopt;
  }
  const auto& entries = entries_of(t, index);
  for (auto it = entries.lower_bound(position); it != entries.begin();) {
    --it;
    if (Entry e = it->entry(); live_entry(t, index, e)) return e;
  }
  return std::nullopt;
}

// The live entry just above `position` in `index`, if any (nullopt: the supremum).
std::optional<Entry> after(const Table& t, int index, const Entry& position) {
  if (index == kPrimary) {
    for (auto it = t.rows.upper_bound(position.id); it != t.rows.end(); ++it)
      if (live(*it->second)) return primary_entry(it->first);
    return std::nullopt;
  }
  const auto& entries = entries_of(t, index);
  for (auto it = entries.upper_bound(position); it != entries.end(); ++it)
    if (Entry e = it->entry(); live_entry(t, index, e)) return e;
  return std::nullopt;
}

// A secondary index's live entries whose key begins with `prefix` (all its columns: that
// key's entries, in id order), in index order.
std::vector<Entry> entries_with(const Table& t, int index, const Key& prefix) {
  std::vector<Entry> out;
  const auto& entries = entries_of(t, index);
  for (auto it = entries.lower_bound(Entry{prefix, kBeforeAll}); it != entries.end() && it->begins_with(prefix); ++it)
    if (Entry e = it->entry(); live_entry(t, index, e)) out.push_back(std::move(e));
  return out;
}

// The first live entry of a secondary index past those whose key begins with `prefix`
// (nullopt: the supremum).
std::optional<Entry> after_prefix(const Table& t, int index, const Key& prefix) {
  const auto& entries = entries_of(t, index);
  auto it = entries.lower_bound(Entry{prefix, kBeforeAll});
  while (it != entries.end() && it->begins_with(prefix)) ++it;
  for (; it != entries.end(); ++it)
    if (Entry e = it->entry(); live_entry(t, index, e)) return e;
  return std::nullopt;
}

std::uint64_t InnoDb::read_view(Txn& txn) {
  if (!gap_locking(txn.isolation)) return commits;  // a fresh view per statement (READ UNCOMMITTED: none)
  if (!txn.view) txn.view = commits;
  return *txn.view;
}

}  // namespace models::db::innodb
