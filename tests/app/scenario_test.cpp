// Scenario files: bad files are refused with the file, the JSON path and what was expected,
// parameters are set by name, and results are a function of the seed.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "scenario_files.hpp"
#include "support.hpp"
#include "app/runner.hpp"
#include "app/scenario.hpp"

namespace {

using test::refusal;
using test::TempScenario;

std::string without_timing(const locksim::reports::RunResults& r) {
  auto doc = nlohmann::json::parse(locksim::reports::to_json(r));
  for (auto& s : doc["strategies"]) s.erase("timing");
  return doc.dump();
}

}  // namespace

TEST_CASE("account-bind reproduces the production case: check-then-insert duplicates a few percent of keys, rows "
          "written within milliseconds") {
  auto s = locksim::load_scenario(locksim::scenario_path("account-bind"));
  s.trials = 100;
  s.strategies = {{"check-then-insert", {}}};
  const auto r = locksim::run_scenario(s);
  const auto& cti = r.strategies.front();
  const double share_of_keys = cti.counts.at("duplicated_keys").total / static_cast<double>(cti.operations);
  CHECK(share_of_keys > 0.01);  // the article: about 3% of OpenIDs
  CHECK(share_of_keys < 0.10);
  REQUIRE_FALSE(cti.examples.empty());
  CHECK(cti.examples.front().find(" ms apart") != std::string::npos);
}

TEST_CASE("a run narrowed to some strategies judges only their expectations and says the others are skipped") {
  auto s = locksim::load_scenario(locksim::scenario_path("account-bind"));
  s.trials = 3;
  s.strategies = {{"unique-index", {}}};
  const auto r = locksim::run_scenario(s);
  REQUIRE(r.expectations.size() == s.expect.size());
  int judged = 0;
  for (const auto& e : r.expectations) {
    CHECK(e.skipped == !e.text.starts_with("unique-index "));
    if (e.skipped) continue;
    ++judged;
    CHECK(e.text.starts_with("unique-index duplicate_rows"));
    CHECK(e.holds);
  }
  CHECK(judged == 1);
  CHECK(locksim::reports::to_json(r).find("\"skipped\": \"its strategy was not run\"") != std::string::npos);
}

TEST_CASE("a run gives identical results for the same seed") {
  auto s = locksim::load_scenario(locksim::scenario_path("account-bind"));
  s.trials = 5;
  const auto a = locksim::run_scenario(s);
  const auto b = locksim::run_scenario(s);
  CHECK(without_timing(a) == without_timing(b));
  s.seed = 99;
  CHECK(without_timing(locksim::run_scenario(s)) != without_timing(a));
}

TEST_CASE("trials spread over two threads give the results of one thread") {
  for (const char* name : {"account-bind", "gc-pause-longer-than-lease", "batch-double-enqueue"}) {
    INFO(name);
    auto s = locksim::load_scenario(locksim::scenario_path(name));
    s.trials = 6;
    CHECK(without_timing(locksim::run_scenario(s, 1)) == without_timing(locksim::run_scenario(s, 2)));
  }
}

TEST_CASE("runs with scheduled faults, several lock services and the batch workload are as repeatable") {
  for (const char* name : {"redlock-clock-step", "failover-loses-lock", "zk-session-expiry-during-pause", "batch-crash-after-mark"}) {
    INFO(name);
    auto s = locksim::load_scenario(locksim::scenario_path(name));
    s.trials = 3;
    const auto a = locksim::run_scenario(s);
    CHECK(without_timing(a) == without_timing(locksim::run_scenario(s)));
  }
}

TEST_CASE("a path=value override acts as if written in the scenario file, and changes the scenario hash") {
  const auto path = locksim::scenario_path("account-bind");
  const auto plain = locksim::load_scenario(path);
  const auto changed = locksim::load_scenario(path, {"clients.count=7", "topology.balance=\"sticky\""});
  CHECK(changed.deployment.clients.clients == 7);
  CHECK(changed.deployment.balance == models::Balance::sticky);
  CHECK(changed.hash != plain.hash);
}

