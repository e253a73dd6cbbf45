#include "models/lua/sandbox.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>

#include "sim/arena.hpp"

namespace models::lua {

char fatal_sentinel;
extern const char* const kPrelude;  // prelude.lua, compiled in (prelude.cpp.in)

namespace {

constexpr int kHookEvery = 1000;  // instructions between two looks at the budget

// One instruction of the VM may read a whole string: == of two long strings of one length
// compares their bytes, < compares them up to the shorter's end, and a string given where a
// number is expected (`s + 1`, math.abs(s), a for loop's limit) is read to its end to convert
// it. The count hook sees one instruction. So while a string longer than kLongString is alive,
// each instruction is charged as reading the longest one, kBytesReadPerInstruction bytes to an
// instruction, and the hook looks that much more often: `while true do local same = a == b end`
// with two 20 MB strings stops at the budget as a plain endless loop does. A script whose strings
// are all shorter is charged as before.
constexpr std::size_t kLongString = 1024;
constexpr double kBytesReadPerInstruction = 128;
// An allocation copies what it is made for (a concatenation, a format): one instruction per
// kBytesWrittenPerInstruction bytes of one larger than kLongString.
constexpr double kBytesWrittenPerInstruction = 64;

double read_factor(const Runtime& rt) {
  return rt.long_lengths.empty() ? 1.0 : 1.0 + static_cast<double>(*rt.long_lengths.rbegin()) / kBytesReadPerInstruction;
}

// A script's memory comes from the trial's arena while one is in use (sim/arena.hpp), so that a
// trial restored in place gets its scripts' states back with it; else from the C heap.
void release(void* p) {
  if (!sim::Arena::release(p)) std::free(p);
}
void* resize(void* p, std::size_t old, std::size_t n) {
  sim::Arena* arena = sim::current_arena();
  if (arena == nullptr && (p == nullptr || sim::Arena::owner(p) == nullptr)) return std::realloc(p, n);
  void* q = nullptr;
  try {
    q = arena != nullptr ? arena->allocate(n) : std::malloc(n);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
  if (q == nullptr) return nullptr;
  if (p != nullptr) {
    std::memcpy(q, p, std::min(old, n));
    release(p);
  }
  return q;
}

void* allocate(void* ud, void* ptr, std::size_t old_size, std::size_t new_size) {
  Runtime& rt = *static_cast<Runtime*>(ud);
  const std::size_t old = ptr == nullptr ? 0 : old_size;
  if (new_size == 0) {
    if (old > kLongString)
      if (const auto it = rt.long_strings.find(ptr); it != rt.long_strings.end()) {
        rt.long_lengths.erase(rt.long_lengths.find(it->second));
        rt.long_strings.erase(it);
      }
    if (ptr != nullptr) release(ptr);
    rt.used -= old;
    return nullptr;
  }
  if (rt.enforce && new_size > old && rt.used - old + new_size > rt.limits.memory_bytes) return nullptr;
  void* p = resize(ptr, old, new_size);
  if (p == nullptr) return nullptr;
  rt.used = rt.used - old + new_size;
  if (new_size > old + kLongString && rt.enforce)
    rt.instructions += static_cast<std::uint64_t>(static_cast<double>(new_size - old) / kBytesWrittenPerInstruction);
  // A new object's old_size is its type (Lua's manual, lua_Alloc); a string is never resized.
  if (ptr == nullptr && old_size == LUA_TSTRING && new_size > kLongString) {
    rt.long_strings.emplace(p, new_size);
    rt.long_lengths.insert(new_size);
  }
  return p;
}

void count_instructions(lua_State* L, lua_Debug* ar) {
  Runtime& rt = runtime(L);
  const double factor = read_factor(rt);
  const double charged = static_cast<double>(lua_gethookcount(L)) * factor;
  rt.instructions += static_cast<std::uint64_t>(std::min(charged, static_cast<double>(rt.limits.instructions) + 1));
  if (const int every = std::clamp(static_cast<int>(kHookEvery / factor), 1, kHookEvery); every != lua_gethookcount(L))
    lua_sethook(L, count_instructions, LUA_MASKCOUNT, every);
  if (rt.instructions <= rt.limits.instructions) return;
  if (!rt.over_budget) {
    rt.over_budget = true;
    if (lua_getinfo(L, "Sl", ar) != 0) rt.budget_where = fmt::format("{}:{}", ar->short_src, ar->currentline);
  }
  lua_pushlightuserdata(L, &fatal_sentinel);
  lua_error(L);
}

int dump_writer(lua_State*, const void* p, std::size_t n, void* ud) {
  static_cast<std::string*>(ud)->append(static_cast<const char*>(p), n);
  return 0;
}

// The prelude compiled once per process: every trial's state loads it as a binary chunk.
const std::string& prelude_chunk() {
  static const std::string chunk = [] {
    std::string out;
    lua_State* L = luaL_newstate();
    if (L == nullptr) throw std::bad_alloc();
    if (luaL_loadbufferx(L, kPrelude, std::strlen(kPrelude), "=locksim", "t") != LUA_OK) {
      const std::string why = lua_tostring(L, -1);
      lua_close(L);
      throw std::logic_error("models::lua: the Lua prelude does not compile: " + why);
    }
    lua_dump(L, dump_writer, &out, 0);
    lua_close(L);
    return out;
  }();
  return chunk;
}

// Calls the library function a wrapper stands for (upvalue 1) with the wrapper's arguments;
// its error, raised from here, names it and the script's line rather than "bad argument to '?'".
int call_original(lua_State* L, const char* name) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  if (lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0) == LUA_OK) return lua_gettop(L);
  if (lua_type(L, -1) == LUA_TSTRING) {  // not the fatal sentinel, which goes on as it is
    std::string message = lua_tostring(L, -1);
    if (const auto at = message.find(" to '?'"); at != std::string::npos) message.replace(at, 7, std::string(" to '") + name + "'");
    luaL_where(L, 1);
    lua_pushlstring(L, message.data(), message.size());
    lua_concat(L, 2);
  }
  return lua_error(L);
}

// tostring without addresses: a table, function or userdata without __tostring is its
// __name or its type.
int safe_tostring(lua_State* L) {
  luaL_checkany(L, 1);
  lua_settop(L, 1);
  const int t = lua_type(L, 1);
  if ((t == LUA_TTABLE || t == LUA_TFUNCTION || t == LUA_TUSERDATA || t == LUA_TLIGHTUSERDATA || t == LUA_TTHREAD) &&
      luaL_getmetafield(L, 1, "__tostring") == LUA_TNIL) {
    if (luaL_getmetafield(L, 1, "__name") != LUA_TSTRING) lua_pushstring(L, lua_typename(L, t));
    return 1;
  }
  lua_settop(L, 1);
  luaL_tolstring(L, 1, nullptr);
  return 1;
}

// string.format without %p, and with tables and functions shown by safe_tostring.
int safe_format(lua_State* L) {
  std::size_t length = 0;
  const char* format = luaL_checklstring(L, 1, &length);
  for (std::size_t i = 0; i < length; ++i) {  // every byte: a format may hold NULs
    if (format[i] != '%') continue;
    ++i;
    while (i < length && std::memchr("-+ #0123456789.", format[i], 15) != nullptr) ++i;
    if (i < length && format[i] == 'p') return luaL_error(L, "string.format: %%p shows an address, which differs from run to run");
  }
  const int n = lua_gettop(L);
  for (int i = 2; i <= n; ++i) {
    const int t = lua_type(L, i);
    if (t == LUA_TTABLE || t == LUA_TFUNCTION || t == LUA_TUSERDATA || t == LUA_TLIGHTUSERDATA || t == LUA_TTHREAD) {
      lua_pushcfunction(L, safe_tostring);
      lua_pushvalue(L, i);
      lua_call(L, 1, 1);
      lua_replace(L, i);
    }
  }
  return call_original(L, "string.format");
}

// Lua's pattern matcher runs in C, where the instruction budget does not reach, and backtracks:
// ('x?'):rep(30) .. ('x'):rep(30) takes 2^30 steps. A pattern function is refused when its worst
// case, about (subject length + 1)^(quantifiers + 1), passes kMaxPatternSteps.
constexpr double kMaxPatternSteps = 1e8;

int charged(lua_State* L, const char* name);

int bounded_pattern(lua_State* L, const char* name) {
  std::size_t subject = 0, length = 0;
  if (lua_type(L, 1) == LUA_TSTRING || lua_type(L, 1) == LUA_TNUMBER) lua_tolstring(L, 1, &subject);
  const char* pattern = lua_type(L, 2) == LUA_TSTRING || lua_type(L, 2) == LUA_TNUMBER ? lua_tolstring(L, 2, &length) : nullptr;
  const bool plain = std::string_view(name) == "string.find" && lua_toboolean(L, 4) != 0;
  if (pattern != nullptr && !plain) {
    int quantifiers = 0;
    for (std::size_t i = 0; i < length; ++i) {
      if (pattern[i] == '%') {
        ++i;  // an escape: the next character is literal
        continue;
      }
      if (std::memchr("*+-?", pattern[i], 4) != nullptr) ++quantifiers;
    }
    if (static_cast<double>(quantifiers + 1) * std::log(static_cast<double>(subject) + 1) > std::log(kMaxPatternSteps)) {
      char why[256];  // no C++ object may be alive when luaL_error jumps
      std::snprintf(why, sizeof why,
                    "%s: a pattern with %d quantifiers over %zu bytes could take more than %.0e steps, which no budget stops; "
                    "use fewer quantifiers, a shorter subject, or plain find",
                    name, quantifiers, subject, kMaxPatternSteps);
      return luaL_error(L, "%s", why);
    }
  }
  return charged(L, name);
}

// Lua's library functions run in C, where the count hook does not reach: a plain find of a long
// needle in a long subject, or inserts at the front of a long list, would run for minutes inside
// one instruction. Each such function is charged to the instruction budget, before it runs, for
// the work its arguments ask: one instruction per kBytesPerInstruction bytes it may compare or
// move, one per element it may shift. Past the budget the trial ends as any endless loop does.
// (table.sort is the prelude's merge sort, in Lua: the hook counts it.)
constexpr double kBytesPerInstruction = 8;

void charge(lua_State* L, double instructions) {
  Runtime& rt = runtime(L);
  const double room = static_cast<double>(rt.limits.instructions) - static_cast<double>(rt.instructions);
  if (instructions <= room) {
    rt.instructions += static_cast<std::uint64_t>(instructions);
    return;
  }
  rt.instructions = rt.limits.instructions + 1;
  if (!rt.over_budget) {
    rt.over_budget = true;
    lua_Debug ar;
    if (lua_getstack(L, 1, &ar) != 0 && lua_getinfo(L, "Sl", &ar) != 0)
      rt.budget_where = fmt::format("{}:{}", ar.short_src, ar.currentline);
  }
  lua_pushlightuserdata(L, &fatal_sentinel);
  lua_error(L);
}

// The length of argument i as a string function reads it; a number is at most a few dozen bytes.
double text_length(lua_State* L, int i) {
  if (lua_type(L, i) == LUA_TSTRING) return static_cast<double>(lua_rawlen(L, i));
  return lua_type(L, i) == LUA_TNUMBER ? 48 : 0;
}

double list_length(lua_State* L, int i) { return lua_type(L, i) == LUA_TTABLE ? static_cast<double>(lua_rawlen(L, i)) : 0; }

// The cost of the library function `name` called with the arguments on L's stack.
double work_of(lua_State* L, std::string_view name) {
  if (name == "string.find" || name == "string.match" || name == "string.gmatch" || name == "string.gsub") {
    // A search tries the pattern at each position of the subject: at worst its length each time.
    double work = (text_length(L, 1) + 1) * (text_length(L, 2) + 1);
    if (name == "string.gsub") work += (text_length(L, 1) + 1) * (text_length(L, 3) + 1);  // what it writes
    return work / kBytesPerInstruction;
  }
  if (name == "string.rep") {
    // What it writes; past the memory cap the allocation fails first, as not enough memory. A
    // count given as a float (3e7) or a numeric string is the count Lua converts it to.
    const double n = lua_isnumber(L, 2) != 0 ? std::floor(lua_tonumber(L, 2)) : 0;
    const double bytes = std::max(0.0, n) * (text_length(L, 1) + text_length(L, 3));
    return std::min(bytes, static_cast<double>(runtime(L).limits.memory_bytes)) / kBytesPerInstruction;
  }
  if (name == "string.upper" || name == "string.lower" || name == "string.reverse" || name == "string.sub" || name == "string.byte" ||
      name == "utf8.len" || name == "utf8.codepoint")
    return text_length(L, 1) / kBytesPerInstruction;  // what it reads or copies of its subject, at most
  if (name == "string.char" || name == "utf8.char") return lua_gettop(L);
  if (name == "table.concat" || name == "table.insert" || name == "table.remove") return list_length(L, 1);
  if (name == "table.move") {
    const double from = lua_isinteger(L, 2) != 0 ? static_cast<double>(lua_tointeger(L, 2)) : 0;
    const double to = lua_isinteger(L, 3) != 0 ? static_cast<double>(lua_tointeger(L, 3)) : 0;
    return std::max(0.0, to - from + 1);
  }
  return 0;
}

// Charges the library function `name` for its work, then calls it (upvalue 1).
int charged(lua_State* L, const char* name) {
  charge(L, work_of(L, name));
  return call_original(L, name);
}

// setmetatable refusing __gc: a finalizer runs when the collector chooses.
int safe_setmetatable(lua_State* L) {
  if (lua_type(L, 2) == LUA_TTABLE) {
    lua_pushstring(L, "__gc");
    const bool gc = lua_rawget(L, 2) != LUA_TNIL;
    lua_pop(L, 1);
    if (gc) return luaL_error(L, "setmetatable: __gc is not allowed in a strategy (a finalizer runs when the collector chooses)");
  }
  return call_original(L, "setmetatable");
}

// Opens the libraries a strategy may use, without what reaches outside the simulation.
int open_sandbox(lua_State* L) {
  luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
  luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
  luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
  luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
  luaL_requiref(L, LUA_UTF8LIBNAME, luaopen_utf8, 1);
  lua_settop(L, 0);
  for (const char* name : {"dofile", "loadfile", "load", "collectgarbage", "print", "require"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  lua_getglobal(L, LUA_STRLIBNAME);
  lua_pushnil(L);
  lua_setfield(L, -2, "dump");
  lua_getfield(L, -1, "format");
  lua_pushcclosure(L, safe_format, 1);
  lua_setfield(L, -2, "format");
  const auto bound = [&](const char* field, lua_CFunction f) {
    lua_getfield(L, -1, field);
    lua_pushcclosure(L, f, 1);
    lua_setfield(L, -2, field);
  };
  bound("find", [](lua_State* S) { return bounded_pattern(S, "string.find"); });
  bound("match", [](lua_State* S) { return bounded_pattern(S, "string.match"); });
  bound("gmatch", [](lua_State* S) { return bounded_pattern(S, "string.gmatch"); });
  bound("gsub", [](lua_State* S) { return bounded_pattern(S, "string.gsub"); });
  bound("rep", [](lua_State* S) { return charged(S, "string.rep"); });
  bound("upper", [](lua_State* S) { return charged(S, "string.upper"); });
  bound("lower", [](lua_State* S) { return charged(S, "string.lower"); });
  bound("reverse", [](lua_State* S) { return charged(S, "string.reverse"); });
  bound("sub", [](lua_State* S) { return charged(S, "string.sub"); });
  bound("byte", [](lua_State* S) { return charged(S, "string.byte"); });
  bound("char", [](lua_State* S) { return charged(S, "string.char"); });
  lua_pop(L, 1);
  lua_getglobal(L, LUA_UTF8LIBNAME);
  bound("len", [](lua_State* S) { return charged(S, "utf8.len"); });
  bound("codepoint", [](lua_State* S) { return charged(S, "utf8.codepoint"); });
  bound("char", [](lua_State* S) { return charged(S, "utf8.char"); });
  lua_pop(L, 1);
  lua_getglobal(L, LUA_TABLIBNAME);
  bound("concat", [](lua_State* S) { return charged(S, "table.concat"); });
  bound("insert", [](lua_State* S) { return charged(S, "table.insert"); });
  bound("remove", [](lua_State* S) { return charged(S, "table.remove"); });
  bound("move", [](lua_State* S) { return charged(S, "table.move"); });
  lua_pop(L, 1);
  lua_getglobal(L, LUA_MATHLIBNAME);
  lua_pushnil(L);
  lua_setfield(L, -2, "randomseed");
  lua_pushnil(L);
  lua_setfield(L, -2, "random");  // set again per trial, on the worker's stream
  lua_pop(L, 1);
  lua_pushcfunction(L, safe_tostring);
  lua_setglobal(L, "tostring");
  lua_getglobal(L, "setmetatable");
  lua_pushcclosure(L, safe_setmetatable, 1);
  lua_setglobal(L, "setmetatable");
  const std::string& prelude = prelude_chunk();
  if (luaL_loadbufferx(L, prelude.data(), prelude.size(), "=locksim", "b") != LUA_OK) return lua_error(L);
  lua_pushlightuserdata(L, &fatal_sentinel);
  lua_pushcfunction(L, runtime(L).stopping);
  lua_call(L, 2, 0);
  // The error values of the database and the services, shown as "1062: Duplicate entry ...".
  luaL_newmetatable(L, kErrorMeta);
  lua_pushcfunction(L, [](lua_State* S) -> int {
    lua_pushstring(S, "code");
    lua_rawget(S, 1);
    lua_pushstring(S, "message");
    lua_rawget(S, 1);
    lua_pushfstring(S, "%s: %s", luaL_tolstring(S, 2, nullptr), luaL_tolstring(S, 3, nullptr));
    return 1;
  });
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
  return 0;
}


std::string error_text_of(lua_State* L, const Runtime& rt);

// Whether `text` begins with a position as Lua writes one, "source:line:" (a long file name cut
// to its end: "...tail/s.lua:12:").
bool has_position(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon > LUA_IDSIZE) return false;
  std::size_t i = colon + 1;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  return i > colon + 1 && i < text.size() && text[i] == ':';
}

std::string error_text_of(lua_State* L, const Runtime& rt) {
  if (lua_touserdata(L, -1) == &fatal_sentinel && rt.over_budget)
    return fmt::format("{}: the instruction budget of {} per trial ran out (an endless loop?)",
                       rt.budget_where.empty() ? rt.file : rt.budget_where, rt.limits.instructions);
  if (lua_type(L, -1) == LUA_TSTRING) {
    const std::string message = lua_tostring(L, -1);
    if (message == "not enough memory")  // raised by the allocator, with no position
      return fmt::format("{}: not enough memory (a trial's script may hold {} MiB)", rt.file, rt.limits.memory_bytes >> 20);
    return message;
  }
  if (lua_type(L, -1) == LUA_TTABLE && lua_getmetatable(L, -1) != 0) {
    luaL_getmetatable(L, kErrorMeta);
    const bool ours = lua_rawequal(L, -1, -2) != 0;
    lua_pop(L, 2);
    if (ours) {
      lua_pushstring(L, "where");
      lua_rawget(L, -2);
      lua_pushstring(L, "code");
      lua_rawget(L, -3);
      lua_pushstring(L, "message");
      lua_rawget(L, -4);
      std::string out = fmt::format("{}{}: {}", lua_type(L, -3) == LUA_TSTRING ? lua_tostring(L, -3) : "",
                                    lua_type(L, -2) == LUA_TNUMBER ? std::to_string(lua_tointeger(L, -2))
                                                                    : (lua_isstring(L, -2) ? lua_tostring(L, -2) : "?"),
                                    lua_isstring(L, -1) ? lua_tostring(L, -1) : "");
      lua_pop(L, 3);
      return out;
    }
  }
  return fmt::format("{}: an error value that is a {}, not a message", rt.file, luaL_typename(L, -1));
}

}  // namespace

// A sandboxed state whose memory and instructions `rt` counts. Throws ScriptError.
StatePtr new_state(Runtime& rt) {
  StatePtr L(lua_newstate(allocate, &rt));
  if (!L) throw ScriptError(rt.file + ": not enough memory for a Lua state");
  *static_cast<void**>(lua_getextraspace(L.get())) = nullptr;  // no bind runs on the main thread: threads copy this
  lua_sethook(L.get(), count_instructions, LUA_MASKCOUNT, kHookEvery);
  lua_pushcfunction(L.get(), open_sandbox);
  if (lua_pcall(L.get(), 0, 0, 0) != LUA_OK) throw ScriptError(rt.file + ": " + lua_tostring(L.get(), -1));
  return L;
}

std::string escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7F)
      out += fmt::format("\\x{:02x}", c);
    else
      out += ch;
  }
  return out;
}

