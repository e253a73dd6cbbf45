// PostgreSQL's SQL for the simulated database: libpg_query (PostgreSQL 15's own parser) gives
// the parse tree as protobuf, protobuf-c reads it into C structs, and the walk below turns
// each construct the model runs into the typed statements models/db runs, as sql.cpp's
// parser does for MariaDB's text. Each mapping is commented where it is made.
// The converter's members are split by the kind of statement they read
// (models/db/postgres/sql_converter.hpp); this file reads the text before parsing, parses it
// and hands the tree to the converter.

#include "models/db/postgres/sql.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "models/db/postgres/sql_converter.hpp"

namespace models::db::pg {
namespace {

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

}  // namespace

Converter::Converter(std::string_view text) { out_.text = std::string(text); }

Prepared Converter::convert(const Node* stmt, std::size_t at) {
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
  return sql::pinned_while_loading(Converter(text).convert(tree->stmts[0]->stmt, position(tree->stmts[0]->stmt_location)));
}

}  // namespace models::db::pg
