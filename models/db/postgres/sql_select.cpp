// PostgreSQL's SQL: SELECT, with its select list, GROUP BY, ORDER BY, LIMIT, the locking
// clause, and the advisory-lock functions (models/db/postgres/sql_converter.hpp).

#include <algorithm>
#include <cstdint>
#include <memory>

#include <fmt/format.h>

#include "models/db/postgres/sql_converter.hpp"
#include "models/db/rows.hpp"

namespace models::db::pg {

// --- SELECT ------------------------------------------------------------------------------

void Converter::select(const PgQuery__SelectStmt* sel, std::size_t at) {
  s().kind = Statement::Kind::select;
  refuse_select_clauses(sel, at);
  if (advisory(sel)) return;
  if (sel->n_from_clause == 0) return computed_select(sel, at);
  if (sel->n_from_clause > 1) refuse(location_of(sel->from_clause[1], at), "a join");
  const Node* from = sel->from_clause[0];
  if (from->node_case != PG_QUERY__NODE__NODE_RANGE_VAR) refuse(location_of(from, at), construct_name(from));
  relation(from->range_var);
  select_list(sel);
  where(sel->where_clause);
  group_by(sel);
  if (sel->n_distinct_clause > 0) distinct_columns(sel, at);
  order_by(sel->sort_clause, sel->n_sort_clause);
  if (sel->limit_count != nullptr) s().limit = row_count(sel->limit_count, "LIMIT", "2201W");
  if (sel->limit_offset != nullptr) s().offset = row_count(sel->limit_offset, "OFFSET", "2201X").value_or(0);
  if (!s().more().group_by.empty()) {  // ORDER BY and LIMIT order and cut the groups (StatementExtra::group_order_by)
    s().edit().group_order_by = std::exchange(s().edit().order_by, {});
    s().edit().group_limit = std::exchange(s().limit, std::nullopt);
    s().edit().group_offset = std::exchange(s().offset, 0);
  }
  check_grouping();
  locking(sel);
}

// GROUP BY column, ... [HAVING condition]: the aggregate over each group (models/db/rows.hpp).
void Converter::group_by(const PgQuery__SelectStmt* sel) {
  for (std::size_t i = 0; i < sel->n_group_clause; ++i) {
    const Node* n = sel->group_clause[i];
    if (i >= sql::kMaxItems) too_many(location_of(n), "GROUP BY columns");
    if (!is_column(n)) refuse(location_of(n), "GROUP BY other than columns");
    s().edit().group_by.push_back(column_ref(n->column_ref, {}).first);
  }
  if (sel->having_clause != nullptr)
    s().edit().having = std::make_shared<const Expr>(expr(sel->having_clause, Context{.having = true}));
}

// The select list's columns are grouped (PostgreSQL's 42803 otherwise). GROUP BY without an
// aggregate (and DISTINCT) is a row a group of its columns (StatementExtra::Aggregate::none).
void Converter::check_grouping() {
  const auto& grouped = s().more().group_by;
  if (!grouped.empty() && !s().count_rows) {
    s().count_rows = true;
    s().edit().aggregate = StatementExtra::Aggregate::none;
  }
  if (!s().count_rows) return;
  if (!s().more().computed.empty())
    refuse(computed_at_, "a computed column beside an aggregate, GROUP BY or DISTINCT");
  for (const auto& [where, column] : listed_)
    if (std::find(grouped.begin(), grouped.end(), column) == grouped.end())
      throw Error("42803", where, "column \"" + s().table + "." + column + "\" must appear in the GROUP BY clause or be used in an aggregate function");
}

// SELECT DISTINCT cols: GROUP BY those columns without an aggregate, a row for each
// combination of their values found (NULLs one). With an aggregate alone it changes nothing
// (one row); DISTINCT * and DISTINCT with GROUP BY are refused.
void Converter::distinct_columns(const PgQuery__SelectStmt* sel, std::size_t at) {
  distinct_ = true;
  if (sel->n_group_clause > 0) refuse(at, "DISTINCT with GROUP BY");
  if (s().count_rows) {
    if (!listed_.empty()) refuse(listed_.front().first, "DISTINCT with an aggregate and a column");
    return;
  }
  if (out_.columns.empty()) refuse(at, "SELECT DISTINCT * or DISTINCT of a constant");
  s().edit().group_by = out_.columns;
}

// SELECT expr [AS name], ... without FROM: `SELECT 1 + $1 AS n`, one row. A column unnamed
// is named as PostgreSQL names it: a function's name, a cast's type, else ?column?.
void Converter::computed_select(const PgQuery__SelectStmt* sel, std::size_t at) {
  if (sel->where_clause != nullptr || sel->n_group_clause > 0 || sel->having_clause != nullptr || sel->n_sort_clause > 0 ||
      sel->limit_count != nullptr || sel->limit_offset != nullptr || sel->n_locking_clause > 0 || sel->n_distinct_clause > 0)
    refuse(at, "WHERE, GROUP BY, ORDER BY, LIMIT, DISTINCT or a locking clause in a SELECT without FROM");
  for (std::size_t i = 0; i < sel->n_target_list; ++i) {
    if (out_.columns.size() >= sql::kMaxItems) too_many(location_of(sel->target_list[i]), "columns");
    const PgQuery__ResTarget* target = sel->target_list[i]->res_target;
    if (target->val == nullptr || is_star(target->val)) refuse(position(target->location), "* in a SELECT without FROM");
    computed_column(target, Context{.no_row = true});
  }
}

// A computed column of the select list (StatementExtra::computed): named by its alias or as
// PostgreSQL names it (figured_name), not as a column the list has already.
void Converter::computed_column(const PgQuery__ResTarget* target, const Context& context) {
  const std::size_t at = position(target->location);
  Expr e = expr(target->val, context);
  std::string label = empty(target->name) ? figured_name(target->val) : text_of(target->name);
  if (std::find(out_.columns.begin(), out_.columns.end(), label) != out_.columns.end())
    refuse(at, "two columns named " + label + " (give one an alias)");
  if (s().more().computed.empty()) computed_at_ = at;
  out_.columns.push_back(label);
  s().edit().computed.emplace_back(std::move(label), std::move(e));
}

// PostgreSQL's name for a select-list column without an alias (FigureColname, in part).
std::string Converter::figured_name(const Node* n) {
  switch (n->node_case) {
    case PG_QUERY__NODE__NODE_FUNC_CALL: return str(n->func_call->funcname[n->func_call->n_funcname - 1]);
    case PG_QUERY__NODE__NODE_COALESCE_EXPR: return "coalesce";
    case PG_QUERY__NODE__NODE_TYPE_CAST: {
      std::string inner = figured_name(n->type_cast->arg);
      const PgQuery__TypeName* type = n->type_cast->type_name;
      if (inner != "?column?" || type == nullptr || type->n_names == 0) return inner;
      return str(type->names[type->n_names - 1]);
    }
    default: return "?column?";
  }
}

void Converter::refuse_select_clauses(const PgQuery__SelectStmt* sel, std::size_t at) {
  if (sel->with_clause != nullptr) refuse(position(sel->with_clause->location), "WITH");
  if (sel->op != PG_QUERY__SET_OPERATION__SETOP_NONE) refuse(at, "UNION, INTERSECT or EXCEPT");
  if (sel->n_values_lists > 0) refuse(at, "VALUES as a query");
  if (sel->into_clause != nullptr) refuse(at, "SELECT INTO");
  // DISTINCT's list holds one empty node; DISTINCT ON's, its expressions.
  if (sel->n_distinct_clause > 0 && sel->distinct_clause[0] != nullptr && sel->distinct_clause[0]->node_case != PG_QUERY__NODE__NODE__NOT_SET)
    refuse(location_of(sel->distinct_clause[0], at), "DISTINCT ON");
  if (sel->n_window_clause > 0) refuse(at, "WINDOW");
  if (sel->limit_option == PG_QUERY__LIMIT_OPTION__LIMIT_OPTION_WITH_TIES) refuse(at, "FETCH ... WITH TIES");
}

// SELECT pg_advisory_lock(k) and the other advisory functions, alone: kind advisory, the key
// in Statement::values["key"] (a `$n` is bound there), the function's name the result's
// column, as PostgreSQL names it. False for any other SELECT.
bool Converter::advisory(const PgQuery__SelectStmt* sel) {
  if (sel->n_target_list != 1 || sel->target_list[0]->node_case != PG_QUERY__NODE__NODE_RES_TARGET) return false;
  const PgQuery__ResTarget* target = sel->target_list[0]->res_target;
  if (target->val == nullptr || target->val->node_case != PG_QUERY__NODE__NODE_FUNC_CALL) return false;
  const PgQuery__FuncCall* f = target->val->func_call;
  const std::string name = catalog_name(f->funcname, f->n_funcname);
  const auto* function = std::find_if(std::begin(kAdvisoryFunctions), std::end(kAdvisoryFunctions),
                                      [&](const AdvisoryFunction& a) { return a.name == name; });
  if (function == std::end(kAdvisoryFunctions)) return false;
  const std::size_t at = position(f->location);
  if (sel->n_from_clause > 0 || sel->where_clause != nullptr || sel->n_sort_clause > 0 || sel->limit_count != nullptr ||
      sel->limit_offset != nullptr || sel->n_locking_clause > 0)
    refuse(at, "an advisory-lock function with FROM, WHERE or other clauses");
  if (f->agg_star || f->agg_distinct || f->n_agg_order > 0 || f->agg_filter != nullptr || f->over != nullptr || f->func_variadic)
    refuse(at, "a function call " + name + "() with aggregate options");
  const bool all = function->advisory.op == Advisory::Op::unlock_all;
  if (f->n_args == 2 && !all) refuse(at, "the two-key form " + name + "(int, int)");
  if (f->n_args != (all ? 0U : 1U))
    throw Error("42883", at, "function " + name + "() does not exist with " + std::to_string(f->n_args) + " arguments");
  s().kind = Statement::Kind::advisory;
  s().advisory = function->advisory;
  if (!all) s().values["key"] = advisory_key(f->args[0]);
  out_.columns = {empty(target->name) ? name : text_of(target->name)};
  return true;
}

// The bigint key: a literal (a string of digits as its number, as PostgreSQL casts it) or a
// `$n`, bound to Statement::values["key"].
Value Converter::advisory_key(const Node* arg) {
  const Node* key = uncast(arg);
  if (key->node_case == PG_QUERY__NODE__NODE_PARAM_REF) {
    place(key->param_ref, Param{.in = Param::In::values, .column = "key"});
    return std::int64_t{0};  // a placeholder until bind()
  }
  if (const auto n = integer_constant(key)) return *n;
  if (key->node_case == PG_QUERY__NODE__NODE_A_CONST && key->a_const->val_case == PG_QUERY__A__CONST__VAL_SVAL)
    if (const auto n = integer_text(text_of(key->a_const->sval->sval))) return *n;
  if (key->node_case == PG_QUERY__NODE__NODE_FUNC_CALL) refuse(location_of(key), construct_name(key));
  refuse(location_of(key), "an advisory-lock key other than an integer or a parameter");
}

// The select list: columns (`t.c` as c), `*` (every column: an empty list), an integer
// (SELECT 1: what each row reads as) or count(*) (the rows' count, in a column PostgreSQL
// names `count`).
void Converter::select_list(const PgQuery__SelectStmt* sel) {
  if (sel->n_target_list == 0) refuse(0, "SELECT without columns");
  bool aggregated = false;
  for (std::size_t i = 0; i < sel->n_target_list; ++i) {
    if (out_.columns.size() >= sql::kMaxItems) too_many(location_of(sel->target_list[i]), "columns");
    const PgQuery__ResTarget* target = sel->target_list[i]->res_target;
    const Node* value = target->val;
    const std::size_t at = position(target->location);
    const bool alone = sel->n_target_list == 1;
    if (value->node_case == PG_QUERY__NODE__NODE_FUNC_CALL) {
      if (const auto aggregate = aggregate_of(value->func_call)) {
        if (aggregated) refuse(at, "a second aggregate (a statement has one)");
        aggregated = true;
        use_aggregate(*aggregate, at, empty(target->name) ? std::string() : text_of(target->name));
        out_.columns.push_back(models::db::detail::aggregate_name(s().more(), Engine::postgresql));
        continue;
      }
    }
    const bool plain = empty(target->name) && (is_column(value) || is_star(value) || (alone && value->node_case == PG_QUERY__NODE__NODE_A_CONST));
    if (!plain) {  // a computed column: an expression, or a column under an alias
      computed_column(target, {});
      continue;
    }
    if (alone && value->node_case == PG_QUERY__NODE__NODE_A_CONST) {
      const auto n = integer_constant(value);
      if (!n) refuse(at, "a constant other than an integer in the select list");
      out_.constant = *n;
      return;
    }
    if (is_star(value)) {
      if (!alone) refuse(at, "* beside other columns");
      star(value->column_ref);
      return;
    }
    out_.columns.push_back(column_ref(value->column_ref, {}).first);
    listed_.emplace_back(at, out_.columns.back());
  }
}

// ORDER BY col [ASC | DESC], ...: NULLs last, first with DESC, as PostgreSQL sorts them by
// default; NULLS FIRST or LAST the other way round is refused.
void Converter::order_by(Node* const* sorts, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const PgQuery__SortBy* sort = sorts[i]->sort_by;
    const std::size_t at = location_of(sort->node);
    if (i >= sql::kMaxItems) too_many(at, "ORDER BY columns");
    if (sort->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_USING) refuse(at, "ORDER BY ... USING");
    // A grouped SELECT orders its groups, by a grouped column or the aggregate.
    std::optional<Expr> aggregate = s().more().group_by.empty() || distinct_ ? std::nullopt : aggregate_operand(sort->node);
    if (!aggregate && !is_column(sort->node)) refuse(at, "ORDER BY an expression or a position");
    std::string column = aggregate ? aggregate->column : column_ref(sort->node->column_ref, {}).first;
    if (distinct_ && std::find(out_.columns.begin(), out_.columns.end(), column) == out_.columns.end())
      throw Error("42P10", at, "for SELECT DISTINCT, ORDER BY expressions must appear in select list");
    const auto& computed = s().more().computed;
    if (!aggregate && std::any_of(computed.begin(), computed.end(), [&](const auto& c) { return c.first == column; }))
      refuse(at, "ORDER BY a computed column");
    const bool descending = sort->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC;
    if (sort->sortby_nulls == (descending ? PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_LAST : PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_FIRST))
      refuse(at, descending ? "DESC NULLS LAST" : "NULLS FIRST");
    s().edit().order_by.emplace_back(std::move(column), descending);
  }
}

