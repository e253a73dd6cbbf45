// Running a strategy written in Lua: each trial's state with the API installed, a Lua thread per
// request calling the script's bind or handle, and the API's functions, which call the same
// clients the C++ strategies use.

#include "models/strategies/script_run.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <lua.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "models/db/ddl.hpp"
#include "models/db/postgres/sql.hpp"
#include "models/db/sql.hpp"
#include "models/lua/sandbox.hpp"
#include "sim/process.hpp"

namespace models::strategies {
namespace {

using lua::error_text;
using lua::fatal_sentinel;
using lua::kErrorMeta;
using lua::MemoryCap;
using lua::Runtime;
using lua::runtime;
using lua::StatePtr;

// How Lua code and this runtime meet (Lua's C API, lua.org/manual/5.4/manual.html#4):
//
// - Lua raises errors with longjmp. A C function below never has a C++ object alive when it
//   calls a Lua function that can raise: its body runs in a try block, and the error is raised
//   after the block (`api<>`). Tables from scripts are read raw (no metamethod can run).
// - C++ exceptions never cross Lua frames: a database error, a timeout, becomes a Lua error
//   value (a table with `code` and `message`); anything else (the process killed, an
//   explorer's divergence) is kept aside and its sentinel raised, which no pcall of the script
//   catches, and the exception is thrown again once the Lua call has unwound.
// - Memory is capped only while Lua code runs: the runtime's own pushes never fail on the cap
//   (and an error there would have no Lua frame to go to).

constexpr const char* kLockMeta = "locksim.lock";
constexpr const char* kConnectionMeta = "locksim.connection";
constexpr const char* kLockMethods = "locksim.lock_methods";

class ScriptStrategy;
struct Invocation;


// A script's misuse of a function (a bad argument, a released lock): a Lua error with the
// script's position.
struct Misuse {
  std::string message;
};

// A statement the server would refuse for the script's own mistake: a table or column that
// does not exist (1146, 1054; PostgreSQL's 42P01, 42703), a value the column cannot take (1366,
// 22P02), as the engine numbers and words it.
struct StatementMisuse {
  int code;
  std::string sqlstate;
  std::string message;
  bool postgresql = false;
};

// Checks `p` against the world's tables and converts `args` to the types of their columns, as
// MySQL converts a number bound to a VARCHAR. Throws StatementMisuse.
void check_statement(const db::sql::Prepared& p, std::vector<db::Value>& args, const std::vector<db::TableSchema>& tables,
                     db::Engine engine) {
  using K = db::Statement::Kind;
  const db::Statement& st = p.statement;
  // PostgreSQL reads a bound text as UTF-8 without NUL bytes, as it reads a statement's text.
  if (engine == db::Engine::postgresql)
    for (const db::Value& arg : args)
      if (const auto* str = std::get_if<std::string>(&arg))
        for (std::size_t at = 0; at < str->size();) {
          const std::size_t n = (*str)[at] == '\0' ? 0 : db::sql::utf8_length(std::string_view(*str).substr(at));
          if (n == 0)
            throw StatementMisuse{1366, "22021",
                                  fmt::format("invalid byte sequence for encoding \"UTF8\": 0x{:02x}", static_cast<unsigned char>((*str)[at])),
                                  true};
          at += n;
        }
  if (st.kind == K::begin || st.kind == K::commit || st.kind == K::rollback || st.kind == K::set_isolation ||
      st.kind == K::set_timeout || st.kind == K::advisory || st.kind == K::savepoint)  // on no table (an advisory key is a bigint: the engine checks it)
    return;
  if (st.table.empty()) return;  // a statement on no table (SELECT 1 + 1 AS n, a SET): the engine answers it as a session's
  const bool pg = engine == db::Engine::postgresql;
  auto t = std::find_if(tables.begin(), tables.end(), [&](const db::TableSchema& x) { return x.name == st.table; });
  if (t == tables.end())
    throw StatementMisuse{1146, "42P01",
                          pg ? fmt::format("relation \"{}\" does not exist", st.table) : fmt::format("Table '{}' doesn't exist", st.table), pg};
  const auto text_column = [&](const std::string& column) {  // nullopt: no such column
    if (column == "id" && t->has_column(column)) return std::optional<bool>(false);
    if (column == t->key_column) return std::optional<bool>(t->key_text);
    auto c = t->columns.find(column);
    if (c == t->columns.end()) return std::optional<bool>();
    return std::optional<bool>(std::holds_alternative<std::string>(c->second));
  };
  const auto check = [&](const std::string& column) {
    if (!text_column(column))
      throw StatementMisuse{1054, "42703",
                            pg ? fmt::format("column \"{}\" does not exist", column) : fmt::format("Unknown column '{}' in 'field list'", column), pg};
  };
  for (const auto& c : st.where) check(c.column);
  for (const auto& [column, value] : st.values) check(column);
  for (const auto& [column, value] : st.on_update) check(column);
  // A select list's computed column (`v - 1 AS w`) is named by its alias: the columns it reads are checked.
  const auto& computed = st.more().computed;
  std::vector<std::string> read;
  for (const auto& [name, e] : computed) db::columns_of(e, read);
  for (const auto& column : read) check(column);
  for (const auto& column : p.columns)
    if (std::none_of(computed.begin(), computed.end(), [&](const auto& c) { return c.first == column; })) check(column);
  for (std::size_t i = 0; i < args.size() && i < p.params.size(); ++i) {
    const db::sql::Param& param = p.params[i];
    const std::string& column = param.in == db::sql::Param::In::where ? st.where.at(param.where_index).column : param.column;
    const std::optional<bool> text = text_column(column);
    if (!text) continue;
    if (*text) {
      if (const auto* n = std::get_if<std::int64_t>(&args[i])) args[i] = std::to_string(*n);
    } else if (const auto* str = std::get_if<std::string>(&args[i])) {
      std::int64_t n = 0;
      const auto [end, err] = std::from_chars(str->data(), str->data() + str->size(), n);
      if (err != std::errc() || end != str->data() + str->size() || str->empty())
        throw StatementMisuse{1366, "22P02",
                              pg ? fmt::format("invalid input syntax for type bigint: \"{}\"", *str)
                                 : fmt::format("Incorrect integer value: '{}' for column '{}'", *str, column), pg};
      args[i] = n;
    }
  }
}

// ---- Running it ---------------------------------------------------------------------------

// A connection or a lock an invocation holds; given back, in reverse order, when bind ends.
struct Resource {
  std::optional<db::Connection> connection{};
  std::optional<LockGuard> lock{};
  std::string redis_key{};        // a lock of locks.redis: its key, for release_with_del
  std::size_t on_connection = 0;  // a lock-table or advisory lock: 1 + the index of its connection; 0: none
  /// A transaction-level advisory lock: once the server no longer grants it (its transaction
  /// ended), its hold ends too, as the holder's code would know.
  bool ends_with_transaction = false;
};

// One bind call: who it acts for, what it holds.
struct Invocation {
  ScriptStrategy* strategy = nullptr;
  const Request* request = nullptr;
  Worker* worker = nullptr;
  std::uint64_t serial = 0;
  std::vector<std::unique_ptr<Resource>> resources{};
  std::optional<std::size_t> default_connection{};
  std::exception_ptr fatal{};  // a C++ exception to rethrow once the Lua call has unwound

