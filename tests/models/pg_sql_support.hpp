#pragma once
// What the tests of PostgreSQL's SQL (pg_sql_test.cpp, pg_sql_ddl_test.cpp) share: statements
// bound and refused, and their parts written out.

#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/db/postgres/sql.hpp"
#include "support.hpp"

namespace db = models::db;
namespace pg = models::db::pg;
namespace sql = models::db::sql;
using db::Condition;
using db::KeyIndex;
using db::OnDuplicate;
using db::ReadLock;
using db::Statement;
using db::Value;
using In = sql::Param::In;

namespace test::postgres_sql {

inline Value num(std::int64_t n) { return Value{n}; }

inline Statement bound(std::string_view text, const std::vector<Value>& args = {}) { return sql::bind(pg::prepare(text), args); }

/// The error `text` is refused with; fails the test when it parses.
inline pg::Error error_of(std::string_view text) {
  try {
    pg::prepare(text);
  } catch (const pg::Error& e) {
    return e;
  }
  FAIL("parsed: " << text);
  throw std::logic_error("unreachable");
}

/// The construct a 0A000 names ("SAVEPOINT" of "SAVEPOINT is not modelled (...)"); fails the
/// test for another sqlstate.
inline std::string refused(std::string_view text) {
  const pg::Error e = error_of(text);
  INFO(e.what());
  REQUIRE(e.sqlstate() == "0A000");
  const std::string tail = " is not modelled (docs/sql.md, PostgreSQL)";
  REQUIRE(e.message().ends_with(tail));
  return e.message().substr(0, e.message().size() - tail.size());
}

inline std::vector<std::string> filters(const Statement& s) {
  std::vector<std::string> out;
  for (const db::Expr& e : s.more().filter) out.push_back(db::to_string(e));
  return out;
}

inline std::string assignments(const Statement& s) {
  std::string out;
  for (const auto& [column, e] : s.more().assign) out += (out.empty() ? "" : ", ") + column + " = " + db::to_string(e);
  return out;
}

inline std::string where_text(const Statement& s) {
  static const char* const kOps[] = {"=", "!=", "<", "<=", ">", ">="};
  std::string out;
  for (const Condition& c : s.where) out += (out.empty() ? "" : " AND ") + c.column + " " + kOps[static_cast<int>(c.op)] + " " + db::to_string(c.value);
  return out;
}

}  // namespace test::postgres_sql

using namespace test::postgres_sql;
