// MariaDB's table definitions parsed into the database's schemas (models/db/sql.hpp): CREATE TABLE,
// ALTER TABLE, the 1064 errors for the rest, and that no text crashes the parser.

#include <catch2/catch.hpp>

#include "sql_support.hpp"

// --- CREATE TABLE --------------------------------------------------------------------------------

TEST_CASE("CREATE TABLE with a UNIQUE KEY makes that column the table's unique key column", "[sql]") {
  const sql::Prepared p = sql::prepare(kAccountsDdl);
  REQUIRE(p.create);
  const db::TableSchema& t = *p.create;
  CHECK(t.name == "t_account");
  CHECK(t.key_column == "open_id");
  CHECK(t.key_index == KeyIndex::unique);
  CHECK(t.index_name == "uk_open_id");
  CHECK(values_text(t.columns) == "{device='';status=0;wallet=0;}");
  CHECK(t.column_order == std::vector<std::string>{"id", "open_id", "device", "wallet", "status"});
  CHECK(p.params.empty());
}

TEST_CASE("CREATE TABLE with a KEY or an INDEX makes a non-unique key column, an inline UNIQUE a unique one", "[sql]") {
  auto table = [](const std::string& rest) {
    return *sql::prepare("CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, k VARCHAR(32) " + rest + ")").create;
  };
  db::TableSchema t = table(", KEY idx_k (k)");
  CHECK(t.key_column == "k");
  CHECK(t.key_index == KeyIndex::non_unique);
  CHECK(t.index_name == "idx_k");
  t = table(", INDEX (k)");
  CHECK(t.key_index == KeyIndex::non_unique);
  CHECK(t.index_name == "k");
  t = table(", UNIQUE INDEX (k)");
  CHECK(t.key_index == KeyIndex::unique);
  CHECK(t.index_name == "k");
  t = table("NOT NULL UNIQUE");
  CHECK(t.key_column == "k");
  CHECK(t.key_index == KeyIndex::unique);
  CHECK(t.index_name == "k");
  CHECK(t.columns.empty());
}

TEST_CASE("CREATE TABLE without a secondary index has no key column", "[sql]") {
  const sql::Prepared p = sql::prepare(
      "create table `t_task` (`id` int(11) unsigned not null auto_increment, status smallint default 1, "
      "marked_at datetime(3) null, note text, code char(2) default 7, primary key (`id`))");
  REQUIRE(p.create);
  const db::TableSchema& t = *p.create;
  CHECK(t.key_column.empty());
  CHECK(t.key_index == KeyIndex::none);
  CHECK(t.index_name.empty());
  CHECK(values_text(t.columns) == "{code='7';marked_at=0;note='';status=1;}");
  CHECK(t.null_by_default == std::vector<std::string>{"marked_at", "note"});  // nullable, no DEFAULT
  CHECK(t.column_order == std::vector<std::string>{"id", "status", "marked_at", "note", "code"});
}

TEST_CASE("a bound CREATE TABLE is a usage error: the table goes to create_table", "[sql]") {
  CHECK_THROWS_AS(sql::bind(sql::prepare(kAccountsDdl), {}), sim::UsageError);
}

