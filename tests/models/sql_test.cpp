// MariaDB's SQL text parsed into the database's typed statements (models/db/sql.hpp): every
// statement form the model runs, its literals and parameters (table definitions and the 1064
// errors: sql_ddl_test.cpp).

#include <catch2/catch.hpp>

#include "sql_support.hpp"

// --- SELECT ----------------------------------------------------------------------------------

TEST_CASE("SELECT maps each condition, in order, with its operator and value", "[sql]") {
  const sql::Prepared p =
      sql::prepare("SELECT id, open_id FROM t_account WHERE a = 1 AND b != 'x' AND c <> ? AND d < 2 AND e <= 3 "
                   "AND f > 4 AND g >= -5");
  CHECK(p.columns == std::vector<std::string>{"id", "open_id"});
  CHECK_FALSE(p.create);
  Statement want{.kind = Statement::Kind::select,
                 .table = "t_account",
                 .where = {db::eq("a", std::int64_t{1}), db::ne("b", "x"), db::ne("c", "y"), db::lt("d", std::int64_t{2}),
                           {Condition::Op::le, "e", std::int64_t{3}}, db::gt("f", std::int64_t{4}),
                           {Condition::Op::ge, "g", std::int64_t{-5}}}};
  CHECK(describe(sql::bind(p, {"y"})) == describe(want));
}

TEST_CASE("SELECT 1 keeps its number, what each row found reads as, SELECT * and column lists keep none", "[sql]") {
  CHECK(sql::prepare("SELECT 1 FROM t WHERE k = ?").constant == std::optional<std::int64_t>{1});
  CHECK(sql::prepare("SELECT 7 FROM t").constant == std::optional<std::int64_t>{7});
  CHECK_FALSE(sql::prepare("SELECT * FROM t").constant.has_value());
  CHECK_FALSE(sql::prepare("SELECT k FROM t").constant.has_value());
  CHECK_FALSE(sql::prepare("INSERT INTO t (k) SELECT 'a' FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM t WHERE k = 'a')").constant.has_value());
}

TEST_CASE("SELECT * and SELECT 1 read every column, and a plain SELECT takes no lock", "[sql]") {
  for (const char* text : {"SELECT * FROM t WHERE k = ?", "SELECT 1 FROM t WHERE k = ?"}) {
    INFO(text);
    const sql::Prepared p = sql::prepare(text);
    CHECK(p.columns.empty());
    CHECK(p.statement.lock == ReadLock::none);
    CHECK(describe(sql::bind(p, {"a"})) ==
          describe({.kind = Statement::Kind::select, .table = "t", .where = {db::eq("k", "a")}}));
  }
  CHECK(bound("SELECT * FROM t").where.empty());
}

TEST_CASE("FOR UPDATE takes an exclusive lock", "[sql]") {
  CHECK(bound("SELECT id FROM t WHERE k = 1 FOR UPDATE").lock == ReadLock::update);
  CHECK(bound("select id from t for update").lock == ReadLock::update);
}

TEST_CASE("LOCK IN SHARE MODE takes a shared lock, MySQL 8.0's FOR SHARE is refused with 1064, as MariaDB 10.11 refuses it", "[sql]") {
  CHECK(bound("SELECT id FROM t WHERE k = 1 LOCK IN SHARE MODE").lock == ReadLock::share);
  CHECK(error_of("SELECT id FROM t WHERE k = 1 FOR SHARE").expected() ==
        "UPDATE (FOR SHARE is MySQL 8.0's; MariaDB 10.11 writes LOCK IN SHARE MODE)");
  CHECK(error_of("SELECT id FROM t FOR NOTHING").expected() == "UPDATE");
}

TEST_CASE("keywords are case-insensitive, names keep their case and lose their backquotes", "[sql]") {
  const sql::Prepared p = sql::prepare("sElEcT `Open_Id`, `select` FrOm `T_Account` wHeRe `Key` = 1 AnD Device = 2");
  CHECK(p.columns == std::vector<std::string>{"Open_Id", "select"});
  CHECK(p.statement.table == "T_Account");
  REQUIRE(p.statement.where.size() == 2);
  CHECK(p.statement.where[0].column == "Key");
  CHECK(p.statement.where[1].column == "Device");
  CHECK(bound("SELECT * FROM `a``b`").table == "a`b");
}

