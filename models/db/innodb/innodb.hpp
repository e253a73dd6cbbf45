#pragma once
// InnoDB's model (models/db/database.hpp's comment says what it imitates), by subsystem, as
// InnoDB's own source is split. What depends on a table alone is in functions of their own:
// - row0vers.hpp: rows, their versions and read views, and a table's indexes and entries;
// - opt0range.hpp: access paths and their cost, from the WHERE's conditions (opt0cond.cpp);
// - lock0lock.hpp: the lock system: lock queues, grants, and the wait-for graph.
// The engine, the class below, whose member functions are defined in:
// - lock0lock.cpp: what locks and waits are shown as;
// - lock0wait.cpp: a lock request's wait, and the deadlock's victim;
// - trx0trx.cpp: transactions: begin, undo, commit, rollback, and the purge race;
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
#include "models/db/innodb/lock0lock.hpp"
#include "models/db/innodb/opt0range.hpp"
#include "models/db/innodb/row0vers.hpp"
#include "models/db/innodb/types.hpp"
#include "models/db/innodb/user_locks.hpp"
#include "models/db/history.hpp"
#include "models/db/model.hpp"
#include "models/db/rows.hpp"

namespace models::db::innodb {

class InnoDb final : public Database::Model {
 public:
  using SessionId = Database::SessionId;
  using RowVisitor = Database::RowVisitor;
  explicit InnoDb(DatabaseConfig config)
      : config(config), recorder(config.record_history ? std::make_unique<History>() : nullptr) {}
  DatabaseConfig config;
  std::unique_ptr<History> recorder;  // the trial's history, where DatabaseConfig::record_history asks for one
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

  // --- Rows and versions (the rest: row0vers.hpp) ------------------------------

  void visit_rows(const Table& t, bool ever, const RowVisitor& visit) const;

  // --- Lock waits (the lock system: lock0lock.hpp) -----------------------------

  LockSystem lock_sys{txns};

  const std::string& who(TxnId id) const { return txns.at(id)->session->who; }

  LockWait place_of(const Table& t, int index, const Lock& l) const;

  LockWait describe(const Table& t, int index, const Lock& req) const;

  std::vector<HeldLock> locks(std::size_t most) const override;

  void break_deadlock(Txn& txn, int index, bool waiting);
  // The deadlock searches the last releases called for (LockSystem::take_rechecks), each
  // breaking the deadlock it finds.
  void recheck_deadlocks();
  Got lock(Txn& txn, Table& t, int index, Lock want);

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

  std::vector<std::int64_t> locate_locked(Txn& txn, Table& t, const Statement& where, bool exclusive, bool dml);

  // Whether a LIMIT read in index order has its rows: the searches after this one are not made
  // (conformance composite-in-limit-rr).
  static bool enough(const Txn& txn, const std::vector<std::int64_t>& kept) { return txn.statement->enough && kept.size() >= *txn.statement->enough; }

  bool visit(Txn& txn, Table& t, int index, const Entry& e, bool record_only, const Statement& where, bool exclusive, bool dml,
             std::vector<std::int64_t>& kept);

  bool search(Txn& txn, Table& t, const Path& p, const Statement& where, bool exclusive, bool dml, std::vector<std::int64_t>& kept);

  bool scan_range(Txn& txn, Table& t, int index, const Key& prefix, const Range& r, const Statement& where, bool exclusive,
                  bool dml, std::vector<std::int64_t>& kept, bool past_row = false);

  Lock gap_after(const Table& t, const Path& p, const std::vector<Entry>& visited, bool exclusive) const;

  static Row row_of(std::int64_t id, const RowValues& values);

  std::vector<Row> select(Txn& txn, Table& t, const Statement& s);
  void observed(const Txn& txn, std::int64_t id, const RowData& row, const Version& v);

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
    if (bulk || t.autoinc_lock.size() > 0) lock(txn, t, kAutoInc, Lock{.exclusive = true, .record = true});
  }
  void release_autoinc(const Txn& txn, Table& t) {
    lock_sys.release_autoinc(txn, t);
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
  const History* history() const override { return recorder.get(); }
};

}  // namespace models::db::innodb
