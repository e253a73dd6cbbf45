#include "models/db/sql.hpp"

#include "models/db/rows.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>

namespace models::db::sql {

// The length of the valid UTF-8 sequence at the start of `s`, 0 for none (an invalid byte).
std::size_t utf8_length(std::string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto continuation = [&](std::size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return continuation(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!continuation(1) || !continuation(2)) return 0;
    if ((c == 0xE0 && b(1) < 0xA0) || (c == 0xED && b(1) > 0x9F)) return 0;  // overlong, surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!continuation(1) || !continuation(2) || !continuation(3)) return 0;
    if ((c == 0xF0 && b(1) < 0x90) || (c == 0xF4 && b(1) > 0x8F)) return 0;
    return 4;
  }
  return 0;
}

// `text` for a one-line message: control characters and bytes that are not UTF-8 as \xNN.
std::string escaped(std::string_view text) {
  std::string out;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t n = utf8_length(text.substr(at));
    const auto c = static_cast<unsigned char>(text[at]);
    if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7F))) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
      ++at;
    } else {
      out.append(text.substr(at, n));
      at += n;
    }
  }
  return out;
}

Error::Error(std::size_t position, std::string near, std::string expected)
    : std::runtime_error("1064 You have an error in your SQL syntax near '" + escaped(near) + "' " +
                         (near.empty() ? std::string("at the end") : "at position " + std::to_string(position)) +
                         ": expected " + expected),
      position_(position),
      near_(std::move(near)),
      expected_(std::move(expected)) {}

const char* Error::supported() {
  return "SELECT, INSERT, REPLACE, UPDATE, DELETE, BEGIN, START TRANSACTION, COMMIT, ROLLBACK, SET [SESSION] TRANSACTION, "
         "SET innodb_lock_wait_timeout, CREATE TABLE, ALTER TABLE ... ADD|DROP INDEX";
}

Statement bind(const Prepared& prepared, const std::vector<Value>& args) {
  if (prepared.create)
    throw sim::UsageError("models::db::sql: " + prepared.text +
                          " defines a table: give Prepared::create to Server::create_table instead");
  if (args.size() != prepared.params.size())
    throw sim::UsageError("models::db::sql: " + prepared.text + " takes " + std::to_string(prepared.params.size()) +
                          " parameters, got " + std::to_string(args.size()));
  Statement s = prepared.statement;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Param& p = prepared.params[i];
    switch (p.in) {
      case Param::In::where: s.where[p.where_index].value = args[i]; break;
      case Param::In::values: (p.row == 0 ? s.values : s.edit().more_rows[p.row - 1])[p.column] = args[i]; break;
      case Param::In::on_update: s.on_update[p.column] = args[i]; break;
      case Param::In::args: s.edit().args[p.arg] = args[i]; break;
    }
  }
  for (const std::string& column : prepared.from_values) s.on_update[column] = s.values.at(column);
  return s;
}

namespace {
// `p` kept in `keeper`, and shared from now on without a count.
template <class T>
void pin(std::shared_ptr<T>& p, Pins& keeper) {
  if (!p || p.use_count() == 0) return;  // none, or pinned already
  keeper.push_back(p);
  p = std::shared_ptr<T>(std::shared_ptr<T>(), p.get());
}

thread_local Pins* loading_pins = nullptr;
}  // namespace

PinWhileLoading::PinWhileLoading(Pins& keeper) : outer_(std::exchange(loading_pins, &keeper)) {}
PinWhileLoading::~PinWhileLoading() { loading_pins = outer_; }

Prepared pinned_while_loading(Prepared prepared) {
  return loading_pins != nullptr ? pinned(std::move(prepared), loading_pins) : prepared;
}

