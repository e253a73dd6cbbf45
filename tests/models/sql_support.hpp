#pragma once
// What the tests of MariaDB's SQL (sql_test.cpp, sql_ddl_test.cpp) share: a statement written
// out field by field, statements bound and refused, and the accounts table's CREATE TABLE.

#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/db/sql.hpp"
#include "support.hpp"

namespace db = models::db;
namespace sql = models::db::sql;
using db::Condition;
using db::KeyIndex;
using db::OnDuplicate;
using db::ReadLock;
using db::Statement;
using db::TableSchema;
using db::Value;

namespace test::mariadb_sql {

inline const char* kind_name(Statement::Kind kind) {
  switch (kind) {
    case Statement::Kind::begin: return "begin";
    case Statement::Kind::commit: return "commit";
    case Statement::Kind::rollback: return "rollback";
    case Statement::Kind::set_isolation: return "set_isolation";
    case Statement::Kind::set_lock_wait_timeout: return "set_lock_wait_timeout";
    case Statement::Kind::select: return "select";
    case Statement::Kind::insert: return "insert";
    case Statement::Kind::insert_if_absent: return "insert_if_absent";
    case Statement::Kind::update: return "update";
    case Statement::Kind::remove: return "remove";
    case Statement::Kind::add_index: return "add_index";
    case Statement::Kind::drop_index: return "drop_index";
    case Statement::Kind::advisory: return "advisory";
    case Statement::Kind::set_timeout: return "set_timeout";
    case Statement::Kind::savepoint: return "savepoint";
  }
  return "?";
}

inline std::string values_text(const db::Values& values) {
  std::string out = "{";
  for (const auto& [column, value] : values) out += column + "=" + db::to_string(value) + ";";
  return out + "}";
}

/// Every field of a statement, so two can be compared and a difference read in the output.
inline std::string describe(const Statement& s) {
  static const char* const kOps[] = {"=", "!=", "<", "<=", ">", ">="};
  std::string out = std::string(kind_name(s.kind)) + " " + s.table + " where {";
  for (const Condition& c : s.where) out += c.column + kOps[static_cast<int>(c.op)] + db::to_string(c.value) + ";";
  out += "} lock " + std::to_string(static_cast<int>(s.lock)) + " values " + values_text(s.values) + " on_duplicate " +
         std::to_string(static_cast<int>(s.on_duplicate)) + " on_update " + values_text(s.on_update) + " isolation " +
         db::to_string(s.isolation) + (s.next_transaction_only ? " next" : "") + " index " + s.index + " column " + s.column +
         (s.unique ? " unique" : "");
  for (const db::Expr& e : s.more().filter) out += " filter " + db::to_string(e);
  for (const auto& [column, e] : s.more().assign) out += " assign " + column + "=" + db::to_string(e);
  for (const db::Values& row : s.more().more_rows) out += " row " + values_text(row);
  return out;
}

inline Statement bound(std::string_view text, const std::vector<Value>& args = {}) {
  return sql::bind(sql::prepare(text), args);
}

/// The error `text` is refused with; fails the test when it parses.
inline sql::Error error_of(std::string_view text) {
  try {
    sql::prepare(text);
  } catch (const sql::Error& e) {
    return e;
  }
  FAIL("parsed: " << text);
  throw std::logic_error("unreachable");
}

/// The table a CREATE TABLE makes.
inline TableSchema table_of(std::string_view text) { return *sql::prepare(text).create; }

inline const std::string kAccountsDdl =
    "CREATE TABLE t_account (\n"
    "  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,\n"
    "  open_id VARCHAR(64) NOT NULL,\n"
    "  device VARCHAR(64) NOT NULL DEFAULT '',\n"
    "  wallet BIGINT NOT NULL DEFAULT 0,\n"
    "  status TINYINT(4) NOT NULL DEFAULT '0' COMMENT '0 unbound, 1 bound',\n"
    "  PRIMARY KEY (id),\n"
    "  UNIQUE KEY uk_open_id (open_id)\n"
    ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='accounts';";

}  // namespace test::mariadb_sql

using namespace test::mariadb_sql;
