#pragma once
// PostgreSQL 15's model behind models::db::Database (docs/sql.md, "PostgreSQL";
// docs/conformance.md): what it models and leaves out is told at the top of postgres.cpp.
// Internal to models/db/postgres. The engine's members are defined over files named after
// PostgreSQL's own sources:
//   postgres.cpp           the Database calls, and a statement's run (tcop/postgres.c)
//   heapam_visibility.cpp  snapshots: which version of a row a transaction sees
//   heapam.cpp             reading rows, and locking them (heap_lock_tuple, EvalPlanQual)
//   index.cpp              the unique indexes' entries, CREATE INDEX (catalog/index.c)
//   exec_indexing.cpp      an insert's check of the unique indexes, ON CONFLICT's arbiters
//   modify_table.cpp       INSERT, ON CONFLICT DO UPDATE, UPDATE and DELETE (nodeModifyTable.c)
//   lock.cpp               the lock table and waiting for a lock (lmgr/lock.c)
//   deadlock.cpp           the search for a cycle of waits (deadlock.c)
//   predicate.cpp          serializable snapshot isolation (predicate.c)
//   xact.cpp               transactions and savepoints (xact.c)
//   lockfuncs.cpp          advisory locks (lockfuncs.c)

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "models/db/database.hpp"
#include "models/db/history.hpp"
#include "models/db/model.hpp"
#include "models/db/postgres/heap.hpp"
#include "models/db/postgres/lock.hpp"
#include "models/db/postgres/predicate.hpp"
#include "models/db/rows.hpp"
#include "sim/sim.hpp"

namespace models::db::postgres {

using detail::kPostgresCosts;
using detail::matches;
using detail::now_if_running;
using detail::spend;
using detail::with_clock;
using detail::order_and_limit;

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
  std::optional<std::uint32_t> predicate{};  // its statement's reading of a table in the history, where one is kept
  std::list<Waiter>::iterator waiter{};
  std::vector<LockWait> waits;  // the current statement's
  sim::Time statement_start{};
  sim::Time statement_wall{};  // the database's clock when the statement started: statement_timestamp()
  std::uint64_t statement_snapshot = 0;
};

const char* const kAborted = "current transaction is aborted, commands ignored until end of transaction block";

bool per_statement(const Txn& txn);
bool serializable(const Txn& txn);
Row row_of(std::int64_t id, const RowValues& values);
Mode mode_of(ReadLock lock);

// The unique indexes an INSERT ... ON CONFLICT (cols) [WHERE ...] arbitrates on, as
// PostgreSQL infers them: those on exactly the target's columns, a partial one only where
// the target's WHERE implies the index's (the model proves it when each term of the index's
// WHERE is among the target's terms). Without a target, every unique index. 42P10 for none.
struct Arbiters {
  bool id = false, key = false;
  std::vector<bool> indexes{};
};
void terms_of(const Expr& e, std::vector<std::string>& out);
Arbiters arbiters(const Table& t, const Statement& st);
// The unique indexes an insert checks: the id's, the key column's, a further one by its place.
inline constexpr int kIdIndex = -2, kKeyIndex = -1;
std::vector<std::pair<int, bool>> probes_of(const Table& t, const Arbiters& arbiter);

class Postgres final : public Database::Model {
 public:
  explicit Postgres(DatabaseConfig config)
      : config_(config), recorder_(config.record_history ? std::make_unique<History>() : nullptr) {}

  // --- The engine's side of Database's calls (postgres.cpp)
  void create_table(TableSchema schema) override;
  std::int64_t load_row(const std::string& name, const Values& given, std::string who) override;
  const TableSchema* schema(const std::string& name) const override;
  SessionId open_session(Isolation isolation, std::string who) override;
  void set_origin(SessionId session, std::string who) override;
  Result execute(SessionId session, const Statement& statement, const StatementTiming& timing) override;
  void close(SessionId session) override;
  bool in_transaction(SessionId session) const override;
  bool holds_advisory(SessionId session, std::int64_t key) const override;
  std::vector<HeldLock> locks(std::size_t most) const override;
  void for_each(const std::string& name, bool ever, const Database::RowVisitor& visit) const override;
  std::vector<RowRecord> rows_sharing(const std::string& table, const std::string& column, bool ever) const override;
  const DatabaseStats& stats() const override;
  std::uint64_t bytes_held() const override;
  const History* history() const override { return recorder_.get(); }
  Table& table(const std::string& name);
  const Table& const_table(const std::string& name) const;

 private:
  enum class Got { at_once, after_wait, skipped };

