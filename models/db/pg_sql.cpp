// PostgreSQL's SQL for the simulated database: libpg_query (PostgreSQL 15's own parser) gives
// the parse tree as protobuf, protobuf-c reads it into C structs, and the walk below turns
// each construct the model runs into the typed statements models/db runs, as sql.cpp's
// parser does for MariaDB's text. Each mapping is commented where it is made.

#include "models/db/pg_sql.hpp"

#include "models/db/rows.hpp"

#include <pg_query.h>
#include <pg_query.pb-c.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <map>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace models::db::pg {
namespace {

using Node = PgQuery__Node;
using sql::Param;
using sql::Prepared;

constexpr int kMaxHeight = 32;            // levels of an expression's tree, as sql.cpp bounds them
constexpr int kMaxDepth = 64;             // the walk's recursion (a cast or a unary + adds no level)
constexpr std::size_t kMaxNesting = 128;  // operators nested in the text (check_nesting)

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
  for (std::size_t i = 0; i < n; ++i) out += (i == 0 ? "" : ".") + str(names[i]);
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

// --- The text before parsing ---------------------------------------------------------------

// The byte at which character `cursorpos` (1-based, as PostgreSQL counts an error's place) is.
std::size_t byte_of_character(std::string_view text, int cursorpos) {
  std::size_t at = 0;
  for (int i = 1; i < cursorpos && at < text.size(); ++i) at += std::max<std::size_t>(1, sql::utf8_length(text.substr(at)));
  return at;
}

// PostgreSQL reads UTF-8 without NUL bytes: anything else is its 22021.
void check_bytes(std::string_view text) {
  if (text.size() > sql::kMaxText) refuse(sql::kMaxText, "a statement longer than " + std::to_string(sql::kMaxText) + " bytes");
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t n = text[at] == '\0' ? 0 : sql::utf8_length(text.substr(at));
    if (n == 0) {
      static constexpr char kHex[] = "0123456789abcdef";
      const auto c = static_cast<unsigned char>(text[at]);
      throw Error("22021", at, std::string("invalid byte sequence for encoding \"UTF8\": 0x") + kHex[c >> 4] + kHex[c & 15]);
    }
    at += n;
  }
}

