#pragma once
// Scaling over threads measured as users see it: the commands themselves (`locksim run`,
// `locksim explore`) with one thread and with more, whole commands timed, alternating, median of 3.

#include <string>

#include "bench/commands.hpp"

namespace bench {

struct ScalingFigures {
  int cores = 1;
  std::string run_command, explore_command;  // with {jobs} where --jobs goes
  SideBySide run;      // `locksim run account-bind`: --jobs 1, then --jobs 2
  SideBySide explore;  // `locksim explore two-clients-pause --mode dfs` over its whole bound: --jobs 1, then every core
};

ScalingFigures scaling_bench(int run_trials, int repeats);

}  // namespace bench
