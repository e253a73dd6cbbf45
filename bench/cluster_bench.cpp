#include "bench/cluster_bench.hpp"

#include <fmt/format.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

#ifndef LOCKSIM_BIN
#define LOCKSIM_BIN "locksim"
#endif

namespace bench {
namespace {

// The wall seconds of `command`, none when it fails. It writes its report under a folder of
// its own in /tmp, so the repository's reports/out/ is left alone.
std::optional<double> timed(const std::string& command) {
  const auto start = std::chrono::steady_clock::now();
  const int status = std::system(command.c_str());
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::optional<double> median(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

ClusterFigures cluster_bench(int trials, int repeats) {
  ClusterFigures f;
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) {
    f.why_missing = "mpirun is not installed (scripts/setup)";
    return f;
  }
  const std::string folder = "/tmp/locksim-bench-cluster";
  const auto command = [&](int ranks, int trials_per_strategy) {
    const std::string run =
        fmt::format("'{}' run account-bind --trials {} --jobs 1 --json > /dev/null", LOCKSIM_BIN, trials_per_strategy);
    return ranks == 1 ? fmt::format("mkdir -p {0} && cd {0} && {1}", folder, run)
                      : fmt::format("mkdir -p {0} && cd {0} && mpirun -n {1} --oversubscribe --allow-run-as-root --bind-to none {2}",
                                    folder, ranks, run);
  };
  std::vector<double> ones, twos, ones_fixed, twos_fixed;
  for (int i = 0; i < repeats; ++i) {  // alternating, so drift in the machine's speed hits both alike
    if (const auto t = timed(command(1, trials))) ones.push_back(*t);
    if (const auto t = timed(command(2, trials))) twos.push_back(*t);
    if (const auto t = timed(command(1, 1))) ones_fixed.push_back(*t);
    if (const auto t = timed(command(2, 1))) twos_fixed.push_back(*t);
  }
  f.one_process_s = median(ones);
  f.two_ranks_s = median(twos);
  f.one_process_fixed_s = median(ones_fixed);
  f.two_ranks_fixed_s = median(twos_fixed);
  if (!f.two_ranks_s) f.why_missing = "mpirun -n 2 failed";
  std::system(fmt::format("rm -rf {}", folder).c_str());
  return f;
}

}  // namespace bench
