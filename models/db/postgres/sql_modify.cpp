// PostgreSQL's SQL: INSERT with ON CONFLICT and RETURNING, UPDATE and DELETE
// (models/db/postgres/sql_converter.hpp).

#include <algorithm>
#include <cstdint>
#include <memory>

#include <fmt/format.h>

#include "models/db/postgres/sql_converter.hpp"
#include "models/db/rows.hpp"

namespace models::db::pg {

// --- INSERT ------------------------------------------------------------------------------

// INSERT INTO t (cols) VALUES (...), ...: the first row in Statement::values, the others in
// StatementExtra::more_rows; ON CONFLICT and RETURNING after them.
void Converter::insert(const PgQuery__InsertStmt* ins) {
  s().kind = Statement::Kind::insert;
  const std::size_t at = position(ins->relation->location);
  if (ins->with_clause != nullptr) refuse(position(ins->with_clause->location), "WITH");
  if (ins->override != PG_QUERY__OVERRIDING_KIND__OVERRIDING_NOT_SET) refuse(at, "OVERRIDING ... VALUE");
  relation(ins->relation);
  if (ins->select_stmt == nullptr) refuse(at, "INSERT ... DEFAULT VALUES");
  // Which column a value goes to is the table's order without a list, which only the table
  // knows, not this front end.
  if (ins->n_cols == 0) refuse(at, "INSERT without a column list");
  const std::vector<std::string> columns = insert_columns(ins);
  const std::size_t last_column_at = position(ins->cols[ins->n_cols - 1]->res_target->location);
  const PgQuery__SelectStmt* rows = ins->select_stmt->select_stmt;
  if (ins->select_stmt->node_case != PG_QUERY__NODE__NODE_SELECT_STMT || rows->n_values_lists == 0)
    refuse(location_of(ins->select_stmt, at), "INSERT ... SELECT");
  if (rows->n_sort_clause > 0 || rows->limit_count != nullptr || rows->limit_offset != nullptr || rows->with_clause != nullptr)
    refuse(at, "a VALUES list with ORDER BY, LIMIT, OFFSET or WITH");
  for (std::size_t row = 0; row < rows->n_values_lists; ++row) {
    if (row >= sql::kMaxItems) too_many(location_of(rows->values_lists[row]), "rows");
    values_row(rows->values_lists[row], columns, row, last_column_at);
  }
  if (ins->on_conflict_clause != nullptr) on_conflict(ins->on_conflict_clause);
  returning(ins->returning_list, ins->n_returning_list);
}

std::vector<std::string> Converter::insert_columns(const PgQuery__InsertStmt* ins) {
  std::vector<std::string> columns;
  for (std::size_t i = 0; i < ins->n_cols; ++i) {
    const PgQuery__ResTarget* col = ins->cols[i]->res_target;
    const std::size_t at = position(col->location);
    if (i >= sql::kMaxItems) too_many(at, "columns");
    if (col->n_indirection > 0) refuse(at, "an insert into a field or an array element");
    std::string name = text_of(col->name);
    if (std::find(columns.begin(), columns.end(), name) != columns.end())
      throw Error("42701", at, "column \"" + name + "\" specified more than once");
    columns.push_back(std::move(name));
  }
  return columns;
}

// One VALUES row: each value an integer, a string, true / false (1 / 0), a `$n` (bound to
// its column of this row), or a constant expression, computed here; DEFAULT leaves the
// column out of the row (it takes its default), NULL is refused (the model stores none).
void Converter::values_row(const Node* list, const std::vector<std::string>& columns, std::size_t row, std::size_t last_column_at) {
  const auto [items, n] = items_of(list);
  if (n != columns.size()) {
    const std::size_t at = n > columns.size() ? location_of(items[columns.size()]) : last_column_at;
    throw Error("42601", at, n > columns.size() ? "INSERT has more expressions than target columns"
                                                : "INSERT has more target columns than expressions");
  }
  Values values;
  for (std::size_t i = 0; i < n; ++i) {
    const Node* value = uncast(items[i]);
    if (value->node_case == PG_QUERY__NODE__NODE_SET_TO_DEFAULT) continue;
    if (value->node_case == PG_QUERY__NODE__NODE_PARAM_REF) {
      place(value->param_ref, Param{.in = Param::In::values, .column = columns[i], .row = row});
      values[columns[i]] = std::int64_t{0};  // a placeholder until bind()
    } else if (auto folded = items[i]->node_case == PG_QUERY__NODE__NODE_TYPE_CAST ? folded_cast(items[i]->type_cast) : std::nullopt) {
      values[columns[i]] = std::move(*folded);
    } else {
      values[columns[i]] = stored_value(value);
    }
  }
  if (row == 0) s().values = std::move(values);
  else s().edit().more_rows.push_back(std::move(values));
}

// A literal, or a constant expression (`-1`, `2 * 3`, `'a'::text`) computed as the model
// computes expressions.
Value Converter::stored_value(const Node* n) {
  if (n->node_case == PG_QUERY__NODE__NODE_A_CONST) return literal(n->a_const);
  const std::size_t at = location_of(n);
  const Expr e = expr(n, Context{.constant = true});
  static const Values kNoRow;
  static const std::vector<Value> kNoArgs;
  std::optional<Value> value;
  try {
    value = evaluate(e, models::db::Scope{kNoRow, kNoArgs});
  } catch (const ExprError&) {
    throw Error("22003", at, "bigint out of range");
  }
  if (!value) return Null{};
  return std::move(*value);
}

// ON CONFLICT [(col)] DO NOTHING | DO UPDATE SET c = expr, ... [WHERE expr]. DO UPDATE's
// assignments all go to StatementExtra::assign, in order, EXCLUDED.c read as `inserted`
// and c or t.c as the row's `column`; its WHERE to StatementExtra::conflict_where.
void Converter::on_conflict(const PgQuery__OnConflictClause* c) {
  const std::size_t at = position(c->location);
  if (c->infer != nullptr) {
    if (!empty(c->infer->conname)) refuse(at, "ON CONFLICT ON CONSTRAINT");
    if (c->infer->where_clause != nullptr)
      s().edit().conflict_index_where = std::make_shared<const Expr>(expr(c->infer->where_clause, Context{.indexed = true}));
    for (std::size_t i = 0; i < c->infer->n_index_elems; ++i) {
      const PgQuery__IndexElem* elem = c->infer->index_elems[i]->index_elem;
      if (elem->expr != nullptr || empty(elem->name)) refuse(at, "ON CONFLICT on an expression");
      s().edit().conflict_target.push_back(text_of(elem->name));
    }
  }
  if (c->action == PG_QUERY__ON_CONFLICT_ACTION__ONCONFLICT_NOTHING) {
    s().on_duplicate = OnDuplicate::ignore;
    return;
  }
  if (c->infer == nullptr) throw Error("42601", at, "ON CONFLICT DO UPDATE requires inference specification or constraint name");
  s().on_duplicate = OnDuplicate::update;
  for (const Assignment& a : assignments(c->target_list, c->n_target_list))
    s().edit().assign.emplace_back(a.column, expr(a.value, Context{.excluded = true}));
  if (c->where_clause != nullptr)
    s().edit().conflict_where = std::make_shared<const Expr>(expr(c->where_clause, Context{.excluded = true}));
}

// RETURNING a, b or *: the columns each written row is returned with.
void Converter::returning(Node* const* targets, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const PgQuery__ResTarget* target = targets[i]->res_target;
    const std::size_t at = position(target->location);
    if (i >= sql::kMaxItems) too_many(at, "RETURNING columns");
    if (!empty(target->name)) refuse(at, "a RETURNING alias (AS " + text_of(target->name) + ")");
    if (is_star(target->val)) {
      if (n > 1) refuse(at, "RETURNING * beside other columns");
      star(target->val->column_ref);
      s().edit().returning = {"*"};
      return;
    }
    if (!is_column(target->val)) refuse(at, "RETURNING an expression");
    s().edit().returning.push_back(column_ref(target->val->column_ref, {}).first);
  }
}

