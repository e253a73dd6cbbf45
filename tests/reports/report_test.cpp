// The report folder: its files parse and hold the run's figures; pictures when gnuplot is
// there, and a clear note (and a successful run) when it is not.

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support.hpp"
#include "app/runner.hpp"
#include "app/scenario.hpp"
#include "reports/report.hpp"
#include "reports/timeline_parts.hpp"

namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct TempFolder {
  TempFolder() : path(test::unique_temp_path("locksim-report")) {
    std::filesystem::remove_all(path);
  }
  ~TempFolder() { std::filesystem::remove_all(path); }
  std::filesystem::path path;
};

locksim::reports::RunResults small_run() {
  auto s = locksim::load_scenario(locksim::scenario_path("gc-pause-longer-than-lease"));
  s.trials = 3;
  return locksim::run_scenario(s);
}

}  // namespace

TEST_CASE("the report folder holds results.json, report.md with the table and lesson, and the plot data") {
  const auto results = small_run();
  TempFolder folder;
  const auto files = locksim::reports::write_report(results, folder.path.string());
  const auto doc = nlohmann::json::parse(read(folder.path / "results.json"));
  CHECK(doc["strategies"].size() == results.strategies.size());
  CHECK(doc["strategies"][0]["metrics"]["duplicate_rows"]["total"] == results.strategies[0].counts.at("duplicate_rows").total);
  CHECK(doc["strategies"][0]["latency_histogram"]["buckets_ms_count"].size() > 0);
  const std::string md = read(folder.path / "report.md");
  CHECK(md.find(results.lesson) != std::string::npos);
  CHECK(md.find(locksim::reports::table(results)) != std::string::npos);
  CHECK(read(folder.path / "violations.dat").find("# duplicate_rows") != std::string::npos);
  CHECK(read(folder.path / "latency.dat").find("# redlock") != std::string::npos);
  // Where time goes: a row per strategy in report.md and in the stacked bars' data.
  CHECK(md.find("## Where time goes") != std::string::npos);
  CHECK(md.find("| redlock |") != std::string::npos);
  const std::string times = read(folder.path / "time_breakdown.dat");
  for (const auto& s : results.strategies) CHECK(times.find('"' + s.name + '"') != std::string::npos);
  // The first trial drawn: two holders of one lock, and the two inserts of the duplicated key.
  const std::string timeline = read(folder.path / "timeline-redlock.dat");
  CHECK(timeline.find("# holds") != std::string::npos);
  CHECK(results.strategies[3].name == "redlock");
  CHECK(results.strategies[3].timeline.bars.size() == 2);
  CHECK(results.strategies[3].timeline.inserts.size() == 2);
  for (const auto& entry : std::filesystem::directory_iterator(folder.path))
    CHECK(entry.path().extension() != ".tmp");  // nothing left half-written
  const bool gnuplot_installed = std::system("command -v gnuplot >/dev/null 2>&1") == 0;
  CHECK(files.plotted == gnuplot_installed);  // a script gnuplot refuses is a bug
  if (files.plotted) {
    CHECK(std::filesystem::file_size(folder.path / "violations.png") > 0);
    CHECK(std::filesystem::file_size(folder.path / "latency_cdf.svg") > 0);
    CHECK(std::filesystem::file_size(folder.path / "time_breakdown.png") > 0);
    CHECK(md.find("![time_breakdown](time_breakdown.png)") != std::string::npos);
    CHECK(md.find("![violations](violations.png)") != std::string::npos);
    CHECK(std::filesystem::file_size(folder.path / "timeline-redlock.png") > 0);
  }
}

TEST_CASE("the latency picture of 30 strategies has a panel per family, at most 8 curves a panel, each titled") {
  auto s = locksim::load_scenario(locksim::scenario_path("account-bind"));
  s.trials = 1;
  const auto results = locksim::run_scenario(s, 2);
  CHECK(results.strategies.at(0).family == "database");
  for (const auto& st : results.strategies)
    if (st.name == "redlock") CHECK(st.family == "Redis");
  TempFolder folder;
  locksim::reports::write_report(results, folder.path.string());
  const std::string script = read(folder.path / "plots.gp");
  const auto from = script.find("set output 'latency_cdf.png'"), to = script.find("unset multiplot", from);
  REQUIRE(from != std::string::npos);
  std::istringstream lines(script.substr(from, to - from));
  std::size_t panels = 0, curves = 0;
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("plot ")) continue;
    ++panels;
    std::size_t here = 0;
    for (auto at = line.find(" index "); at != std::string::npos; at = line.find(" index ", at + 1)) ++here;
    CHECK(here <= 8);
    curves += here;
  }
  CHECK(curves == results.strategies.size());
  CHECK(panels >= 4);
  CHECK(script.find("set title 'ZooKeeper / etcd'") != std::string::npos);
}

