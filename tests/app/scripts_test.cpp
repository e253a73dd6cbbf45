// Strategies written in Lua: what a script can do and what it cannot. Its database and lock
// calls reach the same models and checkers as C++ code; its mistakes are refused at load (a
// syntax error, a missing bind) or counted as that trial's script errors at run time (a nil
// indexed, an endless loop, runaway recursion), never a crash; and its results depend on the
// seed alone, whatever the order Lua's own hash tables would give.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "scenario_files.hpp"
#include "support.hpp"
#include "app/runner.hpp"
#include "app/scenario.hpp"

namespace {

using nlohmann::json;

// A Lua file holding `text`, removed after the test; its label is its file name.
struct TempScript {
  explicit TempScript(const std::string& text) {
    path = test::unique_temp_path("locksim-script", ".lua").string();
    std::ofstream(path) << text;
  }
  ~TempScript() { std::filesystem::remove(path); }
  std::string label() const { return std::filesystem::path(path).filename().string(); }
  std::string path;
};

// Four clients, two keys, one app server with two workers; no faults.
json small_world(int trials = 2) {
  return {{"name", "x"},
          {"topology", {{"app_servers", 1}, {"workers", 2}, {"app_work", {{"fixed_ms", 5}}}}},
          {"clients", {{"count", 4}, {"keys", 2}, {"timeout_ms", 5000}, {"max_attempts", 1}}},
          {"trials", trials}};
}

locksim::Scenario load(const TempScript& script, const json& world = small_world(), std::vector<std::string> sets = {}) {
  test::TempScenario file(world.dump());
  sets.insert(sets.begin(), "+script=" + script.path);
  return locksim::load_scenario(file.path, sets, {script.label()});
}

locksim::reports::StrategyResult run(const TempScript& script, const json& world = small_world()) {
  const locksim::reports::RunResults r = locksim::run_scenario(load(script, world));
  REQUIRE(r.strategies.size() == 1);
  return r.strategies.front();
}

double total(const locksim::reports::StrategyResult& r, const std::string& metric) {
  auto it = r.counts.find(metric);
  return it == r.counts.end() ? 0 : it->second.total;
}

// What loading the script says, or "" when it loads.
std::string refusal(const std::string& text) {
  TempScript script(text);
  try {
    load(script);
  } catch (const locksim::InputError& e) {
    return e.what();
  }
  return "";
}

constexpr const char* kHeader = "description = 'a test script'\n";
constexpr const char* kCheckThenInsert = R"lua(
function bind(req)
  if #db.query("SELECT id FROM t_account WHERE open_id = ?", req.open_id) == 0 then
    work()
    db.exec("INSERT INTO t_account (open_id, device) VALUES (?, ?)", req.open_id, req.device)
  end
end
)lua";

}  // namespace

TEST_CASE("a script's syntax error is refused at load as one line with its file and line") {
  TempScript script(std::string(kHeader) + "function bind(req)\n  if x then\nend\n");
  try {
    load(script);
    FAIL("the script was accepted");
  } catch (const locksim::InputError& e) {
    const std::string message = e.what();
    CHECK(message.starts_with(script.path + ":5: "));
    CHECK(message.find('\n') == std::string::npos);
  }
}

TEST_CASE("a script without a description or a bind function is refused, naming what is missing") {
  CHECK_THAT(refusal("function bind(req) end"), Catch::Contains("expected `description` to be a string (it is missing)"));
  CHECK_THAT(refusal(kHeader), Catch::Contains("expected a function bind(req)"));
  CHECK_THAT(refusal(std::string(kHeader) + "params = { ttl_ms = 'long' }\nfunction bind(req) end"),
             Catch::Contains("params.ttl_ms: expected a number or a boolean, got string"));
  CHECK_THAT(refusal(std::string(kHeader) + "tables = { 'CREATE TABLE t_account (id BIGINT AUTO_INCREMENT PRIMARY KEY, device "
                                            "VARCHAR(64))' }\nfunction bind(req) end"),
             Catch::Contains("t_account needs an open_id column"));
  CHECK_THAT(refusal(std::string(kHeader) + "db.query('SELECT 1 FROM t_account')\nfunction bind(req) end"),
             Catch::Contains("only inside bind(req)"));
}

TEST_CASE("a script reaches no file, process or loader: os, io, require, load and dofile are absent") {
  CHECK(refusal(std::string(kHeader) +
                "assert(os == nil and io == nil and require == nil and load == nil and dofile == nil and loadfile == nil)\n"
                "assert(string.dump == nil and collectgarbage == nil and math.randomseed == nil)\n"
                "function bind(req) end") == "");
}

TEST_CASE("a script's check-then-insert duplicates as the C++ one does, and its duplicate checker reads t_account") {
  TempScript script(std::string(kHeader) + kCheckThenInsert);
  const auto r = run(script);
  CHECK(r.operations == 8);
  CHECK(total(r, "duplicate_rows") > 0);
  CHECK(total(r, "script_errors") == 0);
}

TEST_CASE("a script's runtime error ends the attempt as internal and counts with its file, line and who") {
  TempScript script(std::string(kHeader) + "function bind(req)\n  local rows = nil\n  return rows.first\nend\n");
  const auto r = run(script);
  CHECK(total(r, "script_errors") == 8);
  CHECK(total(r, "errors.internal") == 8);
  REQUIRE(!r.examples.empty());
  CHECK_THAT(r.examples.front(), Catch::StartsWith("seed 1: script error: " + script.path + ":4: attempt to index a nil value"));
  CHECK_THAT(r.examples.front(), Catch::Contains("app-1 worker"));
}

