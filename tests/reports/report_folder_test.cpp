// Report folders are replaced whole: writers at once do not collide, a narrower report leaves
// nothing of a wider one, other commands' reports stay, a killed writer leaves the last report
// as it was (and its gnuplot dies with it), and what dead writers left is cleaned up.

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "support.hpp"
#include "reports/report.hpp"
#include "reports/report_folder.hpp"
#include "reports/sweep_report.hpp"
#include "reports/timeline_parts.hpp"

namespace fs = std::filesystem;
using namespace locksim::reports;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

std::set<std::string> names_in(const fs::path& folder) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.insert(entry.path().filename().string());
  return names;
}

struct TempFolder {
  TempFolder() : root(test::unique_temp_path("locksim-folder")), scenario(root / "s") { fs::remove_all(root); }
  ~TempFolder() { fs::remove_all(root); }
  fs::path root, scenario;
};

// A run's figures without running one: each strategy has latencies, a duplicate and a timeline.
RunResults made_up(const std::vector<std::string>& strategies, std::uint64_t seed) {
  RunResults r;
  r.scenario = "s";
  r.description = "a made-up run";
  r.configuration = "{}";
  r.seed = seed;
  r.trials = 3;
  for (const auto& name : strategies) {
    StrategyResult s;
    s.name = name;
    s.trials = 3;
    for (double ms : {1.0, 2.0, 5.0}) s.latency.add(ms);
    s.counts["duplicate_rows"] = {2, 2.0 / 3, 1, wilson(1, 3)};
    s.timeline.end_s = 2;
    s.timeline.bars = {{"lock:a", test::who("one"), 0, 1, 1.5}, {"lock:a", test::who("two"), 0.5, 2, -1}};
    s.timeline.inserts = {{1, test::who("one"), 0.7, "a"}, {2, test::who("two"), 1.2, "a"}};
    r.strategies.push_back(s);
  }
  return r;
}

std::set<std::string> as_set(const ReportFiles& f) { return {f.written.begin(), f.written.end()}; }

// A process id that no process has: a child's, once it has exited and been reaped.
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

bool process_ended(pid_t pid) {  // gone, or a zombie nobody reaps
  if (::kill(pid, 0) != 0) return true;
  const std::string stat = read("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
}

}  // namespace

TEST_CASE("two report writers of one folder at once both succeed and leave one complete report") {
  TempFolder t;
  const RunResults wide = made_up({"a", "b"}, 11), narrow = made_up({"c"}, 22);
  std::atomic<int> failures{0};
  std::set<std::string> wide_files, narrow_files;
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w)
    writers.emplace_back([&, w] {
      for (int i = 0; i < 3; ++i) try {
          const bool is_wide = (w + i) % 2 == 0;
          const auto files = write_report(is_wide ? wide : narrow, t.scenario.string());
          if (w == 0 && i == 0) wide_files = as_set(files);
          if (w == 1 && i == 0) narrow_files = as_set(files);
        } catch (const std::exception&) {
          ++failures;
        }
    });
  for (auto& w : writers) w.join();
  CHECK(failures == 0);
  // One writer's report, whole: its results, its report.md, its files and nothing else.
  const std::string json = read(t.scenario / "results.json");
  const bool wide_won = json == to_json(wide);
  CHECK((wide_won || json == to_json(narrow)));
  CHECK(names_in(t.scenario) == (wide_won ? wide_files : narrow_files));
  CHECK(read(t.scenario / "report.md").find(wide_won ? "Seed 11," : "Seed 22,") != std::string::npos);
  CHECK(names_in(t.root) == std::set<std::string>{"s"});  // no staging folder left
}

TEST_CASE("a narrower report leaves no files of an earlier wider one") {
  TempFolder t;
  write_report(made_up({"a", "b"}, 1), t.scenario.string());
  REQUIRE(fs::exists(t.scenario / "timeline-b.dat"));
  const auto narrow = write_report(made_up({"c"}, 2), t.scenario.string());
  CHECK(names_in(t.scenario) == as_set(narrow));
  CHECK_FALSE(fs::exists(t.scenario / "timeline-b.dat"));
}

TEST_CASE("report writing keeps sweep/ and replay/") {
  TempFolder t;
  write(t.scenario / "results.json", "{}");  // an earlier run's report, with a file it no longer writes
  write(t.scenario / "timeline-old.dat", "old");
  write(t.scenario / "sweep" / "sweep.md", "the sweep");
  write(t.scenario / "sweep.partial" / "points.json", "the points");
  write(t.scenario / "replay" / "timeline-x.dat", "the replay");
  const auto files = write_report(made_up({"a"}, 1), t.scenario.string());
  auto expected = as_set(files);
  expected.insert({"sweep", "sweep.partial", "replay"});
  CHECK(names_in(t.scenario) == expected);
  CHECK(read(t.scenario / "sweep" / "sweep.md") == "the sweep");
  CHECK(read(t.scenario / "sweep.partial" / "points.json") == "the points");
  CHECK(read(t.scenario / "replay" / "timeline-x.dat") == "the replay");
}

TEST_CASE("a folder that holds no report is neither replaced nor changed") {
  TempFolder t;
  write(t.scenario / "notes.txt", "mine");
  CHECK_THROWS(write_report(made_up({"a"}, 1), t.scenario.string()));
  CHECK(names_in(t.scenario) == std::set<std::string>{"notes.txt"});
  CHECK(names_in(t.root) == std::set<std::string>{"s"});  // the staging folder went too
}