// libpg_query writes the parse tree as protobuf, and protobuf-c reads it back, each by
// recursion: a tree thousands of levels deep (64 KiB of `a+a+...`, of `-(` or of `::int`)
// overflows the stack, which is 1 MiB for a script's process. So before parsing, the tokens
// bound how deep the tree can be: in each parenthesis (or bracket) and each item of a list
// in it, every token but a name, a literal or a `.` may add a level, and AND and OR chains
// are one node with their terms below it (BETWEEN's AND is its own). That bounds the depth
// from above; the model runs no expression more than 32 levels deep, so a text past
// kMaxNesting is far past any statement it runs.
void check_nesting(const std::string& text) {
  const PgQueryScanResult scan = pg_query_scan(text.c_str());
  std::unique_ptr<PgQuery__ScanResult, void (*)(PgQuery__ScanResult*)> tokens(
      scan.error == nullptr ? pg_query__scan_result__unpack(nullptr, scan.pbuf.len, reinterpret_cast<const std::uint8_t*>(scan.pbuf.data))
                            : nullptr,
      [](PgQuery__ScanResult* r) {
        if (r != nullptr) pg_query__scan_result__free_unpacked(r, nullptr);
      });
  pg_query_free_scan_result(scan);
  if (!tokens) return;  // the parser reports what the scanner could not read
  struct Level {
    std::size_t run = 0;       // tokens that may nest, in the current item
    std::size_t inner = 0;     // the deepest group closed in the current item
    std::size_t deepest = 0;   // the deepest item closed so far
    std::size_t betweens = 0;  // BETWEENs waiting for their AND
  };
  std::vector<Level> levels(1);
  std::size_t set_operations = 0;  // UNION chains nest across list items
  for (std::size_t i = 0; i < tokens->n_tokens; ++i) {
    const PgQuery__ScanToken* t = tokens->tokens[i];
    Level& level = levels.back();
    const auto end_item = [&] {
      level.deepest = std::max(level.deepest, level.run + level.inner);
      level.run = level.inner = 0;
    };
    switch (t->token) {
      case PG_QUERY__TOKEN__IDENT: case PG_QUERY__TOKEN__UIDENT: case PG_QUERY__TOKEN__FCONST: case PG_QUERY__TOKEN__SCONST:
      case PG_QUERY__TOKEN__USCONST: case PG_QUERY__TOKEN__BCONST: case PG_QUERY__TOKEN__XCONST: case PG_QUERY__TOKEN__ICONST:
      case PG_QUERY__TOKEN__PARAM: case PG_QUERY__TOKEN__ASCII_46: case PG_QUERY__TOKEN__SQL_COMMENT: case PG_QUERY__TOKEN__C_COMMENT:
        break;
      case PG_QUERY__TOKEN__ASCII_40: case PG_QUERY__TOKEN__ASCII_91:  // ( [
        levels.emplace_back();
        break;
      case PG_QUERY__TOKEN__ASCII_41: case PG_QUERY__TOKEN__ASCII_93: {  // ) ]
        if (levels.size() == 1) break;  // unbalanced: the parser says so
        end_item();
        const std::size_t depth = level.deepest + 1;
        levels.pop_back();
        levels.back().inner = std::max(levels.back().inner, depth);
        break;
      }
      case PG_QUERY__TOKEN__ASCII_44: case PG_QUERY__TOKEN__ASCII_59: case PG_QUERY__TOKEN__OR:  // , ;
        end_item();
        break;
      case PG_QUERY__TOKEN__AND:
        if (level.betweens == 0) {
          end_item();
        } else {
          --level.betweens;
          ++level.run;
        }
        break;
      case PG_QUERY__TOKEN__BETWEEN:
        ++level.betweens;
        ++level.run;
        break;
      case PG_QUERY__TOKEN__UNION: case PG_QUERY__TOKEN__INTERSECT: case PG_QUERY__TOKEN__EXCEPT:
        ++set_operations;
        ++level.run;
        break;
      default:
        ++level.run;
        break;
    }
    const Level& now = levels.back();
    if (levels.size() > kMaxNesting || now.run + now.inner > kMaxNesting || set_operations > kMaxNesting)
      refuse(position(t->start), "an expression with more than " + std::to_string(kMaxNesting) + " nested operators");
  }
}

// One statement's parse tree, freed with it.
class ParseTree {
 public:
  explicit ParseTree(const std::string& text) : result_(pg_query_parse_protobuf(text.c_str())) {
    if (result_.error == nullptr)
      tree_ = pg_query__parse_result__unpack(nullptr, result_.parse_tree.len,
                                             reinterpret_cast<const std::uint8_t*>(result_.parse_tree.data));
  }
  ~ParseTree() {
    if (tree_ != nullptr) protobuf_c_message_free_unpacked(&tree_->base, nullptr);
    pg_query_free_protobuf_parse_result(result_);
  }
  ParseTree(const ParseTree&) = delete;
  ParseTree& operator=(const ParseTree&) = delete;
  const PgQueryError* error() const { return result_.error; }
  const PgQuery__ParseResult* tree() const { return tree_; }

 private:
  PgQueryProtobufParseResult result_;
  PgQuery__ParseResult* tree_ = nullptr;
};

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

// --- Statements ----------------------------------------------------------------------------

// What a column reference may name where it is: `excluded.c` in ON CONFLICT DO UPDATE; no
// column nor parameter in a VALUES row's computed value (it is computed here, once).
struct Context {
  bool excluded = false;
  bool constant = false;
  bool having = false;  // HAVING: the aggregate reads as a column of a group's row
  bool indexed = false;  // an index's WHERE, or ON CONFLICT's inference WHERE: columns, no parameter
  bool no_row = false;   // a SELECT without FROM: a column does not exist, a parameter may be there
};

