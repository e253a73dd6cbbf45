// A Lua strategy's database: db.query, db.exec and the transaction's statements on the default
// connection or one of its own (db.connect), each statement checked against the world's tables
// first; and the locks a database keeps (a lock table's row, PostgreSQL's advisory locks,
// MariaDB's GET_LOCK).

#include "models/strategies/script_api.hpp"

namespace models::strategies::lua_api {

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


// Connections.
db::Connection& ScriptStrategy::default_connection(Invocation& inv) {
  if (!inv.default_connection) inv.default_connection = add_connection(inv);
  return *inv.resources[*inv.default_connection]->connection;
}

std::size_t ScriptStrategy::add_connection(Invocation& inv) {
  auto res = std::make_unique<Resource>();
  res->connection = connect(*inv.request, *inv.worker);
  inv.resources.push_back(std::move(res));
  return inv.resources.size() - 1;
}

Resource& ScriptStrategy::resource_of(lua_State* L, Invocation& inv, int i, const char* meta, const char* what) {
  auto* ref = static_cast<Ref*>(luaL_testudata(L, i, meta));
  if (ref == nullptr) throw Misuse{fmt::format("expected a {} (call it as x:method(...)), got {}", what, luaL_typename(L, i))};
  if (ref->serial != inv.serial) throw Misuse{fmt::format("this {} belongs to another request's bind: use it in its own", what)};
  return *inv.resources.at(ref->index);
}

db::Connection& ScriptStrategy::connection_of(lua_State* L, Invocation& inv) {
  Resource& res = resource_of(L, inv, 1, kConnectionMeta, "connection");
  if (!res.connection) throw Misuse{"this connection was closed"};
  return *res.connection;
}

void ScriptStrategy::close_connection(Invocation& inv, std::size_t index) {
  for (const auto& res : inv.resources)
    if (res->lock && res->lock->held() && res->on_connection == index + 1)
      throw Misuse{"a lock-table lock taken on this connection is still held: release it first"};
  inv.resources[index]->connection.reset();
}

// The statement in the dialect of the connection's server: MySQL's with `?`s, PostgreSQL's
// with `$1`, `$2`, ...
const db::sql::Prepared& ScriptStrategy::prepared(const std::string& text, db::Engine engine) {
  const auto key = std::make_pair(engine, text);
  auto it = statements_.find(key);
  if (it == statements_.end())
    it = statements_.emplace(key, db::prepare_in(engine, text)).first;
  return it->second;
}

// Runs the statement at `first` with the arguments after it on `c`. Writes made while locks
// are held are critical-section steps of each (the lock machinery's own tables aside).
int ScriptStrategy::run(lua_State* L, Invocation& inv, db::Connection& c, int first, bool rows) {
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

int ScriptStrategy::simple(Invocation& inv, db::Connection& c, db::Statement::Kind kind) {
  if (kind == db::Statement::Kind::commit || kind == db::Statement::Kind::rollback) end_transaction_holds(inv, &c);
  const TransactionHolds ended(inv);
  c.execute(db::Statement{.kind = kind});
  return 0;
}

void ScriptStrategy::end_transaction_holds(Invocation& inv, const db::Connection* ending) {
  for (const auto& res : inv.resources) {
    if (!res->lock || !res->lock->held() || !res->ends_with_transaction) continue;
    const bool on_ending = ending != nullptr && res->on_connection != 0 &&
                           inv.resources[res->on_connection - 1]->connection && &*inv.resources[res->on_connection - 1]->connection == ending;
    if (on_ending || !res->lock->hold().granted()) res->lock->unlock();
  }
}

int ScriptStrategy::db_begin(lua_State*, Invocation& inv) {
  return simple(inv, inv.strategy->default_connection(inv), db::Statement::Kind::begin);
}

int ScriptStrategy::db_commit(lua_State*, Invocation& inv) {
  return simple(inv, inv.strategy->default_connection(inv), db::Statement::Kind::commit);
}

int ScriptStrategy::db_rollback(lua_State*, Invocation& inv) {
  return simple(inv, inv.strategy->default_connection(inv), db::Statement::Kind::rollback);
}

int ScriptStrategy::db_close(lua_State*, Invocation& inv) {
  if (!inv.default_connection) return 0;
  inv.strategy->close_connection(inv, *inv.default_connection);
  inv.default_connection.reset();
  return 0;
}

int ScriptStrategy::db_connect(lua_State* L, Invocation& inv) {
  const std::size_t index = inv.strategy->add_connection(inv);
  auto* ref = static_cast<Ref*>(lua_newuserdatauv(L, sizeof(Ref), 0));
  *ref = Ref{inv.serial, index, 0};
  luaL_setmetatable(L, kConnectionMeta);
  return 1;
}

int ScriptStrategy::conn_rollback(lua_State* L, Invocation& inv) {
  return simple(inv, connection_of(L, inv), db::Statement::Kind::rollback);
}

int ScriptStrategy::conn_close(lua_State* L, Invocation& inv) {
  resource_of(L, inv, 1, kConnectionMeta, "connection");
  const std::size_t index = static_cast<Ref*>(lua_touserdata(L, 1))->index;
  if (inv.resources[index]->connection) inv.strategy->close_connection(inv, index);
  if (inv.default_connection == index) inv.default_connection.reset();
  return 0;
}

int ScriptStrategy::lock_table(lua_State* L, Invocation& inv) {
  const std::string key = arg_text(L, 1, "locks.table: the key");
  const std::size_t index = connection_arg(L, inv, 2, "locks.table");
  return push_lock(L, inv, inv.strategy->clients(inv).table(*inv.resources[index]->connection, key), {}, index + 1);
}

// locks.pg_advisory(key [, opts [, c]]): PostgreSQL's advisory lock on `c` (default: the
// default connection). A string key is hashed to the bigint the server locks.
int ScriptStrategy::lock_pg_advisory(lua_State* L, Invocation& inv) {
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
int ScriptStrategy::lock_get_lock(lua_State* L, Invocation& inv) {
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
std::int64_t ScriptStrategy::advisory_key(const std::string& text) {
  std::uint64_t h = 14695981039346656037ULL;
  for (const unsigned char ch : text) h = (h ^ ch) * 1099511628211ULL;
  return static_cast<std::int64_t>(h);
}

// The connection argument at `i` (none: the default connection), as an index in resources.
std::size_t ScriptStrategy::connection_arg(lua_State* L, Invocation& inv, int i, const char* function) {
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

}  // namespace models::strategies::lua_api
