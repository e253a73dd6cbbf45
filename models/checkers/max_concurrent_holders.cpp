// The most holders that at one instant believed they held the same lock: two is one too
// many. Each pause past a lease's TTL adds one; a late DEL only trades its own holder for the
// next (LockMonitor::findings sweeps the holds).

#include "models/checkers/checker.hpp"

namespace models::checkers {
namespace {
class MaxConcurrentHolders : public Checker {
 public:
  std::vector<MetricInfo> metrics() const override {
    return {{.name = "max_concurrent_holders", .unit = "holders",
             .meaning = "the most holders that at one instant believed they held the same lock (the run's largest)",
             .finding = true, .fires_above = 1, .aggregate = Aggregate::max}};
  }
  void check(const Trial& trial, Findings& out) const override {
    if (trial.locks == nullptr) return;
    out.set("max_concurrent_holders", static_cast<double>(trial.locks->findings(trial.end).most_at_once));
  }
};
}  // namespace

const Checker& max_concurrent_holders() {
  static const MaxConcurrentHolders checker;
  return checker;
}
}  // namespace models::checkers
