// Deadlocks the database detected: each rolled a transaction back with error 1213.

#include "models/checkers/checker.hpp"

namespace models::checkers {
namespace {
class Deadlocks : public Checker {
 public:
  std::vector<MetricInfo> metrics() const override {
    return {{.name = "deadlocks", .unit = "deadlocks", .meaning = "deadlocks the database detected (a transaction rolled back, 1213)",
             .finding = true}};
  }
  void check(const Trial& trial, Findings& out) const override {
    if (trial.database != nullptr) out.set("deadlocks", static_cast<double>(trial.database->stats().deadlocks));
  }
};
}  // namespace

const Checker& deadlocks() {
  static const Deadlocks checker;
  return checker;
}
}  // namespace models::checkers
