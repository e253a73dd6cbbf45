// The fuzz test's families of strategies written in Lua (fuzz_inputs.cpp runs them).

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz.hpp"

namespace fuzz {

// ---------------------------------------------------------------------------------------------
// Strategies written in Lua: a script of strategies/, mutated on its bytes and on its tokens, or
// a file made up whole, run as `run SCENARIO --strategy-file FILE --strategy FILE` on a small
// account-bind scenario. A script that does not compile or breaks its contract is refused at
// load (one line, exit 2); whatever it does at run time (nil indexed, bad arguments to the
// API, bad SQL, an endless loop, deep recursion, memory) is a script error of the trial (exit 0
// or 1), never a crash. An endless loop ends at the instruction budget (200M per trial), a
// second or two, well within the case's time limit: these families keep the usual one.

// Lua expressions a token of a script becomes: values of each type, the API's functions and
// calls with no or bad arguments, what the sandbox takes away, the limits (time, memory, the C
// stack, the parser's levels).
std::vector<std::string> lua_values() {
  return {"nil", "{}", "-1", "0", "1e308", "-1e308", "0/0", "1/0", "-(0/0)", "math.huge", "math.mininteger",
          "math.maxinteger", "9223372036854775807", "9223372036854775808", "0x7fffffffffffffff", "-0.0", "1.5", "true",
          "false", "\"\"", "\"\\0\"", "\"\\xff\\xfe\"", "\"line\\nbreak\"", "\"%s%n%p%d\"", "\"' OR 1=1 --\"",
          "\"x'); DROP TABLE t_account; --\"", "\"" + std::string(100 * 1024, 'a') + "\"",
          "[[" + std::string(300, 'n') + "]]", "string.rep('x', 65537)", "string.rep('(', 100000)", "...", "_ENV", "_G",
          "req", "params", "bind", "db", "db.query", "db.exec", "db.connect", "db.connect()", "db.begin()",
          "db.query()", "db.query(nil)", "db.query({})", "db.query('SELECT')", "db.query('SELECT * FROM t_account')",
          "db.exec('DELETE FROM t_account')", "db.exec('UPDATE t_account SET wallet = ?', 1.5)",
          "db.query('SELECT id FROM t_account WHERE open_id = ?')",
          "db.query('SELECT id FROM t_account WHERE open_id = ?', {}, 1, 2)", "locks", "locks.redis",
          "locks.redis()", "locks.redis('k', {ttl_ms = -1})", "locks.redis('k', {ttl_ms = 0/0, tries = 1e9})",
          "locks.redis('k', 7)", "locks.redlock('k', {retry_count = -1})", "locks.zookeeper('')",
          "locks.etcd('k', {wait_ms = 1e308})", "locks.table({})", "locks.local_mutex(nil)", "redis",
          "redis.call", "redis.call('SET')", "redis.call('SET', 'k', nil)", "redis.call('FLUSHALL')",
          "redis.call('SET', 'k', 'v', 'NX', 'PX', -1)", "redis.call('INCR', 'k')", "redis.script('x')",
          "redis.script('compare_and_pexpire', 'k', 'v', 0/0)", "hold('k', nil)", "hold", "work()", "work",
          "sleep(-1)", "sleep(0/0)", "sleep(1e308)", "now_ms()", "unique()", "remote.create(nil, -1)",
          "remote.create('x', 1e308)", "error({})", "error()", "error(nil)", "error('line\\nbreak')",
          "error(string.rep('e', 100000))", "error(setmetatable({}, {__tostring = function() return {} end}))",
          "error({code = 1062, message = 'fake'})", "error({code = 'timeout'})",
          "(function() while true do end end)()", "string.rep('x', 1e9)", "('x'):rep(1e8):rep(1e8)",
          "setmetatable({}, {__gc = print})", "setmetatable({}, {__gc = function() end})",
          "(function() local function f() return f() end return f() end)()",
          "(function() local function f() return 1 + f() end return f() end)()",
          "os.exit()", "os", "require('os')", "require", "load('return 1')", "load", "dofile()", "loadfile",
          "coroutine", "coroutine.wrap(function() end)", "collectgarbage()", "collectgarbage('count')",
          "math.randomseed(1)", "math.random(0)", "math.random(1, 0)", "math.random(math.mininteger, math.maxinteger)",
          "debug.getinfo", "debug.getinfo(1)", "io.open('x')", "io.write('x')", "print('x')", "string.dump(bind)",
          "string.format('\\0%p', {})", "string.format('%p', {})", "string.format('%99.99f', 1e308)",
          "string.format('%d', 1.5)", "string.format('%q', 0/0)", "tostring(setmetatable({}, {__tostring = tostring}))",
          "tostring(setmetatable({}, {__name = 'x'}))", "setmetatable({}, {__index = function(t, k) return t[k] end}).x",
          "setmetatable({}, {__tostring = function(s) return tostring(s) end})",
          "setmetatable(_G, {__index = function() return nil end})", "getmetatable('').__index",
          "next({}, 'nope')", "pairs(nil)", "ipairs(setmetatable({}, {__index = function(t, i) return i end}))",
          "select(-1)", "select('#')", "table.unpack({}, 1, 1e7)", "table.concat({{}})", "table.insert(nil)",
          "table.sort({3, 1, 2}, function() return true end)", "table.move({}, 1, math.maxinteger, 2)",
          "utf8.char(0x7fffffff)", "utf8.len('\\xff')", "string.pack('i16', 1)", "string.unpack('s8', '')",
          "('x'):find(('x?'):rep(100000) .. ('x'):rep(100000))", "string.gsub('x', '.', string.rep('%1', 1e5))",
          "1 // 0", "math.mininteger // -1", "math.tointeger(1e308)", "#req", "-req", "req .. req", "req()",
          "string.rep('(', 300) .. string.rep(')', 300)"};
}

// Lua statements put into bind or at the top level.
std::vector<std::string> lua_statements() {
  return {"while true do end", "repeat until false", "for i = 1, math.maxinteger do end", "goto nowhere",
          "::again:: goto again", "local function f() return f() end f()", "local function f() return 1 + f() end f()",
          "local function f(n) local t = {n} return f(n + 1) + 1 end f(1)", "os.exit()", "os.exit(70)",
          "require('os')", "load('return 1')()", "error({})", "error()", "error('line\\nbreak')",
          "error('', 0)", "error(error)", "error(setmetatable({}, {__index = function() error('x') end}))",
          "local s = string.rep('x', 1e9)", "local s = 'x' while true do s = s .. s end",
          "local a, b = ('x'):rep(2^23), ('x'):rep(2^23) while true do local e = a == b end",
          "local a = ('x'):rep(2^23) while true do pcall(math.floor, a) end",
          "local t = {} for i = 1, 1e8 do t[i] = i end", "local t = {} while true do t = {t} end",
          "local t = {} for i = 1, 1e6 do t[#t + 1] = tostring(i) end",
          "setmetatable({}, {__gc = print})", "collectgarbage()", "math.randomseed(1)", "print(string.rep('x', 1e6))",
          "io.open('x', 'w')", "debug.sethook()", "coroutine.yield()",
          "local x <close> = setmetatable({}, {__close = function() error('closing') end})",
          "local x <close> = setmetatable({}, {__close = function() while true do end end})",
          "local x <close> = 1", "local x <const> = 1 x = 2",
          "while true do pcall(function() while true do end end) end",
          "while true do pcall(error, {}) end",
          "while true do pcall(function() local x <close> = setmetatable({}, {__close = function() error('e') end}) "
          "while true do end end) end",
          "while true do xpcall(function() while true do end end, function(e) return e end) end",
          "local function f(s) return (string.gsub(s, '.', f)) end f('x')",
          "local t = setmetatable({}, {__index = function(t, k) return t[k] end}) local _ = t.x",
          "local t t = setmetatable({}, {__tostring = function(s) return string.format('%s', s) end}) tostring(t)",
          "local t t = setmetatable({}, {__concat = function(a, b) return a .. b end}) local _ = t .. t",
          "local t t = setmetatable({}, {__eq = function(a, b) return a == b end}) local _ = t == setmetatable({}, "
          "getmetatable(t))",
          "local t = setmetatable({}, {__index = function(t, k) db.query('SELECT id FROM t_account') return t[k] end}) "
          "local _ = t.x",
          "string.gsub('xx', '.', function() db.query('SELECT id FROM t_account') end)",
          "table.sort({3, 2, 1}, function(a, b) sleep(1) return a < b end)",
          "xpcall(error, function() return db.query('SELECT id FROM t_account') end)",
          "tostring(setmetatable({}, {__tostring = function() work() return 'x' end}))",
          "for k, v in pairs(setmetatable({}, {__pairs = function() return function() sleep(1) return nil end end})) do end",
          "pcall(bind, req)", "bind(req)", "do return bind(req) end",
          "db.begin() db.begin()", "db.commit()", "db.rollback() db.rollback()", "db.close() db.close()",
          "db.close() db.query('SELECT id FROM t_account')",
          "local c = db.connect() c:close() c:close()", "local c = db.connect() c:close() c:query('SELECT 1 FROM t_account')",
          "local c = db.connect() c.query('SELECT 1 FROM t_account')", "local c = db.connect() getmetatable(c).__index = nil",
          "for i = 1, 100 do db.connect() end", "for i = 1, 1000 do db.connect():begin() end",
          "db.begin() db.exec('INSERT INTO t_account (open_id, device) VALUES (?, ?)', req.open_id, req.device) sleep(1e7)",
          "db.exec('INSERT INTO t_account (open_id) VALUES (?)', string.rep('x', 100000))",
          "db.exec('INSERT INTO t_account (open_id) VALUES (?)', 1e308)",
          "db.exec('INSERT INTO t_account (open_id) VALUES (?)', 0/0)",
          "db.exec('INSERT INTO t_account (open_id) VALUES (?)', math.mininteger)",
          "db.exec('INSERT INTO t_account (id, open_id) VALUES (?, ?)', math.maxinteger, 'x') "
          "db.exec('INSERT INTO t_account (open_id) VALUES (?)', 'y')",
          "db.exec('INSERT INTO t_account (open_id, device) VALUES (?, ?)', req.key, req.value)",
          "db.exec('INSERT INTO t_account (open_id, device) VALUES (?, ?)', '\\xff', req.device)",
          "db.query('SELECT id FROM t_nope')", "db.query('SELECT nope FROM t_account WHERE nope = 1')",
          "db.exec('INSERT INTO t_account (nope) VALUES (1)')", "pcall(db.query, 'SELECT id FROM t_nope')",
          "pcall(db.exec, 'UPDATE t_account SET nope = 1')", "error('\\xff')", "do return '\\xff' end",
          "db.exec('CREATE TABLE t_x (id BIGINT AUTO_INCREMENT PRIMARY KEY)')", "db.exec('DROP TABLE t_account')",
          "db.exec('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED')", "db.exec('BEGIN') db.exec('BEGIN')",
          "db.query('SELECT id FROM t_account WHERE ' .. string.rep('id = 1 AND ', 2000) .. 'id = 1')",
          "db.query('SELECT id FROM t_account' .. string.rep(' ', 70000))",
          "db.query('SELECT ' .. string.rep('id, ', 1500) .. 'id FROM t_account')",
          "db.query('SELECT id FROM t_account WHERE open_id = ?', "
          "table.unpack((function() local t = {} for i = 1, 1200 do t[i] = i end return t end)()))",
          "db.query('SELECT id FROM t_account WHERE open_id = ?', req)",
          "db.query('SELECT id FROM t_account WHERE open_id = ?', db.connect())",
          "local l = locks.redis('k', {ttl_ms = 1000}) if l then l:release() l:release() end",
          "local l = locks.redis('k') if l then l.release() end",
          "local l = locks.redis('k') if l then l:rejected() l:rejected() end",
          "local l = locks.local_mutex('k') local m = locks.local_mutex('k')",
          "local l = locks.table('k') local m = locks.table('k')", "locks.table('k', 1)",
          "local l = locks.redlock('k', {ttl_ms = 0, node_timeout_ms = 1e12, retry_count = 1e9})",
          "local l = locks.redisson('k', {lease_ms = 0, wait_ms = 1e12, pause_ms = 0})",
          "local l = locks.redisson('k', {lease_ms = 1}) sleep(1e6)",
          "local l = locks.zookeeper('/a/../b', {wait_ms = -1, herd = 'yes'})", "locks.zookeeper('no-slash')",
          "local l = locks.etcd('', {wait_ms = 0/0})",
          "local l = locks.redis('k', {ttl_ms = 1e12, wait_ms = 1e12, pause_ms = 0})",
          "for i = 1, 10000 do locks.redis('k' .. i, {ttl_ms = 1}) end",
          "local h = hold('k', 'v') h.release() h.release()", "hold({}, {})", "hold(string.rep('k', 1e6), 'v')",
          "redis.call('SET', 'k', 'v', 'NX', 'PX', 0/0)", "redis.call('SET', 'k', {}, 'EX')",
          "redis.call('PEXPIRE', 'k', 1e308)", "redis.call('EVAL', 'return 1', 0)", "redis.call(string.rep('G', 1e6))",
          "redis.script('compare_and_delete')", "redis.script('compare_and_delete', nil, nil)",
          "for i = 1, 1e6 do redis.call('INCR', 'n') end", "for i = 1, 1e5 do db.query('SELECT id FROM t_account') end",
          "while true do sleep(0) end", "while true do now_ms() end", "while true do unique() end", "sleep(1e12)",
          "sleep(9.3e12)", "sleep(-1e308)", "work(-1)", "for i = 1, 1e6 do work() end", "remote.create(req.open_id, 0)",
          "remote.create(req.open_id, -1e308)", "remote.create({}, {})", "req.open_id = nil",
          "req = nil", "params = nil", "_ENV = nil", "_G.db = nil", "db = nil", "db.query = nil", "locks = {}",
          "setmetatable(_G, {__newindex = function() error('x') end}) y = 1", "math.random = nil",
          "string.rep = nil local x = ('x'):rep(2)", "getmetatable('').__index = function() error('x') end local _ = ('x'):len()",
          "bind = nil", "bind = 1", "bind = print", "bind = error", "bind = db.query", "bind = work", "bind = pcall",
          "bind = coroutine", "bind = setmetatable({}, {__call = function() end})",
          "description = nil", "description = 1", "description = 'line\\nbreak'", "description = 'd\\xff'",
          "description = string.rep('d', 1e6)",
          "params = {x = 0/0}", "params = {ttl_ms = -1}", "params = {ttl_ms = 1e13}", "params = {n = 1.5}",
          "params = {n = 1e7}", "params = {1, 2}", "params = {['a b'] = 1}", "params = {[''] = 1}", "params = {x = 'y'}",
          "params = {x = {}}", "params = 'x'", "params = setmetatable({}, {__index = function() return 1 end})",
          "tables = 1", "tables = {1}", "tables = {''}", "tables = {'DROP TABLE t_account'}",
          "tables = {'CREATE TABLE t_account (id BIGINT AUTO_INCREMENT PRIMARY KEY)'}",
          "tables = {'CREATE TABLE t_account (id BIGINT AUTO_INCREMENT PRIMARY KEY, open_id VARCHAR(64), "
          "device VARCHAR(64), UNIQUE KEY (device))'}",
          "tables = {'CREATE TABLE t_x (id BIGINT AUTO_INCREMENT PRIMARY KEY)', "
          "'CREATE TABLE t_x (id BIGINT AUTO_INCREMENT PRIMARY KEY)'}",
          "tables = {'CREATE TABLE t_lock (id BIGINT AUTO_INCREMENT PRIMARY KEY)'} uses = {'lock_table'}",
          "tables = {'CREATE TABLE t_fence (id BIGINT AUTO_INCREMENT PRIMARY KEY)'} uses = {'fences'}",
          "tables = {'CREATE TABLE t_account (id BIGINT AUTO_INCREMENT PRIMARY KEY, open_id VARCHAR(64), ' .. "
          "string.rep('c', 60000) .. ' BIGINT)'}",
          "tables = {(function() local s = 'CREATE TABLE t_w (id BIGINT AUTO_INCREMENT PRIMARY KEY' for i = 1, 1100 do "
          "s = s .. ', c' .. i .. ' BIGINT' end return s .. ')' end)()}",
          "uses = 1", "uses = {'bogus'}", "uses = {1}", "uses = {'redis', 'redlock', 'zookeeper', 'etcd', 'remote', "
          "'lock_table', 'fences'}", "uses = {'redlock', 'redlock'}", "source = {}", "risks = string.rep('r', 1e6)"};
}

// Something 300 (or 100,000) levels deep: the parser's limit on nesting, met at load.
std::string lua_nesting(Rng& rng, std::string& what) {
  const std::size_t depth = rng.pick(std::vector<std::size_t>{300, 300, 100'000});
  const bool closed = !rng.one_in(4);
  std::string text;
  switch (rng.below(4)) {
    case 0:
      text = std::string(depth, '(') + "1" + (closed ? std::string(depth, ')') : "");
      what = fmt::format("{} nested (", depth);
      break;
    case 1:
      text = std::string(depth, '{') + (closed ? std::string(depth, '}') : "");
      what = fmt::format("{} nested {{", depth);
      break;
    case 2: {
      for (std::size_t i = 0; i < depth; ++i) text += "(function() return ";
      text += "1";
      if (closed)
        for (std::size_t i = 0; i < depth; ++i) text += " end)()";
      what = fmt::format("{} nested functions", depth);
      break;
    }
    default:
      text = std::string(depth, '~') + "1";  // unary ~ (bitwise not), depth times
      what = fmt::format("{} nested unary operators", depth);
  }
  if (!closed) what += ", unclosed";
  return text;
}

// A script's tokens, roughly as Lua's lexer sees them: names, keywords, strings (short and long),
// numbers and the rest one character each; comments skipped.
struct LuaToken {
  std::size_t at, size;
  char kind;  // 'n' name, 'k' keyword, 's' string, '0' number, 'p' punctuation
};

std::vector<LuaToken> lua_tokens(const std::string& t) {
  static const std::vector<std::string> keywords = {"and",   "break", "do",  "else", "elseif", "end",    "false",
                                                    "for",   "function", "goto", "if", "in",  "local",  "nil",
                                                    "not",   "or",    "repeat", "return", "then", "true", "until", "while"};
  const std::size_t n = t.size();
  const auto alnum = [&](std::size_t i) { return std::isalnum(static_cast<unsigned char>(t[i])) || t[i] == '_'; };
  // The level of a long bracket `[==[` at `at`, plus one; 0 when there is none.
  const auto long_bracket = [&](std::size_t at) -> std::size_t {
    if (at >= n || t[at] != '[') return 0;
    std::size_t j = at + 1;
    while (j < n && t[j] == '=') ++j;
    return j < n && t[j] == '[' ? j - at : 0;
  };
  const auto past_long = [&](std::size_t at, std::size_t level) {
    const std::string close = "]" + std::string(level - 1, '=') + "]";
    const std::size_t end = t.find(close, at + level + 1);
    return end == std::string::npos ? n : end + close.size();
  };
  std::vector<LuaToken> out;
  for (std::size_t i = 0; i < n;) {
    const auto c = static_cast<unsigned char>(t[i]);
    if (std::isspace(c)) {
      ++i;
      continue;
    }
    if (c == '-' && i + 1 < n && t[i + 1] == '-') {
      if (const std::size_t level = long_bracket(i + 2)) {
        i = past_long(i + 2, level);
      } else {
        const std::size_t end = t.find('\n', i);
        i = end == std::string::npos ? n : end;
      }
      continue;
    }
    const std::size_t start = i;
    char kind = 'p';
    if (std::isalpha(c) || c == '_') {
      while (i < n && alnum(i)) ++i;
      kind = std::find(keywords.begin(), keywords.end(), t.substr(start, i - start)) != keywords.end() ? 'k' : 'n';
    } else if (std::isdigit(c) || (c == '.' && i + 1 < n && std::isdigit(static_cast<unsigned char>(t[i + 1])))) {
      ++i;
      while (i < n && (alnum(i) || t[i] == '.' ||
                       ((t[i] == '+' || t[i] == '-') && std::strchr("eEpP", t[i - 1]) != nullptr)))
        ++i;
      kind = '0';
    } else if (c == '"' || c == '\'') {
      ++i;
      while (i < n && t[i] != static_cast<char>(c) && t[i] != '\n') i += t[i] == '\\' ? 2 : 1;
      i = std::min(n, i + 1);
      kind = 's';
    } else if (const std::size_t level = long_bracket(i)) {
      i = past_long(i, level);
      kind = 's';
    } else {
      ++i;
    }
    out.push_back({start, i - start, kind});
  }
  return out;
}

// The line numbers (1-based) of `text`'s lines, as offsets of their starts.
std::vector<std::size_t> line_starts(const std::string& text) {
  std::vector<std::size_t> starts{0};
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') starts.push_back(i + 1);
  return starts;
}

std::size_t line_of(const std::vector<std::size_t>& starts, std::size_t at) {
  return static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), at) - starts.begin());
}

