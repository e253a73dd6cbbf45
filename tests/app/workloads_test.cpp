// Workloads written in Lua: a user's own operation, its tables and its invariant. What check
// counts becomes a metric like the built-in ones; request fields are the same for every copy of
// a submission; a workload's or its strategy's mistakes are refused at load as one line naming
// the file; and a run depends on the seed alone.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "app/metrics.hpp"
#include "app/runner.hpp"
#include "app/scenario.hpp"
#include "models/workloads/lua/workload.hpp"
#include "reports/explain.hpp"
#include "scenario_files.hpp"
#include "support.hpp"

namespace {

using nlohmann::json;

struct TempLua {
  explicit TempLua(const std::string& text, const std::string& name = "locksim-workload") {
    path = test::unique_temp_path(name, ".lua").string();
    std::ofstream(path) << text;
  }
  ~TempLua() { std::filesystem::remove(path); }
  std::string label() const { return std::filesystem::path(path).filename().string(); }
  std::string name() const { return std::filesystem::path(path).stem().string(); }
  std::string path;
};

// A counter workload: each request adds `by` to counter 1. check counts the acknowledged
// increments the final value lacks, and the operations whose outcome is unknown.
std::string counter_workload(const std::string& extra = "") {
  return R"lua(
description = "add to a counter"
params = { start = 0 }
tables = { "CREATE TABLE t_counter (id INT PRIMARY KEY, v BIGINT)" }
rows = { t_counter = { { id = 1, v = params.start } } }
request = { by = { uniform = { 1, 3 } }, payment = "submission" }
metrics = {
  { name = "lost_increments", unit = "increments", meaning = "acknowledged increments the final value lacks" },
  { name = "unknown_outcomes", unit = "operations", meaning = "operations an attempt of which timed out", finding = false },
  { name = "effects_seen", unit = "effects", meaning = "effects reported", finding = false },
}
function check(final, history)
  local acknowledged, unknown = 0, 0
  for _, op in ipairs(history.operations) do
    if op.outcome == "ok" then acknowledged = acknowledged + op.req.by end
    if op.outcome == "unknown" then unknown = unknown + 1 end
  end
  local v = final.tables.t_counter[1].v - params.start
  return { lost_increments = math.max(0, acknowledged - v), unknown_outcomes = unknown, effects_seen = #history.effects }
end
)lua" + extra;
}

std::string strategy_for(const std::string& workload, const std::string& body) {
  return "workload = '" + workload + "'\ndescription = 'a test strategy'\nfunction handle(req)\n" + body + "\nend\n";
}

constexpr const char* kReadModifyWrite = R"lua(
  local v = db.query("SELECT v FROM t_counter WHERE id = 1")[1].v
  work()
  db.exec("UPDATE t_counter SET v = ? WHERE id = 1", v + req.by)
  effect("added", req.by)
)lua";
constexpr const char* kIncrementInSql = R"lua(
  work()
  db.exec("UPDATE t_counter SET v = v + ? WHERE id = 1", req.by)
)lua";

// Eight operations at once on two app servers: read-modify-write races.
json world(const TempLua& workload, const std::vector<const TempLua*>& strategies, int trials = 2) {
  json list = json::array();
  for (const TempLua* s : strategies) list.push_back({{"script", s->path}});
  return {{"name", "x"},
          {"workload", {{"script", workload.path}}},
          {"topology", {{"app_servers", 2}, {"workers", 4}, {"app_work", {{"fixed_ms", 5}}}}},
          {"clients", {{"count", 8}, {"timeout_ms", 5000}, {"max_attempts", 1}}},
          {"strategies", list},
          {"trials", trials}};
}

locksim::Scenario load(const json& doc, std::vector<std::string> sets = {}) {
  test::TempScenario file(doc.dump());
  return locksim::load_scenario(file.path, sets);
}

double total(const locksim::reports::StrategyResult& r, const std::string& metric) {
  auto it = r.counts.find(metric);
  return it == r.counts.end() ? 0 : it->second.total;
}

