// The `locksim` command.

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <string_view>
#include <thread>

#include <sys/resource.h>
#include <unistd.h>

#include "app/cluster.hpp"
#include "sim/errors.hpp"
#include "app/deadline.hpp"
#include "app/explore.hpp"
#include "app/fault_kind.hpp"
#include "reports/search.hpp"
#include "reports/explain.hpp"
#include "reports/focus.hpp"
#include "reports/history.hpp"
#include "app/metrics.hpp"
#include "app/runner.hpp"
#include "app/serve.hpp"
#include "app/scenario.hpp"
#include "app/schema.hpp"
#include "app/sweep.hpp"
#include "models/strategies/script.hpp"
#include "reports/report.hpp"
#include "reports/report_folder.hpp"

namespace {

// The scenario file the command runs, which the one line of an allocation failure names.
std::string running_file;

int list(bool metrics_page) {
  if (metrics_page) {  // docs/metrics.md
    fmt::print("{}", locksim::metrics_markdown());
    return 0;
  }
  std::string shown;
  for (const auto& e : models::strategies::registry()) {
    if (shown != e.workload) fmt::print("strategies of the {} workload:\n", shown = e.workload);
    fmt::print("  {:<30} {}\n", e.info.name, e.info.description);
    fmt::print("  {:<30} source: {}; risks: {}\n", "", e.info.source, e.info.risks);
    for (const auto& p : e.info.params)
      fmt::print("  {:<30} --set {}.{}={:g}  ({})\n", "", e.info.name, p.name, p.value, p.meaning);
  }
  const auto scripts = locksim::script_catalogue();
  if (!scripts.empty()) fmt::print("strategies written in Lua, in strategies/ (run one with --strategy-file NAME):\n");
  for (const auto& file : scripts) {
    const std::string name = std::filesystem::path(file).filename().string();
    try {
      fmt::print("  {:<30} {}\n", name, locksim::load_script_file(file).script->info.description);
    } catch (const std::exception& e) {
      fmt::print("  {:<30} (does not load: {})\n", name, e.what());
    }
  }
  // The workloads written in Lua, and the strategies in the folder of each one's name.
  const std::filesystem::path workloads = std::filesystem::path(LOCKSIM_STRATEGY_DIR).parent_path() / "workloads";
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(workloads, ec))
    if (entry.path().extension() == ".lua") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  if (!files.empty()) fmt::print("workloads written in Lua, in workloads/ (run one with \"workload\": {{\"script\": ...}} or --workload-file):\n");
  for (const auto& file : files) {
    const std::string name = file.filename().string();
    try {
      // Its tables in MariaDB's dialect, or else in PostgreSQL's: a scenario's engine picks one.
      const std::string text = locksim::read_script(file.string());
      std::shared_ptr<const models::workloads::Workload> w;
      try {
        w = models::workloads::load_workload(file.string(), text);
      } catch (const models::lua::ScriptError&) {
        w = models::workloads::load_workload(file.string(), text, {}, models::db::Engine::postgresql);
      }
      std::string metrics;
      for (const auto& m : w->metrics) metrics += (metrics.empty() ? "" : ", ") + m.name;
      fmt::print("  {:<30} {}\n  {:<30} metrics: {}\n", name, w->description, "", metrics);
    } catch (const std::exception& e) {
      fmt::print("  {:<30} (does not load: {})\n", name, e.what());
    }
    std::vector<std::filesystem::path> strategies;
    for (const auto& entry : std::filesystem::directory_iterator(workloads / file.stem(), ec))
      if (entry.path().extension() == ".lua") strategies.push_back(entry.path());
    std::sort(strategies.begin(), strategies.end());
    for (const auto& strategy : strategies) {
      try {
        fmt::print("    {:<28} {}\n", strategy.filename().string(), locksim::load_script_file(strategy.string()).script->info.description);
      } catch (const std::exception& e) {
        fmt::print("    {:<28} (does not load: {})\n", strategy.filename().string(), e.what());
      }
    }
  }
  fmt::print("scenarios:\n");
  for (const auto& file : locksim::catalogue()) {
    const auto s = locksim::load_scenario(file);
    fmt::print("  {:<30} {}\n", s.name, s.description);
  }
  return 0;
}

struct RunOptions {
  std::string scenario;
  std::vector<std::string> strategies;
  std::vector<std::string> sets;
  std::optional<int> trials;
  std::optional<std::uint64_t> seed;
  bool json = false;
  bool check_determinism = false;
  bool print_config = false;
  bool no_expect = false;  // a live variation: the scenario's expectations are not judged
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::optional<double> time_s;  // wall seconds at most
  std::string history;           // --history FILE: the first trial's client-visible history, Jepsen's form
};

