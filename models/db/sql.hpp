#pragma once
// SQL text for the simulated database: the statements services write and models/db runs,
// parsed once into prepared statements with literals or `?` parameters.
//
// Supported (keywords in any case; identifiers optionally in backquotes; strings in single
// quotes with '' and backslash escapes; 64-bit integers, optionally negative):
//   SELECT cols | * | 1 FROM t [WHERE expr] [FOR UPDATE | LOCK IN SHARE MODE]
//   SELECT expr [[AS] name], ... [FROM DUAL], without a table: its expressions may also call
//     GET_LOCK(name, seconds), RELEASE_LOCK(name), RELEASE_ALL_LOCKS(), IS_FREE_LOCK(name),
//     IS_USED_LOCK(name) and CONNECTION_ID() (models/db/innodb/user_locks.hpp)
//   INSERT [IGNORE] [INTO] t (cols) VALUES (v, ...) [, (v, ...) ...] [ON DUPLICATE KEY UPDATE c = expr, ...]
//   INSERT [IGNORE] [INTO] t SET c = v, ... [ON DUPLICATE KEY UPDATE c = expr, ...]
//   REPLACE [INTO] t (cols) VALUES (v, ...) [, (v, ...) ...]
//   INSERT [IGNORE] [INTO] t (cols) SELECT v, ... [FROM DUAL] WHERE NOT EXISTS (SELECT ... FROM t [WHERE expr])
//   UPDATE t SET c = expr [, ...] [WHERE expr]
//   DELETE FROM t [WHERE expr]
//   BEGIN [WORK] | START TRANSACTION [WITH CONSISTENT SNAPSHOT] | COMMIT [WORK] | ROLLBACK [WORK]
//   SET [SESSION] TRANSACTION ISOLATION LEVEL READ UNCOMMITTED | READ COMMITTED | REPEATABLE READ | SERIALIZABLE
//   SET [SESSION] innodb_lock_wait_timeout = seconds
//   CREATE TABLE t (id BIGINT|INT [UNSIGNED] [NOT NULL] [AUTO_INCREMENT] [PRIMARY KEY], col TYPE [attrs], ...
//                   [, PRIMARY KEY (id)] [, UNIQUE [KEY|INDEX] [name] (col) | KEY|INDEX [name] (col)]) [options]
//   ALTER TABLE t ADD UNIQUE [INDEX|KEY] [name] (col) | ADD INDEX|KEY [name] (col) | DROP INDEX|KEY name
//                 [, ALGORITHM=INPLACE|DEFAULT] [, LOCK=NONE|DEFAULT]
// where expr is MySQL's expression grammar (models/db/expr.hpp: arithmetic, comparisons, AND,
// OR, NOT, IN, BETWEEN, LIKE, IS NULL, NULL, `?`, columns, VALUES(col)), at most 32 levels
// deep. A WHERE's top-level `column op value` terms become Statement::where (where the model
// finds index paths), the other terms StatementExtra::filter; assignments that compute go to
// StatementExtra::assign, their `?`s to StatementExtra::args (Statement::extra).
// CREATE TABLE: TYPE is BIGINT, INT, SMALLINT, TINYINT (optionally (n) and UNSIGNED),
// DATETIME or TIMESTAMP (integers in the model, default 0), VARCHAR(n), CHAR[(n)] or TEXT
// (default ''); attrs are NOT NULL, NULL, DEFAULT literal | NULL, UNIQUE [KEY] and
// COMMENT 'x'. Table options (`[DEFAULT] name [=] value`, such as ENGINE=InnoDB or DEFAULT
// CHARSET=utf8mb4) are accepted and ignored; AUTO_INCREMENT=n does not move the first id.
// A table has an integer primary key `id` and secondary indexes (the first declared is its key
// index, the others TableSchema::indexes), as the model does (models/db/database.hpp). A column without NOT NULL may hold NULL, its default
// NULL unless DEFAULT gives another. A trailing `;` is allowed; there are no comments,
// functions or joins. ALTER TABLE's ALGORITHM and LOCK options are accepted and
// ignored: the model runs every ALTER online, as MariaDB's INPLACE with LOCK=NONE
// (models/db/database.hpp); ALGORITHM=COPY and other changes are refused. A statement is at
// most 64 KiB with at most 1000 columns, values, rows, conditions and `?`s each.

#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "models/db/database.hpp"