// What loading says, or "" when it loads.
std::string refusal(const json& doc) {
  try {
    load(doc);
  } catch (const locksim::InputError& e) {
    return e.what();
  }
  return "";
}

std::string workload_refusal(const std::string& text) {
  TempLua workload(text);
  TempLua strategy(strategy_for(workload.name(), kIncrementInSql));
  return refusal(world(workload, {&strategy}));
}

// Runs `strategy` (under workloads/) in the catalogue's `scenario` for 5 trials, on its workload `workload` (under
// workloads/) with the text `from` of its tables replaced by `to`.
locksim::reports::StrategyResult run_with_tables(const std::string& scenario, const std::string& workload, const std::string& from,
                                        const std::string& to, const std::string& strategy) {
  const std::filesystem::path dir = test::unique_temp_path("locksim-tables", "");
  std::filesystem::create_directories(dir);
  const std::string path = (dir / std::filesystem::path(workload).filename()).string();
  {
    std::ifstream in(std::string(LOCKSIM_SOURCE_DIR) + "/workloads/" + workload);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(text.find(from) != std::string::npos);
    text.replace(text.find(from), from.size(), to);
    std::ofstream(path) << text;
  }
  const locksim::Scenario s = locksim::load_scenario(
      locksim::scenario_path(scenario),
      {std::string(locksim::kWorkloadOverride) + path,
       std::string(locksim::kScriptOverride) + std::string(LOCKSIM_SOURCE_DIR) + "/workloads/" + strategy, "trials=5"});
  auto r = locksim::run_scenario(s).strategies.front();
  std::filesystem::remove_all(dir);
  return r;
}

}  // namespace

TEST_CASE("a Lua workload's check counts are metrics: read-modify-write loses increments, v = v + ? loses none") {
  TempLua workload(counter_workload());
  TempLua rmw(strategy_for(workload.name(), kReadModifyWrite), "rmw");
  TempLua sql(strategy_for(workload.name(), kIncrementInSql), "sql");
  const locksim::Scenario s = load(world(workload, {&rmw, &sql}));
  REQUIRE(locksim::is_metric("lost_increments"));
  REQUIRE(locksim::is_metric("lost_increments.per_million"));
  CHECK(locksim::fires("lost_increments", 1));
  CHECK_FALSE(locksim::fires("unknown_outcomes", 1));
  const auto results = locksim::run_scenario(s);
  REQUIRE(results.strategies.size() == 2);
  CHECK(total(results.strategies[0], "lost_increments") > 0);
  CHECK(total(results.strategies[0], "effects_seen") == 16);  // one per operation, 8 per trial
  CHECK(total(results.strategies[1], "lost_increments") == 0);
  // The account-bind table and its checkers are not part of another workload.
  CHECK(results.strategies[1].counts.count("duplicate_rows") == 0);
}

TEST_CASE("a Lua workload's results are the same for any number of jobs") {
  TempLua workload(counter_workload());
  TempLua rmw(strategy_for(workload.name(), kReadModifyWrite));
  const locksim::Scenario s = load(world(workload, {&rmw}, 6));
  const auto one = locksim::run_scenario(s, 1);
  const auto two = locksim::run_scenario(s, 2);
  CHECK(one.strategies[0].trace_hash == two.strategies[0].trace_hash);
  CHECK(total(one.strategies[0], "lost_increments") == total(two.strategies[0], "lost_increments"));
}

TEST_CASE("a workload's parameters come from the scenario, and its first rows follow them") {
  TempLua workload(counter_workload());
  TempLua sql(strategy_for(workload.name(), kIncrementInSql));
  json doc = world(workload, {&sql});
  doc["workload"]["params"] = {{"start", 100}};
  const locksim::Scenario s = load(doc);
  REQUIRE(s.deployment.database.rows.size() == 1);
  CHECK(std::get<std::int64_t>(s.deployment.database.rows[0].values.at("v")) == 100);
  CHECK(locksim::effective_config(s)["workload"]["params"]["start"] == 100);
  CHECK(total(locksim::run_scenario(s).strategies[0], "lost_increments") == 0);
  doc["workload"]["params"] = {{"begin", 1}};
  CHECK_THAT(refusal(doc), Catch::Contains("no parameter 'begin' (its params: start)"));
}

