// PostgreSQL's table definitions parsed by libpg_query into the database's schemas
// (models/db/postgres/sql.hpp): CREATE TABLE and CREATE INDEX, errors and bounds, statements as
// written, and that no text crashes the parser.

#include <catch2/catch.hpp>

#include "pg_sql_support.hpp"

// --- CREATE TABLE, CREATE INDEX ----------------------------------------------------------------------

TEST_CASE("pg: CREATE TABLE with a serial id and a UNIQUE column makes it the unique key column, named t_col_key",
          "[pg_sql]") {
  const sql::Prepared p = pg::prepare(
      "CREATE TABLE t_account (id BIGSERIAL PRIMARY KEY, open_id VARCHAR(64) NOT NULL UNIQUE, device TEXT NOT NULL DEFAULT '', "
      "wallet BIGINT NOT NULL DEFAULT 0, status SMALLINT DEFAULT -1, bound BOOLEAN DEFAULT true, created TIMESTAMPTZ, note CHAR(2))");
  REQUIRE(p.create);
  const db::TableSchema& t = *p.create;
  CHECK(t.name == "t_account");
  CHECK(t.key_column == "open_id");
  CHECK(t.key_index == KeyIndex::unique);
  CHECK(t.index_name == "t_account_open_id_key");
  CHECK(t.auto_increment);
  CHECK(t.columns == db::Values{{"bound", num(1)},
                                {"created", num(0)},
                                {"device", Value{""}},
                                {"note", Value{""}},
                                {"status", num(-1)},
                                {"wallet", num(0)}});
  CHECK(t.nullable == std::vector<std::string>{"bound", "created", "note", "status"});
  CHECK(t.null_by_default == std::vector<std::string>{"created", "note"});  // NULL: no DEFAULT
  CHECK(t.column_order == std::vector<std::string>{"id", "open_id", "device", "wallet", "status", "bound", "created", "note"});
  CHECK_FALSE(p.statement.written);  // a table, not a statement
}

TEST_CASE("pg: a table's UNIQUE (col) constraint, named or not, is its key, id's type says whether it is auto-increment",
          "[pg_sql]") {
  sql::Prepared p = pg::prepare("CREATE TABLE t (k text, id bigint GENERATED ALWAYS AS IDENTITY, v int DEFAULT '7', "
                                "PRIMARY KEY (id), CONSTRAINT uk_k UNIQUE (k))");
  REQUIRE(p.create);
  CHECK(p.create->key_column == "k");
  CHECK(p.create->index_name == "uk_k");
  CHECK(p.create->auto_increment);
  CHECK(p.create->columns == db::Values{{"v", num(7)}});
  CHECK(p.create->column_order == std::vector<std::string>{"id", "k", "v"});
  p = pg::prepare("CREATE TABLE t (id int PRIMARY KEY, k text, n text DEFAULT 5, UNIQUE (k))");
  CHECK(p.create->index_name == "t_k_key");
  CHECK_FALSE(p.create->auto_increment);
  CHECK(p.create->columns == db::Values{{"n", Value{"5"}}});
  CHECK(pg::prepare("CREATE TABLE t (id serial PRIMARY KEY, n integer)").create->auto_increment);
  p = pg::prepare("CREATE TABLE t (id smallint PRIMARY KEY, a text)");
  CHECK(p.create->key_column.empty());
  CHECK(p.create->key_index == KeyIndex::none);
  CHECK(p.create->index_name.empty());
}

TEST_CASE("pg: a primary key on another column than id is the key index t_pkey, NOT NULL, and the table has no id", "[pg_sql]") {
  const db::TableSchema t = *pg::prepare("CREATE TABLE t (k text PRIMARY KEY, a text UNIQUE, n int)").create;
  CHECK(t.clustered_key);
  CHECK_FALSE(t.auto_increment);
  CHECK(t.key_column == "k");
  CHECK(t.key_index == KeyIndex::unique);
  CHECK(t.index_name == "t_pkey");
  CHECK(t.column_order == std::vector<std::string>{"k", "a", "n"});
  CHECK_FALSE(t.may_be_null("k"));
  REQUIRE(t.indexes.size() == 1);  // the UNIQUE column, after the primary key
  CHECK(t.indexes[0].name == "t_a_key");
  CHECK(pg::prepare("CREATE TABLE t (k text, n int, PRIMARY KEY (k))").create->key_column == "k");
}

