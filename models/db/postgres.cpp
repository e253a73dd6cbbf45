// PostgreSQL 15's model: multi-version rows seen through snapshots, row locks taken in the row
// and waited for in the holder's transaction, the unique index's wait on an uncommitted
// inserter, ON CONFLICT, deadlock detection after deadlock_timeout, advisory locks, and a
// transaction that an error aborts. As PostgreSQL's manual documents them ("Concurrency
// Control", "Explicit Locking", "INSERT ... ON CONFLICT") and as the conformance suite checks
// them against a real PostgreSQL 15 (conformance/pg-scripts/):
//
// - a row is a chain of versions, each with its creator (xmin) and the transaction that
//   deleted or replaced it (xmax); a version is seen by a snapshot when its creator committed
//   before the snapshot (or is the reader) and its deleter did not. READ COMMITTED takes a
//   snapshot per statement, REPEATABLE READ one at the transaction's first statement; READ
//   UNCOMMITTED is READ COMMITTED, as on the server;
// - SERIALIZABLE is REPEATABLE READ with serializable snapshot isolation (SSI, Cahill et al.
//   and PostgreSQL's "Serializable Isolation Level"): what a serializable transaction reads is
//   remembered (a row by its id or key, or the whole table for a scan: coarser than PostgreSQL's
//   index pages, so the model may refuse where the server would not, never the reverse), a
//   write by a concurrent serializable transaction to what another read makes a read-write
//   dependency, and a transaction with one in and one out whose other end committed first
//   (the dangerous structure) fails with 40001: at the statement that made it, or at COMMIT;
// - UPDATE, DELETE and SELECT ... FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE find their
//   rows in the statement's snapshot, then lock each one's latest version, waiting for a
//   conflicting holder's transaction (the four modes' conflict table of "Row-Level Locks").
//   A row changed by a transaction that committed after the snapshot is re-read under READ
//   COMMITTED (EvalPlanQual: its WHERE checked again on the new version) and fails with 40001
//   under REPEATABLE READ; NOWAIT fails with 55P03, SKIP LOCKED leaves the row;
// - an INSERT checks each unique index (the primary key, the key column's, and further ones on
//   several columns or partial) with a dirty read: a key another open transaction inserted (or
//   is deleting, or moving out of a partial index) makes it wait for that transaction to end,
//   then check again; a committed live key is 23505, or the conflict of ON CONFLICT on the
//   indexes it infers from its target (the arbiters, checked first): DO NOTHING skips the row,
//   DO UPDATE locks the row and updates it with EXCLUDED, and under REPEATABLE READ a
//   conflicting row the snapshot does not see is 40001. A new version an UPDATE makes is
//   checked against the further indexes as an insert is. There are no gap locks: a read of an
//   absent key locks nothing;
// - lock waits are first come, first served on each row; a wait that lasts deadlock_timeout
//   (1 s) looks for a cycle of waits once, and the waiter that finds one fails with 40P01;
//   lock_timeout and statement_timeout (0: none, PostgreSQL's defaults) end a wait with 55P03
//   and 57014;
// - an error inside a transaction block rolls the transaction back at once (its locks go) and
//   every later statement fails with 25P02 until ROLLBACK or COMMIT, which then rolls back;
// - a SERIAL or IDENTITY id comes from a sequence that never rolls back; an explicit id does
//   not move it (a later default id may collide: 23505), but seeded rows do, as a restored dump's
//   setval does;
// - advisory locks per session (held past COMMIT, counted, until unlocked as often or the
//   session ends) and per transaction (held to its end), exclusive or shared, waited for as
//   row locks are.
// Not modelled: SSI's read-only optimisations beyond the snapshot rule, NULLs stored, reads
// through a further index (a scan), CREATE INDEX's table lock (an index is built at once),
// statement_timeout outside lock waits, VACUUM (versions are kept).

#include <algorithm>
#include <limits>
#include <list>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "models/db/database.hpp"
#include "models/db/model.hpp"
#include "models/db/rows.hpp"
#include "sim/sim.hpp"

namespace models::db {

namespace {

using detail::Failure;
using detail::kPostgresCosts;
using detail::matches;
using detail::now_if_running;
using detail::spend;
using detail::with_clock;
using detail::order_and_limit;
using SessionId = Database::SessionId;
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

// The four row-lock modes in PostgreSQL's order, and the conflict table of "Row-Level Locks"
// (an advisory lock is share or update; waiting for a transaction's end is share on it, which
// its own transaction holds as update).
enum class Mode { key_share, share, no_key_update, update };
bool conflicts(Mode a, Mode b) {
  static constexpr bool table[4][4] = {
      {false, false, false, true},
      {false, false, true, true},
      {false, true, true, true},
      {true, true, true, true},
  };
  return table[static_cast<int>(a)][static_cast<int>(b)];
}
const char* mode_name(Mode m) {
  switch (m) {
    case Mode::key_share: return "FOR KEY SHARE";
    case Mode::share: return "FOR SHARE";
    case Mode::no_key_update: return "FOR NO KEY UPDATE";
    case Mode::update: return "FOR UPDATE";
  }
  return "?";
}

// What a lock is on: a row of a table, a transaction (held by it while it runs, so others can
// wait for its end), or an advisory key.
struct LockKey {
  enum class Kind { row, transaction, advisory } kind = Kind::row;
  const Table* table = nullptr;
  std::int64_t id = 0;
  auto operator<=>(const LockKey&) const = default;
};

struct Holder {
  SessionId session = 0;
  Mode mode = Mode::share;
  bool xact = true;  // ends with the transaction; false: a session-level advisory lock
  int count = 1;
};

struct Waiter {
  SessionId session = 0;
  Mode mode = Mode::share;
  std::uint64_t seq = 0;
  std::optional<sim::Promise<bool>> wake{};
};

struct LockState {
  std::vector<Holder> holders;
  std::list<Waiter> waiters;  // in arrival order
};

struct Undo {
  enum class Kind { created, deleted } kind;
  Table* table;
  std::int64_t id;
};

// A savepoint: where the transaction's changes and locks stood when it was set.
struct SavepointMark {
  std::string name;
  std::size_t undo = 0;       // Txn::undo's length then
  std::set<LockKey> held{};   // Txn::held then
};

struct Txn {
  Xid xid = 0;
  bool explicit_ = false;
  Isolation isolation = Isolation::read_committed;
  std::optional<std::uint64_t> snapshot{};  // REPEATABLE READ's, from its first statement
  std::vector<Undo> undo;
  std::set<LockKey> held;  // keys it holds an xact lock on
  std::vector<SavepointMark> savepoints{};  // oldest first
  sim::Time wall_start{};  // the database's clock when it began: its now()
};

struct SessionState {
  SessionId id = 0;
  Isolation isolation = Isolation::read_committed;
  std::string who;
  std::unique_ptr<Txn> txn;
  bool aborted = false;  // an error ended its transaction block: 25P02 until ROLLBACK
  std::optional<Isolation> next_isolation{};
  sim::Duration lock_timeout{}, statement_timeout{};  // zero: none
  std::optional<sim::Duration> deadlock_timeout{};
  std::set<LockKey> advisory;  // session-level advisory keys it holds
  // While it waits: for what, and since when.
  std::optional<LockKey> waiting_on{};
  std::list<Waiter>::iterator waiter{};
  std::vector<LockWait> waits;  // the current statement's
  sim::Time statement_start{};
  sim::Time statement_wall{};  // the database's clock when the statement started: statement_timestamp()
  std::uint64_t statement_snapshot = 0;
};

// What a serializable transaction read, for SSI: a row by its id or its key's value, or a
// whole table (a scan).
struct ReadKey {
  const Table* table = nullptr;
  enum class By { table, id, key } by = By::table;
  Value value{};
  auto operator<=>(const ReadKey&) const = default;
};

// A serializable transaction as SSI follows it, kept after its commit while a transaction
// concurrent with it may still run.
struct Serializable {
  std::uint64_t snapshot = 0;
  std::uint64_t commit = 0;  // 0 while running
  bool wrote = false;
  std::set<ReadKey> reads;
  std::vector<std::pair<const Table*, std::int64_t>> writes;  // rows written, with their keys below
  std::vector<Value> written_keys;
  std::set<Xid> in, out;  // read-write dependencies: in (reader -> this), out (this -> writer)
  bool doomed = false;    // a dangerous structure was found with this one to fail
};

const char* const kSerialization = "could not serialize access due to read/write dependencies among transactions";

const char* const kAborted = "current transaction is aborted, commands ignored until end of transaction block";

class Postgres final : public Database::Model {
 public:
  explicit Postgres(DatabaseConfig config) : config_(config) {}

  // --- The engine's side of Database's calls ---------------------------------