// The advisory-lock functions PostgreSQL 15 has with one bigint key (and unlock_all, with none).
struct AdvisoryFunction {
  std::string_view name;
  Advisory advisory;
};
constexpr AdvisoryFunction kAdvisoryFunctions[] = {
    {"pg_advisory_lock", {Advisory::Op::lock, false, false}},
    {"pg_advisory_lock_shared", {Advisory::Op::lock, false, true}},
    {"pg_advisory_xact_lock", {Advisory::Op::lock, true, false}},
    {"pg_advisory_xact_lock_shared", {Advisory::Op::lock, true, true}},
    {"pg_try_advisory_lock", {Advisory::Op::try_lock, false, false}},
    {"pg_try_advisory_lock_shared", {Advisory::Op::try_lock, false, true}},
    {"pg_try_advisory_xact_lock", {Advisory::Op::try_lock, true, false}},
    {"pg_try_advisory_xact_lock_shared", {Advisory::Op::try_lock, true, true}},
    {"pg_advisory_unlock", {Advisory::Op::unlock, false, false}},
    {"pg_advisory_unlock_shared", {Advisory::Op::unlock, false, true}},
    {"pg_advisory_unlock_all", {Advisory::Op::unlock_all, false, false}},
};

// The column types a table may have: integers (and timestamps, integers in the model) default
// to 0, text to ''; boolean is an integer 0 or 1; serial is id's.
enum class Type { integer, serial, text, boolean, timestamp };

class Converter {
 public:
  explicit Converter(std::string_view text) { out_.text = std::string(text); }

  Prepared convert(const Node* stmt, std::size_t at) {
    switch (stmt->node_case) {
      case PG_QUERY__NODE__NODE_SELECT_STMT: select(stmt->select_stmt, at); break;
      case PG_QUERY__NODE__NODE_INSERT_STMT: insert(stmt->insert_stmt); break;
      case PG_QUERY__NODE__NODE_UPDATE_STMT: update(stmt->update_stmt); break;
      case PG_QUERY__NODE__NODE_DELETE_STMT: remove(stmt->delete_stmt); break;
      case PG_QUERY__NODE__NODE_TRANSACTION_STMT: transaction(stmt->transaction_stmt); break;
      case PG_QUERY__NODE__NODE_VARIABLE_SET_STMT: set(stmt->variable_set_stmt); break;
      case PG_QUERY__NODE__NODE_CREATE_STMT: create_table(stmt->create_stmt); break;
      case PG_QUERY__NODE__NODE_INDEX_STMT: create_index(stmt->index_stmt); break;
      default: refuse(at, construct_name(stmt));
    }
    // `$n` are bound in their numbers' order: each number up to the highest must be used
    // (PostgreSQL cannot type a parameter that appears nowhere).
    for (std::size_t i = 0; i < placed_.size(); ++i)
      if (!placed_[i]) throw Error("42P18", 0, "could not determine data type of parameter $" + std::to_string(i + 1));
    if (!out_.create) out_.statement.written = std::make_shared<const sql::Written>(sql::Written{out_.text, out_.params, true});
    return std::move(out_);
  }

 private:
  Statement& s() { return out_.statement; }

  // --- Parameters --------------------------------------------------------------------------