TEST_CASE("pg: a table the model cannot hold is refused: id beside another primary key, NULLS NOT DISTINCT, other types", "[pg_sql]") {
  CHECK(refused("CREATE TABLE t (id int, k text PRIMARY KEY)") ==
        "no column id in a table whose primary key is another (id is the model's integer primary key)");
  CHECK(refused("CREATE TABLE t (id int, k text, PRIMARY KEY (id, k))") == "a primary key on one column (on several: not modelled on PostgreSQL)");
  CHECK(refused("CREATE TABLE t (k text DEFAULT 'a' PRIMARY KEY)") == "a primary key column without DEFAULT (the model's keys are always given)");
  CHECK(error_of("CREATE TABLE t (k text, PRIMARY KEY (j))").sqlstate() == "42703");
  CHECK(refused("CREATE TABLE t (id int, k text)") == "a table without a primary key");
  CHECK(refused("CREATE TABLE t (id int PRIMARY KEY, a text UNIQUE NULLS NOT DISTINCT)") == "NULLS NOT DISTINCT");
  CHECK(refused("SELECT * FROM t ORDER BY a NULLS FIRST") == "NULLS FIRST");  // the model sorts NULLs as by default
  CHECK(refused("SELECT * FROM t ORDER BY a DESC NULLS LAST") == "DESC NULLS LAST");
  CHECK(bound("SELECT * FROM t ORDER BY a NULLS LAST, b DESC NULLS FIRST").more().order_by.size() == 2);
  CHECK(refused("CREATE UNIQUE INDEX i ON t (a, b) NULLS NOT DISTINCT") == "NULLS NOT DISTINCT");
  CHECK(pg::prepare("CREATE TABLE t (id int PRIMARY KEY, a text DEFAULT NULL)").create->null_by_default == std::vector<std::string>{"a"});
  CHECK(refused("CREATE TABLE t (id int PRIMARY KEY, a numeric)") == "the type numeric");
  CHECK(refused("CREATE TABLE t (id uuid PRIMARY KEY)") == "the type uuid");
  CHECK(refused("CREATE TABLE t (id int PRIMARY KEY, at timestamptz DEFAULT now())") == "a function call now()");
  CHECK(refused("CREATE TABLE t (id int PRIMARY KEY, n int CHECK (n > 0))") == "a CHECK constraint");
  CHECK(refused("CREATE TABLE t (id int PRIMARY KEY, n int REFERENCES u (id))") == "a foreign key");
  CHECK(refused("CREATE TABLE t (id int PRIMARY KEY, n serial)") == "a serial column other than id");
  CHECK(refused("CREATE TABLE t (id int PRIMARY KEY, a text, UNIQUE (a) DEFERRABLE)") == "a DEFERRABLE unique constraint");
  CHECK(refused("CREATE TABLE t (id int PRIMARY KEY, a text UNIQUE DEFERRABLE)") == "DEFERRABLE or INITIALLY");
  CHECK(refused("CREATE TABLE IF NOT EXISTS t (id int PRIMARY KEY)") == "CREATE TABLE IF NOT EXISTS");
  CHECK(refused("CREATE TEMPORARY TABLE t (id int PRIMARY KEY)") == "a TEMPORARY or UNLOGGED table");
  CHECK(error_of("CREATE TABLE t (id int PRIMARY KEY, PRIMARY KEY (id))").sqlstate() == "42P16");
  CHECK(error_of("CREATE TABLE t (id int PRIMARY KEY, a int, a int)").sqlstate() == "42701");
  CHECK(error_of("CREATE TABLE t (id int PRIMARY KEY, UNIQUE (k))").sqlstate() == "42703");
  CHECK(error_of("CREATE TABLE t (id int PRIMARY KEY, a int, UNIQUE (a, k))").sqlstate() == "42703");
  CHECK(error_of("CREATE TABLE t (id int PRIMARY KEY, a int, UNIQUE (a, a))").sqlstate() == "42701");
  CHECK(refused("CREATE TABLE t (id int PRIMARY KEY, a int, UNIQUE (id, a))") == "UNIQUE on id (the primary key)");
  CHECK(error_of("CREATE TABLE t (id int PRIMARY KEY, n int DEFAULT 'x')").sqlstate() == "22P02");
}