TEST_CASE("a database error is a Lua value with its code and message: caught by pcall, or ending the attempt as its kind") {
  const std::string unique_table = R"lua(tables = { "CREATE TABLE t_account (id BIGINT AUTO_INCREMENT PRIMARY KEY, open_id VARCHAR(64), device VARCHAR(64), UNIQUE KEY (open_id))" }
)lua";
  const std::string insert = "db.exec('INSERT INTO t_account (open_id, device) VALUES (?, ?)', req.open_id, req.device)";
  // Each attempt inserts its key twice: the second insert is a 1062.
  TempScript caught(std::string(kHeader) + unique_table + "function bind(req)\n  pcall(function() " + insert +
                    " end)\n  local ok, e = pcall(function() " + insert +
                    " end)\n  if ok or e.code ~= 1062 or not e.message:find('Duplicate entry') then return 'internal' end\nend\n");
  const auto a = run(caught);
  CHECK(total(a, "errors.internal") == 0);
  CHECK(total(a, "duplicate_rows") == 0);
  TempScript uncaught(std::string(kHeader) + unique_table + "function bind(req)\n  pcall(function() " + insert + " end)\n  " + insert +
                      "\nend\n");
  const auto b = run(uncaught);
  CHECK(total(b, "errors.1062") == 8);
  CHECK(total(b, "script_errors") == 0);
}

TEST_CASE("bad SQL or a bad argument in a script is a script error at its line, not a crash") {
  TempScript bad_sql(std::string(kHeader) + "function bind(req)\n  db.query('SELEC id FROM t_account')\nend\n");
  const auto a = run(bad_sql);
  CHECK(total(a, "script_errors") == 8);
  CHECK_THAT(a.examples.front(), Catch::Contains(bad_sql.path + ":3: 1064: You have an error in your SQL syntax"));
  TempScript bad_argument(std::string(kHeader) + "function bind(req)\n  db.query({})\nend\n");
  const auto b = run(bad_argument);
  CHECK_THAT(b.examples.front(), Catch::Contains(bad_argument.path + ":3: the statement: expected a string, got table"));
}

TEST_CASE("an endless loop stops the trial at the instruction budget, which no pcall catches, counted as unfinished") {
  TempScript script(std::string(kHeader) + "function bind(req)\n  while true do pcall(function() while true do end end) end\nend\n");
  const auto r = run(script);
  CHECK(total(r, "unfinished_runs") == 2);
  REQUIRE(!r.examples.empty());
  CHECK_THAT(r.examples.front(), Catch::Contains("the instruction budget of"));
  CHECK_THAT(r.examples.front(), Catch::Contains(script.path + ":3"));
}

TEST_CASE("runaway recursion, in Lua or through C, is a clean script error and not a crash of the simulator") {
  TempScript lua_recursion(std::string(kHeader) + "local function f(n) return f(n + 1) + 1 end\nfunction bind(req) f(1) end\n");
  const auto a = run(lua_recursion);
  CHECK(total(a, "script_errors") == 8);
  CHECK_THAT(a.examples.front(), Catch::Contains("stack overflow"));
  // Each __index call goes through C: Lua's C-call limit ends it, within the process's stack.
  TempScript c_recursion(std::string(kHeader) +
                         "function bind(req)\n  local t = setmetatable({}, { __index = function(t, k) return t[k] end })\n"
                         "  return t.x\nend\n");
  const auto b = run(c_recursion);
  CHECK(total(b, "script_errors") == 8);
  CHECK_THAT(b.examples.front(), Catch::Contains("stack overflow"));
  CHECK_THAT(b.examples.front(), Catch::Contains(c_recursion.path + ":"));  // Lua gives no position from C: the file all the same
}

TEST_CASE("a script's results depend on the seed alone: pairs, next and table.sort take a fixed order, math.random the worker's "
          "stream") {
  // The sleeps follow the iteration order of a string-keyed table and random draws: any
  // difference in either changes the trace.
  TempScript script(std::string(kHeader) + R"lua(
function bind(req)
  local t = {}
  for _, k in ipairs({ "delta", "alpha", "echo", "charlie", "bravo", req.device }) do t[k] = #k end
  local n = 0
  for k, v in pairs(t) do n = n + 1; sleep(v * n) end
  local k = next(t)
  assert(k == "alpha", "next gives the smallest key first, got " .. tostring(k))
  local rows = { { k = 2, n = "b" }, { k = 1, n = "a" }, { k = 2, n = "c" }, { k = 1, n = "d" } }
  table.sort(rows, function(a, b) return a.k < b.k end)
  assert(rows[1].n == "a" and rows[2].n == "d" and rows[3].n == "b" and rows[4].n == "c", "table.sort is stable")
  assert(tostring({}) == "table" and not tostring(print or bind):find("0x"), "tostring shows no address")
  assert(not pcall(string.format, "%p", {}), "string.format refuses %p")
  sleep(math.random(1, 1000))
end
)lua");
  const locksim::Scenario s = load(script, small_world(3));
  const auto a = locksim::run_scenario(s, 1), b = locksim::run_scenario(s, 2);
  const auto c = locksim::run_scenario(load(script, small_world(3)), 1);  // a new Lua state, with its own string hashes
  CHECK(total(a.strategies.front(), "script_errors") == 0);
  CHECK(a.strategies.front().trace_hash == b.strategies.front().trace_hash);
  CHECK(a.strategies.front().trace_hash == c.strategies.front().trace_hash);
  locksim::Scenario other = s;
  other.seed = 100;
  CHECK(locksim::run_scenario(other, 1).strategies.front().trace_hash != a.strategies.front().trace_hash);
}

