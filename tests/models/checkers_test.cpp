// The checkers as registered parts: what each declares, and the ones counted from hold
// records.

#include <catch2/catch.hpp>

#include <set>

#include "models/checkers/checker.hpp"
#include "support.hpp"

using namespace test;
using models::checkers::Hold;
using models::checkers::LockMonitor;

namespace {

double max_concurrent_holders(const LockMonitor& m, sim::Time end) {
  models::checkers::Trial trial{.end = end, .locks = &m};
  return models::checkers::check_all(trial).values.at("max_concurrent_holders");
}
}  // namespace

TEST_CASE("max_concurrent_holders counts the holders of one lock at the same instant, not of different locks") {
  LockMonitor m;
  const sim::Time end = run_alone([&] {
    Hold a = m.acquired("lock:1", "a", [] { return false; });
    sim::sleep_for(10ms);
    Hold b = m.acquired("lock:1", "b", [] { return false; });
    Hold other = m.acquired("lock:2", "x", [] { return true; });
    sim::sleep_for(10ms);
    Hold c = m.acquired("lock:1", "c", [] { return true; });
    sim::sleep_for(10ms);
  });
  CHECK(max_concurrent_holders(m, end) == 3);
}

TEST_CASE("max_concurrent_holders does not count a hand-over at one instant as two holders") {
  LockMonitor m;
  const sim::Time end = run_alone([&] {
    for (const char* who : {"a", "b", "c"}) {
      Hold h = m.acquired("lock:1", who, [] { return true; });
      sim::sleep_for(10ms);
    }
  });
  CHECK(max_concurrent_holders(m, end) == 1);
}

TEST_CASE("a trial without what a checker reads adds none of its metrics") {
  const auto found = models::checkers::check_all(models::checkers::Trial{});
  CHECK(found.values.count("max_concurrent_holders") == 0);
  CHECK(found.values.count("duplicate_rows") == 0);
  CHECK(found.values.at("unfinished_runs") == 0);  // every trial either finished or did not
}

TEST_CASE("every checker declares its metrics once, each with a unit and a meaning") {
  std::set<std::string> names;
  for (const auto* checker : models::checkers::registry())
    for (const auto& m : checker->metrics()) {
      CHECK(names.insert(m.name).second);
      CHECK_FALSE(m.unit.empty());
      CHECK_FALSE(m.meaning.empty());
      CHECK(m.meaning.find('\n') == std::string::npos);
    }
  CHECK(names.count("max_concurrent_holders") == 1);
}
