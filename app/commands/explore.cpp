// `locksim explore`: search for a trial in which a checker fires (app/search/), print its
// replay token, shrink it and tell it.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "app/commands/commands.hpp"
#include "app/commands/options.hpp"
#include "app/exec/executor.hpp"
#include "app/search/explore.hpp"
#include "reports/explain.hpp"
#include "reports/search.hpp"

namespace locksim::commands {

namespace {

struct ExploreCommand {
  ExploreOptions options;
  ScenarioInputs inputs;  // options.sets once parsed
  bool check_determinism = false;
};

reports::SearchClaim claim_of(const ExploreOptions& o, const Finding& f) {
  return reports::SearchClaim{.scenario = f.scenario,
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
}

// What a pct or dfs search covered.
void print_coverage(const ExploreOptions& o, const Finding& f, const reports::SearchClaim& claim) {
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
  if (o.mode == "dfs" && o.count_classes && f.classes_counted)
    fmt::print("dfs: the {} runs fall in {} classes of equivalent runs (runs that differ only by swapping independent steps): "
               "a sound reduction on the models' footprints runs at least one of each\n",
               reports::grouped(f.runs), reports::grouped(f.classes.size()));
  else if (o.mode == "dfs" && o.count_classes)
    fmt::print("dfs: classes not counted: a Lua script's state is shared by every app server, which no footprint shows\n");
  if (o.mode == "dfs" && !f.exhausted && (!f.found || claim.counted_all) && f.estimated_schedules > 0)
    fmt::print("dfs: bound {} holds about {} schedules, by the choices the default run asked{} (an estimate: a run off the "
               "default may ask others); this search ran {}: lower --bound, or raise --budget or --time, to exhaust it\n",
               o.bound, reports::grouped(static_cast<std::uint64_t>(std::min(f.estimated_schedules, 1e18))),
               f.reduced ? ", before the reduction skips equivalent ones" : "", reports::grouped(f.runs));
}

// The finding shrunk, as --time leaves room for: its token, and whether it is smaller.
std::pair<Token, bool> shrunk_finding(const ExploreOptions& o, const Finding& f) {
  const double time_left = o.time_s - f.wall_s;  // --time holds through the shrink
  if (o.shrink && time_left <= 0) fmt::print("not shrunk: the search spent --time ({:g} s)\n", o.time_s);
  if (!o.shrink || time_left <= 0) return {f.token, false};
  const Shrunk s = shrink(f.token, o.property, 2000, time_left);
  if (s.fired.empty() && s.timed_out)
    fmt::print("not shrunk: --time ({:g} s) passed while the finding ran again\n", o.time_s);
  else
    fmt::print("shrunk in {} runs{}: {}\n  from {}\n  to   {}\n", s.runs, s.timed_out ? fmt::format(", stopped at --time ({:g} s)", o.time_s) : "",
               fmt::join(s.fired, ", "), s.before.text(), s.after.text());
  if (s.after != s.before) fmt::print("shrunk token: {}\n", s.token.text());
  return {s.token, s.after != s.before};
}

// A flag that does nothing in the mode asked for is a mistake to say, not to ignore.
void check_flags(const CLI::App& cli, const std::string& mode) {
  const auto given = [&](const char* flag) { return cli.get_option(flag)->count() > 0; };
  for (const char* flag : {"--bound", "--all", "--no-reduction", "--no-branching", "--check-branches", "--count-classes"})
    if (given(flag) && mode != "dfs") throw InputError(fmt::format("{}: only with --mode dfs; --mode {} does not use it", flag, mode));
  if (given("--depth") && mode != "pct") throw InputError(fmt::format("--depth: only with --mode pct; --mode {} does not use it", mode));
}

int explore(const ExploreCommand& c) {
  const ExploreOptions& o = c.options;
  running_file = o.scenario;
  const auto started = std::chrono::steady_clock::now();
  const Finding f = locksim::explore(o);
  if (!exec::leader()) return 0;  // its runs went to the leader, which reports
  const reports::SearchClaim claim = claim_of(o, f);
  print_coverage(o, f, claim);
  const std::string folder = "reports/out/" + claim.scenario + "/explore";
  reports::write_search_report(claim, folder);
  fmt::print("verdict: {}\nwritten: {}/search.json, report.html\n", reports::verdict(claim), folder);
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
  const auto [token, shrunk] = shrunk_finding(o, f);
  fmt::print("\n");
  // --time holds through the replay that tells the finding, with a second at least for it: a
  // small trial's story is told whatever the search spent, a trial of millions of events stops.
  constexpr double kReplayFloorS = 1;
  const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  show_replay(token, c.check_determinism, shrunk, reports::verdict(claim), o.property,
              o.time_s > 0 ? std::max(kReplayFloorS, o.time_s - spent) : 0);
  return 3;
}

void add_search_options(CLI::App& cli, ExploreOptions& o) {
  cli.add_option("--property", o.property, "a checker metric, or any (default)");
  cli.add_option("--mode", o.mode,
                 "random: independent seeds; pct: random priorities with d-1 change points; dfs: every order of "
                 "simultaneous events and every one_of_ms delay, within --bound; swarm: random seeds that also pick "
                 "which faults are on");
  cli.add_option("--depth", o.depth, "pct: the bug depth d (default 3)");
  cli.add_option("--bound", o.bound, "dfs: choices deviating from the default, at most (default 2)");
  cli.add_flag("--no-shrink", [&o](std::int64_t) { o.shrink = false; }, "report the violating run as found, without shrinking it");
  cli.add_option("--budget", o.budget, "runs at most")->check(CLI::Range(1, 100'000'000));
}

}  // namespace

Command explore_command(CLI::App& app) {
  auto c = std::make_shared<ExploreCommand>();
  ExploreOptions& o = c->options;
  auto* cli = app.add_subcommand("explore", "search for a trial in which a checker fires; print its replay token");
  add_scenario(*cli, o.scenario);
  cli->add_option("--strategy", o.strategy, "the strategy (or label) to explore")->required();
  add_search_options(*cli, o);
  add_time(*cli, o.time_s, "wall seconds at most");
  o.jobs = default_jobs();
  add_jobs(*cli, o.jobs, "threads running the search (default: every core); the finding and its token do not depend on it");
  add_inputs(*cli, c->inputs, "override a scenario value: path=value",
             "load this strategy written in Lua (repeatable); --strategy names it");
  cli->add_flag("--no-reduction", [&o](std::int64_t) { o.reduction = false; },
                "dfs: explore every order of simultaneous events, also those that only swap independent steps");
  cli->add_flag("--no-branching", [&o](std::int64_t) { o.branching = false; },
                "dfs: run every schedule from time zero, rather than from its parent's run saved where it deviates");
  cli->add_flag("--check-branches", o.check_branches,
                "dfs: run every branched schedule again from time zero and fail unless both end alike (slower)");
  cli->add_flag("--count-classes", o.count_classes,
                "dfs: count the classes of equivalent runs among the runs: the fewest a sound reduction could make");
  cli->add_flag("--all", o.count_all, "dfs: go on past the first finding and count every schedule in which the property fires");
  cli->add_flag("--check-determinism", c->check_determinism, "replay the finding twice, compare trace hashes");
  return {cli,
          [c, cli] {
            c->options.sets = c->inputs.overrides();
            check_flags(*cli, c->options.mode);
            return explore(*c);
          },
          true};
}

}  // namespace locksim::commands