TEST_CASE("a lock a script still holds when bind returns is released, and hold() reports a lock the script took itself") {
  // SETNX without expiry, never released by the script: the runtime's release frees it.
  TempScript forgotten(std::string(kHeader) + "function bind(req)\n  local lock = locks.redis('lock:' .. req.open_id)\n"
                                              "  if not lock then return 'lock_busy' end\nend\n");
  const auto a = run(forgotten);
  CHECK(total(a, "stuck_locks") == 0);
  CHECK(total(a, "errors.lock_busy") < 8);
  // A raw SET NX PX of 10 ms held for 50 ms: the insert after the lease ran out is a violation,
  // seen only because hold() declared the lock.
  const std::string raw = std::string(kHeader) + R"lua(
function bind(req)
  if redis.call("SET", "lock:" .. req.open_id, unique(), "NX", "PX", 10) ~= "OK" then return "lock_busy" end
  local h = DECLARE
  sleep(50)
  db.exec("INSERT INTO t_account (open_id, device) VALUES (?, ?)", req.open_id, req.device)
  if h then h:release() end
  redis.script("compare_and_delete", "lock:" .. req.open_id, unique())
end
)lua";
  std::string declared = raw, undeclared = raw;
  declared.replace(declared.find("DECLARE"), 7, "hold('lock:' .. req.open_id, unique(), 10)");
  undeclared.replace(undeclared.find("DECLARE"), 7, "nil");
  TempScript with_hold(declared), without_hold(undeclared);
  CHECK(total(run(with_hold), "lease_expiry_violations") > 0);
  CHECK(total(run(without_hold), "lease_expiry_violations") == 0);
}

TEST_CASE("a script's parameters take --set by its label and are checked by kind, its content is part of the scenario hash") {
  // The top level sees the values in effect too.
  const std::string text = std::string(kHeader) + "params = { ttl_ms = 100, double_check = true, tries = 3 }\nlocal ttl = params.ttl_ms\n"
                                                  "function bind(req)\n"
                                                  "  assert(ttl == 250 and params.ttl_ms == 250 and params.double_check == false)\nend\n";
  TempScript script(text);
  const auto s = load(script, small_world(), {script.label() + ".ttl_ms=250", script.label() + ".double_check=false"});
  CHECK(s.strategies.front().params.at("ttl_ms") == 250);
  CHECK(total(locksim::run_scenario(s).strategies.front(), "script_errors") == 0);
  CHECK_THROWS_WITH(load(script, small_world(), {script.label() + ".tries=1.5"}), Catch::Contains("tries"));
  CHECK_THROWS_WITH(load(script, small_world(), {script.label() + ".nope=1"}), Catch::Contains("nope"));
  const std::uint64_t before = s.hash;
  std::ofstream(script.path) << text << "-- changed\n";
  CHECK(load(script).hash != before);
}

TEST_CASE("a statement on a table or column that does not exist is the script's error, as MySQL's 1146 and 1054, and a number "
          "bound to a text column is converted") {
  TempScript missing_table(std::string(kHeader) + "function bind(req)\n  db.query('SELECT id FROM t_nope')\nend\n");
  const auto a = run(missing_table);
  CHECK(total(a, "script_errors") == 8);
  CHECK_THAT(a.examples.front(), Catch::Contains(missing_table.path + ":3: 1146: Table 't_nope' doesn't exist"));
  TempScript missing_column(std::string(kHeader) +
                            "function bind(req)\n  local ok, e = pcall(db.exec, 'INSERT INTO t_account (open_id, devce) VALUES (?, ?)', "
                            "req.open_id, req.device)\n  if e.code ~= 1054 then return 'internal' end\nend\n");
  CHECK(total(run(missing_column), "errors.internal") == 0);
  TempScript number_as_text(std::string(kHeader) +
                            "function bind(req)\n  db.exec('INSERT INTO t_account (open_id, device) VALUES (?, ?)', req.key, 7)\nend\n");
  const auto c = run(number_as_text);
  CHECK(total(c, "script_errors") == 0);
  CHECK(total(c, "duplicate_rows") > 0);  // two keys, four clients: the key as text '0', '1'
}

TEST_CASE("a to-be-closed variable whose __close raises cannot carry an endless loop past the instruction budget") {
  TempScript script(std::string(kHeader) + R"lua(
function bind(req)
  while true do
    pcall(function()
      local x <close> = setmetatable({}, { __close = function() error("e") end })
      while true do end
    end)
  end
end
)lua");
  const auto r = run(script);
  CHECK(total(r, "unfinished_runs") == 2);
}

TEST_CASE("an error of a wrapped library function names the function and the script's line, a NUL hides no %p") {
  CHECK_THAT(refusal("description = string.format('%d', 1.5)\nfunction bind(req) end"),
             Catch::EndsWith(":1: bad argument #2 to 'string.format' (number has no integer representation)"));
  TempScript hidden(std::string(kHeader) + "function bind(req)\n  return string.format('\\0%p', {})\nend\n");
  CHECK_THAT(run(hidden).examples.front(), Catch::Contains("%p shows an address"));
  CHECK_THAT(refusal("error('', 0)"), Catch::EndsWith(": an error with an empty message"));
  CHECK_THAT(refusal(std::string(kHeader) + "function bind(req) return " + std::string(300, '(') + "1" + std::string(300, ')') + " end"),
             Catch::Contains("nests too deeply"));
}

