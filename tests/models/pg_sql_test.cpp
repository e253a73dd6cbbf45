// PostgreSQL's SQL text, parsed by PostgreSQL's own parser (libpg_query) into the database's
// typed statements (models/db/postgres/sql.hpp): every statement form the model runs, advisory
// locks, transactions and settings (tables, PostgreSQL's 42601 for what its parser rejects and
// 0A000 for what the model does not run: pg_sql_ddl_test.cpp).

#include <catch2/catch.hpp>

#include "pg_sql_support.hpp"

// --- SELECT ----------------------------------------------------------------------------------

TEST_CASE("pg: SELECT's column-op-value terms are conditions in order, value-op-column turned round, other terms filters",
          "[pg_sql]") {
  const Statement s = bound("SELECT id, t.open_id FROM t WHERE a = 1 AND b <> 'x' AND c != $1 AND 2 < d AND e <= -3 "
                            "AND 4 >= f AND (g = 1 OR g > $2) AND h IN (1, 2) AND k % 3 = 0",
                            {num(7), num(8)});
  CHECK(s.kind == Statement::Kind::select);
  CHECK(s.table == "t");
  CHECK(where_text(s) == "a = 1 AND b != 'x' AND c != 7 AND d > 2 AND e <= -3 AND f <= 4");
  CHECK(filters(s) == std::vector<std::string>{"g = 1 OR g > ?", "h IN (1, 2)", "k % 3 = 0"});
  CHECK(s.more().args == std::vector<Value>{num(8)});
  CHECK(s.lock == ReadLock::none);
  CHECK(pg::prepare("SELECT id, t.open_id FROM t").columns == std::vector<std::string>{"id", "open_id"});
}

TEST_CASE("pg: SELECT * has no column list, SELECT 1 keeps its number, count(*) counts into a column named count", "[pg_sql]") {
  sql::Prepared p = pg::prepare("SELECT * FROM t WHERE id = 1");
  CHECK(p.columns.empty());
  CHECK_FALSE(p.constant);
  CHECK(pg::prepare("SELECT t.* FROM t").columns.empty());
  p = pg::prepare("SELECT 1 FROM t WHERE id = 1");
  CHECK(p.constant == 1);
  CHECK(p.columns.empty());
  p = pg::prepare("SELECT count(*) FROM t WHERE k = 'a'");
  CHECK(p.statement.count_rows);
  CHECK(p.columns == std::vector<std::string>{"count"});
  CHECK(pg::prepare("SELECT COUNT(id) FROM t").statement.count_rows);
  CHECK(pg::prepare("SELECT count(*) AS n FROM t").columns == std::vector<std::string>{"n"});
  CHECK_FALSE(pg::prepare("SELECT id FROM t").statement.count_rows);
  p = pg::prepare("SELECT max(t.v) FROM t");  // max, min and sum of a column, named as PostgreSQL names them
  CHECK(p.statement.count_rows);
  CHECK(p.statement.more().aggregate == db::StatementExtra::Aggregate::max);
  CHECK(p.statement.more().aggregate_column == "v");
  CHECK(p.columns == std::vector<std::string>{"max"});
  CHECK(pg::prepare("SELECT sum(v) FROM t").columns == std::vector<std::string>{"sum"});
  CHECK(error_of("SELECT avg(v) FROM t").sqlstate() == "0A000");
  CHECK(error_of("SELECT max(DISTINCT v) FROM t").sqlstate() == "0A000");
}

TEST_CASE("pg: GROUP BY holds its columns, HAVING reads the aggregate by its name, and ORDER BY and LIMIT move to the groups",
          "[pg_sql]") {
  sql::Prepared p = pg::prepare("SELECT k, count(*) AS n FROM t WHERE v > $1 GROUP BY k HAVING count(*) > 1 ORDER BY count(*) DESC LIMIT 2");
  CHECK(p.columns == std::vector<std::string>{"k", "n"});
  CHECK(p.statement.more().group_by == std::vector<std::string>{"k"});
  CHECK(db::to_string(*p.statement.more().having) == "n > 1");
  CHECK(p.statement.more().group_order_by == std::vector<std::pair<std::string, bool>>{{"n", true}});
  CHECK(p.statement.more().group_limit == 2);
  CHECK(p.statement.more().order_by.empty());
  CHECK_FALSE(p.statement.limit);
  p = pg::prepare("SELECT k FROM t GROUP BY k HAVING sum(v) > 10");  // the aggregate in HAVING only
  CHECK(p.columns == std::vector<std::string>{"k"});
  CHECK(p.statement.more().aggregate == db::StatementExtra::Aggregate::sum);
  CHECK(db::to_string(*p.statement.more().having) == "sum > 10");
  pg::Error e = error_of("SELECT v, count(*) FROM t GROUP BY k");
  CHECK(e.sqlstate() == "42803");
  CHECK(e.message() == "column \"t.v\" must appear in the GROUP BY clause or be used in an aggregate function");
  CHECK(error_of("SELECT k, count(*) FROM t").sqlstate() == "42803");
  e = error_of("SELECT k, count(*) AS n FROM t GROUP BY k HAVING n > 1");  // HAVING sees no alias
  CHECK(e.sqlstate() == "42703");
  CHECK(e.message() == "column \"n\" does not exist");
  CHECK(e.position() == 49);
  e = error_of("SELECT k, count(*) FROM t GROUP BY k FOR UPDATE");  // PostgreSQL's own refusal
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.message() == "FOR UPDATE is not allowed with GROUP BY clause");
}

