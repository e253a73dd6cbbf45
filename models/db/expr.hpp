#pragma once
// SQL expressions over one row, as a WHERE clause, an UPDATE's SET or an ON DUPLICATE KEY
// UPDATE computes them: arithmetic, comparisons, AND / OR / NOT, IN, BETWEEN and LIKE, with
// SQL's NULL and its three-valued logic (a row matches only where the WHERE is true).
//
// Values are MySQL's integers and strings (models/db/database.hpp). Integer arithmetic that
// leaves BIGINT's range fails with MySQL's 1690; `x DIV 0` and `x % 0` are NULL, as MySQL's
// are. A string meets a number as MySQL converts it: its leading integer, 0 for none.
// Strings compare byte by byte (a binary collation; MariaDB's default one ignores case), and
// LIKE's `%` and `_` match bytes, `\` escaping them.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <boost/container/flat_map.hpp>

namespace models::db {

/// SQL's NULL as a stored value: a column that may hold it, a `?` bound to it, a default. It
/// sorts before every integer and string, as InnoDB's indexes order it.
using Null = std::monostate;
/// A column's or a parameter's value: NULL, an integer or a string. A default-made Value is
/// NULL.
using Value = std::variant<Null, std::int64_t, std::string>;
inline bool is_null(const Value& v) { return std::holds_alternative<Null>(v); }
/// A row's or a statement's columns by name, in name order (a sorted vector). A table stores
/// its rows' columns in the smaller form of models/db/row_values.hpp.
using Values = boost::container::flat_map<std::string, Value>;

struct Expr {
  enum class Kind {
    literal,      // value
    null,         // NULL
    param,        // a `?`: Scope::args[param]
    column,       // the row's column
    inserted,     // VALUES(column) in ON DUPLICATE KEY UPDATE: the value the INSERT gave it
    negate,       // -args[0]
    logical_not,  // NOT args[0]
    logical_and,  // args[0] AND args[1] AND ...
    logical_or,   // args[0] OR args[1] OR ...
    compare,      // args[0] op args[1]
    arith,        // args[0] op args[1]
    in,           // args[0] [NOT] IN (args[1], ...)
    between,      // args[0] [NOT] BETWEEN args[1] AND args[2]
    like,         // args[0] [NOT] LIKE args[1]
    is_null,      // args[0] IS [NOT] NULL
    coalesce,     // COALESCE(args...): the first that is not NULL (MariaDB's IFNULL(a, b) too)
    session_call,  // call(args...): the session's or the server's value, not the row's
  } kind = Kind::literal;
  enum class Op { eq, ne, lt, le, gt, ge, add, sub, mul, div, mod } op = Op::eq;
  /// session_call: MariaDB's user locks (models/db/innodb/user_locks.hpp) and CONNECTION_ID(). Their
  /// values depend on the server, not the row: the engine runs each call, in the order written,
  /// and puts its answer in its place before the expression is evaluated (evaluate() refuses one).
  enum class Call { get_lock, release_lock, release_all_locks, is_free_lock, is_used_lock, connection_id } call = Call::get_lock;
  bool negated = false;  // NOT IN, NOT BETWEEN, NOT LIKE, IS NOT NULL
  Value value{};
  std::size_t param = 0;
  std::string column{};
  std::vector<Expr> args{};
  /// Levels of the tree below and including this node (a literal's is 1). The parser bounds
  /// it, so the recursive copy, comparison and narration of an expression stay shallow.
  int height = 1;
};

class RowValues;  // models/db/row_values.hpp

/// The row an expression reads: columns by name, or a table's stored row.
class RowRef {
 public:
  RowRef(const Values& values) : values_(&values) {}  // NOLINT: either reads as a row
  RowRef(const RowValues& stored) : stored_(&stored) {}  // NOLINT
  /// The column's value; nullopt where the row has no such column.
  std::optional<Value> find(const std::string& column) const;

 private:
  const Values* values_ = nullptr;
  const RowValues* stored_ = nullptr;
};

/// What an expression reads: the row, the statement's bound `?`s, and for VALUES(col) the
/// row an INSERT tried to add.
struct Scope {
  RowRef row;
  const std::vector<Value>& args;
  const Values* inserted = nullptr;
  /// A write's refusal of a division by zero (x DIV 0, x % 0, PostgreSQL's x / 0), as its server
  /// words it: MariaDB's strict mode refuses one in an INSERT or UPDATE (1365), PostgreSQL
  /// anywhere (22012). Null: the division is NULL, as MariaDB's SELECT gives it.
  const char* division_by_zero = nullptr;
};

/// Adds every column `e` reads (VALUES(col) names one of the INSERT's) to `out`.
void columns_of(const Expr& e, std::vector<std::string>& out);

/// An expression's value; nullopt is NULL (a column or `?` holding Null reads as nullopt).
/// Throws ExprError.
std::optional<Value> evaluate(const Expr& e, const Scope& scope);
/// Whether a WHERE term is true for the row (NULL and false are not).
bool holds(const Expr& e, const Scope& scope);

/// An error evaluating an expression, with MySQL's number: 1054 for a column the table lacks,
/// 1690 for arithmetic out of BIGINT's range.
struct ExprError {
  int code = 0;
  std::string message;
};

/// MySQL's reading of a value in a numeric context: an integer as it is, a string as its
/// leading integer after spaces (0 for none; past BIGINT's range, its nearest end). Not NULL.
std::int64_t as_number(const Value& v);

/// The expression as SQL, for narration: "value % 3 = 0".
std::string to_string(const Expr& e);

}  // namespace models::db