TEST_CASE("a parameter that makes a workload's top level run out of memory is refused naming the scenario's params and the script") {
  TempLua workload(counter_workload("local rows_for = {}\nfor i = 1, params.start do rows_for[i] = 'row ' .. i end\n"));
  TempLua sql(strategy_for(workload.name(), kIncrementInSql));
  json doc = world(workload, {&sql});
  doc["workload"]["params"] = {{"start", 10}};
  CHECK(refusal(doc) == "");
  doc["workload"]["params"] = {{"start", 1e8}};
  const std::string why = refusal(doc);
  CHECK_THAT(why, Catch::Contains(": /workload/params: the workload script failed with these params: " + workload.path));
  CHECK_THAT(why, Catch::Contains("not enough memory"));
}

TEST_CASE("request fields are drawn per submission: a retry and a double submit send the same request") {
  TempLua file(counter_workload());
  std::ifstream in(file.path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto w = models::workloads::load_workload(file.path, text);
  REQUIRE(w->fields.size() == 2);
  const auto first = w->draw(7, 3, 3, 0, 0);
  CHECK(first == w->draw(7, 3, 3, 0, 0));   // a retry: same operation
  CHECK(first == w->draw(7, 9, 3, 1, 0));   // a double submit: its own operation, the same submission
  bool differs = false;
  for (std::uint64_t submission = 0; submission < 64; ++submission) {
    const auto fields = w->draw(7, submission, submission, 0, 0);
    const auto by = std::get<std::int64_t>(fields[0].second);
    CHECK(by >= 1);
    CHECK(by <= 3);
    CHECK(std::get<std::int64_t>(fields[1].second) == static_cast<std::int64_t>(submission));
    differs = differs || fields != first;
  }
  CHECK(differs);
  const bool another_trial_draws_anew = w->draw(8, 3, 3, 0, 0) != first || w->draw(9, 3, 3, 0, 0) != first;
  CHECK(another_trial_draws_anew);
}

TEST_CASE("a workload file's mistakes are refused at load as one line naming the file") {
  const std::string good = counter_workload();
  CHECK(workload_refusal(good) == "");
  // A syntax error: the file and the line.
  const std::string syntax = workload_refusal("description = 'x'\nfunction check(\n");
  CHECK_THAT(syntax, Catch::Matches(".*locksim-workload.*\\.lua:3: .*"));
  CHECK(syntax.find('\n') == std::string::npos);
  const auto without = [&](const std::string& what, const std::string& instead = "") {
    std::string text = good;
    const auto at = text.find(what);
    REQUIRE(at != std::string::npos);
    return workload_refusal(text.replace(at, what.size(), instead));
  };
  CHECK_THAT(without("function check(final, history)", "function verify(final, history)"),
             Catch::Contains("expected `function check(final, history)`"));
  CHECK_THAT(without("request = {", "requests = {"), Catch::Contains("expected `request`"));
  CHECK_THAT(without("rows = {", "redis = { [\"k\"] = true }\nrows = {"), Catch::Contains("redis[\"k\"]: expected an integer or a string"));
  CHECK_THAT(without("by = { uniform = { 1, 3 } }", "by = { between = { 1, 3 } }"),
             Catch::Contains("request.by: expected a distribution"));
  CHECK_THAT(without("by = { uniform = { 1, 3 } }", "by = { uniform = { 3, 1 } }"), Catch::Contains("expected lo <= hi"));
  CHECK_THAT(without("name = \"effects_seen\"", "name = \"lost_increments\""),
             Catch::Contains("metric 'lost_increments' is declared twice"));
  CHECK_THAT(without("name = \"effects_seen\"", "name = \"duplicate_rows\""), Catch::Contains("'duplicate_rows' is a built-in metric"));
  CHECK_THAT(without("rows = { t_counter = { { id = 1, v = params.start } } }", "rows = { t_counters = { { id = 1 } } }"),
             Catch::Contains("rows.t_counters: no such table in `tables`"));
  CHECK_THAT(without("description = \"add to a counter\""), Catch::Contains("expected `description` to be a string"));
}

TEST_CASE("check returning what it did not declare, a non-number or nothing stops the run with one line naming the file") {
  const auto returned = [](const std::string& value) {
    TempLua workload(counter_workload("local original = check\nfunction check(f, h)\n  local out = original(f, h)\n  " + value +
                                      "\n  return out\nend\n"));
    TempLua sql(strategy_for(workload.name(), kIncrementInSql));
    const locksim::Scenario s = load(world(workload, {&sql}, 1));
    try {
      locksim::run_scenario(s);
    } catch (const locksim::InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(returned("out.surprise = 1"), Catch::Contains("check returned 'surprise', which `metrics` does not declare"));
  CHECK_THAT(returned("out.lost_increments = 'none'"), Catch::Contains("check returned string for 'lost_increments'"));
  CHECK_THAT(returned("out.lost_increments = -1"), Catch::Contains("check returned -1 for 'lost_increments'"));
  CHECK_THAT(returned("out.lost_increments = nil"), Catch::Contains("check returned no count for 'lost_increments'"));
  CHECK_THAT(returned("out = 3"), Catch::Contains("check returned number: expected a table of counts"));
  CHECK_THAT(returned("while true do end"), Catch::Contains("the instruction budget"));
  CHECK_THAT(returned("out.x = f.tables.t_counter[1].nothing.v"), Catch::Matches(".*locksim-workload.*\\.lua:\\d+: .*"));
}

TEST_CASE("a strategy runs only on its own workload") {
  TempLua workload(counter_workload());
  TempLua other(strategy_for("another", kIncrementInSql));
  CHECK_THAT(refusal(world(workload, {&other})), Catch::Contains("a strategy of the " + workload.name() + " workload"));
  TempLua bind("description = 'an account-bind strategy'\nfunction bind(req) end\n");
  CHECK_THAT(refusal(world(workload, {&bind})), Catch::Contains("one of account-bind"));
  TempLua both(strategy_for(workload.name(), "") + "function bind(req) end\n");
  CHECK_THAT(refusal(world(workload, {&both})), Catch::Contains("bind(req) is account-bind's"));
  TempLua handle_only("description = 'x'\nfunction handle(req) end\n");
  CHECK_THAT(refusal(world(workload, {&handle_only})), Catch::Contains("`workload = \"name\"` and a function handle(req)"));
  // And a workload's strategy in an account-bind scenario.
  TempLua sql(strategy_for(workload.name(), kIncrementInSql));
  CHECK_THAT(refusal({{"name", "x"}, {"strategies", {{{"script", sql.path}}}}}),
             Catch::Contains("a strategy of the account-bind workload; " + sql.label() + " is one of " + workload.name()));
  // A Lua workload lists its strategies.
  json doc = world(workload, {});
  doc.erase("strategies");
  CHECK_THAT(refusal(doc), Catch::Contains("a list of the " + workload.name() + " workload's strategies"));
}

TEST_CASE("a workload's sandbox is a strategy's: no os, io, require or load, and effect() only inside handle") {
  CHECK(workload_refusal(counter_workload("assert(os == nil and io == nil and require == nil and load == nil and debug == nil)\n")) == "");
  CHECK_THAT(workload_refusal(counter_workload("os.exit(1)\n")), Catch::Contains("attempt to index a nil value (global 'os')"));
  TempLua workload(counter_workload());
  TempLua top(strategy_for(workload.name(), kIncrementInSql) + "effect('x', 1)\n");
  CHECK_THAT(refusal(world(workload, {&top})), Catch::Contains("only inside bind(req) or handle(req)"));
}

TEST_CASE("the account-bind operation written as a Lua workload gives the built-in workload's results, trial for trial") {
  json doc;
  std::ifstream(locksim::scenario_path("account-bind")) >> doc;
  doc["name"] = "bind-openid";
  doc["workload"] = {{"script", std::string(LOCKSIM_SOURCE_DIR) + "/bench/workloads/bind-openid.lua"}};
  doc["strategies"] = {{{"script", std::string(LOCKSIM_SOURCE_DIR) + "/bench/workloads/bind-openid/select-for-update.lua"}}};
  doc.erase("expect");
  doc["trials"] = 20;
  const auto workload = locksim::run_scenario(load(doc)).strategies.front();
  locksim::Scenario s = locksim::load_scenario(locksim::scenario_path("account-bind"),
                                               {"+script=" + std::string(LOCKSIM_SOURCE_DIR) + "/strategies/select-for-update.lua"},
                                               {"select-for-update.lua"});
  s.trials = 20;
  const auto builtin = locksim::run_scenario(s).strategies.front();
  CHECK(workload.operations == builtin.operations);
  CHECK(total(workload, "errors.1213") == total(builtin, "errors.1213"));
  CHECK(total(workload, "errors.1213") > 0);
  CHECK(total(workload, "duplicate_bindings") == total(builtin, "duplicate_rows"));
  CHECK(workload.figures.at("latency_ms.p50") == builtin.figures.at("latency_ms.p50"));
  CHECK(workload.figures.at("latency_ms.p99") == builtin.figures.at("latency_ms.p99"));
  CHECK(workload.figures.at("db_ops_per_op") == builtin.figures.at("db_ops_per_op"));
}

TEST_CASE("a workload file given on the command line runs a scenario's world and traffic with a Lua workload and the --strategy-file strategies") {
  TempLua workload(counter_workload());
  TempLua sql(strategy_for(workload.name(), kIncrementInSql));
  const locksim::Scenario s =
      locksim::load_scenario(locksim::scenario_path("gc-pause-longer-than-lease"),
                             {std::string(locksim::kWorkloadOverride) + workload.path, std::string(locksim::kScriptOverride) + sql.path});
  CHECK(s.workload == workload.name());
  REQUIRE(s.strategies.size() == 1);
  CHECK(s.strategies[0].shown() == sql.label());
  CHECK(s.expect.empty());
  CHECK(s.lesson.empty());
  CHECK(s.faults.size() == 1);  // the scenario's pause stays
  const auto r = locksim::run_scenario(s).strategies.front();
  CHECK(r.operations == 40);
  CHECK(total(r, "lost_increments") == 0);
  // Without a strategy of its own the run has nothing to compare.
  CHECK_THROWS_WITH(locksim::load_scenario(locksim::scenario_path("gc-pause-longer-than-lease"),
                                           {std::string(locksim::kWorkloadOverride) + workload.path}),
                    Catch::Contains("a list of the " + workload.name() + " workload's strategies"));
}

TEST_CASE("every workload in workloads/ loads, and so does each strategy in the folder of its name, written for it") {
  const std::filesystem::path folder = std::filesystem::path(LOCKSIM_SOURCE_DIR) / "workloads";
  int workloads = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() != ".lua") continue;
    INFO("workload " << entry.path().string());
    ++workloads;
    const auto w = models::workloads::load_workload(entry.path().string(), locksim::read_script(entry.path().string()));
    CHECK(w->name == entry.path().stem().string());
    CHECK_FALSE(w->metrics.empty());
    int strategies = 0;
    for (const auto& s : std::filesystem::directory_iterator(folder / entry.path().stem())) {
      INFO("strategy " << s.path().string());
      const locksim::StrategyChoice choice = locksim::load_script_file(s.path().string());
      CHECK(choice.entry().workload == w->name);
      ++strategies;
    }
    CHECK(strategies >= 3);
  }
  CHECK(workloads >= 4);
}

TEST_CASE("a workload's first Redis keys are there before the clients start, and check reads the keyspace at the end") {
  TempLua workload(R"lua(
description = "a counter in Redis"
redis = { counter = 5, other = "x" }
request = { by = 1 }
metrics = { { name = "lost_increments", unit = "increments", meaning = "acknowledged INCRs the final value lacks" } }
function check(final, history)
  local acknowledged = 0
  for _, op in ipairs(history.operations) do if op.outcome == "ok" then acknowledged = acknowledged + 1 end end
  assert(final.redis.other == "x")
  return { lost_increments = math.max(0, 5 + acknowledged - tonumber(final.redis.counter)) }
end
)lua");
  TempLua incr(strategy_for(workload.name(), "  redis.call('INCR', 'counter')"));
  TempLua get_set(strategy_for(workload.name(), "  local v = tonumber(redis.call('GET', 'counter'))\n  work()\n  redis.call('SET', 'counter', v + 1)"),
                  "getset");
  const auto results = locksim::run_scenario(load(world(workload, {&incr, &get_set}))).strategies;
  CHECK(total(results[0], "lost_increments") == 0);
  CHECK(total(results[0], "errors.internal") == 0);  // GET found the key: the seed was there
  CHECK(total(results[1], "lost_increments") > 0);   // GET, then SET: racing copies overwrite each other
}

TEST_CASE("two workloads loaded in one process keep both their metrics, so either runs after the other loads") {
  TempLua counter(counter_workload());
  TempLua sql(strategy_for(counter.name(), kIncrementInSql));
  const locksim::Scenario first = load(world(counter, {&sql}, 1));
  TempLua other(R"lua(
description = "another"
tables = { "CREATE TABLE t (id INT PRIMARY KEY, v BIGINT)" }
request = { k = "key" }
metrics = { { name = "other_count", unit = "things", meaning = "nothing" } }
function check(final, history) return { other_count = 0 } end
)lua");
  TempLua nothing(strategy_for(other.name(), "  work()"));
  const locksim::Scenario second = load(world(other, {&nothing}, 1));
  CHECK(locksim::is_metric("lost_increments"));
  CHECK(locksim::is_metric("other_count"));
  CHECK(total(locksim::run_scenario(first).strategies[0], "lost_increments") == 0);
  CHECK(locksim::run_scenario(second).strategies[0].counts.count("other_count") == 1);
}

TEST_CASE("the jobs workload with an index on status: SKIP LOCKED still runs each job once through the index") {
  // A table may have its own indexes (docs/sql.md, "Several indexes"): the claim `status = 'queued' ORDER BY id
  // LIMIT 1 FOR UPDATE SKIP LOCKED` then reads the index in order, and the catalogue's expectation holds.
  const auto r = run_with_tables("claiming-jobs", "jobs.lua", "owner BIGINT)", "owner BIGINT, KEY ix_status (status))",
                                 "jobs/skip-locked.lua");
  CHECK(r.operations == 40);
  CHECK(total(r, "jobs_run_twice") == 0);
  CHECK(total(r, "jobs_not_done") == 0);
}

TEST_CASE("the payment workload keyed by the payment id itself: a unique insert before the charge still charges once") {
  // A primary key on other columns (docs/sql.md, "A primary key on other columns"): `payment BIGINT PRIMARY KEY` in place
  // of an id and a UNIQUE KEY; the retry's insert waits on the first attempt's record and then finds the payment.
  const auto r = run_with_tables("paying-once", "payment.lua",
                                 "t_payment (id BIGINT AUTO_INCREMENT PRIMARY KEY, payment BIGINT, amount BIGINT, UNIQUE KEY (payment))",
                                 "t_payment (payment BIGINT PRIMARY KEY, amount BIGINT)", "payment/request-id-unique.lua");
  CHECK(total(r, "charges") == 5);  // one payment a trial, charged
  CHECK(total(r, "double_charges") == 0);
  CHECK(total(r, "acknowledged_uncharged") == 0);
}

TEST_CASE("a number a Lua strategy binds to an integer key column meets the rows a scenario lists with that number") {
  // `payment BIGINT` is the key column (UNIQUE KEY (payment)): a payment listed as paid already is found by the insert
  // of its number (1062, paid already, no charge), as on MariaDB, and not missed as the string '0' no row holds.
  std::ifstream in(locksim::scenario_path("paying-once"));
  json doc = json::parse(in);
  doc["workload"]["script"] = std::string(LOCKSIM_SOURCE_DIR) + "/workloads/payment.lua";
  doc["strategies"] = json::array({{{"script", std::string(LOCKSIM_SOURCE_DIR) + "/workloads/payment/request-id-unique.lua"}}});
  doc["faults"] = json::object();
  doc["expect"] = json::object();
  doc["trials"] = 1;
  doc["database"]["rows"]["t_payment"] = json::array();
  for (int payment = 0; payment < 10; ++payment) doc["database"]["rows"]["t_payment"].push_back({{"payment", payment}, {"amount", 5}});
  const std::filesystem::path path = test::unique_temp_path("locksim-listed-payments", ".json");
  std::ofstream(path) << doc.dump();
  const auto r = locksim::run_scenario(locksim::load_scenario(path.string())).strategies.front();
  std::filesystem::remove(path);
  CHECK(r.operations == 1);
  CHECK(total(r, "charges") == 0);
}

namespace {

// A seat-booking workload whose table is `table` (a unique key on seat and flight, as each
// engine's DDL states one): two seeded rows share a seat on two flights; every request books
// seat 1 on flight C, so one booking lands and the others meet the key.
std::string seats_workload(const std::vector<std::string>& table) {
  std::string tables;
  for (const auto& t : table) tables += "  \"" + t + "\",\n";
  return "description = 'book seats'\ntables = {\n" + tables + R"lua(}
rows = { t_seat = { { seat = 1, flight = 'A' }, { seat = 1, flight = 'B' } } }
request = { seat = { one_of = { 1 } } }
metrics = { { name = "seat_rows", unit = "rows", meaning = "rows of t_seat", finding = false } }
function check(final) return { seat_rows = #final.tables.t_seat } end
)lua";
}

constexpr const char* kBookSeat = R"lua(
  local ok, e = pcall(db.exec, "INSERT INTO t_seat (seat, flight) VALUES (1, 'C')")
  if not ok and e.code ~= 1062 and e.code ~= "23505" then error(e, 0) end
)lua";

std::size_t seat_rows_after_a_run(const std::vector<std::string>& table, const char* engine) {
  TempLua workload(seats_workload(table));
  TempLua strategy(strategy_for(workload.name(), kBookSeat));
  json doc = world(workload, {&strategy}, 1);
  doc["database"] = {{"engine", engine}};
  return static_cast<std::size_t>(total(locksim::run_scenario(load(doc)).strategies.front(), "seat_rows"));
}

}  // namespace