  ~Invocation() {
    while (!resources.empty()) resources.pop_back();  // the later first, as C++ scopes end
  }
};

Invocation* invocation(lua_State* L) { return *static_cast<Invocation**>(lua_getextraspace(L)); }
void set_invocation(lua_State* L, Invocation* inv) { *static_cast<Invocation**>(lua_getextraspace(L)) = inv; }

}  // namespace

int stopping(lua_State* L) {
  const Invocation* inv = invocation(L);
  lua_pushboolean(L, runtime(L).over_budget || (inv != nullptr && inv->fatal));
  return 1;
}

namespace {

// Userdata of a lock handle or a connection: which invocation's resource.
struct Ref {
  std::uint64_t serial = 0;
  std::size_t index = 0;
  std::int64_t token = 0;
};

// Pushes a database or service error value: {code = ..., message = ..., where = "file:line:"}.
template <class Code>
void push_error(lua_State* L, Code code, const std::string& message) {
  lua_createtable(L, 0, 3);
  if constexpr (std::is_same_v<Code, int>)
    lua_pushinteger(L, code);
  else
    lua_pushstring(L, code);
  lua_setfield(L, -2, "code");
  std::string_view text = message;  // "1064 You have an error...": the code is a field of its own
  if constexpr (std::is_same_v<Code, int>)
    if (const std::string number = std::to_string(code) + " "; text.starts_with(number)) text.remove_prefix(number.size());
  lua_pushlstring(L, text.data(), text.size());
  lua_setfield(L, -2, "message");
  luaL_where(L, 1);
  lua_setfield(L, -2, "where");
  luaL_setmetatable(L, kErrorMeta);
}

using Body = int (*)(lua_State*, Invocation&);

// A function of the script's API: runs `body` inside bind, turns what it throws into a Lua
// error, and raises that error once no C++ object is alive.
template <Body body>
int api(lua_State* L) {
  Invocation* inv = invocation(L);
  if (inv == nullptr) return luaL_error(L, "this function works only inside bind(req) or handle(req), while a request is handled");
  int results = 0;
  bool positioned = false;  // a message to prefix with the script's position
  {
    MemoryCap cpp(runtime(L), false);
    try {
      results = body(L, *inv);
    } catch (const Misuse& e) {
      lua_pushlstring(L, e.message.data(), e.message.size());
      results = -1, positioned = true;
    } catch (const sim::UsageError& e) {
      std::string why = e.what();
      if (const auto colon = why.find(": "); (why.starts_with("models::") || why.starts_with("strategies::")) && colon != std::string::npos)
        why = why.substr(colon + 2);
      if (why.find("this world has no") != std::string::npos)
        why += " (a script declares what it uses where its source does not show it: uses = { \"redis\" }, ...)";
      lua_pushlstring(L, why.data(), why.size());
      results = -1, positioned = true;
    } catch (const db::sql::Error& e) {
      push_error(L, 1064, e.what());
      results = -1;
    } catch (const db::pg::Error& e) {  // PostgreSQL's 42601 or 0A000: {code = "42601", ...}
      push_error(L, e.sqlstate().c_str(), e.message() + " at position " + std::to_string(e.position()));
      results = -1;
    } catch (const StatementMisuse& e) {
      if (e.postgresql)
        push_error(L, e.sqlstate.c_str(), e.message);  // {code = "42703", ...}, as the server's own errors
      else
        push_error(L, e.code, e.message);
      results = -1;
    } catch (const db::SqlError& e) {
      if (e.engine() == db::Engine::postgresql)
        push_error(L, e.server_code().c_str(), e.what());  // PostgreSQL's SQLSTATE: {code = "23505", ...}
      else
        push_error(L, static_cast<int>(e.code()), e.what());  // MariaDB's number
      results = -1;
    } catch (const sim::Timeout&) {
      push_error(L, "timeout", "no answer within the timeout");
      results = -1;
    } catch (const zk::KeeperError& e) {
      push_error(L, "keeper", e.what());
      results = -1;
    } catch (const consul::Error& e) {
      push_error(L, "consul", e.what());
      results = -1;
    } catch (...) {  // sim::Killed, an explorer's divergence: thrown again once Lua has unwound
      inv->fatal = std::current_exception();
      lua_pushlightuserdata(L, &fatal_sentinel);
      results = -1;
    }
  }
  if (results >= 0) return results;
  if (positioned) {
    luaL_where(L, 1);
    lua_insert(L, -2);
    lua_concat(L, 2);
  }
  return lua_error(L);
}

// Argument readers: they throw Misuse, which api<> turns into a positioned Lua error.
std::string arg_text(lua_State* L, int i, const char* what) {
  const int t = lua_type(L, i);
  if (t != LUA_TSTRING && t != LUA_TNUMBER)
    throw Misuse{fmt::format("{}: expected a string, got {}", what, lua_typename(L, t))};
  std::size_t n = 0;
  const char* s = lua_tolstring(L, i, &n);
  return {s, n};
}

db::Value arg_value(lua_State* L, int i, int shown) {
  switch (lua_type(L, i)) {
    case LUA_TNUMBER:
      if (lua_isinteger(L, i)) return static_cast<std::int64_t>(lua_tointeger(L, i));
      if (const double d = lua_tonumber(L, i); std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18)
        return static_cast<std::int64_t>(d);
      throw Misuse{fmt::format("argument {}: expected an integer or a string (the model's columns hold no fractions)", shown)};
    case LUA_TSTRING: {
      std::size_t n = 0;
      const char* s = lua_tolstring(L, i, &n);
      return std::string(s, n);
    }
    case LUA_TBOOLEAN: return static_cast<std::int64_t>(lua_toboolean(L, i));
    default:
      throw Misuse{fmt::format("argument {}: expected an integer or a string, got {}", shown, luaL_typename(L, i))};
  }
}

// An option of a table argument, read raw; nil (or no table) gives nothing.
std::optional<double> opt_number(lua_State* L, int table, const char* name) {
  if (lua_type(L, table) != LUA_TTABLE) return std::nullopt;
  lua_pushstring(L, name);
  const int t = lua_rawget(L, table);
  std::optional<double> out;
  if (t == LUA_TNUMBER) out = lua_tonumber(L, -1);
  lua_pop(L, 1);
  if (t != LUA_TNUMBER && t != LUA_TNIL) throw Misuse{fmt::format("option {}: expected a number, got {}", name, lua_typename(L, t))};
  if (out && (!std::isfinite(*out) || *out < 0 || *out > 1e12))
    throw Misuse{fmt::format("option {}: expected a number from 0 to 1e12", name)};
  return out;
}

bool opt_flag(lua_State* L, int table, const char* name) {
  if (lua_type(L, table) != LUA_TTABLE) return false;
  lua_pushstring(L, name);
  const int t = lua_rawget(L, table);
  const bool on = lua_toboolean(L, -1) != 0;
  lua_pop(L, 1);
  if (t != LUA_TBOOLEAN && t != LUA_TNIL) throw Misuse{fmt::format("option {}: expected true or false", name)};
  return on;
}

void check_options(lua_State* L, int table, const char* function) {
  const int t = lua_type(L, table);
  if (t != LUA_TTABLE && t != LUA_TNIL && t != LUA_TNONE)
    throw Misuse{fmt::format("{}: expected a table of options, got {}", function, lua_typename(L, t))};
}

sim::Duration ms(double value) {
  return std::chrono::duration_cast<sim::Duration>(std::chrono::duration<double, std::milli>(value));
}

// A duration a script gives, in ms, checked as a scenario file's are: a finite number from 0 (above 0
// where `above_zero`) to 1e12 ms, about 31 years. Past that a TTL would overflow the simulated clock.
sim::Duration script_ms(double value, const std::string& what, bool above_zero = false) {
  if (!std::isfinite(value) || value < 0 || (above_zero && value == 0) || value > 1e12)
    throw Misuse{fmt::format("{}: expected milliseconds {} 0 to 1e12, got {}", what, above_zero ? "above" : "from", value)};
  return ms(value);
}

// The strategy: its Lua state, and the API's bodies (which reach Strategy's helpers).
class ScriptStrategy : public Strategy {
 public:
  ScriptStrategy(Env& env, Params params, std::shared_ptr<const Compiled> compiled)
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

