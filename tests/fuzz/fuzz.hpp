#pragma once
// What the fuzz test's parts share (fuzz_inputs.cpp, lua_cases.cpp): its generator, a case and
// what cases are made from, and how bytes are shown.

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fuzz {

namespace fs = std::filesystem;
using json = nlohmann::json;

// ---------------------------------------------------------------------------------------------
// The generator. Its own, since the standard distributions differ between libraries and the
// cases must not.

inline std::uint64_t mix64(std::uint64_t z) {  // SplitMix64's finalizer
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

class Rng {
 public:
  Rng(std::uint64_t seed, std::uint64_t stream) : state_(mix64(seed ^ mix64(stream + 0x9e3779b97f4a7c15ull))) {}
  std::uint64_t next() { return mix64(state_ += 0x9e3779b97f4a7c15ull); }
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }
  bool one_in(std::size_t n) { return below(n) == 0; }
  template <class T>
  const T& pick(const std::vector<T>& items) {
    return items[below(items.size())];
  }

 private:
  std::uint64_t state_;
};

// ---------------------------------------------------------------------------------------------
// Cases

/// One invocation of locksim, in a fresh folder holding `files` and `folders`.
struct Case {
  std::string family;  // the mutation family: "extreme number", "--set", ...
  std::string what;    // the mutation, without where it was made: "1e400 as text"
  std::string where;   // where: "/clients/count", "account-bind.json", ...
  std::vector<std::string> args;
  std::map<std::string, std::string> files;
  std::vector<std::string> folders;
  std::string names_file{};  // a mutated file: a rejection names it, unless it names a flag
};

/// A catalogue scenario, the seed of every mutation.
struct Source {
  std::string file_name;  // account-bind.json
  std::string name;       // account-bind: how the catalogue names it
  std::string bytes;
  json doc;
  std::string strategy;  // one the file runs, for `explore --strategy`
};

/// A strategy written in Lua, from the project's strategies/ (the scenario folder's sibling).
struct Script {
  std::string file_name;  // redlock.lua
  std::string bytes;
};

struct Context {
  std::vector<Source> sources;
  std::vector<std::string> strategies;  // every strategy the catalogue names
  std::string token;                    // a replay token that replays
  std::string scenario_dir;
  std::vector<Script> scripts;          // strategies/*.lua, the seeds of the script families
  std::size_t script_scenario = 0;      // of sources: a small account-bind scenario the scripts run in
};

inline std::string hex(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out;
}

// Bytes as a reader can see them: non-printable ones escaped, long ones cut.
inline std::string printable(const std::string& text, std::size_t max = 160) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && out.size() < max; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') out += "\\n";
    else if (c < 0x20 || c >= 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
  }
  if (out.size() >= max && text.size() > max) out += fmt::format("... ({} bytes)", text.size());
  return out;
}

// A shell word for `text`, exactly: bash's $'...' for anything beyond the plain characters.
inline std::string shell_word(const std::string& text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_./=:,+-@%", c) != nullptr;
  });
  if (plain) return text;
  std::string out = "$'";
  for (unsigned char c : text) {
    if (c == '\'' || c == '\\') out += fmt::format("\\{}", static_cast<char>(c));
    else if (c < 0x20 || c >= 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
  }
  return out + "'";
}

// A mutation of a file: what it was, where, and the bytes it made.
struct Mutant {
  std::string what, where, bytes;
};


/// Case `index` of the cases of `seed` (file_cases.cpp): a family drawn by weight, among those
/// whose name holds `only` when it is not empty, then its mutation.
Case make_case(std::uint64_t seed, int index, const Context& ctx, const std::string& only = "");

// The families of strategies written in Lua (lua_cases.cpp).
Case lua_script(Rng& rng, const Source&, const Context& ctx);
Case lua_generated(Rng& rng, const Source&, const Context& ctx);

}  // namespace fuzz