// --history FILE: the format its name ends in.
locksim::reports::HistoryFormat history_format(const std::string& file) {
  const auto ends = [&](std::string_view tail) { return file.size() > tail.size() && file.ends_with(tail); };
  if (!ends(".edn") && !ends(".json"))
    throw locksim::InputError(fmt::format("--history {}: expected a file name ending in .edn or .json", locksim::shown(file)));
  return ends(".edn") ? locksim::reports::HistoryFormat::edn : locksim::reports::HistoryFormat::json;
}
// run's: one strategy's trial only.
locksim::reports::HistoryFormat history_format(const std::string& file, const locksim::Scenario& s) {
  const locksim::reports::HistoryFormat format = history_format(file);
  if (s.strategies.size() != 1) {
    std::vector<std::string> names;
    for (const auto& st : s.strategies) names.push_back(st.shown());
    throw locksim::InputError(fmt::format("--history writes one strategy's trial: name it with --strategy ({} runs {})", s.name,
                                          fmt::join(names, ", ")));
  }
  return format;
}

// Writes a trial's history where --history asked, and says so unless `quiet` (stdout is JSON).
void write_history(const std::string& file, locksim::reports::HistoryFormat format, const locksim::reports::Timeline& t,
                   const std::string& strategy, bool quiet = false) {
  locksim::reports::write_atomically(file, locksim::reports::history_text(t, format));
  if (!quiet)
    fmt::print("history of {} (seed {}): {} operations{} in {}\n", strategy, t.seed, t.history.size(),
               t.history_left_out > 0 ? fmt::format(", the first of {}", t.history.size() + t.history_left_out) : "", file);
}

// A progress line on stderr, redrawn in place, only when stderr is a terminal.
class Progress {
 public:
  explicit Progress(std::string what) : what_(std::move(what)), on_(::isatty(2) == 1), start_(std::chrono::steady_clock::now()) {}
  ~Progress() {
    if (on_ && drawn_) fmt::print(stderr, "\r\033[K");
  }
  void operator()(std::size_t done, std::size_t total) {
    if (!on_) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double rate = static_cast<double>(done) / std::max(elapsed, 1e-9);
    fmt::print(stderr, "\r\033[K{} {}/{} done, {:.2f}/s, about {:.0f} s left", what_, done, total, rate,
               static_cast<double>(total - done) / std::max(rate, 1e-9));
    drawn_ = true;
  }

 private:
  std::string what_;
  bool on_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
};

struct SweepCommand {
  std::string scenario;
  std::vector<std::string> varies, strategies, sets;
  std::string metric = "duplicate_rows";
  std::optional<int> trials;
  std::optional<std::uint64_t> seed;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool resume = false;
  std::optional<double> time_s;  // wall seconds at most, over the whole sweep
};

int sweep(const SweepCommand& c) {
  locksim::SweepOptions o{c.scenario, c.sets, c.strategies, {}, c.metric, c.trials, c.seed, c.jobs, c.resume, ""};
  for (const auto& v : c.varies) o.varies.push_back(locksim::parse_vary(v));
  if (c.time_s) {
    const locksim::RunControl deadline = locksim::run_deadline(*c.time_s, {});
    o.stop = deadline.stop;
    o.interrupt_at = deadline.interrupt_at;
  }
  const locksim::Scenario s = locksim::load_scenario(locksim::scenario_path(c.scenario), c.sets, c.strategies);
  running_file = s.file;
  o.folder = "reports/out/" + s.name + "/" + locksim::sweep_folder_name(o.varies, c.metric);
  locksim::reports::SweepResults results;
  {
    Progress progress("points");
    results = locksim::run_sweep(o, std::ref(progress));
  }
  if (!locksim::cluster::leader()) return 0;  // its trials went to rank 0, which reports
  fmt::print("sweep: {} ({}), metric {}\n\n{}", s.name, s.file, c.metric, locksim::reports::sweep_table(results));
  const std::string note = locksim::reports::write_sweep_report(results, o.folder);
  fmt::print("\nwritten: {}/sweep.md, report.html, points.json, sweep.dat, sweep.gp{}\n", o.folder, note.empty() ? ", sweep.png, sweep.svg" : "");
  if (!note.empty()) fmt::print("{}\n", note);
  return 0;
}

struct ExploreCommand {
  locksim::ExploreOptions options;
  bool check_determinism = false;
};