TEST_CASE("a pattern that could backtrack past any budget is refused, ordinary patterns work") {
  CHECK_THAT(refusal("local x = ('x'):find(('x?'):rep(40) .. ('x'):rep(40))\ndescription = 'd'\nfunction bind(req) end"),
             Catch::Contains(":1: string.find: a pattern with 40 quantifiers"));
  CHECK(refusal("assert(('Duplicate entry x'):find('Duplicate entry'))\nassert(('a1b22'):gsub('%d+', '#') == 'a#b#')\n"
                "assert(('k=v'):match('(%w+)=(%w+)') == 'k')\nlocal n = 0\nfor w in ('a b c'):gmatch('%a') do n = n + 1 end\n"
                "assert(n == 3)\nassert(('x?y'):find('?', 1, true) == 2)\ndescription = 'd'\nfunction bind(req) end") == "");
}

TEST_CASE("a script's needs come from its calls, read by Lua's lexical rules in one pass, however they are spaced") {
  // Each script takes a Redis lock: the world must hold Redis for its commands to reach one.
  const auto redis_ops = [](const std::string& call) {
    TempScript script(std::string(kHeader) + "function bind(req)\n  db.query(\"SELECT id FROM t_account WHERE open_id = '-- in a string'\")  local lock = " +
                      call + "('lock:' .. req.open_id, {ttl_ms = 1000})\nend\n");
    return run(script).figures.at("redis_ops_per_op");
  };
  CHECK(redis_ops("locks.redis") > 0);
  CHECK(redis_ops("locks" + std::string(20'000, ' ') + ".redis") > 0);
  CHECK(redis_ops("locks --[==[ a long comment ]] still ]==]\n  .\n  redis") > 0);
}

TEST_CASE("a duration a script gives is checked as a scenario file's: NaN, 1e300 ms and a TTL past 1e12 ms are script errors at their line") {
  for (const std::string call : {"hold('k', 'v', 0/0)", "hold('k', 'v', 1e300)", "hold('k', 'v', -1)", "redis.call('SET', 'k', 'v', 'PX', 1e15)",
                                 "redis.call('PEXPIRE', 'k', 1e13)", "redis.script('compare_and_pexpire', 'k', 'v', 1e13)", "sleep(0/0)"}) {
    INFO(call);
    TempScript script(std::string(kHeader) + "uses = {'redis'}\nfunction bind(req)\n  " + call + "\nend\n");
    const auto r = run(script);
    CHECK(total(r, "script_errors") == 8);
    REQUIRE(!r.examples.empty());
    CHECK_THAT(r.examples.front(), Catch::Contains(script.path + ":4: ") && Catch::Contains("expected milliseconds"));
  }
}

TEST_CASE("redis.call's PEXPIRE and EXPIRE with 0 or a negative time delete the key, as Redis 7 does") {
  TempScript script(std::string(kHeader) + "uses = {'redis'}\nfunction bind(req)\n"
                    "  local id = req.client .. '.' .. req.op .. '.' .. req.attempt\n  local a, b = 'a' .. id, 'b' .. id  -- a key no other worker touches\n"
                    "  redis.call('SET', a, '1')\n  assert(redis.call('PEXPIRE', a, -5) == 1)\n  assert(redis.call('GET', a) == nil)\n"
                    "  redis.call('SET', b, '1')\n  assert(redis.call('EXPIRE', b, 0) == 1)\n  assert(redis.call('GET', b) == nil)\n"
                    "  assert(redis.call('PEXPIRE', b, -1) == 0)\nend\n");
  const auto r = run(script);
  INFO((r.examples.empty() ? std::string() : r.examples.front()));
  CHECK(total(r, "script_errors") == 0);
  CHECK(r.figures.at("redis_ops_per_op") >= 7);
}

TEST_CASE("a script's error text reaches the terminal as one line, its control bytes escaped") {
  TempScript script(std::string(kHeader) + "function bind(req)\n  error('red \\27[31m\\nsecond line\\r')\nend\n");
  const auto r = run(script);
  REQUIRE(!r.examples.empty());
  CHECK_THAT(r.examples.front(), Catch::Contains(script.path + ":3: red \\x1b[31m\\x0asecond line\\x0d"));
  CHECK(r.examples.front().find_first_of("\n\r\x1b") == std::string::npos);
  CHECK_THAT(refusal("error('at load\\n\\27[2J')"), Catch::EndsWith("at load\\x0a\\x1b[2J"));
}

namespace {
// `call`, the body of bind, ends its trial at the instruction budget, and its error names its line.
void stopped_by_the_budget(const std::string& call) {
  TempScript script(std::string(kHeader) + "function bind(req)\n  " + call + "\nend\n");
  const auto r = run(script, small_world(1));
  CHECK(total(r, "unfinished_runs") == 1);
  REQUIRE(!r.examples.empty());
  CHECK_THAT(r.examples.front(), Catch::Contains("the instruction budget of") && Catch::Contains(script.path + ":3"));
}
}  // namespace

TEST_CASE("Lua's library functions that run in C are charged to the instruction budget for their work") {
  // Each runs seconds to minutes inside one Lua instruction, where the count hook does not look.
  for (const std::string call : {"local s = ('a'):rep(2^19) local n = s:sub(2, 2^18) .. 'b' s:find(n, 1, true)",
                                 "local t = {} for i = 1, 200000 do table.insert(t, 1, i) end",
                                 "local t = {} for i = 1, 200000 do t[i] = i end for i = 1, 200000 do table.remove(t, 1) end",
                                 // a count given as a float, and functions that read their whole subject
                                 "while true do local s = string.rep('a', 3e6) end",
                                 "local s = ('a'):rep(2^22) while true do local u = s:upper() end",
                                 "local s = ('a'):rep(2^22) while true do local n = utf8.len(s) end"}) {
    INFO(call);
    stopped_by_the_budget(call);
  }
  // What ordinary code does stays far inside it.
  TempScript ordinary(std::string(kHeader) +
                      "function bind(req)\n  local t = {}\n  for i = 1, 100 do table.insert(t, tostring(i)) end\n"
                      "  assert(table.concat(t, ','):find('99,100', 1, true))\n  assert(('ab'):rep(3, '-') == 'ab-ab-ab')\nend\n");
  const auto ok = run(ordinary);
  CHECK(total(ok, "unfinished_runs") == 0);
  CHECK(total(ok, "script_errors") == 0);
}

TEST_CASE("an instruction that reads a whole long string (==, <, a string taken for a number) is charged for it") {
  // Each loop runs one instruction after another that reads 16 MB, which the count hook sees
  // as one instruction each: without the charge, days.
  for (const std::string call : {"local a, b = ('a'):rep(2^24), ('a'):rep(2^24) while true do local same = a == b end",
                                 "local a = ('a'):rep(2^24) local b = a .. 'b' while true do local less = a < b end",
                                 "local s = ('7'):rep(2^24) while true do local n = s + 0 end"}) {
    INFO(call);
    stopped_by_the_budget(call);
  }
  // Short strings compared a million times stay inside it.
  TempScript ordinary(std::string(kHeader) + "function bind(req)\n  local a, b, n = ('a'):rep(500), ('a'):rep(500), 0\n"
                      "  for i = 1, 1000000 do if a == b then n = n + 1 end end\n  assert(n == 1000000)\nend\n");
  const auto ok = run(ordinary, small_world(1));
  CHECK(total(ok, "unfinished_runs") == 0);
  CHECK(total(ok, "script_errors") == 0);
}

TEST_CASE("a script that fills Redis past the trial's memory budget ends that trial as unfinished, not the process") {
  // Each value is far inside the script's own memory cap; the keyspace holding them is not the
  // script's memory, and only the trial's budget bounds it.
  TempScript script(std::string(kHeader) +
                    "function bind(req)\n"
                    "  local big = string.rep('x', 100000)\n"
                    "  for i = 1, 1000000 do redis.call('SET', req.open_id .. ':' .. i, big) end\n"
                    "end\n");
  json world = small_world();
  world["memory_budget_mb"] = 16;
  const auto r = run(script, world);
  CHECK(total(r, "unfinished_runs") == 2);
  CHECK(total(r, "memory_budget_runs") == 2);
}

TEST_CASE("a script's own Lua state counts in the trial's memory budget") {
  // 10 KB a step, far inside the state's 64 MiB cap, past a budget of 4 MiB within a few
  // hundred steps; the sleeps give the engine the events it checks the budget at.
  TempScript script(std::string(kHeader) +
                    "local hoard = {}\n"
                    "function bind(req)\n"
                    "  for i = 1, 2000 do hoard[#hoard + 1] = string.rep('x', 10000) .. i; sleep(1) end\n"
                    "end\n");
  json world = small_world();
  world["memory_budget_mb"] = 4;
  const auto r = run(script, world);
  CHECK(total(r, "memory_budget_runs") == 2);
  CHECK(total(r, "script_errors") == 0);  // not the state's own cap
}

TEST_CASE("seeded rows that alone pass the memory budget are refused when the scenario loads, with what they need") {
  json world = small_world();
  world["memory_budget_mb"] = 1;
  world["database"] = {{"legacy", {{"table", "t_account"}, {"keys", 100000}}}};
  TempScript script(std::string(kHeader) + kCheckThenInsert);
  test::TempScenario file(world.dump());
  try {
    locksim::load_scenario(file.path, {"+script=" + script.path}, {script.label()});
    FAIL("loaded");
  } catch (const locksim::InputError& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Catch::Contains("/database/legacy: expected seeded rows that fit a trial's memory budget (memory_budget_mb 1)"));
    CHECK_THAT(what, Catch::Contains("of 104500, and all of them need about"));
  }
}

namespace {
// small_world on PostgreSQL.
json postgres_world() {
  json w = small_world();
  w["database"] = {{"engine", "postgresql"}};
  return w;
}
constexpr const char* kGuardedInsert = R"lua(
  if #db.query("SELECT id FROM t_account WHERE open_id = $1", req.open_id) == 0 then
    work()
    db.exec("INSERT INTO t_account (open_id, device) VALUES ($1, $2)", req.open_id, req.device)
  end
)lua";
}  // namespace

TEST_CASE("locks.pg_advisory serializes the callers of one key on PostgreSQL, and the checkers see each hold") {
  TempScript session(std::string(kHeader) + "function bind(req)\n  local lock = locks.pg_advisory(req.open_id)\n" + kGuardedInsert +
                     "  lock:release()\nend\n");
  const auto a = run(session, postgres_world());
  CHECK(total(a, "script_errors") == 0);
  CHECK(total(a, "duplicate_rows") == 0);
  CHECK(total(a, "overlapping_holders") == 0);
  CHECK(total(a, "max_concurrent_holders") == 1);  // the holds reached the checkers
  // The same calls with no lock duplicate, and no checker sees a hold.
  TempScript bare(std::string(kHeader) + "function bind(req)\n" + kGuardedInsert + "end\n");
  const auto b = run(bare, postgres_world());
  CHECK(total(b, "duplicate_rows") > 0);
  CHECK(total(b, "max_concurrent_holders") == 0);
}

TEST_CASE("a transaction-level advisory lock ends with its transaction: outside one it protects nothing") {
  // Inside BEGIN ... COMMIT it is held to the COMMIT and the inserts stay unique; `held` turns
  // false at the COMMIT, with no unlock of the script's own.
  TempScript inside(std::string(kHeader) + "function bind(req)\n  db.begin()\n  local lock = locks.pg_advisory(req.open_id, {xact = true})\n" +
                    "  if not lock.held then error('not held inside its transaction') end\n" + kGuardedInsert +
                    "  db.commit()\n  if lock.held then error('held past COMMIT') end\nend\n");
  const auto a = run(inside, postgres_world());
  CHECK(total(a, "script_errors") == 0);
  CHECK(total(a, "duplicate_rows") == 0);
  // In autocommit the lock's own statement is its transaction: released as it is granted.
  TempScript outside(std::string(kHeader) + "function bind(req)\n  local lock = locks.pg_advisory(req.open_id, {xact = true})\n" +
                     "  if lock.held then error('held after its autocommit statement') end\n" + kGuardedInsert + "end\n");
  const auto b = run(outside, postgres_world());
  CHECK(total(b, "script_errors") == 0);
  CHECK(total(b, "duplicate_rows") > 0);
}

TEST_CASE("locks.get_lock serializes the callers of one name on MariaDB, and the checkers see each hold") {
  const std::string guarded = R"lua(
  if #db.query("SELECT id FROM t_account WHERE open_id = ?", req.open_id) == 0 then
    work()
    db.exec("INSERT INTO t_account (open_id, device) VALUES (?, ?)", req.open_id, req.device)
  end
)lua";
  TempScript locked(std::string(kHeader) + "function bind(req)\n  local lock = locks.get_lock(req.open_id, {timeout_s = 10})\n" + guarded +
                    "  lock:release()\nend\n");
  const auto a = run(locked);
  CHECK(total(a, "script_errors") == 0);
  CHECK(total(a, "duplicate_rows") == 0);
  CHECK(total(a, "overlapping_holders") == 0);
  CHECK(total(a, "max_concurrent_holders") == 1);  // the holds reached the checkers
  TempScript bare(std::string(kHeader) + "function bind(req)\n" + guarded + "end\n");
  CHECK(total(run(bare), "duplicate_rows") > 0);
}

