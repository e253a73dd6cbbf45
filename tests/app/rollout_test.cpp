// Rollouts: a plan's steps change the code the app servers run, start and stop the cleanup job
// and run DDL while the traffic goes on; the rollout checker counts each phase; bad plans are
// refused at load with the file, the JSON path and what was expected.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "app/runner.hpp"
#include "app/scenario.hpp"
#include "models/deployment.hpp"
#include "models/workloads/rollout/rollout.hpp"
#include "reports/report.hpp"
#include "scenario_files.hpp"
#include "support.hpp"

namespace {

using nlohmann::json;
using test::TempScenario;

// Poisson traffic of fresh keys with many double clicks, so check-then-insert duplicates
// several times a second.
json scenario(json plans, double duration_s = 40, json rollout = json::object()) {
  json doc = json::parse(R"({
    "name": "x",
    "topology": {"app_servers": 2, "workers": 8, "app_work": {"lognormal_ms": {"median": 20, "sigma": 0.5}}},
    "clients": {"traffic": {"rate_per_s": 50, "keys": {"kind": "fresh"},
                            "double_submit": {"probability": 0.3, "delay": {"uniform_ms": [1, 20]}}}},
    "trials": 3
  })");
  doc["clients"]["traffic"]["duration_s"] = duration_s;
  rollout["duration_s"] = duration_s;
  doc["rollout"] = rollout;
  doc["strategies"] = plans;
  return doc;
}

json plan(const std::string& name, json steps) { return {{"as", name}, {"rollout", steps}}; }

locksim::reports::RunResults run(const json& doc) {
  TempScenario file(doc.dump());
  return locksim::run_scenario(locksim::load_scenario(file.path));
}

double total(const locksim::reports::StrategyResult& s, const std::string& metric) {
  auto it = s.counts.find(metric);
  return it == s.counts.end() ? 0 : it->second.total;
}

const locksim::reports::StrategyResult& named(const locksim::reports::RunResults& r, const std::string& name) {
  for (const auto& s : r.strategies)
    if (s.name == name) return s;
  FAIL("no strategy " << name);
  throw std::logic_error("unreachable");
}

std::string refusal(const json& doc) { return test::refusal(doc.dump()); }

}  // namespace

TEST_CASE("a deployed lock stops the duplicates the running check-then-insert creates, from the moment every server runs it") {
  // The step at 21 s only marks a phase: requests begun on the old code before 20 s may still
  // insert just after it.
  const auto r = run(scenario({plan("lock", {{{"at_s", 20}, {"deploy", "redis-token-cas-unlock"}}, {{"at_s", 21}, {"job", "stop"}}})}));
  const auto& s = named(r, "lock");
  REQUIRE(s.phases.size() == 3);
  CHECK(s.phases[0].to_s == 20);
  CHECK(s.phases[1].steps == std::vector<std::string>{"deploy redis-token-cas-unlock"});
  CHECK(total(s, "created_in_phase.1") > 0);
  CHECK(total(s, "created_in_phase.3") == 0);
  CHECK(total(s, "duplicates_created") == total(s, "created_in_phase.1") + total(s, "created_in_phase.2"));
  // Nobody cleans: what was created is left.
  CHECK(total(s, "left_after_phase.3") == total(s, "duplicates_created"));
  CHECK(total(s, "duplicate_rows") == total(s, "duplicates_created"));
}

TEST_CASE("the rollout samples the table's duplicates evenly over its plan, agreeing with each phase end it falls on") {
  const auto r = run(scenario({plan("lock", {{{"at_s", 20}, {"deploy", "redis-token-cas-unlock"}}})}, 30));
  const auto& s = named(r, "lock");
  // 31 samples, one every second: the one at 20 s is the first phase's end.
  CHECK(total(s, "left_at_sample.0") == total(s, "left_after_phase.0"));
  CHECK(total(s, "left_at_sample.20") == total(s, "left_after_phase.1"));
  CHECK(total(s, "left_at_sample.30") == total(s, "left_after_phase.2"));
  CHECK(s.counts.count("left_at_sample.31") == 0);
  // Nobody cleans: the duplicates only grow while the old code runs, and stop once the lock is in.
  CHECK(total(s, "left_at_sample.10") > total(s, "left_at_sample.1"));
  CHECK(total(s, "left_at_sample.10") <= total(s, "left_at_sample.20"));
  // The picture's data: a line of 31 points per plan, not two.
  const auto folder = test::unique_temp_path("locksim-rollout");
  locksim::reports::write_report(r, folder.string());
  std::ifstream in(folder / "rollout.dat");
  std::string line;
  int points = 0;
  while (std::getline(in, line)) points += !line.empty() && line[0] != '#';
  std::filesystem::remove_all(folder);
  CHECK(points == 31);
}

TEST_CASE("a rolling deploy leaves old servers inserting without the lock until the last one switches") {
  // app-1 switches at 10 s, app-2 at 30 s: in between, copies of a request that reach app-2
  // still check-then-insert unguarded; deployed at once, nothing is created after 11 s. (The
  // steps at 11 and 31 s only mark phases, a second after each switch.)
  const json at_once = plan("at-once", {{{"at_s", 10}, {"deploy", "redis-token-cas-unlock"}},
                                        {{"at_s", 11}, {"job", "stop"}},
                                        {{"at_s", 31}, {"job", "stop"}}});
  const json rolling = plan("rolling", {{{"at_s", 10}, {"deploy", "redis-token-cas-unlock"}, {"rolling_s", 20}},
                                        {{"at_s", 11}, {"job", "stop"}},
                                        {{"at_s", 31}, {"job", "stop"}}});
  const auto r = run(scenario({at_once, rolling}));
  CHECK(total(named(r, "at-once"), "created_in_phase.3") == 0);
  CHECK(total(named(r, "rolling"), "created_in_phase.3") > 0);
  CHECK(total(named(r, "rolling"), "created_in_phase.4") == 0);
}

