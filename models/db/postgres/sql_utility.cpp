// PostgreSQL's SQL: BEGIN, COMMIT, ROLLBACK, savepoints, and the settings SET changes
// (models/db/postgres/sql_converter.hpp).

#include <algorithm>
#include <cstdint>
#include <memory>

#include <fmt/format.h>

#include "models/db/postgres/sql_converter.hpp"
#include "models/db/rows.hpp"

namespace models::db::pg {

// --- Transactions and settings -----------------------------------------------------------

// BEGIN | START TRANSACTION [ISOLATION LEVEL x]: the level, and next_transaction_only as
// the mark that the BEGIN names it; COMMIT | END; ROLLBACK | ABORT.
void Converter::transaction(const PgQuery__TransactionStmt* t) {
  switch (t->kind) {
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_BEGIN:
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_START:
      s().kind = Statement::Kind::begin;
      if (const auto level = transaction_modes(t->options, t->n_options)) {
        s().isolation = *level;
        s().next_transaction_only = true;
      }
      return;
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_COMMIT:
      if (t->chain) refuse(0, "COMMIT AND CHAIN");
      s().kind = Statement::Kind::commit;
      return;
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_ROLLBACK:
      if (t->chain) refuse(0, "ROLLBACK AND CHAIN");
      s().kind = Statement::Kind::rollback;
      return;
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_SAVEPOINT: savepoint(t, Savepoint::Op::set); return;
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_RELEASE: savepoint(t, Savepoint::Op::release); return;
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_ROLLBACK_TO: savepoint(t, Savepoint::Op::rollback_to); return;
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_PREPARE: refuse(0, "PREPARE TRANSACTION");
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_COMMIT_PREPARED: refuse(0, "COMMIT PREPARED");
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_ROLLBACK_PREPARED: refuse(0, "ROLLBACK PREPARED");
    default: refuse(0, "this transaction statement");
  }
}

// SAVEPOINT name, ROLLBACK TO [SAVEPOINT] name, RELEASE [SAVEPOINT] name.
void Converter::savepoint(const PgQuery__TransactionStmt* t, Savepoint::Op op) {
  if (empty(t->savepoint_name)) refuse(0, "a savepoint statement without a name");
  s().kind = Statement::Kind::savepoint;
  s().savepoint = Savepoint{op, text_of(t->savepoint_name)};
}

// A transaction's modes (BEGIN's, SET TRANSACTION's): the isolation level if one is named.
// READ WRITE and NOT DEFERRABLE, the defaults, are taken; READ ONLY and DEFERRABLE refused.
std::optional<Isolation> Converter::transaction_modes(Node* const* options, std::size_t n) {
  std::optional<Isolation> level;
  for (std::size_t i = 0; i < n; ++i) {
    const PgQuery__DefElem* mode = options[i]->def_elem;
    const std::size_t at = position(mode->location);
    const std::string name = text_of(mode->defname);
    const Node* arg = mode->arg;
    if (name == "transaction_isolation" && arg != nullptr && arg->node_case == PG_QUERY__NODE__NODE_A_CONST &&
        arg->a_const->val_case == PG_QUERY__A__CONST__VAL_SVAL) {
      level = isolation_of(text_of(arg->a_const->sval->sval));
      if (!level) refuse(at, "this isolation level");
    } else if (name == "transaction_read_only") {
      if (integer_constant(arg).value_or(1) != 0) refuse(at, "READ ONLY");
    } else if (name == "transaction_deferrable") {
      if (integer_constant(arg).value_or(1) != 0) refuse(at, "DEFERRABLE");
    } else {
      refuse(at, "the transaction mode " + name);
    }
  }
  return level;
}

// SET TRANSACTION (the next transaction), SET SESSION CHARACTERISTICS AS TRANSACTION and
// SET default_transaction_isolation (the session's) ISOLATION LEVEL; SET lock_timeout,
// statement_timeout or deadlock_timeout.
void Converter::set(const PgQuery__VariableSetStmt* v) {
  const std::string name = text_of(v->name);
  if (v->is_local) refuse(0, "SET LOCAL");
  switch (v->kind) {
    case PG_QUERY__VARIABLE_SET_KIND__VAR_SET_MULTI: {
      if (name != "TRANSACTION" && name != "SESSION CHARACTERISTICS") refuse(0, "SET " + name);
      const auto level = transaction_modes(v->args, v->n_args);
      if (!level) refuse(0, "SET TRANSACTION without ISOLATION LEVEL");
      s().kind = Statement::Kind::set_isolation;
      s().isolation = *level;
      s().next_transaction_only = name == "TRANSACTION";
      return;
    }
    case PG_QUERY__VARIABLE_SET_KIND__VAR_SET_VALUE: break;
    case PG_QUERY__VARIABLE_SET_KIND__VAR_SET_DEFAULT: refuse(0, "SET " + name + " TO DEFAULT");
    case PG_QUERY__VARIABLE_SET_KIND__VAR_SET_CURRENT: refuse(0, "SET " + name + " FROM CURRENT");
    default: refuse(0, "RESET");
  }
  if (v->n_args != 1) throw Error("22023", 0, "SET " + name + " takes only one argument");
  const Node* arg = v->args[0];
  const std::size_t at = location_of(arg);
  if (arg->node_case != PG_QUERY__NODE__NODE_A_CONST || arg->a_const->isnull) refuse(at, "this value for SET " + name);
  const PgQuery__AConst* value = arg->a_const;
  if (name == "default_transaction_isolation") {
    const auto level = value->val_case == PG_QUERY__A__CONST__VAL_SVAL ? isolation_of(text_of(value->sval->sval)) : std::nullopt;
    if (!level) {
      const std::string written = value->val_case == PG_QUERY__A__CONST__VAL_SVAL ? text_of(value->sval->sval) : std::string();
      throw Error("22023", at, "invalid value for parameter \"" + name + "\": \"" + written + "\"");
    }
    s().kind = Statement::Kind::set_isolation;
    s().isolation = *level;
    return;
  }
  if (name != "lock_timeout" && name != "statement_timeout" && name != "deadlock_timeout") refuse(0, "SET " + name);
  s().kind = Statement::Kind::set_timeout;
  s().setting = name;
  s().milliseconds = timeout(name, value, at);
}

// A timeout's value in milliseconds (0: none): an integer is milliseconds, a string carries
// its unit ('10s', '100ms', '1min', '2 s'). PostgreSQL's ranges: 0 (none) up to INT_MAX, from
// 1 for deadlock_timeout.
std::int64_t Converter::timeout(const std::string& name, const PgQuery__AConst* value, std::size_t at) {
  std::optional<double> ms;
  std::string written;
  switch (value->val_case) {
    case PG_QUERY__A__CONST__VAL_IVAL: ms = value->ival->ival; written = std::to_string(value->ival->ival); break;
    case PG_QUERY__A__CONST__VAL_FVAL: written = text_of(value->fval->fval); ms = milliseconds_of(written); break;
    case PG_QUERY__A__CONST__VAL_SVAL: written = text_of(value->sval->sval); ms = milliseconds_of(written); break;
    default: break;
  }
  if (!ms) throw Error("22023", at, "invalid value for parameter \"" + name + "\": \"" + written + "\"");
  const double least = name == "deadlock_timeout" ? 1 : 0;
  if (*ms < least || *ms > INT_MAX)
    throw Error("22023", at, written + " is outside the valid range for parameter \"" + name + "\" (" +
                                 std::to_string(static_cast<int>(least)) + " .. " + std::to_string(INT_MAX) + ")");
  return static_cast<std::int64_t>(*ms);
}

}  // namespace models::db::pg