TEST_CASE("a GET_LOCK hold ends with its connection: once the pool closes it after a timeout, another caller takes the name "
          "while the first still believes it holds it") {
  // The first statement after the lock outlasts the driver's 2 s socket timeout (it waits 5 s for
  // a name another connection holds), so the pool closes the connection; the server releases the
  // lock when that statement ends, and the next caller, asking a second at a time, gets it. The
  // first carries on, slowly, on a new connection.
  TempScript script(std::string(kHeader) + R"lua(
function bind(req)
  local lock
  for _ = 1, 30 do
    lock = locks.get_lock(req.open_id, {timeout_s = 1})
    if lock then break end
  end
  if not lock then error("no lock in 30 tries") end
  local busy = "busy-" .. unique()
  locks.get_lock(busy, {}, db.connect())
  if pcall(db.query, "SELECT GET_LOCK(?, 5)", busy) then error("the statement did not time out") end
  sleep(6000)
  if #db.query("SELECT id FROM t_account WHERE open_id = ?", req.open_id) == 0 then
    db.exec("INSERT INTO t_account (open_id, device) VALUES (?, ?)", req.open_id, req.device)
  end
  lock:release()
end
)lua");
  json world = small_world(1);
  world["topology"]["workers"] = 4;
  world["clients"]["timeout_ms"] = 60000;
  world["database"] = {{"statement_timeout_ms", 2000}};
  const auto r = run(script, world);
  CHECK(total(r, "script_errors") == 0);
  CHECK(total(r, "overlapping_holders") > 0);
  CHECK(total(r, "lease_expiry_violations") > 0);  // the first one's insert, made after its lock was gone
}