TEST_CASE("pg: a second UNIQUE column and UNIQUE (a, b) are the table's further unique indexes, named t_a_b_key when unnamed",
          "[pg_sql]") {
  sql::Prepared p = pg::prepare("CREATE TABLE t (id int PRIMARY KEY, a text UNIQUE, b text UNIQUE, c int, UNIQUE (b, c), "
                                "CONSTRAINT one_c UNIQUE (c))");
  REQUIRE(p.create);
  CHECK(p.create->key_column == "a");
  REQUIRE(p.create->indexes.size() == 3);
  CHECK(p.create->indexes[0] == db::IndexDef{.name = "t_b_key", .columns = {"b"}});
  CHECK(p.create->indexes[1] == db::IndexDef{.name = "t_b_c_key", .columns = {"b", "c"}});
  CHECK(p.create->indexes[2] == db::IndexDef{.name = "one_c", .columns = {"c"}});
  CHECK(p.create->columns.count("b"));  // a further index's columns stay columns with defaults
  p = pg::prepare("CREATE TABLE t (id int PRIMARY KEY, a text, b text, UNIQUE (a, b))");
  CHECK(p.create->key_column.empty());
  CHECK(p.create->indexes.size() == 1);
}

TEST_CASE("pg: CREATE [UNIQUE] INDEX is an add_index of one column, named t_col_idx when unnamed", "[pg_sql]") {
  Statement s = bound("CREATE UNIQUE INDEX ON t_account (open_id)");
  CHECK(s.kind == Statement::Kind::add_index);
  CHECK(s.table == "t_account");
  CHECK(s.column == "open_id");
  CHECK(s.unique);
  CHECK(s.index == "t_account_open_id_idx");
  s = bound("CREATE INDEX CONCURRENTLY ix_k ON t (k)");
  CHECK(s.index == "ix_k");
  CHECK_FALSE(s.unique);
  CHECK(bound("CREATE INDEX ON t (k)").index == "t_k_idx");
  CHECK(refused("CREATE INDEX ON t (lower(a))") == "an index on an expression");
  CHECK(refused("CREATE INDEX ON t USING hash (a)") == "a hash index");
}

TEST_CASE("pg: CREATE INDEX on several columns or with a WHERE carries its index, named t_a_b_idx when unnamed", "[pg_sql]") {
  Statement s = bound("CREATE INDEX ON t (a, b)");
  CHECK(s.kind == Statement::Kind::add_index);
  CHECK(s.column.empty());
  REQUIRE(s.more().index_def);
  CHECK(*s.more().index_def == db::IndexDef{.name = "t_a_b_idx", .columns = {"a", "b"}, .unique = false});
  s = bound("CREATE UNIQUE INDEX one_active ON jobs (k) WHERE status = 'active' AND n > 0");
  REQUIRE(s.more().index_def);
  const db::IndexDef& def = *s.more().index_def;
  CHECK(def.name == "one_active");
  CHECK(def.columns == std::vector<std::string>{"k"});
  CHECK(def.unique);
  REQUIRE(def.where);
  CHECK(def.where_text == "status = 'active' AND n > 0");
  CHECK(refused("CREATE UNIQUE INDEX ON jobs (k) WHERE status = $1") == "a parameter in an index's WHERE");
  CHECK(refused("CREATE UNIQUE INDEX ON jobs (k) WHERE lower(status) = 'a'") == "a function call lower()");
}

TEST_CASE("pg: ON CONFLICT (cols) WHERE gives the terms a partial index's WHERE must be among", "[pg_sql]") {
  const Statement s = bound("INSERT INTO jobs (k) VALUES ('a') ON CONFLICT (k) WHERE status = 'active' DO NOTHING");
  CHECK(s.more().conflict_target == std::vector<std::string>{"k"});
  REQUIRE(s.more().conflict_index_where);
  CHECK(db::to_string(*s.more().conflict_index_where) == "status = 'active'");
  CHECK(refused("INSERT INTO jobs (k) VALUES ('a') ON CONFLICT (k) WHERE status = $1 DO NOTHING") == "a parameter in an index's WHERE");
}

