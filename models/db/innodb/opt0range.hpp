#pragma once
// InnoDB's model: the access path a statement's WHERE gives, and the optimizer's weighing of a
// search against a scan (MariaDB's sql/opt_range.cc; docs/sql.md, "Which index a statement
// uses"): opt0cond.cpp reads the points and ranges the WHERE's conditions hold an index's
// columns to, opt0range.cpp chooses the path and counts what it visits. Functions of a table and
// a statement alone. Internal to models/db/innodb.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/db/innodb/row0vers.hpp"

namespace models::db::innodb {

// One range of an index's keys: [lo, hi], each end open or closed, or absent (unbounded).
struct Range {
  std::optional<Value> lo{}, hi{};
  bool lo_closed = true, hi_closed = true;
  bool contains_above_lo(const Value& v) const { return !lo || (lo_closed ? v >= *lo : v > *lo); }
  bool below_hi(const Value& v) const { return !hi || (hi_closed ? v <= *hi : v < *hi); }
  /// The one value of `[v, v]` (`k BETWEEN 'd' AND 'd'`), which the server reads as `k = v`.
  std::optional<Value> point() const {
    if (lo && hi && lo_closed && hi_closed && *lo == *hi) return lo;
    return std::nullopt;
  }
};

// The access path a WHERE clause gives, as docs/sql.md describes the model's choice:
// `id = v`, then `key = v` (a point on the primary key, or the key index's first columns
// fixed to one value each); `id IN (...)` (points on the primary key); `key IN (...)`
// (points on the key index, each searched as `key = v`; `key = v OR key = w` is the same
// list); `key = v OR id = w` (both indexes searched, the rows merged); a range of id, then of
// the key's first column (from <, <=, >, >= and BETWEEN; one of a single value is a point);
// else a scan of the clustered index.
struct Path {
  int index = kPrimary;
  std::optional<Key> key{};       // a point: an id, or a prefix of the key index's keys
  enum class By { point_or_scan, points, ranges, merged } by = By::point_or_scan;
  std::vector<Value> points{};    // By::points: points of `index` (ids, or values of a secondary index's next column), in order, each once
  std::vector<Range> ranges{};    // By::ranges: ranges of `index`, in order
  // Points and ranges on a secondary index: its first columns held, each prefix followed by
  // every point or range of the next column, prefixes in order, never none (`merchant IN (1,
  // 2) AND request = 'a'`: prefixes (1), (2), point 'a').
  boost::container::small_vector<Key, 1> prefixes{Key{}};  // (inline: a path is made for every search)
  std::vector<Path> parts{};      // By::merged: the paths whose rows are merged, in the order they are read
};

// --- Choosing the path (opt0range.cpp) ----------------------------------------

Path path_for(const Table& t, const Statement& s);
Path weighed_path(const Table& t, const Statement& s);
std::pair<int, std::size_t> path_cost(const Table& t, const Path& p);
inline bool finds_one(const Table& t, const Path& p) {
  return p.by == Path::By::point_or_scan && p.key->size() >= width(t, p.index) && unique_index(t, p.index) && !has_null(*p.key);
}
constexpr std::size_t kMostCounted = 1000;
bool costs_more_than_scan(const Table& t, const Statement& s, const Path& p);
std::vector<std::string> extended_columns(const Table& t, int index);
bool covers(const std::vector<std::string>& columns, const Statement& s);
template <class Has>
bool reads_only(const Expr& e, const Has& has) {
  if (e.kind == Expr::Kind::column && !has(e.column)) return false;
  return std::all_of(e.args.begin(), e.args.end(), [&](const Expr& a) { return reads_only(a, has); });
}
std::size_t entries_visited(const Table& t, const Path& p, std::size_t most);
Path path_on(const Table& t, const Statement& s, int index);
Path prefix_path(const Table& t, int index, const Statement& s, boost::container::small_vector<Key, 1> prefixes);
constexpr std::size_t kMostPrefixes = 1024;
boost::container::small_vector<Key, 1> joined(const boost::container::small_vector<Key, 1>& prefixes, const std::vector<Value>& values);
// The entries a search by `p` visits, in index order.
std::vector<Entry> visited(const Table& t, const Path& p);

// --- What the WHERE's conditions hold columns to (opt0cond.cpp) ---------------

std::optional<std::vector<Value>> held_values(const Statement& s, const std::string& column);
std::optional<Key> key_prefix(const std::vector<std::string>& columns, const Statement& s, bool folded_first);
bool is_null_term(const Statement& s, const std::string& column);
std::optional<std::vector<Value>> in_list(const Statement& s, const std::string& column);
std::optional<std::vector<Value>> listed(const Expr& e, const Statement& s, const std::string& column);
std::optional<Path> index_merge(const Table& t, const Statement& s);
// What an index merge searches: each index's points and ranges.
struct Merge {
  std::vector<Value> ids, keys;
  std::vector<Range> id_ranges, key_ranges;
};
bool merge_branches(const Expr& e, const Statement& s, const std::string& key_column, bool text, Merge& m);
std::optional<Range> branch_range(const Expr& e, const Statement& s, const std::string& column, bool text);
std::size_t rows_in(const Table& t, int index, const Range& r, std::size_t most);
std::optional<Value> folded_point(const Statement& s, const std::string& column);
std::optional<Value> constant_of(const Expr& e, const Statement& s);
bool holds_text(const Table& t, const std::string& column);
std::optional<std::pair<std::string, bool>> like_prefix(const std::string& pattern);
bool bound_by(const Expr& e, const Statement& s, const std::string& column, bool text, Range& r);
std::optional<Range> range_of(const Statement& s, const std::string& column, bool text = false);
// Whether the WHERE bounds `column`: holds it to values or to a range.
inline bool bounds(const Statement& s, const std::string& column, bool text) {
  return held_values(s, column) || range_of(s, column, text);
}

// --- What a search reads in order, and checks on an index's entries (row0sel.cpp) ---

bool reads_in_order(const Table& t, const Path& p, const Statement& s);
std::optional<IndexCondition> pushed_condition(const Table& t, const Path& p, const Statement& where);
Values entry_row(const std::vector<std::string>& columns, const Entry& e);

}  // namespace models::db::innodb
