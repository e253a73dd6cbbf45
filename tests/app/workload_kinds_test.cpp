// The workload kinds as parts: each runs its own checkers beside those of every workload, and
// its metrics join the registry under its name.

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>

#include "app/metrics.hpp"
#include "app/runner.hpp"
#include "app/scenario.hpp"
#include "app/workload_kind.hpp"

namespace {

// One trial of the catalogue scenario `name`'s first strategy: its counts.
models::checkers::Counts counts_of(const std::string& name, const std::vector<std::string>& overrides = {}) {
  const locksim::Scenario s = locksim::load_scenario(locksim::scenario_path(name), overrides);
  return locksim::run_trial(s, s.strategies.front(), s.seed).counts;
}

bool counts(const models::checkers::Counts& c, const std::string& metric) { return c.count(metric) > 0; }

}  // namespace

TEST_CASE("a workload's own checkers count in its trials alone, beside the checkers of every workload") {
  const auto bind = counts_of("rebind-device");
  CHECK(counts(bind, "lost_updates"));          // account-bind's own, where the operation rebinds
  CHECK(counts(bind, "duplicate_rows"));        // t_account.open_id, the business key it names
  CHECK(counts(bind, "max_concurrent_holders"));  // every workload's, where locks were held
  CHECK_FALSE(counts(bind, "duplicate_executions"));
  CHECK_FALSE(counts(bind, "steps.1.done"));

  const auto batch = counts_of("batch-double-enqueue");
  CHECK(counts(batch, "duplicate_executions"));
  CHECK(counts(batch, "unfinished_runs"));
  CHECK_FALSE(counts(batch, "lost_updates"));
  CHECK_FALSE(counts(batch, "duplicate_rows"));  // the task table has no business key
  CHECK_FALSE(counts(batch, "orphaned_remote_records"));

  const auto sessions = counts_of("three-inserts-one-rollback");
  CHECK(counts(sessions, "steps.1.done"));
  CHECK(counts(sessions, "duplicate_rows"));  // its table's indexed column
  CHECK_FALSE(counts(sessions, "duplicate_executions"));
  CHECK_FALSE(counts(sessions, "lost_updates"));
}

TEST_CASE("an account-bind operation that binds leaves lost_updates uncounted: keeping the first binding is right") {
  CHECK_FALSE(counts(counts_of("rebind-device", {"workload.operation=bind"}), "lost_updates"));
}

TEST_CASE("each workload kind's metrics are in the registry once, after those of every workload") {
  const auto at = [](const std::string& name) {
    const locksim::MetricInfo* info = locksim::metric_info(name);
    REQUIRE(info != nullptr);
    return static_cast<std::size_t>(info - locksim::metrics().data());
  };
  std::size_t last_generic = 0;
  for (const auto* checker : models::checkers::registry())
    for (const auto& m : checker->metrics()) last_generic = std::max(last_generic, at(m.name));
  std::size_t of_kinds = 0;
  for (const locksim::WorkloadKind* kind : locksim::workload_kinds())
    for (const auto& m : kind->metrics()) {
      INFO(kind->name() << ": " << m.name);
      CHECK(at(m.name) > last_generic);
      CHECK(locksim::metrics()[at(m.name)].meaning == m.meaning);
      ++of_kinds;
    }
  CHECK(of_kinds >= 5);  // account-bind's, the rollout's, the batch scheduler's, the sessions'
}

TEST_CASE("a scenario's workload as written names its kind, and only the kinds whose trials have clients give the shrinker "
          "clients to take away") {
  const auto kind_of = [](const nlohmann::json& workload) { return std::string(locksim::workload_kind_of(workload).name()); };
  CHECK(kind_of(nullptr) == "account-bind");  // no "workload": the default kind
  CHECK(kind_of({{"kind", "batch-scheduler"}}) == "batch-scheduler");
  CHECK(kind_of("sessions") == "sessions");   // the short form
  CHECK(kind_of({{"script", "workloads/x.lua"}}) == "script");
  std::map<std::string, bool> with_clients;
  for (const locksim::WorkloadKind* k : locksim::workload_kinds()) with_clients[k->name()] = k->has_clients();
  CHECK(with_clients == std::map<std::string, bool>{{"account-bind", true}, {"batch-scheduler", false}, {"sessions", false}, {"script", true}});
}
