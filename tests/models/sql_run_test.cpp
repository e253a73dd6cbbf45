// The SQL engineers write, run on the database model: expressions with NULL's three-valued
// logic, computed assignments, multi-row INSERT, tables whose id is not AUTO_INCREMENT, and the
// isolation levels' reads. Lock waits and deadlocks are pinned by the conformance scripts
// (conformance/sql-scripts/hermitage-*.json among them), which run on the model and on MariaDB.

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "models/checkers/duplicates.hpp"
#include "models/db/database.hpp"
#include "models/db/expr.hpp"
#include "models/db/sql.hpp"
#include "models/strategies/script.hpp"
#include "support.hpp"

namespace db = models::db;
namespace sql = models::db::sql;
using db::Code;
using db::Value;

namespace {

/// One database with Hermitage's table `test (id int primary key, value int)` holding (1, 10)
/// and (2, 20), and a table `t` with an AUTO_INCREMENT id and columns a, b.
struct Fixture {
  db::Database database;
  Fixture() {
    database.create_table(*sql::prepare("create table test (id int primary key, value int) engine=innodb").create);
    database.create_table(*sql::prepare("CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, a BIGINT, b INT, k VARCHAR(9))").create);
    const auto setup = session();
    REQUIRE(run(setup, "insert into test (id, value) values (1, 10), (2, 20)").affected == 2);
  }
  db::Database::SessionId session(db::Isolation isolation = db::Isolation::repeatable_read) {
    return database.open_session(isolation, "s" + std::to_string(++sessions));
  }
  db::Result run(db::Database::SessionId s, const std::string& text, const std::vector<Value>& args = {}) {
    return database.execute(s, sql::bind(sql::prepare(text), args));
  }
  /// The ids a SELECT returns.
  std::vector<std::int64_t> ids(db::Database::SessionId s, const std::string& text, const std::vector<Value>& args = {}) {
    std::vector<std::int64_t> out;
    for (const db::Row& row : run(s, text, args).rows) out.push_back(row.id);
    return out;
  }
  int sessions = 0;
};

/// Runs `body` as one process that parses SQL text, on the stack of a script's process, where
/// the model parses a script's statements (models/strategies/script_run.cpp): the parser's
/// recursion, bounded at 64 levels of nesting, needs more than the default stack.
template <class Body>
void run_parsing(Body body) {
  test::run_alone(body, models::strategies::kScriptStackBytes);
}

std::int64_t value_of(const db::Result& r, std::size_t row, const std::string& column) {
  return std::get<std::int64_t>(r.rows.at(row).values.at(column));
}

/// The value of `expression` on the row a = 5, k = 'abc' (parsed as an UPDATE's assignment).
std::optional<Value> eval(const std::string& expression) {
  const db::Statement s = sql::bind(sql::prepare("UPDATE t SET b = " + expression), {});
  REQUIRE(s.more().assign.size() == 1);
  const db::Values row{{"a", std::int64_t{5}}, {"k", std::string("abc")}};
  return db::evaluate(s.more().assign[0].second, db::Scope{row, s.more().args});
}

/// What the parser expected where it refused `text`; "(accepted)" when it did not.
std::string expected(const std::string& text) {
  try {
    sql::prepare(text);
  } catch (const sql::Error& e) {
    return e.expected();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("NULL follows SQL's three-valued logic: only a true WHERE keeps a row", "[sql][expr]") {
  const Value yes{std::int64_t{1}}, no{std::int64_t{0}};
  CHECK(eval("NULL AND a = 6") == no);
  CHECK(eval("NULL AND a = 5") == std::nullopt);
  CHECK(eval("NULL OR a = 5") == yes);
  CHECK(eval("NOT (a = NULL)") == std::nullopt);
  CHECK(eval("a IN (1, NULL)") == std::nullopt);  // neither true nor false: a NOT IN with a NULL keeps no row
  CHECK(eval("a NOT IN (1, NULL)") == std::nullopt);
  CHECK(eval("a IN (5, NULL)") == yes);
  CHECK(eval("a BETWEEN NULL AND 4") == no);
  CHECK(eval("a DIV 0 IS NULL") == yes);  // MySQL's division by zero is NULL
  CHECK(eval("a % 0 IS NOT NULL") == no);
  CHECK(eval("-7 % 3 = -1") == yes);  // the sign of the dividend, as MySQL's
  CHECK(eval("k = 'abc' AND k > 'abb' AND a = '5x'") == yes);  // a string meets a number as its leading integer
}

TEST_CASE("LIKE matches % and _ over bytes, and \\ takes them literally", "[sql][expr]") {
  const Value yes{std::int64_t{1}}, no{std::int64_t{0}};
  CHECK(eval("k LIKE 'a%'") == yes);
  CHECK(eval("k LIKE '_b_'") == yes);
  CHECK(eval("k LIKE '%c%'") == yes);
  CHECK(eval("k LIKE 'ab'") == no);
  CHECK(eval("k NOT LIKE 'A%'") == yes);  // bytes: the model's collation is binary
  CHECK(eval("'a%c' LIKE 'a\\%c'") == yes);
  CHECK(eval("k LIKE 'a\\%c'") == no);
  CHECK(eval("a LIKE '5'") == yes);
}

TEST_CASE("arithmetic past BIGINT's range fails with 1690 and rolls back the statement", "[sql][expr]") {
  run_parsing([&] {
    Fixture f;
    const auto s = f.session();
    const db::Result r = f.run(s, "update test set value = value + 9223372036854775800 where id in (1, 2)");
    CHECK(r.code == Code::value_out_of_range);
    CHECK(r.message == "BIGINT value is out of range in 'value + 9223372036854775800'");
    CHECK(r.undone == db::Undone::statement);
    CHECK(f.ids(s, "select * from test where value IN (10, 20)") == std::vector<std::int64_t>{1, 2});
  });
}

TEST_CASE("UPDATE's computed assignments run left to right, each seeing the ones before", "[sql][expr]") {
  run_parsing([&] {
    Fixture f;
    const auto s = f.session();
    REQUIRE(f.run(s, "INSERT INTO t (a, b) VALUES (1, 0)").ok());
    CHECK(f.run(s, "UPDATE t SET a = a + 1, b = a * 10 WHERE a BETWEEN 0 AND 3 OR b < 0").affected == 1);
    const db::Result r = f.run(s, "SELECT a, b FROM t");
    CHECK(value_of(r, 0, "a") == 2);
    CHECK(value_of(r, 0, "b") == 20);
    CHECK(f.run(s, "UPDATE t SET a = NULL").ok());  // a may hold NULL
    CHECK(db::is_null(f.run(s, "SELECT a FROM t").rows.at(0).values.at("a")));
  });
}

TEST_CASE("NULL is stored where a column may hold it and refused with 1048 where it is NOT NULL, comparisons skip it, "
          "IS NULL finds it, COUNT(col) leaves it out and ORDER BY puts it first",
          "[sql][null]") {
  run_parsing([&] {
    Fixture f;
    f.database.create_table(*sql::prepare("CREATE TABLE u (id BIGINT AUTO_INCREMENT PRIMARY KEY, k VARCHAR(9), "
                                          "v INT NOT NULL DEFAULT 0, UNIQUE KEY uk (k))")
                                 .create);
    const auto s = f.session();
    CHECK(f.run(s, "INSERT INTO u (k) VALUES (NULL)").ok());
    CHECK(f.run(s, "INSERT INTO u (v) VALUES (1)").ok());  // k's default is NULL
    CHECK(f.run(s, "INSERT INTO u (k, v) VALUES (?, 2)", {Value{db::Null{}}}).ok());
    CHECK(f.run(s, "INSERT INTO u (id, k) VALUES (NULL, 'a')").insert_id == 4);  // a NULL id: the next AUTO_INCREMENT one
    CHECK(f.run(s, "INSERT INTO u (k) VALUES ('a')").code == Code::duplicate_key);
    db::Result r = f.run(s, "INSERT INTO u (k, v) VALUES ('b', NULL)");
    CHECK(r.code == Code::bad_null);
    CHECK(r.message == "Column 'v' cannot be null");
    CHECK(f.run(s, "UPDATE u SET v = NULL WHERE k = 'a'").code == Code::bad_null);
    CHECK(f.ids(s, "SELECT * FROM u WHERE k IS NULL") == std::vector<std::int64_t>{1, 2, 3});
    CHECK(f.ids(s, "SELECT * FROM u WHERE k = ?", {Value{db::Null{}}}).empty());
    CHECK(f.ids(s, "SELECT * FROM u WHERE k <> 'a'").empty());
    CHECK(f.ids(s, "SELECT * FROM u ORDER BY k DESC, id") == std::vector<std::int64_t>{4, 1, 2, 3});
    CHECK(value_of(f.run(s, "SELECT COUNT(k) FROM u"), 0, "COUNT(*)") == 1);
    CHECK(value_of(f.run(s, "SELECT COUNT(*) FROM u"), 0, "COUNT(*)") == 4);
    CHECK(f.database.rows_sharing("u", "k").empty());  // three NULLs are no repeated key
    REQUIRE(f.run(s, "INSERT INTO t (a) VALUES (7), (7), (NULL), (NULL)").affected == 4);
    const auto d = models::checkers::find_duplicates(f.database.committed_rows("t"), "a");
    CHECK(d.duplicated_keys == 1);  // 7, not NULL
    CHECK(d.duplicate_rows == 1);
    CHECK(f.database.rows_sharing("t", "a").size() == 2);
  });
}

TEST_CASE("MAX, MIN and SUM read the column's non-NULL values: NULL over none, SUM past BIGINT's range 1690", "[sql][null]") {
  run_parsing([&] {
    Fixture f;
    const auto s = f.session();
    REQUIRE(f.run(s, "INSERT INTO t (a, k) VALUES (3, 'x'), (NULL, 'y'), (5, NULL)").affected == 3);
    CHECK(value_of(f.run(s, "SELECT SUM(a) FROM t"), 0, "SUM(a)") == 8);
    CHECK(value_of(f.run(s, "SELECT MAX(a) FROM t"), 0, "MAX(a)") == 5);
    CHECK(value_of(f.run(s, "SELECT MIN(a) FROM t WHERE k IS NOT NULL"), 0, "MIN(a)") == 3);
    CHECK(f.run(s, "SELECT MAX(k) FROM t").rows.at(0).values.at("MAX(k)") == Value{"y"});
    CHECK(db::is_null(f.run(s, "SELECT SUM(a) FROM t WHERE a > 9").rows.at(0).values.at("SUM(a)")));
    CHECK(f.run(s, "SELECT MAX(nope) FROM t").code == Code::bad_field);
    REQUIRE(f.run(s, "INSERT INTO t (a) VALUES (9223372036854775807)").ok());
    CHECK(f.run(s, "SELECT SUM(a) FROM t").code == Code::value_out_of_range);
  });
}

TEST_CASE("an aggregate's alias names its column, AS or not, and its message keeps the server's name", "[sql]") {
  run_parsing([&] {
    Fixture f;
    const auto s = f.session();
    REQUIRE(f.run(s, "INSERT INTO t (a, k) VALUES (3, 'x'), (4, ' 12abc')").affected == 2);
    CHECK(value_of(f.run(s, "SELECT COUNT(*) AS n FROM t"), 0, "n") == 2);
    CHECK(value_of(f.run(s, "SELECT SUM(a) total FROM t"), 0, "total") == 7);
    CHECK(value_of(f.run(s, "SELECT SUM(k) AS `s` FROM t"), 0, "s") == 12);  // a string sums as its leading integer
    REQUIRE(f.run(s, "INSERT INTO t (a) VALUES (9223372036854775807)").ok());
    const db::Result over = f.run(s, "SELECT SUM(a) AS n FROM t");
    CHECK(over.code == Code::value_out_of_range);
    CHECK(over.message == "BIGINT value is out of range in 'SUM(a)'");
    CHECK_THROWS_AS(sql::prepare("SELECT COUNT(*) AS FROM t"), sql::Error);
  });
}

TEST_CASE("COALESCE and IFNULL give their first value that is not NULL, in a WHERE and an UPDATE", "[sql][expr][null]") {
  CHECK(eval("COALESCE(NULL, a + 1, 7)") == Value{std::int64_t{6}});
  CHECK(eval("COALESCE(NULL, NULL)") == std::nullopt);
  CHECK(eval("IFNULL(NULL, k)") == Value{"abc"});
  CHECK(eval("IFNULL(a, 0) * 2") == Value{std::int64_t{10}});
  CHECK_THROWS_AS(sql::prepare("UPDATE t SET b = IFNULL(a)"), sql::Error);
  CHECK_THROWS_AS(sql::prepare("UPDATE t SET b = IFNULL(a, 1, 2)"), sql::Error);
  CHECK_THROWS_AS(sql::prepare("UPDATE t SET b = COALESCE()"), sql::Error);
  run_parsing([&] {
    Fixture f;
    const auto s = f.session();
    REQUIRE(f.run(s, "INSERT INTO t (a, b) VALUES (NULL, 1), (2, 2)").affected == 2);
    CHECK(f.run(s, "UPDATE t SET a = COALESCE(a, 0) + 1").affected == 2);
    CHECK(value_of(f.run(s, "SELECT * FROM t WHERE b = 1"), 0, "a") == 1);
    CHECK(value_of(f.run(s, "SELECT * FROM t WHERE b = 2"), 0, "a") == 3);
    CHECK(f.ids(s, "SELECT * FROM t WHERE IFNULL(k, 'none') = 'none'").size() == 2);
  });
}

TEST_CASE("GROUP BY gives a row a group in the group's order, HAVING keeps groups, and ORDER BY and LIMIT order and cut them",
          "[sql][group]") {
  run_parsing([&] {
    Fixture f;
    const auto s = f.session();
    REQUIRE(f.run(s, "INSERT INTO t (a, k) VALUES (1, 'x'), (2, 'y'), (3, 'x'), (4, NULL), (5, 'z'), (6, 'x'), (7, 'y')").affected == 7);
    db::Result r = f.run(s, "SELECT k, COUNT(*) FROM t GROUP BY k");
    REQUIRE(r.rows.size() == 4);
    CHECK(db::is_null(r.rows[0].values.at("k")));  // NULLs are one group, sorted first
    CHECK(r.rows[1].values.at("k") == Value{"x"});
    CHECK(value_of(r, 1, "COUNT(*)") == 3);
    CHECK(value_of(r, 3, "COUNT(*)") == 1);
    // The duplicates a unique key would have refused: HAVING on the aggregate, with or without it listed.
    r = f.run(s, "SELECT k FROM t GROUP BY k HAVING COUNT(*) > 1");
    REQUIRE(r.rows.size() == 2);
    CHECK(r.rows[0].values.at("k") == Value{"x"});
    CHECK(r.rows[1].values.at("k") == Value{"y"});
    r = f.run(s, "SELECT k, SUM(a) AS total FROM t WHERE a > 1 GROUP BY k HAVING total >= 9 ORDER BY total DESC, k DESC LIMIT 1");
    REQUIRE(r.rows.size() == 1);
    CHECK(r.rows[0].values.at("k") == Value{"y"});
    CHECK(value_of(r, 0, "total") == 9);
    r = f.run(s, "SELECT k, MAX(a) FROM t GROUP BY k ORDER BY MAX(a) LIMIT 2, 1");  // NULL 4, z 5, x 6, y 7
    REQUIRE(r.rows.size() == 1);
    CHECK(r.rows[0].values.at("k") == Value{"x"});
    CHECK(f.run(s, "SELECT k, COUNT(*) FROM t WHERE a > 100 GROUP BY k").rows.empty());
    CHECK(f.run(s, "SELECT nope, COUNT(*) FROM t GROUP BY nope").code == Code::bad_field);
  });
}

TEST_CASE("SELECT DISTINCT and GROUP BY alone give a row for each combination of values, NULLs one group sorted first",
          "[sql][group]") {
  run_parsing([&] {
    Fixture f;
    const auto s = f.session();
    REQUIRE(f.run(s, "INSERT INTO t (a, k) VALUES (1, 'x'), (2, 'y'), (1, 'x'), (4, NULL), (5, 'z'), (2, NULL)").affected == 6);
    db::Result r = f.run(s, "SELECT DISTINCT k FROM t");
    REQUIRE(r.rows.size() == 4);
    CHECK(db::is_null(r.rows[0].values.at("k")));
    CHECK(r.rows[3].values.at("k") == Value{"z"});
    CHECK(r.rows[0].values.size() == 1);  // the listed columns only, no aggregate
    r = f.run(s, "SELECT DISTINCT a, k FROM t WHERE a < 5 ORDER BY a DESC, k LIMIT 3");
    REQUIRE(r.rows.size() == 3);  // (4, NULL), (2, NULL), (2, 'y'): the two (1, 'x') rows are one
    CHECK(value_of(r, 0, "a") == 4);
    CHECK(db::is_null(r.rows[1].values.at("k")));
    CHECK(r.rows[2].values.at("k") == Value{"y"});
    r = f.run(s, "SELECT k FROM t GROUP BY k HAVING k > 'x'");
    REQUIRE(r.rows.size() == 2);
    CHECK(r.rows[0].values.at("k") == Value{"y"});
  });
}

TEST_CASE("a select list's computed columns are evaluated over each row found, NULL and 1690 as MySQL's expressions give them", "[sql][expr]") {
  run_parsing([&] {
    Fixture f;
    const auto s = f.session();
    REQUIRE(f.run(s, "INSERT INTO t (a, b, k) VALUES (1, 10, 'x'), (2, NULL, 'y'), (9223372036854775807, 1, 'z')").affected == 3);
    db::Result r = f.run(s, "SELECT k, a * 2 AS twice, b + 1 AS next_b, k AS name FROM t WHERE a < 3 ORDER BY a DESC");
    REQUIRE(r.rows.size() == 2);
    CHECK(value_of(r, 0, "twice") == 4);
    CHECK(db::is_null(r.rows[0].values.at("next_b")));
    CHECK(r.rows[0].values.at("name") == Value{"y"});
    CHECK(value_of(r, 1, "next_b") == 11);
    CHECK(value_of(f.run(s, "SELECT * FROM t WHERE a = 1"), 0, "b") == 10);  // the stored row is as it was
    CHECK(f.run(s, "SELECT a + 1 FROM t").code == Code::value_out_of_range);
  });
}

TEST_CASE("a SELECT without FROM reads the session's LAST_INSERT_ID() and, reading no table, takes no read view", "[sql][last_insert_id]") {
  run_parsing([&] {
    Fixture f;
    const auto s1 = f.session(), s2 = f.session();
    CHECK(value_of(f.run(s1, "SELECT LAST_INSERT_ID()"), 0, "LAST_INSERT_ID()") == 0);
    REQUIRE(f.run(s1, "INSERT INTO t (a) VALUES (1), (2)").affected == 2);
    CHECK(value_of(f.run(s1, "SELECT LAST_INSERT_ID() + 1 AS next_id"), 0, "next_id") == 2);
    CHECK(value_of(f.run(s2, "SELECT LAST_INSERT_ID()"), 0, "LAST_INSERT_ID()") == 0);
    CHECK(f.run(s1, "SELECT 9223372036854775807 + 1").code == Code::value_out_of_range);
    REQUIRE(f.run(s1, "BEGIN").ok());
    REQUIRE(f.run(s1, "SELECT 1").rows.size() == 1);
    REQUIRE(f.run(s2, "INSERT INTO t (a) VALUES (3)").ok());
    CHECK(f.ids(s1, "SELECT * FROM t").size() == 3);  // the view is taken here, after s2's commit
  });
}

TEST_CASE("GROUP BY is refused where MariaDB would answer some row's value, or its LIMIT would cut a locking read", "[sql][group]") {
  CHECK(expected("SELECT k, COUNT(*) FROM t") == "an aggregate alone, or GROUP BY k (a column beside an aggregate)");
  CHECK(expected("SELECT a, COUNT(*) FROM t GROUP BY k") == "a column of GROUP BY's (a is neither grouped nor aggregated)");
  CHECK(expected("SELECT k, COUNT(*) FROM t GROUP BY k HAVING MAX(a) > 1").starts_with("the aggregate the statement names already"));
  CHECK(expected("SELECT k, COUNT(*) FROM t GROUP BY k LIMIT 1 FOR UPDATE").starts_with("FOR UPDATE or LOCK IN SHARE MODE without LIMIT"));
  CHECK(expected("SELECT k, COUNT(*) FROM t GROUP BY k FOR UPDATE") == "(accepted)");
}

TEST_CASE("LAST_INSERT_ID() is the session's first generated id of its last insert, and LAST_INSERT_ID(expr) sets it",
          "[sql][last_insert_id]") {
  run_parsing([&] {
    Fixture f;
    const auto s = f.session(), other = f.session();
    const auto last = [&](db::Database::SessionId on) { return f.ids(on, "SELECT * FROM t WHERE id = LAST_INSERT_ID()"); };
    CHECK(last(s).empty());  // 0 before any insert
    REQUIRE(f.run(s, "INSERT INTO t (k) VALUES ('a'), ('b')").insert_id == 1);
    CHECK(last(s) == std::vector<std::int64_t>{1});  // a multi-row INSERT's first id
    CHECK(last(other).empty());                       // each session its own
    REQUIRE(f.run(s, "INSERT INTO t (id, k) VALUES (1, 'x')").code == Code::duplicate_key);
    REQUIRE(f.run(s, "INSERT INTO t (id, k) VALUES (50, 'x')").ok());
    CHECK(last(s) == std::vector<std::int64_t>{1});  // neither a failed insert nor an explicit id changes it
    // UPDATE ... SET c = LAST_INSERT_ID(expr): the new value is the session's and the statement's insert id.
    const db::Result r = f.run(s, "UPDATE t SET a = LAST_INSERT_ID(2) WHERE k = 'b'");
    CHECK(r.affected == 1);
    CHECK(r.insert_id == 2);
    CHECK(last(s) == std::vector<std::int64_t>{2});
    CHECK(f.ids(s, "SELECT * FROM t WHERE a = LAST_INSERT_ID() + 0") == std::vector<std::int64_t>{2});
  });
  CHECK(expected("UPDATE t SET a = LAST_INSERT_ID(a + 1) WHERE id = LAST_INSERT_ID()") == "(accepted)");
  CHECK(expected("UPDATE t SET a = LAST_INSERT_ID(a) + 1").starts_with("LAST_INSERT_ID() (LAST_INSERT_ID(expr) is modelled"));
  CHECK(expected("UPDATE t SET a = LAST_INSERT_ID(1), b = LAST_INSERT_ID(2)").starts_with("LAST_INSERT_ID() (LAST_INSERT_ID(expr)"));
  CHECK(expected("SELECT * FROM t WHERE a = LAST_INSERT_ID(5)").starts_with("LAST_INSERT_ID() (LAST_INSERT_ID(expr)"));
}

TEST_CASE("ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id) reports the existing row's id: get-or-create in one statement",
          "[sql][last_insert_id]") {
  run_parsing([&] {
    db::Database database;
    database.create_table(*sql::prepare("CREATE TABLE u (id BIGINT AUTO_INCREMENT PRIMARY KEY, k VARCHAR(9) NOT NULL, UNIQUE KEY uk (k))").create);
    const auto s = database.open_session(db::Isolation::repeatable_read, "s1");
    const auto run = [&](const std::string& text) { return database.execute(s, sql::bind(sql::prepare(text), {})); };
    const std::string get_or_create = "INSERT INTO u (k) VALUES ('a') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)";
    CHECK(run(get_or_create).insert_id == 1);  // created
    REQUIRE(run("INSERT INTO u (k) VALUES ('b')").insert_id == 2);
    const db::Result again = run(get_or_create);
    CHECK(again.affected == 0);  // the row is as it was
    CHECK(again.insert_id == 1);  // its id, as the idiom wants
    CHECK(run("SELECT * FROM u WHERE id = LAST_INSERT_ID()").rows.at(0).values.at("k") == Value{"a"});
  });
}

TEST_CASE("ON DUPLICATE KEY UPDATE computes from the existing row and VALUES()", "[sql][expr]") {
  run_parsing([&] {
    Fixture f;
    const auto s = f.session();
    db::Result r = f.run(s, "insert into test (id, value) values (1, 5) on duplicate key update value = value + VALUES(value)");
    CHECK(r.affected == 2);
    r = f.run(s, "select * from test where id = 1");
    CHECK(value_of(r, 0, "value") == 15);
  });
}

TEST_CASE("a multi-row INSERT ... ON DUPLICATE KEY UPDATE updates each row's duplicate with that row's VALUES(), its own rows too",
          "[sql][expr]") {
  run_parsing([&] {
    Fixture f;
    const auto s = f.session();
    db::Result r = f.run(s, "insert into test (id, value) values (1, 5), (7, 70), (2, 1) on duplicate key update value = value + VALUES(value)");
    CHECK(r.affected == 5);  // 2 (updated) + 1 (inserted) + 2
    CHECK(value_of(f.run(s, "select * from test where id = 1"), 0, "value") == 15);
    CHECK(value_of(f.run(s, "select * from test where id = 2"), 0, "value") == 21);
    CHECK(value_of(f.run(s, "select * from test where id = 7"), 0, "value") == 70);
    r = f.run(s, "insert into test (id, value) values (9, 1), (9, 2) on duplicate key update value = VALUES(value)");
    CHECK(r.affected == 3);  // the second row updates the row the first inserted
    CHECK(value_of(f.run(s, "select * from test where id = 9"), 0, "value") == 2);
  });
}

TEST_CASE("a multi-row INSERT inserts each row, and a duplicate in any undoes them all", "[sql]") {
  run_parsing([&] {
    Fixture f;
    const auto s = f.session();
    db::Result r = f.run(s, "insert into test (id, value) values (3, 30), (1, 10)");
    CHECK(r.code == Code::duplicate_key);
    CHECK(r.message == "Duplicate entry '1' for key 'PRIMARY'");
    CHECK(r.undone_rows == 1);
    CHECK(f.ids(s, "select * from test") == std::vector<std::int64_t>{1, 2});
    r = f.run(s, "insert ignore into test (id, value) values (3, 30), (1, 10), (4, 40)");
    CHECK(r.affected == 2);
    CHECK(r.warnings == 1);
    CHECK(f.ids(s, "select * from test") == std::vector<std::int64_t>{1, 2, 3, 4});
  });
}

TEST_CASE("a table whose id is not AUTO_INCREMENT needs an id on every INSERT (1364) and reports no insert id", "[sql]") {
  run_parsing([&] {
    Fixture f;
    const auto s = f.session();
    db::Result r = f.run(s, "insert into test (value) values (30)");
    CHECK(r.code == Code::no_default);
    CHECK(r.message == "Field 'id' doesn't have a default value");
    r = f.run(s, "insert into test set id = 7, value = 70");
    CHECK(r.ok());
    CHECK(r.insert_id == 0);
    CHECK(f.run(s, "INSERT INTO t (a) VALUES (1), (2)").insert_id == 1);  // the first id the statement took
  });
}

TEST_CASE("READ UNCOMMITTED reads another transaction's uncommitted change, READ COMMITTED does not", "[sql]") {
  run_parsing([&] {
    // Hermitage G1a (conformance hermitage-g1a-read-uncommitted, hermitage-g1a-read-committed).
    Fixture f;
    const auto writer = f.session();
    const auto dirty = f.session(db::Isolation::read_uncommitted);
    const auto clean = f.session(db::Isolation::read_committed);
    REQUIRE(f.run(writer, "begin").ok());
    REQUIRE(f.run(writer, "update test set value = 101 where id = 1").affected == 1);
    CHECK(value_of(f.run(dirty, "select * from test where id = 1"), 0, "value") == 101);
    CHECK(value_of(f.run(clean, "select * from test where id = 1"), 0, "value") == 10);
    REQUIRE(f.run(writer, "rollback").ok());
    CHECK(value_of(f.run(dirty, "select * from test where id = 1"), 0, "value") == 10);
  });
}

TEST_CASE("START TRANSACTION WITH CONSISTENT SNAPSHOT reads as of its start, BEGIN as of its first read", "[sql]") {
  run_parsing([&] {
    Fixture f;
    const auto snapshot = f.session(), later = f.session(), writer = f.session();
    REQUIRE(f.run(snapshot, "START TRANSACTION WITH CONSISTENT SNAPSHOT").ok());
    REQUIRE(f.run(later, "BEGIN").ok());
    REQUIRE(f.run(writer, "insert into test (id, value) values (3, 30)").ok());
    CHECK(f.ids(snapshot, "select * from test where value >= 10") == std::vector<std::int64_t>{1, 2});
    CHECK(f.ids(later, "select * from test where value >= 10") == std::vector<std::int64_t>{1, 2, 3});
  });
}

TEST_CASE("SELECT COUNT(*) returns one row counting what the WHERE finds, and locks what a locking read would", "[sql]") {
  run_parsing([&] {
    Fixture f;
    const auto s = f.session();
    db::Result r = f.run(s, "select count(*) from test where value >= 10 and id in (1, 2, 3)");
    REQUIRE(r.rows.size() == 1);
    CHECK(r.rows[0].values.at("COUNT(*)") == Value{std::int64_t{2}});
    r = f.run(s, "SELECT COUNT(id) FROM test WHERE value > 100 LIMIT 1");
    CHECK(r.rows.at(0).values.at("COUNT(*)") == Value{std::int64_t{0}});
    CHECK(f.run(s, "SELECT COUNT(*) FROM test LIMIT 0").rows.empty());
  });
}

TEST_CASE("a unique key over two columns refuses a repeated pair with 1062 naming both values, admits pairs holding a "
          "NULL, and reads a prefix in the index's order",
          "[sql][index]") {
  run_parsing([&] {
    db::Database database;
    database.create_table(*sql::prepare("CREATE TABLE pay (id BIGINT AUTO_INCREMENT PRIMARY KEY, merchant INT NOT NULL, "
                                        "request VARCHAR(32), amount INT NOT NULL DEFAULT 0, "
                                        "UNIQUE KEY uk_request (merchant, request))")
                              .create);
    const auto s = database.open_session(db::Isolation::repeatable_read, "s1");
    const auto run = [&](const std::string& text) { return database.execute(s, sql::bind(sql::prepare(text), {})); };
    REQUIRE(run("INSERT INTO pay (merchant, request) VALUES (1, 'c'), (1, 'a'), (2, 'a')").ok());
    db::Result r = run("INSERT INTO pay (merchant, request) VALUES (1, 'a')");
    CHECK(r.code == Code::duplicate_key);
    CHECK(r.message == "Duplicate entry '1-a' for key 'uk_request'");
    CHECK(run("INSERT IGNORE INTO pay (merchant, request) VALUES (2, 'a')").warnings == 1);
    r = run("INSERT INTO pay (merchant, request, amount) VALUES (1, 'c', 5) ON DUPLICATE KEY UPDATE amount = amount + 5");
    CHECK(r.affected == 2);
    CHECK(r.insert_id == 1);
    CHECK(run("INSERT INTO pay (merchant) VALUES (1), (1)").affected == 2);  // (1, NULL) twice: no conflict
    // merchant = 1 reads its pairs in the index's order: (1, NULL), (1, NULL), (1, 'a'), (1, 'c'), where the search is
    // made: with a LIMIT under the table's 5 rows. Without, 4 entries of 5 rows cost more than a scan, which reads the
    // rows in id order.
    const auto ids_of = [&](const std::string& text) {
      std::vector<std::int64_t> ids;
      for (const db::Row& row : run(text).rows) ids.push_back(row.id);
      return ids;
    };
    CHECK(ids_of("SELECT * FROM pay WHERE merchant = 1 LIMIT 4") == std::vector<std::int64_t>{7, 8, 2, 1});
    CHECK(ids_of("SELECT * FROM pay WHERE merchant = 1") == std::vector<std::int64_t>{1, 2, 7, 8});
    CHECK(run("SELECT * FROM pay WHERE merchant = 1 AND request = 'c'").rows.at(0).values.at("amount") == Value{std::int64_t{5}});
    // An UPDATE of an index column moves the row: onto a pair another row holds, 1062 naming it.
    r = run("UPDATE pay SET request = 'a' WHERE id = 1");
    CHECK(r.code == Code::duplicate_key);
    CHECK(r.message == "Duplicate entry '1-a' for key 'uk_request'");
    CHECK(run("UPDATE pay SET request = 'd' WHERE id = 1").affected == 1);
    CHECK(run("SELECT * FROM pay WHERE merchant = 1 AND request = 'd'").rows.size() == 1);
    // A list of no value (IN (NULL)) before a further column searches nothing, LIMIT or not.
    CHECK(run("SELECT * FROM pay WHERE merchant IN (NULL) AND request = 'd' ORDER BY merchant LIMIT 1 FOR UPDATE").rows.empty());
  });
}

TEST_CASE("ALTER TABLE ... ADD UNIQUE KEY over two columns fails on a repeated pair with 1062 naming it, and once built "
          "refuses the pair",
          "[sql][index][ddl]") {
  run_parsing([&] {
    db::Database database;
    database.create_table(*sql::prepare("CREATE TABLE pay (id BIGINT AUTO_INCREMENT PRIMARY KEY, merchant INT NOT NULL, "
                                        "request VARCHAR(32) NOT NULL)")
                              .create);
    const auto s = database.open_session(db::Isolation::repeatable_read, "s1");
    const auto run = [&](const std::string& text) { return database.execute(s, sql::bind(sql::prepare(text), {})); };
    REQUIRE(run("INSERT INTO pay (merchant, request) VALUES (2, 'a'), (1, 'a'), (1, 'c'), (1, 'a')").ok());
    const std::string alter = "ALTER TABLE pay ADD UNIQUE KEY uk_request (merchant, request)";
    db::Result r = run(alter);
    CHECK(r.code == Code::duplicate_key);
    CHECK(r.message == "Duplicate entry '1-a' for key 'uk_request'");
    REQUIRE(run("DELETE FROM pay WHERE id = 4").ok());
    REQUIRE(run(alter).ok());
    CHECK(run("INSERT INTO pay (merchant, request) VALUES (2, 'a')").message == "Duplicate entry '2-a' for key 'uk_request'");
    CHECK(run("INSERT INTO pay (merchant, request) VALUES (2, 'c')").ok());
  });
}

TEST_CASE("a row is stored only where its values fit their columns' types, as MariaDB's strict mode checks them", "[sql][types]") {
  run_parsing([&] {
    Fixture f;
    const auto s = f.session();
    CHECK(f.run(s, "INSERT INTO t (a, b) VALUES (1, 2147483648)").code == Code::column_out_of_range);
    CHECK(f.run(s, "INSERT INTO t (a, k) VALUES (1, 'ten chars!')").code == Code::data_too_long);
    CHECK(f.run(s, "INSERT INTO t (a, b) VALUES (1, 'xyz')").code == Code::bad_integer);
    REQUIRE(f.run(s, "INSERT INTO t (a, b, k) VALUES (1, '2147483647', 'nine char')").affected == 1);
    CHECK(value_of(f.run(s, "SELECT b FROM t WHERE a = 1"), 0, "b") == 2147483647);  // the string's integer
    const db::Result over = f.run(s, "UPDATE t SET b = b + 1 WHERE a = 1");
    CHECK(over.code == Code::column_out_of_range);
    CHECK(over.message == "Out of range value for column 'b' at row 1");
    CHECK(f.run(s, "UPDATE t SET b = a DIV 0 WHERE a = 1").code == Code::division_by_zero);
    CHECK(db::is_null(f.run(s, "SELECT a DIV 0 AS q FROM t WHERE a = 1").rows.at(0).values.at("q")));  // NULL in a SELECT
    CHECK(value_of(f.run(s, "SELECT b FROM t WHERE a = 1"), 0, "b") == 2147483647);  // nothing stored by the refused ones
  });
}
