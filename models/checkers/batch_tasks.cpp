// The batch workload's tasks: run twice, queued twice, or never run.

#include "models/checkers/checker.hpp"

namespace models::checkers {
namespace {
class BatchTasks : public Checker {
 public:
  std::vector<MetricInfo> metrics() const override {
    return {{.name = "duplicate_executions", .unit = "executions", .meaning = "task executions beyond the first", .finding = true},
            {.name = "double_enqueues", .unit = "messages", .meaning = "tasks published to the queue more than once",
             .finding = true},
            {.name = "tasks_not_executed", .unit = "tasks", .meaning = "stored tasks that never ran", .finding = true}};
  }
  void check(const Trial& trial, Findings& out) const override {
    if (trial.batch == nullptr) return;
    out.set("duplicate_executions", static_cast<double>(trial.batch->duplicate_executions()));
    out.set("double_enqueues", static_cast<double>(trial.batch->double_enqueues()));
    out.set("tasks_not_executed", static_cast<double>(trial.batch->not_executed(trial.task_ids)));
  }
};
}  // namespace

const Checker& batch_tasks() {
  static const BatchTasks checker;
  return checker;
}
}  // namespace models::checkers
