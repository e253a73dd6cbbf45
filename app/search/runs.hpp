#pragma once
// What the search modes share: their wall clock, and numbered runs handed to the executor
// (app/exec/executor.hpp) until the first that fires.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "app/exec/executor.hpp"
#include "app/search/explore.hpp"

namespace locksim::search {

using Clock = std::chrono::steady_clock;  // the wall budget only

inline double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// Runs handed to another rank per thread it runs: a search's runs take tens of microseconds,
/// less than an answer takes to come back.
inline constexpr int kSearchAhead = 64;

/// What a search over numbered runs found: how many runs count, and the first that fired.
struct FirstHit {
  std::uint64_t ran = 0;               // every run below the hit, and the hit; or every run claimed
  std::optional<std::uint64_t> hit{};  // the lowest-numbered run that fired
};

/// The runs other ranks make of a search (none without them): run i's request, and what its
/// answer says (true: it fired).
struct RemoteRuns {
  exec::Ranks& ranks;
  std::function<std::string(std::uint64_t)> request;
  std::function<bool(std::uint64_t, std::string&&)> answered;
};

/// Runs `attempt(i)` for i = 0, 1, ... below `limit` on `jobs` threads (the runner's pool,
/// OrderedWork), each number once, until `out_of_time()` or a run fires (`attempt` returns
/// true). The finding is the lowest-numbered run that fired, and every run below it has run,
/// whatever `jobs`: the runs are taken in order, and none is handed out once the lowest has
/// fired. With other ranks, the caller's thread hands numbers to them by the same rule
/// (`remote`), beside `jobs` threads of this process.
FirstHit first_hit(int jobs, std::uint64_t limit, const std::function<bool()>& out_of_time,
                   const std::function<bool(std::uint64_t)>& attempt, const RemoteRuns& remote);

/// What other ranks must agree on to share a search: the scenario as read, the strategy, and
/// the search's settings.
std::string search_fingerprint(const ExploreOptions& o, const Scenario& s, const StrategyChoice& choice, std::uint64_t steps,
                               std::size_t agents);

/// The dfs search (app/search/dfs.cpp); on a rank that does not lead, its share of the runs.
Finding explore_dfs(const ExploreOptions& o, const Scenario& s, const StrategyChoice& choice, Clock::time_point started);

}  // namespace locksim::search
