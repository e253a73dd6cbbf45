#pragma once
// Shrinking a search's finding: the same property firing in a smaller run (app/search/shrink.cpp).

#include <cstdint>
#include <string>
#include <vector>

#include "app/search/token.hpp"

namespace locksim {

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

}  // namespace locksim