TEST_CASE("results.json holds every strategy's figures, the seed, the scenario hash and the configuration") {
  auto s = locksim::load_scenario(locksim::scenario_path("account-bind"));
  s.trials = 3;
  s.strategies = {{"unique-index", {}}};
  const auto doc = nlohmann::json::parse(locksim::reports::to_json(locksim::run_scenario(s)));
  CHECK(doc["seed"] == 1);
  CHECK(doc["trials"] == 3);
  CHECK(doc["configuration"]["name"] == "account-bind");
  const auto& st = doc["strategies"][0];
  CHECK(st["name"] == "unique-index");
  CHECK(st["operations"] == 3 * s.deployment.clients.clients);
  CHECK(st["metrics"]["duplicate_rows"]["total"] == 0);
  CHECK(st["metrics"]["duplicate_rows"]["share_of_trials"]["high95"].get<double>() > 0);
  CHECK(st["metrics"]["latency_ms.p99"].get<double>() >= st["metrics"]["latency_ms.p50"].get<double>());
}

TEST_CASE("a scenario file with mistakes is refused in one line naming the JSON path and what was expected") {
  CHECK(refusal(R"({"name": "x", "topology": {"wrkers": 4}})").starts_with("/topology/wrkers: expected one of the keys"));
  CHECK(refusal(R"({"name": "x", "topology": {"workers": 0}})") == "/topology/workers: expected an integer from 1 to 100000, got 0");
  CHECK(refusal(R"({"name": "x", "clients": {"timeout_ms": "soon"}})") == "/clients/timeout_ms: expected a number");
  CHECK(refusal(R"({"name": "x", "strategies": ["check-then-insert", "redis-magic"]})")
            .starts_with("/strategies/1: expected a strategy name"));
  CHECK(refusal(R"({"name": "x", "strategies": [{"name": "redis-set-nx-ex-drop", "params": {"ttl_ms": -1}}]})") ==
        "/strategies/0/params/ttl_ms: expected a duration in ms from 0 to 1000000000000");
  // Consul's bounds: a session TTL from 10 s to 24 h, a lock-delay of at most 60 s.
  CHECK(refusal(R"({"name": "x", "strategies": [{"name": "consul-lock", "params": {"ttl_ms": 5000}}]})") ==
        "/strategies/0/params/ttl_ms: expected a duration in ms from 10000 to 86400000");
  CHECK(refusal(R"({"name": "x", "strategies": [{"name": "consul-lock", "params": {"lock_delay_ms": 61000}}]})") ==
        "/strategies/0/params/lock_delay_ms: expected a duration in ms from 0 to 60000");
  CHECK(refusal(R"({"name": "x", "expect": {"unique-index": {"duplicate_rows": "few"}}})")
            .starts_with("/expect/unique-index/duplicate_rows: expected a comparison"));
  CHECK(refusal(R"({"name": "x", "database": {"read": {"uniform_ms": [5, 1]}}})")
            .starts_with("/database/read/uniform_ms: expected [low, high]"));
  CHECK(refusal(R"({"name": "x",)").starts_with("/: expected JSON"));
  CHECK(refusal(R"({"name": "x", "faults": {"pauses": [{"node": "app-3", "at_ms": 5, "length_ms": 10}]}})")
            .starts_with("/faults/pauses/0/node: expected a node: app-1 .. app-2"));
  CHECK(refusal(R"({"name": "x", "faults": {"crashes": [{"node": "redis-1", "at_ms": -5}]}})") ==
        "/faults/crashes/0/at_ms: expected a number from 0 to 1000000000000, got -5");
  CHECK(refusal(R"({"name": "x", "faults": {"partitions": [{"at_ms": 0, "length_ms": 5, "side_a": ["app-1"]}]}})") ==
        "/faults/partitions/0/side_b: expected a non-empty list of nodes");
  CHECK(refusal(R"({"name": "x", "faults": {"partitions": [{"length_ms": 5, "side_a": ["app-1"], "side_b": ["db-1"], "one_way": 1}]}})")
            .starts_with("/faults/partitions/0/one_way: expected true or false"));
  CHECK(refusal(R"({"name": "x", "clients": {"arrival": {"kind": "listed", "times_ms": [5, 1]}}})") ==
        "/clients/arrival/times_ms/1: expected times in ms, from 0 to 1000000000000 and in order");
  CHECK(refusal(R"({"name": "x", "strategies": ["publish-then-mark"]})") ==
        "/strategies/0: expected a strategy of the account-bind workload; publish-then-mark is one of batch-scheduler");
  CHECK(refusal(R"({"name": "x", "strategies": ["upsert", "upsert"]})")
            .starts_with("/strategies/1: expected each strategy once, or told apart with \"as\""));
  CHECK(refusal(R"({"name": "x", "strategies": ["upsert"], "expect": {"unique-index": {"duplicate_rows": "= 0"}}})")
            .starts_with("/expect/unique-index: expected a strategy this scenario runs"));
  CHECK(refusal(R"({"name": "x", "redis": {"persistence": "sometimes"}})")
            .starts_with("/redis/persistence: expected one of none, aof_everysec, aof_always"));
  // A key given twice: which one was meant is not for the reader to guess.
  CHECK(refusal(R"({"name": "x", "topology": {"workers": 4, "workers": 8}})") ==
        "/topology/workers: expected each key once in an object, got it twice");
  CHECK(refusal(R"({"name": "x", "faults": {"pauses": [{"node": "app-1", "at_ms": 5, "length_ms": 10}, {"at_ms": 1, "at_ms": 2}]}})") ==
        "/faults/pauses/1/at_ms: expected each key once in an object, got it twice");
}

