// Where time goes, over a run: per strategy the mean time per successful operation in each
// part, and the failed operations counted and timed apart from the successful ones.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "app/metrics.hpp"
#include "app/runner.hpp"
#include "app/scenario.hpp"

namespace {

locksim::reports::StrategyResult run_account_bind(const std::string& strategy, std::vector<std::string> sets, int trials) {
  sets.push_back("strategies=[\"" + strategy + "\"]");
  sets.push_back("expect={}");
  auto s = locksim::load_scenario(locksim::scenario_path("account-bind"), sets);
  s.trials = trials;
  return locksim::run_scenario(s).strategies.at(0);
}

double figure(const locksim::reports::StrategyResult& st, const std::string& name) {
  INFO(name);
  REQUIRE(st.figures.count(name) == 1);
  return st.figures.at(name);
}

}  // namespace

TEST_CASE("failed operations are counted apart and left out of the success percentiles") {
  // Retries of an operation whose first attempt inserted meet the unique index: 1062, failed.
  const auto st = run_account_bind("unique-index", {}, 5);
  double errors = 0;
  for (const auto& [name, m] : st.counts)
    if (name.starts_with("errors.")) errors += m.total;
  const double failed = st.counts.at("failed_operations").total;
  REQUIRE(failed > 0);
  CHECK(failed == errors);
  CHECK(st.failed_latency.count() == static_cast<std::uint64_t>(failed));
  CHECK(st.latency.count() + st.failed_latency.count() == st.operations);
  // A failed operation waited out at least one 300 ms attempt before its 1062.
  CHECK(figure(st, "failed_latency_ms.p50") > 300);
  CHECK(figure(st, "failed_latency_ms.p99") >= figure(st, "failed_latency_ms.p50"));
  CHECK(figure(st, "latency_ms.max") == st.latency.max_ms());
}

TEST_CASE("a run without failures has no failed latency figures, and its failed_operations is 0") {
  const auto st = run_account_bind("unique-index", {"topology.workers=100"}, 2);
  CHECK(st.counts.at("failed_operations").total == 0);
  CHECK(st.failed_latency.count() == 0);
  CHECK(st.figures.count("failed_latency_ms.p50") == 0);
  CHECK(st.latency.count() == st.operations);
}

TEST_CASE("saturated workers show as accept-queue time, and retries as timed-out and backoff time") {
  const auto busy = run_account_bind("check-then-insert", {}, 5);
  const auto ample = run_account_bind("check-then-insert", {"topology.workers=100"}, 5);
  CHECK(figure(busy, "time_ms.queue") > 10 * figure(ample, "time_ms.queue"));
  CHECK(figure(busy, "time_ms.timed_out") > 0);
  CHECK(figure(busy, "time_ms.backoff") > 0);
  CHECK(figure(ample, "time_ms.timed_out") == 0);
  CHECK(figure(ample, "time_ms.lock_service") == 0);  // no locks in this strategy
  for (const auto* st : {&busy, &ample}) {
    double sum = 0;
    for (const auto& part : locksim::kTimeParts) {
      const double v = figure(*st, std::string("time_ms.") + part.name);
      CHECK(v >= 0);
      sum += v;
    }
    // The parts sum to the mean latency of a successful operation, which lies within its range.
    CHECK(sum > 0);
    CHECK(sum <= figure(*st, "latency_ms.max"));
  }
}

TEST_CASE("a lock strategy's acquire loops show as lock-service time, and row-lock waits as db_lock time") {
  const auto redis = run_account_bind("redis-token-cas-unlock", {}, 3);
  CHECK(figure(redis, "time_ms.lock_service") > 0);
  const auto for_update = run_account_bind("select-for-update", {}, 3);
  CHECK(figure(for_update, "time_ms.db_lock") > 0);
  CHECK(figure(for_update, "time_ms.lock_service") == 0);
}

TEST_CASE("results.json carries the time figures, the failed operations and their latency histogram") {
  auto s = locksim::load_scenario(locksim::scenario_path("account-bind"), {"strategies=[\"unique-index\"]", "expect={}"});
  s.trials = 2;
  const auto r = locksim::run_scenario(s);
  const auto doc = nlohmann::json::parse(locksim::reports::to_json(r));
  const auto& st = doc["strategies"][0];
  for (const auto& part : locksim::kTimeParts)
    CHECK(st["metrics"][std::string("time_ms.") + part.name].get<double>() == r.strategies[0].figures.at(std::string("time_ms.") + part.name));
  CHECK(st["metrics"]["failed_operations"]["total"] == r.strategies[0].counts.at("failed_operations").total);
  std::uint64_t failed = 0;
  for (const auto& bucket : st["failed_latency_histogram"]["buckets_ms_count"]) failed += bucket[1].get<std::uint64_t>();
  CHECK(failed == r.strategies[0].failed_latency.count());
}