  std::uint64_t bytes_held() const override { return rt_.used; }  // the Lua state, as its allocator counts it

 protected:
  ErrorKind bind(const Request& r, Worker& w) override {
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

 private:
  // ---- bind's outcome ----
  static void push_request(lua_State* T, const Request& r) {
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
  static void push_workload_request(lua_State* T, const Request& r, const std::vector<std::pair<std::string, db::Value>>& fields) {
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

  ErrorKind returned(lua_State* T, std::string& problem, std::string& code) const {
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
  ErrorKind raised(lua_State* T, std::string& problem, std::string& code) const {
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

  // ---- the API ----
 public:
  /// Sets the API's tables and functions in `L` (each works only inside bind).
  static void install_api(lua_State* L) {
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

 private:

  // Connections.
  db::Connection& default_connection(Invocation& inv) {
    if (!inv.default_connection) inv.default_connection = add_connection(inv);
    return *inv.resources[*inv.default_connection]->connection;
  }
  std::size_t add_connection(Invocation& inv) {
    auto res = std::make_unique<Resource>();
    res->connection = connect(*inv.request, *inv.worker);
    inv.resources.push_back(std::move(res));
    return inv.resources.size() - 1;
  }
  static Resource& resource_of(lua_State* L, Invocation& inv, int i, const char* meta, const char* what) {
    auto* ref = static_cast<Ref*>(luaL_testudata(L, i, meta));
    if (ref == nullptr) throw Misuse{fmt::format("expected a {} (call it as x:method(...)), got {}", what, luaL_typename(L, i))};
    if (ref->serial != inv.serial) throw Misuse{fmt::format("this {} belongs to another request's bind: use it in its own", what)};
    return *inv.resources.at(ref->index);
  }
  static db::Connection& connection_of(lua_State* L, Invocation& inv) {
    Resource& res = resource_of(L, inv, 1, kConnectionMeta, "connection");
    if (!res.connection) throw Misuse{"this connection was closed"};
    return *res.connection;
  }
  void close_connection(Invocation& inv, std::size_t index) {
    for (const auto& res : inv.resources)
      if (res->lock && res->lock->held() && res->on_connection == index + 1)
        throw Misuse{"a lock-table lock taken on this connection is still held: release it first"};
    inv.resources[index]->connection.reset();
  }

  // The statement in the dialect of the connection's server: MySQL's with `?`s, PostgreSQL's
  // with `$1`, `$2`, ...
  const db::sql::Prepared& prepared(const std::string& text, db::Engine engine) {
    const auto key = std::make_pair(engine, text);
    auto it = statements_.find(key);
    if (it == statements_.end())
      it = statements_.emplace(key, db::prepare_in(engine, text)).first;
    return it->second;
  }

  // Runs the statement at `first` with the arguments after it on `c`. Writes made while locks
  // are held are critical-section steps of each (the lock machinery's own tables aside).
  static int run(lua_State* L, Invocation& inv, db::Connection& c, int first, bool rows) {
    ScriptStrategy& self = *inv.strategy;
    const std::string text = arg_text(L, first, "the statement");
    const db::sql::Prepared& p = self.prepared(text, c.engine());
    if (p.create) throw Misuse{"CREATE TABLE goes in the script's `tables`, not in bind"};
    std::vector<db::Value> args;
    for (int i = first + 1; i <= lua_gettop(L); ++i)  // nil binds NULL
      args.push_back(lua_isnil(L, i) ? db::Value{db::Null{}} : arg_value(L, i, i - first));
    check_statement(p, args, self.tables_, c.engine());
    const db::Statement st = db::sql::bind(p, args);
    using K = db::Statement::Kind;
    const bool write = (st.kind == K::insert || st.kind == K::insert_if_absent || st.kind == K::update || st.kind == K::remove) &&
                       st.table != kLocks && st.table != kFences;
    std::vector<LockGuard*> held;
    if (write)
      for (const auto& res : inv.resources)
        if (res->lock && res->lock->held()) held.push_back(&*res->lock);
    for (LockGuard* g : held) g->hold().step();
    if (st.kind == K::commit || st.kind == K::rollback) end_transaction_holds(inv, &c);
    const TransactionHolds ended(inv);
    const db::Result result = c.execute(st);
    for (LockGuard* g : held) g->hold().wrote();
    if (!rows) {
      lua_pushinteger(L, result.affected);
      lua_pushinteger(L, result.insert_id);
      return 2;
    }
    lua_createtable(L, static_cast<int>(result.rows.size()), 0);
    lua_Integer n = 0;
    for (const db::Row& row : result.rows) {
      lua_createtable(L, 0, static_cast<int>(p.columns.empty() ? row.values.size() : p.columns.size()));
      const auto push = [&](const std::string& column, const db::Value& v) {
        if (db::is_null(v)) return;  // NULL reads as nil: the field is absent
        if (const auto* i = std::get_if<std::int64_t>(&v))
          lua_pushinteger(L, *i);
        else
          lua_pushlstring(L, std::get<std::string>(v).data(), std::get<std::string>(v).size());
        lua_setfield(L, -2, column.c_str());
      };
      if (p.columns.empty()) {
        for (const auto& [column, v] : row.values) push(column, v);
      } else {
        for (const auto& column : p.columns)
          if (const auto v = row.values.find(column)) push(column, *v);
      }
      lua_rawseti(L, -2, ++n);
    }
    return 1;
  }
  static int simple(Invocation& inv, db::Connection& c, db::Statement::Kind kind) {
    if (kind == db::Statement::Kind::commit || kind == db::Statement::Kind::rollback) end_transaction_holds(inv, &c);
    const TransactionHolds ended(inv);
    c.execute(db::Statement{.kind = kind});
    return 0;
  }

  // After a statement, failed or not: the holds of transaction-level advisory locks whose
  // transaction ended (COMMIT, ROLLBACK, an error that aborted it, an autocommit statement)
  // end with it. Before a COMMIT or ROLLBACK on `ending`, its own end at once: the holder
  // stops believing when it sends the statement that ends them, as with any unlock.
  struct TransactionHolds {
    Invocation& inv;
    explicit TransactionHolds(Invocation& i) : inv(i) {}
    TransactionHolds(const TransactionHolds&) = delete;
    TransactionHolds& operator=(const TransactionHolds&) = delete;
    ~TransactionHolds() { end_transaction_holds(inv); }
  };
  static void end_transaction_holds(Invocation& inv, const db::Connection* ending = nullptr) {
    for (const auto& res : inv.resources) {
      if (!res->lock || !res->lock->held() || !res->ends_with_transaction) continue;
      const bool on_ending = ending != nullptr && res->on_connection != 0 &&
                             inv.resources[res->on_connection - 1]->connection && &*inv.resources[res->on_connection - 1]->connection == ending;
      if (on_ending || !res->lock->hold().granted()) res->lock->unlock();
    }
  }

  static int db_query(lua_State* L, Invocation& inv) { return run(L, inv, inv.strategy->default_connection(inv), 1, true); }
  static int db_exec(lua_State* L, Invocation& inv) { return run(L, inv, inv.strategy->default_connection(inv), 1, false); }
  static int db_begin(lua_State*, Invocation& inv) {
    return simple(inv, inv.strategy->default_connection(inv), db::Statement::Kind::begin);
  }
  static int db_commit(lua_State*, Invocation& inv) {
    return simple(inv, inv.strategy->default_connection(inv), db::Statement::Kind::commit);
  }
  static int db_rollback(lua_State*, Invocation& inv) {
    return simple(inv, inv.strategy->default_connection(inv), db::Statement::Kind::rollback);
  }
  static int db_close(lua_State*, Invocation& inv) {
    if (!inv.default_connection) return 0;
    inv.strategy->close_connection(inv, *inv.default_connection);
    inv.default_connection.reset();
    return 0;
  }
  static int db_connect(lua_State* L, Invocation& inv) {
    const std::size_t index = inv.strategy->add_connection(inv);
    auto* ref = static_cast<Ref*>(lua_newuserdatauv(L, sizeof(Ref), 0));
    *ref = Ref{inv.serial, index, 0};
    luaL_setmetatable(L, kConnectionMeta);
    return 1;
  }
  static int conn_query(lua_State* L, Invocation& inv) { return run(L, inv, connection_of(L, inv), 2, true); }
  static int conn_exec(lua_State* L, Invocation& inv) { return run(L, inv, connection_of(L, inv), 2, false); }
  static int conn_begin(lua_State* L, Invocation& inv) { return simple(inv, connection_of(L, inv), db::Statement::Kind::begin); }
  static int conn_commit(lua_State* L, Invocation& inv) { return simple(inv, connection_of(L, inv), db::Statement::Kind::commit); }
  static int conn_rollback(lua_State* L, Invocation& inv) {
    return simple(inv, connection_of(L, inv), db::Statement::Kind::rollback);
  }
  static int conn_close(lua_State* L, Invocation& inv) {
    resource_of(L, inv, 1, kConnectionMeta, "connection");
    const std::size_t index = static_cast<Ref*>(lua_touserdata(L, 1))->index;
    if (inv.resources[index]->connection) inv.strategy->close_connection(inv, index);
    if (inv.default_connection == index) inv.default_connection.reset();
    return 0;
  }

  // Redis.
  static redis::Reply send(Invocation& inv, const redis::Command& command) {
    return inv.strategy->env_.redis(*inv.worker, command);
  }
  static int push_reply(lua_State* L, const redis::Reply& reply, bool ok_as_one = false) {
    switch (reply.kind) {
      case redis::Reply::Kind::ok:
        if (ok_as_one)
          lua_pushinteger(L, 1);
        else
          lua_pushliteral(L, "OK");
        return 1;
      case redis::Reply::Kind::nil:
        if (ok_as_one)
          lua_pushinteger(L, 0);
        else
          lua_pushnil(L);
        return 1;
      case redis::Reply::Kind::integer: lua_pushinteger(L, reply.integer); return 1;
      case redis::Reply::Kind::bulk: lua_pushlstring(L, reply.text.data(), reply.text.size()); return 1;
      case redis::Reply::Kind::error: push_error(L, "redis", reply.text); return -1;
    }
    return 0;
  }
  static int redis_call(lua_State* L, Invocation& inv) {
    std::string name = arg_text(L, 1, "the command");
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    const int n = lua_gettop(L);
    const auto want = [&](int args, const char* shape) {
      if (n - 1 != args) throw Misuse{fmt::format("redis.call: {} takes {}", name, shape)};
    };
    const auto integer = [&](int i, bool signed_ = false) -> std::int64_t {
      const std::int64_t least = signed_ ? std::numeric_limits<std::int64_t>::min() : 0;
      const db::Value v = arg_value(L, i, i - 1);
      if (const auto* x = std::get_if<std::int64_t>(&v); x != nullptr && *x >= least) return *x;
      if (const auto* s = std::get_if<std::string>(&v)) {
        char* end = nullptr;
        errno = 0;
        const long long x = std::strtoll(s->c_str(), &end, 10);
        if (!s->empty() && *end == '\0' && errno == 0 && x >= least) return x;
      }
      throw Misuse{fmt::format("redis.call: {}: argument {}: expected a whole number{}", name, i - 1, signed_ ? "" : " of at least 0")};
    };
    if (name == "GET") {
      want(1, "a key");
      return push_reply(L, send(inv, redis::Command::get(arg_text(L, 2, "the key"))));
    }
    if (name == "DEL") {
      want(1, "a key");
      return push_reply(L, send(inv, redis::Command::del(arg_text(L, 2, "the key"))));
    }
    if (name == "INCR") {
      want(1, "a key");
      return push_reply(L, send(inv, redis::Command::incr(arg_text(L, 2, "the key"))));
    }
    if (name == "PTTL") {
      want(1, "a key");
      return push_reply(L, send(inv, redis::Command::pttl(arg_text(L, 2, "the key"))));
    }
    if (name == "PEXPIRE" || name == "EXPIRE") {
      want(2, "a key and a time");
      // 0 or a negative time deletes the key at once, as on Redis.
      const std::int64_t t = std::max<std::int64_t>(integer(3, true), 0);
      const sim::Duration ttl = script_ms(name == "EXPIRE" ? static_cast<double>(t) * 1000.0 : static_cast<double>(t), "redis.call: " + name);
      return push_reply(L, send(inv, redis::Command::pexpire(arg_text(L, 2, "the key"), ttl)));
    }
    if (name == "SETNX") {
      want(2, "a key and a value");
      return push_reply(L, send(inv, redis::Command::set_nx_px(arg_text(L, 2, "the key"), arg_text(L, 3, "the value"), {})), true);
    }
    if (name == "SET") {
      if (n < 3) throw Misuse{"redis.call: SET takes a key, a value, then NX, XX, PX ms or EX s"};
      redis::Command c = redis::Command::set(arg_text(L, 2, "the key"), arg_text(L, 3, "the value"));
      for (int i = 4; i <= n; ++i) {
        std::string option = arg_text(L, i, "an option of SET");
        std::transform(option.begin(), option.end(), option.begin(), [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
        if (option == "NX") {
          c.nx = true;
        } else if (option == "XX") {
          c.xx = true;
        } else if ((option == "PX" || option == "EX") && i < n) {
          const std::int64_t t = integer(++i);
          if (t == 0) throw Misuse{"redis.call: SET: invalid expire time (0)"};
          c.ttl = script_ms(option == "EX" ? static_cast<double>(t) * 1000.0 : static_cast<double>(t), "redis.call: SET " + option);
        } else {
          throw Misuse{fmt::format("redis.call: SET: expected NX, XX, PX ms or EX s, got {}", option)};
        }
      }
      return push_reply(L, send(inv, c));
    }
    throw Misuse{fmt::format("redis.call: the model runs GET, SET, SETNX, DEL, PEXPIRE, EXPIRE, PTTL and INCR, not {} "
                             "(redis.script runs the atomic scripts)",
                             name)};
  }
  static int redis_script(lua_State* L, Invocation& inv) {
    const std::string name = arg_text(L, 1, "the script's name");
    const int n = lua_gettop(L);
    if (name == "compare_and_delete") {
      if (n != 3) throw Misuse{"redis.script: compare_and_delete takes a key and a value"};
      return push_reply(L, send(inv, redis::Command::cas_del(arg_text(L, 2, "the key"), arg_text(L, 3, "the value"))));
    }
    if (name == "compare_and_pexpire") {
      if (n != 4) throw Misuse{"redis.script: compare_and_pexpire takes a key, a value and milliseconds"};
      const db::Value t = arg_value(L, 4, 3);
      const auto* x = std::get_if<std::int64_t>(&t);
      if (x == nullptr || *x <= 0) throw Misuse{"redis.script: compare_and_pexpire: expected milliseconds above 0"};
      const sim::Duration ttl = script_ms(static_cast<double>(*x), "redis.script: compare_and_pexpire", true);
      return push_reply(L, send(inv, redis::Command::cas_pexpire(arg_text(L, 2, "the key"), arg_text(L, 3, "the value"), ttl)));
    }
    throw Misuse{fmt::format("redis.script: the model's scripts are compare_and_delete and compare_and_pexpire, not {}", name)};
  }

  // Locks.
  static int push_lock(lua_State* L, Invocation& inv, std::optional<LockGuard> guard, std::string redis_key = {},
                       std::size_t on_connection = 0) {
    if (!guard) {
      lua_pushnil(L);
      return 1;
    }
    auto res = std::make_unique<Resource>();
    const std::int64_t token = guard->token();
    res->lock.emplace(std::move(*guard));
    res->redis_key = std::move(redis_key);
    res->on_connection = on_connection;
    inv.resources.push_back(std::move(res));
    auto* ref = static_cast<Ref*>(lua_newuserdatauv(L, sizeof(Ref), 0));
    *ref = Ref{inv.serial, inv.resources.size() - 1, token};
    luaL_setmetatable(L, kLockMeta);
    return 1;
  }
  LockClients clients(Invocation& inv) { return locks(*inv.request, *inv.worker); }

  static int lock_redis(lua_State* L, Invocation& inv) {
    const std::string key = arg_text(L, 1, "locks.redis: the key");
    check_options(L, 2, "locks.redis");
    RedisLockOptions o{.unlock = RedisUnlock::compare_and_delete};
    if (auto ttl = opt_number(L, 2, "ttl_ms")) o.ttl = ms(*ttl);
    o.expire_after = opt_flag(L, 2, "expire_after");
    if (o.expire_after && !o.ttl) throw Misuse{"locks.redis: expire_after needs ttl_ms"};
    if (auto tries = opt_number(L, 2, "tries")) o.tries = static_cast<int>(std::min(*tries, 1e6));
    if (auto wait = opt_number(L, 2, "wait_ms")) o.wait = ms(*wait);
    if (auto pause = opt_number(L, 2, "pause_ms")) o.pause = ms(*pause);
    if (lua_type(L, 2) == LUA_TTABLE) {
      lua_pushstring(L, "unlock");
      const int t = lua_rawget(L, 2);
      const std::string how = t == LUA_TSTRING ? lua_tostring(L, -1) : "";
      lua_pop(L, 1);
      if (how == "del")
        o.unlock = RedisUnlock::del;
      else if (t != LUA_TNIL && how != "compare_and_delete")
        throw Misuse{"locks.redis: option unlock: expected \"compare_and_delete\" (the default) or \"del\""};
    }
    return push_lock(L, inv, inv.strategy->clients(inv).redis(key, o), key);
  }
  static int lock_redisson(lua_State* L, Invocation& inv) {
    const std::string key = arg_text(L, 1, "locks.redisson: the key");
    check_options(L, 2, "locks.redisson");
    const RedissonOptions o{.lease = ms(opt_number(L, 2, "lease_ms").value_or(30000)),
                            .wait = ms(opt_number(L, 2, "wait_ms").value_or(0)),
                            .pause = ms(opt_number(L, 2, "pause_ms").value_or(100))};
    return push_lock(L, inv, inv.strategy->clients(inv).redisson(key, o));
  }
  static int lock_redlock(lua_State* L, Invocation& inv) {
    const std::string key = arg_text(L, 1, "locks.redlock: the key");
    check_options(L, 2, "locks.redlock");
    redis::RedlockConfig c;
    if (auto ttl = opt_number(L, 2, "ttl_ms")) c.ttl = ms(*ttl);
    if (auto t = opt_number(L, 2, "node_timeout_ms")) c.node_timeout = ms(*t);
    if (auto n = opt_number(L, 2, "retry_count")) c.retry_count = static_cast<int>(std::min(*n, 1e6));
    if (auto d = opt_number(L, 2, "retry_delay_max_ms")) c.retry_delay_max = ms(*d);
    return push_lock(L, inv, inv.strategy->clients(inv).redlock(key, c));
  }
  static int lock_zookeeper(lua_State* L, Invocation& inv) {
    const std::string path = arg_text(L, 1, "locks.zookeeper: the path");
    check_options(L, 2, "locks.zookeeper");
    const auto recipe = opt_flag(L, 2, "herd") ? zk::LockRecipe::herd : zk::LockRecipe::next_lower;
    return push_lock(L, inv, inv.strategy->clients(inv).zookeeper(path, recipe, ms(opt_number(L, 2, "wait_ms").value_or(0))));
  }
  static int lock_etcd(lua_State* L, Invocation& inv) {
    const std::string prefix = arg_text(L, 1, "locks.etcd: the prefix");
    check_options(L, 2, "locks.etcd");
    EtcdUnlockOptions unlock;
    if (lua_type(L, 2) == LUA_TTABLE) {
      lua_pushstring(L, "unlock");
      const int t = lua_rawget(L, 2);
      const std::string how = t == LUA_TNIL ? "by_name" : t == LUA_TSTRING ? lua_tostring(L, -1) : "";
      lua_pop(L, 1);
      if (how != "by_name" && how != "if_owner")
        throw Misuse{"locks.etcd: option unlock: expected \"by_name\" (Mutex.Unlock, the default) or \"if_owner\""};
      if (how == "if_owner") unlock.how = etcd::Mutex::Unlock::if_owner;
    }
    if (auto every = opt_number(L, 2, "unlock_retry_ms")) unlock.retry = script_ms(*every, "locks.etcd: option unlock_retry_ms", true);
    return push_lock(L, inv, inv.strategy->clients(inv).etcd(prefix, ms(opt_number(L, 2, "wait_ms").value_or(0)), unlock));
  }
  // locks.zookeeper_state(): the worker's ZooKeeper client's connection state as Curator names it
  // ("CONNECTED", "SUSPENDED", "RECONNECTED", "LOST") and its session id, for a holder that
  // follows Curator's advice before it writes.
  static int zookeeper_state(lua_State* L, Invocation& inv) {
    const zk::Client& client = inv.strategy->env_.zookeeper(*inv.worker);
    lua_pushstring(L, zk::to_string(client.state()));
    lua_pushinteger(L, static_cast<lua_Integer>(client.session()));
    return 2;
  }
  // locks.consul(key [, opts]): api.Lock with a session of its own.
  static int lock_consul(lua_State* L, Invocation& inv) {
    const std::string key = arg_text(L, 1, "locks.consul: the key");
    check_options(L, 2, "locks.consul");
    consul::LockOptions o;
    if (auto ttl = opt_number(L, 2, "ttl_ms")) o.session.ttl = ms(*ttl);
    if (auto delay = opt_number(L, 2, "lock_delay_ms")) o.session.lock_delay = ms(*delay);
    if (lua_type(L, 2) == LUA_TTABLE) {
      lua_pushstring(L, "behavior");
      const int t = lua_rawget(L, 2);
      const std::string name = t == LUA_TNIL ? "release" : t == LUA_TSTRING ? lua_tostring(L, -1) : "";
      lua_pop(L, 1);
      if (name != "release" && name != "delete") throw Misuse{"option behavior: expected \"release\" or \"delete\""};
      o.session.behavior = name == "delete" ? consul::Behavior::del : consul::Behavior::release;
    }
    return push_lock(L, inv, inv.strategy->clients(inv).consul(key, o, ms(opt_number(L, 2, "wait_ms").value_or(0))));
  }
  static int lock_table(lua_State* L, Invocation& inv) {
    const std::string key = arg_text(L, 1, "locks.table: the key");
    const std::size_t index = connection_arg(L, inv, 2, "locks.table");
    return push_lock(L, inv, inv.strategy->clients(inv).table(*inv.resources[index]->connection, key), {}, index + 1);
  }
  // locks.pg_advisory(key [, opts [, c]]): PostgreSQL's advisory lock on `c` (default: the
  // default connection). A string key is hashed to the bigint the server locks.
  static int lock_pg_advisory(lua_State* L, Invocation& inv) {
    if (const int t = lua_type(L, 1); t != LUA_TNUMBER && t != LUA_TSTRING)
      throw Misuse{fmt::format("locks.pg_advisory: the key: expected an integer or a string, got {}", lua_typename(L, t))};
    const db::Value key = arg_value(L, 1, 1);
    const std::int64_t number = std::holds_alternative<std::int64_t>(key) ? std::get<std::int64_t>(key)
                                                                        : advisory_key(std::get<std::string>(key));
    check_options(L, 2, "locks.pg_advisory");
    const PgAdvisoryOptions o{.xact = opt_flag(L, 2, "xact"), .try_only = opt_flag(L, 2, "try")};
    const std::size_t index = connection_arg(L, inv, 3, "locks.pg_advisory");
    db::Connection& c = *inv.resources[index]->connection;
    if (c.engine() != db::Engine::postgresql) throw Misuse{"locks.pg_advisory: needs \"database\": {\"engine\": \"postgresql\"}"};
    const int pushed = push_lock(L, inv, inv.strategy->clients(inv).pg_advisory(c, number, o), {}, index + 1);
    if (o.xact && !lua_isnil(L, -1)) {
      inv.resources.back()->ends_with_transaction = true;
      end_transaction_holds(inv);  // outside a transaction it ended with its own statement
    }
    return pushed;
  }
  // locks.get_lock(name [, opts [, c]]): MariaDB's GET_LOCK on `c` (default: the default
  // connection), waiting at most opts.timeout_s whole seconds (0, the default: busy is nil at once).
  static int lock_get_lock(lua_State* L, Invocation& inv) {
    const std::string name = arg_text(L, 1, "locks.get_lock: the name");
    if (name.empty()) throw Misuse{"locks.get_lock: the name: expected a non-empty string (GET_LOCK('') locks nothing)"};
    check_options(L, 2, "locks.get_lock");
    const double timeout = opt_number(L, 2, "timeout_s").value_or(0);
    if (timeout > 86'400 || timeout != std::floor(timeout))
      throw Misuse{fmt::format("locks.get_lock: option timeout_s: expected whole seconds from 0 to 86400, got {}", timeout)};
    const std::size_t index = connection_arg(L, inv, 3, "locks.get_lock");
    db::Connection& c = *inv.resources[index]->connection;
    if (c.engine() != db::Engine::mariadb)
      throw Misuse{"locks.get_lock: GET_LOCK is MariaDB's; on PostgreSQL use locks.pg_advisory"};
    return push_lock(L, inv, inv.strategy->clients(inv).get_lock(c, name, static_cast<std::int64_t>(timeout)), {}, index + 1);
  }
  // A string's advisory key: FNV-1a over its bytes, 64 bits, the same on every node and run.
  static std::int64_t advisory_key(const std::string& text) {
    std::uint64_t h = 14695981039346656037ULL;
    for (const unsigned char ch : text) h = (h ^ ch) * 1099511628211ULL;
    return static_cast<std::int64_t>(h);
  }
  // The connection argument at `i` (none: the default connection), as an index in resources.
  static std::size_t connection_arg(lua_State* L, Invocation& inv, int i, const char* function) {
    std::size_t index;
    if (lua_isnoneornil(L, i)) {
      inv.strategy->default_connection(inv);
      index = *inv.default_connection;
    } else {
      resource_of(L, inv, i, kConnectionMeta, "connection");
      index = static_cast<Ref*>(lua_touserdata(L, i))->index;
    }
    if (!inv.resources[index]->connection) throw Misuse{fmt::format("{}: this connection was closed", function)};
    return index;
  }
  static int lock_local(lua_State* L, Invocation& inv) {
    const std::string key = arg_text(L, 1, "locks.local_mutex: the key");
    ScriptStrategy& self = *inv.strategy;
    return push_lock(L, inv, self.clients(inv).local(self.mutexes_[&inv.worker->server], key));
  }
  static int hold(lua_State* L, Invocation& inv) {
    const std::string key = arg_text(L, 1, "hold: the key");
    const std::string value = arg_text(L, 2, "hold: the value");
    std::optional<sim::Duration> lease;
    if (!lua_isnoneornil(L, 3)) {
      if (lua_type(L, 3) != LUA_TNUMBER) throw Misuse{"hold: the lease, when given, is milliseconds above 0"};
      lease = script_ms(lua_tonumber(L, 3), "hold: the lease", true);
    }
    return push_lock(L, inv, inv.strategy->clients(inv).redis_hold(key, value, lease));
  }

  // hold_until(key, until_ms): a lease the script keeps itself (a row's lock_until), its own
  // until the node's wall clock (now_ms()) reads until_ms.
  static int hold_until(lua_State* L, Invocation& inv) {
    const std::string key = arg_text(L, 1, "hold_until: the key");
    if (lua_type(L, 2) != LUA_TNUMBER) throw Misuse{"hold_until: the lease's end: expected ms on the node's wall clock, as now_ms() gives"};
    const double until = lua_tonumber(L, 2);
    if (!std::isfinite(until) || until < 0 || until > 1e15)
      throw Misuse{fmt::format("hold_until: the lease's end: expected ms from 0 to 1e15, got {}", until)};
    const sim::Time at = sim::Time{} + std::chrono::duration_cast<sim::Duration>(std::chrono::duration<double, std::milli>(until));
    return push_lock(L, inv, inv.strategy->clients(inv).lease_hold(key, at));
  }

  static LockGuard& held_lock(lua_State* L, Invocation& inv, const char* method) {
    Resource& res = resource_of(L, inv, 1, kLockMeta, "lock");
    if (!res.lock->held()) throw Misuse{fmt::format("lock:{}: this lock was released already", method)};
    return *res.lock;
  }
  static int lock_index(lua_State* L, Invocation& inv) {
    Resource& res = resource_of(L, inv, 1, kLockMeta, "lock");
    const std::string field = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "";
    if (field == "token") {
      lua_pushinteger(L, res.lock->token());
      return 1;
    }
    if (field == "held") {
      lua_pushboolean(L, res.lock->held());
      return 1;
    }
    lua_getfield(L, LUA_REGISTRYINDEX, kLockMethods);
    lua_pushvalue(L, 2);
    lua_rawget(L, -2);
    return 1;
  }
  static int lock_release(lua_State* L, Invocation& inv) {
    held_lock(L, inv, "release").unlock();
    return 0;
  }
  static int lock_release_with_del(lua_State* L, Invocation& inv) {
    LockGuard& lock = held_lock(L, inv, "release_with_del");
    Resource& res = resource_of(L, inv, 1, kLockMeta, "lock");
    if (res.redis_key.empty()) throw Misuse{"lock:release_with_del: only a lock of locks.redis has a plain DEL"};
    lock.unlock(inv.strategy->clients(inv).redis_unlock(res.redis_key, RedisUnlock::del));
    return 0;
  }
  static int lock_rejected(lua_State* L, Invocation& inv) {
    held_lock(L, inv, "rejected").hold().rejected();
    return 0;
  }

  // The handler's time and values.
  static int do_work(lua_State*, Invocation& inv) {
    sim::sleep_for(inv.strategy->env_.work(*inv.worker));
    return 0;
  }
  static int do_sleep(lua_State* L, Invocation&) {
    if (lua_type(L, 1) != LUA_TNUMBER) throw Misuse{"sleep: expected milliseconds from 0 to 1e12"};
    sim::sleep_for(script_ms(lua_tonumber(L, 1), "sleep"));
    return 0;
  }
  static int now_ms(lua_State* L, Invocation& inv) {
    const sim::Time t = inv.worker->server.node().clock().now();
    lua_pushnumber(L, std::chrono::duration<double, std::milli>(t.time_since_epoch()).count());
    return 1;
  }
  // effect(name, value): an external side effect of this attempt, which no rollback undoes.
  static int effect(lua_State* L, Invocation& inv) {
    const std::string name = arg_text(L, 1, "the effect's name");
    if (name.empty() || name.size() > 64) throw Misuse{"effect: expected a name of 1 to 64 bytes"};
    const db::Value value = lua_isnoneornil(L, 2) ? db::Value{std::int64_t{0}} : arg_value(L, 2, 2);
    constexpr std::size_t kMostEffects = 1'000'000;
    if (inv.strategy->env_.effects().size() >= kMostEffects) throw Misuse{fmt::format("effect: at most {} effects in a trial", kMostEffects)};
    // The effects are held to the end of the trial: they count in its memory budget (Env's
    // effects_bytes), and a call that would take them past a quarter of the script's cap is
    // refused before they grow inside one request, where no budget check runs; the workload's
    // check, whose own cap is the same, reads them all.
    const std::size_t most = inv.strategy->rt_.limits.memory_bytes / 4;
    const std::size_t bytes = name.size() + (std::holds_alternative<std::string>(value) ? std::get<std::string>(value).size() : 0);
    if (inv.strategy->env_.effects_bytes() + bytes > most)
      throw Misuse{fmt::format("effect: the effects of a trial may hold at most {} MiB (a quarter of its memory budget)", most >> 20)};
    inv.strategy->env_.note_effect(
        {.name = name, .value = value, .operation = inv.request->operation, .attempt = inv.request->attempt, .at = sim::now()});
    return 0;
  }
  static int unique(lua_State* L, Invocation& inv) {
    const std::string token = attempt_token(*inv.request, *inv.worker);
    lua_pushlstring(L, token.data(), token.size());
    return 1;
  }
  static int remote_create(lua_State* L, Invocation& inv) {
    const db::Value id = arg_value(L, 1, 1);
    const auto* n = std::get_if<std::int64_t>(&id);
    if (n == nullptr) throw Misuse{"remote.create: expected the account's id (an integer)"};
    if (lua_type(L, 2) != LUA_TNUMBER || !(lua_tonumber(L, 2) > 0) || lua_tonumber(L, 2) > 1e12)
      throw Misuse{"remote.create: expected the timeout in milliseconds as the second argument"};
    inv.strategy->env_.remote_create(*inv.worker, *n, ms(lua_tonumber(L, 2)));
    return 0;
  }
  static int random(lua_State* L, Invocation& inv) {
    sim::Stream& stream = inv.worker->stream;
    const int n = lua_gettop(L);
    if (n == 0) {
      lua_pushnumber(L, stream.uniform01());
      return 1;
    }
    if (n > 2 || !lua_isinteger(L, 1) || (n == 2 && !lua_isinteger(L, 2)))
      throw Misuse{"math.random: expected no argument, m, or m and n (integers)"};
    const lua_Integer low = n == 2 ? lua_tointeger(L, 1) : 1, high = n == 2 ? lua_tointeger(L, 2) : lua_tointeger(L, 1);
    if (low > high) throw Misuse{"math.random: interval is empty"};
    const auto span = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
    const std::uint64_t draw = span == UINT64_MAX ? stream.bits() : stream.choose(span + 1);
    lua_pushinteger(L, static_cast<lua_Integer>(static_cast<std::uint64_t>(low) + draw));
    return 1;
  }

  std::shared_ptr<const Compiled> compiled_;
  Runtime rt_;
  StatePtr L_;
  int bind_ref_ = LUA_NOREF;  // bind or handle
  std::vector<db::TableSchema> tables_;  // the script's, and its workload's
  std::uint64_t serials_ = 0;
  bool stopped_ = false;
  struct Thread {
    lua_State* state = nullptr;
    int ref = LUA_NOREF;  // in the registry, so the collector keeps it
  };
  std::vector<Thread> idle_;  // threads no call runs on; the last one left is used first
  std::map<std::pair<db::Engine, std::string>, db::sql::Prepared> statements_;  // by text, prepared once a trial
  std::map<const AppServer*, KeyedMutex> mutexes_;                 // looked up, never iterated
};

}  // namespace

void install_api(lua_State* L) { ScriptStrategy::install_api(L); }

std::unique_ptr<Strategy> make_script_strategy(Env& env, const Params& params, std::shared_ptr<const Compiled> compiled) {
  return std::make_unique<ScriptStrategy>(env, params, std::move(compiled));
}

}  // namespace models::strategies
