// Loading a strategy written in Lua: compiling it, running its top level once, and reading its
// contract (description, bind or handle, params, tables, uses) into a registry entry.

#include <fmt/format.h>

#include <lua.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "models/db/postgres/sql.hpp"
#include "models/db/sql.hpp"
#include "models/lua/sandbox.hpp"
#include "models/strategies/script_run.hpp"
#include "models/strategies/script_uses.hpp"

namespace models::strategies {
namespace {

using lua::error_text;
using lua::MemoryCap;
using lua::Runtime;
using lua::StatePtr;

// The script's `tables`: CREATE TABLE statements; t_account among them replaces the default.
void read_tables(lua_State* L, const std::string& file, Needs& needs) {
  lua_pushglobaltable(L);
  lua_pushstring(L, "tables");
  const int t = lua_rawget(L, -2);
  if (t == LUA_TNIL) {
    lua_pop(L, 2);
    return;
  }
  if (t != LUA_TTABLE) throw ScriptError(fmt::format("{}: expected `tables` to be a list of CREATE TABLE statements", file));
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, -1));
  for (lua_Integer i = 1; i <= n; ++i) {
    if (lua_rawgeti(L, -1, i) != LUA_TSTRING) throw ScriptError(fmt::format("{}: tables[{}]: expected a CREATE TABLE statement", file, i));
    const std::string text = lua_tostring(L, -1);
    lua_pop(L, 1);
    // In either dialect: the tables are made before any statement runs, on either engine.
    db::sql::Prepared p;
    try {
      p = db::sql::prepare(text);
    } catch (const db::sql::Error& mysql) {
      try {
        p = db::pg::prepare(text);
      } catch (const std::exception& postgresql) {
        throw ScriptError(fmt::format("{}: tables[{}]: not a CREATE TABLE of MySQL ({}) or of PostgreSQL ({})", file, i,
                                      mysql.what(), postgresql.what()));
      }
    }
    if (!p.create) throw ScriptError(fmt::format("{}: tables[{}]: expected a CREATE TABLE statement", file, i));
    db::TableSchema table = *p.create;
    if (table.name == kAccounts) {
      if (table.key_column.empty()) {
        auto it = table.columns.find("open_id");
        if (it == table.columns.end())
          throw ScriptError(fmt::format("{}: tables[{}]: t_account needs an open_id column (the duplicate checker's key)", file, i));
        table.columns.erase(it);
        table.key_column = "open_id";
        table.key_index = db::KeyIndex::none;
      } else if (table.key_column != "open_id") {
        throw ScriptError(fmt::format("{}: tables[{}]: t_account's index is on open_id (the duplicate checker's key), not on {}", file,
                                      i, table.key_column));
      }
      needs.key_index = table.key_index;
      needs.accounts = std::move(table);
    } else {
      const bool again = std::any_of(needs.tables.begin(), needs.tables.end(), [&](const auto& x) { return x.name == table.name; });
      if (again) throw ScriptError(fmt::format("{}: tables[{}]: {} is defined twice", file, i, table.name));
      needs.tables.push_back(std::move(table));
    }
  }
  lua_pop(L, 2);
}

// The script's `outcomes`: answers of its own that bind or handle may return ("seat_taken"),
// each counted as errors.<name>. Names of lower-case letters, digits and _, not an error kind's.
std::vector<std::string> read_outcomes(lua_State* L, const std::string& file) {
  std::vector<std::string> out;
  lua_pushglobaltable(L);
  lua_pushstring(L, "outcomes");
  const int t = lua_rawget(L, -2);
  if (t == LUA_TNIL) {
    lua_pop(L, 2);
    return out;
  }
  const auto refuse = [&](const std::string& where) {
    throw ScriptError(fmt::format("{}: {}: expected a list of names of answers of its own (`outcomes = {{\"seat_taken\"}}`): "
                                  "lower-case letters, digits and _, at most 32, none an error kind's",
                                  file, where));
  };
  if (t != LUA_TTABLE) refuse("outcomes");
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, -1));
  if (n > 100) refuse("outcomes");
  for (lua_Integer i = 1; i <= n; ++i) {
    const std::string where = fmt::format("outcomes[{}]", i);
    if (lua_rawgeti(L, -1, i) != LUA_TSTRING) refuse(where);
    const std::string name = lua_tostring(L, -1);
    lua_pop(L, 1);
    const bool word = !name.empty() && name.size() <= 32 && std::islower(static_cast<unsigned char>(name[0])) &&
                      std::all_of(name.begin(), name.end(), [](char c) {
                        return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
                      });
    bool kind = false;
    for (int k = 0; k <= static_cast<int>(ErrorKind::business); ++k) kind = kind || name == to_string(static_cast<ErrorKind>(k));
    if (!word || kind) refuse(where);
    out.push_back(name);
  }
  lua_pop(L, 2);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The script's `params`: defaults by name; their kind from the value and the name.
