// Rates as a design review reads them: a count per million operations with its interval,
// beside the share of trials; `expect` and `sweep --metric` read either; a rare event never
// prints as 0%; and a scenario whose trials all run alike says so instead of giving an
// interval that means nothing.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "scenario_files.hpp"
#include "app/metrics.hpp"
#include "app/runner.hpp"
#include "app/scenario.hpp"
#include "app/sweep.hpp"
#include "reports/results.hpp"

namespace {

using nlohmann::json;

// account-bind's saturated servers: queued requests time out and their retries run at once.
json account_bind_with(json expect, int trials = 4) {
  return {{"name", "x"},
          {"topology", {{"app_servers", 2}, {"workers", 4}, {"app_work", {{"lognormal_ms", {{"median", 30}, {"sigma", 0.6}}}}}}},
          {"clients", {{"count", 75}, {"keys", 0}, {"timeout_ms", 300}, {"max_attempts", 3}, {"arrival", {{"kind", "at_start"}, {"spread_ms", 400}}}}},
          {"database", {{"read", {{"lognormal_ms", {{"median", 15}, {"sigma", 0.6}}}}}, {"write", {{"lognormal_ms", {{"median", 15}, {"sigma", 0.6}}}}}}},
          {"strategies", {"check-then-insert", "unique-index"}},
          {"trials", trials},
          {"expect", std::move(expect)}};
}

}  // namespace

TEST_CASE("a count per million operations has the exact Poisson interval: none in a million is at most 3.69 per million") {
  const auto none = locksim::reports::per_million(0, 1'000'000);
  CHECK(none.value == 0);
  CHECK(none.low == 0);
  CHECK(none.high == Approx(3.689).epsilon(1e-3));
  const auto one = locksim::reports::per_million(1, 250);  // 1 in 250 operations: 4000 per million
  CHECK(one.value == Approx(4000));
  CHECK(one.low == Approx(0.0253 / 250 * 1e6).epsilon(1e-2));
  CHECK(one.high == Approx(5.572 / 250 * 1e6).epsilon(1e-3));
}

TEST_CASE("a run gives each count its rate per million operations, and the table the operations and the duplicates' rate") {
  test::TempScenario file(account_bind_with(json::object()).dump());
  const auto r = locksim::run_scenario(locksim::load_scenario(file.path));
  const auto& check = r.strategies.at(0);
  const auto& dups = check.counts.at("duplicate_rows");
  REQUIRE(dups.per_million);
  CHECK(dups.per_million->value == Approx(dups.total / static_cast<double>(check.operations) * 1e6));
  CHECK(dups.per_million->low < dups.per_million->value);
  CHECK(dups.per_million->high > dups.per_million->value);
  CHECK_FALSE(check.counts.at("overlap_ms").per_million);  // a duration is not a count of events
  const std::string table = locksim::reports::table(r);
  CHECK_THAT(table, Catch::Contains("per M ops [95%]"));
  CHECK_THAT(table, Catch::Contains(std::to_string(check.operations)));
}

TEST_CASE("expect and sweep read a count's per_million, total and share forms, a form is over the run, not in every trial") {
  CHECK(locksim::metric_form("duplicate_rows.per_million").base == "duplicate_rows");
  CHECK(locksim::metric_form("errors.1062.share").form == "share");
  CHECK(locksim::metric_form("latency_ms.p99.9").form.empty());
  CHECK_FALSE(locksim::is_metric("latency_ms.p99.per_million"));
  CHECK_FALSE(locksim::is_metric("overlap_ms.per_million"));
  test::TempScenario file(account_bind_with({{"check-then-insert",
                                              {{"duplicate_rows.per_million", "> 1000"},
                                               {"duplicate_rows.share", "> 0.5"},
                                               {"duplicate_rows.total", "> 0"}}},
                                             {"unique-index", {{"duplicate_rows.per_million", "= 0"}, {"errors.1205.per_million", "= 0"}}}})
                              .dump());
  const auto r = locksim::run_scenario(locksim::load_scenario(file.path));
  REQUIRE(r.expectations.size() == 5);
  for (const auto& e : r.expectations) {
    INFO(e.text << " measured " << e.measured);
    CHECK(e.holds);
  }
  CHECK_THAT(test::refusal(account_bind_with({{"check-then-insert", {{"duplicate_rows.per_million", "> 0 in every trial"}}}}).dump()),
             Catch::Contains("a comparison over the run"));
  CHECK_THAT(test::refusal(account_bind_with({{"check-then-insert", {{"overlap_ms.per_million", "> 0"}}}}).dump()),
             Catch::Contains("a metric name"));
}