// --- Errors and bounds -------------------------------------------------------------------------------

TEST_CASE("pg: a syntax error is PostgreSQL's 42601 with its message, at the byte where the parser stopped", "[pg_sql]") {
  pg::Error e = error_of("SELECT * FORM t");
  CHECK(e.sqlstate() == "42601");
  CHECK(e.position() == 9);
  CHECK(e.message() == "syntax error at or near \"FORM\"");
  CHECK(std::string(e.what()) == "42601 syntax error at or near \"FORM\" at position 9");
  // PostgreSQL counts characters; the position is in bytes.
  e = error_of("SELECT 'ééé' FORM t");
  CHECK(e.position() == 21);
  e = error_of("SELECT * FROM t WHERE a = 'abc");
  CHECK(e.sqlstate() == "42601");
  CHECK(e.position() == 26);
  CHECK(error_of("SELEC 1").position() == 0);
}

TEST_CASE("pg: more than one statement, an empty one, and statements the model does not run are 0A000", "[pg_sql]") {
  CHECK(refused("SELECT * FROM t; SELECT * FROM u") == "more than one statement");
  CHECK(error_of("SELECT * FROM t; SELECT * FROM u").position() == 16);
  CHECK_NOTHROW(pg::prepare("SELECT * FROM t;"));
  CHECK(refused("") == "an empty statement");
  CHECK(refused("  ;  ") == "an empty statement");
  CHECK(refused("ALTER TABLE t ADD COLUMN a int") == "ALTER TABLE (PostgreSQL's index is CREATE INDEX)");
  CHECK(refused("DROP TABLE t") == "DROP");
  CHECK(refused("TRUNCATE t") == "TRUNCATE");
  CHECK(refused("LOCK TABLE t") == "LOCK TABLE");
  CHECK(refused("SHOW lock_timeout") == "SHOW");
  CHECK(refused("EXPLAIN SELECT * FROM t") == "EXPLAIN");
}

TEST_CASE("pg: a statement past 64 KiB, a NUL byte or bytes that are not UTF-8 are refused at their position", "[pg_sql]") {
  const std::string longest = "SELECT * FROM t WHERE a = '" + std::string(65536 - 28, 'x') + "'";
  REQUIRE(longest.size() == 65536);
  CHECK_NOTHROW(pg::prepare(longest));
  CHECK(refused(longest + " ") == "a statement longer than 65536 bytes");
  CHECK(error_of(longest + " ").position() == 65536);
  pg::Error e = error_of(std::string("SELECT * FROM t WHERE a = '\0'", 30));
  CHECK(e.sqlstate() == "22021");
  CHECK(e.position() == 27);
  e = error_of("SELECT * FROM t WHERE a = '\xff'");
  CHECK(e.sqlstate() == "22021");
  CHECK(e.message() == "invalid byte sequence for encoding \"UTF8\": 0xff");
  CHECK(error_of("SELECT * FROM t WHERE a = '\xc3'").position() == 27);  // a sequence cut short
}

