#pragma once
// The tables a list of DDL statements builds: every place that reads a CREATE TABLE (a
// scenario's database.tables, a Lua workload's `tables`) builds the same table from it.

#include <stdexcept>
#include <string>
#include <vector>

#include "models/db/database.hpp"
#include "models/db/sql.hpp"

namespace models::db {

/// Why a DDL statement builds nothing: what was expected in its place ("a CREATE TABLE
/// statement, or a CREATE INDEX on a table above it").
class DdlRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Adds what one parsed statement builds to `tables`: a CREATE TABLE's table, or a CREATE
/// [UNIQUE] INDEX's index on a table created above it (on one column, the table's key column;
/// on several or partial, one of its further indexes), as PostgreSQL's DDL states an index that
/// is not a column's UNIQUE. Throws DdlRefused.
void apply_ddl(const sql::Prepared& p, std::vector<TableSchema>& tables);

/// The index a CREATE INDEX or ADD INDEX makes: PostgreSQL's further index beside a table's
/// key column (on several columns, partial, or on another column), or MariaDB's one index on
/// its columns.
IndexDef further_index(const Statement& st);

/// Every column an index reads: its own, then those its WHERE (a partial index's) names.
std::vector<std::string> index_columns(const IndexDef& index);

/// Parses `text` in `engine`'s dialect (sql::prepare or pg::prepare). Throws sql::Error or
/// pg::Error.
sql::Prepared prepare_in(Engine engine, const std::string& text);

}  // namespace models::db
