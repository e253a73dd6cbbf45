// PostgreSQL's SQL: what every statement reads, its parameters, its table's columns,
// expressions, WHERE and the SELECT's aggregate (models/db/postgres/sql_converter.hpp).

#include <algorithm>
#include <cstdint>
#include <memory>

#include <fmt/format.h>

#include "models/db/postgres/sql_converter.hpp"
#include "models/db/rows.hpp"

namespace models::db::pg {

Statement& ExprReader::s() { return out_.statement; }

// --- Parameters --------------------------------------------------------------------------

// `$n` goes where `param` says, in Prepared::params[n - 1]. A number used twice is refused:
// one `$n` has one place to be bound to.
void ExprReader::place(const PgQuery__ParamRef* ref, Param param) {
  const std::size_t at = position(ref->location);
  if (ref->number < 1) throw Error("42P02", at, "there is no parameter $" + std::to_string(ref->number));
  const auto n = static_cast<std::size_t>(ref->number);
  if (n > sql::kMaxItems) too_many(at, "parameters");
  if (n > placed_.size()) {
    placed_.resize(n, false);
    out_.params.resize(n);
  }
  if (placed_[n - 1]) refuse(at, "a parameter used twice ($" + std::to_string(n) + ")");
  placed_[n - 1] = true;
  out_.params[n - 1] = std::move(param);
}

// --- Tables and columns ------------------------------------------------------------------

// The statement's one table (a schema-qualified name is refused), and its alias if any.
void ExprReader::relation(const PgQuery__RangeVar* r) {
  const std::size_t at = position(r->location);
  if (!empty(r->schemaname) || !empty(r->catalogname)) refuse(at, "a table qualified by its schema");
  if (r->alias != nullptr && r->alias->n_colnames > 0) refuse(at, "column aliases for a table");
  table_ = text_of(r->relname);
  alias_ = r->alias != nullptr ? text_of(r->alias->aliasname) : std::string();
  s().table = table_;
}

// `c`, `t.c` (t the table, or its alias where it has one) or, where the context allows it,
// `excluded.c`: the column, and whether it is EXCLUDED's (the row the INSERT proposed).
std::pair<std::string, bool> ExprReader::column_ref(const PgQuery__ColumnRef* ref, const Context& context) {
  const std::size_t at = position(ref->location);
  if (ref->n_fields == 0 || ref->n_fields > 2) refuse(at, "a column qualified by its schema");
  const Node* last = ref->fields[ref->n_fields - 1];
  if (last->node_case != PG_QUERY__NODE__NODE_STRING) refuse(at, "* here");
  std::string column = str(last);
  if (context.constant || context.no_row) throw Error("42703", at, "column \"" + column + "\" does not exist");
  if (ref->n_fields == 1) return {std::move(column), false};
  const std::string qualifier = str(ref->fields[0]);
  if (context.excluded && qualifier == "excluded") return {std::move(column), true};
  check_qualifier(qualifier, at);
  return {std::move(column), false};
}

void ExprReader::check_qualifier(const std::string& qualifier, std::size_t at) const {
  if (qualifier != (alias_.empty() ? table_ : alias_))
    throw Error("42P01", at, "missing FROM-clause entry for table \"" + qualifier + "\"");
}

bool ExprReader::is_star(const Node* n) {
  return n != nullptr && n->node_case == PG_QUERY__NODE__NODE_COLUMN_REF && n->column_ref->n_fields > 0 &&
         n->column_ref->fields[n->column_ref->n_fields - 1]->node_case == PG_QUERY__NODE__NODE_A_STAR;
}

// `*` or `t.*`.
void ExprReader::star(const PgQuery__ColumnRef* ref) {
  if (ref->n_fields > 2) refuse(position(ref->location), "a column qualified by its schema");
  if (ref->n_fields == 2) check_qualifier(str(ref->fields[0]), position(ref->location));
}

// --- Expressions -------------------------------------------------------------------------
//
// The tree maps onto models/db/expr.hpp node for node, as sql.cpp's parser builds it:
// comparisons and arithmetic are binary nodes, an AND or OR chain one node with its terms,
// IN, BETWEEN, LIKE and IS [NOT] NULL nodes with `negated` for their NOT forms.

Expr ExprReader::expr(const Node* n, const Context& context) {
  const Depth depth(*this, n);
  using K = Expr::Kind;
  switch (n->node_case) {
    case PG_QUERY__NODE__NODE_A_CONST:
      if (n->a_const->isnull) return Expr{.kind = K::null};
      return Expr{.kind = K::literal, .value = literal(n->a_const)};
    case PG_QUERY__NODE__NODE_PARAM_REF: return param_expr(n->param_ref, context);
    case PG_QUERY__NODE__NODE_COLUMN_REF: {
      auto [column, excluded] = column_ref(n->column_ref, context);
      // HAVING reads the table's columns, not the select list's names: an alias is no column there.
      const auto& e = s().more();
      if (context.having && !e.aggregate_alias.empty() && column == e.aggregate_alias &&
          std::find(e.group_by.begin(), e.group_by.end(), column) == e.group_by.end())
        throw Error("42703", position(n->column_ref->location), "column \"" + column + "\" does not exist");
      return Expr{.kind = excluded ? K::inserted : K::column, .column = std::move(column)};
    }
    case PG_QUERY__NODE__NODE_TYPE_CAST:
      if (auto folded = folded_cast(n->type_cast)) return Expr{.kind = K::literal, .value = std::move(*folded)};
      if (auto read = epoch_read(n->type_cast)) return clock_expr(*read, position(n->type_cast->location), context);
      return expr(n->type_cast->arg, context);  // the model's values carry no type
    case PG_QUERY__NODE__NODE_A_EXPR: return a_expr(n->a_expr, context);
    case PG_QUERY__NODE__NODE_BOOL_EXPR: return bool_expr(n->bool_expr, context);
    case PG_QUERY__NODE__NODE_NULL_TEST: {
      Expr test = unary(K::is_null, expr(n->null_test->arg, context), position(n->null_test->location));
      test.negated = n->null_test->nulltesttype == PG_QUERY__NULL_TEST_TYPE__IS_NOT_NULL;
      return test;
    }
    case PG_QUERY__NODE__NODE_FUNC_CALL:
      if (context.having)
        if (auto aggregate = aggregate_operand(n)) return std::move(*aggregate);
      if (const std::string name = catalog_name(n->func_call->funcname, n->func_call->n_funcname);
          name == "extract" || name == "date_part" || clock_source(n))
        refuse(location_of(n), name + "() outside extract(epoch from now())::bigint (the model's values are integers and strings; "
                                      "that cast reads the database's clock in whole seconds)");
      refuse(location_of(n), construct_name(n));
    case PG_QUERY__NODE__NODE_SQLVALUE_FUNCTION:
      if (clock_source(n))
        refuse(location_of(n), "CURRENT_TIMESTAMP outside extract(epoch from CURRENT_TIMESTAMP)::bigint (the model's values are "
                               "integers and strings; that cast reads the database's clock in whole seconds)");
      refuse(location_of(n), construct_name(n));
    case PG_QUERY__NODE__NODE_COALESCE_EXPR: {  // the first of its values that is not NULL
      const std::size_t at = position(n->coalesce_expr->location);
      Expr e{.kind = K::coalesce};
      for (std::size_t i = 0; i < n->coalesce_expr->n_args; ++i) {
        if (e.args.size() >= sql::kMaxItems) too_many(at, "values in COALESCE");
        e.args.push_back(expr(n->coalesce_expr->args[i], context));
      }
      return grown(std::move(e), at);
    }
    default: refuse(location_of(n), construct_name(n));
  }
}

// --- The database's clock ------------------------------------------------------------------
//
// The model's values are integers and strings, so the clock is read as PostgreSQL gives it to
// an integer: extract(epoch from <source>) cast to an integer type, whole seconds rounded
// (numeric to bigint rounds halves away from zero). The sources: now(), CURRENT_TIMESTAMP,
// LOCALTIMESTAMP and transaction_timestamp() read the transaction's start;
// statement_timestamp() and clock_timestamp() the statement's (the model's statement takes no
// time of its own before it reads the clock). The simulated epoch is the trial's start.

// Which reading a source gives, or nullopt for a node that is no clock.
std::optional<ExprReader::ClockRead> ExprReader::clock_source(const Node* n) {
  if (n == nullptr) return std::nullopt;
  if (n->node_case == PG_QUERY__NODE__NODE_SQLVALUE_FUNCTION) {
    switch (n->sqlvalue_function->op) {
      case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_TIMESTAMP:
      case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_TIMESTAMP_N:
      case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_LOCALTIMESTAMP:
      case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_LOCALTIMESTAMP_N: return ClockRead::transaction_rounded;
      default: return std::nullopt;
    }
  }
  if (n->node_case != PG_QUERY__NODE__NODE_FUNC_CALL || n->func_call->n_args != 0) return std::nullopt;
  const std::string name = catalog_name(n->func_call->funcname, n->func_call->n_funcname);
  if (name == "now" || name == "transaction_timestamp") return ClockRead::transaction_rounded;
  if (name == "statement_timestamp" || name == "clock_timestamp") return ClockRead::statement_rounded;
  return std::nullopt;
}

// extract(epoch from <source>) under a cast to an integer type: the reading it is, else nullopt.
std::optional<ExprReader::ClockRead> ExprReader::epoch_read(const PgQuery__TypeCast* cast) {
  const PgQuery__TypeName* type = cast->type_name;
  if (type == nullptr || type->n_names == 0) return std::nullopt;
  const std::string to = str(type->names[type->n_names - 1]);
  if (to != "int8" && to != "int4" && to != "int2" && to != "bigint" && to != "integer" && to != "int" && to != "smallint")
    return std::nullopt;
  const Node* arg = uncast(cast->arg);
  if (arg == nullptr || arg->node_case != PG_QUERY__NODE__NODE_FUNC_CALL) return std::nullopt;
  const PgQuery__FuncCall* f = arg->func_call;
  if (catalog_name(f->funcname, f->n_funcname) != "extract" || f->n_args != 2) return std::nullopt;
  const Node* field = f->args[0];
  if (field->node_case != PG_QUERY__NODE__NODE_A_CONST || field->a_const->val_case != PG_QUERY__A__CONST__VAL_SVAL ||
      text_of(field->a_const->sval->sval) != "epoch")
    return std::nullopt;
  return clock_source(f->args[1]);
}

// A clock reading's slot of `args`, one per kind of reading in the statement.
Expr ExprReader::clock_expr(ClockRead read, std::size_t at, const Context& context) {
  if (context.constant || context.indexed)
    refuse(at, "the database's clock in an INSERT's VALUES (insert the row, then set its time with an UPDATE), a computed value "
               "or an index's WHERE");
  for (const auto& [slot, r] : s().more().clock_args)
    if (r == read) return Expr{.kind = Expr::Kind::param, .param = slot};
  const std::size_t slot = s().more().args.size();
  s().edit().clock_args.emplace_back(slot, read);
  s().edit().args.emplace_back(std::int64_t{0});  // the clock's reading when the statement runs
  return Expr{.kind = Expr::Kind::param, .param = slot};
}

// A `$n` inside an expression: its value goes to StatementExtra::args when bound.
Expr ExprReader::param_expr(const PgQuery__ParamRef* ref, const Context& context) {
  if (context.constant) refuse(position(ref->location), "a parameter inside a computed value");
  if (context.indexed) refuse(position(ref->location), "a parameter in an index's WHERE");
  const std::size_t slot = s().more().args.size();
  place(ref, Param{.in = Param::In::args, .arg = slot});
  s().edit().args.emplace_back(std::int64_t{0});  // a placeholder until bind()
  return Expr{.kind = Expr::Kind::param, .param = slot};
}

std::string ExprReader::operator_of(const PgQuery__AExpr* a) {
  if (a->n_name != 1) refuse(position(a->location), "OPERATOR(" + dotted(a->name, a->n_name) + ")");
  return str(a->name[0]);
}

std::optional<Expr::Op> ExprReader::comparison(std::string_view op) {
  using Op = Expr::Op;
  static constexpr std::pair<std::string_view, Op> kOps[] = {{"=", Op::eq}, {"<>", Op::ne}, {"<", Op::lt},
                                                             {"<=", Op::le}, {">", Op::gt}, {">=", Op::ge}};
  for (const auto& [symbol, value] : kOps)
    if (op == symbol) return value;
  return std::nullopt;
}

Expr ExprReader::a_expr(const PgQuery__AExpr* a, const Context& context) {
  using K = Expr::Kind;
  const std::size_t at = position(a->location);
  const std::string op = operator_of(a);
  switch (a->kind) {
    case PG_QUERY__A__EXPR__KIND__AEXPR_OP: return operation(a, op, context);
    case PG_QUERY__A__EXPR__KIND__AEXPR_IN: {  // a [NOT] IN (v, ...): `=` or `<>` names which
      Expr in = unary(K::in, expr(a->lexpr, context), at);
      const auto [items, n] = items_of(a->rexpr);
      for (std::size_t i = 0; i < n; ++i) {
        if (i >= sql::kMaxItems) too_many(at, "values in an IN list");
        in.args.push_back(expr(items[i], context));
      }
      in = grown(std::move(in), at);
      in.negated = op == "<>";
      return in;
    }
    case PG_QUERY__A__EXPR__KIND__AEXPR_LIKE: {  // a [NOT] LIKE b: `~~` or `!~~`
      const Node* pattern = a->rexpr;
      if (pattern->node_case == PG_QUERY__NODE__NODE_FUNC_CALL &&
          catalog_name(pattern->func_call->funcname, pattern->func_call->n_funcname) == "like_escape")
        refuse(at, "LIKE ... ESCAPE");
      Expr like = binary(K::like, Expr::Op::eq, expr(a->lexpr, context), expr(pattern, context), at);
      like.negated = op == "!~~";
      return like;
    }
    case PG_QUERY__A__EXPR__KIND__AEXPR_BETWEEN:
    case PG_QUERY__A__EXPR__KIND__AEXPR_NOT_BETWEEN: {
      Expr between = unary(K::between, expr(a->lexpr, context), at);
      const auto [items, n] = items_of(a->rexpr);
      for (std::size_t i = 0; i < n; ++i) between.args.push_back(expr(items[i], context));
      between = grown(std::move(between), at);
      between.negated = a->kind == PG_QUERY__A__EXPR__KIND__AEXPR_NOT_BETWEEN;
      return between;
    }
    case PG_QUERY__A__EXPR__KIND__AEXPR_ILIKE: refuse(at, "ILIKE");
    case PG_QUERY__A__EXPR__KIND__AEXPR_SIMILAR: refuse(at, "SIMILAR TO");
    case PG_QUERY__A__EXPR__KIND__AEXPR_DISTINCT:
    case PG_QUERY__A__EXPR__KIND__AEXPR_NOT_DISTINCT: refuse(at, "IS [NOT] DISTINCT FROM");
    case PG_QUERY__A__EXPR__KIND__AEXPR_NULLIF: refuse(at, "NULLIF");
    case PG_QUERY__A__EXPR__KIND__AEXPR_OP_ANY: refuse(at, op + " ANY (...)");
    case PG_QUERY__A__EXPR__KIND__AEXPR_OP_ALL: refuse(at, op + " ALL (...)");
    case PG_QUERY__A__EXPR__KIND__AEXPR_BETWEEN_SYM:
    case PG_QUERY__A__EXPR__KIND__AEXPR_NOT_BETWEEN_SYM: refuse(at, "BETWEEN SYMMETRIC");
    default: refuse(at, "the operator " + op);
  }
}

// Comparisons, + - * / % and the signs. Integer `/` truncates as the model's DIV does (but
// PostgreSQL's `x / 0` fails where the model's gives NULL).
Expr ExprReader::operation(const PgQuery__AExpr* a, const std::string& op, const Context& context) {
  using K = Expr::Kind;
  using Op = Expr::Op;
  const std::size_t at = position(a->location);
  if (a->lexpr == nullptr) {  // a prefix operator: -x, +x
    if (op == "+") return expr(a->rexpr, context);
    if (op == "-") return unary(K::negate, expr(a->rexpr, context), at);
    refuse(at, "the prefix operator " + op);
  }
  if (a->rexpr == nullptr) refuse(at, "the operator " + op);
  if (const auto compare = comparison(op)) return binary(K::compare, *compare, expr(a->lexpr, context), expr(a->rexpr, context), at);
  static constexpr std::pair<std::string_view, Op> kArith[] = {
      {"+", Op::add}, {"-", Op::sub}, {"*", Op::mul}, {"/", Op::div}, {"%", Op::mod}};
  for (const auto& [symbol, value] : kArith)
    if (op == symbol) return binary(K::arith, value, expr(a->lexpr, context), expr(a->rexpr, context), at);
  refuse(at, "the operator " + op);
}

// AND / OR: one node with every term (PostgreSQL's parser has flattened the chain); NOT.
Expr ExprReader::bool_expr(const PgQuery__BoolExpr* b, const Context& context) {
  const std::size_t at = position(b->location);
  if (b->boolop == PG_QUERY__BOOL_EXPR_TYPE__NOT_EXPR) return unary(Expr::Kind::logical_not, expr(b->args[0], context), at);
  Expr e{.kind = b->boolop == PG_QUERY__BOOL_EXPR_TYPE__AND_EXPR ? Expr::Kind::logical_and : Expr::Kind::logical_or};
  for (std::size_t i = 0; i < b->n_args; ++i) {
    if (e.args.size() >= sql::kMaxItems) too_many(at, "conditions");
    e.args.push_back(expr(b->args[i], context));
  }
  return grown(std::move(e), at);
}

Expr ExprReader::unary(Expr::Kind kind, Expr operand, std::size_t at) {
  Expr e{.kind = kind};
  e.args.push_back(std::move(operand));
  return grown(std::move(e), at);
}

Expr ExprReader::binary(Expr::Kind kind, Expr::Op op, Expr a, Expr b, std::size_t at) {
  Expr e{.kind = kind, .op = op};
  e.args.push_back(std::move(a));
  e.args.push_back(std::move(b));
  return grown(std::move(e), at);
}

// A node with its operands: its height, bounded as sql.cpp bounds it.
Expr ExprReader::grown(Expr e, std::size_t at) {
  for (const Expr& a : e.args) e.height = std::max(e.height, a.height + 1);
  if (e.height > kMaxHeight) too_deep(at);
  return e;
}

// --- WHERE -------------------------------------------------------------------------------

// WHERE's expression, split at its top-level ANDs: each `column op value` term (a literal
// or a `$n`; `value op column` turned round) goes to Statement::where, where the model finds
// index paths; every other term to StatementExtra::filter, as sql.cpp splits MySQL's.
void ExprReader::where(const Node* w) {
  if (w == nullptr) return;
  if (w->node_case == PG_QUERY__NODE__NODE_CURRENT_OF_EXPR) refuse(location_of(w), "WHERE CURRENT OF");
  std::vector<const Node*> terms;
  std::vector<const Node*> pending{w};  // ANDs still to open, last first
  while (!pending.empty()) {
    const Node* n = pending.back();
    pending.pop_back();
    if (n->node_case == PG_QUERY__NODE__NODE_BOOL_EXPR && n->bool_expr->boolop == PG_QUERY__BOOL_EXPR_TYPE__AND_EXPR) {
      for (std::size_t i = n->bool_expr->n_args; i-- > 0;) pending.push_back(n->bool_expr->args[i]);
    } else {
      if (terms.size() >= sql::kMaxItems) too_many(location_of(n), "conditions");
      terms.push_back(n);
    }
  }
  for (const Node* term : terms)
    if (!condition(term)) s().edit().filter.push_back(expr(term, {}));
}

bool ExprReader::is_value(const Node* n) {
  return (n->node_case == PG_QUERY__NODE__NODE_A_CONST && !n->a_const->isnull) || n->node_case == PG_QUERY__NODE__NODE_PARAM_REF;
}

bool ExprReader::is_column(const Node* n) { return n->node_case == PG_QUERY__NODE__NODE_COLUMN_REF && !is_star(n); }

// A `column op value` term as a Condition; false for any other term.
bool ExprReader::condition(const Node* term) {
  if (term->node_case != PG_QUERY__NODE__NODE_A_EXPR) return false;
  const PgQuery__AExpr* a = term->a_expr;
  if (a->kind != PG_QUERY__A__EXPR__KIND__AEXPR_OP || a->n_name != 1 || a->lexpr == nullptr || a->rexpr == nullptr) return false;
  auto op = comparison(str(a->name[0]));
  if (!op) return false;
  const Node* column = uncast(a->lexpr);
  const Node* value = uncast(a->rexpr);
  const Node* written = a->rexpr;  // the value as written, with its cast
  if (!is_column(column) || !is_value(value)) {
    if (!is_value(column) || !is_column(value)) return false;
    std::swap(column, value);  // `5 < c` is `c > 5`
    written = a->lexpr;
    static constexpr Expr::Op kFlipped[] = {Expr::Op::eq, Expr::Op::ne, Expr::Op::gt, Expr::Op::ge, Expr::Op::lt, Expr::Op::le};
    op = kFlipped[static_cast<int>(*op)];
  }
  static constexpr Condition::Op kOps[] = {Condition::Op::eq, Condition::Op::ne, Condition::Op::lt,
                                           Condition::Op::le, Condition::Op::gt, Condition::Op::ge};
  Condition c{kOps[static_cast<int>(*op)], column_ref(column->column_ref, {}).first, std::int64_t{0}};
  if (value->node_case == PG_QUERY__NODE__NODE_PARAM_REF)
    place(value->param_ref, Param{.in = Param::In::where, .where_index = s().where.size()});
  else if (auto folded = written->node_case == PG_QUERY__NODE__NODE_TYPE_CAST ? folded_cast(written->type_cast) : std::nullopt)
    c.value = std::move(*folded);
  else
    c.value = literal(value->a_const);
  s().where.push_back(std::move(c));
  return true;
}

// The SELECT's one aggregate, named `alias` (empty: as PostgreSQL names it): the first place
// that names it (the select list, HAVING or ORDER BY) sets it; another aggregate is refused.
void ExprReader::use_aggregate(const std::pair<StatementExtra::Aggregate, std::string>& aggregate, std::size_t at, const std::string& alias) {
  if (s().count_rows) {
    if (s().more().aggregate != aggregate.first || s().more().aggregate_column != aggregate.second)
      refuse(at, "a second aggregate (a statement has one)");
    return;
  }
  s().count_rows = true;
  if (aggregate.first != StatementExtra::Aggregate::count || !aggregate.second.empty() || !alias.empty()) {
    s().edit().aggregate = aggregate.first;
    s().edit().aggregate_column = aggregate.second;
    s().edit().aggregate_alias = alias;
  }
}

// In HAVING and a grouped ORDER BY: an aggregate call, read as the column of its name in a
// group's row. nullopt: `n` is no aggregate.
std::optional<Expr> ExprReader::aggregate_operand(const Node* n) {
  if (n->node_case != PG_QUERY__NODE__NODE_FUNC_CALL) return std::nullopt;
  const auto aggregate = aggregate_of(n->func_call);
  if (!aggregate) return std::nullopt;
  use_aggregate(*aggregate, location_of(n));
  return Expr{.kind = Expr::Kind::column, .column = models::db::detail::aggregate_name(s().more(), Engine::postgresql)};
}

// count(*), count(1): every row; count(col), max(col), min(col), sum(col): the column's
// non-NULL values. nullopt: another function, or one of these the model does not run
// (DISTINCT, FILTER, OVER, ORDER BY inside).
std::optional<std::pair<StatementExtra::Aggregate, std::string>> ExprReader::aggregate_of(const PgQuery__FuncCall* f) {
  using A = StatementExtra::Aggregate;
  static const std::pair<std::string_view, A> kNames[] = {{"count", A::count}, {"max", A::max}, {"min", A::min}, {"sum", A::sum}};
  const std::string name = catalog_name(f->funcname, f->n_funcname);
  const auto known = std::find_if(std::begin(kNames), std::end(kNames), [&](const auto& n) { return n.first == name; });
  if (known == std::end(kNames) || f->agg_distinct || f->n_agg_order > 0 || f->agg_filter != nullptr || f->over != nullptr ||
      f->func_variadic)
    return std::nullopt;
  if (f->agg_star) return known->second == A::count ? std::optional(std::pair(A::count, std::string())) : std::nullopt;
  if (f->n_args != 1) return std::nullopt;
  const Node* arg = f->args[0];
  if (is_column(arg)) return std::pair(known->second, column_ref(arg->column_ref, {}).first);  // a qualifier must name the table
  if (known->second == A::count && integer_constant(arg).has_value()) return std::pair(A::count, std::string());
  return std::nullopt;
}

}  // namespace models::db::pg