// Byte mutations: a byte or a run of them deleted, duplicated or changed, the file cut short,
// or spliced with another script (or itself) at random points.
Mutant lua_bytes(Rng& rng, const std::string& text, const Context& ctx) {
  std::string bytes = text;
  if (bytes.empty()) bytes = " ";
  const std::size_t at = rng.below(bytes.size());
  const std::size_t run = std::min(bytes.size() - at, 1 + (rng.one_in(2) ? 0 : rng.below(40)));
  const auto lines = line_starts(bytes);
  const std::string where = fmt::format("at byte {} (line {})", at, line_of(lines, at));
  switch (rng.below(7)) {
    case 0: return {fmt::format("{} bytes deleted", run), where, bytes.erase(at, run)};
    case 1: return {fmt::format("{} bytes duplicated", run), where, bytes.insert(at, bytes.substr(at, run))};
    case 2: {
      const std::size_t flips = 1 + rng.below(4);
      for (std::size_t i = 0; i < flips; ++i) {
        const std::size_t b = rng.below(bytes.size());
        bytes[b] = static_cast<char>(bytes[b] ^ (1 << rng.below(8)));
      }
      return {fmt::format("{} bits flipped", flips), where, bytes};
    }
    case 3: {
      const std::size_t changes = 1 + rng.below(4);
      const std::string odd = std::string(1, '\0') + "\xff\n\r\"'[]=-(){}\\.;:~#%";
      for (std::size_t i = 0; i < changes; ++i)
        bytes[rng.below(bytes.size())] = rng.one_in(2) ? odd[rng.below(odd.size())] : static_cast<char>(rng.below(256));
      return {fmt::format("{} bytes changed", changes), where, bytes};
    }
    case 4: return {"file cut short", where, bytes.substr(0, at)};
    case 5: {  // the head of this script and the tail of another (or of itself, elsewhere)
      const std::string& other = ctx.scripts.empty() ? text : rng.pick(ctx.scripts).bytes;
      const std::size_t from = other.empty() ? 0 : rng.below(other.size());
      return {"spliced with another script", fmt::format("{}, its tail from byte {}", where, from),
              bytes.substr(0, at) + other.substr(from)};
    }
    default: {
      std::string noise;
      for (std::size_t i = 0, k = 1 + rng.below(16); i < k; ++i) noise += static_cast<char>(rng.below(256));
      return {fmt::format("{} random bytes inserted", noise.size()), where, bytes.insert(at, noise)};
    }
  }
}

