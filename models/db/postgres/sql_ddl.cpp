// PostgreSQL's SQL: CREATE TABLE and CREATE INDEX (models/db/postgres/sql_converter.hpp).

#include <algorithm>
#include <cstdint>
#include <memory>

#include <fmt/format.h>

#include "models/db/postgres/sql_converter.hpp"
#include "models/db/rows.hpp"

namespace models::db::pg {

// --- CREATE TABLE and CREATE INDEX -------------------------------------------------------

// CREATE TABLE t (...): the model's table (models/db/database.hpp) has the integer primary
// key `id` (SERIAL, BIGSERIAL, SMALLSERIAL or GENERATED ... AS IDENTITY: auto_increment;
// a plain integer: not), at most one UNIQUE column (key_column, its index named as
// PostgreSQL names it, "<table>_<col>_key", or by its CONSTRAINT), and other columns with
// their defaults.
void Converter::create_table(const PgQuery__CreateStmt* c) {
  const PgQuery__RangeVar* r = c->relation;
  const std::size_t at = position(r->location);
  if (c->if_not_exists) refuse(at, "CREATE TABLE IF NOT EXISTS");
  if (c->n_inh_relations > 0) refuse(at, "INHERITS");
  if (c->partbound != nullptr || c->partspec != nullptr) refuse(at, "a partitioned table");
  if (c->of_typename != nullptr) refuse(at, "CREATE TABLE OF a type");
  if (c->n_options > 0) refuse(at, "a table's storage options (WITH)");
  if (!empty(c->tablespacename)) refuse(at, "TABLESPACE");
  if (!empty(c->access_method)) refuse(at, "a table access method (USING)");
  if (c->oncommit != PG_QUERY__ON_COMMIT_ACTION__ONCOMMIT_NOOP) refuse(at, "ON COMMIT");
  if (text_of(r->relpersistence) != "p") refuse(at, "a TEMPORARY or UNLOGGED table");
  relation(r);
  TableBuilder table(table_);
  for (std::size_t i = 0; i < c->n_table_elts; ++i) {
    const Node* element = c->table_elts[i];
    if (element->node_case == PG_QUERY__NODE__NODE_COLUMN_DEF) table.column_def(element->column_def);
    else if (element->node_case == PG_QUERY__NODE__NODE_CONSTRAINT) table.table_constraint(element->constraint);
    else refuse(location_of(element), construct_name(element));
  }
  out_.create = table.finish(at);
}

TableBuilder::TableBuilder(const std::string& table) : table_(table) {
  table_def_.schema = TableSchema{.name = table_, .key_index = KeyIndex::none};
}

void TableBuilder::add_primary(std::size_t at) {
  if (table_def_.primary) throw Error("42P16", at, "multiple primary keys for table \"" + table_ + "\" are not allowed");
  table_def_.primary = at;
}

// UNIQUE on one column or several: the first on one column is the table's key column, the
// others its further unique indexes (TableSchema::indexes), named as PostgreSQL names a
// constraint, "<table>_<col>[_<col>...]_key", where the statement does not name them.
void TableBuilder::add_unique(const PgQuery__Constraint* constraint, const std::vector<std::string>& columns, std::size_t at) {
  if (constraint->deferrable || constraint->initdeferred) refuse(at, "a DEFERRABLE unique constraint");
  if (constraint->nulls_not_distinct) refuse(at, "NULLS NOT DISTINCT");
  for (const std::string& column : columns)
    if (column == "id") refuse(at, "UNIQUE on id (the primary key)");
  const std::string name = empty(constraint->conname) ? table_ + "_" + fmt::format("{}", fmt::join(columns, "_")) + "_key"
                                                      : text_of(constraint->conname);
  if (columns.size() == 1 && !table_def_.unique) {
    table_def_.unique = UniqueDef{columns[0], name, at};
    return;
  }
  if (table_def_.more_unique.size() >= sql::kMaxItems) too_many(at, "unique constraints");
  table_def_.more_unique.emplace_back(IndexDef{.name = name, .columns = columns}, at);
}

// One column: its type, its default (NULL where it gives none and the column may hold NULL;
// the type's zero for a NOT NULL column without one) and constraints.
void TableBuilder::column_def(const PgQuery__ColumnDef* column) {
  const std::size_t at = position(column->location);
  TableDef& t = table_def_;
  const std::string name = text_of(column->colname);
  if (t.columns.size() >= sql::kMaxItems) too_many(at, "columns");
  if (std::any_of(t.columns.begin(), t.columns.end(), [&](const auto& c) { return c.first == name; }))
    throw Error("42701", at, "column \"" + name + "\" specified more than once");
  const Type type = column_type(column->type_name, at);
  if (const auto bounded = column_limits(column->type_name); bounded && name != "id") t.types[name] = *bounded;
  if (column->coll_clause != nullptr) refuse(at, "COLLATE");
  const bool id = name == "id";
  if (type == Type::serial && !id) refuse(at, "a serial column other than id");
  if (id && type != Type::integer && type != Type::serial) refuse(at, "an id of a type other than an integer");
  Value default_value = type == Type::text ? Value{std::string()} : Value{std::int64_t{0}};
  bool identity = type == Type::serial;
  const Value zero = default_value;
  bool nullable = !id, has_default = false;
  for (std::size_t i = 0; i < column->n_constraints; ++i) {
    const PgQuery__Constraint* constraint = column->constraints[i]->constraint;
    const std::size_t constraint_at = position(constraint->location);
    switch (constraint->contype) {
      case PG_QUERY__CONSTR_TYPE__CONSTR_NULL: nullable = !id; break;  // the primary key holds no NULL
      case PG_QUERY__CONSTR_TYPE__CONSTR_NOTNULL: nullable = false; break;
      case PG_QUERY__CONSTR_TYPE__CONSTR_DEFAULT:
        if (id) refuse(constraint_at, "a DEFAULT for id");
        default_value = column_default(constraint->raw_expr, type, constraint_at);
        has_default = true;
        break;
      case PG_QUERY__CONSTR_TYPE__CONSTR_IDENTITY:
        if (!id) refuse(constraint_at, "an identity column other than id");
        identity = true;
        break;
      case PG_QUERY__CONSTR_TYPE__CONSTR_PRIMARY:
        add_primary(constraint_at);
        if (!id) t.natural_key = name;
        break;
      case PG_QUERY__CONSTR_TYPE__CONSTR_UNIQUE: add_unique(constraint, {name}, constraint_at); break;
      default: refuse(constraint_at, constraint_name(constraint));
    }
  }
  if (id) {
    t.has_id = true;
    t.schema.auto_increment = identity;
  }
  if (has_default) t.with_default.push_back(name);
  // A column that may hold NULL and gives no DEFAULT has NULL as its default; `columns` keeps
  // the type's zero, which tells the column's type.
  if (nullable && (!has_default || is_null(default_value))) t.null_by_default.push_back(name);
  if (is_null(default_value)) default_value = zero;
  if (nullable) t.nullable.push_back(name);
  t.columns.emplace_back(name, std::move(default_value));
}

// A table constraint: PRIMARY KEY (id) or [CONSTRAINT name] UNIQUE (col [, col ...]).
void TableBuilder::table_constraint(const PgQuery__Constraint* constraint) {
  const std::size_t at = position(constraint->location);
  if (constraint->n_including > 0) refuse(at, "INCLUDE");
  switch (constraint->contype) {
    case PG_QUERY__CONSTR_TYPE__CONSTR_PRIMARY:
      if (constraint->n_keys != 1) refuse(at, "a primary key on one column (on several: not modelled on PostgreSQL)");
      add_primary(at);
      if (str(constraint->keys[0]) != "id") table_def_.natural_key = str(constraint->keys[0]);
      return;
    case PG_QUERY__CONSTR_TYPE__CONSTR_UNIQUE: {
      if (constraint->n_keys > sql::kMaxItems) too_many(at, "columns of a unique constraint");
      std::vector<std::string> columns;
      for (std::size_t i = 0; i < constraint->n_keys; ++i) {
        columns.push_back(str(constraint->keys[i]));
        if (std::count(columns.begin(), columns.end(), columns.back()) > 1)
          throw Error("42701", at, "column \"" + columns.back() + "\" appears twice in unique constraint");
      }
      add_unique(constraint, columns, at);
      return;
    }
    default: refuse(at, constraint_name(constraint));
  }
}

std::string TableBuilder::constraint_name(const PgQuery__Constraint* constraint) {
  switch (constraint->contype) {
    case PG_QUERY__CONSTR_TYPE__CONSTR_CHECK: return "a CHECK constraint";
    case PG_QUERY__CONSTR_TYPE__CONSTR_FOREIGN: return "a foreign key";
    case PG_QUERY__CONSTR_TYPE__CONSTR_GENERATED: return "a generated column";
    case PG_QUERY__CONSTR_TYPE__CONSTR_EXCLUSION: return "an exclusion constraint";
    case PG_QUERY__CONSTR_TYPE__CONSTR_IDENTITY: return "an identity column other than id";
    default: return "DEFERRABLE or INITIALLY";
  }
}

TableSchema TableBuilder::finish(std::size_t at) {
  TableDef& t = table_def_;
  TableSchema& schema = t.schema;
  const auto defined = [&](const std::string& column) {
    return std::any_of(t.columns.begin(), t.columns.end(), [&](const auto& c) { return c.first == column; });
  };
  if (t.natural_key) {
    // A primary key on another column: the table's key index, <table>_pkey, NOT NULL, and no id
    // (TableSchema::clustered_key).
    const std::string& key = *t.natural_key;
    if (t.has_id) refuse(*t.primary, "no column id in a table whose primary key is another (id is the model's integer primary key)");
    if (!defined(key)) throw Error("42703", *t.primary, "column \"" + key + "\" named in key does not exist");
    if (std::count(t.with_default.begin(), t.with_default.end(), key))
      refuse(*t.primary, "a primary key column without DEFAULT (the model's keys are always given)");
    std::erase(t.nullable, key);
    std::erase(t.null_by_default, key);
    if (t.unique) {  // the first UNIQUE column is then a further index
      if (!defined(t.unique->column)) throw Error("42703", t.unique->at, "column \"" + t.unique->column + "\" named in key does not exist");
      t.more_unique.insert(t.more_unique.begin(), {IndexDef{.name = t.unique->name, .columns = {t.unique->column}}, t.unique->at});
    }
    t.unique = UniqueDef{key, table_ + "_pkey", *t.primary};
    schema.clustered_key = true;
    schema.auto_increment = false;
  } else {
    if (!t.has_id && t.primary) throw Error("42703", *t.primary, "column \"id\" named in key does not exist");
    if (!t.has_id || !t.primary) refuse(at, "a table without a primary key");
  }
  if (t.unique) {
    if (std::none_of(t.columns.begin(), t.columns.end(), [&](const auto& c) { return c.first == t.unique->column; }))
      throw Error("42703", t.unique->at, "column \"" + t.unique->column + "\" named in key does not exist");
    schema.key_column = t.unique->column;
    schema.key_text = std::holds_alternative<std::string>(
        std::find_if(t.columns.begin(), t.columns.end(), [&](const auto& c) { return c.first == schema.key_column; })->second);
    schema.key_index = KeyIndex::unique;
    schema.index_name = t.unique->name;
  }
  for (auto& [index, index_at] : t.more_unique) {
    for (const std::string& column : index.columns)
      if (std::none_of(t.columns.begin(), t.columns.end(), [&](const auto& c) { return c.first == column; }))
        throw Error("42703", index_at, "column \"" + column + "\" named in key does not exist");
    schema.indexes.push_back(std::move(index));
  }
  if (t.has_id) schema.column_order.push_back("id");
  for (auto& [name, default_value] : t.columns) {
    if (name == "id") continue;
    schema.column_order.push_back(name);
    if (name != schema.key_column) schema.columns[name] = std::move(default_value);
  }
  schema.nullable = t.nullable;
  std::sort(schema.nullable.begin(), schema.nullable.end());
  schema.null_by_default = t.null_by_default;
  std::sort(schema.null_by_default.begin(), schema.null_by_default.end());
  schema.types = t.types;
  return std::move(schema);
}

// The column's type as the model has it: PostgreSQL's integer types, its serials, text,
// varchar(n) and char(n), boolean, timestamp [with time zone].
Type TableBuilder::column_type(const PgQuery__TypeName* type, std::size_t at) {
  if (type == nullptr || type->n_names == 0) refuse(at, "a column without a type");
  if (type->n_array_bounds > 0) refuse(at, "an array type");
  if (type->pct_type) refuse(at, "%TYPE");
  const std::string name = catalog_name(type->names, type->n_names);
  static constexpr std::pair<std::string_view, Type> kTypes[] = {
      {"int2", Type::integer},    {"int4", Type::integer},      {"int8", Type::integer},      {"serial", Type::serial},
      {"serial2", Type::serial},  {"serial4", Type::serial},    {"serial8", Type::serial},    {"smallserial", Type::serial},
      {"bigserial", Type::serial}, {"text", Type::text},        {"varchar", Type::text},      {"bpchar", Type::text},
      {"bool", Type::boolean},    {"timestamp", Type::timestamp}, {"timestamptz", Type::timestamp}};
  for (const auto& [written, value] : kTypes)
    if (name == written) return value;
  refuse(position(type->location), "the type " + (name.empty() ? dotted(type->names, type->n_names) : name));
}

// What PostgreSQL's integer types admit, and varchar(n) and char(n) (bpchar: char(1) without
// a length), named as its messages name them; nullopt for text, boolean and timestamps.
std::optional<ColumnType> TableBuilder::column_limits(const PgQuery__TypeName* type) {
  const std::string name = catalog_name(type->names, type->n_names);
  if (name == "int2") return ColumnType{.min = -32768, .max = 32767, .name = "smallint"};
  if (name == "int4") return ColumnType{.min = INT32_MIN, .max = INT32_MAX, .name = "integer"};
  if (name == "int8") return ColumnType{.name = "bigint"};
  if (name != "varchar" && name != "bpchar") return std::nullopt;
  std::int64_t n = name == "bpchar" ? 1 : 0;
  if (type->n_typmods == 1 && type->typmods[0]->node_case == PG_QUERY__NODE__NODE_A_CONST &&
      type->typmods[0]->a_const->val_case == PG_QUERY__A__CONST__VAL_IVAL)
    n = type->typmods[0]->a_const->ival->ival;
  if (n <= 0) return std::nullopt;  // varchar without a length: any
  const std::string shown = name == "varchar" ? "character varying" : "character";
  return ColumnType{.max_chars = static_cast<std::size_t>(n), .name = fmt::format("{}({})", shown, n)};
}

// DEFAULT literal, as the column's type reads it: an integer or a string of digits for an
// integer column, a string (or a number's digits) for text, true / false (1 / 0) for boolean.
Value TableBuilder::column_default(const Node* e, Type type, std::size_t at) {
  const Node* n = uncast(e);
  if (n->node_case != PG_QUERY__NODE__NODE_A_CONST) {
    const bool named = n->node_case == PG_QUERY__NODE__NODE_FUNC_CALL || n->node_case == PG_QUERY__NODE__NODE_SQLVALUE_FUNCTION;
    refuse(location_of(n), named ? construct_name(n) : "a DEFAULT other than a literal");
  }
  const PgQuery__AConst* c = n->a_const;
  const Value value = literal(c);
  if (is_null(value)) return value;  // DEFAULT NULL
  const bool boolean = c->val_case == PG_QUERY__A__CONST__VAL_BOOLVAL;
  switch (type) {
    case Type::text:
      if (boolean) return std::string(std::get<std::int64_t>(value) != 0 ? "true" : "false");
      return std::holds_alternative<std::string>(value) ? value : Value{to_string(value)};
    case Type::boolean:
      if (!boolean) refuse(at, "a boolean DEFAULT other than true or false");
      return value;
    default:
      if (boolean) throw Error("42804", at, "an integer column's default is a boolean");
      if (const auto* s = std::get_if<std::string>(&value)) {
        const auto n = integer_text(*s);
        if (!n) throw Error("22P02", at, "invalid input syntax for type integer: \"" + *s + "\"");
        return *n;
      }
      return value;
  }
}

// CREATE [UNIQUE] INDEX [name] ON t (col [, col ...]) [WHERE ...]: on one column without a
// WHERE, an add_index of the table's key column; on several columns or partial, one of its
// further indexes (StatementExtra::index_def). Named as PostgreSQL names it when the
// statement does not: "<table>_<col>[_<col>...]_idx". The model builds every index at once,
// so CONCURRENTLY changes nothing.
void Converter::create_index(const PgQuery__IndexStmt* ix) {
  const std::size_t at = position(ix->relation->location);
  if (ix->n_index_params > sql::kMaxItems) too_many(at, "columns of an index");
  if (ix->n_index_including_params > 0) refuse(at, "INCLUDE");
  if (!empty(ix->access_method) && text_of(ix->access_method) != "btree") refuse(at, "a " + text_of(ix->access_method) + " index");
  if (ix->n_options > 0) refuse(at, "an index's storage options (WITH)");
  if (!empty(ix->table_space)) refuse(at, "TABLESPACE");
  if (ix->if_not_exists) refuse(at, "CREATE INDEX IF NOT EXISTS");
  if (ix->nulls_not_distinct) refuse(at, "NULLS NOT DISTINCT");
  std::vector<std::string> columns;
  for (std::size_t i = 0; i < ix->n_index_params; ++i) {
    const PgQuery__IndexElem* elem = ix->index_params[i]->index_elem;
    if (elem->expr != nullptr || empty(elem->name)) refuse(at, "an index on an expression");
    if (elem->n_collation > 0 || elem->n_opclass > 0) refuse(at, "an index's collation or operator class");
    // ASC / DESC and NULLS FIRST / LAST: the model's index has one order, which no answer reads.
    columns.push_back(text_of(elem->name));
  }
  relation(ix->relation);
  Statement& st = s();
  st.kind = Statement::Kind::add_index;
  st.unique = ix->unique;
  st.index = empty(ix->idxname) ? table_ + "_" + fmt::format("{}", fmt::join(columns, "_")) + "_idx" : text_of(ix->idxname);
  if (columns.size() == 1 && ix->where_clause == nullptr) {
    st.column = columns[0];
    return;
  }
  IndexDef def{.name = st.index, .columns = std::move(columns), .unique = ix->unique != 0};
  if (ix->where_clause != nullptr) {
    def.where = std::make_shared<const Expr>(expr(ix->where_clause, Context{.indexed = true}));
    def.where_text = to_string(*def.where);
  }
  st.edit().index_def = std::make_shared<const IndexDef>(std::move(def));
}

}  // namespace models::db::pg