TEST_CASE("locks.get_lock refuses PostgreSQL, an empty name and a timeout in other than whole seconds") {
  const auto errors_of = [](const std::string& body, const json& world) {
    TempScript script(std::string(kHeader) + "function bind(req)\n" + body + "\nend\n");
    return total(run(script, world), "script_errors");
  };
  CHECK(errors_of("locks.get_lock('a')", postgres_world()) > 0);
  CHECK(errors_of("locks.get_lock('')", small_world()) > 0);
  CHECK(errors_of("locks.get_lock('a', {timeout_s = 1.5})", small_world()) > 0);
  CHECK(errors_of("locks.get_lock('a', {timeout_s = 1}):release()", small_world()) == 0);
}

TEST_CASE("locks.pg_advisory with try is nil while another session holds the key, a session lock outlives COMMIT") {
  TempScript script(std::string(kHeader) + R"lua(
function bind(req)
  db.begin()
  local mine = locks.pg_advisory("k" .. req.open_id)
  db.commit()
  if not mine.held then error("a session lock ended with a COMMIT") end
  local other = db.connect()
  if locks.pg_advisory("k" .. req.open_id, {try = true}, other) then error("granted to two sessions") end
  local free = locks.pg_advisory("free" .. req.open_id, {try = true}, other)
  if not free then error("a free key was busy") end
  free:release()
  mine:release()
end
)lua");
  const auto r = run(script, postgres_world());
  CHECK(total(r, "script_errors") == 0);
  CHECK(r.operations == 8);
}