// A name, string or number of the script (a keyword or a symbol now and then) replaced by one of
// the expressions above, by a 300-deep nesting, or by another token of the script.
Mutant lua_token(Rng& rng, const std::string& text, const Context&) {
  const auto tokens = lua_tokens(text);
  std::vector<LuaToken> kept;
  const bool any = rng.one_in(6);
  for (const auto& t : tokens)
    if (any || t.kind == 'n' || t.kind == 's' || t.kind == '0') kept.push_back(t);
  if (kept.empty()) return {"no token to replace: the script as it is", "", text};
  const LuaToken t = rng.pick(kept);
  std::string value, what;
  switch (rng.below(10)) {
    case 0: value = lua_nesting(rng, what); break;
    case 1: {
      const LuaToken other = rng.pick(kept);
      value = text.substr(other.at, other.size);
      what = "another token of the script: " + printable(value, 40);
      break;
    }
    default:
      value = rng.pick(lua_values());
      what = printable(value, 60);
  }
  std::string bytes = text;
  bytes.replace(t.at, t.size, value);
  const auto lines = line_starts(text);
  return {"token replaced by " + what,
          fmt::format("{} at line {}", printable(text.substr(t.at, t.size), 30), line_of(lines, t.at)), bytes};
}

// A statement put where it runs: first in bind, after bind's body (bind wrapped, so the script
// stays valid), at the end of the top level (it runs at load), or at the start of a line.
Mutant lua_statement(Rng& rng, const std::string& text, const Context&) {
  std::string statement, what;
  if (rng.one_in(10)) statement = "local x = " + lua_nesting(rng, what);
  else if (rng.one_in(4)) statement = "local x = " + (what = rng.pick(lua_values()));
  else statement = what = rng.pick(lua_statements());
  what = printable(what, 70);
  std::string bytes = text;
  const std::size_t bind = text.find("function bind(");
  switch (rng.below(5)) {
    case 0:
    case 1:
      bytes += "\nlocal fuzz_bind = bind\nfunction bind(req)\n  " + statement + "\n  return fuzz_bind(req)\nend\n";
      return {"statement first in bind: " + what, "bind wrapped", bytes};
    case 2:
      bytes += "\nlocal fuzz_bind = bind\nfunction bind(req)\n  local fuzz_result = fuzz_bind(req)\n  " + statement +
               "\n  return fuzz_result\nend\n";
      return {"statement after bind's body: " + what, "bind wrapped", bytes};
    case 3: return {"statement at the top level's end: " + what, "end of file", bytes + "\n" + statement + "\n"};
    default: {
      const auto lines = line_starts(text);
      std::size_t line = rng.below(lines.size());
      if (bind != std::string::npos && !rng.one_in(3)) {  // a line in bind, past its header
        const std::size_t first = line_of(lines, bind);
        line = std::min(lines.size() - 1, first + rng.below(std::max<std::size_t>(1, lines.size() - first)));
      }
      bytes.insert(lines[line], statement + "\n");
      return {"statement at a line's start: " + what, fmt::format("line {}", line + 1), bytes};
    }
  }
}