TEST_CASE("COUNT, MAX, MIN and SUM stand alone in a select list without GROUP BY, named as MariaDB names them, other functions are refused",
          "[sql]") {
  const sql::Prepared p = sql::prepare("SELECT COUNT(*) FROM t WHERE k = ? FOR UPDATE");
  CHECK(p.statement.count_rows);
  CHECK(p.columns == std::vector<std::string>{"COUNT(*)"});
  CHECK(sql::prepare("select count(1) from t").statement.count_rows);
  CHECK(error_of("SELECT COUNT(*), k FROM t").expected() == "an aggregate alone, or GROUP BY k (a column beside an aggregate)");
  const sql::Prepared max = sql::prepare("SELECT max(v) FROM t");
  CHECK(max.statement.more().aggregate == db::StatementExtra::Aggregate::max);
  CHECK(max.statement.more().aggregate_column == "v");
  CHECK(max.columns == std::vector<std::string>{"MAX(v)"});
  CHECK(sql::prepare("SELECT SUM(v) FROM t").columns == std::vector<std::string>{"SUM(v)"});
  CHECK(error_of("SELECT MIN(*) FROM t").expected() == "a column name");
  const sql::Error e = error_of("SELECT AVG(v) FROM t");
  CHECK(e.position() == 7);
  CHECK(e.expected() == "a value, a column or ( (functions such as AVG() are not modelled yet)");
}

TEST_CASE("a select list's expressions and aliased columns are computed columns, named by their alias or text as written", "[sql]") {
  const sql::Prepared p = sql::prepare("SELECT id, n - 1 AS left_after, k key_name, t.v, COALESCE(w, 0) FROM t WHERE id = ? FOR UPDATE");
  CHECK(p.columns == std::vector<std::string>{"id", "left_after", "key_name", "v", "COALESCE(w, 0)"});
  const auto& computed = p.statement.more().computed;
  REQUIRE(computed.size() == 3);
  CHECK(computed[0].first == "left_after");
  CHECK(computed[1].second.kind == db::Expr::Kind::column);
  CHECK(p.statement.lock == ReadLock::update);
  CHECK(sql::prepare("SELECT 1 FROM t").constant == 1);  // still an existence check, one column named 1
  CHECK(sql::prepare("SELECT 1 + 1 FROM t").statement.more().computed.size() == 1);
  CHECK(error_of("SELECT n + 1 AS k, COUNT(*) FROM t").expected().starts_with("a column name or the aggregate (a computed column beside"));
  CHECK(error_of("SELECT n + 1 AS m FROM t ORDER BY m").expected() == "a column of the table (ORDER BY a computed column is not modelled)");
  CHECK(error_of("SELECT k, n AS k FROM t").expected() == "a column of another name (two are named k: give one an alias)");
}

TEST_CASE("SELECT DISTINCT and GROUP BY alone group by their columns without an aggregate, DISTINCT * and ORDER BY outside the list are refused",
          "[sql][group]") {
  const sql::Prepared p = sql::prepare("SELECT DISTINCT k, v FROM t WHERE v > 1 ORDER BY k DESC LIMIT 3");
  CHECK(p.statement.count_rows);
  CHECK(p.statement.more().aggregate == db::StatementExtra::Aggregate::none);
  CHECK(p.statement.more().group_by == std::vector<std::string>{"k", "v"});
  CHECK(p.statement.more().group_order_by.size() == 1);
  CHECK(p.statement.more().group_limit == 3);
  CHECK(p.columns == std::vector<std::string>{"k", "v"});
  const sql::Prepared grouped = sql::prepare("SELECT k FROM t GROUP BY k HAVING k > 'a'");
  CHECK(grouped.statement.count_rows);
  CHECK(grouped.statement.more().aggregate == db::StatementExtra::Aggregate::none);
  CHECK(sql::prepare("SELECT DISTINCT COUNT(*) FROM t").statement.more().group_by.empty());  // one row: DISTINCT changes nothing
  CHECK(error_of("SELECT DISTINCT * FROM t").expected() == "SELECT DISTINCT with a list of columns (DISTINCT * and DISTINCT 1 are not modelled)");
  CHECK(error_of("SELECT DISTINCT k FROM t ORDER BY v").expected() == "a column of the DISTINCT list (v is not in it)");
  CHECK(error_of("SELECT DISTINCT k FROM t GROUP BY k").expected().ends_with("(DISTINCT with GROUP BY is not modelled)"));
  CHECK(error_of("SELECT DISTINCT k, COUNT(*) FROM t").expected() == "an aggregate alone (DISTINCT with an aggregate and a column is not modelled)");
}