TEST_CASE("pg: a statement takes at most 1000 rows, values, conditions and columns", "[pg_sql]") {
  const auto rows = [](int n) {
    std::string text = "INSERT INTO t (a) VALUES (0)";
    for (int i = 1; i < n; ++i) text += ", (" + std::to_string(i) + ")";
    return text;
  };
  CHECK(bound(rows(1000)).more().more_rows.size() == 999);
  CHECK(refused(rows(1001)) == "more than 1000 rows in a statement");
  const auto conditions = [](int n) {
    std::string text = "SELECT * FROM t WHERE a0 = 0";
    for (int i = 1; i < n; ++i) text += " AND a" + std::to_string(i) + " = " + std::to_string(i);
    return text;
  };
  CHECK(bound(conditions(1000)).where.size() == 1000);
  CHECK(refused(conditions(1001)) == "more than 1000 conditions in a statement");
  const auto in_list = [](int n) {
    std::string text = "SELECT * FROM t WHERE a IN (0";
    for (int i = 1; i < n; ++i) text += ", " + std::to_string(i);
    return text + ")";
  };
  CHECK_NOTHROW(pg::prepare(in_list(1000)));
  CHECK(refused(in_list(1001)) == "more than 1000 values in an IN list in a statement");
  std::string params = "INSERT INTO t (a0";
  for (int i = 1; i < 1000; ++i) params += ", a" + std::to_string(i);
  params += ") VALUES ($1";
  for (int i = 2; i <= 1000; ++i) params += ", $" + std::to_string(i);
  CHECK(pg::prepare(params + ")").params.size() == 1000);
  std::string columns = "CREATE TABLE t (id int PRIMARY KEY";
  for (int i = 1; i < 1001; ++i) columns += ", c" + std::to_string(i) + " int";
  CHECK(refused(columns + ")") == "more than 1000 columns in a statement");
}