TEST_CASE("a key one workload kind owns is refused under another, naming the kind that owns it") {
  CHECK(refusal(R"({"name": "x", "workload": {"kind": "account-bind", "tasks": 5}})") ==
        "/workload/tasks: expected tasks only for the batch-scheduler workload");
  CHECK(refusal(R"({"name": "x", "workload": {"kind": "batch-scheduler", "settle_ms": 5}})") ==
        "/workload/settle_ms: expected settle_ms only for the sessions workload");
  CHECK(refusal(R"({"name": "x", "workload": "batch-scheduler", "steps": []})") ==
        "/steps: expected \"steps\" only with the sessions workload");
  CHECK(refusal(R"({"name": "x", "workload": "sessions", "steps": [{"session": "a", "sql": "BEGIN"}], "rollout": {}})") ==
        "/rollout: expected \"rollout\" only with the account-bind workload");
  // A key no kind has: every kind's keys are listed.
  CHECK(refusal(R"({"name": "x", "workload": {"kind": "sessions", "bogus": 1}})")
            .starts_with("/workload/bogus: expected one of the keys kind, operation, tasks,"));
}

TEST_CASE("durations beyond the limit are refused before they are converted, not wrapped to about zero") {
  CHECK(refusal(R"({"name": "x", "topology": {"internal_latency": {"one_of_ms": [1e13]}}})")
            .starts_with("/topology/internal_latency/one_of_ms: expected a list of 1 to 16 durations in ms, each from 0 to"));
  CHECK(refusal(R"({"name": "x", "topology": {"internal_latency": {"uniform_ms": [0, 1e13]}}})")
            .starts_with("/topology/internal_latency/uniform_ms: expected [low, high]"));
  CHECK(refusal(R"({"name": "x", "clients": {"arrival": {"kind": "listed", "times_ms": [0, 1e13]}}})")
            .starts_with("/clients/arrival/times_ms/1: expected times in ms"));
  // The largest accepted value still converts to a large duration.
  TempScenario file(R"({"name": "x", "topology": {"internal_latency": {"one_of_ms": [1e12]}}})");
  const auto s = locksim::load_scenario(file.path);
  sim::ChoiceSource source(1);
  auto stream = source.stream("test");
  CHECK(s.deployment.internal_link.latency.sample_duration(stream) == std::chrono::milliseconds(1'000'000'000'000));
}

