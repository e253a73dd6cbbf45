// MariaDB's SQL parser (models/db/innodb/sql_parser.hpp): SELECT, its list, aggregates, GROUP
// BY, ORDER BY, LIMIT and locking clauses.

#include "models/db/innodb/sql_parser.hpp"

namespace models::db::sql::mariadb {

// SELECT's column list: `*`, an integer alone (SELECT 1 FROM t), or columns: names, one
// aggregate, and computed columns (an expression, or a column under an alias: `n - 1 AS
// left`), each kept in Prepared::columns under the name the server gives it.
std::vector<std::string> Parser::select_list() {
  const bool outer = out_.statement.kind == Statement::Kind::select;  // not a NOT EXISTS subquery's
  std::vector<std::string> columns;
  if (accept_symbol("*")) return columns;
  if (token_.kind == Token::Kind::number && next_is_word("FROM")) {
    if (outer) out_.constant = token_.number;
    advance();
    return columns;
  }
  bool aggregated = false;
  do {
    check_count(columns.size(), "columns");
    const std::size_t at = token_.position;
    if (const auto aggregate = aggregate_call()) {
      if (aggregated) fail_at(at, "a column name (a statement has one aggregate)");
      aggregated = true;
      std::string alias;
      if (accept("AS") || (token_.kind == Token::Kind::word && !is("FROM")) || token_.kind == Token::Kind::quoted_word)
        alias = name("an alias");
      use_aggregate(*aggregate, at, alias);
      StatementExtra e;
      e.aggregate = aggregate->first;
      e.aggregate_column = aggregate->second;
      e.aggregate_alias = std::move(alias);
      columns.push_back(models::db::detail::aggregate_name(e, Engine::mariadb));
      continue;
    }
    if (is("FROM")) fail("a column name, *, 1 or COUNT(*)");
    if (!plain_column_ahead()) {
      Expr e = expression();
      std::optional<std::string> as = alias();
      if (!as && e.kind == Expr::Kind::column) {  // `t.k`: the column itself, named k
        columns.push_back(e.column);
        listed_.emplace_back(at, e.column);
        continue;
      }
      std::string label = computed_name(e, at, std::move(as), columns);
      columns.push_back(label);
      if (outer) {
        if (out_.statement.more().computed.empty()) computed_at_ = at;
        out_.statement.edit().computed.emplace_back(std::move(label), std::move(e));
      }
      continue;
    }
    columns.push_back(name("a column name, *, 1 or COUNT(*)"));
    listed_.emplace_back(at, columns.back());
  } while (accept_symbol(","));
  return columns;
}

// A column listed as itself: a name followed by `,`, FROM or the end of the statement.
bool Parser::plain_column_ahead() const {
  if (token_.kind != Token::Kind::quoted_word && (token_.kind != Token::Kind::word || reserved(token_.text))) return false;
  Lexer ahead = lexer_;
  const Token t = ahead.next();
  return t.kind == Token::Kind::end || (t.kind == Token::Kind::symbol && (t.text == "," || t.text == ";")) ||
         (t.kind == Token::Kind::word && iequals(t.text, "FROM"));
}

// COUNT(*), COUNT(1): every row; COUNT(col), MAX(col), MIN(col), SUM(col): the column's
// non-NULL values. nullopt where no aggregate starts here.
std::optional<std::pair<StatementExtra::Aggregate, std::string>> Parser::aggregate_call() {
  using A = StatementExtra::Aggregate;
  static constexpr std::pair<std::string_view, A> kAggregates[] = {{"COUNT", A::count}, {"MAX", A::max}, {"MIN", A::min}, {"SUM", A::sum}};
  for (const auto& [word, aggregate] : kAggregates) {
    if (!is(word) || !next_is_symbol("(")) continue;
    advance();
    advance();
    std::string column;
    if (aggregate != A::count) {
      column = name("a column name");
    } else if (!accept_symbol("*")) {
      if (token_.kind == Token::Kind::number) advance();
      else column = name("*, 1 or a column name");
    }
    expect_symbol(")");
    return std::pair(aggregate, std::move(column));
  }
  return std::nullopt;
}

// The SELECT's one aggregate, named `alias` (empty: as the server names it): the first place
// that names it (the select list, HAVING or ORDER BY) sets it, the others must name the same.
void Parser::use_aggregate(const std::pair<StatementExtra::Aggregate, std::string>& aggregate, std::size_t at, const std::string& alias) {
  Statement& s = out_.statement;
  if (s.kind != Statement::Kind::select) return;  // a NOT EXISTS subquery's: only whether a row is there matters
  if (s.count_rows) {
    if (s.more().aggregate != aggregate.first || s.more().aggregate_column != aggregate.second)
      fail_at(at, "the aggregate the statement names already (a statement has one aggregate)");
    return;
  }
  s.count_rows = true;
  if (aggregate.first != StatementExtra::Aggregate::count || !aggregate.second.empty() || !alias.empty()) {
    s.edit().aggregate = aggregate.first;
    s.edit().aggregate_column = aggregate.second;
    s.edit().aggregate_alias = alias;
  }
}

// In HAVING and a grouped ORDER BY: the aggregate, read as the column of its name in a
// group's row.
std::optional<Expr> Parser::aggregate_operand() {
  const std::size_t at = token_.position;
  const auto aggregate = aggregate_call();
  if (!aggregate) return std::nullopt;
  use_aggregate(*aggregate, at);
  return Expr{.kind = Expr::Kind::column, .column = models::db::detail::aggregate_name(out_.statement.more(), Engine::mariadb)};
}

// GROUP BY column, ... [HAVING condition]: the aggregate over each group (models/db/rows.hpp).
// A listed column must be grouped: a column beside an aggregate without GROUP BY, or outside
// it (MariaDB answers some row's value), is refused.
void Parser::group_by() {
  Statement& s = out_.statement;
  do {
    check_count(s.more().group_by.size(), "GROUP BY columns");
    std::string column = name("a column name");
    if (accept_symbol(".")) column = name("a column name");
    s.edit().group_by.push_back(std::move(column));
  } while (accept_symbol(","));
  if (accept("HAVING")) {
    having_ = true;
    Expr condition = expression();
    having_ = false;
    s.edit().having = std::make_shared<const Expr>(std::move(condition));
  }
}

// After the whole SELECT: its columns are grouped or aggregated. GROUP BY without an
// aggregate (and DISTINCT) is a row a group of its columns (StatementExtra::Aggregate::none).
void Parser::check_grouping() {
  Statement& s = out_.statement;
  const auto& grouped = s.more().group_by;
  if (!grouped.empty() && !s.count_rows) {
    s.count_rows = true;
    s.edit().aggregate = StatementExtra::Aggregate::none;
  }
  if (!s.count_rows) return;
  if (!s.more().computed.empty())
    fail_at(computed_at_, "a column name or the aggregate (a computed column beside an aggregate, GROUP BY or DISTINCT is not modelled)");
  for (const auto& [at, column] : listed_) {
    if (grouped.empty()) fail_at(at, "an aggregate alone, or GROUP BY " + column + " (a column beside an aggregate)");
    if (std::find(grouped.begin(), grouped.end(), column) == grouped.end())
      fail_at(at, "a column of GROUP BY's (" + column + " is neither grouped nor aggregated)");
  }
}

void Parser::select() {
  Statement& s = out_.statement;
  s.kind = Statement::Kind::select;
  if (!is_symbol("*") && !from_ahead()) return computed_select();
  const std::size_t distinct_at = token_.position;
  distinct_ = accept("DISTINCT");
  const bool whole_rows = is_symbol("*");
  out_.columns = select_list();
  if (distinct_) distinct_columns(distinct_at);
  expect("FROM");
  s.table = name("a table name");
  for (const char* join : {"JOIN", "INNER", "LEFT", "RIGHT", "CROSS", "NATURAL", "STRAIGHT_JOIN"})
    if (is(join)) fail("WHERE, ORDER BY, LIMIT, FOR UPDATE, LOCK IN SHARE MODE or the end of the statement (joins are not modelled)");
  if (is_symbol(",")) fail("WHERE, ORDER BY, LIMIT, FOR UPDATE, LOCK IN SHARE MODE or the end of the statement (joins are not modelled)");
  std::string more = "WHERE, GROUP BY, ORDER BY, LIMIT, FOR UPDATE, LOCK IN SHARE MODE or ";
  if (accept("WHERE")) {
    where_clause();
    more = "AND, OR, GROUP BY, ORDER BY, LIMIT, FOR UPDATE, LOCK IN SHARE MODE or ";
  }
  if (is("GROUP") && !s.more().group_by.empty()) fail("ORDER BY, LIMIT, FOR UPDATE, LOCK IN SHARE MODE or the end of the statement (DISTINCT with GROUP BY is not modelled)");
  if (accept("GROUP")) {
    expect("BY");
    group_by();
    more = "HAVING, ORDER BY, LIMIT, FOR UPDATE, LOCK IN SHARE MODE or ";
  }
  const bool grouped = !s.more().group_by.empty();
  if (order_by()) more = ", LIMIT, FOR UPDATE, LOCK IN SHARE MODE or ";
  const std::size_t limit_at = token_.position;
  if (limit(true)) more = "FOR UPDATE, LOCK IN SHARE MODE or ";
  if (grouped) {  // ORDER BY and LIMIT order and cut the groups (StatementExtra::group_order_by)
    s.edit().group_order_by = std::exchange(s.edit().order_by, {});
    s.edit().group_limit = std::exchange(s.limit, std::nullopt);
    s.edit().group_offset = std::exchange(s.offset, 0);
  }
  check_grouping();
  if (grouped && s.more().group_limit && (is("FOR") || is("LOCK")))
    fail_at(limit_at, "FOR UPDATE or LOCK IN SHARE MODE without LIMIT (a locking read with GROUP BY and LIMIT is not modelled)");
  if (accept("FOR")) {
    // MySQL 8.0's FOR SHARE is not MariaDB 10.11's: the server refuses it with 1064, and so
    // does the model (a scenario naming it is refused at load, with this hint).
    if (!accept("UPDATE")) fail(is("SHARE") ? "UPDATE (FOR SHARE is MySQL 8.0's; MariaDB 10.11 writes LOCK IN SHARE MODE)" : "UPDATE");
    s.lock = ReadLock::update;
    more = on_locked();
  } else if (accept("LOCK")) {
    expect("IN");
    expect("SHARE");
    expect("MODE");
    s.lock = ReadLock::share;
    more = on_locked();
  }
  if (!whole_rows) s.edit().reads_only = columns_read();
  finish(more);
}

// The columns a SELECT's list reads: those it lists, the aggregate's, the computed ones',
// and those it groups by.
std::vector<std::string> Parser::columns_read() const {
  const StatementExtra& more = out_.statement.more();
  std::vector<std::string> read = more.group_by;
  for (const auto& [at, column] : listed_) read.push_back(column);
  if (!more.aggregate_column.empty()) read.push_back(more.aggregate_column);
  for (const auto& [name, e] : more.computed) add_columns(e, read);
  return read;
}

void Parser::add_columns(const Expr& e, std::vector<std::string>& out) {
  if (e.kind == Expr::Kind::column) out.push_back(e.column);
  for (const Expr& a : e.args) add_columns(a, out);
}

// SELECT DISTINCT cols: GROUP BY those columns without an aggregate, a row for each
// combination of their values found (NULLs one). With an aggregate alone it changes nothing
// (one row); `DISTINCT *` and `DISTINCT 1` are refused.
void Parser::distinct_columns(std::size_t at) {
  Statement& s = out_.statement;
  if (s.count_rows) {
    if (!listed_.empty()) fail_at(listed_.front().first, "an aggregate alone (DISTINCT with an aggregate and a column is not modelled)");
    return;
  }
  if (out_.columns.empty()) fail_at(at, "SELECT DISTINCT with a list of columns (DISTINCT * and DISTINCT 1 are not modelled)");
  s.edit().group_by = out_.columns;
}

// Whether the statement reads a table: it names FROM (outside quotes), and not FROM DUAL.
bool Parser::from_ahead() const {
  Lexer ahead = lexer_;
  for (Token t = token_; t.kind != Token::Kind::end; t = ahead.next())
    if (t.kind == Token::Kind::word && iequals(t.text, "FROM")) {
      const Token table = ahead.next();
      return !(table.kind == Token::Kind::word && iequals(table.text, "DUAL"));
    }
  return false;
}

// SELECT expr [[AS] name], ... [FROM DUAL] without a table: `SELECT LAST_INSERT_ID()`,
// `SELECT ? + 1 AS n`. One row, its columns named as computed_name says. An expression may
// not read a column (there is no row).
void Parser::computed_select() {
  Statement& s = out_.statement;
  do {
    check_count(out_.columns.size(), "columns");
    const std::size_t at = token_.position;
    for (const char* aggregate : {"COUNT", "MAX", "MIN", "SUM"})
      if (is(aggregate) && next_is_symbol("(")) fail(std::string("a value (") + aggregate + "() reads a table: FROM and its name)");
    calls_allowed_ = true;
    Expr e = expression();
    calls_allowed_ = false;
    if (const Expr* column = column_in(e)) fail_at(at, "a value (a SELECT without FROM reads no column: " + column->column + ")");
    std::string label = computed_name(e, at, alias(), out_.columns);
    out_.columns.push_back(label);
    s.edit().computed.emplace_back(std::move(label), std::move(e));
  } while (accept_symbol(","));
  if (accept("FROM")) expect("DUAL");
  finish(", FROM DUAL or ");
}

const Expr* Parser::column_in(const Expr& e) {
  if (e.kind == Expr::Kind::column || e.kind == Expr::Kind::inserted) return &e;
  for (const Expr& a : e.args)
    if (const Expr* c = column_in(a)) return c;
  return nullptr;
}

// `[AS] name` after a select list's item: its alias, if it has one.
std::optional<std::string> Parser::alias() {
  if (accept("AS") || token_.kind == Token::Kind::quoted_word || (token_.kind == Token::Kind::word && !reserved(token_.text)))
    return name("an alias");
  return std::nullopt;
}

// A computed column's name: its alias or, as MariaDB names a column without one, a string
// literal's value or the item's text as written (from `at` to the token after it); refused
// where the list has a column of that name already.
std::string Parser::computed_name(const Expr& e, std::size_t at, std::optional<std::string> given, const std::vector<std::string>& taken) const {
  std::string label;
  if (given) label = std::move(*given);
  else if (e.kind == Expr::Kind::literal && std::holds_alternative<std::string>(e.value)) label = std::get<std::string>(e.value);
  else label = trimmed(text_.substr(at, token_.position - at));
  if (std::find(taken.begin(), taken.end(), label) != taken.end())
    fail_at(at, "a column of another name (two are named " + label + ": give one an alias)");
  return label;
}

std::string Parser::trimmed(std::string_view text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  return std::string(text);
}

// [ORDER BY column [ASC | DESC], ...]; returns whether there was one.
bool Parser::order_by() {
  if (!accept("ORDER")) return false;
  expect("BY");
  const bool grouped = !out_.statement.more().group_by.empty();
  do {
    check_count(out_.statement.more().order_by.size(), "ORDER BY columns");
    std::optional<Expr> aggregate = grouped && !distinct_ ? aggregate_operand() : std::nullopt;  // a group's aggregate
    const std::size_t at = token_.position;
    std::string column = aggregate ? aggregate->column : name("a column name");
    if (distinct_ && std::find(out_.columns.begin(), out_.columns.end(), column) == out_.columns.end())
      fail_at(at, "a column of the DISTINCT list (" + column + " is not in it)");
    const auto& computed = out_.statement.more().computed;
    if (std::any_of(computed.begin(), computed.end(), [&](const auto& c) { return c.first == column; }))
      fail_at(at, "a column of the table (ORDER BY a computed column is not modelled)");
    bool descending = false;
    if (accept("DESC")) descending = true;
    else accept("ASC");
    out_.statement.edit().order_by.emplace_back(std::move(column), descending);
  } while (accept_symbol(","));
  return true;
}

// [LIMIT count | LIMIT offset, count | LIMIT count OFFSET offset] (an offset only for SELECT);
// returns whether there was one.
bool Parser::limit(bool offset_allowed) {
  if (!accept("LIMIT")) return false;
  Statement& s = out_.statement;
  const auto count = [&] {
    if (token_.kind != Token::Kind::number || token_.number < 0) fail("a row count (a number from 0)");
    const std::int64_t n = token_.number;
    advance();
    return n;
  };
  s.limit = count();
  if (offset_allowed && accept_symbol(",")) {
    s.offset = *s.limit;
    s.limit = count();
  } else if (offset_allowed && accept("OFFSET")) {
    s.offset = count();
  }
  return true;
}

// After FOR UPDATE or LOCK IN SHARE MODE: [NOWAIT | SKIP LOCKED]; returns what else could follow.
std::string Parser::on_locked() {
  if (accept("NOWAIT")) {
    out_.statement.on_locked = Statement::OnLocked::fail;
  } else if (accept("SKIP")) {
    expect("LOCKED");
    out_.statement.on_locked = Statement::OnLocked::skip;
  } else {
    if (is("WAIT")) fail("NOWAIT, SKIP LOCKED or the end of the statement (WAIT n is not modelled: SET innodb_lock_wait_timeout)");
    return "NOWAIT, SKIP LOCKED or ";
  }
  return "";
}

}  // namespace models::db::sql::mariadb
