#pragma once
// `locksim explore` and `locksim replay`: search for a trial in which a checker fires, hand
// it back as a printable replay token, and replay a token with a narrated timeline.
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

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app/runner.hpp"
#include "app/scenario.hpp"

namespace locksim {

/// PCT's bug depth d, at most: a run's change points are d - 1.
inline constexpr int kMaxPctDepth = 10;

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
  /// dfs: called with every run's metrics, from the thread that ran it (a test compares the
  /// outcomes of the plain and the reduced search).
  std::function<void(const models::checkers::Counts&)> each_run{};
};

struct Token {
  int engine = 0;
  std::string scenario;  // a catalogue name or a path
  std::uint64_t scenario_hash = 0;
  std::vector<std::string> sets;
  std::string strategy;
  std::uint64_t seed = 0;
  // "" (the seed decides ties), "pct.<d>.<k>.<n>.<seed>", or "dfs[.<i>=<v>...]": the
  // i-th enumerable choice of the run takes option v, every other one option 0.
  std::string schedule;
  std::string text() const;
};
/// Throws InputError for a string that is not a token.
Token parse_token(const std::string& text);
/// A choice a token's run asked: its stream ("sim.ties", models::kPlacementStream), the
/// option it took, and when.
struct Asked {
  std::string stream;
  std::uint64_t option = 0;
  double at_s = 0;
  std::uint64_t options = 0;  // how many it offered
  std::vector<std::string> labels{};  // what each option is, where known (a tie: whose event)
};
/// A token's schedule in words, for a replay's title: "" for the seed's own order,
/// "dfs: choice 9 takes option 1", "pct, depth 3". With what the run asked and its timeline,
/// a fault the search placed is told as what it was: "dfs: the search placed a 45.000 s pause
/// of app-1 at t=0.012 s; choice 9 (t=0.020 s) takes option 1".
std::string describe_schedule(const std::string& schedule, const std::vector<Asked>* asked = nullptr,
                              const reports::Timeline* timeline = nullptr);

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
  std::uint64_t equivalent_skipped = 0;  // dfs: runs not spawned, each equivalent to one explored
  /// dfs: about how many schedules the bound holds, from the default run's choices (each set of
  /// at most `bound` reorderings, times each set of placements the budget allows), before the
  /// reduction; an estimate, since a run off the default may ask other choices. 0: not known.
  double estimated_schedules = 0;
};

/// The runs with at most `most` deviations among choices offering `options` each: the sum over
/// k <= most of the k-th elementary symmetric sum of (options - 1). A dfs search's size.
double schedules_within(const std::vector<std::uint32_t>& options, int most);

/// How big a failing run is; a shrunk run is no larger in any of these.
struct RunSize {
  int clients = 0;     // traffic: the operations the run sent, each a user's own
  int operations = 0;  // per client
  bool traffic = false;   // the population's traffic (clients.traffic) rather than clients
  double horizon_s = 0;   // traffic for a duration: how long operations arrive
  int faults = 0;      // scheduled pauses, crashes, partitions, clock steps; random GC pauses count 1
  double pause_ms = 0;  // the pauses' total length: scheduled ones, and those a search placed
  int choices = 0;      // dfs: deviating choices; pct: change points
  int options = 0;      // dfs: the options those choices take, summed
  bool operator==(const RunSize&) const = default;
  bool no_larger_than(const RunSize& o) const;
  std::string text() const;
};
RunSize size_of(const Token& token);

struct Shrunk {
  Token token;
  RunSize before, after;
  std::uint64_t runs = 0;  // trials run while shrinking
  std::vector<std::string> fired;
  bool timed_out = false;  // `time_s` ran out before the shrinking was done
};
/// Shrinks a violating token while `property` (a checker, or "any": the first checker that
/// fired) still fires, trying at most `budget` trials, and starting none after `time_s` wall
/// seconds (0: no limit; a search's --time left over).
Shrunk shrink(const Token& found, const std::string& property, int budget = 2000, double time_s = 0);

/// The PCT scheduler for one run: `steps` (k) tie decisions and `agents` (n) expected.
sim::TieBreak pct_schedule(int depth, std::uint64_t steps, std::uint64_t seed);
/// The tie-break a token's schedule names (empty for the seed's own or a dfs schedule).
sim::TieBreak schedule_of(const Token& token);
/// A dfs schedule: the enumerable choices of a run (by index) that deviate, and their options.
using Deviations = std::map<std::uint64_t, std::uint64_t>;

/// A run's schedule, as a token writes it: "" (the seed decides ties), "pct.<d>.<k>.<n>.<seed>"
/// (PCT with depth d over k tie decisions among n agents), or "dfs[.<i>=<v>...]" (the i-th
/// enumerable choice takes option v, every other one option 0). Read and written only here.
struct Schedule {
  enum class Kind { seed, pct, dfs } kind = Kind::seed;
  int depth = 0;  // pct
  std::uint64_t steps = 0, agents = 0, seed = 0;
  Deviations deviations;  // dfs

  static Schedule pct(int depth, std::uint64_t steps, std::uint64_t agents, std::uint64_t seed) {
    return {Kind::pct, depth, steps, agents, seed, {}};
  }
  static Schedule dfs(Deviations deviations) { return {Kind::dfs, 0, 0, 0, 0, std::move(deviations)}; }
  /// Throws InputError for text that is none of the three.
  static Schedule parse(const std::string& text);
  std::string text() const;
  /// The choices that deviate from the default (pct: its change points), and the options
  /// they take in all: the shrinker's measures.
  std::pair<int, int> deviating() const;
};
/// The chooser a dfs schedule names (empty otherwise).
/// With `asked`, each choice the run asked is kept there.
sim::Chooser chooser_of(const Token& token, std::vector<Asked>* asked = nullptr);
/// Runs the token's trial (the scenario loaded with its overrides).
TrialOutcome run_token(const Scenario& scenario, const StrategyChoice& strategy, const Token& token,
                       TraceKept kept = TraceKept::hash);

/// The faults a swarm run of seed `seed` turns on ("pauses.0", "gc_pauses"), each listed fault
/// and each other kind on with probability 1/2.
std::vector<std::string> swarm_faults(const ExploreOptions& options, std::uint64_t seed);

/// Runs trials until the property fires or a budget runs out.
Finding explore(const ExploreOptions& options);

/// Re-runs the token's trial. Throws InputError when the token's engine version or its
/// scenario (as it is now) does not match.
struct Replay {
  Scenario scenario;
  StrategyChoice strategy;
  TrialOutcome outcome;
  std::vector<std::string> fired;
  std::vector<Asked> asked;  // every enumerable choice a dfs schedule's run asked, in order
};
Replay replay(const Token& token);


/// The scenario's strategy shown as `name` (its label, if it has one); throws InputError.
const StrategyChoice& strategy_named(const Scenario& scenario, const std::string& name);

/// The checkers that fired in a trial, as "metric value".
std::vector<std::string> fired_checkers(const TrialOutcome& outcome, const std::string& property);

}  // namespace locksim