// Replays `token`, prints the narrated timeline and draws it. 3 when a checker fired.
// `claim`: the verdict of the search that found it, for the page.
// `property`: the checker the search looked for, which a long trial's story centres on.
// `time_s` (> 0): the replay ends there, unfinished, and the story is left to `locksim replay`.
// `history_file`: where --history writes the trial's history (none: nowhere).
int show_replay(const locksim::Token& token, bool check_determinism, bool shrunk = false, const std::string& claim = "",
                const std::string& property = "", double time_s = 0, const std::string& history_file = "") {
  const auto history = history_file.empty() ? std::nullopt : std::optional(history_format(history_file));
  std::optional<locksim::Replay> replayed;
  {
    const locksim::TrialsDeadline deadline(time_s);
    try {
      replayed = locksim::replay(token);
    } catch (const sim::Interrupted&) {
      fmt::print("not told: replaying it for its story passed --time; `locksim replay <token>` tells it\n");
      return 3;
    }
  }
  locksim::Replay& r = *replayed;
  if (shrunk) r.outcome.timeline.schedule += r.outcome.timeline.schedule.empty() ? "shrunk" : ", shrunk";
  if (check_determinism) {
    const locksim::Replay again = locksim::replay(token);
    if (again.outcome.trace_hash != r.outcome.trace_hash) {
      fmt::print(stderr, "determinism check failed: trace hashes {:016x} and {:016x}\n", r.outcome.trace_hash,
                 again.outcome.trace_hash);
      return 1;
    }
    fmt::print("determinism check: two runs, trace hash {:016x} both times\n", r.outcome.trace_hash);
  }
  fmt::print("replay: {} ({}), strategy {}, seed {}{}\n", r.scenario.name, r.scenario.file, r.strategy.shown(), token.seed,
             r.outcome.timeline.schedule.empty() ? "" : "; " + r.outcome.timeline.schedule);
  if (!r.scenario.lesson.empty()) fmt::print("lesson: {}\n", r.scenario.lesson);
  fmt::print("\n");
  // Without a property asked for, a Lua workload's own finding, where it fired, is the one told.
  std::string centre = property;
  const std::string first = r.fired.empty() ? std::string() : r.fired.front().substr(0, r.fired.front().find(' '));
  if ((centre.empty() || centre == "any") && locksim::workload_finding(first)) centre = first;
  const locksim::reports::Focus story = locksim::reports::focus(r.outcome.timeline, r.fired, centre);
  if (!story.whole()) fmt::print("The story of {}. {}\n\n", story.about, fmt::join(story.left_out, " "));
  for (const auto& line : locksim::reports::narrate(story.told)) fmt::print("  {}\n", line);
  fmt::print("\n{}\n", r.fired.empty() ? locksim::reports::safe_story(r.outcome.timeline)
                                        : "checkers that fired: " + fmt::format("{}", fmt::join(r.fired, ", ")));
  const std::string folder = "reports/out/" + r.scenario.name + "/replay";
  const std::string heading = fmt::format("Replay: {}, strategy {}, seed {}{}", r.scenario.name, r.strategy.shown(), token.seed,
                                          r.outcome.timeline.schedule.empty() ? "" : "; " + r.outcome.timeline.schedule);
  std::map<std::string, std::string> meanings;
  for (const auto& m : locksim::metrics()) meanings[m.name] = m.meaning;
  fmt::print("timeline: {}\n",
             locksim::reports::write_replay_report(r.outcome.timeline, r.strategy.shown(), folder, r.fired, heading, meanings, claim,
                                                   property));
  fmt::print("explained: {}/report.html\n", folder);
  if (history) write_history(history_file, *history, r.outcome.timeline, r.strategy.shown());
  return r.fired.empty() ? 0 : 3;
}

