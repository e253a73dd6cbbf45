// The whole population's traffic: operations arrive at a rate for a duration or a count, each
// on a fresh key, a uniform or a Zipf-chosen one; a double click submits the same request
// twice. Written wrong, it is one line naming the key.

#include <catch2/catch.hpp>

#include <map>
#include <nlohmann/json.hpp>

#include "scenario_files.hpp"
#include "app/runner.hpp"
#include "app/trial.hpp"
#include "app/scenario.hpp"

namespace {

using nlohmann::json;

// One app server with plenty of workers, a quick database, no retries: what arrives is served.
json with_traffic(const json& traffic, const std::string& strategy = "check-then-insert") {
  return {{"name", "x"},
          {"topology", {{"app_servers", 1}, {"workers", 64}, {"app_work", {{"fixed_ms", 5}}}}},
          {"database", {{"read", {{"fixed_ms", 1}}}, {"write", {{"fixed_ms", 1}}}}},
          {"clients", {{"traffic", traffic}, {"timeout_ms", 10000}, {"max_attempts", 1}}},
          {"strategies", {strategy}},
          {"trials", 2}};
}

locksim::reports::StrategyResult run(const json& doc) {
  test::TempScenario file(doc.dump());
  const auto r = locksim::run_scenario(locksim::load_scenario(file.path));
  REQUIRE(r.strategies.size() == 1);
  return r.strategies.front();
}

double total(const locksim::reports::StrategyResult& r, const std::string& metric) {
  auto it = r.counts.find(metric);
  return it == r.counts.end() ? 0 : it->second.total;
}

}  // namespace

TEST_CASE("traffic at a rate brings rate x duration operations: exactly when constant, about as much when Poisson") {
  const auto constant = run(with_traffic({{"kind", "constant"}, {"rate_per_s", 100}, {"duration_s", 2}}));
  CHECK(constant.operations == 2 * 200);
  const auto poisson = run(with_traffic({{"kind", "poisson"}, {"rate_per_s", 100}, {"duration_s", 2}}));
  CHECK(static_cast<double>(poisson.operations) == Approx(2 * 200).epsilon(0.15));
  const auto counted = run(with_traffic({{"rate_per_s", 1000}, {"operations", 37}}));
  CHECK(counted.operations == 2 * 37);
}

TEST_CASE("fresh keys never collide but a double click does, and a hot key under Zipf collects the duplicates") {
  const json fresh = {{"kind", "constant"}, {"rate_per_s", 5000}, {"operations", 200}};  // ~35 at once
  CHECK(total(run(with_traffic(fresh)), "duplicate_rows") == 0);
  json clicked = fresh;
  clicked["double_submit"] = {{"probability", 1}, {"delay", {{"fixed_ms", 0}}}};
  const auto twice = run(with_traffic(clicked));
  CHECK(twice.operations == 2 * 400);
  CHECK(total(twice, "duplicate_rows") > 0);
  json rebinding = with_traffic(clicked);
  rebinding["workload"] = {{"kind", "account-bind"}, {"operation", "rebind"}};
  const auto rebound = run(rebinding);
  CHECK(rebound.counts.count("lost_updates") == 1);
  CHECK(total(rebound, "lost_updates") == 0);  // a double click's copy writes the same value
  json zipf = fresh;
  zipf["keys"] = {{"kind", "zipf"}, {"count", 1000}, {"exponent", 4}};
  const auto hot = run(with_traffic(zipf));
  CHECK(total(hot, "duplicate_rows") > 3 * total(hot, "duplicated_keys"));  // a few keys, many rows each
  json spread = fresh;
  spread["keys"] = {{"kind", "uniform"}, {"count", 1000}};
  CHECK(total(run(with_traffic(spread)), "duplicate_rows") < total(hot, "duplicate_rows"));
  json uniform = fresh;
  uniform["keys"] = {{"kind", "uniform"}, {"count", 1}};
  CHECK(total(run(with_traffic(uniform)), "duplicated_keys") == 2);  // one key, in each of the two trials
}

