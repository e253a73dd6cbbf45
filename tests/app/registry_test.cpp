// The registries the tool is assembled from: metrics (docs/metrics.md is made from them),
// fault kinds, and defaults that live once, in the models.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/fault_kind.hpp"
#include "app/metrics.hpp"
#include "app/runner.hpp"
#include "app/scenario.hpp"

namespace {
std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string temporary(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << text;
  return path.string();
}
}  // namespace

TEST_CASE("docs/metrics.md is the metric registry as `locksim list --metrics` prints it") {
  CHECK(read(std::string(LOCKSIM_SOURCE_DIR) + "/docs/metrics.md") == locksim::metrics_markdown());
}

TEST_CASE("every metric a catalogue run reports is in the registry, and every finding is a property explore accepts") {
  for (const auto& name : {"duplicate_rows", "errors.1062", "latency_ms.p99", "max_concurrent_holders", "lost_updates"})
    CHECK(locksim::is_metric(name));
  CHECK_FALSE(locksim::is_metric("errors."));
  CHECK_FALSE(locksim::is_metric("duplicates"));
  auto s = locksim::load_scenario(locksim::scenario_path("account-bind"));
  s.trials = 2;
  for (const auto& st : locksim::run_scenario(s).strategies)
    for (const auto& [name, m] : st.counts) CHECK(locksim::is_metric(name));
  std::vector<std::string> findings;
  for (const auto* m : locksim::findings()) findings.push_back(m->name);
  CHECK(std::find(findings.begin(), findings.end(), "max_concurrent_holders") != findings.end());
  CHECK(std::find(findings.begin(), findings.end(), "latency_ms.p99") == findings.end());
  CHECK(locksim::fires("max_concurrent_holders", 2));
  CHECK_FALSE(locksim::fires("max_concurrent_holders", 1));
}

TEST_CASE("a scenario that leaves a value out runs with the model's default, which the effective configuration shows") {
  const auto path = temporary("defaults", R"({"name": "defaults", "strategies": ["unique-index"]})");
  const auto s = locksim::load_scenario(path);
  const models::DeploymentConfig model;
  CHECK(s.deployment.app_servers == model.app_servers);
  CHECK(s.deployment.server.workers == model.server.workers);
  CHECK(s.deployment.clients.clients == model.clients.clients);
  CHECK(s.deployment.database.pool.size == model.database.pool.size);
  const auto doc = locksim::effective_config(s);
  CHECK(doc["topology"]["app_servers"] == model.app_servers);
  CHECK(doc["clients"]["max_attempts"] == model.clients.retry.max_attempts);
  CHECK(doc["database"]["lock_wait_timeout_ms"] == 50000.0);
  CHECK(doc["strategies"][0]["name"] == "unique-index");
  std::filesystem::remove(path);
}

TEST_CASE("the effective configuration of every catalogue scenario loads back as the same scenario") {
  for (const auto& file : locksim::catalogue()) {
    INFO(file);
    const auto s = locksim::load_scenario(file);
    const auto doc = locksim::effective_config(s);
    const auto path = temporary("effective", doc.dump());
    const auto again = locksim::load_scenario(path);
    CHECK(locksim::effective_config(again) == doc);
    std::filesystem::remove(path);
  }
}

TEST_CASE("every fault kind is a key of the faults object, and an unknown key names them all") {
  std::string keys;
  for (const auto* kind : locksim::fault_kinds()) keys += std::string(kind->key()) + " ";
  CHECK(keys == "gc_pauses pauses crashes partitions clock_steps latency_spikes explore ");
  const auto path = temporary("bad-fault", R"({"name": "x", "faults": {"earthquakes": []}})");
  try {
    locksim::load_scenario(path);
    FAIL("an unknown fault kind was accepted");
  } catch (const locksim::InputError& e) {
    CHECK(std::string(e.what()).find("/faults/earthquakes: expected one of the keys gc_pauses, pauses") != std::string::npos);
    CHECK(std::string(e.what()).find("latency_spikes") != std::string::npos);
  }
  std::filesystem::remove(path);
}