TEST_CASE("pg: a table's alias qualifies its columns and is left out, another table's name is PostgreSQL's 42P01", "[pg_sql]") {
  const sql::Prepared p = pg::prepare("SELECT x.a FROM t AS x WHERE x.b = 1 ORDER BY x.a");
  CHECK(p.columns == std::vector<std::string>{"a"});
  CHECK(p.statement.where.at(0).column == "b");
  CHECK(p.statement.more().order_by == std::vector<std::pair<std::string, bool>>{{"a", false}});
  const pg::Error e = error_of("SELECT * FROM t WHERE u.a = 1");
  CHECK(e.sqlstate() == "42P01");
  CHECK(e.position() == 22);
  CHECK(std::string(e.what()) == "42P01 missing FROM-clause entry for table \"u\" at position 22");
  CHECK(error_of("SELECT t.a FROM t x").sqlstate() == "42P01");  // aliased, the table is named by its alias
}

TEST_CASE("pg: ORDER BY, LIMIT and OFFSET are parsed, a negative count is PostgreSQL's 2201W / 2201X", "[pg_sql]") {
  const Statement s = bound("SELECT * FROM t ORDER BY a DESC, b ASC, c NULLS LAST LIMIT 3 OFFSET 2");
  CHECK(s.more().order_by == std::vector<std::pair<std::string, bool>>{{"a", true}, {"b", false}, {"c", false}});
  CHECK(s.limit == 3);
  CHECK(s.offset == 2);
  CHECK(bound("SELECT * FROM t FETCH FIRST 5 ROWS ONLY").limit == 5);
  CHECK_FALSE(bound("SELECT * FROM t LIMIT ALL").limit);
  CHECK(error_of("SELECT * FROM t LIMIT -1").sqlstate() == "2201W");
  CHECK(error_of("SELECT * FROM t OFFSET -1").sqlstate() == "2201X");
  CHECK(refused("SELECT * FROM t LIMIT $1") == "a LIMIT other than a number");
  CHECK(refused("SELECT * FROM t ORDER BY 1") == "ORDER BY an expression or a position");
}

TEST_CASE("pg: the four locking clauses, NOWAIT and SKIP LOCKED map to ReadLock and OnLocked", "[pg_sql]") {
  Statement s = bound("SELECT * FROM t WHERE k = $1 FOR NO KEY UPDATE SKIP LOCKED", {Value{"a"}});
  CHECK(s.lock == ReadLock::no_key_update);
  CHECK(s.on_locked == Statement::OnLocked::skip);
  s = bound("SELECT * FROM t FOR UPDATE NOWAIT");
  CHECK(s.lock == ReadLock::update);
  CHECK(s.on_locked == Statement::OnLocked::fail);
  s = bound("SELECT * FROM t FOR SHARE");
  CHECK(s.lock == ReadLock::share);
  CHECK(s.on_locked == Statement::OnLocked::wait);
  CHECK(bound("SELECT * FROM t FOR KEY SHARE").lock == ReadLock::key_share);
  CHECK(refused("SELECT * FROM t FOR UPDATE FOR SHARE") == "several locking clauses");
  CHECK(refused("SELECT * FROM t FOR UPDATE OF t") == "a locking clause with OF");
  const pg::Error e = error_of("SELECT count(*) FROM t FOR SHARE");  // PostgreSQL's own refusal
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.message() == "FOR SHARE is not allowed with aggregate functions");
}

TEST_CASE("pg: SELECT DISTINCT and GROUP BY without an aggregate group by their columns, ORDER BY outside DISTINCT's list is 42P10, "
          "FOR UPDATE with it 0A000",
          "[pg_sql][group]") {
  const sql::Prepared p = pg::prepare("SELECT DISTINCT a, b FROM t ORDER BY b DESC LIMIT 2");
  CHECK(p.statement.count_rows);
  CHECK(p.statement.more().aggregate == db::StatementExtra::Aggregate::none);
  CHECK(p.statement.more().group_by == std::vector<std::string>{"a", "b"});
  CHECK(p.statement.more().group_order_by.size() == 1);
  CHECK(p.statement.more().group_limit == 2);
  CHECK(p.columns == std::vector<std::string>{"a", "b"});
  const sql::Prepared grouped = pg::prepare("SELECT a FROM t GROUP BY a");
  CHECK(grouped.statement.count_rows);
  CHECK(grouped.statement.more().aggregate == db::StatementExtra::Aggregate::none);
  CHECK(pg::prepare("SELECT DISTINCT count(*) FROM t").statement.more().group_by.empty());
  CHECK(error_of("SELECT DISTINCT a FROM t ORDER BY b").sqlstate() == "42P10");
  const pg::Error e = error_of("SELECT DISTINCT a FROM t FOR UPDATE");
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.message() == "FOR UPDATE is not allowed with DISTINCT clause");
}

