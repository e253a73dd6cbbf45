#pragma once
// MariaDB's SQL text read into tokens, and the parser's limits and helpers
// (models/db/innodb/sql_parser.hpp). Internal to models/db/innodb.

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

#include "models/db/sql.hpp"

namespace models::db::sql::mariadb {

inline constexpr std::size_t kNearBytes = 30;
// MariaDB's limit on a table's indexes (1069 Too many keys specified).
inline constexpr std::size_t kMostIndexes = 64;
inline constexpr std::size_t kMaxKeyParts = 32;  // MariaDB's MAX_REF_PARTS
inline constexpr const char* kAlter = "ADD [UNIQUE] INDEX name (column, ...) or DROP INDEX name (the ALTER TABLE the model runs)";
inline constexpr const char* kValue = "a value (a number, a 'string' or ?)";

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
// MySQL's unquoted identifiers: letters, digits, _ and $, and any non-ASCII character.
inline bool is_word_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || u >= 0x80;
}

inline bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
           return lower(x) == lower(y);
         });
}

// MySQL's reserved words among those the grammar uses or that begin clauses it refuses:
// unquoted, they are never a table or column name, so `SELECT FROM t` says a column is missing.
inline bool reserved(std::string_view word) {
  static constexpr std::string_view kReserved[] = {
      "ADD",      "ALL",     "ALTER",   "AND",      "AS",       "BETWEEN",  "BIGINT",  "BY",        "CHAR",
      "CHARACTER", "CHECK",  "COLLATE", "CONSTRAINT", "CREATE", "CROSS",    "DEFAULT", "DELETE",    "DESC",
      "DISTINCT", "DROP",    "DUAL",    "EXISTS",   "FOR",      "FOREIGN",  "FROM",    "FULLTEXT",  "GROUP",
      "HAVING",   "IGNORE",  "IN",      "INDEX",    "INNER",    "INSERT",   "INT",     "INTEGER",   "INTO",
      "IS",       "JOIN",    "KEY",     "LEFT",     "LIKE",     "LIMIT",    "LOCK",    "NATURAL",   "NOT",
      "NULL",     "ON",      "OR",      "ORDER",    "PRIMARY",  "REPLACE",  "RIGHT",   "SELECT",    "SET",
      "SMALLINT", "SPATIAL", "TABLE",   "TINYINT",  "UNION",    "UNIQUE",   "UNSIGNED", "UPDATE",   "USING",
      "VALUES",   "VARCHAR", "WHERE"};
  return std::any_of(std::begin(kReserved), std::end(kReserved), [&](std::string_view r) { return iequals(r, word); });
}

// MySQL's "near '...'": the text from the offending token on, cut at a character boundary.
inline std::string near_text(std::string_view text, std::size_t position) {
  if (position >= text.size()) return {};
  std::size_t end = std::min(text.size(), position + kNearBytes);
  while (end > position + 1 && end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(position, end - position));
}

[[noreturn]] inline void refuse(std::string_view text, std::size_t position, std::string expected) {
  throw Error(position, near_text(text, position), std::move(expected));
}