TEST_CASE("a SELECT without FROM is one row of its expressions, each named by its text as written or its alias", "[sql]") {
  const sql::Prepared p = sql::prepare("SELECT LAST_INSERT_ID()");
  CHECK(p.statement.kind == Statement::Kind::select);
  CHECK(p.statement.table.empty());
  CHECK(p.columns == std::vector<std::string>{"LAST_INSERT_ID()"});
  CHECK(p.statement.more().last_insert_id_arg.has_value());
  const sql::Prepared q = sql::prepare("select 1 + 1 , ? AS n, 'x' y, 'z' FROM DUAL;");
  CHECK(q.columns == std::vector<std::string>{"1 + 1", "n", "y", "z"});  // a string literal is named by its value
  CHECK(q.params.size() == 1);
  CHECK(sql::prepare("SELECT 1").columns == std::vector<std::string>{"1"});
  CHECK(error_of("SELECT k + 1").expected() == "a value (a SELECT without FROM reads no column: k)");
  CHECK(error_of("SELECT 1, 1").expected() == "a column of another name (two are named 1: give one an alias)");
  CHECK(error_of("SELECT COUNT(*)").expected() == "a value (COUNT() reads a table: FROM and its name)");
  CHECK(error_of("SELECT 1 FROM DUAL WHERE 1").expected() == ", FROM DUAL or the end of the statement");
}

TEST_CASE("a WHERE's column-op-value terms are conditions, every other term a filter expression", "[sql]") {
  const Statement s = bound("SELECT * FROM t WHERE a = 1 AND (b = 2 OR b > ?) AND c IN (1, 2) AND d % 3 = 0 AND e <= 'x'",
                            {std::int64_t{7}});
  CHECK(describe(s) == describe({.kind = Statement::Kind::select,
                                 .table = "t",
                                 .where = {db::eq("a", std::int64_t{1}), {Condition::Op::le, "e", "x"}}}) +
                           " filter b = 2 OR b > ? filter c IN (1, 2) filter d % 3 = 0");
  CHECK(s.more().args == std::vector<Value>{std::int64_t{7}});
  CHECK(db::to_string(s) == "SELECT * FROM t WHERE a = 1 AND e <= 'x' AND (b = 2 OR b > 7) AND c IN (1, 2) AND d % 3 = 0");
}

TEST_CASE("expressions take MySQL's precedence: OR, AND, NOT, comparisons, + -, * DIV %, unary -", "[sql]") {
  const auto filter = [](std::string_view where) { return db::to_string(bound("SELECT * FROM t WHERE " + std::string(where)).more().filter.at(0)); };
  CHECK(filter("a = 1 OR b = 2 AND c = 3") == "a = 1 OR b = 2 AND c = 3");
  CHECK(filter("NOT a = 1 OR b") == "NOT a = 1 OR b");
  CHECK(filter("a + 2 * 3 - -b = 1") == "a + 2 * 3 - -b = 1");
  CHECK(filter("v-1 = 0") == "v - 1 = 0");
  CHECK(filter("a NOT BETWEEN 1 AND 5") == "a NOT BETWEEN 1 AND 5");
  CHECK(filter("k NOT LIKE 'a%'") == "k NOT LIKE 'a%'");
  CHECK(filter("k IS NOT NULL") == "k IS NOT NULL");
  CHECK(filter("a - (b - c) = (1 = 1)") == "a - (b - c) = (1 = 1)");
  CHECK(filter("a DIV 2 MOD 3 = 1") == "a DIV 2 % 3 = 1");
  CHECK(error_of("SELECT * FROM t WHERE a / 2 = 1").expected() ==
        "DIV, the integer division (/ gives a decimal, which the model does not have)");
  CHECK(error_of("SELECT * FROM t WHERE a NOT = 1").expected() == "IN, BETWEEN or LIKE after NOT");
}

TEST_CASE("nesting past 32 levels, or parentheses past 64, is one clear error", "[sql]") {
  std::string sum = "a";
  for (int i = 0; i < 40; ++i) sum += " + 1";
  CHECK(error_of("SELECT * FROM t WHERE " + sum + " = 1").expected() == "at most 32 levels of nested expressions");
  const std::string deep = std::string(100, '(') + "1" + std::string(100, ')');
  CHECK(error_of("SELECT * FROM t WHERE a = " + deep).expected() == "at most 64 levels of nested expressions");
  std::string ands = "a = 1";
  for (int i = 0; i < 500; ++i) ands += " AND b > 1 OR c = 2";
  CHECK_NOTHROW(sql::prepare("SELECT * FROM t WHERE " + ands));  // long chains stay one level deep
}

