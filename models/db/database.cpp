// What both engines share behind models::db::Database (models/db/database.hpp): the names of
// levels, engines and codes, and Database's calls on the engine's model (InnoDB's in
// models/db/innodb/, PostgreSQL's in models/db/postgres/).

#include "models/db/database.hpp"

#include "models/db/model.hpp"
#include "models/db/rows.hpp"

#include <map>
#include <memory>
#include <utility>

namespace models::db {

std::string to_string(const Value& value) {
  if (is_null(value)) return "NULL";
  if (const auto* n = std::get_if<std::int64_t>(&value)) return std::to_string(*n);
  return "'" + std::get<std::string>(value) + "'";
}

const char* to_string(Isolation isolation) {
  switch (isolation) {
    case Isolation::read_uncommitted: return "READ UNCOMMITTED";
    case Isolation::read_committed: return "READ COMMITTED";
    case Isolation::repeatable_read: return "REPEATABLE READ";
    case Isolation::serializable: return "SERIALIZABLE";
  }
  return "?";
}

const char* to_string(Engine engine) { return engine == Engine::postgresql ? "postgresql" : "mariadb"; }

const char* sqlstate(Code code) {
  switch (code) {
    case Code::ok: return "";
    case Code::out_of_range: return "22003";
    case Code::value_out_of_range: return "22003";
    case Code::column_out_of_range: return "22003";
    case Code::data_too_long: return "22001";
    case Code::bad_integer: return "22P02";
    case Code::division_by_zero: return "22012";
    case Code::identifier_too_long: return "42000";
    case Code::illegal_parameter_type: return "HY000";
    case Code::bad_null: return "23502";
    case Code::bad_field: return "42703";
    case Code::no_default: return "23502";
    case Code::duplicate_key_name: return "42P07";
    case Code::duplicate_key: return "23505";
    case Code::no_such_index: return "42704";
    case Code::lock_wait_timeout: return "55P03";
    case Code::deadlock: return "40P01";
    case Code::autoinc_failed: return "HY000";
    case Code::transaction_in_progress: return "25001";
    case Code::connection_timeout: return "08006";
    case Code::serialization_failure: return "40001";
    case Code::in_failed_transaction: return "25P02";
    case Code::statement_timeout: return "57014";
    case Code::no_conflict_index: return "42P10";
    case Code::no_active_transaction: return "25P01";
    case Code::no_such_savepoint: return "3B001";
    case Code::cardinality_violation: return "21000";
  }
  return "XX000";
}

const char* to_string(Code code) {
  switch (code) {
    case Code::ok: return "ok";
    case Code::out_of_range: return "167 Out of range value";
    case Code::bad_null: return "1048 Column cannot be null";
    case Code::bad_field: return "1054 Unknown column";
    case Code::no_default: return "1364 Field doesn't have a default value";
    case Code::value_out_of_range: return "1690 BIGINT value is out of range";
    case Code::column_out_of_range: return "1264 Out of range value for column";
    case Code::data_too_long: return "1406 Data too long for column";
    case Code::bad_integer: return "1366 Incorrect integer value";
    case Code::division_by_zero: return "1365 Division by 0";
    case Code::identifier_too_long: return "1059 Identifier name is too long";
    case Code::illegal_parameter_type: return "4079 Illegal parameter data type";
    case Code::duplicate_key_name: return "1061 Duplicate key name";
    case Code::duplicate_key: return "1062 Duplicate entry";
    case Code::no_such_index: return "1091 Can't DROP INDEX";
    case Code::lock_wait_timeout: return "1205 Lock wait timeout exceeded";
    case Code::deadlock: return "1213 Deadlock found when trying to get lock";
    case Code::autoinc_failed: return "1467 Failed to read auto-increment value from storage engine";
    case Code::transaction_in_progress: return "1568 Transaction characteristics can't be changed";
    case Code::connection_timeout: return "connection timed out";
    case Code::serialization_failure: return "40001 could not serialize access";
    case Code::in_failed_transaction: return "25P02 current transaction is aborted";
    case Code::statement_timeout: return "57014 canceling statement due to statement timeout";
    case Code::no_conflict_index: return "42P10 no unique or exclusion constraint matching the ON CONFLICT specification";
    case Code::no_active_transaction: return "25P01 no active SQL transaction";
    case Code::no_such_savepoint: return "3B001 savepoint does not exist";
    case Code::cardinality_violation: return "21000 ON CONFLICT DO UPDATE command cannot affect row a second time";
  }
  return "?";
}

std::vector<RowRecord> rows_sharing_by_count(const Database::Model& model, const std::string& table, const std::string& column,
                                             bool ever) {
  std::vector<RowRecord> out;
  std::map<Value, std::uint32_t> rows_per_value;
  // NULL is no value another row can share, as a unique index sees it.
  model.for_each(table, ever, [&](std::int64_t, const RowValues& values, const RowOrigin&) {
    if (!is_null(values.at(column))) ++rows_per_value[values.at(column)];
  });
  model.for_each(table, ever, [&](std::int64_t id, const RowValues& values, const RowOrigin& origin) {
    if (!is_null(values.at(column)) && rows_per_value.at(values.at(column)) > 1) out.push_back(RowRecord{Row{id, values}, origin});
  });
  return out;
}

// --- Database: the calls, on the engine's model -----------------------------

Database::Database(DatabaseConfig config)
    : model_(config.engine == Engine::postgresql ? postgres_model(config) : innodb_model(config)), config_(config) {}
Database::~Database() = default;

void Database::create_table(TableSchema schema) {
  if (!schema.key_column.empty()) schema.columns.erase(schema.key_column);
  model_->create_table(std::move(schema));
}

std::int64_t Database::load_row(const std::string& table, Values values, std::string who) {
  return model_->load_row(table, values, std::move(who));
}

bool Database::has_table(const std::string& table) const { return model_->schema(table) != nullptr; }

std::vector<std::string> Database::columns(const std::string& table) const {
  const TableSchema* schema = model_->schema(table);
  if (schema == nullptr) throw sim::UsageError("models::db: no table '" + table + "'");
  if (!schema->column_order.empty()) return schema->column_order;
  std::vector<std::string> out{"id"};
  if (!schema->key_column.empty()) out.push_back(schema->key_column);
  for (const auto& [column, value] : schema->columns) out.push_back(column);
  return out;
}

Database::SessionId Database::open_session(Isolation isolation, std::string who) { return model_->open_session(isolation, std::move(who)); }

void Database::set_origin(SessionId session, std::string who) { model_->set_origin(session, std::move(who)); }

Result Database::execute(SessionId session, const Statement& statement) { return execute(session, statement, {}); }

Result Database::execute(SessionId session, const Statement& statement, const StatementTiming& timing) {
  return model_->execute(session, statement, timing);
}

void Database::close(SessionId session) { model_->close(session); }

bool Database::in_transaction(SessionId session) const { return model_->in_transaction(session); }

bool Database::holds_advisory(SessionId session, std::int64_t key) const { return model_->holds_advisory(session, key); }
bool Database::holds_user_lock(SessionId session, const std::string& name) const { return model_->holds_user_lock(session, name); }

std::vector<HeldLock> Database::locks(std::size_t most) const { return model_->locks(most); }

void Database::for_each_committed(const std::string& table, const RowVisitor& visit) const { model_->for_each(table, false, visit); }

void Database::for_each_ever_committed(const std::string& table, const RowVisitor& visit) const { model_->for_each(table, true, visit); }

std::vector<RowRecord> Database::rows_sharing(const std::string& table, const std::string& column, bool ever) const {
  return model_->rows_sharing(table, column, ever);
}

std::vector<RowRecord> Database::committed_rows(const std::string& table) const {
  std::vector<RowRecord> out;
  for_each_committed(table, [&](std::int64_t id, const RowValues& values, const RowOrigin& origin) {
    out.push_back(RowRecord{Row{id, values}, origin});  // sharing the stored columns
  });
  return out;
}

std::vector<RowRecord> Database::rows_ever_committed(const std::string& table) const {
  std::vector<RowRecord> out;
  for_each_ever_committed(table, [&](std::int64_t id, const RowValues& values, const RowOrigin& origin) {
    out.push_back(RowRecord{Row{id, values}, origin});
  });
  return out;
}

const DatabaseStats& Database::stats() const { return model_->stats(); }

std::uint64_t Database::bytes_held() const { return model_->bytes_held(); }

const History* Database::history() const { return model_->history(); }

std::uint64_t Database::row_bytes(const Values& values) { return detail::kInnoDbCosts.row + detail::kInnoDbCosts.of_version(RowValues(values)); }

}  // namespace models::db
