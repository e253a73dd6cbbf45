#pragma once
// Reading libpg_query's parse tree (PostgreSQL 15's parser, as protobuf read by protobuf-c into
// C structs) for the converter of models/db/postgres/sql_converter.hpp: where a node is, its
// name as a reader of the SQL would give it, its literals and settings, and the errors a
// statement the model does not run ends with. Internal to models/db/postgres.

#include <pg_query.h>
#include <pg_query.pb-c.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "models/db/postgres/sql.hpp"

namespace models::db::pg {

using Node = PgQuery__Node;

inline constexpr int kMaxHeight = 32;            // levels of an expression's tree, as sql.cpp bounds them
inline constexpr int kMaxDepth = 64;             // the walk's recursion (a cast or a unary + adds no level)
inline constexpr std::size_t kMaxNesting = 128;  // operators nested in the text (check_nesting)

std::size_t position(std::int32_t location);
[[noreturn]] void refuse(std::size_t at, const std::string& construct);
[[noreturn]] void too_deep(std::size_t at);
[[noreturn]] void too_many(std::size_t at, const char* what);
bool empty(const char* s);
std::string text_of(const char* s);
std::string str(const Node* n);
std::string dotted(Node* const* names, std::size_t n);
std::string catalog_name(Node* const* names, std::size_t n);
std::size_t location_of(const Node* n);
std::size_t location_of(const Node* n, std::size_t fallback);
std::string construct_name(const Node* n);
const Node* uncast(const Node* n);
std::pair<Node* const*, std::size_t> items_of(const Node* n);
std::optional<std::int64_t> integer_text(std::string_view s);
Value literal(const PgQuery__AConst* c);
std::optional<Value> folded_cast(const PgQuery__TypeCast* cast);
std::optional<std::int64_t> integer_constant(const Node* n);
std::optional<Isolation> isolation_of(std::string level);
std::optional<double> milliseconds_of(std::string_view text);

}  // namespace models::db::pg