TEST_CASE("CREATE TABLE needs a primary key: the integer id, AUTO_INCREMENT or not, or other columns", "[sql]") {
  CHECK(sql::prepare("create table test (id int primary key, value int) engine=innodb").create->auto_increment == false);
  CHECK(sql::prepare("CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY)").create->auto_increment);
  struct Case {
    std::string text;
    std::size_t position;
    std::string expected;
  };
  for (const Case& c : std::vector<Case>{
           {"CREATE TABLE t (k INT)", 21, "an id column: id BIGINT AUTO_INCREMENT PRIMARY KEY, or a PRIMARY KEY on other columns"},
           {"CREATE TABLE t (id VARCHAR(9) PRIMARY KEY)", 19, "BIGINT or INT (id is the integer primary key)"},
           {"CREATE TABLE t (id BIGINT AUTO_INCREMENT)", 40, ", PRIMARY KEY (id)"},
           {"CREATE TABLE t (id BIGINT AUTO_INCREMENT, k INT, PRIMARY KEY (k))", 64,
            "no column id in a table whose primary key is another (id is the model's integer primary key)"},
           {"CREATE TABLE t (id BIGINT AUTO_INCREMENT, k INT, PRIMARY KEY (id, k))", 68,
            "no column id in a table whose primary key is another (id is the model's integer primary key)"},
           {"CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, PRIMARY KEY (id))", 54, "one PRIMARY KEY (1068 Multiple primary key defined)"},
           {"CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, k INT AUTO_INCREMENT)", 60,
            "a column attribute other than AUTO_INCREMENT (only id is auto-increment)"},
           {"CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, k INT PRIMARY KEY)", 60,
            "one PRIMARY KEY (1068 Multiple primary key defined)"},
           {"CREATE TABLE t (k VARCHAR(8) PRIMARY KEY, PRIMARY KEY (k))", 42, "one PRIMARY KEY (1068 Multiple primary key defined)"},
           {"CREATE TABLE t (k VARCHAR(8), PRIMARY KEY (j))", 43, "a column the table defines (1072 Key column doesn't exist in table)"},
           {"CREATE TABLE t (k VARCHAR(8) NULL PRIMARY KEY)", 16, "a NOT NULL column (1171 All parts of a PRIMARY KEY must be NOT NULL)"},
           {"CREATE TABLE t (k VARCHAR(8) DEFAULT 'a' PRIMARY KEY)", 16,
            "a primary key column without DEFAULT (the model's keys are always given)"},
           {"CREATE TABLE t (k VARCHAR(8), PRIMARY KEY k (k))", 42, "( (a primary key is named PRIMARY)"},
           {"CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, id INT)", 54, "a column not defined already"},
           {"CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, UNIQUE KEY (id))", 66,
            "a column other than id (id is the primary key)"},
           {"CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, UNIQUE KEY (k))", 66, "a column the table defines"},
           {"CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, k FLOAT)", 56,
            "a column type: BIGINT, INT, SMALLINT, TINYINT, VARCHAR(n), CHAR(n), TEXT, DATETIME or TIMESTAMP"},
           {"CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, k INT DEFAULT 'x')", 68,
            "an integer default for a number column"},
       }) {
    INFO(c.text);
    const sql::Error e = error_of(c.text);
    CHECK(e.expected() == c.expected);
    CHECK(e.position() == c.position);
  }
}

TEST_CASE("a PRIMARY KEY on other columns than id is the table's key index, named PRIMARY, NOT NULL, and the table has no id",
          "[sql]") {
  const db::TableSchema one = table_of("CREATE TABLE payments (request_id VARCHAR(64) PRIMARY KEY, amount INT, KEY (amount))");
  CHECK(one.clustered_key);
  CHECK(one.key_column == "request_id");
  CHECK(one.key_index == db::KeyIndex::unique);
  CHECK(one.index_name == "PRIMARY");
  CHECK_FALSE(one.auto_increment);
  CHECK(one.column_order == std::vector<std::string>{"request_id", "amount"});
  CHECK_FALSE(one.may_be_null("request_id"));
  REQUIRE(one.indexes.size() == 1);
  CHECK(one.indexes[0].columns == std::vector<std::string>{"amount"});
  CHECK_FALSE(one.has_column("id"));
  CHECK(one.has_column("request_id"));

  const db::TableSchema two = table_of("CREATE TABLE t (user_id INT, item VARCHAR(8), qty INT NOT NULL DEFAULT 0, "
                                       "UNIQUE KEY (qty), PRIMARY KEY (user_id, item))");
  CHECK(two.key_column == "user_id");
  CHECK(two.key_tail == std::vector<std::string>{"item"});
  CHECK(two.indexes.size() == 1);  // the UNIQUE KEY, after the primary key
  CHECK(two.nullable.empty());
  CHECK(table_of("CREATE TABLE t (id INT PRIMARY KEY, k INT)").has_column("id"));
}

