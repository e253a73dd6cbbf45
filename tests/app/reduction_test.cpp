// dfs's reduction (sim/footprints.hpp, app/search/explore.cpp): skipping the reorderings that only
// swap independent steps changes how many schedules run, never what the search can find. Each
// case runs the plain and the reduced search over the whole space within the bound and compares
// the sets of outcomes (every metric of a run) they reached, and the sets of classes of
// equivalent runs (sim::Footprints::trace_class): the reduced search leaves none out.

#include <catch2/catch.hpp>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "app/search/explore.hpp"

namespace {
struct Searched {
  locksim::Finding finding;
  std::set<std::string> outcomes;  // each run's metrics, as JSON
};

Searched search(const std::string& scenario, const std::string& strategy, int bound, bool reduction) {
  locksim::ExploreOptions o;
  o.scenario = scenario;
  o.strategy = strategy;
  o.mode = "dfs";
  o.bound = bound;
  o.count_all = true;
  o.budget = 200'000;
  o.time_s = 600;
  o.jobs = 1;
  o.reduction = reduction;
  o.count_classes = true;
  Searched s;
  o.each_run = [&](const models::checkers::Counts& counts) { s.outcomes.insert(nlohmann::json(counts).dump()); };
  s.finding = locksim::explore(o);
  return s;
}
}  // namespace

// LOCKSIM_REDUCTION_CASES="scenario,strategy,bound;..." runs other cases instead (the whole
// catalogue takes minutes).
TEST_CASE("the reduced dfs search reaches every outcome the plain one reaches, in fewer schedules") {
  const char* env = std::getenv("LOCKSIM_REDUCTION_CASES");
  struct Case {
    std::string scenario, strategy;
    int bound;
    bool every_class = true;  // false: a known gap (the test case below)
  };
  std::vector<Case> cases = {{"two-clients-pause", "redis-set-nx-ex-drop", 2},
                             {"two-clients-pause", "unique-index", 2},
                             {"pause-anywhere", "redis-token-cas-unlock", 2},
                             {"select-for-update-deadlock", "select-for-update", 2},
                             {"batch-double-enqueue", "mark-then-publish", 2},
                             {"batch-crash-after-mark", "cas-mark-then-publish+reaper", 2, false},
                             {"gc-pause-longer-than-lease", "redis-set-nx-ex-drop", 2},
                             {"zk-session-expiry-during-pause", "zookeeper-recipe", 2},
                             {"delete-commit-unique-key", "sessions", 2},
                             {"pause-anywhere", "fencing-token", 2}};
  if (env != nullptr) {
    cases.clear();
    std::string all = env;
    for (std::size_t at = 0; at < all.size();) {
      const std::size_t end = std::min(all.find(';', at), all.size());
      const std::string one = all.substr(at, end - at);
      const auto a = one.find(','), b = one.rfind(',');
      cases.push_back({one.substr(0, a), one.substr(a + 1, b - a - 1), std::stoi(one.substr(b + 1))});
      at = end + 1;
    }
  }
  for (const Case& c : cases) {
    CAPTURE(c.scenario, c.strategy, c.bound);
    const Searched plain = search(c.scenario, c.strategy, c.bound, false);
    const Searched reduced = search(c.scenario, c.strategy, c.bound, true);
    REQUIRE(plain.finding.exhausted);
    REQUIRE(reduced.finding.exhausted);
    CHECK(reduced.finding.reduced);
    CHECK(reduced.finding.runs + reduced.finding.equivalent_skipped <= plain.finding.runs);
    CHECK(reduced.finding.found == plain.finding.found);
    CHECK(reduced.outcomes == plain.outcomes);
    CHECK(reduced.finding.classes_counted);
    if (c.every_class)
      CHECK(reduced.finding.classes == plain.finding.classes);  // every class of equivalent runs, each by one run at least
    else  // a reduced run is a run of the plain search
      CHECK(std::includes(plain.finding.classes.begin(), plain.finding.classes.end(), reduced.finding.classes.begin(),
                          reduced.finding.classes.end()));
    WARN(c.scenario << " " << c.strategy << ": " << plain.finding.runs << " -> " << reduced.finding.runs << " runs, "
                    << plain.finding.classes.size() << " classes, " << plain.outcomes.size() << " outcomes");
  }
}

// A known gap of the reduction under a bound (docs/commands.md, the dfs reduction): here it skips
// a reordering at the first tie as equivalent to the default run, rightly, but a run with one
// more choice below the skipped one (0:4,1:6) has no equivalent within bound 2 below the default
// run, and 4 of the plain search's 238 classes go unexplored. The outcomes agree (one outcome);
// a finding could hide in such a class. Expected to fail until the reduction adds the backtrack
// points a bound needs (Coons, Musuvathi and McKinley, OOPSLA 2013); it passes then, and fails.
TEST_CASE("the reduced dfs search reaches every class of equivalent runs on batch-crash-after-mark at bound 2", "[!shouldfail]") {
  const Searched plain = search("batch-crash-after-mark", "cas-mark-then-publish+reaper", 2, false);
  const Searched reduced = search("batch-crash-after-mark", "cas-mark-then-publish+reaper", 2, true);
  REQUIRE(plain.finding.exhausted);
  REQUIRE(reduced.finding.exhausted);
  CHECK(reduced.finding.classes == plain.finding.classes);
}