// --- Literals and parameters -----------------------------------------------------------------

TEST_CASE("a string literal takes '' and backslash escapes, an integer may be negative", "[sql]") {
  const Statement s = bound(R"(SELECT * FROM t WHERE a = 'it''s' AND b = 'it\'s' AND c = 'a\nb\\c' AND d = -42 AND e = '')");
  REQUIRE(s.where.size() == 5);
  CHECK(s.where[0].value == Value{"it's"});
  CHECK(s.where[1].value == Value{"it's"});
  CHECK(s.where[2].value == Value{"a\nb\\c"});
  CHECK(s.where[3].value == Value{std::int64_t{-42}});
  CHECK(s.where[4].value == Value{""});
  CHECK(bound("SELECT * FROM t WHERE a = -9223372036854775808").where[0].value ==
        Value{std::numeric_limits<std::int64_t>::min()});
}

TEST_CASE("numbers are 64-bit integers: a decimal or a larger number is refused", "[sql]") {
  CHECK(error_of("SELECT * FROM t WHERE a = 1.5").expected() == "an integer (decimals are not modelled)");
  const sql::Error e = error_of("SELECT * FROM t WHERE a = 9223372036854775808");
  CHECK(e.position() == 26);
  CHECK(e.expected() == "a number from -9223372036854775808 to 9223372036854775807");
}

TEST_CASE("an unterminated string or name is refused at its opening quote", "[sql]") {
  sql::Error e = error_of("SELECT * FROM t WHERE a = 'abc");
  CHECK(e.position() == 26);
  CHECK(e.expected() == "the string's closing '");
  CHECK(error_of("SELECT * FROM t WHERE a = 'abc\\").expected() == "the string's closing '");
  e = error_of("SELECT * FROM `t");
  CHECK(e.position() == 14);
  CHECK(e.expected() == "the name's closing `");
  CHECK(error_of("SELECT * FROM ``").expected() == "a name between the backquotes");
}

TEST_CASE("NULL is a value an INSERT gives and a ? is bound to", "[sql]") {
  CHECK(db::is_null(bound("INSERT INTO t (a, b) VALUES (1, NULL)").values.at("b")));
  CHECK(db::is_null(sql::bind(sql::prepare("INSERT INTO t (a, b) VALUES (1, ?)"), {Value{db::Null{}}}).values.at("b")));
  CHECK(db::to_string(Value{}) == "NULL");  // a Value made without one is NULL
  CHECK(bound("UPDATE t SET a = NULL").more().assign.size() == 1);  // computed: running it checks the column
}

TEST_CASE("each ? is a parameter, bound in the order of the text", "[sql]") {
  const sql::Prepared p = sql::prepare("UPDATE t SET b = ?, a = ? WHERE k = ? AND v = ?");
  REQUIRE(p.params.size() == 4);
  CHECK(p.params[0].in == sql::Param::In::values);
  CHECK(p.params[0].column == "b");
  CHECK(p.params[2].in == sql::Param::In::where);
  CHECK(p.params[3].where_index == 1);
  const Statement s = sql::bind(p, {"B", std::int64_t{1}, "key", std::int64_t{7}});
  CHECK(describe(s) == describe({.kind = Statement::Kind::update,
                                 .table = "t",
                                 .where = {db::eq("k", "key"), db::eq("v", std::int64_t{7})},
                                 .values = {{"a", std::int64_t{1}}, {"b", "B"}}}));
  CHECK(describe(sql::bind(p, {"C", std::int64_t{2}, "other", std::int64_t{8}})) !=
        describe(s));  // the prepared statement is reused, not changed
}

TEST_CASE("bind with the wrong number of arguments is a usage error naming the statement", "[sql]") {
  const sql::Prepared p = sql::prepare("SELECT * FROM t WHERE k = ?");
  try {
    sql::bind(p, {});
    FAIL("bound");
  } catch (const sim::UsageError& e) {
    CHECK(std::string(e.what()) == "models::db::sql: SELECT * FROM t WHERE k = ? takes 1 parameters, got 0");
  }
  CHECK_THROWS_AS(sql::bind(p, {"a", "b"}), sim::UsageError);
}