TEST_CASE("pg: a select list's expressions and aliased columns are computed columns, named as PostgreSQL names them", "[pg_sql]") {
  const sql::Prepared computed = pg::prepare("SELECT id, a + 1, b AS name, coalesce(c, 0) FROM t");
  CHECK(computed.columns == std::vector<std::string>{"id", "?column?", "name", "coalesce"});
  CHECK(computed.statement.more().computed.size() == 3);
  CHECK(refused("SELECT a + 1, count(*) FROM t") == "a computed column beside an aggregate, GROUP BY or DISTINCT");
  CHECK(refused("SELECT a + 1 AS n FROM t ORDER BY n") == "ORDER BY a computed column");
}

TEST_CASE("pg: a SELECT without FROM is one row of its expressions, named as PostgreSQL names them, a column there is 42703",
          "[pg_sql]") {
  const sql::Prepared p = pg::prepare("SELECT 1 + $1, coalesce(NULL, 2), '7'::bigint, 3 AS n");
  CHECK(p.statement.table.empty());
  CHECK(p.statement.more().computed.size() == 4);
  CHECK(p.columns == std::vector<std::string>{"?column?", "coalesce", "int8", "n"});
  CHECK(error_of("SELECT a").sqlstate() == "42703");
}

TEST_CASE("pg: a query over more than one table, a subquery, WITH, DISTINCT ON or UNION is 0A000", "[pg_sql]") {
  CHECK(refused("SELECT * FROM t JOIN u ON t.id = u.id") == "a join");
  CHECK(refused("SELECT * FROM t, u") == "a join");
  CHECK(refused("SELECT * FROM t WHERE a IN (SELECT a FROM u)") == "a subquery");
  CHECK(refused("SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u)") == "a subquery");
  CHECK(refused("SELECT * FROM (SELECT 1) s") == "a subquery in FROM");
  CHECK(refused("WITH x AS (SELECT 1) SELECT * FROM t") == "WITH");
  CHECK(refused("SELECT DISTINCT ON (a) a, b FROM t") == "DISTINCT ON");
  CHECK(refused("SELECT DISTINCT a FROM t GROUP BY a") == "DISTINCT with GROUP BY");
  CHECK(refused("SELECT DISTINCT * FROM t") == "SELECT DISTINCT * or DISTINCT of a constant");
  CHECK(refused("SELECT a, count(*) FROM t GROUP BY a + 1") == "GROUP BY other than columns");
  CHECK(refused("SELECT a, count(*), max(b) FROM t GROUP BY a") == "a second aggregate (a statement has one)");
  CHECK(refused("SELECT a FROM t UNION SELECT a FROM u") == "UNION, INTERSECT or EXCEPT");
  CHECK(refused("SELECT 1 WHERE true") == "WHERE, GROUP BY, ORDER BY, LIMIT, DISTINCT or a locking clause in a SELECT without FROM");
  CHECK(refused("SELECT 1 AS n, 2 AS n") == "two columns named n (give one an alias)");
  CHECK(refused("SELECT lower(a) FROM t") == "a function call lower()");
  CHECK(refused("SELECT a, * FROM t") == "* beside other columns");
}

// --- Expressions -----------------------------------------------------------------------------

TEST_CASE("pg: expressions map onto the model's Expr as the MariaDB front end builds them", "[pg_sql]") {
  const auto filter = [](const std::string& where) {
    const Statement s = bound("SELECT * FROM t WHERE " + where);
    REQUIRE(s.more().filter.size() == 1);
    return db::to_string(s.more().filter[0]);
  };
  CHECK(filter("a = 1 OR b = 2 AND c = 3") == "a = 1 OR b = 2 AND c = 3");
  CHECK(filter("NOT a = 1 OR b") == "NOT a = 1 OR b");
  CHECK(filter("a + 2 * 3 - -b = 1") == "a + 2 * 3 - -b = 1");
  CHECK(filter("a / 2 % 3 = 1") == "a DIV 2 % 3 = 1");  // integer division
  CHECK(filter("a NOT BETWEEN 1 AND 5") == "a NOT BETWEEN 1 AND 5");
  CHECK(filter("a BETWEEN 1 AND 5") == "a BETWEEN 1 AND 5");
  CHECK(filter("a NOT IN (1, 'x')") == "a NOT IN (1, 'x')");
  CHECK(filter("k NOT LIKE 'a%'") == "k NOT LIKE 'a%'");
  CHECK(filter("k LIKE 'a%'") == "k LIKE 'a%'");
  CHECK(filter("k IS NOT NULL") == "k IS NOT NULL");
  CHECK(filter("k IS NULL") == "k IS NULL");
  CHECK(filter("a - (b - c) = 1") == "a - (b - c) = 1");
  CHECK(filter("a = NULL") == "a = NULL");
  CHECK(filter("a::text = '1'::int + 1") == "a = 1 + 1");  // a literal cast to an integer type is folded
  // The same text, MariaDB's `?` for PostgreSQL's `$n`, gives the same filters and conditions.
  const std::string where = "a = 1 AND (b = 2 OR b > ?) AND c IN (1, 2) AND d % 3 = 0 AND e <= 'x' AND NOT (f < 2 OR -g >= 1)";
  std::string numbered = where;
  numbered.replace(numbered.find('?'), 1, "$1");
  const Statement mysql = sql::bind(sql::prepare("SELECT * FROM t WHERE " + where), {num(7)});
  const Statement postgres = bound("SELECT * FROM t WHERE " + numbered, {num(7)});
  CHECK(filters(postgres) == filters(mysql));
  CHECK(where_text(postgres) == where_text(mysql));
  REQUIRE(postgres.more().filter.size() == mysql.more().filter.size());
  for (std::size_t i = 0; i < mysql.more().filter.size(); ++i) CHECK(postgres.more().filter[i].height == mysql.more().filter[i].height);
}

