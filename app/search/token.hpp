#pragma once
// A replay token: a trial written as text, which `locksim replay` runs again. A trial is a
// function of its seed and schedule, so a token holds the engine version, the scenario (name,
// hash and overrides), the strategy, the seed and the schedule: the seed's own order of
// simultaneous events, PCT's priorities, or the choices of a dfs run that deviate.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "app/runner.hpp"

namespace locksim {

/// PCT's bug depth d, at most: a run's change points are d - 1.
inline constexpr int kMaxPctDepth = 10;

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

}  // namespace locksim
