// Sweeps: the grid, the saved points, and --resume continuing an interrupted sweep (or one
// stopped by its deadline) to the same results as an uninterrupted one; an interrupted sweep's
// points stay apart from the last finished sweep's report.

#include <catch2/catch.hpp>

#include <cmath>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support.hpp"
#include "app/runner.hpp"
#include "app/scenario.hpp"
#include "app/sweep.hpp"

namespace {

// The sweep folder of a scenario folder in a temporary root, as reports/out/<scenario>/sweep.
struct TempFolder {
  TempFolder() : root(test::unique_temp_path("locksim-sweep").string()), path(root + "/account-bind/sweep") {
    std::filesystem::remove_all(root);
  }
  ~TempFolder() { std::filesystem::remove_all(root); }
  std::string root, path;
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

// The points of the sweep in progress.
nlohmann::json saved(const std::string& folder) {
  std::ifstream in(folder + ".partial/points.json");
  return nlohmann::json::parse(in);
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("a --vary spans from to to in steps, and a malformed one is refused") {
  CHECK(locksim::parse_vary("clients.count=10:30:10").values() == std::vector<double>{10, 20, 30});
  CHECK(locksim::parse_vary("x=0.5:1:0.25").values() == std::vector<double>{0.5, 0.75, 1});
  CHECK_THROWS_AS(locksim::parse_vary("clients.count=10:30"), locksim::InputError);
  CHECK_THROWS_AS(locksim::parse_vary("clients.count=30:10:1"), locksim::InputError);
  CHECK_THROWS_AS(locksim::parse_vary("=1:2:1"), locksim::InputError);
}

TEST_CASE("a --vary lists its points, or spaces them on a log scale, and a malformed one is refused") {
  CHECK(locksim::parse_vary("redlock.ttl_ms=1000,2000,5000").values() == std::vector<double>{1000, 2000, 5000});
  const auto log = locksim::parse_vary("redlock.ttl_ms=1000:30000:log6").values();
  REQUIRE(log.size() == 6);
  CHECK(log.front() == 1000);
  CHECK(log.back() == 30000);
  for (std::size_t i = 1; i < log.size(); ++i) CHECK(log[i] / log[i - 1] == Approx(std::pow(30.0, 0.2)).epsilon(1e-6));
  for (const char* bad : {"x=1,,2", "x=1,2,", "x=a,b", "x=0:10:log5", "x=10:1:log3", "x=1:10:log1", "x=1:10:log2.5", "x=1:10:logx"})
    CHECK_THROWS_WITH(locksim::parse_vary(bad), Catch::Contains("path=from:to:logN"));
}

TEST_CASE("sweeps of different grids or metrics write to folders of their own") {
  const auto a = locksim::sweep_folder_name({locksim::parse_vary("redlock.ttl_ms=1000:30000:log6")}, "duplicate_rows");
  const auto b = locksim::sweep_folder_name({locksim::parse_vary("redlock.ttl_ms=1000,2000")}, "duplicate_rows");
  const auto c = locksim::sweep_folder_name({locksim::parse_vary("redlock.ttl_ms=1000:30000:log6")}, "duplicate_rows.per_million");
  CHECK(a == "sweep-redlock.ttl_ms_1000_30000_log6");
  CHECK(a != b);
  CHECK(a != c);
  const auto d = locksim::sweep_folder_name({locksim::parse_vary("clients.timeout_ms=100:1000:100"),
                                             locksim::parse_vary("x.lua.ttl_ms=" + std::string(200, '1'))},
                                            "duplicate_rows");
  CHECK(d.size() <= 100);
}

TEST_CASE("a --vary grid whose point count overflows or exceeds the limit is refused before it is built") {
  for (const char* grid : {"clients.count=0:1:1e-300", "clients.count=-1e308:1e308:1e308", "clients.count=0:1e9:1",
                           "clients.count=0:inf:1", "clients.count=nan:1:1"}) {
    CAPTURE(grid);
    CHECK_THROWS_WITH(locksim::parse_vary(grid), Catch::Contains("at most 10000 points"));
  }
  CHECK(locksim::parse_vary("clients.count=1:10000:1").values().size() == 10'000);
}

TEST_CASE("a point the scenario refuses is one line before anything runs, and no sweep folder is left") {
  TempFolder folder;
  auto o = options(folder.path);
  o.varies = {locksim::parse_vary("clients.count=1,2,2.5")};  // the third is no count of clients
  CHECK_THROWS_WITH(locksim::run_sweep(o), Catch::Contains("/clients/count: expected an integer"));
  CHECK_FALSE(std::filesystem::exists(folder.path + ".partial"));
  CHECK_FALSE(std::filesystem::exists(folder.root));
}

TEST_CASE("a sweep runs its points from one queue, each with the results it gives alone, whatever --jobs") {
  TempFolder one, three;
  auto o1 = options(one.path), o3 = options(three.path);
  o1.jobs = 1;
  o3.jobs = 3;
  const auto a = locksim::run_sweep(o1), b = locksim::run_sweep(o3);
  REQUIRE(a.points.size() == 3);
  REQUIRE(b.points.size() == 3);
  for (std::size_t p = 0; p < 3; ++p)
    for (std::size_t k = 0; k < 2; ++k) {
      CHECK(a.points[p].values[k].value == b.points[p].values[k].value);
      CHECK(a.points[p].values[k].low == b.points[p].values[k].low);
    }
  // The middle point, run alone.
  auto alone = locksim::load_scenario(locksim::scenario_path("account-bind"), {"clients.timeout_ms=400"}, o1.strategies);
  alone.trials = 4;
  const auto r = locksim::run_scenario(alone, 2);
  CHECK(a.points[1].values[0].value == r.strategies[0].counts.at("duplicate_rows").share.value);
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
  std::ofstream(interrupted.path + ".partial/points.json") << doc.dump();
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

TEST_CASE("an interrupted sweep's points stay apart from the last finished sweep's report, and each resumes") {
  TempFolder folder;
  auto finished = options(folder.path);
  const auto first = locksim::run_sweep(finished);
  locksim::reports::write_sweep_report(first, folder.path);
  CHECK(read(folder.path + "/points.json") == first.points_json);
  CHECK_FALSE(std::filesystem::exists(folder.path + ".partial"));  // nothing in progress
  const std::string report = read(folder.path + "/sweep.md");

  // A sweep of another grid, interrupted after its first point.
  auto other = options(folder.path);
  other.varies = {locksim::parse_vary("clients.timeout_ms=200:800:300")};
  struct Interrupted {};
  CHECK_THROWS_AS(locksim::run_sweep(other, [](std::size_t, std::size_t) { throw Interrupted{}; }), Interrupted);
  CHECK(read(folder.path + "/points.json") == first.points_json);
  CHECK(read(folder.path + "/sweep.md") == report);
  CHECK(saved(folder.path)["points"].size() == 1);

  // Each continues from its own points: the other from those in progress, the first from its report's.
  other.resume = true;
  const auto resumed = locksim::run_sweep(other);
  CHECK(resumed.points.size() == 3);
  CHECK(saved(folder.path)["points"].size() == 3);
  finished.resume = true;
  CHECK(locksim::run_sweep(finished).points_json == first.points_json);
  CHECK(saved(folder.path) == nlohmann::json::parse(resumed.points_json));  // the first saved nothing new
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

TEST_CASE("a sweep's --time reaches the trials under way: a point whose trial it cuts short is not kept, and --resume runs it") {
  TempFolder folder;
  auto o = options(folder.path);
  // A million operations a trial, seconds of work; the deadline has passed when the first starts.
  o.sets = {"clients.count=1000", "clients.operations=1000"};
  o.strategies = {"check-then-insert"};
  o.trials = 1;
  o.jobs = 1;
  o.interrupt_at = std::chrono::steady_clock::now();
  const auto r = locksim::run_sweep(o);
  CHECK(r.stopped == "time");
  CHECK(r.points.empty());
  CHECK(r.not_run.size() == 3);
  // Its report says that no point ran to its end, rather than asking gnuplot to draw nothing.
  CHECK(locksim::reports::write_sweep_report(r, folder.path) == "No pictures: no point of the sweep ran to its end.");
}

TEST_CASE("a sweep varies a strategy's parameter by the strategy's name") {
  TempFolder folder;
  auto o = options(folder.path);
  o.scenario = "gc-pause-longer-than-lease";
  o.strategies = {"redis-token-cas-unlock"};
  o.varies = {locksim::parse_vary("redis-token-cas-unlock.ttl_ms=10000:60000:50000")};
  o.metric = "duplicate_rows";
  o.trials = 2;
  const auto r = locksim::run_sweep(o);
  REQUIRE(r.points.size() == 2);
  CHECK(r.points[0].values[0].value > 0);   // a 10 s lease runs out in the 45 s pause: a duplicate
  CHECK(r.points[1].values[0].value == 0);  // a 60 s lease outlasts it
}

TEST_CASE("a sweep of a scenario whose trials all run alike draws no interval: nothing was left to chance") {
  TempFolder folder;
  locksim::SweepOptions o;
  o.scenario = "gc-pause-longer-than-lease";
  o.strategies = {"redis-set-nx-ex-drop"};
  o.varies = {locksim::parse_vary("faults.pauses.0.length_ms=1000:45000:44000")};
  o.sets = {R"(topology.internal_latency={"fixed_ms": 0.3})"};  // nothing left to chance
  o.metric = "duplicate_rows";
  o.trials = 3;
  o.jobs = 1;
  o.folder = folder.path;
  const auto r = locksim::run_sweep(o);
  REQUIRE(r.points.size() == 2);
  CHECK(r.points[0].values[0].value == 0);
  CHECK(r.points[1].values[0].value == 1);
  for (const auto& p : r.points) {
    CHECK(p.values[0].low == p.values[0].value);
    CHECK(p.values[0].high == p.values[0].value);
  }
  locksim::reports::write_sweep_report(r, folder.path);
  CHECK(read(folder.path + "/sweep.md").find("100.0% (trials alike)") != std::string::npos);
}