TEST_CASE("pg: an expression past 32 levels is 0A000, as the MariaDB front end bounds it", "[pg_sql]") {
  std::string sum = "a";
  for (int i = 0; i < 40; ++i) sum += " + 1";
  CHECK(refused("SELECT * FROM t WHERE " + sum + " = 1") == "an expression more than 32 levels deep");
  std::string ok = "a";
  for (int i = 0; i < 30; ++i) ok += " + 1";
  CHECK(bound("SELECT * FROM t WHERE " + ok + " = 1").more().filter.at(0).height == 32);
  std::string ands = "a = 1";
  for (int i = 0; i < 400; ++i) ands += " AND b > 1 OR c = 2";
  CHECK_NOTHROW(pg::prepare("SELECT * FROM t WHERE " + ands));  // a long chain stays one level deep
}

TEST_CASE("pg: functions, CASE, ILIKE, ANY, IS DISTINCT FROM and other constructs are 0A000 naming them", "[pg_sql]") {
  CHECK(refused("SELECT * FROM t WHERE lower(a) = 'x'") == "a function call lower()");
  // The clock, outside the one form the model reads it in, names that form.
  CHECK(refused("SELECT * FROM t WHERE a = now()").starts_with("now() outside extract(epoch from now())::bigint"));
  CHECK(refused("SELECT * FROM t WHERE CASE WHEN a THEN 1 END = 1") == "CASE");
  CHECK(refused("SELECT * FROM t WHERE a ILIKE 'x'") == "ILIKE");
  CHECK(refused("SELECT * FROM t WHERE a LIKE 'x' ESCAPE '!'") == "LIKE ... ESCAPE");
  CHECK(refused("SELECT * FROM t WHERE a = ANY($1)") == "= ANY (...)");
  CHECK(refused("SELECT * FROM t WHERE a = GREATEST(b, 1)") == "GREATEST or LEAST");
  CHECK(refused("SELECT * FROM t WHERE a IS DISTINCT FROM 1") == "IS [NOT] DISTINCT FROM");
  CHECK(refused("SELECT * FROM t WHERE a || 'x' = 'y'") == "the operator ||");
  CHECK(refused("SELECT * FROM t WHERE a = CURRENT_TIMESTAMP").starts_with("CURRENT_TIMESTAMP outside extract(epoch from"));
  CHECK(refused("SELECT * FROM t WHERE a = CURRENT_USER") == "CURRENT_TIMESTAMP, CURRENT_USER and the like");
  const pg::Error e = error_of("SELECT * FROM t WHERE a = 1 AND foo(b) = 2");
  CHECK(e.position() == 32);
  CHECK(std::string(e.what()) == "0A000 a function call foo() is not modelled (docs/sql.md, PostgreSQL) at position 32");
}

// --- Literals and parameters -------------------------------------------------------------------

TEST_CASE("pg: literals are integers (BIGINT's range), strings and true/false as 1/0, a decimal is 0A000", "[pg_sql]") {
  const Statement s = bound("SELECT * FROM t WHERE a = 'it''s' AND b = E'a\\nb' AND c = -42 AND d = 9223372036854775807 "
                            "AND e = -9223372036854775808 AND f = true AND g = FALSE AND h = ''");
  REQUIRE(s.where.size() == 8);
  CHECK(s.where[0].value == Value{"it's"});
  CHECK(s.where[1].value == Value{"a\nb"});
  CHECK(s.where[2].value == num(-42));
  CHECK(s.where[3].value == num(std::numeric_limits<std::int64_t>::max()));
  CHECK(s.where[4].value == num(std::numeric_limits<std::int64_t>::min()));
  CHECK(s.where[5].value == num(1));
  CHECK(s.where[6].value == num(0));
  CHECK(s.where[7].value == Value{""});
  CHECK(refused("SELECT * FROM t WHERE a = 1.5") == "a decimal number (1.5)");
  CHECK(refused("SELECT * FROM t WHERE a = 9223372036854775808") == "a number past BIGINT's range (9223372036854775808)");
  CHECK(refused("SELECT * FROM t WHERE a = B'101'") == "a bit string");
}

TEST_CASE("pg: $n parameters bind in their numbers' order, wherever they are in the text", "[pg_sql]") {
  const sql::Prepared p = pg::prepare("UPDATE t SET b = $3, a = $1 WHERE k = $4 AND v = $2");
  REQUIRE(p.params.size() == 4);
  CHECK(p.params[0].in == In::values);
  CHECK(p.params[0].column == "a");
  CHECK(p.params[2].column == "b");
  CHECK(p.params[1].in == In::where);
  CHECK(p.params[1].where_index == 1);
  CHECK(p.params[3].where_index == 0);
  const Statement s = sql::bind(p, {num(1), num(7), Value{"B"}, Value{"key"}});
  CHECK(s.values == db::Values{{"a", num(1)}, {"b", Value{"B"}}});
  CHECK(where_text(s) == "k = 'key' AND v = 7");
  // $2 before $1: the first argument is $1's.
  const Statement swapped = bound("SELECT * FROM t WHERE a = $2 AND b = $1", {Value{"one"}, Value{"two"}});
  CHECK(where_text(swapped) == "a = 'two' AND b = 'one'");
}

