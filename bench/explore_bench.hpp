#pragma once
// The model checker measured: dfs runs per second on two-clients-pause (SET NX EX), on one
// thread (the command's scaling over threads is scaling_bench's), and the wall time from a cold start (a new locksim
// process) to the first GC-pause violation.

#include <optional>
#include <string>
#include <vector>

namespace bench {

struct ExploreFigures {
  double dfs_runs_per_s = 0;  // one thread, each run from time zero (--no-branching)
  // The same search with each run branched from its parent's run saved where it deviates: its
  // runs/s, the mean wall time of one save and of one restore, the mean bytes a save copied,
  // and the most an arena held (one thread's trial; a search keeps one save besides).
  double dfs_branched_runs_per_s = 0;
  double save_restore_us = 0;
  double saved_kb = 0, arena_kb = 0;
  // fencing token exhausting bound 2 on two-clients-pause (reduced, 369 events a run): wall
  // seconds from time zero and branched.
  double fencing_from_zero_s = 0, fencing_branched_s = 0;
  double dfs_runs = 0;        // explored in the measurement
  double dfs_events_per_run = 0;
  // What branching a search by fork() would cost a branch: a fork of the search's process (the
  // scenario loaded, the runs above made), its child's exit and the wait; and that process's
  // resident memory, which a fork's page tables copy.
  double fork_us = 0;
  double resident_mb = 0;
  std::optional<double> first_gc_violation_random_s;  // none: the search failed
  std::optional<double> first_gc_violation_pct_s;
  // Schedules that exhaust bound 2 on two-clients-pause (property duplicate_rows), plain and
  // with the reduction: SET NX EX (to its finding), fencing token, unique index; and fencing
  // token on pause-anywhere. With the classes of equivalent runs among them: the fewest runs a
  // sound reduction on the models' footprints could make.
  struct Schedules {
    const char* scenario;
    const char* strategy;
    double plain = 0, reduced = 0, classes = 0;
  };
  std::vector<Schedules> schedules;
  double dfs_reduced_runs_per_s = 0;
  // Runs to the first finding (any checker, budget 2,000) of the first strategy of each
  // catalogue scenario with faults, random against swarm; 0: none found.
  struct FirstFinding {
    std::string scenario;
    double random = 0, swarm = 0;
  };
  std::vector<FirstFinding> swarm_vs_random;  // the runs/s measure above with the reduction on (footprints kept)
};

ExploreFigures explore_bench();

}  // namespace bench