std::string error_text(lua_State* L, const Runtime& rt) {
  std::string text = escaped(error_text_of(L, rt));
  if (text.empty()) text = "an error with an empty message";
  // A message of megabytes (error(string.rep('e', 1e7))) is cut: it goes into a line, a report and results.json.
  constexpr std::size_t kMostShown = 1000;
  if (text.size() > kMostShown) {
    std::size_t cut = kMostShown;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // a whole UTF-8 character
    text = fmt::format("{}... ({} bytes in all)", text.substr(0, cut), text.size());
  }
  if (!text.starts_with(rt.file + ":") && !has_position(text)) text = rt.file + ": " + text;
  return text;
}

void push_param(lua_State* L, double value, bool flag) {
  if (flag)
    lua_pushboolean(L, value != 0);
  else if (value == std::floor(value) && std::fabs(value) < 9e15)
    lua_pushinteger(L, static_cast<lua_Integer>(value));
  else
    lua_pushnumber(L, value);
}

int run_with_params(lua_State* L, Runtime& rt, int params) {
  params = lua_absindex(L, params);
  // An assignment to the global `params` stores the table in effect instead.
  lua_pushglobaltable(L);
  lua_createtable(L, 0, 1);
  lua_pushvalue(L, params);
  lua_pushcclosure(L, [](lua_State* S) -> int {
    if (lua_type(S, 2) == LUA_TSTRING && std::strcmp(lua_tostring(S, 2), "params") == 0) {
      lua_pushvalue(S, lua_upvalueindex(1));
      lua_replace(S, 3);
    }
    lua_rawset(S, 1);
    return 0;
  }, 1);
  lua_setfield(L, -2, "__newindex");
  lua_setmetatable(L, -2);
  lua_pop(L, 1);
  int status;
  {
    MemoryCap cap(rt, true);
    status = lua_pcall(L, 0, 0, 0);
  }
  if (status != LUA_OK) return status;
  lua_pushglobaltable(L);
  lua_pushnil(L);
  lua_setmetatable(L, -2);
  lua_pushstring(L, "params");
  lua_pushvalue(L, params);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  return LUA_OK;
}

