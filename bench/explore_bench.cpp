#include "bench/explore_bench.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "app/search/explore.hpp"
#include "app/scenario.hpp"

#ifndef LOCKSIM_BIN
#define LOCKSIM_BIN "locksim"
#endif

namespace bench {
namespace {

using Clock = std::chrono::steady_clock;

// Starts `locksim explore` on the GC-pause scenario and returns the wall seconds until it
// prints that it found the violation (its replay and drawing afterwards are not timed).
std::optional<double> first_violation(const char* mode) {
  const std::string command = fmt::format("'{}' explore gc-pause-longer-than-lease --strategy redis-set-nx-ex-drop "
                                          "--mode {} --no-shrink 2>&1",
                                          LOCKSIM_BIN, mode);
  const auto start = Clock::now();
  FILE* out = ::popen(command.c_str(), "r");
  if (out == nullptr) return std::nullopt;
  std::optional<double> found;
  char line[4096];
  while (std::fgets(line, sizeof line, out) != nullptr)
    if (!found && std::string(line).starts_with("found after "))
      found = std::chrono::duration<double>(Clock::now() - start).count();
  const int status = ::pclose(out);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 3) return std::nullopt;  // 3: a violation found
  return found;
}

// The mean wall time of a fork() of this process, the child's exit and the wait for it (0: no fork).
double fork_wait_us() {
  constexpr int kForks = 200;
  const auto start = Clock::now();
  for (int i = 0; i < kForks; ++i) {
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    if (child < 0) return 0;
    int status = 0;
    ::waitpid(child, &status, 0);
  }
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / kForks;
}

// This process's resident memory in MB (/proc/self/statm: pages).
double resident_mb() {
  std::ifstream statm("/proc/self/statm");
  double size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<double>(::sysconf(_SC_PAGESIZE)) / (1 << 20);
}

}  // namespace

ExploreFigures explore_bench() {
  ExploreFigures f;
  // A property that never fires there, so the search covers the whole bound.
  locksim::ExploreOptions o;
  o.scenario = "two-clients-pause";
  o.strategy = "redis-set-nx-ex-drop";
  o.property = "lost_updates";
  o.mode = "dfs";
  o.bound = 3;
  o.budget = 1'000'000;
  o.time_s = 600;
  o.shrink = false;
  o.reduction = false;  // every schedule: the engine's speed, run by run
  o.branching = false;
  locksim::explore(o);  // warm-up: the first runs fault in stacks and caches
  const auto finding = locksim::explore(o);
  f.dfs_runs = static_cast<double>(finding.runs);
  f.dfs_runs_per_s = static_cast<double>(finding.runs) / finding.wall_s;
  f.dfs_events_per_run = static_cast<double>(finding.events) / static_cast<double>(finding.runs);
  o.branching = true;
  locksim::explore(o);  // warm-up: the arena's pages
  const auto branched = locksim::explore(o);
  f.dfs_branched_runs_per_s = static_cast<double>(branched.runs) / branched.wall_s;
  const auto& b = branched.branching;
  f.save_restore_us = 1e6 * b.save_restore_s / static_cast<double>(std::max<std::uint64_t>(1, b.saves + b.restores));
  f.saved_kb = static_cast<double>(b.saved_bytes) / 1024 / static_cast<double>(std::max<std::uint64_t>(1, b.saves));
  f.arena_kb = static_cast<double>(b.arena_bytes) / 1024;
  o.branching = false;  // the figures below as before: each run from time zero
  f.fork_us = fork_wait_us();
  f.resident_mb = resident_mb();
  o.reduction = true;
  const auto reduced = locksim::explore(o);
  f.dfs_reduced_runs_per_s = static_cast<double>(reduced.runs) / reduced.wall_s;
  const std::pair<const char*, const char*> searched[] = {{"two-clients-pause", "redis-set-nx-ex-drop"},
                                                          {"two-clients-pause", "fencing-token"},
                                                          {"two-clients-pause", "unique-index"},
                                                          {"pause-anywhere", "fencing-token"}};
  for (const auto& [scenario, strategy] : searched) {
    locksim::ExploreOptions s = o;
    s.scenario = scenario;
    s.strategy = strategy;
    s.property = "duplicate_rows";
    s.bound = 2;
    s.reduction = false;
    const double plain = static_cast<double>(locksim::explore(s).runs);
    s.reduction = true;
    s.count_classes = true;
    const locksim::Finding reduced = locksim::explore(s);
    f.schedules.push_back({scenario, strategy, plain, static_cast<double>(reduced.runs), static_cast<double>(reduced.classes.size())});
  }
  {
    locksim::ExploreOptions s = o;
    s.strategy = "fencing-token";
    s.property = "duplicate_rows";
    s.bound = 2;
    s.reduction = true;
    s.budget = 100'000;
    s.branching = false;
    f.fencing_from_zero_s = locksim::explore(s).wall_s;
    s.branching = true;
    f.fencing_branched_s = locksim::explore(s).wall_s;
  }
  for (const std::string& file : locksim::catalogue()) {
    const locksim::Scenario s = locksim::load_scenario(file);
    if (s.faults.empty() || s.lua_workload || s.strategies.empty()) continue;
    locksim::ExploreOptions r;
    r.scenario = file;
    r.strategy = s.strategies.front().shown();
    r.budget = 2000;
    r.time_s = 60;
    r.shrink = false;
    const auto first = [&](const char* mode) {
      r.mode = mode;
      const auto found = locksim::explore(r);
      return found.found ? static_cast<double>(found.runs) : 0.0;
    };
    f.swarm_vs_random.push_back({s.name, first("random"), first("swarm")});
  }
  f.first_gc_violation_random_s = first_violation("random");
  f.first_gc_violation_pct_s = first_violation("pct");
  return f;
}

}  // namespace bench