  // `$n` goes where `param` says, in Prepared::params[n - 1]. A number used twice is refused:
  // one `$n` has one place to be bound to.
  void place(const PgQuery__ParamRef* ref, Param param) {
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
  void relation(const PgQuery__RangeVar* r) {
    const std::size_t at = position(r->location);
    if (!empty(r->schemaname) || !empty(r->catalogname)) refuse(at, "a table qualified by its schema");
    if (r->alias != nullptr && r->alias->n_colnames > 0) refuse(at, "column aliases for a table");
    table_ = text_of(r->relname);
    alias_ = r->alias != nullptr ? text_of(r->alias->aliasname) : std::string();
    s().table = table_;
  }

  // `c`, `t.c` (t the table, or its alias where it has one) or, where the context allows it,
  // `excluded.c`: the column, and whether it is EXCLUDED's (the row the INSERT proposed).
  std::pair<std::string, bool> column_ref(const PgQuery__ColumnRef* ref, const Context& context) {
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

  void check_qualifier(const std::string& qualifier, std::size_t at) const {
    if (qualifier != (alias_.empty() ? table_ : alias_))
      throw Error("42P01", at, "missing FROM-clause entry for table \"" + qualifier + "\"");
  }

  static bool is_star(const Node* n) {
    return n != nullptr && n->node_case == PG_QUERY__NODE__NODE_COLUMN_REF && n->column_ref->n_fields > 0 &&
           n->column_ref->fields[n->column_ref->n_fields - 1]->node_case == PG_QUERY__NODE__NODE_A_STAR;
  }

  // `*` or `t.*`.
  void star(const PgQuery__ColumnRef* ref) {
    if (ref->n_fields > 2) refuse(position(ref->location), "a column qualified by its schema");
    if (ref->n_fields == 2) check_qualifier(str(ref->fields[0]), position(ref->location));
  }

  // --- Expressions -------------------------------------------------------------------------
  //
  // The tree maps onto models/db/expr.hpp node for node, as sql.cpp's parser builds it:
  // comparisons and arithmetic are binary nodes, an AND or OR chain one node with its terms,
  // IN, BETWEEN, LIKE and IS [NOT] NULL nodes with `negated` for their NOT forms.

  Expr expr(const Node* n, const Context& context) {
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

  using ClockRead = StatementExtra::ClockRead;

  // Which reading a source gives, or nullopt for a node that is no clock.
  static std::optional<ClockRead> clock_source(const Node* n) {
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
  static std::optional<ClockRead> epoch_read(const PgQuery__TypeCast* cast) {
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
  Expr clock_expr(ClockRead read, std::size_t at, const Context& context) {
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
  Expr param_expr(const PgQuery__ParamRef* ref, const Context& context) {
    if (context.constant) refuse(position(ref->location), "a parameter inside a computed value");
    if (context.indexed) refuse(position(ref->location), "a parameter in an index's WHERE");
    const std::size_t slot = s().more().args.size();
    place(ref, Param{.in = Param::In::args, .arg = slot});
    s().edit().args.emplace_back(std::int64_t{0});  // a placeholder until bind()
    return Expr{.kind = Expr::Kind::param, .param = slot};
  }

  static std::string operator_of(const PgQuery__AExpr* a) {
    if (a->n_name != 1) refuse(position(a->location), "OPERATOR(" + dotted(a->name, a->n_name) + ")");
    return str(a->name[0]);
  }

  static std::optional<Expr::Op> comparison(std::string_view op) {
    using Op = Expr::Op;
    static constexpr std::pair<std::string_view, Op> kOps[] = {{"=", Op::eq}, {"<>", Op::ne}, {"<", Op::lt},
                                                               {"<=", Op::le}, {">", Op::gt}, {">=", Op::ge}};
    for (const auto& [symbol, value] : kOps)
      if (op == symbol) return value;
    return std::nullopt;
  }

  Expr a_expr(const PgQuery__AExpr* a, const Context& context) {
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
  Expr operation(const PgQuery__AExpr* a, const std::string& op, const Context& context) {
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
  Expr bool_expr(const PgQuery__BoolExpr* b, const Context& context) {
    const std::size_t at = position(b->location);
    if (b->boolop == PG_QUERY__BOOL_EXPR_TYPE__NOT_EXPR) return unary(Expr::Kind::logical_not, expr(b->args[0], context), at);
    Expr e{.kind = b->boolop == PG_QUERY__BOOL_EXPR_TYPE__AND_EXPR ? Expr::Kind::logical_and : Expr::Kind::logical_or};
    for (std::size_t i = 0; i < b->n_args; ++i) {
      if (e.args.size() >= sql::kMaxItems) too_many(at, "conditions");
      e.args.push_back(expr(b->args[i], context));
    }
    return grown(std::move(e), at);
  }

  static Expr unary(Expr::Kind kind, Expr operand, std::size_t at) {
    Expr e{.kind = kind};
    e.args.push_back(std::move(operand));
    return grown(std::move(e), at);
  }
  static Expr binary(Expr::Kind kind, Expr::Op op, Expr a, Expr b, std::size_t at) {
    Expr e{.kind = kind, .op = op};
    e.args.push_back(std::move(a));
    e.args.push_back(std::move(b));
    return grown(std::move(e), at);
  }
  // A node with its operands: its height, bounded as sql.cpp bounds it.
  static Expr grown(Expr e, std::size_t at) {
    for (const Expr& a : e.args) e.height = std::max(e.height, a.height + 1);
    if (e.height > kMaxHeight) too_deep(at);
    return e;
  }

  // Bounds the walk's recursion (casts and unary + nest without adding to the height).
  struct Depth {
    Depth(Converter& c, const Node* n) : converter(c) {
      if (++converter.depth_ > kMaxDepth) too_deep(location_of(n));
    }
    ~Depth() { --converter.depth_; }
    Depth(const Depth&) = delete;
    Depth& operator=(const Depth&) = delete;
    Converter& converter;
  };

  // --- WHERE -------------------------------------------------------------------------------

  // WHERE's expression, split at its top-level ANDs: each `column op value` term (a literal
  // or a `$n`; `value op column` turned round) goes to Statement::where, where the model finds
  // index paths; every other term to StatementExtra::filter, as sql.cpp splits MySQL's.
  void where(const Node* w) {
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

  static bool is_value(const Node* n) {
    return (n->node_case == PG_QUERY__NODE__NODE_A_CONST && !n->a_const->isnull) || n->node_case == PG_QUERY__NODE__NODE_PARAM_REF;
  }
  static bool is_column(const Node* n) { return n->node_case == PG_QUERY__NODE__NODE_COLUMN_REF && !is_star(n); }

  // A `column op value` term as a Condition; false for any other term.
  bool condition(const Node* term) {
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

  // --- SELECT ------------------------------------------------------------------------------

  void select(const PgQuery__SelectStmt* sel, std::size_t at) {
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
  void group_by(const PgQuery__SelectStmt* sel) {
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
  void check_grouping() {
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

  // The SELECT's one aggregate, named `alias` (empty: as PostgreSQL names it): the first place
  // that names it (the select list, HAVING or ORDER BY) sets it; another aggregate is refused.
  void use_aggregate(const std::pair<StatementExtra::Aggregate, std::string>& aggregate, std::size_t at, const std::string& alias = {}) {
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
  std::optional<Expr> aggregate_operand(const Node* n) {
    if (n->node_case != PG_QUERY__NODE__NODE_FUNC_CALL) return std::nullopt;
    const auto aggregate = aggregate_of(n->func_call);
    if (!aggregate) return std::nullopt;
    use_aggregate(*aggregate, location_of(n));
    return Expr{.kind = Expr::Kind::column, .column = models::db::detail::aggregate_name(s().more(), Engine::postgresql)};
  }

  // SELECT DISTINCT cols: GROUP BY those columns without an aggregate, a row for each
  // combination of their values found (NULLs one). With an aggregate alone it changes nothing
  // (one row); DISTINCT * and DISTINCT with GROUP BY are refused.
  void distinct_columns(const PgQuery__SelectStmt* sel, std::size_t at) {
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
  void computed_select(const PgQuery__SelectStmt* sel, std::size_t at) {
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
  void computed_column(const PgQuery__ResTarget* target, const Context& context) {
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
  static std::string figured_name(const Node* n) {
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

  static void refuse_select_clauses(const PgQuery__SelectStmt* sel, std::size_t at) {
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
  bool advisory(const PgQuery__SelectStmt* sel) {
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
  Value advisory_key(const Node* arg) {
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
  void select_list(const PgQuery__SelectStmt* sel) {
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

  // count(*), count(1): every row; count(col), max(col), min(col), sum(col): the column's
  // non-NULL values. nullopt: another function, or one of these the model does not run
  // (DISTINCT, FILTER, OVER, ORDER BY inside).
  std::optional<std::pair<StatementExtra::Aggregate, std::string>> aggregate_of(const PgQuery__FuncCall* f) {
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

  // ORDER BY col [ASC | DESC], ...: NULLs last, first with DESC, as PostgreSQL sorts them by
  // default; NULLS FIRST or LAST the other way round is refused.
  void order_by(Node* const* sorts, std::size_t n) {
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
  static std::optional<std::int64_t> row_count(const Node* n, const char* clause, const char* negative_state) {
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
  void locking(const PgQuery__SelectStmt* sel) {
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

  // --- INSERT ------------------------------------------------------------------------------

  // INSERT INTO t (cols) VALUES (...), ...: the first row in Statement::values, the others in
  // StatementExtra::more_rows; ON CONFLICT and RETURNING after them.
  void insert(const PgQuery__InsertStmt* ins) {
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

  std::vector<std::string> insert_columns(const PgQuery__InsertStmt* ins) {
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
  void values_row(const Node* list, const std::vector<std::string>& columns, std::size_t row, std::size_t last_column_at) {
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
  Value stored_value(const Node* n) {
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
  void on_conflict(const PgQuery__OnConflictClause* c) {
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
  void returning(Node* const* targets, std::size_t n) {
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

  struct Assignment {
    std::string column;
    const Node* value;
  };

  // SET c = expr, ...: each column once.
  static std::vector<Assignment> assignments(Node* const* targets, std::size_t n) {
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
  void update(const PgQuery__UpdateStmt* up) {
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

  void remove(const PgQuery__DeleteStmt* del) {
    s().kind = Statement::Kind::remove;
    if (del->with_clause != nullptr) refuse(position(del->with_clause->location), "WITH");
    if (del->n_using_clause > 0) refuse(location_of(del->using_clause[0]), "DELETE ... USING");
    relation(del->relation);
    where(del->where_clause);
    returning(del->returning_list, del->n_returning_list);
  }

  // --- Transactions and settings -----------------------------------------------------------

  // BEGIN | START TRANSACTION [ISOLATION LEVEL x]: the level, and next_transaction_only as
  // the mark that the BEGIN names it; COMMIT | END; ROLLBACK | ABORT.
  void transaction(const PgQuery__TransactionStmt* t) {
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
  void savepoint(const PgQuery__TransactionStmt* t, Savepoint::Op op) {
    if (empty(t->savepoint_name)) refuse(0, "a savepoint statement without a name");
    s().kind = Statement::Kind::savepoint;
    s().savepoint = Savepoint{op, text_of(t->savepoint_name)};
  }

  // A transaction's modes (BEGIN's, SET TRANSACTION's): the isolation level if one is named.
  // READ WRITE and NOT DEFERRABLE, the defaults, are taken; READ ONLY and DEFERRABLE refused.
  static std::optional<Isolation> transaction_modes(Node* const* options, std::size_t n) {
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
  void set(const PgQuery__VariableSetStmt* v) {
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
  static std::int64_t timeout(const std::string& name, const PgQuery__AConst* value, std::size_t at) {
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

  // --- CREATE TABLE and CREATE INDEX -------------------------------------------------------

  // CREATE TABLE t (...): the model's table (models/db/database.hpp) has the integer primary
  // key `id` (SERIAL, BIGSERIAL, SMALLSERIAL or GENERATED ... AS IDENTITY: auto_increment;
  // a plain integer: not), at most one UNIQUE column (key_column, its index named as
  // PostgreSQL names it, "<table>_<col>_key", or by its CONSTRAINT), and other columns with
  // their defaults.
  void create_table(const PgQuery__CreateStmt* c) {
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
    table_def_ = TableDef{};
    table_def_.schema = TableSchema{.name = table_, .key_index = KeyIndex::none};
    for (std::size_t i = 0; i < c->n_table_elts; ++i) {
      const Node* element = c->table_elts[i];
      if (element->node_case == PG_QUERY__NODE__NODE_COLUMN_DEF) column_def(element->column_def);
      else if (element->node_case == PG_QUERY__NODE__NODE_CONSTRAINT) table_constraint(element->constraint);
      else refuse(location_of(element), construct_name(element));
    }
    finish_table(at);
  }

  struct UniqueDef {
    std::string column, name;
    std::size_t at = 0;
  };
  struct TableDef {
    TableSchema schema{.name = ""};
    std::vector<std::pair<std::string, Value>> columns{};  // as listed, id included
    std::vector<std::string> nullable{};                    // the columns without NOT NULL
    std::vector<std::string> null_by_default{};             // those whose default is NULL
    std::optional<UniqueDef> unique{};
    std::vector<std::pair<IndexDef, std::size_t>> more_unique{};  // UNIQUE (a, b), a second UNIQUE: where each is
    std::optional<std::size_t> primary{};  // where PRIMARY KEY (id) is
    bool has_id = false;
    std::optional<std::string> natural_key{};  // the primary key's column, where it is not id
    std::vector<std::string> with_default{};   // the columns that give a DEFAULT
    std::map<std::string, ColumnType> types{};  // the columns of a bounded type (TableSchema::types)
  };

  void add_primary(std::size_t at) {
    if (table_def_.primary) throw Error("42P16", at, "multiple primary keys for table \"" + table_ + "\" are not allowed");
    table_def_.primary = at;
  }
  // UNIQUE on one column or several: the first on one column is the table's key column, the
  // others its further unique indexes (TableSchema::indexes), named as PostgreSQL names a
  // constraint, "<table>_<col>[_<col>...]_key", where the statement does not name them.
  void add_unique(const PgQuery__Constraint* constraint, const std::vector<std::string>& columns, std::size_t at) {
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
  void column_def(const PgQuery__ColumnDef* column) {
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
  void table_constraint(const PgQuery__Constraint* constraint) {
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

  static std::string constraint_name(const PgQuery__Constraint* constraint) {
    switch (constraint->contype) {
      case PG_QUERY__CONSTR_TYPE__CONSTR_CHECK: return "a CHECK constraint";
      case PG_QUERY__CONSTR_TYPE__CONSTR_FOREIGN: return "a foreign key";
      case PG_QUERY__CONSTR_TYPE__CONSTR_GENERATED: return "a generated column";
      case PG_QUERY__CONSTR_TYPE__CONSTR_EXCLUSION: return "an exclusion constraint";
      case PG_QUERY__CONSTR_TYPE__CONSTR_IDENTITY: return "an identity column other than id";
      default: return "DEFERRABLE or INITIALLY";
    }
  }

  void finish_table(std::size_t at) {
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
    out_.create = std::move(schema);
  }

  // The column's type as the model has it: PostgreSQL's integer types, its serials, text,
  // varchar(n) and char(n), boolean, timestamp [with time zone].
  static Type column_type(const PgQuery__TypeName* type, std::size_t at) {
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
  static std::optional<ColumnType> column_limits(const PgQuery__TypeName* type) {
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
  static Value column_default(const Node* e, Type type, std::size_t at) {
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
  void create_index(const PgQuery__IndexStmt* ix) {
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

  Prepared out_{};
  std::vector<bool> placed_{};  // which `$n` have their place
  std::string table_{}, alias_{};
  TableDef table_def_{};
  int depth_ = 0;
  std::vector<std::pair<std::size_t, std::string>> listed_{};  // the select list's columns and where each is
  bool distinct_ = false;  // SELECT DISTINCT: ORDER BY names listed columns; no locking clause
  std::size_t computed_at_ = 0;  // where the select list's first computed column is
};

}  // namespace

Error::Error(std::string sqlstate, std::size_t position, std::string message)
    : std::runtime_error(sqlstate + " " + sql::escaped(message) + " at position " + std::to_string(position)),
      sqlstate_(std::move(sqlstate)),
      position_(position),
      message_(std::move(message)) {}

sql::Prepared prepare(std::string_view text) {
  check_bytes(text);
  const std::string owned(text);
  check_nesting(owned);
  const ParseTree parsed(owned);
  // PostgreSQL's own syntax errors: its message, at the character it points to.
  if (const PgQueryError* error = parsed.error())
    throw Error("42601", byte_of_character(text, error->cursorpos), text_of(error->message));
  const PgQuery__ParseResult* tree = parsed.tree();
  if (tree == nullptr) throw Error("XX000", 0, "libpg_query's parse tree could not be read");
  if (tree->n_stmts == 0) refuse(0, "an empty statement");
  if (tree->n_stmts > 1) refuse(position(tree->stmts[1]->stmt_location), "more than one statement");
  return Converter(text).convert(tree->stmts[0]->stmt, position(tree->stmts[0]->stmt_location));
}

}  // namespace models::db::pg