  void create_table(TableSchema schema) override {
    if (tables_.count(schema.name)) throw sim::UsageError("models::db: relation \"" + schema.name + "\" already exists");
    if (!schema.key_tail.empty()) {
      // A unique key of several columns, as MariaDB's DDL states one (a strategy's `tables` may be
      // written so): here a unique index on all of them, the key column an unindexed lookup column.
      schema.indexes.insert(schema.indexes.begin(), IndexDef{.name = schema.index_name.empty() ? schema.key_column : schema.index_name,
                                                             .columns = schema.key_columns(),
                                                             .unique = schema.key_index == KeyIndex::unique});
      schema.key_tail.clear();
      schema.key_index = KeyIndex::none;
      schema.index_name.clear();
    }
    for (const IndexDef& index : schema.indexes)
      if (const auto column = missing_column(schema, index))
        throw sim::UsageError("models::db: column \"" + *column + "\" of the index " + index.name + " does not exist in " + schema.name);
    Table& t = tables_[schema.name];
    t.index_entries.resize(schema.indexes.size());
    t.schema = std::move(schema);
  }

  std::int64_t load_row(const std::string& name, const Values& given, std::string who) override {
    Table& t = table(name);
    std::optional<std::int64_t> explicit_id;
    Values values;
    try {
      values = detail::row_values(t.schema, Engine::postgresql, given, explicit_id);
    } catch (const Failure& e) {
      throw sim::UsageError(e.message);
    }
    if (!explicit_id && !t.schema.auto_increment && !t.schema.clustered_key)
      throw sim::UsageError("null value in column \"id\" of relation \"" + name + "\" violates not-null constraint");
    const std::int64_t id = explicit_id ? *explicit_id : t.next_id;
    if (t.rows.count(id)) throw sim::UsageError(duplicate_message(t, "id"));
    const std::optional<Value> key = key_of(t, values);
    if (key && unique(t) && !live_with_key(t, *key).empty()) throw sim::UsageError(duplicate_message(t, t.schema.key_column));
    try {
      for (std::size_t i = 0; i < t.schema.indexes.size(); ++i) {
        const auto index_key = key_in(t, i, values);
        if (index_key && any_live(t, i, *index_key)) throw sim::UsageError(duplicate_index_message(t.schema.indexes[i]));
      }
    } catch (const Failure& f) {
      throw sim::UsageError("models::db: a row of " + name + ": " + f.message);
    }
    t.next_id = std::max(t.next_id, id == std::numeric_limits<std::int64_t>::max() ? id : id + 1);  // a dump's setval
    values["id"] = Value{id};
    bytes_ += kPostgresCosts.row + kPostgresCosts.of_version(RowValues(values));
    RowChain& row = t.rows[id];
    row.versions.push_back(Tuple{0, ++commits_, 0, 0, t.stored(values)});
    const sim::Engine* engine = sim::Engine::current();
    origins_.keep(row.origin, std::move(who), 0, engine != nullptr ? engine->now() : sim::Time{});
    if (key) t.entries.insert(Entry{*key, id});
    add_index_entries(t, id, row.versions.back().values);
    return id;
  }

  const TableSchema* schema(const std::string& name) const override {
    const auto it = tables_.find(name);
    return it == tables_.end() ? nullptr : &it->second.schema;
  }

  SessionId open_session(Isolation isolation, std::string who) override {
    const SessionId id = next_session_++;
    SessionState& s = sessions_[id];
    s.id = id;
    s.isolation = isolation;
    s.who = std::move(who);
    s.lock_timeout = config_.lock_wait_timeout;  // the scenario's lock_timeout (zero: none, PostgreSQL's default)
    return id;
  }

  void set_origin(SessionId session, std::string who) override { sessions_.at(session).who = std::move(who); }

  Result execute(SessionId session, const Statement& statement, const StatementTiming& timing) override {
    auto it = sessions_.find(session);
    if (it == sessions_.end()) throw sim::UsageError("models::db: no session " + std::to_string(session));
    SessionState& s = it->second;
    s.statement_wall = timing.wall;
    // now(): the transaction's start, or this statement's, which begins one.
    Result out = statement.more().clock_args.empty()
                     ? run(s, statement, timing)
                     : run(s, with_clock(statement, timing.wall, s.txn ? s.txn->wall_start : timing.wall), timing);
    if (out.ok() && out.applied == sim::kNever) out.applied = now_if_running();
    return out;
  }

  void close(SessionId session) override {
    auto it = sessions_.find(session);
    if (it == sessions_.end()) return;
    SessionState& s = it->second;
    if (s.txn) rollback(s);
    release_session_advisory(s, std::nullopt);
    sessions_.erase(it);
  }

  bool in_transaction(SessionId session) const override {
    auto it = sessions_.find(session);
    return it != sessions_.end() && (it->second.txn != nullptr || it->second.aborted);
  }

  bool holds_advisory(SessionId session, std::int64_t key) const override {
    auto it = locks_.find(LockKey{LockKey::Kind::advisory, nullptr, key});
    return it != locks_.end() &&
           std::any_of(it->second.holders.begin(), it->second.holders.end(), [&](const Holder& h) { return h.session == session; });
  }

  std::vector<HeldLock> locks(std::size_t most) const override {
    // By table name and row, not by the map's order (a table's address).
    std::vector<std::tuple<std::string, int, std::int64_t, std::string, std::string>> found;
    for (const auto& [key, state] : locks_) {
      if (key.kind == LockKey::Kind::transaction) continue;  // each transaction's own: pg_locks' transactionid
      for (const Holder& h : state.holders)
        found.emplace_back(key.table != nullptr ? key.table->schema.name : "", static_cast<int>(key.kind), key.id,
                           sessions_.at(h.session).who,
                           key.kind == LockKey::Kind::advisory ? (h.mode == Mode::update ? "ExclusiveLock" : "ShareLock")
                                                               : mode_name(h.mode));
    }
    std::sort(found.begin(), found.end());
    std::vector<HeldLock> out;
    for (const auto& [table, kind, id, who, mode] : found) {
      if (out.size() == most) break;
      const LockKey key{static_cast<LockKey::Kind>(kind), nullptr, id};
      out.push_back({who, table, "", describe(key), mode});
    }
    return out;
  }

  void for_each(const std::string& name, bool ever, const Database::RowVisitor& visit) const override {
    for (const auto& [id, row] : const_table(name).rows)
      if (const Tuple* v = shown(row, ever)) visit(id, v->values, origins_(row.origin));
  }

  std::vector<RowRecord> rows_sharing(const std::string& table, const std::string& column, bool ever) const override {
    return rows_sharing_by_count(*this, table, column, ever);
  }

  const DatabaseStats& stats() const override { return stats_; }
  std::uint64_t bytes_held() const override { return bytes_ + origins_.bytes(); }

 private:
  DatabaseConfig config_;
  DatabaseStats stats_;
  std::map<std::string, Table> tables_;
  std::map<SessionId, SessionState> sessions_;
  std::map<LockKey, LockState> locks_;
  SessionId next_session_ = 1;
  Xid next_xid_ = 1;
  std::uint64_t commits_ = 0;  // the commit counter snapshots compare with
  std::uint64_t bytes_ = 0;
  detail::Origins origins_;  // who wrote the rows
  std::uint64_t wait_seq_ = 0;
  std::map<Xid, Serializable> ssi_;  // the serializable transactions SSI follows
  std::set<Xid> open_xids_;          // transactions running now

  Table& table(const std::string& name) {
    auto it = tables_.find(name);
    if (it == tables_.end()) throw sim::UsageError("models::db: no table '" + name + "'");
    return it->second;
  }
  const Table& const_table(const std::string& name) const {
    auto it = tables_.find(name);
    if (it == tables_.end()) throw sim::UsageError("models::db: no table '" + name + "'");
    return it->second;
  }

  // --- Rows and versions -------------------------------------------------------

  static bool unique(const Table& t) { return !t.schema.key_column.empty() && t.schema.key_index == KeyIndex::unique; }
  template <class Row>  // Values, or a stored row's RowValues
  static std::optional<Value> key_of(const Table& t, const Row& v) {
    if (t.schema.key_column.empty()) return std::nullopt;
    return v.at(t.schema.key_column);
  }
  // PostgreSQL's name for a unique index: the constraint's, or <table>_pkey / <table>_<col>_key.
  static std::string index_name(const Table& t, const std::string& column) {
    if (column == "id") return t.schema.name + "_pkey";
    return t.schema.index_name.empty() ? t.schema.name + "_" + column + "_key" : t.schema.index_name;
  }
  static std::string duplicate_message(const Table& t, const std::string& column) {
    return "duplicate key value violates unique constraint \"" + index_name(t, column) + "\"";
  }
  static std::string duplicate_index_message(const IndexDef& index) {
    return "duplicate key value violates unique constraint \"" + index.name + "\"";
  }

  // --- Further indexes: on several columns, or partial -------------------------------

  // A column an index names, in its columns or its WHERE, that the table lacks; nullopt: none.
  static std::optional<std::string> missing_column(const TableSchema& schema, const IndexDef& index) {
    std::optional<std::string> missing;
    const auto check = [&](const std::string& column) {
      if (!missing && column != "id" && column != schema.key_column && !schema.columns.count(column)) missing = column;
    };
    for (const std::string& column : index.columns) check(column);
    if (index.where) check_expr_columns(*index.where, check);
    return missing;
  }
  template <class Check>
  static void check_expr_columns(const Expr& e, const Check& check) {
    if (e.kind == Expr::Kind::column) check(e.column);
    for (const Expr& a : e.args) check_expr_columns(a, check);
  }

