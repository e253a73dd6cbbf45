// dfs branched from saved runs (app/search/dfs.cpp, sim/restorable.hpp): each run made from
// its parent's run saved at the choice where it deviates is the run the search would make from
// time zero. The search finds, counts and orders the same runs either way.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <memory>
#include <string>
#include <vector>

#include "app/search/explore.hpp"
#include "app/search/runs.hpp"
#include "sim/arena.hpp"

namespace {

struct Searched {
  locksim::Finding finding;
  std::vector<std::string> runs;  // each run's metrics, as JSON, in the order they were counted
};

Searched search(const std::string& scenario, const std::string& strategy, int bound, bool branching,
                const std::vector<std::string>& sets = {}) {
  locksim::ExploreOptions o;
  o.scenario = scenario;
  o.strategy = strategy;
  o.sets = sets;
  o.mode = "dfs";
  o.bound = bound;
  o.count_all = true;
  o.budget = 3000;
  o.time_s = 600;
  o.jobs = 1;
  o.branching = branching;
  o.count_classes = true;  // each run's footprints too
  Searched s;
  o.each_run = [&](const models::checkers::Counts& counts) { s.runs.push_back(nlohmann::json(counts).dump()); };
  s.finding = locksim::explore(o);
  return s;
}

}  // namespace

TEST_CASE("dfs branched from saved runs counts the same runs, in the same order, as dfs running each from time zero", "[arena]") {
  REQUIRE(sim::Arena::supported());
  struct Case {
    std::string scenario, strategy;
    int bound;
  };
  // Ties, latencies, placed pauses, database sessions and their deadlocks, a crash and its
  // reaper, ZooKeeper sessions, a Lua strategy and a Lua workload.
  const std::vector<Case> cases = {{"two-clients-pause", "fencing-token", 2},
                                   {"pause-anywhere", "redis-token-cas-unlock", 1},
                                   {"delete-commit-unique-key", "sessions", 2},
                                   {"batch-crash-after-mark", "cas-mark-then-publish+reaper", 1},
                                   {"zk-session-expiry-during-pause", "zookeeper-recipe", 1}};
  for (const Case& c : cases) {
    CAPTURE(c.scenario, c.strategy);
    const Searched branched = search(c.scenario, c.strategy, c.bound, true);
    const Searched plain = search(c.scenario, c.strategy, c.bound, false);
    CHECK(branched.finding.branched);
    CHECK_FALSE(plain.finding.branched);
    CHECK(branched.finding.runs > 5);
    CHECK(branched.finding.runs == plain.finding.runs);
    CHECK(branched.finding.events == plain.finding.events);
    CHECK(branched.finding.firing_runs == plain.finding.firing_runs);
    CHECK(branched.finding.equivalent_skipped == plain.finding.equivalent_skipped);
    CHECK(branched.finding.exhausted == plain.finding.exhausted);
    CHECK(branched.runs == plain.runs);
    CHECK(branched.finding.classes == plain.finding.classes);
  }
}

// Every scenario of the catalogue, with each of its strategies: a short dfs whose every branched
// run is checked against the same run from time zero (ExploreOptions::check_branches: choices,
// events, findings and trace hash), with the scenario itself read-only while the search runs:
// a trial that wrote to what it was given (a reference count moved on a statement it shares)
// would fault here, and could not be restored in place.
TEST_CASE("every catalogue scenario's runs, branched from saved runs, end as the same runs from time zero, writing nothing shared", "[arena]") {
  REQUIRE(sim::Arena::supported());
  int searched = 0;
  // One arena for every scenario, kept for good: loading a scenario also fills registries that
  // outlive it (its metrics), which stay in the arena they were allocated in.
  static sim::Arena& frozen = *new sim::Arena;
  for (const std::string& path : locksim::catalogue()) {
    std::unique_ptr<locksim::Scenario> s;
    {
      const sim::UseArena use(&frozen);
      s = std::make_unique<locksim::Scenario>(locksim::load_scenario(path));
    }
    for (const locksim::StrategyChoice& choice : s->strategies) {
      CAPTURE(path, choice.shown());
      locksim::ExploreOptions o;
      o.scenario = s->name;
      o.strategy = choice.shown();
      o.mode = "dfs";
      o.bound = 1;
      o.count_all = true;
      o.budget = 8;
      o.time_s = 600;
      o.jobs = 1;
      o.check_branches = true;
      frozen.protect(true);
      locksim::Finding f;
      try {
        f = locksim::search::explore_dfs(o, *s, choice, locksim::search::Clock::now());
      } catch (...) {
        frozen.protect(false);
        throw;
      }
      frozen.protect(false);
      CHECK(f.branched);
      ++searched;
    }
    s.reset();
  }
  CHECK(searched > 50);
}
