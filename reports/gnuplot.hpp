#pragma once
// gnuplot as a child process: no shell between (folder and file names are never
// interpreted), a time limit, and no life beyond this process's.

#include <chrono>
#include <string>

namespace locksim::reports {

/// How long one gnuplot run may take before it is killed.
inline constexpr std::chrono::seconds kGnuplotTimeLimit{60};

/// Runs gnuplot on `script` in `folder` (its outputs are named there); false when gnuplot is
/// not on PATH, fails, or runs past kGnuplotTimeLimit.
bool run_gnuplot(const std::string& folder, const std::string& script);

}  // namespace locksim::reports