// --- INSERT, REPLACE ---------------------------------------------------------------------------

TEST_CASE("INSERT sets each listed column to its value, a duplicate key is an error", "[sql]") {
  const Statement s = bound("INSERT INTO t_account (open_id, device, version) VALUES (?, ?, 1)", {"o", "d"});
  CHECK(describe(s) == describe({.kind = Statement::Kind::insert,
                                 .table = "t_account",
                                 .values = {{"open_id", "o"}, {"device", "d"}, {"version", std::int64_t{1}}},
                                 .on_duplicate = OnDuplicate::error}));
  CHECK(bound("INSERT t (a) VALUE (1)").values.at("a") == Value{std::int64_t{1}});
  CHECK(describe(bound("INSERT INTO t_task () VALUES ()")) ==
        describe({.kind = Statement::Kind::insert, .table = "t_task"}));
}

TEST_CASE("INSERT IGNORE ignores a duplicate key", "[sql]") {
  CHECK(bound("INSERT IGNORE INTO t (a) VALUES (?)", {"x"}).on_duplicate == OnDuplicate::ignore);
}

TEST_CASE("REPLACE INTO replaces the row with a duplicate key", "[sql]") {
  const Statement s = bound("REPLACE INTO t (a, b) VALUES (?, 'b')", {"x"});
  CHECK(describe(s) == describe({.kind = Statement::Kind::insert,
                                 .table = "t",
                                 .values = {{"a", "x"}, {"b", "b"}},
                                 .on_duplicate = OnDuplicate::replace}));
  CHECK(error_of("REPLACE INTO t (a) SELECT 1").expected() == "VALUES");
}

TEST_CASE("ON DUPLICATE KEY UPDATE c = VALUES(c) updates with the bound value", "[sql]") {
  const sql::Prepared p = sql::prepare("INSERT INTO t (open_id, device) VALUES (?, ?) ON DUPLICATE KEY UPDATE device = VALUES(device)");
  CHECK(p.from_values == std::vector<std::string>{"device"});
  const Statement s = sql::bind(p, {"o", "phone"});
  CHECK(describe(s) == describe({.kind = Statement::Kind::insert,
                                 .table = "t",
                                 .values = {{"open_id", "o"}, {"device", "phone"}},
                                 .on_duplicate = OnDuplicate::update,
                                 .on_update = {{"device", "phone"}}}));
  CHECK(sql::bind(p, {"o", "tablet"}).on_update.at("device") == Value{"tablet"});
}

TEST_CASE("ON DUPLICATE KEY UPDATE c = literal or ? updates with that value", "[sql]") {
  const sql::Prepared p =
      sql::prepare("INSERT INTO t (a) VALUES (?) ON DUPLICATE KEY UPDATE b = 'x', c = ?, a = VALUES(a)");
  REQUIRE(p.params.size() == 2);
  CHECK(p.params[1].in == sql::Param::In::on_update);
  CHECK(p.params[1].column == "c");
  CHECK(values_text(sql::bind(p, {"A", std::int64_t{3}}).on_update) == "{a='A';b='x';c=3;}");
  // MySQL also takes IGNORE with ON DUPLICATE KEY UPDATE: the update decides.
  CHECK(bound("INSERT IGNORE INTO t (a) VALUES (1) ON DUPLICATE KEY UPDATE a = 2").on_duplicate == OnDuplicate::update);
}

TEST_CASE("ON DUPLICATE KEY UPDATE computes from the row and VALUES() in order when a value is not a literal", "[sql]") {
  Statement s = bound("INSERT INTO t (a, b) VALUES (1, 2) ON DUPLICATE KEY UPDATE a = VALUES(b), b = b + ?", {std::int64_t{5}});
  REQUIRE(s.more().assign.size() == 2);
  CHECK(s.on_update.empty());
  CHECK(db::to_string(s) == "INSERT INTO t (a, b) VALUES (1, 2) ON DUPLICATE KEY UPDATE a = VALUES(b), b = b + 5");
  s = bound("INSERT INTO t (a, b) VALUES (1, 2) ON DUPLICATE KEY UPDATE a = VALUES(a), b = 3");
  CHECK(s.more().assign.empty());
  CHECK(values_text(s.on_update) == "{a=1;b=3;}");
}

