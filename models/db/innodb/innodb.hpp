#pragma once
// InnoDB's model (models/db/database.hpp's comment says what it imitates): the class, whose
// member functions are defined by subsystem, as InnoDB's own source is split:
// - row0vers.cpp: rows, their versions and read views, and the index entries read from them;
// - lock0lock.cpp: the lock system: lock requests, queues, grants and what locks show;
// - lock0wait.cpp: lock waits and the deadlock search on the wait-for graph;
// - trx0trx.cpp: transactions: begin, undo, commit, rollback, and the purge race;
// - opt0range.cpp, opt0cond.cpp: access paths and their cost, from the WHERE's conditions;
// - row0sel.cpp: searches: locking reads and SELECT;
// - row0ins.cpp: INSERT, its duplicate check and the AUTO-INC lock;
// - row0upd.cpp: UPDATE and DELETE;
// - handler0alter.cpp: online ADD INDEX and DROP INDEX;
// - ha_innodb.cpp: statement dispatch and the engine's side of Database's calls.
// Internal to models/db/innodb.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/db/database.hpp"
#include "models/db/innodb/types.hpp"
#include "models/db/model.hpp"
#include "models/db/rows.hpp"
#include "models/db/innodb/user_locks.hpp"

namespace models::db::innodb {

class InnoDb final : public Database::Model {
 public:
  using SessionId = Database::SessionId;
  using RowVisitor = Database::RowVisitor;
  explicit InnoDb(DatabaseConfig config) : config(config) {}
  DatabaseConfig config;
  DatabaseStats stats_;
  std::map<std::string, Table> tables;
  std::map<SessionId, SessionState> sessions;
  std::map<TxnId, Txn*> txns;
  UserLocks user_locks_;  // GET_LOCK() and its family: the server's, not InnoDB's
  SessionId next_session = 1;
  TxnId next_txn = 1;
  std::uint64_t bytes = 0;  // what the stored rows cost, as bytes_held counts them
  detail::Origins origins;  // who wrote them
  std::uint64_t commits = 0;  // the commit counter read views compare with

  Table& table(const std::string& name);

  // --- Rows and versions ---------------------------------------------------

  static const Version* current(const RowData& row) { return row.versions().empty() ? nullptr : &row.versions().back(); }
  static const Version* latest_committed(const RowData& row) {
    const auto versions = row.versions();
    for (auto it = versions.rbegin(); it != versions.rend(); ++it)
      if (it->commit != 0) return &*it;
    return nullptr;
  }
  static const Version* shown(const RowData& row, bool ever);
  void visit_rows(const Table& t, bool ever, const RowVisitor& visit) const;
  static const Version* visible(const RowData& row, const Txn& txn, std::uint64_t view) {
    if (txn.isolation == Isolation::read_uncommitted) return current(row);  // dirty reads
    const auto versions = row.versions();
    for (auto it = versions.rbegin(); it != versions.rend(); ++it)
      if (it->txn == txn.id || (it->commit != 0 && it->commit <= view)) return &*it;
    return nullptr;
  }
  // A row the indexes still have entries for: not deleted by a committed delete (purge is
  // not modelled: a committed delete takes the entries away at once).
  static bool live(const RowData& row) {
    const Version* v = current(row);
    return v != nullptr && !(v->deleted && v->commit != 0);
  }