TEST_CASE("a column without NOT NULL may hold NULL, its default NULL unless it gives another, DEFAULT NULL on a NOT NULL "
          "column is refused, as MariaDB's 1067",
          "[sql]") {
  const db::TableSchema t = *sql::prepare("CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, a INT, b INT NULL DEFAULT 3, "
                                          "c VARCHAR(8) DEFAULT NULL, d VARCHAR(8) NOT NULL, e INT NOT NULL DEFAULT 4)")
                                 .create;
  CHECK(t.nullable == std::vector<std::string>{"a", "b", "c"});
  CHECK(t.null_by_default == std::vector<std::string>{"a", "c"});
  CHECK(t.columns.at("a") == Value{std::int64_t{0}});  // the type's zero: the column's type
  CHECK(t.columns.at("b") == Value{std::int64_t{3}});
  CHECK(t.columns.at("c") == Value{std::string()});
  CHECK(t.columns.at("d") == Value{std::string()});  // NOT NULL without a DEFAULT: the type's zero
  CHECK(t.columns.at("e") == Value{std::int64_t{4}});
  CHECK_FALSE(t.may_be_null("id"));
  const sql::Error e = error_of("CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, k VARCHAR(8) NOT NULL DEFAULT NULL)");
  CHECK(e.position() == 81);
  CHECK(e.expected() == "a default other than NULL for a NOT NULL column (1067 Invalid default value)");
}

TEST_CASE("the first secondary index is the key index and the others follow it in order, named as MariaDB names them, "
          "a repeated name or a 65th index is refused",
          "[sql]") {
  const TableSchema t =
      table_of("CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, a INT, b INT UNIQUE, c INT, UNIQUE KEY ua (a), "
               "KEY (c, b), KEY (c))");
  CHECK(t.key_column == "b");
  CHECK(t.key_index == KeyIndex::unique);
  REQUIRE(t.indexes.size() == 3);
  CHECK(t.indexes[0] == db::IndexDef{.name = "ua", .columns = {"a"}, .unique = true});
  CHECK(t.indexes[1] == db::IndexDef{.name = "c", .columns = {"c", "b"}, .unique = false});
  CHECK(t.indexes[2] == db::IndexDef{.name = "c_2", .columns = {"c"}, .unique = false});
  const std::string head = "CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, a INT, b INT";
  sql::Error e = error_of(head + ", UNIQUE KEY k (a), KEY k (b))");
  CHECK(e.position() == head.size() + 20);
  CHECK(e.expected() == "an index name not used already (1061 Duplicate key name)");
  std::string many = head;
  for (int i = 0; i < 65; ++i) many += ", KEY (a)";
  e = error_of(many + ")");
  CHECK(e.position() == head.size() + 64 * 9 + 2);
  CHECK(e.expected() == "at most 64 indexes (1069 Too many keys specified)");
}

TEST_CASE("an index on several columns is the key index: its first column is the key column, the others its tail, in "
          "order",
          "[sql]") {
  const TableSchema t =
      table_of("CREATE TABLE pay (id BIGINT AUTO_INCREMENT PRIMARY KEY, merchant INT NOT NULL, request VARCHAR(32) NOT NULL, "
               "note VARCHAR(8), UNIQUE KEY uk_request (merchant, request))");
  CHECK(t.key_column == "merchant");
  CHECK(t.key_tail == std::vector<std::string>{"request"});
  CHECK(t.key_columns() == std::vector<std::string>{"merchant", "request"});
  CHECK(t.key_index == KeyIndex::unique);
  CHECK(t.index_name == "uk_request");
  CHECK(t.columns.count("request") == 1);  // the tail keeps its default where every other column does
  CHECK(table_of("CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, a INT, b INT, KEY (b, a))").index_name == "b");
}

TEST_CASE("an index naming a column twice, id, a column the table lacks, or more than 32 columns is refused", "[sql]") {
  const std::string head = "CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, a INT, b INT, UNIQUE KEY uab (a, ";
  sql::Error e = error_of(head + "a))");
  CHECK(e.position() == head.size());
  CHECK(e.expected() == "a column not in the index already (1060 Duplicate column name)");
  e = error_of(head + "id))");
  CHECK(e.position() == head.size());
  CHECK(e.expected() == "a column other than id (id is the primary key)");
  e = error_of(head + "c))");
  CHECK(e.position() == head.size());
  CHECK(e.expected() == "a column the table defines");
  std::string many = "ALTER TABLE t ADD INDEX wide (c0";
  for (int i = 1; i < 32; ++i) many += ", c" + std::to_string(i);
  const std::size_t at = many.size() + 2;
  e = error_of(many + ", c32)");
  CHECK(e.position() == at);
  CHECK(e.expected() == "at most 32 columns in an index (1070 Too many key parts specified)");
}

