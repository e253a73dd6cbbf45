#pragma once
// Commands timed as a user runs them: the `locksim` program, a report folder of its own under
// /tmp, wall seconds of the whole command.

#include <optional>
#include <string>
#include <vector>

namespace bench {

/// The wall seconds of a shell command, none when it fails (exit status other than `expect_exit`).
std::optional<double> timed_command(const std::string& command, int expect_exit = 0);

/// The median of the times, none when there are none.
std::optional<double> median_of(std::vector<double> times);

/// Two commands timed `repeats` times each, alternating (so drift in the machine's speed hits both
/// alike): the median of each, none for a command that failed every time.
struct SideBySide {
  std::optional<double> first_s, second_s;
  /// first / second: how many times faster the second ran; none when either failed.
  std::optional<double> speedup() const;
};
SideBySide side_by_side(const std::string& first, const std::string& second, int repeats, int expect_exit = 0);

/// `cd` into a scratch folder of `name` under /tmp, then `command`: reports go there, not to reports/out/.
std::string in_scratch_folder(const std::string& name, const std::string& command);

}  // namespace bench