TEST_CASE("a column count that differs from the value count is refused at VALUES", "[sql]") {
  sql::Error e = error_of("INSERT INTO t (a, b) VALUES (1)");
  CHECK(e.position() == 21);
  CHECK(e.near() == "VALUES (1)");
  CHECK(e.expected() == "as many values as columns (2 columns, 1 value)");
  e = error_of("INSERT INTO t (a) VALUES (1, ?)");
  CHECK(e.expected() == "as many values as columns (1 column, 2 values)");
}

TEST_CASE("an INSERT names its columns, each once", "[sql]") {
  CHECK(error_of("INSERT INTO t VALUES (1)").expected() == "the column list: (column, ...), or SET");
  sql::Error e = error_of("INSERT INTO t (a, b, a) VALUES (1, 2, 3)");
  CHECK(e.position() == 21);
  CHECK(e.expected() == "a column not listed already");
  CHECK(error_of("UPDATE t SET a = 1, a = 2").expected() == "a column not assigned already");
}

TEST_CASE("a multi-row INSERT's ON DUPLICATE KEY UPDATE reads VALUES(col) of each row, not of the first", "[sql]") {
  const sql::Prepared p = sql::prepare("INSERT INTO t (k, v) VALUES ('a', 1), ('b', 2) ON DUPLICATE KEY UPDATE v = VALUES(v), w = 3");
  CHECK(p.from_values.empty());
  REQUIRE(p.statement.more().assign.size() == 2);
  CHECK(p.statement.more().assign[0].second.kind == db::Expr::Kind::inserted);
  CHECK(sql::prepare("INSERT INTO t (k, v) VALUES ('a', 1) ON DUPLICATE KEY UPDATE v = VALUES(v)").from_values ==
        std::vector<std::string>{"v"});
}

TEST_CASE("INSERT ... SELECT ... WHERE NOT EXISTS inserts if absent: the subquery's conditions are its WHERE", "[sql]") {
  const Statement want{.kind = Statement::Kind::insert_if_absent,
                       .table = "t_account",
                       .where = {db::eq("open_id", "o"), db::eq("status", std::int64_t{0})},
                       .values = {{"open_id", "o"}, {"device", "d"}}};
  for (const char* text :
       {"INSERT INTO t_account (open_id, device) SELECT ?, ? FROM DUAL WHERE NOT EXISTS "
        "(SELECT 1 FROM t_account WHERE open_id = ? AND status = 0)",
        "INSERT INTO t_account (open_id, device) SELECT ?, ? WHERE NOT EXISTS "
        "(SELECT * FROM t_account WHERE open_id = ? AND status = 0);",
        "insert into t_account (open_id, device) select ?, ? where not exists "
        "(select id, open_id from t_account where open_id = ? and status = 0)"}) {
    INFO(text);
    CHECK(describe(bound(text, {"o", "d", "o"})) == describe(want));
  }
  CHECK(error_of("INSERT INTO t (a, b) SELECT ? WHERE NOT EXISTS (SELECT 1 FROM t WHERE a = ?)").expected() ==
        "as many values as columns (2 columns, 1 value)");
  CHECK(error_of("INSERT INTO t (a) SELECT ? FROM t WHERE NOT EXISTS (SELECT 1 FROM t WHERE a = ?)").expected() == "DUAL");
  const Statement ignore = bound("INSERT IGNORE INTO t (a) SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM t WHERE a = 1)");
  CHECK(ignore.kind == Statement::Kind::insert_if_absent);
  CHECK(ignore.on_duplicate == OnDuplicate::ignore);
}

TEST_CASE("INSERT ... WHERE NOT EXISTS on another table is refused", "[sql]") {
  const sql::Error e = error_of("INSERT INTO t (a) SELECT ? WHERE NOT EXISTS (SELECT 1 FROM u WHERE a = ?)");
  CHECK(e.position() == 59);
  CHECK(e.expected() == "t (NOT EXISTS checks the table the INSERT writes)");
}

// --- UPDATE, DELETE, transactions --------------------------------------------------------------

TEST_CASE("UPDATE sets its assignments where its conditions hold", "[sql]") {
  const Statement s =
      bound("UPDATE t_fence SET token = ? WHERE lock_key = ? AND token < ?", {std::int64_t{5}, "k", std::int64_t{5}});
  CHECK(describe(s) == describe({.kind = Statement::Kind::update,
                                 .table = "t_fence",
                                 .where = {db::eq("lock_key", "k"), db::lt("token", std::int64_t{5})},
                                 .values = {{"token", std::int64_t{5}}}}));
  CHECK(bound("UPDATE t SET a = 1").where.empty());
  const Statement computed = bound("UPDATE t SET a = a + 1, b = a WHERE id = 1");
  REQUIRE(computed.more().assign.size() == 2);
  CHECK(computed.values.empty());
  CHECK(db::to_string(computed) == "UPDATE t SET a = a + 1, b = a WHERE id = 1");
}