// Two or three of the above, one after the other.
Mutant lua_stacked(Rng& rng, const std::string& text, const Context& ctx) {
  using Mutate = Mutant (*)(Rng&, const std::string&, const Context&);
  const std::vector<Mutate> mutations = {lua_bytes, lua_token, lua_token, lua_statement, lua_statement};
  Mutant m{"", "", text};
  std::string what, where;
  for (std::size_t i = 0, n = 2 + rng.below(2); i < n; ++i) {
    m = rng.pick(mutations)(rng, m.bytes, ctx);
    what += (what.empty() ? "" : " + ") + m.what;
    where += (where.empty() ? "" : " + ") + m.where;
  }
  return {what, where, m.bytes};
}

// The command a script case runs: mostly `run` on one trial, sometimes two trials on two
// threads, `--check-determinism`, `explore`, or the script named in a scenario file's
// strategies ({"script": FILE}) instead of by --strategy-file.
void lua_command(Rng& rng, const Context& ctx, const std::string& path, Case& c) {
  const Source& s = ctx.sources[ctx.script_scenario];
  const std::string label = path;  // the file name as given
  switch (rng.below(20)) {
    case 0:
    case 1: {
      json doc = s.doc;
      json entry = {{"script", path}};
      if (rng.one_in(3)) entry["as"] = "fuzz-script";
      doc["strategies"] = json::array({entry});
      doc.erase("expect");
      const std::string file = "lua-" + s.file_name;
      c.files[file] = doc.dump(2);
      c.args = {"run", file, "--trials", "1", "--jobs", "1"};
      c.where += " (listed in " + file + ")";
      return;
    }
    case 2:
      c.args = {"run", s.name, "--strategy-file", path, "--strategy", label, "--trials", "2", "--jobs", "2"};
      return;
    case 3:
      c.args = {"run", s.name, "--strategy-file", path, "--strategy", label, "--trials", "1", "--jobs", "1",
                "--check-determinism"};
      return;
    case 4:
      c.args = {"explore", s.name, "--strategy-file", path, "--strategy", label, "--budget", "3", "--time", "5", "--no-shrink"};
      return;
    default: c.args = {"run", s.name, "--strategy-file", path, "--strategy", label, "--trials", "1", "--jobs", "1"};
  }
}

