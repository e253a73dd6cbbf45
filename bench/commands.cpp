#include "bench/commands.hpp"

#include <fmt/format.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

namespace bench {

std::optional<double> timed_command(const std::string& command, int expect_exit) {
  const auto start = std::chrono::steady_clock::now();
  const int status = std::system(command.c_str());
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != expect_exit) return std::nullopt;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::optional<double> median_of(std::vector<double> times) {
  if (times.empty()) return std::nullopt;
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

std::optional<double> SideBySide::speedup() const {
  if (!first_s || !second_s) return std::nullopt;
  return *first_s / *second_s;
}

SideBySide side_by_side(const std::string& first, const std::string& second, int repeats, int expect_exit) {
  std::vector<double> a, b;
  for (int i = 0; i < repeats; ++i) {
    if (const auto t = timed_command(first, expect_exit)) a.push_back(*t);
    if (const auto t = timed_command(second, expect_exit)) b.push_back(*t);
  }
  return {median_of(a), median_of(b)};
}

std::string in_scratch_folder(const std::string& name, const std::string& command) {
  return fmt::format("mkdir -p /tmp/locksim-bench-{0} && cd /tmp/locksim-bench-{0} && {1}", name, command);
}

}  // namespace bench
