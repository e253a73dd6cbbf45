#pragma once
// Open MPI measured on this machine: `locksim run account-bind` as one process with one thread,
// and as two ranks of one thread each under mpirun, alternating, whole commands timed (start,
// MPI set-up, the trials, the report); and the same with one trial, for the fixed costs.

#include <optional>
#include <string>

namespace bench {

struct ClusterFigures {
  std::optional<double> one_process_s;  // none: the command failed
  std::optional<double> two_ranks_s;    // none: mpirun is missing or the command failed
  /// The same commands with one trial per strategy: what does not depend on the trials
  /// (starting, MPI's set-up, the report), to leave out of the trials' speed-up.
  std::optional<double> one_process_fixed_s, two_ranks_fixed_s;
  std::string why_missing;
};

ClusterFigures cluster_bench(int trials, int repeats);

}  // namespace bench
