#pragma once
// PostgreSQL's SQL for the simulated database: each statement is parsed by PostgreSQL 15's
// own parser (libpg_query) and its parse tree turned into the typed statements models/db
// runs, as models/db/sql.hpp does for MariaDB's. What the parser rejects is PostgreSQL's
// 42601 with the position and the parser's message; what it parses but the model does not
// run is 0A000 naming the construct (docs/sql.md, "PostgreSQL").
//
// Supported (identifiers folded to lower case as PostgreSQL folds them; `$1`, `$2`, ... are
// parameters, bound in their numbers' order, each number used once and none skipped):
//   CREATE TABLE t (id SERIAL | BIGSERIAL | SMALLSERIAL | INT|BIGINT|SMALLINT [GENERATED ... AS IDENTITY] PRIMARY KEY,
//                   col TYPE [NULL | NOT NULL] [DEFAULT literal] [[CONSTRAINT name] UNIQUE], ...
//                   [, PRIMARY KEY (id)] [, [CONSTRAINT name] UNIQUE (col)])
//          TYPE: the integer types (default 0), TEXT, VARCHAR(n), CHAR(n) (default ''), BOOLEAN
//          (0 or 1, default 0), TIMESTAMP [WITH TIME ZONE] (integers in the model, default 0). A
//          column without NOT NULL may hold NULL, its default NULL unless DEFAULT gives
//          another; a NOT NULL one without a DEFAULT takes its type's. The unique
//          column is the table's key column, its index named "<table>_<col>_key" unless named.
//   CREATE [UNIQUE] INDEX [CONCURRENTLY] [name] ON t (col): an online add_index, as the model
//          builds every index, named "<table>_<col>_idx" unless named
//   INSERT INTO t (cols) VALUES (v, ...) [, (v, ...) ...]  (v: a literal, `$n`, DEFAULT or a constant expression)
//          [ON CONFLICT [(col)] DO NOTHING | DO UPDATE SET c = expr, ... [WHERE expr]] [RETURNING cols | *]
//   SELECT cols | * | 1 | count(*) | count|max|min|sum(col) FROM t [[AS] alias] [WHERE expr] [ORDER BY col [ASC|DESC], ...]
//          [LIMIT n] [OFFSET n] [FOR UPDATE | FOR NO KEY UPDATE | FOR SHARE | FOR KEY SHARE [NOWAIT | SKIP LOCKED]]
//   SELECT pg_advisory_lock(k) | pg_try_advisory_lock(k) | pg_advisory_unlock(k) | pg_advisory_unlock_all()
//          and their _xact and _shared forms, k a bigint literal or `$n` (Statement::values["key"])
//   UPDATE t SET c = expr, ... [WHERE expr] [RETURNING ...];  DELETE FROM t [WHERE expr] [RETURNING ...]
//   BEGIN | START TRANSACTION [ISOLATION LEVEL ...] | COMMIT | END | ROLLBACK | ABORT
//   SAVEPOINT name | ROLLBACK TO [SAVEPOINT] name | RELEASE [SAVEPOINT] name
//   SET TRANSACTION ISOLATION LEVEL ... | SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL ...
//          | SET default_transaction_isolation = 'level'
//   SET lock_timeout | statement_timeout | deadlock_timeout = n | 'n ms' | 'n s' | ... (PostgreSQL's
//          units us, ms, s, min, h, d; a bare number is milliseconds)
// Expressions: the grammar of models/db/expr.hpp (comparisons, arithmetic with `/` the integer
// division, AND / OR / NOT, IN, BETWEEN, LIKE, IS [NOT] NULL) at most 32 levels deep, columns as
// `c`, `t.c` or, in DO UPDATE, `excluded.c`, and casts (`'1'::int`), which the model leaves out.
// A WHERE's top-level `column op value` terms are Statement::where, its other terms
// StatementExtra::filter; DO UPDATE's assignments are all StatementExtra::assign.
// Not run, 0A000: joins, subqueries, WITH, functions, INSERT without a column list or from a
// SELECT, NULLS NOT DISTINCT, decimals, PREPARE TRANSACTION, READ ONLY, SET LOCAL, RESET, other
// settings and statements. The bounds are sql.hpp's (kMaxText bytes; kMaxItems columns, values,
// rows, conditions and parameters); a text nested far past what the model runs is refused
// before libpg_query parses it, so the parse (which recurses over the tree) stays within a
// script's 1 MiB stack.

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include "models/db/sql.hpp"

namespace models::db::pg {

/// A statement PostgreSQL's parser rejects (sqlstate "42601") or the model does not run
/// ("0A000"). what(): "42601 syntax error at or near \"FORM\" at position 9" or
/// "0A000 PREPARE TRANSACTION is not modelled (docs/sql.md, PostgreSQL) at position 0". Where PostgreSQL
/// itself refuses a parsed statement, its sqlstate and message: 22021 (bytes that are not
/// UTF-8, a NUL), 22023 (a setting's value), 42P01 (a column of another table), 42701 and 42P16
/// (a column or primary key given twice), 42703 (no such column), 42P02 ($0), 42P18 (a `$n`
/// skipped), 22P02 and 42804 (a default of the wrong type), 22003 (a constant out of BIGINT's
/// range), 2201W / 2201X (a negative LIMIT / OFFSET), 42883 (an advisory function's arity).
class Error : public std::runtime_error {
 public:
  Error(std::string sqlstate, std::size_t position, std::string message);
  const std::string& sqlstate() const { return sqlstate_; }
  /// 0-based, in bytes, of where the parser stopped or the construct starts.
  std::size_t position() const { return position_; }
  const std::string& message() const { return message_; }

 private:
  std::string sqlstate_;
  std::size_t position_;
  std::string message_;
};

/// Parses one statement. Throws Error. The result binds with sql::bind (its `$n` at
/// Prepared::params[n - 1]); sql::as_written shows it with each `$n` filled in.
sql::Prepared prepare(std::string_view text);

}  // namespace models::db::pg