TEST_CASE("pg: a $n inside an expression is an args slot of the filter or assignment", "[pg_sql]") {
  const sql::Prepared p = pg::prepare("SELECT * FROM t WHERE a + $2 > 3 AND b = $1");
  REQUIRE(p.params.size() == 2);
  CHECK(p.params[1].in == In::args);
  CHECK(p.params[1].arg == 0);
  CHECK(p.params[0].in == In::where);
  const db::Expr& filter = p.statement.more().filter.at(0);
  CHECK(filter.args.at(0).args.at(1).kind == db::Expr::Kind::param);
  CHECK(filter.args.at(0).args.at(1).param == 0);
  const Statement s = sql::bind(p, {Value{"x"}, num(9)});
  CHECK(s.more().args == std::vector<Value>{num(9)});
  CHECK(db::to_string(s) == "SELECT * FROM t WHERE b = 'x' AND a + 9 > 3");
}

TEST_CASE("pg: a $n used twice is 0A000, $0 is 42P02 and a number left unused 42P18", "[pg_sql]") {
  CHECK(refused("SELECT * FROM t WHERE a = $1 AND b = $1") == "a parameter used twice ($1)");
  CHECK(error_of("SELECT * FROM t WHERE a = $1 AND b = $1").position() == 37);
  CHECK(error_of("SELECT * FROM t WHERE a = $0").sqlstate() == "42P02");
  const pg::Error gap = error_of("SELECT * FROM t WHERE a = $1 AND b = $3");
  CHECK(gap.sqlstate() == "42P18");
  CHECK(gap.message() == "could not determine data type of parameter $2");
  CHECK(refused("SELECT * FROM t WHERE a = $1001") == "more than 1000 parameters in a statement");
}

TEST_CASE("pg: bind with the wrong number of arguments is a usage error, a CREATE TABLE does not bind", "[pg_sql]") {
  const sql::Prepared p = pg::prepare("SELECT * FROM t WHERE k = $1");
  CHECK_THROWS_AS(sql::bind(p, {}), sim::UsageError);
  CHECK_THROWS_AS(sql::bind(pg::prepare("CREATE TABLE t (id serial PRIMARY KEY)"), {}), sim::UsageError);
}

// --- INSERT ----------------------------------------------------------------------------------------

TEST_CASE("pg: INSERT gives its first row in values and the rest in more_rows, DEFAULT leaves a column out", "[pg_sql]") {
  const sql::Prepared p = pg::prepare("INSERT INTO t (a, b) VALUES (1, DEFAULT), ($1, -3), (2 * 3, 'x'::text), (true, false)");
  CHECK(p.statement.kind == Statement::Kind::insert);
  CHECK(p.statement.on_duplicate == OnDuplicate::error);
  REQUIRE(p.params.size() == 1);
  CHECK(p.params[0].in == In::values);
  CHECK(p.params[0].column == "a");
  CHECK(p.params[0].row == 1);
  const Statement s = sql::bind(p, {Value{"k"}});
  CHECK(s.values == db::Values{{"a", num(1)}});
  CHECK(s.more().more_rows ==
        std::vector<db::Values>{{{"a", Value{"k"}}, {"b", num(-3)}}, {{"a", num(6)}, {"b", Value{"x"}}}, {{"a", num(1)}, {"b", num(0)}}});
}

TEST_CASE("pg: INSERT without a column list, INSERT ... SELECT and DEFAULT VALUES are 0A000, NULL is a value", "[pg_sql]") {
  CHECK(refused("INSERT INTO t VALUES (1, 2)") == "INSERT without a column list");
  CHECK(refused("INSERT INTO t (a) SELECT a FROM u") == "INSERT ... SELECT");
  CHECK(refused("INSERT INTO t DEFAULT VALUES") == "INSERT ... DEFAULT VALUES");
  CHECK(db::is_null(bound("INSERT INTO t (a, b) VALUES (1, NULL)").values.at("b")));
  CHECK(db::is_null(bound("INSERT INTO t (a) VALUES (1 + NULL)").values.at("a")));
  CHECK(refused("INSERT INTO t (a) VALUES (-$1)") == "a parameter inside a computed value");
  CHECK(error_of("INSERT INTO t (a) VALUES (b)").sqlstate() == "42703");
  CHECK(error_of("INSERT INTO t (a) VALUES (9223372036854775807 + 1)").sqlstate() == "22003");
}

TEST_CASE("pg: an INSERT's columns and values must match, each column once, as PostgreSQL checks them", "[pg_sql]") {
  pg::Error e = error_of("INSERT INTO t (a) VALUES (1, 2)");
  CHECK(e.sqlstate() == "42601");
  CHECK(e.message() == "INSERT has more expressions than target columns");
  CHECK(e.position() == 29);
  e = error_of("INSERT INTO t (a, b) VALUES (1)");
  CHECK(e.message() == "INSERT has more target columns than expressions");
  e = error_of("INSERT INTO t (a, a) VALUES (1, 2)");
  CHECK(e.sqlstate() == "42701");
  CHECK(e.message() == "column \"a\" specified more than once");
}