TEST_CASE("values the models would refuse are refused by the loader, with the path") {
  CHECK(refusal(R"({"name": "x", "topology": {"accept_queue": 0}})") ==
        "/topology/accept_queue: expected an integer from 1 to 10000000, got 0");
  CHECK(refusal(R"({"name": "x", "clients": {"backoff": {"cap_ms": 0}}})")
            .starts_with("/clients/backoff/cap_ms: expected a cap no smaller than the base"));
  CHECK(refusal(R"({"name": "x", "clients": {"count": 1000, "operations": 10000}})")
            .starts_with("/clients: expected at most 1000000 operations a trial"));
  CHECK(refusal(R"({"name": "x", "topology": {"app_servers": 1000, "workers": 1000}})")
            .starts_with("/topology: expected at most 100000 workers in all"));
}

TEST_CASE("normal_ms is a mean and a standard deviation, not a range") {
  TempScenario file(R"({"name": "x", "database": {"read": {"normal_ms": [10, 2]}}})");
  CHECK_NOTHROW(locksim::load_scenario(file.path));
}

TEST_CASE("a scenario name that is not a plain file name is refused, so no report is written outside its folder") {
  for (const std::string& name : std::vector<std::string>{"../../../victim", "a/b", ".hidden", "", std::string(300, 'n')}) {
    CAPTURE(name);
    CHECK(refusal(nlohmann::json{{"name", name}}.dump()).starts_with("/name: expected a name of 1 to 100 letters"));
  }
  CHECK(refusal(R"({"name": "x", "strategies": [{"name": "upsert", "as": "../up"}]})")
            .starts_with("/strategies/0/as: expected a name of 1 to 100 letters"));
}

