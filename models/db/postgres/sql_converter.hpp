#pragma once
// The converter from libpg_query's parse tree to the model's typed statements
// (models/db/postgres/sql.hpp), one statement at a time. Internal to models/db/postgres; its
// members are defined by the kind of statement they read:
//   sql_expr.cpp     parameters, the table and its columns, expressions, WHERE, aggregates
//   sql_select.cpp   SELECT (and the advisory-lock functions)
//   sql_modify.cpp   INSERT (ON CONFLICT, RETURNING), UPDATE and DELETE
//   sql_utility.cpp  transactions, savepoints and settings
//   sql_ddl.cpp      CREATE TABLE and CREATE INDEX

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/db/postgres/sql_tree.hpp"

namespace models::db::pg {

using sql::Param;
using sql::Prepared;

// What a column reference may name where it is: `excluded.c` in ON CONFLICT DO UPDATE; no
// column nor parameter in a VALUES row's computed value (it is computed here, once).
struct Context {
  bool excluded = false;
  bool constant = false;
  bool having = false;  // HAVING: the aggregate reads as a column of a group's row
  bool indexed = false;  // an index's WHERE, or ON CONFLICT's inference WHERE: columns, no parameter
  bool no_row = false;   // a SELECT without FROM: a column does not exist, a parameter may be there
};

// The advisory-lock functions PostgreSQL 15 has with one bigint key (and unlock_all, with none).
struct AdvisoryFunction {
  std::string_view name;
  Advisory advisory;
};
inline constexpr AdvisoryFunction kAdvisoryFunctions[] = {
    {"pg_advisory_lock", {Advisory::Op::lock, false, false}},
    {"pg_advisory_lock_shared", {Advisory::Op::lock, false, true}},
    {"pg_advisory_xact_lock", {Advisory::Op::lock, true, false}},
    {"pg_advisory_xact_lock_shared", {Advisory::Op::lock, true, true}},
    {"pg_try_advisory_lock", {Advisory::Op::try_lock, false, false}},
    {"pg_try_advisory_lock_shared", {Advisory::Op::try_lock, false, true}},
    {"pg_try_advisory_xact_lock", {Advisory::Op::try_lock, true, false}},
    {"pg_try_advisory_xact_lock_shared", {Advisory::Op::try_lock, true, true}},
    {"pg_advisory_unlock", {Advisory::Op::unlock, false, false}},
    {"pg_advisory_unlock_shared", {Advisory::Op::unlock, false, true}},
    {"pg_advisory_unlock_all", {Advisory::Op::unlock_all, false, false}},
};

// The column types a table may have: integers (and timestamps, integers in the model) default
// to 0, text to ''; boolean is an integer 0 or 1; serial is id's.
enum class Type { integer, serial, text, boolean, timestamp };


// What every statement's conversion reads: its `$n` parameters, its one table and the
// columns named in it, expressions and WHERE, and the SELECT's one aggregate. What it builds
// is out_, the Prepared statement.
class ExprReader {
 protected:
  Statement& s();

  // --- Parameters, the table and its columns
  void place(const PgQuery__ParamRef* ref, Param param);
  void relation(const PgQuery__RangeVar* r);
  std::pair<std::string, bool> column_ref(const PgQuery__ColumnRef* ref, const Context& context);
  void check_qualifier(const std::string& qualifier, std::size_t at) const;
  static bool is_star(const Node* n);
  void star(const PgQuery__ColumnRef* ref);

  // --- Expressions and the database's clock
  using ClockRead = StatementExtra::ClockRead;
  Expr expr(const Node* n, const Context& context);
  static std::optional<ClockRead> clock_source(const Node* n);
  static std::optional<ClockRead> epoch_read(const PgQuery__TypeCast* cast);
  Expr clock_expr(ClockRead read, std::size_t at, const Context& context);
  Expr param_expr(const PgQuery__ParamRef* ref, const Context& context);
  static std::string operator_of(const PgQuery__AExpr* a);
  static std::optional<Expr::Op> comparison(std::string_view op);
  Expr a_expr(const PgQuery__AExpr* a, const Context& context);
  Expr operation(const PgQuery__AExpr* a, const std::string& op, const Context& context);
  Expr bool_expr(const PgQuery__BoolExpr* b, const Context& context);
  static Expr unary(Expr::Kind kind, Expr operand, std::size_t at);
  static Expr binary(Expr::Kind kind, Expr::Op op, Expr a, Expr b, std::size_t at);
  static Expr grown(Expr e, std::size_t at);

  // Bounds the walk's recursion (casts and unary + nest without adding to the height).
  struct Depth {
    Depth(ExprReader& c, const Node* n) : converter(c) {
      if (++converter.depth_ > kMaxDepth) too_deep(location_of(n));
    }
    ~Depth() { --converter.depth_; }
    Depth(const Depth&) = delete;
    Depth& operator=(const Depth&) = delete;
    ExprReader& converter;
  };

  // --- WHERE
  void where(const Node* w);
  static bool is_value(const Node* n);
  static bool is_column(const Node* n);
  bool condition(const Node* term);