TEST_CASE("listed traffic brings one operation at each time: together they collide, spaced apart they do not") {
  const json one_key = {{"kind", "uniform"}, {"count", 1}};
  const auto together = run(with_traffic({{"kind", "listed"}, {"times_ms", {0, 0, 0}}, {"keys", one_key}}));
  CHECK(together.operations == 2 * 3);
  CHECK(total(together, "duplicate_rows") > 0);
  const auto apart = run(with_traffic({{"kind", "listed"}, {"times_ms", {0, 500, 1000}}, {"start_ms", 100}, {"keys", one_key}}));
  CHECK(apart.operations == 2 * 3);
  CHECK(total(apart, "duplicate_rows") == 0);
}

TEST_CASE("traffic written wrong is one line naming the key") {
  const auto refused = [](const json& clients) {
    return test::refusal(json{{"name", "x"}, {"clients", clients}}.dump());
  };
  CHECK_THAT(refused({{"traffic", {{"rate_per_s", 10}, {"operations", 5}}}, {"count", 3}}),
             Catch::Contains("/clients/count: expected either traffic"));
  CHECK_THAT(refused({{"traffic", {{"operations", 5}}}}), Catch::Contains("/clients/traffic: expected a \"rate_per_s\""));
  CHECK_THAT(refused({{"traffic", {{"rate_per_s", 10}}}}), Catch::Contains("either \"duration_s\""));
  CHECK_THAT(refused({{"traffic", {{"rate_per_s", 1e6}, {"duration_s", 10}}}}), Catch::Contains("at most 1000000 operations a trial"));
  CHECK_THAT(refused({{"traffic", {{"rate_per_s", 10}, {"operations", 5}, {"keys", {{"kind", "zipf"}}}}}}),
             Catch::Contains("/clients/traffic/keys: expected a \"count\""));
  CHECK_THAT(refused({{"traffic", {{"kind", "listed"}, {"times_ms", {5, 1}}}}}), Catch::Contains("/clients/traffic/times_ms/1: expected times"));
  CHECK_THAT(refused({{"traffic", {{"kind", "listed"}, {"times_ms", {0}}, {"rate_per_s", 3}}}}),
             Catch::Contains("/clients/traffic/rate_per_s: expected no rate"));
  CHECK_THAT(refused({{"traffic", {{"kind", "listed"}}}}), Catch::Contains("/clients/traffic/times_ms: expected a list"));
  CHECK_THAT(refused({{"traffic", {{"rate_per_s", 1}, {"operations", 1}, {"times_ms", {0}}}}}),
             Catch::Contains("times_ms only with"));
  CHECK_THAT(refused({{"traffic", {{"rate_per_s", 10}, {"operations", 5}, {"double_submit", {{"probability", 2}}}}}}),
             Catch::Contains("/clients/traffic/double_submit/probability"));
  for (const json& only : {json{{3, 1}}, json{{0, 4}, {2, 9}}, json::array(), json{{0, -1}}, json{{0}}, json{5}})
    CHECK_THAT(refused({{"traffic", {{"rate_per_s", 10}, {"operations", 5}, {"only", only}}}}),
               Catch::Contains("/clients/traffic/only") && Catch::Contains("ranges of operation numbers, ascending and apart"));
}

TEST_CASE("traffic's only sends the operations it numbers, and leaves the arrivals of the others as they were drawn") {
  const json all = {{"kind", "poisson"}, {"rate_per_s", 200}, {"operations", 50}, {"keys", {{"kind", "uniform"}, {"count", 5}}},
                    {"double_submit", {{"probability", 0.2}}}};
  const auto trial = [](const json& traffic) {
    test::TempScenario file(with_traffic(traffic).dump());
    const auto s = locksim::load_scenario(file.path);
    return locksim::run_trial(s, s.strategies.front(), s.seed, locksim::TraceKept::hash);
  };
  const auto every = trial(all);
  json covering = all;
  covering["only"] = {{0, 1000}};
  CHECK(trial(covering).trace_hash == every.trace_hash);  // the same run: nothing drawn differently
  json some = all;
  some["only"] = {{3, 5}, {40, 41}, {1000, 1100}};  // numbers past the last arrival send nothing
  CHECK(trial(some).operations == 5);
  CHECK(every.operations > 50);  // the double clicks are operations of their own
}
