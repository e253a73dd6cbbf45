// MariaDB's SQL parser (models/db/innodb/sql_parser.hpp): INSERT, REPLACE, UPDATE, DELETE and
// SET.

#include "models/db/innodb/sql_parser.hpp"

namespace models::db::sql::mariadb {

void Parser::insert() {
  Statement& s = out_.statement;
  s.kind = Statement::Kind::insert;
  const bool replace = accept("REPLACE");
  if (replace) {
    s.on_duplicate = OnDuplicate::replace;
  } else {
    advance();  // INSERT
    if (accept("IGNORE")) s.on_duplicate = OnDuplicate::ignore;
  }
  accept("INTO");
  s.table = name("a table name");
  if (accept("SET")) {  // INSERT ... SET c = v, ...: one row, as VALUES would give it
    std::vector<std::string> columns;
    do {
      check_count(columns.size(), "columns");
      const std::size_t at = token_.position;
      std::string column = name("a column name");
      if (s.values.count(column)) fail_at(at, "a column not assigned already");
      expect_symbol("=");
      s.values[column] = value(Param{.in = Param::In::values, .column = column});
      columns.push_back(std::move(column));
    } while (accept_symbol(","));
    rest_of_insert(columns, replace);
    return;
  }
  expect_symbol("(", "the column list: (column, ...), or SET");
  const std::vector<std::string> columns = column_list();
  const std::size_t keyword_at = token_.position;
  if (accept("VALUES") || accept("VALUE")) {
    std::size_t row = 0;
    do {
      check_count(row, "rows");
      const std::size_t values_at = row == 0 ? keyword_at : token_.position;
      expect_symbol("(");
      std::vector<Value> values;
      if (!is_symbol(")")) {
        do {
          check_count(values.size(), "values");
          values.push_back(value(Param{.in = Param::In::values, .column = column_at(columns, values.size()), .row = row}));
        } while (accept_symbol(","));
      }
      expect_symbol(")", ", or )");
      fill_values(columns, std::move(values), values_at, row);
      ++row;
    } while (accept_symbol(","));
    rest_of_insert(columns, replace);
  } else if (!replace && is("SELECT")) {
    insert_select(columns);
  } else {
    fail(replace ? "VALUES" : "VALUES or SELECT");
  }
}

// The values of row `row` (0: Statement::values, n: more_rows[n - 1]).
void Parser::fill_values(const std::vector<std::string>& columns, std::vector<Value> values, std::size_t at, std::size_t row) {
  if (values.size() != columns.size())
    fail_at(at, "as many values as columns (" + count_of(columns.size(), "column", "columns") + ", " +
                    count_of(values.size(), "value", "values") + ")");
  Statement& s = out_.statement;
  Values& into = row == 0 ? s.values : s.edit().more_rows.emplace_back();
  for (std::size_t i = 0; i < columns.size(); ++i) into[columns[i]] = std::move(values[i]);
}

// After an INSERT's rows: ON DUPLICATE KEY UPDATE, then the end.
void Parser::rest_of_insert(const std::vector<std::string>& columns, bool replace) {
  if (!replace && accept("ON")) {
    on_duplicate_key_update(columns);
    finish(", or ");
  } else {
    finish(replace ? ", or " : ", ON DUPLICATE KEY UPDATE or ");
  }
}

// ON has been taken: DUPLICATE KEY UPDATE c = expression, ...
void Parser::on_duplicate_key_update(const std::vector<std::string>& columns) {
  Statement& s = out_.statement;
  expect("DUPLICATE");
  expect("KEY");
  expect("UPDATE");
  s.on_duplicate = OnDuplicate::update;
  assignments(s.on_update, Param::In::on_update, columns);
}

// INSERT INTO t (cols) SELECT v, ... [FROM DUAL] [WHERE NOT EXISTS (SELECT ... FROM t [WHERE ...])]
void Parser::insert_select(const std::vector<std::string>& columns) {
  Statement& s = out_.statement;
  s.kind = Statement::Kind::insert_if_absent;
  const std::size_t select_at = token_.position;
  advance();  // SELECT
  std::vector<Value> values;
  do {
    check_count(values.size(), "values");
    values.push_back(value(Param{.in = Param::In::values, .column = column_at(columns, values.size())}));
  } while (accept_symbol(","));
  fill_values(columns, std::move(values), select_at);
  const bool from_dual = accept("FROM");
  if (from_dual) expect("DUAL");
  if (!accept("WHERE")) {  // one row of values, inserted as a bulk insert
    s.kind = Statement::Kind::insert;
    s.bulk = true;
    finish(from_dual ? "WHERE NOT EXISTS (...) or " : ", FROM DUAL, WHERE NOT EXISTS (...) or ");
    return;
  }
  expect("NOT");
  expect("EXISTS");
  expect_symbol("(");
  expect("SELECT");
  select_list();  // what the subquery selects does not matter, only whether a row is there
  expect("FROM");
  const std::size_t table_at = token_.position;
  if (name("a table name") != s.table) fail_at(table_at, s.table + " (NOT EXISTS checks the table the INSERT writes)");
  const bool where = accept("WHERE");
  if (where) where_clause();
  expect_symbol(")", where ? "AND, OR or )" : "WHERE or )");
  finish("");
}

void Parser::update() {
  Statement& s = out_.statement;
  s.kind = Statement::Kind::update;
  s.table = name("a table name");
  expect("SET");
  assignments(s.values, Param::In::values, {});
  where_order_limit(", WHERE, ORDER BY, LIMIT or ");
}

void Parser::remove() {
  Statement& s = out_.statement;
  s.kind = Statement::Kind::remove;
  expect("FROM");
  s.table = name("a table name");
  where_order_limit("WHERE, ORDER BY, LIMIT or ");
}

// The rest of an UPDATE or DELETE: [WHERE expr] [ORDER BY ...] [LIMIT n], then its end; `more`:
// what else could follow what comes before the WHERE, for the message where none of it does.
void Parser::where_order_limit(std::string more) {
  if (accept("WHERE")) {
    where_clause();
    more = "AND, OR, ORDER BY, LIMIT or ";
  }
  if (order_by()) more = ", LIMIT or ";
  if (limit(false)) more.clear();
  finish(more);
}

// SET has been taken: [SESSION] TRANSACTION ISOLATION LEVEL ..., or
// [SESSION] innodb_lock_wait_timeout = seconds.
void Parser::set_isolation() {
  Statement& s = out_.statement;
  s.kind = Statement::Kind::set_isolation;
  const bool session = accept("SESSION") || accept("LOCAL");
  if (accept_symbol("@")) {  // @@session.innodb_lock_wait_timeout, @@innodb_lock_wait_timeout
    expect_symbol("@");
    if (accept("SESSION") || accept("LOCAL")) expect_symbol(".");
  }
  if (is("innodb_lock_wait_timeout")) {
    advance();
    expect_symbol("=");
    if (token_.kind != Token::Kind::number || token_.number < 1 || token_.number > 1073741824)
      fail("a number of seconds from 1 to 1073741824");
    s.kind = Statement::Kind::set_lock_wait_timeout;
    s.seconds = token_.number;
    advance();
    finish("");
    return;
  }
  if (!session && !is("TRANSACTION")) unsupported();
  s.next_transaction_only = !session;
  expect("TRANSACTION");
  expect("ISOLATION");
  expect("LEVEL");
  if (accept("READ")) {
    if (accept("UNCOMMITTED")) {
      s.isolation = Isolation::read_uncommitted;
    } else {
      expect("COMMITTED");
      s.isolation = Isolation::read_committed;
    }
  } else if (accept("REPEATABLE")) {
    expect("READ");
    s.isolation = Isolation::repeatable_read;
  } else if (accept("SERIALIZABLE")) {
    s.isolation = Isolation::serializable;
  } else {
    fail("READ UNCOMMITTED, READ COMMITTED, REPEATABLE READ or SERIALIZABLE");
  }
  finish("");
}

}  // namespace models::db::sql::mariadb
