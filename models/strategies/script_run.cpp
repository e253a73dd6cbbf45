// Running a strategy written in Lua: each trial's state with the API installed, a Lua thread per
// request calling the script's bind or handle, and what the call came to.

#include "models/strategies/script_api.hpp"

namespace models::strategies {

int stopping(lua_State* L) {
  const lua_api::Invocation* inv = lua_api::invocation(L);
  lua_pushboolean(L, lua_api::runtime(L).over_budget || (inv != nullptr && inv->fatal));
  return 1;
}

namespace lua_api {

ScriptStrategy::ScriptStrategy(Env& env, Params params, std::shared_ptr<const Compiled> compiled)
    : Strategy(env, std::move(params)), compiled_(std::move(compiled)) {
  rt_.file = compiled_->file;
  rt_.limits = compiled_->limits;
  rt_.stopping = stopping;
  L_ = new_state(rt_);
  lua_State* L = L_.get();
  install_api(L);
  // The parameters in effect, as the script's `params`: its top level already sees them (an
  // assignment to the global `params` there stores these instead of its defaults).
  lua_createtable(L, 0, static_cast<int>(params_.size()));
  for (const auto& [name, value] : params_) {
    const auto kind = compiled_->kinds.find(name);
    lua::push_param(L, value, kind != compiled_->kinds.end() && kind->second == ParamKind::flag);
    lua_setfield(L, -2, name.c_str());
  }
  const int effective = lua_gettop(L);
  if (luaL_loadbufferx(L, compiled_->bytecode.data(), compiled_->bytecode.size(), ("@" + compiled_->file).c_str(), "b") != LUA_OK)
    throw std::runtime_error(lua_tostring(L, -1));
  if (lua::run_with_params(L, rt_, effective) != LUA_OK) throw std::runtime_error(error_text(L, rt_));
  lua_pop(L, 1);
  lua_pushglobaltable(L);
  lua_pushstring(L, compiled_->handler());
  lua_rawget(L, -2);
  bind_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  tables_ = compiled_->tables;
  if (const workloads::Workload* w = env.workload()) tables_.insert(tables_.end(), w->tables.begin(), w->tables.end());
  lua_pop(L, 1);
}

ErrorKind ScriptStrategy::bind(const Request& r, Worker& w) {
  lua_State* L = L_.get();
  Invocation inv{.strategy = this, .request = &r, .worker = &w, .serial = ++serials_};
  // A Lua thread for this call: one a finished call left, or a new one.
  Thread thread;
  if (!idle_.empty()) {
    thread = idle_.back();
    idle_.pop_back();
  } else {
    thread.state = lua_newthread(L);
    thread.ref = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  lua_State* T = thread.state;
  set_invocation(T, &inv);
  lua_rawgeti(T, LUA_REGISTRYINDEX, bind_ref_);
  if (compiled_->workload.empty())
    push_request(T, r);
  else
    push_workload_request(T, r, env_.fields(r));
  int status;
  {
    MemoryCap lua(rt_, true);
    status = lua_pcall(T, 1, 1, 0);
  }
  ErrorKind outcome = ErrorKind::none;
  std::string problem;
  if (!inv.fatal) {
    if (status == LUA_OK)
      outcome = returned(T, problem, w.answer_code);
    else
      outcome = raised(T, problem, w.answer_code);
  }
  lua_settop(T, 0);
  set_invocation(T, nullptr);
  if (inv.fatal || lua_status(T) != LUA_OK)
    luaL_unref(L, LUA_REGISTRYINDEX, thread.ref);
  else
    idle_.push_back(thread);
  if (inv.fatal) std::rethrow_exception(inv.fatal);  // Invocation's end releases nothing a crash keeps
  if (!problem.empty()) {
    observations().note_script_error(fmt::format("{} ({})", problem, who(r, w)));
    if (rt_.over_budget && !stopped_) {
      stopped_ = true;
      observations().note_script_stopped();
      sim::engine().stop();
    }
  }
  return outcome;
}

// ---- bind's outcome ----
void ScriptStrategy::push_request(lua_State* T, const Request& r) {
  lua_createtable(T, 0, 7);
  const std::string id = open_id_of(r.key), device = device_of(r.value);
  lua_pushlstring(T, id.data(), id.size());
  lua_setfield(T, -2, "open_id");
  lua_pushlstring(T, device.data(), device.size());
  lua_setfield(T, -2, "device");
  lua_pushinteger(T, static_cast<lua_Integer>(r.key));
  lua_setfield(T, -2, "key");
  lua_pushinteger(T, static_cast<lua_Integer>(r.value));
  lua_setfield(T, -2, "value");
  lua_pushinteger(T, r.client);
  lua_setfield(T, -2, "client");
  lua_pushinteger(T, static_cast<lua_Integer>(r.operation));
  lua_setfield(T, -2, "op");
  lua_pushinteger(T, r.attempt);
  lua_setfield(T, -2, "attempt");
}

// A Lua workload's request: its fields, the logical operation and the attempt.
void ScriptStrategy::push_workload_request(lua_State* T, const Request& r, const std::vector<std::pair<std::string, db::Value>>& fields) {
  lua_createtable(T, 0, static_cast<int>(fields.size()) + 2);
  for (const auto& [name, value] : fields) {
    if (const auto* n = std::get_if<std::int64_t>(&value))
      lua_pushinteger(T, static_cast<lua_Integer>(*n));
    else
      lua_pushlstring(T, std::get<std::string>(value).data(), std::get<std::string>(value).size());
    lua_setfield(T, -2, name.c_str());
  }
  lua_pushinteger(T, static_cast<lua_Integer>(r.operation));
  lua_setfield(T, -2, "op");
  lua_pushinteger(T, r.attempt);
  lua_setfield(T, -2, "attempt");
}

ErrorKind ScriptStrategy::returned(lua_State* T, std::string& problem, std::string& code) const {
  if (lua_isnil(T, -1)) return ErrorKind::none;
  if (lua_type(T, -1) == LUA_TSTRING) {
    const std::string kind = lua_tostring(T, -1);
    for (int k = static_cast<int>(ErrorKind::timeout); k <= static_cast<int>(ErrorKind::session_expired); ++k)
      if (kind == to_string(static_cast<ErrorKind>(k))) return static_cast<ErrorKind>(k);
    if (std::binary_search(compiled_->outcomes.begin(), compiled_->outcomes.end(), kind)) {
      code = kind;  // an answer of its own, as its `outcomes` declares
      return ErrorKind::business;
    }
  }
  problem = fmt::format("{}: {} returned {}: expected nothing (success), an error kind (timeout, rejected, "
                        "duplicate_key, deadlock, lock_wait_timeout, autoinc_failed, lock_busy, dropped, fenced, internal, "
                        "session_expired) or an answer its `outcomes` lists{}",
                        rt_.file, compiled_->handler(),
                        lua_type(T, -1) == LUA_TSTRING ? "'" + lua::escaped(std::string(lua_tostring(T, -1)).substr(0, 64)) + "'"
                                                       : luaL_typename(T, -1),
                        compiled_->outcomes.empty() ? "" : fmt::format(" ({})", fmt::join(compiled_->outcomes, ", ")));
  return ErrorKind::internal;
}

// An error bind let out: a database or service error ends the attempt as the C++ strategies'
// do; anything else is the script's own error.
ErrorKind ScriptStrategy::raised(lua_State* T, std::string& problem, std::string& code) const {
  if (lua_type(T, -1) == LUA_TTABLE && lua_getmetatable(T, -1) != 0) {
    luaL_getmetatable(T, kErrorMeta);
    const bool ours = lua_rawequal(T, -1, -2) != 0;
    lua_pop(T, 2);
    if (ours) {
      lua_pushstring(T, "code");
      lua_rawget(T, -2);
      const bool number = lua_type(T, -1) == LUA_TNUMBER;
      const lua_Integer number_code = number ? lua_tointeger(T, -1) : 0;
      const std::string name = !number && lua_type(T, -1) == LUA_TSTRING ? lua_tostring(T, -1) : "";
      lua_pop(T, 1);
      // A database error the script let through ends the attempt with it, by the server's code
      // (a MariaDB number, a PostgreSQL SQLSTATE); a statement the script got wrong (a syntax
      // error, a table or column it lacks, a value of the wrong type) is the script's error.
      if (number) {
        if (number_code == 1062) return ErrorKind::duplicate_key;
        if (number_code == 1213) return ErrorKind::deadlock;
        if (number_code == 1205) return ErrorKind::lock_wait_timeout;
        if (number_code == 1467) return ErrorKind::autoinc_failed;
        if (number_code == static_cast<lua_Integer>(db::Code::connection_timeout)) return ErrorKind::timeout;  // the pool's
        if (number_code != 1064 && number_code != 1146 && number_code != 1054 && number_code != 1366) {
          code = std::to_string(number_code);
          return ErrorKind::server_error;
        }
      } else if (name == "23505") {
        return ErrorKind::duplicate_key;
      } else if (name == "40P01") {
        return ErrorKind::deadlock;
      } else if (name == "55P03") {
        return ErrorKind::lock_wait_timeout;
      } else if (name == "timeout" || name == "08006" || name == "57014") {
        return ErrorKind::timeout;  // a call, the pool or a statement timed out
      } else if (name == "keeper" || name == "redis") {
        return ErrorKind::internal;
      } else if (name.size() == 5 && name != "42601" && name != "42P01" && name != "42703" && name != "42883" && name != "0A000" &&
                 name != "22P02") {
        code = name;
        return ErrorKind::server_error;
      }
    }
  }
  problem = error_text(T, rt_);
  return ErrorKind::internal;
}

/// Sets the API's tables and functions in `L` (each works only inside bind).
void ScriptStrategy::install_api(lua_State* L) {
  const auto table = [&](const char* name, std::initializer_list<std::pair<const char*, lua_CFunction>> functions) {
    lua_createtable(L, 0, static_cast<int>(functions.size()));
    for (const auto& [key, f] : functions) {
      lua_pushcfunction(L, f);
      lua_setfield(L, -2, key);
    }
    if (name != nullptr) lua_setglobal(L, name);
  };
  table("db", {{"query", api<db_query>},
               {"exec", api<db_exec>},
               {"begin", api<db_begin>},
               {"commit", api<db_commit>},
               {"rollback", api<db_rollback>},
               {"connect", api<db_connect>},
               {"close", api<db_close>}});
  table("redis", {{"call", api<redis_call>}, {"script", api<redis_script>}});
  table("locks", {{"redis", api<lock_redis>},
                  {"redisson", api<lock_redisson>},
                  {"redlock", api<lock_redlock>},
                  {"zookeeper", api<lock_zookeeper>},
                  {"etcd", api<lock_etcd>},
                  {"consul", api<lock_consul>},
                  {"zookeeper_state", api<zookeeper_state>},
                  {"table", api<lock_table>},
                  {"pg_advisory", api<lock_pg_advisory>},
                  {"get_lock", api<lock_get_lock>},
                  {"local_mutex", api<lock_local>}});
  table("remote", {{"create", api<remote_create>}});
  for (const auto& [name, f] : std::initializer_list<std::pair<const char*, lua_CFunction>>{
           {"work", api<do_work>}, {"sleep", api<do_sleep>}, {"now_ms", api<now_ms>}, {"unique", api<unique>}, {"hold", api<hold>}, {"hold_until", api<hold_until>},
           {"effect", api<effect>}}) {
    lua_pushcfunction(L, f);
    lua_setglobal(L, name);
  }
  lua_getglobal(L, LUA_MATHLIBNAME);
  lua_pushcfunction(L, api<random>);
  lua_setfield(L, -2, "random");
  lua_pop(L, 1);
  luaL_newmetatable(L, kConnectionMeta);
  table(nullptr, {{"query", api<conn_query>},
                  {"exec", api<conn_exec>},
                  {"begin", api<conn_begin>},
                  {"commit", api<conn_commit>},
                  {"rollback", api<conn_rollback>},
                  {"close", api<conn_close>}});
  lua_setfield(L, -2, "__index");
  lua_pushstring(L, "connection");
  lua_setfield(L, -2, "__name");
  lua_pop(L, 1);
  luaL_newmetatable(L, kLockMeta);
  lua_pushcfunction(L, api<lock_index>);
  lua_setfield(L, -2, "__index");
  lua_pushstring(L, "lock");
  lua_setfield(L, -2, "__name");
  lua_pop(L, 1);
  // The lock handle's methods, found by lock_index.
  table(nullptr, {{"release", api<lock_release>}, {"release_with_del", api<lock_release_with_del>}, {"rejected", api<lock_rejected>}});
  lua_setfield(L, LUA_REGISTRYINDEX, kLockMethods);
}

}  // namespace lua_api

void install_api(lua_State* L) { lua_api::ScriptStrategy::install_api(L); }

std::unique_ptr<Strategy> make_script_strategy(Env& env, const Params& params, std::shared_ptr<const Compiled> compiled) {
  return std::make_unique<lua_api::ScriptStrategy>(env, params, std::move(compiled));
}

}  // namespace models::strategies