TEST_CASE("table options after CREATE TABLE are taken and ignored", "[sql]") {
  const std::string table = "CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY) ";
  for (const char* options : {"ENGINE=InnoDB", "ENGINE InnoDB AUTO_INCREMENT=5 DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_bin",
                              "CHARACTER SET = latin1, COMMENT 'x';", ""}) {
    INFO(options);
    CHECK(sql::prepare(table + options).create->name == "t");
  }
  CHECK(error_of(table + "ENGINE=").expected() == "the table option's value");
}

TEST_CASE("a table from CREATE TABLE runs the statements prepared for it", "[sql]") {
  db::Database database;
  database.create_table(*sql::prepare(kAccountsDdl).create);
  const sql::Prepared upsert = sql::prepare(
      "INSERT INTO t_account (open_id, device) VALUES (?, ?) ON DUPLICATE KEY UPDATE device = VALUES(device)");
  const sql::Prepared find = sql::prepare("SELECT id, device FROM t_account WHERE open_id = ? FOR UPDATE");
  std::vector<db::Row> rows;
  test::run_alone([&] {
    const auto session = database.open_session(db::Isolation::repeatable_read, "test");
    database.execute(session, sql::bind(upsert, {"o", "phone"}));
    database.execute(session, sql::bind(upsert, {"o", "tablet"}));
    rows = database.execute(session, sql::bind(find, {"o"})).rows;
  });
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].values.at("device") == Value{"tablet"});
  CHECK(rows[0].values.at("status") == Value{std::int64_t{0}});
}

// --- Errors ------------------------------------------------------------------------------------

TEST_CASE("a syntax error names its position and what was expected", "[sql]") {
  sql::Error e = error_of("SELECT * FORM t");
  CHECK(e.position() == 9);
  CHECK(e.near() == "FORM t");
  CHECK(e.expected() == "FROM");
  CHECK(std::string(e.what()) == "1064 You have an error in your SQL syntax near 'FORM t' at position 9: expected FROM");
  e = error_of("SELECT FROM t");
  CHECK(e.position() == 7);
  CHECK(e.expected() == "a column name, *, 1 or COUNT(*)");
  e = error_of("SELECT * FROM t WHERE a = 1 AND b = 2 AND c = 3 AND d = 4 AND e = 5 AND f = 6 HAVING a");
  CHECK(e.near() == "HAVING a");
  CHECK(e.expected() == "AND, OR, GROUP BY, ORDER BY, LIMIT, FOR UPDATE, LOCK IN SHARE MODE or the end of the statement");
  CHECK(error_of("DELETE t WHERE a = 1").expected() == "FROM");
}