  // --- A statement's run (postgres.cpp)
  Result run(SessionState& s, const Statement& st, const StatementTiming& timing);
  std::optional<Result> session_command(SessionState& s, const Statement& st);
  Result dispatch(SessionState& s, const Statement& st, const StatementTiming& timing);
  Result failed(SessionState& s, Failure& f, bool autocommit);

  // --- Snapshots (heapam_visibility.cpp)
  bool running(Xid xid) const;
  std::uint64_t snapshot(SessionState& s);

  // --- Reading and locking rows (heapam.cpp)
  std::vector<std::pair<std::int64_t, std::size_t>> scan(SessionState& s, Table& t, const Statement& st);
  std::optional<std::size_t> lock_row(SessionState& s, Table& t, std::int64_t id, std::size_t seen, const Statement& st, Mode mode);
  std::vector<std::pair<std::int64_t, std::size_t>> locked_rows(SessionState& s, Table& t, const Statement& st, Mode mode);
  std::vector<Row> select(SessionState& s, Table& t, const Statement& st);

  // --- An insert's check of the unique indexes (exec_indexing.cpp)
  void wait_for_transaction(SessionState& s, Xid xid);
  std::optional<std::int64_t> unique_conflict(SessionState& s, Table& t, const std::string& column, const Value& value);
  std::optional<std::int64_t> index_conflict(SessionState& s, Table& t, std::size_t i, const std::vector<Value>& key);
  void check_new_version(SessionState& s, Table& t, const Values& next);

  // --- Writing rows (modify_table.cpp)
  void add_version(SessionState& s, Table& t, std::int64_t id, const Values& columns, const RowOrigin* origin);
  void mark_deleted(SessionState& s, Table& t, std::int64_t id);
  Result update(SessionState& s, Table& t, const Statement& st, bool remove);
  void insert_one(SessionState& s, Table& t, const Statement& st, const Values& given, Result& out, std::set<std::int64_t>& touched);
  bool on_conflict(SessionState& s, Table& t, const Statement& st, std::int64_t dup, const Values& values, Result& out,
                   std::set<std::int64_t>& touched);
  Result insert(SessionState& s, Table& t, const Statement& st);
  Result insert_if_absent(SessionState& s, Table& t, const Statement& st, const StatementTiming& timing);

  // --- Locks (lock.cpp, deadlock.cpp, lockfuncs.cpp)
  std::vector<SessionId> blockers(const LockKey& key, SessionId me, Mode mode, std::uint64_t seq) const;
  void wake_waiters(const LockKey& key);
  std::string describe(const LockKey& key) const;
  Got acquire(SessionState& s, const LockKey& key, Mode mode, bool xact, bool hold, Statement::OnLocked on_locked);
  std::size_t enqueue(SessionState& s, const LockKey& key, Mode mode, std::uint64_t seq, const std::vector<SessionId>& behind);
  void dequeue(SessionState& s, const LockKey& key, std::size_t wait_index, sim::Time started, sim::Time now);
  sim::Duration deadlock_timeout(const SessionState& s) const;
  sim::Time wait_deadline(const SessionState& s, sim::Time started, bool deadlock_checked) const;
  bool holds_lock_on(const SessionState& s, const LockKey& key) const;
  void take(SessionState& s, const LockKey& key, Mode mode, bool xact);
  void release_xact(SessionState& s, Txn& txn);
  void let_go(SessionState& s, const LockKey& key);
  void release_session_advisory(SessionState& s, std::optional<LockKey> only);
  std::vector<SessionId> cycle_from(SessionId start) const;
  void check_deadlock(SessionState& s, const LockKey& key, std::size_t wait_index, sim::Time started, sim::Time now);
  Result advisory(SessionState& s, const Statement& st);

  // --- Transactions (xact.cpp)
  Txn& begin(SessionState& s, bool explicit_);
  void undo_all(Txn& txn);
  void undo_to(Txn& txn, std::size_t keep);
  void end(SessionState& s);
  std::int64_t roll_back_to(SessionState& s, const SavepointMark& mark);
  Result savepoint(SessionState& s, const Statement& st);
  void abort_block(SessionState& s, Result& out);
  void rollback(SessionState& s);
  void commit(SessionState& s);
  Result set_isolation(SessionState& s, const Statement& st);
  Result end_block(SessionState& s, const Statement& st, const StatementTiming& timing);

  DatabaseConfig config_;
  std::unique_ptr<History> recorder_;  // the trial's history, where DatabaseConfig::record_history asks for one
  // Notes in the history that the statement whose reading is `s.predicate` looked at `row`'s
  // version at `place` (heapam.cpp).
  void observed(const SessionState& s, const Table& t, std::int64_t id, std::size_t place);
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
  Ssi ssi_;  // serializable snapshot isolation
  std::set<Xid> open_xids_;          // transactions running now
};

}  // namespace models::db::postgres
