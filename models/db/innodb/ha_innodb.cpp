// InnoDB's model: statement dispatch, and the engine's side of Database's calls (InnoDB's
// ha_innodb).

#include "models/db/innodb/innodb.hpp"

namespace models::db::innodb {

// SET [SESSION] TRANSACTION ISOLATION LEVEL: SESSION sets the level of the session's
// later transactions, plain SET TRANSACTION the next one's only, which MySQL refuses
// inside an open transaction (1568).
Result InnoDb::set_isolation(SessionState& s, const Statement& st) {
  if (!st.next_transaction_only) {
    s.isolation = st.isolation;
    s.next_isolation.reset();
    return {};
  }
  if (s.txn) {
    return Result{.code = Code::transaction_in_progress,
                  .message = "Transaction characteristics can't be changed while a transaction is in progress"};
  }
  s.next_isolation = st.isolation;
  return {};
}

// Runs each of the expression's calls to the server (GET_LOCK(), CONNECTION_ID()), depth
// first and left to right as MariaDB evaluates a select list, and puts each answer in its
// place: a literal, or NULL.
void InnoDb::answer_calls(SessionState& s, Expr& e, const std::vector<Value>& params, std::vector<LockWait>& waits) {
  for (Expr& a : e.args) answer_calls(s, a, params, waits);
  if (e.kind != Expr::Kind::session_call) return;
  static const Values kNoRow;
  const auto arg = [&](std::size_t i) {
    std::optional<Value> v;
    try {
      v = evaluate(e.args.at(i), Scope{.row = kNoRow, .args = params});
    } catch (const ExprError& error) {
      throw Failure{Code(error.code), error.message};
    }
    return v.value_or(Value{});
  };
  std::optional<std::int64_t> answer;
  using C = Expr::Call;
  switch (e.call) {
    case C::get_lock: answer = user_locks_.get(s.id, s.who, arg(0), arg(1), waits); break;
    case C::release_lock: answer = user_locks_.release(s.id, arg(0)); break;
    case C::release_all_locks: answer = user_locks_.release_all(s.id); break;
    case C::is_free_lock: answer = user_locks_.is_free(arg(0)); break;
    case C::is_used_lock: answer = user_locks_.is_used(arg(0)); break;
    case C::connection_id: answer = static_cast<std::int64_t>(s.id); break;
  }
  e = answer ? Expr{.kind = Expr::Kind::literal, .value = *answer} : Expr{.kind = Expr::Kind::null};
}

Result InnoDb::run(SessionState& s, const Statement& st, const StatementTiming& timing) {
  Result out = run_unstamped(s, st, timing);
  if (out.ok() && out.applied == sim::kNever) out.applied = now_if_running();
  return out;
}

// run(), but for when a statement's changes were made: set only where they come before its end.
Result InnoDb::run_unstamped(SessionState& s, const Statement& st, const StatementTiming& timing) {
  using K = Statement::Kind;
  ++stats_.statements;
  spend(timing.before);
  if (st.kind == K::begin) {
    if (s.txn) commit(*s.txn);  // BEGIN commits an open transaction implicitly
    Txn& txn = begin(s, true);
    if (st.consistent_snapshot) read_view(txn);  // the view is taken now, not at the first read
    return {};
  }
  if (st.kind == K::set_isolation) return set_isolation(s, st);
  if (st.kind == K::set_lock_wait_timeout) {
    s.lock_wait_timeout = std::chrono::seconds(st.seconds);
    return {};
  }
  if (st.kind == K::add_index || st.kind == K::drop_index) {
    Table& t = table(st.table);
    if (s.txn) commit(*s.txn);  // DDL commits an open transaction implicitly, as MySQL's does
    s.txn.reset();
    return alter(t, st);
  }
  if (st.kind == K::commit || st.kind == K::rollback) {
    if (st.kind == K::commit) spend(timing.before_commit);
    if (s.txn) (st.kind == K::commit) ? commit(*s.txn) : rollback(*s.txn);
    s.txn.reset();
    return {};
  }
  // SELECT LAST_INSERT_ID(), SELECT 1 + 1: no table is read, so no transaction starts and
  // no read view is taken, as InnoDB takes one at a statement's first read of a table.
  if (st.kind == K::select && st.table.empty()) return run_without_table(s, st);
  return run_on_table(s, st, timing);
}

Result InnoDb::run_without_table(SessionState& s, const Statement& st) {
  Result out;
  try {
    if (st.more().session_calls) {
      Statement answered = st;
      StatementExtra& extra = answered.edit();
      for (auto& [name, e] : extra.computed) answer_calls(s, e, extra.args, out.waits);
      out.rows = {detail::computed_row(answered)};
    } else {
      out.rows = {detail::computed_row(st)};
    }
    out.applied = now_if_running();
  } catch (Failure& f) {
    out.code = f.code;
    out.message = std::move(f.message);
  }
  return out;
}

// A statement on a table: in the session's transaction, or in one of its own (autocommit).
Result InnoDb::run_on_table(SessionState& s, const Statement& st, const StatementTiming& timing) {
  using K = Statement::Kind;
  Table& t = table(st.table);
  const bool autocommit = !s.txn;
  Txn& txn = autocommit ? begin(s, false) : *s.txn;
  const std::size_t mark = txn.undo.size();
  StatementState statement{.on_locked = st.on_locked};  // the statement's state lives here, while it runs
  txn.statement = &statement;
  Result out;
  try {
    detail::refuse_id(t.schema, Engine::mariadb, st);
    switch (st.kind) {
      case K::select:
        out.rows = select(txn, t, st);
        if (st.count_rows) detail::aggregate_rows(st, Engine::mariadb, out.rows);
        else if (!st.more().computed.empty()) detail::add_computed(st, out.rows);
        break;
      case K::insert: out = insert_rows(txn, t, st, s.who); break;
      case K::insert_if_absent: out = insert_if_absent(txn, t, st, s.who, timing); break;
      case K::update: out = update(txn, t, st, false); break;
      case K::remove: out = update(txn, t, st, true); break;
      default: break;
    }
  } catch (Failure& f) {
    out = Result{};
    out.code = f.code;
    out.message = std::move(f.message);
    out.waits = std::move(statement.waits);
    if (deadlock_victim(f.code)) {
      out.deadlock_cycle = std::move(f.cycle);
      out.undone = Undone::transaction;  // rolled back whole
      out.undone_rows = f.undone_rows;
      s.txn.reset();
      return out;
    }
    txn.statement = nullptr;
    release_autoinc(txn, t);
    out.undone = Undone::statement;  // 1062 and 1205 roll back the statement only
    out.undone_rows = static_cast<std::int64_t>(txn.undo.size() - mark);
    undo_to(txn, mark);
    if (autocommit) {
      rollback(txn);
      s.txn.reset();
    }
    return out;
  }
  txn.statement = nullptr;
  release_autoinc(txn, t);
  out.waits = std::move(statement.waits);
  out.applied = now_if_running();
  if (statement.assigned_id) s.last_insert_id = *statement.assigned_id;
  else if (statement.generated_id) s.last_insert_id = *statement.generated_id;
  if (autocommit) {
    spend(timing.before_commit);
    commit(txn);
    s.txn.reset();
  }
  return out;
}

void InnoDb::create_table(TableSchema schema) {
  if (tables.count(schema.name)) throw sim::UsageError("models::db: table '" + schema.name + "' exists");
  for (const IndexDef& index : schema.indexes)
    if (index.where)
      throw sim::UsageError("models::db: the partial index " + index.name + " on " + schema.name +
                            " is modelled on PostgreSQL only (docs/sql.md)");
  Table& t = tables[schema.name];
  t.schema = std::move(schema);
  t.more_entries.resize(t.schema.indexes.size());
  t.locks.resize(kExtra + t.schema.indexes.size());
}

const TableSchema* InnoDb::schema(const std::string& name) const {
  const auto it = tables.find(name);
  return it == tables.end() ? nullptr : &it->second.schema;
}

InnoDb::SessionId InnoDb::open_session(Isolation isolation, std::string who) {
  const SessionId id = next_session++;
  SessionState& s = sessions[id] = SessionState{isolation, std::move(who), nullptr};
  s.id = id;
  return id;
}

Result InnoDb::execute(SessionId session, const Statement& statement, const StatementTiming& timing) {
  auto it = sessions.find(session);
  if (it == sessions.end()) throw sim::UsageError("models::db: no session " + std::to_string(session));
  // The slots the engine fills as the statement runs: UNIX_TIMESTAMP(), the statement's start on
  // the database's clock; LAST_INSERT_ID(), the session's, as it is now.
  const StatementExtra& extra = statement.more();
  if (extra.clock_args.empty() && !extra.last_insert_id_arg) return run(it->second, statement, timing);
  Statement now = with_clock(statement, timing.wall, timing.wall);
  if (const auto slot = extra.last_insert_id_arg) now.edit().args.at(*slot) = Value{it->second.last_insert_id};
  return run(it->second, now, timing);
}

void InnoDb::close(SessionId session) {
  auto it = sessions.find(session);
  if (it == sessions.end()) return;
  if (it->second.txn) rollback(*it->second.txn);
  user_locks_.release_all(session);  // the connection's user locks go with it
  sessions.erase(it);
}

bool InnoDb::in_transaction(SessionId session) const {
  auto it = sessions.find(session);
  return it != sessions.end() && it->second.txn != nullptr;
}

const Table& InnoDb::const_table(const std::string& name) const {
  auto it = tables.find(name);
  if (it == tables.end()) throw sim::UsageError("models::db: no table '" + name + "'");
  return it->second;
}

std::vector<RowRecord> InnoDb::rows_sharing(const std::string& name, const std::string& column, bool ever) const {
  const Table& t = const_table(name);
  if (column != t.schema.key_column || column.empty()) return rows_sharing_by_count(*this, name, column, ever);
  std::vector<RowRecord> out;
  // Every (key, id) entry a version held is in the index until none holds it: an entry counts
  // where the shown version holds its key.
  std::vector<std::pair<std::int64_t, const RowData*>> group;
  const auto end_group = [&] {
    if (group.size() > 1)
      for (const auto& [id, row] : group) out.push_back(RowRecord{Row{id, shown(*row, ever)->values}, origins(row->origin)});
    group.clear();
  };
  std::optional<Value> key;
  for (const StoredEntry& stored : t.entries) {
    const auto row = t.rows.find(stored.id);
    if (row == t.rows.end()) continue;
    const Version* v = shown(*row->second, ever);
    const Entry e = stored.entry();
    // The index's entries of one value of its first column are side by side.
    if (v == nullptr || v->values.at(column) != e.key.front() || is_null(e.key.front())) continue;  // NULLs share nothing
    if (!key || *key != e.key.front()) {
      end_group();
      key = e.key.front();
    }
    group.emplace_back(e.id, row->second.get());
  }
  end_group();
  std::sort(out.begin(), out.end(), [](const RowRecord& a, const RowRecord& b) { return a.row.id < b.row.id; });
  return out;
}

}  // namespace models::db::innodb

namespace models::db {

std::unique_ptr<Database::Model> innodb_model(const DatabaseConfig& config) { return std::make_unique<innodb::InnoDb>(config); }

}  // namespace models::db