// A script of strategies/ mutated (or, with none found, a minimal one).
Case lua_script(Rng& rng, const Source&, const Context& ctx) {
  static const Script fallback{"check-then-insert.lua",
                               "description = \"check then insert\"\n\nfunction bind(req)\n  if #db.query(\"SELECT id FROM "
                               "t_account WHERE open_id = ?\", req.open_id) == 0 then\n    work()\n    db.exec(\"INSERT INTO "
                               "t_account (open_id, device) VALUES (?, ?)\", req.open_id, req.device)\n  end\nend\n"};
  const Script& script = ctx.scripts.empty() ? fallback : rng.pick(ctx.scripts);
  using Mutate = Mutant (*)(Rng&, const std::string&, const Context&);
  const std::vector<std::pair<Mutate, int>> mutations = {{lua_bytes, 3}, {lua_token, 4}, {lua_statement, 5}, {lua_stacked, 2}};
  int draw = static_cast<int>(rng.below(14));
  Mutate mutate = lua_bytes;
  for (const auto& [m, weight] : mutations)
    if ((draw -= weight) < 0) {
      mutate = m;
      break;
    }
  const Mutant m = mutate(rng, script.bytes, ctx);
  const std::string path = "fuzz-" + script.file_name;  // never a catalogue name: no fallback to strategies/
  Case c{"", m.what, path + " " + m.where, {}, {}, {}};
  c.files[path] = m.bytes;
  c.names_file = path;
  lua_command(rng, ctx, path, c);
  return c;
}