TEST_CASE("a Lua workload's unique key on two columns holds both columns, as database.tables's does") {
  // Seeded: seat 1 on flights A and B; booked: seat 1 on flight C once, whatever the retries.
  CHECK(seat_rows_after_a_run({"CREATE TABLE t_seat (id BIGINT AUTO_INCREMENT PRIMARY KEY, seat INT NOT NULL, "
                               "flight VARCHAR(8) NOT NULL, UNIQUE KEY uk_fs (flight, seat))"},
                              "mariadb") == 3);
  CHECK(seat_rows_after_a_run({"CREATE TABLE t_seat (id BIGINT AUTO_INCREMENT PRIMARY KEY, seat INT NOT NULL, "
                               "flight VARCHAR(8) NOT NULL, UNIQUE (seat, flight))"},
                              "mariadb") == 3);
}

TEST_CASE("a Lua workload's tables are read in the dialect of the scenario's engine") {
  CHECK(seat_rows_after_a_run({"CREATE TABLE t_seat (id SERIAL PRIMARY KEY, seat INT NOT NULL, flight TEXT NOT NULL, "
                               "CONSTRAINT uk_fs UNIQUE (seat, flight))"},
                              "postgresql") == 3);
  CHECK(seat_rows_after_a_run({"CREATE TABLE t_seat (id SERIAL PRIMARY KEY, seat INT NOT NULL, flight TEXT NOT NULL)",
                               "CREATE UNIQUE INDEX uk_fs ON t_seat (flight, seat)"},
                              "postgresql") == 3);
  // MySQL's DDL on PostgreSQL is PostgreSQL's syntax error, named by the file and the line.
  TempLua workload(seats_workload({"CREATE TABLE t_seat (id BIGINT AUTO_INCREMENT PRIMARY KEY, seat INT, flight VARCHAR(8), "
                                   "UNIQUE KEY uk_fs (flight, seat))"}));
  TempLua strategy(strategy_for(workload.name(), kBookSeat));
  json doc = world(workload, {&strategy}, 1);
  doc["database"] = {{"engine", "postgresql"}};
  CHECK_THAT(refusal(doc), Catch::Contains(workload.label() + ": tables[1]: ") && Catch::Contains("postgresql SQL"));
}

