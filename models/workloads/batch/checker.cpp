#include "models/workloads/batch/checker.hpp"

namespace models::batch {
namespace {
class BatchTasks : public checkers::WorkloadChecker<BatchTrial> {
 public:
  std::vector<checkers::MetricInfo> metrics() const override {
    return {{.name = "duplicate_executions", .unit = "executions", .meaning = "task executions beyond the first", .finding = true},
            {.name = "double_enqueues", .unit = "messages", .meaning = "tasks published to the queue more than once",
             .finding = true},
            {.name = "tasks_not_executed", .unit = "tasks", .meaning = "stored tasks that never ran", .finding = true}};
  }
  void check(const checkers::Trial&, const BatchTrial& batch, checkers::Findings& out) const override {
    out.set("duplicate_executions", static_cast<double>(batch.tasks.duplicate_executions()));
    out.set("double_enqueues", static_cast<double>(batch.tasks.double_enqueues()));
    out.set("tasks_not_executed", static_cast<double>(batch.tasks.not_executed(batch.stored)));
  }
};
}  // namespace

const checkers::WorkloadCheckers<BatchTrial>& batch_checkers() {
  static const BatchTasks tasks;
  static const checkers::WorkloadCheckers<BatchTrial> all = {&tasks};
  return all;
}

}  // namespace models::batch
