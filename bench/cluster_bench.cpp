#include "bench/cluster_bench.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <vector>

#include "bench/commands.hpp"

#ifndef LOCKSIM_BIN
#define LOCKSIM_BIN "locksim"
#endif

namespace bench {

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
    if (const auto t = timed_command(command(1, trials))) ones.push_back(*t);
    if (const auto t = timed_command(command(2, trials))) twos.push_back(*t);
    if (const auto t = timed_command(command(1, 1))) ones_fixed.push_back(*t);
    if (const auto t = timed_command(command(2, 1))) twos_fixed.push_back(*t);
  }
  f.one_process_s = median_of(ones);
  f.two_ranks_s = median_of(twos);
  f.one_process_fixed_s = median_of(ones_fixed);
  f.two_ranks_fixed_s = median_of(twos_fixed);
  if (!f.two_ranks_s) f.why_missing = "mpirun -n 2 failed";
  std::system(fmt::format("rm -rf {}", folder).c_str());
  return f;
}

}  // namespace bench