  // The values a version has in the table's further index `i`: nullopt where the index is
  // plain, or partial and its WHERE is not true of the version, or one of them is NULL.
  template <class Row>
  static std::optional<std::vector<Value>> key_in(const Table& t, std::size_t i, const Row& v) {
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
  template <class Row>
  void add_index_entries(Table& t, std::int64_t id, const Row& v) {
    for (std::size_t i = 0; i < t.schema.indexes.size(); ++i)
      if (auto key = key_in(t, i, v)) add_entry(t, i, IndexEntry{std::move(*key), id});
  }
  // What an entry of a further index costs the memory budget: the set's node and the key's
  // values, as RowCosts::of_version counts a row's.
  static std::uint64_t entry_bytes(const IndexEntry& e) {
    std::uint64_t bytes = 64;
    for (const Value& v : e.key) bytes += sizeof(Value) + (std::holds_alternative<std::string>(v) ? std::get<std::string>(v).size() : 0);
    return bytes;
  }
  void add_entry(Table& t, std::size_t i, IndexEntry e) {
    const std::uint64_t bytes = entry_bytes(e);
    if (t.index_entries[i].insert(std::move(e)).second) bytes_ += bytes;
  }
  void erase_entry(Table& t, std::size_t i, const IndexEntry& e) {
    if (t.index_entries[i].erase(e) != 0) bytes_ -= entry_bytes(e);
  }
  // Whether a row other than `except` has a version holding `key` in index `i` that a dirty
  // read finds live (load_row's and CREATE UNIQUE INDEX's check: no transaction runs).
  bool any_live(const Table& t, std::size_t i, const std::vector<Value>& key, std::int64_t except = 0) const {
    for (auto it = t.index_entries[i].lower_bound(IndexEntry{key, std::numeric_limits<std::int64_t>::min()});
         it != t.index_entries[i].end() && it->key == key; ++it) {
      if (it->id == except) continue;
      const Tuple& latest = t.rows.at(it->id).versions.back();
      if (!(latest.xmax != 0 && latest.xmax_commit != 0) && key_in(t, i, latest.values) == key) return true;
    }
    return false;
  }

  // The version a list of committed rows shows: the latest committed one that is not deleted
  // (ever: the first committed one).
  static const Tuple* shown(const RowChain& row, bool ever) {
    if (ever) {
      for (const Tuple& v : row.versions)
        if (v.xmin_commit != 0) return &v;
      return nullptr;
    }
    for (auto it = row.versions.rbegin(); it != row.versions.rend(); ++it)
      if (it->xmin_commit != 0) return it->xmax_commit != 0 ? nullptr : &*it;
    return nullptr;
  }

  // Whether `v` is seen by a snapshot taken at commit count `snap` by transaction `me`.
  static bool sees(const Tuple& v, Xid me, std::uint64_t snap) {
    const bool created = v.xmin == me || (v.xmin_commit != 0 && v.xmin_commit <= snap);
    if (!created) return false;
    const bool deleted = v.xmax != 0 && (v.xmax == me || (v.xmax_commit != 0 && v.xmax_commit <= snap));
    return !deleted;
  }
  // The version a snapshot sees, by its place in the chain (a place stays the version's while
  // others come and go after it); nullopt: none.
  static std::optional<std::size_t> visible(const RowChain& row, Xid me, std::uint64_t snap) {
    for (std::size_t i = row.versions.size(); i-- > 0;)
      if (sees(row.versions[i], me, snap)) return i;
    return std::nullopt;
  }
  // The newest version whose creator committed or is `me`: what a lock is taken on.
  static std::size_t newest(const RowChain& row, Xid me) {
    for (std::size_t i = row.versions.size(); i-- > 0;)
      if (row.versions[i].xmin_commit != 0 || row.versions[i].xmin == me) return i;
    return 0;
  }

  bool running(Xid xid) const { return xid != 0 && open_xids_.count(xid) != 0; }

  // The ids of rows with a version holding `key` that is live to a dirty read: created by a
  // committed or running transaction, not deleted by a committed one.
  std::vector<std::int64_t> live_with_key(const Table& t, const Value& key) const {
    std::vector<std::int64_t> out;
    if (is_null(key)) return out;  // NULLs are distinct: a NULL key conflicts with none
    for (auto it = t.entries.lower_bound(Entry{key, std::numeric_limits<std::int64_t>::min()}); it != t.entries.end() && it->key == key; ++it) {
      const RowChain& row = t.rows.at(it->id);
      const Tuple& latest = row.versions.back();
      if (latest.values.at(t.schema.key_column) == key && !(latest.xmax != 0 && latest.xmax_commit != 0)) out.push_back(it->id);
    }
    return out;
  }

  static bool per_statement(const Txn& txn) {
    return txn.isolation == Isolation::read_committed || txn.isolation == Isolation::read_uncommitted;
  }
  // The statement's snapshot: taken as it starts (READ COMMITTED) or at the transaction's first
  // statement (REPEATABLE READ, SERIALIZABLE).
  std::uint64_t snapshot(SessionState& s) {
    Txn& txn = *s.txn;
    if (per_statement(txn)) return s.statement_snapshot;
    if (!txn.snapshot) {
      txn.snapshot = commits_;
      if (serializable(txn)) ssi_[txn.xid].snapshot = commits_;
    }
    return *txn.snapshot;
  }

  // --- Locks -------------------------------------------------------------------

  // The sessions whose locks on `key` a request for `mode` waits behind: conflicting holders,
  // and conflicting waiters that came first (`seq`; a new request comes after every waiter).
  std::vector<SessionId> blockers(const LockKey& key, SessionId me, Mode mode, std::uint64_t seq) const {
    std::set<SessionId> out;
    const auto it = locks_.find(key);
    if (it == locks_.end()) return {};
    for (const Holder& h : it->second.holders)
      if (h.session != me && conflicts(mode, h.mode)) out.insert(h.session);
    for (const Waiter& w : it->second.waiters)
      if (w.seq < seq && w.session != me && conflicts(mode, w.mode)) out.insert(w.session);
    return {out.begin(), out.end()};
  }

  // A cycle of waits through `start`: the sessions on it, start first.
  std::vector<SessionId> cycle_from(SessionId start) const {
    std::vector<SessionId> path, found;
    std::set<SessionId> seen;
    auto dfs = [&](auto&& self, SessionId s) -> bool {
      const SessionState& state = sessions_.at(s);
      if (!state.waiting_on) return false;
      path.push_back(s);
      for (SessionId b : blockers(*state.waiting_on, s, state.waiter->mode, state.waiter->seq)) {
        if (b == start) {
          found = path;
          return true;
        }
        if (!seen.insert(b).second) continue;
        if (self(self, b)) return true;
      }
      path.pop_back();
      return false;
    };
    dfs(dfs, start);
    return found;
  }

  void wake_waiters(const LockKey& key) {
    const auto it = locks_.find(key);
    if (it == locks_.end()) return;
    for (Waiter& w : it->second.waiters)
      if (w.wake) {
        w.wake->set_value(true);
        w.wake.reset();
      }
    if (it->second.holders.empty() && it->second.waiters.empty()) locks_.erase(it);
  }

  std::string describe(const LockKey& key) const {
    switch (key.kind) {
      case LockKey::Kind::row: return fmt::format("row ({})", key.id);
      case LockKey::Kind::transaction: return fmt::format("transaction {}", key.id);
      case LockKey::Kind::advisory: return fmt::format("advisory key {}", key.id);
    }
    return "?";
  }

  enum class Got { at_once, after_wait, skipped };

  // Takes `mode` on `key` for the session (held to the transaction's end, or, with !xact, a
  // session-level advisory lock), waiting first come first served; with !hold only waits until
  // it could take it (a wait for a transaction's end). Throws Failure: 55P03 (NOWAIT or
  // lock_timeout), 57014 (statement_timeout), 40P01 (this session found a deadlock).
  Got acquire(SessionState& s, const LockKey& key, Mode mode, bool xact, bool hold, Statement::OnLocked on_locked) {
    // A transaction that holds a lock on the row already waits only for the other holders whose
    // locks conflict, not behind the sessions queued for the row: PostgreSQL's heap_update and
    // heap_lock_tuple take the tuple lock (the queue) only to wait for another transaction.
    // Queueing there made a false deadlock of a FOR UPDATE or FOR SHARE followed by its UPDATE
    // while another session waited for the row.
    const bool holds_row = key.kind == LockKey::Kind::row && holds_lock_on(s, key);
    std::uint64_t seq = holds_row ? 0 : std::numeric_limits<std::uint64_t>::max();
    bool waited = false;
    std::size_t wait_index = 0;
    sim::Time started{};
    bool deadlock_checked = false;
    for (;;) {
      const std::vector<SessionId> behind = blockers(key, s.id, mode, seq);
      if (behind.empty()) {
        if (waited) {
          LockState& state = locks_.at(key);
          state.waiters.erase(s.waiter);
          s.waiting_on.reset();
          s.waits[wait_index].waited = sim::now() - started;
        }
        if (hold) take(s, key, mode, xact);
        if (waited) wake_waiters(key);  // those behind it look again
        return waited ? Got::after_wait : Got::at_once;
      }
      if (!waited) {
        if (on_locked == Statement::OnLocked::skip) return Got::skipped;
        if (on_locked == Statement::OnLocked::fail)
          throw Failure{Code::lock_wait_timeout, key.kind == LockKey::Kind::row
                                                     ? "could not obtain lock on row in relation \"" + key.table->schema.name + "\""
                                                     : "could not obtain lock on " + describe(key)};
        waited = true;
        started = sim::now();
        seq = ++wait_seq_;
        LockState& state = locks_[key];
        s.waiter = state.waiters.insert(state.waiters.end(), Waiter{s.id, mode, seq});
        s.waiting_on = key;
        ++stats_.lock_waits;
        LockWait w;
        w.table = key.table != nullptr ? key.table->schema.name : "";
        w.entry = describe(key);
        w.mode = key.kind == LockKey::Kind::transaction ? "ShareLock" : mode_name(mode);
        if (key.kind == LockKey::Kind::advisory) w.mode = mode == Mode::update ? "ExclusiveLock" : "ShareLock";
        for (SessionId b : behind) w.behind.push_back(sessions_.at(b).who);
        s.waits.push_back(std::move(w));
        wait_index = s.waits.size() - 1;
      }
      // The earliest of: the deadlock check, lock_timeout, statement_timeout.
      const sim::Duration deadlock_after = s.deadlock_timeout.value_or(config_.deadlock_timeout);
      sim::Time until = sim::kNever;
      if (!deadlock_checked) until = started + deadlock_after;
      const sim::Duration lock_timeout = s.lock_timeout;
      if (lock_timeout > sim::Duration::zero()) until = std::min(until, started + lock_timeout);
      if (s.statement_timeout > sim::Duration::zero()) until = std::min(until, s.statement_start + s.statement_timeout);
      sim::Promise<bool> promise("postgres lock wait");
      sim::Future<bool> woken = promise.get_future();
      s.waiter->wake.emplace(std::move(promise));
      const bool got = woken.try_get_until(until).has_value();
      if (got) continue;  // look again
      s.waiter->wake.reset();
      const sim::Time now = sim::now();
      const auto give_up = [&](Code code, std::string message) {
        locks_.at(key).waiters.erase(s.waiter);
        s.waiting_on.reset();
        s.waits[wait_index].waited = now - started;
        wake_waiters(key);
        throw Failure{code, std::move(message)};
      };
      if (s.statement_timeout > sim::Duration::zero() && now >= s.statement_start + s.statement_timeout)
        give_up(Code::statement_timeout, "canceling statement due to statement timeout");
      if (lock_timeout > sim::Duration::zero() && now >= started + lock_timeout) {
        ++stats_.lock_wait_timeouts;
        give_up(Code::lock_wait_timeout, "canceling statement due to lock timeout");
      }
      if (!deadlock_checked && now >= started + deadlock_after) {
        deadlock_checked = true;
        if (std::vector<SessionId> cycle = cycle_from(s.id); !cycle.empty()) {
          ++stats_.deadlocks;
          std::vector<std::string> names;
          for (SessionId c : cycle) names.push_back(sessions_.at(c).who);
          locks_.at(key).waiters.erase(s.waiter);
          s.waiting_on.reset();
          s.waits[wait_index].waited = now - started;
          wake_waiters(key);
          throw Failure{Code::deadlock, "deadlock detected", std::move(names)};
        }
      }
    }
  }

  bool holds_lock_on(const SessionState& s, const LockKey& key) const {
    const auto it = locks_.find(key);
    return it != locks_.end() &&
           std::any_of(it->second.holders.begin(), it->second.holders.end(), [&](const Holder& h) { return h.session == s.id; });
  }

  void take(SessionState& s, const LockKey& key, Mode mode, bool xact) {
    LockState& state = locks_[key];
    for (Holder& h : state.holders) {
      if (h.session != s.id || h.xact != xact) continue;
      if (key.kind == LockKey::Kind::advisory) {
        if (h.mode == mode) {
          ++h.count;
          return;
        }
        continue;
      }
      h.mode = std::max(h.mode, mode);  // a stronger row lock replaces a weaker one
      return;
    }
    state.holders.push_back(Holder{s.id, mode, xact, 1});
    if (xact) s.txn->held.insert(key);
    else s.advisory.insert(key);
  }

  // Lets go of the session's transaction-scoped locks.
  void release_xact(SessionState& s, Txn& txn) {
    for (const LockKey& key : txn.held) let_go(s, key);
    txn.held.clear();
  }

  // Lets go of the session's transaction-scoped lock on `key` (the caller forgets it in
  // Txn::held), and wakes its waiters.
  void let_go(SessionState& s, const LockKey& key) {
    auto it = locks_.find(key);
    if (it == locks_.end()) return;
    std::erase_if(it->second.holders, [&](const Holder& h) { return h.session == s.id && h.xact; });
    wake_waiters(key);
  }

  // Session-level advisory locks: one key's (all its counts), or every key.
  void release_session_advisory(SessionState& s, std::optional<LockKey> only) {
    for (auto k = s.advisory.begin(); k != s.advisory.end();) {
      if (only && *k != *only) {
        ++k;
        continue;
      }
      const LockKey key = *k;
      if (auto it = locks_.find(key); it != locks_.end())
        std::erase_if(it->second.holders, [&](const Holder& h) { return h.session == s.id && !h.xact; });
      k = s.advisory.erase(k);
      wake_waiters(key);
    }
  }

  // --- Serializable snapshot isolation -------------------------------------------

  static bool serializable(const Txn& txn) { return txn.isolation == Isolation::serializable; }

  // Whether two serializable transactions overlapped: neither committed before the other's
  // snapshot.
  static bool concurrent(const Serializable& a, const Serializable& b) {
    return (a.commit == 0 || a.commit > b.snapshot) && (b.commit == 0 || b.commit > a.snapshot);
  }

  static bool covers(const ReadKey& r, const Table* table, std::int64_t id, const std::vector<Value>& keys) {
    if (r.table != table) return false;
    switch (r.by) {
      case ReadKey::By::table: return true;
      case ReadKey::By::id: return r.value == Value{id};
      case ReadKey::By::key: return std::find(keys.begin(), keys.end(), r.value) != keys.end();
    }
    return false;
  }

  // Records that `reader` read what `writer` wrote (or will write) in a version it cannot see,
  // then looks for a dangerous structure through either. The current statement's transaction
  // `self` fails where it is the structure's pivot or its T_in; otherwise the pivot is doomed:
  // its next statement or its COMMIT fails.
  void depends(Xid reader, Xid writer, Xid self) {
    if (reader == writer) return;
    if (!ssi_.at(reader).out.insert(writer).second) return;
    ssi_.at(writer).in.insert(reader);
    for (Xid pivot : {reader, writer}) {
      if (!dangerous(pivot)) continue;
      if (pivot == self || dangerous(pivot, self)) throw Failure{Code::serialization_failure, kSerialization};
      if (ssi_.at(pivot).commit == 0) ssi_.at(pivot).doomed = true;
    }
  }

  // T_in -> pivot -> T_out with T_out committed first (before the pivot and T_in commit; for a
  // read-only T_in, before its snapshot). `only_in`: with that T_in.
  bool dangerous(Xid pivot, std::optional<Xid> only_in = std::nullopt) const {
    const Serializable& p = ssi_.at(pivot);
    for (Xid o : p.out) {
      const auto out = ssi_.find(o);
      if (out == ssi_.end() || out->second.commit == 0) continue;
      const std::uint64_t first = out->second.commit;
      if (p.commit != 0 && p.commit < first) continue;
      for (Xid i : p.in) {
        if (only_in && i != *only_in) continue;
        const auto in = ssi_.find(i);
        if (in == ssi_.end()) continue;
        if (in->second.commit != 0 && in->second.commit < first) continue;
        if (!in->second.wrote && in->second.snapshot < first) continue;  // a read-only T_in that could not see T_out
        return true;
      }
    }
    return false;
  }

  // Whether committing `xid` now would complete a dangerous structure whose other members
  // have all committed: it is then the only one left to fail.
  bool would_endanger(Xid xid) {
    Serializable& me = ssi_.at(xid);
    me.commit = commits_ + 1;  // as if committed now
    bool found = false;
    for (Xid pivot : me.in)
      if (const auto p = ssi_.find(pivot); p != ssi_.end() && p->second.commit != 0 && dangerous(pivot)) found = true;
    me.commit = 0;
    return found;
  }

  void ssi_read(SessionState& s, ReadKey key) {
    Txn& txn = *s.txn;
    if (!serializable(txn)) return;
    Serializable& me = ssi_.at(txn.xid);
    if (!me.reads.insert(key).second) return;
    for (auto& [xid, other] : ssi_) {
      if (xid == txn.xid || !concurrent(me, other)) continue;
      for (std::size_t i = 0; i < other.writes.size(); ++i)
        if (covers(key, other.writes[i].first, other.writes[i].second, {other.written_keys[i]})) {
          depends(txn.xid, xid, txn.xid);
          break;
        }
    }
  }

  void ssi_write(SessionState& s, const Table& t, std::int64_t id, const Value& key) {
    Txn& txn = *s.txn;
    if (!serializable(txn)) return;
    Serializable& me = ssi_.at(txn.xid);
    me.wrote = true;
    me.writes.emplace_back(&t, id);
    me.written_keys.push_back(key);
    std::vector<Xid> readers;
    for (const auto& [xid, other] : ssi_) {
      if (xid == txn.xid || !concurrent(me, other)) continue;
      if (std::any_of(other.reads.begin(), other.reads.end(), [&](const ReadKey& r) { return covers(r, &t, id, {key}); }))
        readers.push_back(xid);
    }
    for (Xid r : readers) depends(r, txn.xid, txn.xid);
  }

  // Forgets committed transactions no running serializable one overlaps.
  void ssi_prune() {
    std::optional<std::uint64_t> oldest;
    for (const auto& [xid, t] : ssi_)
      if (t.commit == 0) oldest = std::min(oldest.value_or(t.snapshot), t.snapshot);
    std::erase_if(ssi_, [&](const auto& e) { return e.second.commit != 0 && (!oldest || e.second.commit <= *oldest); });
  }

  // --- Transactions ------------------------------------------------------------

  Txn& begin(SessionState& s, bool explicit_) {
    s.txn = std::make_unique<Txn>();
    Txn& txn = *s.txn;
    txn.xid = next_xid_++;
    txn.explicit_ = explicit_;
    txn.wall_start = s.statement_wall;
    txn.isolation = s.next_isolation.value_or(s.isolation);
    s.next_isolation.reset();
    open_xids_.insert(txn.xid);
    take(s, LockKey{LockKey::Kind::transaction, nullptr, static_cast<std::int64_t>(txn.xid)}, Mode::update, true);
    return txn;
  }

  void undo_all(Txn& txn) { undo_to(txn, 0); }

  // Undoes the transaction's changes after its first `keep` ones, the latest first.
  void undo_to(Txn& txn, std::size_t keep) {
    while (txn.undo.size() > keep) {
      const Undo u = txn.undo.back();
      txn.undo.pop_back();
      Table& t = *u.table;
      auto row = t.rows.find(u.id);
      if (u.kind == Undo::Kind::deleted) {
        for (Tuple& v : row->second.versions)
          if (v.xmax == txn.xid) v.xmax = 0;
        continue;
      }
      const Tuple gone = std::move(row->second.versions.back());
      row->second.versions.pop_back();
      bytes_ -= kPostgresCosts.of_version(gone.values);
      if (const auto key = key_of(t, gone.values)) {
        const bool kept = std::any_of(row->second.versions.begin(), row->second.versions.end(),
                                      [&](const Tuple& v) { return v.values.at(t.schema.key_column) == *key; });
        if (!kept) t.entries.erase(Entry{*key, u.id});
      }
      for (std::size_t i = 0; i < t.schema.indexes.size(); ++i) {
        const auto key = key_in(t, i, gone.values);
        if (!key) continue;
        const bool kept = std::any_of(row->second.versions.begin(), row->second.versions.end(),
                                      [&](const Tuple& v) { return key_in(t, i, v.values) == key; });
        if (!kept) erase_entry(t, i, IndexEntry{*key, u.id});
      }
      if (row->second.versions.empty()) {
        origins_.drop(row->second.origin);
        t.rows.erase(row);
        bytes_ -= kPostgresCosts.row;
      }
    }
  }

  void end(SessionState& s) {
    Txn& txn = *s.txn;
    open_xids_.erase(txn.xid);
    release_xact(s, txn);
    s.txn.reset();
  }

  // ROLLBACK TO SAVEPOINT, or an error in a transaction that has one (PostgreSQL aborts the
  // innermost subtransaction at once): the changes since `mark` are undone and the locks first
  // taken since let go. A lock taken before it and made stronger since stays as strong.
  std::int64_t roll_back_to(SessionState& s, const SavepointMark& mark) {
    Txn& txn = *s.txn;
    const auto undone = static_cast<std::int64_t>(txn.undo.size() - mark.undo);
    undo_to(txn, mark.undo);
    for (auto k = txn.held.begin(); k != txn.held.end();) {
      if (mark.held.count(*k)) {
        ++k;
        continue;
      }
      const LockKey key = *k;
      k = txn.held.erase(k);
      let_go(s, key);
    }
    return undone;
  }

  // SAVEPOINT, ROLLBACK TO SAVEPOINT, RELEASE SAVEPOINT. Outside a transaction block each is
  // 25P01; a name not set is 3B001, an error that aborts the block as any other does. ROLLBACK
  // TO is what ends an aborted block's 25P02 and keeps the savepoint; RELEASE forgets it and
  // every later one. Of two savepoints of one name, the later is meant.
  Result savepoint(SessionState& s, const Statement& st) {
    using Op = Savepoint::Op;
    const Savepoint& sp = st.savepoint;
    if (!s.aborted && (!s.txn || !s.txn->explicit_)) {
      const char* what = sp.op == Op::set ? "SAVEPOINT" : sp.op == Op::release ? "RELEASE SAVEPOINT" : "ROLLBACK TO SAVEPOINT";
      return Result{.code = Code::no_active_transaction, .message = std::string(what) + " can only be used in transaction blocks"};
    }
    if (s.aborted && sp.op != Op::rollback_to) return Result{.code = Code::in_failed_transaction, .message = kAborted};
    if (sp.op == Op::set) {
      s.txn->savepoints.push_back(SavepointMark{sp.name, s.txn->undo.size(), s.txn->held});
      return {};
    }
    // The latest savepoint of that name; none where an error ended the whole transaction.
    std::vector<SavepointMark> none;
    std::vector<SavepointMark>& marks = s.txn ? s.txn->savepoints : none;
    const auto found = std::find_if(marks.rbegin(), marks.rend(), [&](const SavepointMark& m) { return m.name == sp.name; });
    if (found == marks.rend()) {
      Result r{.code = Code::no_such_savepoint, .message = "savepoint \"" + sp.name + "\" does not exist"};
      if (!s.aborted) abort_block(s, r);
      return r;
    }
    const auto at = std::prev(found.base());  // the mark, as a forward iterator
    if (sp.op == Op::release) {
      marks.erase(at, marks.end());
    } else {
      marks.erase(std::next(at), marks.end());
      roll_back_to(s, marks.back());
      s.aborted = false;
    }
    return {};
  }

  // An error inside a transaction block: with a savepoint, the changes since the latest are
  // undone and the block waits for ROLLBACK TO or ROLLBACK; without one, all of it is.
  void abort_block(SessionState& s, Result& out) {
    if (!s.txn->savepoints.empty()) {
      out.undone = Undone::statement;  // back to the savepoint: the block itself stays, aborted
      out.undone_rows = roll_back_to(s, s.txn->savepoints.back());
    } else {
      out.undone = Undone::transaction;
      out.undone_rows = static_cast<std::int64_t>(s.txn->undo.size());
      rollback(s);
    }
    s.aborted = true;
  }

  void rollback(SessionState& s) {
    ssi_.erase(s.txn->xid);  // an aborted transaction's reads and dependencies go with it
    ssi_prune();
    undo_all(*s.txn);
    end(s);
    ++stats_.rollbacks;
  }

  void commit(SessionState& s) {
    Txn& txn = *s.txn;
    ++commits_;
    if (const auto it = ssi_.find(txn.xid); it != ssi_.end()) it->second.commit = commits_;
    for (const Undo& u : txn.undo)
      for (Tuple& v : u.table->rows.at(u.id).versions) {
        if (v.xmin == txn.xid && v.xmin_commit == 0) v.xmin_commit = commits_;
        if (v.xmax == txn.xid && v.xmax_commit == 0) v.xmax_commit = commits_;
      }
    end(s);
    ssi_prune();
    ++stats_.commits;
  }

  // --- Reading and locking rows --------------------------------------------------

  static Row row_of(std::int64_t id, const RowValues& values) { return Row{id, values}; }

  // The rows the statement's snapshot shows that match its WHERE, in id order, each with the
  // place of the version seen.
  std::vector<std::pair<std::int64_t, std::size_t>> scan(SessionState& s, Table& t, const Statement& st) {
    const std::uint64_t snap = snapshot(s);
    const Xid me = s.txn->xid;
    std::vector<std::pair<std::int64_t, std::size_t>> out;
    const auto consider = [&](std::int64_t id, const RowChain& row) {
      const std::optional<std::size_t> v = visible(row, me, snap);
      if (v && matches(row.versions[*v].values, st)) out.emplace_back(id, *v);
    };
    const auto named = std::find_if(st.where.begin(), st.where.end(), [&](const Condition& c) {
      return c.op == Condition::Op::eq && (c.column == "id" || (!t.schema.key_column.empty() && c.column == t.schema.key_column));
    });
    if (serializable(*s.txn)) {
      // What the read covers: the row or key it looked up through an index, else the table
      // (PostgreSQL's sequential scan locks the relation).
      const bool indexed = named != st.where.end() && (named->column == "id" || t.schema.key_index != KeyIndex::none);
      if (!indexed) ssi_read(s, ReadKey{&t, ReadKey::By::table, {}});
      else ssi_read(s, ReadKey{&t, named->column == "id" ? ReadKey::By::id : ReadKey::By::key, named->value});
    }
    if (named != st.where.end() && named->column == "id") {
      if (const auto* id = std::get_if<std::int64_t>(&named->value); id != nullptr)
        if (const auto row = t.rows.find(*id); row != t.rows.end()) consider(*id, row->second);
    } else if (named != st.where.end()) {
      // A key's entries are (key, id) pairs, each once, in id order.
      for (auto it = t.entries.lower_bound(Entry{named->value, std::numeric_limits<std::int64_t>::min()});
           it != t.entries.end() && it->key == named->value; ++it)
        consider(it->id, t.rows.at(it->id));
    } else {
      sim::work(t.rows.size());
      for (const auto& [id, row] : t.rows) consider(id, row);
    }
    return out;
  }

  // Locks a row the statement found in its snapshot (the version at `seen`), as heap_lock_tuple
  // and EvalPlanQual do: waits for a conflicting holder; a row changed since the snapshot is
  // read again under READ COMMITTED (its WHERE checked anew; nullopt when it no longer
  // matches or is gone) and is 40001 under REPEATABLE READ. Returns the place of the version
  // locked (nullopt: left, as SKIP LOCKED leaves a locked row).
  std::optional<std::size_t> lock_row(SessionState& s, Table& t, std::int64_t id, std::size_t seen, const Statement& st, Mode mode) {
    const LockKey key{LockKey::Kind::row, &t, id};
    if (acquire(s, key, mode, true, true, st.on_locked) == Got::skipped) return std::nullopt;
    const Xid me = s.txn->xid;
    const RowChain& row = t.rows.at(id);
    const std::size_t now = newest(row, me);
    const Tuple& latest = row.versions[now];
    const bool deleted = latest.xmax != 0 && latest.xmax != me && latest.xmax_commit != 0;
    if (now == seen && !deleted) return now;
    if (!per_statement(*s.txn))
      throw Failure{Code::serialization_failure,
                    std::string("could not serialize access due to concurrent ") + (deleted && now == seen ? "delete" : "update")};
    if (deleted || !matches(latest.values, st)) return std::nullopt;
    return now;
  }

  // The rows a locking read, UPDATE or DELETE acts on, each locked in `mode`, in the order
  // ORDER BY gives (id order without one), stopping at LIMIT's rows: each with the place of
  // the version locked.
  std::vector<std::pair<std::int64_t, std::size_t>> locked_rows(SessionState& s, Table& t, const Statement& st, Mode mode) {
    const auto found = scan(s, t, st);
    std::vector<Row> ordered;
    ordered.reserve(found.size());
    for (const auto& [id, v] : found) ordered.push_back(row_of(id, t.rows.at(id).versions[v].values));
    if (!st.more().order_by.empty()) {
      Statement order_only = st;
      order_only.limit.reset();
      order_only.offset = 0;
      order_and_limit(order_only, Engine::postgresql, ordered);
    }
    const std::map<std::int64_t, std::size_t> seen(found.begin(), found.end());
    std::optional<std::size_t> enough;  // LIMIT + OFFSET rows, beyond which no row is locked
    if (st.limit) enough = static_cast<std::size_t>(*st.limit) + static_cast<std::size_t>(st.offset);
    std::vector<std::pair<std::int64_t, std::size_t>> out;
    for (const Row& r : ordered) {
      if (enough && out.size() >= *enough) break;
      if (const auto v = lock_row(s, t, r.id, seen.at(r.id), st, mode)) out.emplace_back(r.id, *v);
    }
    const auto skip = std::min<std::ptrdiff_t>(st.offset, static_cast<std::ptrdiff_t>(out.size()));
    out.erase(out.begin(), out.begin() + skip);
    return out;
  }

  static Mode mode_of(ReadLock lock) {
    switch (lock) {
      case ReadLock::key_share: return Mode::key_share;
      case ReadLock::share: return Mode::share;
      case ReadLock::no_key_update: return Mode::no_key_update;
      default: return Mode::update;
    }
  }

  std::vector<Row> select(SessionState& s, Table& t, const Statement& st) {
    std::vector<Row> out;
    if (st.lock != ReadLock::none) {
      for (const auto& [id, v] : locked_rows(s, t, st, mode_of(st.lock))) out.push_back(row_of(id, t.rows.at(id).versions[v].values));
      return out;
    }
    for (const auto& [id, v] : scan(s, t, st)) out.push_back(row_of(id, t.rows.at(id).versions[v].values));
    order_and_limit(st, Engine::postgresql, out);
    return out;
  }

  // --- Writing rows --------------------------------------------------------------

  void add_version(SessionState& s, Table& t, std::int64_t id, const Values& columns, const RowOrigin* origin) {
    RowValues values = t.stored(columns);
    ssi_write(s, t, id, key_of(t, values).value_or(Value{}));
    if (auto key = key_of(t, values)) t.entries.insert(Entry{*key, id});
    add_index_entries(t, id, values);
    auto [row, fresh] = t.rows.try_emplace(id);
    bytes_ += kPostgresCosts.of_version(values) + (fresh ? kPostgresCosts.row : 0);
    row->second.versions.push_back(Tuple{s.txn->xid, 0, 0, 0, std::move(values)});
    if (origin != nullptr) origins_.keep(row->second.origin, origin->who, origin->transaction, origin->inserted_at);
    s.txn->undo.push_back({Undo::Kind::created, &t, id});
  }

  void mark_deleted(SessionState& s, Table& t, std::int64_t id) {
    ssi_write(s, t, id, key_of(t, t.rows.at(id).versions.back().values).value_or(Value{}));
    t.rows.at(id).versions.back().xmax = s.txn->xid;
    s.txn->undo.push_back({Undo::Kind::deleted, &t, id});
  }

  Result update(SessionState& s, Table& t, const Statement& st, bool remove) {
    if (!remove) detail::check_unmoved(t.schema, st);
    Result out;
    // An UPDATE that changes no key takes FOR NO KEY UPDATE; a DELETE, FOR UPDATE.
    for (const auto& [id, v] : locked_rows(s, t, st, remove ? Mode::update : Mode::no_key_update)) {
      const RowValues old = t.rows.at(id).versions[v].values;
      if (remove) {
        mark_deleted(s, t, id);
        ++out.affected;
        if (!st.more().returning.empty()) out.rows.push_back(row_of(id, old));
        continue;
      }
      Values next = old.to_values();
      for (const auto& [column, value] : st.values) {
        if (!next.count(column)) throw Failure{Code::bad_field, "column \"" + column + "\" of relation \"" + t.schema.name + "\" does not exist"};
        next[column] = value;
      }
      detail::assign(st, next, nullptr, Engine::postgresql);
      detail::check_row(t.schema, Engine::postgresql, next);
      mark_deleted(s, t, id);  // the old version ends, a new one begins (its own earlier one too)
      check_new_version(s, t, next);
      add_version(s, t, id, next, nullptr);
      ++out.affected;  // PostgreSQL counts every row it updated, changed or not
      if (!st.more().returning.empty()) out.rows.push_back(row_of(id, t.rows.at(id).versions.back().values));
    }
    return out;
  }

  // Waits for the transaction `xid` to end (XactLockTableWait).
  void wait_for_transaction(SessionState& s, Xid xid) {
    acquire(s, LockKey{LockKey::Kind::transaction, nullptr, static_cast<std::int64_t>(xid)}, Mode::share, true, false,
            Statement::OnLocked::wait);
  }

  // The first row of a unique index holding the new row's value, as a dirty read finds it;
  // waits for a transaction still inserting or deleting it, then looks again. nullopt: none.
  std::optional<std::int64_t> unique_conflict(SessionState& s, Table& t, const std::string& column, const Value& value) {
    if (is_null(value)) return std::nullopt;  // NULLs are distinct
    for (;;) {
      std::vector<std::int64_t> ids;
      if (column == "id") {
        if (t.rows.count(std::get<std::int64_t>(value))) ids.push_back(std::get<std::int64_t>(value));
      } else {
        for (auto it = t.entries.lower_bound(Entry{value, std::numeric_limits<std::int64_t>::min()});
             it != t.entries.end() && it->key == value; ++it)
          ids.push_back(it->id);
      }
      std::optional<Xid> wait_for;
      std::optional<std::int64_t> found;
      for (std::int64_t id : ids) {
        const Tuple& latest = t.rows.at(id).versions.back();
        if (column != "id" && latest.values.at(column) != value) continue;
        const Xid me = s.txn->xid;
        if (latest.xmax != 0 && latest.xmax_commit != 0) continue;  // deleted, committed
        if (latest.xmax == me) continue;                             // deleted by this transaction
        if (latest.xmin != me && latest.xmin_commit == 0 && running(latest.xmin)) {
          wait_for = latest.xmin;  // an insert not yet committed
          break;
        }
        if (latest.xmax != 0 && running(latest.xmax)) {
          wait_for = latest.xmax;  // a delete not yet committed
          break;
        }
        found = id;
        break;
      }
      if (wait_for) {
        wait_for_transaction(s, *wait_for);
        continue;
      }
      return found;
    }
  }

  // The first row whose version holds `key` in the further unique index `i`, as _bt_check_unique
  // finds it: each version the index has an entry for is checked with a dirty read, and one a
  // transaction still inserts or deletes (an UPDATE that moved it out of the index included) is
  // waited for, then the index is looked at again. nullopt: none.
  std::optional<std::int64_t> index_conflict(SessionState& s, Table& t, std::size_t i, const std::vector<Value>& key) {
    const Xid me = s.txn->xid;
    for (;;) {
      std::optional<Xid> wait_for;
      std::optional<std::int64_t> found;
      for (auto it = t.index_entries[i].lower_bound(IndexEntry{key, std::numeric_limits<std::int64_t>::min()});
           it != t.index_entries[i].end() && it->key == key && !wait_for && !found; ++it) {
        for (const Tuple& v : t.rows.at(it->id).versions) {
          if (key_in(t, i, v.values) != key) continue;
          if (v.xmax != 0 && v.xmax_commit != 0) continue;  // deleted or replaced, committed
          if (v.xmax == me) continue;                       // deleted or replaced by this transaction
          if (v.xmin != me && v.xmin_commit == 0 && running(v.xmin)) wait_for = v.xmin;
          else if (v.xmax != 0 && running(v.xmax)) wait_for = v.xmax;
          else found = it->id;
          break;
        }
      }
      if (!wait_for) return found;
      wait_for_transaction(s, *wait_for);
    }
  }

  // A new version of row `id` (an UPDATE's, or ON CONFLICT DO UPDATE's) against the further
  // unique indexes: 23505 where another row holds its values in one.
  void check_new_version(SessionState& s, Table& t, const Values& next) {
    for (std::size_t i = 0; i < t.schema.indexes.size(); ++i)
      if (const auto key = key_in(t, i, next); key && index_conflict(s, t, i, *key)) {
        ++stats_.duplicate_keys;
        throw Failure{Code::duplicate_key, duplicate_index_message(t.schema.indexes[i])};
      }
  }

  // The unique indexes an INSERT ... ON CONFLICT (cols) [WHERE ...] arbitrates on, as
  // PostgreSQL infers them: those on exactly the target's columns, a partial one only where
  // the target's WHERE implies the index's (the model proves it when each term of the index's
  // WHERE is among the target's terms). Without a target, every unique index. 42P10 for none.
  struct Arbiters {
    bool id = false, key = false;
    std::vector<bool> indexes{};
  };
  static void terms_of(const Expr& e, std::vector<std::string>& out) {
    if (e.kind == Expr::Kind::logical_and) {
      for (const Expr& a : e.args) terms_of(a, out);
      return;
    }
    out.push_back(to_string(e));
  }
  static Arbiters arbiters(const Table& t, const Statement& st) {
    const std::vector<std::string>& target = st.more().conflict_target;
    Arbiters out;
    out.indexes.assign(t.schema.indexes.size(), false);
    if (st.on_duplicate != OnDuplicate::ignore && st.on_duplicate != OnDuplicate::update) return out;
    const std::set<std::string> wanted(target.begin(), target.end());
    const auto on = [&](const std::vector<std::string>& columns) {
      return target.empty() || std::set<std::string>(columns.begin(), columns.end()) == wanted;
    };
    std::vector<std::string> given;
    if (const auto& where = st.more().conflict_index_where) terms_of(*where, given);
    bool any = false;
    out.id = on({"id"});
    out.key = unique(t) && on({t.schema.key_column});
    any = out.id || out.key;
    for (std::size_t i = 0; i < t.schema.indexes.size(); ++i) {
      const IndexDef& index = t.schema.indexes[i];
      if (!index.unique || !on(index.columns)) continue;
      if (index.where && !target.empty()) {
        std::vector<std::string> needed;
        terms_of(*index.where, needed);
        const bool implied = std::all_of(needed.begin(), needed.end(),
                                         [&](const std::string& n) { return std::find(given.begin(), given.end(), n) != given.end(); });
        if (!implied && !given.empty())
          throw sim::UsageError("models::db: ON CONFLICT's WHERE (" + to_string(*st.more().conflict_index_where) +
                                ") implies the WHERE of the index " + index.name + " (" + index.where_text +
                                ") only where it repeats each of its terms in the model (docs/sql.md)");
        if (!implied) continue;
      }
      out.indexes[i] = true;
      any = true;
    }
    if (!any) throw Failure{Code::no_conflict_index, "there is no unique or exclusion constraint matching the ON CONFLICT specification"};
    return out;
  }

  // INSERT of one row, with ON CONFLICT's arbitration on the unique indexes its target names.
  // One row of an INSERT; `touched` holds the rows the statement inserted or updated so far,
  // which its DO UPDATE may not update again (21000).
  void insert_one(SessionState& s, Table& t, const Statement& st, const Values& given, Result& out, std::set<std::int64_t>& touched) {
    std::optional<std::int64_t> explicit_id;
    Values values;
    try {
      values = detail::row_values(t.schema, Engine::postgresql, given, explicit_id);
    } catch (const sim::UsageError& e) {
      throw Failure{Code::bad_field, e.what()};
    }
    if (!explicit_id && !t.schema.auto_increment && !t.schema.clustered_key)
      throw Failure{Code::bad_null, "null value in column \"id\" of relation \"" + t.schema.name + "\" violates not-null constraint"};
    if (!explicit_id && t.next_id == std::numeric_limits<std::int64_t>::max())
      throw Failure{Code::out_of_range, "nextval: reached maximum value of sequence \"" + t.schema.name + "_id_seq\""};
    const std::int64_t id = explicit_id ? *explicit_id : t.next_id++;  // nextval: never rolled back
    values["id"] = Value{id};
    // Each unique index, the arbiters first (PostgreSQL's speculative insertion checks them
    // before it inserts, the others as it does): which one (kId, kKey, or the place of a further
    // index) and whether it arbitrates.
    constexpr int kId = -2, kKey = -1;
    const Arbiters arbiter = arbiters(t, st);
    std::vector<std::pair<int, bool>> probes;
    for (const bool arbitrates : {true, false}) {
      if (arbiter.id == arbitrates) probes.emplace_back(kId, arbitrates);
      if (unique(t) && arbiter.key == arbitrates) probes.emplace_back(kKey, arbitrates);
      for (std::size_t i = 0; i < t.schema.indexes.size(); ++i)
        if (t.schema.indexes[i].unique && arbiter.indexes[i] == arbitrates) probes.emplace_back(static_cast<int>(i), arbitrates);
    }
    for (;;) {
      bool again = false;
      for (const auto& [which, arbitrates] : probes) {
        std::optional<std::int64_t> dup;
        if (which == kId || which == kKey) {
          const std::string column = which == kId ? std::string("id") : t.schema.key_column;
          dup = unique_conflict(s, t, column, values.at(column));
        } else if (const auto key = key_in(t, static_cast<std::size_t>(which), values)) {
          dup = index_conflict(s, t, static_cast<std::size_t>(which), *key);
        }
        if (!dup) continue;
        if (!arbitrates) {
          ++stats_.duplicate_keys;
          throw Failure{Code::duplicate_key, which >= 0 ? duplicate_index_message(t.schema.indexes[static_cast<std::size_t>(which)])
                                                        : duplicate_message(t, which == kId ? "id" : t.schema.key_column)};
        }
        const RowChain& row = t.rows.at(*dup);
        const bool rc = s.txn->isolation == Isolation::read_committed || s.txn->isolation == Isolation::read_uncommitted;
        if (!rc && !sees(row.versions.back(), s.txn->xid, snapshot(s)))
          throw Failure{Code::serialization_failure, "could not serialize access due to concurrent update"};
        if (st.on_duplicate == OnDuplicate::ignore) return;  // DO NOTHING
        if (touched.count(*dup))
          throw Failure{Code::cardinality_violation, "ON CONFLICT DO UPDATE command cannot affect row a second time"};
        // DO UPDATE: lock the row (FOR UPDATE), then update it if DO UPDATE's WHERE holds.
        const std::size_t seen = newest(row, s.txn->xid);
        const Got got = acquire(s, LockKey{LockKey::Kind::row, &t, *dup}, Mode::update, true, true, Statement::OnLocked::wait);
        const RowChain& locked = t.rows.at(*dup);
        const std::size_t now = newest(locked, s.txn->xid);
        const Tuple& latest = locked.versions[now];
        if (got == Got::after_wait && (now != seen || (latest.xmax != 0 && latest.xmax != s.txn->xid && latest.xmax_commit != 0))) {
          if (!rc) throw Failure{Code::serialization_failure, "could not serialize access due to concurrent update"};
          again = true;  // the row changed while it waited: the whole insert tries again
          break;
        }
        Values next = latest.values.to_values();
        if (const auto& where = st.more().conflict_where) {
          bool pass = false;
          try {
            pass = holds(*where, Scope{next, st.more().args, &values});
          } catch (const ExprError& e) {
            throw Failure{static_cast<Code>(e.code), e.message};
          }
          if (!pass) return;
        }
        detail::assign(st, next, &values, Engine::postgresql);
        for (const auto& [c, v] : st.on_update) next[c] = v;
        detail::check_row(t.schema, Engine::postgresql, next);
        mark_deleted(s, t, *dup);
        check_new_version(s, t, next);
        add_version(s, t, *dup, next, nullptr);
        touched.insert(*dup);
        ++out.affected;
        if (!st.more().returning.empty()) out.rows.push_back(row_of(*dup, t.rows.at(*dup).versions.back().values));
        return;
      }
      if (again) continue;
      break;
    }
    const RowOrigin origin{s.who, s.txn->xid, sim::now()};
    add_version(s, t, id, values, &origin);
    touched.insert(id);
    ++out.affected;
    if (!st.more().returning.empty()) out.rows.push_back(row_of(id, t.rows.at(id).versions.back().values));
  }

  Result insert(SessionState& s, Table& t, const Statement& st) {
    Result out;
    std::set<std::int64_t> touched;
    insert_one(s, t, st, st.values, out, touched);
    for (const Values& row : st.more().more_rows) insert_one(s, t, st, row, out, touched);
    return out;
  }

  Result insert_if_absent(SessionState& s, Table& t, const Statement& st, const StatementTiming& timing) {
    Statement read{.kind = Statement::Kind::select, .table = st.table, .where = st.where, .extra = st.extra};
    if (!select(s, t, read).empty()) return Result{};
    spend(timing.read_to_write);
    return insert(s, t, st);
  }

  // CREATE [UNIQUE] INDEX on the key column, or a further index (on several columns, or
  // partial), built at once. A unique one fails with 23505 where two live rows hold one key.
  Result create_index(Table& t, const Statement& st) {
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
          if (auto key = key_in(t, i, v.values)) add_entry(t, i, IndexEntry{std::move(*key), id});
      for (const auto& [id, row] : t.rows) {
        const Tuple& latest = row.versions.back();
        if (latest.xmax != 0 && latest.xmax_commit != 0) continue;
        if (const auto key = key_in(t, i, latest.values); key && any_live(t, i, *key, id)) {
          for (const IndexEntry& e : t.index_entries[i]) bytes_ -= entry_bytes(e);
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

  // --- Advisory locks ------------------------------------------------------------

  Result advisory(SessionState& s, const Statement& st) {
    const Advisory& a = st.advisory;
    const std::string column = std::string(a.op == Advisory::Op::try_lock ? "pg_try_advisory" : "pg_advisory") +
                               (a.op == Advisory::Op::unlock ? "_unlock" : a.op == Advisory::Op::unlock_all ? "_unlock_all" : "") +
                               (a.xact ? "_xact" : "") + (a.op == Advisory::Op::lock || a.op == Advisory::Op::try_lock ? "_lock" : "") +
                               (a.shared ? "_shared" : "");
    const auto answer = [&](Value v) {
      Result r;
      r.rows.push_back(Row{0, RowValues(Values{{column, std::move(v)}})});
      return r;
    };
    if (a.op == Advisory::Op::unlock_all) {
      release_session_advisory(s, std::nullopt);
      return answer(Value{std::string()});
    }
    const auto it = st.values.find("key");
    if (it == st.values.end() || !std::holds_alternative<std::int64_t>(it->second))
      throw sim::UsageError("models::db: an advisory lock's key is a bigint");
    const LockKey key{LockKey::Kind::advisory, nullptr, std::get<std::int64_t>(it->second)};
    const Mode mode = a.shared ? Mode::share : Mode::update;
    if (a.op == Advisory::Op::unlock) {
      auto state = locks_.find(key);
      if (state == locks_.end()) return answer(Value{std::int64_t{0}});
      auto& holders = state->second.holders;
      const auto h = std::find_if(holders.begin(), holders.end(), [&](const Holder& x) { return x.session == s.id && !x.xact && x.mode == mode; });
      if (h == holders.end()) return answer(Value{std::int64_t{0}});
      if (--h->count == 0) {
        holders.erase(h);
        if (std::none_of(holders.begin(), holders.end(), [&](const Holder& x) { return x.session == s.id && !x.xact; })) s.advisory.erase(key);
        wake_waiters(key);
      }
      return answer(Value{std::int64_t{1}});
    }
    const bool try_only = a.op == Advisory::Op::try_lock;
    const Got got = acquire(s, key, mode, a.xact, true, try_only ? Statement::OnLocked::skip : Statement::OnLocked::wait);
    if (try_only) return answer(Value{std::int64_t{got == Got::skipped ? 0 : 1}});
    return answer(Value{std::string()});
  }

  // --- Statements ------------------------------------------------------------------

  Result set_isolation(SessionState& s, const Statement& st) {
    if (!st.next_transaction_only) {
      s.isolation = st.isolation;
      return {};
    }
    // SET TRANSACTION: the open transaction's level, before its first query; outside one a
    // warning and no effect, as on the server.
    if (s.txn && s.txn->explicit_) {
      if (s.txn->snapshot || !s.txn->undo.empty())
        return Result{.code = Code::transaction_in_progress, .message = "SET TRANSACTION ISOLATION LEVEL must be called before any query"};
      s.txn->isolation = st.isolation;
    }
    return {};
  }

  static sim::Duration ms(std::int64_t n) { return std::chrono::milliseconds(n); }

  Result run(SessionState& s, const Statement& st, const StatementTiming& timing) {
    using K = Statement::Kind;
    ++stats_.statements;
    spend(timing.before);
    s.waits.clear();
    s.statement_start = sim::now();
    if (st.kind == K::commit || st.kind == K::rollback) {
      if (st.kind == K::commit) spend(timing.before_commit);
      if (st.kind == K::commit && s.txn && ssi_.count(s.txn->xid)) {
        const auto& me = ssi_.at(s.txn->xid);
        if (me.doomed || dangerous(s.txn->xid) || would_endanger(s.txn->xid)) {
          const auto undone = static_cast<std::int64_t>(s.txn->undo.size());
          rollback(s);
          s.aborted = false;
          return Result{.code = Code::serialization_failure, .message = kSerialization, .undone = Undone::transaction, .undone_rows = undone};
        }
      }
      if (s.txn) (st.kind == K::commit) ? commit(s) : rollback(s);
      s.aborted = false;
      return {};
    }
    if (st.kind == K::savepoint) return savepoint(s, st);
    if (s.aborted) return Result{.code = Code::in_failed_transaction, .message = kAborted};
    if (s.txn && ssi_.count(s.txn->xid) && ssi_.at(s.txn->xid).doomed && st.kind != K::set_isolation) {
      const auto undone = static_cast<std::int64_t>(s.txn->undo.size());
      rollback(s);
      s.aborted = true;
      return Result{.code = Code::serialization_failure, .message = kSerialization, .undone = Undone::transaction, .undone_rows = undone};
    }
    switch (st.kind) {
      case K::begin:
        if (!s.txn) begin(s, true);  // inside one: a warning, nothing more
        else s.txn->explicit_ = true;
        if (st.next_transaction_only) s.txn->isolation = st.isolation;  // BEGIN ISOLATION LEVEL ...
        return {};
      case K::set_isolation: return set_isolation(s, st);
      case K::set_timeout:
        if (st.setting == "lock_timeout") s.lock_timeout = ms(st.milliseconds);
        else if (st.setting == "statement_timeout") s.statement_timeout = ms(st.milliseconds);
        else if (st.setting == "deadlock_timeout") s.deadlock_timeout = ms(st.milliseconds);
        else throw sim::UsageError("models::db: no setting '" + st.setting + "'");
        return {};
      case K::set_lock_wait_timeout:
        s.lock_timeout = std::chrono::seconds(st.seconds);
        return {};
      default: break;
    }
    const bool autocommit = !s.txn;
    if (autocommit) begin(s, false);
    s.statement_snapshot = commits_;
    if (st.kind != K::add_index) snapshot(s);  // REPEATABLE READ's is taken by its first statement
    Result out;
    try {
      if (!st.table.empty() && st.kind != K::advisory) detail::refuse_id(table(st.table).schema, Engine::postgresql, st);
      switch (st.kind) {
        case K::select: {
          if (st.table.empty()) {  // SELECT 1 + $1: no table, one row (the statement's snapshot is taken all the same)
            out.rows = {detail::computed_row(st)};
            break;
          }
          Table& t = table(st.table);
          out.rows = select(s, t, st);
          if (st.count_rows) detail::aggregate_rows(st, Engine::postgresql, out.rows);
          else if (!st.more().computed.empty()) detail::add_computed(st, out.rows);
          break;
        }
        case K::insert: out = insert(s, table(st.table), st); break;
        case K::insert_if_absent: out = insert_if_absent(s, table(st.table), st, timing); break;
        case K::update: out = update(s, table(st.table), st, false); break;
        case K::remove: out = update(s, table(st.table), st, true); break;
        case K::advisory: out = advisory(s, st); break;
        case K::add_index: out = create_index(table(st.table), st); break;
        default: throw sim::UsageError(std::string("models::db: the PostgreSQL engine does not run ") + to_string(st));
      }
    } catch (Failure& f) {
      out = Result{};
      out.code = f.code;
      out.message = std::move(f.message);
      out.waits = std::move(s.waits);
      out.deadlock_cycle = std::move(f.cycle);
      if (autocommit) {
        out.undone = Undone::transaction;  // its own transaction: all of it is undone
        out.undone_rows = static_cast<std::int64_t>(s.txn->undo.size());
        rollback(s);
      } else {
        abort_block(s, out);
      }
      return out;
    }
    out.waits = std::move(s.waits);
    out.applied = now_if_running();
    if (autocommit) {
      spend(timing.before_commit);
      commit(s);
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Database::Model> postgres_model(const DatabaseConfig& config) { return std::make_unique<Postgres>(config); }

}  // namespace models::db
