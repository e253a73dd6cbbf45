#pragma once
// What a search claims, as data and as a sentence a user can quote: `explore` writes it to
// reports/out/<scenario>/explore/ (search.json and report.html) and puts the sentence on the
// replay page of its finding.

#include <cstdint>
#include <string>
#include <vector>

namespace locksim::reports {

struct SearchClaim {
  std::string scenario, strategy;
  std::string mode;      // random, pct or dfs
  std::string property;  // a checker metric, or "any"
  int bound = 0;         // dfs: reorderings (choices off their default) at most
  std::string placed;    // dfs: the faults placed anywhere, in words ("" for none)
  std::uint64_t schedules = 0;  // runs explored
  bool exhausted = false;       // dfs: every schedule within the bound ran
  bool counted_all = false;     // dfs: the search went on past the first finding
  std::string reduction = "none";  // how equivalent schedules were skipped
  bool found = false;
  std::vector<std::string> fired;  // the finding's checkers, "duplicate_rows 1"
  std::uint64_t firing = 0;        // schedules in which the property fired (all of them when counted_all)
  std::string token;               // the finding's replay token
  double pct_bound = 0;            // pct: each run finds a depth-d bug with at least this probability
  int depth = 0;                   // pct
};

/// The claim in one sentence: "No duplicate_rows in any of 1,204 schedules with at most 2
/// reorderings and 1 pause of 45000 ms on an app server placed anywhere (exhaustive)."
std::string verdict(const SearchClaim& claim);

/// The claim as JSON (search.json), the verdict included.
std::string to_json(const SearchClaim& claim);

/// Replaces `folder` (<scenario folder>/explore) with search.json and report.html.
void write_search_report(const SearchClaim& claim, const std::string& folder);

}  // namespace locksim::reports
