#pragma once
// MariaDB's SQL parser (models/db/sql.hpp says what it reads): the class, whose member functions
// are defined by statement kind:
// - sql_parser.cpp: the statement's first word, tokens, values, WHERE and assignments;
// - sql_expr.cpp: expressions;
// - sql_select.cpp: SELECT, its list, aggregates, GROUP BY, ORDER BY and LIMIT;
// - sql_dml.cpp: INSERT, REPLACE, UPDATE, DELETE and SET;
// - sql_ddl.cpp: ALTER TABLE and CREATE TABLE.
// Internal to models/db/innodb.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/db/innodb/sql_lexer.hpp"
#include "models/db/rows.hpp"
#include "models/db/sql.hpp"

namespace models::db::sql::mariadb {

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

  Prepared statement();

 private:
  // --- Tokens ----------------------------------------------------------------

  void advance() { token_ = lexer_.next(); }
  bool next_is_symbol(std::string_view symbol) const;
  bool next_is_word(std::string_view keyword) const;
  bool at_end() const { return token_.kind == Token::Kind::end; }
  bool is(std::string_view keyword) const { return token_.kind == Token::Kind::word && iequals(token_.text, keyword); }
  bool is_symbol(std::string_view symbol) const { return token_.kind == Token::Kind::symbol && token_.text == symbol; }
  bool accept(std::string_view keyword);
  bool accept_symbol(std::string_view symbol);
  void expect(std::string_view keyword) {
    if (!accept(keyword)) fail(std::string(keyword));
  }
  void expect_symbol(std::string_view symbol, std::string expected = {}) {
    if (!accept_symbol(symbol)) fail(expected.empty() ? std::string(symbol) : std::move(expected));
  }

  [[noreturn]] void fail_at(std::size_t position, std::string expected) const { refuse(text_, position, std::move(expected)); }
  [[noreturn]] void fail(std::string expected) const { fail_at(token_.position, std::move(expected)); }
  [[noreturn]] void unsupported() const { fail(std::string("a statement the model runs: ") + Error::supported()); }

  std::string name(const char* expected);

  void check_count(std::size_t count, const char* what) const {
    if (count >= kMaxItems) fail("at most " + std::to_string(kMaxItems) + " " + what + " in a statement");
  }

  void finish(const std::string& or_else);

  // --- Values and conditions ---------------------------------------------------

  Value value(Param param);

  // --- Expressions -------------------------------------------------------------

  Expr expression();

  Expr conjunction() { return chain(Expr::Kind::logical_and, "AND", &Parser::negation); }

  Expr chain(Expr::Kind kind, std::string_view keyword, Expr (Parser::*operand)());

  Expr negation();

  Expr predicate();

  std::optional<Expr::Op> comparison();

  Expr additive();

  Expr multiplicative();

  Expr signed_term();

  Expr primary();

  // The server's functions a select list without a table may call: MariaDB's user locks
  // (models/db/innodb/user_locks.hpp) and CONNECTION_ID(), each with its number of arguments.
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
  std::optional<SessionCall> session_call_named() const;
  Expr session_call(const SessionCall& c);

  Expr unix_timestamp();
  const char* temporal_named() const;

  Expr last_insert_id();
  static constexpr const char* kSetterAlone =
      "LAST_INSERT_ID() (LAST_INSERT_ID(expr) is modelled as the whole value of one assignment: c = LAST_INSERT_ID(expr))";
  bool reads_engine_slot(const Expr& e) const;

  Expr param_expr();

  Expr unary(Expr::Kind kind, Expr operand);
  Expr binary(Expr::Kind kind, Expr::Op op, Expr a, Expr b);
  Expr grown(Expr e);

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

  void where_clause();

  static void split_and(Expr e, std::vector<Expr>& out);

  static std::optional<Condition> simple_condition(const Expr& e);

  std::size_t param_index(std::size_t slot) const;

  void assignments(Values& literal, Param::In in, const std::vector<std::string>& inserted);

  std::vector<std::string> column_list();

  std::vector<std::string> select_list();

  bool plain_column_ahead() const;

  std::optional<std::pair<StatementExtra::Aggregate, std::string>> aggregate_call();

  void use_aggregate(const std::pair<StatementExtra::Aggregate, std::string>& aggregate, std::size_t at, const std::string& alias = {});

  std::optional<Expr> aggregate_operand();

  void group_by();

  void check_grouping();

  // --- Statements --------------------------------------------------------------

  void select();

  std::vector<std::string> columns_read() const;
  static void add_columns(const Expr& e, std::vector<std::string>& out);

  void distinct_columns(std::size_t at);

  bool from_ahead() const;

  void computed_select();
  static const Expr* column_in(const Expr& e);
  std::optional<std::string> alias();
  std::string computed_name(const Expr& e, std::size_t at, std::optional<std::string> given, const std::vector<std::string>& taken) const;
  static std::string trimmed(std::string_view text);

  bool order_by();

  bool limit(bool offset_allowed);

  std::string on_locked();

  void insert();

  static std::string column_at(const std::vector<std::string>& columns, std::size_t i) {
    return i < columns.size() ? columns[i] : std::string();
  }

  void fill_values(const std::vector<std::string>& columns, std::vector<Value> values, std::size_t at, std::size_t row = 0);

  void rest_of_insert(const std::vector<std::string>& columns, bool replace);

  void on_duplicate_key_update(const std::vector<std::string>& columns);

  void insert_select(const std::vector<std::string>& columns);

  void update();

  void remove();
  void where_order_limit(std::string more);

  void set_isolation();

  // --- ALTER TABLE ----------------------------------------------------------------

  void alter_table();

  // --- CREATE TABLE ---------------------------------------------------------------

  void create_table();
  void table_from(TableSchema& schema, std::vector<ColumnDef>& columns, std::optional<KeyIndexDef>& natural,
                  std::vector<KeyIndexDef>& indexes, bool has_id, bool has_primary, std::size_t close_at);

  KeyIndexDef index_clause();

  KeyIndexDef index_columns(KeyIndexDef def);

  void id_definition(bool& auto_increment, std::optional<std::size_t>& primary_at);

  Value column_definition(std::optional<std::size_t>& unique_at, std::optional<std::size_t>& primary_at, ColumnDef& c);

  Value literal_default(bool integer);

  void display_width();

  void length();

  void comment();

  void table_options();

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

}  // namespace models::db::sql::mariadb
