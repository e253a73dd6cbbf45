// A typed statement written back as the SQL it stands for, for narration and examples.

#include <fmt/format.h>
#include <fmt/ranges.h>

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

// A `?` inside an expression is shown as its bound value.
Expr bound(const Expr& e, const std::vector<Value>& args) {
  if (e.kind == Expr::Kind::param) return Expr{.kind = Expr::Kind::literal, .value = args.at(e.param)};
  Expr out = e;
  for (Expr& a : out.args) a = bound(a, args);
  return out;
}

std::string where_text(const Statement& s) {
  std::string out;
  for (const Condition& c : s.where)
    out += fmt::format("{}{} {} {}", out.empty() ? " WHERE " : " AND ", c.column, op_text(c.op), to_string(c.value));
  for (const Expr& e : s.more().filter) {
    const bool bare = e.kind != Expr::Kind::logical_or;
    out += fmt::format("{}{}", out.empty() ? " WHERE " : " AND ", bare ? to_string(bound(e, s.more().args)) : "(" + to_string(bound(e, s.more().args)) + ")");
  }
  return out;
}

std::string assignments(const Values& values, const Statement& s) {
  std::string out;
  for (const auto& [column, value] : values) out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", column, to_string(value));
  for (const auto& [column, e] : s.more().assign) out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", column, to_string(bound(e, s.more().args)));
  return out;
}

// "(a, b)" and "('x', 1)", and for more rows "('x', 1), ('y', 2)".
std::pair<std::string, std::string> columns_and_values(const Statement& s) {
  std::string columns, list;
  for (const auto& [column, value] : s.values) {
    columns += (columns.empty() ? "" : ", ") + column;
    list += (list.empty() ? "" : ", ") + to_string(value);
  }
  for (const Values& row : s.more().more_rows) {
    list += "), (";
    std::string one;
    for (const auto& [column, value] : row) one += (one.empty() ? "" : ", ") + to_string(value);
    list += one;
  }
  return {"(" + columns + ")", list};
}
const char* lock_text(ReadLock lock) {
  switch (lock) {
    case ReadLock::none: return "";
    case ReadLock::share: return " LOCK IN SHARE MODE";
    case ReadLock::update: return " FOR UPDATE";
    case ReadLock::key_share: return " FOR KEY SHARE";
    case ReadLock::no_key_update: return " FOR NO KEY UPDATE";
  }
  return "";
}
}  // namespace