TEST_CASE("a report writer's leftover temporary folder of a dead process is removed, a live one's is not") {
  TempFolder t;
  const std::string dead = std::to_string(dead_pid()), live = std::to_string(::getpid());
  for (const std::string& name : {".s.report-" + dead + "-1", ".s.sweep-" + dead + "-7", ".s.report-" + live + "-999",
                                 ".other.report-" + dead + "-1", ".s.notes-" + dead})
    write(t.root / name / "results.json", "{}");
  write_report(made_up({"a"}, 1), t.scenario.string());
  CHECK(names_in(t.root) ==
        std::set<std::string>{"s", ".s.report-" + live + "-999", ".other.report-" + dead + "-1", ".s.notes-" + dead});
}

TEST_CASE("a writer killed while drawing leaves the last report whole, and its gnuplot dies with it") {
  TempFolder t;
  const auto last = write_report(made_up({"a", "b"}, 1), t.scenario.string());
  // A gnuplot that kills the writer, then would outlive it.
  const fs::path bin = t.root / "bin", pid_file = t.root / "gnuplot.pid";
  write(bin / "gnuplot", fmt::format("#!/bin/sh\nPATH='{}'\necho $$ > \"$GNUPLOT_PID_FILE\"\nkill -9 $PPID\nexec sleep 1000\n",
                                     std::getenv("PATH")));
  fs::permissions(bin / "gnuplot", fs::perms::owner_all);
  const pid_t writer = ::fork();
  if (writer == 0) {
    ::setenv("PATH", bin.c_str(), 1);
    ::setenv("GNUPLOT_PID_FILE", pid_file.c_str(), 1);
    try {
      write_report(made_up({"c"}, 2), t.scenario.string());
    } catch (...) {
    }
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(writer, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
  CHECK(names_in(t.scenario) == as_set(last));
  CHECK(read(t.scenario / "results.json") == to_json(made_up({"a", "b"}, 1)));
  const std::string staging = ".s.report-" + std::to_string(writer) + "-";
  std::size_t left = 0;  // the killed writer's staging folder: its half-written report
  for (const auto& name : names_in(t.root)) left += name.starts_with(staging);
  CHECK(left == 1);

  const pid_t gnuplot = std::stoi(read(pid_file));
  for (int i = 0; i < 3000 && !process_ended(gnuplot); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(process_ended(gnuplot));
  if (!process_ended(gnuplot)) ::kill(gnuplot, SIGKILL);

  write_report(made_up({"c"}, 2), t.scenario.string());  // the next writer removes what the dead one left
  CHECK(names_in(t.root) == std::set<std::string>{"s", "bin", "gnuplot.pid"});
}

TEST_CASE("a sweep report replaces the sweep folder whole and leaves the run's report alone") {
  TempFolder t;
  const auto run = write_report(made_up({"a"}, 1), t.scenario.string());
  const std::string sweep = (t.scenario / "sweep").string();
  SweepResults s{"s", {"clients.count"}, "duplicate_rows", true, {{{10}, {{"a", 0.5, 0.2, 0.8}}}}, "{\"points\": 1}\n"};
  write_sweep_report(s, sweep);
  CHECK(read(t.scenario / "sweep" / "points.json") == s.points_json);
  s.points_json.clear();
  write_sweep_report(s, sweep);
  CHECK_FALSE(fs::exists(t.scenario / "sweep" / "points.json"));
  CHECK(fs::exists(t.scenario / "sweep" / "sweep.md"));
  auto expected = as_set(run);
  expected.insert("sweep");
  CHECK(names_in(t.scenario) == expected);
  CHECK(names_in(t.root) == std::set<std::string>{"s"});
}

TEST_CASE("a replay report replaces the last replay's timeline") {
  TempFolder t;
  const auto r = made_up({"a"}, 1);
  const std::string replay = (t.scenario / "replay").string();
  write_replay_report(r.strategies[0].timeline, "one", replay);
  write_replay_report(r.strategies[0].timeline, "two", replay);
  for (const auto& name : names_in(t.scenario / "replay")) CHECK((name.starts_with("timeline-two.") || name == "report.html"));
  CHECK(fs::exists(t.scenario / "replay" / "timeline-two.dat"));
}

TEST_CASE("two writers of one file at once both succeed and leave one whole file") {
  TempFolder t;
  const fs::path file = t.root / "points.json";
  const std::string first(10'000, 'a'), second(20'000, 'b');
  std::atomic<int> failures{0};
  auto writer = [&](const std::string& text) {
    for (int i = 0; i < 200; ++i) try {
        write_atomically(file.string(), text);
      } catch (const std::exception&) {
        ++failures;
      }
  };
  std::thread one(writer, first), two(writer, second);
  one.join();
  two.join();
  CHECK(failures == 0);
  const std::string text = read(file);
  CHECK((text == first || text == second));
  CHECK(names_in(t.root) == std::set<std::string>{"points.json"});
}

TEST_CASE("a write that cannot be renamed into place leaves no temporary file") {
  TempFolder t;
  write(t.root / "taken" / "inside", "a folder where the file should go");
  CHECK_THROWS(write_atomically((t.root / "taken").string(), "text"));
  CHECK(names_in(t.root) == std::set<std::string>{"taken"});
}
