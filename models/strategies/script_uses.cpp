#include "models/strategies/script_uses.hpp"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace models::strategies {
namespace {

// A token of Lua's grammar, as far as a script's needs go: a name, one punctuation character, or the
// contents of a string.
struct LuaToken {
  enum class Kind { name, punct, string } kind;
  std::string_view text;
};

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The level of a long bracket opening at `i` (`[[` 0, `[==[` 2), none when there is none there.
std::optional<std::size_t> long_bracket_at(std::string_view text, std::size_t i) {
  if (i >= text.size() || text[i] != '[') return std::nullopt;
  std::size_t j = i + 1;
  while (j < text.size() && text[j] == '=') ++j;
  if (j < text.size() && text[j] == '[') return j - (i + 1);
  return std::nullopt;
}

std::vector<LuaToken> lua_tokens(std::string_view text) {
  std::vector<LuaToken> out;
  std::size_t i = 0;
  // Past the long bracket of `level` opening at i: its contents, and i after its close.
  const auto long_bracket = [&](std::size_t level) {
    const std::size_t begin = i + level + 2;
    const std::string close = "]" + std::string(level, '=') + "]";
    const std::size_t end = text.find(close, begin);
    i = end == std::string_view::npos ? text.size() : end + close.size();
    return text.substr(std::min(begin, text.size()), (end == std::string_view::npos ? text.size() : end) - std::min(begin, text.size()));
  };
  while (i < text.size()) {
    const char c = text[i];
    if (text.compare(i, 2, "--") == 0) {
      i += 2;
      if (const auto level = long_bracket_at(text, i)) {
        long_bracket(*level);
      } else {
        const std::size_t end = text.find('\n', i);
        i = end == std::string_view::npos ? text.size() : end;
      }
    } else if (const auto level = long_bracket_at(text, i)) {
      out.push_back({LuaToken::Kind::string, long_bracket(*level)});
    } else if (c == '"' || c == '\'') {
      const std::size_t begin = ++i;
      while (i < text.size() && text[i] != c && text[i] != '\n') i += text[i] == '\\' ? 2 : 1;
      out.push_back({LuaToken::Kind::string, text.substr(begin, std::min(i, text.size()) - begin)});
      ++i;
    } else if (is_name_start(c)) {
      const std::size_t begin = i;
      while (i < text.size() && is_name_char(text[i])) ++i;
      out.push_back({LuaToken::Kind::name, text.substr(begin, i - begin)});
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      while (i < text.size() && (is_name_char(text[i]) || text[i] == '.')) ++i;  // a number: no need of any
    } else {
      if (!std::isspace(static_cast<unsigned char>(c))) out.push_back({LuaToken::Kind::punct, text.substr(i, 1)});
      ++i;
    }
  }
  return out;
}

// Whether `word` stands in `text` as a whole word (no letter, digit or `_` either side).
bool has_word(std::string_view text, std::string_view word) {
  for (std::size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    const bool starts = at == 0 || !is_name_char(text[at - 1]);
    const bool ends = at + word.size() == text.size() || !is_name_char(text[at + word.size()]);
    if (starts && ends) return true;
  }
  return false;
}

}  // namespace

Uses uses_in(std::string_view text) {
  const std::vector<LuaToken> tokens = lua_tokens(text);
  const auto is = [&](std::size_t i, LuaToken::Kind kind, std::string_view t) {
    return i < tokens.size() && tokens[i].kind == kind && tokens[i].text == t;
  };
  // `table.field` somewhere in the code, for any of the fields.
  const auto field = [&](std::string_view table, std::initializer_list<std::string_view> fields) {
    for (std::size_t i = 0; i + 2 < tokens.size(); ++i)
      if (is(i, LuaToken::Kind::name, table) && is(i + 1, LuaToken::Kind::punct, "."))
        for (const std::string_view f : fields)
          if (is(i + 2, LuaToken::Kind::name, f)) return true;
    return false;
  };
  const auto called = [&](std::string_view name) {
    for (std::size_t i = 0; i + 1 < tokens.size(); ++i)
      if (is(i, LuaToken::Kind::name, name) && is(i + 1, LuaToken::Kind::punct, "(")) return true;
    return false;
  };
  const auto named = [&](std::string_view table_name) {
    return std::any_of(tokens.begin(), tokens.end(), [&](const LuaToken& t) {
      return t.kind == LuaToken::Kind::name ? t.text == table_name : t.kind == LuaToken::Kind::string && has_word(t.text, table_name);
    });
  };
  Uses u;
  u.redlock = field("locks", {"redlock"});
  u.redis = u.redlock || field("locks", {"redis", "redisson"}) || field("redis", {"call", "script"}) || called("hold");
  u.zookeeper = field("locks", {"zookeeper", "zookeeper_state"});
  u.etcd = field("locks", {"etcd"});
  u.consul = field("locks", {"consul"});
  u.remote = field("remote", {"create"});
  u.lock_table = field("locks", {"table"}) || named("t_lock");
  u.fences = named("t_fence");
  return u;
}

}  // namespace models::strategies
