#pragma once
// The batch scheduler's own checker: tasks run twice, queued twice, or never run.

#include <cstdint>
#include <vector>

#include "models/checkers/checker.hpp"
#include "models/workloads/batch/batch.hpp"

namespace models::batch {

/// What the batch scheduler's checkers read beside the trial.
struct BatchTrial {
  const TaskLog& tasks;                 // what happened to the tasks
  std::vector<std::int64_t> stored{};  // the committed task rows' ids
};

const checkers::WorkloadCheckers<BatchTrial>& batch_checkers();

}  // namespace models::batch
