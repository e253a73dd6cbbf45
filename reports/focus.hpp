#pragma once
// The part of a trial its report tells. A short trial is told whole. A long one (a design at
// hundreds of requests a second, thousands of holds and pauses) is told around its finding:
// the violation the search asked for, or the first kind that fired, and only what is involved
// in it (its operations with each of their attempts, holds, statements and calls, the holders
// of the same lock meanwhile, the pauses and crashes of their nodes), with the rest counted in
// a few lines. The narration, the diagram and the picture are then made from that part.

#include <string>
#include <vector>

#include "reports/results.hpp"

namespace locksim::reports {

/// How many violations of the finding's kind a story tells; the others are listed by time.
inline constexpr std::size_t kViolationsTold = 3;

struct Focus {
  Timeline told;      // the part of the trial told: all of it, or what is involved in the finding
  std::string about;  // the checker the story centres on ("lease_expiry_violations"); empty: told whole
  double at_s = -1;   // when its first violation happened; < 0: told whole
  /// What the story leaves out, a sentence each ("Of the trial's 12,012 operations, the story
  /// follows 3: ...", "Left out: 11,204 lock holds of other operations, each released by its
  /// holder; ...", "2 more lease_expiry_violations like these: at t=...").
  std::vector<std::string> left_out{};
  bool whole() const { return about.empty(); }
};

/// The story of `t`. `fired`: the checkers that fired ("duplicate_rows 2"); `property`: the one
/// a search asked for, which the story centres on where the trial shows it (one it cannot
/// centre on, a workload's own count say, is told by the whole trial). A trial whose events fit
/// the narration (at most kMostNarrated) is told whole.
Focus focus(const Timeline& t, const std::vector<std::string>& fired, const std::string& property = "");

}  // namespace locksim::reports