TEST_CASE("locks.pg_advisory on MariaDB, or with a key that is neither integer nor string, is a script error that says why") {
  TempScript on_mariadb(std::string(kHeader) + "function bind(req)\n  locks.pg_advisory(1)\nend\n");
  const auto a = run(on_mariadb);
  CHECK(total(a, "script_errors") == 8);
  CHECK_THAT(a.examples.front(), Catch::Contains(":3: locks.pg_advisory: needs \"database\": {\"engine\": \"postgresql\"}"));
  TempScript bad_key(std::string(kHeader) + "function bind(req)\n  locks.pg_advisory({})\nend\n");
  const auto b = run(bad_key, postgres_world());
  CHECK_THAT(b.examples.front(), Catch::Contains(":3: locks.pg_advisory: the key: expected an integer or a string, got table"));
}

TEST_CASE("an INCR'd fencing counter is no stuck lock, a SET NX key without a TTL is one") {
  TempScript counter(std::string(kHeader) + R"lua(
function bind(req)
  local token = redis.call("INCR", "fence:" .. req.open_id)
  db.exec("INSERT INTO t_account (open_id, device) VALUES (?, ?)", req.open_id, req.device .. ':' .. token)
end
)lua");
  const auto a = run(counter);
  CHECK(total(a, "stuck_locks") == 0);
  CHECK(total(a, "script_errors") == 0);
  TempScript forever(std::string(kHeader) + R"lua(
function bind(req)
  if redis.call("SET", "lock:" .. req.open_id, unique(), "NX") ~= "OK" then return "lock_busy" end
end
)lua");
  CHECK(total(run(forever), "stuck_locks") > 0);
}

TEST_CASE("a database error a strategy lets through is counted by its code, not as a timeout") {
  TempScript overflow(std::string(kHeader) + R"lua(
tables = { "CREATE TABLE t_n (id BIGINT AUTO_INCREMENT PRIMARY KEY, k VARCHAR(64) NOT NULL, n BIGINT NOT NULL)" }
function bind(req)
  db.exec("INSERT INTO t_n (k, n) VALUES (?, 9223372036854775807)", req.open_id)
  db.exec("UPDATE t_n SET n = n + 1 WHERE k = ?", req.open_id)
end
)lua");
  const auto r = run(overflow);
  CHECK(total(r, "errors.1690") > 0);
  CHECK(total(r, "errors.1690") == total(r, "failed_operations"));
  CHECK(total(r, "errors.timeout") == 0);
  CHECK(total(r, "script_errors") == 0);
}

TEST_CASE("a strategy's own answer, declared in its outcomes, is counted by its name, an undeclared one is a script error") {
  TempScript taken(std::string(kHeader) + R"lua(
outcomes = { "already_bound" }
tables = { "CREATE TABLE t_account (id BIGINT AUTO_INCREMENT PRIMARY KEY, open_id VARCHAR(64) NOT NULL, device VARCHAR(64) NOT NULL, UNIQUE KEY uk_open_id (open_id))" }
function bind(req)
  local ok, e = pcall(db.exec, "INSERT INTO t_account (open_id, device) VALUES (?, ?)", req.open_id, req.device)
  if not ok and e.code == 1062 then return "already_bound" end
  if not ok then error(e, 0) end
end
)lua");
  const auto r = run(taken);
  CHECK(total(r, "script_errors") == 0);
  CHECK(total(r, "errors.already_bound") > 0);  // four clients on two keys: the later of each key
  CHECK(total(r, "errors.already_bound") == total(r, "failed_operations"));
  CHECK(total(r, "duplicate_rows") == 0);
  CHECK(refusal(std::string(kHeader) + "outcomes = { 'timeout' }\nfunction bind(req) end\n").find("outcomes[1]") != std::string::npos);
  CHECK(refusal(std::string(kHeader) + "outcomes = { 'Seat Taken' }\nfunction bind(req) end\n").find("outcomes[1]") != std::string::npos);
  TempScript undeclared(std::string(kHeader) + "function bind(req) return 'already_bound' end\n");
  CHECK(total(run(undeclared), "script_errors") > 0);
}

TEST_CASE("an error of megabytes is cut where it is told, with its size") {
  TempScript big(std::string(kHeader) + "function bind(req)\n  error(string.rep('e', 3000000), 0)\nend\n");
  const auto r = run(big, small_world(1));
  REQUIRE(!r.examples.empty());
  CHECK(r.examples.front().size() < 2000);
  CHECK_THAT(r.examples.front(), Catch::Contains("... (3000000 bytes in all)"));
}

