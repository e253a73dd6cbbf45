#pragma once
// A trial's outcome as bytes, for a rank of a cluster run to send to the leader
// (app/exec/cluster.hpp): decode(encode(o)) holds everything o holds, every number exactly, so the
// leader folds the same figures as if the trial had run in its own process.

#include <string>

#include "app/runner.hpp"

namespace locksim {

std::string encode(const TrialOutcome& outcome);
/// Throws std::runtime_error on bytes encode() did not make.
TrialOutcome decode_outcome(const std::string& bytes);

}  // namespace locksim
