// Watch events that woke lock waiters: the herd effect, when every waiter wakes for each
// release and all but one go back to sleep.

#include "models/checkers/checker.hpp"

namespace models::checkers {
namespace {
class LockWakeups : public Checker {
 public:
  std::vector<MetricInfo> metrics() const override {
    return {{.name = "lock_wakeups", .unit = "wake-ups", .meaning = "watch events (and Consul's blocking reads) that woke lock waiters (the herd effect)"}};
  }
  void check(const Trial& trial, Findings& out) const override {
    if (trial.operations != nullptr) out.set("lock_wakeups", static_cast<double>(trial.lock_wakeups));
  }
};
}  // namespace

const Checker& lock_wakeups() {
  static const LockWakeups checker;
  return checker;
}
}  // namespace models::checkers