int explore(const ExploreCommand& c) {
  const locksim::ExploreOptions& o = c.options;
  running_file = o.scenario;
  const auto started = std::chrono::steady_clock::now();
  const locksim::Finding f = locksim::explore(o);
  if (!locksim::cluster::leader()) return 0;  // its runs went to rank 0, which reports
  locksim::reports::SearchClaim claim{.scenario = f.scenario,
                                      .strategy = o.strategy,
                                      .mode = o.mode,
                                      .property = o.property,
                                      .bound = o.bound,
                                      .placed = f.placed,
                                      .schedules = f.runs,
                                      .exhausted = f.exhausted,
                                      .counted_all = o.count_all && o.mode == "dfs",
                                      .reduction = f.reduced ? "reorderings that only swap independent steps skipped" : "none",
                                      .found = f.found,
                                      .fired = f.fired,
                                      .firing = f.firing_runs,
                                      .token = f.found ? f.token.text() : std::string(),
                                      .pct_bound = f.pct_bound,
                                      .depth = o.depth};
  if (o.mode == "pct")
    fmt::print("pct: depth {}; each run finds a depth-{} bug with probability at least {:.3g} (1 / (n k^(d-1)))\n",
               o.depth, o.depth, f.pct_bound);
  if (o.mode == "dfs")
    fmt::print("dfs: {} runs ({:.0f} events each on average), at most {} choices deviating from the default{}, up to {} choice "
               "points a run{}; {}; {}\n",
               f.runs, static_cast<double>(f.events) / static_cast<double>(std::max<std::uint64_t>(1, f.runs)), o.bound,
               claim.placed.empty() ? "" : " besides the faults placed", f.choice_points,
               claim.placed.empty() ? "" : fmt::format(" ({} of them places to put a fault)", f.placement_points),
               f.reduced ? fmt::format("{} reorderings skipped, each only swapping independent steps of a run explored (--no-reduction "
                                       "explores them)",
                                       f.equivalent_skipped)
                         : (o.reduction ? "no reduction (a Lua script's state is shared by every app server)" : "no reduction"),
               f.exhausted ? "the space within the bound is exhausted"
                           : (f.found && !claim.counted_all ? "stopped at the first violation"
                                                           : "the budget ran out before the space was covered"));
  if (o.mode == "dfs" && !f.exhausted && (!f.found || claim.counted_all) && f.estimated_schedules > 0)
    fmt::print("dfs: bound {} holds about {} schedules, by the choices the default run asked{} (an estimate: a run off the "
               "default may ask others); this search ran {}: lower --bound, or raise --budget or --time, to exhaust it\n",
               o.bound, locksim::reports::grouped(static_cast<std::uint64_t>(std::min(f.estimated_schedules, 1e18))),
               f.reduced ? ", before the reduction skips equivalent ones" : "", locksim::reports::grouped(f.runs));
  const std::string folder = "reports/out/" + claim.scenario + "/explore";
  locksim::reports::write_search_report(claim, folder);
  fmt::print("verdict: {}\nwritten: {}/search.json, report.html\n", locksim::reports::verdict(claim), folder);
  if (!f.found) {
    fmt::print("nothing found: {} runs ({:.2f} s, mode {}) without {} firing\n", f.runs, f.wall_s, o.mode,
               o.property == "any" ? std::string("any checker") : o.property);
    return 0;
  }
  fmt::print("found after {} runs ({:.3f} s, mode {}): {}\ntoken: {}\n", f.runs, f.wall_s, o.mode, fmt::join(f.fired, ", "),
             f.token.text());
  if (o.mode == "swarm")
    fmt::print("swarm: the finding's faults on: {}\n", f.faults_on.empty() ? std::string("none") : fmt::format("{}", fmt::join(f.faults_on, ", ")));
  std::fflush(stdout);  // out at once, also into a pipe: `make bench` times the search to this line
  locksim::Token token = f.token;
  bool shrunk = false;
  const double time_left = o.time_s - f.wall_s;  // --time holds through the shrink
  if (o.shrink && time_left <= 0) fmt::print("not shrunk: the search spent --time ({:g} s)\n", o.time_s);
  if (o.shrink && time_left > 0) {
    const locksim::Shrunk s = locksim::shrink(f.token, o.property, 2000, time_left);
    if (s.fired.empty() && s.timed_out)
      fmt::print("not shrunk: --time ({:g} s) passed while the finding ran again\n", o.time_s);
    else
      fmt::print("shrunk in {} runs{}: {}\n  from {}\n  to   {}\n", s.runs,
                 s.timed_out ? fmt::format(", stopped at --time ({:g} s)", o.time_s) : "", fmt::join(s.fired, ", "),
                 s.before.text(), s.after.text());
    if (s.after != s.before) fmt::print("shrunk token: {}\n", s.token.text());
    shrunk = s.after != s.before;
    token = s.token;
  }
  fmt::print("\n");
  // --time holds through the replay that tells the finding, with a second at least for it: a
  // small trial's story is told whatever the search spent, a trial of millions of events stops.
  constexpr double kReplayFloorS = 1;
  const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  show_replay(token, c.check_determinism, shrunk, locksim::reports::verdict(claim), o.property,
              o.time_s > 0 ? std::max(kReplayFloorS, o.time_s - spent) : 0);
  return 3;
}