TEST_CASE("a count per injected fault divides by the listed faults whose time came and the GC pauses long enough to count") {
  CHECK(locksim::metric_form("duplicate_rows.per_fault").form == "per_fault");
  CHECK_FALSE(locksim::is_metric("injected_faults.per_fault"));
  json doc = account_bind_with({{"check-then-insert", {{"duplicate_rows.per_fault", "> 0"}}}});
  // One pause in each trial; the second's time never comes (the trial is over long before).
  doc["faults"]["pauses"] = {{{"node", "app-1"}, {"at_ms", 10}, {"length_ms", 50}}, {{"node", "app-1"}, {"at_ms", 1e9}, {"length_ms", 5}}};
  test::TempScenario listed(doc.dump());
  const auto r = locksim::run_scenario(locksim::load_scenario(listed.path));
  const auto& check = r.strategies.at(0);
  CHECK(check.counts.at("injected_faults").total == static_cast<double>(check.trials));
  const auto& dups = check.counts.at("duplicate_rows");
  REQUIRE(dups.per_fault);
  CHECK(dups.per_fault->value == Approx(dups.total / static_cast<double>(check.trials)));
  CHECK(r.expectations.at(0).holds);

  // GC pauses of 10 ms every 100 ms: each counts, unless count_over_ms asks for longer ones.
  doc["faults"] = {{"gc_pauses", {{"interval", {{"fixed_ms", 100}}}, {"length", {{"fixed_ms", 10}}}}}};
  doc.erase("expect");
  test::TempScenario every(doc.dump());
  const auto counted = locksim::run_scenario(locksim::load_scenario(every.path));
  CHECK(counted.strategies.at(0).counts.at("injected_faults").total > 0);
  doc["faults"]["gc_pauses"]["count_over_ms"] = 20;
  test::TempScenario longer(doc.dump());
  const auto none = locksim::run_scenario(locksim::load_scenario(longer.path));
  CHECK(none.strategies.at(0).counts.at("injected_faults").total == 0);
  CHECK_FALSE(none.strategies.at(0).counts.at("duplicate_rows").per_fault);  // no fault: no rate per fault
}

TEST_CASE("a finding in one trial of 250 prints as 0.4% of trials, never 0%") {
  locksim::reports::RunResults r;
  r.trials = 250;
  locksim::reports::StrategyResult s;
  s.name = "rare";
  s.trials = 250;
  s.operations = 250'000;
  locksim::reports::Metric m;
  m.total = 1;
  m.fired = 1;
  m.share = locksim::reports::wilson(1, 250);
  m.per_million = locksim::reports::per_million(1, s.operations);
  s.counts["duplicate_rows"] = m;
  r.strategies.push_back(s);
  const std::string table = locksim::reports::table(r);
  CHECK_THAT(table, Catch::Contains("0.4% [0.071-2]"));
  CHECK_THAT(table, Catch::Contains("4 [0.101-22.3]"));
}

TEST_CASE("a scenario whose trials all run alike says so, and gives no interval, one with randomness does not") {
  const auto alike = locksim::run_scenario(locksim::load_scenario(locksim::scenario_path("upsert-affected-rows"), {"trials=5"}));
  REQUIRE(alike.strategies.size() == 1);
  CHECK(alike.strategies.front().one_outcome);
  CHECK_THAT(locksim::reports::table(alike), Catch::Contains("every trial ran alike (1 distinct outcome in 5 trials"));
  test::TempScenario file(account_bind_with(json::object()).dump());
  const auto varied = locksim::run_scenario(locksim::load_scenario(file.path));
  CHECK_FALSE(varied.strategies.front().one_outcome);
  CHECK_THAT(locksim::reports::table(varied), !Catch::Contains("ran alike"));
}