TEST_CASE("pg: ON CONFLICT DO NOTHING ignores the duplicate, its target is conflict_target", "[pg_sql]") {
  Statement s = bound("INSERT INTO t (k) VALUES ($1) ON CONFLICT DO NOTHING", {Value{"a"}});
  CHECK(s.on_duplicate == OnDuplicate::ignore);
  CHECK(s.more().conflict_target.empty());
  s = bound("INSERT INTO t (k) VALUES ('a') ON CONFLICT (k) DO NOTHING");
  CHECK(s.on_duplicate == OnDuplicate::ignore);
  CHECK(s.more().conflict_target == std::vector<std::string>{"k"});
  CHECK(refused("INSERT INTO t (k) VALUES (1) ON CONFLICT ON CONSTRAINT t_k_key DO NOTHING") == "ON CONFLICT ON CONSTRAINT");
}

TEST_CASE("pg: ON CONFLICT DO UPDATE assigns from EXCLUDED and the row, under its WHERE", "[pg_sql]") {
  const Statement s = bound("INSERT INTO t (k, v) VALUES ('a', 1) ON CONFLICT (k) DO UPDATE SET v = excluded.v + t.v WHERE t.v < 10");
  CHECK(s.on_duplicate == OnDuplicate::update);
  CHECK(s.on_update.empty());
  CHECK(s.more().conflict_target == std::vector<std::string>{"k"});
  REQUIRE(s.more().assign.size() == 1);
  const auto& [column, e] = s.more().assign[0];
  CHECK(column == "v");
  CHECK(e.kind == db::Expr::Kind::arith);
  CHECK(e.args.at(0).kind == db::Expr::Kind::inserted);
  CHECK(e.args.at(0).column == "v");
  CHECK(e.args.at(1).kind == db::Expr::Kind::column);
  CHECK(e.args.at(1).column == "v");
  REQUIRE(s.more().conflict_where);
  CHECK(db::to_string(*s.more().conflict_where) == "v < 10");
  // Literals and $n go to assign as well; EXCLUDED inside the WHERE is the proposed row.
  const sql::Prepared p = pg::prepare(
      "INSERT INTO t AS x (k) VALUES ($2) ON CONFLICT (k) DO UPDATE SET n = $1, m = 0 WHERE x.v < EXCLUDED.v");
  CHECK(p.params[0].in == In::args);
  CHECK(p.params[1].in == In::values);
  const Statement b = sql::bind(p, {num(5), Value{"key"}});
  CHECK(assignments(b) == "n = ?, m = 0");
  CHECK(b.more().args == std::vector<Value>{num(5)});
  CHECK(db::to_string(*b.more().conflict_where) == "v < VALUES(v)");
  CHECK(error_of("INSERT INTO t (k) VALUES (1) ON CONFLICT DO UPDATE SET v = 1").sqlstate() == "42601");
  CHECK(error_of("INSERT INTO t (k) VALUES (1) ON CONFLICT (k) DO UPDATE SET v = 1, v = 2").sqlstate() == "42601");
  CHECK(error_of("SELECT * FROM t WHERE excluded.v = 1").sqlstate() == "42P01");  // EXCLUDED is DO UPDATE's
}

TEST_CASE("pg: RETURNING lists its columns, or * for all", "[pg_sql]") {
  CHECK(bound("INSERT INTO t (k) VALUES (1) RETURNING id, t.k").more().returning == std::vector<std::string>{"id", "k"});
  CHECK(bound("INSERT INTO t (k) VALUES (1) RETURNING *").more().returning == std::vector<std::string>{"*"});
  CHECK(bound("UPDATE t SET v = 1 RETURNING v").more().returning == std::vector<std::string>{"v"});
  CHECK(bound("DELETE FROM t WHERE id = 1 RETURNING *").more().returning == std::vector<std::string>{"*"});
  CHECK(bound("DELETE FROM t").more().returning.empty());
  CHECK(refused("DELETE FROM t RETURNING id + 1") == "RETURNING an expression");
  CHECK(refused("DELETE FROM t RETURNING id AS x") == "a RETURNING alias (AS x)");
}

// --- UPDATE, DELETE ------------------------------------------------------------------------------

TEST_CASE("pg: UPDATE of literals and $n sets values, one computed value puts every assignment in assign", "[pg_sql]") {
  Statement s = bound("UPDATE t SET a = 1, b = $1 WHERE id = $2", {Value{"x"}, num(3)});
  CHECK(s.kind == Statement::Kind::update);
  CHECK(s.values == db::Values{{"a", num(1)}, {"b", Value{"x"}}});
  CHECK(s.more().assign.empty());
  CHECK(where_text(s) == "id = 3");
  s = bound("UPDATE stock SET n = n - $1, m = 2 WHERE id = $2 AND n >= $3", {num(1), num(7), num(1)});
  CHECK(s.values.empty());
  CHECK(assignments(s) == "n = n - ?, m = 2");
  CHECK(s.more().args == std::vector<Value>{num(1)});
  CHECK(where_text(s) == "id = 7 AND n >= 1");
  // As the MariaDB front end has it: NULL assigned is computed (running it is the model's error).
  CHECK(assignments(bound("UPDATE t SET a = NULL")) == "a = NULL");
}

