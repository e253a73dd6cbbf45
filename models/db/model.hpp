#pragma once
// What a database engine's model provides behind models::db::Database: its tables and rows,
// its sessions and the statements they run. Internal to models/db: InnoDB's
// (models/db/innodb/) and PostgreSQL's (models/db/postgres/).

#include <memory>
#include <string>
#include <vector>

#include "models/db/database.hpp"

namespace models::db {

class Database::Model {
 public:
  virtual ~Model() = default;
  /// The schema as Database::create_table hands it over (the key column out of `columns`).
  virtual void create_table(TableSchema schema) = 0;
  virtual std::int64_t load_row(const std::string& table, const Values& values, std::string who) = 0;
  /// The table's schema; null when there is no such table.
  virtual const TableSchema* schema(const std::string& table) const = 0;
  virtual SessionId open_session(Isolation isolation, std::string who) = 0;
  virtual void set_origin(SessionId session, std::string who) = 0;
  virtual Result execute(SessionId session, const Statement& statement, const StatementTiming& timing) = 0;
  virtual void close(SessionId session) = 0;
  virtual bool in_transaction(SessionId session) const = 0;
  /// Whether `session` holds the advisory lock on `key` now (PostgreSQL's; InnoDB has none).
  virtual bool holds_advisory(SessionId, std::int64_t) const { return false; }
  /// Whether `session` holds MariaDB's user lock `name` now (GET_LOCK; PostgreSQL has none).
  virtual bool holds_user_lock(SessionId, const std::string&) const { return false; }
  /// Every lock granted now, at most `most` (Database::locks).
  virtual std::vector<HeldLock> locks(std::size_t most) const = 0;
  /// Committed rows (with `ever`, every row whose insert committed, as first committed), in id order.
  virtual void for_each(const std::string& table, bool ever, const RowVisitor& visit) const = 0;
  virtual std::vector<RowRecord> rows_sharing(const std::string& table, const std::string& column, bool ever) const = 0;
  virtual const DatabaseStats& stats() const = 0;
  virtual std::uint64_t bytes_held() const = 0;
  /// The trial's history (DatabaseConfig::record_history); null where none is kept.
  virtual const History* history() const = 0;
};

std::unique_ptr<Database::Model> innodb_model(const DatabaseConfig& config);
std::unique_ptr<Database::Model> postgres_model(const DatabaseConfig& config);

/// The rows of `for_each` whose `column` another of them has (by a count per value first):
/// what rows_sharing gives where no index is read along.
std::vector<RowRecord> rows_sharing_by_count(const Database::Model& model, const std::string& table,
                                             const std::string& column, bool ever);

}  // namespace models::db