TEST_CASE("input JSON that is too deep, too large a number or not UTF-8 is refused in one line") {
  CHECK(refusal(std::string(100'000, '[') + std::string(100'000, ']')).starts_with("/: expected JSON nested at most 32 deep"));
  CHECK(refusal("{\"a\": \"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\", \"name\": \"x\", \"b\": [\"\\\"[\"]}").starts_with("/a: expected one of the keys"));  // brackets inside strings are no nesting
  // A list of 100,000 objects is read in one pass (a parser callback once took 13 s over it).
  std::string steps = R"({"name": "x", "workload": "sessions", "steps": [)";
  for (int i = 0; i < 100'000; ++i) steps += std::string(i ? "," : "") + R"({"session": "a", "sql": "BEGIN"})";
  CHECK(refusal(steps + "]}").starts_with("/steps: expected at most 10000 steps"));
  CHECK(refusal(R"({"name": "x", "seed": 1e400})").starts_with("/: expected JSON"));
  CHECK(refusal("{\"name\": \"x\", \"description\": \"\xff\"}").starts_with("/: expected JSON"));  // the parser's own check
  TempScenario file(R"({"name": "x"})");
  try {
    locksim::load_scenario(file.path, {"description=\xff\xfe"});
    FAIL("invalid UTF-8 accepted");
  } catch (const locksim::InputError& e) {
    CHECK(std::string(e.what()) == file.path + ": /description: expected text in UTF-8");
  }
}

TEST_CASE("an override cannot make a long list out of nothing, and writes within a list or one past it") {
  TempScenario file(R"({"name": "x", "strategies": ["upsert"]})");
  CHECK_THROWS_WITH(locksim::load_scenario(file.path, {"x.99999999=1"}), Catch::Contains("/x: expected one of the keys"));
  CHECK_THROWS_WITH(locksim::load_scenario(file.path, {"strategies.99999999=upsert"}),
                    Catch::Contains(": strategies.99999999: --set cannot write here (a list of 1 here: an index from 0 to 1)"));
  const auto s = locksim::load_scenario(file.path, {"strategies.1=unique-index"});
  REQUIRE(s.strategies.size() == 2);
  CHECK(s.strategies[1].name == "unique-index");
  CHECK_THROWS_WITH(locksim::load_scenario(file.path, {"name.x=1"}), Catch::Contains("a string here"));
}

TEST_CASE("a scenario path that is a directory is refused in one line") {
  const auto folder = test::unique_temp_path("locksim-test-folder");
  std::filesystem::create_directories(folder);
  CHECK_THROWS_WITH(locksim::load_scenario(folder.string()), Catch::Contains("expected a scenario file"));
  std::filesystem::remove(folder);
}

TEST_CASE("a value echoed in a message is cut short and its invalid bytes are escaped") {
  const std::string long_name(200'000, 'z');
  const std::string message = refusal(nlohmann::json{{"name", "x"}, {"strategies", {long_name}}}.dump());
  CHECK(message.size() < 300);
  CHECK(message.find("... (200000 bytes)") != std::string::npos);
  CHECK(locksim::quote_value("a\xff\n") == "\"a\\xff\\x0a\"");
  CHECK(locksim::quote_value("h\xc3\xa9") == "\"h\xc3\xa9\"");
}

TEST_CASE("a task submission that times out is an error the console shows, not a failure of the run") {
  auto s = locksim::load_scenario(locksim::scenario_path("batch-double-enqueue"), {"topology.internal_latency.uniform_ms.1=20000"});
  s.trials = 2;
  locksim::reports::RunResults results;
  REQUIRE_NOTHROW(results = locksim::run_scenario(s));
  const double tasks = locksim::effective_config(s).at("workload").at("tasks").get<double>();
  for (const auto& st : results.strategies) {
    CAPTURE(st.name);
    // Not executed counts the tasks stored, never more than were submitted.
    CHECK(st.counts.at("tasks_not_executed").total <= tasks * s.trials);
  }
}

TEST_CASE("a strategy's parameter is set by the strategy's name, or by a label for one copy") {
  const auto path = locksim::scenario_path("gc-pause-longer-than-lease");
  const auto s = locksim::load_scenario(path, {"redis-token-cas-unlock.ttl_ms=60000"});
  const auto base = locksim::load_scenario(path);
  REQUIRE(s.strategies.size() == base.strategies.size());
  for (std::size_t i = 0; i < s.strategies.size(); ++i) {
    auto expected = base.strategies[i].params;
    if (s.strategies[i].name == "redis-token-cas-unlock") expected["ttl_ms"] = 60000;
    CHECK(s.strategies[i].params == expected);
  }
  CHECK(s.hash != base.hash);  // the scenario run is another: results and tokens say so
  const auto labelled = locksim::load_scenario(
      path, {"strategies=[{\"name\": \"redlock\", \"as\": \"short\"}, {\"name\": \"redlock\", \"as\": \"long\"}]", "expect={}",
             "long.ttl_ms=90000"});
  CHECK(labelled.strategies[0].params.at("ttl_ms") == 10000);
  CHECK(labelled.strategies[1].params.at("ttl_ms") == 90000);
}

TEST_CASE("a parameter of a strategy the scenario does not run is refused, unless --strategy adds the strategy") {
  const auto path = locksim::scenario_path("gc-pause-longer-than-lease");
  CHECK_THROWS_WITH(locksim::load_scenario(path, {"zookeeper-recipe.wait_ms=5"}),
                    Catch::Contains("add --strategy zookeeper-recipe to run it"));
  const auto s = locksim::load_scenario(path, {"zookeeper-recipe.wait_ms=5"}, {"zookeeper-recipe"});
  REQUIRE(s.strategies.size() == 1);
  CHECK(s.strategies[0].name == "zookeeper-recipe");
  CHECK(s.strategies[0].params.at("wait_ms") == 5);
}

TEST_CASE("a strategy's parameter takes the values of its kind: a duration, a whole number or a flag") {
  const auto path = locksim::scenario_path("account-bind");
  CHECK_THROWS_WITH(locksim::load_scenario(path, {"redlock.retry_count=1.5"}), Catch::Contains("expected a whole number"));
  CHECK_THROWS_WITH(locksim::load_scenario(path, {"redis-retry-lock.transactional=2"}), Catch::Contains("expected true or false (or 1, 0)"));
  CHECK_THROWS_WITH(locksim::load_scenario(path, {"redlock.ttl_ms=-1"}), Catch::Contains("expected a duration in ms"));
  CHECK_THROWS_WITH(locksim::load_scenario(path, {"redlock.ttl=5"}),
                    Catch::Contains("expected a parameter of redlock: ttl_ms, node_timeout_ms, retry_count"));
  CHECK(locksim::load_scenario(path, {"redis-retry-lock.transactional=1"}).strategies.size() > 1);
}

TEST_CASE("queueing drives the duplicates: with workers enough for the load, far fewer retries and duplicates") {
  auto busy = locksim::load_scenario(locksim::scenario_path("account-bind"), {"strategies=[\"check-then-insert\"]", "expect={}"});
  auto idle = locksim::load_scenario(locksim::scenario_path("account-bind"),
                                     {"strategies=[\"check-then-insert\"]", "expect={}", "topology.workers=100"});
  busy.trials = idle.trials = 20;
  const auto saturated = locksim::run_scenario(busy).strategies.at(0);
  const auto ample = locksim::run_scenario(idle).strategies.at(0);
  CHECK(ample.counts.at("duplicate_rows").total * 5 < saturated.counts.at("duplicate_rows").total);
  CHECK(ample.figures.at("latency_ms.p99") < saturated.figures.at("latency_ms.p99"));
}

TEST_CASE("a strategy's index parameter chooses the index its table is built with, by name or by number") {
  auto s = locksim::load_scenario(locksim::scenario_path("account-bind"),
                                  {"trials=30", "check-then-insert.index=\"unique\""}, {"check-then-insert"});
  REQUIRE(s.strategies.front().params.at("index") == 2);
  const auto with_index = locksim::run_scenario(s).strategies.front();
  CHECK(with_index.counts.at("duplicate_rows").total == 0);
  CHECK(with_index.counts.at("errors.1062").total > 0);
  auto plain = locksim::load_scenario(locksim::scenario_path("account-bind"), {"trials=30"}, {"check-then-insert"});
  CHECK(plain.strategies.front().params.at("index") == 0);
  CHECK(locksim::run_scenario(plain).strategies.front().counts.at("duplicate_rows").total > 0);
  TempScenario bad(R"({"name": "x", "strategies": [{"name": "select-for-update", "params": {"index": "hash"}}]})");
  try {
    locksim::load_scenario(bad.path);
    FAIL("an index named hash was accepted");
  } catch (const locksim::InputError& e) {
    CHECK(std::string(e.what()).find("\"none\", \"plain\" or \"unique\"") != std::string::npos);
  }
}

TEST_CASE("a run of a strategy the scenario does not list says whose lesson it prints") {
  const auto path = locksim::scenario_path("gc-pause-longer-than-lease");
  const auto own = locksim::load_scenario(path, {}, {"redlock"});
  CHECK(own.lesson.find("This lesson was written for") == std::string::npos);
  const auto other = locksim::load_scenario(path, {}, {"check-then-insert"});
  CHECK_THAT(other.lesson, Catch::StartsWith(own.lesson));
  CHECK_THAT(other.lesson, Catch::EndsWith("(This lesson was written for redis-set-nx-ex-drop, redis-token-cas-unlock, redisson-watchdog, "
                                           "redlock, lock-plus-unique-index; check-then-insert is not among them.)"));
}

TEST_CASE("a ZooKeeper session lost under a lock acquire is counted as session_expired, not as an internal error") {
  auto s = locksim::load_scenario(locksim::scenario_path("gc-pause-longer-than-lease"), {}, {"fencing-token"});
  const auto r = locksim::run_scenario(s);
  const auto& fencing = r.strategies.front();
  CHECK(fencing.counts.count("errors.internal") == 0);
  REQUIRE(fencing.counts.count("errors.session_expired") == 1);
  CHECK(fencing.counts.at("errors.session_expired").total >= 1);
  CHECK(fencing.counts.at("duplicate_rows").total == 0);
}
