#pragma once
// The sandbox every Lua script of locksim runs in (a strategy, a workload): Lua 5.4 without what
// reaches outside the simulation (no os, io, require, load, debug, collectgarbage), with pairs,
// next and table.sort in a fixed order, tostring and string.format without addresses, an
// instruction budget that also charges the library's C functions for their work, and a memory
// cap. The prelude that fixes the orders is prelude.lua, compiled in.
//
// How Lua code and C++ meet (Lua's C API, lua.org/manual/5.4/manual.html#4): Lua raises errors
// with longjmp, so a C function never has a C++ object alive when it calls into Lua code that
// can raise; memory is capped only while Lua code runs (MemoryCap), so that the runtime's own
// pushes never fail on the cap.

#include <lua.hpp>

#include "models/lua/script_error.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace models::lua {

/// The metatable of the error values of the database and the services ({code, message, where}).
inline constexpr const char* kErrorMeta = "locksim.error";

/// The error value that ends a script whatever pcall it is inside (a crash of its node, the
/// budget): the address of this.
extern char fatal_sentinel;

// One trial's Lua state's bookkeeping: its memory, its instructions.
struct Runtime {
  std::string file;
  Limits limits;
  /// Whether the script is being stopped (the budget, its process killed): the prelude's pcall
  /// lets the fatal sentinel through while it says so.
  lua_CFunction stopping = nullptr;
  std::size_t used = 0;
  bool enforce = false;  // the memory cap holds: Lua code is running
  std::uint64_t instructions = 0;
  /// The strings longer than kLongString alive now, by address, and their lengths: one
  /// instruction may read one of them whole, where the count hook cannot see it (sandbox.cpp).
  std::map<const void*, std::size_t> long_strings{};
  std::multiset<std::size_t> long_lengths{};
  bool over_budget = false;
  std::string budget_where;  // "file:line" where the budget ran out
};

inline Runtime& runtime(lua_State* L) {
  void* ud = nullptr;
  lua_getallocf(L, &ud);
  return *static_cast<Runtime*>(ud);
}

// Lua runs with the memory cap on; the runtime's C++ runs with it off.
class MemoryCap {
 public:
  MemoryCap(Runtime& rt, bool enforce) : rt_(rt), was_(std::exchange(rt.enforce, enforce)) {}
  ~MemoryCap() { rt_.enforce = was_; }
  MemoryCap(const MemoryCap&) = delete;
  MemoryCap& operator=(const MemoryCap&) = delete;

 private:
  Runtime& rt_;
  bool was_;
};
struct StateCloser {
  void operator()(lua_State* L) const { lua_close(L); }
};
using StatePtr = std::unique_ptr<lua_State, StateCloser>;

/// A sandboxed state whose memory and instructions `rt` counts (rt.stopping set). Throws ScriptError.
StatePtr new_state(Runtime& rt);

/// A script's error text as a terminal should show it: control bytes (a newline, a CR, an ANSI
/// escape) written as \xNN, so that a message is one line and moves no cursor.
std::string escaped(std::string_view text);

/// The text of the error at the top of L's stack, for a message: one line, naming the script's
/// file (an error Lua raises from C, "C stack overflow" say, has no position of its own).
std::string error_text(lua_State* L, const Runtime& rt);

/// Pushes a parameter's value as a script sees it: a boolean for a flag, an integer for a whole
/// number, else a number.
void push_param(lua_State* L, double value, bool flag);

/// Calls the chunk at the top of L's stack (a script's top level) with the memory cap on, the
/// global `params` holding the table at index `params` from the script's own assignment on: its
/// `params = {...}` (its defaults) stores that table instead. Pops the chunk; the table stays.
/// Returns lua_pcall's status, the error on the stack when it is not LUA_OK.
int run_with_params(lua_State* L, Runtime& rt, int params);

/// The function at the top of L's stack as a binary chunk, to load in each trial's state.
std::string bytecode(lua_State* L);

/// Whether `s` is a name of letters, digits and _, not starting with a digit (a parameter's,
/// a field's, a metric's).
bool is_name(const std::string& s);

/// Whether `s` is valid UTF-8.
bool utf8(std::string_view s);

/// The string global `name` of a script's top level, read raw: "" when it is absent and not
/// `required`. Throws ScriptError naming `file` when it is not a string in UTF-8, or is absent
/// and `required`.
std::string string_global(lua_State* L, const std::string& file, const char* name, bool required);

/// Calls `each(name)` for each entry of the global table `params` (a script's or a workload's
/// defaults), its value on the top of the stack, in lua_next's order (the caller sorts what it
/// keeps). Nothing without `params`; throws ScriptError naming `file` when `params` is not a
/// table or a key is not a name.
void for_each_param(lua_State* L, const std::string& file, const std::function<void(const std::string& name)>& each);

}  // namespace models::lua