TEST_CASE("a seeded row a workload's own key refuses is named as the workload's, not a strategy's") {
  TempLua workload(seats_workload({"CREATE TABLE t_seat (id BIGINT AUTO_INCREMENT PRIMARY KEY, seat INT NOT NULL, "
                                   "flight VARCHAR(8) NOT NULL, UNIQUE KEY uk_fs (seat))"}));
  TempLua strategy(strategy_for(workload.name(), kBookSeat));
  const std::string why = refusal(world(workload, {&strategy}, 1));
  CHECK_THAT(why, Catch::Contains("Duplicate entry '1' for key 'uk_fs'"));
  CHECK_THAT(why, !Catch::Contains("with the tables of"));
}

TEST_CASE("a Lua workload's own finding comes first: in the findings, in a trial's fired list and in the first violating trial") {
  auto s = locksim::load_scenario(locksim::scenario_path("claiming-jobs"), {}, {"redis-lease.lua"});
  s.trials = 3;
  REQUIRE(!locksim::findings().empty());
  CHECK(locksim::workload_finding(locksim::findings().front()->name));
  const auto results = locksim::run_scenario(s, {.jobs = 1});
  const auto& v = results.strategies.front().first_violation;
  REQUIRE(v);
  CHECK_THAT(v->fired.front(), Catch::StartsWith("jobs_run_twice "));
}