TEST_CASE("a timeline without lock holds still draws its duplicate inserts: no block of its data is empty") {
  locksim::reports::Timeline t;  // check-then-insert: two inserts of one key, no lock at all
  t.seed = 1;
  t.end_s = 1;
  t.inserts = {{1, test::who("a"), 0.2, "k"}, {2, test::who("b"), 0.3, "k"}};
  TempFolder folder;
  locksim::reports::write_replay_report(t, "check-then-insert", folder.path.string());
  const std::string data = read(folder.path / "timeline-check-then-insert.dat");
  // gnuplot numbers blocks by the blank line pairs between them and skips an empty one, so
  // `index 2` (the inserts) would point past the end.
  std::size_t blocks = 0, from = 0;
  for (;;) {
    const std::size_t end = data.find("\n\n\n", from);
    const std::string block = data.substr(from, end == std::string::npos ? std::string::npos : end - from);
    std::istringstream lines(block);
    bool has_row = false;
    for (std::string line; std::getline(lines, line);) has_row = has_row || (!line.empty() && line[0] != '#');
    CHECK(has_row);
    ++blocks;
    if (end == std::string::npos) break;
    from = end + 3;
  }
  CHECK(blocks == 6);  // holds, leases, inserts, wrong unlocks, renewals, commits
  CHECK(data.find("0.200000") != std::string::npos);
}

// Its row names are long, so the plot starts far to the right: a key centred below the plot ran
// off the picture's right edge, and the last titles with it.
TEST_CASE("the timeline's key asks for rows of at most three titles, centred on the picture, in a margin of its own") {
  locksim::reports::Timeline t;
  t.seed = 1;
  t.end_s = 1;
  t.bars = {{"lock:openid:0", test::who("app-1 worker 4, client 0, op 0 attempt 1"), 0.1, 0.5, 0.7},
            {"lock:openid:0", test::who("app-2 worker 4, client 0, op 1 attempt 1"), 0.6, 0.9, 1.2}};
  TempFolder folder;
  locksim::reports::write_replay_report(t, "redis-set-nx-ex-drop", folder.path.string());
  const std::string script = read(folder.path / "timeline-redis-set-nx-ex-drop.gp");
  const auto plot = script.find("\nplot ");
  REQUIRE(plot != std::string::npos);
  const std::string line = script.substr(plot + 1, script.find('\n', plot + 1) - plot - 1);
  std::size_t titles = 0;
  for (auto at = line.find(" title '"); at != std::string::npos; at = line.find(" title '", at + 1)) ++titles;
  CHECK(titles == 6);
  const auto key_at = script.find("\nset key ");
  REQUIRE(key_at != std::string::npos);
  const std::string key = script.substr(key_at + 1, script.find('\n', key_at + 1) - key_at - 1);
  CHECK(key.find(" at screen 0.5,") != std::string::npos);  // the picture's centre, wherever the plot is
  const auto maxcols = key.find(" maxcols ");
  REQUIRE(maxcols != std::string::npos);
  const std::size_t columns = std::stoul(key.substr(maxcols + 9));
  CHECK(columns >= 2);
  CHECK(columns <= 3);                         // three of the longest title fit across 1100 px
  CHECK((titles + columns - 1) / columns > 1);  // so more than one row
  CHECK(script.find("\nset bmargin ") != std::string::npos);  // room kept below for those rows
}

TEST_CASE("without gnuplot the report is still written, with a note saying why there are no pictures") {
  const auto results = small_run();
  TempFolder folder;
  const std::string path = std::getenv("PATH");
  ::setenv("PATH", "/nonexistent", 1);
  const auto files = locksim::reports::write_report(results, folder.path.string());
  ::setenv("PATH", path.c_str(), 1);
  CHECK_FALSE(files.plotted);
  CHECK(files.note.find("gnuplot") != std::string::npos);
  CHECK(read(folder.path / "report.md").find(files.note) != std::string::npos);
  CHECK(std::filesystem::exists(folder.path / "plots.gp"));
  CHECK_FALSE(std::filesystem::exists(folder.path / "violations.png"));
}

TEST_CASE("a gnuplot that fails is reported as it failed: its exit status and its first error line") {
  const auto results = small_run();
  TempFolder folder;
  TempFolder bin;
  std::filesystem::create_directories(bin.path);
  {
    std::ofstream fake(bin.path / "gnuplot");
    fake << "#!/bin/sh\necho '' >&2\necho '         ^' >&2\necho '\"plots.gp\" line 7: picture too large' >&2\nexit 1\n";
  }
  std::filesystem::permissions(bin.path / "gnuplot", std::filesystem::perms::owner_all);
  const std::string path = std::getenv("PATH");
  ::setenv("PATH", bin.path.c_str(), 1);
  const auto files = locksim::reports::write_report(results, folder.path.string());
  ::setenv("PATH", path.c_str(), 1);
  CHECK_FALSE(files.plotted);
  CHECK(files.note.find("No pictures: gnuplot failed (exit 1): \"plots.gp\" line 7: picture too large") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(folder.path / "plots.gp.errors"));  // its error output is not left behind
}

TEST_CASE("a count's interval holds for counts past what the exact chi-squared series takes, and joins it smoothly") {
  for (const double count : {1e11, 9.2e18, 3e6}) {
    INFO(count);
    const auto rate = locksim::reports::per_million(count, 1000);
    CHECK(rate.low < rate.value);
    CHECK(rate.value < rate.high);
  }
  // Either side of where the approximation takes over, the bounds agree to about a millionth.
  const auto below = locksim::reports::per_unit(999'999, 1), above = locksim::reports::per_unit(1'000'001, 1);
  CHECK(above.low - below.low == Approx(2).epsilon(0.01));
  CHECK(above.high - below.high == Approx(2).epsilon(0.01));
}