TEST_CASE("pg: UPDATE ... FROM, DELETE ... USING, WHERE CURRENT OF and SET c = DEFAULT are 0A000", "[pg_sql]") {
  CHECK(refused("UPDATE t SET a = 1 FROM u WHERE t.id = u.id") == "UPDATE ... FROM");
  CHECK(refused("DELETE FROM t USING u WHERE t.id = u.id") == "DELETE ... USING");
  CHECK(refused("DELETE FROM t WHERE CURRENT OF c") == "WHERE CURRENT OF");
  CHECK(refused("UPDATE t SET a = DEFAULT") == "SET c = DEFAULT");
  CHECK(refused("UPDATE t SET (a, b) = (1, 2)") == "a multi-column assignment (a, b) = (...)");
  CHECK(error_of("UPDATE t SET a = 1, a = 2").message() == "multiple assignments to same column \"a\"");
}

TEST_CASE("pg: DELETE removes where its conditions hold", "[pg_sql]") {
  const Statement s = bound("DELETE FROM t WHERE k = $1 AND v > 2", {Value{"a"}});
  CHECK(s.kind == Statement::Kind::remove);
  CHECK(s.table == "t");
  CHECK(where_text(s) == "k = 'a' AND v > 2");
}

// --- Advisory locks ------------------------------------------------------------------------------

TEST_CASE("pg: each advisory-lock function maps to its op, xact and shared, its name the result's column", "[pg_sql]") {
  using Op = db::Advisory::Op;
  const std::vector<std::pair<std::string, db::Advisory>> functions = {
      {"pg_advisory_lock", {Op::lock, false, false}},
      {"pg_advisory_lock_shared", {Op::lock, false, true}},
      {"pg_advisory_xact_lock", {Op::lock, true, false}},
      {"pg_advisory_xact_lock_shared", {Op::lock, true, true}},
      {"pg_try_advisory_lock", {Op::try_lock, false, false}},
      {"pg_try_advisory_lock_shared", {Op::try_lock, false, true}},
      {"pg_try_advisory_xact_lock", {Op::try_lock, true, false}},
      {"pg_try_advisory_xact_lock_shared", {Op::try_lock, true, true}},
      {"pg_advisory_unlock", {Op::unlock, false, false}},
      {"pg_advisory_unlock_shared", {Op::unlock, false, true}},
  };
  for (const auto& [name, advisory] : functions) {
    INFO(name);
    const sql::Prepared p = pg::prepare("SELECT " + name + "(42)");
    CHECK(p.statement.kind == Statement::Kind::advisory);
    CHECK(p.statement.advisory == advisory);
    CHECK(p.statement.values == db::Values{{"key", num(42)}});
    CHECK(p.columns == std::vector<std::string>{name});
  }
  const sql::Prepared all = pg::prepare("SELECT pg_advisory_unlock_all()");
  CHECK(all.statement.advisory == db::Advisory{Op::unlock_all, false, false});
  CHECK(all.statement.values.empty());
}

TEST_CASE("pg: an advisory key is a literal or a $n bound to values[\"key\"], the two-key form is 0A000", "[pg_sql]") {
  const sql::Prepared p = pg::prepare("SELECT pg_try_advisory_xact_lock($1::bigint) AS locked");
  REQUIRE(p.params.size() == 1);
  CHECK(p.params[0].in == In::values);
  CHECK(p.params[0].column == "key");
  CHECK(p.params[0].row == 0);
  CHECK(p.columns == std::vector<std::string>{"locked"});
  CHECK(sql::bind(p, {num(-7)}).values == db::Values{{"key", num(-7)}});
  CHECK(bound("SELECT pg_advisory_lock(-9223372036854775808)").values.at("key") == num(std::numeric_limits<std::int64_t>::min()));
  CHECK(refused("SELECT pg_advisory_lock(1, 2)") == "the two-key form pg_advisory_lock(int, int)");
  CHECK(refused("SELECT pg_advisory_lock(hashtext('k'))") == "a function call hashtext()");
  CHECK(refused("SELECT pg_advisory_lock(id) FROM t") == "an advisory-lock function with FROM, WHERE or other clauses");
}

// --- Transactions and settings ---------------------------------------------------------------------

TEST_CASE("pg: BEGIN and START TRANSACTION begin, naming a level when they give one, COMMIT, END, ROLLBACK, ABORT end",
          "[pg_sql]") {
  Statement s = bound("BEGIN");
  CHECK(s.kind == Statement::Kind::begin);
  CHECK_FALSE(s.next_transaction_only);
  s = bound("START TRANSACTION ISOLATION LEVEL SERIALIZABLE");
  CHECK(s.kind == Statement::Kind::begin);
  CHECK(s.isolation == db::Isolation::serializable);
  CHECK(s.next_transaction_only);
  s = bound("BEGIN ISOLATION LEVEL READ COMMITTED, READ WRITE, NOT DEFERRABLE");
  CHECK(s.isolation == db::Isolation::read_committed);
  CHECK(bound("COMMIT").kind == Statement::Kind::commit);
  CHECK(bound("END").kind == Statement::Kind::commit);
  CHECK(bound("ROLLBACK").kind == Statement::Kind::rollback);
  CHECK(bound("ABORT").kind == Statement::Kind::rollback);
  CHECK(refused("BEGIN READ ONLY") == "READ ONLY");
  CHECK(refused("BEGIN ISOLATION LEVEL SERIALIZABLE, READ ONLY, DEFERRABLE") == "READ ONLY");
  CHECK(refused("BEGIN DEFERRABLE") == "DEFERRABLE");
  CHECK(refused("COMMIT AND CHAIN") == "COMMIT AND CHAIN");
}