int run(const RunOptions& o) {
  locksim::Scenario s = locksim::load_scenario(locksim::scenario_path(o.scenario), o.sets, o.strategies);
  running_file = s.file;
  if (o.trials) s.trials = *o.trials;
  if (o.seed) s.seed = *o.seed;
  if (o.no_expect) s.expect.clear();
  const auto history = o.history.empty() ? std::nullopt : std::optional(history_format(o.history, s));
  if (o.print_config) {
    fmt::print("{}\n", locksim::effective_config(s).dump(2));
    return 0;
  }
  if (!o.json) {
    fmt::print("scenario: {} ({})\n{}\n", s.name, s.file, s.description);
    fmt::print("seed: {}; trials per strategy: {} (seeds {}..{}); scenario hash {:016x}\n", s.seed, s.trials, s.seed,
               s.seed + static_cast<std::uint64_t>(s.trials) - 1, s.hash);
    fmt::print("configuration, every value in effect (--print-config shows it alone):\n{}\n\n", locksim::effective_config(s).dump());
    for (const auto& f : s.faults)
      if (const std::string placed = f.faults->placed_text(); !placed.empty())
        fmt::print("note: faults.explore ({}) is placed by `locksim explore {} --mode dfs`; these trials run without it\n\n", placed,
                   s.name);
  }
  locksim::reports::RunResults results;
  {
    Progress progress("trials");
    const locksim::RunControl control{.jobs = o.jobs, .progress = std::ref(progress), .draw_first_violation = true};
    results = locksim::run_scenario(s, o.time_s ? locksim::run_deadline(*o.time_s, control) : control);
  }
  if (o.check_determinism) {  // the same trials again, also when --time stopped the run
    const locksim::reports::RunResults again = locksim::run_scenario(s, {.jobs = o.jobs, .stop = locksim::same_trials_as(results)});
    for (std::size_t i = 0; i < results.strategies.size(); ++i) {
      const auto &a = results.strategies[i], &b = again.strategies[i];
      if (a.trace_hash != b.trace_hash) {
        fmt::print(stderr, "determinism check failed: {}: trace hashes {:016x} and {:016x}\n", a.name, a.trace_hash,
                   b.trace_hash);
        return 1;
      }
    }
    if (!o.json) fmt::print("determinism check: every strategy's trials ran twice, the same trace hashes both times\n\n");
  }
  if (!locksim::cluster::leader()) return 0;  // its trials went to rank 0, which reports
  const std::string json = locksim::reports::to_json(results);
  const auto report = locksim::reports::write_report(results, "reports/out/" + s.name);
  if (history) write_history(o.history, *history, results.strategies.front().timeline, results.strategies.front().name, o.json);
  if (o.json) {
    fmt::print("{}", json);
  } else {
    fmt::print("{}", locksim::reports::table(results));
    if (const std::string steps = locksim::reports::steps_table(results); !steps.empty()) fmt::print("\n{}", steps);
    if (const std::string phases = locksim::reports::phases_table(results); !phases.empty()) fmt::print("\n{}", phases);
    std::string first_duplicates;  // one per strategy; results.json has more
    for (const auto& st : results.strategies) {
      // A Lua workload's own finding is its check's count, which has no example of its own.
      const auto& v = st.first_violation;
      if (v && locksim::workload_finding(v->fired.front().substr(0, v->fired.front().find(' '))))
        first_duplicates += fmt::format("  {}: seed {}: {} (the workload's check)\n", st.name, results.seed + v->trial,
                                        fmt::join(v->fired, ", "));
      else if (!st.examples.empty())
        first_duplicates += fmt::format("  {}: {}\n", st.name, st.examples.front());
    }
    if (!first_duplicates.empty()) fmt::print("\nfirst finding of each strategy that had one:\n{}", first_duplicates);
    std::string overloaded;  // a full accept queue: the offered load passed what the servers serve
    for (const auto& st : results.strategies)
      if (auto it = st.counts.find("errors.rejected"); it != st.counts.end() && it->second.total > 0)
        overloaded += fmt::format("{}{} {:g} of {}", overloaded.empty() ? "" : ", ", st.name, it->second.total, st.operations);
    if (!overloaded.empty())
      fmt::print("\nwarning: operations rejected by a full accept queue ({}): the offered load exceeds what the app servers "
                 "serve, at least at times (topology.workers, topology.accept_queue, clients.traffic.rate_per_s)\n",
                 overloaded);
    if (!s.lesson.empty()) fmt::print("\nlesson: {}\n", s.lesson);
    fmt::print("\nwritten: {}/report.md (and {} more files)\n", report.folder, report.written.size() - 1);
    if (!report.note.empty()) fmt::print("{}\n", report.note);
  }
  std::set<std::string> not_run;  // strategies whose expectations were skipped
  for (const auto& e : results.expectations)
    if (e.skipped) not_run.insert(e.text.substr(0, e.text.find(' ')));
  if (!not_run.empty() && !o.json)
    fmt::print("expectations skipped, their strategies were not run: {}\n", fmt::join(not_run, ", "));
  // --time so short that no trial finished: there is nothing to judge an expectation on.
  const bool none_finished = results.stopped == "time" && std::all_of(results.strategies.begin(), results.strategies.end(),
                                                                      [](const auto& st) { return st.trials == 0; });
  if (none_finished) {
    fmt::print(stderr, "no trial finished within --time ({:.3g} s): no expectation judged; give it more time\n", results.stopped_after_s);
    return 1;
  }
  int failed = 0;
  for (const auto& e : results.expectations) {
    if (e.holds || e.skipped) continue;
    ++failed;
    fmt::print(stderr, "expectation not met: {} (measured {})\n", e.text,
               e.measured_at_all ? fmt::format("{:g}", e.measured) : std::string("nothing"));
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace

namespace {

// Exit codes: 0 done, 1 an expectation not met, 2 bad input, 3 a checker fired (explore,
// replay), 70 an internal error (a defect of locksim, never of the input).
constexpr int kBadInput = 2;
constexpr int kInternalError = 70;

// The command line, as a user would paste it back into a shell: for an internal error's report.
std::string command_line(int argc, char** argv) {
  std::string out = "locksim";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("-_.,:=/+@%").find(c) != std::string_view::npos;
    });
    out += " " + (plain ? arg : locksim::quote_value(arg, 200));
  }
  return out;
}

// A wall-clock limit in seconds: a finite number in range (CLI::Range lets NaN through).
CLI::Validator seconds_limit() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::string expected = "expected a number of seconds from 0.001 to 1e7, got " + locksim::quote_value(text);
        double v = 0;
        try {
          std::size_t used = 0;
          v = std::stod(text, &used);
          if (used != text.size()) return expected;
        } catch (const std::exception&) {
          return expected;
        }
        return std::isfinite(v) && v >= 0.001 && v <= 1e7 ? "" : expected;
      },
      "SECONDS");
}