TEST_CASE("DELETE removes the rows where its conditions hold", "[sql]") {
  const Statement s = bound("DELETE FROM t_lock WHERE lock_key = ? AND owner = ?", {"k", "me"});
  CHECK(describe(s) == describe({.kind = Statement::Kind::remove,
                                 .table = "t_lock",
                                 .where = {db::eq("lock_key", "k"), db::eq("owner", "me")}}));
  CHECK(bound("DELETE FROM t").kind == Statement::Kind::remove);
}

TEST_CASE("BEGIN and START TRANSACTION begin, COMMIT and ROLLBACK end, with or without WORK", "[sql]") {
  CHECK(bound("BEGIN").kind == Statement::Kind::begin);
  CHECK(bound("begin work;").kind == Statement::Kind::begin);
  CHECK(bound("START TRANSACTION").kind == Statement::Kind::begin);
  CHECK(bound("COMMIT").kind == Statement::Kind::commit);
  CHECK(bound("COMMIT WORK").kind == Statement::Kind::commit);
  CHECK(bound("ROLLBACK").kind == Statement::Kind::rollback);
  CHECK(bound("Rollback Work ;").kind == Statement::Kind::rollback);
  CHECK(error_of("START WORK").expected() == "TRANSACTION");
  CHECK(error_of("ROLLBACK TO SAVEPOINT a").expected() == "WORK or the end of the statement");
}

TEST_CASE("SET TRANSACTION sets the next transaction's isolation level, SET SESSION TRANSACTION the session's", "[sql]") {
  Statement s = bound("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
  CHECK(s.kind == Statement::Kind::set_isolation);
  CHECK(s.isolation == db::Isolation::read_committed);
  CHECK(s.next_transaction_only);
  s = bound("set session transaction isolation level repeatable read");
  CHECK(s.kind == Statement::Kind::set_isolation);
  CHECK(s.isolation == db::Isolation::repeatable_read);
  CHECK_FALSE(s.next_transaction_only);
}

TEST_CASE("all four isolation levels, a session's lock wait timeout and a consistent snapshot are stated", "[sql]") {
  CHECK(bound("SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED").isolation == db::Isolation::read_uncommitted);
  CHECK(bound("SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE").isolation == db::Isolation::serializable);
  const sql::Error e = error_of("SET SESSION TRANSACTION ISOLATION LEVEL SNAPSHOT");
  CHECK(e.position() == 40);
  CHECK(e.expected() == "READ UNCOMMITTED, READ COMMITTED, REPEATABLE READ or SERIALIZABLE");
  Statement s = bound("SET SESSION innodb_lock_wait_timeout = 1");
  CHECK(s.kind == Statement::Kind::set_lock_wait_timeout);
  CHECK(s.seconds == 1);
  CHECK(bound("SET @@session.innodb_lock_wait_timeout = 3").seconds == 3);
  CHECK(error_of("SET innodb_lock_wait_timeout = 0").expected() == "a number of seconds from 1 to 1073741824");
  CHECK(bound("START TRANSACTION WITH CONSISTENT SNAPSHOT").consistent_snapshot);
}

TEST_CASE("a multi-row INSERT and INSERT ... SET give their rows", "[sql]") {
  Statement s = bound("INSERT INTO test (id, value) VALUES (1, 10), (2, ?)", {std::int64_t{20}});
  CHECK(values_text(s.values) == "{id=1;value=10;}");
  REQUIRE(s.more().more_rows.size() == 1);
  CHECK(values_text(s.more().more_rows[0]) == "{id=2;value=20;}");
  CHECK(db::to_string(s) == "INSERT INTO test (id, value) VALUES (1, 10), (2, 20)");
  CHECK(error_of("INSERT INTO t (a) VALUES (1), (1, 2)").expected() == "as many values as columns (1 column, 2 values)");
  s = bound("INSERT INTO t SET a = 1, b = ?", {"x"});
  CHECK(values_text(s.values) == "{a=1;b='x';}");
}
