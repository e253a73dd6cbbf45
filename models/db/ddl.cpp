#include "models/db/ddl.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/db/postgres/sql.hpp"

namespace models::db {
namespace {

std::string quoted(const std::string& name) { return "\"" + sql::escaped(name) + "\""; }


void add_index(const Statement& st, std::vector<TableSchema>& tables) {
  auto t = std::find_if(tables.begin(), tables.end(), [&](const auto& x) { return x.name == st.table; });
  if (t == tables.end()) throw DdlRefused(fmt::format("a CREATE INDEX on a table created above it, not on {}", quoted(st.table)));
  const auto taken = [&](const std::string& name) {
    return name == t->index_name || std::any_of(t->indexes.begin(), t->indexes.end(), [&](const auto& x) { return x.name == name; });
  };
  if (taken(st.index)) throw DdlRefused(fmt::format("an index of a name of its own ({} has one named {})", t->name, quoted(st.index)));
  // On several columns, partial, or on another column than the key column's: a further index.
  const bool further = st.more().index_def || (!t->key_column.empty() && t->key_column != st.column);
  if (further) {
    const IndexDef def = further_index(st);
    for (const std::string& column : index_columns(def))
      if (!t->has_column(column)) throw DdlRefused(fmt::format("an index on columns of {} (it has no {})", t->name, quoted(column)));
    t->indexes.push_back(def);
    return;
  }
  if (!t->columns.count(st.column) && t->key_column != st.column)
    throw DdlRefused(fmt::format("an index on a column of {} (it has no {})", t->name, quoted(st.column)));
  if (!t->key_column.empty())
    throw DdlRefused(fmt::format("no second index on {}.{} (the model keeps one index on a column: docs/sql.md)", t->name, t->key_column));
  t->key_column = st.column;
  if (auto c = t->columns.find(st.column); c != t->columns.end()) t->key_text = std::holds_alternative<std::string>(c->second);
  t->columns.erase(st.column);
  t->key_index = st.unique ? KeyIndex::unique : KeyIndex::non_unique;
  t->index_name = st.index;
}

}  // namespace

IndexDef further_index(const Statement& st) {
  if (st.more().index_def) return *st.more().index_def;
  return IndexDef{.name = st.index, .columns = {st.column}, .unique = st.unique};
}

std::vector<std::string> index_columns(const IndexDef& index) {
  std::vector<std::string> out = index.columns;
  if (index.where) columns_of(*index.where, out);
  return out;
}

void apply_ddl(const sql::Prepared& p, std::vector<TableSchema>& tables) {
  if (p.statement.kind == Statement::Kind::add_index) return add_index(p.statement, tables);
  if (!p.create) throw DdlRefused("a CREATE TABLE statement, or a CREATE INDEX on a table above it");
  const std::string& name = p.create->name;
  if (std::any_of(tables.begin(), tables.end(), [&](const auto& t) { return t.name == name; }))
    throw DdlRefused(fmt::format("a table of a name of its own ({} is created twice)", quoted(name)));
  tables.push_back(*p.create);
}

sql::Prepared prepare_in(Engine engine, const std::string& text) {
  return engine == Engine::postgresql ? pg::prepare(text) : sql::prepare(text);
}

}  // namespace models::db
