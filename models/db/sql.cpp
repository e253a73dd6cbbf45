#include "models/db/sql.hpp"

#include "models/db/rows.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

namespace models::db::sql {
namespace {

constexpr std::size_t kNearBytes = 30;
// MariaDB's limit on a table's indexes (1069 Too many keys specified).
constexpr std::size_t kMostIndexes = 64;
constexpr std::size_t kMaxKeyParts = 32;  // MariaDB's MAX_REF_PARTS
constexpr const char* kAlter = "ADD [UNIQUE] INDEX name (column, ...) or DROP INDEX name (the ALTER TABLE the model runs)";
constexpr const char* kValue = "a value (a number, a 'string' or ?)";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
// MySQL's unquoted identifiers: letters, digits, _ and $, and any non-ASCII character.
bool is_word_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || u >= 0x80;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
           return lower(x) == lower(y);
         });
}

// MySQL's reserved words among those the grammar uses or that begin clauses it refuses:
// unquoted, they are never a table or column name, so `SELECT FROM t` says a column is missing.
bool reserved(std::string_view word) {
  static constexpr std::string_view kReserved[] = {
      "ADD",      "ALL",     "ALTER",   "AND",      "AS",       "BETWEEN",  "BIGINT",  "BY",        "CHAR",
      "CHARACTER", "CHECK",  "COLLATE", "CONSTRAINT", "CREATE", "CROSS",    "DEFAULT", "DELETE",    "DESC",
      "DISTINCT", "DROP",    "DUAL",    "EXISTS",   "FOR",      "FOREIGN",  "FROM",    "FULLTEXT",  "GROUP",
      "HAVING",   "IGNORE",  "IN",      "INDEX",    "INNER",    "INSERT",   "INT",     "INTEGER",   "INTO",
      "IS",       "JOIN",    "KEY",     "LEFT",     "LIKE",     "LIMIT",    "LOCK",    "NATURAL",   "NOT",
      "NULL",     "ON",      "OR",      "ORDER",    "PRIMARY",  "REPLACE",  "RIGHT",   "SELECT",    "SET",
      "SMALLINT", "SPATIAL", "TABLE",   "TINYINT",  "UNION",    "UNIQUE",   "UNSIGNED", "UPDATE",   "USING",
      "VALUES",   "VARCHAR", "WHERE"};
  return std::any_of(std::begin(kReserved), std::end(kReserved), [&](std::string_view r) { return iequals(r, word); });
}

// MySQL's "near '...'": the text from the offending token on, cut at a character boundary.
std::string near_text(std::string_view text, std::size_t position) {
  if (position >= text.size()) return {};
  std::size_t end = std::min(text.size(), position + kNearBytes);
  while (end > position + 1 && end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(position, end - position));
}

[[noreturn]] void refuse(std::string_view text, std::size_t position, std::string expected) {
  throw Error(position, near_text(text, position), std::move(expected));
}

std::string count_of(std::size_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

struct Token {
  enum class Kind { end, word, quoted_word, number, string, symbol } kind = Kind::end;
  std::size_t position = 0;
  std::string text{};  // word: as written; quoted_word and string: unquoted; symbol: its characters
  std::int64_t number = 0;
};

// Reads one token at a time, as the parser asks for it, so the first error in the text is
// the one reported.
class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Token next() {
    Token t = read();
    // A `-` right after an operand is subtraction (`v-1`), elsewhere a negative number's sign;
    // whether a word is an operand (not a reserved word) is asked only when a `-` follows.
    operand_before_ = t.kind == Token::Kind::number || t.kind == Token::Kind::string || t.kind == Token::Kind::quoted_word ||
                      (t.kind == Token::Kind::symbol && (t.text == ")" || t.text == "?"));
    last_word_ = t.kind == Token::Kind::word ? text_.substr(t.position, t.text.size()) : std::string_view();
    return t;
  }

 private:
  Token read() {
    while (at_ < text_.size() && is_space(text_[at_])) ++at_;
    Token t{.position = at_};
    if (at_ == text_.size()) return t;
    const char c = text_[at_];
    if (c == '`') return quoted(std::move(t), '`', Token::Kind::quoted_word, "the name's closing `");
    if (c == '\'') return quoted(std::move(t), '\'', Token::Kind::string, "the string's closing '");
    const auto after_operand = [&] { return operand_before_ || (!last_word_.empty() && !reserved(last_word_)); };
    if (is_digit(c) || (c == '-' && at_ + 1 < text_.size() && is_digit(text_[at_ + 1]) && !after_operand()))
      return number(std::move(t));
    if (is_word_char(c)) {
      while (at_ < text_.size() && is_word_char(text_[at_])) ++at_;
      t.kind = Token::Kind::word;
      t.text = std::string(text_.substr(t.position, at_ - t.position));
      return t;
    }
    t.kind = Token::Kind::symbol;
    const std::string_view two = text_.substr(at_, 2);
    const std::size_t length = (two == "<=" || two == ">=" || two == "<>" || two == "!=") ? 2 : 1;
    t.text = std::string(text_.substr(at_, length));
    at_ += length;
    return t;
  }

  [[noreturn]] void fail(std::size_t position, std::string expected) const { refuse(text_, position, std::move(expected)); }

  Token number(Token t) {
    if (text_[at_] == '-') ++at_;
    while (at_ < text_.size() && is_digit(text_[at_])) ++at_;
    if (at_ < text_.size() && text_[at_] == '.') fail(t.position, "an integer (decimals are not modelled)");
    if (at_ < text_.size() && is_word_char(text_[at_])) {  // MySQL: a name may begin with digits
      if (text_[t.position] == '-') fail(t.position, "an integer");
      while (at_ < text_.size() && is_word_char(text_[at_])) ++at_;
      t.kind = Token::Kind::word;
      t.text = std::string(text_.substr(t.position, at_ - t.position));
      return t;
    }
    t.kind = Token::Kind::number;
    t.text = std::string(text_.substr(t.position, at_ - t.position));
    const auto [end, error] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), t.number);
    if (error != std::errc() || end != t.text.data() + t.text.size())
      fail(t.position, "a number from -9223372036854775808 to 9223372036854775807");
    return t;
  }

  // A string ('' and MySQL's backslash escapes) or a backquoted name (`` for a backquote).
  Token quoted(Token t, char quote, Token::Kind kind, const char* closing) {
    t.kind = kind;
    ++at_;
    for (;;) {
      if (at_ >= text_.size()) fail(t.position, closing);
      const char c = text_[at_++];
      if (c == quote) {
        if (at_ < text_.size() && text_[at_] == quote) {
          t.text += quote;
          ++at_;
          continue;
        }
        break;
      }
      if (c == '\\' && kind == Token::Kind::string) {
        if (at_ >= text_.size()) fail(t.position, closing);
        t.text += unescape(text_[at_++]);
        continue;
      }
      t.text += c;
    }
    if (kind == Token::Kind::quoted_word && t.text.empty()) fail(t.position, "a name between the backquotes");
    return t;
  }

  static std::string unescape(char c) {
    switch (c) {
      case '0': return std::string(1, '\0');
      case 'b': return "\b";
      case 'n': return "\n";
      case 'r': return "\r";
      case 't': return "\t";
      case 'Z': return "\x1A";
      case '%': return "\\%";  // kept for LIKE, as MySQL does
      case '_': return "\\_";
      default: return std::string(1, c);
    }
  }

  std::string_view text_;
  std::size_t at_ = 0;
  bool operand_before_ = false;
  std::string_view last_word_{};  // the token before, when a word
};