TEST_CASE("pg: SAVEPOINT, RELEASE [SAVEPOINT] and ROLLBACK TO [SAVEPOINT] name their savepoint, PREPARE TRANSACTION is 0A000",
          "[pg_sql]") {
  using Op = db::Savepoint::Op;
  const Statement set = bound("SAVEPOINT before_insert");
  CHECK(set.kind == Statement::Kind::savepoint);
  CHECK(set.savepoint == db::Savepoint{Op::set, "before_insert"});
  CHECK(bound("RELEASE SAVEPOINT a").savepoint == db::Savepoint{Op::release, "a"});
  CHECK(bound("RELEASE a").savepoint == db::Savepoint{Op::release, "a"});
  CHECK(bound("ROLLBACK TO SAVEPOINT a").savepoint == db::Savepoint{Op::rollback_to, "a"});
  CHECK(bound("ROLLBACK TO a").savepoint == db::Savepoint{Op::rollback_to, "a"});
  CHECK(db::to_string(bound("ROLLBACK TO a")) == "ROLLBACK TO SAVEPOINT a");
  CHECK(refused("PREPARE TRANSACTION 'x'") == "PREPARE TRANSACTION");
  CHECK(std::string(error_of("PREPARE TRANSACTION 'x'").what()) ==
        "0A000 PREPARE TRANSACTION is not modelled (docs/sql.md, PostgreSQL) at position 0");
}

TEST_CASE("pg: SET TRANSACTION sets the next transaction's level, SET SESSION CHARACTERISTICS and "
          "default_transaction_isolation the session's",
          "[pg_sql]") {
  Statement s = bound("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
  CHECK(s.kind == Statement::Kind::set_isolation);
  CHECK(s.isolation == db::Isolation::repeatable_read);
  CHECK(s.next_transaction_only);
  s = bound("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ UNCOMMITTED");
  CHECK(s.kind == Statement::Kind::set_isolation);
  CHECK(s.isolation == db::Isolation::read_uncommitted);
  CHECK_FALSE(s.next_transaction_only);
  s = bound("SET default_transaction_isolation = 'Serializable'");
  CHECK(s.isolation == db::Isolation::serializable);
  CHECK_FALSE(s.next_transaction_only);
  CHECK(bound("SET default_transaction_isolation TO 'read committed'").isolation == db::Isolation::read_committed);
  const pg::Error e = error_of("SET default_transaction_isolation = 'bogus'");
  CHECK(e.sqlstate() == "22023");
  CHECK(e.message() == "invalid value for parameter \"default_transaction_isolation\": \"bogus\"");
}

TEST_CASE("pg: SET lock_timeout, statement_timeout and deadlock_timeout read PostgreSQL's units into milliseconds",
          "[pg_sql]") {
  const auto ms = [](const std::string& text) {
    const Statement s = bound(text);
    CHECK(s.kind == Statement::Kind::set_timeout);
    return s.milliseconds;
  };
  CHECK(ms("SET lock_timeout = 100") == 100);
  CHECK(ms("SET lock_timeout TO '100'") == 100);
  CHECK(ms("SET lock_timeout = '10s'") == 10000);
  CHECK(ms("SET lock_timeout = '100ms'") == 100);
  CHECK(ms("SET statement_timeout = '1min'") == 60000);
  CHECK(ms("SET statement_timeout = '2 h'") == 7200000);
  CHECK(ms("SET statement_timeout = '1d'") == 86400000);
  CHECK(ms("SET deadlock_timeout = '2 s'") == 2000);
  CHECK(ms("SET lock_timeout = '1500us'") == 2);
  CHECK(ms("SET lock_timeout = '1.5s'") == 1500);
  CHECK(ms("SET lock_timeout = 0") == 0);
  CHECK(bound("SET SESSION statement_timeout = 5").setting == "statement_timeout");
  CHECK(bound("SET deadlock_timeout = 5").setting == "deadlock_timeout");
  pg::Error e = error_of("SET lock_timeout = '10x'");
  CHECK(e.sqlstate() == "22023");
  CHECK(e.message() == "invalid value for parameter \"lock_timeout\": \"10x\"");
  CHECK(error_of("SET lock_timeout = '10 S'").sqlstate() == "22023");  // units are case-sensitive
  CHECK(error_of("SET lock_timeout = -1").sqlstate() == "22023");
  CHECK(error_of("SET deadlock_timeout = 0").sqlstate() == "22023");
  CHECK(error_of("SET statement_timeout = '30d'").sqlstate() == "22023");  // past INT_MAX milliseconds
}

TEST_CASE("pg: SET LOCAL, RESET, SET ... TO DEFAULT and other settings are 0A000", "[pg_sql]") {
  CHECK(refused("SET LOCAL lock_timeout = 1") == "SET LOCAL");
  CHECK(refused("RESET lock_timeout") == "RESET");
  CHECK(refused("SET lock_timeout TO DEFAULT") == "SET lock_timeout TO DEFAULT");
  CHECK(refused("SET work_mem = '4MB'") == "SET work_mem");
  CHECK(refused("SET TRANSACTION READ WRITE") == "SET TRANSACTION without ISOLATION LEVEL");
}