namespace models::db::sql {

/// A statement's bounds, MariaDB's and PostgreSQL's front ends alike (models/db/postgres/sql.hpp):
/// at most kMaxText bytes, and at most kMaxItems columns, values, rows, conditions and
/// parameters each.
inline constexpr std::size_t kMaxText = 65536;
inline constexpr std::size_t kMaxItems = 1000;

/// The length of the valid UTF-8 sequence at the start of `s`, 0 for none (an invalid byte).
std::size_t utf8_length(std::string_view s);
/// `text` for a one-line message: control characters and bytes that are not UTF-8 as \xNN.
std::string escaped(std::string_view text);

/// A statement that is not valid SQL, or not one the model runs: MySQL's 1064 with the
/// position (0-based, in bytes) of the first token it could not take, and what it expected.
/// what(): "1064 You have an error in your SQL syntax near 'FORM t' at position 9: expected
/// FROM". `supported` lists the statements the model runs, for a message's tail.
class Error : public std::runtime_error {
 public:
  Error(std::size_t position, std::string near, std::string expected);
  std::size_t position() const { return position_; }
  const std::string& near() const { return near_; }
  const std::string& expected() const { return expected_; }
  static const char* supported();

 private:
  std::size_t position_;
  std::string near_, expected_;
};

/// Where a `?` goes when the statement is bound.
struct Param {
  enum class In { where, values, on_update, args } in = In::where;
  std::size_t where_index = 0;  // In::where: the condition's index in Statement::where
  std::string column{};         // In::values / In::on_update: the column
  std::size_t row = 0;          // In::values: 0 for Statement::values, n for more_rows[n - 1]
  std::size_t arg = 0;          // In::args: the slot in StatementExtra::args (a `?` inside an expression)
};

/// A parsed statement: a Statement with its `?` left to bind, or a table definition.
struct Prepared {
  std::string text;  // as written
  Statement statement{};
  std::vector<Param> params{};  // in the order of the `?`s
  /// SELECT's column list, in order; empty: `*` (every column) or a number.
  std::vector<std::string> columns{};
  /// SELECT 1: the number, which is what each row found reads as (one column, named after it).
  std::optional<std::int64_t> constant{};
  /// CREATE TABLE: the table (statement is unused then). The indexed column is key_column
  /// (not in `columns`); column_order is id, then the other columns as listed.
  std::optional<TableSchema> create{};
  /// ON DUPLICATE KEY UPDATE c = VALUES(c): the columns whose new value is the inserted one
  /// (bind() copies it into Statement::on_update).
  std::vector<std::string> from_values{};
};

/// The text a statement was parsed from, and where its `?`s went.
struct Written {
  std::string text;
  std::vector<Param> params;
  /// PostgreSQL's `$1`, `$2`, ... (models/db/postgres/sql.hpp), params[n - 1] being `$n`'s, rather
  /// than MySQL's `?`s in the order of the text.
  bool numbered = false;
};

/// Parses one statement. Throws Error.
Prepared prepare(std::string_view text);

/// The statement with its `?`s replaced by `args`, in order. Throws sim::UsageError when the
/// count differs, and for a CREATE TABLE (which goes to Server::create_table as `create`).
Statement bind(const Prepared& prepared, const std::vector<Value>& args);

/// Where pinned() keeps what it pins.
using Pins = std::vector<std::shared_ptr<const void>>;
/// `prepared`, its parts that every binding shares (Statement::extra and ::written, and what they
/// and a table's partial indexes point to) kept alive in `keeper` and shared without a
/// reference count: binding it then writes nothing outside the binding, which a trial restored
/// in place needs of a statement it did not make (sim/restorable.hpp). For a statement that
/// lives no longer than `keeper`; without one, for good (a strategy's constant).
Prepared pinned(Prepared prepared, Pins* keeper = nullptr);
/// While alive on a thread, the statements prepared there are pinned into `keeper`: a scenario's,
/// while it loads, whose statements then live as long as it does.
class PinWhileLoading {
 public:
  explicit PinWhileLoading(Pins& keeper);
  ~PinWhileLoading();
  PinWhileLoading(const PinWhileLoading&) = delete;
  PinWhileLoading& operator=(const PinWhileLoading&) = delete;

 private:
  Pins* outer_;
};
/// `prepared`, pinned into the keeper of the thread's PinWhileLoading if one is alive.
Prepared pinned_while_loading(Prepared prepared);

/// A statement as its user wrote it, for reports: the text it was parsed from with each `?`
/// (or, Written::numbered, each `$n`) replaced by the value bound to it and each run of
/// whitespace one space; a statement built in code (no text) as to_string(Statement) renders it.
std::string as_written(const Statement& statement, Engine engine = Engine::mariadb);

}  // namespace models::db::sql