TEST_CASE("a rolling deploy with a drain interval creates no duplicate once the last server is back") {
  // Each server is out of the balancer for 5 s before it switches: app-1 at 15 s, app-2 at
  // 35 s; a second after, nothing is created.
  const auto r = run(scenario({plan("drained", {{{"at_s", 10}, {"deploy", "redis-token-cas-unlock"}, {"rolling_s", 15}, {"drain_s", 5}},
                                                {{"at_s", 36}, {"job", "stop"}}})}));
  const auto& s = named(r, "drained");
  CHECK(s.phases[1].steps == std::vector<std::string>{"deploy redis-token-cas-unlock (rolling, each server drained 5 s, 15 s apart)"});
  CHECK(total(s, "created_in_phase.1") > 0);
  CHECK(total(s, "created_in_phase.3") == 0);
  CHECK(total(s, "errors.rejected") == 0);
}

TEST_CASE("the cleanup job keeps the lowest id of each duplicated key and cleans at most keys_per_run keys a run") {
  models::DeploymentConfig config;
  config.clients.clients = 1;
  for (const char* key : {"a", "b", "a", "c", "b", "a", "d", "d"})
    config.database.rows.push_back({"t_account", {{"open_id", std::string(key)}}});
  auto plan = std::make_shared<models::rollout::Plan>();
  plan->duration = std::chrono::seconds(30);
  plan->cleanup = {.interval = std::chrono::seconds(10), .keys_per_run = 2};
  plan->steps = {{.at = std::chrono::seconds(1), .action = models::rollout::Job{true}},
                 {.at = std::chrono::seconds(5), .action = models::rollout::Job{false}},
                 {.at = std::chrono::seconds(15), .action = models::rollout::Job{true}}};
  models::Deployment deployment(test::config(), config, models::rollout::needs(*plan));
  models::strategies::Env env(deployment.services());
  models::rollout::Rollout rollout(env, plan);
  deployment.serve(rollout);
  deployment.start();
  REQUIRE(deployment.run().ok());
  const auto& log = rollout.finish(deployment.database());
  // Phases begin at 0, 1, 5 and 15 s: 3 duplicate rows of a and b go in the first run, d's in
  // the run at 15 s.
  REQUIRE(log.duplicates_at.size() == 5);
  CHECK(log.duplicates_at[0] == 4);
  CHECK(log.duplicates_at[2] == 1);
  CHECK(log.duplicates_at[3] == 1);
  CHECK(log.duplicates_at[4] == 0);
  CHECK(log.cleanup_deleted == 4);
  std::vector<std::int64_t> ids;
  for (const auto& row : deployment.database().committed_rows("t_account"))
    if (row.origin.transaction == 0) ids.push_back(row.row.id);
  CHECK(ids == std::vector<std::int64_t>{1, 2, 4, 7});  // a, b, c, d by their lowest ids
}

TEST_CASE("a bad rollout plan is refused at load with its JSON path and what was expected") {
  const json good = {{"at_s", 1}, {"deploy", "unique-index"}};
  CHECK_THAT(refusal(scenario({plan("p", {{{"at_s", 1}, {"deploy", "unique-index"}, {"job", "start"}}})})),
             Catch::Contains("/strategies/0/rollout/0: expected one of \"deploy\""));
  CHECK_THAT(refusal(scenario({plan("p", {{{"at_s", 5}, {"job", "start"}}, good})})),
             Catch::Contains("/strategies/0/rollout/1/at_s: expected steps in time order"));
  CHECK_THAT(refusal(scenario({plan("p", {{{"at_s", 40}, {"job", "start"}}})})),
             Catch::Contains("/strategies/0/rollout/0/at_s: expected a time before the rollout's end"));
  CHECK_THAT(refusal(scenario({plan("p", {{{"at_s", 1}, {"deploy", "no-such"}}})})),
             Catch::Contains("/strategies/0/rollout/0/deploy: expected a strategy of the account-bind workload"));
  CHECK_THAT(refusal(scenario({plan("p", {{{"at_s", 1}, {"deploy", "redlock"}, {"params", {{"ttl", 1}}}}})})),
             Catch::Contains("/strategies/0/rollout/0/params/ttl: expected a parameter of redlock"));
  CHECK_THAT(refusal(scenario({plan("p", {{{"at_s", 1}, {"sql", "DELETE FROM t_lock WHERE lock_key = 'a'"}}})})),
             Catch::Contains("/strategies/0/rollout/0/sql: expected a statement on t_account"));
  CHECK_THAT(refusal(scenario({plan("p", {{{"at_s", 1}, {"sql", "DELET FROM t_account"}}})})),
             Catch::Contains("/strategies/0/rollout/0/sql: expected a statement the model runs: 1064"));
  CHECK_THAT(refusal(scenario({{{"rollout", {good}}}})), Catch::Contains("/strategies/0: expected \"as\": the plan's name"));
  CHECK_THAT(refusal(scenario({plan("p", {{{"at_s", 1}, {"deploy", "unique-index"}, {"drain_s", 5}}})})),
             Catch::Contains("/strategies/0/rollout/0/drain_s: expected \"rolling_s\" above 0"));
  CHECK_THAT(refusal(scenario({plan("p", {good})}, 2000)),
             Catch::Contains("/rollout/duration_s: expected a duration under half the trial's time budget"));
  json no_base = scenario({plan("p", {good})});
  no_base.erase("rollout");
  CHECK_THAT(refusal(no_base), Catch::Contains("/strategies/0/rollout: expected a scenario \"rollout\""));
}