std::string bytecode(lua_State* L) {
  std::string out;
  lua_dump(L, dump_writer, &out, 0);
  return out;
}

std::string string_global(lua_State* L, const std::string& file, const char* name, bool required) {
  lua_pushglobaltable(L);
  lua_pushstring(L, name);
  const int t = lua_rawget(L, -2);
  std::string out;
  if (t == LUA_TSTRING && !utf8(lua_tostring(L, -1))) throw ScriptError(fmt::format("{}: expected `{}` in UTF-8", file, name));
  if (t == LUA_TSTRING)
    out = lua_tostring(L, -1);
  else if (t != LUA_TNIL || required)
    throw ScriptError(fmt::format("{}: expected `{}` to be a string{}", file, name, t == LUA_TNIL ? " (it is missing)" : ""));
  lua_pop(L, 2);
  return out;
}

void for_each_param(lua_State* L, const std::string& file, const std::function<void(const std::string& name)>& each) {
  lua_pushglobaltable(L);
  lua_pushstring(L, "params");
  const int t = lua_rawget(L, -2);
  if (t == LUA_TNIL) {
    lua_pop(L, 2);
    return;
  }
  if (t != LUA_TTABLE) throw ScriptError(fmt::format("{}: expected `params` to be a table of defaults, name = value", file));
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    if (lua_type(L, -2) != LUA_TSTRING || !is_name(lua_tostring(L, -2)))
      throw ScriptError(fmt::format("{}: params: expected names made of letters, digits and _", file));
    each(lua_tostring(L, -2));
    lua_pop(L, 1);
  }
  lua_pop(L, 2);
}

bool is_name(const std::string& s) {
  return !s.empty() && !std::isdigit(static_cast<unsigned char>(s[0])) &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

bool utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return false;
    i += n;
  }
  return true;
}


}  // namespace models::lua