// A memory ceiling: nine tenths of the machine's memory, as the process's address-space
// limit, so that a run too large for the machine ends with one line (an allocation fails and
// main says so) instead of the machine swapping or the kernel killing it. Sanitized builds
// reserve terabytes of shadow memory up front and are left unlimited.
void limit_memory() {
#if !defined(__SANITIZE_ADDRESS__)
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return;
  const rlim_t ceiling = static_cast<rlim_t>(pages) / 10 * 9 * static_cast<rlim_t>(page);
  rlimit now{};
  if (::getrlimit(RLIMIT_AS, &now) != 0 || (now.rlim_cur != RLIM_INFINITY && now.rlim_cur <= ceiling)) return;
  now.rlim_cur = ceiling;
  ::setrlimit(RLIMIT_AS, &now);
#endif
}

// A seed: a decimal number from 0 to 2^63 - 1, as in a scenario file (CLI11 reads "-1" into
// an unsigned as 2^64 - 1).
CLI::Validator seed_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto v = locksim::parse_u64(text);
        if (v && *v <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return "";
        return "expected a seed from 0 to 9223372036854775807, got " + locksim::quote_value(text);
      },
      "SEED");
}

int dispatch(int argc, char** argv);

}  // namespace

// One handler for every failure: bad input is one line and exit 2; anything else is a
// defect, reported as one line with the command that reproduces it, and exit 70.
// Under mpirun, only rank 0 prints: another rank's failure goes to rank 0, which reports it
// (app/cluster.hpp).
int main(int argc, char** argv) {
  locksim::cluster::Session cluster(argc, argv);
  const auto fail = [&](const std::string& message, int code) {
    if (!locksim::cluster::leader()) {
      cluster.failed(message, code);
      return code;
    }
    std::cerr << "locksim: " << message << "\n";
    return code;
  };
  try {
    return dispatch(argc, argv);
  } catch (const locksim::cluster::Quit& quit) {  // rank 0 failed, and says why
    return quit.exit_code;
  } catch (const locksim::InputError& e) {
    return fail(locksim::shown(e.what(), 2000), kBadInput);
  } catch (const locksim::reports::FolderError& e) {  // where the report goes is in the way
    return fail(locksim::shown(e.what(), 2000), kBadInput);
  } catch (const std::bad_alloc&) {
    return fail(fmt::format("{}out of memory: the run needs more than this machine gives it (less of clients.count, "
                            "clients.operations, topology.app_servers, topology.workers (each client and worker is a simulated "
                            "process with its own stack), trials or --jobs needs less)",
                            running_file.empty() ? "" : running_file + ": "),
                kBadInput);
  } catch (const std::exception& e) {
    return fail(fmt::format("internal error: {}; this is a defect of locksim, not of the input: please report it with the command {}",
                            locksim::shown(e.what(), 2000), command_line(argc, argv)),
                kInternalError);
  } catch (...) {
    return fail("internal error of an unknown kind; please report it with the command " + command_line(argc, argv), kInternalError);
  }
}

namespace {

int dispatch(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) locksim::check_length("an argument", argv[i]);
  CLI::App app{"locksim: a deterministic simulator of the ways services stop duplicate inserts"};
  app.require_subcommand(1);

  auto* list_cmd = app.add_subcommand("list", "list the strategies and the scenario catalogue");
  bool list_metrics = false;
  list_cmd->add_flag("--metrics", list_metrics, "print every metric, its kind, unit and meaning (docs/metrics.md)");
  auto* schema_cmd = app.add_subcommand("schema", "print the JSON Schema of scenario files, for editors and validators "
                                                  "(docs/scenario.schema.json)");
  RunOptions run_options;
  auto* run_cmd = app.add_subcommand("run", "run a scenario: every strategy it names, many trials, a comparison table");
  run_cmd->add_option("scenario", run_options.scenario, "a scenario file, or a name from scenarios/")->required();
  run_cmd->add_option("--strategy", run_options.strategies, "run only these strategies (repeatable)");
  run_cmd->add_option("--trials", run_options.trials, "trials per strategy")->check(CLI::Range(1, 10'000'000));
  run_cmd->add_option("--seed", run_options.seed, "seed of the first trial (trial i uses seed + i)")->check(seed_number());
  run_cmd->add_option("--set", run_options.sets, "override a scenario value: path=value, e.g. clients.count=50");
  std::vector<std::string> run_scripts, sweep_scripts, explore_scripts;
  std::string run_workload, sweep_workload, explore_workload;
  constexpr const char* kScriptHelp = "also run this strategy written in Lua (repeatable; docs/writing-strategies.md)";
  constexpr const char* kWorkloadHelp =
      "run the scenario's world and traffic with this workload written in Lua instead of its own; its strategies are the "
      "--strategy-file ones (docs/writing-workloads.md)";
  run_cmd->add_option("--strategy-file", run_scripts, kScriptHelp);
  run_cmd->add_option("--workload-file", run_workload, kWorkloadHelp);
  run_cmd->add_flag("--json", run_options.json, "print results.json instead of the table");
  run_cmd->add_option("--history", run_options.history,
                      "write the first trial's client-visible history to FILE.edn or FILE.json, in Jepsen's form (one strategy)");
  run_cmd->add_flag("--print-config", run_options.print_config,
                    "print the scenario with every value in effect, defaults included, and exit");
  run_cmd->add_flag("--check-determinism", run_options.check_determinism, "run every trial twice and compare trace hashes");
  run_cmd->add_flag("--no-expect", run_options.no_expect,
                    "judge none of the scenario's expectations (a variation of a catalogue scenario, say, with --set)");
  run_cmd->add_option("--jobs", run_options.jobs, "threads running trials (default: every core); results do not depend on it")
      ->check(CLI::Range(1, 1024));
  run_cmd->add_option("--time", run_options.time_s, "wall seconds at most: no trial starts after and those under way stop, the results are of the trials done")
      ->check(seconds_limit());