// LIMIT n / OFFSET n (also FETCH FIRST n ROWS ONLY): a number from 0; LIMIT ALL or NULL is
// no limit.
std::optional<std::int64_t> Converter::row_count(const Node* n, const char* clause, const char* negative_state) {
  const Node* value = uncast(n);
  const std::size_t at = location_of(value);
  if (value->node_case == PG_QUERY__NODE__NODE_A_CONST && value->a_const->isnull) return std::nullopt;
  const auto count = integer_constant(value);
  if (!count) refuse(at, std::string("a ") + clause + " other than a number");
  if (*count < 0) throw Error(negative_state, at, std::string(clause) + " must not be negative");
  return count;
}

// FOR UPDATE | NO KEY UPDATE | SHARE | KEY SHARE [NOWAIT | SKIP LOCKED], one of them, on
// the statement's one table.
void Converter::locking(const PgQuery__SelectStmt* sel) {
  if (sel->n_locking_clause == 0) return;
  if (sel->n_locking_clause > 1) refuse(0, "several locking clauses");
  const PgQuery__LockingClause* lock = sel->locking_clause[0]->locking_clause;
  if (lock->n_locked_rels > 0) refuse(location_of(lock->locked_rels[0]), "a locking clause with OF");
  struct Strength {
    PgQuery__LockClauseStrength strength;
    ReadLock lock;
    const char* clause;
  };
  static constexpr Strength kStrengths[] = {
      {PG_QUERY__LOCK_CLAUSE_STRENGTH__LCS_FORUPDATE, ReadLock::update, "FOR UPDATE"},
      {PG_QUERY__LOCK_CLAUSE_STRENGTH__LCS_FORNOKEYUPDATE, ReadLock::no_key_update, "FOR NO KEY UPDATE"},
      {PG_QUERY__LOCK_CLAUSE_STRENGTH__LCS_FORSHARE, ReadLock::share, "FOR SHARE"},
      {PG_QUERY__LOCK_CLAUSE_STRENGTH__LCS_FORKEYSHARE, ReadLock::key_share, "FOR KEY SHARE"}};
  const auto* strength = std::find_if(std::begin(kStrengths), std::end(kStrengths),
                                      [&](const Strength& k) { return k.strength == lock->strength; });
  if (strength == std::end(kStrengths)) refuse(0, "this locking clause");
  s().lock = strength->lock;
  if (lock->wait_policy == PG_QUERY__LOCK_WAIT_POLICY__LockWaitError) s().on_locked = Statement::OnLocked::fail;
  if (lock->wait_policy == PG_QUERY__LOCK_WAIT_POLICY__LockWaitSkip) s().on_locked = Statement::OnLocked::skip;
  // PostgreSQL locks the rows it returns, and count(*) returns none of them: its own 0A000.
  if (distinct_) throw Error("0A000", 0, std::string(strength->clause) + " is not allowed with DISTINCT clause");
  if (!s().more().group_by.empty()) throw Error("0A000", 0, std::string(strength->clause) + " is not allowed with GROUP BY clause");
  if (s().more().having) throw Error("0A000", 0, std::string(strength->clause) + " is not allowed with HAVING clause");
  if (s().count_rows) throw Error("0A000", 0, std::string(strength->clause) + " is not allowed with aggregate functions");
}

}  // namespace models::db::pg
