#pragma once
// `locksim explore` and `locksim replay`: search for a trial in which a checker fires, hand
// it back as a printable replay token, and replay a token with a narrated timeline. The
// search's files (app/search/): this page and explore.cpp (the modes' entry, random, pct and
// swarm), dfs.cpp, swarm.*, runs.* (numbered runs handed to the executor, app/exec/), token.*
// (the token and its schedule), replay.* (a token's trial run again) and shrink.*.
//
// Search modes:
// - `random`: independent seeds;
// - `pct`: probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010): random
//   process priorities with d - 1 priority change points, applied wherever several events
//   are ready at one instant; each run also takes the next seed;
// - `dfs`: bounded exhaustive search, by re-execution, over the run's enumerable choices
//   (the order of simultaneous events, delays drawn from a `one_of_ms` set), the scenario's
//   seed fixing every other draw; at most `bound` choices differ from the default (the
//   first option), so the space is finite and the search says when it has covered it.
//   It goes level by level: the default run, then every run with one choice off its
//   default, then two; the first finding has the fewest deviating choices. Faults a scenario
//   gives as a budget (faults.explore) are placed by more choices of the same tree, which the
//   budget bounds instead of `bound` (models/faults/placement.hpp).
// - `swarm`: random, and each run's seed also picks which of the scenario's faults are on
//   (swarm testing): each run's faults are an override in its token.
// `jobs` threads run a search's runs; its finding is the first in a fixed order (random and
// pct: the lowest seed; dfs: the fewest deviations, then the order of the level), so it and
// its token are the same whatever `jobs`.
// A trial is a function of its seed and schedule, so a token holds the engine version, the
// scenario (name, hash and overrides), the strategy, the seed and the schedule.
//
// A finding is then shrunk: fewer clients, operations and faults, shorter pauses, fewer and
// smaller deviating choices, each step kept only if the same property still fires.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "app/runner.hpp"
#include "app/scenario.hpp"
#include "app/search/replay.hpp"
#include "app/search/shrink.hpp"
#include "app/search/token.hpp"

namespace locksim {

struct ExploreOptions {
  std::string scenario;
  std::vector<std::string> sets;
  std::string strategy;
  std::string property = "any";  // a checker metric, or any of them
  std::string mode = "random";
  int depth = 3;                 // pct: the bug depth d it aims at
  int bound = 2;                 // dfs: non-default choices at most
  bool shrink = true;
  int budget = 10'000;           // trials at most
  double time_s = 60;            // wall seconds at most
  int jobs = 1;                  // threads running the search's runs; the finding does not depend on it
  bool count_all = false;        // dfs: go on past the first finding, counting every run that fires
  bool reduction = true;         // dfs: skip reorderings that only commute independent steps
  /// dfs: make each run from its parent's run saved at the choice where it deviates (restored in
  /// place: sim/restorable.hpp) rather than from time zero; the same runs either way.
  bool branching = true;
  /// dfs: run each branched run again from time zero, and fail unless both end alike (their
  /// choices, events, findings and trace hashes): a check, slower.
  bool check_branches = false;
  /// dfs: name each run's class of equivalent runs (sim::Footprints::trace_class) and count the
  /// classes among the runs (Finding::classes): the fewest runs a sound reduction on the models'
  /// footprints could make. Keeps every run's footprints. Not with a Lua strategy or workload.
  bool count_classes = false;
  /// dfs: called with every run's metrics, from the thread that ran it (a test compares the
  /// outcomes of the plain and the reduced search).
  std::function<void(const models::checkers::Counts&)> each_run{};
};

struct Finding {
  std::string scenario;  // its name
  bool found = false;
  std::uint64_t runs = 0;
  std::uint64_t events = 0;  // simulated, over every run
  double wall_s = 0;
  Token token;
  std::vector<std::string> fired;  // "duplicate_rows 1", ...
  double pct_bound = 0;  // pct: each run finds a depth-d bug with at least this probability
  bool exhausted = false;  // dfs: every run within the bound was explored
  std::uint64_t choice_points = 0;  // dfs: the most enumerable choices one run asked
  std::uint64_t placement_points = 0;  // dfs: of those, the most that could place a fault
  std::string placed;  // dfs: the faults the scenario lets it place, in words ("" for none)
  std::uint64_t firing_runs = 0;  // dfs: runs in which the property fired (all of them with count_all)
  std::vector<std::string> faults_on;  // swarm: the finding's faults ("pauses.0", "gc_pauses")
  bool reduced = false;           // dfs: the reduction applied (on, and the strategy allows it)
  bool branched = false;          // dfs: runs branched from their parents' saved runs (ExploreOptions::branching)
  /// dfs, branched: the runs saved, the restores, the bytes the saves copied, the most bytes an
  /// arena held (what a save copies at most), and the wall seconds the saves and restores took.
  struct Branching {
    std::uint64_t saves = 0, restores = 0, saved_bytes = 0, arena_bytes = 0;
    double save_restore_s = 0;
  } branching{};
  std::uint64_t equivalent_skipped = 0;  // dfs: runs not spawned, each equivalent to one explored
  /// dfs with ExploreOptions::count_classes (where the reduction could apply): the classes of
  /// equivalent runs its runs fell in, each once, in order; `classes_counted` says it counted.
  std::vector<std::uint64_t> classes;
  bool classes_counted = false;
  /// dfs: about how many schedules the bound holds, from the default run's choices (each set of
  /// at most `bound` reorderings, times each set of placements the budget allows), before the
  /// reduction; an estimate, since a run off the default may ask other choices. 0: not known.
  double estimated_schedules = 0;
};

/// The runs with at most `most` deviations among choices offering `options` each: the sum over
/// k <= most of the k-th elementary symmetric sum of (options - 1). A dfs search's size.
double schedules_within(const std::vector<std::uint32_t>& options, int most);

/// The faults a swarm run of seed `seed` turns on ("pauses.0", "gc_pauses"), each listed fault
/// and each other kind on with probability 1/2.
std::vector<std::string> swarm_faults(const ExploreOptions& options, std::uint64_t seed);

/// Runs trials until the property fires or a budget runs out.
Finding explore(const ExploreOptions& options);

}  // namespace locksim