  SweepCommand sweep_options;
  auto* sweep_cmd = app.add_subcommand("sweep", "run a scenario over a grid of parameter values: a table and a plot of one metric");
  sweep_cmd->add_option("scenario", sweep_options.scenario, "a scenario file, or a name from scenarios/")->required();
  sweep_cmd->add_option("--vary", sweep_options.varies, "path=from:to:step, path=from:to:logN or path=a,b,c, e.g. redlock.ttl_ms=1000:30000:log6 (once or twice)")
      ->required();
  sweep_cmd->add_option("--strategy", sweep_options.strategies, "only these strategies (repeatable)");
  sweep_cmd->add_option("--metric", sweep_options.metric, "the metric to plot (default duplicate_rows)");
  sweep_cmd->add_option("--trials", sweep_options.trials, "trials per strategy and point")->check(CLI::Range(1, 10'000'000));
  sweep_cmd->add_option("--seed", sweep_options.seed, "seed of the first trial at each point")->check(seed_number());
  sweep_cmd->add_option("--set", sweep_options.sets, "override a scenario value: path=value");
  sweep_cmd->add_option("--strategy-file", sweep_scripts, kScriptHelp);
  sweep_cmd->add_option("--workload-file", sweep_workload, kWorkloadHelp);
  sweep_cmd->add_option("--jobs", sweep_options.jobs, "threads running trials (default: every core)")->check(CLI::Range(1, 1024));
  sweep_cmd->add_flag("--resume", sweep_options.resume, "keep the points an interrupted sweep already wrote");
  sweep_cmd->add_option("--time", sweep_options.time_s, "wall seconds at most for the whole sweep: points not reached are not run")
      ->check(seconds_limit());

  ExploreCommand explore_options;
  auto* explore_cmd = app.add_subcommand("explore", "search for a trial in which a checker fires; print its replay token");
  explore_cmd->add_option("scenario", explore_options.options.scenario, "a scenario file, or a name from scenarios/")->required();
  explore_cmd->add_option("--strategy", explore_options.options.strategy, "the strategy (or label) to explore")->required();
  explore_cmd->add_option("--property", explore_options.options.property, "a checker metric, or any (default)");
  explore_cmd->add_option("--mode", explore_options.options.mode,
                          "random: independent seeds; pct: random priorities with d-1 change points; dfs: every order of "
                          "simultaneous events and every one_of_ms delay, within --bound; swarm: random seeds that also pick "
                          "which faults are on");
  explore_cmd->add_option("--depth", explore_options.options.depth, "pct: the bug depth d (default 3)");
  explore_cmd->add_option("--bound", explore_options.options.bound, "dfs: choices deviating from the default, at most (default 2)");
  explore_cmd->add_flag("--no-shrink", [&](std::int64_t) { explore_options.options.shrink = false; },
                        "report the violating run as found, without shrinking it");
  explore_cmd->add_option("--budget", explore_options.options.budget, "runs at most")->check(CLI::Range(1, 100'000'000));
  explore_cmd->add_option("--time", explore_options.options.time_s, "wall seconds at most")->check(seconds_limit());
  explore_options.options.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  explore_cmd->add_option("--jobs", explore_options.options.jobs, "threads running the search (default: every core); the finding "
                                                                  "and its token do not depend on it")
      ->check(CLI::Range(1, 1024));
  explore_cmd->add_option("--set", explore_options.options.sets, "override a scenario value: path=value");
  explore_cmd->add_option("--strategy-file", explore_scripts, "load this strategy written in Lua (repeatable); --strategy names it");
  explore_cmd->add_option("--workload-file", explore_workload, kWorkloadHelp);
  explore_cmd->add_flag("--no-reduction", [&](std::int64_t) { explore_options.options.reduction = false; },
                        "dfs: explore every order of simultaneous events, also those that only swap independent steps");
  explore_cmd->add_flag("--all", explore_options.options.count_all,
                        "dfs: go on past the first finding and count every schedule in which the property fires");
  explore_cmd->add_flag("--check-determinism", explore_options.check_determinism, "replay the finding twice, compare trace hashes");
  std::string rows_scenario;
  std::vector<std::string> rows_sets;
  auto* rows_cmd = app.add_subcommand("rows", "print the scenario's seeded rows (database.rows and database.legacy) as SQL INSERTs, "
                                              "to load the same data into a real database");
  rows_cmd->add_option("scenario", rows_scenario, "a scenario file, or a name from scenarios/")->required();
  rows_cmd->add_option("--set", rows_sets, "override a scenario value: path=value");
  std::string replay_token;
  bool replay_check = false;
  auto* replay_cmd = app.add_subcommand("replay", "re-run a trial from its token, narrated, and draw its timeline");
  replay_cmd->add_option("token", replay_token, "the token `explore` printed")->required();
  replay_cmd->add_flag("--check-determinism", replay_check, "run it twice and compare trace hashes");
  std::string replay_history;
  replay_cmd->add_option("--history", replay_history, "write the trial's client-visible history to FILE.edn or FILE.json, in Jepsen's form");

