#pragma once
// gnuplot as a child process: no shell between (folder and file names are never
// interpreted), a time limit, and no life beyond this process's.

#include <chrono>
#include <string>

namespace locksim::reports {

/// How long one gnuplot run may take before it is killed.
inline constexpr std::chrono::seconds kGnuplotTimeLimit{60};

/// What a gnuplot run came to: drawn, or why not in a few words ("gnuplot is not installed",
/// "gnuplot failed (exit 1): <its first error line>", "gnuplot ran past 60 s and was stopped").
struct Plotted {
  bool ok = false;
  std::string why{};
  explicit operator bool() const { return ok; }
};

/// Runs gnuplot on `script` in `folder` (its outputs are named there), with its error output
/// kept for the reason it failed, and killed past kGnuplotTimeLimit.
Plotted run_gnuplot(const std::string& folder, const std::string& script);

}  // namespace locksim::reports