  // --- The SELECT's aggregate (HAVING and ORDER BY read it as an expression)
  void use_aggregate(const std::pair<StatementExtra::Aggregate, std::string>& aggregate, std::size_t at, const std::string& alias = {});
  std::optional<Expr> aggregate_operand(const Node* n);
  std::optional<std::pair<StatementExtra::Aggregate, std::string>> aggregate_of(const PgQuery__FuncCall* f);

  Prepared out_{};
  std::vector<bool> placed_{};  // which `$n` have their place
  std::string table_{}, alias_{};
  int depth_ = 0;
};

// CREATE TABLE's columns and constraints, gathered as the statement lists them, then checked
// and made the model's table (finish).
class TableBuilder {
 public:
  explicit TableBuilder(const std::string& table);
  void column_def(const PgQuery__ColumnDef* column);
  void table_constraint(const PgQuery__Constraint* constraint);
  TableSchema finish(std::size_t at);

 private:
  struct UniqueDef {
    std::string column, name;
    std::size_t at = 0;
  };
  struct TableDef {
    TableSchema schema{.name = ""};
    std::vector<std::pair<std::string, Value>> columns{};  // as listed, id included
    std::vector<std::string> nullable{};                    // the columns without NOT NULL
    std::vector<std::string> null_by_default{};             // those whose default is NULL
    std::optional<UniqueDef> unique{};
    std::vector<std::pair<IndexDef, std::size_t>> more_unique{};  // UNIQUE (a, b), a second UNIQUE: where each is
    std::optional<std::size_t> primary{};  // where PRIMARY KEY (id) is
    bool has_id = false;
    std::optional<std::string> natural_key{};  // the primary key's column, where it is not id
    std::vector<std::string> with_default{};   // the columns that give a DEFAULT
    std::map<std::string, ColumnType> types{};  // the columns of a bounded type (TableSchema::types)
  };

  void add_primary(std::size_t at);
  void add_unique(const PgQuery__Constraint* constraint, const std::vector<std::string>& columns, std::size_t at);
  static std::string constraint_name(const PgQuery__Constraint* constraint);
  static Type column_type(const PgQuery__TypeName* type, std::size_t at);
  static std::optional<ColumnType> column_limits(const PgQuery__TypeName* type);
  static Value column_default(const Node* e, Type type, std::size_t at);

  std::string table_;
  TableDef table_def_{};
};

// One statement's conversion: convert() reads the statement's tree by its kind.
class Converter : private ExprReader {
 public:
  explicit Converter(std::string_view text);
  Prepared convert(const Node* stmt, std::size_t at);

 private:
  // --- SELECT
  void select(const PgQuery__SelectStmt* sel, std::size_t at);
  void group_by(const PgQuery__SelectStmt* sel);
  void check_grouping();
  void distinct_columns(const PgQuery__SelectStmt* sel, std::size_t at);
  void computed_select(const PgQuery__SelectStmt* sel, std::size_t at);
  void computed_column(const PgQuery__ResTarget* target, const Context& context);
  static std::string figured_name(const Node* n);
  static void refuse_select_clauses(const PgQuery__SelectStmt* sel, std::size_t at);
  bool advisory(const PgQuery__SelectStmt* sel);
  Value advisory_key(const Node* arg);
  void select_list(const PgQuery__SelectStmt* sel);
  void order_by(Node* const* sorts, std::size_t n);
  static std::optional<std::int64_t> row_count(const Node* n, const char* clause, const char* negative_state);
  void locking(const PgQuery__SelectStmt* sel);

  // --- INSERT, UPDATE and DELETE
  void insert(const PgQuery__InsertStmt* ins);
  std::vector<std::string> insert_columns(const PgQuery__InsertStmt* ins);
  void values_row(const Node* list, const std::vector<std::string>& columns, std::size_t row, std::size_t last_column_at);
  Value stored_value(const Node* n);
  void on_conflict(const PgQuery__OnConflictClause* c);
  void returning(Node* const* targets, std::size_t n);
  struct Assignment {
    std::string column;
    const Node* value;
  };
  static std::vector<Assignment> assignments(Node* const* targets, std::size_t n);
  void update(const PgQuery__UpdateStmt* up);
  void remove(const PgQuery__DeleteStmt* del);

  // --- Transactions and settings
  void transaction(const PgQuery__TransactionStmt* t);
  void savepoint(const PgQuery__TransactionStmt* t, Savepoint::Op op);
  static std::optional<Isolation> transaction_modes(Node* const* options, std::size_t n);
  void set(const PgQuery__VariableSetStmt* v);
  static std::int64_t timeout(const std::string& name, const PgQuery__AConst* value, std::size_t at);

  // --- CREATE TABLE and CREATE INDEX
  void create_table(const PgQuery__CreateStmt* c);
  void create_index(const PgQuery__IndexStmt* ix);

  std::vector<std::pair<std::size_t, std::string>> listed_{};  // the select list's columns and where each is
  bool distinct_ = false;  // SELECT DISTINCT: ORDER BY names listed columns; no locking clause
  std::size_t computed_at_ = 0;  // where the select list's first computed column is
};

}  // namespace models::db::pg