TEST_CASE("a Lua strategy's db.* runs what a session step runs: computed columns, statements on no table, the engine's own codes") {
  // The same checks on either engine; the INSERT in its dialect, and the codes each gives.
  const auto script = [](const std::string& insert, const std::string& no_column, const std::string& no_table) {
    return std::string(kHeader) + "function bind(req)\n"
           "  assert(db.query('SELECT 9223372036854775800 + 1 AS w')[1].w == 9223372036854775801)\n"
           "  db.exec('" + insert + "', req.open_id, req.device)\n"
           "  assert(#db.query('SELECT id - 1 AS w FROM t_account') >= 1)\n"
           "  local ok, e = pcall(db.query, 'SELECT nope FROM t_account')\n"
           "  assert(not ok and e.code == " + no_column + ", 'code ' .. tostring(e.code))\n"
           "  ok, e = pcall(db.query, 'SELECT id FROM t_nowhere')\n"
           "  assert(not ok and e.code == " + no_table + ", 'code ' .. tostring(e.code))\n"
           "end\n";
  };
  TempScript mariadb(script("INSERT INTO t_account (open_id, device) VALUES (?, ?)", "1054", "1146"));
  CHECK(total(run(mariadb), "script_errors") == 0);
  json world = small_world();
  world["database"] = {{"engine", "postgresql"}};
  TempScript postgresql(script("INSERT INTO t_account (open_id, device) VALUES ($1, $2)", "'42703'", "'42P01'"));
  CHECK(total(run(postgresql, world), "script_errors") == 0);
}

TEST_CASE("a text bound on PostgreSQL with a NUL byte or bytes that are not UTF-8 is its 22021, as the server answers, MariaDB stores a NUL") {
  const auto script = [](const std::string& insert, const std::string& values, const std::string& code) {
    return std::string(kHeader) + "function bind(req)\n"
           "  for _, bad in ipairs({" + values + "}) do\n"
           "    local ok, e = pcall(db.exec, '" + insert + "', req.open_id .. bad, req.device)\n"
           "    assert(" + code + ")\n"
           "  end\n"
           "end\n";
  };
  json world = small_world();
  world["database"] = {{"engine", "postgresql"}};
  TempScript postgresql(script("INSERT INTO t_account (open_id, device) VALUES ($1, $2)", "'a\\0b', 'caf\\xff'",
                               "not ok and e.code == '22021' and e.message:find('invalid byte sequence for encoding \"UTF8\": 0x', 1, true)"));
  CHECK(total(run(postgresql, world), "script_errors") == 0);
  TempScript mariadb(script("INSERT INTO t_account (open_id, device) VALUES (?, ?)", "'a\\0b'", "ok"));
  CHECK(total(run(mariadb), "script_errors") == 0);
}

TEST_CASE("locks.consul serializes the callers of one key through Consul sessions, and the checkers see each hold") {
  const std::string guarded = R"lua(
  if #db.query("SELECT id FROM t_account WHERE open_id = ?", req.open_id) == 0 then
    work()
    db.exec("INSERT INTO t_account (open_id, device) VALUES (?, ?)", req.open_id, req.device)
  end
)lua";
  TempScript locked(std::string(kHeader) + "function bind(req)\n  local lock = locks.consul('locks/' .. req.open_id, {wait_ms = 4000})\n" +
                    "  if not lock then return 'lock_busy' end\n  assert(lock.token > 0)\n" + guarded + "  lock:release()\nend\n");
  const auto a = run(locked);
  CHECK(total(a, "script_errors") == 0);
  CHECK(total(a, "duplicate_rows") == 0);
  CHECK(total(a, "overlapping_holders") == 0);
  CHECK(total(a, "max_concurrent_holders") == 1);
}

TEST_CASE("locks.etcd refuses an unlock it does not know and a retry interval of 0") {
  const auto errors_of = [](const std::string& body) {
    TempScript script(std::string(kHeader) + "function bind(req)\n" + body + "\nend\n");
    return total(run(script), "script_errors");
  };
  CHECK(errors_of("locks.etcd('k/', {unlock = 'forget'})") > 0);
  CHECK(errors_of("locks.etcd('k/', {unlock_retry_ms = 0})") > 0);
  CHECK(errors_of("local ok, e = pcall(locks.etcd, 'k/', {unlock = 'forget'})\n"
                  "assert(not ok and tostring(e):find('expected \"by_name\"'))") == 0);
  CHECK(errors_of("local l = locks.etcd('k/', {unlock = 'if_owner', unlock_retry_ms = 500})\nif l then l:release() end") == 0);
}

TEST_CASE("locks.consul refuses a TTL the server refuses, a behavior it does not know, and names the key's option") {
  const auto errors_of = [](const std::string& body) {
    TempScript script(std::string(kHeader) + "function bind(req)\n" + body + "\nend\n");
    return total(run(script), "script_errors");
  };
  CHECK(errors_of("locks.consul('k', {ttl_ms = 5000})") > 0);  // Invalid Session TTL
  CHECK(errors_of("locks.consul('k', {behavior = 'forget'})") > 0);
  CHECK(errors_of("locks.consul('k', {lock_delay_ms = -1})") > 0);
  CHECK(errors_of("local ok, e = pcall(locks.consul, 'k', {ttl_ms = 5000})\n"
                  "assert(not ok and e.code == 'consul' and e.message:find('Invalid Session TTL'))") == 0);
  CHECK(errors_of("local l = locks.consul('k', {ttl_ms = 10000, behavior = 'delete'})\nif l then l:release() end") == 0);
}