TEST_CASE("the text near an error is cut to 30 bytes, at a character boundary", "[sql]") {
  sql::Error e = error_of("SELECT * FROM t HAVING aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
  CHECK(e.near() == "HAVING aaaaaaaaaaaaaaaaaaaaaaa");
  e = error_of("SELECT * FROM t HAVING aaaaaaaaaaaaaaaaaaaaa\u00e9\u00e9");  // é is two bytes: the 30th byte is inside one
  CHECK(e.near() == "HAVING aaaaaaaaaaaaaaaaaaaaa\u00e9");
}

TEST_CASE("an error at the end of the text says so", "[sql]") {
  const sql::Error e = error_of("SELECT * FROM t WHERE k =  ");
  CHECK(e.position() == 27);
  CHECK(e.near().empty());
  CHECK(std::string(e.what()) ==
        "1064 You have an error in your SQL syntax near '' at the end: expected a value, a column or (");
}

TEST_CASE("a statement the model does not run names the ones it does", "[sql]") {
  const std::string expected = std::string("a statement the model runs: ") + sql::Error::supported();
  struct Case {
    const char* text;
    std::size_t position;
  };
  for (const Case& c : {Case{"ALTER DATABASE d", 6}, Case{"SET autocommit = 0", 4}, Case{"CREATE INDEX i ON t (c)", 7},
                        Case{"", 0}, Case{"  ;", 2}, Case{"DROP TABLE t", 0}}) {
    INFO(c.text);
    const sql::Error e = error_of(c.text);
    CHECK(e.expected() == expected);
    CHECK(e.position() == c.position);
  }
  CHECK(std::string(sql::Error::supported()).find("SET innodb_lock_wait_timeout") != std::string::npos);
  for (const char* join : {"SELECT * FROM a JOIN b ON a.id = b.id", "SELECT * FROM a, b"})
    CHECK(error_of(join).expected() ==
          "WHERE, ORDER BY, LIMIT, FOR UPDATE, LOCK IN SHARE MODE or the end of the statement (joins are not modelled)");
}

TEST_CASE("a trailing semicolon is taken, anything after the statement is an error", "[sql]") {
  CHECK(bound("SELECT * FROM t;").table == "t");
  CHECK(bound("SELECT * FROM t ; \n").table == "t");
  sql::Error e = error_of("SELECT * FROM t; SELECT * FROM u");
  CHECK(e.position() == 17);
  CHECK(e.expected() == "the end of the statement (one statement at a time)");
  e = error_of("COMMIT; ;");
  CHECK(e.position() == 8);
}

TEST_CASE("a statement longer than 64 KiB is refused at position 65536", "[sql]") {
  const std::string text = "SELECT * FROM t WHERE k = '" + std::string(70000, 'x') + "'";
  const sql::Error e = error_of(text);
  CHECK(e.position() == 65536);
  CHECK(e.expected() == "a statement of at most 65536 bytes");
  CHECK(e.near() == std::string(30, 'x'));
  const std::string longest = "SELECT * FROM t WHERE k = '" + std::string(65536 - 28, 'x') + "'";
  REQUIRE(longest.size() == 65536);
  CHECK(bound(longest).where.size() == 1);
}

TEST_CASE("a statement takes at most 1000 parameters, values or conditions", "[sql]") {
  auto repeated = [](const std::string& item, const std::string& separator, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += (i ? separator : "") + item;
    return out;
  };
  CHECK(sql::prepare("SELECT * FROM t WHERE " + repeated("a = ?", " AND ", 1000)).params.size() == 1000);
  sql::Error e = error_of("SELECT * FROM t WHERE " + repeated("a = 1", " AND ", 1001));
  CHECK(e.expected() == "at most 1000 conditions in a statement");
  e = error_of("UPDATE t SET a = 1 WHERE " + repeated("a = ?", " AND ", 1000) + ", b = ?");
  CHECK(e.expected() == "AND, OR, ORDER BY, LIMIT or the end of the statement");
  e = error_of("UPDATE t SET " + repeated("a = ?", ", ", 1) + " WHERE " + repeated("a = ?", " AND ", 1000));
  CHECK(e.expected() == "at most 1000 parameters in a statement");
  e = error_of("INSERT INTO t (a) VALUES (" + repeated("1", ", ", 1001) + ")");
  CHECK(e.expected() == "at most 1000 values in a statement");
  e = error_of("SELECT " + repeated("a", ", ", 1001) + " FROM t");
  CHECK(e.expected() == "at most 1000 columns in a statement");
}

// --- Totality ------------------------------------------------------------------------------------

namespace {

/// Parses `text` as any caller would: a Prepared or an sql::Error, and nothing else. A parsed
/// statement binds with as many values as it has `?`s; an error points inside the text.
void parse_any(const std::string& text) {
  try {
    const sql::Prepared p = sql::prepare(text);
    if (!p.create) sql::bind(p, std::vector<Value>(p.params.size(), Value{std::int64_t{1}}));
  } catch (const sql::Error& e) {
    if (e.position() > text.size() || text.compare(std::min(e.position(), text.size()), e.near().size(), e.near()) != 0)
      FAIL("error outside the text: " << e.what() << " for " << text);
  }
}

const std::vector<std::string> kValid = {
    kAccountsDdl,
    "SELECT id, device FROM t_account WHERE open_id = ? FOR UPDATE",
    "SELECT * FROM t WHERE a >= -3 AND b <> 'x''y' LOCK IN SHARE MODE;",
    "INSERT IGNORE INTO t (a, b) VALUES (?, 'b') ON DUPLICATE KEY UPDATE b = VALUES(b), c = ?",
    "REPLACE INTO t (a) VALUES (1)",
    "INSERT INTO t (a, b) SELECT ?, ? FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM t WHERE a = ? AND b != 2)",
    "UPDATE t SET a = ?, b = 'c' WHERE id = ? AND version = ?",
    "DELETE FROM `t` WHERE `k` = ?",
    "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
    "START TRANSACTION",
    "ROLLBACK WORK",
};

}  // namespace

TEST_CASE("every statement the totality tests mutate parses", "[sql]") {
  for (const std::string& text : kValid) CHECK_NOTHROW(sql::prepare(text));
}

TEST_CASE("random bytes never crash the parser", "[sql]") {
  std::mt19937_64 random(20240601);
  for (int i = 0; i < 20000; ++i) {
    std::string text(random() % 120, '\0');
    for (char& c : text) c = static_cast<char>(random() % 256);
    parse_any(text);
  }
}

TEST_CASE("random SQL words never crash the parser", "[sql]") {
  const std::vector<std::string> words = {
      "SELECT", "INSERT", "REPLACE", "UPDATE", "DELETE", "INTO", "FROM", "WHERE", "AND", "OR", "NOT", "EXISTS",
      "VALUES", "SET", "ON", "DUPLICATE", "KEY", "UNIQUE", "INDEX", "PRIMARY", "CREATE", "TABLE", "BIGINT", "INT",
      "VARCHAR", "AUTO_INCREMENT", "DEFAULT", "NULL", "FOR", "SHARE", "LOCK", "IN", "MODE", "DUAL", "IGNORE", "id",
      "a", "t", "`b`", "'s'", "'", "`", "1", "-2", "?", "(", ")", ",", ";", "=", "<", ">=", "<>", "*", "BEGIN",
      "COMMIT", "ROLLBACK", "WORK", "START", "TRANSACTION", "SESSION", "ISOLATION", "LEVEL", "READ", "COMMITTED",
      "REPEATABLE", "COMMENT", "ENGINE", "InnoDB", "TEXT", "DATETIME", "UNSIGNED", "SERIALIZABLE", "UNCOMMITTED"};
  std::mt19937_64 random(7);
  for (int i = 0; i < 50000; ++i) {
    std::string text;
    const std::size_t n = random() % 25;
    for (std::size_t k = 0; k < n; ++k) text += words[random() % words.size()] + (random() % 4 ? " " : "");
    parse_any(text);
  }
}

TEST_CASE("mutated statements never crash the parser", "[sql]") {
  std::mt19937_64 random(11);
  for (int i = 0; i < 50000; ++i) {
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

// --- ALTER TABLE ---------------------------------------------------------------------------------

TEST_CASE("ALTER TABLE ADD [UNIQUE] INDEX and DROP INDEX parse into add_index and drop_index, and write back as SQL",
          "[sql][ddl]") {
  // The online ALTER of docs/sql.md ("Online ALTER"), in MySQL's spellings.
  Statement s = bound("ALTER TABLE t_account ADD UNIQUE INDEX uk_open_id (open_id)");
  CHECK(s.kind == Statement::Kind::add_index);
  CHECK(s.table == "t_account");
  CHECK(s.index == "uk_open_id");
  CHECK(s.column == "open_id");
  CHECK(s.unique);
  CHECK(db::to_string(s) == "ALTER TABLE t_account ADD UNIQUE INDEX uk_open_id (open_id)");
  CHECK(describe(bound(db::to_string(s))) == describe(s));
  for (const char* text : {"alter table t add unique key uk (k)", "ALTER TABLE `t` ADD UNIQUE uk (`k`);",
                           "ALTER TABLE t ADD UNIQUE INDEX uk (k), ALGORITHM=INPLACE, LOCK=NONE",
                           "ALTER TABLE t ADD UNIQUE INDEX uk (k), LOCK = NONE, ALGORITHM = DEFAULT"}) {
    INFO(text);
    CHECK(describe(bound(text)) == describe(bound("ALTER TABLE t ADD UNIQUE INDEX uk (k)")));
  }
  s = bound("ALTER TABLE t ADD KEY ik (k)");
  CHECK(s.kind == Statement::Kind::add_index);
  CHECK_FALSE(s.unique);
  CHECK(db::to_string(s) == "ALTER TABLE t ADD INDEX ik (k)");
  CHECK(bound("ALTER TABLE t ADD INDEX (k)").index == "k");  // unnamed: the column's name, as MySQL names it
  s = bound("ALTER TABLE t DROP KEY uk");
  CHECK(s.kind == Statement::Kind::drop_index);
  CHECK(s.index == "uk");
  CHECK(db::to_string(s) == "ALTER TABLE t DROP INDEX uk");
  CHECK(describe(bound(db::to_string(s))) == describe(s));
}

TEST_CASE("an ALTER TABLE the model does not run is refused with 1064 naming the ALTERs it runs", "[sql][ddl]") {
  const std::string alters = "ADD [UNIQUE] INDEX name (column, ...) or DROP INDEX name (the ALTER TABLE the model runs)";
  sql::Error e = error_of("ALTER TABLE t ADD c INT");
  CHECK(e.position() == 18);
  CHECK(e.expected() == alters);
  CHECK(std::string(e.what()) == "1064 You have an error in your SQL syntax near 'c INT' at position 18: expected " + alters);
  CHECK(error_of("ALTER TABLE t DROP COLUMN c").expected() == alters);
  CHECK(error_of("ALTER TABLE t RENAME TO u").expected() == alters);
  CHECK(error_of("ALTER TABLE t ADD INDEX ik (k), ALGORITHM=COPY").expected() ==
        "INPLACE or DEFAULT (ALGORITHM=COPY and INSTANT are not modelled)");
  CHECK(error_of("ALTER TABLE t ADD INDEX ik (k), LOCK=SHARED").expected() ==
        "NONE or DEFAULT (LOCK=SHARED and EXCLUSIVE are not modelled)");
  CHECK(error_of("ALTER TABLE t ADD INDEX ik (k), ADD INDEX j (c)").expected() ==
        "ALGORITHM=INPLACE or LOCK=NONE (one change per ALTER TABLE in the model)");
  CHECK(error_of("ALTER TABLE t DROP INDEX uk extra").expected() ==
        ", ALGORITHM=INPLACE, LOCK=NONE or the end of the statement");
  CHECK(std::string(sql::Error::supported()).find("ALTER TABLE ... ADD|DROP INDEX") != std::string::npos);
}

TEST_CASE("ADD UNIQUE INDEX on a CREATE TABLE without an index makes its column the key column, on duplicates it fails "
          "at once naming the smallest",
          "[sql][ddl]") {
  // Pins docs/sql.md, Online ALTER (conformance alter-unique-on-duplicates): on a table holding duplicates it fails
  // at once with 1062 naming the smallest duplicated value, table unchanged; afterwards (no index) duplicates still
  // go in.
  db::Database database;
  database.create_table(*sql::prepare("CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, k VARCHAR(8), n INT)").create);
  for (const char* k : {"c", "b", "c", "a", "b"}) database.load_row("t", {{"k", std::string(k)}});
  db::Result failed, plain, duplicate;
  test::run_alone([&] {
    const auto session = database.open_session(db::Isolation::repeatable_read, "test");
    failed = database.execute(session, bound("ALTER TABLE t ADD UNIQUE INDEX uk (k)"));
    plain = database.execute(session, bound("ALTER TABLE t ADD INDEX ik (k)"));
    duplicate = database.execute(session, bound("INSERT INTO t (k) VALUES ('a')"));
  });
  CHECK(failed.code == db::Code::duplicate_key);
  CHECK(failed.message == "Duplicate entry 'b' for key 'uk'");
  CHECK(plain.ok());
  CHECK(duplicate.ok());
  CHECK(database.committed_rows("t").size() == 6);
}

TEST_CASE("bytes that are not UTF-8 and NUL bytes are refused at their position, written as \\xNN in the message", "[sql]") {
  sql::Error e = error_of("SELECT * FROM t WHERE k = '\xff\xfe'");
  CHECK(e.position() == 27);
  CHECK(e.expected() == "UTF-8 text");
  CHECK(std::string(e.what()).find("near '\\xff\\xfe''") != std::string::npos);
  e = error_of(std::string("SELECT 1\0", 9));
  CHECK(e.position() == 8);
  CHECK(e.expected() == "a statement without NUL bytes");
  CHECK(error_of("SELECT * FROM t WHERE k = '\xed\xa0\x80'").expected() == "UTF-8 text");  // a surrogate
  CHECK(sql::prepare("SELECT * FROM t WHERE k = '\xc3\xa9\xf0\x9f\x98\x80'").statement.where.size() == 1);
}

TEST_CASE("ORDER BY, LIMIT and a locking read's NOWAIT or SKIP LOCKED are parsed where MariaDB takes them", "[sql]") {
  Statement s = bound("SELECT id FROM jobs WHERE status = 0 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED");
  REQUIRE(s.more().order_by.size() == 1);
  CHECK(s.more().order_by[0] == std::pair<std::string, bool>{"id", false});
  CHECK(s.limit == 1);
  CHECK(s.on_locked == Statement::OnLocked::skip);
  CHECK(s.lock == ReadLock::update);
  s = bound("SELECT * FROM t ORDER BY v DESC, k ASC LIMIT 5, 10 LOCK IN SHARE MODE NOWAIT");
  CHECK(s.more().order_by == std::vector<std::pair<std::string, bool>>{{"v", true}, {"k", false}});
  CHECK(s.offset == 5);
  CHECK(s.limit == 10);
  CHECK(s.on_locked == Statement::OnLocked::fail);
  CHECK(bound("SELECT * FROM t LIMIT 3 OFFSET 2").offset == 2);
  CHECK(bound("UPDATE t SET v = 1 ORDER BY id DESC LIMIT 1").limit == 1);
  CHECK(bound("DELETE FROM t WHERE v < 3 ORDER BY v LIMIT 2").more().order_by.size() == 1);
  CHECK(error_of("DELETE FROM t LIMIT 1, 2").expected() == "the end of the statement");
  CHECK(error_of("SELECT * FROM t FOR UPDATE WAIT 3").expected() ==
        "NOWAIT, SKIP LOCKED or the end of the statement (WAIT n is not modelled: SET innodb_lock_wait_timeout)");
  CHECK(error_of("SELECT * FROM t LIMIT -1").expected() == "a row count (a number from 0)");
}

TEST_CASE("a SELECT records the columns its list reads, which an index holding them answers alone, SELECT * reads whole "
          "rows",
          "[sql]") {
  using Read = std::optional<std::vector<std::string>>;
  CHECK(bound("SELECT id, u FROM t WHERE u = 1 FOR UPDATE").more().reads_only == Read{{"id", "u"}});
  CHECK(bound("SELECT * FROM t WHERE u = 1").more().reads_only == std::nullopt);
  CHECK(bound("SELECT COUNT(*) FROM t WHERE u = 1").more().reads_only == Read{std::vector<std::string>{}});
  CHECK(bound("SELECT 1 FROM t WHERE u = 1").more().reads_only == Read{std::vector<std::string>{}});
  CHECK(bound("SELECT u - 1 AS w FROM t").more().reads_only == Read{{"u"}});
  CHECK(bound("SELECT MAX(v) FROM t GROUP BY u").more().reads_only == Read{{"u", "v"}});
}

TEST_CASE("a statement is shown as written, its ?s filled with the values bound to them and its whitespace one space", "[sql]") {
  const auto p = sql::prepare("SELECT  id FROM t_account\n   WHERE open_id = ?  FOR UPDATE;");
  CHECK(sql::as_written(sql::bind(p, {Value{std::string("openid:7")}})) == "SELECT id FROM t_account WHERE open_id = 'openid:7' FOR UPDATE");
  // Columns in the order written, not the model's; a ? inside a string is the string's.
  const auto insert = sql::prepare("INSERT INTO t_account (open_id, device) VALUES (?, 'what?')");
  CHECK(sql::as_written(sql::bind(insert, {Value{std::string("k")}})) == "INSERT INTO t_account (open_id, device) VALUES ('k', 'what?')");
  const auto update = sql::prepare("UPDATE stock SET n = n - ? WHERE id = ? AND n >= ?");
  CHECK(sql::as_written(sql::bind(update, {Value{std::int64_t{1}}, Value{std::int64_t{7}}, Value{std::int64_t{1}}})) ==
        "UPDATE stock SET n = n - 1 WHERE id = 7 AND n >= 1");
  // A statement built in code has no text: it is rendered.
  Statement built;
  built.kind = Statement::Kind::commit;
  CHECK(sql::as_written(built) == db::to_string(built));
}
