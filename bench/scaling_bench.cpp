#include "bench/scaling_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#ifndef LOCKSIM_BIN
#define LOCKSIM_BIN "locksim"
#endif

namespace bench {

ScalingFigures scaling_bench(int run_trials, int repeats) {
  ScalingFigures f;
  f.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  f.run_command = fmt::format("locksim run account-bind --trials {} --jobs {{jobs}}", run_trials);
  // A property that never fires there, so the search covers the whole bound (exit 0: nothing found).
  f.explore_command = "locksim explore two-clients-pause --strategy redis-set-nx-ex-drop --property lost_updates "
                      "--mode dfs --bound 4 --budget 1000000 --no-shrink --jobs {jobs}";
  const auto command = [&](const std::string& shape, int jobs) {
    std::string c = fmt::format(fmt::runtime(shape), fmt::arg("jobs", jobs));
    c.replace(0, std::string("locksim").size(), fmt::format("'{}'", LOCKSIM_BIN));
    return in_scratch_folder("scaling", c + " > /dev/null 2>&1");
  };
  f.run = side_by_side(command(f.run_command, 1), command(f.run_command, 2), repeats);
  f.explore = side_by_side(command(f.explore_command, 1), command(f.explore_command, f.cores), repeats);
  return f;
}

}  // namespace bench