TEST_CASE("pg: a text nested past what the model runs is refused before libpg_query parses it, within a script's stack",
          "[pg_sql]") {
  // libpg_query and protobuf-c recurse over the tree: 64 KiB of `+a` or `-(` would overflow a
  // stack. The check runs in a simulated process with a script's 1 MiB stack, guard pages on,
  // after the other tests have used the parser on the main stack.
  std::vector<std::string> deep;
  const auto repeated = [](const std::string& s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  deep.push_back("SELECT * FROM t WHERE a = a" + repeated("+a", 30000));
  deep.push_back("SELECT * FROM t WHERE a = " + repeated("-(", 10000) + "a" + repeated(")", 10000));
  deep.push_back("SELECT * FROM t WHERE a = a" + repeated("::int", 12000));
  deep.push_back("SELECT * FROM t WHERE " + repeated("NOT ", 15000) + "a");
  deep.push_back("SELECT * FROM t WHERE a = " + repeated("a BETWEEN b AND ", 3500) + "c");
  deep.push_back("SELECT a, b" + repeated(" UNION SELECT a, b", 3000));
  deep.push_back("SELECT * FROM t WHERE a = " + repeated("(SELECT ", 5000) + "1" + repeated(")", 5000));
  std::vector<std::string> answers;
  sim::EngineConfig config = test::config();
  config.stack_bytes = std::size_t{1} << 20;  // models/strategies/script.hpp's kScriptStackBytes
  sim::Engine engine(config);
  engine.spawn(sim::kWorld, "parser", [&] {
    for (const std::string& text : deep) {
      try {
        pg::prepare(text);
        answers.push_back("parsed");
      } catch (const pg::Error& e) {
        answers.push_back(e.message());
      }
    }
    answers.push_back(pg::prepare("SELECT * FROM t WHERE a = $1 AND b + 1 > 2").statement.table);  // a plain one parses here
  });
  REQUIRE(engine.run().ok());
  REQUIRE(answers.size() == deep.size() + 1);
  for (std::size_t i = 0; i < deep.size(); ++i) {
    INFO(i);
    CHECK(answers[i] == "an expression with more than 128 nested operators is not modelled (docs/sql.md, PostgreSQL)");
  }
  CHECK(answers.back() == "t");
}

// --- As written --------------------------------------------------------------------------------------

TEST_CASE("pg: a statement is shown as written, each $n filled with the value bound to it", "[pg_sql]") {
  const auto p = pg::prepare("SELECT  id FROM t_account\n   WHERE open_id = $2 AND n > $1  FOR UPDATE;");
  const Statement s = sql::bind(p, {num(3), Value{"openid:7"}});
  REQUIRE(s.written);
  CHECK(s.written->numbered);
  CHECK(sql::as_written(s) == "SELECT id FROM t_account WHERE open_id = 'openid:7' AND n > 3 FOR UPDATE");
  // A $1 or a ? inside a string is the string's; a backslash ends no string but an E'...' one.
  const auto strings = pg::prepare("INSERT INTO t (a, b, c, d) VALUES ($1, 'what? $1', 'x\\', E'y\\'$1')");
  CHECK(sql::as_written(sql::bind(strings, {Value{"k"}})) == "INSERT INTO t (a, b, c, d) VALUES ('k', 'what? $1', 'x\\', E'y\\'$1')");
  const auto update = pg::prepare("UPDATE stock SET n = n - $1 WHERE id = $2 AND n >= $3");
  CHECK(sql::as_written(sql::bind(update, {num(1), num(7), num(2)})) == "UPDATE stock SET n = n - 1 WHERE id = 7 AND n >= 2");
  CHECK(sql::as_written(bound("SELECT pg_advisory_lock($1)", {num(5)})) == "SELECT pg_advisory_lock(5)");
  // MariaDB's text keeps its `?`s, and its `$1` is a name.
  const auto mysql = sql::prepare("SELECT * FROM t WHERE $1 = ?");
  CHECK_FALSE(mysql.statement.written->numbered);
  CHECK(sql::as_written(sql::bind(mysql, {num(4)})) == "SELECT * FROM t WHERE $1 = 4");
}

// --- Totality ----------------------------------------------------------------------------------------

namespace {

const std::vector<std::string> kValid = {
    "SELECT id, open_id FROM t_account WHERE open_id = $1 FOR UPDATE",
    "SELECT count(*) FROM t WHERE a IN (1, 2) AND b BETWEEN $1 AND 5 ORDER BY a DESC LIMIT 3 OFFSET 1",
    "INSERT INTO t (k, v) VALUES ($1, 1), ('b', DEFAULT) ON CONFLICT (k) DO UPDATE SET v = excluded.v + t.v WHERE t.v < 10 RETURNING *",
    "UPDATE t SET a = a + $1, b = 'c' WHERE id = $2 AND version = $3 RETURNING a",
    "DELETE FROM t WHERE k = $1",
    "SELECT pg_try_advisory_xact_lock($1)",
    "BEGIN ISOLATION LEVEL REPEATABLE READ",
    "SET lock_timeout = '10s'",
    "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE",
    "CREATE TABLE t (id bigserial PRIMARY KEY, k varchar(64) NOT NULL, v int DEFAULT 0, CONSTRAINT uk UNIQUE (k))",
    "CREATE UNIQUE INDEX CONCURRENTLY uk ON t (k)",
};

// Any answer but a crash or another exception.
void parse_any(const std::string& text) {
  try {
    pg::prepare(text);
  } catch (const pg::Error&) {
  }
}

}  // namespace

TEST_CASE("pg: every statement the totality tests mutate parses", "[pg_sql]") {
  for (const std::string& text : kValid) CHECK_NOTHROW(pg::prepare(text));
}

TEST_CASE("pg: random bytes, random SQL words and mutated statements never crash the front end", "[pg_sql]") {
  std::mt19937_64 random(20240601);
  for (int i = 0; i < 5000; ++i) {
    std::string text(random() % 120, '\0');
    for (char& c : text) c = static_cast<char>(random() % 256);
    parse_any(text);
  }
  const std::vector<std::string> words = {
      "SELECT", "INSERT", "UPDATE", "DELETE", "INTO", "FROM", "WHERE", "AND", "OR", "NOT", "VALUES", "SET", "ON", "CONFLICT",
      "DO", "NOTHING", "EXCLUDED", "RETURNING", "UNIQUE", "INDEX", "PRIMARY", "KEY", "CREATE", "TABLE", "serial", "int",
      "text", "DEFAULT", "NULL", "FOR", "SHARE", "NO", "UPDATE", "SKIP", "LOCKED", "NOWAIT", "IN", "BETWEEN", "LIKE",
      "IS", "id", "a", "t", "t.a", "excluded.a", "'s'", "'", "\"", "1", "-2", "$1", "$2", "$0", "(", ")", ",", ";", "=",
      "<", ">=", "<>", "*", "/", "%", "::", "BEGIN", "COMMIT", "ROLLBACK", "TRANSACTION", "ISOLATION", "LEVEL", "READ",
      "COMMITTED", "SERIALIZABLE", "lock_timeout", "'10s'", "pg_advisory_lock", "count", "LIMIT", "OFFSET", "ORDER",
      "BY", "DESC"};
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    const std::size_t n = random() % 25;
    for (std::size_t k = 0; k < n; ++k) text += words[random() % words.size()] + (random() % 4 ? " " : "");
    parse_any(text);
  }
  for (int i = 0; i < 20000; ++i) {
    std::string text = kValid[random() % kValid.size()];
    for (int edits = 1 + static_cast<int>(random() % 4); edits > 0 && !text.empty(); --edits) {
      const std::size_t at = random() % text.size();
      switch (random() % 4) {
        case 0: text.erase(at, 1 + random() % 8); break;
        case 1: text.insert(at, 1, static_cast<char>(random() % 256)); break;
        case 2: text[at] = static_cast<char>(random() % 256); break;
        case 3: text.resize(at); break;
      }
    }
    parse_any(text);
  }
}

