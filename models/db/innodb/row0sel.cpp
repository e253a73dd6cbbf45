// InnoDB's model: searches: the locks a locking read or DML takes on what it visits, index
// condition pushdown, and SELECT (InnoDB's row0sel).

#include "models/db/innodb/innodb.hpp"

namespace models::db::innodb {

// Whether `e` reads a column `pred` holds for.
template <class Pred>
bool reads_any(const Expr& e, const Pred& pred) {
  if (e.kind == Expr::Kind::column && pred(e.column)) return true;
  return std::any_of(e.args.begin(), e.args.end(), [&](const Expr& a) { return reads_any(a, pred); });
}

// Locks what a locking read or DML finds by its WHERE, as InnoDB's row_search_mvcc does,
// then returns the rows whose latest version matches:
// - a unique search (id, or the key on a unique index) that finds a row that is not
//   delete-marked locks no gap after it: on the primary key its record only, on the
//   secondary index its entry next-key (MariaDB 10.11 locks the gap below it too);
//   `id IN (...)`, and `key IN (...)` on a unique index, is such a search for each value;
// - otherwise, under REPEATABLE READ, each entry visited gets a next-key lock and the gap
//   after the last one a gap lock (an absent key: the gap it would go in; a scan: the gap
//   before the supremum); a row found on the secondary index is locked on the primary too;
//   `key IN (...)` on a plain index is such a search for each value (the entry past each
//   value's keys keeps its record unlocked: conformance in-nonunique-rr, in-second-column-plain-rr);
// - a range locks its entries next-key, except an id
//   equal to a closed lower bound (its record only), and the first entry past its end
//   next-key too (on the secondary index that entry, and for UPDATE and DELETE its row), or
//   the gap before the supremum when nothing is past it (conformance range-*-rr);
// - READ COMMITTED takes record locks only, lets go of rows that do not match (but not of
//   the entry past a secondary range, scan_range) and, for a DML statement, skips a row
//   another transaction has locked when its latest committed version does not match
//   (semi-consistent read).
std::vector<std::int64_t> InnoDb::locate_locked(Txn& txn, Table& t, const Statement& where, bool exclusive, bool dml) {
  take_table_lock(txn, &t, exclusive);
  if (recorder) txn.statement->predicate = recorder->predicate(txn.id, t.schema.name, where, commits);
  const Path p = path_for(t, where);
  txn.statement->enough.reset();
  txn.statement->pushed = dml ? std::nullopt : pushed_condition(t, p, where);  // (UPDATE and DELETE check the whole WHERE on the row)
  if (where.limit && reads_in_order(t, p, where)) txn.statement->enough = static_cast<std::size_t>(where.offset + *where.limit);
  for (;;) {
    std::vector<std::int64_t> kept;
    bool waited = false;
    switch (p.by) {
      case Path::By::ranges:
        for (const Key& prefix : p.prefixes) {
          for (const Range& r : p.ranges)
            if ((waited = scan_range(txn, t, p.index, prefix, r, where, exclusive, dml, kept)) || enough(txn, kept)) break;
          if (waited || enough(txn, kept)) break;
        }
        break;
      case Path::By::points:
        for (const Key& prefix : p.prefixes) {
          for (const Value& point : p.points) {
            Key key = prefix;
            key.push_back(point);
            if ((waited = search(txn, t, Path{p.index, std::move(key)}, where, exclusive, dml, kept)) || enough(txn, kept)) break;
          }
          if (waited || enough(txn, kept)) break;
        }
        break;
      case Path::By::point_or_scan: waited = search(txn, t, p, where, exclusive, dml, kept); break;
      case Path::By::merged:
        for (const Path& part : p.parts) {
          for (const Value& point : part.points)
            if ((waited = search(txn, t, Path{part.index, Key{point}}, where, exclusive, dml, kept))) break;
          for (const Range& r : part.ranges)
            if (!waited && (waited = scan_range(txn, t, part.index, {}, r, where, exclusive, dml, kept, true))) break;
          if (waited) break;
        }
        // A row both indexes find is kept once, and the rows come in id order.
        std::sort(kept.begin(), kept.end());
        kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
        break;
    }
    if (waited) continue;  // the rows may have changed while we waited: look again
    txn.statement->enough.reset();  // (the points and ranges of a path are disjoint: no row is kept twice)
    return kept;
  }
}

// Whether the path reads rows in the statement's ORDER BY (none: any order), so that a
// LIMIT ends the scan; otherwise every row the path finds is read and locked, then sorted.
bool reads_in_order(const Table& t, const Path& p, const Statement& s) {
  if (p.by == Path::By::merged) return false;  // its rows are sorted once both searches are done
  std::vector<std::string> order{"id"};
  std::vector<std::string> fixed;  // the key columns a point holds to one value: any order of them is the same
  if (p.index != kPrimary) {
    const std::vector<std::string> columns = columns_of(t, p.index);
    // The columns every search holds to the same value: the rows come in the rest's order.
    std::size_t held = p.by == Path::By::point_or_scan ? p.key->size() : p.prefixes.front().size();
    if (p.by != Path::By::point_or_scan)
      for (const Key& prefix : p.prefixes)  // (all of one length)
        held = std::min<std::size_t>(held, std::mismatch(prefix.begin(), prefix.begin() + static_cast<std::ptrdiff_t>(held),
                                                         p.prefixes.front().begin()).first - prefix.begin());
    fixed.assign(columns.begin(), columns.begin() + static_cast<std::ptrdiff_t>(held));
    order.insert(order.begin(), columns.begin() + static_cast<std::ptrdiff_t>(held), columns.end());
  }
  if (s.more().order_by.size() > order.size()) return false;
  for (std::size_t i = 0; i < s.more().order_by.size(); ++i) {
    const auto& [column, descending] = s.more().order_by[i];
    const bool is_fixed = std::find(fixed.begin(), fixed.end(), column) != fixed.end();
    if (descending || (column != order[i] && !is_fixed)) return false;
  }
  return true;
}

// Locks the visited entry `e` of `index` (and, on the secondary index, its row) for a
// locking read or DML, record only or next-key; keeps its id when its latest version
// matches. Returns whether a lock was waited for (the caller looks again).
bool InnoDb::visit(Txn& txn, Table& t, int index, const Entry& e, bool record_only, const Statement& where, bool exclusive, bool dml,
           std::vector<std::int64_t>& kept) {
  const bool rr = gap_locking(txn.isolation);
  const std::int64_t id = e.id;
  const RowData& row = *t.rows.at(id);
  const int cx = clustered(t);
  const Entry row_entry = index == cx ? e : record_of(t, id);
  if (!rr && dml) {
    const Version* committed = latest_committed(row);
    Lock probe = record_lock(row_entry, exclusive);
    probe.txn = txn.id;
    const auto& here = queue_of(t, cx).on(row_entry);  // a record probe waits only for its own entry's locks
    const bool busy = std::any_of(here.begin(), here.end(), [&](const Lock* l) { return l->txn != txn.id && has_to_wait(probe, *l); });
    if (busy && (committed == nullptr || committed->deleted || !matches(committed->values, where))) {
      if (committed != nullptr) observed(txn, id, row, *committed);
      return false;
    }
  }
  Lock mine = record_lock(row_entry, exclusive);
  mine.txn = txn.id;
  const bool held_before = holds(queue_of(t, cx), mine);
  Lock on_key = record_lock(e, exclusive);
  on_key.txn = txn.id;
  const bool key_held_before = index != cx && holds(queue_of(t, index), on_key);
  Got got;
  bool pushed_out = false;  // the entry fails the index condition (pushed_condition)
  if (index != cx) {
    got = lock(txn, t, index, record_lock(e, exclusive, rr && !record_only, before(t, index, e)));
    pushed_out = got == Got::at_once && txn.statement->pushed && !matches(entry_row(txn.statement->pushed->columns, e), txn.statement->pushed->terms);
    if (got == Got::at_once && !pushed_out) got = lock(txn, t, cx, record_lock(row_entry, exclusive));
  } else {
    got = lock(txn, t, cx, record_lock(e, exclusive, rr && !record_only, before(t, cx, e)));
  }
  if (got == Got::after_wait) return true;
  if (got == Got::skipped) return false;  // SKIP LOCKED: another transaction's row
  if (pushed_out) {  // (its row was not locked)
    if (!rr && !key_held_before) lock_sys.unlock_record(txn, queue_of(t, index), e);
    return false;
  }
  const Version* v = t.rows.count(id) ? current(*t.rows.at(id)) : nullptr;
  if (v != nullptr) observed(txn, id, *t.rows.at(id), *v);
  const bool match = v != nullptr && !v->deleted && matches(v->values, where);
  if (match) {
    kept.push_back(id);
  } else if (!rr) {
    if (!held_before) lock_sys.unlock_record(txn, queue_of(t, cx), row_entry);
    if (index != cx && !key_held_before) lock_sys.unlock_record(txn, queue_of(t, index), e);
  }
  return false;
}

// MariaDB's index condition pushdown: the WHERE's terms that read only columns a secondary
// index's entries hold (its own, then the primary key's) and some column the search by `p`
// does not fix or bound (`a = 0 AND c = 5` on KEY (a, b, c); `u = 1 AND id >= 3`). InnoDB
// checks them on each entry a locking read visits, after locking the entry and before
// locking its row, and goes on without the row where they fail (conformance
// index-condition-*); UPDATE and DELETE lock the row first. None: no such term, or a search
// of the clustered index.
std::optional<IndexCondition> pushed_condition(const Table& t, const Path& p, const Statement& where) {
  if (p.index == kPrimary || p.index == clustered(t) || p.by == Path::By::merged) return std::nullopt;
  if (where.where.size() + where.more().filter.size() < 2) return std::nullopt;  // the one term is the search's
  std::vector<std::string> columns = extended_columns(t, p.index);
  const std::size_t used = p.by == Path::By::point_or_scan ? p.key->size() : p.prefixes.front().size() + 1;
  const auto in_index = [&](const std::string& column) { return std::find(columns.begin(), columns.end(), column) != columns.end(); };
  const auto beyond = [&](const std::string& column) {
    const auto at = std::find(columns.begin(), columns.end(), column);
    return at != columns.end() && static_cast<std::size_t>(at - columns.begin()) >= used;
  };
  Statement pushed;
  for (const Condition& c : where.where)
    if (beyond(c.column)) pushed.where.push_back(c);
  for (const Expr& e : where.more().filter)
    if (reads_only(e, in_index) && reads_any(e, beyond)) pushed.edit().filter.push_back(e);
  if (pushed.where.empty() && pushed.more().filter.empty()) return std::nullopt;
  if (!pushed.more().filter.empty()) pushed.edit().args = where.more().args;
  return IndexCondition{std::move(pushed), std::move(columns)};
}

// A secondary index's entry as a row of the columns it holds (`columns`: extended_columns);
// on a table of ids, its last column is id, which the entry holds beside its key.
Values entry_row(const std::vector<std::string>& columns, const Entry& e) {
  Values row;
  for (std::size_t i = 0; i < e.key.size() && i < columns.size(); ++i) row.emplace(columns[i], e.key[i]);
  if (e.key.size() < columns.size()) row.emplace(columns.back(), Value{e.id});
  return row;
}

// Notes in the trial's history that the running statement looked at version `v` of row `id`.
void InnoDb::observed(const Txn& txn, std::int64_t id, const RowData& row, const Version& v) {
  if (recorder && txn.statement != nullptr && txn.statement->predicate && !v.deleted)
    recorder->read(*txn.statement->predicate, id, v.txn, ordinal(row, v));
}

// A point search or a scan (Path without ranges).
bool InnoDb::search(Txn& txn, Table& t, const Path& p, const Statement& where, bool exclusive, bool dml, std::vector<std::int64_t>& kept) {
  const bool rr = gap_locking(txn.isolation);
  // A search for NULL on a unique index is not unique: NULL keys may repeat.
  const bool unique_search =
      p.key && (p.index == kPrimary ||
                (unique_index(t, p.index) && p.key->size() >= width(t, p.index) && !has_null(*p.key)));
  bool found_unique = false;  // a unique search found its row: no gap to lock
  const std::vector<Entry> entries = visited(t, p);
  for (const Entry& e : entries) {
    const bool delete_marked = current(*t.rows.at(e.id))->deleted;
    const bool unique_hit = unique_search && (p.index == kPrimary || !delete_marked);
    // Found on the primary key (of ids or of other columns): its record only. Found on a unique secondary index: that
    // entry next-key, the gap below it as well (MariaDB 10.11 does: an insert just below the
    // key waits, one just above it does not; conformance unique-key-found-locks-gap-below-rr).
    if (visit(txn, t, p.index, e, unique_hit && p.index == clustered(t), where, exclusive, dml, kept)) return true;
    found_unique |= unique_hit;
    if (enough(txn, kept)) return false;  // LIMIT: the scan ends here
  }
  if (rr && !found_unique) lock(txn, t, p.index, gap_after(t, p, entries, exclusive));  // never waits
  return false;
}

// A range of `index`: its entries, then the first past its end (or the gap before the supremum).
// On the key index, the range is of the column after `prefix` among the entries that
// begin with it (`merchant = 1 AND request > 'a'`); with no prefix, of its first column.
// `past_row`: the row of the entry past a range of the key index is locked for a locking read
// too, as MariaDB does in an index merge (conformance index-merge-range-rr).
bool InnoDb::scan_range(Txn& txn, Table& t, int index, const Key& prefix, const Range& r, const Statement& where, bool exclusive,
                bool dml, std::vector<std::int64_t>& kept, bool past_row) {
  const bool rr = gap_locking(txn.isolation);
  const auto key_of_entry = [&](const Entry& e) -> const Value& { return e.key[prefix.size()]; };
  const auto inside = [&](const Entry& e) { return index == kPrimary || is_prefix(prefix, e.key); };
  if (r.lo && r.hi && (*r.hi < *r.lo || (*r.lo == *r.hi && !(r.lo_closed && r.hi_closed))))
    return false;  // an empty range reads nothing, as MySQL's "Impossible WHERE"
  // The first live entry at or after the range's start.
  std::optional<Entry> at;
  if (!r.lo && prefix.empty()) {
    at = first_entry(t, index);
  } else if (index == kPrimary) {
    if (!std::holds_alternative<std::int64_t>(*r.lo)) return false;  // no id is a string
    const std::int64_t lo = std::get<std::int64_t>(*r.lo);
    const Entry start = primary_entry(lo);
    at = r.lo_closed && live_entry(t, kPrimary, start) ? std::optional<Entry>(start) : after(t, kPrimary, start);
  } else {
    Key start = prefix;
    if (r.lo) start.push_back(*r.lo);
    at = after(t, index, Entry{std::move(start), !r.lo || r.lo_closed ? kBeforeAll : kAfterAll});
  }
  std::optional<Entry> last = at ? before(t, index, *at) : last_entry(t, index);
  for (; at; at = after(t, index, *at)) {
    sim::work(1);  // each entry of the range, counted against the trial's event budget
    if (inside(*at) && !r.contains_above_lo(key_of_entry(*at))) {  // `k > lo` on an index of several columns starts at lo's keys
      last = at;
      continue;
    }
    if (!inside(*at) || !r.below_hi(key_of_entry(*at))) {
      // The first entry past the range, as MariaDB 10.11 locks it: on the primary key next-key
      // under REPEATABLE READ, read and let go under READ COMMITTED; on the secondary index
      // next-key under REPEATABLE READ and its record under READ COMMITTED, kept, and for
      // UPDATE and DELETE its row's record as well (conformance range-nonunique-rr, -rc,
      // update-range-secondary-rr, -rc, delete-like-prefix-rr).
      if (index == clustered(t)) return rr && lock(txn, t, index, record_lock(*at, exclusive, true, last)) == Got::after_wait;
      if (lock(txn, t, index, record_lock(*at, exclusive, rr, last)) == Got::after_wait) return true;
      return (dml || past_row) && lock(txn, t, clustered(t), record_lock(record_of(t, at->id), exclusive)) == Got::after_wait;
    }
    // A closed start on a whole primary key that finds its row locks the record only.
    const bool exact_start = (index == kPrimary || (index == clustered(t) && prefix.size() + 1 >= width(t, index))) && r.lo &&
                             r.lo_closed && key_of_entry(*at) == *r.lo;
    if (visit(txn, t, index, *at, exact_start, where, exclusive, dml, kept)) return true;
    if (enough(txn, kept)) return false;  // LIMIT: the scan ends here
    last = at;
  }
  if (rr) lock(txn, t, index, gap_lock(exclusive, last, std::nullopt));  // up to the supremum; never waits
  return false;
}

std::optional<Entry> last_entry(const Table& t, int index) {
  if (index == kPrimary) {
    for (auto it = t.rows.rbegin(); it != t.rows.rend(); ++it)
      if (live(*it->second)) return primary_entry(it->first);
    return std::nullopt;
  }
  const auto& entries = entries_of(t, index);
  for (auto it = entries.rbegin(); it != entries.rend(); ++it)
    if (Entry e = it->entry(); live_entry(t, index, e)) return e;
  return std::nullopt;
}

std::optional<Entry> first_entry(const Table& t, int index) {
  if (index == kPrimary) {
    for (const auto& [id, row] : t.rows)
      if (live(*row)) return primary_entry(id);
    return std::nullopt;
  }
  for (const StoredEntry& stored : entries_of(t, index))
    if (Entry e = stored.entry(); live_entry(t, index, e)) return e;
  return std::nullopt;
}

// The gap a search by `p` ends in, after the entries it visited: for an absent key, the
// gap it would go in; for a scan, the gap before the supremum.
Lock InnoDb::gap_after(const Table& t, const Path& p, const std::vector<Entry>& visited, bool exclusive) const {
  const std::optional<Entry> last = visited.empty() ? std::nullopt : std::optional<Entry>(visited.back());
  if (p.index != kPrimary) {
    const Entry below{*p.key, kBeforeAll};
    return gap_lock(exclusive, last ? last : before(t, p.index, below), after_prefix(t, p.index, *p.key));
  }
  if (p.key) {
    const Entry position = primary_entry(std::get<std::int64_t>(p.key->front()));
    return gap_lock(exclusive, before(t, kPrimary, position), after(t, kPrimary, position));
  }
  return gap_lock(exclusive, last, std::nullopt);
}

// The row as a result shows it, sharing the version's columns (which hold its id).
Row InnoDb::row_of(std::int64_t id, const RowValues& values) {
  Row r{id, values};
  if (values.find("id") != Value{id}) r.values.set("id", Value{id});
  return r;
}

std::vector<Row> InnoDb::select(Txn& txn, Table& t, const Statement& s) {
  std::vector<Row> out;
  // SERIALIZABLE reads with shared locks inside an explicit transaction; an autocommit
  // SELECT stays a consistent read, as InnoDB's does.
  const ReadLock lock = s.lock == ReadLock::none && txn.isolation == Isolation::serializable && txn.explicit_
                            ? ReadLock::share
                            : s.lock;
  if (lock != ReadLock::none) {
    for (std::int64_t id : locate_locked(txn, t, s, lock == ReadLock::update, false))
      out.push_back(row_of(id, current(*t.rows.at(id))->values));
    order_and_limit(s, Engine::mariadb, out);
    return out;
  }
  const std::uint64_t view = read_view(txn);
  const std::optional<std::uint32_t> predicate =
      recorder ? recorder->predicate(txn.id, t.schema.name, s, txn.isolation == Isolation::read_uncommitted ? commits : view) : std::nullopt;
  // A statement that reads only the rows it returns (History::rows_only) records them once they are known.
  const bool rows_only = History::rows_only(s);
  std::map<std::int64_t, std::pair<TxnId, std::size_t>> versions_read;
  const auto read = [&](std::int64_t id, const RowData& row) {
    const Version* v = visible(row, txn, view);
    if (predicate && v != nullptr && !v->deleted) {
      if (rows_only) versions_read.emplace(id, std::make_pair(v->txn, ordinal(row, *v)));
      else recorder->read(*predicate, id, v->txn, ordinal(row, *v));
    }
    if (v != nullptr && !v->deleted && matches(v->values, s)) out.push_back(row_of(id, v->values));
  };
  // A key the statement names: only its rows can match, and every version holding a key has
  // its entry (kept until no version holds it), in id order as the scan would find them.
  if (!t.schema.indexes.empty()) {  // several indexes: the rows in the order of the one chosen
    const Path p = path_for(t, s);
    if (p.index != kPrimary && p.by == Path::By::point_or_scan) {
      const auto& entries = entries_of(t, p.index);
      for (auto it = entries.lower_bound(Entry{*p.key, kBeforeAll}); it != entries.end() && it->begins_with(*p.key); ++it)
        read(it->id, *t.rows.at(it->id));
    } else {
      sim::work(t.rows.size());
      for (const auto& [id, row] : t.rows) read(id, *row);
      if (p.index != kPrimary)
        std::stable_sort(out.begin(), out.end(),
                         [&](const Row& a, const Row& b) { return key_of(t, p.index, a.values) < key_of(t, p.index, b.values); });
    }
  } else if (const auto named = key_prefix(t.schema.key_columns(), s, false);
             named && (!indexed(t) || t.schema.clustered_key || (named->size() >= width(t, kKey) && must_be_unique(t, kKey, named)) ||
                       path_for(t, s).index == kKey)) {  // (unless the server scans instead: costs_more_than_scan)
    for (auto it = t.entries.lower_bound(Entry{*named, kBeforeAll}); it != t.entries.end() && it->begins_with(*named); ++it)
      read(it->id, *t.rows.at(it->id));
  } else {
    sim::work(t.rows.size());
    for (const auto& [id, row] : t.rows) read(id, *row);
    // A path on the key index returns its rows in the index's order.
    if (path_for(t, s).index == kKey)
      std::stable_sort(out.begin(), out.end(), [&](const Row& a, const Row& b) { return key_of(t, a.values) < key_of(t, b.values); });
  }
  order_and_limit(s, Engine::mariadb, out);
  if (predicate && rows_only)
    for (const Row& r : out)
      if (const auto it = versions_read.find(r.id); it != versions_read.end()) recorder->read(*predicate, r.id, it->second.first, it->second.second);
  return out;
}

}  // namespace models::db::innodb