  // A row's key in the key index: the values of its columns, in the index's order.
  template <class Row>  // Values, or a stored row's RowValues
  static std::optional<Key> key_of(const Table& t, const Row& v) {
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
  static std::optional<Key> key_of(const Table& t, int index, const Row& v) {
    if (index == kKey) return key_of(t, v);
    Key key;
    for (const std::string& column : t.schema.indexes[static_cast<std::size_t>(index - kExtra)].columns) key.push_back(v.at(column));
    if (t.schema.clustered_key) {
      key.push_back(v.at(t.schema.key_column));
      for (const std::string& column : t.schema.key_tail) key.push_back(v.at(column));
    }
    return key;
  }
  static Key unique_part(const Table& t, int index, Key key);
  // The index whose entries are the rows' records: the primary key of ids, or the key index of a
  // table keyed by other columns (clustered_key).
  static int clustered(const Table& t) { return t.schema.clustered_key ? kKey : kPrimary; }
  Entry record_of(const Table& t, std::int64_t id) const;
  static const std::string& index_name(const Table& t) {
    return t.schema.index_name.empty() ? t.schema.key_column : t.schema.index_name;
  }
  static const std::string& index_name(const Table& t, int index) {
    return index == kKey ? index_name(t) : t.schema.indexes[static_cast<std::size_t>(index - kExtra)].name;
  }
  static bool indexed(const Table& t) { return !t.schema.key_column.empty() && t.schema.key_index != KeyIndex::none; }
  static boost::container::small_vector<int, 2> secondary(const Table& t);
  // How many columns a secondary index has.
  static std::size_t width(const Table& t, int index) {
    return index == kKey ? 1 + t.schema.key_tail.size() : t.schema.indexes[static_cast<std::size_t>(index - kExtra)].columns.size();
  }
  static std::vector<std::string> columns_of(const Table& t, int index);
  static bool unique_index(const Table& t, int index) {
    return index == kKey ? t.schema.key_index == KeyIndex::unique : t.schema.indexes[static_cast<std::size_t>(index - kExtra)].unique;
  }
  static const absl::btree_set<StoredEntry, EntryOrder>& entries_of(const Table& t, int index) {
    return index == kKey ? t.entries : t.more_entries[static_cast<std::size_t>(index - kExtra)];
  }
  static absl::btree_set<StoredEntry, EntryOrder>& entries_of(Table& t, int index) {
    return index == kKey ? t.entries : t.more_entries[static_cast<std::size_t>(index - kExtra)];
  }
  static bool must_be_unique(const Table& t, int index, const std::optional<Key>& key);
  static std::string duplicate_in(const Table& t, int index, const Key& key) {
    return duplicate_message(unique_part(t, index, key), index_name(t, index));
  }

  bool live_entry(const Table& t, int index, const Entry& e) const;
  bool holds_key(const Table& t, int index, const Entry& e) const;

  std::optional<Entry> before(const Table& t, int index, const Entry& position) const;
  std::optional<Entry> after(const Table& t, int index, const Entry& position) const;

  std::vector<Entry> entries_with(const Table& t, int index, const Key& prefix) const;
  std::optional<Entry> after_prefix(const Table& t, int index, const Key& prefix) const;

  // --- Locks ---------------------------------------------------------------

  bool holds(const Table& t, int index, const Lock& want) const;

  // Whether `req` must wait: a conflicting granted lock anywhere in its queue, or a
  // conflicting request waiting ahead of it (first come, first served).
  bool must_wait(const LockQueue& queue, const Lock& req) const { return !blockers(queue, req).empty(); }

  std::vector<TxnId> blockers(const LockQueue& queue, const Lock& req) const;

  std::vector<Txn*> cycle_from(Txn& start) const;

  void regrant(LockQueue& queue);

  void release_locks(Txn& txn);

  const std::string& who(TxnId id) const { return txns.at(id)->session->who; }

  LockWait place_of(const Table& t, int index, const Lock& l) const;

  LockWait describe(const Table& t, int index, const Lock& req) const;

  std::vector<HeldLock> locks(std::size_t most) const override;

  void break_deadlock(Txn& txn, int index);
  Got lock(Txn& txn, Table& t, int index, Lock want);

  void drop_waiting(Txn& txn);

  void inherit_to_gap(Table& t, int index, const Entry& gone, TxnId owner);

  // --- Transactions --------------------------------------------------------

  Txn& begin(SessionState& s, bool explicit_);

  void undo_to(Txn& txn, std::size_t mark);

  void rollback(Txn& txn);

  void commit(Txn& txn);

  // The index entries a committing transaction's deletes (and key changes) take away. The model
  // purges them at the commit; InnoDB leaves them delete-marked until its purge threads remove
  // them, and the purge hands each lock on a removed record to the gap it leaves
  // (lock_rec_inherit_to_gap).
  struct Purged {
    Table* table;
    int index;
    Entry entry;
  };
  std::vector<Purged> entries_going(const Txn& txn) const;

  void purge_race(const std::vector<Purged>& purged);

  void finish(Txn& txn);

  std::uint64_t read_view(Txn& txn);

  // --- Statements ------------------------------------------------------------

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
  Path path_for(const Table& t, const Statement& s) const;
  Path weighed_path(const Table& t, const Statement& s) const;

  std::pair<int, std::size_t> path_cost(const Table& t, const Path& p) const;
  static bool finds_one(const Table& t, const Path& p) {
    return p.by == Path::By::point_or_scan && p.key->size() >= width(t, p.index) && unique_index(t, p.index) && !has_null(*p.key);
  }
  static constexpr std::size_t kMostCounted = 1000;

  bool costs_more_than_scan(const Table& t, const Statement& s, const Path& p) const;
  static std::vector<std::string> extended_columns(const Table& t, int index);
  // Whether the WHERE bounds `column`: holds it to values or to a range.
  static bool bounds(const Statement& s, const std::string& column, bool text) {
    return held_values(s, column) || range_of(s, column, text);
  }
  static bool covers(const std::vector<std::string>& columns, const Statement& s);
  template <class Has>
  static bool reads_only(const Expr& e, const Has& has) {
    if (e.kind == Expr::Kind::column && !has(e.column)) return false;
    return std::all_of(e.args.begin(), e.args.end(), [&](const Expr& a) { return reads_only(a, has); });
  }

  std::size_t entries_visited(const Table& t, const Path& p, std::size_t most) const;

  Path path_on(const Table& t, const Statement& s, int index) const;

  static Path prefix_path(const Table& t, int index, const Statement& s, boost::container::small_vector<Key, 1> prefixes);
  static constexpr std::size_t kMostPrefixes = 1024;
  static boost::container::small_vector<Key, 1> joined(const boost::container::small_vector<Key, 1>& prefixes,
                                                       const std::vector<Value>& values);
  static std::optional<std::vector<Value>> held_values(const Statement& s, const std::string& column);

  static std::optional<Key> key_prefix(const std::vector<std::string>& columns, const Statement& s, bool folded_first);

  static bool is_null_term(const Statement& s, const std::string& column);

  static std::optional<std::vector<Value>> in_list(const Statement& s, const std::string& column);
  static std::optional<std::vector<Value>> listed(const Expr& e, const Statement& s, const std::string& column);

  std::optional<Path> index_merge(const Table& t, const Statement& s) const;
  // What an index merge searches: each index's points and ranges.
  struct Merge {
    std::vector<Value> ids, keys;
    std::vector<Range> id_ranges, key_ranges;
  };
  static bool merge_branches(const Expr& e, const Statement& s, const std::string& key_column, bool text, Merge& m);
  static std::optional<Range> branch_range(const Expr& e, const Statement& s, const std::string& column, bool text);
  std::size_t rows_in(const Table& t, int index, const Range& r, std::size_t most) const;

  static std::optional<Value> folded_point(const Statement& s, const std::string& column);

  static std::optional<Value> constant_of(const Expr& e, const Statement& s);

  static bool holds_text(const Table& t, const std::string& column);

  static std::optional<std::pair<std::string, bool>> like_prefix(const std::string& pattern);

  static bool bound_by(const Expr& e, const Statement& s, const std::string& column, bool text, Range& r);

  static std::optional<Range> range_of(const Statement& s, const std::string& column, bool text = false);

  std::vector<Entry> visited(const Table& t, const Path& p) const;

  static Lock record_lock(const Entry& at, bool exclusive, bool next_key = false, std::optional<Entry> lo = {});
  static Lock gap_lock(bool exclusive, std::optional<Entry> lo, std::optional<Entry> hi);
  static Lock insert_intention(const Entry& at);

  void unlock_record(Txn& txn, Table& t, int index, const Entry& at);

  std::vector<std::int64_t> locate_locked(Txn& txn, Table& t, const Statement& where, bool exclusive, bool dml);

  // Whether a LIMIT read in index order has its rows: the searches after this one are not made
  // (conformance composite-in-limit-rr).
  static bool enough(const Txn& txn, const std::vector<std::int64_t>& kept) { return txn.statement.enough && kept.size() >= *txn.statement.enough; }

  static bool reads_in_order(const Table& t, const Path& p, const Statement& s);

  bool visit(Txn& txn, Table& t, int index, const Entry& e, bool record_only, const Statement& where, bool exclusive, bool dml,
             std::vector<std::int64_t>& kept);

  static std::optional<IndexCondition> pushed_condition(const Table& t, const Path& p, const Statement& where);
  template <class Pred>
  static bool reads_any(const Expr& e, const Pred& pred);
  static Values entry_row(const std::vector<std::string>& columns, const Entry& e);

  bool search(Txn& txn, Table& t, const Path& p, const Statement& where, bool exclusive, bool dml, std::vector<std::int64_t>& kept);

  bool scan_range(Txn& txn, Table& t, int index, const Key& prefix, const Range& r, const Statement& where, bool exclusive,
                  bool dml, std::vector<std::int64_t>& kept, bool past_row = false);

  std::optional<Entry> last_entry(const Table& t, int index) const;

  std::optional<Entry> first_entry(const Table& t, int index) const;

  Lock gap_after(const Table& t, const Path& p, const std::vector<Entry>& visited, bool exclusive) const;

  static Row row_of(std::int64_t id, const RowValues& values);

  std::vector<Row> select(Txn& txn, Table& t, const Statement& s);

  void add_version(Txn& txn, Table& t, std::int64_t id, Version v);

  static bool deleted_by(const Txn& txn, const RowData& row);

  std::int64_t load_row_values(const std::string& name, const Values& given, std::string who);

  // InnoDB's duplicate check of a new entry `key` in a unique index (row_ins_scan_sec_index_for_duplicate):
  // S next-key (X for `exclusive`) on each entry of the key and on its row, waiting for its
  // writer; the first whose row holds the key is the duplicate. Passed over: the row `own` (an
  // UPDATE's), a row this transaction deleted, and an entry an UPDATE left delete-marked.
  // `waited`: a lock was waited for, and the rows may have changed: look again.
  struct Duplicate {
    bool waited = false;
    std::optional<std::int64_t> id{};
  };
  Duplicate duplicate_of(Txn& txn, Table& t, int index, const Key& key, std::optional<std::int64_t> own, bool exclusive);

  Result insert(Txn& txn, Table& t, const Statement& s, const Values& given, const std::string& who,
                std::optional<std::int64_t> auto_id = std::nullopt);

  Result insert_rows(Txn& txn, Table& t, const Statement& s, const std::string& who);

  void put_row(Txn& txn, Table& t, std::int64_t id, Values values, const std::string& who);

  // --- Online DDL --------------------------------------------------------------

  std::optional<Key> smallest_duplicate(const Table& t) const;

  std::int64_t live_rows(const Table& t) const {
    return std::count_if(t.rows.begin(), t.rows.end(), [](const auto& r) { return live(*r.second); });
  }

  Result alter(Table& t, const Statement& st);

  void next_alter(Table& t);

  void become_key_columns(Table& t, const std::vector<std::string>& columns);

  Result drop_index(Table& t, const Statement& st);

  Result add_index(Table& t, const Statement& st);

  std::optional<Result> on_duplicate(Txn& txn, Table& t, const Statement& s, std::int64_t dup, std::string message,
                                     Result& out, const Values& inserted);

  Result insert_if_absent(Txn& txn, Table& t, const Statement& s, const std::string& who, const StatementTiming& timing);

  // The table's AUTO-INC lock, taken before an insert takes an id (InnoDB's innobase_lock_autoinc
  // in lock mode 1, MariaDB's default): an INSERT ... SELECT, a bulk insert, always takes it; a
  // simple INSERT only while another statement holds it or waits for it, and otherwise takes its
  // ids under a mutex. Held to the statement's end. A deadlock whose victim waits for it ends
  // in 1467 (conformance autoinc-lock-deadlock-1467, autoinc-lock-simple-insert).
  void take_autoinc(Txn& txn, Table& t, bool bulk) {
    if (bulk || t.locks[kAutoInc].size() > 0) lock(txn, t, kAutoInc, Lock{.exclusive = true, .record = true});
  }
  void release_autoinc(const Txn& txn, Table& t) {
    if (t.locks[kAutoInc].erase_if([&](const Lock& l) { return l.txn == txn.id && l.granted; }) > 0) regrant(t.locks[kAutoInc]);
  }

  Result update(Txn& txn, Table& t, const Statement& s, bool remove);

  template <class Old>  // Values, or a stored row's RowValues
  void move_entries(Txn& txn, Table& t, std::int64_t id, const Old& old, const Values& next);

  static void assigned_id(Txn& txn, const Statement& s, const Values& row);

  Result set_isolation(SessionState& s, const Statement& st);

  void answer_calls(SessionState& s, Expr& e, const std::vector<Value>& params, std::vector<LockWait>& waits);

  Result run(SessionState& s, const Statement& st, const StatementTiming& timing);

  Result run_unstamped(SessionState& s, const Statement& st, const StatementTiming& timing);
  Result run_without_table(SessionState& s, const Statement& st);
  Result run_on_table(SessionState& s, const Statement& st, const StatementTiming& timing);
  // --- The engine's side of Database's calls ---------------------------------

  void create_table(TableSchema schema) override;

  std::int64_t load_row(const std::string& table, const Values& values, std::string who) override {
    return load_row_values(table, values, std::move(who));
  }

  const TableSchema* schema(const std::string& name) const override;

  SessionId open_session(Isolation isolation, std::string who) override;

  void set_origin(SessionId session, std::string who) override { sessions.at(session).who = std::move(who); }

  Result execute(SessionId session, const Statement& statement, const StatementTiming& timing) override;

  void close(SessionId session) override;

  bool holds_user_lock(SessionId session, const std::string& name) const override { return user_locks_.holds(session, name); }

  bool in_transaction(SessionId session) const override;

  void for_each(const std::string& name, bool ever, const RowVisitor& visit) const override {
    visit_rows(const_table(name), ever, visit);
  }

  const Table& const_table(const std::string& name) const;

  std::vector<RowRecord> rows_sharing(const std::string& name, const std::string& column, bool ever) const override;

  const DatabaseStats& stats() const override { return stats_; }
  std::uint64_t bytes_held() const override { return bytes + origins.bytes(); }
};

}  // namespace models::db::innodb
