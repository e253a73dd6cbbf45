// Trials that reached a budget (simulated time, events, memory) before their work was done: what
// they found is of a run cut short.

#include "models/checkers/checker.hpp"

namespace models::checkers {
namespace {
class UnfinishedRuns : public Checker {
 public:
  std::vector<MetricInfo> metrics() const override {
    return {{.name = "unfinished_runs", .unit = "trials",
             .meaning = "trials stopped by the time, event or memory budget before their work was done", .finding = true,
             .per_operation = false},
            {.name = "memory_budget_runs", .unit = "trials",
             .meaning = "unfinished runs stopped by the memory budget: the servers held more than memory_budget_mb",
             .per_operation = false}};
  }
  void check(const Trial& trial, Findings& out) const override {
    out.set("unfinished_runs", trial.finished ? 0 : 1);
    out.set("memory_budget_runs", trial.out_of_memory ? 1 : 0);
  }
};
}  // namespace

const Checker& unfinished_runs() {
  static const UnfinishedRuns checker;
  return checker;
}
}  // namespace models::checkers