inline std::string count_of(std::size_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

struct Token {
  enum class Kind { end, word, quoted_word, number, string, symbol } kind = Kind::end;
  std::size_t position = 0;
  std::string text{};  // word: as written; quoted_word and string: unquoted; symbol: its characters
  std::int64_t number = 0;
};

// Reads one token at a time, as the parser asks for it, so the first error in the text is
// the one reported.
class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Token next() {
    Token t = read();
    // A `-` right after an operand is subtraction (`v-1`), elsewhere a negative number's sign;
    // whether a word is an operand (not a reserved word) is asked only when a `-` follows.
    operand_before_ = t.kind == Token::Kind::number || t.kind == Token::Kind::string || t.kind == Token::Kind::quoted_word ||
                      (t.kind == Token::Kind::symbol && (t.text == ")" || t.text == "?"));
    last_word_ = t.kind == Token::Kind::word ? text_.substr(t.position, t.text.size()) : std::string_view();
    return t;
  }

 private:
  Token read() {
    while (at_ < text_.size() && is_space(text_[at_])) ++at_;
    Token t{.position = at_};
    if (at_ == text_.size()) return t;
    const char c = text_[at_];
    if (c == '`') return quoted(std::move(t), '`', Token::Kind::quoted_word, "the name's closing `");
    if (c == '\'') return quoted(std::move(t), '\'', Token::Kind::string, "the string's closing '");
    const auto after_operand = [&] { return operand_before_ || (!last_word_.empty() && !reserved(last_word_)); };
    if (is_digit(c) || (c == '-' && at_ + 1 < text_.size() && is_digit(text_[at_ + 1]) && !after_operand()))
      return number(std::move(t));
    if (is_word_char(c)) {
      while (at_ < text_.size() && is_word_char(text_[at_])) ++at_;
      t.kind = Token::Kind::word;
      t.text = std::string(text_.substr(t.position, at_ - t.position));
      return t;
    }
    t.kind = Token::Kind::symbol;
    const std::string_view two = text_.substr(at_, 2);
    const std::size_t length = (two == "<=" || two == ">=" || two == "<>" || two == "!=") ? 2 : 1;
    t.text = std::string(text_.substr(at_, length));
    at_ += length;
    return t;
  }

  [[noreturn]] void fail(std::size_t position, std::string expected) const { refuse(text_, position, std::move(expected)); }

  Token number(Token t) {
    if (text_[at_] == '-') ++at_;
    while (at_ < text_.size() && is_digit(text_[at_])) ++at_;
    if (at_ < text_.size() && text_[at_] == '.') fail(t.position, "an integer (decimals are not modelled)");
    if (at_ < text_.size() && is_word_char(text_[at_])) {  // MySQL: a name may begin with digits
      if (text_[t.position] == '-') fail(t.position, "an integer");
      while (at_ < text_.size() && is_word_char(text_[at_])) ++at_;
      t.kind = Token::Kind::word;
      t.text = std::string(text_.substr(t.position, at_ - t.position));
      return t;
    }
    t.kind = Token::Kind::number;
    t.text = std::string(text_.substr(t.position, at_ - t.position));
    const auto [end, error] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), t.number);
    if (error != std::errc() || end != t.text.data() + t.text.size())
      fail(t.position, "a number from -9223372036854775808 to 9223372036854775807");
    return t;
  }

  // A string ('' and MySQL's backslash escapes) or a backquoted name (`` for a backquote).
  Token quoted(Token t, char quote, Token::Kind kind, const char* closing) {
    t.kind = kind;
    ++at_;
    for (;;) {
      if (at_ >= text_.size()) fail(t.position, closing);
      const char c = text_[at_++];
      if (c == quote) {
        if (at_ < text_.size() && text_[at_] == quote) {
          t.text += quote;
          ++at_;
          continue;
        }
        break;
      }
      if (c == '\\' && kind == Token::Kind::string) {
        if (at_ >= text_.size()) fail(t.position, closing);
        t.text += unescape(text_[at_++]);
        continue;
      }
      t.text += c;
    }
    if (kind == Token::Kind::quoted_word && t.text.empty()) fail(t.position, "a name between the backquotes");
    return t;
  }

  static std::string unescape(char c) {
    switch (c) {
      case '0': return std::string(1, '\0');
      case 'b': return "\b";
      case 'n': return "\n";
      case 'r': return "\r";
      case 't': return "\t";
      case 'Z': return "\x1A";
      case '%': return "\\%";  // kept for LIKE, as MySQL does
      case '_': return "\\_";
      default: return std::string(1, c);
    }
  }

  std::string_view text_;
  std::size_t at_ = 0;
  bool operand_before_ = false;
  std::string_view last_word_{};  // the token before, when a word
};

}  // namespace models::db::sql::mariadb