std::vector<ParamInfo> read_params(lua_State* L, const std::string& file, std::map<std::string, ParamKind>& kinds) {
  std::vector<ParamInfo> out;
  lua::for_each_param(L, file, [&](const std::string& name) {
    ParamInfo p{.name = name, .value = 0, .meaning = "a parameter of the script"};
    if (lua_type(L, -1) == LUA_TBOOLEAN) {
      p.kind = ParamKind::flag;
      p.value = lua_toboolean(L, -1);
    } else if (lua_type(L, -1) == LUA_TNUMBER && p.name.ends_with("_ms")) {
      p.kind = ParamKind::duration_ms;
      p.value = lua_tonumber(L, -1);
      if (!(p.value >= 0 && p.value <= 1e12)) throw ScriptError(fmt::format("{}: params.{}: expected milliseconds from 0 to 1e12", file, p.name));
      p.meaning = "milliseconds";
    } else if (lua_type(L, -1) == LUA_TNUMBER) {
      p.kind = ParamKind::count;
      p.value = lua_tonumber(L, -1);
      if (!(p.value >= 0 && p.value <= 1e6 && p.value == std::floor(p.value)))
        throw ScriptError(fmt::format("{}: params.{}: expected a whole number from 0 to 1e6 (a duration's name ends in _ms)", file, p.name));
      p.meaning = "a count";
    } else {
      throw ScriptError(fmt::format("{}: params.{}: expected a number or a boolean, got {}", file, p.name, luaL_typename(L, -1)));
    }
    kinds[p.name] = p.kind;
    out.push_back(std::move(p));
  });
  std::sort(out.begin(), out.end(), [](const ParamInfo& a, const ParamInfo& b) { return a.name < b.name; });
  return out;
}

// The script's `uses`, added to what its source shows.
void read_uses(lua_State* L, const std::string& file, Uses& u) {
  lua_pushglobaltable(L);
  lua_pushstring(L, "uses");
  const int t = lua_rawget(L, -2);
  if (t != LUA_TNIL) {
    constexpr const char* kExpected = "expected `uses` to be a list of: redis, redlock, zookeeper, etcd, consul, remote, lock_table, fences";
    if (t != LUA_TTABLE) throw ScriptError(fmt::format("{}: {}", file, kExpected));
    const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, -1));
    for (lua_Integer i = 1; i <= n; ++i) {
      const std::string name = lua_rawgeti(L, -1, i) == LUA_TSTRING ? lua_tostring(L, -1) : "";
      lua_pop(L, 1);
      if (name == "redis") u.redis = true;
      else if (name == "redlock") u.redis = u.redlock = true;
      else if (name == "zookeeper") u.zookeeper = true;
      else if (name == "etcd") u.etcd = true;
      else if (name == "consul") u.consul = true;
      else if (name == "remote") u.remote = true;
      else if (name == "lock_table") u.lock_table = true;
      else if (name == "fences") u.fences = true;
      else throw ScriptError(fmt::format("{}: uses[{}]: {}", file, i, kExpected));
    }
  }
  lua_pop(L, 2);
}

// A load-time message as one line that begins with the file: "file:line: ..." or "file: ...",
// in UTF-8 (a script's bytes are not).
std::string named(const std::string& file, std::string why) {
  std::replace(why.begin(), why.end(), '\n', ' ');
  if (why.empty()) why = "an error with an empty message";
  if (!why.starts_with(file + ":")) why = file + ": " + why;
  return why;
}

}  // namespace