TEST_CASE("every trial has a story: a Lua workload's trial without a lock hold tells its statements") {
  auto s = locksim::load_scenario(locksim::scenario_path("claiming-jobs"), {}, {"skip-locked.lua"});
  s.trials = 1;
  const auto results = locksim::run_scenario(s, {.jobs = 1});
  const auto& t = results.strategies.front().timeline;
  CHECK(t.bars.empty());
  CHECK(!t.statements.empty());
  CHECK(locksim::reports::sequence_svg(t, "one trial").find("nothing to draw") == std::string::npos);
}

TEST_CASE("a Lua workload's attempts are told by their request's fields, not by a traffic key") {
  TempLua workload(counter_workload());
  TempLua sql(strategy_for(workload.name(), kIncrementInSql));
  const auto results = locksim::run_scenario(load(world(workload, {&sql}, 1)), {.jobs = 1});
  std::size_t attempts = 0;
  for (const auto& m : results.strategies.front().timeline.messages) {
    if (m.operation < 0) continue;
    ++attempts;
    CHECK_THAT(m.request, Catch::Matches("op [0-9]+ attempt 1 \\(by [1-3], payment [0-9]+\\)"));
  }
  CHECK(attempts == 8);
}

TEST_CASE("a metric declared with an empty name is refused as empty") {
  std::string text = counter_workload();
  text.replace(text.find("name = \"effects_seen\""), std::string("name = \"effects_seen\"").size(), "name = \"\"");
  CHECK_THAT(workload_refusal(text), Catch::Contains("metrics[3].name: expected a non-empty string, got an empty one"));
}

TEST_CASE("the effects a strategy reports count in the trial's memory budget") {
  TempLua workload(counter_workload());
  // 2,000 effects of 100 kB in each of 8 operations would hold 1.6 GB.
  TempLua hoarder(strategy_for(workload.name(), "  local big = string.rep('e', 100000)\n  for i = 1, 2000 do effect('added', big) end"));
  json doc = world(workload, {&hoarder}, 1);
  doc["memory_budget_mb"] = 64;
  const auto r = locksim::run_scenario(load(doc)).strategies.front();
  CHECK(total(r, "script_errors") > 0);
  REQUIRE(!r.examples.empty());
  CHECK_THAT(r.examples.front(), Catch::Contains("effect: the effects of a trial may hold at most 16 MiB"));
}
