// MariaDB's SQL parser (models/db/innodb/sql_parser.hpp): a statement's first word, tokens,
// values, WHERE clauses and assignments.

#include "models/db/innodb/sql_parser.hpp"

#include <memory>

namespace models::db::sql::mariadb {

Prepared Parser::statement() {
  out_.text = std::string(text_);
  if (accept("SELECT")) {
    select();
  } else if (is("INSERT") || is("REPLACE")) {
    insert();
  } else if (accept("UPDATE")) {
    update();
  } else if (accept("DELETE")) {
    remove();
  } else if (is("BEGIN") || is("COMMIT") || is("ROLLBACK")) {
    out_.statement.kind = is("BEGIN")    ? Statement::Kind::begin
                          : is("COMMIT") ? Statement::Kind::commit
                                         : Statement::Kind::rollback;
    advance();
    finish(accept("WORK") ? "" : "WORK or ");
  } else if (accept("START")) {
    expect("TRANSACTION");
    out_.statement.kind = Statement::Kind::begin;
    if (accept("WITH")) {
      expect("CONSISTENT");
      expect("SNAPSHOT");
      out_.statement.consistent_snapshot = true;
      finish("");
    } else {
      finish("WITH CONSISTENT SNAPSHOT or ");
    }
  } else if (accept("SET")) {
    set_isolation();
  } else if (accept("CREATE")) {
    create_table();
  } else if (accept("ALTER")) {
    alter_table();
  } else {
    unsupported();
  }
  return std::move(out_);
}

// Whether the token after the current one is `symbol` (one token of lookahead).
bool Parser::next_is_symbol(std::string_view symbol) const {
  Lexer ahead = lexer_;
  const Token t = ahead.next();
  return t.kind == Token::Kind::symbol && t.text == symbol;
}

// Whether the token after the current one is the word `keyword`.
bool Parser::next_is_word(std::string_view keyword) const {
  Lexer ahead = lexer_;
  const Token t = ahead.next();
  return t.kind == Token::Kind::word && iequals(t.text, keyword);
}

bool Parser::accept(std::string_view keyword) {
  if (!is(keyword)) return false;
  advance();
  return true;
}

bool Parser::accept_symbol(std::string_view symbol) {
  if (!is_symbol(symbol)) return false;
  advance();
  return true;
}

// A table, column or index name: a backquoted name, or a word that is not reserved.
std::string Parser::name(const char* expected) {
  if (token_.kind != Token::Kind::quoted_word && (token_.kind != Token::Kind::word || reserved(token_.text)))
    fail(expected);
  std::string n = std::move(token_.text);
  advance();
  return n;
}

// An optional `;`, then nothing: `or_else` lists what else could have come here.
void Parser::finish(const std::string& or_else) {
  if (accept_symbol(";")) {
    if (!at_end()) fail("the end of the statement (one statement at a time)");
    return;
  }
  if (!at_end()) fail(or_else + "the end of the statement");
}

// A literal, or a `?` bound later to where `param` says.
Value Parser::value(Param param) {
  if (is_symbol("?")) {
    check_count(out_.params.size(), "parameters");
    out_.params.push_back(std::move(param));
    advance();
    return std::int64_t{0};  // a placeholder until bind()
  }
  if (token_.kind == Token::Kind::number || token_.kind == Token::Kind::string) {
    Value v = token_.kind == Token::Kind::number ? Value{token_.number} : Value{std::move(token_.text)};
    advance();
    return v;
  }
  if (accept("NULL")) return Null{};
  if (is("UNIX_TIMESTAMP"))
    fail("a value (a number, a 'string' or ?; UNIX_TIMESTAMP() is read in a SELECT, an UPDATE's SET and a WHERE: insert the "
         "row, then set its time with an UPDATE)");
  fail(kValue);
}

// WHERE's expression, split at its top-level ANDs: each `column op value` term goes to
// Statement::where (where the model finds index paths), every other term to `filter`.
void Parser::where_clause() {
  Statement& s = out_.statement;
  std::vector<Expr> terms;
  split_and(expression(), terms);
  for (Expr& term : terms) {
    if (auto c = simple_condition(term); c && !reads_engine_slot(term.args[1])) {
      check_count(s.where.size(), "conditions");
      if (term.args[1].kind == Expr::Kind::param)
        out_.params[param_index(term.args[1].param)] = Param{.in = Param::In::where, .where_index = s.where.size()};
      s.where.push_back(std::move(*c));
    } else {
      s.edit().filter.push_back(std::move(term));
    }
  }
}

void Parser::split_and(Expr e, std::vector<Expr>& out) {
  if (e.kind != Expr::Kind::logical_and) {
    out.push_back(std::move(e));
    return;
  }
  for (Expr& term : e.args) split_and(std::move(term), out);
}

std::optional<Condition> Parser::simple_condition(const Expr& e) {
  using K = Expr::Kind;
  if (e.kind != K::compare || e.args[0].kind != K::column || (e.args[1].kind != K::literal && e.args[1].kind != K::param))
    return std::nullopt;
  static constexpr Condition::Op kOps[] = {Condition::Op::eq, Condition::Op::ne, Condition::Op::lt,
                                           Condition::Op::le, Condition::Op::gt, Condition::Op::ge};
  return Condition{kOps[static_cast<int>(e.op)], e.args[0].column, e.args[1].value};
}

// Where the `?` bound to args slot `slot` is in Prepared::params.
std::size_t Parser::param_index(std::size_t slot) const {
  for (std::size_t i = 0; i < out_.params.size(); ++i)
    if (out_.params[i].in == Param::In::args && out_.params[i].arg == slot) return i;
  return out_.params.size();  // unreachable: every slot has its param
}

// `column = expression, ...` (UPDATE's SET, ON DUPLICATE KEY UPDATE): literal values and
// `?`s into `literal` (their params to `in`), or, when one is computed, every one in order
// into StatementExtra::assign.
void Parser::assignments(Values& literal, Param::In in, const std::vector<std::string>& inserted) {
  Statement& s = out_.statement;
  std::vector<std::pair<std::string, Expr>> all;
  do {
    check_count(all.size(), "assignments");
    const std::size_t at = token_.position;
    std::string column = name("a column name");
    if (std::any_of(all.begin(), all.end(), [&](const auto& a) { return a.first == column; }))
      fail_at(at, "a column not assigned already");
    expect_symbol("=");
    const std::size_t value_at = token_.position;
    assigning_ = true;
    Expr value = expression();
    assigning_ = false;
    if (setter_) {  // c = LAST_INSERT_ID(expr): the call is the whole value, in one assignment
      if (setter_->first != value_at || setter_->second != token_.position || !s.more().sets_last_insert_id.empty())
        fail_at(setter_->first, kSetterAlone);
      s.edit().sets_last_insert_id = column;
      setter_.reset();
    }
    all.emplace_back(std::move(column), std::move(value));
  } while (accept_symbol(","));
  const auto simple = [&](const std::pair<std::string, Expr>& a) {
    const Expr& e = a.second;
    if (e.kind == Expr::Kind::literal || (e.kind == Expr::Kind::param && !reads_engine_slot(e))) return true;
    // ON DUPLICATE KEY UPDATE c = VALUES(c) of a column the INSERT lists: the value bind() copies
    // (of a multi-row INSERT, each row's own: computed as the row meets its duplicate).
    return in == Param::In::on_update && e.kind == Expr::Kind::inserted && e.column == a.first &&
           std::find(inserted.begin(), inserted.end(), a.first) != inserted.end() && s.more().more_rows.empty();
  };
  if (!std::all_of(all.begin(), all.end(), simple)) {
    s.edit().assign = std::move(all);
    return;
  }
  for (auto& [column, e] : all) {
    if (e.kind == Expr::Kind::inserted) {
      literal[column] = s.values.at(column);
      out_.from_values.push_back(column);
    } else {
      if (e.kind == Expr::Kind::param) out_.params[param_index(e.param)] = Param{.in = in, .column = column};
      literal[column] = std::move(e.value);
    }
  }
}

// A list of column names in parentheses, each once; the `(` is taken.
std::vector<std::string> Parser::column_list() {
  std::vector<std::string> columns;
  if (accept_symbol(")")) return columns;
  do {
    check_count(columns.size(), "columns");
    const std::size_t at = token_.position;
    std::string column = name("a column name");
    if (std::find(columns.begin(), columns.end(), column) != columns.end()) fail_at(at, "a column not listed already");
    columns.push_back(std::move(column));
  } while (accept_symbol(","));
  expect_symbol(")", ", or )");
  return columns;
}

}  // namespace models::db::sql::mariadb

namespace models::db::sql {

Prepared prepare(std::string_view text) {
  if (text.size() > kMaxText)
    mariadb::refuse(text, kMaxText, "a statement of at most " + std::to_string(kMaxText) + " bytes");
  for (std::size_t at = 0; at < text.size();) {
    if (text[at] == '\0') mariadb::refuse(text, at, "a statement without NUL bytes");
    const std::size_t n = utf8_length(text.substr(at));
    if (n == 0) mariadb::refuse(text, at, "UTF-8 text");
    at += n;
  }
  Prepared out = mariadb::Parser(text).statement();
  if (!out.create) out.statement.written = std::make_shared<const Written>(Written{out.text, out.params});
  return pinned_while_loading(std::move(out));
}

}  // namespace models::db::sql