// A file made up whole: empty, binary, a compiled chunk, over the size limit, not a file, none,
// oddly named.
Case lua_generated(Rng& rng, const Source&, const Context& ctx) {
  const std::string valid = ctx.scripts.empty() ? "description = \"d\"\nfunction bind(req) end\n" : rng.pick(ctx.scripts).bytes;
  std::string path = "fuzz.lua", what, bytes;
  bool folder = false, absent = false;
  switch (rng.below(16)) {
    case 0: what = "empty file"; break;
    case 1:
      for (std::size_t i = 0, n = 1 + rng.below(4096); i < n; ++i) bytes += static_cast<char>(rng.below(256));
      what = fmt::format("{} random bytes", bytes.size());
      break;
    case 2:
      bytes = std::string("\x1bLua", 4);
      if (rng.one_in(2)) bytes += std::string("T\x00\x19\x93\r\n\x1a\n\x04\x08\x08", 11);  // 5.4's header
      for (std::size_t i = 0, n = rng.below(200); i < n; ++i) bytes += static_cast<char>(rng.below(256));
      what = "a compiled chunk (\\x1bLua...)";
      break;
    case 3:
      bytes = std::string(5 << 20, ' ') + valid;
      what = "5 MiB (over the size limit)";
      break;
    case 4:  // at the limit exactly, valid: a long comment and the script
      bytes = "--[[" + std::string((4 << 20) - valid.size() - 7, 'c') + "]]\n" + valid;
      what = fmt::format("{} bytes, a long comment then a script", bytes.size());
      break;
    case 5: folder = true, what = "a folder"; break;
    case 6: absent = true, what = "no such file"; break;
    case 7:
      bytes = "\xef\xbb\xbf" + valid;
      what = "a byte-order mark, then a script";
      break;
    case 8:
      bytes = "#!/usr/bin/env lua\n" + valid;
      what = "a #! line, then a script";
      break;
    case 9: {
      std::string nested;
      bytes = "description = \"d\"\nfunction bind(req)\n  local x = " + lua_nesting(rng, nested) + "\nend\n";
      what = "bind holding " + nested;
      break;
    }
    case 10: {  // names: the label is the file name, and it reaches messages and report paths
      const std::vector<std::string> names = {"x y.lua", "line\nbreak.lua", "h\xc3\xa9.lua", "\xff\xfe.lua", "x.lua.lua", ".lua",
                                              "-x.lua", "--x.lua", std::string(240, 'n') + ".lua", "x.txt", "x",
                                              "unique-index", "fencing-token", "unique-index.lua", "all", "%s{}.lua", "..lua"};
      path = rng.pick(names);
      bytes = valid;
      what = "a script named " + printable(path, 40);
      break;
    }
    case 11: {
      for (int i = 0; i < 250; ++i) bytes += fmt::format("local v{} = {}\n", i, i);
      bytes += valid;
      what = "250 locals at the top level (the limit is 200)";
      break;
    }
    case 12: {
      bytes = "description = \"d\"\nlocal t = {";
      for (int i = 0; i < 200'000; ++i) bytes += fmt::format("{},", i);
      bytes += "}\nfunction bind(req) local n = 0 for _ in pairs(t) do n = n + 1 end end\n";
      what = "a table of 200,000 constants, iterated in bind";
      break;
    }
    case 13: {
      bytes = valid;
      bytes.insert(rng.below(bytes.size() + 1), std::string("\0", 1));
      what = "a NUL byte inside the script";
      break;
    }
    case 14:
      bytes = "description = \"d\"\nfunction bind(req)\n" + std::string(1 << 20, ';') + "\nend\n";
      what = "a line of 1 MiB";
      break;
    default:
      bytes = valid + "\n" + valid;
      what = "the script twice";
  }
  Case c{"", what, path, {}, {}, {}};
  if (folder) c.folders.push_back(path);
  else if (!absent) c.files[path] = bytes;
  c.names_file = path;
  lua_command(rng, ctx, path, c);
  return c;
}

}  // namespace fuzz
