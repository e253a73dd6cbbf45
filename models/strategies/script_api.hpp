#pragma once
// The inside of a strategy written in Lua (script_run.hpp): the strategy, one call of its bind or
// handle, and the API's functions, which call the same clients the C++ strategies use. Its
// members are defined by what they reach: script_run.cpp (the state, bind, the API's tables),
// script_db.cpp (db, connections and the database's locks) and script_services.cpp (Redis, the
// other lock services, holds, time and values).

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
#include "models/strategies/script_run.hpp"

namespace models::strategies::lua_api {


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

inline constexpr const char* kLockMeta = "locksim.lock";
inline constexpr const char* kConnectionMeta = "locksim.connection";
inline constexpr const char* kLockMethods = "locksim.lock_methods";

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
// MySQL converts a number bound to a VARCHAR. Throws StatementMisuse (script_db.cpp).
void check_statement(const db::sql::Prepared& p, std::vector<db::Value>& args, const std::vector<db::TableSchema>& tables,
                     db::Engine engine);

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

inline Invocation* invocation(lua_State* L) { return *static_cast<Invocation**>(lua_getextraspace(L)); }
inline void set_invocation(lua_State* L, Invocation* inv) { *static_cast<Invocation**>(lua_getextraspace(L)) = inv; }


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
inline std::string arg_text(lua_State* L, int i, const char* what) {
  const int t = lua_type(L, i);
  if (t != LUA_TSTRING && t != LUA_TNUMBER)
    throw Misuse{fmt::format("{}: expected a string, got {}", what, lua_typename(L, t))};
  std::size_t n = 0;
  const char* s = lua_tolstring(L, i, &n);
  return {s, n};
}

inline db::Value arg_value(lua_State* L, int i, int shown) {
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
inline std::optional<double> opt_number(lua_State* L, int table, const char* name) {
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

inline bool opt_flag(lua_State* L, int table, const char* name) {
  if (lua_type(L, table) != LUA_TTABLE) return false;
  lua_pushstring(L, name);
  const int t = lua_rawget(L, table);
  const bool on = lua_toboolean(L, -1) != 0;
  lua_pop(L, 1);
  if (t != LUA_TBOOLEAN && t != LUA_TNIL) throw Misuse{fmt::format("option {}: expected true or false", name)};
  return on;
}

inline void check_options(lua_State* L, int table, const char* function) {
  const int t = lua_type(L, table);
  if (t != LUA_TTABLE && t != LUA_TNIL && t != LUA_TNONE)
    throw Misuse{fmt::format("{}: expected a table of options, got {}", function, lua_typename(L, t))};
}

inline sim::Duration ms(double value) {
  return std::chrono::duration_cast<sim::Duration>(std::chrono::duration<double, std::milli>(value));
}

// A duration a script gives, in ms, checked as a scenario file's are: a finite number from 0 (above 0
// where `above_zero`) to 1e12 ms, about 31 years. Past that a TTL would overflow the simulated clock.
inline sim::Duration script_ms(double value, const std::string& what, bool above_zero = false) {
  if (!std::isfinite(value) || value < 0 || (above_zero && value == 0) || value > 1e12)
    throw Misuse{fmt::format("{}: expected milliseconds {} 0 to 1e12, got {}", what, above_zero ? "above" : "from", value)};
  return ms(value);
}

// The strategy: its Lua state, and the API's bodies (which reach Strategy's helpers).
class ScriptStrategy : public Strategy {
 public:
  ScriptStrategy(Env& env, Params params, std::shared_ptr<const Compiled> compiled);

  std::uint64_t bytes_held() const override { return rt_.used; }  // the Lua state, as its allocator counts it

 protected:
  ErrorKind bind(const Request& r, Worker& w) override;

 private:
  // ---- bind's outcome ----
  static void push_request(lua_State* T, const Request& r);

  // A Lua workload's request: its fields, the logical operation and the attempt.
  static void push_workload_request(lua_State* T, const Request& r, const std::vector<std::pair<std::string, db::Value>>& fields);

  ErrorKind returned(lua_State* T, std::string& problem, std::string& code) const;

  // An error bind let out: a database or service error ends the attempt as the C++ strategies'
  // do; anything else is the script's own error.
  ErrorKind raised(lua_State* T, std::string& problem, std::string& code) const;

  // ---- the API ----
 public:
  /// Sets the API's tables and functions in `L` (each works only inside bind).
  static void install_api(lua_State* L);

 private:

  // Connections.
  db::Connection& default_connection(Invocation& inv);
  std::size_t add_connection(Invocation& inv);
  static Resource& resource_of(lua_State* L, Invocation& inv, int i, const char* meta, const char* what);
  static db::Connection& connection_of(lua_State* L, Invocation& inv);
  void close_connection(Invocation& inv, std::size_t index);

  // The statement in the dialect of the connection's server: MySQL's with `?`s, PostgreSQL's
  // with `$1`, `$2`, ...
  const db::sql::Prepared& prepared(const std::string& text, db::Engine engine);

  // Runs the statement at `first` with the arguments after it on `c`. Writes made while locks
  // are held are critical-section steps of each (the lock machinery's own tables aside).
  static int run(lua_State* L, Invocation& inv, db::Connection& c, int first, bool rows);
  static int simple(Invocation& inv, db::Connection& c, db::Statement::Kind kind);

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
  static void end_transaction_holds(Invocation& inv, const db::Connection* ending = nullptr);

  static int db_query(lua_State* L, Invocation& inv) { return run(L, inv, inv.strategy->default_connection(inv), 1, true); }
  static int db_exec(lua_State* L, Invocation& inv) { return run(L, inv, inv.strategy->default_connection(inv), 1, false); }
  static int db_begin(lua_State*, Invocation& inv);
  static int db_commit(lua_State*, Invocation& inv);
  static int db_rollback(lua_State*, Invocation& inv);
  static int db_close(lua_State*, Invocation& inv);
  static int db_connect(lua_State* L, Invocation& inv);
  static int conn_query(lua_State* L, Invocation& inv) { return run(L, inv, connection_of(L, inv), 2, true); }
  static int conn_exec(lua_State* L, Invocation& inv) { return run(L, inv, connection_of(L, inv), 2, false); }
  static int conn_begin(lua_State* L, Invocation& inv) { return simple(inv, connection_of(L, inv), db::Statement::Kind::begin); }
  static int conn_commit(lua_State* L, Invocation& inv) { return simple(inv, connection_of(L, inv), db::Statement::Kind::commit); }
  static int conn_rollback(lua_State* L, Invocation& inv);
  static int conn_close(lua_State* L, Invocation& inv);

  // Redis.
  static redis::Reply send(Invocation& inv, const redis::Command& command);
  static int push_reply(lua_State* L, const redis::Reply& reply, bool ok_as_one = false);
  static int redis_call(lua_State* L, Invocation& inv);
  static int redis_script(lua_State* L, Invocation& inv);

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

  static int lock_redis(lua_State* L, Invocation& inv);
  static int lock_redisson(lua_State* L, Invocation& inv);
  static int lock_redlock(lua_State* L, Invocation& inv);
  static int lock_zookeeper(lua_State* L, Invocation& inv);
  static int lock_etcd(lua_State* L, Invocation& inv);
  // locks.zookeeper_state(): the worker's ZooKeeper client's connection state as Curator names it
  // ("CONNECTED", "SUSPENDED", "RECONNECTED", "LOST") and its session id, for a holder that
  // follows Curator's advice before it writes.
  static int zookeeper_state(lua_State* L, Invocation& inv);
  // locks.consul(key [, opts]): api.Lock with a session of its own.
  static int lock_consul(lua_State* L, Invocation& inv);
  static int lock_table(lua_State* L, Invocation& inv);
  // locks.pg_advisory(key [, opts [, c]]): PostgreSQL's advisory lock on `c` (default: the
  // default connection). A string key is hashed to the bigint the server locks.
  static int lock_pg_advisory(lua_State* L, Invocation& inv);
  // locks.get_lock(name [, opts [, c]]): MariaDB's GET_LOCK on `c` (default: the default
  // connection), waiting at most opts.timeout_s whole seconds (0, the default: busy is nil at once).
  static int lock_get_lock(lua_State* L, Invocation& inv);
  // A string's advisory key: FNV-1a over its bytes, 64 bits, the same on every node and run.
  static std::int64_t advisory_key(const std::string& text);
  // The connection argument at `i` (none: the default connection), as an index in resources.
  static std::size_t connection_arg(lua_State* L, Invocation& inv, int i, const char* function);
  static int lock_local(lua_State* L, Invocation& inv);
  static int hold(lua_State* L, Invocation& inv);

  // hold_until(key, until_ms): a lease the script keeps itself (a row's lock_until), its own
  // until the node's wall clock (now_ms()) reads until_ms.
  static int hold_until(lua_State* L, Invocation& inv);

  static LockGuard& held_lock(lua_State* L, Invocation& inv, const char* method);
  static int lock_index(lua_State* L, Invocation& inv);
  static int lock_release(lua_State* L, Invocation& inv);
  static int lock_release_with_del(lua_State* L, Invocation& inv);
  static int lock_rejected(lua_State* L, Invocation& inv);

  // The handler's time and values.
  static int do_work(lua_State*, Invocation& inv);
  static int do_sleep(lua_State* L, Invocation&);
  static int now_ms(lua_State* L, Invocation& inv);
  // effect(name, value): an external side effect of this attempt, which no rollback undoes.
  static int effect(lua_State* L, Invocation& inv);
  static int unique(lua_State* L, Invocation& inv);
  static int remote_create(lua_State* L, Invocation& inv);
  static int random(lua_State* L, Invocation& inv);

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

}  // namespace models::strategies::lua_api
