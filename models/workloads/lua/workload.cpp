#include "models/workloads/lua/workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include "models/db/ddl.hpp"
#include "models/db/sql.hpp"
#include "models/lua/sandbox.hpp"

namespace models::workloads {
namespace {

using lua::ScriptError;

// A workload's state stops only at its budget: no process of its own can be killed.
int stopping(lua_State* L) {
  lua_pushboolean(L, lua::runtime(L).over_budget);
  return 1;
}

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A fresh sandboxed state that has run the workload's top level, `params` holding `effective`
// from the file's own assignment on (as a strategy's does). Throws ScriptError.
struct Loaded {
  lua::Runtime rt;
  lua::StatePtr L;
};

std::unique_ptr<Loaded> run_top_level(const std::string& file, std::string_view text, bool binary, lua::Limits limits,
                                      const std::vector<WorkloadParam>* effective) {
  auto out = std::make_unique<Loaded>();
  out->rt.file = file;
  out->rt.limits = limits;
  out->rt.stopping = stopping;
  out->L = lua::new_state(out->rt);
  lua_State* L = out->L.get();
  int params = 0;
  if (effective != nullptr) {
    lua_createtable(L, 0, static_cast<int>(effective->size()));
    for (const auto& p : *effective) {
      lua::push_param(L, p.value, p.flag);
      lua_setfield(L, -2, p.name.c_str());
    }
    params = lua_gettop(L);
  }
  if (luaL_loadbufferx(L, text.data(), text.size(), ("@" + file).c_str(), binary ? "b" : "t") != LUA_OK) {
    std::string why = lua::escaped(lua_tostring(L, -1));
    throw ScriptError(why.starts_with(file + ":") ? why : file + ": " + why);
  }
  int status;
  if (params != 0) {
    status = lua::run_with_params(L, out->rt, params);
  } else {
    lua::MemoryCap cap(out->rt, true);
    status = lua_pcall(L, 0, 0, 0);
  }
  if (status != LUA_OK) throw ScriptError(lua::error_text(L, out->rt));
  if (params != 0) lua_remove(L, params);
  return out;
}

// Field `key` of the table at the top of the stack, pushed, read raw: no metamethod of the
// script's runs outside a protected call.
int rawfield(lua_State* L, const char* key) {
  lua_pushstring(L, key);
  return lua_rawget(L, -2);
}

// The keys of the table at the top of the stack, sorted (lua_next gives the hash's order), each
// a name of letters, digits and _; `refusal` is the message for any other key.
std::vector<std::string> sorted_names(lua_State* L, const std::string& refusal) {
  std::vector<std::string> names;
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    if (lua_type(L, -2) != LUA_TSTRING || !lua::is_name(lua_tostring(L, -2))) throw ScriptError(refusal);
    names.emplace_back(lua_tostring(L, -2));
    lua_pop(L, 1);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The global `name` pushed (raw); its type.
int global(lua_State* L, const char* name) {
  lua_pushglobaltable(L);
  lua_pushstring(L, name);
  const int t = lua_rawget(L, -2);
  lua_remove(L, -2);
  return t;
}

std::vector<WorkloadParam> read_params(lua_State* L, const std::string& file) {
  std::vector<WorkloadParam> out;
  lua::for_each_param(L, file, [&](const std::string& name) {
    WorkloadParam p{.name = name};
    if (lua_type(L, -1) == LUA_TBOOLEAN) {
      p.flag = true;
      p.value = lua_toboolean(L, -1);
    } else if (lua_type(L, -1) == LUA_TNUMBER && std::isfinite(lua_tonumber(L, -1)) && std::fabs(lua_tonumber(L, -1)) <= 1e12) {
      p.value = lua_tonumber(L, -1);
    } else {
      throw ScriptError(fmt::format("{}: params.{}: expected a boolean or a number from -1e12 to 1e12", file, p.name));
    }
    out.push_back(std::move(p));
  });
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

// `tables`: CREATE TABLE statements, and CREATE [UNIQUE] INDEX on a table above, in the
// dialect of the scenario's engine; each builds what the same line in database.tables builds.
void read_tables(lua_State* L, Workload& w, db::Engine engine) {
  const int t = global(L, "tables");
  if (t == LUA_TNIL) {  // a workload whose state is in Redis alone
    lua_pop(L, 1);
    return;
  }
  if (t != LUA_TTABLE) throw ScriptError(fmt::format("{}: expected `tables` to be a list of CREATE TABLE statements", w.file));
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, -1));
  for (lua_Integer i = 1; i <= n; ++i) {
    if (lua_rawgeti(L, -1, i) != LUA_TSTRING) throw ScriptError(fmt::format("{}: tables[{}]: expected a CREATE TABLE statement", w.file, i));
    const std::string text = lua_tostring(L, -1);
    lua_pop(L, 1);
    try {
      db::apply_ddl(db::prepare_in(engine, text), w.tables);
    } catch (const db::DdlRefused& e) {
      throw ScriptError(fmt::format("{}: tables[{}]: expected {}", w.file, i, e.what()));
    } catch (const std::runtime_error& e) {  // the dialect's syntax error (sql::Error, pg::Error)
      throw ScriptError(fmt::format("{}: tables[{}]: {} ({} SQL: docs/sql.md)", w.file, i, e.what(), db::to_string(engine)));
    }
    w.tables_sql.push_back(text);
  }
  lua_pop(L, 1);
}

// A value of a row or a field: an integer, a string, or a boolean as 0 or 1.
std::optional<db::Value> value_at(lua_State* L, int i) {
  switch (lua_type(L, i)) {
    case LUA_TBOOLEAN: return db::Value{std::int64_t{lua_toboolean(L, i)}};
    case LUA_TNUMBER:
      if (lua_isinteger(L, i)) return db::Value{static_cast<std::int64_t>(lua_tointeger(L, i))};
      return std::nullopt;
    case LUA_TSTRING: {
      std::size_t n = 0;
      const char* s = lua_tolstring(L, i, &n);
      if (!lua::utf8({s, n})) return std::nullopt;
      return db::Value{std::string(s, n)};
    }
    default: return std::nullopt;
  }
}

// `rows = { t_stock = { {id = 1, stock = 10}, ... } }`: by table name, each a list of rows.
void read_rows(lua_State* L, Workload& w) {
  constexpr std::size_t kMostRows = 1'000'000;
  const int t = global(L, "rows");
  if (t == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  if (t != LUA_TTABLE) throw ScriptError(fmt::format("{}: expected `rows` to be a table: table name = a list of rows", w.file));
  for (const auto& name : sorted_names(L, fmt::format("{}: rows: expected table names as keys", w.file))) {
    const auto schema = std::find_if(w.tables.begin(), w.tables.end(), [&](const auto& x) { return x.name == name; });
    if (schema == w.tables.end()) throw ScriptError(fmt::format("{}: rows.{}: no such table in `tables`", w.file, name));
    rawfield(L, name.c_str());
    if (lua_type(L, -1) != LUA_TTABLE) throw ScriptError(fmt::format("{}: rows.{}: expected a list of rows", w.file, name));
    const auto n = static_cast<lua_Integer>(lua_rawlen(L, -1));
    if (w.rows.size() + static_cast<std::size_t>(n) > kMostRows)
      throw ScriptError(fmt::format("{}: rows: at most {} rows in all", w.file, kMostRows));
    for (lua_Integer i = 1; i <= n; ++i) {
      if (lua_rawgeti(L, -1, i) != LUA_TTABLE) throw ScriptError(fmt::format("{}: rows.{}[{}]: expected a row, column = value", w.file, name, i));
      db::Values values;
      lua_pushnil(L);
      while (lua_next(L, -2) != 0) {
        if (lua_type(L, -2) != LUA_TSTRING) throw ScriptError(fmt::format("{}: rows.{}[{}]: expected column names as keys", w.file, name, i));
        const std::string column = lua_tostring(L, -2);
        if (!schema->has_column(column))
          throw ScriptError(fmt::format("{}: rows.{}[{}].{}: no such column in {}", w.file, name, i, column, name));
        const auto v = value_at(L, -1);
        if (!v) throw ScriptError(fmt::format("{}: rows.{}[{}].{}: expected an integer, a string or a boolean", w.file, name, i, column));
        values[column] = *v;
        lua_pop(L, 1);
      }
      w.rows.emplace_back(name, std::move(values));
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

// `redis = { ["stock:1"] = 10, ... }`: redis-1's first string keys (an integer is its decimal text).
void read_redis(lua_State* L, Workload& w) {
  constexpr std::size_t kMostKeys = 1'000'000;
  const int t = global(L, "redis");
  if (t == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  if (t != LUA_TTABLE) throw ScriptError(fmt::format("{}: expected `redis` to be a table: key = value", w.file));
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    if (lua_type(L, -2) != LUA_TSTRING || !lua::utf8(lua_tostring(L, -2)))
      throw ScriptError(fmt::format("{}: redis: expected keys that are strings in UTF-8", w.file));
    const std::string key = lua_tostring(L, -2);
    const auto v = value_at(L, -1);
    if (!v || lua_type(L, -1) == LUA_TBOOLEAN)
      throw ScriptError(fmt::format("{}: redis[\"{}\"]: expected an integer or a string", w.file, lua::escaped(key)));
    w.redis.emplace_back(key, std::holds_alternative<std::string>(*v) ? std::get<std::string>(*v) : std::to_string(std::get<std::int64_t>(*v)));
    if (w.redis.size() > kMostKeys) throw ScriptError(fmt::format("{}: redis: at most {} keys", w.file, kMostKeys));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  std::sort(w.redis.begin(), w.redis.end());
}

constexpr double kMostFieldValue = 9007199254740992.0;  // 2^53: a number Lua and JSON keep exactly

std::int64_t whole(lua_State* L, int i, const std::string& where) {
  if (!lua_isinteger(L, i) || std::fabs(static_cast<double>(lua_tointeger(L, i))) > kMostFieldValue)
    throw ScriptError(fmt::format("{}: expected a whole number from -2^53 to 2^53", where));
  return lua_tointeger(L, i);
}

// A field's distribution (the table or string at the top of the stack).
FieldSpec read_spec(lua_State* L, const std::string& where) {
  const std::string kinds =
      "expected a distribution: \"key\", \"operation\", \"submission\", \"client\", {key_from = N}, {uniform = {lo, hi}}, "
      "{zipf = {lo, hi}, exponent = s}, {one_of = {...}}, or a constant integer or string";
  FieldSpec s;
  if (lua_type(L, -1) == LUA_TSTRING) {
    const std::string name = lua_tostring(L, -1);
    if (name == "key") s.kind = FieldSpec::Kind::key;
    else if (name == "operation") s.kind = FieldSpec::Kind::operation;
    else if (name == "submission") s.kind = FieldSpec::Kind::submission;
    else if (name == "client") s.kind = FieldSpec::Kind::client;
    else {
      const auto v = value_at(L, -1);
      if (!v) throw ScriptError(fmt::format("{}: {}", where, kinds));
      s.values.push_back(*v);
    }
    return s;
  }
  if (lua_type(L, -1) == LUA_TNUMBER) {
    s.values.push_back(whole(L, -1, where));
    return s;
  }
  if (lua_type(L, -1) != LUA_TTABLE) throw ScriptError(fmt::format("{}: {}", where, kinds));
  std::vector<std::string> keys;
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    keys.emplace_back(lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?");
    lua_pop(L, 1);
  }
  const auto has = [&](const char* k) { return std::find(keys.begin(), keys.end(), k) != keys.end(); };
  const auto pair = [&](const char* k) {
    rawfield(L, k);
    if (lua_type(L, -1) != LUA_TTABLE || lua_rawlen(L, -1) != 2) throw ScriptError(fmt::format("{}.{}: expected {{lo, hi}}", where, k));
    lua_rawgeti(L, -1, 1);
    s.lo = whole(L, -1, fmt::format("{}.{}[1]", where, k));
    lua_rawgeti(L, -2, 2);
    s.hi = whole(L, -1, fmt::format("{}.{}[2]", where, k));
    lua_pop(L, 3);
    if (s.hi < s.lo) throw ScriptError(fmt::format("{}.{}: expected lo <= hi, got {} > {}", where, k, s.lo, s.hi));
  };
  if (keys.size() == 1 && has("key_from")) {
    s.kind = FieldSpec::Kind::key;
    rawfield(L, "key_from");
    s.lo = whole(L, -1, where + ".key_from");
    lua_pop(L, 1);
  } else if (keys.size() == 1 && has("uniform")) {
    s.kind = FieldSpec::Kind::uniform;
    pair("uniform");
  } else if (has("zipf") && keys.size() <= 2 && (keys.size() == 1 || has("exponent"))) {
    s.kind = FieldSpec::Kind::zipf;
    pair("zipf");
    if (s.hi - s.lo >= 1'000'000) throw ScriptError(fmt::format("{}.zipf: at most 10^6 values", where));
    if (has("exponent")) {
      rawfield(L, "exponent");
      s.exponent = lua_tonumber(L, -1);
      if (lua_type(L, -1) != LUA_TNUMBER || !(s.exponent >= 0 && s.exponent <= 10))
        throw ScriptError(fmt::format("{}.exponent: expected a number from 0 to 10", where));
      lua_pop(L, 1);
    }
    double sum = 0;
    for (std::int64_t k = 1; k <= s.hi - s.lo + 1; ++k) sum += 1 / std::pow(static_cast<double>(k), s.exponent);
    double at = 0;
    for (std::int64_t k = 1; k <= s.hi - s.lo + 1; ++k) {
      at += 1 / std::pow(static_cast<double>(k), s.exponent) / sum;
      s.cdf.push_back(at);
    }
  } else if (keys.size() == 1 && has("one_of")) {
    s.kind = FieldSpec::Kind::one_of;
    rawfield(L, "one_of");
    const auto n = lua_type(L, -1) == LUA_TTABLE ? static_cast<lua_Integer>(lua_rawlen(L, -1)) : 0;
    if (n == 0 || n > 10'000) throw ScriptError(fmt::format("{}.one_of: expected a list of 1 to 10,000 values", where));
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_rawgeti(L, -1, i);
      const auto v = value_at(L, -1);
      if (!v) throw ScriptError(fmt::format("{}.one_of[{}]: expected an integer or a string", where, i));
      s.values.push_back(*v);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  } else {
    throw ScriptError(fmt::format("{}: {}", where, kinds));
  }
  return s;
}

void read_request(lua_State* L, Workload& w) {
  const int t = global(L, "request");
  if (t != LUA_TTABLE)
    throw ScriptError(fmt::format("{}: expected `request`: the fields of the request a client sends, name = distribution{}", w.file,
                                  t == LUA_TNIL ? " (it is missing)" : ""));
  for (const auto& name : sorted_names(L, fmt::format("{}: request: expected field names made of letters, digits and _", w.file))) {
    if (name == "op" || name == "attempt")
      throw ScriptError(fmt::format("{}: request.{}: a name every request already has (req.op, req.attempt)", w.file, name));
    rawfield(L, name.c_str());
    w.fields.push_back({name, read_spec(L, fmt::format("{}: request.{}", w.file, name))});
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

void read_metrics(lua_State* L, Workload& w) {
  const int t = global(L, "metrics");
  if (t != LUA_TTABLE || lua_rawlen(L, -1) == 0)
    throw ScriptError(fmt::format("{}: expected `metrics`: a list of {{name = ..., unit = ..., meaning = ...}}, what check counts{}", w.file,
                                  t == LUA_TNIL ? " (it is missing)" : ""));
  const auto n = static_cast<lua_Integer>(lua_rawlen(L, -1));
  for (lua_Integer i = 1; i <= n; ++i) {
    const std::string where = fmt::format("{}: metrics[{}]", w.file, i);
    if (lua_rawgeti(L, -1, i) != LUA_TTABLE) throw ScriptError(where + ": expected {name = ..., unit = ..., meaning = ...}");
    MetricDecl m;
    const auto text = [&](const char* key, std::string& out) {
      rawfield(L, key);
      if (lua_type(L, -1) != LUA_TSTRING || !lua::utf8(lua_tostring(L, -1)))
        throw ScriptError(fmt::format("{}.{}: expected a string", where, key));
      if (lua_rawlen(L, -1) == 0) throw ScriptError(fmt::format("{}.{}: expected a non-empty string, got an empty one", where, key));
      out = lua_tostring(L, -1);
      lua_pop(L, 1);
    };
    text("name", m.name);
    text("unit", m.unit);
    text("meaning", m.meaning);
    rawfield(L, "finding");
    if (lua_type(L, -1) == LUA_TBOOLEAN)
      m.finding = lua_toboolean(L, -1) != 0;
    else if (lua_type(L, -1) != LUA_TNIL)
      throw ScriptError(fmt::format("{}.finding: expected true (something that should not happen, the default) or false", where));
    lua_pop(L, 2);
    if (!lua::is_name(m.name)) throw ScriptError(fmt::format("{}.name: expected letters, digits and _, got '{}'", where, lua::escaped(m.name)));
    if (std::any_of(w.metrics.begin(), w.metrics.end(), [&](const auto& x) { return x.name == m.name; }))
      throw ScriptError(fmt::format("{}: metric '{}' is declared twice", where, m.name));
    w.metrics.push_back(std::move(m));
  }
  lua_pop(L, 1);
  if (global(L, "check") != LUA_TFUNCTION)
    throw ScriptError(fmt::format("{}: expected `function check(final, history)` returning the metrics' counts", w.file));
  lua_pop(L, 1);
}

}  // namespace

std::vector<std::pair<std::string, db::Value>> Workload::draw(std::uint64_t seed, const Request& r) const {
  return draw(seed, r.operation, r.value, r.client, r.key);
}

std::vector<std::pair<std::string, db::Value>> Workload::draw(std::uint64_t seed, std::uint64_t operation, std::uint64_t submission,
                                                              std::uint32_t client, std::uint64_t key) const {
  std::vector<std::pair<std::string, db::Value>> out;
  out.reserve(fields.size());
  const std::uint64_t base = mix(mix(seed) ^ submission);
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const FieldSpec& s = fields[i].spec;
    const std::uint64_t h = mix(base ^ (i + 1));
    db::Value v;
    switch (s.kind) {
      case FieldSpec::Kind::key: v = static_cast<std::int64_t>(key) + s.lo; break;
      case FieldSpec::Kind::operation: v = static_cast<std::int64_t>(operation); break;
      case FieldSpec::Kind::submission: v = static_cast<std::int64_t>(submission); break;
      case FieldSpec::Kind::client: v = static_cast<std::int64_t>(client); break;
      case FieldSpec::Kind::uniform:
        v = s.lo + static_cast<std::int64_t>(h % static_cast<std::uint64_t>(s.hi - s.lo + 1));
        break;
      case FieldSpec::Kind::zipf: {
        const double u = static_cast<double>(h >> 11) * 0x1.0p-53;
        const auto at = std::lower_bound(s.cdf.begin(), s.cdf.end(), u);
        v = s.lo + static_cast<std::int64_t>(std::min<std::size_t>(at - s.cdf.begin(), s.cdf.size() - 1));
        break;
      }
      case FieldSpec::Kind::one_of: v = s.values[h % s.values.size()]; break;
      case FieldSpec::Kind::constant: v = s.values.front(); break;
    }
    out.emplace_back(fields[i].name, std::move(v));
  }
  return out;
}

std::shared_ptr<const Workload> load_workload(const std::string& file, std::string_view text,
                                              const std::vector<std::pair<std::string, double>>& params, db::Engine engine,
                                              lua::Limits limits) {
  if (!lua::utf8(text)) throw ScriptError(file + ": expected a Lua file in UTF-8");
  auto w = std::make_shared<Workload>();
  w->file = file;
  w->name = std::filesystem::path(file).stem().string();
  w->limits = limits;
  {
    // The defaults, as the file sets them.
    auto first = run_top_level(file, text, false, limits, nullptr);
    w->params = read_params(first->L.get(), file);
    lua_State* L = first->L.get();
    if (luaL_loadbufferx(L, text.data(), text.size(), ("@" + file).c_str(), "t") != LUA_OK) throw ScriptError(file + ": does not compile");
    w->bytecode = lua::bytecode(L);
  }
  std::vector<WorkloadParam> effective = w->params;
  for (const auto& [name, value] : params) {
    auto it = std::find_if(effective.begin(), effective.end(), [&](const auto& p) { return p.name == name; });
    if (it == effective.end()) throw ScriptError(fmt::format("{}: no parameter '{}' (its params: {})", file, name, [&] {
                                                   std::string names;
                                                   for (const auto& p : w->params) names += (names.empty() ? "" : ", ") + p.name;
                                                   return names.empty() ? std::string("none") : names;
                                                 }()));
    if (it->flag && value != 0 && value != 1) throw ScriptError(fmt::format("{}: parameter '{}' is a flag: true, false, 1 or 0", file, name));
    it->value = value;
  }
  w->effective = effective;
  auto loaded = run_top_level(file, w->bytecode, true, limits, &effective);
  lua_State* L = loaded->L.get();
  w->description = lua::string_global(L, file, "description", true);
  w->source = lua::string_global(L, file, "source", false);
  read_tables(L, *w, engine);
  read_rows(L, *w);
  read_redis(L, *w);
  read_request(L, *w);
  read_metrics(L, *w);
  return w;
}

namespace {

// NULL as nil.
void push_value(lua_State* L, const db::Value& v) {
  if (db::is_null(v))
    lua_pushnil(L);
  else if (const auto* n = std::get_if<std::int64_t>(&v))
    lua_pushinteger(L, static_cast<lua_Integer>(*n));
  else
    lua_pushlstring(L, std::get<std::string>(v).data(), std::get<std::string>(v).size());
}

double ms(sim::Time t) { return std::chrono::duration<double, std::milli>(t.time_since_epoch()).count(); }

void push_final(lua_State* L, const Final& f) {
  lua_createtable(L, 0, 2);
  lua_createtable(L, 0, static_cast<int>(f.tables.size()));
  for (const auto& t : f.tables) {
    lua_createtable(L, static_cast<int>(t.rows.size()), 0);
    lua_Integer i = 0;
    // A table keyed by other columns has no id: the model's numbers for its rows stay out of sight.
    const bool has_id = std::find(t.columns.begin(), t.columns.end(), "id") != t.columns.end();
    for (const auto& row : t.rows) {
      lua_createtable(L, 0, static_cast<int>(t.columns.size()));
      if (has_id) {
        lua_pushinteger(L, row.id);
        lua_setfield(L, -2, "id");
      }
      for (const auto& [column, value] : row.values) {
        if (column == "id" && !has_id) continue;
        push_value(L, value);
        lua_setfield(L, -2, column.c_str());
      }
      lua_rawseti(L, -2, ++i);
    }
    lua_setfield(L, -2, t.name.c_str());
  }
  lua_setfield(L, -2, "tables");
  lua_createtable(L, 0, static_cast<int>(f.redis.size()));
  for (const auto& [key, value] : f.redis) {
    lua_pushlstring(L, key.data(), key.size());
    lua_pushlstring(L, value.data(), value.size());
    lua_rawset(L, -3);
  }
  lua_setfield(L, -2, "redis");
}

void push_history(lua_State* L, const Workload& w, std::uint64_t seed, const History& h) {
  lua_createtable(L, 0, 2);
  lua_createtable(L, static_cast<int>(h.operations.size()), 0);
  lua_Integer i = 0;
  for (const auto& op : h.operations) {
    lua_createtable(L, 0, 10);
    lua_pushinteger(L, static_cast<lua_Integer>(op.operation));
    lua_setfield(L, -2, "op");
    lua_pushinteger(L, static_cast<lua_Integer>(op.submission));
    lua_setfield(L, -2, "submission");
    lua_pushinteger(L, op.client);
    lua_setfield(L, -2, "client");
    lua_pushstring(L, op.outcome);
    lua_setfield(L, -2, "outcome");
    if (!op.error.empty()) {
      lua_pushlstring(L, op.error.data(), op.error.size());
      lua_setfield(L, -2, "error");
    }
    lua_pushinteger(L, op.attempts);
    lua_setfield(L, -2, "attempts");
    lua_pushnumber(L, op.start_ms);
    lua_setfield(L, -2, "start_ms");
    lua_pushnumber(L, op.end_ms);
    lua_setfield(L, -2, "end_ms");
    const auto fields = w.draw(seed, op.operation, op.submission, op.client, op.key);
    lua_createtable(L, 0, static_cast<int>(fields.size()));
    for (const auto& [name, value] : fields) {
      push_value(L, value);
      lua_setfield(L, -2, name.c_str());
    }
    lua_setfield(L, -2, "req");
    lua_rawseti(L, -2, ++i);
  }
  lua_setfield(L, -2, "operations");
  lua_createtable(L, static_cast<int>(h.effects.size()), 0);
  i = 0;
  for (const auto& e : h.effects) {
    lua_createtable(L, 0, 5);
    lua_pushlstring(L, e.name.data(), e.name.size());
    lua_setfield(L, -2, "name");
    push_value(L, e.value);
    lua_setfield(L, -2, "value");
    lua_pushinteger(L, static_cast<lua_Integer>(e.operation));
    lua_setfield(L, -2, "op");
    lua_pushinteger(L, e.attempt);
    lua_setfield(L, -2, "attempt");
    lua_pushnumber(L, ms(e.at));
    lua_setfield(L, -2, "at_ms");
    lua_rawseti(L, -2, ++i);
  }
  lua_setfield(L, -2, "effects");
}

}  // namespace

std::vector<std::pair<std::string, double>> check(const Workload& w, std::uint64_t seed, const Final& final, const History& history) {
  auto loaded = run_top_level(w.file, w.bytecode, true, w.limits, &w.effective);
  lua_State* L = loaded->L.get();
  global(L, "check");
  push_final(L, final);
  push_history(L, w, seed, history);
  {
    lua::MemoryCap cap(loaded->rt, true);
    if (lua_pcall(L, 2, 1, 0) != LUA_OK) throw ScriptError(lua::error_text(L, loaded->rt));
  }
  const std::string where = w.file + ": check";
  if (lua_type(L, -1) != LUA_TTABLE)
    throw ScriptError(fmt::format("{} returned {}: expected a table of counts, metric name = number", where, luaL_typename(L, -1)));
  std::vector<std::pair<std::string, double>> out;
  for (const auto& m : w.metrics) {
    lua_pushlstring(L, m.name.data(), m.name.size());
    const int t = lua_rawget(L, -2);
    const double v = lua_tonumber(L, -1);
    if (t == LUA_TNIL) throw ScriptError(fmt::format("{} returned no count for '{}', a metric it declares", where, m.name));
    if (t != LUA_TNUMBER || !std::isfinite(v) || v < 0)
      throw ScriptError(fmt::format("{} returned {} for '{}': expected a count, a number from 0", where,
                                    t == LUA_TNUMBER ? fmt::format("{:g}", v) : luaL_typename(L, -1), m.name));
    lua_pop(L, 1);
    out.emplace_back(m.name, v);
  }
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    const std::string name = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : luaL_typename(L, -2);
    if (std::none_of(w.metrics.begin(), w.metrics.end(), [&](const auto& m) { return m.name == name; }))
      throw ScriptError(fmt::format("{} returned '{}', which `metrics` does not declare", where, lua::escaped(name)));
    lua_pop(L, 1);
  }
  return out;
}

}  // namespace models::workloads