TEST_CASE("pg: a statement built in code is narrated in PostgreSQL's words on that engine, in MySQL's on MariaDB", "[pg_sql]") {
  const Statement ignore{.kind = Statement::Kind::insert, .table = "t", .values = {{"k", Value{std::string("a")}}},
                         .on_duplicate = db::OnDuplicate::ignore};
  CHECK(db::to_string(ignore, db::Engine::postgresql) == "INSERT INTO t (k) VALUES ('a') ON CONFLICT DO NOTHING");
  CHECK(db::to_string(ignore, db::Engine::mariadb) == "INSERT IGNORE INTO t (k) VALUES ('a')");
  Statement upsert = ignore;
  upsert.on_duplicate = db::OnDuplicate::update;
  upsert.on_update = {{"v", num(2)}};
  CHECK(db::to_string(upsert, db::Engine::postgresql) == "INSERT INTO t (k) VALUES ('a') ON CONFLICT DO UPDATE SET v = 2");
  const Statement share{.kind = Statement::Kind::select, .table = "t", .lock = db::ReadLock::share};
  CHECK(db::to_string(share, db::Engine::postgresql) == "SELECT * FROM t FOR SHARE");
  CHECK(db::to_string(share, db::Engine::mariadb) == "SELECT * FROM t LOCK IN SHARE MODE");
  // A statement parsed from PostgreSQL's text is shown as it was written.
  CHECK(sql::as_written(bound("INSERT INTO t (k) VALUES ($1) ON CONFLICT (k) DO NOTHING", {Value{std::string("b")}}),
                        db::Engine::postgresql) == "INSERT INTO t (k) VALUES ('b') ON CONFLICT (k) DO NOTHING");
}

TEST_CASE("pg: a literal cast to an integer type is folded as PostgreSQL's parser folds it: 22P02 for no integer, 22003 past the type",
          "[pg_sql]") {
  const auto refusal = [](std::string_view text) {
    const pg::Error e = error_of(text);
    return e.sqlstate() + " " + e.message();
  };
  CHECK(refusal("SELECT 'abc'::int AS n") == "22P02 invalid input syntax for type integer: \"abc\"");
  CHECK(refusal("SELECT 3000000000::int AS n") == "22003 integer out of range");
  CHECK(refusal("SELECT 40000::smallint AS n") == "22003 smallint out of range");
  CHECK(refusal("SELECT '3000000000'::integer AS n") == "22003 value \"3000000000\" is out of range for type integer");
  CHECK(refusal("SELECT '99999999999999999999'::bigint AS n") == "22003 value \"99999999999999999999\" is out of range for type bigint");
  CHECK(refusal("INSERT INTO t (a) VALUES ('abc'::int)") == "22P02 invalid input syntax for type integer: \"abc\"");
  CHECK(refusal("SELECT * FROM t WHERE a = 'x'::int4") == "22P02 invalid input syntax for type integer: \"x\"");
  // One that fits is its integer, wherever it is written; a cast to another type keeps the value.
  CHECK(bound("INSERT INTO t (a, b) VALUES (' 7 '::smallint, '5'::text)").values == db::Values{{"a", num(7)}, {"b", Value{"5"}}});
  CHECK(where_text(bound("SELECT * FROM t WHERE a = '12'::int")) == "a = 12");
}