  locksim::ServeOptions serve_options;
  auto* serve_cmd = app.add_subcommand("serve", "the workbench in the browser: run, step through and branch trials (docs/workbench.md)");
  serve_cmd->add_option("--bind", serve_options.bind, "the address to listen on (default 127.0.0.1: this machine alone)");
  serve_cmd->add_option("--port", serve_options.port, "the port (default 8080; 0: any free one)")->check(CLI::Range(0, 65535));
  serve_cmd->add_option("--dir", serve_options.dir, "your own folder of scenarios and Lua files, which the page may open and save into");

  // A first word that is no command is named as such, not as a missing command.
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(command->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end())
      throw locksim::InputError(fmt::format("{}: no such command; the commands: {} (see locksim --help)", locksim::shown(argv[1], 64),
                                            fmt::join(names, ", ")));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    throw locksim::InputError(locksim::shown(e.what(), 300) + " (see locksim --help)");
  }

  // A script is an override of the scenario's strategies, so that tokens carry it.
  const auto add_scripts = [](const std::vector<std::string>& files, std::vector<std::string>& sets) {
    std::vector<std::string> scripts;
    for (const auto& f : files) scripts.push_back(std::string(locksim::kScriptOverride) + f);
    sets.insert(sets.begin(), scripts.begin(), scripts.end());
  };
  add_scripts(run_scripts, run_options.sets);
  add_scripts(sweep_scripts, sweep_options.sets);
  add_scripts(explore_scripts, explore_options.options.sets);
  // A workload file likewise, before the scripts that are its strategies.
  const auto add_workload = [](const std::string& file, std::vector<std::string>& sets) {
    if (!file.empty()) sets.insert(sets.begin(), std::string(locksim::kWorkloadOverride) + file);
  };
  add_workload(run_workload, run_options.sets);
  add_workload(sweep_workload, sweep_options.sets);
  add_workload(explore_workload, explore_options.options.sets);

  // A flag that does nothing in the mode asked for is a mistake to say, not to ignore.
  if (*explore_cmd) {
    const std::string& mode = explore_options.options.mode;
    const auto given = [&](const char* flag) { return explore_cmd->get_option(flag)->count() > 0; };
    for (const char* flag : {"--bound", "--all", "--no-reduction"})
      if (given(flag) && mode != "dfs")
        throw locksim::InputError(fmt::format("{}: only with --mode dfs; --mode {} does not use it", flag, mode));
    if (given("--depth") && mode != "pct")
      throw locksim::InputError(fmt::format("--depth: only with --mode pct; --mode {} does not use it", mode));
  }

  limit_memory();
  // Under mpirun the other ranks take part in run, sweep and explore; in the rest, rank 0 alone.
  if (!locksim::cluster::leader() && !*run_cmd && !*sweep_cmd && !*explore_cmd) return 0;
  if (*list_cmd) return list(list_metrics);
  if (*schema_cmd) {
    std::cout << locksim::scenario_schema().dump(2) << "\n";
    return 0;
  }
  if (*run_cmd) return run(run_options);
  if (*sweep_cmd) return sweep(sweep_options);
  if (*explore_cmd) return explore(explore_options);
  if (*replay_cmd) return show_replay(locksim::parse_token(replay_token), replay_check, false, "", "", 0, replay_history);
  if (*serve_cmd)
    return locksim::serve(serve_options, [](const std::string& url) {
      fmt::print("locksim serve: {}  (Ctrl-C stops it)\n", url);
      std::fflush(stdout);
    });
  if (*rows_cmd) {
    const locksim::Scenario s = locksim::load_scenario(locksim::scenario_path(rows_scenario), rows_sets);
    locksim::write_rows_sql(s.deployment.database, std::cout);
    return 0;
  }

  return 0;
}

}  // namespace