// One definition of CREATE TABLE's secondary index: on which columns, from where in the text.
struct KeyIndexDef {
  std::vector<std::string> columns;  // in index order
  std::string name;
  KeyIndex kind = KeyIndex::unique;
  std::vector<std::size_t> positions{};  // of each column's name, for "no such column"
  bool named = false;                     // whether the statement names it
};

struct ColumnDef {
  std::string name;
  std::optional<ColumnType> type{};  // an integer type, or text of a bounded length
  Value default_value;  // the type's zero where the default is NULL
  bool nullable = false, null_by_default = false;
  bool said_null = false;    // NULL written out
  bool has_default = false;  // DEFAULT written out
};

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text), lexer_(text) { advance(); }

  Prepared statement() {
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

 private:
  // --- Tokens ----------------------------------------------------------------

  void advance() { token_ = lexer_.next(); }
  // Whether the token after the current one is `symbol` (one token of lookahead).
  bool next_is_symbol(std::string_view symbol) const {
    Lexer ahead = lexer_;
    const Token t = ahead.next();
    return t.kind == Token::Kind::symbol && t.text == symbol;
  }
  // Whether the token after the current one is the word `keyword`.
  bool next_is_word(std::string_view keyword) const {
    Lexer ahead = lexer_;
    const Token t = ahead.next();
    return t.kind == Token::Kind::word && iequals(t.text, keyword);
  }
  bool at_end() const { return token_.kind == Token::Kind::end; }
  bool is(std::string_view keyword) const { return token_.kind == Token::Kind::word && iequals(token_.text, keyword); }
  bool is_symbol(std::string_view symbol) const { return token_.kind == Token::Kind::symbol && token_.text == symbol; }
  bool accept(std::string_view keyword) {
    if (!is(keyword)) return false;
    advance();
    return true;
  }
  bool accept_symbol(std::string_view symbol) {
    if (!is_symbol(symbol)) return false;
    advance();
    return true;
  }
  void expect(std::string_view keyword) {
    if (!accept(keyword)) fail(std::string(keyword));
  }
  void expect_symbol(std::string_view symbol, std::string expected = {}) {
    if (!accept_symbol(symbol)) fail(expected.empty() ? std::string(symbol) : std::move(expected));
  }

  [[noreturn]] void fail_at(std::size_t position, std::string expected) const { refuse(text_, position, std::move(expected)); }
  [[noreturn]] void fail(std::string expected) const { fail_at(token_.position, std::move(expected)); }
  [[noreturn]] void unsupported() const { fail(std::string("a statement the model runs: ") + Error::supported()); }

  // A table, column or index name: a backquoted name, or a word that is not reserved.
  std::string name(const char* expected) {
    if (token_.kind != Token::Kind::quoted_word && (token_.kind != Token::Kind::word || reserved(token_.text)))
      fail(expected);
    std::string n = std::move(token_.text);
    advance();
    return n;
  }

  void check_count(std::size_t count, const char* what) const {
    if (count >= kMaxItems) fail("at most " + std::to_string(kMaxItems) + " " + what + " in a statement");
  }

  // An optional `;`, then nothing: `or_else` lists what else could have come here.
  void finish(const std::string& or_else) {
    if (accept_symbol(";")) {
      if (!at_end()) fail("the end of the statement (one statement at a time)");
      return;
    }
    if (!at_end()) fail(or_else + "the end of the statement");
  }

  // --- Values and conditions ---------------------------------------------------

  // A literal, or a `?` bound later to where `param` says.
  Value value(Param param) {
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

  // --- Expressions -------------------------------------------------------------
  //
  // MySQL's precedence, loosest first: OR, AND, NOT, comparisons (= <> < <= > >= IS LIKE IN
  // BETWEEN), + -, * DIV % MOD, unary -. Nesting is bounded (kMaxDepth).

  Expr expression() {
    const Depth depth(*this);
    return chain(Expr::Kind::logical_or, "OR", &Parser::conjunction);
  }

  Expr conjunction() { return chain(Expr::Kind::logical_and, "AND", &Parser::negation); }

  // `a OR b OR c` as one node with three operands, so a long chain stays one level deep.
  Expr chain(Expr::Kind kind, std::string_view keyword, Expr (Parser::*operand)()) {
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

  Expr negation() {
    if (!accept("NOT")) return predicate();
    const Depth depth(*this);
    return unary(Expr::Kind::logical_not, negation());
  }

  Expr predicate() {
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

  std::optional<Expr::Op> comparison() {
    using Op = Expr::Op;
    static constexpr std::array<std::pair<std::string_view, Op>, 7> kOps = {
        {{"=", Op::eq}, {"!=", Op::ne}, {"<>", Op::ne}, {"<", Op::lt}, {"<=", Op::le}, {">", Op::gt}, {">=", Op::ge}}};
    for (const auto& [symbol, op] : kOps)
      if (accept_symbol(symbol)) return op;
    return std::nullopt;
  }

  Expr additive() {
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

  Expr multiplicative() {
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

  Expr signed_term() {
    if (accept_symbol("+")) return signed_term();
    if (!accept_symbol("-")) return primary();
    const Depth depth(*this);
    return unary(Expr::Kind::negate, signed_term());
  }

  Expr primary() {
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

  // The server's functions a select list without a table may call: MariaDB's user locks
  // (models/db/user_locks.hpp) and CONNECTION_ID(), each with its number of arguments.
  struct SessionCall {
    const char* name;
    Expr::Call call;
    std::size_t arguments;
  };
  static constexpr SessionCall kSessionCalls[] = {
      {"GET_LOCK", Expr::Call::get_lock, 2},          {"RELEASE_LOCK", Expr::Call::release_lock, 1},
      {"RELEASE_ALL_LOCKS", Expr::Call::release_all_locks, 0}, {"IS_FREE_LOCK", Expr::Call::is_free_lock, 1},
      {"IS_USED_LOCK", Expr::Call::is_used_lock, 1},  {"CONNECTION_ID", Expr::Call::connection_id, 0},
  };
  std::optional<SessionCall> session_call_named() const {
    for (const SessionCall& c : kSessionCalls)
      if (is(c.name)) return c;
    return std::nullopt;
  }
  Expr session_call(const SessionCall& c) {
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
  Expr unix_timestamp() {
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
  const char* temporal_named() const {
    for (const char* name : {"NOW", "CURRENT_TIMESTAMP", "SYSDATE", "UTC_TIMESTAMP", "LOCALTIMESTAMP", "CURDATE", "TIMESTAMPADD",
                             "DATE_ADD", "DATE_SUB", "TIMESTAMPDIFF", "FROM_UNIXTIME"})
      if (is(name)) return name;
    return nullptr;
  }

  // LAST_INSERT_ID(): the session's last AUTO_INCREMENT id, put in its `args` slot when the
  // statement runs (StatementExtra::last_insert_id_arg). LAST_INSERT_ID(expr): expr, whose
  // value becomes the session's; only as the whole value of an assignment (assignments()).
  Expr last_insert_id() {
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
  static constexpr const char* kSetterAlone =
      "LAST_INSERT_ID() (LAST_INSERT_ID(expr) is modelled as the whole value of one assignment: c = LAST_INSERT_ID(expr))";
  // Whether `e` is a slot the engine fills when the statement runs (LAST_INSERT_ID(), the clock's
  // readings), not a `?` bind() fills: it stays an expression, never a condition or a value.
  bool reads_engine_slot(const Expr& e) const {
    if (e.kind != Expr::Kind::param) return false;
    const StatementExtra& extra = out_.statement.more();
    return extra.last_insert_id_arg == e.param ||
           std::any_of(extra.clock_args.begin(), extra.clock_args.end(), [&](const auto& c) { return c.first == e.param; });
  }

  // A `?` inside an expression: its value goes to StatementExtra::args when bound.
  Expr param_expr() {
    check_count(out_.params.size(), "parameters");
    const std::size_t slot = out_.statement.more().args.size();
    out_.params.push_back(Param{.in = Param::In::args, .arg = slot});
    out_.statement.edit().args.emplace_back(std::int64_t{0});  // a placeholder until bind()
    advance();
    return Expr{.kind = Expr::Kind::param, .param = slot};
  }

  Expr unary(Expr::Kind kind, Expr operand) {
    Expr e{.kind = kind};
    e.args.push_back(std::move(operand));
    return grown(std::move(e));
  }
  Expr binary(Expr::Kind kind, Expr::Op op, Expr a, Expr b) {
    Expr e{.kind = kind, .op = op};
    e.args.push_back(std::move(a));
    e.args.push_back(std::move(b));
    return grown(std::move(e));
  }
  // A node with its operands: its height, bounded (an IN list or BETWEEN adds operands later
  // and is measured again by the node above it).
  Expr grown(Expr e) {
    for (const Expr& a : e.args) e.height = std::max(e.height, a.height + 1);
    if (e.height > kMaxHeight) fail("at most " + std::to_string(kMaxHeight) + " levels of nested expressions");
    return e;
  }

  // Bounds the parser's recursion: past kMaxDepth levels of nesting, one clear error.
  struct Depth {
    explicit Depth(Parser& p) : parser(p) {
      if (++parser.depth_ > kMaxDepth) parser.fail("at most " + std::to_string(kMaxDepth) + " levels of nested expressions");
    }
    ~Depth() { --parser.depth_; }
    Depth(const Depth&) = delete;
    Depth& operator=(const Depth&) = delete;
    Parser& parser;
  };

  // WHERE's expression, split at its top-level ANDs: each `column op value` term goes to
  // Statement::where (where the model finds index paths), every other term to `filter`.
  void where_clause() {
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

  static void split_and(Expr e, std::vector<Expr>& out) {
    if (e.kind != Expr::Kind::logical_and) {
      out.push_back(std::move(e));
      return;
    }
    for (Expr& term : e.args) split_and(std::move(term), out);
  }

  static std::optional<Condition> simple_condition(const Expr& e) {
    using K = Expr::Kind;
    if (e.kind != K::compare || e.args[0].kind != K::column || (e.args[1].kind != K::literal && e.args[1].kind != K::param))
      return std::nullopt;
    static constexpr Condition::Op kOps[] = {Condition::Op::eq, Condition::Op::ne, Condition::Op::lt,
                                             Condition::Op::le, Condition::Op::gt, Condition::Op::ge};
    return Condition{kOps[static_cast<int>(e.op)], e.args[0].column, e.args[1].value};
  }

  // Where the `?` bound to args slot `slot` is in Prepared::params.
  std::size_t param_index(std::size_t slot) const {
    for (std::size_t i = 0; i < out_.params.size(); ++i)
      if (out_.params[i].in == Param::In::args && out_.params[i].arg == slot) return i;
    return out_.params.size();  // unreachable: every slot has its param
  }

  // `column = expression, ...` (UPDATE's SET, ON DUPLICATE KEY UPDATE): literal values and
  // `?`s into `literal` (their params to `in`), or, when one is computed, every one in order
  // into StatementExtra::assign.
  void assignments(Values& literal, Param::In in, const std::vector<std::string>& inserted) {
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
  std::vector<std::string> column_list() {
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

  // SELECT's column list: `*`, an integer alone (SELECT 1 FROM t), or columns: names, one
  // aggregate, and computed columns (an expression, or a column under an alias: `n - 1 AS
  // left`), each kept in Prepared::columns under the name the server gives it.
  std::vector<std::string> select_list() {
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
  bool plain_column_ahead() const {
    if (token_.kind != Token::Kind::quoted_word && (token_.kind != Token::Kind::word || reserved(token_.text))) return false;
    Lexer ahead = lexer_;
    const Token t = ahead.next();
    return t.kind == Token::Kind::end || (t.kind == Token::Kind::symbol && (t.text == "," || t.text == ";")) ||
           (t.kind == Token::Kind::word && iequals(t.text, "FROM"));
  }

  // COUNT(*), COUNT(1): every row; COUNT(col), MAX(col), MIN(col), SUM(col): the column's
  // non-NULL values. nullopt where no aggregate starts here.
  std::optional<std::pair<StatementExtra::Aggregate, std::string>> aggregate_call() {
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
  void use_aggregate(const std::pair<StatementExtra::Aggregate, std::string>& aggregate, std::size_t at, const std::string& alias = {}) {
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
  std::optional<Expr> aggregate_operand() {
    const std::size_t at = token_.position;
    const auto aggregate = aggregate_call();
    if (!aggregate) return std::nullopt;
    use_aggregate(*aggregate, at);
    return Expr{.kind = Expr::Kind::column, .column = models::db::detail::aggregate_name(out_.statement.more(), Engine::mariadb)};
  }

  // GROUP BY column, ... [HAVING condition]: the aggregate over each group (models/db/rows.hpp).
  // A listed column must be grouped: a column beside an aggregate without GROUP BY, or outside
  // it (MariaDB answers some row's value), is refused.
  void group_by() {
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
  void check_grouping() {
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

  // --- Statements --------------------------------------------------------------

  void select() {
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
  std::vector<std::string> columns_read() const {
    const StatementExtra& more = out_.statement.more();
    std::vector<std::string> read = more.group_by;
    for (const auto& [at, column] : listed_) read.push_back(column);
    if (!more.aggregate_column.empty()) read.push_back(more.aggregate_column);
    for (const auto& [name, e] : more.computed) add_columns(e, read);
    return read;
  }
  static void add_columns(const Expr& e, std::vector<std::string>& out) {
    if (e.kind == Expr::Kind::column) out.push_back(e.column);
    for (const Expr& a : e.args) add_columns(a, out);
  }

  // SELECT DISTINCT cols: GROUP BY those columns without an aggregate, a row for each
  // combination of their values found (NULLs one). With an aggregate alone it changes nothing
  // (one row); `DISTINCT *` and `DISTINCT 1` are refused.
  void distinct_columns(std::size_t at) {
    Statement& s = out_.statement;
    if (s.count_rows) {
      if (!listed_.empty()) fail_at(listed_.front().first, "an aggregate alone (DISTINCT with an aggregate and a column is not modelled)");
      return;
    }
    if (out_.columns.empty()) fail_at(at, "SELECT DISTINCT with a list of columns (DISTINCT * and DISTINCT 1 are not modelled)");
    s.edit().group_by = out_.columns;
  }

  // Whether the statement reads a table: it names FROM (outside quotes), and not FROM DUAL.
  bool from_ahead() const {
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
  void computed_select() {
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
  static const Expr* column_in(const Expr& e) {
    if (e.kind == Expr::Kind::column || e.kind == Expr::Kind::inserted) return &e;
    for (const Expr& a : e.args)
      if (const Expr* c = column_in(a)) return c;
    return nullptr;
  }
  // `[AS] name` after a select list's item: its alias, if it has one.
  std::optional<std::string> alias() {
    if (accept("AS") || token_.kind == Token::Kind::quoted_word || (token_.kind == Token::Kind::word && !reserved(token_.text)))
      return name("an alias");
    return std::nullopt;
  }
  // A computed column's name: its alias or, as MariaDB names a column without one, a string
  // literal's value or the item's text as written (from `at` to the token after it); refused
  // where the list has a column of that name already.
  std::string computed_name(const Expr& e, std::size_t at, std::optional<std::string> given, const std::vector<std::string>& taken) const {
    std::string label;
    if (given) label = std::move(*given);
    else if (e.kind == Expr::Kind::literal && std::holds_alternative<std::string>(e.value)) label = std::get<std::string>(e.value);
    else label = trimmed(text_.substr(at, token_.position - at));
    if (std::find(taken.begin(), taken.end(), label) != taken.end())
      fail_at(at, "a column of another name (two are named " + label + ": give one an alias)");
    return label;
  }
  static std::string trimmed(std::string_view text) {
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
    return std::string(text);
  }

  // [ORDER BY column [ASC | DESC], ...]; returns whether there was one.
  bool order_by() {
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
  bool limit(bool offset_allowed) {
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
  std::string on_locked() {
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

  void insert() {
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

  static std::string column_at(const std::vector<std::string>& columns, std::size_t i) {
    return i < columns.size() ? columns[i] : std::string();
  }

  // The values of row `row` (0: Statement::values, n: more_rows[n - 1]).
  void fill_values(const std::vector<std::string>& columns, std::vector<Value> values, std::size_t at, std::size_t row = 0) {
    if (values.size() != columns.size())
      fail_at(at, "as many values as columns (" + count_of(columns.size(), "column", "columns") + ", " +
                      count_of(values.size(), "value", "values") + ")");
    Statement& s = out_.statement;
    Values& into = row == 0 ? s.values : s.edit().more_rows.emplace_back();
    for (std::size_t i = 0; i < columns.size(); ++i) into[columns[i]] = std::move(values[i]);
  }

  // After an INSERT's rows: ON DUPLICATE KEY UPDATE, then the end.
  void rest_of_insert(const std::vector<std::string>& columns, bool replace) {
    if (!replace && accept("ON")) {
      on_duplicate_key_update(columns);
      finish(", or ");
    } else {
      finish(replace ? ", or " : ", ON DUPLICATE KEY UPDATE or ");
    }
  }

  // ON has been taken: DUPLICATE KEY UPDATE c = expression, ...
  void on_duplicate_key_update(const std::vector<std::string>& columns) {
    Statement& s = out_.statement;
    expect("DUPLICATE");
    expect("KEY");
    expect("UPDATE");
    s.on_duplicate = OnDuplicate::update;
    assignments(s.on_update, Param::In::on_update, columns);
  }

  // INSERT INTO t (cols) SELECT v, ... [FROM DUAL] [WHERE NOT EXISTS (SELECT ... FROM t [WHERE ...])]
  void insert_select(const std::vector<std::string>& columns) {
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

  void update() {
    Statement& s = out_.statement;
    s.kind = Statement::Kind::update;
    s.table = name("a table name");
    expect("SET");
    assignments(s.values, Param::In::values, {});
    std::string more = ", WHERE, ORDER BY, LIMIT or ";
    if (accept("WHERE")) {
      where_clause();
      more = "AND, OR, ORDER BY, LIMIT or ";
    }
    if (order_by()) more = ", LIMIT or ";
    if (limit(false)) more.clear();
    finish(more);
  }

  void remove() {
    Statement& s = out_.statement;
    s.kind = Statement::Kind::remove;
    expect("FROM");
    s.table = name("a table name");
    std::string more = "WHERE, ORDER BY, LIMIT or ";
    if (accept("WHERE")) {
      where_clause();
      more = "AND, OR, ORDER BY, LIMIT or ";
    }
    if (order_by()) more = ", LIMIT or ";
    if (limit(false)) more.clear();
    finish(more);
  }

  // SET has been taken.
  // SET has been taken: [SESSION] TRANSACTION ISOLATION LEVEL ..., or
  // [SESSION] innodb_lock_wait_timeout = seconds.
  void set_isolation() {
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

  // --- ALTER TABLE ----------------------------------------------------------------

  // ALTER has been taken: ADD [UNIQUE] INDEX|KEY [name] (col) or DROP INDEX|KEY name, then
  // optionally ALGORITHM=INPLACE and LOCK=NONE, which are what the model runs anyway.
  void alter_table() {
    if (!accept("TABLE")) unsupported();
    Statement& s = out_.statement;
    s.table = name("a table name");
    if (accept("ADD")) {
      if (!is("UNIQUE") && !is("INDEX") && !is("KEY")) fail(kAlter);
      const KeyIndexDef def = index_clause();
      s.kind = Statement::Kind::add_index;
      s.index = def.name;
      s.column = def.columns.front();
      s.unique = def.kind == KeyIndex::unique;
      if (def.columns.size() > 1)
        s.edit().index_def = std::make_shared<const IndexDef>(IndexDef{.name = def.name, .columns = def.columns, .unique = s.unique});
    } else if (accept("DROP")) {
      if (!accept("INDEX") && !accept("KEY")) fail(kAlter);
      s.kind = Statement::Kind::drop_index;
      s.index = name("an index name");
    } else {
      fail(kAlter);
    }
    while (accept_symbol(",")) {
      if (accept("ALGORITHM")) {
        accept_symbol("=");
        if (!accept("INPLACE") && !accept("DEFAULT")) fail("INPLACE or DEFAULT (ALGORITHM=COPY and INSTANT are not modelled)");
      } else if (accept("LOCK")) {
        accept_symbol("=");
        if (!accept("NONE") && !accept("DEFAULT")) fail("NONE or DEFAULT (LOCK=SHARED and EXCLUSIVE are not modelled)");
      } else {
        fail("ALGORITHM=INPLACE or LOCK=NONE (one change per ALTER TABLE in the model)");
      }
    }
    finish(", ALGORITHM=INPLACE, LOCK=NONE or ");
  }

  // --- CREATE TABLE ---------------------------------------------------------------

  // CREATE has been taken.
  void create_table() {
    if (!accept("TABLE")) unsupported();
    TableSchema schema{.name = name("a table name"), .key_index = KeyIndex::none};
    expect_symbol("(");
    std::vector<ColumnDef> columns;
    bool has_id = false, has_primary = false;
    // A primary key on other columns than id (`k VARCHAR(64) PRIMARY KEY`, `PRIMARY KEY (a, b)`):
    // its columns and where each is named.
    std::optional<KeyIndexDef> natural;
    std::vector<KeyIndexDef> indexes;  // the first is the key index, the others schema.indexes
    auto add_index = [&](KeyIndexDef def, std::size_t at) {
      if (indexes.size() == kMostIndexes) fail_at(at, "at most 64 indexes (1069 Too many keys specified)");
      const auto taken = [&](const std::string& name) {
        return std::any_of(indexes.begin(), indexes.end(), [&](const KeyIndexDef& d) { return d.name == name; });
      };
      if (def.named && taken(def.name)) fail_at(at, "an index name not used already (1061 Duplicate key name)");
      // An index without a name takes its first column's, then _2, _3, ... as MariaDB names them.
      for (int n = 2; !def.named && taken(def.name); ++n) def.name = def.columns.front() + "_" + std::to_string(n);
      indexes.push_back(std::move(def));
    };
    const auto primary_key = [&](std::size_t at) {
      if (has_primary) fail_at(at, "one PRIMARY KEY (1068 Multiple primary key defined)");
      has_primary = true;
    };
    do {
      check_count(columns.size(), "columns");
      const std::size_t at = token_.position;
      if (accept("PRIMARY")) {
        primary_key(at);
        expect("KEY");
        if (!is_symbol("(")) fail("( (a primary key is named PRIMARY)");
        KeyIndexDef def;
        def.name = "PRIMARY";
        def.named = true;
        def = index_columns(std::move(def));
        if (def.columns != std::vector<std::string>{"id"}) natural = std::move(def);
      } else if (is("UNIQUE") || is("KEY") || is("INDEX")) {
        add_index(index_clause(), at);
      } else {
        const std::string column = name("a column definition, PRIMARY KEY (columns), UNIQUE KEY (columns) or KEY (columns)");
        for (const ColumnDef& c : columns)
          if (c.name == column) fail_at(at, "a column not defined already");
        if (column == "id") {
          if (has_id) fail_at(at, "a column not defined already");
          has_id = true;
          std::optional<std::size_t> primary_at;
          id_definition(schema.auto_increment, primary_at);
          if (primary_at) primary_key(*primary_at);
          columns.push_back(ColumnDef{.name = column, .default_value = std::int64_t{0}});
        } else {
          std::optional<std::size_t> unique_at, primary_at;
          ColumnDef c{.name = column, .default_value = {}};
          c.default_value = column_definition(unique_at, primary_at, c);
          columns.push_back(std::move(c));
          if (primary_at) {
            primary_key(*primary_at);
            natural = KeyIndexDef{{column}, "PRIMARY", KeyIndex::unique, {at}, true};
          }
          if (unique_at) add_index(KeyIndexDef{{column}, column, KeyIndex::unique, {at}}, *unique_at);
        }
      }
    } while (accept_symbol(","));
    const std::size_t close_at = token_.position;
    expect_symbol(")", ", or )");
    if (natural) {
      // The model's rows keep an id of their own, which such a table does not show: a column id
      // would be another column, which the model's tables do not have.
      if (has_id) fail_at(close_at, "no column id in a table whose primary key is another (id is the model's integer primary key)");
      for (std::size_t i = 0; i < natural->columns.size(); ++i) {
        auto c = std::find_if(columns.begin(), columns.end(), [&](const ColumnDef& d) { return d.name == natural->columns[i]; });
        if (c == columns.end()) fail_at(natural->positions[i], "a column the table defines (1072 Key column doesn't exist in table)");
        if (c->said_null) fail_at(natural->positions[i], "a NOT NULL column (1171 All parts of a PRIMARY KEY must be NOT NULL)");
        if (c->has_default) fail_at(natural->positions[i], "a primary key column without DEFAULT (the model's keys are always given)");
        c->nullable = c->null_by_default = false;  // a primary key's columns are NOT NULL
      }
      indexes.insert(indexes.begin(), std::move(*natural));
      schema.clustered_key = true;
      schema.auto_increment = false;
    } else {
      if (!has_id) fail_at(close_at, "an id column: id BIGINT AUTO_INCREMENT PRIMARY KEY, or a PRIMARY KEY on other columns");
      if (!has_primary) fail_at(close_at, ", PRIMARY KEY (id)");
    }
    for (const KeyIndexDef& index : indexes)
      for (std::size_t i = 0; i < index.columns.size(); ++i) {
        const std::string& column = index.columns[i];
        if (column == "id" && has_id) fail_at(index.positions[i], "a column other than id (id is the primary key)");
        if (std::none_of(columns.begin(), columns.end(), [&](const ColumnDef& c) { return c.name == column; }))
          fail_at(index.positions[i], "a column the table defines");
      }
    if (!indexes.empty()) {
      const KeyIndexDef& index = indexes.front();
      schema.key_column = index.columns.front();
      schema.key_text = std::holds_alternative<std::string>(
          std::find_if(columns.begin(), columns.end(), [&](const ColumnDef& c) { return c.name == schema.key_column; })->default_value);
      schema.key_tail.assign(index.columns.begin() + 1, index.columns.end());
      schema.key_index = index.kind;
      schema.index_name = index.name;
    }
    for (std::size_t i = 1; i < indexes.size(); ++i)
      schema.indexes.push_back(IndexDef{.name = indexes[i].name, .columns = indexes[i].columns, .unique = indexes[i].kind == KeyIndex::unique});
    if (has_id) schema.column_order.push_back("id");
    for (ColumnDef& c : columns) {
      if (c.name == "id") continue;
      if (c.type) schema.types[c.name] = *c.type;
      schema.column_order.push_back(c.name);
      if (c.nullable) schema.nullable.push_back(c.name);
      if (c.null_by_default) schema.null_by_default.push_back(c.name);
      if (c.name != schema.key_column) schema.columns[c.name] = std::move(c.default_value);
    }
    std::sort(schema.nullable.begin(), schema.nullable.end());
    std::sort(schema.null_by_default.begin(), schema.null_by_default.end());
    table_options();
    out_.create = std::move(schema);
  }

  // UNIQUE [KEY|INDEX] [name] (col, ...) | KEY|INDEX [name] (col, ...), at its first word. An
  // index without a name takes its first column's, as MariaDB names it.
  KeyIndexDef index_clause() {
    KeyIndexDef def;
    if (accept("UNIQUE")) {
      if (!accept("KEY")) accept("INDEX");
    } else {
      advance();  // KEY or INDEX
      def.kind = KeyIndex::non_unique;
    }
    if (!is_symbol("(")) def.name = name("an index name or ("), def.named = true;
    return index_columns(std::move(def));
  }

  // An index's `(col, ...)`, at its parenthesis, into `def`; an index without a name takes its
  // first column's.
  KeyIndexDef index_columns(KeyIndexDef def) {
    expect_symbol("(");
    do {
      const std::size_t at = token_.position;
      if (def.columns.size() == kMaxKeyParts) fail_at(at, "at most 32 columns in an index (1070 Too many key parts specified)");
      std::string column = name("a column name");
      if (std::find(def.columns.begin(), def.columns.end(), column) != def.columns.end())
        fail_at(at, "a column not in the index already (1060 Duplicate column name)");
      def.columns.push_back(std::move(column));
      def.positions.push_back(at);
    } while (accept_symbol(","));
    expect_symbol(")", ", or )");
    if (def.name.empty()) def.name = def.columns.front();
    return def;
  }

  // The rest of `id BIGINT|INT [UNSIGNED] [NOT NULL] [AUTO_INCREMENT] [PRIMARY KEY]`: sets
  // `auto_increment`, and `primary_at` where it says PRIMARY KEY.
  void id_definition(bool& auto_increment, std::optional<std::size_t>& primary_at) {
    const std::size_t type_at = token_.position;
    if (!(accept("BIGINT") || accept("INT") || accept("INTEGER")))
      fail_at(type_at, "BIGINT or INT (id is the integer primary key)");
    display_width();
    accept("UNSIGNED");
    auto_increment = false;
    for (;;) {
      if (accept("NOT")) {
        expect("NULL");
      } else if (accept("AUTO_INCREMENT")) {
        auto_increment = true;
      } else if (is("PRIMARY")) {
        primary_at = token_.position;
        advance();
        expect("KEY");
      } else if (accept("COMMENT")) {
        comment();
      } else {
        break;
      }
    }
    if (!is_symbol(",") && !is_symbol(")")) fail("NOT NULL, AUTO_INCREMENT, PRIMARY KEY, COMMENT, , or )");
  }

  // A column's type and attributes; returns its default, the type's zero where that is NULL (a
  // column that may hold NULL and gives no other: `null_by_default`), and sets the rest of `c`.
  // `unique_at`, `primary_at`: where an inline UNIQUE or PRIMARY KEY is.
  Value column_definition(std::optional<std::size_t>& unique_at, std::optional<std::size_t>& primary_at, ColumnDef& c) {
    bool integer = true;
    // MariaDB's integer types' ranges, signed and UNSIGNED (BIGINT UNSIGNED's upper half is past
    // what the model's integers hold).
    const auto integer_type = [&](int bits) {
      display_width();
      ColumnType t{.name = "integer"};
      const bool is_unsigned = accept("UNSIGNED");
      if (bits < 64) {
        t.min = is_unsigned ? 0 : -(std::int64_t{1} << (bits - 1));
        t.max = is_unsigned ? (std::int64_t{1} << bits) - 1 : (std::int64_t{1} << (bits - 1)) - 1;
      } else if (is_unsigned) {
        t.min = 0;
      }
      c.type = t;
    };
    if (accept("BIGINT")) {
      integer_type(64);
    } else if (accept("INT") || accept("INTEGER")) {
      integer_type(32);
    } else if (accept("SMALLINT")) {
      integer_type(16);
    } else if (accept("TINYINT")) {
      integer_type(8);
    } else if (accept("VARCHAR")) {
      expect_symbol("(");
      c.type = ColumnType{.max_chars = static_cast<std::size_t>(std::max<std::int64_t>(0, token_.number))};
      length();
      expect_symbol(")");
      integer = false;
    } else if (accept("CHAR")) {
      // CHAR alone is CHAR(1).
      c.type = ColumnType{.max_chars = 1};
      if (accept_symbol("(")) {
        c.type->max_chars = static_cast<std::size_t>(std::max<std::int64_t>(0, token_.number));
        length();
        expect_symbol(")");
      }
      integer = false;
    } else if (accept("TEXT")) {
      integer = false;
    } else if (accept("DATETIME") || accept("TIMESTAMP")) {
      display_width();  // fractional seconds
    } else {
      fail("a column type: BIGINT, INT, SMALLINT, TINYINT, VARCHAR(n), CHAR(n), TEXT, DATETIME or TIMESTAMP");
    }
    // A NOT NULL column without a DEFAULT takes its type's zero, as MySQL's implicit default.
    Value default_value = integer ? Value{std::int64_t{0}} : Value{std::string()};
    std::optional<std::size_t> default_null_at;  // DEFAULT NULL, and where
    bool has_default = false;
    bool nullable = true;
    for (;;) {
      const std::size_t at = token_.position;
      if (accept("NOT")) {
        expect("NULL");
        nullable = false;
      } else if (accept("NULL")) {
        nullable = true;
        c.said_null = true;
      } else if (accept("DEFAULT")) {
        has_default = true;
        if (is("NULL")) {
          default_null_at = token_.position;
          advance();
          default_value = integer ? Value{std::int64_t{0}} : Value{std::string()};
        } else {
          default_value = literal_default(integer);
          default_null_at.reset();
        }
      } else if (accept("UNIQUE")) {
        accept("KEY");
        unique_at = at;
      } else if (accept("COMMENT")) {
        comment();
      } else if (is("AUTO_INCREMENT")) {
        fail("a column attribute other than AUTO_INCREMENT (only id is auto-increment)");
      } else if (accept("PRIMARY")) {
        expect("KEY");
        primary_at = at;
      } else {
        break;
      }
    }
    if (!is_symbol(",") && !is_symbol(")")) fail("NOT NULL, NULL, DEFAULT, UNIQUE, PRIMARY KEY, COMMENT, , or )");
    if (default_null_at && !nullable) fail_at(*default_null_at, "a default other than NULL for a NOT NULL column (1067 Invalid default value)");
    c.nullable = nullable;
    c.null_by_default = nullable && (!has_default || default_null_at);
    c.has_default = has_default;
    return default_value;
  }

  // DEFAULT's value: integers for integer columns (also written '0', as mysqldump does),
  // strings for text columns (a number becomes its digits, as MySQL converts it).
  Value literal_default(bool integer) {
    if (token_.kind == Token::Kind::number) {
      Value v = integer ? Value{token_.number} : Value{token_.text};
      advance();
      return v;
    }
    if (token_.kind == Token::Kind::string) {
      if (!integer) {
        Value v = std::move(token_.text);
        advance();
        return v;
      }
      std::int64_t n = 0;
      const std::string& s = token_.text;
      const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), n);
      if (s.empty() || error != std::errc() || end != s.data() + s.size()) fail("an integer default for a number column");
      advance();
      return n;
    }
    fail(integer ? "an integer default" : "a 'string' default");
  }

  // An optional (n) after a type: a display width, CHAR's length, fractional seconds.
  void display_width() {
    if (!accept_symbol("(")) return;
    length();
    expect_symbol(")");
  }

  void length() {
    if (token_.kind != Token::Kind::number || token_.number < 0) fail("a length");
    advance();
  }

  void comment() {
    if (token_.kind != Token::Kind::string) fail("the comment's 'text'");
    advance();
  }

  // ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='...' and the like: `[DEFAULT] name [=] value`
  // each, accepted and ignored (the model has one engine and compares bytes; AUTO_INCREMENT=n
  // does not move the first id).
  void table_options() {
    while (!at_end() && !is_symbol(";")) {
      accept("DEFAULT");
      if (accept("CHARACTER")) {
        expect("SET");
      } else if (token_.kind == Token::Kind::word) {
        advance();
      } else {
        fail("a table option (ENGINE=InnoDB, DEFAULT CHARSET=utf8mb4, ...) or the end of the statement");
      }
      accept_symbol("=");
      if (token_.kind != Token::Kind::word && token_.kind != Token::Kind::number && token_.kind != Token::Kind::string)
        fail("the table option's value");
      advance();
      accept_symbol(",");
    }
    finish("");
  }

  static constexpr int kMaxDepth = 64;   // nested parentheses, NOTs and signs
  static constexpr int kMaxHeight = 32;  // levels of an expression's tree
  std::string_view text_;
  Lexer lexer_;
  Token token_{};
  Prepared out_{};
  int depth_ = 0;
  bool having_ = false;  // in HAVING: an aggregate reads as a column of a group's row
  bool distinct_ = false;  // SELECT DISTINCT: ORDER BY names the listed columns only
  std::size_t computed_at_ = 0;  // where the select list's first computed column is
  bool assigning_ = false;  // in an assignment's value: LAST_INSERT_ID(expr) may be it
  bool calls_allowed_ = false;  // in a select list without a table: GET_LOCK() and the others may be there
  std::optional<std::pair<std::size_t, std::size_t>> setter_{};  // LAST_INSERT_ID(expr): where it starts and what follows it
  std::vector<std::pair<std::size_t, std::string>> listed_{};  // the select list's columns and where each is
};

}  // namespace

// The length of the valid UTF-8 sequence at the start of `s`, 0 for none (an invalid byte).
std::size_t utf8_length(std::string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto continuation = [&](std::size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return continuation(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!continuation(1) || !continuation(2)) return 0;
    if ((c == 0xE0 && b(1) < 0xA0) || (c == 0xED && b(1) > 0x9F)) return 0;  // overlong, surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!continuation(1) || !continuation(2) || !continuation(3)) return 0;
    if ((c == 0xF0 && b(1) < 0x90) || (c == 0xF4 && b(1) > 0x8F)) return 0;
    return 4;
  }
  return 0;
}

// `text` for a one-line message: control characters and bytes that are not UTF-8 as \xNN.
std::string escaped(std::string_view text) {
  std::string out;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t n = utf8_length(text.substr(at));
    const auto c = static_cast<unsigned char>(text[at]);
    if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7F))) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
      ++at;
    } else {
      out.append(text.substr(at, n));
      at += n;
    }
  }
  return out;
}

Error::Error(std::size_t position, std::string near, std::string expected)
    : std::runtime_error("1064 You have an error in your SQL syntax near '" + escaped(near) + "' " +
                         (near.empty() ? std::string("at the end") : "at position " + std::to_string(position)) +
                         ": expected " + expected),
      position_(position),
      near_(std::move(near)),
      expected_(std::move(expected)) {}

const char* Error::supported() {
  return "SELECT, INSERT, REPLACE, UPDATE, DELETE, BEGIN, START TRANSACTION, COMMIT, ROLLBACK, SET [SESSION] TRANSACTION, "
         "SET innodb_lock_wait_timeout, CREATE TABLE, ALTER TABLE ... ADD|DROP INDEX";
}

Prepared prepare(std::string_view text) {
  if (text.size() > kMaxText)
    refuse(text, kMaxText, "a statement of at most " + std::to_string(kMaxText) + " bytes");
  for (std::size_t at = 0; at < text.size();) {
    if (text[at] == '\0') refuse(text, at, "a statement without NUL bytes");
    const std::size_t n = utf8_length(text.substr(at));
    if (n == 0) refuse(text, at, "UTF-8 text");
    at += n;
  }
  Prepared out = Parser(text).statement();
  if (!out.create) out.statement.written = std::make_shared<const Written>(Written{out.text, out.params});
  return out;
}

Statement bind(const Prepared& prepared, const std::vector<Value>& args) {
  if (prepared.create)
    throw sim::UsageError("models::db::sql: " + prepared.text +
                          " defines a table: give Prepared::create to Server::create_table instead");
  if (args.size() != prepared.params.size())
    throw sim::UsageError("models::db::sql: " + prepared.text + " takes " + std::to_string(prepared.params.size()) +
                          " parameters, got " + std::to_string(args.size()));
  Statement s = prepared.statement;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Param& p = prepared.params[i];
    switch (p.in) {
      case Param::In::where: s.where[p.where_index].value = args[i]; break;
      case Param::In::values: (p.row == 0 ? s.values : s.edit().more_rows[p.row - 1])[p.column] = args[i]; break;
      case Param::In::on_update: s.on_update[p.column] = args[i]; break;
      case Param::In::args: s.edit().args[p.arg] = args[i]; break;
    }
  }
  for (const std::string& column : prepared.from_values) s.on_update[column] = s.values.at(column);
  return s;
}

std::string as_written(const Statement& statement, Engine engine) {
  if (!statement.written) return to_string(statement, engine);  // built in code: in the server's dialect
  const Written& w = *statement.written;
  // The value bound to the `?` numbered `n`, where bind() put it.
  const auto bound = [&](std::size_t n) -> std::string {
    if (n >= w.params.size()) return "?";
    const Param& p = w.params[n];
    const Value* v = nullptr;
    switch (p.in) {
      case Param::In::where:
        if (p.where_index < statement.where.size()) v = &statement.where[p.where_index].value;
        break;
      case Param::In::values: {
        const Values* row = p.row == 0 ? &statement.values
                            : p.row - 1 < statement.more().more_rows.size() ? &statement.more().more_rows[p.row - 1]
                                                                            : nullptr;
        if (row != nullptr)
          if (const auto it = row->find(p.column); it != row->end()) v = &it->second;
        break;
      }
      case Param::In::on_update:
        if (const auto it = statement.on_update.find(p.column); it != statement.on_update.end()) v = &it->second;
        break;
      case Param::In::args:
        if (p.arg < statement.more().args.size()) v = &statement.more().args[p.arg];
        break;
    }
    return v == nullptr ? "?" : to_string(*v);
  };
  std::string out;
  std::size_t n = 0;
  char quote = 0;  // inside a quoted string or name: its quote
  // PostgreSQL's strings take a backslash as a character, except in its E'...' strings.
  bool backslash_escapes = !w.numbered;
  const auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; };
  for (std::size_t i = 0; i < w.text.size(); ++i) {
    const char c = w.text[i];
    if (quote != 0) {
      out += c;
      if (c == '\\' && quote == '\'' && backslash_escapes && i + 1 < w.text.size()) out += w.text[++i];
      else if (c == quote) quote = 0;
    } else if (c == '\'' || c == '`' || c == '"') {
      if (w.numbered)
        backslash_escapes = c == '\'' && i > 0 && (w.text[i - 1] == 'E' || w.text[i - 1] == 'e') && (i == 1 || !word_char(w.text[i - 2]));
      out += c;
      quote = c;
    } else if (c == '?' && !w.numbered) {
      out += bound(n++);
    } else if (c == '$' && w.numbered && i + 1 < w.text.size() && std::isdigit(static_cast<unsigned char>(w.text[i + 1])) &&
               (i == 0 || !word_char(w.text[i - 1]))) {
      std::size_t number = 0;  // `$n`: params[n - 1]
      std::size_t end = i + 1;
      while (end < w.text.size() && std::isdigit(static_cast<unsigned char>(w.text[end])) && number <= kMaxItems)
        number = number * 10 + static_cast<std::size_t>(w.text[end++] - '0');
      if (number == 0 || number > kMaxItems) out.append(w.text, i, end - i);
      else out += bound(number - 1);
      i = end - 1;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == ';')) out.pop_back();
  return out;
}

}  // namespace models::db::sql