std::string to_string(const Statement& s) {
  using K = Statement::Kind;
  switch (s.kind) {
    case K::begin: return s.consistent_snapshot ? "START TRANSACTION WITH CONSISTENT SNAPSHOT" : "BEGIN";
    case K::set_lock_wait_timeout: return fmt::format("SET SESSION innodb_lock_wait_timeout = {}", s.seconds);
    case K::commit: return "COMMIT";
    case K::rollback: return "ROLLBACK";
    case K::set_isolation:
      return fmt::format("SET {}TRANSACTION ISOLATION LEVEL {}", s.next_transaction_only ? "" : "SESSION ", to_string(s.isolation));
    case K::select: return fmt::format("SELECT * FROM {}{}{}", s.table, where_text(s), lock_text(s.lock));
    case K::insert: {
      const char* verb = s.on_duplicate == OnDuplicate::replace  ? "REPLACE"
                         : s.on_duplicate == OnDuplicate::ignore ? "INSERT IGNORE"
                                                                 : "INSERT";
      const auto [columns, values] = columns_and_values(s);
      if (s.bulk) return fmt::format("{} INTO {} {} SELECT {} FROM DUAL", verb, s.table, columns, values);
      std::string out = fmt::format("{} INTO {} {} VALUES ({})", verb, s.table, columns, values);
      if (s.on_duplicate == OnDuplicate::update) out += " ON DUPLICATE KEY UPDATE " + assignments(s.on_update, s);
      return out;
    }
    case K::insert_if_absent: {
      const auto [columns, values] = columns_and_values(s);
      return fmt::format("INSERT INTO {} {} SELECT {} FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM {}{})", s.table, columns, values,
                         s.table, where_text(s));
    }
    case K::update: return fmt::format("UPDATE {} SET {}{}", s.table, assignments(s.values, s), where_text(s));
    case K::remove: return fmt::format("DELETE FROM {}{}", s.table, where_text(s));
    case K::add_index: return fmt::format("ALTER TABLE {} ADD {}INDEX {} ({})", s.table, s.unique ? "UNIQUE " : "", s.index, s.column);
    case K::drop_index: return fmt::format("ALTER TABLE {} DROP INDEX {}", s.table, s.index);
    case K::set_timeout: return fmt::format("SET {} = {}", s.setting, s.milliseconds);
    case K::savepoint:
      return fmt::format("{} {}",
                         s.savepoint.op == Savepoint::Op::set           ? "SAVEPOINT"
                         : s.savepoint.op == Savepoint::Op::rollback_to ? "ROLLBACK TO SAVEPOINT"
                                                                        : "RELEASE SAVEPOINT",
                         s.savepoint.name);
    case K::advisory: {
      const Advisory& a = s.advisory;
      const bool locks = a.op == Advisory::Op::lock || a.op == Advisory::Op::try_lock;
      const auto key = s.values.find("key");
      return fmt::format("SELECT pg_{}advisory{}{}{}{}({})", a.op == Advisory::Op::try_lock ? "try_" : "",
                         a.op == Advisory::Op::unlock ? "_unlock" : a.op == Advisory::Op::unlock_all ? "_unlock_all" : "",
                         a.xact ? "_xact" : "", locks ? "_lock" : "", a.shared ? "_shared" : "",
                         key == s.values.end() ? "" : to_string(key->second));
    }
  }
  return "?";
}

std::string to_string(const Statement& s, Engine engine) {
  if (engine != Engine::postgresql) return to_string(s);
  // PostgreSQL's words where its dialect differs; every other statement reads alike in both.
  using K = Statement::Kind;
  switch (s.kind) {
    case K::set_lock_wait_timeout: return fmt::format("SET lock_timeout = {}", s.seconds * 1000);
    case K::set_isolation:
      if (!s.next_transaction_only)
        return fmt::format("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL {}", to_string(s.isolation));
      break;
    case K::select:
      if (s.lock == ReadLock::share) return fmt::format("SELECT * FROM {}{} FOR SHARE", s.table, where_text(s));
      break;
    case K::insert: {
      if (s.on_duplicate != OnDuplicate::ignore && s.on_duplicate != OnDuplicate::update) break;
      const auto [columns, values] = columns_and_values(s);
      const auto& target = s.more().conflict_target;
      std::string on = target.empty() ? "" : fmt::format("({}) ", fmt::join(target, ", "));
      if (const auto& where = s.more().conflict_index_where) on += "WHERE " + to_string(*where) + " ";
      return fmt::format("INSERT INTO {} {} VALUES ({}) ON CONFLICT {}{}", s.table, columns, values, on,
                         s.on_duplicate == OnDuplicate::ignore ? "DO NOTHING" : "DO UPDATE SET " + assignments(s.on_update, s));
    }
    case K::insert_if_absent: {
      const auto [columns, values] = columns_and_values(s);
      return fmt::format("INSERT INTO {} {} SELECT {} WHERE NOT EXISTS (SELECT 1 FROM {}{})", s.table, columns, values, s.table,
                         where_text(s));
    }
    case K::add_index: {
      const IndexDef* def = s.more().index_def.get();
      if (def == nullptr) return fmt::format("CREATE {}INDEX {} ON {} ({})", s.unique ? "UNIQUE " : "", s.index, s.table, s.column);
      return fmt::format("CREATE {}INDEX {} ON {} ({}){}", s.unique ? "UNIQUE " : "", s.index, s.table, fmt::join(def->columns, ", "),
                         def->where ? " WHERE " + def->where_text : "");
    }
    case K::drop_index: return fmt::format("DROP INDEX {}", s.index);
    default: break;
  }
  return to_string(s);
}

}  // namespace models::db
