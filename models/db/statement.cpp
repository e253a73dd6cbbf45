// A typed statement written back as the SQL it stands for, for narration and examples.

#include <fmt/format.h>

#include "models/db/database.hpp"

namespace models::db {

namespace {
const char* op_text(Condition::Op op) {
  switch (op) {
    case Condition::Op::eq: return "=";
    case Condition::Op::ne: return "!=";
    case Condition::Op::lt: return "<";
    case Condition::Op::le: return "<=";
    case Condition::Op::gt: return ">";
    case Condition::Op::ge: return ">=";
  }
  return "?";
}

std::string where_text(const Where& where) {
  std::string out;
  for (const Condition& c : where) out += fmt::format("{}{} {} {}", out.empty() ? " WHERE " : " AND ", c.column, op_text(c.op), to_string(c.value));
  return out;
}

std::string assignments(const Values& values) {
  std::string out;
  for (const auto& [column, value] : values) out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", column, to_string(value));
  return out;
}

// "(a, b)" and "('x', 1)".
std::pair<std::string, std::string> columns_and_values(const Values& values) {
  std::string columns, list;
  for (const auto& [column, value] : values) {
    columns += (columns.empty() ? "" : ", ") + column;
    list += (list.empty() ? "" : ", ") + to_string(value);
  }
  return {"(" + columns + ")", list};
}
}  // namespace

std::string to_string(const Statement& s) {
  using K = Statement::Kind;
  switch (s.kind) {
    case K::begin: return "BEGIN";
    case K::commit: return "COMMIT";
    case K::rollback: return "ROLLBACK";
    case K::set_isolation:
      return fmt::format("SET {}TRANSACTION ISOLATION LEVEL {}", s.next_transaction_only ? "" : "SESSION ", to_string(s.isolation));
    case K::select:
      return fmt::format("SELECT * FROM {}{}{}", s.table, where_text(s.where),
                         s.lock == ReadLock::update ? " FOR UPDATE" : s.lock == ReadLock::share ? " LOCK IN SHARE MODE" : "");
    case K::insert: {
      const char* verb = s.on_duplicate == OnDuplicate::replace  ? "REPLACE"
                         : s.on_duplicate == OnDuplicate::ignore ? "INSERT IGNORE"
                                                                 : "INSERT";
      const auto [columns, values] = columns_and_values(s.values);
      std::string out = fmt::format("{} INTO {} {} VALUES ({})", verb, s.table, columns, values);
      if (s.on_duplicate == OnDuplicate::update) out += " ON DUPLICATE KEY UPDATE " + assignments(s.on_update);
      return out;
    }
    case K::insert_if_absent: {
      const auto [columns, values] = columns_and_values(s.values);
      return fmt::format("INSERT INTO {} {} SELECT {} FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM {}{})", s.table, columns, values,
                         s.table, where_text(s.where));
    }
    case K::update: return fmt::format("UPDATE {} SET {}{}", s.table, assignments(s.values), where_text(s.where));
    case K::remove: return fmt::format("DELETE FROM {}{}", s.table, where_text(s.where));
    case K::add_index: return fmt::format("ALTER TABLE {} ADD {}INDEX {} ({})", s.table, s.unique ? "UNIQUE " : "", s.index, s.column);
    case K::drop_index: return fmt::format("ALTER TABLE {} DROP INDEX {}", s.table, s.index);
  }
  return "?";
}

}  // namespace models::db
