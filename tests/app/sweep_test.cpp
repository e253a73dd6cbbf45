// Sweeps: the grid, the saved points, and --resume continuing an interrupted sweep (or one
// stopped by its deadline) to the same results as an uninterrupted one.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support.hpp"
#include "app/runner.hpp"
#include "app/scenario.hpp"
#include "app/sweep.hpp"

namespace {

struct TempFolder {
  TempFolder() : path(test::unique_temp_path("locksim-sweep").string()) {
    std::filesystem::remove_all(path);
  }
  ~TempFolder() { std::filesystem::remove_all(path); }
  std::string path;
};

locksim::SweepOptions options(const std::string& folder) {
  locksim::SweepOptions o;
  o.scenario = "account-bind";
  o.strategies = {"check-then-insert", "unique-index"};
  o.varies = {locksim::parse_vary("clients.timeout_ms=100:700:300")};
  o.trials = 4;
  o.jobs = 2;
  o.folder = folder;
  return o;
}

nlohmann::json saved(const std::string& folder) {
  std::ifstream in(folder + "/points.json");
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("a --vary spans from to to in steps, and a malformed one is refused") {
  CHECK(locksim::parse_vary("clients.count=10:30:10").values() == std::vector<double>{10, 20, 30});
  CHECK(locksim::parse_vary("x=0.5:1:0.25").values() == std::vector<double>{0.5, 0.75, 1});
  CHECK_THROWS_AS(locksim::parse_vary("clients.count=10:30"), locksim::InputError);
  CHECK_THROWS_AS(locksim::parse_vary("clients.count=30:10:1"), locksim::InputError);
  CHECK_THROWS_AS(locksim::parse_vary("=1:2:1"), locksim::InputError);
}

TEST_CASE("a sweep measures every grid point for every strategy, in grid order") {
  TempFolder folder;
  auto o = options(folder.path);
  o.varies.push_back(locksim::parse_vary("clients.count=20:40:20"));
  const auto r = locksim::run_sweep(o);
  REQUIRE(r.points.size() == 6);
  CHECK(r.points[0].at == std::vector<double>{100, 20});
  CHECK(r.points[1].at == std::vector<double>{100, 40});
  CHECK(r.points[5].at == std::vector<double>{700, 40});
  for (const auto& p : r.points) {
    REQUIRE(p.values.size() == 2);
    CHECK(p.values[1].strategy == "unique-index");
    CHECK(p.values[1].value == 0);  // the index never lets a duplicate in
    CHECK(p.values[0].low <= p.values[0].value);
    CHECK(p.values[0].value <= p.values[0].high);
  }
  CHECK(r.points[0].values[0].value > 0);  // short timeouts duplicate
}

TEST_CASE("resuming an interrupted sweep gives the results of an uninterrupted one") {
  TempFolder whole, interrupted;
  const auto full = locksim::run_sweep(options(whole.path));
  // Interrupted after its first point: points.json holds only that one.
  auto o = options(interrupted.path);
  locksim::run_sweep(o);
  auto doc = saved(interrupted.path);
  doc["points"] = nlohmann::json::array({doc["points"][0]});
  std::ofstream(interrupted.path + "/points.json") << doc.dump();
  o.resume = true;
  std::size_t reported = 0;
  const auto resumed = locksim::run_sweep(o, [&](std::size_t done, std::size_t) { reported = done; });
  CHECK(reported == 3);
  CHECK(saved(interrupted.path) == saved(whole.path));
  REQUIRE(resumed.points.size() == full.points.size());
  for (std::size_t i = 0; i < full.points.size(); ++i) {
    CHECK(resumed.points[i].at == full.points[i].at);
    for (std::size_t k = 0; k < full.points[i].values.size(); ++k)
      CHECK(resumed.points[i].values[k].value == full.points[i].values[k].value);
  }
}

TEST_CASE("a resumed sweep refuses the points of a different sweep") {
  TempFolder folder;
  auto o = options(folder.path);
  locksim::run_sweep(o);
  o.resume = true;
  o.trials = 5;
  CHECK_THROWS_AS(locksim::run_sweep(o), locksim::InputError);
}

TEST_CASE("a sweep stopped by its deadline keeps the points it finished, reports the others as not run, and --resume "
          "completes it") {
  TempFolder whole, stopped;
  locksim::run_sweep(options(whole.path));
  auto o = options(stopped.path);
  // The first point's 8 trials (4 per strategy), then one of the second point's: the second
  // point is cut short, so it is not kept, and the third is not begun.
  o.stop = locksim::stop_after_trials(9);
  const auto r = locksim::run_sweep(o);
  CHECK(r.stopped == "time");
  REQUIRE(r.points.size() == 1);
  CHECK(r.points[0].at == std::vector<double>{100});
  CHECK(r.not_run == std::vector<std::vector<double>>{{400}, {700}});
  CHECK(saved(stopped.path)["points"].size() == 1);
  const std::string table = locksim::reports::sweep_table(r);
  CHECK(table.find("stopped after") != std::string::npos);
  CHECK(table.find("not run") != std::string::npos);
  o.stop = {};
  o.resume = true;
  const auto resumed = locksim::run_sweep(o);
  CHECK(resumed.stopped.empty());
  CHECK(resumed.not_run.empty());
  CHECK(saved(stopped.path) == saved(whole.path));
}