// --- UPDATE and DELETE -------------------------------------------------------------------

// SET c = expr, ...: each column once.
std::vector<Converter::Assignment> Converter::assignments(Node* const* targets, std::size_t n) {
  std::vector<Assignment> out;
  for (std::size_t i = 0; i < n; ++i) {
    const PgQuery__ResTarget* target = targets[i]->res_target;
    const std::size_t at = position(target->location);
    if (i >= sql::kMaxItems) too_many(at, "assignments");
    if (target->n_indirection > 0) refuse(at, "an assignment to a field or an array element");
    const Node* value = target->val;
    if (value->node_case == PG_QUERY__NODE__NODE_MULTI_ASSIGN_REF) refuse(at, construct_name(value));
    if (value->node_case == PG_QUERY__NODE__NODE_SET_TO_DEFAULT) refuse(at, "SET c = DEFAULT");
    std::string column = text_of(target->name);
    if (std::any_of(out.begin(), out.end(), [&](const Assignment& a) { return a.column == column; }))
      throw Error("42601", at, "multiple assignments to same column \"" + column + "\"");
    out.push_back({std::move(column), value});
  }
  return out;
}

// UPDATE t SET ...: as sql.cpp does, literals and `$n`s alone go to Statement::values (the
// `$n`s bound there); when one value is computed, every assignment goes, in order, to
// StatementExtra::assign.
void Converter::update(const PgQuery__UpdateStmt* up) {
  s().kind = Statement::Kind::update;
  if (up->with_clause != nullptr) refuse(position(up->with_clause->location), "WITH");
  if (up->n_from_clause > 0) refuse(location_of(up->from_clause[0]), "UPDATE ... FROM");
  relation(up->relation);
  const std::vector<Assignment> all = assignments(up->target_list, up->n_target_list);
  const bool literal_only = std::all_of(all.begin(), all.end(), [](const Assignment& a) { return is_value(uncast(a.value)); });
  for (const Assignment& a : all) {
    const Node* value = uncast(a.value);
    if (!literal_only) {
      s().edit().assign.emplace_back(a.column, expr(a.value, {}));
    } else if (value->node_case == PG_QUERY__NODE__NODE_PARAM_REF) {
      place(value->param_ref, Param{.in = Param::In::values, .column = a.column});
      s().values[a.column] = std::int64_t{0};  // a placeholder until bind()
    } else {
      s().values[a.column] = literal(value->a_const);
    }
  }
  where(up->where_clause);
  returning(up->returning_list, up->n_returning_list);
}

void Converter::remove(const PgQuery__DeleteStmt* del) {
  s().kind = Statement::Kind::remove;
  if (del->with_clause != nullptr) refuse(position(del->with_clause->location), "WITH");
  if (del->n_using_clause > 0) refuse(location_of(del->using_clause[0]), "DELETE ... USING");
  relation(del->relation);
  where(del->where_clause);
  returning(del->returning_list, del->n_returning_list);
}

}  // namespace models::db::pg
