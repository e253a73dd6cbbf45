#pragma once
// The sessions workload's own checker: each step's outcome and each table's rows at the end.

#include <vector>

#include "models/checkers/checker.hpp"
#include "models/workloads/sessions/sessions.hpp"

namespace models::sessions {

/// What the sessions workload's checkers read beside the trial.
struct SessionsTrial {
  const std::vector<StepRecord>& steps;
  const std::vector<TableContents>& tables;  // at the end
};

const checkers::WorkloadCheckers<SessionsTrial>& sessions_checkers();

}  // namespace models::sessions
