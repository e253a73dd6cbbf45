// InnoDB's model: the access path a statement's WHERE gives, and the optimizer's weighing of a
// search against a scan (MariaDB's sql/opt_range.cc; docs/sql.md, "Which index a statement uses").

#include "models/db/innodb/innodb.hpp"

namespace models::db::innodb {

Path path_for(const Table& t, const Statement& s) {
  Path p = weighed_path(t, s);
  if (costs_more_than_scan(t, s, p)) {
    // A search after an equality on the index's first columns becomes the lookup of those
    // columns alone (MariaDB's ref access, which its optimizer weighs by another rule), the
    // rest of the search an index condition (pushed_condition); another, a scan.
    if (p.by != Path::By::point_or_scan && p.prefixes.size() == 1 && !p.prefixes.front().empty())
      p = Path{p.index, std::move(p.prefixes.front())};
    else
      p = Path{kPrimary, std::nullopt};
  }
  // A table keyed by other columns is scanned in its primary key's order (clustered_key).
  if (t.schema.clustered_key && p.index == kPrimary && p.by == Path::By::point_or_scan && !p.key)
    return Path{.index = kKey, .by = Path::By::ranges, .ranges = {Range{}}};
  return p;
}

Path weighed_path(const Table& t, const Statement& s) {
  if (t.schema.indexes.empty()) return path_on(t, s, kKey);
  // Several secondary indexes: each weighed as if it were the only one. Those that beat the
  // primary key's paths are searched as MariaDB's optimizer weighs them by the rows it
  // counts in each (its index dives): a unique search of a whole key first, then the fewest
  // entries visited, then the first in MariaDB's order of keys (secondary; conformance
  // second-index-*). None: the
  // primary key's path, the same whichever index it was weighed against.
  std::optional<Path> best, primary;
  std::pair<int, std::size_t> best_cost{};
  for (const int index : secondary(t)) {
    Path p = path_on(t, s, index);
    if (p.index == kPrimary) {  // (an index merge of the key index and the primary key before the others)
      if (!primary || p.by == Path::By::merged) primary = std::move(p);
      continue;
    }
    const std::pair<int, std::size_t> cost = path_cost(t, p);
    if (!best || cost < best_cost) best = std::move(p), best_cost = cost;
  }
  return best ? std::move(*best) : std::move(*primary);
}

// How a search by `p` of a secondary index is weighed: 0 for a unique search of a whole key,
// 1 otherwise, then the live entries it visits (counted up to kMostCounted).
std::pair<int, std::size_t> path_cost(const Table& t, const Path& p) {
  if (finds_one(t, p)) return {0, 1};
  return {1, entries_visited(t, p, kMostCounted + 1)};
}

// Whether MariaDB scans the clustered index rather than search a secondary index by `p`, as
// its range optimizer weighs them (sql/opt_range.cc, MariaDB 10.11): each entry the search
// finds costs a lookup of its row and a comparison, 1.2, each range or point searched 0.125
// more, and 0.01; the scan costs 0.2 a row and 3.1 (a table whose statistics count one page,
// as a table just filled has). A search that costs no less than the scan is not made:
// measured with EXPLAIN on tables of 4 to 3,000 rows, the server searched a range of r rows
// of n exactly where 6r < n + 15.5 (conformance scan-instead-*). A search is kept whatever
// it costs where a LIMIT asks for fewer rows than the table has, or where the index holds
// every column a SELECT reads (its list, WHERE and ORDER BY: a covering index); and a lookup
// of the index's first columns is kept where the WHERE also bounds the column after them,
// which the optimizer weighs by another rule (conformance scan-instead-ref-*).
bool costs_more_than_scan(const Table& t, const Statement& s, const Path& p) {
  if (p.index == kPrimary || p.index == clustered(t) || p.by == Path::By::merged || finds_one(t, p)) return false;
  const std::size_t rows = t.rows.size();
  if (s.limit && static_cast<std::uint64_t>(s.offset) + static_cast<std::uint64_t>(*s.limit) < rows) return false;
  const std::vector<std::string> columns = extended_columns(t, p.index);
  if (covers(columns, s)) return false;
  std::size_t searches = 1;
  if (p.by == Path::By::points) searches = p.prefixes.size() * p.points.size();
  if (p.by == Path::By::ranges) searches = p.prefixes.size() * p.ranges.size();
  // A lookup of the index's first columns where the WHERE also bounds the next: the server
  // weighed the search of both (a range, which it may leave), then looks up the first alone.
  if (p.by == Path::By::point_or_scan && p.key->size() < columns.size() && bounds(s, columns[p.key->size()], holds_text(t, columns[p.key->size()])))
    return false;
  // In two-hundredths: the search costs 240 an entry, 25 a search and 2; the scan 40 a row
  // and 620. Entries are counted only as far as that decides.
  const std::uint64_t scan = 40 * static_cast<std::uint64_t>(rows) + 620;
  const std::uint64_t fixed = 25 * static_cast<std::uint64_t>(searches) + 2;
  if (fixed >= scan) return true;
  const std::size_t enough = static_cast<std::size_t>((scan - fixed + 239) / 240);  // entries that cost no less
  return entries_visited(t, p, enough) >= enough;
}

// A secondary index's columns, then the primary key's, which its entries end with (MariaDB's
// extended keys).
std::vector<std::string> extended_columns(const Table& t, int index) {
  std::vector<std::string> columns = columns_of(t, index);
  if (!t.schema.clustered_key) columns.push_back("id");
  return columns;
}

// Whether `columns` hold every column a SELECT reads (StatementExtra::reads_only, the WHERE,
// ORDER BY), or a NOT EXISTS subquery's WHERE, so that the index alone answers it.
bool covers(const std::vector<std::string>& columns, const Statement& s) {
  const auto has = [&](const std::string& column) { return std::find(columns.begin(), columns.end(), column) != columns.end(); };
  if (s.kind == Statement::Kind::select) {
    if (!s.more().reads_only || !std::all_of(s.more().reads_only->begin(), s.more().reads_only->end(), has)) return false;
  } else if (s.kind != Statement::Kind::insert_if_absent) {  // (its NOT EXISTS subquery selects 1)
    return false;
  }
  if (!std::all_of(s.where.begin(), s.where.end(), [&](const Condition& c) { return has(c.column); })) return false;
  if (!std::all_of(s.more().order_by.begin(), s.more().order_by.end(), [&](const auto& o) { return has(o.first); })) return false;
  return std::all_of(s.more().filter.begin(), s.more().filter.end(), [&](const Expr& e) { return reads_only(e, has); });
}

// The live entries a search by `p` of a secondary index visits, counted up to `most`.
std::size_t entries_visited(const Table& t, const Path& p, std::size_t most) {
  std::size_t counted = 0;
  const auto& entries = entries_of(t, p.index);
  const auto count = [&](const Key& prefix) {
    for (auto it = entries.lower_bound(Entry{prefix, kBeforeAll}); it != entries.end() && it->begins_with(prefix) && counted < most; ++it)
      if (live_entry(t, p.index, it->entry())) ++counted;
  };
  switch (p.by) {
    case Path::By::point_or_scan: count(*p.key); break;
    case Path::By::points:
      for (const Key& prefix : p.prefixes)
        for (const Value& point : p.points) {
          Key key = prefix;
          key.push_back(point);
          count(key);
        }
      break;
    case Path::By::ranges:
      for (const Key& prefix : p.prefixes)
        for (const Range& r : p.ranges) {
          Key from = prefix;
          if (r.lo) from.push_back(*r.lo);
          for (auto it = entries.lower_bound(Entry{from, kBeforeAll}); it != entries.end() && it->begins_with(prefix) && counted < most; ++it) {
            const Entry e = it->entry();
            if (!r.below_hi(e.key[prefix.size()])) break;
            if (r.contains_above_lo(e.key[prefix.size()]) && live_entry(t, p.index, e)) ++counted;
          }
        }
      break;
    case Path::By::merged: break;
  }
  return counted;
}

// The path a WHERE clause gives with one secondary index (`index`; kKey on a table without
// one), in the order docs/sql.md lists.
Path path_on(const Table& t, const Statement& s, int index) {
  // `id = NULL` or `key = NULL` (a `?` bound to NULL) is never true: MySQL's "Impossible
  // WHERE" reads nothing and locks nothing.
  const bool has = index != kKey || indexed(t);
  const std::vector<std::string> key_columns = has ? columns_of(t, index) : std::vector<std::string>{};
  for (const Condition& c : s.where)
    if (c.op == Condition::Op::eq && is_null(c.value) &&
        (c.column == "id" || std::find(key_columns.begin(), key_columns.end(), c.column) != key_columns.end()))
      return {.index = kPrimary, .by = Path::By::points};
  for (const Condition& c : s.where)
    if (c.op == Condition::Op::eq && c.column == "id") return {kPrimary, Key{c.value}};
  if (has)
    if (auto prefix = key_prefix(key_columns, s, false)) return prefix_path(t, index, s, {std::move(*prefix)});
  if (auto id = folded_point(s, "id")) return {kPrimary, Key{*id}};
  if (has)
    if (auto prefix = key_prefix(key_columns, s, true)) return prefix_path(t, index, s, {std::move(*prefix)});
  if (has && is_null_term(s, key_columns.front())) return {index, Key{Value{Null{}}}};  // key IS NULL: the NULL entries
  if (auto in = in_list(s, "id")) {
    std::vector<Value> ids;
    for (const Value& v : *in)
      if (std::holds_alternative<std::int64_t>(v)) ids.push_back(v);  // another can match no id
    return {.index = kPrimary, .by = Path::By::points, .points = std::move(ids)};
  }
  if (has && in_list(s, key_columns.front()))  // each key a search of its own, as `key = v` is (conformance in-*-rr)
    return prefix_path(t, index, s, {Key{}});
  if (has && index == kKey)
    if (auto merged = index_merge(t, s)) return std::move(*merged);
  if (auto r = range_of(s, "id")) {
    if (auto v = r->point(); v && std::holds_alternative<std::int64_t>(*v)) return {kPrimary, Key{*v}};
    return {.index = kPrimary, .by = Path::By::ranges, .ranges = {*r}};
  }
  if (has)
    if (auto r = range_of(s, key_columns.front(), holds_text(t, key_columns.front()))) {
      if (auto v = r->point()) return {.index = index, .by = Path::By::points, .points = {*v}};
      // A comparison is never true of NULL: the range starts after the NULL entries, as
      // MySQL's range optimizer writes `k < 'm'` as NULL < k < 'm'.
      if (!r->lo) r->lo = Value{Null{}}, r->lo_closed = false;
      return {.index = index, .by = Path::By::ranges, .ranges = {*r}};
    }
  return {kPrimary, std::nullopt};
}

// The path of a secondary index's first columns, each held to one value or to a list of them
// (every combination a prefix, in order), as MariaDB's range optimizer builds it: one point
// of a single prefix that covers what the WHERE holds; where it lists a column's values
// (`merchant = 1 AND request IN ('a', 'b')`, `merchant IN (1, 2) AND request = 'a'`), a
// point of each after each prefix (conformance in-second-column-*-rr, composite-in-*-rr);
// where it then bounds the next column (`merchant IN (1, 2) AND request > 'a'`), that range
// among each prefix's entries. Past kMostPrefixes combinations, the further columns only
// filter the rows.
Path prefix_path(const Table& t, int index, const Statement& s, boost::container::small_vector<Key, 1> prefixes) {
  const std::vector<std::string> columns = columns_of(t, index);
  std::size_t next = prefixes.front().size();
  std::optional<std::vector<Value>> last;  // the last column held, not yet joined to the prefixes
  for (; next < columns.size(); ++next) {
    std::optional<std::vector<Value>> values = held_values(s, columns[next]);
    if (!values) break;
    // `m IN (NULL)`: no value, nothing to search (and every prefix list stays non-empty).
    if (values->empty()) return {.index = index, .by = Path::By::points, .prefixes = std::move(prefixes)};
    if (last) {
      if (prefixes.size() * last->size() * values->size() > kMostPrefixes) break;
      prefixes = joined(prefixes, *last);
    }
    last = std::move(values);
  }
  if (next < columns.size())
    if (auto r = range_of(s, columns[next], holds_text(t, columns[next]))) {
      if (last) prefixes = joined(prefixes, *last);
      if (auto v = r->point()) return {.index = index, .by = Path::By::points, .points = {*v}, .prefixes = std::move(prefixes)};
      if (!r->lo) r->lo = Value{Null{}}, r->lo_closed = false;  // past the NULLs, as for the first column
      return {.index = index, .by = Path::By::ranges, .ranges = {*r}, .prefixes = std::move(prefixes)};
    }
  if (last) return {.index = index, .by = Path::By::points, .points = std::move(*last), .prefixes = std::move(prefixes)};
  return {index, std::move(prefixes.front())};
}

// Each prefix followed by each value, in order.
boost::container::small_vector<Key, 1> joined(const boost::container::small_vector<Key, 1>& prefixes,
                                                     const std::vector<Value>& values) {
  boost::container::small_vector<Key, 1> out;
  out.reserve(prefixes.size() * values.size());
  for (const Key& prefix : prefixes)
    for (const Value& v : values) {
      out.push_back(prefix);
      out.back().push_back(v);
    }
  return out;
}

}  // namespace models::db::innodb