Prepared pinned(Prepared prepared, Pins* keeper) {
  static std::mutex forever_mutex;
  static Pins* const forever = new Pins;  // a constant's: never released
  std::unique_lock<std::mutex> lock(forever_mutex, std::defer_lock);
  if (keeper == nullptr) {
    lock.lock();
    keeper = forever;
  }
  Statement& s = prepared.statement;
  if (s.extra) {
    // Pinned, shared by every binding, never written: edit() copies it first.
    StatementExtra& extra = *s.extra;
    pin(extra.conflict_where, *keeper);
    pin(extra.conflict_index_where, *keeper);
    if (extra.index_def && extra.index_def.use_count() != 0) {
      auto def = std::make_shared<IndexDef>(*extra.index_def);
      pin(def->where, *keeper);
      extra.index_def = def;
      pin(extra.index_def, *keeper);
    }
    pin(extra.having, *keeper);
  }
  pin(s.extra, *keeper);
  pin(s.written, *keeper);
  if (prepared.create)
    for (IndexDef& index : prepared.create->indexes) pin(index.where, *keeper);
  return prepared;
}

std::string as_written(const Statement& statement, Engine engine) {
  if (!statement.written) return to_string(statement, engine);  // built in code: in the server's dialect
  const Written& w = *statement.written;
  // The value bound to the `?` numbered `n`, where bind() put it.
  const auto bound = [&](std::size_t n) -> std::string {
    if (n >= w.params.size()) return "?";
    const Param& p = w.params[n];
    const Value* v = nullptr;
    switch (p.in) {
      case Param::In::where:
        if (p.where_index < statement.where.size()) v = &statement.where[p.where_index].value;
        break;
      case Param::In::values: {
        const Values* row = p.row == 0 ? &statement.values
                            : p.row - 1 < statement.more().more_rows.size() ? &statement.more().more_rows[p.row - 1]
                                                                            : nullptr;
        if (row != nullptr)
          if (const auto it = row->find(p.column); it != row->end()) v = &it->second;
        break;
      }
      case Param::In::on_update:
        if (const auto it = statement.on_update.find(p.column); it != statement.on_update.end()) v = &it->second;
        break;
      case Param::In::args:
        if (p.arg < statement.more().args.size()) v = &statement.more().args[p.arg];
        break;
    }
    return v == nullptr ? "?" : to_string(*v);
  };
  std::string out;
  std::size_t n = 0;
  char quote = 0;  // inside a quoted string or name: its quote
  // PostgreSQL's strings take a backslash as a character, except in its E'...' strings.
  bool backslash_escapes = !w.numbered;
  const auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; };
  for (std::size_t i = 0; i < w.text.size(); ++i) {
    const char c = w.text[i];
    if (quote != 0) {
      out += c;
      if (c == '\\' && quote == '\'' && backslash_escapes && i + 1 < w.text.size()) out += w.text[++i];
      else if (c == quote) quote = 0;
    } else if (c == '\'' || c == '`' || c == '"') {
      if (w.numbered)
        backslash_escapes = c == '\'' && i > 0 && (w.text[i - 1] == 'E' || w.text[i - 1] == 'e') && (i == 1 || !word_char(w.text[i - 2]));
      out += c;
      quote = c;
    } else if (c == '?' && !w.numbered) {
      out += bound(n++);
    } else if (c == '$' && w.numbered && i + 1 < w.text.size() && std::isdigit(static_cast<unsigned char>(w.text[i + 1])) &&
               (i == 0 || !word_char(w.text[i - 1]))) {
      std::size_t number = 0;  // `$n`: params[n - 1]
      std::size_t end = i + 1;
      while (end < w.text.size() && std::isdigit(static_cast<unsigned char>(w.text[end])) && number <= kMaxItems)
        number = number * 10 + static_cast<std::size_t>(w.text[end++] - '0');
      if (number == 0 || number > kMaxItems) out.append(w.text, i, end - i);
      else out += bound(number - 1);
      i = end - 1;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == ';')) out.pop_back();
  return out;
}

}  // namespace models::db::sql
