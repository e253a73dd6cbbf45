// Scenario files: the catalogue meets its own expectations, bad files are refused with the
// file, the JSON path and what was expected, and results are a function of the seed.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support.hpp"
#include "app/runner.hpp"
#include "app/scenario.hpp"

namespace {

// A scenario file written for one test, removed after it.
struct TempScenario {
  explicit TempScenario(const std::string& text) {
    path = test::unique_temp_path("locksim-test", ".json").string();
    std::ofstream(path) << text;
  }
  ~TempScenario() { std::filesystem::remove(path); }
  std::string path;
};

std::string refusal(const std::string& text) {
  TempScenario file(text);
  try {
    locksim::load_scenario(file.path);
  } catch (const locksim::InputError& e) {
    const std::string message = e.what();
    CHECK(message.starts_with(file.path + ": "));
    return message.substr(file.path.size() + 2);
  }
  FAIL("the scenario was accepted");
  return "";
}

std::string without_timing(const locksim::reports::RunResults& r) {
  auto doc = nlohmann::json::parse(locksim::reports::to_json(r));
  for (auto& s : doc["strategies"]) s.erase("timing");
  return doc.dump();
}

}  // namespace

TEST_CASE("every scenario in the catalogue meets its expectations") {
  const auto files = locksim::catalogue();
  REQUIRE_FALSE(files.empty());
  for (const auto& file : files) {
    INFO(file);
    const auto scenario = locksim::load_scenario(file);
    const auto results = locksim::run_scenario(scenario);
    REQUIRE(results.expectations.size() == scenario.expect.size());  // the catalogue runs every strategy it judges
    for (const auto& e : results.expectations) {
      INFO(e.text << " (measured " << e.measured << ")");
      CHECK(e.measured_at_all);
      CHECK(e.holds);
    }
  }
}

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

TEST_CASE("a run narrowed to some strategies judges only their expectations") {
  auto s = locksim::load_scenario(locksim::scenario_path("account-bind"));
  s.trials = 3;
  s.strategies = {{"unique-index", {}}};
  const auto r = locksim::run_scenario(s);
  REQUIRE(r.expectations.size() == 1);
  CHECK(r.expectations.front().text.starts_with("unique-index duplicate_rows"));
  CHECK(r.expectations.front().holds);
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
  CHECK(changed.clients.clients == 7);
  CHECK(changed.balance == models::Balance::sticky);
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
  CHECK(st["operations"] == 3 * s.clients.clients);
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
        "/strategies/0/params/ttl_ms: expected a non-negative number");
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
  CHECK(refusal(R"({"name": "x", "clients": {"arrival": {"kind": "listed", "times_ms": [5, 1]}}})") ==
        "/clients/arrival/times_ms/1: expected times in ms, non-negative and in order");
  CHECK(refusal(R"({"name": "x", "strategies": ["publish-then-mark"]})") ==
        "/strategies/0: expected a strategy of the account-bind workload; publish-then-mark is one of batch-scheduler");
  CHECK(refusal(R"({"name": "x", "strategies": ["upsert", "upsert"]})")
            .starts_with("/strategies/1: expected each strategy once, or told apart with \"as\""));
  CHECK(refusal(R"({"name": "x", "strategies": ["upsert"], "expect": {"unique-index": {"duplicate_rows": "= 0"}}})")
            .starts_with("/expect/unique-index: expected a strategy this scenario runs"));
  CHECK(refusal(R"({"name": "x", "redis": {"persistence": "sometimes"}})")
            .starts_with("/redis/persistence: expected one of none, aof_everysec, aof_always"));
}
