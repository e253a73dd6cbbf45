// Reading libpg_query's parse tree: see models/db/postgres/sql_tree.hpp.

#include "models/db/postgres/sql_tree.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstring>

namespace models::db::pg {

// --- Errors ------------------------------------------------------------------------------

std::size_t position(std::int32_t location) { return location > 0 ? static_cast<std::size_t>(location) : 0; }

// What PostgreSQL parses but the model does not run: 0A000 (feature_not_supported).
[[noreturn]] void refuse(std::size_t at, const std::string& construct) {
  throw Error("0A000", at, construct + " is not modelled (docs/sql.md, PostgreSQL)");
}

[[noreturn]] void too_deep(std::size_t at) {
  refuse(at, "an expression more than " + std::to_string(kMaxHeight) + " levels deep");
}

[[noreturn]] void too_many(std::size_t at, const char* what) {
  refuse(at, "more than " + std::to_string(sql::kMaxItems) + " " + what + " in a statement");
}

// --- Reading the tree --------------------------------------------------------------------

bool empty(const char* s) { return s == nullptr || *s == '\0'; }
std::string text_of(const char* s) { return s == nullptr ? std::string() : std::string(s); }

// A String node's text ("" for any other node).
std::string str(const Node* n) {
  return n != nullptr && n->node_case == PG_QUERY__NODE__NODE_STRING ? text_of(n->string->sval) : std::string();
}

// A qualified name (a function's, a type's) as written: "pg_catalog.count".
std::string dotted(Node* const* names, std::size_t n) {
  std::string out;
  // Appended piece by piece: GCC 12 takes `"." + str(...)` for an overflowing memcpy at -O3
  // (its -Warray-bounds false positive, as the top CMakeLists.txt tells of its kin).
  for (std::size_t i = 0; i < n; ++i) {
    if (i != 0) out += '.';
    out += str(names[i]);
  }
  return out;
}

// The last part of a name, when the parts before it are only pg_catalog (`pg_catalog.count`
// is `count`); "" for a name in another schema.
std::string catalog_name(Node* const* names, std::size_t n) {
  if (n == 0 || (n == 2 && str(names[0]) != "pg_catalog") || n > 2) return {};
  return str(names[n - 1]);
}

// Where a node starts in the text: its type's `location` field, found through protobuf-c's
// descriptors (each message type says where its fields are); 0 for a type without one.
std::size_t location_of(const Node* n) {
  if (n == nullptr) return 0;
  const ProtobufCFieldDescriptor* field =
      protobuf_c_message_descriptor_get_field(&pg_query__node__descriptor, static_cast<unsigned>(n->node_case));
  if (field == nullptr) return 0;
  const void* inner = nullptr;  // the oneof's message: every member is a pointer to one
  std::memcpy(&inner, reinterpret_cast<const char*>(n) + field->offset, sizeof inner);
  if (inner == nullptr) return 0;
  const auto* message = static_cast<const ProtobufCMessage*>(inner);
  const ProtobufCFieldDescriptor* location = protobuf_c_message_descriptor_get_field_by_name(message->descriptor, "location");
  if (location == nullptr || location->type != PROTOBUF_C_TYPE_INT32) return 0;
  std::int32_t value = 0;
  std::memcpy(&value, static_cast<const char*>(inner) + location->offset, sizeof value);
  return position(value);
}

// The same, or `fallback` where the node's type has no location (a join, a subquery in FROM).
std::size_t location_of(const Node* n, std::size_t fallback) {
  const std::size_t at = location_of(n);
  return at != 0 ? at : fallback;
}

// A construct the model does not run, named as a reader of the SQL would name it.
std::string construct_name(const Node* n) {
  switch (n->node_case) {
    case PG_QUERY__NODE__NODE_JOIN_EXPR: return "a join";
    case PG_QUERY__NODE__NODE_SUB_LINK: return "a subquery";
    case PG_QUERY__NODE__NODE_RANGE_SUBSELECT: return "a subquery in FROM";
    case PG_QUERY__NODE__NODE_RANGE_FUNCTION: return "a function in FROM";
    case PG_QUERY__NODE__NODE_FUNC_CALL:
      return "a function call " + dotted(n->func_call->funcname, n->func_call->n_funcname) + "()";
    case PG_QUERY__NODE__NODE_CASE_EXPR: return "CASE";
    case PG_QUERY__NODE__NODE_MIN_MAX_EXPR: return "GREATEST or LEAST";
    case PG_QUERY__NODE__NODE_SQLVALUE_FUNCTION: return "CURRENT_TIMESTAMP, CURRENT_USER and the like";
    case PG_QUERY__NODE__NODE_BOOLEAN_TEST: return "IS TRUE, IS FALSE or IS UNKNOWN";
    case PG_QUERY__NODE__NODE_A_ARRAY_EXPR: return "an ARRAY";
    case PG_QUERY__NODE__NODE_ROW_EXPR: return "a row constructor";
    case PG_QUERY__NODE__NODE_COLLATE_CLAUSE: return "COLLATE";
    case PG_QUERY__NODE__NODE_A_INDIRECTION: return "a subscript or a field selection";
    case PG_QUERY__NODE__NODE_SET_TO_DEFAULT: return "DEFAULT as a value here";
    case PG_QUERY__NODE__NODE_CURRENT_OF_EXPR: return "WHERE CURRENT OF";
    case PG_QUERY__NODE__NODE_MULTI_ASSIGN_REF: return "a multi-column assignment (a, b) = (...)";
    case PG_QUERY__NODE__NODE_A_STAR: return "* here";
    case PG_QUERY__NODE__NODE_TABLE_LIKE_CLAUSE: return "LIKE another table";
    case PG_QUERY__NODE__NODE_ALTER_TABLE_STMT: return "ALTER TABLE (PostgreSQL's index is CREATE INDEX)";
    case PG_QUERY__NODE__NODE_LOCK_STMT: return "LOCK TABLE";
    case PG_QUERY__NODE__NODE_VARIABLE_SHOW_STMT: return "SHOW";
    case PG_QUERY__NODE__NODE_CREATE_TABLE_AS_STMT: return "CREATE TABLE AS";
    case PG_QUERY__NODE__NODE_VIEW_STMT: return "CREATE VIEW";
    case PG_QUERY__NODE__NODE_CREATE_SEQ_STMT: return "CREATE SEQUENCE";
    case PG_QUERY__NODE__NODE_CREATE_FUNCTION_STMT: return "CREATE FUNCTION";
    case PG_QUERY__NODE__NODE_VACUUM_STMT: return "VACUUM or ANALYZE";
    case PG_QUERY__NODE__NODE_DECLARE_CURSOR_STMT: return "DECLARE CURSOR";
    default: break;
  }
  // Any other: the parse node's name, a statement's as its words ("drop_stmt": DROP).
  const ProtobufCFieldDescriptor* field =
      protobuf_c_message_descriptor_get_field(&pg_query__node__descriptor, static_cast<unsigned>(n->node_case));
  std::string name = field != nullptr ? field->name : "this construct";
  const std::string_view suffix = "_stmt";
  if (name.size() > suffix.size() && name.ends_with(suffix)) {
    name.resize(name.size() - suffix.size());
    for (char& c : name) c = c == '_' ? ' ' : static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    return name;
  }
  std::replace(name.begin(), name.end(), '_', ' ');
  return "the expression " + name;
}

// A node without its casts: `'1'::int` is '1' (the model's values carry no type).
const Node* uncast(const Node* n) {
  while (n != nullptr && n->node_case == PG_QUERY__NODE__NODE_TYPE_CAST) n = n->type_cast->arg;
  return n;
}

// The items of a List node (an IN list, BETWEEN's bounds, a VALUES row).
std::pair<Node* const*, std::size_t> items_of(const Node* n) {
  if (n == nullptr || n->node_case != PG_QUERY__NODE__NODE_LIST) return {nullptr, 0};
  return {n->list->items, n->list->n_items};
}

// An integer written past int4's range, which PostgreSQL's parser keeps as a Float node
// with its digits; nullopt for a decimal or a number past BIGINT's range.
std::optional<std::int64_t> integer_text(std::string_view s) {
  std::int64_t n = 0;
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (s.empty() || error != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return n;
}

// A literal's value: NULL, an integer, a string, or true/false as 1/0. Decimals and bit
// strings are refused.
Value literal(const PgQuery__AConst* c) {
  const std::size_t at = position(c->location);
  if (c->isnull) return Null{};
  switch (c->val_case) {
    case PG_QUERY__A__CONST__VAL_IVAL: return std::int64_t{c->ival->ival};
    case PG_QUERY__A__CONST__VAL_FVAL: {
      const std::string digits = text_of(c->fval->fval);
      if (const auto n = integer_text(digits)) return *n;
      const bool decimal = digits.find_first_of(".eE") != std::string::npos;
      refuse(at, decimal ? "a decimal number (" + digits + ")" : "a number past BIGINT's range (" + digits + ")");
    }
    case PG_QUERY__A__CONST__VAL_BOOLVAL: return std::int64_t{c->boolval->boolval ? 1 : 0};
    case PG_QUERY__A__CONST__VAL_SVAL: return text_of(c->sval->sval);
    case PG_QUERY__A__CONST__VAL_BSVAL: refuse(at, "a bit string");
    default: return Null{};
  }
}

// A literal cast to an integer type, as PostgreSQL's parser folds it: '12'::int is 12,
// 'abc'::int fails with 22P02, '3000000000'::int and 3000000000::int with 22003. Nullopt for
// any other cast, which keeps its value: the model's values carry no type.
std::optional<Value> folded_cast(const PgQuery__TypeCast* cast) {
  const PgQuery__TypeName* type = cast->type_name;
  if (type == nullptr || type->n_names == 0 || cast->arg == nullptr || cast->arg->node_case != PG_QUERY__NODE__NODE_A_CONST ||
      cast->arg->a_const->isnull)
    return std::nullopt;
  const std::string name = str(type->names[type->n_names - 1]);
  std::int64_t lo = 0, hi = 0;
  std::string shown;
  if (name == "int4" || name == "integer" || name == "int") {
    lo = std::numeric_limits<std::int32_t>::min(), hi = std::numeric_limits<std::int32_t>::max(), shown = "integer";
  } else if (name == "int8" || name == "bigint") {
    lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max(), shown = "bigint";
  } else if (name == "int2" || name == "smallint") {
    lo = std::numeric_limits<std::int16_t>::min(), hi = std::numeric_limits<std::int16_t>::max(), shown = "smallint";
  } else {
    return std::nullopt;
  }
  const std::size_t at = position(cast->location);
  const PgQuery__AConst* c = cast->arg->a_const;
  if (c->val_case == PG_QUERY__A__CONST__VAL_SVAL) {  // a string: the type's input function
    const std::string text = text_of(c->sval->sval);
    const std::size_t from = text.find_first_not_of(' '), to = text.find_last_not_of(' ');
    const std::string trimmed = from == std::string::npos ? "" : text.substr(from, to - from + 1);
    const std::string unsigned_part = !trimmed.empty() && (trimmed[0] == '+' || trimmed[0] == '-') ? trimmed.substr(1) : trimmed;
    const auto n = integer_text(!trimmed.empty() && trimmed[0] == '+' ? trimmed.substr(1) : trimmed);
    const bool digits = !unsigned_part.empty() && unsigned_part.find_first_not_of("0123456789") == std::string::npos;
    if (!n && !digits) throw Error("22P02", at, "invalid input syntax for type " + shown + ": \"" + text + "\"");
    if (!n || *n < lo || *n > hi) throw Error("22003", at, "value \"" + text + "\" is out of range for type " + shown);
    return Value{*n};
  }
  const Value v = literal(c);  // a number: the cast function, which checks the range
  if (const auto* n = std::get_if<std::int64_t>(&v); n != nullptr && (*n < lo || *n > hi))
    throw Error("22003", at, shown + " out of range");
  return v;
}

// An A_Const holding an integer (a LIMIT, a key): its value, nullopt for any other node.
std::optional<std::int64_t> integer_constant(const Node* n) {
  n = uncast(n);
  if (n == nullptr || n->node_case != PG_QUERY__NODE__NODE_A_CONST || n->a_const->isnull) return std::nullopt;
  const PgQuery__AConst* c = n->a_const;
  if (c->val_case == PG_QUERY__A__CONST__VAL_IVAL) return c->ival->ival;
  if (c->val_case == PG_QUERY__A__CONST__VAL_FVAL) return integer_text(text_of(c->fval->fval));
  return std::nullopt;
}


// --- Settings ------------------------------------------------------------------------------

// 'read committed' and the others, as SET and BEGIN give them (any case, as PostgreSQL reads
// default_transaction_isolation's value).
std::optional<Isolation> isolation_of(std::string level) {
  for (char& c : level) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (level == "read uncommitted") return Isolation::read_uncommitted;
  if (level == "read committed") return Isolation::read_committed;
  if (level == "repeatable read") return Isolation::repeatable_read;
  if (level == "serializable") return Isolation::serializable;
  return std::nullopt;
}

// A time setting's value as PostgreSQL reads it (guc.c's parse_int): a number, then optionally
// a unit (us, ms, s, min, h or d, in that case), spaces allowed around it; without a unit,
// milliseconds, these settings' own unit. Rounded to whole milliseconds; nullopt: unreadable.
std::optional<double> milliseconds_of(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  std::size_t at = 0;
  while (at < text.size() && space(text[at])) ++at;
  double value = 0;
  const auto [end, error] = std::from_chars(text.data() + at, text.data() + text.size(), value);
  if (error != std::errc() || std::isnan(value)) return std::nullopt;
  at = static_cast<std::size_t>(end - text.data());
  while (at < text.size() && space(text[at])) ++at;
  const std::size_t unit_at = at;
  while (at < text.size() && !space(text[at])) ++at;
  const std::string_view unit = text.substr(unit_at, at - unit_at);
  while (at < text.size() && space(text[at])) ++at;
  if (at != text.size()) return std::nullopt;
  static constexpr std::pair<std::string_view, double> kUnits[] = {
      {"", 1}, {"us", 0.001}, {"ms", 1}, {"s", 1000}, {"min", 60000}, {"h", 3600000}, {"d", 86400000}};
  for (const auto& [name, factor] : kUnits)
    if (unit == name) return std::rint(value * factor);
  return std::nullopt;
}

}  // namespace models::db::pg
