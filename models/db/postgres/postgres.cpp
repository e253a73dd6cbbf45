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
#include <tuple>

#include <fmt/format.h>

#include "models/db/postgres/postgres.hpp"

namespace models::db {
namespace postgres {

// --- The engine's side of Database's calls ---------------------------------

void Postgres::create_table(TableSchema schema) {
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

std::int64_t Postgres::load_row(const std::string& name, const Values& given, std::string who) {
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
  if (recorder_) recorder_->wrote(History::kSeed, name, id, row.versions.back().values, false);
  const sim::Engine* engine = sim::Engine::current();
  origins_.keep(row.origin, std::move(who), 0, engine != nullptr ? engine->now() : sim::Time{});
  if (key) t.entries.insert(Entry{*key, id});
  add_index_entries(t, id, row.versions.back().values, bytes_);
  return id;
}

const TableSchema* Postgres::schema(const std::string& name) const {
  const auto it = tables_.find(name);
  return it == tables_.end() ? nullptr : &it->second.schema;
}

SessionId Postgres::open_session(Isolation isolation, std::string who) {
  const SessionId id = next_session_++;
  SessionState& s = sessions_[id];
  s.id = id;
  s.isolation = isolation;
  s.who = std::move(who);
  s.lock_timeout = config_.lock_wait_timeout;  // the scenario's lock_timeout (zero: none, PostgreSQL's default)
  return id;
}

void Postgres::set_origin(SessionId session, std::string who) { sessions_.at(session).who = std::move(who); }

Result Postgres::execute(SessionId session, const Statement& statement, const StatementTiming& timing) {
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

void Postgres::close(SessionId session) {
  auto it = sessions_.find(session);
  if (it == sessions_.end()) return;
  SessionState& s = it->second;
  if (s.txn) rollback(s);
  release_session_advisory(s, std::nullopt);
  sessions_.erase(it);
}

bool Postgres::in_transaction(SessionId session) const {
  auto it = sessions_.find(session);
  return it != sessions_.end() && (it->second.txn != nullptr || it->second.aborted);
}

bool Postgres::holds_advisory(SessionId session, std::int64_t key) const {
  auto it = locks_.find(LockKey{LockKey::Kind::advisory, nullptr, key});
  return it != locks_.end() &&
         std::any_of(it->second.holders.begin(), it->second.holders.end(), [&](const Holder& h) { return h.session == session; });
}

std::vector<HeldLock> Postgres::locks(std::size_t most) const {
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

void Postgres::for_each(const std::string& name, bool ever, const Database::RowVisitor& visit) const {
  for (const auto& [id, row] : const_table(name).rows)
    if (const Tuple* v = shown(row, ever)) visit(id, v->values, origins_(row.origin));
}

std::vector<RowRecord> Postgres::rows_sharing(const std::string& table, const std::string& column, bool ever) const {
  return rows_sharing_by_count(*this, table, column, ever);
}

const DatabaseStats& Postgres::stats() const { return stats_; }

std::uint64_t Postgres::bytes_held() const { return bytes_ + origins_.bytes(); }

Table& Postgres::table(const std::string& name) {
  auto it = tables_.find(name);
  if (it == tables_.end()) throw sim::UsageError("models::db: no table '" + name + "'");
  return it->second;
}

const Table& Postgres::const_table(const std::string& name) const {
  auto it = tables_.find(name);
  if (it == tables_.end()) throw sim::UsageError("models::db: no table '" + name + "'");
  return it->second;
}

namespace {

sim::Duration ms(std::int64_t n) { return std::chrono::milliseconds(n); }

}  // namespace

Result Postgres::run(SessionState& s, const Statement& st, const StatementTiming& timing) {
  using K = Statement::Kind;
  ++stats_.statements;
  spend(timing.before);
  s.waits.clear();
  s.statement_start = sim::now();
  if (st.kind == K::commit || st.kind == K::rollback) return end_block(s, st, timing);
  if (st.kind == K::savepoint) return savepoint(s, st);
  if (s.aborted) return Result{.code = Code::in_failed_transaction, .message = kAborted};
  if (s.txn && ssi_.follows(s.txn->xid) && ssi_.doomed(s.txn->xid) && st.kind != K::set_isolation) {
    const auto undone = static_cast<std::int64_t>(s.txn->undo.size());
    rollback(s);
    s.aborted = true;
    return Result{.code = Code::serialization_failure, .message = kSerialization, .undone = Undone::transaction, .undone_rows = undone};
  }
  if (std::optional<Result> done = session_command(s, st)) return std::move(*done);
  const bool autocommit = !s.txn;
  if (autocommit) begin(s, false);
  s.statement_snapshot = commits_;
  if (st.kind != K::add_index) snapshot(s);  // REPEATABLE READ's is taken by its first statement
  Result out;
  try {
    out = dispatch(s, st, timing);
  } catch (Failure& f) {
    return failed(s, f, autocommit);
  }
  out.waits = std::move(s.waits);
  out.applied = now_if_running();
  if (autocommit) {
    spend(timing.before_commit);
    commit(s);
  }
  return out;
}

// BEGIN and the session's settings: their result; nullopt for a statement of another kind.
std::optional<Result> Postgres::session_command(SessionState& s, const Statement& st) {
  using K = Statement::Kind;
  switch (st.kind) {
    case K::begin:
      if (!s.txn) begin(s, true);  // inside one: a warning, nothing more
      else s.txn->explicit_ = true;
      if (st.next_transaction_only) s.txn->isolation = st.isolation;  // BEGIN ISOLATION LEVEL ...
      return Result{};
    case K::set_isolation: return set_isolation(s, st);
    case K::set_timeout:
      if (st.setting == "lock_timeout") s.lock_timeout = ms(st.milliseconds);
      else if (st.setting == "statement_timeout") s.statement_timeout = ms(st.milliseconds);
      else if (st.setting == "deadlock_timeout") s.deadlock_timeout = ms(st.milliseconds);
      else throw sim::UsageError("models::db: no setting '" + st.setting + "'");
      return Result{};
    case K::set_lock_wait_timeout:
      s.lock_timeout = std::chrono::seconds(st.seconds);
      return Result{};
    default: return std::nullopt;
  }
}

// A statement on rows, or an advisory lock's, inside the session's transaction. Throws Failure.
Result Postgres::dispatch(SessionState& s, const Statement& st, const StatementTiming& timing) {
  using K = Statement::Kind;
  if (!st.table.empty() && st.kind != K::advisory) detail::refuse_id(table(st.table).schema, Engine::postgresql, st);
  Result out;
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
    case K::add_index: out = create_index(table(st.table), st, bytes_); break;
    default: throw sim::UsageError(std::string("models::db: the PostgreSQL engine does not run ") + to_string(st));
  }
  return out;
}

// A statement that failed: its own transaction (autocommit) is undone, or the transaction
// block it ran in is aborted.
Result Postgres::failed(SessionState& s, Failure& f, bool autocommit) {
  Result out;
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

}  // namespace postgres

std::unique_ptr<Database::Model> postgres_model(const DatabaseConfig& config) {
  return std::make_unique<postgres::Postgres>(config);
}

}  // namespace models::db