std::shared_ptr<const Entry> load_script(const std::string& name, const std::string& file, std::string_view text, ScriptLimits limits) {
  Runtime rt;
  rt.file = file;
  rt.limits = limits;
  rt.stopping = stopping;
  StatePtr state = new_state(rt);
  lua_State* L = state.get();
  install_api(L);
  if (luaL_loadbufferx(L, text.data(), text.size(), ("@" + file).c_str(), "t") != LUA_OK) {
    std::string why = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
    if (why.find("attempt to load a binary chunk") != std::string::npos) why = file + ": expected Lua source text, not a compiled chunk";
    if (why == "C stack overflow") why = "the code nests too deeply (C stack overflow)";
    throw ScriptError(named(file, why));
  }
  auto compiled = std::make_shared<Compiled>(Compiled{.file = file, .bytecode = {}, .limits = limits, .kinds = {}});
  compiled->bytecode = lua::bytecode(L);
  {
    // Running the top level once reads the contract; it runs again in each trial's state.
    MemoryCap lua(rt, true);
    if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
      const std::string why = named(file, error_text(L, rt));
      if (why.find("only inside bind(req) or handle(req)") != std::string::npos)
        throw ScriptError(why + " (the top level runs before any request)");
      throw ScriptError(why);
    }
  }
  Info info;
  info.name = name;
  info.description = lua::string_global(L, file, "description", true);
  info.source = lua::string_global(L, file, "source", false);
  info.risks = lua::string_global(L, file, "risks", false);
  if (info.source.empty()) info.source = file;
  compiled->workload = lua::string_global(L, file, "workload", false);
  lua_pushglobaltable(L);
  lua_pushstring(L, "bind");
  const bool bind = lua_rawget(L, -2) == LUA_TFUNCTION;
  lua_pushstring(L, "handle");
  const bool handle = lua_rawget(L, -3) == LUA_TFUNCTION;
  lua_pop(L, 3);
  if (compiled->workload.empty() && !bind)
    throw ScriptError(fmt::format("{}: expected a function bind(req) (an account-bind strategy), or `workload = \"name\"` and a "
                                  "function handle(req) (a strategy of a Lua workload)",
                                  file));
  if (!compiled->workload.empty() && !handle)
    throw ScriptError(fmt::format("{}: expected a function handle(req): a strategy of the {} workload handles its requests", file,
                                  compiled->workload));
  if (!compiled->workload.empty() && bind)
    throw ScriptError(fmt::format("{}: bind(req) is account-bind's; a strategy of the {} workload has handle(req) alone", file,
                                  compiled->workload));
  info.params = read_params(L, file, compiled->kinds);
  compiled->outcomes = read_outcomes(L, file);
  read_tables(L, file, info.needs);
  Uses uses = uses_in(text);
  read_uses(L, file, uses);
  info.needs.redis = uses.redis;
  if (uses.redlock) info.needs.redis_instances = 5;
  info.needs.zookeeper = uses.zookeeper;
  info.needs.etcd = uses.etcd;
  info.needs.consul = uses.consul;
  info.needs.remote = uses.remote;
  const auto add_table = [&](db::TableSchema table) {
    if (std::none_of(info.needs.tables.begin(), info.needs.tables.end(), [&](const auto& t) { return t.name == table.name; }))
      info.needs.tables.push_back(std::move(table));
  };
  if (uses.lock_table) add_table(lock_table());
  if (uses.fences) add_table(fence_table());
  compiled->tables = info.needs.tables;
  if (compiled->workload.empty())
    compiled->tables.push_back(info.needs.accounts ? *info.needs.accounts : accounts_table(info.needs.key_index));
  else if (info.needs.accounts)
    throw ScriptError(fmt::format("{}: t_account is the account-bind workload's table; the {} workload's tables are its own", file,
                                  compiled->workload));
  else
    info.needs.account_table = false;

  auto entry = std::make_shared<Entry>();
  entry->info = std::move(info);
  entry->script = file;
  if (!compiled->workload.empty()) entry->workload = compiled->workload;
  // Each strategy shares the compiled script without a count, the entry keeping it: a trial
  // restored in place (sim/restorable.hpp) then moves nothing outside itself.
  entry->make = [compiled = std::shared_ptr<const Compiled>(std::move(compiled))](Env& env, const Params& params) {
    return make_script_strategy(env, params, std::shared_ptr<const Compiled>(std::shared_ptr<const Compiled>(), compiled.get()));
  };
  return entry;
}

}  // namespace models::strategies