TEST_CASE("a latency spike on the database makes clients time out and retry where they did not before") {
  auto s = locksim::load_scenario(locksim::scenario_path("account-bind"),
                                  {"clients.count=20", "strategies=[\"unique-index\"]", "expect={}"});
  s.trials = 3;
  const auto calm = locksim::run_scenario(s);
  auto spiked = locksim::load_scenario(
      locksim::scenario_path("account-bind"),
      {"clients.count=20", "strategies=[\"unique-index\"]", "expect={}",
       R"(faults.latency_spikes=[{"at_ms": 0, "length_ms": 2000, "factor": 200, "node": "db-1"}])"});
  spiked.trials = 3;
  const auto slow = locksim::run_scenario(spiked);
  CHECK(calm.strategies[0].counts.count("errors.timeout") == 0);
  REQUIRE(slow.strategies[0].counts.count("errors.timeout") == 1);
  CHECK(slow.strategies[0].counts.at("errors.timeout").total > 0);
  // Operations caught in the spike give up after their attempts' timeouts: failed, timed apart from
  // the successful ones, and slower than any calm one.
  REQUIRE(slow.strategies[0].counts.at("failed_operations").total > 0);
  CHECK(slow.strategies[0].figures.at("failed_latency_ms.p99") > calm.strategies[0].figures.at("latency_ms.max"));
}

TEST_CASE("a latency spike names one node or two different ones") {
  const auto both = temporary("spike", R"({"name": "x", "faults": {"latency_spikes": [{"at_ms": 1, "length_ms": 5, "node": "db-1", "between": ["app-1", "db-1"]}]}})");
  CHECK_THROWS_WITH(locksim::load_scenario(both), Catch::Contains("/faults/latency_spikes/0: expected either \"node\""));
  const auto same = temporary("spike2", R"({"name": "x", "faults": {"latency_spikes": [{"at_ms": 1, "length_ms": 5, "between": ["db-1", "db-1"]}]}})");
  CHECK_THROWS_WITH(locksim::load_scenario(same), Catch::Contains("/faults/latency_spikes/0/between: expected two different nodes"));
  std::filesystem::remove(both);
  std::filesystem::remove(same);
}

TEST_CASE("a pause, a partition or a latency spike without a length is refused, not run as one of no length") {
  for (const char* fault : {R"("pauses": [{"node": "app-1", "at_ms": 5}])",
                            R"("partitions": [{"at_ms": 5, "side_a": ["app-1"], "side_b": ["db-1"]}])",
                            R"("latency_spikes": [{"at_ms": 5, "node": "db-1"}])"}) {
    const auto path = temporary("no-length", std::string(R"({"name": "x", "faults": {)") + fault + "}}");
    CHECK_THROWS_WITH(locksim::load_scenario(path), Catch::Contains("/0: expected a length_ms (how long it lasts)"));
    std::filesystem::remove(path);
  }
}

TEST_CASE("faults placed by a search need a count in range, a length for pauses, and a kind the search places") {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {R"({"pauses": {"count": 1}})", "/faults/explore/pauses: expected a length_ms"},
      {R"({"pauses": {"count": 4, "length_ms": 10}})", "/faults/explore/pauses/count: expected"},
      {R"({"pauses": {"length_ms": 10}})", "/faults/explore/pauses: expected a count (how many to place, 1 to 3)"},
      {R"({"pauses": {"count": 1, "length_ms": {"uniform_ms": [1, 5]}}})", "/faults/explore/pauses/length_ms: expected a length_ms"},
      {R"({"pauses": {"count": 1, "length_ms": {"one_of_ms": [5, 5]}}})", "/faults/explore/pauses/length_ms/one_of_ms/1: expected"},
      {R"({"earthquakes": {"count": 1}})", "/faults/explore/earthquakes: expected one of the keys pauses, crashes, lost_messages"},
      {R"({"crashes": {"count": 1, "nodes": ["app-9"]}})", "/faults/explore/crashes/nodes/0/node: expected a node"},
      {R"({})", "/faults/explore: expected at least one of pauses, crashes and lost_messages"}};
  for (const auto& [placed, message] : cases) {
    CAPTURE(placed);
    const auto path = temporary("placed", std::string(R"({"name": "x", "faults": {"explore": )") + placed + "}}");
    CHECK_THROWS_WITH(locksim::load_scenario(path), Catch::Contains(message));
    std::filesystem::remove(path);
  }
}
