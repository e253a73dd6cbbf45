// MariaDB's SQL parser (models/db/innodb/sql_parser.hpp): expressions, MySQL's grammar
// (models/db/expr.hpp), and the calls to the server among them.

#include "models/db/innodb/sql_parser.hpp"

namespace models::db::sql::mariadb {

//
// MySQL's precedence, loosest first: OR, AND, NOT, comparisons (= <> < <= > >= IS LIKE IN
// BETWEEN), + -, * DIV % MOD, unary -. Nesting is bounded (kMaxDepth).

Expr Parser::expression() {
  const Depth depth(*this);
  return chain(Expr::Kind::logical_or, "OR", &Parser::conjunction);
}

// `a OR b OR c` as one node with three operands, so a long chain stays one level deep.
Expr Parser::chain(Expr::Kind kind, std::string_view keyword, Expr (Parser::*operand)()) {
  Expr first = (this->*operand)();
  if (!is(keyword)) return first;
  Expr e{.kind = kind};
  e.args.push_back(std::move(first));
  while (accept(keyword)) {
    check_count(e.args.size(), "conditions");
    e.args.push_back((this->*operand)());
  }
  return grown(std::move(e));
}

Expr Parser::negation() {
  if (!accept("NOT")) return predicate();
  const Depth depth(*this);
  return unary(Expr::Kind::logical_not, negation());
}

Expr Parser::predicate() {
  using K = Expr::Kind;
  Expr e = additive();
  for (;;) {
    if (const auto op = comparison()) {
      e = binary(K::compare, *op, std::move(e), additive());
      continue;
    }
    if (accept("IS")) {
      Expr test = unary(K::is_null, std::move(e));
      test.negated = accept("NOT");
      expect("NULL");
      e = std::move(test);
      continue;
    }
    const bool negated = accept("NOT");
    if (accept("IN")) {
      Expr in = unary(K::in, std::move(e));
      expect_symbol("(", "( and the list of values");
      do {
        check_count(in.args.size(), "values in an IN list");
        in.args.push_back(additive());
      } while (accept_symbol(","));
      expect_symbol(")", ", or )");
      e = grown(std::move(in));
    } else if (accept("BETWEEN")) {
      Expr between = unary(K::between, std::move(e));
      between.args.push_back(additive());
      expect("AND");
      between.args.push_back(additive());
      e = grown(std::move(between));
    } else if (accept("LIKE")) {
      e = binary(K::like, Expr::Op::eq, std::move(e), additive());
      if (is("ESCAPE")) fail("the end of LIKE (ESCAPE is not modelled: \\ escapes % and _)");
    } else {
      if (negated) fail("IN, BETWEEN or LIKE after NOT");
      return e;
    }
    e.negated = negated;
  }
}

std::optional<Expr::Op> Parser::comparison() {
  using Op = Expr::Op;
  static constexpr std::array<std::pair<std::string_view, Op>, 7> kOps = {
      {{"=", Op::eq}, {"!=", Op::ne}, {"<>", Op::ne}, {"<", Op::lt}, {"<=", Op::le}, {">", Op::gt}, {">=", Op::ge}}};
  for (const auto& [symbol, op] : kOps)
    if (accept_symbol(symbol)) return op;
  return std::nullopt;
}

Expr Parser::additive() {
  Expr e = multiplicative();
  for (;;) {
    if (accept_symbol("+")) {
      e = binary(Expr::Kind::arith, Expr::Op::add, std::move(e), multiplicative());
    } else if (accept_symbol("-")) {
      e = binary(Expr::Kind::arith, Expr::Op::sub, std::move(e), multiplicative());
    } else {
      return e;
    }
  }
}

Expr Parser::multiplicative() {
  Expr e = signed_term();
  for (;;) {
    std::optional<Expr::Op> op;
    if (accept_symbol("*")) op = Expr::Op::mul;
    else if (accept("DIV")) op = Expr::Op::div;
    else if (accept_symbol("%") || accept("MOD")) op = Expr::Op::mod;
    else if (is_symbol("/")) fail("DIV, the integer division (/ gives a decimal, which the model does not have)");
    if (!op) return e;
    e = binary(Expr::Kind::arith, *op, std::move(e), signed_term());
  }
}

Expr Parser::signed_term() {
  if (accept_symbol("+")) return signed_term();
  if (!accept_symbol("-")) return primary();
  const Depth depth(*this);
  return unary(Expr::Kind::negate, signed_term());
}

Expr Parser::primary() {
  using K = Expr::Kind;
  if (having_)
    if (auto aggregate = aggregate_operand()) return std::move(*aggregate);
  if (is("LAST_INSERT_ID") && next_is_symbol("(")) return last_insert_id();
  if (is("UNIX_TIMESTAMP") && next_is_symbol("(")) return unix_timestamp();
  if (accept_symbol("(")) {
    Expr e = expression();
    expect_symbol(")");
    return e;
  }
  if (is_symbol("?")) return param_expr();
  if (token_.kind == Token::Kind::number || token_.kind == Token::Kind::string) {
    Expr e{.kind = K::literal, .value = token_.kind == Token::Kind::number ? Value{token_.number} : Value{token_.text}};
    advance();
    return e;
  }
  if (accept("NULL")) return Expr{.kind = K::null};
  if (accept("TRUE")) return Expr{.kind = K::literal, .value = std::int64_t{1}};
  if (accept("FALSE")) return Expr{.kind = K::literal, .value = std::int64_t{0}};
  if ((is("VALUES") || is("VALUE")) && next_is_symbol("(")) {  // VALUES(col); `value` alone is a column
    advance();
    expect_symbol("(");
    Expr e{.kind = K::inserted, .column = name("a column name")};
    expect_symbol(")");
    return e;
  }
  if (next_is_symbol("("))
    if (const auto call = session_call_named()) return session_call(*call);
  // COALESCE(a, b, ...) and IFNULL(a, b): the first of the values that is not NULL.
  if ((is("COALESCE") || is("IFNULL")) && next_is_symbol("(")) {
    const bool ifnull = is("IFNULL");
    advance();
    advance();
    Expr e{.kind = K::coalesce};
    e.args.push_back(expression());
    if (ifnull) {
      expect_symbol(",", ", and IFNULL's second value");
      e.args.push_back(expression());
    } else {
      while (accept_symbol(",")) {
        check_count(e.args.size(), "values in COALESCE");
        e.args.push_back(expression());
      }
    }
    expect_symbol(")", ifnull ? ")" : ", or )");
    return grown(std::move(e));
  }
  const std::size_t at = token_.position;
  if (const char* temporal = temporal_named(); temporal != nullptr && (is("CURRENT_TIMESTAMP") || next_is_symbol("(")))
    fail_at(at, std::string("a value (") + temporal +
                    " is a DATETIME, and the model's values are integers and strings: UNIX_TIMESTAMP() reads the database's clock in "
                    "whole seconds)");
  std::string column = name("a value, a column or (");
  if (is_symbol("(")) fail_at(at, "a value, a column or ( (functions such as " + column + "() are not modelled yet)");
  if (accept_symbol(".")) {  // t.col: the one table a statement reads
    column = name("a column name");
  }
  return Expr{.kind = K::column, .column = std::move(column)};
}

std::optional<Parser::SessionCall> Parser::session_call_named() const {
  for (const SessionCall& c : kSessionCalls)
    if (is(c.name)) return c;
  return std::nullopt;
}

Expr Parser::session_call(const SessionCall& c) {
  const std::size_t at = token_.position;
  if (!calls_allowed_)
    fail_at(at, std::string("a value (") + c.name + "() is modelled in a SELECT without a table: SELECT " + c.name +
                    (c.arguments == 2 ? "('name', 10)" : c.arguments == 1 ? "('name')" : "()") + ")");
  advance();
  advance();
  Expr e{.kind = Expr::Kind::session_call, .call = c.call};
  for (std::size_t i = 0; i < c.arguments; ++i) {
    if (i > 0) expect_symbol(",", std::string(", and ") + c.name + "'s timeout in seconds");
    e.args.push_back(expression());
  }
  expect_symbol(")");
  out_.statement.edit().session_calls = true;
  return grown(std::move(e));
}

// UNIX_TIMESTAMP(): the database's clock at the statement's start, in whole seconds (the
// simulated epoch is the trial's start); a slot of `args` the engine fills when the statement
// runs (StatementExtra::clock_args), the same for every reading in the statement.
Expr Parser::unix_timestamp() {
  const std::size_t at = token_.position;
  advance();
  advance();
  if (!accept_symbol(")")) fail_at(at, "UNIX_TIMESTAMP() without an argument (the model has no DATETIME values to convert)");
  using Read = StatementExtra::ClockRead;
  Statement& s = out_.statement;
  for (const auto& [slot, read] : s.more().clock_args)
    if (read == Read::statement_floor) return Expr{.kind = Expr::Kind::param, .param = slot};
  const std::size_t slot = s.more().args.size();
  s.edit().clock_args.emplace_back(slot, Read::statement_floor);
  s.edit().args.emplace_back(std::int64_t{0});  // the clock's reading when the statement runs
  return Expr{.kind = Expr::Kind::param, .param = slot};
}

// MariaDB's functions of DATETIME values, which the model does not have; null for another name.
const char* Parser::temporal_named() const {
  for (const char* name : {"NOW", "CURRENT_TIMESTAMP", "SYSDATE", "UTC_TIMESTAMP", "LOCALTIMESTAMP", "CURDATE", "TIMESTAMPADD",
                           "DATE_ADD", "DATE_SUB", "TIMESTAMPDIFF", "FROM_UNIXTIME"})
    if (is(name)) return name;
  return nullptr;
}

// LAST_INSERT_ID(): the session's last AUTO_INCREMENT id, put in its `args` slot when the
// statement runs (StatementExtra::last_insert_id_arg). LAST_INSERT_ID(expr): expr, whose
// value becomes the session's; only as the whole value of an assignment (assignments()).
Expr Parser::last_insert_id() {
  const std::size_t at = token_.position;
  advance();
  advance();
  Statement& s = out_.statement;
  if (accept_symbol(")")) {
    if (!s.more().last_insert_id_arg) {
      s.edit().last_insert_id_arg = s.more().args.size();
      s.edit().args.emplace_back(std::int64_t{0});  // the session's value when the statement runs
    }
    return Expr{.kind = Expr::Kind::param, .param = *s.more().last_insert_id_arg};
  }
  if (!assigning_ || setter_) fail_at(at, kSetterAlone);
  Expr e = expression();
  expect_symbol(")");
  setter_ = std::pair(at, token_.position);
  return e;
}

// Whether `e` is a slot the engine fills when the statement runs (LAST_INSERT_ID(), the clock's
// readings), not a `?` bind() fills: it stays an expression, never a condition or a value.
bool Parser::reads_engine_slot(const Expr& e) const {
  if (e.kind != Expr::Kind::param) return false;
  const StatementExtra& extra = out_.statement.more();
  return extra.last_insert_id_arg == e.param ||
         std::any_of(extra.clock_args.begin(), extra.clock_args.end(), [&](const auto& c) { return c.first == e.param; });
}

// A `?` inside an expression: its value goes to StatementExtra::args when bound.
Expr Parser::param_expr() {
  check_count(out_.params.size(), "parameters");
  const std::size_t slot = out_.statement.more().args.size();
  out_.params.push_back(Param{.in = Param::In::args, .arg = slot});
  out_.statement.edit().args.emplace_back(std::int64_t{0});  // a placeholder until bind()
  advance();
  return Expr{.kind = Expr::Kind::param, .param = slot};
}

Expr Parser::unary(Expr::Kind kind, Expr operand) {
  Expr e{.kind = kind};
  e.args.push_back(std::move(operand));
  return grown(std::move(e));
}

Expr Parser::binary(Expr::Kind kind, Expr::Op op, Expr a, Expr b) {
  Expr e{.kind = kind, .op = op};
  e.args.push_back(std::move(a));
  e.args.push_back(std::move(b));
  return grown(std::move(e));
}

// A node with its operands: its height, bounded (an IN list or BETWEEN adds operands later
// and is measured again by the node above it).
Expr Parser::grown(Expr e) {
  for (const Expr& a : e.args) e.height = std::max(e.height, a.height + 1);
  if (e.height > kMaxHeight) fail("at most " + std::to_string(kMaxHeight) + " levels of nested expressions");
  return e;
}

}  // namespace models::db::sql::mariadb
